//! `tfrecord from-avro`, `from-records` and `from-images`: the importers of `tfrecord-import`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tfrecord_core::Format;
use tfrecord_core::parse::tensors_to_json;
use tfrecord_dataset::ShardSplit;
use tfrecord_import::avro::{self, AvroSpec, ReadOptions};
use tfrecord_import::images;
use tfrecord_import::records::{self, RecordFormat, RecordOptions, RecordSpec};
use tfrecord_import::{Error as ImportError, FeatureRow};

use crate::cli::{FromAvroArgs, FromImagesArgs, FromRecordsArgs, RecordFormatArg, WriteOpts};
use crate::dataset::Progress;
use crate::error::{CliError, CliResult};
use crate::output::{RecordSink, check_overwrite};
use crate::sharded::RecordOutput;
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
            let text = tfrecord_schema::toml::read_spec_file(p).map_err(|e| {
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

/// `tfrecord from-images`: one output file (or standard output), or shards of consecutive
/// records written through the sharded writer `convert` uses (an older set of the output's
/// name replaced as it replaces it); OneFlow's `part-*` files in the directory `-o` names for
/// OFRecord.
pub(crate) fn from_images(args: &FromImagesArgs) -> CliResult<ExitCode> {
    let format: Format = args.encoding.output_format.into();
    if is_dash(&args.output) && args.shards != 1 {
        return Err(CliError::Usage(
            "--shards needs a file output, not standard output".into(),
        ));
    }
    let folder = images::scan(&args.dir).map_err(|e| failed(&e))?;
    note_left_out(&folder.skipped, &folder.others);
    if folder.images.is_empty() {
        return Err(failed(
            &ImportError::new(format!(
                "no image files ({}) found in the folder or its class sub-folders",
                images::IMAGE_EXTENSIONS
            ))
            .with_path(&args.dir),
        ));
    }
    let order = images::ordered(&folder, !args.no_shuffle, args.seed);
    let parts = format == Format::OfRecord && !is_dash(&args.output);
    let split = (parts || args.shards > 1).then_some(ShardSplit::Even {
        shards: args.shards,
        total: order.len() as u64,
    });
    let write = WriteOpts {
        output: args.output.clone(),
        encoding: args.encoding,
    };
    let mut out = RecordOutput::create_split(&write, split, parts, args.force)?;
    let mut progress = Progress::items(order.len() as u64, "images");
    for entry in &order {
        let row = entry.read_row().map_err(|e| failed(&e))?;
        out.write(&row.encode(format).map_err(|e| failed(&e))?)?;
        progress.add_rows(1);
    }
    drop(progress);
    out.finish()?;
    let files = split.map_or(1, |_| args.shards);
    if !is_dash(&args.output) {
        let (images, classes) = (order.len(), folder.classes.len());
        let _ = writeln!(
            io::stderr().lock(),
            "tfrecord: {images} image{} ({classes} class{}) written to {files} file{}",
            if images == 1 { "" } else { "s" },
            if classes == 1 { "" } else { "es" },
            if files == 1 { "" } else { "s" }
        );
    }
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
