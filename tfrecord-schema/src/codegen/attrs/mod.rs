//! The attribute front end: `syn::DeriveInput` + `#[example(...)]` attributes -> IR, with the
//! Rust types kept aside as bindings for the code generator. Every error is collected.
//!
//! One file a job: `container` and `field` parse the attributes (with the helpers in `meta`),
//! `types` reads what a field's Rust type says, `lower` turns a struct into the IR, and `ctxt`
//! collects the errors.

mod container;
mod ctxt;
mod field;
mod lower;
mod meta;
mod types;

pub(crate) use container::container_attrs;
pub(crate) use ctxt::Ctxt;
pub(crate) use lower::{Binding, Lowered, Spans, lower_struct};
pub(crate) use meta::{Once, skip_value, unknown_attr};
pub(crate) use types::{BytesRepr, Container, classify};

#[cfg(test)]
mod tests;
