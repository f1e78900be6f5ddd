//! `tfrecord from-avro`, `from-records` and `from-images`: the importers of `tfrecord-import`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use tfrecord_core::parse::tensors_to_json;
use tfrecord_core::{Compression, Format};
use tfrecord_import::avro::{self, AvroSpec, ReadOptions};
use tfrecord_import::images::{self, ImageOptions};
use tfrecord_import::records::{self, RecordFormat, RecordOptions, RecordSpec};
use tfrecord_import::{Error as ImportError, FeatureRow};

use crate::cli::{Encoding, WriteOpts};
use crate::commands::with_stdout;
use crate::error::{CliError, CliResult};
use crate::output::RecordSink;
use crate::parse::{pick_record, read_spec};

/// Flags of `from-avro`.
#[derive(Debug, Args)]
pub(crate) struct FromAvroArgs {
    /// Avro object container files (any codec: null, deflate, snappy, zstandard, bzip2, xz), or
    /// `-` for standard input.
    #[arg(value_name = "IN", required = true)]
    pub(crate) inputs: Vec<PathBuf>,
    /// The TOML spec: each feature's `source` is its key expression (else its name).
    #[arg(long, value_name = "SPEC.toml")]
    pub(crate) spec: PathBuf,
    /// The record of the spec to use [default: the spec's only record].
    #[arg(long, value_name = "NAME")]
    pub(crate) record: Option<String>,
    /// Read the files with this reader schema (`.avsc`): Avro schema resolution projects
    /// fields, promotes types (`int` to `long`, `float` to `double`) and fills new fields'
    /// defaults [default: each file's writer schema].
    #[arg(long, value_name = "SCHEMA.avsc")]
    pub(crate) reader_schema: Option<PathBuf>,
    /// Print the batched tensors (one JSON object per batch, as `parse` prints them) instead of
    /// writing records.
    #[arg(long, conflicts_with = "output")]
    pub(crate) tensors: bool,
    /// With `--tensors`: records per batch; the last batch may be shorter [default: all
    /// records in one batch].
    #[arg(long, value_name = "N", requires = "tensors", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) batch_size: Option<u64>,
    /// Output file, or `-` for standard output (required unless `--tensors`).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub(crate) output: Option<PathBuf>,
    /// Format, compression and level.
    #[command(flatten)]
    pub(crate) encoding: Encoding,
}

/// The input format of `from-records`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum RecordFormatArg {
    /// JSON Lines: one JSON object per line.
    #[value(alias = "json", alias = "ndjson")]
    Jsonl,
    /// Comma-separated values with a header row.
    Csv,
}

/// Flags of `from-records`.
#[derive(Debug, Args)]
pub(crate) struct FromRecordsArgs {
    /// A JSON Lines or CSV file, or `-` for standard input.
    #[arg(value_name = "IN", default_value = "-")]
    pub(crate) input: PathBuf,
    /// The input format [default: from the file name (`.csv`, `.tsv`: csv), else jsonl].
    #[arg(long, value_enum, ignore_case = true)]
    pub(crate) format: Option<RecordFormatArg>,
    /// A TOML spec forcing the dtype (and shape, default) of some fields: each feature reads
    /// the field its `source` names (`a/b` for nested objects), else its key.
    #[arg(long, value_name = "SPEC.toml")]
    pub(crate) spec: Option<PathBuf>,
    /// The record of the spec to use [default: the spec's only record].
    #[arg(long, value_name = "NAME", requires = "spec")]
    pub(crate) record: Option<String>,
    /// Leave out fields that cannot be mapped (with a warning on standard error) instead of
    /// failing.
    #[arg(long)]
    pub(crate) skip_unmappable: bool,
    /// The CSV delimiter [default: `,`; a tab for `.tsv`].
    #[arg(long, value_name = "CHAR")]
    pub(crate) delimiter: Option<char>,
    /// Output file, format and compression.
    #[command(flatten)]
    pub(crate) write: WriteOpts,
}

/// Flags of `from-images`.
#[derive(Debug, Args)]
pub(crate) struct FromImagesArgs {
    /// The folder: one sub-folder per class (`flower_photos/daisy/*.jpg`), or images only.
    #[arg(value_name = "DIR")]
    pub(crate) dir: PathBuf,
    /// The output file (the shard name prefix with `--shards`), a directory for OFRecord
    /// `part-NNNNN` files, or `-` for standard output (one shard).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub(crate) output: PathBuf,
    /// Split the records over this many files: `prefix-00000-of-00004.tfrecord`, ...
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub(crate) shards: u64,
    /// The shuffle seed (the same seed gives the same order everywhere).
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub(crate) seed: u64,
    /// Keep the images in name order instead of shuffling them.
    #[arg(long)]
    pub(crate) no_shuffle: bool,
    /// Format (TFRecord files, or OFRecord `part-NNNNN` files in the directory OUT),
    /// compression and level.
    #[command(flatten)]
    pub(crate) encoding: Encoding,
}

fn failed(e: &ImportError) -> CliError {
    CliError::Failed(e.to_string())
}

fn warn(e: &ImportError) {
    let _ = writeln!(io::stderr().lock(), "tfrecord: warning: {e}");
}

/// Writes rows to the `-o` output; the first output error is kept to be returned as is.
struct RowSink {
    sink: RecordSink,
    format: Format,
    error: Option<CliError>,
}

impl RowSink {
    fn create(opts: &WriteOpts) -> CliResult<Self> {
        Ok(RowSink {
            sink: RecordSink::create(opts)?,
            format: opts.encoding.output_format.into(),
            error: None,
        })
    }

    fn write(&mut self, row: &FeatureRow) -> Result<(), ImportError> {
        match self.sink.write(&row.encode(self.format)) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.error = Some(e);
                Err(ImportError::new("writing the output failed"))
            }
        }
    }

    /// The output error if there was one, else `result`'s error.
    fn check<T>(&mut self, result: Result<T, ImportError>) -> CliResult<T> {
        match (self.error.take(), result) {
            (Some(e), _) => Err(e),
            (None, r) => r.map_err(|e| failed(&e)),
        }
    }
}

fn spec_record(path: &Path, name: Option<&str>) -> CliResult<tfrecord_schema::ir::Record> {
    let schema = read_spec(path)?;
    Ok(pick_record(&schema, path, name)?.clone())
}

/// `tfrecord from-avro`.
pub(crate) fn from_avro(args: &FromAvroArgs) -> CliResult<ExitCode> {
    let record = spec_record(&args.spec, args.record.as_deref())?;
    let spec = AvroSpec::from_record(&record).map_err(|e| failed(&e.with_path(&args.spec)))?;
    let reader_schema = match &args.reader_schema {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| {
                CliError::Failed(format!("{}: cannot read the schema: {e}", p.display()))
            })?;
            Some(avro::parse_schema(&text).map_err(|e| failed(&e.with_path(p)))?)
        }
        None => None,
    };
    if args.tensors {
        let batch = args
            .batch_size
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        return with_stdout(|out| {
            let mut out_err: Option<CliError> = None;
            let opts = ReadOptions {
                reader_schema: reader_schema.as_ref(),
                batch_size: batch,
                progress: true,
            };
            let result = avro::read_tensors(&args.inputs, &spec, &opts, |tensors| {
                let line = serde_json::to_string(&tensors_to_json(&tensors))
                    .map_err(|e| ImportError::new(e.to_string()))?;
                writeln!(out, "{line}").map_err(|e| {
                    out_err = Some(CliError::Output(e));
                    ImportError::new("writing the output failed")
                })
            });
            if let Some(e) = out_err {
                return Err(e);
            }
            result.map_err(|e| failed(&e))?;
            Ok(ExitCode::SUCCESS)
        });
    }
    let Some(output) = &args.output else {
        return Err(CliError::Usage(
            "from-avro needs -o OUT (or --tensors to print tensors)".into(),
        ));
    };
    let opts = WriteOpts {
        output: output.clone(),
        encoding: args.encoding,
    };
    let mut sink = RowSink::create(&opts)?;
    let read = ReadOptions {
        reader_schema: reader_schema.as_ref(),
        batch_size: None,
        progress: true,
    };
    let result = avro::read_rows(&args.inputs, &spec, &read, |row| sink.write(&row));
    sink.check(result)?;
    sink.sink.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// `tfrecord from-records`.
pub(crate) fn from_records(args: &FromRecordsArgs) -> CliResult<ExitCode> {
    let spec = match &args.spec {
        Some(p) => {
            let record = spec_record(p, args.record.as_deref())?;
            Some(RecordSpec::from_record(&record).map_err(|e| failed(&e.with_path(p)))?)
        }
        None => None,
    };
    let delimiter = match args.delimiter {
        Some(c) => Some(u8::try_from(c).map_err(|_| {
            CliError::Usage(format!(
                "the delimiter {c:?} is not a single-byte character"
            ))
        })?),
        None => None,
    };
    let opts = RecordOptions {
        format: args.format.map(|f| match f {
            RecordFormatArg::Csv => RecordFormat::Csv,
            RecordFormatArg::Jsonl => RecordFormat::JsonLines,
        }),
        spec,
        skip_unmappable: args.skip_unmappable,
        delimiter,
        progress: true,
    };
    let mut sink = RowSink::create(&args.write)?;
    let result = records::import_records(&args.input, &opts, warn, |row| sink.write(&row));
    sink.check(result)?;
    sink.sink.finish()?;
    Ok(ExitCode::SUCCESS)
}

/// `tfrecord from-images`.
pub(crate) fn from_images(args: &FromImagesArgs) -> CliResult<ExitCode> {
    let format: Format = args.encoding.output_format.into();
    let shards = usize::try_from(args.shards).unwrap_or(usize::MAX);
    if crate::input::is_dash(&args.output) {
        if shards != 1 {
            return Err(CliError::Usage(
                "--shards needs a file output, not standard output".into(),
            ));
        }
        let folder = images::scan(&args.dir).map_err(|e| failed(&e))?;
        for p in &folder.skipped {
            warn(&ImportError::new("not in a class folder: skipped").with_path(p));
        }
        let opts = WriteOpts {
            output: args.output.clone(),
            encoding: args.encoding,
        };
        let mut sink = RowSink::create(&opts)?;
        for entry in images::ordered(&folder, !args.no_shuffle, args.seed) {
            let row = entry.read_row().map_err(|e| failed(&e));
            let written = row.and_then(|row| {
                let r = sink.write(&row);
                sink.check(r)
            });
            written?;
        }
        sink.sink.finish()?;
        return Ok(ExitCode::SUCCESS);
    }
    let opts = ImageOptions {
        shuffle: !args.no_shuffle,
        seed: args.seed,
        shards,
        format,
        compression: args.encoding.compression.map(Compression::from),
        level: args.encoding.level,
        progress: true,
    };
    let summary = images::write_images(&args.dir, &args.output, &opts).map_err(|e| failed(&e))?;
    for p in &summary.skipped {
        warn(&ImportError::new("not in a class folder: skipped").with_path(p));
    }
    let _ = writeln!(
        io::stderr().lock(),
        "tfrecord: {} images ({} classes) written to {} file{}",
        summary.records(),
        summary.classes.len(),
        summary.files.len(),
        if summary.files.len() == 1 { "" } else { "s" }
    );
    Ok(ExitCode::SUCCESS)
}
