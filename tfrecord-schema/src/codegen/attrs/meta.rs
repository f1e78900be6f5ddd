//! What every `#[example(..)]` parser shares: reading a string value, reporting an unknown
//! attribute with a suggestion, and skipping the value of one.

use syn::Expr;
use syn::spanned::Spanned;

use super::ctxt::Ctxt;
use crate::symbol;

/// Skips the value of an attribute that was reported as unknown, so that parsing goes on.
pub(crate) fn skip_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _ = meta.parse_nested_meta(|_| Ok(()));
    }
    Ok(())
}

/// Attributes other derives (serde's, prost's) spell differently, and the one meant here.
const SYNONYMS: &[(&str, &str)] = &[("rename", "key"), ("name", "key"), ("tag", "key")];

/// Reports an attribute not in `known` at its span, suggesting the known one it is another
/// spelling of, or the closest one.
pub(crate) fn unknown_attr(cx: &mut Ctxt, path: &syn::Path, known: &[&str], what: &str) {
    let name = path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_else(|| quote::quote!(#path).to_string());
    let synonym = SYNONYMS
        .iter()
        .find(|(other, meant)| *other == name && known.contains(meant))
        .map(|(_, meant)| *meant);
    let msg = match synonym.or_else(|| symbol::did_you_mean(&name, known)) {
        Some(s) => format!("unknown {what} attribute `{name}`; did you mean `{s}`?"),
        None => format!(
            "unknown {what} attribute `{name}`; expected one of: {}",
            known.join(", ")
        ),
    };
    cx.error(path.span(), msg);
}

/// The attributes one item was given so far, so that one given twice (whose later value would
/// silently win) is an error at its second place.
#[derive(Default)]
pub(crate) struct Once(Vec<String>);

impl Once {
    /// Reports `path` at its span when it is one of `known` and this item already had it.
    pub(crate) fn check(&mut self, cx: &mut Ctxt, path: &syn::Path, known: &[&str]) {
        let Some(name) = path.get_ident().map(ToString::to_string) else {
            return;
        };
        if !known.contains(&name.as_str()) {
            return;
        }
        if self.0.contains(&name) {
            cx.error(path.span(), format!("duplicate `{name}` attribute"));
        } else {
            self.0.push(name);
        }
    }
}

pub(super) fn lit_str(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<syn::LitStr> {
    meta.value()?.parse::<syn::LitStr>()
}
