//! The one code generator: IR + bindings -> trait impls. Everything generated code does at
//! run time lives in `tfrecord_core::__private`; this module only wires fields to it.
//!
//! One file a job: `example` and `sequence` expand the two record derives, `enums` a unit-only
//! enum, `fallback` the stubs next to compile errors, `spec` the record's IR for run time; they share the impl heads (`heads`), the
//! per-field expressions (`field`, with `defaults`) and the key matcher (`tokens`).

mod defaults;
mod enums;
mod example;
mod fallback;
mod field;
mod heads;
mod sequence;
mod spec;
mod tokens;

pub(crate) use enums::expand_enum;
pub(crate) use example::expand_example;
pub(crate) use fallback::fallback;
pub(crate) use sequence::expand_sequence;
pub(crate) use spec::expand_schema;
