//! The expansion of `#[derive(Example)]` on a unit-only enum: a value stored as its variant's
//! name, or as its discriminant.

use proc_macro2::{Literal as Lit, TokenStream};
use quote::{format_ident, quote};

use super::tokens::byte_lit;

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
