//! The Avro importer (`tfrecord-import`): key expressions evaluated over real records, and
//! object container files read whole, as tensors and as one record each.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::OnceLock;

use tfrecord_core::Format;
use tfrecord_core::parse::{DType, Tensors};
use tfrecord_import::apache_avro::Schema;
use tfrecord_import::apache_avro::types::Value;
use tfrecord_import::avro::{
    self, AvroFeature, AvroFile, AvroKind, AvroSpec, KeyExpr, ReadOptions,
};

use super::heap::{self, Bound};

/// The persons file of the recorded tensorflow-io cases: every Avro type, unions, maps,
/// nested arrays of records.
const PERSONS: &[u8] = include_bytes!("../../fixtures/avro/persons.avro");

/// The projection of the person schema the recorded cases read with.
const PROJECTION: &str = include_str!("../../fixtures/avro/schema_person_projection.avsc");

/// The heap bound of evaluating key expressions of `n` bytes over the persons records: 1 KiB
/// per byte (each step of an expression is a parsed `Step`, and each one can visit every
/// value of the records again) plus 16 MiB (the tensors and rows of the records' values,
/// which are fixed).
pub const AVRO_EXPR_BOUND: Bound = Bound {
    per_byte: 1 << 10,
    fixed: 16 << 20,
};

/// The heap bound of reading an Avro file of `n` bytes: 256 bytes per byte (a decoded value
/// is a 32 to 56 byte `Value`, with its name for a record field, from as little as one byte;
/// tensors and rows of them), plus 48 MiB: a compressed block may inflate to 16 MiB whatever
/// its size (the importer's block limit, 1,100 times its size beyond that), which the buffer
/// holding it reaches by doubling (the old and the new buffer both live for a moment), beside
/// the codec's own state (bzip2's is up to 4 MiB), and 65,536 values that take no bytes.
pub const AVRO_FILE_BOUND: Bound = Bound {
    per_byte: 256,
    fixed: 48 << 20,
};

/// The records of [`PERSONS`], read once.
fn persons() -> &'static [Value] {
    static RECORDS: OnceLock<Vec<Value>> = OnceLock::new();
    RECORDS.get_or_init(|| {
        let file = temp_file(PERSONS, ".avro");
        match avro::read_all(&[file.path().to_path_buf()], None) {
            Ok(records) => records,
            Err(e) => panic!("the persons fixture reads: {e}"),
        }
    })
}

/// `bytes` in a temporary file named `*suffix`, removed when dropped.
fn temp_file(bytes: &[u8], suffix: &str) -> tempfile::NamedTempFile {
    let made = tempfile::Builder::new()
        .suffix(suffix)
        .tempfile()
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.flush()).map(|()| f));
    match made {
        Ok(f) => f,
        Err(e) => panic!("cannot write a temporary file: {e}"),
    }
}

/// The features `lines` describe, each line a key expression: the first as the source of a
/// var-length feature of each dtype and of a fixed-length one with unknown dimensions and a
/// default; with three lines, a sparse feature of that source, index key and value key.
fn features(lines: &[&str]) -> Vec<AvroFeature> {
    let Some(&source) = lines.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, dtype) in [DType::String, DType::Int64, DType::Float, DType::Bool]
        .into_iter()
        .enumerate()
    {
        out.push(AvroFeature::var_len(format!("var{i}"), source, dtype));
    }
    let dims = KeyExpr::parse(source).map_or(0, |e| e.dims());
    let mut fixed = AvroFeature::fixed_len("fixed", source, DType::String, []).with_default("-");
    fixed.kind = AvroKind::FixedLen {
        shape: vec![None; dims],
        default: Some("-".into()),
    };
    out.push(fixed);
    if let [_, index, value, ..] = lines {
        out.push(AvroFeature::sparse(
            "sparse",
            source,
            DType::Float,
            [*index],
            *value,
            [1000],
        ));
    }
    out
}

/// Key expressions: one that parses is its own text and parses again to itself, and each
/// feature made of it (alone, as a spec may reject one and take another) reads the persons
/// records as a batch and one by one without panicking.
///
/// The input is up to three lines of text (bytes that are not UTF-8 replaced): a source key
/// expression, and a sparse feature's index and value keys.
///
/// # Panics
/// When an expression does not read back to itself, the evaluation panics, or the heap grows
/// past [`AVRO_EXPR_BOUND`].
pub fn avro_expr(data: &[u8]) {
    let records = persons();
    let text = String::from_utf8_lossy(data);
    heap::within("avro key expressions", data.len(), AVRO_EXPR_BOUND, || {
        let lines: Vec<&str> = text.split('\n').collect();
        for line in &lines {
            if let Ok(e) = KeyExpr::parse(line) {
                assert_eq!(e.as_str(), *line, "an expression keeps its text");
                assert_eq!(e.to_string(), *line, "an expression displays its text");
                match KeyExpr::parse(e.as_str()) {
                    Ok(again) => assert_eq!(again, e, "{line:?} parses to itself again"),
                    Err(err) => panic!("{line:?} does not parse again: {err}"),
                }
                assert!(
                    e.dims() <= e.steps.len(),
                    "{line:?}: more dimensions than steps"
                );
            }
        }
        for feature in features(&lines) {
            let Ok(spec) = AvroSpec::new([feature]) else {
                continue;
            };
            drop(spec.parse_batch(records));
            for record in records {
                if let Ok(row) = spec.row(record) {
                    drop(row.encode(Format::TfRecord));
                }
            }
        }
    });
}

/// The spec the file reads are run with: features of the persons records (the recorded
/// cases' key expressions), which other files fail with located errors.
fn persons_spec() -> AvroSpec {
    let spec = AvroSpec::new([
        AvroFeature::fixed_len("first", "name.first", DType::String, []).with_default(""),
        AvroFeature::var_len("friends", "friends[*].name.first", DType::String),
        AvroFeature::var_len("tags", "tags[*]", DType::String),
        AvroFeature::fixed_len("age", "age", DType::Int32, []).with_default(vec![0i32]),
        AvroFeature::var_len("multi", "multi:int", DType::Int32),
    ]);
    match spec {
        Ok(spec) => spec,
        Err(e) => panic!("the persons spec is valid: {e}"),
    }
}

/// The values of a tensors map, for counting.
fn batch_len(t: &Tensors) -> usize {
    t.values().map(|t| t.values().len()).sum()
}

/// Avro object container files: a file is read record by record, as tensors in batches and as
/// one output record each (with and without the projection reader schema), without panicking,
/// and every read that succeeds counts the same records.
///
/// The input is the file.
///
/// # Panics
/// When two reads count different records, a read panics, or the heap grows past
/// [`AVRO_FILE_BOUND`].
pub fn avro_file(data: &[u8]) {
    let spec = persons_spec();
    let projection = match avro::parse_schema(PROJECTION) {
        Ok(s) => s,
        Err(e) => panic!("the projection schema reads: {e}"),
    };
    let file = temp_file(data, ".avro");
    let inputs = [file.path().to_path_buf()];
    let mut counts: Vec<(&str, u64)> = Vec::new();
    for (with, reader_schema) in [("writer", None), ("projection", Some(&projection))] {
        let read = |what: &str, f: &dyn Fn() -> Option<u64>| {
            heap::within(
                &format!("{what} ({with} schema)"),
                data.len(),
                AVRO_FILE_BOUND,
                f,
            )
        };
        let streamed = read("AvroFile", &|| stream(&inputs[0], reader_schema));
        let opts = ReadOptions {
            reader_schema,
            batch_size: Some(4),
            progress: false,
        };
        let tensors = read("read_tensors", &|| {
            let mut values = 0usize;
            avro::read_tensors(&inputs, &spec, &opts, |t| {
                values += batch_len(&t);
                Ok(())
            })
            .ok()
        });
        let rows = read("read_rows", &|| {
            avro::read_rows(&inputs, &spec, &opts, |row| {
                drop(row.encode(Format::TfRecord));
                Ok(())
            })
            .ok()
        });
        let all = read("read_all", &|| {
            avro::read_all(&inputs, reader_schema)
                .ok()
                .map(|v| v.len() as u64)
        });
        for (what, n) in [
            ("AvroFile", streamed),
            ("read_tensors", tensors),
            ("read_rows", rows),
            ("read_all", all),
        ] {
            if let Some(n) = n {
                counts.push((what, n));
            }
        }
        if let (Some(a), Some(b)) = (streamed, all) {
            assert_eq!(a, b, "{with} schema: records streamed and read whole");
        }
    }
    if let Some(&(first, n)) = counts.first()
        && let Some(&(other, m)) = counts.iter().find(|c| c.1 != n)
    {
        panic!("{first} counts {n} records, {other} {m}");
    }
}

/// Reads a file record by record, keeping none; the count, or `None` at an error.
fn stream(path: &PathBuf, reader_schema: Option<&Schema>) -> Option<u64> {
    let file = AvroFile::open(path, reader_schema).ok()?;
    let mut n = 0u64;
    for record in file {
        record.ok()?;
        n += 1;
    }
    Some(n)
}
