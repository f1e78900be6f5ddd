//! The columnar decoder and encoder (`tfrecord_core::columns`) over a batch of records with
//! fixed specs of every feature kind, for `tf.train.Example`, `OFRecord` and
//! `tf.train.SequenceExample`.
//!
//! The input is the batch, as the `parse` target reads it: each record a 2-byte little-endian
//! length, then that many bytes. Each spec decodes the batch; a batch that decodes is written
//! back as records, which must decode to the same columns; a batch that does not gives an error
//! that names its record.

use tfrecord_core::Format;
use tfrecord_core::columns::{ColumnDecoder, ColumnEncoder};
use tfrecord_core::parse::RecordSpec;
use tfrecord_schema::ir::Schema;

use super::heap::{self, Bound};
use super::parse::records;

/// The heap bound of one spec over a batch of `n` bytes: 256 bytes per byte (a one-byte value
/// becomes an 8-byte element, a list entry an 8-byte offset, and value row ids may make 8 rows
/// per byte, each an 8-byte split: in the first batch, the records written back and the second
/// batch side by side), plus 4 MiB (the 64 Ki rows any batch may make, and the specs).
pub const COLUMNS_BOUND: Bound = Bound {
    per_byte: 256,
    fixed: 4 << 20,
};

/// Every kind of feature, in a `tf.train.Example` (and, without the text, in an OFRecord).
const EXAMPLE: &str = r#"
[records.R.features.label]
dtype = "int64"
default = -1
[records.R.features.score]
dtype = "float"
optional = true
[records.R.features.image]
dtype = "bytes"
shape = [2, 2]
default = ""
[records.R.features.ids]
dtype = "int64"
kind = "var"
[records.R.features.flags]
dtype = "bool"
kind = "var"
[records.R.features.small]
dtype = "int32"
kind = "var"
[records.R.features.points]
dtype = "float"
shape = [-1, 2]
[records.R.features.boxes]
dtype = "float"
kind = "sparse"
index_key = ["box/row", "box/col"]
value_key = "box/score"
size = [8, 8]
[records.R.features.tokens]
dtype = "int64"
kind = "ragged"
partitions = [{ row_lengths = "tokens/len" }, { uniform_row_length = 2 }]
[records.R.features.words]
dtype = "bytes"
kind = "ragged"
partitions = [{ row_splits = "words/splits" }]
[records.R.features.ids2]
dtype = "int64"
kind = "ragged"
value_key = "rids"
partitions = [{ value_rowids = "rids/rows" }]
[records.R.features.starts]
dtype = "float"
kind = "ragged"
value_key = "rstarts"
partitions = [{ row_starts = "rstarts/starts" }]
[records.R.features.limits]
dtype = "int64"
kind = "ragged"
value_key = "rlimits"
partitions = [{ row_limits = "rlimits/limits" }]
"#;

const TEXT: &str = r#"
[records.R.features.name]
dtype = "string"
optional = true
"#;

const OFRECORD: &str = r#"
[records.R.features.wide]
dtype = "double"
kind = "var"
"#;

const SEQUENCE: &str = r#"
[records.R]
kind = "sequence_example"
[records.R.context.id]
dtype = "int64"
optional = true
[records.R.context.lang]
dtype = "string"
kind = "var"
[records.R.sequence.tokens]
dtype = "int64"
kind = "var"
[records.R.sequence.scores]
dtype = "float"
shape = [2]
allow_missing = true
[records.R.sequence.words]
dtype = "bytes"
kind = "var"
"#;

fn spec(text: &str) -> RecordSpec {
    let schema = match Schema::from_toml_str(text, "fuzz.toml") {
        Ok(s) => s,
        Err(d) => panic!("the fuzz spec is valid: {d}"),
    };
    match RecordSpec::from_record(&schema.records[0]) {
        Ok(s) => s,
        Err(e) => panic!("the fuzz spec has a runtime form: {e}"),
    }
}

/// Decodes `batch` with `spec`; a decoded batch must write back to records that decode to it.
fn check(what: &str, spec: &RecordSpec, format: Format, batch: &[&[u8]]) {
    let decoder = match ColumnDecoder::new(spec, format) {
        Ok(d) => d,
        Err(e) => panic!("{what}: the spec has a columnar layout: {e}"),
    };
    let encoder = match ColumnEncoder::new(spec, format) {
        Ok(e) => e,
        Err(e) => panic!("{what}: the spec has a columnar layout: {e}"),
    };
    let columns = match decoder.decode(batch, 0) {
        Ok(c) => c,
        Err(e) => {
            assert!(
                e.record().is_some(),
                "{what}: the error names no record: {e}"
            );
            return;
        }
    };
    let mut back = Vec::new();
    if let Err(e) = encoder.encode(&columns, 0, |r| {
        back.push(r.to_vec());
        Ok(())
    }) {
        panic!("{what}: decoded columns do not encode: {e}");
    }
    assert_eq!(back.len(), batch.len(), "{what}: one record per row");
    match decoder.decode(&back, 0) {
        Ok(again) => assert!(
            again == columns,
            "{what}: the records written back decode to other columns"
        ),
        Err(e) => panic!("{what}: the records written back do not decode: {e}"),
    }
}

/// The target: every spec over the batch.
pub fn columns(data: &[u8]) {
    let batch = records(data);
    let example = spec(&format!("[records.R]\n{EXAMPLE}{TEXT}"));
    let ofrecord = spec(&format!(
        "[records.R]\ndialect = \"ofrecord\"\n{EXAMPLE}{OFRECORD}"
    ));
    let sequence = spec(SEQUENCE);
    for (what, spec, format) in [
        ("example", &example, Format::TfRecord),
        ("ofrecord", &ofrecord, Format::OfRecord),
        ("sequence", &sequence, Format::TfRecord),
    ] {
        heap::within(what, data.len(), COLUMNS_BOUND, || {
            check(what, spec, format, &batch);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed corpus reaches the round trip, not only the errors: its `examples`, `ofrecords`
    /// and `sequences` batches decode with their specs.
    #[test]
    fn the_seed_batches_decode() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/columns");
        for (file, text, format) in [
            (
                "examples",
                format!("[records.R]\n{EXAMPLE}{TEXT}"),
                Format::TfRecord,
            ),
            (
                "ofrecords",
                format!("[records.R]\ndialect = \"ofrecord\"\n{EXAMPLE}{OFRECORD}"),
                Format::OfRecord,
            ),
            ("sequences", SEQUENCE.to_string(), Format::TfRecord),
        ] {
            let data = std::fs::read(dir.join(file)).expect("corpus file");
            let decoder = ColumnDecoder::new(&spec(&text), format).expect("decoder");
            let batch = decoder.decode(&records(&data), 0);
            assert!(batch.is_ok(), "{file}: {:?}", batch.err());
        }
    }
}
