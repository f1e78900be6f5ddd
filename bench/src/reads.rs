//! The reading ops: `read_raw`, `read_raw_nocrc`, `read_decode`, `read_parse` and
//! `parse_mem`.

use std::path::Path;

use tfrecord_core::proto::tensorflow;
use tfrecord_core::{Compression, Message, Reader, ReaderOptions, RecordReader};

use crate::pipeline::{
    BatchSink, Derived, RawSink, Totals, mem_parallel, read_batches, read_parallel,
};
use crate::records::{BATCH, Shape};
use crate::spec::{SpecParser, SpecSink};
use crate::timing::measure;
use crate::workload::{Ctx, Outcome, THREADS, check_totals};

/// What `read_raw` and `read_decode` do with each record.
type DecodeFn = fn(&[u8]) -> Result<(), String>;

fn decode_nothing(b: &[u8]) -> Result<(), String> {
    std::hint::black_box(b);
    Ok(())
}

fn decode_prost_example(b: &[u8]) -> Result<(), String> {
    let m = tensorflow::Example::decode(b).map_err(|e| e.to_string())?;
    std::hint::black_box(m);
    Ok(())
}

fn decode_prost_sequence(b: &[u8]) -> Result<(), String> {
    let m = tensorflow::SequenceExample::decode(b).map_err(|e| e.to_string())?;
    std::hint::black_box(m);
    Ok(())
}

/// Reads every record of `path` and hands it to `decode`: (records, payload bytes).
fn scan(path: &Path, opts: ReaderOptions, decode: DecodeFn) -> Result<(u64, u64), String> {
    let mut r = RecordReader::open(path, opts).map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    let (mut n, mut bytes) = (0u64, 0u64);
    while r.read_into(&mut buf).map_err(|e| e.to_string())? {
        decode(&buf)?;
        n += 1;
        bytes += buf.len() as u64;
    }
    Ok((n, bytes))
}

/// `read_raw` (one thread and two), `read_raw_nocrc`, `read_decode`: record count and payload
/// bytes checked.
pub(crate) fn raw_reads(c: &Ctx<'_>) -> Result<(), String> {
    let sc = c.sc;
    let check = |&(n, bytes): &(u64, u64)| {
        if n == sc.num_records && bytes == sc.payload_bytes {
            Ok(())
        } else {
            Err(format!(
                "{}: read {n} records / {bytes} bytes, expected {} / {}",
                sc.name, sc.num_records, sc.payload_bytes
            ))
        }
    };
    let run = |opts: ReaderOptions, decode: DecodeFn| move || scan(&sc.path, opts.clone(), decode);
    let ok = |r: &Result<(u64, u64), String>| match r {
        Ok(v) => check(v),
        Err(e) => Err(e.clone()),
    };
    if c.args.want("read_raw", "st") {
        let t = measure(c.args.reps, run(c.opts.clone(), decode_nothing), ok)?;
        let note = format!(
            "RecordReader::open + read_into (one reused Vec), both CRCs checked{}",
            c.gz_note()
        );
        c.emit("st", "read_raw", &note, &t);
    }
    if c.args.want("read_raw", "mt2") {
        let t = measure(
            c.args.reps,
            || read_parallel(sc, c.opts.clone(), THREADS, RawSink::default),
            |r: &Outcome| match r {
                Ok(t) => check(&(t.records, t.values)),
                Err(e) => Err(e.clone()),
            },
        )?;
        let note = format!(
            "{THREADS} threads taking chunks of whole frames ({}), each checking its chunk's framing and both CRCs; no decode",
            c.mt2_source()
        );
        c.emit("mt2", "read_raw", &note, &t);
    }
    if c.args.want("read_raw_nocrc", "st") {
        let opts = c.opts.clone().verify_data_crc(false);
        let t = measure(c.args.reps, run(opts, decode_nothing), ok)?;
        let note = format!(
            "as read_raw with verify_data_crc(false); the 8-byte length CRC is still checked{}",
            c.gz_note()
        );
        c.emit("st", "read_raw_nocrc", &note, &t);
    }
    if c.args.want("read_decode", "st") {
        let (prost, message): (DecodeFn, _) = if sc.is_sequence() {
            (decode_prost_sequence, "SequenceExample")
        } else {
            (decode_prost_example, "Example")
        };
        let t = measure(c.args.reps, run(c.opts.clone(), prost), ok)?;
        let note = format!(
            "read_raw + prost decode into proto::tensorflow::{message} (BTreeMap<String, Feature>, Vec<u8> bytes){}",
            c.gz_note()
        );
        c.emit("st", "read_decode", &note, &t);
    }
    Ok(())
}

/// `read_parse` and `parse_mem` with the derived type `S`, and with the spec parser, each on
/// one thread and on two.
pub(crate) fn parses<S: Shape>(c: &Ctx<'_>) -> Result<(), String> {
    let sc = c.sc;
    let check = |r: &Outcome| match r {
        Ok(t) => check_totals(sc, c.expect_values(), t),
        Err(e) => Err(e.clone()),
    };
    let parser = SpecParser::new(sc)?;
    c.measure_two(
        "read_parse",
        (
            "st",
            || read_derived::<S>(c),
            &format!(
                "Reader::next_lent (derived decode, strings borrowed from the read buffer, CRCs checked) + typed columns, batches of 1024{}",
                c.gz_note()
            ),
        ),
        (
            "mt2",
            || read_parallel(sc, c.opts.clone(), THREADS, Derived::<S>::new),
            &format!(
                "{THREADS} threads taking chunks of whole frames ({}), each checking its chunk (framing + CRCs) and decoding its records in place: derived decode + typed columns, batches of 1024",
                c.mt2_source()
            ),
        ),
        check,
    )?;
    if c.args.want("read_parse", "owned") {
        let t = measure(c.args.reps, || read_owned::<S>(c), check)?;
        let note = format!(
            "Reader::<T>::open + for r in reader (owned derived values: String, Vec<u8>, Vec<i64>, [f32; 16], Vec<Vec<i64>> per step), pushed into a Vec of 1024 whose values a consumer counts (as TensorFlow's peer drains its batches), then cleared, dropping them{}",
            c.gz_note()
        );
        c.emit("owned", "read_parse", &note, &t);
    }
    if c.args.want("read_parse", "owned_batch") {
        let t = measure(c.args.reps, || read_owned_batches::<S>(c), check)?;
        let note = format!(
            "Reader::<T>::open + read_batch(&mut batch, 1024) (the same owned values decoded into those of the last batch, their buffers reused), a consumer counting each batch's values{}",
            c.gz_note()
        );
        c.emit("owned_batch", "read_parse", &note, &t);
    }
    if c.args.want("read_parse", "columns") {
        let t = measure(c.args.reps, || read_columns::<S>(&sc.path), check)?;
        let note = format!(
            "Reader::<T>::open + batches(1024): the owned derived type's records decoded straight into columnar batches (one flat buffer per field, Arrow's layout), each batch's values counted{}",
            c.gz_note()
        );
        c.emit("columns", "read_parse", &note, &t);
    }
    let spec_name = if sc.is_sequence() {
        "SequenceExampleParser"
    } else {
        "ExampleParser"
    };
    c.measure_two(
        "read_parse",
        (
            "spec",
            || read_batches(sc, c.opts.clone(), SpecSink::new(&parser)),
            &format!(
                "runtime spec parser: parse::{spec_name} (spec from the sidecar) on batches of 1024 read and parsed in turn on one thread{}",
                c.gz_note()
            ),
        ),
        (
            "spec_mt2",
            || read_parallel(sc, c.opts.clone(), THREADS, || SpecSink::new(&parser)),
            &format!(
                "runtime spec parser on batches of 1024: {THREADS} threads taking chunks of whole frames ({}), each checking its chunk and parsing{}",
                c.mt2_source(),
                c.gz_note()
            ),
        ),
        check,
    )?;
    let Some(loaded) = c.loaded else {
        return Ok(());
    };
    if c.opts.get_compression() != Compression::None {
        return Ok(()); // as the harness's TensorFlow peer: parse_mem only for uncompressed workloads
    }
    mem_parses::<S>(c, &loaded.records(), (&parser, spec_name), &check)
}

/// The derived read of `read_parse` `st`: every record decoded in place into typed columns.
fn read_derived<S: Shape>(c: &Ctx<'_>) -> Outcome {
    let mut reader =
        Reader::<(), S::C>::open_with(&c.sc.path, c.opts.clone()).map_err(|e| e.to_string())?;
    let mut sink = Derived::<S>::new();
    let mut records = 0u64;
    while let Some(rec) = reader.next_lent::<S::Rec<'_>>() {
        let rec = rec.map_err(|e| e.to_string())?;
        sink.push(&rec);
        records += 1;
    }
    sink.finish()?;
    Ok(Totals {
        records,
        ..sink.totals()
    })
}

/// The owned read of `read_parse` `owned`, as a user writes it: the typed iterator, owned
/// values gathered into batches of 1024 whose values a consumer counts.
fn read_owned<S: Shape>(c: &Ctx<'_>) -> Outcome {
    // `open` guesses the compression from the name (`.gz`), as for the harness's files.
    let reader = Reader::<S::User, S::C>::open(&c.sc.path).map_err(|e| e.to_string())?;
    let mut batch = Vec::with_capacity(BATCH);
    let mut t = Totals::default();
    let mut consume = |batch: &mut Vec<S::User>| {
        t.values += S::consume(batch);
        t.rows += batch.len() as u64;
        batch.clear();
    };
    for r in reader {
        batch.push(r.map_err(|e| e.to_string())?);
        if batch.len() == BATCH {
            consume(&mut batch);
        }
    }
    consume(&mut batch);
    Ok(Totals {
        records: t.rows,
        ..t
    })
}

/// The batched owned read of `read_parse` `owned_batch`, as a user writes it: one `Vec` of
/// owned values refilled by `read_batch`, which decodes into the values it holds.
fn read_owned_batches<S: Shape>(c: &Ctx<'_>) -> Outcome {
    let mut reader = Reader::<S::User, S::C>::open(&c.sc.path).map_err(|e| e.to_string())?;
    let mut batch = Vec::new();
    let mut t = Totals::default();
    while reader
        .read_batch(&mut batch, BATCH)
        .map_err(|e| e.to_string())?
        > 0
    {
        t.values += S::consume(&batch);
        t.rows += batch.len() as u64;
    }
    Ok(Totals {
        records: t.rows,
        ..t
    })
}

/// The columnar read of `read_parse` `columns`: `Reader::batches` of the owned derived type,
/// each batch's values counted (the leaf of every column: strings one each).
fn read_columns<S: Shape>(path: &Path) -> Outcome {
    // `open` guesses the compression from the name (`.gz`), as for the harness's files.
    let reader = Reader::<S::Columnar, S::C>::open(path).map_err(|e| e.to_string())?;
    let mut t = Totals::default();
    for batch in reader.batches(BATCH).map_err(|e| e.to_string())? {
        let batch = std::hint::black_box(batch.map_err(|e| e.to_string())?);
        t.rows += batch.rows as u64;
        t.values += batch
            .columns
            .iter()
            .map(|col| col.leaf.len() as u64)
            .sum::<u64>();
    }
    Ok(Totals {
        records: t.rows,
        ..t
    })
}

/// `parse_mem` over `recs`: the derived parse on one thread and two, then the spec parser on
/// one and two, each pair alternated.
fn mem_parses<S: Shape>(
    c: &Ctx<'_>,
    recs: &[&[u8]],
    (parser, spec_name): (&SpecParser, &str),
    check: &dyn Fn(&Outcome) -> Result<(), String>,
) -> Result<(), String> {
    let op = "parse_mem";
    let derived = || -> Outcome {
        let mut sink = Derived::<S>::new();
        for b in recs.chunks(BATCH) {
            sink.batch(b)?;
        }
        sink.finish()?;
        Ok(Totals {
            records: recs.len() as u64,
            ..sink.totals()
        })
    };
    c.measure_two(
        op,
        (
            "st",
            derived,
            "derived decode + typed columns over in-memory records, batches of 1024 (no I/O, no CRC)",
        ),
        (
            "mt2",
            || mem_parallel(recs, THREADS, Derived::<S>::new),
            &format!("as {op} st, batches of 1024 taken in turn by {THREADS} threads (scoped)"),
        ),
        check,
    )?;
    c.measure_two(
        op,
        (
            "spec",
            || mem_parallel(recs, 1, || SpecSink::new(parser)),
            &format!("parse::{spec_name}::parse over in-memory batches of 1024 (1 thread)"),
        ),
        (
            "spec_mt2",
            || mem_parallel(recs, THREADS, || SpecSink::new(parser)),
            &format!(
                "parse::{spec_name}::parse over in-memory batches of 1024 on {THREADS} threads"
            ),
        ),
        check,
    )
}

#[cfg(test)]
mod tests {
    use tfrecord_core::{Encode, ReaderOptions, RecordWriter, WriterOptions};

    use crate::pipeline::{BatchSink, Derived, RawSink, mem_parallel, read_batches, read_parallel};
    use crate::records::{CtrShape, MnistShape, SeqShape, Shape, check_spec};
    use crate::sidecar::Sidecar;
    use crate::spec::{SpecParser, SpecSink};
    use crate::workload::{check_totals, spec_values};

    fn records<S: Shape>(n: u64) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| Encode::<S::C>::encode_to_vec(&S::build(S::sample(i))))
            .collect()
    }

    /// Every way of parsing extracts the values an independent prost decode counts, from a
    /// file (reader threads) and from memory, across batch boundaries.
    fn agree<S: Shape>(name: &str, is_seq: bool) {
        let n = 2500u64; // two full batches and a partial one
        let recs = records::<S>(n);
        let sc = Sidecar::for_spec(name, is_seq, S::spec(), n);
        check_spec::<S>(&sc).expect("the spec the type implements");
        let expected: u64 = recs
            .iter()
            .map(|r| spec_values(&sc, r).expect("decodes"))
            .sum();
        assert!(expected >= 2 * n);
        let slices: Vec<&[u8]> = recs.iter().map(Vec::as_slice).collect();
        let parser = SpecParser::new(&sc).expect("valid spec");
        let runs = [
            mem_parallel(&slices, 1, Derived::<S>::new),
            mem_parallel(&slices, 2, Derived::<S>::new),
            mem_parallel(&slices, 2, || SpecSink::new(&parser)),
        ];
        for t in runs {
            let t = t.expect("parses");
            check_totals(&sc, Some(expected), &t).expect("all values");
        }

        let dir = tempfile::tempdir().expect("temp dir");
        let mut sc = sc;
        sc.path = dir.path().join("data.tfrecord");
        let mut w = RecordWriter::create(&sc.path, WriterOptions::new()).expect("create");
        for r in &recs {
            w.write(r).expect("write");
        }
        w.finish().expect("finish");
        for workers in [1, 2] {
            let t = read_parallel(&sc, ReaderOptions::new(), workers, Derived::<S>::new);
            check_totals(&sc, Some(expected), &t.expect("reads")).expect("all values");
        }
        let t = read_parallel(&sc, ReaderOptions::new(), 2, || SpecSink::new(&parser));
        check_totals(&sc, Some(expected), &t.expect("reads")).expect("all values");
        let payload: u64 = recs.iter().map(|r| r.len() as u64).sum();
        let t = read_parallel(&sc, ReaderOptions::new(), 2, RawSink::default).expect("reads");
        assert_eq!((t.records, t.values), (n, payload), "read_raw mt2 counts");
        let t = read_batches(&sc, ReaderOptions::new(), SpecSink::new(&parser));
        check_totals(&sc, Some(expected), &t.expect("reads")).expect("all values");
        let t = super::read_columns::<S>(&sc.path).expect("reads");
        check_totals(&sc, Some(expected), &t).expect("all values");
    }

    #[test]
    fn mnist_counts_agree() {
        agree::<MnistShape>("mnist", false);
    }

    #[test]
    fn ctr_counts_agree() {
        agree::<CtrShape>("ctr", false);
    }

    #[test]
    fn seq_counts_agree() {
        agree::<SeqShape>("seq", true);
    }

    #[test]
    fn a_record_that_does_not_fit_the_type_fails() {
        // A ctr record is not an mnist record: the derived decoder names the missing key.
        let recs = records::<CtrShape>(3);
        let err = Derived::<MnistShape>::new()
            .batch(&recs)
            .expect_err("not mnist");
        assert!(err.contains("image/encoded"), "{err}");
    }
}
