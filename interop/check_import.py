#!/usr/bin/env python3
"""Live interop check of the importers: TensorFlow reads what `tfrecord from-avro`,
`from-records` and `from-images` write, and `tf.io.parse_example` returns what the source data
says.

Run through `interop/run.sh`. Every check prints one line (`PASS name` or `FAIL name` followed by
what differed); the last line is `N passed, M failed` and the exit status is 1 if anything failed.

A. `from-avro` on the bundled persons.avro with the bundled key-expression spec: TensorFlow
   reads the TFRecord file (plain and gzip); `tf.io.parse_example` with the spec's features
   returns, record by record, the values the Avro records hold (taken from the same records as
   JSON, `tests/fixtures/avro/persons.records.json`, independently of the Rust code); and the
   records parse to the tensors `from-avro --tensors` prints, where the dtypes agree.
A2. `from-avro --reader-schema`: files written by fastavro, read with reader schemas that
   rename by aliases (a record in another namespace, fields), match named types by their
   unqualified name across namespaces, and promote (`int` to `long`, a `date` to `long`,
   `float` to `double`), with a new field's default: `tf.io.parse_example` on the records
   written returns what fastavro's own resolution of the same file and reader schema gives.
B. `from-records` on the bundled JSON Lines and CSV files (with and without the bundled spec):
   `tf.io.parse_example` returns what Python's json / csv modules read from the same files,
   mapped by the documented table (integers int64, floats float32, strings bytes, booleans 0/1,
   nested objects `a/b`).
C. `from-images` on the bundled flowers folder (sharded and not) and on a folder of every
   format (JPEG, PNG incl. palette and tRNS, GIF, BMP, WebP): TensorFlow reads every shard,
   `image/encoded` is the file's bytes, and `tf.io.decode_image` gives exactly the stored
   `height`, `width` and `depth`; `label` / `label/text` come from the class folder. Then a
   folder of every colour model, made here (CMYK and YCCK JPEGs, PNGs of every colour type and
   bit depth with and without tRNS, 8/24/32-bit BMPs): the stored `depth` is the channel count
   `tf.io.decode_image` gives, and headers TensorFlow refuses stop the import. Files cut short
   (JPEG, PNG, WebP, BMP), which TensorFlow refuses, stop the import with an error naming them.
"""

from __future__ import annotations

import argparse
import base64
import csv
import datetime
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np
import tensorflow as tf
from checks import Runner

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DATA = os.path.join(REPO, "examples", "data")


def run(binary, args):
    p = subprocess.run([binary, *args], capture_output=True, stdin=subprocess.DEVNULL, check=False)
    if p.returncode != 0:
        raise AssertionError(f"tfrecord {' '.join(args)} failed ({p.returncode}):\n{p.stderr.decode()}")
    return p.stdout


def tf_records(paths, compression=""):
    return [r.numpy() for r in tf.data.TFRecordDataset(paths, compression_type=compression)]


def expect_eq(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


def dense_rows(t):
    return [row.tolist() for row in t.numpy()]


def sparse_rows(t, n):
    """A 2-D SparseTensor as one list of values per record."""
    rows = [[] for _ in range(n)]
    for idx, v in zip(t.indices.numpy(), t.values.numpy()):
        rows[idx[0]].append(v.item() if hasattr(v, "item") else v)
    return rows


# ---------------------------------------------------------------- A. Avro

def avro_expected(records):
    """What each feature of examples/data/avro/persons.toml holds per record, from the JSON."""
    def b64(v):
        return base64.b64decode(v["base64"]) if isinstance(v, dict) else v.encode()

    out = {k: [] for k in (
        "first_name", "second_friend", "friends", "friend_streets", "coworkers",
        "unknown_gender_friends", "namesake_initials", "nickname_car_color", "multi_int",
        "nickname", "age", "account", "active", "height", "weight", "eye_color", "photo",
        "engines")}
    for r in records:
        fr = r["friends"]
        out["first_name"].append([r["name"]["first"].encode()])
        out["second_friend"].append([fr[1]["name"]["first"].encode() if len(fr) > 1 else b"-"])
        out["friends"].append([f["name"]["first"].encode() for f in fr])
        out["friend_streets"].append([a["street"].encode() for f in fr for a in f["address"]])
        out["coworkers"].append([c["name"]["first"].encode() for job in r["jobs"] for c in job])
        out["unknown_gender_friends"].append([f["name"]["first"].encode() for f in fr if f["gender"] == "unknown"])
        out["namesake_initials"].append([f["name"]["initial"].encode() for f in fr if f["name"]["first"] == r["name"]["first"]])
        cars = r["cars"]
        out["nickname_car_color"].append([cars["nickname"]["color"].encode() if "nickname" in cars else b"none"])
        out["multi_int"].append([r["multi"] if isinstance(r["multi"], int) else 0])
        out["nickname"].append([(r["nickname"] or "").encode()])
        out["age"].append([r["age"]])
        out["account"].append([r["account"]])
        out["active"].append([int(r["active"])])
        out["height"].append([r["height"]])
        out["weight"].append([float(np.float32(r["weight"]))])
        out["eye_color"].append([r["eye_color"].encode()])
        out["photo"].append([b64(r["photo"])])
        out["engines"].append(sorted(((e["cylinders"], e["id"]), e["power"]) for e in r["engines"]))
    return out


AVRO_FEATURES = {
    "first_name": tf.io.FixedLenFeature([], tf.string),
    "second_friend": tf.io.FixedLenFeature([], tf.string),
    "friends": tf.io.VarLenFeature(tf.string),
    "friend_streets": tf.io.VarLenFeature(tf.string),
    "coworkers": tf.io.VarLenFeature(tf.string),
    "unknown_gender_friends": tf.io.VarLenFeature(tf.string),
    "namesake_initials": tf.io.VarLenFeature(tf.string),
    "nickname_car_color": tf.io.FixedLenFeature([], tf.string),
    "multi_int": tf.io.FixedLenFeature([], tf.int64),
    "nickname": tf.io.FixedLenFeature([], tf.string),
    "age": tf.io.FixedLenFeature([], tf.int64),
    "account": tf.io.FixedLenFeature([], tf.int64),
    "active": tf.io.FixedLenFeature([], tf.int64),
    "height": tf.io.FixedLenFeature([], tf.float32),
    "weight": tf.io.FixedLenFeature([], tf.float32),
    "eye_color": tf.io.FixedLenFeature([], tf.string),
    "photo": tf.io.FixedLenFeature([], tf.string),
    "engines": tf.io.SparseFeature(["cylinders", "id"], "power", tf.float32, [12, 100]),
}


def check_avro(R, binary, tmp):
    spec = os.path.join(DATA, "avro", "persons.toml")
    avro = os.path.join(DATA, "avro", "persons.avro")
    with open(os.path.join(REPO, "tests", "fixtures", "avro", "persons.records.json")) as f:
        records = json.load(f)["records"]
    want = avro_expected(records)

    for name, comp in (("persons.tfrecord", ""), ("persons.tfrecord.gz", "GZIP")):
        def one(name=name, comp=comp):
            out = os.path.join(tmp, name)
            run(binary, ["from-avro", "--spec", spec, avro, "-o", out])
            raw = tf_records([out], comp)
            expect_eq(len(raw), len(records), "record count")
            parsed = tf.io.parse_example(tf.constant(raw), AVRO_FEATURES)
            n = len(raw)
            for key, feature in AVRO_FEATURES.items():
                t = parsed[key]
                if isinstance(feature, tf.io.FixedLenFeature):
                    got = [[x] for x in t.numpy().tolist()]
                elif isinstance(feature, tf.io.VarLenFeature):
                    got = sparse_rows(t, n)
                else:
                    got = [[] for _ in range(n)]
                    for idx, v in zip(t.indices.numpy(), t.values.numpy()):
                        got[idx[0]].append(((int(idx[1]), int(idx[2])), float(v)))
                expect_eq(got, want[key], key)
        R.check(f"A from-avro -> {name}: tf.io.parse_example gives the Avro records' values", one)

    def tensors():
        out = os.path.join(tmp, "persons.tfrecord")
        raw = tf_records([out])
        lines = run(binary, ["from-avro", "--spec", spec, "--tensors", "--batch-size", "5", avro])
        ours = json.loads(lines.decode().strip().splitlines()[0])
        parsed = tf.io.parse_example(tf.constant(raw), AVRO_FEATURES)
        for key in ("first_name", "friends", "namesake_initials", "account", "engines", "eye_color"):
            t = parsed[key]
            mine = ours[key]
            if "dense" in mine:
                vals = t.numpy().tolist()
                mv = mine["dense"]["values"]
                if t.dtype == tf.string:
                    mv = [base64.b64decode(v) for v in mv]
                expect_eq(mine["dense"]["shape"], list(t.shape), key + " shape")
                expect_eq(mv, vals, key)
            else:
                mv = mine["sparse"]["values"]
                if t.dtype == tf.string:
                    mv = [base64.b64decode(v) for v in mv]
                expect_eq(mine["sparse"]["indices"], t.indices.numpy().tolist(), key + " indices")
                expect_eq(mv, t.values.numpy().tolist(), key + " values")
                expect_eq(mine["sparse"]["dense_shape"], t.dense_shape.numpy().tolist(), key + " dense_shape")
        # Dtypes a tf.train.Example cannot hold come out as Avro has them.
        expect_eq(ours["active"]["dense"]["values"], [r["active"] for r in records], "active (bool)")
        expect_eq(ours["weight"]["dense"]["values"], [r["weight"] for r in records], "weight (float64)")

    R.check("A from-avro --tensors: the same tensors as tf.io.parse_example on the written records", tensors)


# ---------------------------------------------------------------- A2. Avro schema resolution
# (writer schema, records, reader schema, the spec's features: key -> (dtype, TF feature dtype))
RESOLUTION_CASES = {
    "aliases": (
        {"type": "record", "name": "P", "namespace": "a", "fields": [
            {"name": "s", "type": "string"},
            {"name": "n", "type": "int"},
            {"name": "d", "type": {"type": "int", "logicalType": "date"}}]},
        [{"s": "x", "n": 1, "d": 18262}, {"s": "yz", "n": -7, "d": 0}],
        {"type": "record", "name": "Q", "namespace": "b", "aliases": ["a.P"], "fields": [
            {"name": "t", "aliases": ["s"], "type": "string"},
            {"name": "n", "type": "long"},
            {"name": "d", "type": "long"},
            {"name": "new", "type": "long", "default": 42}]},
        {"t": "string", "n": "int64", "d": "int64", "new": "int64"},
    ),
    "unqualified names": (
        {"type": "record", "name": "R", "namespace": "a", "fields": [
            {"name": "x", "type": "long"},
            {"name": "inner", "type": {"type": "record", "name": "In", "fields": [
                {"name": "q", "type": "int"}, {"name": "f", "type": "float"}]}},
            {"name": "again", "type": "In"}]},
        [{"x": 3, "inner": {"q": 1, "f": 0.5}, "again": {"q": 2, "f": -1.25}}],
        {"type": "record", "name": "R", "namespace": "b", "fields": [
            {"name": "y", "aliases": ["x"], "type": "long"},
            {"name": "inner", "type": {"type": "record", "name": "In", "fields": [
                {"name": "q", "type": "long"}, {"name": "f", "type": "double"}]}},
            {"name": "again", "type": "b.In"}]},
        {"y": "int64", "inner.q": "int64", "inner.f": "double", "again.q": "int64"},
    ),
}


def check_avro_resolution(R, binary, tmp):
    import fastavro

    tf_dtype = {"int64": tf.int64, "string": tf.string, "double": tf.float32}
    for name, (writer, rows, reader, features) in RESOLUTION_CASES.items():
        def one(name=name, writer=writer, rows=rows, reader=reader, features=features):
            stem = os.path.join(tmp, "resolution_" + name.replace(" ", "_"))
            with open(stem + ".avro", "wb") as f:
                fastavro.writer(f, fastavro.parse_schema(writer), rows)
            with open(stem + ".avsc", "w") as f:
                json.dump(reader, f)
            with open(stem + ".avro", "rb") as f:
                want = list(fastavro.reader(f, reader_schema=fastavro.parse_schema(reader)))
            with open(stem + ".toml", "w") as f:
                for key, dtype in features.items():
                    f.write(f'[records.R.features."{key}"]\nsource = "{key}"\ndtype = "{dtype}"\n')
                    if dtype == "double":
                        f.write("lossy = true\n")
            out = stem + ".tfrecord"
            run(binary, ["from-avro", "--spec", stem + ".toml", "--reader-schema", stem + ".avsc",
                         stem + ".avro", "-o", out])
            spec = {k: tf.io.FixedLenFeature([], tf_dtype[d]) for k, d in features.items()}
            parsed = tf.io.parse_example(tf.constant(tf_records([out])), spec)
            for key, dtype in features.items():
                got = parsed[key].numpy().tolist()
                expected = []
                for record in want:
                    v = record
                    for part in key.split("."):
                        v = v[part]
                    if isinstance(v, datetime.date):
                        # fastavro hands the writer's `date` over as a date: its days.
                        v = (v - datetime.date(1970, 1, 1)).days
                    if dtype == "string":
                        v = v.encode()
                    elif dtype == "double":
                        v = float(np.float32(v))
                    expected.append(v)
                expect_eq(got, expected, f"{name}: {key}")

        R.check(f"A2 from-avro --reader-schema ({name}): the values of fastavro's resolution", one)


# ---------------------------------------------------------------- B. JSON Lines and CSV

def flatten(obj, prefix=""):
    out = {}
    for k, v in obj.items():
        key = f"{prefix}/{k}" if prefix else k
        if isinstance(v, dict):
            out.update(flatten(v, key))
        elif v is not None:
            out[key] = v
    return out


def leaves(v):
    if isinstance(v, list):
        return [x for item in v for x in leaves(item)]
    return [v]


def check_records(R, binary, tmp):
    def jsonl():
        src = os.path.join(DATA, "records.jsonl")
        out = os.path.join(tmp, "records_json.tfrecord")
        run(binary, ["from-records", src, "-o", out])
        with open(src) as f:
            rows = [flatten(json.loads(line)) for line in f if line.strip()]
        keys = sorted({k for r in rows for k in r})
        kinds = {}
        for k in keys:
            vals = [x for r in rows if k in r for x in leaves(r[k])]
            if all(isinstance(x, bool) for x in vals) or all(isinstance(x, int) and not isinstance(x, bool) for x in vals):
                kinds[k] = tf.int64
            elif all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vals):
                kinds[k] = tf.float32
            else:
                kinds[k] = tf.string
        raw = tf_records([out])
        parsed = tf.io.parse_example(tf.constant(raw), {k: tf.io.VarLenFeature(d) for k, d in kinds.items()})
        for k, d in kinds.items():
            got = sparse_rows(parsed[k], len(rows))
            want = []
            for r in rows:
                vals = leaves(r[k]) if k in r else []
                if d == tf.string:
                    vals = [v.encode() for v in vals]
                elif d == tf.int64:
                    vals = [int(v) for v in vals]
                else:
                    vals = [float(np.float32(v)) for v in vals]
                want.append(vals)
            expect_eq(got, want, k)
        # The whole file parses with one FixedLen spec where every record has the field.
        fixed = tf.io.parse_example(tf.constant(raw), {
            "score": tf.io.FixedLenFeature([], tf.float32, default_value=-1.0),
            "matrix": tf.io.FixedLenFeature([2, 2], tf.int64),
            "pos/x": tf.io.FixedLenFeature([], tf.float32),
        })
        expect_eq(fixed["score"].numpy().tolist(), [0.5, 1.0, -1.0], "score")
        expect_eq(fixed["matrix"].numpy().tolist()[2], [[9, 10], [11, 12]], "matrix")

    R.check("B from-records JSON Lines: tf.io.parse_example gives the JSON values by the type table", jsonl)

    def csv_check(spec):
        src = os.path.join(DATA, "records.csv")
        out = os.path.join(tmp, "records_csv_spec.tfrecord" if spec else "records_csv.tfrecord")
        args = ["from-records", src, "-o", out]
        if spec:
            args += ["--spec", os.path.join(DATA, "records.toml")]
        run(binary, args)
        with open(src, newline="") as f:
            rows = list(csv.DictReader(f))
        raw = tf_records([out])
        id_key = "label" if spec else "id"
        features = {
            id_key: tf.io.FixedLenFeature([], tf.int64),
            "name": tf.io.FixedLenFeature([], tf.string),
            "city": tf.io.FixedLenFeature([], tf.string),
            "active": tf.io.FixedLenFeature([], tf.int64),
            "score": tf.io.VarLenFeature(tf.float32),
        }
        parsed = tf.io.parse_example(tf.constant(raw), features)
        expect_eq(parsed[id_key].numpy().tolist(), [int(r["id"]) for r in rows], id_key)
        expect_eq(parsed["name"].numpy().tolist(), [r["name"].encode() for r in rows], "name")
        expect_eq(parsed["city"].numpy().tolist(), [r["city"].encode() for r in rows], "city")
        expect_eq(parsed["active"].numpy().tolist(), [int(r["active"] == "true") for r in rows], "active")
        want_score = [[float(np.float32(r["score"]))] if r["score"] else ([0.0] if spec else []) for r in rows]
        expect_eq(sparse_rows(parsed["score"], len(rows)), want_score, "score")

    R.check("B from-records CSV: tf.io.parse_example gives the CSV cells by column kind", lambda: csv_check(False))
    R.check("B from-records CSV --spec: forced dtypes, renamed key and defaults", lambda: csv_check(True))


# ---------------------------------------------------------------- C. Images

IMAGE_FEATURES = {
    "image/encoded": tf.io.FixedLenFeature([], tf.string),
    "image/format": tf.io.FixedLenFeature([], tf.string),
    "image/filename": tf.io.FixedLenFeature([], tf.string),
    "height": tf.io.FixedLenFeature([], tf.int64),
    "width": tf.io.FixedLenFeature([], tf.int64),
    "depth": tf.io.FixedLenFeature([], tf.int64),
}


def check_image_records(raw, folder, labelled):
    features = dict(IMAGE_FEATURES)
    if labelled:
        features["label"] = tf.io.FixedLenFeature([], tf.int64)
        features["label/text"] = tf.io.FixedLenFeature([], tf.string)
    classes = sorted(d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d)))
    names = []
    for r in raw:
        ex = tf.io.parse_single_example(r, features)
        name = ex["image/filename"].numpy().decode()
        names.append(name)
        with open(os.path.join(folder, name), "rb") as f:
            data = f.read()
        expect_eq(ex["image/encoded"].numpy(), data, f"{name} bytes")
        img = tf.io.decode_image(data, expand_animations=False)
        shape = [int(ex["height"]), int(ex["width"]), int(ex["depth"])]
        expect_eq(shape, list(img.shape), f"{name} height/width/depth vs decode_image")
        fmt = ex["image/format"].numpy().decode()
        ext = os.path.splitext(name)[1].lower().lstrip(".")
        expect_eq(fmt, {"jpg": "jpeg"}.get(ext, ext), f"{name} format")
        if labelled:
            cls = name.split("/")[0]
            expect_eq(ex["label/text"].numpy().decode(), cls, f"{name} label/text")
            expect_eq(int(ex["label"]), classes.index(cls), f"{name} label")
    return names


def check_images(R, binary, tmp):
    flowers = os.path.join(DATA, "flowers")
    all_images = sorted(
        os.path.relpath(p, flowers) for p in glob.glob(os.path.join(flowers, "*", "*")))

    def single():
        out = os.path.join(tmp, "flowers.tfrecord")
        run(binary, ["from-images", flowers, "-o", out, "--seed", "5"])
        names = check_image_records(tf_records([out]), flowers, True)
        expect_eq(sorted(names), all_images, "every image once")
        if names == sorted(names):
            raise AssertionError("the records are not shuffled")

    R.check("C from-images flowers: TF reads the bytes, decode_image agrees with height/width/depth, labels from folders", single)

    def sharded():
        out = os.path.join(tmp, "shards", "flowers.tfrecord.gz")
        os.makedirs(os.path.dirname(out))
        run(binary, ["from-images", flowers, "-o", out, "--shards", "3", "--seed", "5"])
        shards = sorted(glob.glob(os.path.join(tmp, "shards", "*")))
        expect_eq([os.path.basename(s) for s in shards],
                  [f"flowers-{i:05d}-of-00003.tfrecord.gz" for i in range(3)], "shard names")
        names = check_image_records(tf_records(shards, "GZIP"), flowers, True)
        single_order = [tf.io.parse_single_example(r, IMAGE_FEATURES)["image/filename"].numpy().decode()
                        for r in tf_records([os.path.join(tmp, "flowers.tfrecord")])]
        expect_eq(names, single_order, "shards in sequence hold the same shuffled order")

    R.check("C from-images --shards 3 (gzip): TF reads every shard, same order as one file", sharded)

    def formats():
        folder = os.path.join(REPO, "tests", "fixtures", "images")
        out = os.path.join(tmp, "formats.tfrecord")
        run(binary, ["from-images", folder, "-o", out, "--no-shuffle"])
        names = check_image_records(tf_records([out]), folder, False)
        images = sorted(n for n in os.listdir(folder) if not n.endswith(".md"))
        expect_eq(names, images, "name order")

    R.check("C from-images on JPEG/PNG/GIF/BMP/WebP: decode_image gives the stored height/width/depth", formats)


# Files of every colour model, made here: JPEGs written byte by byte (a baseline JPEG whose
# blocks are all zero needs no encoder), PNGs from zlib, BMPs from struct, and TensorFlow's own
# encoders.

def jpeg_bytes(ncomp, width=19, height=11, adobe=None, jfif=False):
    """A whole baseline JPEG of `ncomp` components, every block zero; `adobe` is the APP14
    transform (0: RGB / CMYK, 2: YCCK)."""
    def seg(code, body):
        return bytes([0xFF, code]) + struct.pack(">H", len(body) + 2) + body

    out = b"\xff\xd8"
    if jfif:
        out += seg(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    if adobe is not None:
        out += seg(0xEE, b"Adobe" + struct.pack(">HHHB", 100, 0, 0, adobe))
    out += seg(0xDB, b"\x00" + b"\x01" * 64)
    ids = range(1, ncomp + 1)
    out += seg(0xC0, struct.pack(">BHHB", 8, height, width, ncomp)
               + b"".join(bytes([i, 0x11, 0]) for i in ids))
    # One Huffman code per class: DC difference category 0, AC end-of-block.
    out += seg(0xC4, b"\x00" + bytes([1] + [0] * 15) + b"\x00")
    out += seg(0xC4, b"\x10" + bytes([1] + [0] * 15) + b"\x00")
    out += seg(0xDA, bytes([ncomp]) + b"".join(bytes([i, 0]) for i in ids) + b"\x00\x3f\x00")
    bits = ((width + 7) // 8) * ((height + 7) // 8) * ncomp * 2
    data = bytearray((bits + 7) // 8)
    pad = len(data) * 8 - bits
    if pad:
        data[-1] = (1 << pad) - 1
    return out + bytes(data) + b"\xff\xd9"


def png_bytes(color, bit_depth=8, width=5, height=3, trns=None):
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color]
    row = (width * channels * bit_depth + 7) // 8
    raw = b"".join(b"\x00" + bytes((x * 37 + y) % 256 for x in range(row)) for y in range(height))
    if color == 3:
        # Every index the bit depth can hold has a palette entry.
        raw = b"".join(b"\x00" + bytes(row) for _ in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, color, 0, 0, 0))
    if color == 3:
        out += chunk(b"PLTE", bytes(range(6)))
    if trns is not None:
        out += chunk(b"tRNS", trns)
    return out + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def bmp_bytes(bpp, width=5, height=3):
    row = (width * bpp // 8 + 3) // 4 * 4
    palette = 1024 if bpp == 8 else 0
    offset = 54 + palette
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, bpp, 0, row * height, 2835, 2835, 0, 0)
    return (b"BM" + struct.pack("<IHHI", offset + row * height, 0, 0, offset) + info
            + bytes(palette) + bytes((i * 7) % 256 for i in range(row * height)))


def colour_models():
    """{file name: bytes} of every colour model the importer's depth table lists."""
    pixels = (np.arange(7 * 6 * 4) % 251).astype(np.uint8).reshape(7, 6, 4)
    files = {
        "jpeg_gray.jpg": jpeg_bytes(1),
        "jpeg_ycbcr.jpg": jpeg_bytes(3, jfif=True),
        "jpeg_rgb_adobe.jpg": jpeg_bytes(3, adobe=0),
        "jpeg_cmyk.jpg": jpeg_bytes(4),
        "jpeg_cmyk_adobe.jpg": jpeg_bytes(4, adobe=0),
        "jpeg_ycck_adobe.jpg": jpeg_bytes(4, adobe=2),
        "tf_jpeg_gray.jpg": tf.io.encode_jpeg(pixels[..., :1]).numpy(),
        "tf_jpeg_rgb.jpg": tf.io.encode_jpeg(pixels[..., :3], progressive=True).numpy(),
        "tf_png_gray.png": tf.io.encode_png(pixels[..., :1]).numpy(),
        "tf_png_gray_alpha.png": tf.io.encode_png(pixels[..., :2]).numpy(),
        "tf_png_rgb.png": tf.io.encode_png(pixels[..., :3]).numpy(),
        "tf_png_rgba16.png": tf.io.encode_png(pixels.astype(np.uint16) * 257).numpy(),
        "png_gray_trns.png": png_bytes(0, trns=b"\x00\x05"),
        "png_rgb_trns.png": png_bytes(2, trns=b"\x00\x01\x00\x02\x00\x03"),
        "png_gray_alpha16.png": png_bytes(4, 16),
        "png_rgb16.png": png_bytes(2, 16),
        "png_palette.png": png_bytes(3),
        "png_palette_trns.png": png_bytes(3, trns=b"\x00\x80"),
        "bmp_8.bmp": bmp_bytes(8),
        "bmp_24.bmp": bmp_bytes(24),
        "bmp_32.bmp": bmp_bytes(32),
    }
    for bits in (1, 2, 4, 16):
        files[f"png_gray{bits}.png"] = png_bytes(0, bits)
    for bits in (1, 2, 4):
        files[f"png_palette{bits}.png"] = png_bytes(3, bits)
        files[f"png_palette{bits}_trns.png"] = png_bytes(3, bits, trns=b"\x00")
    return files


# Headers TensorFlow's decoders refuse: the importer must refuse them too (no depth to give).
REFUSED = {
    "jpeg_2_components.jpg": lambda: jpeg_bytes(2),
    "bmp_16.bmp": lambda: bmp_bytes(16),
    "png_rgb4.png": lambda: png_bytes(2, 4),
}


def run_fails(binary, args):
    p = subprocess.run([binary, *args], capture_output=True, stdin=subprocess.DEVNULL, check=False)
    if p.returncode == 0:
        raise AssertionError(f"tfrecord {' '.join(args)} succeeded; it should have failed")
    return p.stderr.decode()


def tf_refuses(data):
    try:
        tf.io.decode_image(data, expand_animations=False)
    except tf.errors.InvalidArgumentError:
        return True
    return False


def write_folder(folder, files):
    os.makedirs(folder)
    for name, data in files.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)


def check_colour_models(R, binary, tmp):
    def depths():
        folder = os.path.join(tmp, "colours")
        files = colour_models()
        write_folder(folder, files)
        out = os.path.join(tmp, "colours.tfrecord")
        run(binary, ["from-images", folder, "-o", out, "--no-shuffle"])
        names = check_image_records(tf_records([out]), folder, False)
        expect_eq(names, sorted(files), "every image once, in name order")
        # The cases the depth table turns on, as TensorFlow decoded them.
        channels = {n: tf.io.decode_image(files[n], expand_animations=False).shape[-1]
                    for n in ("jpeg_cmyk.jpg", "jpeg_ycck_adobe.jpg", "png_palette_trns.png",
                              "png_gray_trns.png", "bmp_8.bmp")}
        expect_eq(channels, {"jpeg_cmyk.jpg": 3, "jpeg_ycck_adobe.jpg": 3,
                             "png_palette_trns.png": 4, "png_gray_trns.png": 1, "bmp_8.bmp": 1},
                  "decode_image channels")

    R.check("C from-images on every colour model (CMYK/YCCK JPEG, palette/tRNS/1-16-bit PNG, "
            "8/24/32-bit BMP): depth is decode_image's channel count", depths)

    def refused():
        for name, make in REFUSED.items():
            data = make()
            if not tf_refuses(data):
                raise AssertionError(f"{name}: TensorFlow decodes it")
            folder = os.path.join(tmp, "refused-" + os.path.splitext(name)[0])
            write_folder(folder, {name: data})
            err = run_fails(binary, ["from-images", folder, "-o", os.path.join(folder, "out.tfrecord")])
            if name not in err or ("tf.io.decode_image does not decode" not in err and "bit depth" not in err):
                raise AssertionError(f"{name}: the error does not name the file and the reason:\n{err}")
            if os.path.exists(os.path.join(folder, "out.tfrecord")):
                raise AssertionError(f"{name}: an output file was left")

    R.check("C from-images refuses headers TensorFlow refuses (2-component JPEG, 16-bit BMP, 4-bit RGB PNG)",
            refused)

    def truncated():
        pixels = (np.arange(48 * 40 * 3) % 253).astype(np.uint8).reshape(48, 40, 3)
        with open(os.path.join(REPO, "tests", "fixtures", "images", "lossy.webp"), "rb") as f:
            webp = f.read()
        whole = {
            "photo.jpg": tf.io.encode_jpeg(pixels).numpy(),
            "scan.jpg": tf.io.encode_jpeg(pixels, progressive=True).numpy(),
            "photo.png": tf.io.encode_png(pixels).numpy(),
            "colours.webp": webp,
            "colours.bmp": bmp_bytes(24),
        }
        for name, data in whole.items():
            # Cut in the middle of the body, and just before the end marker (JPEG's FF D9,
            # PNG's IEND chunk).
            cuts = [len(data) // 2, len(data) - 1]
            if name.endswith(".png"):
                cuts.append(len(data) - 12)
            for keep in cuts:
                cut = data[:keep]
                if not tf_refuses(cut):
                    raise AssertionError(f"{name} cut to {keep} bytes: TensorFlow decodes it")
                folder = os.path.join(tmp, f"cut-{os.path.splitext(name)[0]}-{keep}")
                write_folder(folder, {**whole, name: cut})
                out = os.path.join(folder, "out.tfrecord")
                err = run_fails(binary, ["from-images", folder, "-o", out, "--no-shuffle"])
                if os.path.join(folder, name) not in err or "truncated" not in err:
                    raise AssertionError(f"{name} cut to {keep} bytes: the error does not name the "
                                         f"file and say it is truncated:\n{err}")
                if os.path.exists(out):
                    raise AssertionError(f"{name} cut to {keep} bytes: an output file was left")
        # The whole files, with bytes after the JPEG's and the PNG's end (TensorFlow decodes
        # those), import and decode.
        folder = os.path.join(tmp, "whole")
        files = dict(whole)
        files["trailing.jpg"] = whole["photo.jpg"] + b"trailing bytes"
        files["trailing.png"] = whole["photo.png"] + b"trailing bytes"
        write_folder(folder, files)
        out = os.path.join(tmp, "whole.tfrecord")
        run(binary, ["from-images", folder, "-o", out, "--no-shuffle"])
        expect_eq(check_image_records(tf_records([out]), folder, False), sorted(files), "whole files")

    R.check("C from-images refuses a JPEG, PNG, WebP or BMP cut short, as TensorFlow does, naming the "
            "file; whole files (and bytes after a JPEG's or PNG's end) import", truncated)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="path to the tfrecord binary")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    if not os.access(binary, os.X_OK):
        sys.exit(f"check_import.py: {binary} is not an executable")
    tmp = tempfile.mkdtemp(prefix="tfrecord-import-interop-")
    R = Runner()
    print(f"TensorFlow {tf.__version__}: importers", flush=True)
    try:
        check_avro(R, binary, tmp)
        check_avro_resolution(R, binary, tmp)
        check_records(R, binary, tmp)
        check_images(R, binary, tmp)
        check_colour_models(R, binary, tmp)
    finally:
        if args.keep:
            print(f"(kept {tmp})")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"{R.passed} passed, {R.failed} failed")
    sys.exit(1 if R.failed else 0)


if __name__ == "__main__":
    main()
