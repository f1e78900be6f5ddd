//! Feature specs for `tf.train.Example` and OneFlow `OFRecord` records.
//!
//! This crate is the leaf of the workspace: it holds the plain-data description of a record
//! (the IR) that the `#[derive(Example)]` macro and the TOML spec compiler both lower to. It
//! never depends on `tfrecord-core`.
