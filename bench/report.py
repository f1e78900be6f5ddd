#!/usr/bin/env python3
"""Writes BENCHMARKS.md from one run of the peer harness with the tfrecord-rs candidate.

usage: report.py --logs LOG_DIR --peers PEERS_DIR --repo REPO --command CMD --out BENCHMARKS.md

Reads the RESULT lines of every *.log in LOG_DIR (all peers of the same run), pools the samples
of each (peer, variant, workload, op) and takes the median wall time, as the harness's
summarize.py does; prints tfrecord-rs beside TensorFlow single-thread (ratios within the run),
the issue-6 targets with their measured values, peak RSS (the RSS lines of the candidate), the
machine facts, and the harness's own summarize.py tables for the same logs. Standard library
only.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys

PEER = "tfrecord-rs"
WORKLOADS = ["mnist", "ctr", "seq", "mnist_gz"]
OPS = [
    ("read_raw", "st"), ("read_raw", "mt2"), ("read_raw_nocrc", "st"), ("read_limit", "st"),
    ("read_decode", "st"),
    ("read_parse", "st"), ("read_parse", "mt2"), ("read_parse", "st_halves"), ("read_parse", "spec"),
    ("read_parse", "spec_mt2"), ("read_parse", "spec_halves"),
    ("parse_mem", "st"), ("parse_mem", "mt2"), ("parse_mem", "st_halves"), ("parse_mem", "spec"),
    ("parse_mem", "spec_mt2"), ("parse_mem", "spec_halves"),
    ("write_prebuilt", "st"), ("write_example", "st"), ("write_build", "st"),
    ("write_build_fresh", "st"), ("encode_mem", "st"), ("encode_mem", "prost"), ("write_limit", "st"),
    ("write_limit_fresh", "st"), ("convert", "ofrecord"), ("convert", "gzip"),
]
# The TensorFlow op each of ours is compared with (TF has no no-CRC read, no decode-only
# read, and no encode of pre-built objects in C++).
TF_REF = {"read_raw_nocrc": "read_raw", "read_limit": "read_raw", "read_decode": "read_parse",
          "write_example": "write_build",
          "write_build_fresh": "write_prebuilt", "encode_mem": "write_prebuilt",
          "write_limit": "write_prebuilt", "write_limit_fresh": "write_prebuilt"}


def load(log_dir):
    rows, rss = {}, []
    for p in sorted(glob.glob(os.path.join(log_dir, "*.log"))):
        with open(p) as fh:
            for line in fh:
                if line.startswith("RSS "):
                    rss.append(json.loads(line[4:]))
                if not line.startswith("RESULT "):
                    continue
                d = json.loads(line[7:])
                key = (d["peer"], d["variant"], d["workload"], d["op"], d["records"])
                r = rows.setdefault(key, dict(d, secs=[], cpu_secs=[], probe=[], probe_alu=[],
                                              half_secs=[], beside_secs=[]))
                r["secs"] += d["secs"]
                r["cpu_secs"] += d.get("cpu_secs") or []
                # paired rows: the host's two-thread scaling before and after each pair, by the
                # CRC32C kernel and by the ALU kernel
                r["probe"] += d.get("probe") or []
                r["probe_alu"] += d.get("probe_alu") or []
                # the `_halves` rows: each half's seconds from their common start
                r["half_secs"] += d.get("half_secs") or []
                # `read_limit`: read_parse st's seconds in the same pairs as each repetition
                r["beside_secs"] += d.get("beside_secs") or []
    out = {}
    for key, r in rows.items():
        med = statistics.median(r["secs"])
        r["med"] = med
        r["rps"] = r["records"] / med
        r["mbps"] = r["bytes"] / med / 1e6
        r["cpu"] = statistics.median(r["cpu_secs"]) / med if r["cpu_secs"] else None
        # records per CPU-second: for one-thread rows, the throughput with a whole core, which
        # is what a shared, overloaded machine hides from wall-clock figures
        r["rpc"] = r["records"] / statistics.median(r["cpu_secs"]) if r["cpu_secs"] else None
        r["spread"] = (max(r["secs"]) - min(r["secs"])) / med if len(r["secs"]) > 1 else 0.0
        out[key[:4]] = r
    return out, rss


def fr(x):
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    if x >= 1e4:
        return f"{x / 1e3:.0f}k"
    if x >= 1e3:
        return f"{x / 1e3:.1f}k"
    return f"{x:.0f}"


def fm(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60).stdout.strip()
    except Exception:  # noqa: BLE001 - a missing tool only loses one fact
        return ""


def machine(log_dir):
    """Facts recorded by bench/run.sh at the start of the run (facts.txt), then the load."""
    facts = []
    p = os.path.join(log_dir, "facts.txt")
    if os.path.exists(p):
        for line in open(p):
            if ":" in line:
                k, v = line.split(":", 1)
                facts.append((("date of the run (UTC)" if k == "date" else k), v.strip()))
    else:
        facts.append(("machine", "facts.txt missing: see the harness's machine.txt below"))
    commit = ""
    p = os.path.join(log_dir, "commit.txt")
    if os.path.exists(p):
        commit = open(p).read().strip()
    facts.append(("repository commit", commit or "unknown"))
    load = []
    for name in ("load-before.txt", "load-after.txt"):
        p = os.path.join(log_dir, name)
        if os.path.exists(p):
            load.append(f"{name[5:-4]} the run {' / '.join(open(p).read().split()[:3])} (1/5/15 min)")
    samples = []
    p = os.path.join(log_dir, "load-samples.txt")
    if os.path.exists(p):
        for line in open(p):
            parts = line.split()
            if len(parts) >= 2:
                samples.append(float(parts[1]))
    if samples:
        load.append(f"1-min load average sampled every 10 s during the run: median {statistics.median(samples):.2f}, "
                    f"max {max(samples):.2f} ({len(samples)} samples)")
    facts.append(("load", "; ".join(load)))
    return facts


def get(res, peer, variant, w, op):
    return res.get((peer, variant, w, op))


def ratio(a, b):
    return a["rps"] / b["rps"] if a and b else None


def cpu_ratio(a, b):
    """Ratio of records per CPU-second (one-thread rows only)."""
    if a and b and a.get("rpc") and b.get("rpc"):
        return a["rpc"] / b["rpc"]
    return None


def side_by_side(res):
    lines = [
        "| workload | op | variant | tfrecord-rs rec/s | MB/s | cpu/wall | spread | TF 1-thread (op) rec/s | ratio to TF | ratio by CPU time | rust-tfrecord ratio to TF |",
        "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for w in WORKLOADS:
        for op, v in OPS:
            r = get(res, PEER, v, w, op)
            if not r:
                continue
            ref_op = TF_REF.get(op, op)
            tf = get(res, "tensorflow", "st", w, ref_op)
            rt = get(res, "rust-tfrecord", "st", w, op) if v == "st" else None
            cpu = f"{r['cpu']:.2f}" if r["cpu"] is not None else "-"
            tfc = f"{fr(tf['rps'])} ({ref_op})" if tf else "-"
            rat = f"**{ratio(r, tf):.2f}x**" if tf else "-"
            rtr = f"{ratio(rt, tf):.2f}x" if (rt and tf) else "-"
            cr = cpu_ratio(r, tf) if v in ("st", "spec") else None
            crs = f"{cr:.2f}x" if cr else "-"
            lines.append(f"| {w} | {op} | {v} | {fr(r['rps'])} | {fm(r['mbps'])} | {cpu} | "
                         f"{r['spread'] * 100:.0f}% | {tfc} | {rat} | {crs} | {rtr} |")
    return "\n".join(lines)


def by_cpu(a, b):
    c = cpu_ratio(a, b)
    return f"; by CPU time {c:.2f}x" if c else ""


def ns(r):
    return r["med"] / r["records"] * 1e9


def write_bounds(res, w, tf):
    """What bounds write_build: the same bytes written with no encoding (`write_limit`, same
    path; `write_limit_fresh`, a new file), and the encoder alone (`encode_mem`)."""
    parts = []
    lim, fresh = get(res, PEER, "st", w, "write_limit"), get(res, PEER, "st", w, "write_limit_fresh")
    pre = get(res, PEER, "st", w, "write_prebuilt")
    if lim:
        parts.append(f"the file's bytes alone, no encoding, into the same path (`write_limit`) "
                     f"{ratio(lim, tf):.2f}x" + (f"; our `write_prebuilt` is {ratio(pre, lim):.2f}x of that" if pre else ""))
    bf = get(res, PEER, "st", w, "write_build_fresh")
    if bf:
        parts.append(f"into a new file (`write_build_fresh`) {ratio(bf, tf):.2f}x")
    enc, penc = get(res, PEER, "st", w, "encode_mem"), get(res, PEER, "prost", w, "encode_mem")
    if fresh and enc:
        # At 5x TF a record may take 1 / (5 * TF rate); the fresh write alone takes its share.
        budget = 1e9 / (5 * tf["rps"]) - ns(fresh)
        parts.append(f"a new file's write alone (`write_limit_fresh`) {ratio(fresh, tf):.2f}x, which leaves "
                     f"{budget:.0f} ns per record for encoding and CRCs at 5x; the encoder alone (`encode_mem`) "
                     f"takes {ns(enc):.0f} ns" + (f" (prost's {ns(penc):.0f} ns)" if penc else ""))
    return "; " + "; ".join(parts) if parts else ""


# A pair of repetitions counts as run with two whole vCPUs when the short ALU probe read at
# least PROBE_WHOLE before and after it, and with about one vCPU's work between the two threads
# when both readings were below PROBE_SHARED.
PROBE_WHOLE = 1.8
PROBE_SHARED = 1.3


def by_probe(two, one):
    """The two-thread rows' pairs split by the ALU probe read around each pair.

    `measure_pair` alternates the one- and two-thread repetitions and reads the short probes
    before the first pair and after each (the RESULT line's `probe_alu`: [before, after] per
    pair). Returns text giving, for the pairs run with two whole vCPUs, with about one, and in
    between, how many there were, their speed-up as the whole row's is
    taken (the median one-thread seconds over the median two-thread seconds), and the CPU work of
    two threads over one."""
    n = len(one["secs"])
    probes = one["probe_alu"]
    if (not n or len(two["secs"]) != n or len(probes) != n or two["probe_alu"] != probes
            or len(one["cpu_secs"]) != n or len(two["cpu_secs"]) != n):
        return ""
    groups = {"whole": [], "shared": [], "between": []}
    for s1, s2, c1, c2, p in zip(one["secs"], two["secs"], one["cpu_secs"], two["cpu_secs"], probes):
        g = "whole" if min(p) >= PROBE_WHOLE else "shared" if max(p) < PROBE_SHARED else "between"
        groups[g].append((s1, s2, c1, c2, min(p)))

    def part(name, g):
        if not g:
            return f"{name}: none"
        med = statistics.median
        return (f"{name}: {med(x[0] for x in g) / med(x[1] for x in g):.2f}x, CPU work "
                f"{med(x[3] for x in g) / med(x[2] for x in g):.2f} ({len(g)} of {n} pairs)")
    return ("; by the ALU probe around each pair: "
            + part(f"both readings >= {PROBE_WHOLE}", groups["whole"]) + ", "
            + part(f"both < {PROBE_SHARED}", groups["shared"]) + ", "
            + part("in between", groups["between"]))


def by_halves(h, two, one, name):
    """The two-thread row beside the same moments' `_halves` row: the one-thread code run on
    each half of the records at once. Its speed-up over one thread is what two threads of this
    work got from the machine with nothing split on the fly; `balanced` takes each repetition's
    two halves' times at their harmonic mean, what a split that kept both threads busy to the
    end would have taken at the speeds each half ran."""
    if not h:
        return ""
    text = f"; the one-thread code on both halves at once ({name}_halves) {ratio(h, one):.2f}x"
    if h["half_secs"]:
        balanced = statistics.median(2 / (1 / t0 + 1 / t1) for t0, t1 in h["half_secs"])
        text += f", balanced {one['med'] / balanced:.2f}x"
    return text + f"; {ratio(two, h):.2f}x of that"


def targets(res, rss):
    out = ["| target | workload | measured (wall-clock ratio decides; CPU-time ratio for reference) | met? |",
           "|---|---|---|---|"]

    def row(name, w, value, ok):
        mark = "n/a" if ok is None else ("**met**" if ok else "not met")
        out.append(f"| {name} | {w} | {value} | {mark} |")

    for w in ["mnist", "ctr", "seq"]:
        a, b = get(res, PEER, "st", w, "read_parse"), get(res, "tensorflow", "st", w, "read_parse")
        x = ratio(a, b)
        row("derived read_parse >= 5x TF read_parse (1 thread each)", w,
            f"{x:.2f}x ({fr(a['rps'])} vs {fr(b['rps'])} rec/s){by_cpu(a, b)}" if x else "missing",
            x >= 5 if x else None)
    a = get(res, PEER, "st", "mnist", "read_parse")
    lim = get(res, "baseline", "st", "mnist", "frame_crc_file")
    raw = get(res, PEER, "st", "mnist", "read_raw")
    pair = get(res, PEER, "st", "mnist", "read_limit")
    if pair and len(pair["beside_secs"]) == len(pair["secs"]):
        # The same limit's work alternated with read_parse st: the ratio at the same moments.
        x = statistics.median(pair["beside_secs"]) / pair["med"]
        within = sum(p <= 1.5 * l for p, l in zip(pair["beside_secs"], pair["secs"]))
        text = (f"limit / read_parse = {x:.2f} at the same moments ({fr(pair['rps'])} vs "
                f"{fr(pair['records'] / statistics.median(pair['beside_secs']))} rec/s, "
                f"`read_limit` alternated with read_parse; within 1.5 in {within} of "
                f"{len(pair['secs'])} pairs)")
        if a and lim:
            text += (f"; against the harness's frame_crc_file, measured minutes away, "
                     f"{lim['rps'] / a['rps']:.2f} ({fr(lim['rps'])} vs {fr(a['rps'])} rec/s)")
        row("mnist read_parse within 1.5x of the read+CRC limit (frame_crc_file's work, same moments)",
            "mnist", text, x <= 1.5)
    elif a and lim:
        x = lim["rps"] / a["rps"]
        extra = f"; our own read_raw is {raw['rps'] / a['rps']:.2f}x read_parse" if raw else ""
        row("mnist read_parse within 1.5x of the read+CRC limit (baseline frame_crc_file)", "mnist",
            f"limit / read_parse = {x:.2f} ({fr(lim['rps'])} vs {fr(a['rps'])} rec/s){extra}", x <= 1.5)
    for w in ["mnist", "ctr", "seq"]:
        a, b = get(res, PEER, "spec", w, "read_parse"), get(res, "tensorflow", "st", w, "read_parse")
        x = ratio(a, b)
        row("spec parser read_parse >= 3x TF read_parse (1 thread each)", w,
            f"{x:.2f}x ({fr(a['rps'])} vs {fr(b['rps'])} rec/s){by_cpu(a, b)}" if x else "missing",
            x >= 3 if x else None)
    for w in ["mnist", "ctr", "seq"]:
        a = get(res, PEER, "st", w, "read_raw")
        row("raw read (framing + both CRCs) >= 2 GB/s", w,
            f"{a['mbps'] / 1000:.2f} GB/s" if a else "missing", a["mbps"] >= 2000 if a else None)
    for w in ["mnist", "ctr", "seq"]:
        a, b = get(res, PEER, "st", w, "write_build"), get(res, "tensorflow", "st", w, "write_prebuilt")
        x = ratio(a, b)
        row("write_build >= 5x TF write_prebuilt", w,
            f"{x:.2f}x ({fr(a['rps'])} vs {fr(b['rps'])} rec/s){write_bounds(res, w, b)}" if x else "missing",
            x >= 5 if x else None)
    for op in ["read_raw", "read_parse"]:
        a, b = get(res, PEER, "st", "mnist_gz", op), get(res, "tensorflow", "st", "mnist_gz", op)
        x = ratio(a, b)
        row(f"gzip {op} >= 1.5x TF", "mnist_gz",
            f"{x:.2f}x ({fm(a['mbps'])} vs {fm(b['mbps'])} MB/s)" if x else "missing", x >= 1.5 if x else None)
    # The dataset reader with the derived types (`mt2` over `st`), and the runtime spec parser
    # (`spec_mt2` over `spec`), each on two threads against its own one-thread figure.
    for op, (two, one) in [(op, v) for v in [("mt2", "st"), ("spec_mt2", "spec")]
                           for op in ["read_parse", "parse_mem"]]:
        for w in WORKLOADS:
            a, b = get(res, PEER, two, w, op), get(res, PEER, one, w, op)
            if not (a and b):
                continue
            x = ratio(a, b)
            extra = ""
            if a["cpu"] is not None and b["cpu"] is not None:
                # CPU seconds per run, mt2 over st: the work the threads add. With two idle
                # cores the speed-up could reach about 2 / inflation.
                infl = (a["cpu"] * a["med"]) / (b["cpu"] * b["med"])
                extra = f"; cpu/wall {a['cpu']:.2f}; CPU work {two}/{one} {infl:.2f}"
            # Two-thread ceilings of the same workload in the same run: the raw read alone (for
            # the reading rows), and the machine's own scaling on cache-resident compute.
            ceilings = (["read_raw"] if op == "read_parse" else []) + ["cores_probe", "alu_probe"]
            for other in ceilings:
                y = ratio(get(res, PEER, "mt2", w, other), get(res, PEER, "st", w, other))
                if y:
                    extra += f"; {other} mt2/st {y:.2f}"
            extra += by_halves(get(res, PEER, f"{one}_halves", w, op), a, b, one)
            extra += by_probe(a, b)
            row(f"{two} {op} >= 1.7x {one} {op}", w, f"{x:.2f}x{extra}", x >= 1.7)
    if rss:
        by_w = {}
        for d in rss:
            if d["op"] != "none":
                by_w.setdefault(d["workload"], []).append(d)
        for w in WORKLOADS:
            ds = by_w.get(w)
            if not ds:
                continue
            worst = max(ds, key=lambda d: d["peak_rss_kib"])
            mib = worst["peak_rss_kib"] / 1024
            row("peak RSS < 64 MiB (reads and conversions, fresh process each)", w,
                f"max {mib:.1f} MiB ({worst['op']} {worst['variant']})", mib < 64)
    else:
        row("peak RSS < 64 MiB", "-", "no RSS lines in the logs", None)
    return "\n".join(out)


def rss_table(rss):
    if not rss:
        return "_No RSS lines (TFRECORD_RS_PEAK_RSS=0?)._"
    lines = ["| workload | op | variant | peak RSS MiB |", "|---|---|---|--:|"]
    for d in rss:
        lines.append(f"| {d['workload']} | {d['op']} | {d['variant']} | {d['peak_rss_kib'] / 1024:.1f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--logs", required=True)
    ap.add_argument("--peers", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    res, rss = load(a.logs)
    if not any(k[0] == PEER for k in res):
        sys.exit(f"report.py: no {PEER} RESULT lines in {a.logs}")
    summary = sh(f"python3 '{os.path.join(a.peers, 'summarize.py')}' {os.path.join(a.logs, '*.log')}")
    machine_txt = ""
    p = os.path.join(a.logs, "machine.txt")
    if os.path.exists(p):
        machine_txt = open(p).read().strip()
    notes = ""
    p = os.path.join(a.repo, "bench", "NOTES.md")
    if os.path.exists(p):
        notes = open(p).read().strip()
    reps = sorted({len(r["secs"]) for k, r in res.items() if k[0] == PEER})
    md = []
    md.append("# Benchmarks\n")
    md.append("<!-- Generated by bench/run.sh (bench/report.py) from one run of the peer harness; "
              "the 'Notes and profiles' section comes from bench/NOTES.md. Do not edit by hand. -->\n")
    md.append("tfrecord-rs (`bench/`, peer name `tfrecord-rs`) measured by the peer harness "
              "(`shared/peers/run_peers.sh`) in the same run as TensorFlow 2.21 (1 thread), the "
              "`tfrecord` crate 0.15 (`rust-tfrecord`), py-tfrecord and the physical-limit baselines. "
              "Every figure is the median wall time over the timed repetitions "
              f"(samples per tfrecord-rs row: {', '.join(map(str, reps))}; one untimed warm-up each); "
              "MB/s counts uncompressed TFRecord stream bytes (1 MB = 10^6 B); ratios are records/s "
              "over TensorFlow single-thread's records/s for the same workload and op, from the same run; "
              "'ratio by CPU time' divides records per CPU-second instead (one-thread rows), which "
              "discounts unequal sharing of a loaded machine.\n")
    md.append("## Reproduce\n")
    md.append("```sh\n" + a.command + "\n```\n")
    md.append("`bench/run.sh` runs the harness with `CANDIDATES_DIR=bench/candidates` (the candidate "
              "script builds `tfrecord-bench` in release mode from this repository) and then writes this "
              "file; the run's raw logs are kept in `bench/results/`, and `bench/run.sh --report-only "
              "bench/results` rewrites this file from them; "
              "`cargo run --release -p tfrecord-bench -- --help` runs the candidate alone.\n")
    md.append("## Machine\n")
    md.append("| fact | value |\n|---|---|")
    for k, v in machine(a.logs):
        md.append(f"| {k} | {v} |")
    md.append("")
    if machine_txt:
        md.append("The harness's own record (`machine.txt`):\n\n```\n" + machine_txt + "\n```\n")
    md.append("## tfrecord-rs beside TensorFlow\n")
    md.append("Variants: `st` one thread; `mt2` 2 threads of `reader::for_each_chunk` taking "
              "chunks of whole frames "
              "(uncompressed: `SharedChunks`, each thread copying its own chunk out of the file; "
              "gzip: turns at one `ChunkReader`, which inflates), checking them and decoding "
              "their records in place (`Chunk::records`) into columns of 1024 rows; `spec` "
              "the runtime spec parser (`tfrecord_core::parse`, spec built from the sidecar at run "
              "time), batches of 1024 read and parsed in turn on one thread; `spec_mt2` the same "
              "2 threads parsing batches of 1024 gathered from their chunks. `st_halves` and "
              "`spec_halves` are not library ops: the one-thread code (`st`, `spec`) run on each "
              "half of the records (cut at the middle record; each half its own reader of its own "
              "bytes) at once on 2 threads, nothing shared or handed between them: what two "
              "threads of this work get from the machine at those moments (uncompressed "
              "workloads; a gzip stream cannot be entered in the middle). `parse_mem` is over records already in memory (`mt2`: "
              "batches of 1024 taken by 2 threads in turn). `read_raw` `mt2` is the same 2 threads "
              "checking framing and CRCs with no decode. `read_limit` is not a library op: the "
              "harness's `frame_crc_file` limit (the whole file read into one reused buffer, framing "
              "walked by hand, both masked CRC32Cs checked), its repetitions alternated with "
              "`read_parse` `st`'s, so that the mnist target's limit ratio compares the same moments "
              "(uncompressed workloads). `write_build_fresh` is `write_build` into a new "
              "file (the previous output removed before each repetition, untimed). `encode_mem` is "
              "the encoder alone over pre-built values (`st` derived, `prost` prost's own encoder), "
              "no framing or I/O. `write_limit` (same output path, truncated) and `write_limit_fresh` "
              "(a new file) are not library ops: the source file's bytes, already framed, written "
              "in 1 MiB slices; what any writer of these bytes is bound by. `convert` is not a "
              "protocol op: the file re-encoded record by record as `tfrecord convert` does, "
              "`ofrecord` into an OFRecord file (each `Example` decoded, converted, encoded; not "
              "for SequenceExamples), `gzip` into a gzip TFRecord (level 6); it has no TensorFlow "
              "counterpart (TF column `-`). For the other ops TensorFlow lacks, the TF column "
              "names the op used as reference. Before each workload the bench "
              "runs two probes of the machine's own two-thread scaling at that point of the run (not in "
              "this table; the `mt2` target rows quote them): `cores_probe`, CRC32C over a cache-resident "
              "buffer per thread on 1 and 2 threads, whose chains are bound by latency; and `alu_probe`, "
              "six independent integer chains per thread, bound by the core's execution units. "
              "In `read_parse` and `parse_mem` the one-thread and two-thread "
              "variants alternate their repetitions (`st`, `mt2`, `st_halves`, `st_halves`, `mt2`, "
              "`st`, ...; `spec` with `spec_mt2` and `spec_halves` likewise), so that the two-thread ratio compares the same moments of the "
              "host; short probes (128 passes per thread, one thread then two) are read "
              "before the first pair and after each, and the `mt2` target rows split their pairs "
              f"by the ALU probe: both readings >= {PROBE_WHOLE} (both threads ran at full speed at "
              f"once around them), both below {PROBE_SHARED} (two threads did about one thread's "
              "work), and in between.\n")
    md.append(side_by_side(res) + "\n")
    md.append("## Targets of issue 6\n")
    md.append(targets(res, rss) + "\n")
    md.append("## Peak RSS\n")
    md.append("Each streaming op (the reads, and `convert`) run once (warm-up + 1 repetition) "
              "in a fresh process (`tfrecord-bench --peak-rss`); `none` is the process doing "
              "nothing.\n")
    md.append(rss_table(rss) + "\n")
    if notes:
        md.append("## Notes and profiles\n")
        md.append(notes + "\n")
    md.append("## The harness's summary of the same logs (`summarize.py`)\n")
    md.append("\n".join("#" + l if l.startswith("#") else l for l in summary.splitlines()) + "\n")
    with open(a.out, "w") as f:
        f.write("\n".join(md))


if __name__ == "__main__":
    main()
