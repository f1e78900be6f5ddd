//! The heads of the generated impls, and the prelude both record expansions start from.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};

use super::field::Ctx;
use crate::codegen::attrs::{Binding, Lowered};
use crate::ir::Field;

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
pub(super) struct ImplHeads<'a> {
    name: &'a syn::Ident,
    impl_generics: syn::ImplGenerics<'a>,
    ty_generics: syn::TypeGenerics<'a>,
    where_clause: Option<&'a syn::WhereClause>,
    /// The lifetime decoded values borrow: the type's own, else `'__de`.
    pub(super) de: syn::Lifetime,
    de_generics: TokenStream,
}

impl<'a> ImplHeads<'a> {
    pub(super) fn new(input: &'a syn::DeriveInput) -> Self {
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
    pub(super) fn encode(&self, tr: &TokenStream) -> TokenStream {
        self.head(&self.impl_generics, tr)
    }

    /// `impl<'de, ..> Trait for Type<..> where ..`: `Trait` may name the `'de` lifetime.
    pub(super) fn decode(&self, tr: &TokenStream) -> TokenStream {
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
pub(super) struct Prelude<'a> {
    pub(super) p: TokenStream,
    pub(super) cx: Ctx<'a>,
    pub(super) heads: ImplHeads<'a>,
    pub(super) record: &'a crate::ir::Record,
    pub(super) fields: Vec<(&'a Field, &'a Binding)>,
}

impl<'a> Prelude<'a> {
    pub(super) fn new(input: &'a syn::DeriveInput, lowered: &'a Lowered) -> Self {
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
