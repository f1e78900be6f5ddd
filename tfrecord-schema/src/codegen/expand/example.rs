//! The expansion of `#[derive(Example)]` on a struct: the field table, the field and record
//! impls for each dialect, and the one-pass decode of the canonical layout.

use proc_macro2::{Literal as Lit, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use super::field::Ctx;
use super::heads::Prelude;
use super::tokens::{byte_lit, key_match};
use crate::codegen::attrs::{Binding, Lowered};
use crate::ir::{FeatureKind, Field};

/// Generates the impls for a struct deriving `Example`.
pub(crate) fn expand_example(input: &syn::DeriveInput, lowered: &Lowered) -> TokenStream {
    let Prelude {
        p,
        cx,
        heads,
        record,
        fields,
    } = Prelude::new(input, lowered);
    let de = &heads.de;
    let own: Vec<&(&Field, &Binding)> = fields
        .iter()
        .filter(|(f, _)| !f.skip && !f.flatten)
        .collect();
    let flat: Vec<&(&Field, &Binding)> = fields.iter().filter(|(f, _)| f.flatten).collect();

    // Slot offsets: own features first (a sparse field takes one slot per index key, then one
    // for its values), then each flattened member's block.
    let mut own_keys: Vec<&str> = Vec::new();
    for (f, _) in &own {
        own_keys.extend(f.kind.keys(&f.key));
    }
    let n_own = Lit::usize_unsuffixed(own_keys.len());
    let mut offsets = Vec::new();
    let mut acc = quote!(#n_own);
    for (_, b) in &flat {
        let ty = &b.ty;
        offsets.push(acc.clone());
        acc = quote!(#acc + <#ty as #p::FieldTable>::SLOTS);
    }
    let total = acc;
    let own_arms: Vec<(&str, TokenStream)> = own_keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let i = Lit::usize_unsuffixed(i);
            (*k, quote!(return #p::Some(#i)))
        })
        .collect();
    let own_match = key_match(&p, &quote!(__key), &own_arms, &quote!({}));
    let flat_arms = flat.iter().zip(&offsets).map(|((f, b), off)| {
        let ty = &b.ty;
        let prefix = byte_lit(&format!("{}/", f.key));
        quote! {
            if let #p::Some(__rest) = __key.strip_prefix(#prefix) {
                if let #p::Some(__i) = <#ty as #p::FieldTable>::slot(__rest) {
                    return #p::Some(#off + __i);
                }
            }
        }
    });
    let table_head = heads.encode(&quote!(#p::FieldTable));
    let own_key_lits = own_keys.iter().map(|k| Lit::string(k));
    let flat_entries = flat.iter().map(|(f, b)| {
        let ty = &b.ty;
        let prefix = Lit::string(&format!("{}/", f.key));
        quote!((#prefix, <#ty as #p::FieldTable>::KEYS))
    });
    let table = quote! {
        #[automatically_derived]
        #table_head {
            const SLOTS: usize = #total;
            const KEYS: &'static #p::KeyTable = &#p::KeyTable {
                own: &[#(#own_key_lits),*],
                flat: &[#(#flat_entries),*],
            };
            #[inline]
            fn slot(__key: &[u8]) -> #p::Option<usize> {
                #own_match
                #(#flat_arms)*
                #p::None
            }
        }
    };

    let mut out = table;
    out.extend(flatten_clashes(&p, input, &own, &flat, &cx));
    let deny = if record.deny_unknown_keys {
        let n = &record.name;
        quote!(#p::Some(#n))
    } else {
        quote!(#p::None)
    };
    for of in [false, true] {
        if (of && !record.dialect.has_of()) || (!of && !record.dialect.has_tf()) {
            continue;
        }
        let dial = if of { quote!(#p::Of) } else { quote!(#p::Tf) };
        let lens = fields.iter().filter(|(f, _)| !f.skip).map(|(f, b)| {
            let ty = &b.ty;
            let m = &b.member;
            let span = cx.spans(f).ty;
            if f.flatten {
                let prefix = byte_lit(&format!("{}/", f.key));
                quote_spanned!(span=> + #p::EncodeFields::<#dial>::entries_len(&self.#m, &#p::join_prefix(__prefix, #prefix)))
            } else if let FeatureKind::Sparse { index_keys, .. } = &f.kind {
                let d = cx.dialect(of, f);
                let t = b.step_ty.as_ref().unwrap_or(ty);
                let idx = index_keys.iter().map(|k| byte_lit(k));
                let v = byte_lit(&f.key);
                quote_spanned!(span=> + #p::sparse_entries_len::<#d, #t>(__prefix.len(), &[#(&#idx[..]),*], #v, &self.#m))
            } else {
                let d = cx.dialect(of, f);
                let klen = Lit::usize_unsuffixed(f.key.len());
                quote_spanned!(span=> + #p::entry_len::<#d, #ty>(__prefix.len() + #klen, &self.#m))
            }
        });
        let puts = fields.iter().filter(|(f, _)| !f.skip).map(|(f, b)| {
            let ty = &b.ty;
            let m = &b.member;
            let span = cx.spans(f).ty;
            if f.flatten {
                let prefix = byte_lit(&format!("{}/", f.key));
                quote_spanned!(span=> #p::EncodeFields::<#dial>::put_entries(&self.#m, &#p::join_prefix(__prefix, #prefix), __buf);)
            } else if let FeatureKind::Sparse { index_keys, .. } = &f.kind {
                let d = cx.dialect(of, f);
                let t = b.step_ty.as_ref().unwrap_or(ty);
                let idx = index_keys.iter().map(|k| byte_lit(k));
                let v = byte_lit(&f.key);
                quote_spanned!(span=> #p::put_sparse::<#d, #t>(__buf, __prefix, &[#(&#idx[..]),*], #v, &self.#m);)
            } else {
                let d = cx.dialect(of, f);
                let k = byte_lit(&f.key);
                quote_spanned!(span=> #p::put_entry::<#d, #ty>(__buf, __prefix, #k, &self.#m);)
            }
        });
        // The shape checks the writers make before encoding (`Encode::check`).
        let checks: Vec<TokenStream> = fields
            .iter()
            .filter(|(f, _)| !f.skip)
            .filter_map(|(f, b)| {
                let m = &b.member;
                if f.flatten {
                    let prefix = format!("{}/", f.key);
                    return Some(quote_spanned! {cx.spans(f).ty=>
                        #p::EncodeFields::<#dial>::check_fields(&self.#m)
                            .map_err(|__e| __e.prefix_key(#prefix))?;
                    });
                }
                let check = cx.check(f, b, &quote!(&self.#m));
                if check.is_empty() {
                    return None;
                }
                let info = cx.info(f);
                Some(quote!({ #info #check }))
            })
            .collect();
        let check_fields = if checks.is_empty() {
            quote!()
        } else {
            quote! {
                #[inline]
                fn check_fields(&self) -> #p::Result<()> {
                    #(#checks)*
                    #p::Ok(())
                }
            }
        };
        let mut own_index = 0usize;
        let mut flat_index = 0usize;
        let inits = fields.iter().map(|(f, b)| {
            let m = &b.member;
            if f.skip {
                let ty = &b.ty;
            return quote_spanned!(cx.spans(f).ty=> #m: <#ty as ::core::default::Default>::default(),);
            }
            if f.flatten {
                let ty = &b.ty;
                let off = &offsets[flat_index];
                flat_index += 1;
                let prefix = format!("{}/", f.key);
                return quote! {
                    #m: {
                        let __end = #off + <#ty as #p::FieldTable>::SLOTS;
                        let __sub = match __slots.get_mut(#off..__end) {
                            #p::Some(__s) => __s,
                            #p::None => &mut [],
                        };
                        <#ty as #p::DecodeFields<#de, #dial>>::from_slots(__sub).map_err(|__e| __e.prefix_key(#prefix))?
                    },
                };
            }
            if let FeatureKind::Sparse {
                index_keys,
                size,
                already_sorted,
            } = &f.kind
            {
                let base = Lit::usize_unsuffixed(own_index);
                let r = index_keys.len();
                let end = Lit::usize_unsuffixed(own_index + r);
                let vi = Lit::usize_unsuffixed(own_index + r);
                own_index += r + 1;
                let d = cx.dialect(of, f);
                let t = b.step_ty.as_ref().unwrap_or(&b.ty);
                let record_name = &record.name;
                let member = &f.member;
                let key = &f.key;
                let size = size.iter().map(|&n| Lit::u64_suffixed(n));
                let infos = index_keys.iter().map(|k| {
                    quote!(#p::FieldInfo { record: #record_name, member: #member, key: #k })
                });
                return quote_spanned! {cx.spans(f).ty=>
                    #m: {
                        const __IDX: &[#p::FieldInfo] = &[#(#infos),*];
                        const __INFO: #p::FieldInfo = #p::FieldInfo { record: #record_name, member: #member, key: #key };
                        let __v = __slots.get_mut(#vi).and_then(#p::Option::take);
                        let __i = match __slots.get_mut(#base..#end) {
                            #p::Some(__s) => __s,
                            #p::None => &mut [],
                        };
                        #p::sparse::<#d, #t>(__i, __IDX, __v, &__INFO, &[#(#size),*], #already_sorted)?
                    },
                };
            }
            let i = Lit::usize_unsuffixed(own_index);
            own_index += 1;
            let slot = quote!(__slots.get_mut(#i).and_then(#p::Option::take));
            let value = cx.decode_value(of, f, b, &slot);
            quote!(#m: #value,)
        });
        let (container, len_expr, header) = if of {
            (quote!(#p::OfRecord), quote!(__n), quote!())
        } else {
            (
                quote!(#p::TfExample),
                quote!(#p::example_len(__n)),
                quote!(#p::put_example_header(__buf, __n);),
            )
        };
        let one_pass = one_pass(&cx, of, &fields, &container, record.deny_unknown_keys);
        let decode_into = one_pass_into(&cx, of, &fields, &container, de, record.deny_unknown_keys);
        let encode_fields = heads.encode(&quote!(#p::EncodeFields<#dial>));
        let decode_fields = heads.decode(&quote!(#p::DecodeFields<#de, #dial>));
        let encode = heads.encode(&quote!(#p::Encode<#container>));
        let decode = heads.decode(&quote!(#p::Decode<#de, #container>));
        out.extend(quote! {
            #[automatically_derived]
            #encode_fields {
                #[inline]
                fn entries_len(&self, __prefix: &[u8]) -> usize {
                    0usize #(#lens)*
                }
                #[inline]
                fn put_entries(&self, __prefix: &[u8], __buf: &mut #p::Vec<u8>) {
                    #(#puts)*
                }
                #check_fields
            }
            #[automatically_derived]
            #decode_fields {
                #[inline]
                fn from_slots(__slots: &mut [#p::Option<#p::FeatureBytes<#de>>]) -> #p::Result<Self> {
                    #p::Ok(Self { #(#inits)* })
                }
            }
            #[automatically_derived]
            #encode {
                #[inline]
                fn encoded_len(&self) -> usize {
                    let __n = #p::EncodeFields::<#dial>::entries_len(self, b"");
                    #len_expr
                }
                #[inline]
                fn encode_raw(&self, __buf: &mut #p::Vec<u8>) {
                    let __n = #p::EncodeFields::<#dial>::entries_len(self, b"");
                    #header
                    #p::EncodeFields::<#dial>::put_entries(self, b"", __buf);
                }
                #[inline]
                fn check(&self) -> #p::Result<()> {
                    #p::EncodeFields::<#dial>::check_fields(self)
                }
            }
            #[automatically_derived]
            #decode {
                #[inline]
                fn decode(__bytes: &#de [u8]) -> #p::Result<Self> {
                    #one_pass
                    #p::decode_record::<#container, Self>(__bytes, #deny)
                }
                #decode_into
            }
        });
    }
    out
}

/// What both one-pass decodes start from: a local `__f{i}` per field that is not skipped (the
/// bytes of its feature, once met), and the key match that fills them during the walk (`false`
/// for an unknown key under `deny_unknown_keys`). `None` when the struct has a field the walk
/// cannot fill (`flatten`, or a sparse field).
fn canonical_walk(
    cx: &Ctx<'_>,
    fields: &[(&Field, &Binding)],
    deny: bool,
) -> Option<(Vec<TokenStream>, TokenStream)> {
    let p = &cx.p;
    if fields
        .iter()
        .any(|(f, _)| f.flatten || (!f.skip && matches!(f.kind, FeatureKind::Sparse { .. })))
    {
        return None;
    }
    let plain: Vec<(usize, &(&Field, &Binding))> =
        fields.iter().filter(|(f, _)| !f.skip).enumerate().collect();
    let local = |i: usize| format_ident!("__f{}", i);
    let decls = plain
        .iter()
        .map(|(i, _)| {
            let l = local(*i);
            quote!(let mut #l: #p::Option<&[u8]> = #p::None;)
        })
        .collect();
    let arms: Vec<(&str, TokenStream)> = plain
        .iter()
        .map(|(i, (f, _))| {
            let l = local(*i);
            (f.key.as_str(), quote!({ #l = #p::Some(__feature); true }))
        })
        .collect();
    let unknown = if deny { quote!(false) } else { quote!(true) };
    Some((decls, key_match(p, &quote!(__key), &arms, &unknown)))
}

/// The most fields a struct decodes with [`one_pass`] (and [`one_pass_into`]): the walk's
/// code makes the optimizer's work grow faster than the field count (a release build of a
/// struct of 1,000 `i64` fields measured 146 s and 2.3 GB with it, 51 s and 1.7 GB without),
/// so a wider struct decodes by the general path alone, which gives the same values and
/// errors.
const ONE_PASS_MAX_FIELDS: usize = 256;

/// The one-pass decode of a struct whose features are all plain (no `flatten`, no sparse
/// field): the entries are walked once in the canonical layout, each feature's bytes kept in a
/// local as its key is met (a repeated key: the last entry wins), and after the walk the
/// fields are decoded from them by the same expressions as `decode_record`'s slots, in the
/// same order, so that values and errors are the general path's. The walk `break`s out of
/// block `'__canonical` to the general path for another layout or, under `deny_unknown_keys`,
/// an unknown key. `None` when the struct has a field the walk cannot fill, or more than
/// [`ONE_PASS_MAX_FIELDS`].
fn one_pass(
    cx: &Ctx<'_>,
    of: bool,
    fields: &[(&Field, &Binding)],
    container: &TokenStream,
    deny: bool,
) -> Option<TokenStream> {
    let p = &cx.p;
    if fields.len() > ONE_PASS_MAX_FIELDS {
        return None;
    }
    let (decls, dispatch) = canonical_walk(cx, fields, deny)?;
    let local = |i: usize| format_ident!("__f{}", i);
    let mut next = 0usize;
    let inits = fields.iter().map(|(f, b)| {
        let m = &b.member;
        if f.skip {
            let ty = &b.ty;
            return quote_spanned!(cx.spans(f).ty=> #m: <#ty as ::core::default::Default>::default(),);
        }
        let l = local(next);
        next += 1;
        let value = cx.decode_value(of, f, b, &quote!(#l.map(#p::FeatureBytes::new)));
        quote!(#m: #value,)
    });
    Some(quote! {
        '__canonical: {
            #(#decls)*
            if !#p::walk_canonical::<#container>(__bytes, |__key, __feature| #dispatch) {
                break '__canonical;
            }
            return #p::Ok(Self { #(#inits)* });
        }
    })
}

/// `decode_into` for a struct [`one_pass`] can decode: the same walk, then each field decoded
/// into `self`, reusing its buffers ([`Ctx::decode_into_stmt`]), in declaration order; a
/// record in another layout is decoded anew by `decode`. Empty (the trait's default) when
/// the struct has a field the walk cannot fill, or more than [`ONE_PASS_MAX_FIELDS`].
fn one_pass_into(
    cx: &Ctx<'_>,
    of: bool,
    fields: &[(&Field, &Binding)],
    container: &TokenStream,
    de: &syn::Lifetime,
    deny: bool,
) -> TokenStream {
    let p = &cx.p;
    if fields.len() > ONE_PASS_MAX_FIELDS {
        return quote!();
    }
    let Some((decls, dispatch)) = canonical_walk(cx, fields, deny) else {
        return quote!();
    };
    let local = |i: usize| format_ident!("__f{}", i);
    let mut next = 0usize;
    let stmts = fields.iter().map(|(f, b)| {
        let m = &b.member;
        if f.skip {
            let ty = &b.ty;
            return quote_spanned!(cx.spans(f).ty=> self.#m = <#ty as ::core::default::Default>::default(););
        }
        let l = local(next);
        next += 1;
        let stmt = cx.decode_into_stmt(of, f, b, &quote!(#l.map(#p::FeatureBytes::new)));
        quote!(#stmt;)
    });
    quote! {
        #[inline]
        fn decode_into(&mut self, __bytes: &#de [u8]) -> #p::Result<()> {
            '__canonical: {
                #(#decls)*
                if !#p::walk_canonical::<#container>(__bytes, |__key, __feature| #dispatch) {
                    break '__canonical;
                }
                #(#stmts)*
                return #p::Ok(());
            }
            *self = <Self as #p::Decode<#de, #container>>::decode(__bytes)?;
            #p::Ok(())
        }
    }
}

/// Constant checks that no two members write one feature key, where a flattened member is one
/// of the two (the macro cannot see a flattened type's keys; constant evaluation can): a key
/// written twice is one map entry in the record, and one of the values would be lost. Each
/// check names its two fields and points at the later one.
fn flatten_clashes(
    p: &TokenStream,
    input: &syn::DeriveInput,
    own: &[&(&Field, &Binding)],
    flat: &[&(&Field, &Binding)],
    cx: &Ctx<'_>,
) -> TokenStream {
    // The struct with its lifetimes left to inference: the checks read its own key table.
    let name = &input.ident;
    let lifetimes = input.generics.lifetimes().map(|_| quote!('_));
    let keys = quote!(<#name<#(#lifetimes),*> as #p::FieldTable>::KEYS);
    let mut out = TokenStream::new();
    for (i, (ff, _)) in flat.iter().enumerate() {
        let prefix = format!("{}/", ff.key);
        let prefix_lit = Lit::string(&prefix);
        let at = Lit::usize_unsuffixed(i);
        for (f, _) in own {
            for key in f.kind.keys(&f.key) {
                if !key.starts_with(&prefix) {
                    continue;
                }
                let msg = Lit::string(&format!(
                    "duplicate feature key `{key}`: field `{}` writes it, and so does the \
                     flattened field `{}` (under `{prefix}`); one of the two values would be lost",
                    f.member, ff.member
                ));
                let key = Lit::string(key);
                let span = cx.spans(f).ty;
                out.extend(quote_spanned! {span=>
                    const _: () = ::core::assert!(
                        !#p::key_clash(#key, #prefix_lit, #keys.flat[#at].1),
                        #msg
                    );
                });
            }
        }
        for (j, (fg, _)) in flat.iter().enumerate().skip(i + 1) {
            let other = format!("{}/", fg.key);
            if !(other.starts_with(&prefix) || prefix.starts_with(&other)) {
                continue;
            }
            let msg = Lit::string(&format!(
                "duplicate feature keys: the flattened fields `{}` (under `{prefix}`) and `{}` \
                 (under `{other}`) write a feature key in common; one of the values would be lost",
                ff.member, fg.member
            ));
            let other_lit = Lit::string(&other);
            let bt = Lit::usize_unsuffixed(j);
            let span = cx.spans(fg).ty;
            out.extend(quote_spanned! {span=>
                const _: () = ::core::assert!(
                    !#p::flat_clash(#prefix_lit, #keys.flat[#at].1, #other_lit, #keys.flat[#bt].1),
                    #msg
                );
            });
        }
    }
    out
}
