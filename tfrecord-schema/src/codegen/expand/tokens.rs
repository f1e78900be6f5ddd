//! Token builders both record expansions share: byte-string literals and the key matcher.

use proc_macro2::{Literal as Lit, TokenStream};
use quote::quote;

/// The byte-string literal `b"..."` of a key.
pub(super) fn byte_lit(s: &str) -> Lit {
    Lit::byte_string(s.as_bytes())
}

/// A key matcher: `match (key.len(), key_prefix_word(key))` over integer patterns, with the bytes
/// past the eighth compared in a guard, so that dispatching on a key costs a few integer
/// comparisons instead of one byte-string comparison per field.
pub(super) fn key_match(
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
