//! The TOML spec reader (`tfrecord_schema`): any text either reads to a schema or gives
//! diagnostics that render, and a schema read back from the text it writes is the same. Every
//! record of a schema that reads is then taken by every consumer of specs: the runtime form and
//! the parsers built from it, the Avro importer's spec and the JSON / CSV importer's spec.
//!
//! The input is the spec text (bytes that are not UTF-8 replaced).

use tfrecord_core::parse::{ExampleParser, RecordSpec, SequenceExampleParser};
use tfrecord_import::avro::AvroSpec;
use tfrecord_import::records;
use tfrecord_schema::ir::Schema;

use super::heap::{self, Bound};

/// The heap bound of reading a spec of `n` bytes: 256 bytes per byte (the TOML document with
/// the span of every item, the IR, the text written back and read again, and the rendered
/// diagnostics, which quote the line of each error), plus 1 MiB.
pub const SPEC_BOUND: Bound = Bound {
    per_byte: 256,
    fixed: 1 << 20,
};

/// The spec reader and its consumers handle `data` (see the [module](self) docs).
///
/// # Panics
/// When a schema does not read back from its own text, the reader or a consumer panics, or
/// the heap grows past [`SPEC_BOUND`].
pub fn spec(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    heap::within("spec", data.len(), SPEC_BOUND, || check(&text));
}

fn check(text: &str) {
    let schema = match Schema::from_toml_str(text, "fuzz.toml") {
        Ok(schema) => schema,
        Err(diagnostics) => {
            assert!(!diagnostics.is_empty(), "an error without a diagnostic");
            let rendered = diagnostics.to_string();
            for e in &diagnostics {
                assert!(
                    rendered.contains(e.message()),
                    "the report leaves out {:?}",
                    e.message()
                );
                if let Some(at) = e.location() {
                    assert!(at.line() >= 1 && at.column() >= 1, "{at}");
                }
            }
            return;
        }
    };
    let written = schema.to_toml();
    match Schema::from_toml_str(&written, "written.toml") {
        Ok(back) => assert!(
            back == schema,
            "the spec written back reads to another schema:\n{written}"
        ),
        Err(e) => panic!("the spec written back does not read: {e}\n{written}"),
    }
    for record in &schema.records {
        if let Ok(runtime) = RecordSpec::from_record(record) {
            if let Ok(spec) = runtime.example_spec() {
                drop(ExampleParser::new(&spec));
            }
            if let Ok((context, lists)) = runtime.sequence_specs() {
                drop(SequenceExampleParser::new(&context, &lists));
            }
        }
        drop(AvroSpec::from_record(record));
        drop(records::RecordSpec::from_record(record));
    }
}
