//! The command line: clap definitions of the bench's flags.

use std::path::PathBuf;

use clap::Parser;
use clap::builder::PossibleValuesParser;

/// The harness's workloads, in the order they run.
pub(crate) const WORKLOADS: [&str; 4] = ["mnist", "ctr", "seq", "mnist_gz"];

/// The ops this binary measures: the protocol's, `convert`, and `cli` (asked for by name only).
const OPS: [&str; 14] = [
    "read_raw",
    "read_raw_nocrc",
    "read_decode",
    "read_parse",
    "parse_mem",
    "write_prebuilt",
    "write_example",
    "write_build",
    "convert",
    "cli",
    "to_arrow",
    "to_arrow_mem",
    "to_parquet",
    "parquet_write",
];

/// The variants of those ops (`convert`'s are its output formats, `cli`'s the commands).
const VARIANTS: [&str; 13] = [
    "st",
    "owned",
    "owned_batch",
    "columns",
    "mt2",
    "spec",
    "spec_mt2",
    "ofrecord",
    "gzip",
    "convert_of",
    "cat_json",
    "from_json",
    "verify_decode",
];

/// Measures the tfrecord workspace on the peer harness's workloads.
///
/// Prints one `RESULT {json}` line per measurement on standard output, in the protocol of the
/// peer harness (peer `tfrecord-rs`), and a readable summary of it on standard error. Each
/// measurement is one untimed warm-up run, then `--reps` timed runs; the work of every run is
/// checked (records, payload bytes, values extracted), so a run that does nothing fails.
#[derive(Debug, Parser)]
#[command(name = "tfrecord-bench", version)]
pub(crate) struct Args {
    /// The harness's data: `<workload>.tfrecord[.gz]` and its `<workload>.json` sidecar.
    #[arg(
        long,
        value_name = "DIR",
        env = "DATA_DIR",
        default_value = "/tmp/peers/data"
    )]
    pub(crate) data: PathBuf,
    /// Where the write ops and `convert` put their output files.
    #[arg(
        long,
        value_name = "DIR",
        env = "OUT_DIR",
        default_value = "/tmp/peers/out"
    )]
    pub(crate) out: PathBuf,
    /// Timed runs per measurement.
    #[arg(
        long,
        value_name = "N",
        env = "REPS",
        default_value_t = 5,
        value_parser = at_least_one
    )]
    pub(crate) reps: usize,
    /// Workloads to run, comma-separated (default: all).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = PossibleValuesParser::new(WORKLOADS)
    )]
    pub(crate) workloads: Vec<String>,
    /// Ops to run, comma-separated (default: all).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = PossibleValuesParser::new(OPS)
    )]
    pub(crate) ops: Vec<String>,
    /// Variants to run, comma-separated (default: all).
    ///
    /// `st` one thread with the derived types; `owned` one thread with the typed iterator's
    /// owned values, `owned_batch` with `read_batch` refilling them; `columns` the derived
    /// type's columnar batches (`Reader::batches`); `mt2` two threads; `spec` the runtime spec
    /// parser on one thread, `spec_mt2` on two; `ofrecord` and `gzip` the outputs of `convert`.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = PossibleValuesParser::new(VARIANTS)
    )]
    pub(crate) variants: Vec<String>,
    /// Instead of measuring, run each streaming op once in a fresh child process and print
    /// `RSS {json}` lines with the child's peak resident set size.
    #[arg(long, conflicts_with = "stream_only")]
    pub(crate) peak_rss: bool,
    /// Run the streaming ops only, without loading the records into memory (so values
    /// extracted are not compared with an independent decode), and print `VMHWM <KiB>` at the
    /// end.
    ///
    /// What `--peak-rss` runs in each child; under a profiler the profile then holds the
    /// measured op alone.
    #[arg(long)]
    pub(crate) stream_only: bool,
    /// The `tfrecord` binary the `cli` op runs (default: the one beside this executable).
    #[arg(long, value_name = "PATH")]
    pub(crate) cli: Option<PathBuf>,
}

/// A count of one or more.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{e}")),
    }
}

impl Args {
    /// Whether `workload` is to run.
    pub(crate) fn want_workload(&self, workload: &str) -> bool {
        self.workloads.is_empty() || self.workloads.iter().any(|w| w == workload)
    }

    /// Whether `op` in `variant` is to run.
    pub(crate) fn want(&self, op: &str, variant: &str) -> bool {
        (self.ops.is_empty() || self.ops.iter().any(|o| o == op))
            && (self.variants.is_empty() || self.variants.iter().any(|v| v == variant))
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::Args;

    #[test]
    fn the_definitions_are_consistent() {
        Args::command().debug_assert();
    }

    #[test]
    fn lists_split_at_commas_and_unknown_names_are_refused() {
        let a = Args::try_parse_from([
            "tfrecord-bench",
            "--workloads",
            "ctr,seq",
            "--ops",
            "read_parse",
            "--reps",
            "2",
        ])
        .expect("valid");
        assert_eq!(a.workloads, ["ctr", "seq"]);
        assert!(a.want_workload("seq") && !a.want_workload("mnist"));
        assert!(a.want("read_parse", "spec_mt2") && !a.want("read_raw", "st"));
        assert_eq!(a.reps, 2);
        for bad in [
            &["--ops", "read_limit"][..],
            &["--workloads", "cifar"],
            &["--reps", "0"],
            &["--peak-rss", "--stream-only"],
        ] {
            let argv = std::iter::once("tfrecord-bench").chain(bad.iter().copied());
            assert!(Args::try_parse_from(argv).is_err(), "{bad:?}");
        }
    }
}
