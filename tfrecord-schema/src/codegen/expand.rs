//! The one code generator: IR + bindings -> trait impls. Everything generated code does at
//! run time lives in `tfrecord_core::__private`; this module only wires fields to it.

use proc_macro2::{Literal as Lit, Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};

use super::attrs::{Binding, BytesRepr, Container, Lowered};
use crate::ir::{DType, FeatureKind, Field, Literal, Presence, RecordKind};

fn byte_lit(s: &str) -> Lit {
    Lit::byte_string(s.as_bytes())
}

/// A key matcher: `match (key.len(), key_prefix_word(key))` over integer patterns, with the bytes
/// past the eighth compared in a guard, so that dispatching on a key costs a few integer
/// comparisons instead of one byte-string comparison per field.
fn key_match(
    p: &TokenStream,
    key: &TokenStream,
    arms: &[(&str, TokenStream)],
    fallback: &TokenStream,
) -> TokenStream {
    let arms = arms.iter().map(|(k, v)| {
        let bytes = k.as_bytes();
        let mut w = [0u8; 8];
        let n = bytes.len().min(8);
        w[..n].copy_from_slice(&bytes[..n]);
        let word = Lit::u64_suffixed(u64::from_le_bytes(w));
        let len = Lit::usize_suffixed(bytes.len());
        if bytes.len() > 8 {
            let rest = Lit::byte_string(&bytes[8..]);
            quote!((#len, #word) if #key.get(8..) == #p::Some(&#rest[..]) => #v,)
        } else {
            quote!((#len, #word) => #v,)
        }
    });
    quote! {
        match (#key.len(), #p::key_prefix_word(#key)) {
            #(#arms)*
            _ => #fallback,
        }
    }
}

/// Tokens for one scalar of a default literal, typed for the field's value type.
fn scalar_tokens(lit: &Literal, dtype: Option<DType>, repr: BytesRepr) -> TokenStream {
    match (lit, dtype) {
        (Literal::Int(v), Some(DType::Float | DType::Double)) => {
            #[allow(clippy::cast_precision_loss)]
            let f = Lit::f64_unsuffixed(*v as f64);
            quote!(#f)
        }
        (Literal::Int(v), _) => {
            let l = Lit::i128_unsuffixed(*v);
            quote!(#l)
        }
        (Literal::Float(v), _) => {
            if v.is_finite() {
                let l = Lit::f64_unsuffixed(*v);
                quote!(#l)
            } else if v.is_nan() {
                quote!(::core::primitive::f32::NAN)
            } else if *v > 0.0 {
                quote!(::core::primitive::f32::INFINITY)
            } else {
                quote!(::core::primitive::f32::NEG_INFINITY)
            }
        }
        (Literal::Bool(b), _) => quote!(#b),
        (Literal::Str(s), _) => match repr {
            BytesRepr::From => quote!(::core::convert::From::from(#s)),
            BytesRepr::Slice => quote!(#s.as_bytes()),
            BytesRepr::CowSlice => quote!(::core::convert::From::from(#s.as_bytes())),
            BytesRepr::Str => quote!(#s),
        },
        (Literal::List(items), _) => {
            let inner = items.iter().map(|i| scalar_tokens(i, dtype, repr));
            quote!([#(#inner),*])
        }
    }
}

fn flatten_list(lit: &Literal, out: &mut Vec<Literal>) {
    match lit {
        Literal::List(items) => items.iter().for_each(|i| flatten_list(i, out)),
        other => out.push(other.clone()),
    }
}

/// The default expression of a field, typed as the field.
fn default_expr(field: &Field, b: &Binding, span: Span) -> TokenStream {
    let ty = &b.ty;
    let value = match &field.presence {
        Presence::Default(lit) => {
            let mut flat = Vec::new();
            flatten_list(lit, &mut flat);
            let items = flat
                .iter()
                .map(|l| scalar_tokens(l, b.info.dtype, b.info.bytes_repr));
            match b.info.container {
                Container::Scalar => scalar_tokens(lit, b.info.dtype, b.info.bytes_repr),
                Container::Vec | Container::Sparse => quote!(::std::vec![#(#items),*]),
                Container::Array(_) => quote!([#(#items),*]),
            }
        }
        _ => quote!(::core::default::Default::default()),
    };
    quote_spanned!(span=> { let __v: #ty = #value; __v })
}

struct Ctx<'a> {
    lowered: &'a Lowered,
    p: TokenStream,
}

impl Ctx<'_> {
    fn info(&self, f: &Field) -> TokenStream {
        let p = &self.p;
        let record = &self.lowered.record.name;
        let member = &f.member;
        let key = &f.key;
        quote!(const __INFO: #p::FieldInfo = #p::FieldInfo { record: #record, member: #member, key: #key };)
    }

    fn spans(&self, f: &Field) -> &super::attrs::Spans {
        &self.lowered.spans[f.origin.0 as usize]
    }

    /// The dialect marker for a field in dialect `tf`/`of`.
    fn dialect(&self, of: bool, f: &Field) -> TokenStream {
        let p = &self.p;
        if of {
            quote!(#p::Of)
        } else if f.lossy {
            quote!(#p::TfLossy)
        } else {
            quote!(#p::Tf)
        }
    }

    /// The one-pass decode of a struct whose features are all plain (no `flatten`, no sparse
    /// field): the entries are walked once in the canonical layout, each feature's bytes kept in a
    /// local as its key is met (a repeated key: the last entry wins), and after the walk the
    /// fields are decoded from them by the same expressions as `decode_record`'s slots, in the
    /// same order, so that values and errors are the general path's. The walk `break`s out of
    /// block `'__canonical` to the general path for another layout or, under `deny_unknown_keys`,
    /// an unknown key. `None` when the struct has a field the walk cannot fill.
    fn one_pass(
        &self,
        of: bool,
        fields: &[(&Field, &Binding)],
        container: &TokenStream,
        deny: bool,
    ) -> Option<TokenStream> {
        let p = &self.p;
        if fields
            .iter()
            .any(|(f, _)| f.flatten || (!f.skip && matches!(f.kind, FeatureKind::Sparse { .. })))
        {
            return None;
        }
        let plain: Vec<(usize, &(&Field, &Binding))> =
            fields.iter().filter(|(f, _)| !f.skip).enumerate().collect();
        let local = |i: usize| format_ident!("__f{}", i);
        let decls = plain.iter().map(|(i, _)| {
            let l = local(*i);
            quote!(let mut #l: #p::Option<&[u8]> = #p::None;)
        });
        let arms: Vec<(&str, TokenStream)> = plain
            .iter()
            .map(|(i, (f, _))| {
                let l = local(*i);
                (f.key.as_str(), quote!({ #l = #p::Some(__feature); true }))
            })
            .collect();
        let unknown = if deny { quote!(false) } else { quote!(true) };
        let dispatch = key_match(p, &quote!(__key), &arms, &unknown);
        let mut next = 0usize;
        let inits = fields.iter().map(|(f, b)| {
            let m = &b.member;
            if f.skip {
                return quote!(#m: ::core::default::Default::default(),);
            }
            let l = local(next);
            next += 1;
            let value = self.decode_value(of, f, b, &quote!(#l.map(#p::FeatureBytes::new)));
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

    /// The decode expression of a (non-sequence) field from an `Option<FeatureBytes>` expression.
    fn decode_value(&self, of: bool, f: &Field, b: &Binding, slot: &TokenStream) -> TokenStream {
        let p = &self.p;
        let ty = &b.ty;
        let d = self.dialect(of, f);
        let span = self.spans(f).ty;
        let info = self.info(f);
        let base = match &f.presence {
            Presence::Default(_) | Presence::TypeDefault => {
                let dflt = default_expr(f, b, self.spans(f).default.unwrap_or(span));
                quote_spanned! {span=>
                    match #slot {
                        #p::Some(__m) => #p::present::<#d, #ty>(__m, &__INFO)?,
                        #p::None => #dflt,
                    }
                }
            }
            _ => quote_spanned!(span=> #p::field::<#d, #ty>(#slot, &__INFO)?),
        };
        let check = match (&f.kind, b.info.container) {
            (FeatureKind::Fixed { shape }, Container::Vec) if !shape.is_empty() => {
                let n = Lit::u64_unsuffixed(f.kind.fixed_count().unwrap_or(0));
                if b.info.optional {
                    quote!(if let #p::Some(__x) = &__v { #p::check_len(__x, #n, &__INFO)?; })
                } else {
                    quote!(#p::check_len(&__v, #n, &__INFO)?;)
                }
            }
            _ => quote!(),
        };
        quote!({ #info let __v: #ty = #base; #check __v })
    }
}

fn de_lifetime(generics: &syn::Generics) -> (TokenStream, syn::Lifetime) {
    match generics.lifetimes().next() {
        Some(l) => (quote!(), l.lifetime.clone()),
        None => {
            let l: syn::Lifetime = syn::parse_quote!('__de);
            (quote!(#l,), l)
        }
    }
}

/// The heads of the impls a derive generates: the type with its generics, for the encode
/// impls, and with the `'de` lifetime added where the type has none, for the decode impls.
struct ImplHeads<'a> {
    name: &'a syn::Ident,
    impl_generics: syn::ImplGenerics<'a>,
    ty_generics: syn::TypeGenerics<'a>,
    where_clause: Option<&'a syn::WhereClause>,
    /// The lifetime decoded values borrow: the type's own, else `'__de`.
    de: syn::Lifetime,
    de_generics: TokenStream,
}

impl<'a> ImplHeads<'a> {
    fn new(input: &'a syn::DeriveInput) -> Self {
        let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
        let (extra_lt, de) = de_lifetime(&input.generics);
        let params = &input.generics.params;
        ImplHeads {
            name: &input.ident,
            impl_generics,
            ty_generics,
            where_clause,
            de,
            de_generics: quote!(<#extra_lt #params>),
        }
    }

    /// `impl<..> Trait for Type<..> where ..`.
    fn encode(&self, tr: &TokenStream) -> TokenStream {
        self.head(&self.impl_generics, tr)
    }

    /// `impl<'de, ..> Trait for Type<..> where ..`: `Trait` may name the `'de` lifetime.
    fn decode(&self, tr: &TokenStream) -> TokenStream {
        self.head(&self.de_generics, tr)
    }

    /// `impl #generics Trait for Type<..> where ..`.
    fn head(&self, generics: &impl ToTokens, tr: &TokenStream) -> TokenStream {
        let (name, ty_generics, where_clause) = (self.name, &self.ty_generics, self.where_clause);
        quote!(impl #generics #tr for #name #ty_generics #where_clause)
    }
}

/// What both record expansions start from: the support path, the impl heads, and the fields
/// with their bindings.
struct Prelude<'a> {
    p: TokenStream,
    cx: Ctx<'a>,
    heads: ImplHeads<'a>,
    record: &'a crate::ir::Record,
    fields: Vec<(&'a Field, &'a Binding)>,
}

impl<'a> Prelude<'a> {
    fn new(input: &'a syn::DeriveInput, lowered: &'a Lowered) -> Self {
        let krate = &lowered.krate;
        let p = quote!(#krate::__private);
        Prelude {
            cx: Ctx {
                lowered,
                p: p.clone(),
            },
            p,
            heads: ImplHeads::new(input),
            record: &lowered.record,
            fields: lowered
                .record
                .fields
                .iter()
                .zip(&lowered.bindings)
                .collect(),
        }
    }
}

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
    let table = quote! {
        #[automatically_derived]
        #table_head {
            const SLOTS: usize = #total;
            #[inline]
            fn slot(__key: &[u8]) -> #p::Option<usize> {
                #own_match
                #(#flat_arms)*
                #p::None
            }
        }
    };

    let mut out = table;
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
        let mut own_index = 0usize;
        let mut flat_index = 0usize;
        let inits = fields.iter().map(|(f, b)| {
            let m = &b.member;
            if f.skip {
                return quote!(#m: ::core::default::Default::default(),);
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
            if let FeatureKind::Sparse { index_keys, size, .. } = &f.kind {
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
                        #p::sparse::<#d, #t>(__i, __IDX, __v, &__INFO, &[#(#size),*])?
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
        let one_pass = cx.one_pass(of, &fields, &container, record.deny_unknown_keys);
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
            }
            #[automatically_derived]
            #decode {
                #[inline]
                fn decode(__bytes: &#de [u8]) -> #p::Result<Self> {
                    #one_pass
                    #p::decode_record::<#container, Self>(__bytes, #deny)
                }
            }
        });
    }
    out
}

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
    let inits = fields.iter().map(|(f, b)| {
        let m = &b.member;
        if f.skip {
            return quote!(#m: ::core::default::Default::default(),);
        }
        if is_steps(f) {
            let i = Lit::usize_unsuffixed(si);
            si += 1;
            let st = b.step_ty.as_ref().unwrap_or(&b.ty);
            let lt = b.list_ty.as_ref().unwrap_or(&b.ty);
            let d = cx.dialect(false, f);
            let info = cx.info(f);
            let absent = match (&f.presence, b.info.optional) {
                (_, true) => quote!(#p::None),
                (Presence::TypeDefault | Presence::Default(_), _) => quote!(::core::default::Default::default()),
                _ => quote!(return #p::Err(#p::missing(&__INFO))),
            };
            let wrap = if b.info.optional { quote!(#p::Some(__v)) } else { quote!(__v) };
            // A `Vec` step with a `shape` holds exactly that many values in every step, as
            // TensorFlow's FixedLenSequenceFeature reads it.
            let step_info = super::attrs::classify(st);
            let check = match &f.kind {
                FeatureKind::Steps { step } if step_info.container == Container::Vec && !step_info.optional => {
                    match &**step {
                        FeatureKind::Fixed { shape } if !shape.is_empty() => {
                            let n = Lit::u64_unsuffixed(step.fixed_count().unwrap_or(0));
                            quote!(for __s in __v.iter() { #p::check_len(__s, #n, &__INFO)?; })
                        }
                        _ => quote!(),
                    }
                }
                _ => quote!(),
            };
            return quote_spanned! {cx.spans(f).ty=>
                #m: {
                    #info
                    match #p::steps::<#d, #lt>(__seq.get_mut(#i).and_then(#p::Option::take), &__INFO)? {
                        #p::Some(__v) => { #check #wrap }
                        #p::None => #absent,
                    }
                },
            };
        }
        let i = Lit::usize_unsuffixed(ci);
        ci += 1;
        let slot = quote!(__ctx.get_mut(#i).and_then(#p::Option::take));
        let value = cx.decode_value(false, f, b, &slot);
        quote!(#m: #value,)
    });
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
        }
        #[automatically_derived]
        #decode {
            fn decode(__bytes: &#de [u8]) -> #p::Result<Self> {
                #ctx_decl
                #seq_decl
                #p::scan_sequence(__bytes, #ctx_cb, #seq_cb)?;
                #p::Ok(Self { #(#inits)* })
            }
        }
    }
}

/// Generates element and field impls for a unit-only enum deriving `Example`.
pub(crate) fn expand_enum(
    input: &syn::DeriveInput,
    krate: &syn::Path,
    variants: &[(syn::Ident, String, Option<syn::Expr>)],
    int64: bool,
) -> TokenStream {
    let p = quote!(#krate::__private);
    let name = &input.ident;
    let idents: Vec<&syn::Ident> = variants.iter().map(|v| &v.0).collect();
    let (kind, wire_len, put, from_raw) = if int64 {
        let mut prev: Option<TokenStream> = None;
        let discs: Vec<TokenStream> = variants
            .iter()
            .map(|(_, _, d)| {
                let e = match (d, &prev) {
                    (Some(d), _) => quote!(((#d) as i64)),
                    (None, Some(prev)) => quote!((#prev + 1)),
                    (None, None) => quote!(0i64),
                };
                prev = Some(e.clone());
                e
            })
            .collect();
        let consts: Vec<syn::Ident> = (0..variants.len())
            .map(|i| format_ident!("__D{}", i))
            .collect();
        (
            quote!(#p::ListKind::Int64),
            quote!(#p::wire::varint_len(match self { #(Self::#idents => #discs,)* } as u64)),
            quote!(#p::wire::put_varint(__buf, match self { #(Self::#idents => #discs,)* } as u64)),
            quote! {
                #(const #consts: i64 = #discs;)*
                match __raw {
                    #p::RawValue::Int(__v) => match __v as i64 {
                        #(#consts => #p::Ok(Self::#idents),)*
                        __other => #p::Err(#p::FeatureProblem::UnknownVariant(::std::format!("{}", __other))),
                    },
                    _ => #p::Err(#p::FeatureProblem::Malformed("value of the wrong wire type")),
                }
            },
        )
    } else {
        let names: Vec<Lit> = variants.iter().map(|v| byte_lit(&v.1)).collect();
        let lens: Vec<Lit> = variants
            .iter()
            .map(|v| Lit::usize_unsuffixed(v.1.len()))
            .collect();
        (
            quote!(#p::ListKind::Bytes),
            quote!(match self { #(Self::#idents => #lens,)* }),
            quote!(__buf.extend_from_slice(match self { #(Self::#idents => &#names[..],)* })),
            quote! {
                match __raw {
                    #p::RawValue::Bytes(__b) => match __b {
                        #(#names => #p::Ok(Self::#idents),)*
                        __other => #p::Err(#p::FeatureProblem::UnknownVariant(::std::format!("{:?}", ::std::string::String::from_utf8_lossy(__other)))),
                    },
                    _ => #p::Err(#p::FeatureProblem::Malformed("value of the wrong wire type")),
                }
            },
        )
    };
    quote! {
        #[automatically_derived]
        impl<__D: #p::Dialect> #p::EncodeElem<__D> for #name {
            const KIND: #p::ListKind = #kind;
            #[inline]
            fn wire_len(&self) -> usize { #wire_len }
            #[inline]
            fn put(&self, __buf: &mut #p::Vec<u8>) { #put; }
        }
        #[automatically_derived]
        impl<'__de, __D: #p::Dialect> #p::DecodeElem<'__de, __D> for #name {
            const KIND: #p::ListKind = #kind;
            #[inline]
            fn from_raw(__raw: #p::RawValue<'__de>) -> #p::Result<Self, #p::FeatureProblem> { #from_raw }
        }
        #krate::__impl_scalar_field!(#p::Tf; #name);
        #krate::__impl_scalar_field!(#p::TfLossy; #name);
        #krate::__impl_scalar_field!(#p::Of; #name);
    }
}

/// Stub impls emitted next to compile errors, so that one mistake gives one message instead
/// of a cascade of "trait not implemented" errors where the type is used.
pub(crate) fn fallback(
    input: &syn::DeriveInput,
    krate: &syn::Path,
    kind: RecordKind,
) -> TokenStream {
    if input.generics.type_params().next().is_some()
        || input.generics.const_params().next().is_some()
    {
        return quote!();
    }
    let p = quote!(#krate::__private);
    let heads = ImplHeads::new(input);
    let de = &heads.de;
    let containers = match kind {
        RecordKind::SequenceExample => vec![quote!(#p::TfSequenceExample)],
        _ => vec![quote!(#p::TfExample), quote!(#p::OfRecord)],
    };
    let encode = containers
        .iter()
        .map(|c| heads.encode(&quote!(#p::Encode<#c>)));
    let decode = containers
        .iter()
        .map(|c| heads.decode(&quote!(#p::Decode<#de, #c>)));
    quote! {#(
        #encode {
            fn encoded_len(&self) -> usize { ::core::unreachable!() }
            fn encode_raw(&self, _: &mut #p::Vec<u8>) { ::core::unreachable!() }
        }
        #decode {
            fn decode(_: &#de [u8]) -> #p::Result<Self> { ::core::unreachable!() }
        }
    )*}
}
