//! End-to-end tests of the tfrecord workspace, in one test binary.
//!
//! - `columns`: the columnar decoder (`tfrecord_core::columns`) on every valid encoding.
//! - `conformance`: the files recorded from TensorFlow 2.21 and protobuf (in
//!   `fixtures/conformance/`) read back to exactly the recorded records and features.
//! - `writer`: our writer's output is byte-identical to TensorFlow's, and compressed output
//!   reads back.
//! - `wire`: every valid protobuf encoding of the messages decodes to the same values.
//! - `bad_input`: truncated, corrupted, oversized and foreign files give located errors and
//!   never a panic or wrong data.
//! - `derive_*`: `#[derive(Example)]` and `#[derive(SequenceExample)]` checked against the
//!   generic prost types, with the model, test types and checks in `support`:
//!   `derive_round_trips` (every row of the type mapping, in every container and encoding),
//!   `derive_values` (hand-picked values and their errors), `derive_keys` (keys, absence,
//!   defaults), `derive_absent` (absent variable-length lists and `required`), `derive_wire` (wire-level differences), `derive_sequence`, `derive_sparse`,
//!   `derive_files` (the typed `Writer` and `Reader`) and `derive_decoders` (damaged input,
//!   the one-pass decode).
//! - `hygiene`: generated code compiles with the prelude shadowed and lints denied.
//! - `parse`: `tfrecord_core::parse` reproduces what `tf.io.parse_example` and
//!   `tf.io.parse_sequence_example` returned (or the errors they raised) for the recorded cases.
//! - `spec`: types generated from TOML specs (`specs/`, by `build.rs`) encode and decode
//!   exactly as their hand-derived twins.
//! - `ui`: the derive's compile errors (trybuild).
//! - `import`: `tfrecord-import` reproduces every recorded tensorflow-io Avro case
//!   (`fixtures/avro/`) or the Avro dataset design's result where tensorflow-io crashes or is quirky, and maps
//!   JSON Lines, CSV and image folders to records.

#[path = "e2e/support.rs"]
mod support;

#[path = "e2e/bad_input.rs"]
mod bad_input;
#[path = "e2e/columns.rs"]
mod columns;
#[path = "e2e/conformance.rs"]
mod conformance;
#[path = "e2e/derive_absent.rs"]
mod derive_absent;
#[path = "e2e/derive_decoders.rs"]
mod derive_decoders;
#[path = "e2e/derive_files.rs"]
mod derive_files;
#[path = "e2e/derive_keys.rs"]
mod derive_keys;
#[path = "e2e/derive_round_trips.rs"]
mod derive_round_trips;
#[path = "e2e/derive_sequence.rs"]
mod derive_sequence;
#[path = "e2e/derive_sparse.rs"]
mod derive_sparse;
#[path = "e2e/derive_values.rs"]
mod derive_values;
#[path = "e2e/derive_wide.rs"]
mod derive_wide;
#[path = "e2e/derive_wire.rs"]
mod derive_wire;
#[path = "e2e/hygiene.rs"]
mod hygiene;
#[path = "e2e/import.rs"]
mod import;
#[path = "e2e/parse.rs"]
mod parse;
#[path = "e2e/spec.rs"]
mod spec;
#[path = "e2e/ui.rs"]
mod ui;
#[path = "e2e/wire.rs"]
mod wire;
#[path = "e2e/writer.rs"]
mod writer;
