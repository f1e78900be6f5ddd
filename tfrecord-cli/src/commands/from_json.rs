//! `tfrecord from-json`: JSON Lines (canonical proto3 JSON, one record a line) to a record file.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::process::ExitCode;

use tfrecord_core::json::LineEncoder;
use tfrecord_core::{Error, ErrorKind};

use crate::cli::FromJsonArgs;
use crate::error::{CliError, CliResult};
use crate::input::{RecordType, Source};
use crate::output::{RecordSink, check_not_input};
use crate::stdio::is_dash;

/// The message of a JSON error, without the "invalid JSON record" prefix the library adds.
fn json_detail(e: &Error) -> String {
    match e.kind() {
        ErrorKind::Json { detail } => detail.clone(),
        _ => e.to_string(),
    }
}

/// Parses one JSON line as the record type and encodes it into `out` (emptied first).
fn encode_json_line(
    enc: &mut LineEncoder,
    ty: RecordType,
    line: &str,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    out.clear();
    let encoded = match ty {
        RecordType::Example => enc.example(line, out),
        RecordType::SequenceExample => enc.sequence_example(line, out),
        RecordType::OfRecord => enc.ofrecord(line, out),
    };
    encoded.map_err(|e| {
        let detail = json_detail(&e);
        // A SequenceExample's JSON read as an Example: its two fields are unknown there.
        let sequence_field = ["\"context\"", "\"featureLists\"", "\"feature_lists\""]
            .iter()
            .any(|f| detail.contains(&format!("unknown field {f}")));
        if ty == RecordType::Example && sequence_field {
            format!("{detail}; a tensorflow.SequenceExample's JSON: read it with --sequence")
        } else {
            detail
        }
    })
}

/// `tfrecord from-json`.
pub(crate) fn run(args: &FromJsonArgs) -> CliResult<ExitCode> {
    let ty = RecordType::for_format(args.write.encoding.output_format.into(), args.sequence)?;
    check_not_input(&args.write.output, &args.inputs)?;
    let mut sink = RecordSink::create(&args.write)?;
    // Records are numbered across the inputs, as in the output.
    let mut record = 0u64;
    for arg in &args.inputs {
        let source = if is_dash(arg) {
            Source::Stdin
        } else {
            Source::File(arg.clone())
        };
        let name = source.name();
        let mut reader: Box<dyn BufRead> = match &source {
            Source::Stdin => Box::new(io::stdin().lock()),
            Source::File(p) => {
                let f = File::open(p).map_err(|e| Error::from(e).with_path(p))?;
                Box::new(BufReader::with_capacity(1 << 20, f))
            }
        };
        json_lines(&mut reader, &name, ty, &mut sink, &mut record)?;
    }
    sink.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// The longest JSON line read (1 GiB, the default limit on a record read back): a line is held
/// whole, with the record it encodes, so a longer one is an error rather than memory without
/// bound.
const MAX_LINE: u64 = 1 << 30;

/// Encodes every non-blank line of one JSON Lines input into the sink; `record` is the index
/// in the output of the next record, counted on.
fn json_lines(
    reader: &mut dyn BufRead,
    name: &Path,
    ty: RecordType,
    sink: &mut RecordSink,
    record: &mut u64,
) -> CliResult<()> {
    let mut line = Vec::new();
    let mut enc = LineEncoder::new();
    let mut encoded = Vec::new();
    let mut lineno = 0u64;
    // Where the next line starts.
    let mut offset = 0u64;
    loop {
        line.clear();
        let n = (&mut *reader)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::from(e).with_path(name))?;
        if n == 0 {
            return Ok(());
        }
        lineno += 1;
        let start = offset;
        offset += n as u64;
        let fail = |detail: String| -> CliError {
            Error::json(format!("line {lineno} (at byte {start}): {detail}"))
                .with_path(name)
                .with_record(*record)
                .into()
        };
        if line.len() as u64 > MAX_LINE {
            return Err(fail(format!(
                "longer than {MAX_LINE} bytes, the most a line may hold (one record's JSON)"
            )));
        }
        let mut bytes = &line[..];
        if lineno == 1 {
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        let text = std::str::from_utf8(bytes)
            .map_err(|e| {
                // JSON Lines are read as they are: a compressed file is not decompressed.
                let hint = match bytes {
                    [0x1f, 0x8b, ..] if lineno == 1 => {
                        "; the data starts like a gzip stream: decompress it first \
                         (`gunzip -c FILE | tfrecord from-json -o OUT -`)"
                    }
                    _ => "",
                };
                fail(format!("not valid UTF-8 ({e}){hint}"))
            })?
            .trim();
        if text.is_empty() {
            continue;
        }
        encode_json_line(&mut enc, ty, text, &mut encoded).map_err(fail)?;
        sink.write(&encoded)?;
        *record += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tfrecord_core::Message as _;
    use tfrecord_core::proto::oneflow;

    #[test]
    fn json_line_errors_name_the_field() {
        let mut enc = LineEncoder::new();
        let mut out = Vec::new();
        let mut encode = |ty, line| encode_json_line(&mut enc, ty, line, &mut out);
        let err = encode(
            RecordType::Example,
            r#"{"features": {"feature": {"x": {"int64List": {"value": ["y"]}}}}}"#,
        )
        .unwrap_err();
        assert!(err.contains("int64List"), "{err}");
        let err = encode(RecordType::Example, "{").unwrap_err();
        assert!(err.starts_with("column"), "{err}");
        assert!(!err.contains("at line"), "{err}");
        let err = encode(RecordType::Example, r#"{"context": {}}"#).unwrap_err();
        assert!(err.ends_with("read it with --sequence"), "{err}");
        encode(RecordType::SequenceExample, r#"{"context": {}}"#).unwrap();
        encode(RecordType::OfRecord, r#"{"feature": {}}"#).unwrap();
        assert!(oneflow::OfRecord::decode(&out[..]).is_ok());
    }
}
