//! Timing (wall and process CPU), the `RESULT {json}` lines of the peer protocol, peak RSS.

use std::time::Instant;

/// Process CPU time (user + system, all threads, including threads that have exited) in
/// seconds: `clock_gettime(CLOCK_PROCESS_CPUTIME_ID)`, nanosecond resolution (std has no CPU
/// clock and the workspace forbids `unsafe`, so through rustix's safe wrapper).
pub(crate) fn cpu_now() -> Option<f64> {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    #[allow(clippy::cast_precision_loss)] // seconds since process start
    Some(t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9)
}

/// Peak resident set size of this process in KiB (`VmHWM` in `/proc/self/status`).
pub(crate) fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Wall and CPU seconds of each timed repetition.
pub(crate) struct Times {
    /// Wall seconds.
    pub(crate) secs: Vec<f64>,
    /// Process CPU seconds (empty when unavailable).
    pub(crate) cpu: Vec<f64>,
}

impl Times {
    /// No repetitions yet.
    pub(crate) fn empty() -> Self {
        Times::new()
    }

    /// Adds one repetition measured elsewhere (a child process's CPU time, say).
    pub(crate) fn push(&mut self, wall: f64, cpu: Option<f64>) {
        self.secs.push(wall);
        if let Some(c) = cpu {
            self.cpu.push(c);
        }
    }

    fn new() -> Self {
        Times {
            secs: Vec::new(),
            cpu: Vec::new(),
        }
    }

    fn time<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let c0 = cpu_now();
        let t0 = Instant::now();
        let out = std::hint::black_box(f());
        let wall = t0.elapsed().as_secs_f64();
        let c1 = cpu_now();
        self.secs.push(wall);
        if let (Some(a), Some(b)) = (c0, c1) {
            self.cpu.push(b - a);
        }
        out
    }
}

/// Runs `f` once untimed (warm-up: page cache, allocator, branch predictors), then `reps` times
/// timed. Every run's result goes through `check`, so a run that did the wrong amount of work
/// fails instead of printing a number.
pub(crate) fn measure<T>(
    reps: usize,
    mut f: impl FnMut() -> T,
    mut check: impl FnMut(&T) -> Result<(), String>,
) -> Result<Times, String> {
    check(&f())?;
    let mut t = Times::new();
    for _ in 0..reps {
        let out = t.time(&mut f);
        check(&out)?;
    }
    Ok(t)
}

/// [`measure`] for two ways of doing the same work whose ratio is a figure of interest (one
/// thread against two): their repetitions alternate A B B A A B ..., so that both sample the
/// host at the same moments and a drift of its speed between two separate measurements does
/// not enter the ratio. Each is warmed up once first.
pub(crate) fn measure_pair<T>(
    reps: usize,
    mut a: impl FnMut() -> T,
    mut b: impl FnMut() -> T,
    mut check: impl FnMut(&T) -> Result<(), String>,
) -> Result<(Times, Times), String> {
    check(&a())?;
    check(&b())?;
    let (mut ta, mut tb) = (Times::new(), Times::new());
    for i in 0..reps {
        let (first, second) = if i % 2 == 0 {
            let first = ta.time(&mut a);
            (first, tb.time(&mut b))
        } else {
            let second = tb.time(&mut b);
            (ta.time(&mut a), second)
        };
        check(&first)?;
        check(&second)?;
    }
    Ok((ta, tb))
}

/// As [`measure`], with `setup()` run before every repetition outside the timed region (e.g.
/// cloning the owned values a measured writer consumes).
pub(crate) fn measure_setup<S, T>(
    reps: usize,
    mut setup: impl FnMut() -> S,
    mut f: impl FnMut(S) -> T,
    mut check: impl FnMut(&T) -> Result<(), String>,
) -> Result<Times, String> {
    check(&f(setup()))?;
    let mut t = Times::new();
    for _ in 0..reps {
        let s = setup();
        let out = t.time(|| f(s));
        check(&out)?;
    }
    Ok(t)
}

/// The median of `v` (the upper one for an even count, as the harness's Rust peers take it).
pub(crate) fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s.get(s.len() / 2).copied().unwrap_or(f64::NAN)
}

fn round6(v: &[f64]) -> Vec<f64> {
    v.iter().map(|s| (s * 1e6).round() / 1e6).collect()
}

/// One measurement, as the protocol's `RESULT` line.
pub(crate) struct Emit<'a> {
    /// The peer name.
    pub(crate) peer: &'a str,
    /// `st` for one thread, anything else for a multi-threaded figure.
    pub(crate) variant: &'a str,
    /// The workload.
    pub(crate) workload: &'a str,
    /// The op name from PROTOCOL.md.
    pub(crate) op: &'a str,
    /// Records per repetition.
    pub(crate) records: u64,
    /// Uncompressed stream bytes per repetition.
    pub(crate) bytes: u64,
    /// What exactly was timed.
    pub(crate) note: &'a str,
}

impl Emit<'_> {
    /// Prints the `RESULT` line on stdout and a readable line on stderr.
    pub(crate) fn print(&self, t: &Times) {
        let v = serde_json::json!({
            "peer": self.peer, "variant": self.variant, "workload": self.workload, "op": self.op,
            "records": self.records, "bytes": self.bytes,
            "secs": round6(&t.secs), "cpu_secs": round6(&t.cpu), "note": self.note,
        });
        println!("RESULT {v}");
        let m = median(&t.secs);
        let cpu = if t.cpu.is_empty() {
            String::from("-")
        } else {
            format!("{:.2}", median(&t.cpu) / m)
        };
        #[allow(clippy::cast_precision_loss)] // counts far below 2^52
        let (rps, mbps) = (self.records as f64 / m, self.bytes as f64 / m / 1e6);
        eprintln!(
            "# {:>12} {:>5} {:>9} {:<15} {rps:>12.0} rec/s {mbps:>9.1} MB/s  cpu/wall {cpu}  (median of {})",
            self.peer,
            self.variant,
            self.workload,
            self.op,
            t.secs.len()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::measure_pair;

    #[test]
    fn measure_pair_alternates_the_two_ways() {
        let order = std::sync::Mutex::new(String::new());
        let push = |c: char| order.lock().expect("not poisoned").push(c);
        let (ta, tb) =
            measure_pair(4, || push('a'), || push('b'), |()| Ok(())).expect("no check fails");
        // One warm-up each, then A B, B A, A B, B A.
        assert_eq!(order.into_inner().expect("not poisoned"), "ababbaabba");
        assert_eq!((ta.secs.len(), tb.secs.len()), (4, 4));
    }

    #[test]
    fn a_failed_check_stops_the_measurement() {
        let mut runs = 0;
        let err = super::measure(
            3,
            || {
                runs += 1;
                runs
            },
            |&n| {
                if n < 3 {
                    Ok(())
                } else {
                    Err(format!("run {n}"))
                }
            },
        );
        assert_eq!(err.err().as_deref(), Some("run 3"));
    }
}
