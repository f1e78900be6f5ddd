//! `to_arrow` and `to_arrow_mem`: records to Arrow RecordBatches through `tfrecord-arrow`, the
//! spec built from the sidecar (fixed -> a value or `FixedSizeList`, varlen -> `List`,
//! fixed_seq feature lists -> `List` of steps), in batches of 1024 on one thread. The
//! analogue of tfx_bsl's `ExamplesToRecordBatchDecoder.DecodeBatch` over
//! `TFRecordDataset.batch(1024)` (the `tfx_bsl` peer's ops of the same names).

use std::collections::BTreeMap;

use tfrecord_arrow::arrow_array::{Array, RecordBatch};
use tfrecord_arrow::{ArrowDecoder, ArrowReader};
use tfrecord_core::{Compression, Format};
use tfrecord_schema::ir::Schema;

use crate::pipeline::Totals;
use crate::records::BATCH;
use crate::sidecar::{Feat, Sidecar};
use crate::timing::measure;
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
