//! The expansion of `#[derive(SequenceExample)]`: the context features and the feature lists
//! of a `tf.train.SequenceExample`.

use proc_macro2::{Literal as Lit, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use super::field::Ctx;
use super::heads::Prelude;
use super::tokens::{byte_lit, key_match};
use crate::codegen::attrs::{Binding, Container, Lowered, classify};
use crate::ir::{FeatureKind, Field, Presence};

/// Generates the impls for a struct deriving `SequenceExample`.
pub(crate) fn expand_sequence(input: &syn::DeriveInput, lowered: &Lowered) -> TokenStream {
    let Prelude {
        p,
        cx,
        heads,
        record,
        fields,
    } = Prelude::new(input, lowered);
    let de = &heads.de;
    let is_steps = |f: &Field| matches!(f.kind, FeatureKind::Steps { .. });
    let ctx: Vec<&(&Field, &Binding)> = fields
        .iter()
        .filter(|(f, _)| !f.skip && !is_steps(f))
        .collect();
    let seq: Vec<&(&Field, &Binding)> = fields
        .iter()
        .filter(|(f, _)| !f.skip && is_steps(f))
        .collect();

    let ctx_lens: Vec<TokenStream> = ctx
        .iter()
        .map(|(f, b)| {
            let (ty, m, d) = (&b.ty, &b.member, cx.dialect(false, f));
            let klen = Lit::usize_unsuffixed(f.key.len());
            quote_spanned!(cx.spans(f).ty=> + #p::entry_len::<#d, #ty>(#klen, &self.#m))
        })
        .collect();
    let ctx_puts: Vec<TokenStream> = ctx
        .iter()
        .map(|(f, b)| {
            let (ty, m, d) = (&b.ty, &b.member, cx.dialect(false, f));
            let k = byte_lit(&f.key);
            quote_spanned!(cx.spans(f).ty=> #p::put_entry::<#d, #ty>(__buf, b"", #k, &self.#m);)
        })
        .collect();
    // Each feature list's body length, computed once for the header and the entry.
    let list_len_of = |i: usize| format_ident!("__list{}", i);
    let seq_list_lens: Vec<TokenStream> = seq.iter().enumerate().map(|(i, (f, b))| {
        let lt = b.list_ty.as_ref().unwrap_or(&b.ty);
        let d = cx.dialect(false, f);
        let m = &b.member;
        let var = list_len_of(i);
        let len = if b.info.optional {
            quote!(match &self.#m { #p::Some(__v) => #p::Some(<#lt as #p::EncodeSteps<#d>>::list_len(__v)), #p::None => #p::None })
        } else {
            quote!(#p::Some(<#lt as #p::EncodeSteps<#d>>::list_len(&self.#m)))
        };
        quote_spanned!(cx.spans(f).ty=> let #var: #p::Option<usize> = #len;)
    }).collect();
    let seq_lens: Vec<TokenStream> = seq
        .iter()
        .enumerate()
        .map(|(i, (f, _))| {
            let klen = Lit::usize_unsuffixed(f.key.len());
            let var = list_len_of(i);
            quote!(+ #var.map_or(0, |__n| #p::steps_entry_len(#klen, __n)))
        })
        .collect();
    let seq_puts = seq.iter().enumerate().map(|(i, (f, b))| {
        let lt = b.list_ty.as_ref().unwrap_or(&b.ty);
        let d = cx.dialect(false, f);
        let k = byte_lit(&f.key);
        let m = &b.member;
        let var = list_len_of(i);
        let list = if b.info.optional {
            quote!(__v)
        } else {
            quote!(&self.#m)
        };
        let put =
            quote_spanned!(cx.spans(f).ty=> #p::put_steps_entry::<#d, #lt>(__buf, #k, #list, __n));
        if b.info.optional {
            quote!(if let (#p::Some(__v), #p::Some(__n)) = (&self.#m, #var) { #put; })
        } else {
            quote!(if let #p::Some(__n) = #var { #put; })
        }
    });
    let nc = Lit::usize_unsuffixed(ctx.len());
    let ns = Lit::usize_unsuffixed(seq.len());
    let unknown = if record.deny_unknown_keys {
        let n = &record.name;
        quote!(#p::Err(#p::unknown_key(#n, __k)))
    } else {
        quote!(#p::Ok(()))
    };
    // One callback per map. Each is a single `match` whose arms all evaluate to the result, so
    // that a record with no context features (or no feature lists) generates no unreachable
    // code and no unused variables.
    let callback = |fields: &[&(&Field, &Binding)], slots: TokenStream| -> TokenStream {
        if fields.is_empty() {
            return if record.deny_unknown_keys {
                quote!(|__k, _| #unknown)
            } else {
                quote!(|_, _| #p::Ok(()))
            };
        }
        let arms: Vec<(&str, TokenStream)> = fields
            .iter()
            .enumerate()
            .map(|(i, (f, _))| {
                let i = Lit::usize_unsuffixed(i);
                (
                    f.key.as_str(),
                    quote!({ #slots[#i] = #p::Some(__m); #p::Ok(()) }),
                )
            })
            .collect();
        let matcher = key_match(&p, &quote!(__k), &arms, &unknown);
        quote!(|__k: &[u8], __m| #matcher)
    };
    let ctx_cb = callback(&ctx, quote!(__ctx));
    let seq_cb = callback(&seq, quote!(__seq));
    let ctx_decl = if ctx.is_empty() {
        quote!()
    } else {
        quote!(let mut __ctx: [#p::Option<#p::FeatureBytes<#de>>; #nc] = ::core::array::from_fn(|_| #p::None);)
    };
    let seq_decl = if seq.is_empty() {
        quote!()
    } else {
        quote!(let mut __seq: [#p::Option<#p::FeatureBytes<#de>>; #ns] = ::core::array::from_fn(|_| #p::None);)
    };
    let (mut ci, mut si) = (0usize, 0usize);
    let into_stmts: Vec<TokenStream> = fields
        .iter()
        .map(|(f, b)| {
            let m = &b.member;
            if f.skip {
                let ty = &b.ty;
            return quote_spanned!(cx.spans(f).ty=> self.#m = <#ty as ::core::default::Default>::default(););
            }
            if is_steps(f) {
                let i = Lit::usize_unsuffixed(si);
                si += 1;
                let slot = quote!(__seq.get_mut(#i).and_then(#p::Option::take));
                if b.info.optional {
                    let value = steps_value(&cx, f, b, &slot);
                    return quote!(self.#m = #value;);
                }
                let ty = &b.ty;
                let d = cx.dialect(false, f);
                let info = cx.info(f);
                let check = steps_check(&cx, f, b);
                let absent = match &f.presence {
                    Presence::TypeDefault | Presence::Default(_) => {
                        quote!(self.#m = ::core::default::Default::default())
                    }
                    _ => quote!(return #p::Err(#p::missing(&__INFO))),
                };
                return quote_spanned! {cx.spans(f).ty=>
                    {
                        #info
                        match #slot {
                            #p::Some(__m) => {
                                #p::steps_into::<#d, #ty>(&mut self.#m, __m, &__INFO)?;
                                let __v: &#ty = &self.#m;
                                #check
                            }
                            #p::None => { #absent; }
                        }
                    }
                };
            }
            let i = Lit::usize_unsuffixed(ci);
            ci += 1;
            let slot = quote!(__ctx.get_mut(#i).and_then(#p::Option::take));
            let stmt = cx.decode_into_stmt(false, f, b, &slot);
            quote!(#stmt;)
        })
        .collect();
    let (mut ci, mut si) = (0usize, 0usize);
    let inits = fields.iter().map(|(f, b)| {
        let m = &b.member;
        if f.skip {
            let ty = &b.ty;
            return quote_spanned!(cx.spans(f).ty=> #m: <#ty as ::core::default::Default>::default(),);
        }
        if is_steps(f) {
            let i = Lit::usize_unsuffixed(si);
            si += 1;
            let value = steps_value(
                &cx,
                f,
                b,
                &quote!(__seq.get_mut(#i).and_then(#p::Option::take)),
            );
            return quote!(#m: #value,);
        }
        let i = Lit::usize_unsuffixed(ci);
        ci += 1;
        let slot = quote!(__ctx.get_mut(#i).and_then(#p::Option::take));
        let value = cx.decode_value(false, f, b, &slot);
        quote!(#m: #value,)
    });
    // The shape checks the writers make before encoding (`Encode::check`).
    let checks: Vec<TokenStream> = fields
        .iter()
        .filter(|(f, _)| !f.skip)
        .filter_map(|(f, b)| {
            let m = &b.member;
            let check = if is_steps(f) {
                let check = steps_check(&cx, f, b);
                if check.is_empty() {
                    return None;
                }
                if b.info.optional {
                    quote!(if let #p::Some(__v) = &self.#m { #check })
                } else {
                    quote!(let __v = &self.#m; #check)
                }
            } else {
                let check = cx.check(f, b, &quote!(&self.#m));
                if check.is_empty() {
                    return None;
                }
                check
            };
            let info = cx.info(f);
            Some(quote!({ #info #check }))
        })
        .collect();
    let encode = heads.encode(&quote!(#p::Encode<#p::TfSequenceExample>));
    let decode = heads.decode(&quote!(#p::Decode<#de, #p::TfSequenceExample>));
    quote! {
        #[automatically_derived]
        #encode {
            #[inline]
            fn encoded_len(&self) -> usize {
                let __c = 0usize #(#ctx_lens)*;
                #(#seq_list_lens)*
                let __l = 0usize #(#seq_lens)*;
                #p::sequence_len(__c, __l)
            }
            #[inline]
            fn encode_raw(&self, __buf: &mut #p::Vec<u8>) {
                let __c = 0usize #(#ctx_lens)*;
                #(#seq_list_lens)*
                let __l = 0usize #(#seq_lens)*;
                #p::put_context_header(__buf, __c);
                #(#ctx_puts)*
                #p::put_lists_header(__buf, __l);
                #(#seq_puts)*
            }
            #[inline]
            fn check(&self) -> #p::Result<()> {
                #(#checks)*
                #p::Ok(())
            }
        }
        #[automatically_derived]
        #decode {
            fn decode(__bytes: &#de [u8]) -> #p::Result<Self> {
                #ctx_decl
                #seq_decl
                #p::scan_sequence(__bytes, #ctx_cb, #seq_cb)?;
                #p::Ok(Self { #(#inits)* })
            }
            fn decode_into(&mut self, __bytes: &#de [u8]) -> #p::Result<()> {
                #ctx_decl
                #seq_decl
                #p::scan_sequence(__bytes, #ctx_cb, #seq_cb)?;
                #(#into_stmts)*
                #p::Ok(())
            }
        }
    }
}

/// The shape check of a decoded feature list field `__v` (a `Vec` step with a `shape` holds
/// exactly that many values in every step, as TensorFlow's FixedLenSequenceFeature reads
/// it); empty for other fields. Uses `__INFO`.
fn steps_check(cx: &Ctx<'_>, f: &Field, b: &Binding) -> TokenStream {
    let p = &cx.p;
    let st = b.step_ty.as_ref().unwrap_or(&b.ty);
    let step_info = classify(st);
    match &f.kind {
        FeatureKind::Steps { step }
            if step_info.container == Container::Vec && !step_info.optional =>
        {
            match &**step {
                FeatureKind::Fixed { shape } if !shape.is_empty() => {
                    let n = Lit::u64_unsuffixed(step.fixed_count().unwrap_or(0));
                    quote!(for __s in __v.iter() { #p::check_len(__s, #n, &__INFO)?; })
                }
                _ => quote!(),
            }
        }
        _ => quote!(),
    }
}

/// The value of a feature list field decoded from its `Option<FeatureBytes>` slot expression.
fn steps_value(cx: &Ctx<'_>, f: &Field, b: &Binding, slot: &TokenStream) -> TokenStream {
    let p = &cx.p;
    let lt = b.list_ty.as_ref().unwrap_or(&b.ty);
    let d = cx.dialect(false, f);
    let info = cx.info(f);
    let absent = match (&f.presence, b.info.optional) {
        (_, true) => quote!(#p::None),
        (Presence::TypeDefault | Presence::Default(_), _) => {
            quote!(::core::default::Default::default())
        }
        _ => quote!(return #p::Err(#p::missing(&__INFO))),
    };
    let wrap = if b.info.optional {
        quote!(#p::Some(__v))
    } else {
        quote!(__v)
    };
    let check = steps_check(cx, f, b);
    quote_spanned! {cx.spans(f).ty=>
        {
            #info
            match #p::steps::<#d, #lt>(#slot, &__INFO)? {
                #p::Some(__v) => { #check #wrap }
                #p::None => #absent,
            }
        }
    }
}
