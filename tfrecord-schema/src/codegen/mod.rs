//! The derive front end and the code generator. `tfrecord-derive` is a thin shell over
//! [`derive_example`] and [`derive_sequence_example`].
//!
//! Pipeline: parse the attributes and lower the struct to the [IR](crate::ir) (collecting every
//! error), run the shared [checks](crate::check), then expand. On any error the output is the
//! errors plus stub impls, so one mistake gives one message.

mod attrs;
mod expand;
mod schema;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;

use crate::check::{self, Part};
use crate::ir::RecordKind;
use attrs::Ctxt;

/// Expands `#[derive(Example)]`.
pub fn derive_example(input: &syn::DeriveInput) -> TokenStream {
    derive(input, RecordKind::Example)
}

/// Expands `#[derive(SequenceExample)]`.
pub fn derive_sequence_example(input: &syn::DeriveInput) -> TokenStream {
    derive(input, RecordKind::SequenceExample)
}

fn check_generics(cx: &mut Ctxt, generics: &syn::Generics) {
    for p in &generics.params {
        match p {
            syn::GenericParam::Type(t) => cx.error(
                t.span(),
                "generic type parameters are not supported: a record's feature types must be known; \
                 use concrete types (a lifetime for borrowed fields is fine)",
            ),
            syn::GenericParam::Const(c) => {
                cx.error(c.span(), "const generic parameters are not supported: use concrete array lengths");
            }
            syn::GenericParam::Lifetime(_) => {}
        }
    }
    if let Some(l) = generics.lifetimes().nth(1) {
        cx.error(
            l.span(),
            "at most one lifetime parameter: borrowed fields all borrow from the record's bytes",
        );
    }
}

fn derive(input: &syn::DeriveInput, kind: RecordKind) -> TokenStream {
    let mut cx = Ctxt::default();
    check_generics(&mut cx, &input.generics);
    let krate_default: syn::Path = syn::parse_quote!(::tfrecord_core);
    let mut tracked = quote!();
    let (tokens, krate) = match &input.data {
        syn::Data::Struct(data) => {
            let lowered = attrs::lower_struct(&mut cx, input, data, kind);
            for d in check::check(&lowered.record) {
                let span_of = |origin: crate::ir::Origin, part: Part| -> Span {
                    let Some(s) = lowered.spans.get(origin.0 as usize) else {
                        return input.ident.span();
                    };
                    match part {
                        Part::Type => s.ty,
                        Part::Key => s.key.unwrap_or(s.field),
                        Part::Default => s.default.unwrap_or(s.field),
                        Part::Shape => s.shape.unwrap_or(s.field),
                        _ => s.field,
                    }
                };
                let mut e = syn::Error::new(span_of(d.origin, d.part), &d.message);
                for (o, part, note) in &d.notes {
                    e.combine(syn::Error::new(span_of(*o, *part), format!("note: {note}")));
                }
                cx.push(e);
            }
            if let Some((path, record)) = &lowered.schema {
                tracked = schema::check(&mut cx, input, &lowered, path, record.as_ref());
            }
            let mut tokens = match kind {
                RecordKind::SequenceExample => expand::expand_sequence(input, &lowered),
                _ => expand::expand_example(input, &lowered),
            };
            tokens.extend(expand::expand_schema(input, &lowered));
            (tokens, lowered.krate)
        }
        syn::Data::Enum(data) => {
            let cattrs = attrs::container_attrs(&mut cx, &input.attrs);
            let krate = cattrs.krate.clone().unwrap_or(krate_default);
            if kind == RecordKind::SequenceExample {
                cx.error(
                    input.ident.span(),
                    "`SequenceExample` can only be derived for structs",
                );
            }
            let mut variants = Vec::new();
            // Each stored name, the variant stored as it and where the name was written.
            let mut stored: Vec<(String, syn::Ident, Span)> = Vec::new();
            for v in &data.variants {
                if !matches!(v.fields, syn::Fields::Unit) {
                    cx.error(
                        v.fields.span(),
                        "only unit-only enums can derive `Example` (stored as the variant name, or its \
                         discriminant with `#[example(repr = \"int64\")]`): this variant holds data",
                    );
                    continue;
                }
                let mut name = match &cattrs.rename_all {
                    Some(rule) => crate::symbol::rename(rule, &v.ident.to_string()),
                    None => v.ident.to_string(),
                };
                let mut name_span = v.ident.span();
                let mut once = attrs::Once::default();
                for attr in v.attrs.iter().filter(|a| a.path().is_ident("example")) {
                    let res = attr.parse_nested_meta(|meta| {
                        once.check(&mut cx, &meta.path, crate::symbol::VARIANT);
                        if meta.path.is_ident("rename") {
                            let s = meta.value()?.parse::<syn::LitStr>()?;
                            name = s.value();
                            name_span = s.span();
                        } else {
                            attrs::unknown_attr(
                                &mut cx,
                                &meta.path,
                                crate::symbol::VARIANT,
                                "variant",
                            );
                            attrs::skip_value(&meta)?;
                        }
                        Ok(())
                    });
                    if let Err(e) = res {
                        cx.push(e);
                    }
                }
                // Stored as names, two variants of one name would read back as the first.
                if !cattrs.repr_int64 {
                    if let Some((_, first, at)) = stored.iter().find(|(n, ..)| *n == name) {
                        let mut e = syn::Error::new(
                            name_span,
                            format!(
                                "duplicate stored name `{name}`: variant `{}` is stored as it, and \
                                 so is variant `{first}`; reading would give `{first}` for both",
                                v.ident
                            ),
                        );
                        e.combine(syn::Error::new(
                            *at,
                            format!("note: first used by variant `{first}`"),
                        ));
                        cx.push(e);
                    } else {
                        stored.push((name.clone(), v.ident.clone(), name_span));
                    }
                }
                let disc = v.discriminant.as_ref().map(|(_, e)| e.clone());
                variants.push((v.ident.clone(), name, disc));
            }
            if data.variants.is_empty() {
                cx.error(
                    input.ident.span(),
                    "an enum with no variants has no values to store",
                );
            }
            if let Some(s) = cattrs.schema.as_ref().or(cattrs.record.as_ref()) {
                cx.error(
                    s.span(),
                    "`schema` and `record` check a struct against a spec; an enum is a value",
                );
            }
            if cattrs.dialect != crate::ir::Dialect::Both || cattrs.deny_unknown_keys {
                cx.error(
                    input.ident.span(),
                    "`dialect` and `deny_unknown_keys` apply to structs, not enums",
                );
            }
            let tokens = if input.generics.params.is_empty() {
                expand::expand_enum(input, &krate, &variants, cattrs.repr_int64)
            } else {
                quote!()
            };
            (tokens, krate)
        }
        syn::Data::Union(u) => {
            cx.error(
                u.union_token.span(),
                "unions cannot derive a record: use a struct with named fields (or a unit-only enum for a value)",
            );
            (quote!(), krate_default)
        }
    };
    match cx.finish() {
        Ok(()) => quote!(const _: () = { #tokens #tracked };),
        Err(e) => {
            let errors = e.to_compile_error();
            let stub = match &input.data {
                syn::Data::Struct(_) => expand::fallback(input, &krate, kind),
                _ => quote!(),
            };
            quote!(#errors const _: () = { #stub #tracked };)
        }
    }
}
