//! Parsing the container attributes: the `#[example(..)]` on a struct or an enum.

use super::ctxt::Ctxt;
use super::meta::{Once, lit_str, skip_value, unknown_attr};
use crate::ir::Dialect;
use crate::symbol;

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
    // Over all of the item's `#[example(..)]` attributes together.
    let mut once = Once::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("example")) {
        let res = attr.parse_nested_meta(|meta| {
            once.check(cx, &meta.path, symbol::CONTAINER);
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
                out.schema = Some(lit_str(&meta)?);
            } else if meta.path.is_ident("record") {
                out.record = Some(lit_str(&meta)?);
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
