#!/usr/bin/env python3
"""Live interop check: the `tfrecord` CLI against TensorFlow and protobuf's own Python code.

Run through `interop/run.sh`, which creates the virtualenv with the pinned TensorFlow and builds
the CLI. Every check prints one line (`PASS name` or `FAIL name` followed by what differed); the
last line is `N passed, M failed` and the exit status is 1 if anything failed.

A. TensorFlow writes Examples and SequenceExamples (no compression, GZIP, ZLIB, and a gzip file
   without an extension); `tfrecord cat --json` must print what `json_format.MessageToJson`
   prints for the records TensorFlow reads back, `count` must count them, `verify` must pass
   (and must fail on damaged copies). Examples with feature keys that are not UTF-8 (which
   TensorFlow writes and reads) print as protobuf's text format prints them.
B. `tfrecord from-json` and `tfrecord convert` write; TensorFlow reads back the same messages,
   both through protobuf and through its own C++ Example parsers (tf.io.parse_single_example,
   tf.io.parse_single_sequence_example), which are stricter about the encoding.
C. OFRecord: `convert --output-format ofrecord` and `from-json --output-format ofrecord` write
   files that OneFlow's documented reader (`struct.unpack("q", ...)` then
   `OFRecord.FromString`) reads back; `convert --input-format ofrecord` goes back to Examples
   that TensorFlow reads.

All data is generated from a fixed seed in a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import types
from decimal import Decimal

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # silences a start-up notice; no math here

import numpy as np  # installed with TensorFlow
import tensorflow as tf
from checks import Fail, Runner
from google.protobuf import __version__ as PB_VERSION
from google.protobuf import (
    descriptor_pb2,
    descriptor_pool,
    json_format,
    message_factory,
    text_encoding,
    text_format,
)
from tensorflow.core.example import example_pb2, feature_pb2

Example = example_pb2.Example
SequenceExample = example_pb2.SequenceExample
Feature = feature_pb2.Feature

KINDS = ("bytes_list", "float_list", "int64_list")
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def short(v, limit=160) -> str:
    s = repr(v)
    return s if len(s) <= limit else s[: limit - 20] + f"... ({len(s)} chars)"


def f32(x: float) -> float:
    """x rounded to the nearest float32 (IEEE: overflow gives +-inf), as a Python float."""
    with np.errstate(over="ignore"):
        return float(np.float32(x))


def json_format_digits(v: float) -> int:
    """Significant digits json_format.MessageToJson prints for the float32 v (at least 6)."""
    p = 6
    while f32(float(f"{v:.{p}g}")) != v:
        p += 1
    return p


def is_decimal_tie(v: float) -> bool:
    """Whether the float32 v lies exactly halfway between two decimals of the length
    MessageToJson prints (it then rounds half to even, as printf does)."""
    if not math.isfinite(v) or v == 0:
        return False
    p = json_format_digits(v)
    d = abs(Decimal(v))
    scaled = d.scaleb(p - 1 - d.adjusted())
    return scaled - int(scaled) == Decimal("0.5")


def f32_from_bits(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def reject_constant(name):
    raise ValueError(f"bare {name} is not JSON (proto3 JSON spells it as a string)")


def loads_strict(line: str):
    """json.loads, but refusing the non-JSON tokens NaN / Infinity that Python would accept."""
    return json.loads(line, parse_constant=reject_constant)


SPELLING = " (the same float32, spelled differently)"


def json_diffs(a, b, path="$"):
    """Every difference between two parsed JSON values (a = tfrecord, b = protobuf).

    Numbers compare as Python floats (an integer and a float compare by value, as JSON does not
    distinguish them) and the sign of zero must match. Strings, including "NaN", "Infinity",
    int64 decimal strings and base64, compare exactly.
    """
    if isinstance(a, dict) and isinstance(b, dict):
        extra = sorted(set(a) - set(b))
        missing = sorted(set(b) - set(a))
        if extra or missing:
            yield f"{path}: keys differ: tfrecord has extra {short(extra)}, lacks {short(missing)}"
        for k in sorted(set(a) & set(b)):
            yield from json_diffs(a[k], b[k], f"{path}[{k!r}]")
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{path}: {len(a)} items from tfrecord, {len(b)} from protobuf"
            return
        for i, (x, y) in enumerate(zip(a, b)):
            yield from json_diffs(x, y, f"{path}[{i}]")
        return
    num = (int, float)
    if (
        isinstance(a, num)
        and isinstance(b, num)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        if isinstance(a, float) or isinstance(b, float):
            fa, fb = float(a), float(b)
            same_sign = math.copysign(1.0, fa) == math.copysign(1.0, fb)
            if fa == fb and same_sign:
                return
            hint = SPELLING if f32(fa) == f32(fb) and same_sign else ""
            yield f"{path}: tfrecord {a!r}, protobuf {b!r}{hint}"
        elif a != b:
            yield f"{path}: tfrecord {a!r}, protobuf {b!r}"
        return
    if type(a) is not type(b) or a != b:
        yield f"{path}: tfrecord {short(a)}, protobuf {short(b)}"


def msg_diff(got, want, what="record") -> str:
    """A readable description of how two protobuf messages differ."""
    g = text_format.MessageToString(got, as_utf8=True)
    w = text_format.MessageToString(want, as_utf8=True)
    gl, wl = g.splitlines(), w.splitlines()
    for i, (x, y) in enumerate(zip(gl, wl)):
        if x != y:
            return f"{what}: text form line {i + 1}: got {short(x)}, want {short(y)}"
    if len(gl) != len(wl):
        return f"{what}: text form has {len(gl)} lines, want {len(wl)}"
    return f"{what}: messages differ but text forms are equal (float bits, e.g. NaN sign?)"


# --------------------------------------------------------------------------------------------
# The OFRecord classes, built at run time (there is no protoc): oneflow/core/record/record.proto
# --------------------------------------------------------------------------------------------


def make_record_pb2() -> types.ModuleType:
    fd = descriptor_pb2.FileDescriptorProto(
        name="oneflow/core/record/record.proto", package="oneflow", syntax="proto2"
    )
    F = descriptor_pb2.FieldDescriptorProto
    lists = [
        ("BytesList", F.TYPE_BYTES, False),
        ("FloatList", F.TYPE_FLOAT, True),
        ("DoubleList", F.TYPE_DOUBLE, True),
        ("Int32List", F.TYPE_INT32, True),
        ("Int64List", F.TYPE_INT64, True),
    ]
    for name, ftype, packed in lists:
        m = fd.message_type.add(name=name)
        fld = m.field.add(name="value", number=1, label=F.LABEL_REPEATED, type=ftype)
        if packed:
            fld.options.packed = True
    feat = fd.message_type.add(name="Feature")
    feat.oneof_decl.add(name="kind")
    for number, (name, _, _) in enumerate(lists, start=1):
        snake = {
            "BytesList": "bytes_list",
            "FloatList": "float_list",
            "DoubleList": "double_list",
            "Int32List": "int32_list",
            "Int64List": "int64_list",
        }[name]
        feat.field.add(
            name=snake,
            number=number,
            label=F.LABEL_OPTIONAL,
            type=F.TYPE_MESSAGE,
            type_name=f".oneflow.{name}",
            oneof_index=0,
        )
    rec = fd.message_type.add(name="OFRecord")
    entry = rec.nested_type.add(name="FeatureEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, label=F.LABEL_OPTIONAL, type=F.TYPE_STRING)
    entry.field.add(
        name="value",
        number=2,
        label=F.LABEL_OPTIONAL,
        type=F.TYPE_MESSAGE,
        type_name=".oneflow.Feature",
    )
    rec.field.add(
        name="feature",
        number=1,
        label=F.LABEL_REPEATED,
        type=F.TYPE_MESSAGE,
        type_name=".oneflow.OFRecord.FeatureEntry",
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    fdesc = pool.FindFileByName(fd.name)
    mod = types.ModuleType("record_pb2")
    for name in ["BytesList", "FloatList", "DoubleList", "Int32List", "Int64List", "Feature", "OFRecord"]:
        setattr(mod, name, message_factory.GetMessageClass(fdesc.message_types_by_name[name]))
    mod.DESCRIPTOR = fdesc
    return mod


ofrecord = make_record_pb2()


def read_ofrecord_file(path):
    """OneFlow's documented reader (ofrecord_from_string.py), looping until end of file."""
    out = []
    with open(path, "rb") as f:
        while True:
            head = f.read(8)
            if not head:
                break
            if len(head) != 8:
                raise Fail(f"{path}: {len(head)} stray bytes after record {len(out)}")
            length = struct.unpack("q", head)
            serilizedBytes = f.read(length[0])
            if len(serilizedBytes) != length[0]:
                raise Fail(f"{path}: record {len(out)} truncated")
            ofrecord_features = ofrecord.OFRecord.FromString(serilizedBytes)
            out.append(ofrecord_features)
    return out


# --------------------------------------------------------------------------------------------
# Deterministic data
# --------------------------------------------------------------------------------------------

KEY_POOL = [
    "a",
    "label",
    "image/encoded",
    "image/object/bbox/xmin",
    "/leading",
    "trailing/",
    "a//b",
    "ключ",
    "日本語のキー",
    "emoji \U0001f600 key",
    "caf\u00e9",  # NFC
    "cafe\u0301",  # NFD: a different key
    "tab\tand\nnewline",
    'quote"back\\slash',
    "",
    "\x01control",
    "space key",
]


def rand_key(rng):
    return rng.choice(KEY_POOL) if rng.random() < 0.5 else f"k{rng.randrange(1000)}"


def rand_int64(rng):
    r = rng.random()
    if r < 0.4:
        return rng.randint(-100, 100)
    if r < 0.6:
        return rng.randint(INT32_MIN, INT32_MAX)
    if r < 0.7:
        return rng.choice([INT64_MIN, INT64_MAX, 0, -1])
    return rng.randint(INT64_MIN, INT64_MAX)


def rand_float32(rng):
    r = rng.random()
    if r < 0.3:
        return f32(rng.uniform(-1, 1))
    if r < 0.45:
        return float(rng.randint(-1000, 1000))
    while True:  # any finite normal float32 (or zero), most need 9 significant digits
        v = f32_from_bits(rng.getrandbits(32))
        if math.isfinite(v) and (v == 0 or abs(v) >= FLT_MIN) and not is_decimal_tie(v):
            return v  # subnormals and decimal ties have checks of their own


def rand_bytes(rng):
    r = rng.random()
    n = rng.choice([0, 1, 3, rng.randrange(64)])
    if r < 0.4:
        return rng.randbytes(n)
    return "".join(rng.choice("abcé日😀 \n\"\\/") for _ in range(n)).encode("utf-8")


def fill_list(lst, values):
    lst.SetInParent()  # an empty list is still "set"
    lst.value.extend(values)


def rand_feature(rng, feature, kind=None):
    if kind is None:
        kind = rng.choice(KINDS) if rng.random() < 0.9 else None
    if kind is None:
        return  # a feature with no kind set
    n = rng.choice([0, 1, 2, 5, rng.randrange(40)])
    gen = {"bytes_list": rand_bytes, "float_list": rand_float32, "int64_list": rand_int64}[kind]
    fill_list(getattr(feature, kind), [gen(rng) for _ in range(n)])


NINE_DIGIT_BITS = [0x3F800001, 0x3DCCCCCD, 0x4B800001, 0x3EAAAAAB, 0x40490FDB, 0x7F7FFFFE]
FLT_MAX = f32_from_bits(0x7F7FFFFF)  # MessageToJson prints 3.4028235e+38
FLT_MIN = f32_from_bits(0x00800000)
SPECIAL_FLOATS = [
    float("nan"),
    float("inf"),
    float("-inf"),
    -0.0,
    0.0,
    1.0,
    -1.5,
    f32(0.1),
    f32(1 / 3),
    FLT_MIN,  # smallest normal
    16777216.0,
    f32(1e-7),
    f32(123456.79),
    f32(-2.5e-30),
    f32(3.0e38),
]
TIE_FLOATS = [226251.625, -3024143.25, 2615457.25, f32_from_bits(0x3FC00001)]  # last: no tie
SUBNORMAL_FLOATS = [
    f32_from_bits(0x00000001),
    f32_from_bits(0x007FFFFF),
    f32_from_bits(0x00012345),
    f32_from_bits(0x80000010),
]


def edge_examples(rng, flt_max):
    out = []

    e = Example()
    fill_list(
        e.features.feature["int64 extremes"].int64_list,
        [INT64_MIN, INT64_MAX, 0, -1, 1, INT32_MIN - 1, INT32_MAX + 1, 2**53 + 1, -(2**53) - 1],
    )
    out.append(e)

    e = Example()
    for kind in KINDS:
        fill_list(getattr(e.features.feature[f"empty {kind}"], kind), [])
    e.features.feature["no kind set"]  # reading the entry creates it
    out.append(e)

    e = Example()
    fill_list(
        e.features.feature["special floats"].float_list,
        SPECIAL_FLOATS + ([FLT_MAX, -FLT_MAX] if flt_max else []),
    )
    nine = [f32_from_bits(b) for b in NINE_DIGIT_BITS]
    while len(nine) < 40:
        v = f32_from_bits(rng.getrandbits(32))
        if math.isfinite(v) and abs(v) >= FLT_MIN and json_format_digits(v) == 9 and not is_decimal_tie(v):
            nine.append(v)
    fill_list(e.features.feature["nine digit floats"].float_list, nine)
    out.append(e)

    e = Example()
    fill_list(
        e.features.feature["bytes"].bytes_list,
        [
            bytes(range(256)),
            bytes(range(255, -1, -1)),
            b"",
            b"\xff\xfe\x80\xc3\x28",  # not UTF-8
            b"\x00",
            "héllo 日本 😀".encode(),
            b"==",
            b"\xfb\xff",  # base64 with + and /
        ],
    )
    out.append(e)

    e = Example()
    for i, k in enumerate(KEY_POOL):
        fill_list(e.features.feature[k].int64_list, [i])
    out.append(e)

    out.append(Example(features=feature_pb2.Features()))  # a record with no features
    out.append(Example())  # features unset

    e = Example()
    fill_list(e.features.feature["big"].bytes_list, [rng.randbytes((1 << 20) + 7)])
    fill_list(e.features.feature["after big"].int64_list, [7])
    out.append(e)
    return out


def random_examples(rng, n):
    out = []
    for _ in range(n):
        e = Example()
        e.features.SetInParent()
        for _ in range(rng.randrange(8)):
            rand_feature(rng, e.features.feature[rand_key(rng)])
        out.append(e)
    return out


def gen_examples(rng, n_random=150, flt_max=False):
    return edge_examples(rng, flt_max) + random_examples(rng, n_random)


def gen_sequence_examples(rng, n_random=60):
    out = [SequenceExample()]

    s = SequenceExample()
    s.context.SetInParent()
    s.feature_lists.SetInParent()
    out.append(s)

    s = SequenceExample()
    fill_list(s.context.feature["length"].int64_list, [3])
    fill_list(s.context.feature["floats"].float_list, SPECIAL_FLOATS)
    fill_list(s.context.feature["ids/int64"].int64_list, [INT64_MIN, INT64_MAX])
    fill_list(s.context.feature["raw"].bytes_list, [bytes(range(256))])
    s.context.feature["context no kind"]
    fl = s.feature_lists.feature_list
    fl["empty feature list"]  # a FeatureList with no features
    rand_feature(rng, fl["one"].feature.add(), "int64_list")
    for _ in range(50):
        rand_feature(rng, fl["many/mixed"].feature.add())
    fl["no kinds"].feature.add()
    fl["no kinds"].feature.add()
    for kind in KINDS:
        fill_list(getattr(fl["empty lists"].feature.add(), kind), [])
    for i in range(5):
        fill_list(fl["ragged \u00fcnicode"].feature.add().float_list, [f32(j / 7) for j in range(i)])
    out.append(s)

    s = SequenceExample()
    fl = s.feature_lists.feature_list
    for i in range(4):
        fl[f"empty {i}"]
    out.append(s)

    for _ in range(n_random):
        s = SequenceExample()
        if rng.random() < 0.8:
            s.context.SetInParent()
            for _ in range(rng.randrange(5)):
                rand_feature(rng, s.context.feature[rand_key(rng)])
        if rng.random() < 0.8:
            s.feature_lists.SetInParent()
            for _ in range(rng.randrange(5)):
                lst = s.feature_lists.feature_list[rand_key(rng)]
                kind = rng.choice(KINDS)
                for _ in range(rng.choice([0, 1, 2, rng.randrange(15)])):
                    rand_feature(rng, lst.feature.add(), kind)
        out.append(s)
    return out


def gen_ofrecords(rng, n_random=60):
    """OFRecords with all five list kinds."""
    O = ofrecord
    out = []

    r = O.OFRecord()
    fill_list(r.feature["int32"].int32_list, [INT32_MIN, INT32_MAX, 0, -1, 1, 12345])
    fill_list(r.feature["int64"].int64_list, [INT64_MIN, INT64_MAX, 0, -1])
    fill_list(
        r.feature["double"].double_list,
        [
            float("nan"),
            float("inf"),
            float("-inf"),
            -0.0,
            0.1,
            1 / 3,
            2.0**-1074,  # smallest subnormal double
            1.7976931348623157e308,
            2.2250738585072014e-308,
            123456789.12345679,
            -1e-300,
            2.0**53 + 2,
        ],
    )
    fill_list(r.feature["float"].float_list, SPECIAL_FLOATS)
    fill_list(r.feature["bytes"].bytes_list, [bytes(range(256)), b"", b"\xff\xc3\x28"])
    out.append(r)

    r = O.OFRecord()
    for kind in ("bytes_list", "float_list", "double_list", "int32_list", "int64_list"):
        fill_list(getattr(r.feature[f"empty {kind}"], kind), [])
    r.feature["no kind set"]
    out.append(r)

    out.append(O.OFRecord())

    r = O.OFRecord()
    fill_list(r.feature["images"].float_list, [f32(rng.random()) for _ in range(28 * 28)])
    fill_list(r.feature["labels"].int64_list, [rng.randint(0, 9)])
    fill_list(r.feature["image/encoded ключ"].bytes_list, [rng.randbytes(5000)])
    out.append(r)

    for _ in range(n_random):
        r = O.OFRecord()
        for _ in range(rng.randrange(6)):
            key = rand_key(rng)
            kind = rng.choice(["bytes_list", "float_list", "double_list", "int32_list", "int64_list"])
            n = rng.choice([0, 1, 3, rng.randrange(30)])
            gen = {
                "bytes_list": rand_bytes,
                "float_list": rand_float32,
                "double_list": lambda g: g.choice(
                    [g.uniform(-1e6, 1e6), g.random(), float(g.randint(-9, 9))]
                ),
                "int32_list": lambda g: g.randint(INT32_MIN, INT32_MAX),
                "int64_list": rand_int64,
            }[kind]
            fill_list(getattr(r.feature[key], kind), [gen(rng) for _ in range(n)])
        out.append(r)
    return out


def ofrecord_from_example(e):
    """What a kind-to-kind conversion of an Example gives."""
    r = ofrecord.OFRecord()
    for k, f in e.features.feature.items():
        kind = f.WhichOneof("kind")
        if kind is None:
            r.feature[k]
        else:
            fill_list(getattr(r.feature[k], kind), getattr(f, kind).value)
    return r


def example_from_ofrecord(r):
    """What OFRecord -> Example gives: int32 widens to int64, double rounds to nearest float32."""
    e = Example()
    e.features.SetInParent()
    for k, f in r.feature.items():
        kind = f.WhichOneof("kind")
        ef = e.features.feature[k]
        if kind is None:
            continue
        vals = list(getattr(f, kind).value)
        if kind == "int32_list":
            fill_list(ef.int64_list, vals)
        elif kind == "double_list":
            fill_list(ef.float_list, [f32(v) for v in vals])
        else:
            fill_list(getattr(ef, kind), vals)
    return e


def to_json_line(msg, ensure_ascii=False) -> str:
    return json_format.MessageToJson(msg, indent=None, ensure_ascii=ensure_ascii)


def bytes_key_example_class():
    """A mirror of tensorflow.Example whose map entries have a `bytes` key: the wire format of
    `map<string, Feature>`, written without the UTF-8 check that makes protobuf's Example class
    refuse a key that is not UTF-8 (which TensorFlow's writers and C++ parsers accept). A map
    prints in the text format as its entries, so the mirror with its entries in key order prints
    as the record does."""
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(feature_pb2.DESCRIPTOR.serialized_pb)
    fd = descriptor_pb2.FileDescriptorProto(
        name="bytes_keys.proto", package="bytes_keys", syntax="proto3", dependency=[feature_pb2.DESCRIPTOR.name]
    )
    F = descriptor_pb2.FieldDescriptorProto
    entry = fd.message_type.add(name="Entry")
    entry.field.add(name="key", number=1, label=F.LABEL_OPTIONAL, type=F.TYPE_BYTES)
    entry.field.add(name="value", number=2, label=F.LABEL_OPTIONAL, type=F.TYPE_MESSAGE, type_name=".tensorflow.Feature")
    features = fd.message_type.add(name="Features")
    features.field.add(name="feature", number=1, label=F.LABEL_REPEATED, type=F.TYPE_MESSAGE, type_name=".bytes_keys.Entry")
    example = fd.message_type.add(name="Example")
    example.field.add(name="features", number=1, label=F.LABEL_OPTIONAL, type=F.TYPE_MESSAGE, type_name=".bytes_keys.Features")
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("bytes_keys.Example"))


def is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# --------------------------------------------------------------------------------------------
# TensorFlow and CLI I/O
# --------------------------------------------------------------------------------------------


def tf_write(path, msgs, compression):
    opts = tf.io.TFRecordOptions(compression_type=compression)
    with tf.io.TFRecordWriter(path, options=opts) as w:
        for m in msgs:
            w.write(m.SerializeToString(deterministic=True))


def tf_read(path, compression):
    ds = tf.data.TFRecordDataset(path, compression_type=compression)
    return [bytes(x.numpy()) for x in ds]


class Cli:
    def __init__(self, binary, workdir):
        self.binary = binary
        self.workdir = workdir

    def show(self, args):
        rel = [os.path.relpath(a, self.workdir) if os.path.isabs(a) else a for a in args]
        return "tfrecord " + shlex.join(rel)

    def run(self, args, stdin=None, ok=True):
        p = subprocess.run(
            [self.binary, *args],
            input=stdin if stdin is not None else b"",
            capture_output=True,
            cwd=self.workdir,
            timeout=300,
            check=False,
        )
        if ok and p.returncode != 0:
            err = p.stderr.decode("utf-8", "replace").strip()
            raise Fail(f"`{self.show(args)}` exited {p.returncode}: {short(err, 600)}")
        return p

    def json_lines(self, args):
        out = self.run(args).stdout.decode("utf-8")
        lines = out.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        parsed = []
        for i, line in enumerate(lines):
            try:
                parsed.append(loads_strict(line))
            except ValueError as e:
                raise Fail(f"`{self.show(args)}` line {i + 1} is not one JSON value: {e}: {short(line)}")
        return parsed


def compare_json_lines(cli, args, msgs):
    got = cli.json_lines(args)
    want = [json.loads(json_format.MessageToJson(m)) for m in msgs]
    if len(got) != len(want):
        raise Fail(f"`{cli.show(args)}` printed {len(got)} lines for {len(want)} records")
    diffs = []
    for i, (g, w) in enumerate(zip(got, want)):
        diffs.extend(f"record {i}: {d}" for d in json_diffs(g, w))
    if diffs:
        spelling = sum(d.endswith(SPELLING) for d in diffs)
        lines = [f"`{cli.show(args)}` differs from MessageToJson in {len(diffs)} values"
                 + (f" ({spelling} of them the same float32 spelled differently)" if spelling else "")]
        lines += diffs[:6] + (["..."] if len(diffs) > 6 else [])
        raise Fail("\n     ".join(lines))


def compare_msgs(got, want, what):
    if len(got) != len(want):
        raise Fail(f"{what}: {len(got)} records, want {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            raise Fail(msg_diff(g, w, f"{what} record {i}"))


def parse_records(raws, cls, what):
    out = []
    for i, raw in enumerate(raws):
        m = cls()
        try:
            m.ParseFromString(raw)
        except Exception as e:  # noqa: BLE001
            raise Fail(f"{what} record {i}: not a valid {cls.DESCRIPTOR.full_name}: {e}")
        # Re-encoding and parsing again must give the same message (a valid, complete encoding).
        again = cls.FromString(m.SerializeToString(deterministic=True))
        if again != m:
            raise Fail(f"{what} record {i}: does not survive re-encoding")
        out.append(m)
    return out


# --------------------------------------------------------------------------------------------
# TensorFlow's own C++ parsers (tf.io.parse_*example), which are stricter than protobuf
# --------------------------------------------------------------------------------------------


def read_varint(b, i):
    shift = value = 0
    while True:
        byte = b[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, i


def wire_fields(b):
    """(field number, value) of one message's fields; value is bytes when length-delimited."""
    i = 0
    while i < len(b):
        key, i = read_varint(b, i)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, i = read_varint(b, i)
        elif wire_type == 1:
            value, i = b[i : i + 8], i + 8
        elif wire_type == 2:
            n, i = read_varint(b, i)
            value, i = b[i : i + n], i + n
        elif wire_type == 5:
            value, i = b[i : i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire_type}")
        yield number, value


def map_entry_problems(raw, sequence):
    """Map entries written without their key or value field.

    Valid protobuf (a missing field means its default), and protobuf's parsers accept it, but
    protobuf's own serializers always write both and TensorFlow's fast Example parser requires
    both.
    """
    problems = []

    def check_map(buf, what):
        for number, entry in wire_fields(buf):
            if number != 1:
                continue
            fields = dict(wire_fields(entry))
            key = fields.get(1, b"").decode("utf-8", "replace")
            if 1 not in fields:
                problems.append(f"a {what} entry (key {key!r}) without its key field 1")
            if 2 not in fields:
                problems.append(f"a {what} entry (key {key!r}) without its value field 2")

    for number, value in wire_fields(raw):
        if number == 1:
            check_map(value, "context.feature" if sequence else "features.feature")
        elif number == 2 and sequence:
            check_map(value, "feature_lists.feature_list")
    return problems


DTYPES = {"bytes_list": tf.string, "float_list": tf.float32, "int64_list": tf.int64}
ABSENT = {"__absent__": tf.io.VarLenFeature(tf.int64)}  # so that every record is really parsed


def features_spec(features):
    spec = dict(ABSENT)
    for k, f in features.feature.items():
        kind = f.WhichOneof("kind")
        if kind:
            spec[k] = tf.io.VarLenFeature(DTYPES[kind])
    return spec


def fast_parse(raw, orig, sequence):
    """Parse one record with TensorFlow's C++ parser, using feature specs taken from orig."""
    if not sequence:
        out = tf.io.parse_single_example(raw, features_spec(orig.features))
        return {("feature", k): v for k, v in out.items()}
    seq_spec = dict(ABSENT)
    for k, fl in orig.feature_lists.feature_list.items():
        kinds = {f.WhichOneof("kind") for f in fl.feature}
        if len(kinds) == 1 and None not in kinds:
            seq_spec[k] = tf.io.VarLenFeature(DTYPES[kinds.pop()])
    ctx, lists = tf.io.parse_single_sequence_example(
        raw, context_features=features_spec(orig.context), sequence_features=seq_spec
    )
    out = {("context", k): v for k, v in ctx.items()}
    out.update({("feature_list", k): v for k, v in lists.items()})
    return out


def sparse_same(a, b):
    av, bv = a.values.numpy(), b.values.numpy()
    if av.dtype == np.float32:
        av, bv = av.view(np.uint32), bv.view(np.uint32)
    return (
        av.shape == bv.shape
        and (av == bv).all()
        and np.array_equal(a.indices.numpy(), b.indices.numpy())
        and np.array_equal(a.dense_shape.numpy(), b.dense_shape.numpy())
    )


def tf_fast_parse_compare(raws, origs, sequence, what):
    """TensorFlow's C++ parser must read each record as it reads protobuf's encoding of orig."""
    if len(raws) != len(origs):
        raise Fail(f"{what}: {len(raws)} records, want {len(origs)}")
    problems = []
    for i, (raw, orig) in enumerate(zip(raws, origs)):
        try:
            got = fast_parse(raw, orig, sequence)
        except (tf.errors.InvalidArgumentError, UnicodeDecodeError) as e:
            if isinstance(e, UnicodeDecodeError):  # TF quotes the record in its message
                msg = "InvalidArgumentError quoting the record's bytes"
            else:
                msg = re.sub(r"\{\{function_node [^}]*\}\}\s*", "", " ".join(str(e.message).split()))
            diag = map_entry_problems(raw, sequence)
            problems.append(
                f"record {i}: TensorFlow refuses it ({short(msg, 120)})"
                + (f"; its encoding has {'; '.join(diag[:3])}" if diag else "")
            )
            continue
        want = fast_parse(orig.SerializeToString(deterministic=True), orig, sequence)
        for key in want:
            if not sparse_same(got[key], want[key]):
                problems.append(
                    f"record {i} {key}: TF reads {short(got[key].values.numpy())}, "
                    f"want {short(want[key].values.numpy())}"
                )
    if problems:
        lines = [f"{what}: {len(problems)} of {len(raws)} records differ"] + problems[:5]
        raise Fail("\n     ".join(lines + (["..."] if len(problems) > 5 else [])))


# --------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="path to the tfrecord binary")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()

    binary = os.path.abspath(args.bin)
    if not os.access(binary, os.X_OK):
        sys.exit(f"check_tf.py: {binary} is not an executable")

    tmp = tempfile.mkdtemp(prefix="tfrecord-interop-")
    try:
        r = run_all(Runner(), Cli(binary, tmp), tmp, args.seed)
    finally:
        if args.keep:
            print(f"(kept {tmp})")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"{r.passed} passed, {r.failed} failed")
    sys.exit(1 if r.failed else 0)


def run_all(R, cli, tmp, seed):
    P = lambda *parts: os.path.join(tmp, *parts)
    print(f"TensorFlow {tf.__version__}, protobuf {PB_VERSION}, seed {seed}", flush=True)

    # ---------------- A. TensorFlow writes, tfrecord reads ----------------
    examples = gen_examples(random.Random(seed), flt_max=True)
    seqs = gen_sequence_examples(random.Random(seed + 1))
    layouts = [  # (file name, TF compression, extra CLI args)
        ("a.tfrecord", "", []),
        ("a.tfrecord.gz", "GZIP", []),
        ("a.tfrecord.zlib", "ZLIB", []),
        ("a_gzip_noext", "GZIP", ["--compression", "gzip"]),
    ]
    tf_records = {}  # file -> raw records as TensorFlow reads them
    for stem, comp, extra in layouts:
        for kind, msgs, cls, flag in (
            ("Example", examples, Example, []),
            ("SequenceExample", seqs, SequenceExample, ["--sequence"]),
        ):
            path = P(("seq_" if flag else "") + stem)
            tf_write(path, msgs, comp)
            raws = tf_read(path, comp)
            tf_records[path] = raws
            name = os.path.basename(path)

            def cat_check(path=path, raws=raws, cls=cls, flag=flag, extra=extra):
                back = [cls.FromString(x) for x in raws]
                compare_json_lines(cli, ["cat", "--json", *flag, *extra, path], back)

            def count_check(path=path, raws=raws, extra=extra):
                out = cli.run(["count", *extra, path]).stdout.decode().strip().splitlines()
                if not out or out[-1].strip() != str(len(raws)):
                    raise Fail(f"`{cli.show(['count', *extra, path])}` printed {short(out)}, want {len(raws)} on the last line")

            def verify_check(path=path, extra=extra):
                cli.run(["verify", *extra, path])

            R.check(f"A cat --json {' '.join(flag + extra)} {name} = MessageToJson of TF's {kind}s".replace("  ", " "), cat_check)
            R.check(f"A count {name}", count_check)
            R.check(f"A verify {name}", verify_check)

    def stdin_and_many_check():
        raws = tf_records[P("a.tfrecord")]
        with open(P("a.tfrecord"), "rb") as f:
            from_stdin = cli.run(["cat", "--json", "-"], stdin=f.read()).stdout
        from_file = cli.run(["cat", "--json", P("a.tfrecord")]).stdout
        if from_stdin != from_file or from_stdin.count(b"\n") != len(raws):
            raise Fail("`tfrecord cat --json - < a.tfrecord` prints other lines than `tfrecord cat --json a.tfrecord`")
        args = ["count", P("a.tfrecord"), P("a.tfrecord.gz"), P("seq_a.tfrecord.zlib")]
        out = cli.run(args).stdout.decode().strip().splitlines()
        total = 2 * len(raws) + len(tf_records[P("seq_a.tfrecord.zlib")])
        if not out or out[-1].strip() != str(total):
            raise Fail(f"`{cli.show(args)}` printed {short(out)}, want {total} on the last line")
        cli.run(["verify", P("a.tfrecord"), P("a.tfrecord.gz"), P("seq_a.tfrecord.zlib")])

    R.check("A cat --json - (stdin); count / verify of three files (total on the last line)", stdin_and_many_check)

    # verify must refuse damaged files (and say which file).
    plain = P("a.tfrecord")
    with open(plain, "rb") as f:
        data = f.read()
    first_len = struct.unpack("<Q", data[:8])[0]
    damages = {
        "payload byte flipped": lambda d: d[:16] + bytes([d[16] ^ 0x01]) + d[17:],
        "length CRC flipped": lambda d: d[:8] + bytes([d[8] ^ 0x80]) + d[9:],
        "data CRC flipped": lambda d: d[: 12 + first_len] + bytes([d[12 + first_len] ^ 0x01]) + d[13 + first_len :],
        "truncated": lambda d: d[:-3],
    }
    for what, damage in damages.items():
        bad = P("damaged_" + what.replace(" ", "_") + ".tfrecord")
        with open(bad, "wb") as f:
            f.write(damage(data))

        def bad_check(bad=bad):
            p = cli.run(["verify", bad], ok=False)
            if p.returncode == 0:
                raise Fail(f"`{cli.show(['verify', bad])}` exited 0 on a damaged file")
            err = p.stderr.decode("utf-8", "replace")
            if os.path.basename(bad) not in err:
                raise Fail(f"`{cli.show(['verify', bad])}`: the error does not name the file: {short(err)}")

        R.check(f"A verify refuses a damaged file ({what})", bad_check)

    def control_check():
        tf_fast_parse_compare(tf_records[P("a.tfrecord")], examples, False, "a.tfrecord")
        tf_fast_parse_compare(tf_records[P("seq_a.tfrecord")], seqs, True, "seq_a.tfrecord")

    R.check("A (control) TF's C++ parsers read TF's own a.tfrecord / seq_a.tfrecord as the originals", control_check)

    def tie_check():
        assert all(f32(v) == v for v in TIE_FLOATS) and sum(map(is_decimal_tie, TIE_FLOATS)) == 3
        e = Example()
        fill_list(e.features.feature["decimal ties"].float_list, TIE_FLOATS)
        path = P("a_ties.tfrecord")
        tf_write(path, [e], "")
        back = [Example.FromString(x) for x in tf_read(path, "")]
        compare_json_lines(cli, ["cat", "--json", path], back)

    R.check("A cat --json a_ties.tfrecord rounds exact decimal ties as MessageToJson does (226251.62)", tie_check)

    def subnormal_check():
        e = Example()
        fill_list(e.features.feature["subnormal floats"].float_list, SUBNORMAL_FLOATS)
        path = P("a_subnormal.tfrecord")
        tf_write(path, [e], "")
        back = [Example.FromString(x) for x in tf_read(path, "")]
        compare_json_lines(cli, ["cat", "--json", path], back)

    R.check("A cat --json a_subnormal.tfrecord spells float32 subnormals as MessageToJson does (1.4013e-45)", subnormal_check)

    def float_text_check():
        # The text of each float, not only its value: Python's repr (1e-05, 1e+16, 1000000.0).
        rng = random.Random(seed + 5)
        values = [1e16, 1e-5, 2.5e-5, 1e-6, 1e-4, 1234567.0, 1e15, 0.0, -0.0, 100.0]
        values += [f32(rng.choice([1, -1]) * 10 ** rng.uniform(-12, 20)) for _ in range(500)]
        values += [rand_float32(rng) for _ in range(500)]
        values = [v for v in values if math.isfinite(v)]
        e = Example()
        fill_list(e.features.feature["f"].float_list, values)
        path = P("a_float_text.tfrecord")
        tf_write(path, [e], "")
        want = json_format.MessageToJson(e, indent=None)
        got = cli.run(["cat", "--json", path]).stdout.decode("utf-8").strip()
        def floats(text, sep):
            return text.split("[", 1)[1].split("]", 1)[0].split(sep)

        diffs = [(g, w) for g, w in zip(floats(got, ","), floats(want, ", ")) if g != w]
        if diffs or len(floats(got, ",")) != len(values):
            raise Fail(f"{len(diffs)} floats spelled otherwise than MessageToJson: {diffs[:5]}")

    R.check("A cat --json spells every float as MessageToJson's text does (1e-05, 1e+16)", float_text_check)

    def non_utf8_keys_check():
        rng = random.Random(seed + 7)
        mirror_cls = bytes_key_example_class()
        mirrors = []
        for i in range(40):
            keys = {b"ok", bytes([rng.randrange(0x80, 0x100)])}
            while len(keys) < 2 + rng.randrange(6):
                keys.add(rng.randbytes(rng.randrange(1, 6)))
            m = mirror_cls()
            m.features.SetInParent()
            for key in sorted(keys):
                f = Feature()
                if key == b"ok":
                    f.int64_list.value.append(i)
                else:
                    rand_feature(rng, f)
                m.features.feature.add(key=key).value.MergeFromString(f.SerializeToString())
            mirrors.append(m)
        path = P("a_keys.tfrecord")
        tf_write(path, mirrors, "")
        raws = tf_read(path, "")
        ok = tf.io.parse_example(raws, {"ok": tf.io.FixedLenFeature([], tf.int64)})["ok"].numpy().tolist()
        if ok != list(range(len(mirrors))):
            raise Fail(f"(control) tf.io.parse_example read `ok` as {short(ok)}")
        try:
            Example.FromString(raws[0])
            refused = False
        except Exception:  # noqa: BLE001 - the DecodeError class differs between runtimes
            refused = True
        if not refused:
            raise Fail("(control) protobuf's Example class read a key that is not UTF-8")
        text = cli.run(["cat", path]).stdout.decode("utf-8")

        def mirror_text(m):
            # The mirror's keys are a bytes field, every byte escaped; a key that is UTF-8 is
            # shown as an Example's `string` key is (`CEscape(.., as_utf8=True)`: non-ASCII
            # characters as they are).
            t = text_format.MessageToString(m)
            for e in m.features.feature:
                if is_utf8(e.key):
                    as_bytes = text_encoding.CEscape(e.key, as_utf8=False)
                    as_text = text_encoding.CEscape(e.key.decode("utf-8"), as_utf8=True)
                    t = t.replace(f'key: "{as_bytes}"\n', f'key: "{as_text}"\n', 1)
            return t

        want = "".join(mirror_text(m) + "\n" for m in mirrors)
        if text != want:
            for i, (g, w) in enumerate(zip(text.splitlines(), want.splitlines())):
                if g != w:
                    raise Fail(f"`tfrecord cat a_keys.tfrecord` line {i + 1}: {short(g)}, text_format: {short(w)}")
            raise Fail(f"`tfrecord cat a_keys.tfrecord` printed {len(text)} characters, text_format {len(want)}")

        def key_json(k):
            return k.decode("utf-8") if is_utf8(k) else text_encoding.CEscape(k, as_utf8=False)

        p = cli.run(["cat", "--json", path])
        got = [loads_strict(line) for line in p.stdout.decode("utf-8").splitlines()]
        want_json = [
            {"features": {"feature": {key_json(e.key): json_format.MessageToDict(e.value) for e in m.features.feature}}}
            for m in mirrors
        ]
        diffs = [f"record {i}: {d}" for i, (g, w) in enumerate(zip(got, want_json)) for d in json_diffs(g, w)]
        if len(got) != len(want_json) or diffs:
            raise Fail(f"`tfrecord cat --json a_keys.tfrecord`: {len(got)} lines; {short(diffs[:4])}")
        warnings = p.stderr.decode("utf-8").splitlines()
        if len(warnings) != 1 or "is not UTF-8" not in warnings[0]:
            raise Fail(f"`tfrecord cat --json a_keys.tfrecord` warned {short(warnings)}, want one line")
        cli.run(["verify", "--decode", path])
        spec = cli.run(["infer", path]).stdout.decode("utf-8")
        for key in {e.key for m in mirrors for e in m.features.feature if not is_utf8(e.key)}:
            note = f'# Left out: "{text_encoding.CEscape(key, as_utf8=False)}" (escaped as in the text format)'
            if note not in spec:
                raise Fail(f"`tfrecord infer a_keys.tfrecord` has no note `{note}`")

    R.check("A TF-written Examples with random non-UTF-8 keys: cat = text_format (keys CEscape'd; UTF-8 ones as text), cat --json, verify --decode, infer", non_utf8_keys_check)

    # ---------------- B. tfrecord writes, TensorFlow reads ----------------
    b_examples = gen_examples(random.Random(seed + 2))
    b_seqs = gen_sequence_examples(random.Random(seed + 3))
    jsonl = P("b_examples.jsonl")
    with open(jsonl, "w", encoding="utf-8") as f:
        f.writelines(to_json_line(m) + "\n" for m in b_examples)
    jsonl_ascii = "".join(to_json_line(m, ensure_ascii=True) + "\n" for m in b_examples).encode("ascii")

    outputs = [  # (out file, TF compression, extra args, input)
        ("b.tfrecord", "", [], jsonl),
        ("b.tfrecord.gz", "GZIP", [], jsonl),
        ("b.tfrecord.zlib", "ZLIB", [], jsonl),
        ("b_zlib_noext", "ZLIB", ["--compression", "zlib"], jsonl),
        ("b_stdin.tfrecord", "", [], "-"),
    ]
    for out_name, comp, extra, src in outputs:
        out = P(out_name)

        def from_json_check(out=out, comp=comp, extra=extra, src=src, out_name=out_name):
            stdin = jsonl_ascii if src == "-" else None
            cli.run(["from-json", *extra, "-o", out, src], stdin=stdin)
            got = parse_records(tf_read(out, comp), Example, out_name)
            compare_msgs(got, b_examples, f"TF reading {out_name}")

        how = "stdin, \\u escapes" if src == "-" else "file"
        R.check(f"B from-json {' '.join(extra)} -o {out_name} ({how}): TF reads the same Examples".replace("  ", " "), from_json_check)

    def stdout_check():
        out = cli.run(["from-json", "-o", "-", jsonl]).stdout
        path = P("b_stdout.tfrecord")
        with open(path, "wb") as f:
            f.write(out)
        compare_msgs(parse_records(tf_read(path, ""), Example, path), b_examples, "TF reading from-json's standard output")

    R.check("B from-json -o - (standard output): TF reads the same Examples", stdout_check)

    def tf_parse_check():
        if not os.path.exists(P("b.tfrecord")):
            raise Fail("b.tfrecord was not written (see above)")
        tf_fast_parse_compare(tf_read(P("b.tfrecord"), ""), b_examples, False, "b.tfrecord")

    R.check("B tf.io.parse_single_example (TF's C++ Example parser) reads from-json's b.tfrecord as the originals", tf_parse_check)

    def flt_max_check():
        e = Example()
        fill_list(e.features.feature["float32 limits"].float_list, [FLT_MAX, -FLT_MAX])
        src, out = P("b_flt_max.jsonl"), P("b_flt_max.tfrecord")
        with open(src, "w", encoding="utf-8") as f:
            f.write(to_json_line(e) + "\n")
        cli.run(["from-json", "-o", out, src])
        compare_msgs(parse_records(tf_read(out, ""), Example, out), [e], "TF reading b_flt_max.tfrecord")

    R.check("B from-json reads +-FLT_MAX as MessageToJson (and tfrecord cat --json) print it: 3.4028235e+38", flt_max_check)

    def parse_leniency_check():
        # Strings json_format.Parse reads leniently (as Python's base64, float and int do), and
        # ones it refuses: from-json must take and refuse the same, reading the same messages.
        def line(kind, v):
            return '{"features":{"feature":{"k":{"' + kind + '":{"value":[' + v + "]}}}}}"

        cases = [line("bytesList", v) for v in (
            '"YWJjZA="', '"YWJ"', '"YW Jj"', '"Y\\nWJj"', '"YWJjZA==="', '"=YWJj"', '"!!!!"', '"Y"', '"YWJj-_"')]
        cases += [line("floatList", v) for v in (
            '"inf"', '"+Infinity"', '"-NaN"', '"Infinity "', '"1_0"', '"1e39"', '"nan"', '" 1.5"',
            "true", "1e39", '"1__0"', '"0x10"')]
        cases += [line("int64List", v) for v in (
            '"\\t1"', '" 1"', '"1_000"', '"1e3"', '"1.0"', '"1.5"', '"1e19"', "true", "-9223372036854775809")]
        cases += ["[]", '{"features":[]}', '{"features":{"feature":[]}}']
        diffs = []
        for i, text in enumerate(cases):
            try:
                want = json_format.Parse(text, Example())
            except json_format.ParseError:
                want = None
            src, out = P(f"b_lenient_{i}.jsonl"), P(f"b_lenient_{i}.tfrecord")
            with open(src, "w", encoding="utf-8") as f:
                f.write(text + "\n")
            p = cli.run(["from-json", "-o", out, src], ok=False)
            got = parse_records(tf_read(out, ""), Example, out) if p.returncode == 0 else None
            if (got is None) != (want is None) or (got is not None and got != [want]):
                diffs.append(f"{text}: Parse {'refuses' if want is None else 'reads'} it, from-json "
                             + ("refuses it" if got is None else f"reads {short(str(got))}"))
        if diffs:
            raise Fail("\n     ".join(diffs))

    R.check("B from-json takes and refuses what json_format.Parse does (lenient base64, float and int strings, [])",
            parse_leniency_check)

    seq_jsonl = P("b_seq.jsonl")
    with open(seq_jsonl, "w", encoding="utf-8") as f:
        f.writelines(to_json_line(m) + "\n" for m in b_seqs)
    for out_name, comp in (("b_seq.tfrecord", ""), ("b_seq.tfrecord.gz", "GZIP"), ("b_seq.tfrecord.zlib", "ZLIB")):

        def seq_check(out_name=out_name, comp=comp):
            out = P(out_name)
            cli.run(["from-json", "--sequence", "-o", out, seq_jsonl])
            got = parse_records(tf_read(out, comp), SequenceExample, out_name)
            compare_msgs(got, b_seqs, f"TF reading {out_name}")

        R.check(f"B from-json --sequence -o {out_name}: TF reads the same SequenceExamples", seq_check)

    def tf_seq_parse_check():
        if not os.path.exists(P("b_seq.tfrecord")):
            raise Fail("b_seq.tfrecord was not written (see above)")
        tf_fast_parse_compare(tf_read(P("b_seq.tfrecord"), ""), b_seqs, True, "b_seq.tfrecord")

    R.check("B tf.io.parse_single_sequence_example (TF's C++ parser) reads from-json's b_seq.tfrecord as the originals", tf_seq_parse_check)

    # JSON spellings json_format.Parse accepts besides its own output.
    variants = [
        '{"features": {"feature": {"a": {"int64_list": {"value": [1, "2", -3, 5.0]}}}}}',
        '{"features": {"feature": {"f": {"floatList": {"value": ["1.5", "NaN", "-Infinity", "Infinity", 1e3, -0.0, 0.1]}}}}}',
        '{"features": {"feature": {"b": {"bytesList": {"value": ["-_8", "AA==", "AA", "+/8=", ""]}}}}}',
        '{"features": null}',
        '{"features": {"feature": {"\\ud83d\\ude00 \\u00e9": {}, "n": {"int64List": null}}}}',
        '{"features": {"feature": {"e": {"floatList": {"value": []}}, "i": {"int64List": {"value": null}}}}}',
        '{  "features" : { "feature" : { "w" : { "int64List" : { "value" : [ "-9223372036854775808" ] } } } }  }',
        "{}",
        # Read straight into wire bytes (no escapes): tabs and carriage returns, original names
        # with null members in another order, integers as numbers and zero-padded strings,
        # exponent forms, empty and non-ASCII keys.
        '\t{"features" :\r{ "feature" :{"x":{ "int64List":{"value":[ 1 ,"2" ]}}}}}',
        '{"features":{"feature":{"z":{"int64_list":{"value":[3]}},"a":{"bytes_list":null,"float_list":{"value":[1]}}}}}',
        (
            '{"features":{"feature":{"i":{"int64List":{"value":[-0,"007","-0",12345678901234567]}},'
            '"f":{"floatList":{"value":[1E3,2e-3,-1.5E+2,0,7,1e-50,123456789012345678901234567890]}}}}}'
        ),
        '{"features":{"feature":{"":{"int64List":{"value":[1]}},"é ü":{},"a b":{},"A":{},"n":{"int64List":{}}}}}',
    ]
    accepted = []
    for v in variants:
        try:
            accepted.append((v, json_format.Parse(v, Example())))
        except json_format.ParseError as e:
            print(f"     (json_format.Parse refuses {v}: {e}; left out)")

    def variants_check():
        src = P("b_variants.jsonl")
        with open(src, "w", encoding="utf-8") as f:
            f.writelines(v + "\n" for v, _ in accepted)
        out = P("b_variants.tfrecord")
        cli.run(["from-json", "-o", out, src])
        got = parse_records(tf_read(out, ""), Example, "b_variants.tfrecord")
        if len(got) != len(accepted):
            raise Fail(f"{len(got)} records for {len(accepted)} JSON lines")
        for g, (v, want) in zip(got, accepted):
            if g != want:
                raise Fail(msg_diff(g, want, f"JSON line {v}"))

    R.check(f"B from-json accepts {len(accepted)} other spellings json_format.Parse accepts, same messages", variants_check)

    conversions = [  # (input, extra args, output, output TF compression, expected records)
        ("a.tfrecord", [], "conv_plain_to.tfrecord.gz", "GZIP", "a.tfrecord"),
        ("conv_plain_to.tfrecord.gz", [], "conv_gz_to.tfrecord.zlib", "ZLIB", "a.tfrecord"),
        ("a_gzip_noext", ["--input-compression", "gzip"], "conv_noext_to.tfrecord", "", "a.tfrecord"),
        ("seq_a.tfrecord", [], "conv_seq_to.tfrecord.gz", "GZIP", "seq_a.tfrecord"),
    ]
    for src, extra, out_name, comp, want_file in conversions:

        def convert_check(src=src, extra=extra, out_name=out_name, comp=comp, want_file=want_file):
            cli.run(["convert", *extra, P(src), "-o", P(out_name)])
            got = tf_read(P(out_name), comp)
            want = tf_records[P(want_file)]
            if len(got) != len(want):
                raise Fail(f"TF reads {len(got)} records from {out_name}, want {len(want)}")
            cls = SequenceExample if src.startswith("seq_") else Example
            for i, (g, w) in enumerate(zip(got, want)):
                if g != w:
                    gm, wm = cls.FromString(g), cls.FromString(w)
                    detail = "same message, different bytes" if gm == wm else msg_diff(gm, wm, f"as {cls.__name__}")
                    raise Fail(f"record {i} of {out_name} is not the input record byte for byte ({detail})")

        R.check(f"B convert {' '.join(extra)} {src} -o {out_name}: TF reads identical records".replace("  ", " "), convert_check)

    def convert_many_check():
        out = P("conv_two.tfrecord")
        cli.run(["convert", P("a.tfrecord"), P("a.tfrecord.zlib"), "-o", out])
        got = tf_read(out, "")
        want = tf_records[P("a.tfrecord")] + tf_records[P("a.tfrecord.zlib")]
        if got != want:
            raise Fail(f"TF reads {len(got)} records, want the {len(want)} input records in order")

    R.check("B convert a.tfrecord a.tfrecord.zlib -o conv_two.tfrecord: both inputs in order", convert_many_check)

    # ---------------- C. OFRecord ----------------
    os.makedirs(P("ofdir"))
    part0 = P("ofdir", "part-00000")
    a_examples = [Example.FromString(x) for x in tf_records[P("a.tfrecord")]]

    def of_convert_check():
        cli.run(["convert", P("a.tfrecord"), "-o", part0, "--output-format", "ofrecord"])
        got = read_ofrecord_file(part0)
        compare_msgs(got, [ofrecord_from_example(e) for e in a_examples], "part-00000")

    R.check("C convert a.tfrecord -o ofdir/part-00000 --output-format ofrecord: OneFlow's reader gets the Examples' features", of_convert_check)

    def of_back_check():
        if not os.path.exists(part0):
            raise Fail("part-00000 was not written (see above)")
        out = P("back.tfrecord")
        cli.run(["convert", part0, "--input-format", "ofrecord", "-o", out])
        got = parse_records(tf_read(out, ""), Example, "back.tfrecord")
        compare_msgs(got, back_want(), "TF reading back.tfrecord")

    def back_want():
        return [example_from_ofrecord(ofrecord_from_example(e)) for e in a_examples]

    R.check("C convert ofdir/part-00000 --input-format ofrecord -o back.tfrecord: TF reads the original Examples", of_back_check)

    def of_back_parse_check():
        if not os.path.exists(P("back.tfrecord")):
            raise Fail("back.tfrecord was not written (see above)")
        tf_fast_parse_compare(tf_read(P("back.tfrecord"), ""), back_want(), False, "back.tfrecord")

    R.check("C tf.io.parse_single_example (TF's C++ Example parser) reads back.tfrecord as the original Examples", of_back_parse_check)

    ofrecs = gen_ofrecords(random.Random(seed + 4))
    of_jsonl = P("of.jsonl")
    with open(of_jsonl, "w", encoding="utf-8") as f:
        f.writelines(to_json_line(m) + "\n" for m in ofrecs)
    part1 = P("ofdir", "part-00001")

    def of_from_json_check():
        cli.run(["from-json", "--output-format", "ofrecord", "-o", part1, of_jsonl])
        compare_msgs(read_ofrecord_file(part1), ofrecs, "part-00001")

    R.check("C from-json --output-format ofrecord -o ofdir/part-00001: OneFlow's reader gets the same OFRecords", of_from_json_check)

    def of_cat_check():
        if not os.path.exists(part1):
            raise Fail("part-00001 was not written (see above)")
        compare_json_lines(cli, ["cat", "--json", "--input-format", "ofrecord", part1], ofrecs)
        out = cli.run(["count", "--input-format", "ofrecord", part1]).stdout.decode().strip().splitlines()
        if not out or out[-1].strip() != str(len(ofrecs)):
            raise Fail(f"count --input-format ofrecord printed {short(out)}, want {len(ofrecs)}")

    R.check("C cat --json / count --input-format ofrecord ofdir/part-00001 = MessageToJson of the OFRecords", of_cat_check)

    def of_lossy_check():
        if not os.path.exists(part1):
            raise Fail("part-00001 was not written (see above)")
        out = P("of_lossy.tfrecord")
        p = cli.run(["convert", part1, "--input-format", "ofrecord", "-o", P("of_refused.tfrecord")], ok=False)
        if p.returncode == 0:
            raise Fail("convert of double_list features to tfrecord succeeded without --allow-lossy-double")
        if b"double" not in p.stderr:
            raise Fail(f"the refusal does not mention double: {short(p.stderr.decode('utf-8', 'replace'))}")
        # A finite double beyond the float's range (DBL_MAX is among them) would become
        # infinity, which is not a rounding: refused even with the flag, naming the key.
        p = cli.run(["convert", part1, "--input-format", "ofrecord", "--allow-lossy-double", "-o", out], ok=False)
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode == 0 or "beyond the range of a float" not in err or '"double"' not in err:
            raise Fail(f"a double beyond the float range was not refused by name: {short(err)}")
        # The same records without such values: each double rounded to the nearest float32.
        fits = []
        for r in ofrecs:
            r2 = ofrecord.OFRecord()
            r2.CopyFrom(r)
            for f in r2.feature.values():
                if f.WhichOneof("kind") == "double_list":
                    kept = [v for v in f.double_list.value if math.isfinite(f32(v)) or not math.isfinite(v)]
                    del f.double_list.value[:]
                    f.double_list.value.extend(kept)
            fits.append(r2)
        part3 = P("ofdir", "part-00003")
        with open(part3, "wb") as f:  # written the way OneFlow's documentation writes
            for r in fits:
                f.write(struct.pack("q", r.ByteSize()))
                f.write(r.SerializeToString())
        cli.run(["convert", part3, "--input-format", "ofrecord", "--allow-lossy-double", "-o", out])
        got = parse_records(tf_read(out, ""), Example, "of_lossy.tfrecord")
        compare_msgs(got, [example_from_ofrecord(r) for r in fits], "TF reading of_lossy.tfrecord")

    R.check("C convert OFRecord with doubles -> tfrecord: refused without, rounded with --allow-lossy-double "
            "(refused beyond the float range); int32 widens", of_lossy_check)

    def of_int32_check():
        recs = [r for r in ofrecs if not any(f.WhichOneof("kind") == "double_list" for f in r.feature.values())]
        part2 = P("ofdir", "part-00002")
        with open(part2, "wb") as f:  # written the way OneFlow's documentation writes
            for r in recs:
                f.write(struct.pack("q", r.ByteSize()))
                f.write(r.SerializeToString())
        out = P("of_int32.tfrecord.gz")
        cli.run(["convert", part2, "--input-format", "ofrecord", "-o", out])
        got = parse_records(tf_read(out, "GZIP"), Example, "of_int32.tfrecord.gz")
        compare_msgs(got, [example_from_ofrecord(r) for r in recs], "TF reading of_int32.tfrecord.gz")

    R.check("C convert OneFlow-written OFRecords without doubles -> .tfrecord.gz without the flag: TF reads them", of_int32_check)
    return R


if __name__ == "__main__":
    main()
