//! Parsing the field attributes: the `#[example(..)]` on a struct's field, with its `default`
//! literal and its `sparse(..)` group.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Expr, Lit};

use super::ctxt::Ctxt;
use super::meta::{Once, lit_str, skip_value, unknown_attr};
use crate::ir::Literal;
use crate::symbol;

/// A field's `#[example(..)]` attributes.
pub(super) struct FieldAttrs {
    pub(super) key: Option<syn::LitStr>,
    pub(super) skip: bool,
    pub(super) default: Option<(Span, Option<Literal>)>,
    /// `required`: an absent variable-length list is an error instead of empty.
    pub(super) required: Option<Span>,
    pub(super) shape: Option<(Span, Vec<Option<u64>>)>,
    pub(super) flatten: bool,
    pub(super) lossy: bool,
    pub(super) sequence: bool,
    pub(super) sparse: Option<SparseAttr>,
}

/// `sparse(index = "i" | ["i", "j"], value = "v", size = [..], already_sorted)`.
pub(super) struct SparseAttr {
    pub(super) span: Span,
    pub(super) index: Vec<String>,
    pub(super) value: Option<String>,
    pub(super) size: Vec<u64>,
    pub(super) already_sorted: bool,
}

/// A shape: integer literals, `-1` for a dimension the data decides.
fn dims_list(e: &Expr) -> Option<Vec<Option<u64>>> {
    match e {
        Expr::Array(a) => a
            .elems
            .iter()
            .map(|d| match d {
                Expr::Unary(syn::ExprUnary {
                    op: syn::UnOp::Neg(_),
                    expr,
                    ..
                }) => match &**expr {
                    Expr::Lit(syn::ExprLit {
                        lit: Lit::Int(i), ..
                    }) if i.base10_digits() == "1" => Some(None),
                    _ => None,
                },
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Int(i), ..
                }) => i.base10_parse::<u64>().ok().map(Some),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

fn int_list(e: &Expr) -> Option<Vec<u64>> {
    match e {
        Expr::Array(a) => a
            .elems
            .iter()
            .map(|d| match d {
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Int(i), ..
                }) => i.base10_parse::<u64>().ok(),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

fn sparse_attr(cx: &mut Ctxt, meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<SparseAttr> {
    let mut out = SparseAttr {
        span: meta.path.span(),
        index: Vec::new(),
        value: None,
        size: Vec::new(),
        already_sorted: false,
    };
    let mut once = Once::default();
    meta.parse_nested_meta(|inner| {
        let p = &inner.path;
        once.check(cx, p, symbol::SPARSE);
        if p.is_ident("index") {
            let e: Expr = inner.value()?.parse()?;
            let keys = match &e {
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(vec![s.value()]),
                Expr::Array(a) => a
                    .elems
                    .iter()
                    .map(|x| match x {
                        Expr::Lit(syn::ExprLit {
                            lit: Lit::Str(s), ..
                        }) => Some(s.value()),
                        _ => None,
                    })
                    .collect(),
                _ => None,
            };
            match keys {
                Some(k) => out.index = k,
                None => cx.error(
                    e.span(),
                    "expected an index key `\"idx\"` or a list `[\"i0\", \"i1\"]`",
                ),
            }
        } else if p.is_ident("value") {
            out.value = Some(inner.value()?.parse::<syn::LitStr>()?.value());
        } else if p.is_ident("size") {
            let e: Expr = inner.value()?.parse()?;
            match int_list(&e) {
                Some(d) => out.size = d,
                None => cx.error(
                    e.span(),
                    "expected a size like `[100]` of non-negative integer literals",
                ),
            }
        } else if p.is_ident("already_sorted") {
            out.already_sorted = true;
        } else {
            unknown_attr(cx, p, symbol::SPARSE, "sparse");
            skip_value(&inner)?;
        }
        Ok(())
    })?;
    Ok(out)
}

fn parse_literal(cx: &mut Ctxt, e: &Expr) -> Option<Literal> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => match i.base10_parse::<i128>() {
                Ok(v) => Some(Literal::Int(v)),
                Err(err) => {
                    cx.push(err);
                    None
                }
            },
            Lit::Float(f) => match f.base10_parse::<f64>() {
                Ok(v) => Some(Literal::Float(v)),
                Err(err) => {
                    cx.push(err);
                    None
                }
            },
            Lit::Str(s) => Some(Literal::Str(s.value())),
            Lit::Bool(b) => Some(Literal::Bool(b.value)),
            other => {
                cx.error(
                    other.span(),
                    "expected an integer, float, string or boolean literal",
                );
                None
            }
        },
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match parse_literal(cx, &u.expr)? {
            Literal::Int(v) => Some(Literal::Int(-v)),
            Literal::Float(v) => Some(Literal::Float(-v)),
            _ => {
                cx.error(e.span(), "only numbers can be negated");
                None
            }
        },
        Expr::Array(a) => {
            let items: Vec<Option<Literal>> =
                a.elems.iter().map(|x| parse_literal(cx, x)).collect();
            items
                .into_iter()
                .collect::<Option<Vec<_>>>()
                .map(Literal::List)
        }
        Expr::Group(g) => parse_literal(cx, &g.expr),
        other => {
            cx.error(
                other.span(),
                "expected a literal (a number, string, boolean, or a list of them)",
            );
            None
        }
    }
}

pub(super) fn field_attrs(cx: &mut Ctxt, attrs: &[syn::Attribute]) -> FieldAttrs {
    let mut out = FieldAttrs {
        key: None,
        skip: false,
        default: None,
        required: None,
        shape: None,
        flatten: false,
        lossy: false,
        sequence: false,
        sparse: None,
    };
    // Over all of the field's `#[example(..)]` attributes together.
    let mut once = Once::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("example")) {
        let res = attr.parse_nested_meta(|meta| {
            let p = &meta.path;
            once.check(cx, p, symbol::FIELD);
            if p.is_ident("key") {
                out.key = Some(lit_str(&meta)?);
            } else if p.is_ident("skip") {
                out.skip = true;
            } else if p.is_ident("flatten") {
                out.flatten = true;
            } else if p.is_ident("lossy") {
                out.lossy = true;
            } else if p.is_ident("sequence") {
                out.sequence = true;
            } else if p.is_ident("required") {
                out.required = Some(p.span());
            } else if p.is_ident("default") {
                if meta.input.peek(syn::Token![=]) {
                    let e: Expr = meta.value()?.parse()?;
                    let lit = parse_literal(cx, &e);
                    out.default = Some((e.span(), lit));
                } else {
                    out.default = Some((p.span(), None));
                }
            } else if p.is_ident("sparse") {
                out.sparse = Some(sparse_attr(cx, &meta)?);
            } else if p.is_ident("shape") {
                let e: Expr = meta.value()?.parse()?;
                let span = e.span();
                match dims_list(&e) {
                    Some(d) => out.shape = Some((span, d)),
                    None => cx.error(
                        span,
                        "expected a shape like `[28, 28]` of non-negative integer literals \
                         (`[-1, 3]` for rows of 3 values, any number of them)",
                    ),
                }
            } else {
                unknown_attr(cx, p, symbol::FIELD, "field");
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(e) = res {
            cx.push(e);
        }
    }
    out
}
