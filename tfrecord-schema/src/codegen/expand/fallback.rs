//! The stub impls emitted next to a derive's compile errors.

use proc_macro2::TokenStream;
use quote::quote;

use super::heads::ImplHeads;
use crate::ir::RecordKind;

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
    let schema = heads.encode(&quote!(#p::RecordSchema));
    quote! {
        #schema {
            fn record_schema() -> #p::ir::Record { ::core::unreachable!() }
        }
        #(
        #encode {
            fn encoded_len(&self) -> usize { ::core::unreachable!() }
            fn encode_raw(&self, _: &mut #p::Vec<u8>) { ::core::unreachable!() }
        }
        #decode {
            fn decode(_: &#de [u8]) -> #p::Result<Self> { ::core::unreachable!() }
        }
    )*}
}
