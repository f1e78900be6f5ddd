//! JSON Lines records: the importer of `tfrecord-import` (`tfrecord from-records`), and the
//! proto3 JSON form of `tfrecord_core::json`.
//!
//! The input is the text of a JSON Lines file. The importer reads it strictly and with
//! unmappable fields skipped: when the strict read succeeds, the lenient one gives the same
//! records and skips nothing. The same text is read as CSV too. Each line that is the JSON form
//! of an `Example`, a `SequenceExample` or an `OFRecord` must keep that form through its binary
//! encoding.

use std::io::Write as _;

use serde_json::Value;
use tfrecord_core::proto::{oneflow, tensorflow};
use tfrecord_core::{Format, Message, json};
use tfrecord_import::records::{RecordFormat, RecordOptions, RecordSummary, import_records};

use super::heap::{self, Bound};

/// The heap bound of importing `n` bytes of JSON Lines: 256 bytes per byte (a one-byte JSON
/// value is a 32-byte `serde_json::Value` in a growing array, then a scalar, then an encoded
/// feature; a key is a `String` in a map), plus 1 MiB.
pub const JSON_BOUND: Bound = Bound {
    per_byte: 256,
    fixed: 1 << 20,
};

/// The encoded records of an import, and its summary; `None` at an error.
type Imported = Option<(Vec<Vec<u8>>, RecordSummary)>;

fn import(path: &std::path::Path, format: RecordFormat, skip_unmappable: bool) -> Imported {
    let opts = RecordOptions {
        format: Some(format),
        skip_unmappable,
        ..RecordOptions::default()
    };
    let mut out = Vec::new();
    let summary = import_records(
        path,
        &opts,
        |_| {},
        |row| {
            out.push(row.encode(Format::TfRecord)?);
            Ok(())
        },
    )
    .ok()?;
    Some((out, summary))
}

/// A JSON form read, encoded, decoded and written again must be the same JSON form.
fn same_through_binary<M: Message + Default>(
    value: &Value,
    what: &str,
    from: fn(&Value) -> tfrecord_core::Result<M>,
    to: fn(&M) -> Value,
) {
    let Ok(message) = from(value) else {
        return;
    };
    let form = to(&message);
    let decoded = match M::decode(&message.encode_to_vec()[..]) {
        Ok(m) => m,
        Err(e) => panic!("{what}: its encoding does not decode: {e}"),
    };
    assert_eq!(
        to(&decoded),
        form,
        "{what}: the JSON form through the binary one"
    );
    match from(&form) {
        Ok(again) => assert_eq!(to(&again), form, "{what}: the JSON form read again"),
        Err(e) => panic!("{what}: its own JSON form does not read: {e}"),
    }
}

/// The line encoder (which reads most lines straight into wire bytes) gives the bytes, or the
/// error, of the message read from the line and encoded.
fn encoder_agrees(text: &str) {
    let mut enc = json::LineEncoder::new();
    let mut out = Vec::new();
    let got = enc.example(text, &mut out).map(|()| out.clone());
    let want = json::example_from_json_str(text).map(|m| tfrecord_core::proto::encode_example(&m));
    assert_eq!(
        got.map_err(|e| e.to_string()),
        want.map_err(|e| e.to_string()),
        "Example: the line encoder"
    );
    out.clear();
    let got = enc.sequence_example(text, &mut out).map(|()| out.clone());
    let want = json::sequence_example_from_json_str(text)
        .map(|m| tfrecord_core::proto::encode_sequence_example(&m));
    assert_eq!(
        got.map_err(|e| e.to_string()),
        want.map_err(|e| e.to_string()),
        "SequenceExample: the line encoder"
    );
    out.clear();
    let got = enc.ofrecord(text, &mut out).map(|()| out.clone());
    let want =
        json::ofrecord_from_json_str(text).map(|m| tfrecord_core::proto::encode_ofrecord(&m));
    assert_eq!(
        got.map_err(|e| e.to_string()),
        want.map_err(|e| e.to_string()),
        "OFRecord: the line encoder"
    );
}

/// The importer and the JSON forms agree with themselves on `data` (see the [module](self)
/// docs).
///
/// # Panics
/// When a strict and a lenient import differ, a JSON form changes through the binary form,
/// the line encoder and the message reader disagree, the importer panics, or the heap grows past [`JSON_BOUND`].
pub fn json_lines(data: &[u8]) {
    let Ok(mut file) = tempfile::Builder::new().suffix(".jsonl").tempfile() else {
        return;
    };
    if file.write_all(data).and_then(|()| file.flush()).is_err() {
        return;
    }
    let path = file.path();
    let len = data.len();
    for format in [RecordFormat::JsonLines, RecordFormat::Csv] {
        let what = format!("{format:?}");
        let strict = heap::within(&what, len, JSON_BOUND, || import(path, format, false));
        let lenient = heap::within(&what, len, JSON_BOUND, || import(path, format, true));
        if let Some((records, summary)) = strict {
            let Some((lenient_records, lenient_summary)) = lenient else {
                panic!("{what}: the strict import succeeds and the lenient one fails");
            };
            assert!(
                records == lenient_records,
                "{what}: the lenient import gives other records"
            );
            assert_eq!(summary, lenient_summary, "{what}: the summaries");
            assert_eq!(
                summary.records,
                records.len() as u64,
                "{what}: records counted"
            );
        }
    }
    heap::within("JSON forms", len, JSON_BOUND, || {
        for line in data.split(|&b| b == b'\n') {
            if let Ok(text) = std::str::from_utf8(line) {
                encoder_agrees(text);
            }
            let Ok(value) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            same_through_binary::<tensorflow::Example>(
                &value,
                "Example",
                json::example_from_json,
                json::example_to_json,
            );
            same_through_binary::<tensorflow::SequenceExample>(
                &value,
                "SequenceExample",
                json::sequence_example_from_json,
                json::sequence_example_to_json,
            );
            same_through_binary::<oneflow::OfRecord>(
                &value,
                "OFRecord",
                json::ofrecord_from_json,
                json::ofrecord_to_json,
            );
        }
    });
}
