//! Lowering a struct to the IR: each field's attributes and type become an IR field, with its
//! Rust side kept aside as a binding for the code generator and the spans of its parts kept
//! for diagnostics.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Expr, Lit, Type};

use super::container::container_attrs;
use super::ctxt::Ctxt;
use super::field::{FieldAttrs, field_attrs};
use super::types::{
    Container, TypeInfo, classify, first_type_arg, is_list_of_lists, is_option_of_option,
    is_u8_array, last_ident, list_elem, map_name, value_type_name,
};
use crate::ir::{FeatureKind, Field, Literal, Origin, Presence, Record, RecordKind};
use crate::symbol;

/// Where each part of a field was written, indexed by [`Origin`].
pub(crate) struct Spans {
    pub(crate) field: Span,
    pub(crate) ty: Span,
    pub(crate) key: Option<Span>,
    pub(crate) default: Option<Span>,
    pub(crate) shape: Option<Span>,
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
        Literal::Float(v) if ty_name == "f32" && crate::ir::beyond_f32(*v) => Some(format!(
            "default value {v:e} is out of range for `f32` (it would round to infinity)"
        )),
        _ => None,
    }
}

/// Whether a feature of this kind is a variable-length list (TensorFlow's `VarLenFeature`,
/// alone or as the steps of a feature list), which TensorFlow reads as empty when absent.
fn is_var_len(kind: &FeatureKind) -> bool {
    match kind {
        FeatureKind::Var { .. } => true,
        FeatureKind::Steps { step } => matches!(**step, FeatureKind::Var { .. }),
        _ => false,
    }
}

/// The presence of a field after `required`: a variable-length list is empty when absent, as
/// TensorFlow's `VarLenFeature` reads it, unless the field opts into an error with
/// `#[example(required)]`. `required` anywhere else is an error at the attribute.
fn var_presence(
    cx: &mut Ctxt,
    fa: &FieldAttrs,
    kind: &FeatureKind,
    presence: Presence,
) -> Presence {
    let var_len = is_var_len(kind) && !fa.skip && !fa.flatten && fa.sparse.is_none();
    let Some(span) = fa.required else {
        return match presence {
            Presence::Required if var_len => Presence::TypeDefault,
            other => other,
        };
    };
    let why = if presence == Presence::Optional {
        Some("an `Option` field is `None` when absent; it cannot also be `required`")
    } else if fa.default.is_some() {
        Some("a `required` field has no value when absent; it cannot also have a `default`")
    } else if fa.skip {
        Some("a `skip` field is not a feature; it cannot be `required`")
    } else if fa.flatten {
        Some(
            "`required` applies to one feature; the members of a `flatten` field say for \
             themselves whether they are required",
        )
    } else if fa.sparse.is_some() {
        Some(
            "a `sparse` field is empty when its features are absent, as `tf.io.SparseFeature` \
             reads them; it cannot be `required`",
        )
    } else if !var_len {
        Some(
            "`required` is for a variable-length list (`Vec<T>`, TensorFlow's \
             `VarLenFeature`), which is empty when absent; this field is required already: \
             an absent feature is an error",
        )
    } else {
        None
    };
    match why {
        Some(msg) => {
            cx.error(span, msg);
            presence
        }
        None => Presence::Required,
    }
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
        if !fa.skip && !fa.flatten && is_option_of_option(step_ty.as_ref().unwrap_or(&f.ty)) {
            cx.error(
                f.ty.span(),
                "`Option<Option<_>>` is not a supported field type: a feature is absent (`None`) \
                 or holds its values, so `Some(None)` would be written as absent and read back \
                 as `None`; use one `Option`",
            );
        }
        let value_ty = step_ty.as_ref().unwrap_or(&f.ty);
        if !fa.skip && !fa.flatten && is_list_of_lists(value_ty) {
            let lists = if kind == RecordKind::SequenceExample && !fa.sequence {
                "mark the field `#[example(sequence)]` to make it a feature list (one list per \
                 step)"
            } else {
                "a `tf.train.SequenceExample` feature list holds one list per step \
                 (`#[derive(SequenceExample)]`, the field marked `#[example(sequence)]`)"
            };
            cx.push(syn::Error::new_spanned(
                &f.ty,
                format!(
                    "a list of lists is not one feature: a feature holds one flat list. For rows \
                     of n values, use a flat `Vec<_>` with `#[example(shape = [-1, n])]`; for \
                     lists of any length, {lists}"
                ),
            ));
        }
        if !fa.skip
            && !fa.flatten
            && let Some(map) = map_name(value_ty)
        {
            cx.push(syn::Error::new_spanned(
                &f.ty,
                format!(
                    "`{map}` is not a feature: a record's features are its fields, one key each \
                     (a field per key, or `#[example(flatten)]` on a struct deriving `Example` \
                     for a group of them); for a list of pairs, two `Vec` fields"
                ),
            ));
        }
        let shape_of_value = |cx: &mut Ctxt, info: &TypeInfo| -> FeatureKind {
            let shape = fa.shape.as_ref().map(|(span, dims)| {
                let known: Option<Vec<u64>> = dims.iter().copied().collect();
                match known {
                    Some(known) => (*span, Ok(known)),
                    None => (*span, Err(dims.clone())),
                }
            });
            let shape = match shape {
                Some((span, Err(dims))) => {
                    let rows = dims[0].is_none()
                        && dims[1..].iter().all(Option::is_some)
                        && info.container == Container::Vec
                        && !fa.sequence
                        && kind == RecordKind::Example;
                    if rows {
                        return FeatureKind::FixedSequence {
                            shape: dims[1..].to_vec(),
                            allow_missing: true,
                        };
                    }
                    cx.error(
                        span,
                        "only the first dimension of a shape can be unknown (`-1`), on a `Vec<_>` \
                         field of an `Example`: rows of the other dimensions, any number of them \
                         (a FixedLenSequenceFeature)",
                    );
                    None
                }
                Some((span, Ok(known))) => Some((span, known)),
                None => None,
            };
            match (info.container, &shape) {
                (Container::Scalar, None) => FeatureKind::Fixed { shape: vec![] },
                (Container::Scalar, Some((span, _))) => {
                    cx.error(*span, "`shape` needs a `Vec<_>` or `[_; N]` field");
                    FeatureKind::Fixed { shape: vec![] }
                }
                (Container::Vec | Container::Sparse, None) => FeatureKind::Var { rank: None },
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
        let rows = matches!(feature_kind, FeatureKind::FixedSequence { .. });
        if info.optional {
            presence = Presence::Optional;
        } else if rows {
            // Rows of a FixedLenSequenceFeature: a record without the feature has none.
            presence = Presence::TypeDefault;
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
                    if rows {
                        cx.error(
                            *span,
                            "a field of rows (`shape = [-1, ..]`) is empty when absent; the value \
                             that pads rows to a batch's longest record belongs to the parser's spec",
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
        presence = var_presence(cx, &fa, &feature_kind, presence);
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
