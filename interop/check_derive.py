"""Derived Rust types against the real TensorFlow, in both directions.

Drives the `derive_interop` example (examples/examples/derive_interop.rs):

D1  Rust writes records from a `#[derive(Example)]` struct (plain and gzip); TensorFlow's
    `tf.io.parse_example`, with the feature spec matching the struct, returns the same values.
D2  TensorFlow writes Examples; the derived struct decodes them to the values TensorFlow wrote.
D3  Rust writes `#[derive(SequenceExample)]` records; `tf.io.parse_single_sequence_example`
    returns the same context and feature lists.
D4  TensorFlow writes SequenceExamples; the derived struct decodes them.
D5  TensorFlow writes Examples that lack the `VarLenFeature` keys `tags` and `ids`;
    `tf.io.parse_example` reads them as empty lists, and the derived struct's plain `Vec`
    fields decode them as empty `Vec`s.
D6  TensorFlow writes SequenceExamples that lack the `VarLenFeature` feature list `tokens`;
    `tf.io.parse_single_sequence_example` reads it as zero steps, and so does the derived
    struct's `Vec<Vec<i64>>`.

Floats are compared by their float32 bit patterns. Prints one PASS/FAIL line per check and
`N passed, M failed`; exits 1 on any failure.
"""

import argparse
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

import numpy as np
import tensorflow as tf
from checks import Fail, Runner

EXAMPLE_SPEC = {
    "image/encoded": tf.io.FixedLenFeature([], tf.string),
    "label": tf.io.FixedLenFeature([], tf.int64),
    "score": tf.io.FixedLenFeature([], tf.float32),
    "mat": tf.io.FixedLenFeature([2, 3], tf.float32),
    "tags": tf.io.VarLenFeature(tf.string),
    "ids": tf.io.VarLenFeature(tf.int64),
    "small": tf.io.FixedLenFeature([], tf.int64),
    "flag": tf.io.FixedLenFeature([], tf.int64),
    "name": tf.io.FixedLenFeature([], tf.string, default_value=""),
}
CONTEXT_SPEC = {
    "id": tf.io.FixedLenFeature([], tf.int64),
    "lang": tf.io.FixedLenFeature([], tf.string),
}
SEQUENCE_SPEC = {
    "tokens": tf.io.VarLenFeature(tf.int64),
    "scores": tf.io.FixedLenSequenceFeature([], tf.float32),
}


def bits(values):
    return [int(x) for x in np.asarray(values, dtype=np.float32).reshape(-1).view(np.uint32)]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def run(binary, *args):
    p = subprocess.run([binary, *args], capture_output=True, stdin=subprocess.DEVNULL, check=False)
    if p.returncode != 0:
        raise Fail(f"{os.path.basename(binary)} {' '.join(args)} failed: {p.stderr.decode(errors='replace')[:500]}")
    return [json.loads(line) for line in p.stdout.decode().splitlines() if line.strip()]


def compare(got, want, what):
    if len(got) != len(want):
        raise Fail(f"{what}: {len(got)} records, want {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            keys = sorted(k for k in set(g) | set(w) if g.get(k) != w.get(k))
            raise Fail(f"{what}: record {i} differs in {keys}: got {[g.get(k) for k in keys]}, want {[w.get(k) for k in keys]}")


def sparse_rows(sp, n, as_bytes=False):
    rows = [[] for _ in range(n)]
    for (r, _), v in zip(sp.indices.numpy().tolist(), sp.values.numpy().tolist()):
        rows[r].append(list(v) if as_bytes else v)
    return rows


def tf_parse_examples(path, compression):
    ds = tf.data.TFRecordDataset(path, compression_type=compression).batch(1000)
    out = []
    for batch in ds:
        p = tf.io.parse_example(batch, EXAMPLE_SPEC)
        n = int(batch.shape[0])
        tags = sparse_rows(p["tags"], n, as_bytes=True)
        ids = sparse_rows(p["ids"], n)
        for i in range(n):
            out.append({
                "image/encoded": list(p["image/encoded"][i].numpy()),
                "label": int(p["label"][i]),
                "score_bits": bits(p["score"][i].numpy())[0],
                "mat_bits": bits(p["mat"][i].numpy()),
                "tags": tags[i],
                "ids": ids[i],
                "small": int(p["small"][i]),
                "flag": int(p["flag"][i]),
                "name": list(p["name"][i].numpy()),
            })
    return out


def rand_f32(rng):
    choice = rng.random()
    if choice < 0.1:
        return rng.choice([0.0, -0.0, 3.4028234663852886e38, 1e-45, -1.5])
    return struct.unpack("<f", struct.pack("<f", rng.uniform(-1e6, 1e6)))[0]


def tf_examples(rng, n):
    """Examples written by TensorFlow's own protobuf classes, with their expected JSON."""
    msgs, want = [], []
    for i in range(n):
        image = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 64)))
        label = rng.choice([-(2**63), 2**63 - 1, rng.randrange(-(2**40), 2**40)])
        score = rand_f32(rng)
        mat = [rand_f32(rng) for _ in range(6)]
        tags = [f"t{rng.randrange(1000)}-{'ключ' if rng.random() < 0.3 else 'x'}" for _ in range(rng.randrange(4))]
        ids = [rng.randrange(-(2**62), 2**62) for _ in range(rng.randrange(5))]
        small = rng.randrange(-(2**31), 2**31)
        flag = rng.randrange(2)
        name = None if rng.random() < 0.4 else f"name {i}"
        f = {
            "image/encoded": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image])),
            "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
            "score": tf.train.Feature(float_list=tf.train.FloatList(value=[score])),
            "mat": tf.train.Feature(float_list=tf.train.FloatList(value=mat)),
            "tags": tf.train.Feature(bytes_list=tf.train.BytesList(value=[t.encode() for t in tags])),
            "ids": tf.train.Feature(int64_list=tf.train.Int64List(value=ids)),
            "small": tf.train.Feature(int64_list=tf.train.Int64List(value=[small])),
            "flag": tf.train.Feature(int64_list=tf.train.Int64List(value=[flag])),
            "ignored/extra": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0])),
        }
        if name is not None:
            f["name"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[name.encode()]))
        msgs.append(tf.train.Example(features=tf.train.Features(feature=f)))
        want.append({
            "image/encoded": list(image),
            "label": label,
            "score_bits": f32_bits(score),
            "mat_bits": [f32_bits(x) for x in mat],
            "tags": [list(t.encode()) for t in tags],
            "ids": ids,
            "small": small,
            "flag": flag,
            "name": list(name.encode()) if name is not None else [],
        })
    return msgs, want


def tf_sequences(rng, n):
    msgs, want = [], []
    for i in range(n):
        steps = rng.randrange(0, 8)
        tokens = [[rng.randrange(-1000, 10**12) for _ in range(rng.randrange(0, 4))] for _ in range(steps)]
        scores = [rand_f32(rng) for _ in range(steps)]
        ident, lang = rng.randrange(-(2**63), 2**63), rng.choice(["en", "zh", "日本語"])
        s = tf.train.SequenceExample()
        s.context.feature["id"].int64_list.value.append(ident)
        s.context.feature["lang"].bytes_list.value.append(lang.encode())
        tl = s.feature_lists.feature_list["tokens"]
        sl = s.feature_lists.feature_list["scores"]
        for t, sc in zip(tokens, scores):
            tl.feature.add().int64_list.value.extend(t)
            sl.feature.add().float_list.value.append(sc)
        msgs.append(s)
        want.append({"id": ident, "lang": list(lang.encode()), "tokens": tokens, "scores_bits": [f32_bits(x) for x in scores]})
    return msgs, want


def tf_parse_sequences(path):
    out = []
    for raw in tf.data.TFRecordDataset(path):
        ctx, seq = tf.io.parse_single_sequence_example(raw, CONTEXT_SPEC, SEQUENCE_SPEC)
        tok = seq["tokens"]
        # dense_shape[0] is the number of steps of the feature list: 0 when it is absent.
        rows = [[] for _ in range(int(tok.dense_shape[0]))]
        for (r, _), v in zip(tok.indices.numpy().tolist(), tok.values.numpy().tolist()):
            rows[r].append(v)
        out.append({
            "id": int(ctx["id"]),
            "lang": list(ctx["lang"].numpy()),
            "tokens": rows,
            "scores_bits": bits(seq["scores"].numpy()),
        })
    return out


def drop_keys(rng, msgs, keys, features):
    """Removes each of `keys` from about half of `msgs` (at least one each, and one that lacks
    them all); `features(msg)` is the map the keys live in. Returns how many keys were dropped."""
    dropped = 0
    for i, m in enumerate(msgs):
        for k in keys:
            if i == 0 or rng.random() < 0.5:
                del features(m)[k]
                dropped += 1
    return dropped


def write(path, msgs, compression=""):
    with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(compression_type=compression)) as w:
        for m in msgs:
            w.write(m.SerializeToString())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--example-bin", required=True, help="path to the derive_interop example binary")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    binary = os.path.abspath(args.example_bin)
    tmp = tempfile.mkdtemp(prefix="tfrecord-derive-interop-")
    runner = Runner()
    check = runner.check

    def d1(name, compression):
        path = os.path.join(tmp, name)
        want = run(binary, "write-example", path)
        compare(tf_parse_examples(path, compression), want, f"tf.io.parse_example of {name}")

    check("D1 derived Example -> TFRecord; tf.io.parse_example returns the same values", lambda: d1("d1.tfrecord", ""))
    check("D1 derived Example -> gzip TFRecord; tf.io.parse_example returns the same values", lambda: d1("d1.tfrecord.gz", "GZIP"))

    def d2():
        msgs, want = tf_examples(random.Random(args.seed), 200)
        path = os.path.join(tmp, "d2.tfrecord.zlib")
        write(path, msgs, "ZLIB")
        compare(run(binary, "read-example", path), want, "derived decode of TF-written Examples")

    check("D2 TF-written Examples (zlib, extra features) decode into the derived struct exactly", d2)

    def d3():
        path = os.path.join(tmp, "d3.tfrecord")
        want = run(binary, "write-sequence", path)
        compare(tf_parse_sequences(path), want, "tf.io.parse_single_sequence_example of d3.tfrecord")

    check("D3 derived SequenceExample; tf.io.parse_single_sequence_example returns the same values", d3)

    def d4():
        msgs, want = tf_sequences(random.Random(args.seed + 1), 100)
        path = os.path.join(tmp, "d4.tfrecord")
        write(path, msgs)
        compare(run(binary, "read-sequence", path), want, "derived decode of TF-written SequenceExamples")

    check("D4 TF-written SequenceExamples decode into the derived struct exactly", d4)

    def d5():
        rng = random.Random(args.seed + 2)
        msgs, _ = tf_examples(rng, 60)
        if drop_keys(rng, msgs, ["tags", "ids"], lambda m: m.features.feature) == 0:
            raise Fail("no record lacks a VarLen key")
        path = os.path.join(tmp, "d5.tfrecord")
        write(path, msgs)
        want = tf_parse_examples(path, "")
        if not any(w["tags"] == [] and w["ids"] == [] for w in want):
            raise Fail("tf.io.parse_example read no record with both VarLen features empty")
        compare(run(binary, "read-example", path), want, "derived decode of Examples lacking VarLen keys")

    check("D5 Examples lacking VarLenFeature keys: empty in tf.io.parse_example and in the derived Vec fields", d5)

    def d6():
        rng = random.Random(args.seed + 3)
        msgs, _ = tf_sequences(rng, 40)
        if drop_keys(rng, msgs, ["tokens"], lambda m: m.feature_lists.feature_list) == 0:
            raise Fail("no record lacks the VarLen feature list")
        path = os.path.join(tmp, "d6.tfrecord")
        write(path, msgs)
        want = tf_parse_sequences(path)
        if not any(w["tokens"] == [] and w["scores_bits"] for w in want):
            raise Fail("no record lacks `tokens` while it has steps of `scores`")
        compare(run(binary, "read-sequence", path), want, "derived decode of SequenceExamples lacking a VarLen list")

    check("D6 SequenceExamples lacking a VarLenFeature list: zero steps in TensorFlow and in the derived Vec<Vec<i64>>", d6)
    print(f"{runner.passed} passed, {runner.failed} failed")
    sys.exit(1 if runner.failed else 0)


if __name__ == "__main__":
    main()
