//! Reading Avro files: records in file order over a list of files, batched into tensors or
//! one output record each, and the schema and in-memory helpers.

use std::path::PathBuf;

use apache_avro::Schema;
use apache_avro::types::Value;
use tfrecord_core::parse::Tensors;

use super::file::AvroFile;
use super::spec::AvroSpec;
use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::row::FeatureRow;

/// How [`read_tensors`] and [`read_rows`] read Avro files.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOptions<'s> {
    /// Resolve every record to this schema [default: each file's writer schema].
    pub reader_schema: Option<&'s Schema>,
    /// Records per batch for [`read_tensors`]; the last batch may be shorter [default: all
    /// records in one batch].
    pub batch_size: Option<usize>,
    /// Show a progress bar over the input bytes on standard error (only when it is a terminal).
    pub progress: bool,
}

/// Calls `f` with each record of each file, its file index and its record index in the file.
fn for_each_record(
    inputs: &[PathBuf],
    opts: &ReadOptions<'_>,
    mut f: impl FnMut(Value, usize, u64) -> Result<()>,
) -> Result<u64> {
    let total = inputs
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum::<u64>();
    let progress = Progress::new(opts.progress, Some(total), "records");
    let mut done = 0u64;
    let mut count = 0u64;
    for (fi, path) in inputs.iter().enumerate() {
        let mut file = AvroFile::open(path, opts.reader_schema)?;
        let mut ri = 0u64;
        while let Some(v) = file.next() {
            f(v?, fi, ri)?;
            ri += 1;
            count += 1;
            progress.set(done + file.bytes_read());
        }
        done += file.bytes_read();
    }
    progress.finish();
    Ok(count)
}

/// Reads Avro files and calls `sink` with the tensors of each batch of `opts.batch_size`
/// records (consecutive records over all files in order). Returns the number of records read.
///
/// # Errors
/// What [`AvroFile::open`] and [`AvroSpec::parse_batch`] report, located at the file and the
/// record index in it, and the errors of `sink`.
pub fn read_tensors(
    inputs: &[PathBuf],
    spec: &AvroSpec,
    opts: &ReadOptions<'_>,
    mut sink: impl FnMut(Tensors) -> Result<()>,
) -> Result<u64> {
    let size = opts.batch_size.unwrap_or(usize::MAX).max(1);
    let mut batch: Vec<Value> = Vec::new();
    let mut origins: Vec<(usize, u64)> = Vec::new();
    let flush = |batch: &mut Vec<Value>,
                 origins: &mut Vec<(usize, u64)>,
                 sink: &mut dyn FnMut(Tensors) -> Result<()>|
     -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let t = spec.parse_batch(batch).map_err(|e| {
            e.map_record(|r| {
                let (file, index) = usize::try_from(r)
                    .ok()
                    .and_then(|r| origins.get(r))
                    .copied()
                    .unwrap_or((0, r));
                (inputs.get(file).cloned(), index)
            })
        })?;
        batch.clear();
        origins.clear();
        sink(t)
    };
    let count = for_each_record(inputs, opts, |v, fi, ri| {
        batch.push(v);
        origins.push((fi, ri));
        if batch.len() >= size {
            flush(&mut batch, &mut origins, &mut sink)?;
        }
        Ok(())
    })?;
    flush(&mut batch, &mut origins, &mut sink)?;
    Ok(count)
}

/// Reads Avro files and calls `sink` with one output record per Avro record, in order. Returns
/// the number of records.
///
/// # Errors
/// As [`read_tensors`], for [`AvroSpec::row`]; an error `sink` returns, located at the record
/// (file and index) unless it names a record already.
pub fn read_rows(
    inputs: &[PathBuf],
    spec: &AvroSpec,
    opts: &ReadOptions<'_>,
    mut sink: impl FnMut(FeatureRow) -> Result<()>,
) -> Result<u64> {
    for_each_record(inputs, opts, |v, fi, ri| {
        let path = inputs.get(fi).cloned().unwrap_or_default();
        let row = spec
            .row(&v)
            .map_err(|e| e.map_record(|_| (Some(path.clone()), ri)).with_path(&path))?;
        sink(row).map_err(|e| e.with_record(ri).with_path(&path))
    })
}

/// The records of Avro files in memory, in order (for small files and tests).
///
/// # Errors
/// As [`AvroFile::open`] and its iterator.
pub fn read_all(inputs: &[PathBuf], reader_schema: Option<&Schema>) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    for path in inputs {
        for v in AvroFile::open(path, reader_schema)? {
            out.push(v?);
        }
    }
    Ok(out)
}

/// Reads an Avro schema (`.avsc` JSON).
///
/// # Errors
/// Invalid JSON or an invalid schema.
pub fn parse_schema(json: &str) -> Result<Schema> {
    // A byte-order mark, as some editors save `.avsc` files, is not part of the JSON.
    let json = json.strip_prefix('\u{feff}').unwrap_or(json);
    Schema::parse_str(json).map_err(|e| {
        Error::new(format!(
            "invalid Avro schema: {}",
            super::file::with_causes(&e)
        ))
    })
}
