//! What the expansions write for one field: its `FieldInfo` constant, its dialect marker, the
//! span of its type, and the expression that decodes it from its feature's bytes.

use proc_macro2::{Literal as Lit, TokenStream};
use quote::{quote, quote_spanned};

use super::defaults::default_expr;
use crate::codegen::attrs::{Binding, Container, Lowered, Spans};
use crate::ir::{FeatureKind, Field, Presence};

/// A lowered struct as the expansions read it, with the path of `tfrecord_core::__private`.
pub(super) struct Ctx<'a> {
    pub(super) lowered: &'a Lowered,
    pub(super) p: TokenStream,
}

impl Ctx<'_> {
    pub(super) fn info(&self, f: &Field) -> TokenStream {
        let p = &self.p;
        let record = &self.lowered.record.name;
        let member = &f.member;
        let key = &f.key;
        quote!(const __INFO: #p::FieldInfo = #p::FieldInfo { record: #record, member: #member, key: #key };)
    }

    pub(super) fn spans(&self, f: &Field) -> &Spans {
        &self.lowered.spans[f.origin.0 as usize]
    }

    /// The dialect marker for a field in dialect `tf`/`of`.
    pub(super) fn dialect(&self, of: bool, f: &Field) -> TokenStream {
        let p = &self.p;
        if of {
            quote!(#p::Of)
        } else if f.lossy {
            quote!(#p::TfLossy)
        } else {
            quote!(#p::Tf)
        }
    }
    /// The decode expression of a (non-sequence) field from an `Option<FeatureBytes>` expression.
    pub(super) fn decode_value(
        &self,
        of: bool,
        f: &Field,
        b: &Binding,
        slot: &TokenStream,
    ) -> TokenStream {
        let p = &self.p;
        let ty = &b.ty;
        let d = self.dialect(of, f);
        let span = self.spans(f).ty;
        let info = self.info(f);
        // A `Feature` with no list set is absent.
        let slot = quote!(#p::kindful(#slot));
        let base = match &f.presence {
            Presence::Default(_) | Presence::TypeDefault => {
                let dflt =
                    default_expr(f, b, self.spans(f).default.unwrap_or(span), !of && f.lossy);
                quote_spanned! {span=>
                    match #slot {
                        #p::Some(__m) => #p::present::<#d, #ty>(__m, &__INFO)?,
                        #p::None => #dflt,
                    }
                }
            }
            _ => quote_spanned!(span=> #p::field::<#d, #ty>(#slot, &__INFO)?),
        };
        let check = self.check(f, b, &quote!(&__v));
        quote!({ #info let __v: #ty = #base; #check __v })
    }

    /// The shape check of a (non-sequence) field, decoded or about to be encoded, on `v`, an
    /// expression of `&T`; empty for fields without one. Uses `__INFO`.
    pub(super) fn check(&self, f: &Field, b: &Binding, v: &TokenStream) -> TokenStream {
        let p = &self.p;
        match (&f.kind, b.info.container) {
            (FeatureKind::Fixed { shape }, Container::Vec) if !shape.is_empty() => {
                let n = Lit::u64_unsuffixed(f.kind.fixed_count().unwrap_or(0));
                if b.info.optional {
                    quote!(if let #p::Some(__x) = #v { #p::check_len(__x, #n, &__INFO)?; })
                } else {
                    quote!(#p::check_len(#v, #n, &__INFO)?;)
                }
            }
            (FeatureKind::FixedSequence { shape, .. }, Container::Vec) => {
                let row = shape
                    .iter()
                    .flatten()
                    .try_fold(1u64, |a, &d| a.checked_mul(d));
                let row = Lit::u64_unsuffixed(row.unwrap_or(0));
                if b.info.optional {
                    quote!(if let #p::Some(__x) = #v { #p::check_rows(__x, #row, &__INFO)?; })
                } else {
                    quote!(#p::check_rows(#v, #row, &__INFO)?;)
                }
            }
            (
                FeatureKind::Sparse {
                    index_keys, size, ..
                },
                _,
            ) => {
                let record = &self.lowered.record.name;
                let member = &f.member;
                let infos = index_keys
                    .iter()
                    .map(|k| quote!(#p::FieldInfo { record: #record, member: #member, key: #k }));
                let size = size.iter().map(|&n| Lit::u64_suffixed(n));
                quote! {{
                    const __IDX: &[#p::FieldInfo] = &[#(#infos),*];
                    #p::check_sparse(#v, __IDX, &__INFO, &[#(#size),*])?;
                }}
            }
            _ => quote!(),
        }
    }

    /// The statement that decodes a (non-sequence) field into `self.<member>` from an
    /// `Option<FeatureBytes>` expression, for `decode_into`: a present feature through
    /// `present_into`, which reuses the field's buffers, then the same check as
    /// [`decode_value`](Self::decode_value); an absent one assigned as there.
    pub(super) fn decode_into_stmt(
        &self,
        of: bool,
        f: &Field,
        b: &Binding,
        slot: &TokenStream,
    ) -> TokenStream {
        let p = &self.p;
        let ty = &b.ty;
        let m = &b.member;
        let d = self.dialect(of, f);
        let span = self.spans(f).ty;
        let info = self.info(f);
        let check = self.check(f, b, &quote!(__v));
        let absent = self.decode_value(of, f, b, &quote!(#p::None));
        quote_spanned! {span=>
            match #p::kindful(#slot) {
                #p::Some(__m) => {
                    #info
                    #p::present_into::<#d, #ty>(&mut self.#m, __m, &__INFO)?;
                    let __v: &#ty = &self.#m;
                    #check
                }
                #p::None => self.#m = #absent,
            }
        }
    }
}
