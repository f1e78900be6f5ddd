//! `--peak-rss`: the peak resident set size of each streaming op, each run once in a fresh
//! child process.

use crate::args::{Args, WORKLOADS};
use crate::timing::peak_rss_kib;
use crate::workload::PEER;

/// The streaming ops (the reads, and `convert`), whose memory must not grow with the file.
const STREAMING: [(&str, &str); 9] = [
    ("read_raw", "st"),
    ("read_raw", "mt2"),
    ("read_decode", "st"),
    ("read_parse", "st"),
    ("read_parse", "mt2"),
    ("read_parse", "spec"),
    ("read_parse", "spec_mt2"),
    ("convert", "ofrecord"),
    ("convert", "gzip"),
];

/// Prints one `RSS {json}` line on stdout and a readable line on stderr.
fn print(workload: &str, op: &str, variant: &str, kib: u64, note: &str) {
    let line = serde_json::json!({
        "peer": PEER, "workload": workload, "op": op, "variant": variant,
        "peak_rss_kib": kib, "note": note,
    });
    println!("RSS {line}");
    #[allow(clippy::cast_precision_loss)] // KiB of one process
    let mib = kib as f64 / 1024.0;
    eprintln!("# peak RSS {workload:>9} {op:<12} {variant:<8} {mib:>8.1} MiB");
}

/// Runs each streaming op of the wanted workloads in a child process with `--stream-only
/// --reps 1`, which reports its `VmHWM`; first this process's own, before it has done
/// anything (op `none`).
pub(crate) fn peak_rss(args: &Args) -> Result<(), String> {
    let idle = peak_rss_kib().ok_or("no VmHWM in /proc/self/status")?;
    print(
        "-",
        "none",
        "st",
        idle,
        "VmHWM of the bench process before any work",
    );
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    for w in WORKLOADS.into_iter().filter(|w| args.want_workload(w)) {
        for (op, v) in STREAMING {
            if op == "convert" && v == "ofrecord" && w == "seq" {
                continue; // SequenceExamples have no OFRecord form
            }
            let out = std::process::Command::new(&exe)
                .args(["--stream-only", "--reps", "1", "--workloads", w])
                .args(["--ops", op, "--variants", v])
                .arg("--data")
                .arg(&args.data)
                .arg("--out")
                .arg(&args.out)
                .stderr(std::process::Stdio::null())
                .output()
                .map_err(|e| e.to_string())?;
            if !out.status.success() {
                return Err(format!("peak-rss child {w} {op} {v} failed"));
            }
            let kib = String::from_utf8_lossy(&out.stdout)
                .lines()
                .find_map(|l| l.strip_prefix("VMHWM "))
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| format!("peak-rss child {w} {op} {v}: no VMHWM line"))?;
            let note = "VmHWM of a fresh process that ran the op once (warm-up) + 1 timed rep";
            print(w, op, v, kib, note);
        }
    }
    Ok(())
}
