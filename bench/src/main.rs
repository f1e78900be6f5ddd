//! `tfrecord-bench`: this workspace measured on the peer harness's workloads, printing the
//! `RESULT {json}` lines of the harness's protocol with `"peer": "tfrecord-rs"`.
//!
//! ```text
//! tfrecord-bench [--data DIR] [--out DIR] [--reps N] [--workloads a,b] [--ops x,y]
//!                [--variants st,mt2,spec,spec_mt2] [--peak-rss] [--stream-only]
//! ```
//!
//! Environment fallbacks: `DATA_DIR` (`/tmp/peers/data`), `OUT_DIR` (`/tmp/peers/out`), `REPS`
//! (5), `WORKLOADS`, `OPS`, `VARIANTS` (comma lists; empty = all). The data directory holds
//! `<workload>.tfrecord[.gz]` and the `<workload>.json` sidecars written by the harness's
//! `gen_data.py`; this binary reads them with its own code and does not depend on the harness.
//!
//! Each measurement: one untimed warm-up run, then `REPS` timed runs; wall seconds and process
//! CPU seconds (`CLOCK_PROCESS_CPUTIME_ID`, all threads) of each. Every run's work is checked
//! (record count, payload bytes, or the number of values extracted, which must equal the count
//! from an independent prost decode of the same records), so a run that decodes nothing fails
//! instead of printing a number.
//!
//! Ops and variants (`bytes` is always the sidecar's uncompressed `stream_bytes`):
//!
//! | op | variant | what is timed |
//! | --- | --- | --- |
//! | `read_raw` | `st` | `RecordReader::open` + `read_into` one reused buffer, both CRCs checked (gzip: inflate too) |
//! | `read_raw` | `mt2` | 2 threads taking chunks of whole frames as `read_parse` `mt2` does, checking their framing and both CRCs, no decode: the two-thread read ceiling |
//! | `read_raw_nocrc` | `st` | the same with `verify_data_crc(false)` (the 8-byte length CRC is always checked) |
//! | `read_decode` | `st` | `read_raw` + prost decode into `proto::tensorflow::Example` / `SequenceExample` |
//! | `read_parse` | `st` | `Reader::next_lent` (derived decode, strings borrowed from the read buffer) + typed columns, batches of 1024 |
//! | `read_parse` | `mt2` | 2 threads, each taking chunks of whole frames (uncompressed: `SharedChunks`, every thread copying its own chunk out of the file; gzip: turns at one `ChunkReader`, which inflates), checking their framing and data CRCs and decoding the records in place (`Chunk::records`) into columns consumed every 1024 rows |
//! | `read_parse` | `spec` | batches of 1024 read, then parsed by `parse::ExampleParser` / `SequenceExampleParser` (spec from the sidecar at run time), one thread |
//! | `read_parse` | `spec_mt2` | the same 2 threads and chunks, running the spec parser on batches of 1024 records gathered from them |
//! | `parse_mem` | `st`, `mt2`, `spec`, `spec_mt2` | the same decode + extract over records already in memory |
//! | `read_parse`, `parse_mem` | `st_halves`, `spec_halves` | not a library op (uncompressed workloads): the records cut at the middle one, and the one-thread code (`st`, `spec`) run on each half at once, on this thread and one more, each half its own reader of its own bytes, nothing shared or handed between them. Their speed over `st`'s (`spec`'s) is what the machine gives two threads of that work at those moments; `half_secs` holds each half's seconds from their common start |
//! | `parse_resident` | `st`, `mt2`, `spec`, `spec_mt2` | only with `--resident N`, not a protocol op: `parse_mem` over the first N records repeated to the file's record count, so that nothing streams from memory (a diagnostic for the two-thread rows) |
//! | `read_limit` | `st` | not a library op (uncompressed workloads): the harness's `frame_crc_file` limit (whole file read into one reused buffer, framing walked by hand, both masked CRC32Cs checked), its repetitions alternated with `read_parse` `st`'s, whose seconds in the same pairs are its line's `beside_secs`: the read + CRC limit and `read_parse` at the same moments |
//! | `write_prebuilt` | `st` | `RecordWriter::create` + `write(&[u8])` per record + `finish` (gzip level 6 for `mnist_gz`) |
//! | `write_example` | `st` | `Writer::write(&T)` of pre-built derived values (encode + framing + CRC) + `finish` |
//! | `write_build` | `st` | build the derived value from owned typed values + `Writer::write` + `finish` |
//! | `write_build_fresh` | `st` | `write_build` into a new file: the previous output removed before each repetition, untimed (no truncate, no writeback at `close`) |
//! | `encode_mem` | `st` | `encode_raw` of pre-built derived values into one reused buffer, as `Writer::write` does: the encoder alone, no framing, no I/O |
//! | `encode_mem` | `prost` | prost's `Message::encode_raw` of the same records as `tensorflow.Example` / `SequenceExample` values (decoded beforehand, untimed): the reference encoder |
//! | `write_limit` | `st` | not a library op: the source file's bytes, already framed, written with `write_all` of 1 MiB slices into the write ops' output path (truncated by `File::create`) + close; what any writer of these bytes is bound by |
//! | `write_limit_fresh` | `st` | the same into a new file (the previous output removed, untimed) |
//! | `convert` | `ofrecord`, `gzip` | not a protocol op: the file re-encoded record by record as `tfrecord convert` does: `ofrecord` decodes each `Example`, converts it (`convert::example_to_ofrecord`) and writes an OFRecord file (not for SequenceExamples); `gzip` copies the records into a gzip TFRecord (level 6). Read back and compared with the source afterwards |
//! | `cores_probe` | `st`, `mt2` | not a library op: CRC32C over a cache-resident 1 MiB buffer per thread, on 1 and 2 threads; the machine's own two-thread scaling at that point of the run (its chains bound by latency) |
//! | `alu_probe` | `st`, `mt2` | not a library op: six independent integer chains per thread, bound by the core's execution units, on 1 and 2 threads: the host's two-thread scaling by a second kernel (bench/NOTES.md says how far each probe's readings went with the decoders') |
//!
//! Where a one-thread and a two-thread variant are both asked for (`read_parse` `st` and `mt2`,
//! `spec` and `spec_mt2`; `parse_mem` likewise), their repetitions alternate, and a short
//! `cores_probe` and `alu_probe` (128 passes per thread each, one thread then two) are read
//! before the first pair and after each; the `RESULT` line's `probe` (CRC32C) and `probe_alu`
//! fields hold each pair's `[before, after]` readings of 2 x (one thread's time) / (the slower
//! of two threads' times), so that each pair's ratio can be read beside the two-thread scaling
//! the host gave at that moment. The `_halves` variant of the one-thread side, when asked for
//! too, runs beside each pair (`st`, `mt2`, `st_halves`, then `st_halves`, `mt2`, `st`, ...).
//!
//! `--peak-rss` instead runs the streaming ops once each in a fresh child process and prints
//! `RSS {json}` lines with the child's peak resident set size (`VmHWM`). `--stream-only` skips
//! the in-memory setup (records loaded for `parse_mem` and the writes, and the prost count the
//! parse checks compare with): only the streaming ops run, record counts still checked. Under
//! `perf record` it gives a profile of the measured op alone.

mod pipeline;
mod records;
mod sidecar;
mod spec;
mod timing;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tfrecord_core::convert;
use tfrecord_core::proto::{oneflow, tensorflow};
use tfrecord_core::{
    Compression, Encode, Format, Message, Reader, ReaderOptions, RecordReader, RecordWriter,
    Writer, WriterOptions,
};

use crate::pipeline::{
    BatchSink, Derived, FileHalves, RawSink, Totals, frame_crc_file, mem_parallel, read_batches,
    read_batches_from, read_parallel,
};
use crate::records::{CtrShape, MnistShape, SeqShape, Shape, check_spec, decode};
use crate::sidecar::Sidecar;
use crate::spec::{SpecParser, SpecSink};
use crate::timing::{
    Emit, Halves, HostProbe, Times, measure, measure_pair, measure_setup, peak_rss_kib,
};

const PEER: &str = "tfrecord-rs";
const WORKLOADS: [&str; 4] = ["mnist", "ctr", "seq", "mnist_gz"];
/// Worker threads of the multi-threaded variants.
const THREADS: usize = 2;
const USAGE: &str = "usage: tfrecord-bench [--data DIR] [--out DIR] [--reps N] [--workloads a,b] \
                     [--ops x,y] [--variants st,mt2,spec,spec_mt2] [--peak-rss] [--stream-only] \
                     [--resident N]";

struct Args {
    data: PathBuf,
    out: PathBuf,
    reps: usize,
    workloads: Vec<String>,
    ops: Vec<String>,
    variants: Vec<String>,
    /// Spawn a child per streaming op and report its peak RSS.
    peak_rss: bool,
    /// No in-memory setup (so only the streaming ops run, and their value counts are not
    /// checked against prost); print `VMHWM <KiB>` at the end. What `--peak-rss` runs, and
    /// handy under a profiler: the profile then holds only the measured op.
    stream_only: bool,
    /// `--resident N`: also run `parse_resident`, the in-memory parses over the first N records
    /// repeated to the file's count (a diagnostic, not a protocol op).
    resident: Option<usize>,
}

fn split(s: &str) -> Vec<String> {
    s.split(',')
        .filter(|x| !x.is_empty())
        .map(String::from)
        .collect()
}

impl Args {
    fn parse() -> Result<Args, String> {
        let env = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_string());
        let reps = env("REPS", "5");
        let mut a = Args {
            data: env("DATA_DIR", "/tmp/peers/data").into(),
            out: env("OUT_DIR", "/tmp/peers/out").into(),
            reps: reps
                .parse()
                .map_err(|_| format!("REPS={reps}: not a number"))?,
            workloads: split(&env("WORKLOADS", "")),
            ops: split(&env("OPS", "")),
            variants: split(&env("VARIANTS", "")),
            peak_rss: false,
            stream_only: false,
            resident: None,
        };
        let mut it = std::env::args().skip(1);
        while let Some(flag) = it.next() {
            let mut val = || {
                it.next()
                    .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
            };
            match flag.as_str() {
                "--data" => a.data = val()?.into(),
                "--out" => a.out = val()?.into(),
                "--reps" => {
                    let v = val()?;
                    a.reps = v.parse().map_err(|_| format!("--reps {v}: not a number"))?;
                }
                "--workloads" => a.workloads = split(&val()?),
                "--ops" => a.ops = split(&val()?),
                "--variants" => a.variants = split(&val()?),
                "--peak-rss" => a.peak_rss = true,
                "--stream-only" => a.stream_only = true,
                "--resident" => {
                    let v = val()?;
                    let n = v.parse().ok().filter(|&n: &usize| n > 0);
                    a.resident = Some(n.ok_or_else(|| format!("--resident {v}: not a count"))?);
                }
                "-h" | "--help" => {
                    println!("{USAGE}");
                    std::process::exit(0);
                }
                other => return Err(format!("unknown argument {other}\n{USAGE}")),
            }
        }
        if a.reps == 0 {
            return Err("REPS must be at least 1".into());
        }
        Ok(a)
    }

    fn want(&self, op: &str, variant: &str) -> bool {
        (self.ops.is_empty() || self.ops.iter().any(|o| o == op))
            && (self.variants.is_empty() || self.variants.iter().any(|v| v == variant))
    }
}

/// What a workload's records hold, from an independent prost decode: used to check that every
/// measured run extracted exactly these values.
struct Loaded {
    /// The decompressed payloads back to back.
    buf: Vec<u8>,
    /// Each payload's range in `buf`.
    ranges: Vec<std::ops::Range<usize>>,
    /// Values the full spec extracts from all records (strings count one each).
    values: u64,
}

impl Loaded {
    fn records(&self) -> Vec<&[u8]> {
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
fn spec_values(sc: &Sidecar, rec: &[u8]) -> Result<u64, String> {
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

/// Reads every record (CRC checked) into memory and counts the spec's values with prost.
fn load(sc: &Sidecar) -> Result<Loaded, String> {
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
fn check_records(sc: &Sidecar, r: &Result<u64, String>) -> Result<(), String> {
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
fn check_totals(sc: &Sidecar, expect_values: Option<u64>, t: &Totals) -> Result<(), String> {
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

struct Ctx<'a> {
    args: &'a Args,
    sc: &'a Sidecar,
    loaded: Option<&'a Loaded>,
    opts: ReaderOptions,
}

impl Ctx<'_> {
    /// Measures `op` done two ways, `a` and `b` (variant, work, note), each when the
    /// arguments want it, and prints their results. When both are wanted their repetitions
    /// alternate ([`measure_pair`]), so that the ratio of the two (two threads against one)
    /// is taken at the same moments of the host; beside them, when given and wanted, variant
    /// `<a>_halves`: `halves(0)` and `halves(1)`, `a`'s work cut in two, run at once.
    fn measure_two(
        &self,
        op: &str,
        a: (&str, impl FnMut() -> Outcome, &str),
        b: (&str, impl FnMut() -> Outcome, &str),
        halves: Option<&(dyn Fn(usize) -> Outcome + Sync)>,
        check: impl FnMut(&Outcome) -> Result<(), String>,
    ) -> Result<(), String> {
        let reps = self.args.reps;
        match (self.args.want(op, a.0), self.args.want(op, b.0)) {
            (true, true) => {
                let split = format!("{}_halves", a.0);
                let halves = halves
                    .filter(|_| self.args.want(op, &split))
                    .map(|run| Halves {
                        run,
                        join: Totals::join,
                    });
                let (ta, tb, th) =
                    measure_pair(reps, a.1, b.1, halves, check, Some(probe_scaling))?;
                let paired = |note: &str, other: &str| {
                    format!("{note}; repetitions alternated with {other}'s")
                };
                self.emit(a.0, op, &paired(a.2, b.0), &ta);
                self.emit(b.0, op, &paired(b.2, a.0), &tb);
                if let Some(th) = th {
                    let note = format!(
                        "not a library op: {} run on each half of the records (cut at the middle record), both halves at once on {THREADS} threads, nothing shared or handed between them; over {}, what the machine gave two threads of this work at these moments; repetitions alternated with {} and {}'s",
                        a.0, a.0, a.0, b.0
                    );
                    self.emit(&split, op, &note, &th);
                }
            }
            (true, false) => self.emit(a.0, op, a.2, &measure(reps, a.1, check)?),
            (false, true) => self.emit(b.0, op, b.2, &measure(reps, b.1, check)?),
            (false, false) => {}
        }
        Ok(())
    }

    fn emit(&self, variant: &str, op: &str, note: &str, t: &Times) {
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

    fn expect_values(&self) -> Option<u64> {
        self.loaded.map(|l| l.values)
    }

    /// Where the `mt2` threads take their chunks.
    fn mt2_source(&self) -> &'static str {
        if self.opts.get_compression() == Compression::None {
            "SharedChunks: each thread copies its own chunk out of the file"
        } else {
            "turns at one ChunkReader, which inflates"
        }
    }

    fn gz_note(&self) -> &'static str {
        if self.opts.get_compression() == Compression::None {
            ""
        } else {
            " (gzip: flate2/zlib-rs inflate)"
        }
    }
}

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

/// Bytes of each thread's buffer in the CRC32C kernel of the probes: within a core's L2.
const PROBE_BYTES: usize = 1 << 20;
/// Iterations of the ALU kernel per pass: about as long as a CRC32C pass over [`PROBE_BYTES`].
const ALU_ITERS: u64 = 1 << 15;
/// Passes per thread and repetition of `cores_probe` and `alu_probe` (512 MiB of CRC32C,
/// ~20 ms at 30 GB/s; the ALU kernel about as long).
const PROBE_PASSES: u64 = 512;

/// A kernel of the host probes: work that touches nothing shared (no memory traffic, no I/O),
/// timed on one thread and on two, each doing the one thread's work.
#[derive(Clone, Copy)]
enum Kernel {
    /// CRC32C over the thread's own cache-resident buffer; its chains are bound by the
    /// instruction's latency.
    Crc,
    /// [`alu_chains`], bound by the core's integer units. How far its two-thread readings
    /// went with the decoders' own scaling, run by run, is in bench/NOTES.md.
    Alu,
}

/// `cores_probe` (CRC32C) and `alu_probe` ([`alu_chains`]): the machine's own two-thread
/// scaling at this point of the run, by each [`Kernel`], for reading the `mt2` rows beside
/// it: `st` one thread, `mt2` two threads each doing the one thread's work. With two whole
/// cores `mt2` gives 2x the passes per second of `st`.
fn cores_probe(c: &Ctx<'_>) -> Result<(), String> {
    for (op, kernel, what) in [
        (
            "cores_probe",
            Kernel::Crc,
            "CRC32C over its own 1 MiB cache-resident buffer",
        ),
        (
            "alu_probe",
            Kernel::Alu,
            "six independent rotate-and-add chains (bound by the core's integer units)",
        ),
    ] {
        for (variant, threads) in [("st", 1u64), ("mt2", THREADS as u64)] {
            if !c.args.want(op, variant) {
                continue;
            }
            let expect = PROBE_PASSES * threads;
            let t = measure(
                c.args.reps,
                || probe_passes(kernel, threads, PROBE_PASSES).0,
                |&n| {
                    if n == expect {
                        Ok(())
                    } else {
                        Err(format!("{op}: {n} passes, expected {expect}"))
                    }
                },
            )?;
            Emit {
                peer: PEER,
                variant,
                workload: &c.sc.name,
                op,
                records: expect,
                bytes: match kernel {
                    Kernel::Crc => expect * PROBE_BYTES as u64,
                    Kernel::Alu => 0,
                },
                note: &format!(
                    "machine probe, not a library op: {threads} thread(s), each {what} {PROBE_PASSES} times; records = passes"
                ),
            }
            .print(&t);
        }
    }
    Ok(())
}

/// Passes per thread of one [`probe_scaling`] reading (~5 ms per kernel and thread count).
const PROBE_SHORT_PASSES: u64 = 128;

/// The host's two-thread scaling at this moment by both kernels: a short `cores_probe` and
/// `alu_probe`, one thread and then two, each 2 x (one thread's time) / (the slower of two
/// threads' times); about 2 where both threads run at full speed at once. [`measure_pair`]
/// reads it around each pair of one- and two-thread repetitions.
fn probe_scaling() -> HostProbe {
    let scaling = |kernel| {
        let (_, one) = probe_passes(kernel, 1, PROBE_SHORT_PASSES);
        let (_, two) = probe_passes(kernel, 2, PROBE_SHORT_PASSES);
        2.0 * one / two
    };
    HostProbe {
        crc: scaling(Kernel::Crc),
        alu: scaling(Kernel::Alu),
    }
}

/// The ALU kernel: six independent chains of a rotate and an add, `iters` steps each. Each
/// step's two operations wait on the previous step of their own chain only, so a core has
/// more independent work than its integer units retire per cycle: the kernel is bound by
/// those units (kept in registers, no memory traffic). Returns the chains folded into one word.
#[inline(never)]
fn alu_chains(iters: u64, seed: u64) -> u64 {
    let mut s = [seed, seed ^ 1, seed ^ 2, seed ^ 3, seed ^ 4, seed ^ 5];
    for i in 0..iters {
        s[0] = s[0].rotate_left(3).wrapping_add(i);
        s[1] = s[1].rotate_left(7).wrapping_add(i);
        s[2] = s[2].rotate_left(11).wrapping_add(i);
        s[3] = s[3].rotate_left(17).wrapping_add(i);
        s[4] = s[4].rotate_left(23).wrapping_add(i);
        s[5] = s[5].rotate_left(29).wrapping_add(i);
    }
    s.iter().fold(0, |a, &x| a ^ x)
}

/// One probe repetition: `threads` threads each prepare their own input (the CRC32C kernel's
/// buffer), wait for the others (so a thread the scheduler starts late does not read as a slow
/// core), and make `passes` passes of `kernel`. Returns the passes made and the slowest
/// thread's seconds from the common start to its last pass.
fn probe_passes(kernel: Kernel, threads: u64, passes: u64) -> (u64, f64) {
    #[allow(clippy::cast_possible_truncation)] // a thread count
    let start = std::sync::Barrier::new(threads as usize);
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let start = &start;
                s.spawn(move || {
                    let buf: Vec<u8> = match kernel {
                        #[allow(clippy::cast_possible_truncation)] // bytes 0..=255
                        Kernel::Crc => (0..PROBE_BYTES).map(|i| (i as u64 ^ t) as u8).collect(),
                        Kernel::Alu => Vec::new(),
                    };
                    start.wait();
                    let t0 = std::time::Instant::now();
                    let mut done = 0u64;
                    for _ in 0..passes {
                        let out = match kernel {
                            Kernel::Crc => u64::from(tfrecord_core::crc::masked_crc32c(
                                std::hint::black_box(&buf),
                            )),
                            Kernel::Alu => alu_chains(std::hint::black_box(ALU_ITERS), t),
                        };
                        std::hint::black_box(out);
                        done += 1;
                    }
                    (done, t0.elapsed().as_secs_f64())
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or((0, f64::NAN)))
            .fold((0, 0.0), |(n, slowest), (d, secs)| {
                (n + d, f64::max(slowest, secs))
            })
    })
}

/// `read_raw`, `read_raw_nocrc`, `read_decode`: record count and payload bytes checked.
fn raw_reads(c: &Ctx<'_>) -> Result<(), String> {
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
            |r: &Result<Totals, String>| match r {
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
        let prost: DecodeFn = if sc.is_sequence() {
            decode_prost_sequence
        } else {
            decode_prost_example
        };
        let t = measure(c.args.reps, run(c.opts.clone(), prost), ok)?;
        let note = format!(
            "read_raw + prost decode into proto::tensorflow::{} (BTreeMap<String, Feature>, Vec<u8> bytes){}",
            if sc.is_sequence() {
                "SequenceExample"
            } else {
                "Example"
            },
            c.gz_note()
        );
        c.emit("st", "read_decode", &note, &t);
    }
    Ok(())
}

/// `read_parse` and `parse_mem` with the derived type `S`, and with the spec parser.
fn parses<S: Shape>(c: &Ctx<'_>) -> Result<(), String> {
    let sc = c.sc;
    let check = |r: &Result<Totals, String>| match r {
        Ok(t) => check_totals(sc, c.expect_values(), t),
        Err(e) => Err(e.clone()),
    };
    let parser = SpecParser::new(sc)?;
    let read_st = || {
        let reader =
            Reader::<(), S::C>::open_with(&sc.path, c.opts.clone()).map_err(|e| e.to_string())?;
        read_derived::<S, _>(reader)
    };
    // Two one-thread readers of the two halves of an uncompressed file (a compressed stream
    // cannot be entered in the middle).
    let halves = (c.opts.get_compression() == Compression::None)
        .then(|| FileHalves::new(sc, c.opts.clone()))
        .transpose()?;
    let read_half = halves
        .as_ref()
        .map(|h| move |half| read_derived::<S, _>(Reader::new(h.open(half)?, c.opts.clone())));
    let spec_half = halves.as_ref().map(|h| {
        let parser = &parser;
        move |half| {
            let reader = RecordReader::new(h.open(half)?, c.opts.clone());
            read_batches_from(reader, SpecSink::new(parser))
        }
    });
    c.measure_two(
        "read_parse",
        (
            "st",
            read_st,
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
        read_half.as_ref().map(|f| f as &(dyn Fn(usize) -> Outcome + Sync)),
        check,
    )?;
    if c.args.want("read_limit", "st") && c.opts.get_compression() == Compression::None {
        read_limit(c, read_st, check)?;
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
                "runtime spec parser on batches of 1024: {THREADS} threads taking chunks of whole frames (SharedChunks, or turns at one ChunkReader for gzip), each checking its chunk and parsing{}",
                c.gz_note()
            ),
        ),
        spec_half.as_ref().map(|f| f as &(dyn Fn(usize) -> Outcome + Sync)),
        check,
    )?;
    let Some(loaded) = c.loaded else {
        return Ok(());
    };
    if c.opts.get_compression() != Compression::None {
        return Ok(()); // as the harness's TF peer: parse_mem only for uncompressed workloads
    }
    let recs = loaded.records();
    mem_parses::<S>(c, "parse_mem", &recs, (&parser, spec_name), &check)?;
    let Some(n) = c.args.resident else {
        return Ok(());
    };
    // The same parses over the first `n` records again and again, as many as the file holds:
    // nothing streams from memory, so what two threads lose here is not memory traffic.
    // Checked against the one-thread derived parse of the same list.
    let resident: Vec<&[u8]> = recs
        .iter()
        .take(n)
        .copied()
        .cycle()
        .take(recs.len())
        .collect();
    let mut expect = Derived::<S>::new();
    for b in resident.chunks(records::BATCH) {
        expect.batch(b)?;
    }
    expect.finish()?;
    let values = expect.totals().values;
    let same = |r: &Outcome| match r {
        Ok(t) => check_totals(sc, Some(values), t),
        Err(e) => Err(e.clone()),
    };
    mem_parses::<S>(c, "parse_resident", &resident, (&parser, spec_name), &same)
}

/// `read_limit` (uncompressed workloads): the read + framing + CRC limit of the harness's
/// `frame_crc_file` baseline, its repetitions alternated with `read_parse` `st`'s, whose
/// seconds in the same pairs go on its `RESULT` line (`beside_secs`). The harness measures its
/// limit minutes away from the candidate, on a host whose speed drifts by a third from one
/// minute to the next; this takes the ratio at the same moments.
fn read_limit(
    c: &Ctx<'_>,
    read_st: impl Fn() -> Outcome,
    check: impl Fn(&Outcome) -> Result<(), String>,
) -> Result<(), String> {
    let sc = c.sc;
    let mut whole = Vec::new();
    let parse = || {
        let out = read_st();
        check(&out)?;
        out.map(|t| t.records)
    };
    let (mut limit, parsed, _) = measure_pair(
        c.args.reps,
        || frame_crc_file(&sc.path, &mut whole),
        parse,
        None,
        |r| check_records(sc, r),
        None::<fn() -> HostProbe>,
    )?;
    limit.beside = Some((String::from("read_parse st"), parsed.secs));
    c.emit(
        "st",
        "read_limit",
        "not a library op: the harness's frame_crc_file limit (the whole file read into one reused buffer, framing walked by hand, both masked CRC32Cs checked); beside_secs: read_parse st's seconds in the same pairs, its repetitions alternated with these",
        &limit,
    );
    Ok(())
}

/// The derived read of `read_parse` `st`: every record decoded in place into typed columns.
fn read_derived<S: Shape, R: std::io::Read>(mut reader: Reader<(), S::C, R>) -> Outcome {
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

/// What one repetition of a parse op returns.
type Outcome = Result<Totals, String>;

/// `parse_mem` (and the `--resident` diagnostic `parse_resident`) over `recs`: the derived
/// parse on one thread and two, then the spec parser on one and two, each pair alternated.
fn mem_parses<S: Shape>(
    c: &Ctx<'_>,
    op: &str,
    recs: &[&[u8]],
    (parser, spec_name): (&SpecParser, &str),
    check: &dyn Fn(&Outcome) -> Result<(), String>,
) -> Result<(), String> {
    let over = |recs: &[&[u8]]| -> Outcome {
        let mut sink = Derived::<S>::new();
        for b in recs.chunks(records::BATCH) {
            sink.batch(b)?;
        }
        sink.finish()?;
        Ok(Totals {
            records: recs.len() as u64,
            ..sink.totals()
        })
    };
    let (first, second) = recs.split_at(recs.len() / 2);
    let half = |h: usize| if h == 0 { first } else { second };
    let mem_half = |h| over(half(h));
    let spec_half = |h| mem_parallel(half(h), 1, || SpecSink::new(parser));
    c.measure_two(
        op,
        (
            "st",
            || over(recs),
            "derived decode + typed columns over in-memory records, batches of 1024 (no I/O, no CRC)",
        ),
        (
            "mt2",
            || mem_parallel(recs, THREADS, Derived::<S>::new),
            &format!("as {op} st, batches of 1024 taken in turn by {THREADS} threads (scoped)"),
        ),
        Some(&mem_half),
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
        Some(&spec_half),
        check,
    )
}

/// Reads a written file back (with `opts`) and checks each of its records against the source
/// record at the same index: `same(written, source)`.
fn read_back(
    path: &Path,
    opts: ReaderOptions,
    loaded: &Loaded,
    same: impl Fn(&[u8], &[u8]) -> Result<bool, String>,
) -> Result<(), String> {
    let mut r = RecordReader::open(path, opts).map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    let mut i = 0usize;
    while r.read_into(&mut buf).map_err(|e| e.to_string())? {
        let want = loaded
            .ranges
            .get(i)
            .map(|rg| &loaded.buf[rg.clone()])
            .ok_or("the written file holds more records than the source")?;
        if !same(&buf, want)? {
            return Err(format!(
                "{}: record {i} differs from the source",
                path.display()
            ));
        }
        i += 1;
    }
    if i != loaded.ranges.len() {
        return Err(format!("{}: {i} records written", path.display()));
    }
    Ok(())
}

/// Reads a written file back and compares it with the source records: byte for byte when
/// `exact`, else as decoded messages where the bytes differ.
fn verify_written(
    path: &Path,
    compression: Compression,
    loaded: &Loaded,
    exact: bool,
    is_seq: bool,
) -> Result<(), String> {
    let opts = ReaderOptions::new().compression(compression);
    read_back(path, opts, loaded, |buf, want| {
        Ok(if exact || buf == want {
            buf == want
        } else if is_seq {
            tensorflow::SequenceExample::decode(buf).ok()
                == tensorflow::SequenceExample::decode(want).ok()
        } else {
            tensorflow::Example::decode(buf).ok() == tensorflow::Example::decode(want).ok()
        })
    })
}

/// `write_prebuilt`, `write_example`, `write_build`.
fn writes<S: Shape>(c: &Ctx<'_>, loaded: &Loaded) -> Result<(), String> {
    let sc = c.sc;
    let reps = c.args.reps;
    let compression = c.opts.get_compression();
    let gz = compression != Compression::None;
    std::fs::create_dir_all(&c.args.out).map_err(|e| format!("{}: {e}", c.args.out.display()))?;
    let out = c.args.out.join(format!(
        "{PEER}_{}.tfrecord{}",
        sc.name,
        if gz { ".gz" } else { "" }
    ));
    let wopts = WriterOptions::new().compression(compression);
    let recs = loaded.records();
    let size_check = |r: &Result<u64, String>| -> Result<(), String> {
        let n = r.clone()?;
        if n != sc.num_records {
            return Err(format!("{}: {n} records written", sc.name));
        }
        if !gz {
            let len = std::fs::metadata(&out).map_err(|e| e.to_string())?.len();
            if len != sc.file_bytes {
                return Err(format!(
                    "{}: wrote {len} bytes, the source file has {}",
                    out.display(),
                    sc.file_bytes
                ));
            }
        }
        Ok(())
    };
    if c.args.want("write_prebuilt", "st") {
        let t = measure(
            reps,
            || -> Result<u64, String> {
                let mut w = RecordWriter::create(&out, wopts.clone()).map_err(|e| e.to_string())?;
                for r in &recs {
                    w.write(r).map_err(|e| e.to_string())?;
                }
                let n = w.records_written();
                w.finish().map_err(|e| e.to_string())?;
                Ok(n)
            },
            size_check,
        )?;
        verify_written(&out, compression, loaded, true, sc.is_sequence())?;
        let note = if gz {
            "RecordWriter::create(gzip level 6) + write(&[u8]) + finish; page cache, no fsync"
        } else {
            "RecordWriter::create + write(&[u8]) per record (framing + CRCs, 1 MiB buffer) + finish; page cache, no fsync; output byte-identical"
        };
        c.emit("st", "write_prebuilt", note, &t);
    }
    if gz {
        let _ = std::fs::remove_file(&out);
        return Ok(());
    }
    write_limits(c, &out)?;
    let want_build = c.args.want("write_build", "st");
    let want_fresh = c.args.want("write_build_fresh", "st");
    let want_example = c.args.want("write_example", "st");
    let want_encode = c.args.want("encode_mem", "st");
    if c.args.want("encode_mem", "prost") {
        if sc.is_sequence() {
            prost_encode::<tensorflow::SequenceExample>(c, &recs)?;
        } else {
            prost_encode::<tensorflow::Example>(c, &recs)?;
        }
    }
    if want_build || want_fresh || want_example || want_encode {
        let values: Vec<S::Values> = recs
            .iter()
            .map(|r| decode::<S>(r).map(|rec| S::values(&rec)))
            .collect::<tfrecord_core::Result<_>>()
            .map_err(|e| e.to_string())?;
        let write_all = |path: &Path, it: &mut dyn Iterator<Item = S::Owned>| {
            let mut w = Writer::<S::Owned, S::C>::create_with(path, WriterOptions::new())
                .map_err(|e| e.to_string())?;
            let mut n = 0u64;
            for v in it {
                w.write(&v).map_err(|e| e.to_string())?;
                n += 1;
            }
            w.finish().map_err(|e| e.to_string())?;
            Ok(n)
        };
        let built: Vec<S::Owned> = if want_example || want_encode {
            values.iter().cloned().map(S::build).collect()
        } else {
            Vec::new()
        };
        if want_encode {
            // As `Writer::write` does: the reused buffer needs no sizing pass.
            let t = encode_loop(c, &built, Encode::<S::C>::encode_raw)?;
            c.emit(
                "st",
                "encode_mem",
                "derived encode_raw of pre-built values into one reused Vec (as Writer::write), no framing, no I/O",
                &t,
            );
        }
        if want_example {
            let t = measure(
                reps,
                || -> Result<u64, String> {
                    let mut w = Writer::<S::Owned, S::C>::create_with(&out, WriterOptions::new())
                        .map_err(|e| e.to_string())?;
                    let mut n = 0u64;
                    for v in &built {
                        w.write(v).map_err(|e| e.to_string())?;
                        n += 1;
                    }
                    w.finish().map_err(|e| e.to_string())?;
                    Ok(n)
                },
                size_check,
            )?;
            verify_written(&out, compression, loaded, false, sc.is_sequence())?;
            c.emit(
                "st",
                "write_example",
                "Writer::write(&T) of pre-built derived values: derived encode + framing + CRCs + finish",
                &t,
            );
        }
        let builds = [
            (
                want_build,
                false,
                "write_build",
                "build derived values from owned typed values (moved in) + Writer::write + finish (values cloned before each rep, untimed)",
            ),
            (
                want_fresh,
                true,
                "write_build_fresh",
                "write_build into a new file: the previous output removed before each rep (untimed), so no truncate of it and no writeback at close",
            ),
        ];
        for (want, fresh, op, note) in builds {
            if !want {
                continue;
            }
            let t = measure_setup(
                reps,
                || {
                    if fresh {
                        let _ = std::fs::remove_file(&out);
                    }
                    values.clone()
                },
                |vals| write_all(&out, &mut vals.into_iter().map(S::build)),
                size_check,
            )?;
            verify_written(&out, compression, loaded, false, sc.is_sequence())?;
            c.emit("st", op, note, &t);
        }
    }
    let _ = std::fs::remove_file(&out);
    Ok(())
}

/// Checks that one encode pass over every record produced the source's payload bytes.
fn payload_check(sc: &Sidecar, bytes: u64) -> Result<(), String> {
    if bytes == sc.payload_bytes {
        Ok(())
    } else {
        Err(format!(
            "{}: encoded {bytes} payload bytes, the source has {}",
            sc.name, sc.payload_bytes
        ))
    }
}

/// `encode_mem`: `encode` of every item into one reused buffer, cleared before each, timed;
/// the bytes written checked against the source's payload.
fn encode_loop<T>(
    c: &Ctx<'_>,
    items: &[T],
    encode: impl Fn(&T, &mut Vec<u8>),
) -> Result<Times, String> {
    measure(
        c.args.reps,
        || {
            let mut buf = Vec::new();
            items.iter().fold(0u64, |bytes, v| {
                buf.clear();
                encode(v, &mut buf);
                std::hint::black_box(&buf);
                bytes + buf.len() as u64
            })
        },
        |&n| payload_check(c.sc, n),
    )
}

/// `encode_mem` `prost`: prost's own encoder over the same records, decoded into prost's
/// message types beforehand (untimed): the reference encoder for the derived one.
fn prost_encode<M: Message + Default>(c: &Ctx<'_>, recs: &[&[u8]]) -> Result<(), String> {
    let msgs: Vec<M> = recs
        .iter()
        .map(|r| M::decode(*r))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    // `encode_raw` (hidden in prost's docs, but public) has the same passes as the derived
    // `encode_raw`; `encode` would add a top-level sizing pass.
    let t = encode_loop(c, &msgs, |m, buf| m.encode_raw(buf))?;
    c.emit(
        "prost",
        "encode_mem",
        "prost::Message::encode_raw of tensorflow.Example / SequenceExample values decoded beforehand, into one reused Vec; the reference encoder",
        &t,
    );
    Ok(())
}

/// `write_limit` and `write_limit_fresh`: not library ops. The source file's bytes, already
/// framed, written with `write_all` of 1 MiB slices: what any writer of these bytes is bound
/// by, into the output path the write ops use (truncated) and into a new file.
fn write_limits(c: &Ctx<'_>, out: &Path) -> Result<(), String> {
    let want = [
        (c.args.want("write_limit", "st"), false, "write_limit"),
        (
            c.args.want("write_limit_fresh", "st"),
            true,
            "write_limit_fresh",
        ),
    ];
    if !want.iter().any(|w| w.0) {
        return Ok(());
    }
    let sc = c.sc;
    let file = std::fs::read(&sc.path).map_err(|e| format!("{}: {e}", sc.path.display()))?;
    for (want, fresh, op) in want {
        if !want {
            continue;
        }
        let t = measure_setup(
            c.args.reps,
            || {
                if fresh {
                    let _ = std::fs::remove_file(out);
                }
            },
            |()| -> Result<u64, String> {
                let mut f = std::fs::File::create(out).map_err(|e| e.to_string())?;
                for part in file.chunks(1 << 20) {
                    f.write_all(part).map_err(|e| e.to_string())?;
                }
                drop(f);
                std::fs::metadata(out)
                    .map(|m| m.len())
                    .map_err(|e| e.to_string())
            },
            |r| match r {
                Ok(n) if *n == sc.file_bytes => Ok(()),
                Ok(n) => Err(format!(
                    "{}: wrote {n} bytes of {}",
                    out.display(),
                    sc.file_bytes
                )),
                Err(e) => Err(e.clone()),
            },
        )?;
        let note = if fresh {
            "machine limit, not a library op: the source file's bytes (already framed) written with write_all of 1 MiB slices into a new file (the previous output removed, untimed) + close"
        } else {
            "machine limit, not a library op: the source file's bytes (already framed) written with write_all of 1 MiB slices into the write ops' output path (File::create truncates it) + close"
        };
        c.emit("st", op, note, &t);
    }
    Ok(())
}

/// Re-encodes `src` into `to` record by record, as `tfrecord convert` does: with `ofrecord`
/// each `tf.train.Example` decoded, converted (`convert::example_to_ofrecord`) and written as
/// an OFRecord; else each record's bytes copied. Returns the records written.
fn convert_file(
    src: &Path,
    ropts: ReaderOptions,
    to: &Path,
    wopts: WriterOptions,
    ofrecord: bool,
) -> Result<u64, String> {
    let mut r = RecordReader::open(src, ropts).map_err(|e| e.to_string())?;
    let mut w = RecordWriter::create(to, wopts).map_err(|e| e.to_string())?;
    let (mut rec, mut out) = (Vec::new(), Vec::new());
    while r.read_into(&mut rec).map_err(|e| e.to_string())? {
        if ofrecord {
            let e = tensorflow::Example::decode(&rec[..])
                .map_err(|e| format!("{}: record {}: {e}", src.display(), w.records_written()))?;
            out.clear();
            convert::example_to_ofrecord(&e)
                .encode(&mut out)
                .map_err(|e| e.to_string())?;
            w.write(&out)
        } else {
            w.write(&rec)
        }
        .map_err(|e| e.to_string())?;
    }
    let n = w.records_written();
    w.finish().map_err(|e| e.to_string())?;
    Ok(n)
}

/// `convert` (not a protocol op): the file re-encoded as `tfrecord convert` does, `ofrecord`
/// into an OFRecord file (`Example` workloads) and `gzip` into a gzip TFRecord (level 6). Each
/// output is read back and compared with the source's records when they are loaded.
fn converts(c: &Ctx<'_>) -> Result<(), String> {
    let sc = c.sc;
    for (variant, format, compression) in [
        ("ofrecord", Format::OfRecord, Compression::None),
        ("gzip", Format::TfRecord, Compression::Gzip),
    ] {
        let ofrecord = format == Format::OfRecord;
        if !c.args.want("convert", variant) || (ofrecord && sc.is_sequence()) {
            continue;
        }
        std::fs::create_dir_all(&c.args.out)
            .map_err(|e| format!("{}: {e}", c.args.out.display()))?;
        let to = c
            .args
            .out
            .join(format!("{PEER}_{}.convert.{variant}", sc.name));
        let wopts = WriterOptions::new().format(format).compression(compression);
        let t = measure(
            c.args.reps,
            || convert_file(&sc.path, c.opts.clone(), &to, wopts.clone(), ofrecord),
            |r| check_records(sc, r),
        )?;
        if let Some(loaded) = c.loaded {
            verify_converted(&to, format, compression, loaded)?;
        }
        let note = format!(
            "not a protocol op: as `tfrecord convert`, RecordReader::read_into + {} + RecordWriter{}; page cache, no fsync",
            if ofrecord {
                "prost Example decode, convert::example_to_ofrecord, encode, OFRecord framing"
            } else {
                "the record's bytes copied into a gzip TFRecord (level 6)"
            },
            c.gz_note()
        );
        c.emit(variant, "convert", &note, &t);
    }
    Ok(())
}

/// Reads a converted file back and compares each record with the source's, converted the same
/// way in memory.
fn verify_converted(
    path: &Path,
    format: Format,
    compression: Compression,
    loaded: &Loaded,
) -> Result<(), String> {
    let opts = ReaderOptions::new().format(format).compression(compression);
    read_back(path, opts, loaded, |buf, src| {
        if format != Format::OfRecord {
            return Ok(buf == src);
        }
        let e = tensorflow::Example::decode(src).map_err(|e| e.to_string())?;
        Ok(oneflow::OfRecord::decode(buf).ok() == Some(convert::example_to_ofrecord(&e)))
    })
}

fn run_workload<S: Shape>(args: &Args, sc: &Sidecar) -> Result<(), String> {
    check_spec::<S>(sc)?;
    let loaded = if args.stream_only {
        None
    } else {
        Some(load(sc)?)
    };
    let c = Ctx {
        args,
        sc,
        loaded: loaded.as_ref(),
        opts: ReaderOptions::new().compression(sc.compression()?),
    };
    cores_probe(&c)?;
    raw_reads(&c)?;
    parses::<S>(&c)?;
    if let Some(l) = &loaded {
        writes::<S>(&c, l)?;
    }
    converts(&c)
}

/// `--peak-rss`: each streaming op in a fresh child process, which reports its `VmHWM`.
fn peak_rss(args: &Args) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut jobs = vec![("-".to_string(), "none".to_string(), "st".to_string())];
    for w in WORKLOADS {
        if !args.workloads.is_empty() && !args.workloads.iter().any(|x| x == w) {
            continue;
        }
        for (op, v) in [
            ("read_raw", "st"),
            ("read_raw", "mt2"),
            ("read_decode", "st"),
            ("read_parse", "st"),
            ("read_parse", "mt2"),
            ("read_parse", "spec"),
            ("read_parse", "spec_mt2"),
            ("convert", "ofrecord"),
            ("convert", "gzip"),
        ] {
            if op == "convert" && v == "ofrecord" && w == "seq" {
                continue; // SequenceExamples have no OFRecord form
            }
            jobs.push((w.to_string(), op.to_string(), v.to_string()));
        }
    }
    for (w, op, v) in jobs {
        let outp = std::process::Command::new(&exe)
            .args(["--stream-only", "--reps", "1", "--workloads", &w])
            .args(["--ops", &op, "--variants", &v])
            .arg("--data")
            .arg(&args.data)
            .arg("--out")
            .arg(&args.out)
            .stderr(std::process::Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        if !outp.status.success() {
            return Err(format!("peak-rss child {w} {op} {v} failed"));
        }
        let text = String::from_utf8_lossy(&outp.stdout);
        let kib = text
            .lines()
            .find_map(|l| l.strip_prefix("VMHWM "))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .ok_or_else(|| format!("peak-rss child {w} {op} {v}: no VMHWM line"))?;
        let line = serde_json::json!({
            "peer": PEER, "workload": w, "op": op, "variant": v, "peak_rss_kib": kib,
            "note": "VmHWM of a fresh process that ran the op once (warm-up) + 1 timed rep",
        });
        println!("RSS {line}");
        eprintln!(
            "# peak RSS {w:>9} {op:<12} {v:<8} {:>8.1} MiB",
            kib as f64 / 1024.0
        );
    }
    Ok(())
}

fn run() -> Result<(), String> {
    let args = Args::parse()?;
    if args.peak_rss {
        return peak_rss(&args);
    }
    eprintln!(
        "# tfrecord-rs {} reps={} data={}",
        env!("CARGO_PKG_VERSION"),
        args.reps,
        args.data.display()
    );
    for w in WORKLOADS {
        if !args.workloads.is_empty() && !args.workloads.iter().any(|x| x == w) {
            continue;
        }
        let sc = Sidecar::load(&args.data, w)?;
        match w {
            "mnist" | "mnist_gz" => run_workload::<MnistShape>(&args, &sc)?,
            "ctr" => run_workload::<CtrShape>(&args, &sc)?,
            _ => run_workload::<SeqShape>(&args, &sc)?,
        }
    }
    if args.stream_only {
        println!("VMHWM {}", peak_rss_kib().unwrap_or(0));
    }
    std::io::stdout().flush().map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tfrecord-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tfrecord_core::Encode;

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
    }

    #[test]
    fn conversions_read_back_as_the_source() {
        let dir = tempfile::tempdir().expect("temp dir");
        let src = dir.path().join("ctr.tfrecord");
        let recs = records::<CtrShape>(40);
        let mut w = RecordWriter::create(&src, WriterOptions::new()).expect("create");
        for r in &recs {
            w.write(r).expect("write");
        }
        w.finish().expect("finish");
        let loaded = |recs: &[Vec<u8>]| {
            let mut l = Loaded {
                buf: Vec::new(),
                ranges: Vec::new(),
                values: 0,
            };
            for r in recs {
                l.ranges.push(l.buf.len()..l.buf.len() + r.len());
                l.buf.extend_from_slice(r);
            }
            l
        };
        let (same, other) = (loaded(&recs), loaded(&records::<CtrShape>(41)[1..]));
        for (format, compression) in [
            (Format::OfRecord, Compression::None),
            (Format::TfRecord, Compression::Gzip),
        ] {
            let to = dir.path().join("out");
            let wopts = WriterOptions::new().format(format).compression(compression);
            let n = convert_file(
                &src,
                ReaderOptions::new(),
                &to,
                wopts,
                format == Format::OfRecord,
            );
            assert_eq!(n, Ok(40));
            verify_converted(&to, format, compression, &same).expect("the source's records");
            let err = verify_converted(&to, format, compression, &other).expect_err("others");
            assert!(err.ends_with("record 0 differs from the source"), "{err}");
        }
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
