//! `tfrecord from-avro`, `from-records` and `from-images`: the importers of `tfrecord-import`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tfrecord_core::parse::tensors_to_json;
use tfrecord_core::{Compression, Format};
use tfrecord_dataset::ShardNaming;
use tfrecord_import::avro::{self, AvroSpec, ReadOptions};
use tfrecord_import::images::{self, ImageOptions};
use tfrecord_import::records::{self, RecordFormat, RecordOptions, RecordSpec};
use tfrecord_import::{Error as ImportError, FeatureRow};

use crate::cli::{FromAvroArgs, FromImagesArgs, FromRecordsArgs, RecordFormatArg, WriteOpts};
use crate::error::{CliError, CliResult, other_shard_set};
use crate::output::{RecordSink, check_overwrite, create_dir, note_removed};
use crate::spec::{pick_record, read_spec};
use crate::stdio::is_dash;
use crate::stdout::with_stdout;

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
        match self.sink.write(&row.encode(self.format)?) {
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

/// A `double` feature not marked `lossy` cannot be written into a `tf.train.Example`, which
/// holds floats: a spec of the OFRecord dialect (where doubles are kept) read into TFRecord
/// output would round them without a word.
fn refuse_rounding(
    record: &tfrecord_schema::ir::Record,
    spec: &Path,
    format: Format,
) -> CliResult<()> {
    match (format, record.unmarked_double()) {
        (Format::TfRecord, Some(f)) => Err(CliError::Failed(format!(
            "{}: feature `{}` is a `double`, which a tf.train.Example stores as float: mark it \
             `lossy = true` to round it, or write OFRecord (--output-format ofrecord)",
            spec.display(),
            f.name
        ))),
        _ => Ok(()),
    }
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
    check_overwrite(output, args.force)?;
    let opts = WriteOpts {
        output: output.clone(),
        encoding: args.encoding,
    };
    refuse_rounding(&record, &args.spec, args.encoding.output_format.into())?;
    // The records written are read back with the same spec (`parse --spec`): a spec that
    // `parse` refuses would write records that no spec reads as they were.
    tfrecord_core::parse::RecordSpec::from_record(&record)
        .and_then(|s| s.example_spec())
        .map_err(|e| {
            CliError::Failed(format!(
                "{}: the records would not read back with this spec, which `parse` refuses: {e} \
                 (--tensors prints the tensors of any spec)",
                args.spec.display()
            ))
        })?;
    for (name, dims) in spec.flattened() {
        warn(
            &ImportError::new(format!(
                "its key expression has {dims} dimensions, and a record holds one flat list per \
             feature: the values are written in traversal order, and read back without their \
             nesting (--tensors keeps it)"
            ))
            .with_feature(name.to_string()),
        );
    }
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
    check_overwrite(&args.write.output, args.force)?;
    let spec = match &args.spec {
        Some(p) => {
            let record = spec_record(p, args.record.as_deref())?;
            refuse_rounding(&record, p, args.write.encoding.output_format.into())?;
            Some(RecordSpec::from_record(&record).map_err(|e| failed(&e.with_path(p)))?)
        }
        None => None,
    };
    let delimiter = match args.delimiter {
        // One byte of UTF-8: an ASCII character (`é` is U+00E9 but two bytes in the file),
        // and not one CSV gives another meaning (Python's csv module refuses the quote).
        Some(c @ ('"' | '\n' | '\r')) => {
            return Err(CliError::Usage(format!(
                "the delimiter {c:?} is CSV's quote or a line end"
            )));
        }
        Some(c) if c.is_ascii() => Some(c as u8),
        Some(c) => {
            return Err(CliError::Usage(format!(
                "the delimiter {c:?} is not an ASCII character (the CSV reader splits on one byte)"
            )));
        }
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

/// Refuses, without `--force`, to write where outputs of `from-images` already are: the output
/// file itself (one TFRecord file), or any file of a shard set of its name (`--shards N`, of
/// any count; an OFRecord directory's `part-*` files), which the new files would replace or be
/// mixed with. Makes the output's directory when missing. Returns the existing files of shard
/// sets of the output's name, which the new set replaces (those it does not write over are
/// removed once it is written).
///
/// # Errors
/// An existing output without `--force`; a directory where the one output file goes; a
/// directory that cannot be made or listed.
fn check_image_outputs(
    args: &FromImagesArgs,
    shards: usize,
    format: Format,
) -> CliResult<Vec<PathBuf>> {
    let out = &args.output;
    let naming = match (format, shards) {
        (Format::OfRecord, _) => ShardNaming::OneFlow(out.clone()),
        (_, 1) => {
            check_overwrite(out, args.force)?;
            if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
                create_dir(dir).map_err(|e| tfrecord_core::Error::from(e).with_path(out))?;
            }
            return Ok(Vec::new());
        }
        _ => ShardNaming::TensorFlow(out.clone()),
    };
    let mut existing = naming.existing()?;
    for path in images::shard_paths(out, shards, format) {
        if path.is_file() && !existing.contains(&path) {
            existing.push(path);
        }
    }
    if let Some(first) = existing.first()
        && !args.force
    {
        return Err(CliError::Failed(other_shard_set(first)));
    }
    let dir = match &naming {
        ShardNaming::OneFlow(dir) => Some(dir.as_path()),
        ShardNaming::TensorFlow(base) => base.parent().filter(|d| !d.as_os_str().is_empty()),
    };
    if let Some(dir) = dir {
        create_dir(dir).map_err(|e| tfrecord_core::Error::from(e).with_path(out))?;
    }
    Ok(existing)
}

/// `tfrecord from-images`.
pub(crate) fn from_images(args: &FromImagesArgs) -> CliResult<ExitCode> {
    let format: Format = args.encoding.output_format.into();
    let shards = usize::try_from(args.shards).unwrap_or(usize::MAX);
    if is_dash(&args.output) {
        if shards != 1 {
            return Err(CliError::Usage(
                "--shards needs a file output, not standard output".into(),
            ));
        }
        let folder = images::scan(&args.dir).map_err(|e| failed(&e))?;
        note_left_out(&folder.skipped, &folder.others);
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
    let stale = check_image_outputs(args, shards, format)?;
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
    note_left_out(&summary.skipped, &summary.others);
    let mut removed = Vec::new();
    for old in stale {
        if !summary
            .files
            .iter()
            .any(|(f, _)| f.file_name() == old.file_name())
        {
            std::fs::remove_file(&old)
                .map_err(|e| tfrecord_core::Error::from(e).with_path(&old))?;
            removed.push(old);
        }
    }
    note_removed(&removed);
    let _ = writeln!(
        io::stderr().lock(),
        "tfrecord: {} image{} ({} class{}) written to {} file{}",
        summary.records(),
        if summary.records() == 1 { "" } else { "s" },
        summary.classes.len(),
        if summary.classes.len() == 1 { "" } else { "es" },
        summary.files.len(),
        if summary.files.len() == 1 { "" } else { "s" }
    );
    Ok(ExitCode::SUCCESS)
}

/// Warns of each image left out beside class folders, and notes the files left out because
/// they are not images by their extension.
fn note_left_out(skipped: &[PathBuf], others: &[PathBuf]) {
    for p in skipped {
        warn(&ImportError::new("not in a class folder: skipped").with_path(p));
    }
    if let Some(first) = others.first() {
        let n = others.len();
        let _ = writeln!(
            io::stderr().lock(),
            "tfrecord: note: {n} file{} left out, not {} by {} extension ({}), such as {}",
            if n == 1 { "" } else { "s" },
            if n == 1 { "an image" } else { "images" },
            if n == 1 { "its" } else { "their" },
            images::IMAGE_EXTENSIONS,
            first.display()
        );
    }
}
