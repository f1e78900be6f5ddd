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
    /// For repetitions taken in pairs ([`measure_pair`]): the host's two-thread scaling read
    /// just before and just after each pair (empty otherwise).
    pub(crate) probe: Vec<[HostProbe; 2]>,
    /// For the halves of a [`measure_pair`]: each half's seconds from their common start to
    /// its own end (empty otherwise).
    pub(crate) halves: Vec<[f64; 2]>,
    /// For a row measured as a reference beside another (a [`measure_pair`] whose other side
    /// is not emitted as its own row): that side's wall seconds, one per pair, and its name.
    pub(crate) beside: Option<(String, Vec<f64>)>,
}

/// One reading of the host's two-thread scaling: 2 x (one thread's time) / (the slower of two
/// threads' times) for the same work per thread, about 2 where both threads run at full speed
/// at once, by two kernels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct HostProbe {
    /// CRC32C over a cache-resident buffer: chains bound by the instruction's latency.
    pub(crate) crc: f64,
    /// Integer chains that issue more work per cycle than a core retires, bound by its
    /// execution units.
    pub(crate) alu: f64,
}

impl Times {
    fn new() -> Self {
        Times {
            secs: Vec::new(),
            cpu: Vec::new(),
            probe: Vec::new(),
            halves: Vec::new(),
            beside: None,
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

/// The one-thread side of a [`measure_pair`] cut in two halves at a record boundary, each
/// done by the same one-thread code: run at once on two threads, they share nothing that one
/// thread's run does not (each reads its own half), so their speed over the one-thread run is
/// what the machine gives two threads of this work at those moments, whatever splits it.
pub(crate) struct Halves<'a, T> {
    /// Does half 0 or half 1 of the work.
    pub(crate) run: &'a (dyn Fn(usize) -> T + Sync),
    /// The result of the whole work from those of its halves, for the check.
    pub(crate) join: fn(T, T) -> T,
}

/// [`measure`] for two ways of doing the same work whose ratio is a figure of interest (one
/// thread against two): their repetitions alternate A B B A A B ..., so that both sample the
/// host at the same moments and a drift of its speed between two separate measurements does
/// not enter the ratio. Each is warmed up once first. `probe()`, when given, the host's own
/// two-thread scaling, is read (untimed) before the first pair and after each, so each pair's
/// ratio can be read beside what the host gave while it ran: it moves within seconds.
///
/// With `halves`, a third measurement goes beside each pair (A B H, H B A, ...): A's two
/// halves at once, one on the calling thread and one on a thread started for it.
pub(crate) fn measure_pair<T: Send>(
    reps: usize,
    mut a: impl FnMut() -> T,
    mut b: impl FnMut() -> T,
    halves: Option<Halves<'_, T>>,
    mut check: impl FnMut(&T) -> Result<(), String>,
    mut probe: Option<impl FnMut() -> HostProbe>,
) -> Result<(Times, Times, Option<Times>), String> {
    let mut read_probe = || probe.as_mut().map(|p| p());
    // Both halves, and each one's seconds from the common start.
    let both = |h: &Halves<'_, T>| {
        let t0 = Instant::now();
        let timed = |half| {
            let out = (h.run)(half);
            (out, t0.elapsed().as_secs_f64())
        };
        let [(first, s0), (second, s1)] = std::thread::scope(|s| {
            let other = s.spawn(|| timed(1));
            let mine = timed(0);
            let theirs = other
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            [mine, theirs]
        });
        ((h.join)(first, second), [s0, s1])
    };
    check(&a())?;
    check(&b())?;
    if let Some(h) = &halves {
        check(&both(h).0)?;
    }
    let (mut ta, mut tb) = (Times::new(), Times::new());
    let mut th = halves.as_ref().map(|h| (Times::new(), h));
    let mut before = read_probe();
    for i in 0..reps {
        let mut split = || {
            th.as_mut().map(|(t, h)| {
                let (out, secs) = t.time(|| both(h));
                t.halves.push(secs);
                out
            })
        };
        let (first, second, third) = if i % 2 == 0 {
            let first = ta.time(&mut a);
            let second = tb.time(&mut b);
            (first, second, split())
        } else {
            let third = split();
            let second = tb.time(&mut b);
            (ta.time(&mut a), second, third)
        };
        for out in [Some(&first), Some(&second), third.as_ref()]
            .into_iter()
            .flatten()
        {
            check(out)?;
        }
        let after = read_probe();
        if let (Some(before), Some(after)) = (before, after) {
            for t in [&mut ta, &mut tb]
                .into_iter()
                .chain(th.as_mut().map(|(t, _)| t))
            {
                t.probe.push([before, after]);
            }
        }
        before = after;
    }
    Ok((ta, tb, th.map(|(t, _)| t)))
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
        let mut v = serde_json::json!({
            "peer": self.peer, "variant": self.variant, "workload": self.workload, "op": self.op,
            "records": self.records, "bytes": self.bytes,
            "secs": round6(&t.secs), "cpu_secs": round6(&t.cpu), "note": self.note,
        });
        if !t.probe.is_empty() {
            let readings = |kernel: fn(&HostProbe) -> f64| -> Vec<[f64; 2]> {
                t.probe
                    .iter()
                    .map(|p| p.each_ref().map(|r| (kernel(r) * 1e3).round() / 1e3))
                    .collect()
            };
            v["probe"] = serde_json::json!(readings(|r| r.crc));
            v["probe_alu"] = serde_json::json!(readings(|r| r.alu));
        }
        if !t.halves.is_empty() {
            let halves: Vec<_> = t.halves.iter().map(|h| round6(h)).collect();
            v["half_secs"] = serde_json::json!(halves);
        }
        if let Some((variant, secs)) = &t.beside {
            v["beside"] = serde_json::json!(variant);
            v["beside_secs"] = serde_json::json!(round6(secs));
        }
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
    use super::{Halves, HostProbe, measure_pair};

    #[test]
    fn measure_pair_without_a_probe_alternates_and_reads_none() {
        let order = std::sync::Mutex::new(String::new());
        let push = |c: char| order.lock().expect("not poisoned").push(c);
        let (ta, tb, th) = measure_pair(
            3,
            || push('a'),
            || push('b'),
            None,
            |()| Ok(()),
            None::<fn() -> HostProbe>,
        )
        .expect("no check fails");
        assert_eq!(order.into_inner().expect("not poisoned"), "ababbaab");
        assert_eq!((ta.secs.len(), tb.secs.len()), (3, 3));
        assert!(ta.probe.is_empty() && tb.probe.is_empty() && th.is_none());
    }

    #[test]
    fn measure_pair_alternates_and_brackets_each_pair_with_probe_readings() {
        for split in [false, true] {
            let order = std::sync::Mutex::new(String::new());
            let push = |c: char| order.lock().expect("not poisoned").push(c);
            // Half 0 is an 'h' in the order; half 1, run at the same time, is counted.
            let seconds = std::sync::atomic::AtomicUsize::new(0);
            let run = |half: usize| match half {
                0 => push('h'),
                _ => _ = seconds.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            };
            let halves = split.then_some(Halves {
                run: &run,
                join: |(), ()| (),
            });
            let mut readings = 0.0;
            let (ta, tb, th) = measure_pair(
                4,
                || push('a'),
                || push('b'),
                halves,
                |()| Ok(()),
                Some(|| {
                    readings += 1.0;
                    HostProbe {
                        crc: readings,
                        alu: -readings,
                    }
                }),
            )
            .expect("no check fails");
            // One warm-up each, then A B (H), (H) B A, A B (H), (H) B A.
            let want = if split {
                concat!("abh", "abh", "hba", "abh", "hba")
            } else {
                concat!("ab", "ab", "ba", "ab", "ba")
            };
            assert_eq!(order.into_inner().expect("not poisoned"), want);
            assert_eq!(seconds.into_inner(), if split { 5 } else { 0 });
            let r = |x: f64| HostProbe { crc: x, alu: -x };
            let want = vec![
                [r(1.0), r(2.0)],
                [r(2.0), r(3.0)],
                [r(3.0), r(4.0)],
                [r(4.0), r(5.0)],
            ];
            assert_eq!(ta.probe, want);
            assert_eq!(tb.probe, want);
            assert_eq!((ta.secs.len(), tb.secs.len()), (4, 4));
            assert_eq!(
                th.map(|t| (t.secs.len(), t.halves.len(), t.probe == want)),
                split.then_some((4, 4, true))
            );
        }
    }
}
