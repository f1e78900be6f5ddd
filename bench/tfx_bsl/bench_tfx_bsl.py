#!/usr/bin/env python3
"""tfx_bsl peer: TFRecord records to Arrow RecordBatches with tfx_bsl's decoders.

usage: bench_tfx_bsl.py [--reps N] [--workloads mnist,ctr,seq] [--ops to_arrow,to_arrow_mem,...]

Prints RESULT lines in the peer-harness protocol (`"peer": "tfx_bsl"`, `"variant": "st"`) for
the workloads `mnist`, `ctr` (Examples, `ExamplesToRecordBatchDecoder`) and `seq`
(SequenceExamples, `SequenceExamplesToRecordBatchDecoder`) found in `$DATA_DIR` (default
/tmp/peers/data; made by the harness's gen_data.py). Ops:

  to_arrow             read the file with tf.data.TFRecordDataset(path).batch(1024) iterated by
                       as_numpy_iterator() (framing + both CRCs), and DecodeBatch each batch of
                       1024 serialized records into a pyarrow RecordBatch, types inferred (no
                       schema). This is what tfx_bsl's own TFExampleRecord.RecordBatches() does
                       (it builds the same TFRecordDataset and calls the same decoder).
  to_arrow_mem         DecodeBatch over lists of 1024 serialized records already in memory (no
                       I/O, no CRC), types inferred.
  to_arrow_mem_schema  the same with a TFMD schema made from the workload's feature spec (INT,
                       FLOAT, BYTES; for `seq` the feature lists as one STRUCT feature).

One thread: TensorFlow's intra/inter-op pools and tf.data's private pool are 1 thread, tf.data
autotuning and parallelising rewrites are off; the decoder itself runs on the calling thread.
`secs` is wall time, `cpu_secs` process CPU time, one untimed warm-up then --reps timed runs.
"""

import argparse
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")

PEER = "tfx_bsl"
VARIANT = "st"
WORKLOADS = ["mnist", "ctr", "seq"]
OPS = ["to_arrow", "to_arrow_mem", "to_arrow_mem_schema"]
SEQUENCE_COLUMN = "##SEQUENCE##"
DATA_DIR = os.environ.get("DATA_DIR", "/tmp/peers/data")

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--reps", type=int, default=int(os.environ.get("REPS", "5")))
ap.add_argument("--workloads", default="", help="comma-separated; default all of " + ",".join(WORKLOADS))
ap.add_argument("--ops", default="", help="comma-separated; default all of " + ",".join(OPS))
ap.add_argument("--batch", type=int, default=1024)
args = ap.parse_args()
SEL_W = [x for x in args.workloads.split(",") if x]
SEL_OP = [x for x in args.ops.split(",") if x]

import tensorflow as tf
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx_bsl.coders import example_coder, sequence_example_coder

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)


# ---------------------------------------------------------------- protocol helpers
# (the peer harness's benchlib.py, the few lines this peer needs)


def want(selected, name):
    return not selected or name in selected


def sidecar(name):
    with open(os.path.join(DATA_DIR, name + ".json")) as f:
        s = json.load(f)
    s["path"] = os.path.join(DATA_DIR, s["file"])
    return s


def load_records(sc):
    """All record payloads of an uncompressed workload as a list of bytes (setup only, not
    measured; CRCs not checked)."""
    import struct

    with open(sc["path"], "rb") as f:
        buf = f.read()
    out, p, n = [], 0, len(buf)
    while p < n:
        (ln,) = struct.unpack_from("<Q", buf, p)
        out.append(buf[p + 12:p + 12 + ln])
        p += 16 + ln
    if len(out) != sc["num_records"]:
        raise SystemExit(f"{sc['path']}: {len(out)} records, the sidecar says {sc['num_records']}")
    return out


def measure(fn, reps, warmup=1):
    """fn() warmup times untimed, then reps times; (wall secs, process CPU secs, last result)."""
    res = None
    for _ in range(warmup):
        res = fn()
    secs, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        res = fn()
        secs.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return secs, cpu, res


def emit(workload, op, records, nbytes, secs, cpu_secs, note):
    d = {"peer": PEER, "variant": VARIANT, "workload": workload, "op": op, "records": records,
         "bytes": nbytes, "secs": [round(s, 6) for s in secs],
         "cpu_secs": [round(s, 6) for s in cpu_secs], "note": note}
    print("RESULT " + json.dumps(d), flush=True)
    med = sorted(secs)[len(secs) // 2]
    print(f"# {PEER:>14} {VARIANT:>8} {workload:>9} {op:<22} "
          f"{records / med:>12,.0f} rec/s {nbytes / med / 1e6:>9.1f} MB/s  (median of {len(secs)})",
          file=sys.stderr, flush=True)


# ---------------------------------------------------------------- tfx_bsl


def ds_options():
    o = tf.data.Options()
    o.threading.private_threadpool_size = 1
    o.threading.max_intra_op_parallelism = 1
    o.autotune.enabled = False
    o.experimental_optimization.map_parallelization = False
    o.experimental_optimization.parallel_batch = False
    o.experimental_optimization.inject_prefetch = False
    return o


TFMD_TYPE = {"int64": schema_pb2.INT, "float32": schema_pb2.FLOAT, "string": schema_pb2.BYTES}


def tfmd_schema(sc):
    """The workload's feature spec as a TFMD schema (feature names and types)."""
    schema = schema_pb2.Schema()
    if sc["record_kind"] == "sequence_example":
        for name, spec in sc["context_features"].items():
            schema.feature.add(name=name, type=TFMD_TYPE[spec["dtype"]])
        seq = schema.feature.add(name=SEQUENCE_COLUMN, type=schema_pb2.STRUCT)
        for name, spec in sc["sequence_features"].items():
            seq.struct_domain.feature.add(name=name, type=TFMD_TYPE[spec["dtype"]])
    else:
        for name, spec in sc["features"].items():
            schema.feature.add(name=name, type=TFMD_TYPE[spec["dtype"]])
    return schema


def decoder(sc, schema=None):
    ser = None if schema is None else schema.SerializeToString()
    if sc["record_kind"] == "sequence_example":
        if ser is None:
            return sequence_example_coder.SequenceExamplesToRecordBatchDecoder(SEQUENCE_COLUMN)
        return sequence_example_coder.SequenceExamplesToRecordBatchDecoder(SEQUENCE_COLUMN, ser)
    return example_coder.ExamplesToRecordBatchDecoder(ser)


def expected_columns(sc):
    if sc["record_kind"] == "sequence_example":
        return sorted(sc["context_features"]) + [SEQUENCE_COLUMN]
    return sorted(sc["features"])


def check(sc, rows, names):
    """The run decoded every record and made one column per spec feature."""
    if rows != sc["num_records"]:
        raise SystemExit(f"{sc['path']}: decoded {rows} rows, the sidecar says {sc['num_records']}")
    if sorted(names) != sorted(expected_columns(sc)):
        raise SystemExit(f"{sc['path']}: columns {sorted(names)}, expected {expected_columns(sc)}")


def run(name, sc):
    nrec, nbytes = sc["num_records"], sc["stream_bytes"]
    batch = args.batch
    dname = ("SequenceExamplesToRecordBatchDecoder" if sc["record_kind"] == "sequence_example"
             else "ExamplesToRecordBatchDecoder")
    if sc["compression"]:
        raise SystemExit(f"{name}: compressed workloads are not measured by this peer")

    if want(SEL_OP, "to_arrow"):
        dec = decoder(sc)

        def f():
            ds = tf.data.TFRecordDataset(sc["path"]).batch(batch).with_options(ds_options())
            rows, names = 0, None
            for serialized in ds.as_numpy_iterator():
                rb = dec.DecodeBatch(serialized)
                rows += rb.num_rows
                names = rb.schema.names
            return rows, names

        s, c, (rows, names) = measure(f, args.reps)
        check(sc, rows, names)
        emit(name, "to_arrow", nrec, nbytes, s, c,
             f"TFRecordDataset.batch({batch}).as_numpy_iterator() (framing+CRC) + "
             f"{dname}().DecodeBatch per batch -> pyarrow RecordBatch, types inferred")

    mem_ops = [op for op in ("to_arrow_mem", "to_arrow_mem_schema") if want(SEL_OP, op)]
    if mem_ops:
        recs = load_records(sc)
        batches = [recs[i:i + batch] for i in range(0, len(recs), batch)]
        del recs
        for op in mem_ops:
            schema = tfmd_schema(sc) if op == "to_arrow_mem_schema" else None
            dec = decoder(sc, schema)

            def f(dec=dec):
                rows, names = 0, None
                for b in batches:
                    rb = dec.DecodeBatch(b)
                    rows += rb.num_rows
                    names = rb.schema.names
                return rows, names

            s, c, (rows, names) = measure(f, args.reps)
            check(sc, rows, names)
            how = "a TFMD schema of the spec's features" if schema else "types inferred"
            emit(name, op, nrec, nbytes, s, c,
                 f"{dname}().DecodeBatch over in-memory lists of {batch} serialized records "
                 f"(no I/O, no CRC) -> pyarrow RecordBatch, {how}")
        del batches


def main():
    import importlib.metadata as md

    vers = ", ".join(f"{p} {md.version(p)}" for p in ("tfx-bsl", "tensorflow", "pyarrow"))
    print(f"# tfx_bsl peer: {vers}; intra={tf.config.threading.get_intra_op_parallelism_threads()} "
          f"inter={tf.config.threading.get_inter_op_parallelism_threads()} reps={args.reps}",
          file=sys.stderr)
    for name in WORKLOADS:
        if want(SEL_W, name):
            run(name, sidecar(name))


if __name__ == "__main__":
    main()
