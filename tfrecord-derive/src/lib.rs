//! `#[derive(Example)]` and `#[derive(SequenceExample)]`: a thin shell over
//! `tfrecord_schema::codegen`. Use them through `tfrecord-core`, which re-exports both and
//! documents the attributes.

use proc_macro::TokenStream;

/// Derives typed encoding and decoding as `tf.train.Example` and `OFRecord` (for a struct), or
/// as a feature value (for a unit-only enum). See `tfrecord_core`'s documentation for the type
/// mapping and the attributes.
#[proc_macro_derive(Example, attributes(example))]
pub fn derive_example(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    tfrecord_schema::codegen::derive_example(&input).into()
}

/// Derives typed encoding and decoding as `tf.train.SequenceExample`: context features, and
/// `#[example(sequence)]` fields as feature lists (one feature per step).
#[proc_macro_derive(SequenceExample, attributes(example))]
pub fn derive_sequence_example(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    tfrecord_schema::codegen::derive_sequence_example(&input).into()
}
