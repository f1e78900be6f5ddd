//! The command line: `--flag value` pairs, with the harness's environment as defaults.

use std::path::PathBuf;

/// The harness's workloads, in the order they run.
pub(crate) const WORKLOADS: [&str; 4] = ["mnist", "ctr", "seq", "mnist_gz"];

const USAGE: &str = "usage: tfrecord-bench [--data DIR] [--out DIR] [--reps N] [--workloads a,b] \
                     [--ops x,y] [--variants st,mt2,spec,spec_mt2] [--peak-rss] [--stream-only]";

/// What to measure, and where.
pub(crate) struct Args {
    /// The harness's data directory.
    pub(crate) data: PathBuf,
    /// Where the write ops and `convert` put their output files.
    pub(crate) out: PathBuf,
    /// Timed runs per measurement.
    pub(crate) reps: usize,
    /// Workloads to run (empty: all).
    pub(crate) workloads: Vec<String>,
    /// Ops to run (empty: all).
    pub(crate) ops: Vec<String>,
    /// Variants to run (empty: all).
    pub(crate) variants: Vec<String>,
    /// Spawn a child per streaming op and report its peak RSS.
    pub(crate) peak_rss: bool,
    /// No in-memory setup (so only the streaming ops run, and their value counts are not
    /// checked against prost); print `VMHWM <KiB>` at the end.
    pub(crate) stream_only: bool,
}

fn split(s: &str) -> Vec<String> {
    s.split(',')
        .filter(|x| !x.is_empty())
        .map(String::from)
        .collect()
}

impl Args {
    /// Reads the command line, with `DATA_DIR`, `OUT_DIR`, `REPS`, `WORKLOADS`, `OPS` and
    /// `VARIANTS` from the environment as defaults.
    pub(crate) fn parse() -> Result<Args, String> {
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
