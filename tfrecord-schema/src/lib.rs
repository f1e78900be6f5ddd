//! Feature specs for `tf.train.Example`, `tf.train.SequenceExample` and OneFlow `OFRecord`.
//!
//! This crate is the leaf of the workspace and never depends on `tfrecord-core`. It holds:
//!
//! - [`ir`]: the plain-data description of a record (keys, dtypes, kinds, shapes, presence)
//!   that every front end lowers to;
//! - [`check`]: the rules every record must satisfy, with all violations reported at once;
//! - [`symbol`]: the attribute vocabulary, with "did you mean" suggestions;
//! - `codegen` (feature `codegen`): the `#[derive(Example)]` front end and the one code
//!   generator. Its output calls `tfrecord_core::__private`, which is not a public API.
//!
//! The IR and code generator are implementation details of the `tfrecord-*` crates and are
//! exempt from semver: depend on `tfrecord-core` and its derives instead.

pub mod check;
pub mod ir;
pub mod symbol;

#[cfg(feature = "codegen")]
pub mod codegen;
