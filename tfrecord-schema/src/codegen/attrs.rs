//! The attribute front end: `syn::DeriveInput` + `#[example(...)]` attributes -> IR, with the
//! Rust types kept aside as bindings for the code generator. Every error is collected.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Expr, Lit, Type};

use crate::ir::{
    DType, Dialect, FeatureKind, Field, Literal, Origin, Presence, Record, RecordKind,
};
use crate::symbol;

/// Collects errors so that one run reports all of them.
#[derive(Default)]
pub(crate) struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    pub(crate) fn error(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, msg));
    }

    pub(crate) fn push(&mut self, e: syn::Error) {
        self.errors.push(e);
    }

    pub(crate) fn finish(self) -> Result<(), syn::Error> {
        let mut it = self.errors.into_iter();
        let Some(mut first) = it.next() else {
            return Ok(());
        };
        for e in it {
            first.combine(e);
        }
        Err(first)
    }
}

/// Where each part of a field was written, indexed by [`Origin`].
pub(crate) struct Spans {
    pub(crate) field: Span,
    pub(crate) ty: Span,
    pub(crate) key: Option<Span>,
    pub(crate) default: Option<Span>,
    pub(crate) shape: Option<Span>,
}

/// The shape of a Rust field type, as far as syntax tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Container {
    /// One value.
    Scalar,
    /// `Vec<T>` of values.
    Vec,
    /// `[T; N]` (N when it is a literal).
    Array(Option<u64>),
    /// `Sparse<T>`: index features and a value feature.
    Sparse,
}

/// How to spell a bytes default for the field's Rust type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BytesRepr {
    /// Built with `From<&str>` (`String`, `Vec<u8>`, `Bytes`, `Cow<str>`).
    From,
    /// `&[u8]`.
    Slice,
    /// `Cow<[u8]>`.
    CowSlice,
    /// `&str`.
    Str,
}

/// What syntax tells about a field type.
#[derive(Clone, Debug)]
pub(crate) struct TypeInfo {
    pub(crate) optional: bool,
    pub(crate) container: Container,
    pub(crate) dtype: Option<DType>,
    pub(crate) bytes_repr: BytesRepr,
}

/// A field's Rust side, kept next to its IR.
pub(crate) struct Binding {
    pub(crate) member: syn::Ident,
    pub(crate) ty: Type,
    /// For feature lists, the type of one step (`Vec<T>` for `Ragged<T>`); for sparse fields,
    /// the value type `T` of `Sparse<T>`.
    pub(crate) step_ty: Option<Type>,
    /// For feature lists, the list type: the field's type inside its `Option`.
    pub(crate) list_ty: Option<Type>,
    pub(crate) info: TypeInfo,
}

/// A lowered struct.
pub(crate) struct Lowered {
    pub(crate) record: Record,
    pub(crate) spans: Vec<Spans>,
    pub(crate) bindings: Vec<Binding>,
    pub(crate) krate: syn::Path,
    /// The `schema = ".."` and `record = ".."` container attributes, when given.
    pub(crate) schema: Option<(syn::LitStr, Option<syn::LitStr>)>,
}

fn last_ident(ty: &Type) -> Option<(&syn::Ident, &syn::PathArguments)> {
    match ty {
        Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().map(|s| (&s.ident, &s.arguments))
        }
        Type::Group(g) => last_ident(&g.elem),
        Type::Paren(p) => last_ident(&p.elem),
        _ => None,
    }
}

fn first_type_arg(args: &syn::PathArguments) -> Option<&Type> {
    let syn::PathArguments::AngleBracketed(a) = args else {
        return None;
    };
    a.args.iter().find_map(|g| match g {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    })
}

fn scalar_dtype(ty: &Type) -> Option<(DType, BytesRepr)> {
    if let Type::Reference(r) = ty {
        return match &*r.elem {
            Type::Slice(s) if last_ident(&s.elem).is_some_and(|(i, _)| i == "u8") => {
                Some((DType::Bytes, BytesRepr::Slice))
            }
            t if last_ident(t).is_some_and(|(i, _)| i == "str") => {
                Some((DType::String, BytesRepr::Str))
            }
            _ => None,
        };
    }
    let (ident, args) = last_ident(ty)?;
    let d = match ident.to_string().as_str() {
        "i64" | "u64" | "i16" | "i8" | "u32" | "u16" | "u8" => DType::Int64,
        "i32" => DType::Int32,
        "bool" => DType::Bool,
        "f32" => DType::Float,
        "f64" => DType::Double,
        "String" => DType::String,
        "Bytes" => DType::Bytes,
        "Vec" => match first_type_arg(args) {
            Some(t) if last_ident(t).is_some_and(|(i, _)| i == "u8") => DType::Bytes,
            _ => return None,
        },
        "Cow" => {
            return match first_type_arg(args) {
                Some(Type::Slice(_)) => Some((DType::Bytes, BytesRepr::CowSlice)),
                Some(t) if last_ident(t).is_some_and(|(i, _)| i == "str") => {
                    Some((DType::String, BytesRepr::From))
                }
                _ => None,
            };
        }
        _ => return None,
    };
    Some((d, BytesRepr::From))
}

/// Classifies a field type: `Option<_>`, `Vec<_>`, `[_; N]`, or a value.
pub(crate) fn classify(ty: &Type) -> TypeInfo {
    let mut optional = false;
    let mut ty = ty;
    if let Some((ident, args)) = last_ident(ty)
        && ident == "Option"
        && let Some(inner) = first_type_arg(args)
    {
        optional = true;
        ty = inner;
    }
    if let Some((d, repr)) = scalar_dtype(ty) {
        return TypeInfo {
            optional,
            container: Container::Scalar,
            dtype: Some(d),
            bytes_repr: repr,
        };
    }
    if let Type::Array(a) = ty {
        let n = match &a.len {
            Expr::Lit(l) => match &l.lit {
                Lit::Int(i) => i.base10_parse::<u64>().ok(),
                _ => None,
            },
            _ => None,
        };
        let (dtype, repr) =
            scalar_dtype(&a.elem).map_or((None, BytesRepr::From), |(d, r)| (Some(d), r));
        return TypeInfo {
            optional,
            container: Container::Array(n),
            dtype,
            bytes_repr: repr,
        };
    }
    if let Some((ident, args)) = last_ident(ty)
        && let Some(inner) = first_type_arg(args)
    {
        let container = match ident.to_string().as_str() {
            "Sparse" => Some(Container::Sparse),
            "Vec" => Some(Container::Vec),
            _ => None,
        };
        if let Some(container) = container {
            let (dtype, repr) =
                scalar_dtype(inner).map_or((None, BytesRepr::From), |(d, r)| (Some(d), r));
            return TypeInfo {
                optional,
                container,
                dtype,
                bytes_repr: repr,
            };
        }
    }
    TypeInfo {
        optional,
        container: Container::Scalar,
        dtype: None,
        bytes_repr: BytesRepr::From,
    }
}

/// Whether a field type is `[u8; N]` (through an `Option`).
fn is_u8_array(ty: &Type) -> bool {
    match ty {
        Type::Array(a) => last_ident(&a.elem).is_some_and(|(i, _)| i == "u8"),
        Type::Group(g) => is_u8_array(&g.elem),
        Type::Paren(p) => is_u8_array(&p.elem),
        _ => match last_ident(ty) {
            Some((i, args)) if i == "Option" => first_type_arg(args).is_some_and(is_u8_array),
            _ => false,
        },
    }
}

/// A feature list type, through an `Option`: `(optional, list type, step type)`, where the
/// step of `Ragged<T>` is `Vec<T>`.
fn list_elem(ty: &Type) -> Option<(bool, Type, Type)> {
    let (ident, args) = last_ident(ty)?;
    if ident == "Option" {
        let inner = first_type_arg(args)?;
        return list_elem(inner).map(|(_, l, s)| (true, l, s));
    }
    let elem = first_type_arg(args)?;
    if ident == "Vec" {
        return Some((false, ty.clone(), elem.clone()));
    }
    if ident == "Ragged" {
        return Some((false, ty.clone(), syn::parse_quote!(::std::vec::Vec<#elem>)));
    }
    None
}

/// The name of a field's value type, through `Option`, `Vec` and arrays (`None` for bytes
/// and for types that are not a plain path), for range checks of default literals.
fn value_type_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Array(a) => value_type_name(&a.elem),
        Type::Group(g) => value_type_name(&g.elem),
        Type::Paren(p) => value_type_name(&p.elem),
        _ => {
            let (ident, args) = last_ident(ty)?;
            if ident == "Option" || ident == "Vec" {
                let inner = first_type_arg(args)?;
                if ident == "Vec" && last_ident(inner).is_some_and(|(i, _)| i == "u8") {
                    return None; // `Vec<u8>` is bytes
                }
                value_type_name(inner)
            } else {
                Some(ident.to_string())
            }
        }
    }
}

/// Why a default literal's numbers do not fit the field's Rust value type, if they do not.
/// (The generated `let v: u8 = 300;` would only trip a lint, which rustc does not report in
/// macro output, and silently wrap.)
fn default_out_of_range(lit: &Literal, ty_name: &str) -> Option<String> {
    let range: Option<(i128, i128)> = match ty_name {
        "i64" => Some((i64::MIN.into(), i64::MAX.into())),
        "i32" => Some((i32::MIN.into(), i32::MAX.into())),
        "i16" => Some((i16::MIN.into(), i16::MAX.into())),
        "i8" => Some((i8::MIN.into(), i8::MAX.into())),
        "u64" => Some((0, u64::MAX.into())),
        "u32" => Some((0, u32::MAX.into())),
        "u16" => Some((0, u16::MAX.into())),
        "u8" => Some((0, u8::MAX.into())),
        _ => None,
    };
    match lit {
        Literal::List(items) => items.iter().find_map(|i| default_out_of_range(i, ty_name)),
        Literal::Int(v) => match range {
            Some((lo, hi)) if !(lo..=hi).contains(v) => Some(format!(
                "default value {v} does not fit in `{ty_name}` ({lo}..={hi})"
            )),
            _ => None,
        },
        Literal::Float(v) if ty_name == "f32" && v.is_finite() && v.abs() > f64::from(f32::MAX) => {
            Some(format!(
                "default value {v:e} is out of range for `f32` (it would round to infinity)"
            ))
        }
        _ => None,
    }
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

/// Skips the value of an attribute that was reported as unknown, so that parsing goes on.
pub(crate) fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _ = meta.parse_nested_meta(|_| Ok(()));
    }
    Ok(())
}

pub(crate) fn unknown_attr(cx: &mut Ctxt, path: &syn::Path, known: &[&str], what: &str) {
    let name = path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_else(|| quote::quote!(#path).to_string());
    let msg = match symbol::did_you_mean(&name, known) {
        Some(s) => format!("unknown {what} attribute `{name}`; did you mean `{s}`?"),
        None => format!(
            "unknown {what} attribute `{name}`; expected one of: {}",
            known.join(", ")
        ),
    };
    cx.error(path.span(), msg);
}

fn lit_str(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<syn::LitStr> {
    meta.value()?.parse::<syn::LitStr>()
}

/// Container attributes.
pub(crate) struct ContainerAttrs {
    pub(crate) rename_all: Option<String>,
    pub(crate) dialect: Dialect,
    pub(crate) deny_unknown_keys: bool,
    pub(crate) krate: Option<syn::Path>,
    pub(crate) repr_int64: bool,
    /// `schema = "specs/x.toml"`: the spec file the struct is checked against.
    pub(crate) schema: Option<syn::LitStr>,
    /// `record = "Name"`: the record of the spec (default: the struct's name).
    pub(crate) record: Option<syn::LitStr>,
}

pub(crate) fn container_attrs(cx: &mut Ctxt, attrs: &[syn::Attribute]) -> ContainerAttrs {
    let mut out = ContainerAttrs {
        rename_all: None,
        dialect: Dialect::Both,
        deny_unknown_keys: false,
        krate: None,
        repr_int64: false,
        schema: None,
        record: None,
    };
    for attr in attrs.iter().filter(|a| a.path().is_ident("example")) {
        let res = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename_all") {
                let s = lit_str(&meta)?;
                if symbol::RENAME_RULES.contains(&s.value().as_str()) {
                    out.rename_all = Some(s.value());
                } else {
                    let hint = symbol::did_you_mean(&s.value(), symbol::RENAME_RULES)
                        .map(|h| format!("; did you mean `{h}`?"))
                        .unwrap_or_else(|| {
                            format!("; expected one of: {}", symbol::RENAME_RULES.join(", "))
                        });
                    cx.error(
                        s.span(),
                        format!("unknown `rename_all` rule `{}`{hint}", s.value()),
                    );
                }
            } else if meta.path.is_ident("dialect") {
                let s = lit_str(&meta)?;
                match Dialect::parse(&s.value()) {
                    Some(d) => out.dialect = d,
                    None => cx.error(
                        s.span(),
                        format!(
                            "unknown dialect `{}`; expected \"tf\", \"ofrecord\" or \"both\"",
                            s.value()
                        ),
                    ),
                }
            } else if meta.path.is_ident("deny_unknown_keys") {
                out.deny_unknown_keys = true;
            } else if meta.path.is_ident("crate") {
                let s = lit_str(&meta)?;
                match s.parse::<syn::Path>() {
                    Ok(p) => out.krate = Some(p),
                    Err(_) => cx.error(s.span(), format!("`{}` is not a path", s.value())),
                }
            } else if meta.path.is_ident("schema") {
                let s = lit_str(&meta)?;
                if out.schema.is_some() {
                    cx.error(s.span(), "duplicate `schema` attribute");
                }
                out.schema = Some(s);
            } else if meta.path.is_ident("record") {
                let s = lit_str(&meta)?;
                if out.record.is_some() {
                    cx.error(s.span(), "duplicate `record` attribute");
                }
                out.record = Some(s);
            } else if meta.path.is_ident("repr") {
                let s = lit_str(&meta)?;
                match s.value().as_str() {
                    "int64" => out.repr_int64 = true,
                    "bytes" => out.repr_int64 = false,
                    other => cx.error(
                        s.span(),
                        format!("unknown repr `{other}`; expected \"bytes\" or \"int64\""),
                    ),
                }
            } else {
                unknown_attr(cx, &meta.path, symbol::CONTAINER, "container");
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

struct FieldAttrs {
    key: Option<syn::LitStr>,
    skip: bool,
    default: Option<(Span, Option<Literal>)>,
    shape: Option<(Span, Vec<u64>)>,
    flatten: bool,
    lossy: bool,
    sequence: bool,
    sparse: Option<SparseAttr>,
}

/// `sparse(index = "i" | ["i", "j"], value = "v", size = [..], already_sorted)`.
struct SparseAttr {
    span: Span,
    index: Vec<String>,
    value: Option<String>,
    size: Vec<u64>,
    already_sorted: bool,
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
    meta.parse_nested_meta(|inner| {
        let p = &inner.path;
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

fn field_attrs(cx: &mut Ctxt, attrs: &[syn::Attribute]) -> FieldAttrs {
    let mut out = FieldAttrs {
        key: None,
        skip: false,
        default: None,
        shape: None,
        flatten: false,
        lossy: false,
        sequence: false,
        sparse: None,
    };
    for attr in attrs.iter().filter(|a| a.path().is_ident("example")) {
        let res = attr.parse_nested_meta(|meta| {
            let p = &meta.path;
            if p.is_ident("key") {
                let s = lit_str(&meta)?;
                if out.key.is_some() {
                    cx.error(s.span(), "duplicate `key` attribute");
                }
                out.key = Some(s);
            } else if p.is_ident("skip") {
                out.skip = true;
            } else if p.is_ident("flatten") {
                out.flatten = true;
            } else if p.is_ident("lossy") {
                out.lossy = true;
            } else if p.is_ident("sequence") {
                out.sequence = true;
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
                match int_list(&e) {
                    Some(d) => out.shape = Some((span, d)),
                    None => cx.error(
                        span,
                        "expected a shape like `[28, 28]` of non-negative integer literals",
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

fn docs(attrs: &[syn::Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(s.value().trim().to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Lowers a struct to the IR. `kind` is the derive that was invoked.
pub(crate) fn lower_struct(
    cx: &mut Ctxt,
    input: &syn::DeriveInput,
    data: &syn::DataStruct,
    kind: RecordKind,
) -> Lowered {
    let cattrs = container_attrs(cx, &input.attrs);
    if cattrs.repr_int64 {
        cx.error(input.ident.span(), "`repr` applies to enums only");
    }
    let mut record = Record {
        name: input.ident.to_string(),
        kind,
        dialect: cattrs.dialect,
        deny_unknown_keys: cattrs.deny_unknown_keys,
        fields: Vec::new(),
        doc: docs(&input.attrs),
        origin: Origin(0),
    };
    let mut spans = Vec::new();
    let mut bindings = Vec::new();
    let named = match &data.fields {
        syn::Fields::Named(n) => n.named.iter().collect::<Vec<_>>(),
        syn::Fields::Unnamed(u) => {
            cx.error(
                u.span(),
                "tuple structs cannot derive a record: features need names; use a struct with named fields",
            );
            Vec::new()
        }
        syn::Fields::Unit => {
            cx.error(
                input.ident.span(),
                "a unit struct has no features; add named fields",
            );
            Vec::new()
        }
    };
    for f in named {
        let Some(ident) = f.ident.clone() else {
            continue;
        };
        let fa = field_attrs(cx, &f.attrs);
        let member = ident.to_string();
        let member_plain = member.trim_start_matches("r#").to_string();
        let key = match (&fa.key, &cattrs.rename_all) {
            _ if fa.sparse.as_ref().is_some_and(|s| s.value.is_some()) => fa
                .sparse
                .as_ref()
                .and_then(|s| s.value.clone())
                .unwrap_or_default(),
            (Some(k), _) => k.value(),
            (None, Some(rule)) => symbol::rename(rule, &member_plain),
            (None, None) => member_plain.clone(),
        };
        if fa.key.as_ref().is_some_and(|k| k.value().is_empty()) {
            cx.error(
                fa.key.as_ref().map_or(ident.span(), syn::LitStr::span),
                "a feature key cannot be empty",
            );
        }
        let origin = Origin(u32::try_from(spans.len()).unwrap_or(u32::MAX));
        spans.push(Spans {
            field: ident.span(),
            ty: f.ty.span(),
            key: fa.key.as_ref().map(syn::LitStr::span),
            default: fa.default.as_ref().map(|d| d.0),
            shape: fa.shape.as_ref().map(|s| s.0),
        });
        let mut info = classify(&f.ty);
        let mut step_ty = None;
        let mut feature_kind = FeatureKind::Fixed { shape: vec![] };
        let mut presence = Presence::Required;
        if fa.skip && (fa.key.is_some() || fa.default.is_some() || fa.flatten || fa.sequence) {
            cx.error(
                ident.span(),
                "a `skip` field is not a feature: remove its other `#[example]` attributes",
            );
        }
        if fa.flatten && (fa.default.is_some() || fa.shape.is_some() || fa.sequence || fa.lossy) {
            cx.error(
                ident.span(),
                "a `flatten` field takes only `key` (its key prefix)",
            );
        }
        let mut list_ty = None;
        if fa.sequence {
            match list_elem(&f.ty) {
                Some((optional, list, step)) => {
                    info = classify(&step);
                    info.optional = optional;
                    step_ty = Some(step);
                    list_ty = Some(list);
                }
                None => cx.error(
                    f.ty.span(),
                    "a `sequence` field holds one feature per step: its type must be `Vec<_>` or `Ragged<_>` (or an `Option` of one)",
                ),
            }
        }
        if !fa.skip && !fa.flatten && is_u8_array(step_ty.as_ref().unwrap_or(&f.ty)) {
            cx.error(
                f.ty.span(),
                "an array of `u8` is not a supported field type: `u8` is not a list element \
                 because `Vec<u8>` is bytes; use `Vec<u8>` (or `bytes::Bytes`, `&[u8]`) for one \
                 bytes value, or an array of a wider integer such as `[u16; N]` for int64 values",
            );
        }
        let shape_of_value = |cx: &mut Ctxt, info: &TypeInfo| -> FeatureKind {
            match (info.container, &fa.shape) {
                (Container::Scalar, None) => FeatureKind::Fixed { shape: vec![] },
                (Container::Scalar, Some((span, _))) => {
                    cx.error(*span, "`shape` needs a `Vec<_>` or `[_; N]` field");
                    FeatureKind::Fixed { shape: vec![] }
                }
                (Container::Vec | Container::Sparse, None) => FeatureKind::Var,
                (Container::Vec | Container::Sparse, Some((_, dims))) => FeatureKind::Fixed {
                    shape: dims.clone(),
                },
                (Container::Array(n), None) => FeatureKind::Fixed {
                    shape: n.into_iter().collect(),
                },
                (Container::Array(n), Some((span, dims))) => {
                    let product = dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
                    if let (Some(n), Some(p)) = (n, product)
                        && n != p
                    {
                        cx.error(
                            *span,
                            format!("`shape` holds {p} values, but the array type holds {n}"),
                        );
                    }
                    FeatureKind::Fixed {
                        shape: dims.clone(),
                    }
                }
            }
        };
        if let Some(sp) = &fa.sparse {
            if fa.default.is_some() || fa.shape.is_some() || fa.sequence || fa.flatten || fa.skip {
                cx.error(
                    sp.span,
                    "a `sparse` field takes no `default`, `shape`, `sequence`, `flatten` or `skip`",
                );
            }
            if fa.key.is_some() && sp.value.is_some() {
                cx.error(
                    sp.span,
                    "give the value key either as `key` or as `sparse(value = ..)`, not both",
                );
            }
            if info.container != Container::Sparse || info.optional {
                cx.error(
                    f.ty.span(),
                    "a `sparse` field must have the type `Sparse<T>` (tfrecord_core::Sparse)",
                );
            }
            if let Some((ident, args)) = last_ident(&f.ty)
                && ident == "Sparse"
                && let Some(inner) = first_type_arg(args)
            {
                step_ty = Some(inner.clone());
            }
            feature_kind = FeatureKind::Sparse {
                index_keys: sp.index.clone(),
                size: sp.size.clone(),
                already_sorted: sp.already_sorted,
            };
        } else if info.container == Container::Sparse && !fa.skip {
            cx.error(
                f.ty.span(),
                "a `Sparse<T>` field needs `#[example(sparse(index = \"..\", value = \"..\"))]`",
            );
        } else if !fa.skip && !fa.flatten {
            let value_kind = shape_of_value(cx, &info);
            feature_kind = if fa.sequence {
                FeatureKind::Steps {
                    step: Box::new(value_kind),
                }
            } else {
                value_kind
            };
        }
        if info.optional {
            presence = Presence::Optional;
        }
        if let Some((span, lit)) = &fa.default {
            if info.optional {
                cx.error(
                    *span,
                    "an `Option` field is `None` when absent; it cannot also have a `default`",
                );
            }
            presence = match lit {
                Some(l) => {
                    if info.dtype.is_none() && !fa.sequence {
                        cx.error(
                            *span,
                            "a default literal needs a field of a known value type; use `default` without a value to take the type's `Default`",
                        );
                    }
                    if fa.sequence {
                        cx.error(
                            *span,
                            "a `sequence` field takes `default` without a value (an empty list)",
                        );
                    }
                    if let Some(ty_name) = value_type_name(&f.ty)
                        && let Some(msg) = default_out_of_range(l, &ty_name)
                    {
                        cx.error(*span, msg);
                    }
                    Presence::Default(l.clone())
                }
                None => Presence::TypeDefault,
            };
        }
        if fa.flatten {
            info.dtype = None;
        }
        record.fields.push(Field {
            name: member_plain.clone(),
            member: member_plain,
            key,
            source: None,
            dtype: info.dtype,
            kind: feature_kind,
            presence,
            skip: fa.skip,
            flatten: fa.flatten,
            lossy: fa.lossy,
            doc: docs(&f.attrs),
            origin,
        });
        bindings.push(Binding {
            member: ident,
            ty: f.ty.clone(),
            step_ty,
            list_ty,
            info,
        });
    }
    if let (None, Some(r)) = (&cattrs.schema, &cattrs.record) {
        cx.error(
            r.span(),
            "`record` names a record of a `schema`: add `schema = \"path/to/spec.toml\"`",
        );
    }
    let krate = cattrs
        .krate
        .unwrap_or_else(|| syn::parse_quote!(::tfrecord_core));
    Lowered {
        record,
        spans,
        bindings,
        krate,
        schema: cattrs.schema.map(|s| (s, cattrs.record)),
    }
}
