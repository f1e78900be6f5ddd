//! What syntax tells about a Rust field type: `Option`, `Vec`, arrays, `Sparse`, feature lists,
//! and the value type a feature holds.

use syn::{Expr, Lit, Type};

use crate::ir::DType;

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

pub(super) fn last_ident(ty: &Type) -> Option<(&syn::Ident, &syn::PathArguments)> {
    match ty {
        Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().map(|s| (&s.ident, &s.arguments))
        }
        Type::Group(g) => last_ident(&g.elem),
        Type::Paren(p) => last_ident(&p.elem),
        _ => None,
    }
}

pub(super) fn first_type_arg(args: &syn::PathArguments) -> Option<&Type> {
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
pub(super) fn is_u8_array(ty: &Type) -> bool {
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

/// Whether a field type is `Option<Option<_>>`.
pub(super) fn is_option_of_option(ty: &Type) -> bool {
    let option = |ty: &Type| -> Option<Type> {
        match last_ident(ty) {
            Some((i, args)) if i == "Option" => first_type_arg(args).cloned(),
            _ => None,
        }
    };
    option(ty).and_then(|inner| option(&inner)).is_some()
}

/// Whether a type is a list of lists (`Vec<Vec<T>>`, through an `Option`), other than a list
/// of byte strings (`Vec<Vec<u8>>`): one feature holds one flat list.
pub(super) fn is_list_of_lists(ty: &Type) -> bool {
    let arg = |ty: &Type, name: &str| -> Option<Type> {
        match last_ident(ty) {
            Some((i, args)) if i == name => first_type_arg(args).cloned(),
            _ => None,
        }
    };
    let ty = arg(ty, "Option").unwrap_or_else(|| ty.clone());
    arg(&ty, "Vec")
        .and_then(|inner| arg(&inner, "Vec"))
        .is_some_and(|elem| last_ident(&elem).is_none_or(|(i, _)| i != "u8"))
}

/// The name of a map or set type (`HashMap`, `BTreeMap`, `HashSet`, `BTreeSet`, `IndexMap`,
/// `IndexSet`, through an `Option`), which no feature holds.
pub(super) fn map_name(ty: &Type) -> Option<String> {
    const MAPS: [&str; 6] = [
        "HashMap", "BTreeMap", "HashSet", "BTreeSet", "IndexMap", "IndexSet",
    ];
    let (ident, args) = last_ident(ty)?;
    if ident == "Option" {
        return map_name(first_type_arg(args)?);
    }
    let name = ident.to_string();
    MAPS.contains(&name.as_str()).then_some(name)
}

/// A feature list type, through an `Option`: `(optional, list type, step type)`, where the
/// step of `Ragged<T>` is `Vec<T>`.
pub(super) fn list_elem(ty: &Type) -> Option<(bool, Type, Type)> {
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
pub(super) fn value_type_name(ty: &Type) -> Option<String> {
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
