//! The subcommands.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;
use tfrecord_core::proto::{self, tensorflow};
use tfrecord_core::{Error, ErrorKind, Format, ReaderOptions, convert, json};

use crate::cli::{CatArgs, ConvertArgs, CountArgs, FromJsonArgs, ReadOpts, VerifyArgs};
use crate::error::{CliError, CliResult};
use crate::input::{
    Decoded, Flow, RecordType, Source, for_each_record, for_each_record_parallel, resolve,
    resolve_all,
};
use crate::output::RecordSink;

/// Buffered, locked standard output for text.
pub(crate) type Stdout = BufWriter<io::StdoutLock<'static>>;

pub(crate) fn stdout() -> Stdout {
    BufWriter::with_capacity(1 << 16, io::stdout().lock())
}

/// Runs `body` with a buffered standard output and flushes it afterwards, also after an error
/// (so what was printed before the error is not lost); the first error wins.
pub(crate) fn with_stdout<T>(body: impl FnOnce(&mut Stdout) -> CliResult<T>) -> CliResult<T> {
    let mut out = stdout();
    let res = body(&mut out);
    let flushed = out.flush();
    let value = res?;
    flushed?;
    Ok(value)
}

/// Reader options for one source of a reading command.
pub(crate) fn reader_options(
    read: &ReadOpts,
    source: &Source,
    verify_data_crc: bool,
) -> ReaderOptions {
    let flag = read.compression.map(Into::into);
    ReaderOptions::new()
        .format(read.input_format.into())
        .compression(source.compression(flag))
        .verify_data_crc(verify_data_crc)
}

/// `tfrecord cat`.
pub(crate) fn cat(args: &CatArgs) -> CliResult<ExitCode> {
    let ty = RecordType::for_format(args.read.input_format.into(), args.sequence)?;
    let sources = resolve_all(&args.files)?;
    let mut left = args.limit.unwrap_or(u64::MAX);
    with_stdout(|out| {
        for source in &sources {
            if left == 0 {
                break;
            }
            let opts = reader_options(&args.read, source, !args.no_verify_data_crc);
            for_each_record(source, opts, |bytes, loc| {
                let record = ty.decode(bytes, loc)?;
                if args.json {
                    let line = serde_json::to_string(&record.to_json())
                        .map_err(|e| CliError::Output(io::Error::other(e)))?;
                    writeln!(out, "{line}")?;
                } else {
                    writeln!(out, "{}", record.to_text())?;
                }
                left -= 1;
                Ok(if left == 0 {
                    Flow::Stop
                } else {
                    Flow::Continue
                })
            })?;
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// `tfrecord count`.
pub(crate) fn count(args: &CountArgs) -> CliResult<ExitCode> {
    let sources = resolve_all(&args.files)?;
    with_stdout(|out| {
        let mut total = 0u64;
        for source in &sources {
            let opts = reader_options(&args.read, source, !args.no_verify_data_crc);
            let n = for_each_record_parallel(source, opts, args.threads.get(), |_, _| Ok(()))?;
            if sources.len() > 1 {
                writeln!(out, "{}\t{n}", source.name().display())?;
            }
            total += n;
        }
        writeln!(out, "{total}")?;
        Ok(ExitCode::SUCCESS)
    })
}

/// Prints an error on standard error, as `main` does for the error that ends a command. Spec
/// errors come first as their own rustc-style report.
pub(crate) fn report(err: &CliError) {
    let mut stderr = io::stderr().lock();
    match err {
        CliError::Spec(e) => {
            let _ = write!(stderr, "{e}");
        }
        CliError::SpecFile(_, d) => {
            let _ = write!(stderr, "{d}");
        }
        _ => {}
    }
    let _ = writeln!(stderr, "tfrecord: error: {err}");
}

/// `tfrecord verify`.
pub(crate) fn verify(args: &VerifyArgs) -> CliResult<ExitCode> {
    let ty = RecordType::for_format(args.read.input_format.into(), args.sequence)?;
    let mut out = stdout();
    let mut failed = 0usize;
    let mut files = 0usize;
    for arg in &args.files {
        let sources = match resolve(arg) {
            Ok(s) => s,
            Err(e) => {
                files += 1;
                failed += 1;
                writeln!(out, "{}\tFAILED", arg.display())?;
                out.flush()?;
                report(&e);
                continue;
            }
        };
        for source in &sources {
            files += 1;
            let opts = reader_options(&args.read, source, true);
            let res = for_each_record_parallel(source, opts, args.threads.get(), |bytes, loc| {
                if args.decode {
                    ty.decode(bytes, loc)?;
                }
                Ok(())
            });
            match res {
                Ok(n) => {
                    let noun = if n == 1 { "record" } else { "records" };
                    writeln!(out, "{}\tOK\t{n} {noun}", source.name().display())?;
                }
                Err(e) if e.is_broken_pipe() => return Err(e),
                Err(e) => {
                    failed += 1;
                    writeln!(out, "{}\tFAILED", source.name().display())?;
                    out.flush()?;
                    report(&e);
                }
            }
        }
    }
    if files > 1 {
        if failed == 0 {
            writeln!(out, "all {files} files intact")?;
        } else {
            writeln!(out, "{failed} of {files} files FAILED")?;
        }
    }
    out.flush()?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The message of a JSON error, without the "invalid JSON record" prefix the library adds.
fn json_detail(e: &Error) -> String {
    match e.kind() {
        ErrorKind::Json { detail } => detail.clone(),
        _ => e.to_string(),
    }
}

/// serde_json's message without its "at line 1 column N" suffix (each line is parsed alone).
fn syntax_detail(e: &serde_json::Error) -> String {
    let mut s = e.to_string();
    if let Some(i) = s.rfind(" at line ") {
        s.truncate(i);
    }
    format!("column {}: not valid JSON: {s}", e.column())
}

/// Parses one JSON line as the record type and encodes it.
fn encode_json_line(ty: RecordType, line: &str) -> Result<Vec<u8>, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| syntax_detail(&e))?;
    let encoded = match ty {
        RecordType::Example => json::example_from_json(&value).map(|m| proto::encode_example(&m)),
        RecordType::SequenceExample => {
            json::sequence_example_from_json(&value).map(|m| proto::encode_sequence_example(&m))
        }
        RecordType::OfRecord => {
            json::ofrecord_from_json(&value).map(|m| proto::encode_ofrecord(&m))
        }
    };
    encoded.map_err(|e| json_detail(&e))
}

/// `tfrecord from-json`.
pub(crate) fn from_json(args: &FromJsonArgs) -> CliResult<ExitCode> {
    let ty = RecordType::for_format(args.write.encoding.output_format.into(), args.sequence)?;
    let mut sink = RecordSink::create(&args.write)?;
    for arg in &args.inputs {
        let source = if crate::input::is_dash(arg) {
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
        json_lines(&mut reader, &name, ty, &mut sink)?;
    }
    sink.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// Encodes every non-blank line of one JSON Lines input into the sink.
fn json_lines(
    reader: &mut dyn BufRead,
    name: &Path,
    ty: RecordType,
    sink: &mut RecordSink,
) -> CliResult<()> {
    let mut line = Vec::new();
    let mut lineno = 0u64;
    let mut record = 0u64;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::from(e).with_path(name))?;
        if n == 0 {
            return Ok(());
        }
        lineno += 1;
        let fail = |detail: String| -> CliError {
            Error::json(format!("line {lineno}: {detail}"))
                .with_path(name)
                .with_record(record)
                .into()
        };
        let mut bytes = &line[..];
        if lineno == 1 {
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        let text = std::str::from_utf8(bytes)
            .map_err(|e| fail(format!("not valid UTF-8 ({e})")))?
            .trim();
        if text.is_empty() {
            continue;
        }
        let encoded = encode_json_line(ty, text).map_err(fail)?;
        sink.write(&encoded)?;
        record += 1;
    }
}

/// `tfrecord convert`.
pub(crate) fn convert(args: &ConvertArgs) -> CliResult<ExitCode> {
    let from: Format = args.input_format.into();
    let to: Format = args.write.encoding.output_format.into();
    // Validates `--sequence` against both containers before anything is opened.
    let in_ty = RecordType::for_format(from, args.sequence)?;
    RecordType::for_format(to, args.sequence)?;
    let sources = resolve_all(&args.inputs)?;
    let in_flag = args.input_compression.map(Into::into);
    let mut sink = RecordSink::create(&args.write)?;
    for source in &sources {
        let opts = ReaderOptions::new()
            .format(from)
            .compression(source.compression(in_flag))
            .verify_data_crc(!args.no_verify_data_crc);
        for_each_record(source, opts, |bytes, loc| {
            if from == to {
                sink.write(bytes)?;
                return Ok(Flow::Continue);
            }
            let out = match in_ty.decode(bytes, loc)? {
                Decoded::Example(e) => proto::encode_ofrecord(&convert::example_to_ofrecord(&e)),
                Decoded::OfRecord(r) => {
                    let e: tensorflow::Example =
                        convert::ofrecord_to_example(&r, args.allow_lossy_double)
                            .map_err(|e| loc.apply(e))?;
                    proto::encode_example(&e)
                }
                Decoded::SequenceExample(_) => {
                    // Unreachable: `--sequence` with an OFRecord side was refused above.
                    return Err(CliError::Usage(
                        "OFRecord has no sequences; --sequence cannot be converted".into(),
                    ));
                }
            };
            sink.write(&out)?;
            Ok(Flow::Continue)
        })?;
    }
    sink.finish()?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tfrecord_core::Message as _;
    use tfrecord_core::proto::oneflow;

    #[test]
    fn json_line_errors_name_the_field() {
        let err = encode_json_line(
            RecordType::Example,
            r#"{"features": {"feature": {"x": {"int64List": {"value": ["y"]}}}}}"#,
        )
        .unwrap_err();
        assert!(err.contains("int64List"), "{err}");
        let err = encode_json_line(RecordType::Example, "{").unwrap_err();
        assert!(err.starts_with("column"), "{err}");
        assert!(!err.contains("at line"), "{err}");
        let ok = encode_json_line(RecordType::OfRecord, r#"{"feature": {}}"#).unwrap();
        assert!(oneflow::OfRecord::decode(&ok[..]).is_ok());
    }
}
