//! `tfrecord parse`: records to tensors with a TOML spec's features, as `tf.io.parse_example`
//! and `tf.io.parse_sequence_example` return them.

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;
use tfrecord_core::parse::{ExampleParser, RecordSpec, SequenceExampleParser, Tensors};
use tfrecord_core::proto::{bytes_keys, oneflow};
use tfrecord_core::{Error, Format};
use tfrecord_schema::ir::RecordKind;

use crate::batch::Batch;
use crate::cli::ParseArgs;
use crate::dataset;
use crate::error::{CliError, CliResult};
use crate::input::{Flow, Location, RecordType, Source, resolve_all};
use crate::spec::{pick_record, read_spec};
use crate::stdout::{Stdout, with_stdout};

/// The compiled parser of the chosen record.
enum Parser {
    Example(ExampleParser),
    Sequence(SequenceExampleParser),
}

/// One batch's tensors, which serialize to its JSON line: output name to tensor, or for a
/// SequenceExample record `{"context", "lengths", "sequence"}` (keys in order, as JSON objects
/// print them).
#[derive(Serialize)]
#[serde(untagged)]
enum Parsed {
    Example(Tensors),
    Sequence {
        context: Tensors,
        lengths: Tensors,
        sequence: Tensors,
    },
}

impl Parser {
    /// Parses one batch.
    fn parse(&self, batch: &[Vec<u8>]) -> Result<Parsed, Error> {
        match self {
            Parser::Example(p) => Ok(Parsed::Example(p.parse_parallel(batch, 0)?)),
            Parser::Sequence(p) => {
                let (context, sequence, lengths) = p.parse(batch)?;
                Ok(Parsed::Sequence {
                    context,
                    lengths,
                    sequence,
                })
            }
        }
    }
}

/// Parses and prints the batch (if it holds any records), then empties it.
fn flush(batch: &mut Batch<'_>, parser: &Parser, out: &mut Stdout) -> CliResult<()> {
    if batch.records().is_empty() {
        return Ok(());
    }
    let value = match parser.parse(batch.records()) {
        Ok(value) => value,
        Err(e) => {
            // A record that fails alone fails in the batch too, at its place or before: the
            // search ends at the record the batch's error names.
            let upto = e
                .record()
                .and_then(|r| usize::try_from(r).ok())
                .map_or(batch.records().len(), |r| r.saturating_add(1));
            let searched = &batch.records()[..upto.min(batch.records().len())];
            return Err(match first_failing(parser, searched) {
                Some((i, alone)) => batch.locate_at(i, alone),
                None => batch.locate(e),
            });
        }
    };
    // Written as it is serialized: the line's text is never held whole.
    serde_json::to_writer(&mut *out, &value).map_err(|e| CliError::Output(e.into()))?;
    writeln!(out)?;
    batch.clear();
    Ok(())
}

/// The first record of `records` that fails parsed alone (its index in the batch) and its
/// error; `None` when each parses alone. A batch's error may be about the batch as a whole (a
/// ragged tensor that cannot be built, counts summed over the batch) and name no record:
/// parsed one by one, the record it comes from is found, with counts of its own.
fn first_failing(parser: &Parser, records: &[Vec<u8>]) -> Option<(usize, Error)> {
    records
        .iter()
        .enumerate()
        .find_map(|(i, r)| Some((i, parser.parse(std::slice::from_ref(r)).err()?)))
}

/// `tfrecord parse`.
pub(crate) fn run(args: &ParseArgs) -> CliResult<ExitCode> {
    let schema = read_spec(&args.spec)?;
    let record = pick_record(&schema, &args.spec, args.record.as_deref())?;
    let in_spec = |e: Error| -> CliError { e.with_path(&args.spec).into() };
    let spec = RecordSpec::from_record(record).map_err(in_spec)?;
    let parser = if spec.kind == RecordKind::SequenceExample {
        if Format::from(args.read.input_format) == Format::OfRecord {
            return Err(CliError::Usage(format!(
                "record `{}` is a SequenceExample, which only TFRecord files hold (OFRecord \
                 has no sequences)",
                record.name
            )));
        }
        let (context, sequence) = spec.sequence_specs().map_err(in_spec)?;
        Parser::Sequence(SequenceExampleParser::new(&context, &sequence).map_err(in_spec)?)
    } else {
        Parser::Example(
            ExampleParser::new(&spec.example_spec().map_err(in_spec)?).map_err(in_spec)?,
        )
    };
    let from_of = Format::from(args.read.input_format) == Format::OfRecord;
    // Every key the spec reads (a ragged feature's value and partition keys, a sparse
    // feature's index keys).
    let read_keys: HashSet<&[u8]> = spec
        .features
        .iter()
        .flat_map(|f| f.kind.keys(&f.key))
        .map(str::as_bytes)
        .collect();
    let sources = resolve_all(&args.files)?;
    let files: Vec<PathBuf> = sources.iter().map(Source::name).collect();
    let size = if args.one_batch {
        usize::MAX
    } else {
        usize::try_from(args.batch_size).unwrap_or(usize::MAX)
    };
    let mut batch = Batch::new(&files, size);
    // Under a bad-record policy that skips, a record that is no message of its type is
    // skipped (and reported) as it is read, as the other commands skip it, rather than end
    // the batch it would have joined.
    let check = args.dataset.policy().skips().then(|| {
        let sequence = spec.kind == RecordKind::SequenceExample;
        RecordType::for_format(args.read.input_format.into(), sequence)
    });
    let check = check.transpose()?;
    with_stdout(|out| {
        let verify = !args.no_verify_data_crc;
        dataset::for_each(&sources, &args.read, verify, &args.dataset, |bytes, loc| {
            if let Some(ty) = &check {
                ty.check(bytes, loc)?;
            }
            if spec.deny_unknown_keys {
                deny_unknown(bytes, &spec, from_of, &read_keys, loc)?;
            }
            let full = if from_of {
                let example = ofrecord_as_example(bytes, &read_keys, args.allow_lossy_double, loc)?;
                batch.push(example, loc)
            } else {
                batch.push_copy(bytes, loc)
            };
            if full {
                flush(&mut batch, &parser, out)?;
            }
            Ok(Flow::Continue)
        })?;
        flush(&mut batch, &parser, out)?;
        Ok(ExitCode::SUCCESS)
    })
}

/// A record's first feature the spec does not read, as the error the typed readers give for
/// it under `deny_unknown_keys` (`tf.io.parse_example` itself passes over such features).
fn deny_unknown(
    bytes: &[u8],
    spec: &RecordSpec,
    from_of: bool,
    known: &HashSet<&[u8]>,
    loc: &Location<'_>,
) -> CliResult<()> {
    let located = |e: Error| -> CliError { loc.apply(e).into() };
    fn first_unknown<'k>(
        mut keys: impl Iterator<Item = &'k [u8]>,
        known: &HashSet<&[u8]>,
    ) -> Option<String> {
        keys.find(|k| !known.contains(k))
            .map(|k| String::from_utf8_lossy(k).into_owned())
    }
    let found = if from_of {
        let r = bytes_keys::OfRecord::decode(bytes).map_err(located)?;
        first_unknown(r.feature.keys().map(Vec::as_slice), known)
    } else if spec.kind == RecordKind::SequenceExample {
        let r = bytes_keys::SequenceExample::decode(bytes).map_err(located)?;
        first_unknown(r.keys(), known)
    } else {
        let r = bytes_keys::Example::decode(bytes).map_err(located)?;
        first_unknown(r.keys(), known)
    };
    let found = found.map(|key| {
        Error::feature(format!(
            "unknown feature (`{}` denies unknown keys)",
            spec.name
        ))
        .with_key(key)
    });
    found.map_or(Ok(()), |e| Err(located(e)))
}

/// An OFRecord payload as a serialized `tf.train.Example` (int32 lists widened to int64; keys
/// kept as bytes, as the parser reads them). A double list the spec reads (`read_keys`) is
/// narrowed to float32 with `allow_lossy_double` (TensorFlow's parser reads no float64, so a
/// `double` feature is read as float32), and is an error naming its key without; one the
/// spec does not read is left out.
fn ofrecord_as_example(
    bytes: &[u8],
    read_keys: &HashSet<&[u8]>,
    allow_lossy_double: bool,
    loc: &Location<'_>,
) -> CliResult<Vec<u8>> {
    let mut r = bytes_keys::OfRecord::decode(bytes).map_err(|e| loc.apply(e))?;
    r.feature.retain(|key, f| {
        !matches!(f.kind, Some(oneflow::feature::Kind::DoubleList(_)))
            || read_keys.contains(key.as_slice())
    });
    let e = r.to_example(allow_lossy_double).map_err(|e| loc.apply(e))?;
    Ok(e.encode())
}
