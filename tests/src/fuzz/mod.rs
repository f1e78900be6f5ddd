//! The bodies of the fuzz targets: each takes one input and panics when an invariant fails.
//!
//! `fuzz/` (cargo-fuzz, libFuzzer) wraps each in a `fuzz_target!`, and `tests/fuzz_replay.rs`
//! runs every file of `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/` through it as an
//! ordinary test. Both install the counting allocator the heap check ([`heap`]) reads.
//!
//! | target | what it reads | what it checks |
//! | --- | --- | --- |
//! | [`framing`](mod@framing) | a record stream, plain, gzip or zlib | every reader gives the same records before damage and fails at the same offset |
//! | [`messages`](mod@messages) | a `tf.train.Example`, `SequenceExample` or `OFRecord` | decode, encode, decode round trips; JSON and OFRecord forms |
//! | [`derived`](mod@derived) | the same, as `#[derive(Example)]` and `#[derive(SequenceExample)]` types | decode, encode, decode round trips |
//! | [`parse`](mod@parse) | a batch of records | `tf.io.parse_example` / `parse_sequence_example` specs parse alike three ways |
//! | [`columns`](mod@columns) | a batch of records | every kind of feature decodes to columns that write back to the same columns, or fails naming its record |
//! | [`spec`](mod@spec) | a TOML spec | diagnostics render; the spec written back reads to the same schema |
//! | [`avro_expr`](fn@avro_expr) | Avro key expressions | they read back to themselves and evaluate without panicking |
//! | [`avro_file`](fn@avro_file) | an Avro object container file | every way of reading it counts the same records |
//! | [`json_lines`](fn@json_lines) | JSON Lines (and the same text as CSV) | strict and lenient imports agree; JSON forms survive encoding |
//!
//! Every target also holds the heap's growth during each call to a bound of the input's size
//! (the `*_BOUND` constants, [`heap::Bound`]).

pub mod avro;
pub mod columns;
pub mod derived;
pub mod framing;
pub mod heap;
pub mod json;
pub mod messages;
pub mod parse;
pub mod spec;

pub use avro::{AVRO_EXPR_BOUND, AVRO_FILE_BOUND, avro_expr, avro_file};
pub use columns::{COLUMNS_BOUND, columns};
pub use derived::{Clip, Color, DERIVED_BOUND, Inner, Level, Mixed, derived};
pub use framing::{FRAMING_BOUND, framing};
pub use json::{JSON_BOUND, json_lines};
pub use messages::{MESSAGES_BOUND, messages};
pub use parse::{PARSE_BOUND, parse};
pub use spec::{SPEC_BOUND, spec};

/// A target's body: runs one input, panicking when an invariant fails.
pub type Target = fn(&[u8]);

/// Every target by name: the name of its folders under `fuzz/corpus/` and `fuzz/regressions/`
/// and of its binary in `fuzz/`.
pub const TARGETS: &[(&str, Target)] = &[
    ("framing", framing),
    ("messages", messages),
    ("derived", derived),
    ("parse", parse),
    ("columns", columns),
    ("spec", spec),
    ("avro_expr", avro_expr),
    ("avro_file", avro_file),
    ("json_lines", json_lines),
];
