//! `tfrecord-bench`: this workspace measured on the peer harness's workloads, printing the
//! `RESULT {json}` lines of the harness's protocol with `"peer": "tfrecord-rs"`.
//!
//! ```text
//! tfrecord-bench [--data DIR] [--out DIR] [--reps N] [--workloads LIST] [--ops LIST]
//!                [--variants LIST] [--peak-rss | --stream-only]
//! ```
//!
//! The data directory holds `<workload>.tfrecord[.gz]` and the `<workload>.json` sidecars
//! written by the harness's `gen_data.py`; this binary reads them with its own code and does
//! not depend on the harness. Each measurement: one untimed warm-up run, then `--reps` timed
//! runs; wall seconds and process CPU seconds (`CLOCK_PROCESS_CPUTIME_ID`, all threads) of
//! each. Every run's work is checked (record count, payload bytes, or the number of values
//! extracted, which must equal the count from an independent prost decode of the same
//! records), so a run that decodes nothing fails instead of printing a number.
//!
//! Ops and variants (`bytes` is always the sidecar's uncompressed `stream_bytes`):
//!
//! | op | variant | what is timed |
//! | --- | --- | --- |
//! | `read_raw` | `st` | `RecordReader::open` + `read_into` one reused buffer, both CRCs checked (gzip: inflate too) |
//! | `read_raw` | `mt2` | 2 threads taking chunks of whole frames as `read_parse` `mt2` does, checking their framing and both CRCs, no decode |
//! | `read_raw_nocrc` | `st` | the same as `st` with `verify_data_crc(false)` (the 8-byte length CRC is always checked) |
//! | `read_decode` | `st` | `read_raw` + prost decode into `proto::tensorflow::Example` / `SequenceExample` |
//! | `read_parse` | `st` | `Reader::next_lent` (derived decode, strings borrowed from the read buffer) + typed columns, batches of 1024 |
//! | `read_parse` | `owned` | what users write: `Reader::<T>::open(path)` and `for r in reader`, owned derived values (`String`, `Vec<u8>`, `Vec<i64>`, `[f32; 16]`, `i64`; `Vec<Vec<i64>>` per step of `seq`) pushed into a `Vec` of 1024 whose values a consumer counts without reading them (as the `columns` row counts its batches' values, and as TensorFlow's peer drains its batches), then cleared, which drops them |
//! | `read_parse` | `owned_batch` | the same owned values read with `Reader::read_batch(&mut batch, 1024)`, which decodes each record into the value of the last batch at its place (`Decode::decode_into`: the `String`, `Vec` and per-step buffers reused), the same consumer |
//! | `read_parse` | `columns` | `Reader::<T>::open(path)` + `batches(1024)`: the owned derived type's records decoded straight into one flat buffer per field (`columns::ColumnBatch`, Arrow's layout), one thread; each batch's values counted (strings one each) |
//! | `read_parse` | `mt2` | 2 threads of `for_each_chunk`, each checking its chunks of whole frames and decoding their records in place (`Chunk::records`) into columns consumed every 1024 rows |
//! | `read_parse` | `spec` | batches of 1024 read, then parsed by `parse::ExampleParser` / `SequenceExampleParser` (spec from the sidecar at run time), one thread |
//! | `read_parse` | `spec_mt2` | the same 2 threads and chunks, running the spec parser on batches of 1024 records gathered from them |
//! | `parse_mem` | `st`, `mt2`, `spec`, `spec_mt2` | the same decode + extract over records already in memory (uncompressed workloads) |
//! | `write_prebuilt` | `st` | `RecordWriter::create` + `write(&[u8])` per record + `finish` (gzip level 6 for `mnist_gz`) |
//! | `write_example` | `st` | `Writer::write(&T)` of pre-built derived values (encode + framing + CRC) + `finish` |
//! | `write_build` | `st` | build the derived value from owned typed values + `Writer::write` + `finish` |
//! | `convert` | `ofrecord`, `gzip` | not a protocol op: the file re-encoded record by record as `tfrecord convert` does (an Example rewritten on the wire into an OFRecord, no decode), into an OFRecord file (`Example` workloads) or a gzip TFRecord (level 6) |
//! | `to_arrow` | `st` | records to Arrow RecordBatches (`tfrecord_arrow::ArrowDecoder`, spec from the sidecar) in batches of 1024 read from the file, one thread: the `tfx_bsl` peer's op of the same name |
//! | `to_arrow_mem` | `st` | the same over records in memory (no I/O, no CRC) |
//! | `to_parquet` | `st` | run only when `--ops` names it: the Parquet export as `tfrecord to-parquet --spec` runs it on one thread: records read (CRCs checked), decoded into RecordBatches of 8192 and written by parquet's `ArrowWriter` (Snappy, row groups of 131,072 rows), into `--out` |
//! | `parquet_write` | `st` | the `ArrowWriter` alone over the same RecordBatches decoded beforehand (measured with `to_parquet`, repetitions alternated): the export's bound |
//! | `cli` | `convert_of`, `cat_json`, `from_json`, `verify_decode` | not a protocol op, run only when `--ops` names it: the `tfrecord` binary as users run it on one thread, a child process per run naming the workload's file often enough for 400 MB of input (2 GB for `convert_of` and `verify_decode`) (CPU: the child's user + system time); `bytes` is the input stream for `convert_of` and `verify_decode`, the JSON text for `cat_json` and `from_json` |
//!
//! Where a one-thread and a two-thread variant are both asked for (`st` and `mt2`, `spec` and
//! `spec_mt2`), their repetitions alternate, so that their ratio is taken at the same moments
//! of the host. `--peak-rss` instead runs the streaming ops once each in a fresh child process
//! and prints `RSS {json}` lines with the child's peak resident set size (`VmHWM`).

mod args;
mod arrow;
mod cli;
mod pipeline;
mod reads;
mod records;
mod rss;
mod sidecar;
mod spec;
mod timing;
mod workload;
mod writes;

use std::io::Write as _;
use std::process::ExitCode;

use clap::Parser as _;
use tfrecord_core::ReaderOptions;

use crate::args::{Args, WORKLOADS};
use crate::records::{CtrShape, MnistShape, SeqShape, Shape, check_spec};
use crate::sidecar::Sidecar;
use crate::timing::peak_rss_kib;
use crate::workload::{Ctx, load};

/// Every wanted op of one workload, `S` its record type.
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
    reads::raw_reads(&c)?;
    reads::parses::<S>(&c)?;
    arrow::to_arrow(&c)?;
    arrow::to_parquet(&c)?;
    if let Some(l) = &loaded {
        writes::writes::<S>(&c, l)?;
    }
    writes::converts(&c)?;
    cli::cli(&c)
}

fn run(args: &Args) -> Result<(), String> {
    if args.peak_rss {
        return rss::peak_rss(args);
    }
    eprintln!(
        "# tfrecord-rs {} reps={} data={}",
        env!("CARGO_PKG_VERSION"),
        args.reps,
        args.data.display()
    );
    for w in WORKLOADS.into_iter().filter(|w| args.want_workload(w)) {
        let sc = Sidecar::load(&args.data, w)?;
        match w {
            "mnist" | "mnist_gz" => run_workload::<MnistShape>(args, &sc)?,
            "ctr" => run_workload::<CtrShape>(args, &sc)?,
            _ => run_workload::<SeqShape>(args, &sc)?,
        }
    }
    if args.stream_only {
        println!("VMHWM {}", peak_rss_kib().unwrap_or(0));
    }
    std::io::stdout().flush().map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tfrecord-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
