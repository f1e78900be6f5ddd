#!/usr/bin/env python3
"""Live interop check of `tfrecord index`: its index files are byte for byte what the PyPI
`tfrecord` package's `create_index` (`tfrecord.tools.tfrecord2idx`, the format of DALI's
`tfrecord2idx`) writes for the same files, and that package's own reader reads the records
TensorFlow wrote through them.

Run through `interop/run.sh`, which installs the pinned `tfrecord` package into the virtualenv.
Every check prints one line (`PASS name` or `FAIL name` followed by what differed); the last
line is `N passed, M failed` and the exit status is 1 if anything failed.

The record files are written by `tf.io.TFRecordWriter` from a fixed seed: random Examples and
raw byte strings, empty records, a record larger than the 1 MiB read buffer, an empty file and
a file of one record.
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import shutil
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import tensorflow as tf
from checks import Runner

# The `tfrecord` package registers its own copy of example.proto, which clashes with
# TensorFlow's in one process: it runs in a process of its own.
PYPI_CREATE_INDEX = """
import sys
from tfrecord.tools.tfrecord2idx import create_index
create_index(sys.argv[1], sys.argv[2])
"""
PYPI_READ_SHARDS = """
import pickle, sys
from tfrecord.reader import tfrecord_iterator
path, index, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
records = []
for i in range(n):
    records.extend(bytes(r) for r in tfrecord_iterator(path, index, shard=(i, n)))
with open(out, "wb") as f:
    pickle.dump(records, f)
"""


def pypi(script, *argv):
    p = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, check=False)
    if p.returncode != 0:
        raise AssertionError(f"the tfrecord package failed:\n{p.stderr.decode()}")


def create_index(path, index):
    pypi(PYPI_CREATE_INDEX, path, index)


def run(binary, args, expect=0):
    p = subprocess.run([binary, *args], capture_output=True, stdin=subprocess.DEVNULL, check=False)
    if p.returncode != expect:
        raise AssertionError(
            f"tfrecord {' '.join(args)} exited {p.returncode}, expected {expect}:\n{p.stderr.decode()}"
        )
    return p


def example(rng):
    feature = {}
    for i in range(rng.randrange(0, 6)):
        kind = rng.randrange(3)
        if kind == 0:
            values = [rng.randrange(-(2**63), 2**63) for _ in range(rng.randrange(0, 20))]
            feature[f"i{i}"] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
        elif kind == 1:
            values = [rng.uniform(-1e6, 1e6) for _ in range(rng.randrange(0, 20))]
            feature[f"f{i}"] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
        else:
            values = [rng.randbytes(rng.randrange(0, 300)) for _ in range(rng.randrange(0, 4))]
            feature[f"b{i}"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def random_record(rng):
    pick = rng.random()
    if pick < 0.1:
        return b""
    if pick < 0.6:
        return example(rng)
    return rng.randbytes(rng.choice([1, 7, 100, 4000, 70000]))


def write_tf(path, records):
    with tf.io.TFRecordWriter(path) as w:
        for r in records:
            w.write(r)


def tf_records(path):
    return [r.numpy() for r in tf.data.TFRecordDataset(path)]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="the tfrecord binary")
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    tmp = tempfile.mkdtemp(prefix="tfrecord-index-")
    runner = Runner()

    files = {}
    for n in range(6):
        records = [random_record(rng) for _ in range(rng.randrange(2, 200))]
        files[f"random{n}.tfrecord"] = records
    files["large.tfrecord"] = [b"a", rng.randbytes(2 * 1024 * 1024 + 3), b"", example(rng)]
    files["one.tfrecord"] = [example(rng)]
    files["empty.tfrecord"] = []
    paths = {}
    for name, records in files.items():
        paths[name] = os.path.join(tmp, name)
        write_tf(paths[name], records)

    def same_as_create_index():
        run(args.bin, ["index", *paths.values()])
        for name, path in paths.items():
            want = os.path.join(tmp, name + ".py-idx")
            create_index(path, want)
            got = read(path + ".idx")
            if got != read(want):
                raise AssertionError(f"{name}: tfrecord index differs from create_index:\n"
                                     f"  ours:   {got[:200]!r}\n  theirs: {read(want)[:200]!r}")
            lines = got.decode().splitlines()
            if len(lines) != len(files[name]):
                raise AssertionError(f"{name}: {len(lines)} index lines for {len(files[name])} records")

    def output_flag():
        path = paths["random0.tfrecord"]
        out = os.path.join(tmp, "named.index")
        run(args.bin, ["index", path, "-o", out])
        if read(out) != read(path + ".idx"):
            raise AssertionError("-o OUT differs from IN.idx")
        stdout = run(args.bin, ["index", path, "-o", "-"]).stdout
        if stdout != read(path + ".idx"):
            raise AssertionError("-o - differs from IN.idx")
        p = run(args.bin, ["index", path, paths["one.tfrecord"], "-o", out], expect=2)
        if b"one input" not in p.stderr:
            raise AssertionError(f"-o with two inputs: {p.stderr.decode()}")

    def the_package_reads_through_our_index():
        # The tfrecord package's reader (records by index, sharded like a data loader's
        # workers) returns exactly what TensorFlow reads.
        for name in ("random1.tfrecord", "random2.tfrecord", "large.tfrecord"):
            path = paths[name]
            want = tf_records(path)
            for n in (1, 3, 4):
                out = os.path.join(tmp, "shards.pickle")
                pypi(PYPI_READ_SHARDS, path, path + ".idx", str(n), out)
                with open(out, "rb") as f:
                    got = pickle.load(f)
                if got != want:
                    raise AssertionError(f"{name}, {n} shards: {len(got)} records, TensorFlow reads {len(want)}")

    def compressed_files_are_refused():
        gz = os.path.join(tmp, "c.tfrecord.gz")
        with tf.io.TFRecordWriter(gz, options="GZIP") as w:
            w.write(b"x")
        p = run(args.bin, ["index", gz], expect=1)
        if b"c.tfrecord.gz" not in p.stderr or os.path.exists(gz + ".idx"):
            raise AssertionError(f"gzip input: {p.stderr.decode()}")

    runner.check("index is byte-identical to tfrecord2idx.create_index", same_as_create_index)
    runner.check("index -o OUT and -o -", output_flag)
    runner.check("the tfrecord package reads TensorFlow's records through the index", the_package_reads_through_our_index)
    runner.check("compressed input is refused", compressed_files_are_refused)

    print(f"{runner.passed} passed, {runner.failed} failed")
    if args.keep:
        print(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if runner.failed else 0


if __name__ == "__main__":
    sys.exit(main())
