//! `tfrecord to-parquet` and `tfrecord from-parquet`: records to a Parquet file through the
//! `tfrecord-arrow` mapping, and the rows of Parquet files back to records.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc::SyncSender;

use tfrecord_arrow::arrow_array::RecordBatch;
use tfrecord_arrow::parquet::arrow::ArrowWriter;
use tfrecord_arrow::parquet::arrow::ProjectionMask;
use tfrecord_arrow::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use tfrecord_arrow::parquet::basic::{BrotliLevel, Compression, GzipLevel, ZstdLevel};
use tfrecord_arrow::parquet::file::properties::WriterProperties;
use tfrecord_arrow::{
    ArrowDecoder, ArrowEncoder, ArrowOptions, SPEC_METADATA_KEY, duplicate_column,
    record_from_schema,
};
use tfrecord_core::parse::DType;
use tfrecord_core::{Error, ErrorKind, Format, ListKind};
use tfrecord_schema::ir::{self, FeatureKind, Record, RecordKind};

use crate::batch::Batch;
use crate::cli::{CodecArg, FromParquetArgs, ToParquetArgs};
use crate::commands::infer;
use crate::dataset::{self, Progress, Report};
use crate::error::{CliError, CliResult};
use crate::input::{Flow, Location, RecordType, Source, refuse_feature_lists, resolve_all};
use crate::output::{check_overwrite, write_file};
use crate::sharded::RecordOutput;
use crate::spec::{pick_record, read_spec};
use crate::stdio::is_dash;

fn parquet_error(path: &std::path::Path, e: impl std::fmt::Display) -> CliError {
    // The file as a whole (its footer, its codec, a directory named as a file): no feature.
    // The Parquet reader's own messages mostly start "Parquet error: " already.
    let text = e.to_string();
    if text.starts_with("Parquet") {
        CliError::Failed(format!("{}: {text}", path.display()))
    } else {
        CliError::Failed(format!("{}: Parquet: {text}", path.display()))
    }
}

/// [`parquet_error`] for a failure reading row `row` (a damaged page, a codec's error): where
/// in the file it is.
fn rows_error(path: &std::path::Path, row: u64, e: impl std::fmt::Display) -> CliError {
    parquet_error(path, format!("{e} (reading row {row} of the file)"))
}

/// The record of `--spec` (and `--record`), if given.
fn spec_record(spec: Option<&PathBuf>, record: Option<&str>) -> CliResult<Option<Record>> {
    let Some(path) = spec else {
        return Ok(None);
    };
    let schema = read_spec(path)?;
    Ok(Some(pick_record(&schema, path, record)?.clone()))
}

/// `tfrecord to-parquet`.
pub(crate) fn to_parquet(args: &ToParquetArgs) -> CliResult<ExitCode> {
    let format = Format::from(args.read.input_format);
    let sources = resolve_all(&args.inputs)?;
    let verify = !args.no_verify_data_crc;
    check_overwrite(&args.output, args.force)?;
    let given = spec_record(args.spec.as_ref(), args.record.as_deref())?;
    if args.sequence
        && let Some(r) = &given
        && r.kind != RecordKind::SequenceExample
    {
        return Err(CliError::Usage(format!(
            "--sequence reads tensorflow.SequenceExample, but the spec's record `{}` is a \
             tf.train.Example: give a record with `kind = \"sequence_example\"` (its context \
             features in `context`, its feature lists in `sequence`)",
            r.name
        )));
    }
    // Without a spec, a first pass infers one (and reports the damage it skips).
    let inferred = given.is_none();
    let record = match given {
        Some(r) => r,
        None => {
            // Standard input, a FIFO or a device cannot be read twice (a FIFO opened again
            // would wait for a writer that is gone).
            let once = sources.iter().find(|s| match s {
                Source::Stdin => true,
                Source::File(p) => std::fs::metadata(p).is_ok_and(|m| !m.is_file()),
            });
            if let Some(once) = once {
                return Err(CliError::Usage(format!(
                    "to-parquet infers the spec in a first pass over the inputs, which {} \
                     cannot give twice (it is not a file): pass --spec",
                    once.name().display()
                )));
            }
            let ty = RecordType::for_format(format, args.sequence)?;
            let name = args
                .record
                .clone()
                .unwrap_or_else(|| infer::default_name(args.inputs.first().map(PathBuf::as_path)));
            let (inferred, not_utf8) = infer::infer_record(
                &sources,
                &args.read,
                verify,
                &args.dataset,
                (ty, args.max_features),
                &name,
            )?;
            // A feature the inferred spec leaves out that records hold would not reach the
            // file: say which, and stop, rather than write a file that looks complete. (A key
            // that never holds a list is only noted.)
            let mut left_out = Vec::new();
            for (key, why) in &inferred.notes {
                if inferred.lost.contains(key) {
                    left_out.push(format!("{key:?} ({why})"));
                } else {
                    eprintln!(
                        "tfrecord: note: feature {key:?} left out of the inferred spec: {why}"
                    );
                }
            }
            if !not_utf8.is_empty() {
                left_out.push(format!("{} key(s) that are not UTF-8", not_utf8.len()));
            }
            if !left_out.is_empty() {
                return Err(CliError::Core(Error::feature(format!(
                    "the spec inferred from the records leaves out {}, which records hold: \
                     their lists (even empty ones) would not reach the file: pass --spec with \
                     the features to write (`tfrecord infer` prints one to start from)",
                    left_out.join(", ")
                ))));
            }
            if inferred.records == 0 {
                // Some readers (DuckDB) refuse a Parquet file of no columns.
                eprintln!(
                    "tfrecord: note: no records to infer columns from, so the file has none; \
                     pass --spec for the spec's columns"
                );
            }
            inferred.record
        }
    };
    let in_spec = |e: Error| -> CliError {
        match &args.spec {
            Some(p) => e.with_path(p).into(),
            None => e.into(),
        }
    };
    let options = ArrowOptions::new().with_large_lists(args.large_lists);
    let decoder = ArrowDecoder::with_options(&record, format, options).map_err(in_spec)?;
    if let Some(name) = duplicate_column(&decoder.schema()) {
        return Err(in_spec(
            Error::feature(format!(
                "a context feature and a feature list would both be Parquet columns named \
                 `{name}`, which Parquet readers cannot tell apart: pass a spec (--spec) that \
                 leaves one of them out"
            ))
            .with_key(name.to_string()),
        ));
    }
    let codec = match args.codec {
        CodecArg::None => Compression::UNCOMPRESSED,
        CodecArg::Snappy => Compression::SNAPPY,
        CodecArg::Zstd => Compression::ZSTD(ZstdLevel::default()),
        CodecArg::Lz4 => Compression::LZ4_RAW,
        CodecArg::Gzip => Compression::GZIP(GzipLevel::default()),
        CodecArg::Brotli => Compression::BROTLI(BrotliLevel::default()),
    };
    let props = WriterProperties::builder()
        .set_compression(codec)
        .set_dictionary_enabled(decoder.schema().fields().len() <= DICTIONARY_COLUMNS)
        .set_max_row_group_row_count(Some(
            usize::try_from(args.row_group_size).unwrap_or(usize::MAX),
        ))
        .build();
    let files: Vec<PathBuf> = sources.iter().map(Source::name).collect();
    let check = args
        .dataset
        .policy()
        .skips()
        .then(|| RecordType::for_format(format, record.kind == RecordKind::SequenceExample))
        .transpose()?;
    // A SequenceExample read with an Example record (which reads its context as the features)
    // would lose its feature lists without a word: such a record is refused, as the commands
    // that decode records as Examples refuse it.
    let examples = (format == Format::TfRecord && record.kind == RecordKind::Example)
        .then_some(record.name.as_str());
    let out = &args.output;
    write_file(out, |file| {
        let mut writer = ArrowWriter::try_new(file, decoder.schema(), Some(props))
            .map_err(|e| parquet_error(out, e))?;
        // Parquet's writer (encoding, statistics, compression) runs on a thread of its own,
        // fed the RecordBatches this thread reads and decodes, so that the export goes at the
        // writer's pace rather than the sum of the two; at most two batches wait between them.
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<RecordBatch>(1);
            let writing = scope.spawn(move || -> CliResult<File> {
                for rb in rx {
                    writer.write(&rb).map_err(|e| parquet_error(out, e))?;
                    // The writer holds its row group, encoded, until it is flushed: a row
                    // group ends at `--row-group-size` rows or at this many bytes.
                    if writer.in_progress_size() >= ROW_GROUP_BYTES {
                        writer.flush().map_err(|e| parquet_error(out, e))?;
                    }
                }
                writer.into_inner().map_err(|e| parquet_error(out, e))
            });
            let read = read_batches(
                args,
                &sources,
                &decoder,
                &files,
                (check.as_ref(), examples),
                inferred,
                &tx,
            );
            drop(tx);
            let written = writing
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            // A writer that failed stopped the reading: its error is the one to tell.
            let file = written?;
            read?;
            Ok(file)
        })
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Reads the inputs of `to-parquet` in batches, decodes each into a RecordBatch and sends it
/// to the writer; an error when the writer has stopped (it tells its own error). Each record
/// is checked to be a message of its type when `check` says (under a policy that skips), and
/// to hold no feature lists when read as the Example record named `examples`.
fn read_batches(
    args: &ToParquetArgs,
    sources: &[Source],
    decoder: &ArrowDecoder,
    files: &[PathBuf],
    (check, examples): (Option<&RecordType>, Option<&str>),
    inferred: bool,
    tx: &SyncSender<RecordBatch>,
) -> CliResult<()> {
    // What to do about a SequenceExample read as the Example record, worded once.
    let examples = examples.map(|name| {
        format!(
            "the spec's record `{name}` reads a tf.train.Example: give a record with \
             `kind = \"sequence_example\"` to keep them"
        )
    });
    let size = usize::try_from(args.batch_size).unwrap_or(usize::MAX);
    let no_columns = decoder.schema().fields().is_empty();
    // Batches of large records end early: bounded memory, and no Arrow column over 2^31 bytes.
    let mut batch = Batch::new(files, size).with_max_bytes(BATCH_BYTES);
    let flush = |batch: &mut Batch<'_>| -> CliResult<()> {
        if batch.records().is_empty() {
            return Ok(());
        }
        if no_columns {
            return Err(CliError::Core(Error::feature(
                "the spec has no feature to write, and a Parquet file holds no rows \
                 without columns: the records would be lost",
            )));
        }
        let rb = decoder
            .decode(batch.records(), 0)
            .map_err(|e| batch.locate(e))?;
        tx.send(rb)
            .map_err(|_| CliError::Failed("the Parquet writer stopped".into()))?;
        batch.clear();
        Ok(())
    };
    let each = |bytes: &[u8], loc: &Location<'_>| {
        // Under a bad-record policy that skips, a record that is no message of its type
        // is skipped as it is read (as inference skipped it), not left to end a batch.
        if let Some(ty) = check {
            ty.check(bytes, loc)?;
        }
        if let Some(fix) = &examples {
            refuse_feature_lists(bytes, loc, fix)?;
        }
        if batch.push_copy(bytes, loc) {
            flush(&mut batch)?;
        }
        Ok(Flow::Continue)
    };
    // After a first pass (inference), which reported what it skipped, the same skips are
    // not reported again.
    let report = if inferred {
        Report::Quiet
    } else {
        Report::Lines
    };
    let policy = args.dataset.policy();
    dataset::read_with(
        policy,
        report,
        sources,
        &args.read,
        !args.no_verify_data_crc,
        &args.dataset,
        each,
    )?;
    flush(&mut batch)
}

/// The Parquet files the inputs stand for: a file itself; a directory's `*.parquet` files; a
/// glob pattern's matching files; in name order, hidden and `_` files (such as Spark's
/// `_SUCCESS`) left out of directories and patterns. A directory or pattern with no Parquet
/// file is an error, and so is a directory holding a directory (other than hidden and `_`
/// ones), as a partitioned table does: its rows would be left out.
fn parquet_inputs(inputs: &[PathBuf]) -> CliResult<Vec<PathBuf>> {
    let listed = |e: std::io::Error, at: &Path| CliError::Core(Error::from(e).with_path(at));
    let visible = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy())
            .is_some_and(|n| !n.starts_with('.') && !n.starts_with('_'))
    };
    let data = |p: &Path| visible(p) && p.is_file();
    let mut out = Vec::new();
    for input in inputs {
        if is_dash(input) {
            return Err(CliError::Usage(
                "from-parquet reads Parquet files, whose footer is at their end: standard \
                 input (`-`) is not supported; give a file"
                    .into(),
            ));
        }
        let text = input.to_string_lossy();
        let (found, what) = if input.is_dir() {
            let mut found = Vec::new();
            for entry in std::fs::read_dir(input).map_err(|e| listed(e, input))? {
                let path = entry.map_err(|e| listed(e, input))?.path();
                if path.extension().is_some_and(|x| x == "parquet") && data(&path) {
                    found.push(path);
                } else if visible(&path) && path.is_dir() {
                    // A partitioned table (`year=2020/`): its rows are in the subdirectories,
                    // and the partition values in their names, which no column holds.
                    return Err(CliError::Failed(format!(
                        "{}: a directory inside ({}): partitioned tables are not read; name \
                         the Parquet files, or a pattern of them (the partition values, in the \
                         directories' names, are not in the files)",
                        input.display(),
                        path.file_name().unwrap_or_default().to_string_lossy()
                    )));
                }
            }
            // One directory's names: in byte order, as a pattern's matches are.
            found.sort();
            (found, "the directory holds no *.parquet file")
        } else if !input.exists() && text.contains(['*', '?', '[']) {
            let mut found = Vec::new();
            for path in tfrecord_dataset::glob_paths(input)? {
                if data(&path) {
                    found.push(path);
                } else if visible(&path) && path.is_dir() {
                    return Err(CliError::Failed(format!(
                        "{text}: matches a directory ({}): partitioned tables are not read; \
                         name the Parquet files, or a pattern of them",
                        path.display()
                    )));
                }
            }
            (found, "the pattern matches no file")
        } else {
            out.push(input.clone());
            continue;
        };
        if found.is_empty() {
            return Err(CliError::Failed(format!(
                "{text}: no Parquet file ({what})"
            )));
        }
        out.extend(found);
    }
    Ok(out)
}

/// Says, once, when files lie in Hive-style partition directories (`year=2024/`): the
/// partition's value is in the directory's name, not in the file, so the records do not hold
/// it.
fn note_partitions(inputs: &[PathBuf]) {
    let mut keys: Vec<String> = inputs
        .iter()
        .flat_map(|p| p.parent().into_iter().flat_map(Path::components))
        .filter_map(|c| {
            let name = c.as_os_str().to_str()?;
            let (key, _) = name.split_once('=')?;
            (!key.is_empty()).then(|| key.to_string())
        })
        .collect();
    keys.sort();
    keys.dedup();
    if !keys.is_empty() {
        eprintln!(
            "tfrecord: note: the inputs lie in partition directories ({}=...): a partition's \
             value is in the directory's name, not in the files, so the records do not hold \
             {}; to keep it, write it as a column of the files",
            keys.join("=..., "),
            keys.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// The columns of `schema` that pandas wrote for an unnamed index (`__index_level_0__`, ...),
/// as its `pandas` metadata lists them in `index_columns`: their indices. A named index is a
/// column of its own name, data like any other, and kept.
fn pandas_index_columns(schema: &tfrecord_arrow::arrow_schema::Schema) -> Vec<usize> {
    let Some(listed) = schema
        .metadata()
        .get("pandas")
        .and_then(|m| serde_json::from_str::<serde_json::Value>(m).ok())
    else {
        return Vec::new();
    };
    let Some(columns) = listed.get("index_columns").and_then(|v| v.as_array()) else {
        return Vec::new();
    };
    columns
        .iter()
        .filter_map(serde_json::Value::as_str)
        .filter(|name| {
            name.strip_prefix("__index_level_")
                .and_then(|rest| rest.strip_suffix("__"))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|name| schema.index_of(name).ok())
        .collect()
}

/// The list a feature of `dtype` is stored in, in `format`.
fn stored_list(dtype: Option<DType>, format: Format) -> &'static str {
    dtype.map_or("list", |d| ListKind::holding(d, format).name())
}

/// The key of a field's values: a ragged feature's value key, else its own key (a sparse
/// feature's value key).
fn value_key<'a>(kind: &'a FeatureKind, key: &'a str) -> &'a str {
    match kind {
        FeatureKind::Ragged { value_key, .. } => value_key,
        FeatureKind::Steps { step } => value_key(step, key),
        _ => key,
    }
}

/// What the records written from each file hold under each feature key, to check that the
/// files agree: one spec must read every record written.
#[derive(Default)]
struct Keys {
    /// The kind of record, and the first file.
    kind: Option<(RecordKind, PathBuf)>,
    /// (feature list or not, key) to the list stored there, the column, and the file.
    lists: HashMap<(bool, String), (&'static str, String, PathBuf)>,
}

impl Keys {
    /// Adds the records of `path`, written by `record`; an error when they would hold a key in
    /// another list than an earlier file's records (as pyarrow's data sets refuse columns that
    /// do not convert), or be of another kind of record.
    fn add(&mut self, record: &Record, path: &Path, format: Format) -> CliResult<()> {
        match &self.kind {
            Some((kind, first)) if *kind != record.kind => {
                return Err(CliError::Failed(format!(
                    "{}: its rows are {:?}s where those of {} are {:?}s: one output cannot \
                     hold both",
                    path.display(),
                    record.kind,
                    first.display(),
                    kind
                )));
            }
            Some(_) => {}
            None => self.kind = Some((record.kind, path.to_path_buf())),
        }
        for f in record.fields.iter().filter(|f| !f.skip) {
            let values = value_key(&f.kind, &f.key);
            let list = f.kind.is_feature_list(record.kind);
            for key in f.kind.keys(&f.key) {
                // Sparse indices and ragged partitions are int64 lists.
                let stored = if key == values {
                    stored_list(f.dtype, format)
                } else {
                    "int64_list"
                };
                let entry = self.lists.entry((list, key.to_string()));
                let (there, column, first) =
                    entry.or_insert_with(|| (stored, f.name.clone(), path.to_path_buf()));
                if *there != stored {
                    return Err(CliError::Core(
                        Error::feature(format!(
                            "column `{}` writes feature {key:?} as {stored}, where column \
                             `{column}` of {} writes it as {there}: the records would disagree \
                             on the feature's type",
                            f.name,
                            first.display(),
                        ))
                        .with_path(path)
                        .with_key(key.to_string()),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Most rows in one batch read from a Parquet file.
const PARQUET_BATCH_ROWS: usize = 8192;

/// Rows in the first batch read from a Parquet file, before the size of a row is known.
const FIRST_BATCH_ROWS: usize = 64;

/// The bytes of values a batch holds, read from a Parquet file (as Arrow arrays) or from
/// records (their payloads, for `to-parquet`): a few batches are in flight at once.
const BATCH_BYTES: usize = 64 << 20;

/// The bytes of a row group `to-parquet` holds, encoded, before it is written out (a row
/// group also ends at `--row-group-size` rows).
const ROW_GROUP_BYTES: usize = 128 << 20;

/// The most columns a file is written with dictionary encoding: Parquet's writer sets up a
/// dictionary of about 70 KiB for each column, before any value, so a file of many columns
/// (an inferred spec of thousands of keys) is written with plain encoding instead.
const DICTIONARY_COLUMNS: usize = 1_000;

/// Rows of a Parquet file read as Arrow batches of about [`BATCH_BYTES`] of values (at most
/// [`PARQUET_BATCH_ROWS`] rows): the first of [`FIRST_BATCH_ROWS`] rows or fewer, as the
/// footer's sizes say, and the rest as the batches read so far measure a row. The footer's
/// sizes are of the encoded pages, which can be far smaller than the values (a dictionary's
/// repeated values). A batch that fails is read again in smaller ones, down to one row: a
/// batch of more than 2 GiB of binary values overflows Arrow's 32-bit offsets, and a damaged
/// row is named exactly.
struct RowReader<'a> {
    path: &'a Path,
    /// The next row to read, counted in the file.
    row: u64,
    end: u64,
    rows_per_batch: usize,
    /// The most bytes a row of the batches read so far took.
    row_bytes: usize,
    /// The batch size was set from measured rows once already.
    measured: bool,
    reader: tfrecord_arrow::parquet::arrow::arrow_reader::ParquetRecordBatchReader,
}

impl<'a> RowReader<'a> {
    /// Rows `first..first + count` of the file at `path`.
    fn open(path: &'a Path, first: u64, count: u64) -> CliResult<Self> {
        let builder = Self::builder(path)?;
        let per_row = builder
            .metadata()
            .row_groups()
            .iter()
            .filter_map(|g| {
                let rows = u64::try_from(g.num_rows()).ok().filter(|&n| n > 0)?;
                Some(
                    u64::try_from(g.total_byte_size())
                        .unwrap_or(0)
                        .div_ceil(rows),
                )
            })
            .max()
            .unwrap_or(1)
            .max(1);
        let rows_per_batch = usize::try_from(BATCH_BYTES as u64 / per_row)
            .unwrap_or(FIRST_BATCH_ROWS)
            .clamp(1, FIRST_BATCH_ROWS);
        let reader = Self::reader(path, builder, first, count, rows_per_batch)?;
        Ok(RowReader {
            path,
            row: first,
            end: first + count,
            rows_per_batch,
            row_bytes: 0,
            measured: false,
            reader,
        })
    }

    /// Sizes the batches after this one by the rows measured so far (`batch` the last read):
    /// larger once, from the first batches, and smaller whenever a batch took more than twice
    /// [`BATCH_BYTES`]. The reader is made again at the next row for a new size.
    fn resize(&mut self, batch: &RecordBatch) -> CliResult<()> {
        let rows = batch.num_rows().max(1);
        let bytes = batch.get_array_memory_size();
        self.row_bytes = self.row_bytes.max(bytes.div_ceil(rows)).max(1);
        let wanted = (BATCH_BYTES / self.row_bytes).clamp(1, PARQUET_BATCH_ROWS);
        let grow = !self.measured && wanted > self.rows_per_batch;
        let shrink = bytes > 2 * BATCH_BYTES && wanted < rows;
        if (grow || shrink) && self.row < self.end {
            self.measured = true;
            self.rows_per_batch = wanted;
            let builder = Self::builder(self.path)?;
            let count = self.end - self.row;
            self.reader = Self::reader(self.path, builder, self.row, count, wanted)?;
        }
        Ok(())
    }

    /// A reader of the file's data columns: pandas' unnamed index columns left out.
    fn builder(path: &Path) -> CliResult<ParquetRecordBatchReaderBuilder<File>> {
        let file = File::open(path).map_err(|e| CliError::from(Error::from(e).with_path(path)))?;
        let builder =
            ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| parquet_error(path, e))?;
        let index = pandas_index_columns(builder.schema());
        if index.is_empty() {
            return Ok(builder);
        }
        let keep = (0..builder.schema().fields().len()).filter(|i| !index.contains(i));
        let mask = ProjectionMask::roots(builder.parquet_schema(), keep);
        Ok(builder.with_projection(mask))
    }

    fn reader(
        path: &Path,
        builder: ParquetRecordBatchReaderBuilder<File>,
        first: u64,
        count: u64,
        rows_per_batch: usize,
    ) -> CliResult<tfrecord_arrow::parquet::arrow::arrow_reader::ParquetRecordBatchReader> {
        let (Ok(skip), Ok(count)) = (usize::try_from(first), usize::try_from(count)) else {
            return Err(parquet_error(path, "more rows than this machine can count"));
        };
        builder
            .with_batch_size(rows_per_batch)
            .with_offset(skip)
            .with_limit(count)
            .build()
            .map_err(|e| parquet_error(path, e))
    }

    /// The next batch and the file's row it starts at; `None` after the last row.
    fn next_batch(&mut self) -> CliResult<Option<(u64, RecordBatch)>> {
        loop {
            match self.reader.next() {
                None => return Ok(None),
                Some(Ok(batch)) => {
                    let at = self.row;
                    self.row += u64::try_from(batch.num_rows()).unwrap_or(u64::MAX);
                    self.resize(&batch)?;
                    return Ok(Some((at, batch)));
                }
                Some(Err(e)) if self.rows_per_batch == 1 => {
                    return Err(rows_error(self.path, self.row, e));
                }
                Some(Err(_)) => {
                    // Read again from the same row, in batches half as long.
                    self.rows_per_batch /= 2;
                    let builder = Self::builder(self.path)?;
                    let count = self.end - self.row;
                    self.reader =
                        Self::reader(self.path, builder, self.row, count, self.rows_per_batch)?;
                }
            }
        }
    }
}

/// Checks that the footer places every column chunk inside the file, which the Parquet reader
/// assumes (a negative offset or size is a panic there, not an error).
fn check_chunks(
    path: &Path,
    metadata: &tfrecord_arrow::parquet::file::metadata::ParquetMetaData,
    size: u64,
) -> CliResult<()> {
    for (g, group) in metadata.row_groups().iter().enumerate() {
        for chunk in group.columns() {
            let start = chunk
                .dictionary_page_offset()
                .unwrap_or_else(|| chunk.data_page_offset());
            let len = chunk.compressed_size();
            let inside = u64::try_from(start)
                .ok()
                .zip(u64::try_from(len).ok())
                .and_then(|(start, len)| start.checked_add(len))
                .is_some_and(|end| end <= size);
            if !inside {
                return Err(parquet_error(
                    path,
                    format!(
                        "a damaged footer: row group {g} places column `{}` at byte {start}, \
                         {len} bytes long, outside the file of {size} bytes",
                        chunk.column_path().string()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The spec each file's rows are written with: `given`, or the one in the file's metadata, or
/// one read off its column types; and its number of rows, from its footer.
fn file_record(path: &Path, given: Option<&Record>) -> CliResult<(Record, u64)> {
    let located = |e: Error| -> CliError { e.with_path(path).into() };
    let file = File::open(path).map_err(|e| located(e.into()))?;
    let size = file.metadata().map_err(|e| located(e.into()))?.len();
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| parquet_error(path, e))?;
    check_chunks(path, builder.metadata(), size)?;
    let rows = builder.metadata().file_metadata().num_rows();
    let rows = u64::try_from(rows).map_err(|_| parquet_error(path, format!("{rows} rows")))?;
    // pandas' unnamed index columns (`__index_level_0__`), which `pd.read_parquet` gives back
    // as the index, not as data, are left out of the records, with a note.
    let index = pandas_index_columns(builder.schema());
    for &i in &index {
        eprintln!(
            "tfrecord: note: {}: column `{}` is the pandas index (the file's pandas metadata \
             says so), not data: left out of the records",
            path.display(),
            builder.schema().field(i).name()
        );
    }
    if let Some(r) = given {
        return Ok((r.clone(), rows));
    }
    let keep: Vec<usize> = (0..builder.schema().fields().len())
        .filter(|i| !index.contains(i))
        .collect();
    let projected = builder
        .schema()
        .project(&keep)
        .map_err(|e| parquet_error(path, e))?;
    let schema = &projected;
    let stored = schema.metadata().contains_key(SPEC_METADATA_KEY);
    let record = record_from_schema(schema, "Record").map_err(|e| {
        // Tools that rename or select columns drop the metadata `to-parquet` wrote.
        match (stored, e.kind(), e.key()) {
            (false, ErrorKind::Feature { detail, .. }, Some(key)) => located(
                Error::feature(format!(
                    "{detail} (the file holds no `{SPEC_METADATA_KEY}` metadata to map its \
                     columns with; a column a spec can describe is read with --spec)"
                ))
                .with_key(key),
            ),
            _ => located(e),
        }
    })?;
    // Tools that select columns keep the metadata but not every column it describes.
    // A column is named by its feature's output name: a sparse feature's name, else its key.
    let column = |f: &ir::Field| match f.kind {
        FeatureKind::Sparse { .. } => f.name.clone(),
        _ => f.key.clone(),
    };
    if stored
        && let Some(name) = record
            .fields
            .iter()
            .filter(|f| !f.skip)
            .map(column)
            .find(|name| schema.column_with_name(name).is_none())
    {
        return Err(located(
            Error::feature(format!(
                "the file's `{SPEC_METADATA_KEY}` metadata has the feature `{name}`, but the \
                 file has no column `{name}` (were columns selected or renamed after the \
                 metadata was written?): give a spec of the columns it holds with --spec"
            ))
            .with_key(name),
        ));
    }
    Ok((record, rows))
}

/// `tfrecord from-parquet`.
pub(crate) fn from_parquet(args: &FromParquetArgs) -> CliResult<ExitCode> {
    let inputs = parquet_inputs(&args.inputs)?;
    note_partitions(&inputs);
    // Refused before any file is read when it exists (without --force).
    let mut sink = RecordOutput::create(&args.write, args.sharding, args.force)?;
    let format = Format::from(args.write.encoding.output_format);
    let given = spec_record(args.spec.as_ref(), args.record.as_deref())?;
    // Every file's spec first, checked against the others', before any row is written.
    let mut keys = Keys::default();
    let mut plan = Vec::new();
    for path in &inputs {
        let path = path.clone();
        let (mut record, rows) = file_record(&path, given.as_ref())?;
        keys.add(&record, &path, format)?;
        if args.allow_lossy_double {
            for f in &mut record.fields {
                f.lossy |= f.dtype == Some(DType::Double);
            }
        }
        if format == Format::TfRecord
            && let Some(f) = record.unmarked_double()
        {
            return Err(CliError::Core(
                Error::feature(format!(
                    "column `{}` holds float64 values, which a tf.train.Example stores as \
                     float: pass --allow-lossy-double to round them, or write OFRecord",
                    f.name
                ))
                .with_path(&path)
                .with_key(f.name.clone()),
            ));
        }
        let encoder =
            ArrowEncoder::new(&record, format).map_err(|e| CliError::from(e.with_path(&path)))?;
        plan.push((path, encoder, rows));
    }
    // The rows the flags select, numbered over all inputs in order.
    let total = plan.iter().map(|(_, _, n)| n).sum();
    let (start, end) = args.rows.range(total);
    let mut progress = Progress::rows(end - start);
    let mut records: Vec<Vec<u8>> = Vec::new();
    let mut first = 0u64; // the first row of the file, over all inputs
    for (path, encoder, rows) in &plan {
        let (from, to) = (start.max(first), end.min(first + rows));
        first += rows;
        if from >= to {
            continue;
        }
        let located = |e: Error| -> CliError { e.with_path(path).into() };
        // The file's rows `offset..offset + count`.
        let offset = from + rows - first;
        let mut reader = RowReader::open(path, offset, to - from)?;
        while let Some((row, batch)) = reader.next_batch()? {
            records.clear();
            encoder
                .encode(&batch, row, |bytes| {
                    records.push(bytes.to_vec());
                    Ok(())
                })
                .map_err(located)?;
            for r in &records {
                sink.write(r)?;
            }
            progress.add_rows(u64::try_from(batch.num_rows()).unwrap_or(u64::MAX));
        }
    }
    sink.finish()?;
    progress.finish();
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tfrecord_arrow::parquet::file::metadata::{
        ColumnChunkMetaData, FileMetaData, ParquetMetaData, RowGroupMetaData,
    };
    use tfrecord_arrow::parquet::schema::parser::parse_message_type;
    use tfrecord_arrow::parquet::schema::types::SchemaDescriptor;

    use tfrecord_arrow::arrow_array::{BinaryArray, RecordBatch};
    use tfrecord_arrow::arrow_schema::{DataType, Field, Schema};
    use tfrecord_arrow::parquet::arrow::ArrowWriter;

    use super::{BATCH_BYTES, FIRST_BATCH_ROWS, RowReader, check_chunks};

    /// A column of one value repeated, dictionary-encoded as the Parquet writer does by
    /// default, is a few KiB in the file and hundreds of MiB once read: the batches are sized by
    /// the rows read, not by the footer's sizes of the encoded pages, and every row comes back.
    #[test]
    fn batches_are_sized_by_the_rows_read_not_the_encoded_pages() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.parquet");
        let value = vec![7u8; 256 << 10];
        let rows = 1200;
        let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Binary, false)]));
        let column = BinaryArray::from_iter_values(std::iter::repeat_n(&value[..], rows));
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(column)]).unwrap();
        let mut writer =
            ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        assert!(
            std::fs::metadata(&path).unwrap().len() < 1 << 20,
            "dictionary-encoded"
        );
        let count = u64::try_from(rows).unwrap();
        let mut reader = RowReader::open(&path, 0, count).unwrap();
        let mut sizes = Vec::new();
        let mut next = 0;
        while let Some((at, batch)) = reader.next_batch().unwrap() {
            assert_eq!(at, next);
            next += u64::try_from(batch.num_rows()).unwrap();
            assert!(
                batch.get_array_memory_size() <= 2 * BATCH_BYTES,
                "{sizes:?}"
            );
            sizes.push(batch.num_rows());
        }
        assert_eq!(next, count);
        assert!(sizes[0] <= FIRST_BATCH_ROWS, "{sizes:?}");
        // About 256 rows of 256 KiB in 64 MiB, then what is left.
        let middle = &sizes[1..sizes.len() - 1];
        assert!(!middle.is_empty(), "{sizes:?}");
        assert!(
            middle.iter().all(|&n| (200..=256).contains(&n)),
            "{sizes:?}"
        );
    }

    /// A footer of one row group whose column chunk starts at `dictionary` (else `data`) and is
    /// `size` bytes long.
    fn footer(data: i64, dictionary: Option<i64>, size: i64) -> ParquetMetaData {
        let schema = parse_message_type("message m { required int64 a; }").unwrap();
        let schema = Arc::new(SchemaDescriptor::new(Arc::new(schema)));
        let chunk = ColumnChunkMetaData::builder(schema.column(0))
            .set_data_page_offset(data)
            .set_dictionary_page_offset(dictionary)
            .set_total_compressed_size(size)
            .build()
            .unwrap();
        let group = RowGroupMetaData::builder(schema.clone())
            .set_num_rows(1)
            .set_column_metadata(vec![chunk])
            .build()
            .unwrap();
        ParquetMetaData::new(
            FileMetaData::new(1, 1, None, None, schema, None),
            vec![group],
        )
    }

    /// A column chunk the footer places outside the file is an error naming it, where the
    /// Parquet reader would panic ("column start and length should not be negative") or fail
    /// with an I/O error naming nothing.
    #[test]
    fn a_footer_placing_a_chunk_outside_the_file_is_an_error() {
        let path = std::path::Path::new("f.parquet");
        assert!(check_chunks(path, &footer(4, None, 100), 700).is_ok());
        for (data, dictionary, size) in [
            (4, None, -100),
            (-4, None, 100),
            (4, Some(-1), 100),
            (4, None, 697),
            (4, Some(1 << 62), 100),
        ] {
            let err = check_chunks(path, &footer(data, dictionary, size), 700)
                .unwrap_err()
                .to_string();
            assert!(err.contains("f.parquet"), "{err}");
            assert!(err.contains("row group 0 places column `a`"), "{err}");
            assert!(err.contains("outside the file of 700 bytes"), "{err}");
        }
    }
}
