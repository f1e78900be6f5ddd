//! `to_arrow` and `to_arrow_mem`: records to Arrow RecordBatches through `tfrecord-arrow`, the
//! spec built from the sidecar (fixed -> a value or `FixedSizeList`, varlen -> `List`,
//! fixed_seq feature lists -> `List` of steps), in batches of 1024 on one thread. The
//! analogue of tfx_bsl's `ExamplesToRecordBatchDecoder.DecodeBatch` over
//! `TFRecordDataset.batch(1024)` (the `tfx_bsl` peer's ops of the same names).
//!
//! `to_parquet` and `parquet_write`: the Parquet export as `tfrecord to-parquet --spec` runs it
//! (batches of 8192, Snappy, row groups of 131,072 rows: the command's defaults), and the
//! Parquet writer alone over the same RecordBatches decoded beforehand; their repetitions
//! alternate, so that the share of the export that is decoding is measured at the same moments.
//! Run only when `--ops` names `to_parquet`.

use std::collections::BTreeMap;

use std::fs::File;
use std::path::Path;

use tfrecord_arrow::arrow_array::{Array, RecordBatch};
use tfrecord_arrow::parquet::arrow::ArrowWriter;
use tfrecord_arrow::parquet::basic::Compression as Codec;
use tfrecord_arrow::parquet::file::properties::WriterProperties;
use tfrecord_arrow::{ArrowDecoder, ArrowReader};
use tfrecord_core::{Compression, Format};
use tfrecord_schema::ir::Schema;

use crate::pipeline::Totals;
use crate::records::BATCH;
use crate::sidecar::{Feat, Sidecar};
use crate::timing::{measure, measure_pair};
use crate::workload::{Ctx, Outcome};

/// The sidecar's features as a spec table `table` of record `R`.
fn tables(out: &mut String, table: &str, feats: &BTreeMap<String, Feat>) -> Result<(), String> {
    for (key, f) in feats {
        let dtype = match f.dtype.as_str() {
            "int64" => "int64",
            "float32" => "float",
            "string" => "bytes",
            o => return Err(format!("{key}: unknown dtype {o}")),
        };
        let kind = match f.kind.as_str() {
            "fixed" => "fixed",
            "varlen" => "var",
            "fixed_seq" => "sequence",
            o => return Err(format!("{key}: unknown kind {o}")),
        };
        let key = serde_json::to_string(key).map_err(|e| e.to_string())?;
        out.push_str(&format!(
            "[records.R.{table}.{key}]\ndtype = \"{dtype}\"\nkind = \"{kind}\"\n"
        ));
        if kind != "var" {
            out.push_str(&format!("shape = {:?}\n", f.shape));
        }
    }
    Ok(())
}

/// The Arrow decoder of the sidecar's spec.
fn decoder(sc: &Sidecar) -> Result<ArrowDecoder, String> {
    let mut spec = String::from("[records.R]\n");
    if sc.is_sequence() {
        spec.push_str("kind = \"sequence_example\"\n");
        tables(&mut spec, "context", &sc.context_features)?;
        tables(&mut spec, "sequence", &sc.sequence_features)?;
    } else {
        tables(&mut spec, "features", &sc.features)?;
    }
    let schema = Schema::from_toml_str(&spec, "sidecar.toml").map_err(|d| d.to_string())?;
    ArrowDecoder::new(&schema.records[0], Format::TfRecord).map_err(|e| e.to_string())
}

/// What a batch holds: its rows, and the values of its leaf arrays (strings one each), so that
/// a run that decodes nothing fails its check.
fn count(batch: &RecordBatch, totals: &mut Totals) {
    totals.rows += batch.num_rows() as u64;
    for col in batch.columns() {
        let mut a = col.to_data();
        while let Some(child) = a.child_data().first().cloned() {
            a = child;
        }
        totals.values += a.len() as u64;
    }
}

fn decode_all<'a>(
    decoder: &ArrowDecoder,
    batches: impl Iterator<Item = &'a [&'a [u8]]>,
) -> Outcome {
    let mut totals = Totals::default();
    for b in batches {
        let batch = decoder.decode(b, 0).map_err(|e| e.to_string())?;
        count(std::hint::black_box(&batch), &mut totals);
        totals.records += b.len() as u64;
    }
    Ok(totals)
}

/// `to_arrow` (read the file, then decode) and `to_arrow_mem` (records in memory).
pub(crate) fn to_arrow(c: &Ctx<'_>) -> Result<(), String> {
    let sc = c.sc;
    if !(c.args.want("to_arrow", "st") || c.args.want("to_arrow_mem", "st")) {
        return Ok(());
    }
    let decoder = decoder(sc)?;
    let check = |o: &Outcome| match o {
        Ok(t) if t.records == sc.num_records && t.values > 0 => Ok(()),
        Ok(t) => Err(format!("{} records of {}", t.records, sc.num_records)),
        Err(e) => Err(e.clone()),
    };
    if c.args.want("to_arrow", "st") {
        let run = || -> Outcome {
            let reader = tfrecord_core::RecordReader::open(&sc.path, c.opts.clone())
                .map_err(|e| e.to_string())?;
            let mut totals = Totals::default();
            for batch in ArrowReader::new(reader, decoder.clone()).with_batch_size(BATCH) {
                let batch = batch.map_err(|e| e.to_string())?;
                count(std::hint::black_box(&batch), &mut totals);
                totals.records += batch.num_rows() as u64;
            }
            Ok(totals)
        };
        let t = measure(c.args.reps, run, check)?;
        c.emit(
            "st",
            "to_arrow",
            "tfrecord_arrow::ArrowReader over RecordReader (CRCs checked): batches of 1024 decoded into RecordBatches (spec from the sidecar), one thread",
            &t,
        );
    }
    if c.args.want("to_arrow_mem", "st")
        && c.opts.get_compression() == Compression::None
        && let Some(loaded) = c.loaded
    {
        let recs = loaded.records();
        let t = measure(
            c.args.reps,
            || decode_all(&decoder, recs.chunks(BATCH)),
            check,
        )?;
        c.emit(
            "st",
            "to_arrow_mem",
            "ArrowDecoder::decode over in-memory batches of 1024 (no I/O, no CRC), one thread",
            &t,
        );
    }
    Ok(())
}

/// The batch size of `tfrecord to-parquet` (its `--batch-size` default).
const PARQUET_BATCH: usize = 8192;
/// The row group size of `tfrecord to-parquet` (its `--row-group-size` default).
const ROW_GROUP: usize = 131_072;

/// Writes `batches` to a Parquet file at `path` as `tfrecord to-parquet` does (Snappy, row
/// groups of [`ROW_GROUP`] rows); the rows the file's footer says it holds.
fn write_parquet(
    path: &Path,
    decoder: &ArrowDecoder,
    batches: impl Iterator<Item = Result<RecordBatch, String>>,
) -> Outcome {
    let props = WriterProperties::builder()
        .set_compression(Codec::SNAPPY)
        .set_max_row_group_row_count(Some(ROW_GROUP))
        .build();
    let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut writer =
        ArrowWriter::try_new(file, decoder.schema(), Some(props)).map_err(|e| e.to_string())?;
    let mut totals = Totals::default();
    for batch in batches {
        let batch = batch?;
        totals.records += batch.num_rows() as u64;
        writer.write(&batch).map_err(|e| e.to_string())?;
    }
    let meta = writer.close().map_err(|e| e.to_string())?;
    totals.rows = u64::try_from(meta.file_metadata().num_rows()).map_err(|e| e.to_string())?;
    totals.values = totals.rows;
    Ok(totals)
}

/// `to_parquet` (the file's records decoded and written to Parquet) and `parquet_write` (the
/// writer alone, over the same batches decoded beforehand), alternated.
pub(crate) fn to_parquet(c: &Ctx<'_>) -> Result<(), String> {
    let sc = c.sc;
    // Asked for by name only (as `cli`): it writes a file per repetition.
    if !c.args.ops.iter().any(|o| o == "to_parquet") || !c.args.want("to_parquet", "st") {
        return Ok(());
    }
    let decoder = decoder(sc)?;
    let read = || {
        let reader = tfrecord_core::RecordReader::open(&sc.path, c.opts.clone())
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(
            ArrowReader::new(reader, decoder.clone())
                .with_batch_size(PARQUET_BATCH)
                .map(|b| b.map_err(|e| e.to_string())),
        )
    };
    std::fs::create_dir_all(&c.args.out).map_err(|e| format!("{}: {e}", c.args.out.display()))?;
    let path = c.args.out.join(format!("{}.parquet", sc.name));
    let decoded: Vec<RecordBatch> = read()?.collect::<Result<_, _>>()?;
    let export = || write_parquet(&path, &decoder, read()?);
    let writer_alone = || write_parquet(&path, &decoder, decoded.iter().cloned().map(Ok));
    let check = |o: &Outcome| match o {
        Ok(t) if t.records == sc.num_records && t.rows == sc.num_records => Ok(()),
        Ok(t) => Err(format!(
            "{} records decoded, {} rows in the file, of {}",
            t.records, t.rows, sc.num_records
        )),
        Err(e) => Err(e.clone()),
    };
    let (te, tw) = measure_pair(c.args.reps, export, writer_alone, check)?;
    std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    c.emit(
        "st",
        "to_parquet",
        "RecordReader (CRCs checked) + ArrowReader, batches of 8192, + parquet ArrowWriter (Snappy, row groups of 131,072), one thread: `tfrecord to-parquet --spec`",
        &te,
    );
    c.emit(
        "st",
        "parquet_write",
        "the parquet ArrowWriter alone (Snappy, row groups of 131,072) over the same RecordBatches decoded beforehand, one thread",
        &tw,
    );
    Ok(())
}
