//! `cli`: the `tfrecord` command-line tool itself on the workload's file, timed as a child
//! process, for the paths users wait on: `convert` between containers, `cat --json`,
//! `from-json` and `verify --decode`, each on one thread. CPU time is the child's user + system
//! time, read from this process's `cutime` + `cstime` in `/proc/self/stat` (in the kernel's fixed
//! 100 ticks per second) around each run; the workload's file is named [`repeats`] times on the
//! command line so that a run lasts many ticks (more times for the fast paths).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::timing::{Emit, Times};
use crate::workload::{Ctx, PEER};

/// The `cutime + cstime` of this process in seconds: the CPU time of its reaped children.
fn children_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // `cutime` and `cstime` are fields 16 and 17 of the whole line; `rest` starts at field 3.
    let ticks: u64 = fields.get(13)?.parse::<u64>().ok()? + fields.get(14)?.parse::<u64>().ok()?;
    #[allow(clippy::cast_precision_loss)] // ticks far below 2^52
    Some(ticks as f64 / 100.0)
}

/// Runs `cmd` (its stdout to `stdout`, or discarded) once untimed, then `reps` times timed.
fn time_command(
    reps: usize,
    mut make: impl FnMut() -> Command,
    stdout: Option<&Path>,
) -> Result<Times, String> {
    let mut times = Times::empty();
    for rep in 0..=reps {
        let mut cmd = make();
        // What the run before wrote (gigabytes, for `convert` and `from-json`) is written back
        // first, untimed: otherwise the kernel writes it back during this run, on the other
        // core and through the same file system, which one run of a user's command never
        // meets.
        let _ = Command::new("sync").status();
        cmd.stdin(Stdio::null()).stderr(Stdio::inherit());
        match stdout {
            Some(p) => {
                let f = std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?;
                cmd.stdout(f);
            }
            None => {
                cmd.stdout(Stdio::null());
            }
        }
        let c0 = children_cpu();
        let t0 = Instant::now();
        let status = cmd.status().map_err(|e| format!("{cmd:?}: {e}"))?;
        let wall = t0.elapsed().as_secs_f64();
        let c1 = children_cpu();
        if !status.success() {
            return Err(format!("{cmd:?} failed: {status}"));
        }
        if rep > 0 {
            times.push(wall, c0.zip(c1).map(|(a, b)| b - a));
        }
    }
    Ok(times)
}

/// The `tfrecord` binary: `--cli`, else the one beside this executable.
fn binary(c: &Ctx<'_>) -> Result<PathBuf, String> {
    if let Some(p) = &c.args.cli {
        return Ok(p.clone());
    }
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let beside = me.with_file_name("tfrecord");
    if beside.is_file() {
        Ok(beside)
    } else {
        Err(format!(
            "no tfrecord binary at {} (build tfrecord-cli, or pass --cli)",
            beside.display()
        ))
    }
}

fn size(p: &Path) -> Result<u64, String> {
    std::fs::metadata(p)
        .map(|m| m.len())
        .map_err(|e| format!("{}: {e}", p.display()))
}

/// The input stream each run of `cat --json` and `from-json` reads at least, so that the 10 ms
/// ticks of the CPU clock are a small part of a run.
const MIN_STREAM_BYTES: u64 = 400_000_000;

/// The same for `convert` and `verify`, which read several GB/s.
const MIN_FAST_STREAM_BYTES: u64 = 2_000_000_000;

/// How many times a run names the workload's file: enough for `min` bytes.
fn repeats(stream_bytes: u64, min: u64) -> u64 {
    min.div_ceil(stream_bytes.max(1)).max(1)
}

/// The `cli` op: each variant the command users run, on the uncompressed Example workloads.
pub(crate) fn cli(c: &Ctx<'_>) -> Result<(), String> {
    let sc = c.sc;
    if !c.args.ops.iter().any(|o| o == "cli")
        || sc.is_sequence()
        || sc.compression()? != tfrecord_core::Compression::None
    {
        return Ok(());
    }
    let bin = binary(c)?;
    std::fs::create_dir_all(&c.args.out).map_err(|e| format!("{}: {e}", c.args.out.display()))?;
    let out = |ext: &str| c.args.out.join(format!("{PEER}_{}.cli.{ext}", sc.name));
    let emit = |variant: &str, reps: u64, bytes: u64, note: &str, t: &Times| {
        let note = format!("{note}; the file named {reps} times per run");
        Emit {
            peer: PEER,
            variant,
            workload: &sc.name,
            op: "cli",
            records: sc.num_records * reps,
            bytes,
            note: &note,
        }
        .print(t);
    };
    let named = |min: u64| -> Result<(u64, Vec<PathBuf>), String> {
        let reps = repeats(sc.stream_bytes, min);
        let n = usize::try_from(reps).map_err(|e| e.to_string())?;
        Ok((reps, vec![sc.path.clone(); n]))
    };
    let (fast_reps, fast_inputs) = named(MIN_FAST_STREAM_BYTES)?;
    let (reps, inputs) = named(MIN_STREAM_BYTES)?;
    if c.args.want("cli", "convert_of") {
        let to = out("ofrecord");
        let t = time_command(
            c.args.reps,
            || {
                let _ = std::fs::remove_file(&to);
                let mut cmd = Command::new(&bin);
                cmd.args(["convert", "--output-format", "ofrecord", "-o"])
                    .arg(&to)
                    .args(&fast_inputs);
                cmd
            },
            None,
        )?;
        emit(
            "convert_of",
            fast_reps,
            sc.stream_bytes * fast_reps,
            "`tfrecord convert IN --output-format ofrecord -o OUT`: bytes are the input stream's",
            &t,
        );
    }
    let jsonl = out("jsonl");
    if c.args.want("cli", "cat_json") || c.args.want("cli", "from_json") {
        let t = time_command(
            c.args.reps,
            || {
                let mut cmd = Command::new(&bin);
                cmd.args(["cat", "--json"]).args(&inputs);
                cmd
            },
            Some(&jsonl),
        )?;
        if c.args.want("cli", "cat_json") {
            emit(
                "cat_json",
                reps,
                size(&jsonl)?,
                "`tfrecord cat --json IN > FILE`: bytes are the JSON text written",
                &t,
            );
        }
    }
    if c.args.want("cli", "from_json") {
        let to = out("fromjson.tfrecord");
        let t = time_command(
            c.args.reps,
            || {
                let _ = std::fs::remove_file(&to);
                let mut cmd = Command::new(&bin);
                cmd.args(["from-json", "-o"]).arg(&to).arg(&jsonl);
                cmd
            },
            None,
        )?;
        emit(
            "from_json",
            reps,
            size(&jsonl)?,
            "`tfrecord from-json JSONL -o OUT`: bytes are the JSON text read",
            &t,
        );
    }
    if c.args.want("cli", "verify_decode") {
        let t = time_command(
            c.args.reps,
            || {
                let mut cmd = Command::new(&bin);
                cmd.args(["verify", "--decode", "--threads", "1"])
                    .args(&fast_inputs);
                cmd
            },
            None,
        )?;
        emit(
            "verify_decode",
            fast_reps,
            sc.stream_bytes * fast_reps,
            "`tfrecord verify --decode --threads 1 IN`: framing, both CRCs and a check that every \
             record decodes",
            &t,
        );
    }
    Ok(())
}
