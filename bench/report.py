#!/usr/bin/env python3
"""Writes BENCHMARKS.md from one run of the peer harness with the tfrecord-rs candidate.

usage: report.py --logs LOG_DIR --command CMD --out BENCHMARKS.md

Reads the RESULT and RSS lines of every *.log in LOG_DIR (all peers of the same run) and the
facts bench/run.sh recorded beside them; pools the samples of each (peer, variant, workload,
op) and takes the median wall time, as the harness's summarize.py does. Writes the machine,
tfrecord-rs beside the peers with ratios to TensorFlow single-thread, the targets with
met / not met, peak RSS, and a short method. Standard library only.
"""
import argparse
import glob
import json
import os
import statistics
import sys

PEER = "tfrecord-rs"
WORKLOADS = ["mnist", "ctr", "seq", "mnist_gz"]
# The ops of the results table, and the TensorFlow op each is compared with where TensorFlow
# has no such op (no read without CRCs, no decode-only read, no encode of pre-built objects).
OPS = ["read_raw", "read_raw_nocrc", "read_decode", "read_parse", "parse_mem",
       "write_prebuilt", "write_example", "write_build"]
TF_REF = {"read_raw_nocrc": "read_raw", "read_decode": "read_parse", "write_example": "write_build"}
VARIANTS = ["st", "mt2", "spec", "spec_mt2"]
CONVERTS = ["ofrecord", "gzip"]
RSS_OPS = [("read_raw", "st"), ("read_raw", "mt2"), ("read_decode", "st"), ("read_parse", "st"),
           ("read_parse", "mt2"), ("read_parse", "spec"), ("read_parse", "spec_mt2"),
           ("convert", "ofrecord"), ("convert", "gzip")]
RSS_LIMIT_MIB = 64
TFXBSL_FILE = "tfx_bsl.log"
TF_ARROW_FILE = "tf_read_parse.log"


def load(log_dir):
    """(peer, variant, workload, op) -> pooled row; the RSS lines. The columns/Arrow session's
    logs (`tf_read_parse.log`, `tfx_bsl.log`) are left out: that session is measured apart (and
    may be run again alone), and its rows are only compared with each other."""
    rows, rss = {}, []
    apart = {TF_ARROW_FILE, TFXBSL_FILE}
    for p in sorted(glob.glob(os.path.join(log_dir, "*.log"))):
        if os.path.basename(p) in apart:
            continue
        with open(p) as fh:
            for line in fh:
                if line.startswith("RSS "):
                    rss.append(json.loads(line[4:]))
                if not line.startswith("RESULT "):
                    continue
                d = json.loads(line[7:])
                key = (d["peer"], d["variant"], d["workload"], d["op"])
                r = rows.setdefault(key, dict(d, secs=[], cpu_secs=[]))
                r["secs"] += d["secs"]
                r["cpu_secs"] += d.get("cpu_secs") or []
    for r in rows.values():
        med = statistics.median(r["secs"])
        r["med"] = med
        r["rps"] = r["records"] / med
        r["mbps"] = r["bytes"] / med / 1e6
        r["cpu"] = statistics.median(r["cpu_secs"]) / med if r["cpu_secs"] else None
        r["spread"] = (max(r["secs"]) - min(r["secs"])) / med if len(r["secs"]) > 1 else 0.0
    return rows, rss


def fr(x):
    """Records per second, short."""
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    if x >= 1e4:
        return f"{x / 1e3:.0f}k"
    if x >= 1e3:
        return f"{x / 1e3:.1f}k"
    return f"{x:.0f}"


def fm(x):
    """MB/s."""
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def read(log_dir, name):
    p = os.path.join(log_dir, name)
    if not os.path.exists(p):
        return ""
    with open(p) as fh:
        return fh.read().strip()


def machine(log_dir):
    """The facts bench/run.sh recorded at the start of the run, and the load during it."""
    facts = []
    for line in read(log_dir, "facts.txt").splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            facts.append(("date of the run (UTC)" if k == "date" else k, v.strip()))
    facts.append(("repository commit", read(log_dir, "commit.txt") or "unknown"))
    load = []
    for when in ("before", "after"):
        text = read(log_dir, f"load-{when}.txt")
        if text:
            load.append(f"{when} the run {' / '.join(text.split()[:3])}")
    samples = [float(line.split()[1]) for line in read(log_dir, "load-samples.txt").splitlines()
               if len(line.split()) >= 2]
    if samples:
        load.append(f"during it median {statistics.median(samples):.2f}, max {max(samples):.2f} "
                    f"(every 10 s)")
    if load:
        facts.append(("1-minute load average", "; ".join(load)))
    return facts


def ratio(a, b):
    return a["rps"] / b["rps"] if a and b else None


def cell(r, ref):
    """records/s, with the ratio to `ref` when there is one."""
    if not r:
        return ""
    x = ratio(r, ref)
    return f"{fr(r['rps'])} ({x:.2f}x)" if x else fr(r["rps"])


def results(res):
    lines = [
        ("| workload | op | TF 1 thread | TF multi-thread | rust-tfrecord | py-tfrecord | "
         "tfrecord-rs st | mt2 | spec | spec_mt2 |"),
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for w in WORKLOADS:
        for op in OPS:
            ours = [res.get((PEER, v, w, op)) for v in VARIANTS]
            if not any(ours):
                continue
            ref_op = TF_REF.get(op, op)
            tf = res.get(("tensorflow", "st", w, ref_op))
            tf_mt = res.get(("tensorflow", "parallel", w, ref_op)) or res.get(
                ("tensorflow", "default", w, ref_op))
            label = f"{op} (TF: {ref_op})" if ref_op != op else op
            peers = [fr(tf["rps"]) if tf else "-", cell(tf_mt, tf) or "-",
                     cell(res.get(("rust-tfrecord", "st", w, op)), tf) or "-",
                     cell(res.get(("py-tfrecord", "st", w, op)), tf) or "-"]
            cells = [f"**{cell(r, tf)}**" if r else "-" for r in ours]
            lines.append(f"| {w} | {label} | " + " | ".join(peers + cells) + " |")
    return "\n".join(lines)


def converts(res):
    lines = ["| workload | to OFRecord | to gzip TFRecord |", "|---|--:|--:|"]
    for w in WORKLOADS:
        rs = [res.get((PEER, v, w, "convert")) for v in CONVERTS]
        if any(rs):
            lines.append(f"| {w} | " + " | ".join(
                f"{fr(r['rps'])} rec/s, {fm(r['mbps'])} MB/s" if r else "-" for r in rs) + " |")
    return "\n".join(lines) if len(lines) > 2 else ""


def rss_by(rss):
    """(workload, op, variant) -> the largest peak RSS in MiB over the run's rounds."""
    out = {}
    for d in rss:
        k = (d["workload"], d["op"], d["variant"])
        out[k] = max(out.get(k, 0.0), d["peak_rss_kib"] / 1024)
    return out


def targets(res, rss):
    rows = []

    def row(name, w, value, ok):
        rows.append((name, w, value, ok))

    def tf_vs(name, w, variant, op, tf_op, bound):
        a, b = res.get((PEER, variant, w, op)), res.get(("tensorflow", "st", w, tf_op))
        x = ratio(a, b)
        row(name, w, f"{x:.2f}x ({fr(a['rps'])} vs {fr(b['rps'])} rec/s)" if x else "missing",
            x >= bound if x else None)

    for w in ["mnist", "ctr", "seq"]:
        tf_vs("derived read_parse >= 5x TF read_parse (1 thread each)", w, "st", "read_parse",
              "read_parse", 5)
    a = res.get((PEER, "st", "mnist", "read_parse"))
    lim = res.get(("baseline", "st", "mnist", "frame_crc_file"))
    x = lim["rps"] / a["rps"] if a and lim else None
    row("read_parse within 1.5x of the read + CRC limit (the harness's frame_crc_file)", "mnist",
        f"limit / read_parse = {x:.2f} ({fr(lim['rps'])} vs {fr(a['rps'])} rec/s)" if x else "missing",
        x <= 1.5 if x else None)
    for w in ["mnist", "ctr", "seq"]:
        tf_vs("spec parser read_parse >= 3x TF read_parse (1 thread each)", w, "spec", "read_parse",
              "read_parse", 3)
    for w in ["mnist", "ctr", "seq"]:
        a = res.get((PEER, "st", w, "read_raw"))
        row("read_raw (framing + both CRCs) >= 2 GB/s", w,
            f"{a['mbps'] / 1000:.2f} GB/s" if a else "missing", a["mbps"] >= 2000 if a else None)
    for w in ["mnist", "ctr", "seq"]:
        tf_vs("write_build >= 5x TF write_prebuilt", w, "st", "write_build", "write_prebuilt", 5)
    for op in ["read_raw", "read_parse"]:
        a, b = res.get((PEER, "st", "mnist_gz", op)), res.get(("tensorflow", "st", "mnist_gz", op))
        x = ratio(a, b)
        row(f"gzip {op} >= 1.5x TF", "mnist_gz",
            f"{x:.2f}x ({fm(a['mbps'])} vs {fm(b['mbps'])} MB/s)" if x else "missing",
            x >= 1.5 if x else None)
    for two, one in [("mt2", "st"), ("spec_mt2", "spec")]:
        for op in ["read_parse", "parse_mem"]:
            for w in WORKLOADS:
                a, b = res.get((PEER, two, w, op)), res.get((PEER, one, w, op))
                if a and b:
                    x = ratio(a, b)
                    cpu = f", cpu/wall {a['cpu']:.2f}" if a["cpu"] is not None else ""
                    row(f"{two} {op} >= 1.7x {one} {op}", w, f"{x:.2f}x{cpu}", x >= 1.7)
    peaks = rss_by(rss)
    for w in WORKLOADS:
        ds = {k: v for k, v in peaks.items() if k[0] == w}
        if ds:
            (_, op, v), mib = max(ds.items(), key=lambda kv: kv[1])
            row(f"peak RSS < {RSS_LIMIT_MIB} MiB (reads and conversions)", w,
                f"max {mib:.1f} MiB ({op} {v})", mib < RSS_LIMIT_MIB)
    if not peaks:
        row(f"peak RSS < {RSS_LIMIT_MIB} MiB", "-", "no RSS lines in the logs", None)
    lines = ["| target | workload | measured | met? |", "|---|---|---|---|"]
    for name, w, value, ok in rows:
        mark = "n/a" if ok is None else ("**met**" if ok else "not met")
        lines.append(f"| {name} | {w} | {value} | {mark} |")
    met = sum(1 for r in rows if r[3])
    judged = sum(1 for r in rows if r[3] is not None)
    return f"{met} of {judged} met.\n\n" + "\n".join(lines)


def rss_table(rss):
    peaks = rss_by(rss)
    if not peaks:
        return "_No RSS lines in the logs (TFRECORD_RS_PEAK_RSS=0?)._"
    head = " | ".join(f"{op} {v}" for op, v in RSS_OPS)
    lines = [f"| workload | {head} |", "|---|" + "--:|" * len(RSS_OPS)]
    for w in WORKLOADS:
        if any(k[0] == w for k in peaks):
            cells = [f"{peaks[(w, op, v)]:.1f}" if (w, op, v) in peaks else "-" for op, v in RSS_OPS]
            lines.append(f"| {w} | " + " | ".join(cells) + " |")
    idle = peaks.get(("-", "none", "st"))
    text = "\n".join(lines)
    if idle is not None:
        text += f"\n\nThe bench process before any work: {idle:.1f} MiB."
    return text


def spread_note(res):
    shown = {(op, v) for op in OPS for v in VARIANTS} | {("convert", v) for v in CONVERTS}
    ours = [(r["spread"], k) for k, r in res.items()
            if k[0] == PEER and (k[3], k[1]) in shown and len(r["secs"]) > 1]
    if not ours:
        return ""
    worst, (_, v, w, op) = max(ours)
    med = statistics.median(s for s, _ in ours)
    return (f" The spread of a row (slowest minus fastest repetition, over the median) is "
            f"{med * 100:.0f}% at the median of the tfrecord-rs rows here, {worst * 100:.0f}% "
            f"at most ({w} {op} {v}).")


METHOD = """\
| op | what one repetition times |
|---|---|
| `read_raw` | open the file, read every record into one reused buffer, both CRCs checked (gzip: inflate too) |
| `read_raw_nocrc` | the same without the data CRC (the length CRC is always checked) |
| `read_decode` | `read_raw` + prost decode into `tensorflow.Example` / `SequenceExample` |
| `read_parse` | `read_raw` + decode + every feature of the spec into typed columns, batches of 1024: what `TFRecordDataset.batch(1024).map(parse_example)` yields |
| `parse_mem` | the decode and extraction of `read_parse` over records already in memory (no I/O, no CRC) |
| `write_prebuilt` | write serialized records: framing, CRCs, buffered write, close (page cache, no fsync) |
| `write_example` | encode pre-built derived values + write |
| `write_build` | build the derived values from typed values + encode + write |
| `convert` | not a protocol op: the file re-encoded record by record as `tfrecord convert` does, to OFRecord (Example workloads) or to a gzip TFRecord (level 6) |

Variants: `st` one thread with the derived types (`#[derive(Example)]`); `mt2` two threads of
`reader::for_each_chunk`, each checking and decoding whole chunks of frames (`parse_mem`:
batches taken in turn); `spec` the runtime spec parser (`tfrecord_core::parse`, the spec built
from the workload's sidecar at run time) on one thread; `spec_mt2` the same on two threads.

- Each measurement is one untimed warm-up, then the timed repetitions; the page takes the
  median wall time of all repetitions of a row (the rounds of a run pooled). Every repetition's
  work is checked (records, payload bytes, values extracted against an independent prost
  decode), and written files are read back and compared with the source.
- MB/s counts uncompressed TFRecord stream bytes (1 MB = 10^6 B). A ratio is records/s over
  TensorFlow single-thread's records/s for the same workload and op (or the op named in the
  table where TensorFlow has none) in the same run. The machine is shared and its speed
  drifts over minutes, so only figures of one run are compared.
- One- and two-thread variants of an op (`st` and `mt2`, `spec` and `spec_mt2`) alternate
  their repetitions, so their ratio is taken at the same moments of the machine.
- Peak RSS: each streaming op run once in a fresh process (`tfrecord-bench --peak-rss`),
  its `VmHWM`.
- To profile one op: `perf record -g target/release/tfrecord-bench --stream-only --workloads W
  --ops OP --variants V`; `--stream-only` skips the in-memory setup, so the profile holds the
  op alone.
"""


CLI_FILE = "cli.results"


def load_cli(log_dir):
    """The RESULT lines of `cli.results` (one tfrecord-bench run of the library's reads beside
    the `cli` op), kept apart from the harness's logs; per (variant, workload, op), CPU-time
    rates (records and bytes per CPU second, median)."""
    rows = {}
    for (_, variant, workload, op), d in load_results(os.path.join(log_dir, CLI_FILE)).items():
        cpu = d["records"] / d["cpu_rps"]
        rows[(variant, workload, op)] = dict(
            d, cpu_mbps=d["bytes"] / cpu / 1e6,
            wall_mbps=d["bytes"] / statistics.median(d["secs"]) / 1e6, n=len(d["secs"]))
    return rows


def cli_table(rows):
    """The command-line paths users wait on, beside the library's raw and typed reads of the
    same run, by CPU time, with their targets."""
    if not rows:
        return None
    lines = ["| workload | path | by CPU time | by wall time | target | met? |",
             "|---|---|---|---|---|---|"]
    for w in ["mnist", "ctr"]:
        raw = rows.get(("st", w, "read_raw"))
        typed = rows.get(("st", w, "read_parse"))
        if raw:
            lines.append(f"| {w} | library: read_raw (framing + both CRCs) | {raw['cpu_mbps']:.0f} MB/s "
                         f"| {raw['wall_mbps']:.0f} MB/s | (reference) | |")
        if typed:
            lines.append(f"| {w} | library: typed read (read_parse st) | {fr(typed['cpu_rps'])} rec/s | | "
                         "(reference) | |")
        for variant, what, target, unit in [
            ("convert_of", "`tfrecord convert` TFRecord -> OFRecord", 1000, "MB/s"),
            ("cat_json", "`tfrecord cat --json` (MB/s of JSON written)", 200, "MB/s"),
            ("from_json", "`tfrecord from-json` (MB/s of JSON read)", 200, "MB/s"),
            ("verify_decode", "`tfrecord verify --decode`", None, "rec/s"),
        ]:
            r = rows.get((variant, w, "cli"))
            if not r:
                continue
            if unit == "MB/s":
                value, wall = f"{r['cpu_mbps']:.0f} MB/s", f"{r['wall_mbps']:.0f} MB/s"
                ok = r["cpu_mbps"] >= target
                goal = f">= {target} MB/s"
            else:
                value, wall = f"{fr(r['cpu_rps'])} rec/s", ""
                ok = typed is not None and r["cpu_rps"] >= typed["cpu_rps"]
                goal = "> = the typed read".replace("> =", ">=")
            lines.append(f"| {w} | {what} | {value} | {wall} | {goal} | {'**met**' if ok else 'not met'} |")
    return "\n".join(lines)


DATASET_FILE = "dataset.results"


def dataset_table(log_dir):
    """tfrecord-dataset's criterion medians (`dataset.results`) as ratios with their targets."""
    path = os.path.join(log_dir, DATASET_FILE)
    if not os.path.exists(path):
        return None
    med = {}
    with open(path) as fh:
        for line in fh:
            if line.strip():
                d = json.loads(line)
                med[(d["group"], d["bench"])] = d["median_ns"] / 1e6
    lines = ["| measure | medians (ms) | ratio | target | met? |", "|---|---|---|---|---|"]

    def speedup(name, one, two, target):
        a, b = med.get(("dataset_8_shards", one)), med.get(("dataset_8_shards", two))
        if a and b:
            ok = "" if target is None else ("**met**" if a / b >= target else "not met")
            goal = "" if target is None else f">= {target}x"
            lines.append(f"| {name} | {a:.1f} (1 thread), {b:.1f} (2 threads) | {a / b:.3f}x | {goal} | {ok} |")

    speedup("8 shards, a derived type with strings and lists, `value_batches` of 1024: 2 threads "
            "vs 1", "value_batches_threads_1", "value_batches_threads_2", 1.8)
    speedup("8 shards, the same type one by one (`values`): 2 threads vs 1", "values_threads_1",
            "values_threads_2", 1.8)
    speedup("8 shards, a derived type of numbers only (`values`): 2 threads vs 1", "dense_threads_1",
            "dense_threads_2", None)

    def shuffle(name, plain, shuffled):
        a, b = med.get(("dataset_shuffle", plain)), med.get(("dataset_shuffle", shuffled))
        if a and b:
            cost = (b / a - 1) * 100
            lines.append(f"| {name} | {a:.1f} (none), {b:.1f} (shuffled) | {cost:+.0f}% | <= +15% | "
                         f"{'**met**' if cost <= 15 else 'not met'} |")

    shuffle("shuffle buffer of 10,000 vs none, `values`", "unshuffled", "buffer_10000")
    shuffle("shuffle buffer of 10,000 vs none, `value_batches`", "value_batches_unshuffled",
            "value_batches_buffer_10000")
    return "\n".join(lines) if len(lines) > 2 else None


ARROW_FILE = "arrow.results"


def load_results(path):
    """RESULT lines of one log, by (peer, variant, workload, op): CPU-time rates (records per
    CPU second, median; wall time where a peer gives no CPU time)."""
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path) as fh:
        for line in fh:
            if not line.startswith("RESULT "):
                continue
            d = json.loads(line[7:])
            cpu = statistics.median(d["cpu_secs"]) if d.get("cpu_secs") else statistics.median(d["secs"])
            rows[(d["peer"], d["variant"], d["workload"], d["op"])] = dict(d, cpu_rps=d["records"] / cpu)
    return rows


def arrow_table(log_dir):
    """Columnar and Arrow reads (`arrow.results`) beside tfx_bsl's decoder (`tfx_bsl.log`) and
    TensorFlow's read_parse (`tf_read_parse.log`), all from one session, by CPU time."""
    ours = load_results(os.path.join(log_dir, ARROW_FILE))
    if not ours:
        return None
    tfx = load_results(os.path.join(log_dir, TFXBSL_FILE))
    tf = load_results(os.path.join(log_dir, TF_ARROW_FILE))
    lines = ["| workload | tfrecord-rs path | rec/s (CPU) | against | its rec/s (CPU) | ratio | target | met? |",
             "|---|---|---|---|---|---|---|---|"]
    for w in ["mnist", "ctr", "seq"]:
        tf_rp = tf.get(("tensorflow", "st", w, "read_parse"))
        rows = [
            ("to_arrow", "st", "`ArrowReader` over the file: RecordBatches of 1024", ("tfx_bsl", "to_arrow"), 3),
            ("to_arrow_mem", "st", "`ArrowDecoder` over records in memory", ("tfx_bsl", "to_arrow_mem"), 3),
            ("read_parse", "columns", "`Reader::<T>::batches(1024)`: columns of a derived type", ("tf", None), 10),
            ("read_parse", "owned", "`Reader::<T>` iterating owned structs, batches of 1024", ("tf", None), 5),
            ("read_parse", "owned_batch", "`Reader::read_batch` refilling owned structs", ("tf", None), None),
            ("read_parse", "st", "`Reader::next_lent`: borrowed structs (for reference)", ("tf", None), None),
        ]
        for op, variant, what, (peer, peer_op), target in rows:
            r = ours.get(("tfrecord-rs", variant, w, op))
            if not r:
                continue
            if peer == "tfx_bsl":
                ref, name = tfx.get(("tfx_bsl", "st", w, peer_op)), f"tfx_bsl `{peer_op}`"
            else:
                ref, name = tf_rp, "TensorFlow read_parse (1 thread)"
            ratio_s, ok = "", ""
            if ref:
                q = r["cpu_rps"] / ref["cpu_rps"]
                ratio_s = f"{q:.1f}x"
                if target is not None:
                    ok = "**met**" if q >= target else "not met"
            goal = f">= {target}x" if target is not None else ""
            ref_s = fr(ref["cpu_rps"]) if ref else "-"
            lines.append(f"| {w} | {what} | {fr(r['cpu_rps'])} | {name} | {ref_s} | {ratio_s} | {goal} | {ok} |")
    return "\n".join(lines) if len(lines) > 2 else None


def parquet_table(log_dir):
    """The Parquet export (`to_parquet`) beside the Parquet writer alone over the same batches
    (`parquet_write`, repetitions alternated) and the decoding alone (`to_arrow`), from
    `arrow.results`, by CPU time."""
    ours = load_results(os.path.join(log_dir, ARROW_FILE))
    lines = [("| workload | decoding alone (`to_arrow`) | Parquet writer alone | export on one thread "
              "(read + decode + write) | decoding's cost / the writer's | export / writer alone |"),
             "|---|---|---|---|---|---|"]
    for w in ["mnist", "ctr", "seq"]:
        export = ours.get(("tfrecord-rs", "st", w, "to_parquet"))
        writer = ours.get(("tfrecord-rs", "st", w, "parquet_write"))
        decode = ours.get(("tfrecord-rs", "st", w, "to_arrow"))
        if not (export and writer and decode):
            continue
        share = writer["cpu_rps"] / decode["cpu_rps"]
        q = export["cpu_rps"] / writer["cpu_rps"]
        lines.append(f"| {w} | {fr(decode['cpu_rps'])} rec/s | {fr(writer['cpu_rps'])} rec/s "
                     f"| {fr(export['cpu_rps'])} rec/s | {share:.0%} | {q:.2f} |")
    return "\n".join(lines) if len(lines) > 2 else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--logs", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    res, rss = load(a.logs)
    if not any(k[0] == PEER for k in res):
        sys.exit(f"report.py: no {PEER} RESULT lines in {a.logs}")
    reps = sorted({len(r["secs"]) for k, r in res.items() if k[0] == PEER})
    intro = ("tfrecord-rs (peer `tfrecord-rs`) measured by the peer harness in one run beside "
             "TensorFlow 2.21, the `tfrecord` crate 0.15 (`rust-tfrecord`) and py-tfrecord, on "
             "the harness's workloads: `mnist` (100k Examples, a 784-byte image and a label), "
             "`ctr` (200k Examples, 39 scalar features, a var-len list and 16 floats), `seq` "
             "(20k SequenceExamples) and `mnist_gz` (the mnist records, gzip).\n")
    md = ["# Benchmarks\n",
          ("<!-- Generated by bench/run.sh (bench/report.py) from the logs in bench/results/. "
           "Do not edit by hand. -->\n"),
          intro,
          "## Machine\n",
          "| fact | value |\n|---|---|"]
    md += [f"| {k} | {v} |" for k, v in machine(a.logs)]
    md.append("")
    machine_txt = read(a.logs, "machine.txt")
    if machine_txt:
        md.append("The harness's record of it (`machine.txt`):\n\n```\n" + machine_txt + "\n```\n")
    md.append("## Results\n")
    md.append("Records per second (median), and in parentheses the ratio to TensorFlow on one "
              "thread (first column) in the same run. TF multi-thread is its `parallel` pipeline "
              "(`num_parallel_calls=AUTOTUNE` + prefetch), or `default` where there is none; "
              "py-tfrecord does not check CRCs. Samples per tfrecord-rs row: "
              f"{', '.join(map(str, reps))}.{spread_note(res)}\n")
    md.append(results(res) + "\n")
    conv = converts(res)
    if conv:
        md.append("`convert` (no peer does it):\n\n" + conv + "\n")
    cli_rows = load_cli(a.logs)
    cli = cli_table(cli_rows)
    if cli:
        md.append("## Command-line paths\n")
        md.append("The `tfrecord` binary as users run it (a child process per run, one thread "
                  "(`verify --threads 1`), the workload's file named as often as 400 MB of input "
                  "takes (2 GB for `convert` and `verify`), so that a run lasts many of the CPU "
                  "clock's 10 ms ticks; "
                  "`tfrecord-bench --ops read_raw,read_parse,cli`, kept in "
                  f"`bench/results/{CLI_FILE}`), beside the library's raw and typed reads measured "
                  "in the same run. Rates by CPU time (user + system of the child), the median of "
                  "the runs; wall time as measured on the loaded machine.\n")
        md.append(cli + "\n")
    ds = dataset_table(a.logs)
    if ds:
        md.append("## Data sets\n")
        md.append("`tfrecord-dataset` reading 8 shards of 100,000 records in all (`cargo bench -p "
                  f"tfrecord-dataset --bench dataset`, criterion medians of wall time, kept in "
                  f"`bench/results/{DATASET_FILE}`); the machine has 2 cores, shared during the run.\n")
        md.append(ds + "\n")
    arrow = arrow_table(a.logs)
    if arrow:
        md.append("## Columns and Arrow\n")
        md.append("Records to columns and Arrow RecordBatches, one thread, beside tfx_bsl's "
                  "`ExamplesToRecordBatchDecoder` / `SequenceExamplesToRecordBatchDecoder` "
                  "(`bench/tfx_bsl/`, its own virtualenv) and TensorFlow's `read_parse`, all "
                  f"measured in one session (`bench/results/{ARROW_FILE}`, `{TFXBSL_FILE}`, "
                  f"`{TF_ARROW_FILE}`). Rates by CPU time, the median of the runs.\n")
        md.append(arrow + "\n")
    parquet = parquet_table(a.logs)
    if parquet:
        md.append("## Parquet export\n")
        md.append("Records to a Parquet file as `tfrecord to-parquet --spec` writes it (RecordBatches of 8192, "
                  "Snappy, row groups of 131,072 rows) on one thread, beside parquet's `ArrowWriter` alone over "
                  "the same RecordBatches decoded beforehand (the two alternated, `tfrecord-bench --ops "
                  "to_parquet`) and the decoding alone. The writer bounds the export: decoding a record costs "
                  "the fraction of writing it shown, and `tfrecord to-parquet` runs the writer on a thread of "
                  "its own, fed the decoded batches, so that on two cores the export goes at the writer's pace. "
                  "On one thread the two costs add up, and a little more (the caches are shared). Rates by CPU "
                  "time, the median of the runs.\n")
        md.append(parquet + "\n")
    md.append("## Targets\n")
    md.append("The project's performance targets, judged on this run's wall-clock figures.\n")
    md.append(targets(res, rss) + "\n")
    md.append("## Peak RSS (MiB)\n")
    md.append(rss_table(rss) + "\n")
    md.append("## Method\n")
    md.append(METHOD)
    md.append("## Reproduce\n")
    md.append("```sh\n" + a.command + "\n"
              "bench/run.sh --report-only bench/results   # this page from the kept logs\n"
              "cargo run --release -p tfrecord-bench -- --help   # the candidate alone\n"
              "python3 ../shared/peers/summarize.py bench/results/*.log   # every measurement\n"
              "```\n")
    md.append("`bench/run.sh` runs the harness (`shared/peers/run_peers.sh`, beside this "
              "repository; TensorFlow needed) with `CANDIDATES_DIR=bench/candidates`, keeps the "
              "run's raw logs in `bench/results/` and writes this page from them.\n")
    with open(a.out, "w") as f:
        f.write("\n".join(md).rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
