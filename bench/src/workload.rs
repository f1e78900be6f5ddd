//! One workload under measurement: its records loaded and counted by an independent decode,
//! the checks every run's result goes through, and the context the ops share.

use tfrecord_core::proto::tensorflow;
use tfrecord_core::{Compression, Message, ReaderOptions, RecordReader};

use crate::args::Args;
use crate::pipeline::Totals;
use crate::sidecar::Sidecar;
use crate::timing::{Emit, Times, measure, measure_pair};

/// The peer name on the `RESULT` lines.
pub(crate) const PEER: &str = "tfrecord-rs";
/// Worker threads of the multi-threaded variants.
pub(crate) const THREADS: usize = 2;

/// What one repetition of a parse op returns.
pub(crate) type Outcome = Result<Totals, String>;

/// A workload's records in memory, and what an independent prost decode counts in them: every
/// measured run must extract exactly these values.
pub(crate) struct Loaded {
    /// The decompressed payloads back to back.
    pub(crate) buf: Vec<u8>,
    /// Each payload's range in `buf`.
    pub(crate) ranges: Vec<std::ops::Range<usize>>,
    /// Values the full spec extracts from all records (strings count one each).
    pub(crate) values: u64,
}

impl Loaded {
    /// Each record's bytes.
    pub(crate) fn records(&self) -> Vec<&[u8]> {
        self.ranges.iter().map(|r| &self.buf[r.clone()]).collect()
    }
}

fn feature_values(f: &tensorflow::Feature) -> u64 {
    use tensorflow::feature::Kind;
    match &f.kind {
        Some(Kind::Int64List(l)) => l.value.len() as u64,
        Some(Kind::FloatList(l)) => l.value.len() as u64,
        Some(Kind::BytesList(l)) => l.value.len() as u64,
        None => 0,
    }
}

/// The values the sidecar's full spec extracts from one record (strings count one each), by a
/// prost decode independent of the code being measured.
pub(crate) fn spec_values(sc: &Sidecar, rec: &[u8]) -> Result<u64, String> {
    let missing = |k: &str| format!("{}: a record lacks feature {k}", sc.name);
    let mut values = 0u64;
    if sc.is_sequence() {
        let se = tensorflow::SequenceExample::decode(rec).map_err(|e| e.to_string())?;
        let ctx = se.context.unwrap_or_default().feature;
        for k in sc.context_features.keys() {
            values += feature_values(ctx.get(k).ok_or_else(|| missing(k))?);
        }
        let lists = se.feature_lists.unwrap_or_default().feature_list;
        for k in sc.sequence_features.keys() {
            let list = lists.get(k).ok_or_else(|| missing(k))?;
            values += list.feature.iter().map(feature_values).sum::<u64>();
        }
    } else {
        let ex = tensorflow::Example::decode(rec).map_err(|e| e.to_string())?;
        let map = ex.features.unwrap_or_default().feature;
        for k in sc.features.keys() {
            values += feature_values(map.get(k).ok_or_else(|| missing(k))?);
        }
    }
    Ok(values)
}

/// Reads every record (CRCs checked) into memory and counts the spec's values with prost.
pub(crate) fn load(sc: &Sidecar) -> Result<Loaded, String> {
    let opts = ReaderOptions::new().compression(sc.compression()?);
    let mut r = RecordReader::open(&sc.path, opts).map_err(|e| e.to_string())?;
    let mut buf = Vec::with_capacity(usize::try_from(sc.payload_bytes).unwrap_or(0));
    let mut ranges = Vec::new();
    let mut rec = Vec::new();
    let mut values = 0u64;
    while r.read_into(&mut rec).map_err(|e| e.to_string())? {
        values += spec_values(sc, &rec)?;
        let start = buf.len();
        buf.extend_from_slice(&rec);
        ranges.push(start..buf.len());
    }
    if ranges.len() as u64 != sc.num_records || buf.len() as u64 != sc.payload_bytes {
        return Err(format!(
            "{}: read {} records / {} payload bytes, the sidecar says {} / {}",
            sc.name,
            ranges.len(),
            buf.len(),
            sc.num_records,
            sc.payload_bytes
        ));
    }
    Ok(Loaded {
        buf,
        ranges,
        values,
    })
}

/// Checks a run that returns the records it went through: all of the workload's, or its error.
pub(crate) fn check_records(sc: &Sidecar, r: &Result<u64, String>) -> Result<(), String> {
    match r {
        Ok(n) if *n == sc.num_records => Ok(()),
        Ok(n) => Err(format!(
            "{}: {n} records, expected {}",
            sc.name, sc.num_records
        )),
        Err(e) => Err(e.clone()),
    }
}

/// Checks one run's totals against the sidecar and the expected value count.
pub(crate) fn check_totals(
    sc: &Sidecar,
    expect_values: Option<u64>,
    t: &Totals,
) -> Result<(), String> {
    if t.records != sc.num_records || t.rows != sc.num_records {
        return Err(format!(
            "{}: {} records read, {} rows extracted, expected {}",
            sc.name, t.records, t.rows, sc.num_records
        ));
    }
    if let Some(v) = expect_values
        && t.values != v
    {
        return Err(format!(
            "{}: {} values extracted, expected {v}",
            sc.name, t.values
        ));
    }
    Ok(())
}

/// What the ops of one workload share.
pub(crate) struct Ctx<'a> {
    /// The command line.
    pub(crate) args: &'a Args,
    /// The workload's sidecar.
    pub(crate) sc: &'a Sidecar,
    /// Its records, unless `--stream-only`.
    pub(crate) loaded: Option<&'a Loaded>,
    /// How to read its file.
    pub(crate) opts: ReaderOptions,
}

impl Ctx<'_> {
    /// Measures `op` done two ways, `a` and `b` (variant, work, note), each when the
    /// arguments want it, and prints their results. When both are wanted their repetitions
    /// alternate ([`measure_pair`]), so that the ratio of the two (two threads against one)
    /// is taken at the same moments of the host.
    pub(crate) fn measure_two(
        &self,
        op: &str,
        a: (&str, impl FnMut() -> Outcome, &str),
        b: (&str, impl FnMut() -> Outcome, &str),
        check: impl FnMut(&Outcome) -> Result<(), String>,
    ) -> Result<(), String> {
        let reps = self.args.reps;
        match (self.args.want(op, a.0), self.args.want(op, b.0)) {
            (true, true) => {
                let (ta, tb) = measure_pair(reps, a.1, b.1, check)?;
                let paired = |note: &str, other: &str| {
                    format!("{note}; repetitions alternated with {other}'s")
                };
                self.emit(a.0, op, &paired(a.2, b.0), &ta);
                self.emit(b.0, op, &paired(b.2, a.0), &tb);
            }
            (true, false) => self.emit(a.0, op, a.2, &measure(reps, a.1, check)?),
            (false, true) => self.emit(b.0, op, b.2, &measure(reps, b.1, check)?),
            (false, false) => {}
        }
        Ok(())
    }

    /// Prints one measurement of this workload.
    pub(crate) fn emit(&self, variant: &str, op: &str, note: &str, t: &Times) {
        Emit {
            peer: PEER,
            variant,
            workload: &self.sc.name,
            op,
            records: self.sc.num_records,
            bytes: self.sc.stream_bytes,
            note,
        }
        .print(t);
    }

    /// The values every parse must extract, when the records are loaded.
    pub(crate) fn expect_values(&self) -> Option<u64> {
        self.loaded.map(|l| l.values)
    }

    /// Where the `mt2` threads take their chunks.
    pub(crate) fn mt2_source(&self) -> &'static str {
        if self.opts.get_compression() == Compression::None {
            "SharedChunks: each thread copies its own chunk out of the file"
        } else {
            "turns at one ChunkReader, which inflates"
        }
    }

    /// The end of a note, for a compressed workload.
    pub(crate) fn gz_note(&self) -> &'static str {
        if self.opts.get_compression() == Compression::None {
            ""
        } else {
            " (gzip: flate2/zlib-rs inflate)"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check_totals;
    use crate::pipeline::Totals;
    use crate::records::{MnistShape, Shape};
    use crate::sidecar::Sidecar;

    #[test]
    fn a_run_that_extracts_nothing_fails() {
        let sc = Sidecar::for_spec("mnist", false, MnistShape::spec(), 10);
        let none = Totals::default();
        assert!(check_totals(&sc, Some(20), &none).is_err());
        let rows_only = Totals {
            records: 10,
            rows: 10,
            values: 0,
        };
        assert!(check_totals(&sc, Some(20), &rows_only).is_err());
        let all = Totals {
            values: 20,
            ..rows_only
        };
        assert!(check_totals(&sc, Some(20), &all).is_ok());
    }
}
