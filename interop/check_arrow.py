#!/usr/bin/env python3
"""Live interop check of `tfrecord to-parquet` / `tfrecord from-parquet` against TensorFlow and
pyarrow.

- TensorFlow writes Examples and SequenceExamples (`tf.io.TFRecordWriter`); `to-parquet` (with
  a TOML spec and with the spec inferred) makes Parquet files that `pyarrow.parquet.read_table`
  reads: every column has exactly the Arrow type of the documented mapping, and every cell
  equals what the records hold as `tf.train.Example.FromString` reads them (sparse and ragged
  rows also what `tf.io.parse_example` gives with the equivalent feature spec).
- pyarrow writes Parquet files (every primitive type, nullable and not, lists, large lists,
  fixed-size lists, null rows, snappy and zstd, several row groups); `from-parquet` writes
  records that TensorFlow (`tf.data.TFRecordDataset`) and OneFlow's documented OFRecord reader
  read back equal to the table, a null cell as an absent key.
- Round trips: records -> Parquet -> records give byte-identical `tfrecord cat --json` output;
  pyarrow -> records -> pyarrow gives the same table for the types the mapping keeps.
- Errors: a null inside a list, a `string` feature that is not UTF-8, an existing output
  without `--force`.

Run through `interop/run.sh`, which installs the pinned `pyarrow` into the virtualenv. Every
check prints one line (`PASS name` or `FAIL name` followed by indented lines saying what
differed); the last line is `N passed, M failed` and the exit status is 1 if anything failed.
The data comes from a fixed seed (`--seed`), in a temporary directory (`--keep` keeps it).
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import tomllib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # silences a start-up notice; no math here
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # installed with TensorFlow
import pyarrow as pa
import pyarrow.parquet as pq
import tensorflow as tf

# OneFlow's record.proto (built at run time) and its documented reader.
from check_tf import ofrecord, read_ofrecord_file
from checks import Fail, Runner

tf.get_logger().setLevel("ERROR")  # SparseFeature warns on every use

Example = tf.train.Example
SequenceExample = tf.train.SequenceExample
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
SPEC_KEY = b"tfrecord.spec"


def short(v, limit=200):
    s = repr(v)
    return s if len(s) <= limit else s[: limit - 20] + f"... ({len(s)} chars)"


def f32(x):
    """The float32 nearest to `x` (overflow to infinity, as a cast does)."""
    with np.errstate(over="ignore"):
        return float(np.array([x], dtype=np.float64).astype(np.float32)[0])


def f32_from_bits(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


SPECIAL_FLOATS = [
    math.nan,
    f32_from_bits(0x7FC00001),  # a NaN with a payload
    math.inf,
    -math.inf,
    -0.0,
    0.0,
    f32_from_bits(0x00000001),  # the smallest subnormal
    f32_from_bits(0x7F7FFFFF),  # FLT_MAX
    f32_from_bits(0x00800000),  # FLT_MIN
    f32(0.1),
]
NOT_UTF8 = [b"\xff\xfe", bytes(range(256)), b"\xc3\x28", b"\x80", b"ok\xed\xa0\x80"]
TEXT = ["", "plain", "héllo", "日本語", "emoji \U0001f600", "tab\tnew\nline", "nul\x00inside"]


def rand_int64(rng):
    return rng.choice([INT64_MIN, INT64_MAX, 0, -1, 1, rng.randrange(-1000, 1000), rng.randrange(INT64_MIN, INT64_MAX)])


def rand_float(rng):
    if rng.random() < 0.3:
        return rng.choice(SPECIAL_FLOATS)
    return f32(rng.uniform(-1e6, 1e6))


def rand_bytes(rng):
    if rng.random() < 0.4:
        return rng.choice(NOT_UTF8)
    return rng.randbytes(rng.randrange(0, 12))


def rand_text(rng):
    return rng.choice(TEXT) if rng.random() < 0.5 else "".join(rng.choice("abcé✓ ") for _ in range(rng.randrange(6)))


def rand_values(rng, dtype, n):
    gen = {"int64": rand_int64, "float": rand_float, "bytes": rand_bytes, "string": lambda g: rand_text(g).encode()}
    return [gen[dtype](rng) for _ in range(n)]


def feature(dtype, values):
    if dtype in ("int64", "int32", "bool"):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))
    if dtype in ("float", "double"):
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


def values_of(f):
    """A feature's values, or None when no list kind is set."""
    kind = f.WhichOneof("kind")
    return None if kind is None else list(getattr(f, kind).value)


def present(feats, key):
    """Whether a record holds `key` with a list kind set: a feature with none is an absent
    feature (as TensorFlow reads a fixed one and tfx_bsl gives it: null)."""
    return key in feats and feats[key].WhichOneof("kind") is not None


def norm(x):
    """A value as compared: floats by their bit pattern (as float64, which float32 widens to
    exactly), text as its UTF-8 bytes."""
    if x is None or isinstance(x, (bool, bytes)):
        return x
    if isinstance(x, np.generic):
        return norm(x.item())
    if isinstance(x, int):
        return x
    if isinstance(x, float):
        return ("float", struct.pack("<d", x).hex())
    if isinstance(x, str):
        return x.encode()
    if isinstance(x, (list, tuple)):
        return [norm(v) for v in x]
    if isinstance(x, dict):
        return {k: norm(v) for k, v in x.items()}
    raise TypeError(f"cannot compare {type(x)}")


def type_text(t):
    """An Arrow type spelled with every child field's name and nullability."""
    if pa.types.is_struct(t):
        return "struct<" + ", ".join(field_text(t.field(i)) for i in range(t.num_fields)) + ">"
    if pa.types.is_fixed_size_list(t):
        return f"fixed_size_list<{field_text(t.value_field)}>[{t.list_size}]"
    if pa.types.is_large_list(t):
        return f"large_list<{field_text(t.value_field)}>"
    if pa.types.is_list(t):
        return f"list<{field_text(t.value_field)}>"
    return str(t)


def field_text(f):
    return f"{f.name}: {type_text(f.type)}{'' if f.nullable else ' not null'}"


def limited(diffs, limit=12):
    more = f"\n... and {len(diffs) - limit} more" if len(diffs) > limit else ""
    return "\n".join(diffs[:limit]) + more


# ---------------------------------------------------------------------------------------------
# The documented mapping, modelled from a TOML spec (a spec written here, or the one a Parquet
# file carries in its `tfrecord.spec` metadata)


class Feat:
    """One feature of a spec: its kind, shape, presence and keys, read from its TOML table."""

    def __init__(self, table, name, d):
        self.table, self.name = table, name
        self.dtype = d["dtype"]
        shape = list(d.get("shape", []))
        kind = d.get("kind")
        if kind is None:
            unknown_rows = bool(shape) and shape[0] == -1
            kind = "sequence" if table == "sequence" or unknown_rows else "fixed"
        if kind == "sequence" and shape and shape[0] == -1:
            shape = shape[1:]
        self.kind, self.shape = kind, shape
        self.n = math.prod(shape)
        self.default = d.get("default")
        self.optional = bool(d.get("optional", False))
        self.allow_missing = bool(d.get("allow_missing", False)) or (kind == "sequence" and table == "features")
        ik = d.get("index_key", [])
        self.index_keys = [ik] if isinstance(ik, str) else list(ik)
        self.value_key = d.get("value_key", name)
        self.partitions = [next(iter(p.items())) for p in d.get("partitions", [])]

    @property
    def steps(self):
        return self.table == "sequence"

    def levels(self):
        """The Arrow nesting, outermost first: "list", or an int for a fixed-size list."""
        if self.steps:
            return ["list", "list"] if self.kind == "var" else ["list", *self.shape]
        return {
            "fixed": list(self.shape),
            "var": ["list"],
            "sequence": ["list", *self.shape],
            "sparse": ["list"],
            "ragged": ["list"] * (len(self.partitions) + 1),
        }[self.kind]

    def nullable(self):
        if self.kind == "fixed":
            return self.optional
        if self.steps and self.kind == "sequence":
            return self.allow_missing
        return True

    def arrow_type(self, large=False):
        t = value_type(self.dtype, large)
        if self.kind == "sparse":
            t = pa.struct(
                [pa.field(k, pa.int64(), nullable=False) for k in self.index_keys]
                + [pa.field(self.value_key, t, nullable=False)]
            )
        for level in reversed(self.levels()):
            item = pa.field("item", t, nullable=False)
            if level == "list":
                t = pa.large_list(item) if large else pa.list_(item)
            else:
                t = pa.list_(item, level)
        return t

    def default_values(self):
        d = self.default if isinstance(self.default, list) else [self.default]
        if self.dtype in ("bytes", "string"):
            d = [v.encode() if isinstance(v, str) else v for v in d]
        return d * self.n if len(d) == 1 else d

    def cell(self, feats, lists=None):
        """The documented Arrow cell of this feature for a record whose features (or context)
        are `feats` and feature lists `lists`: from the protobuf messages."""
        if self.steps:
            if self.name not in lists:
                if not self.nullable():
                    raise Fail(f"the data lacks the required feature list {self.name!r}")
                return None
            out = []
            for step in lists[self.name].feature:
                vals = values_of(step)
                if self.kind == "var":
                    out.append(vals or [])
                else:
                    out.append(shaped(vals or [], self.shape, self.name))
            return out
        if self.kind == "fixed":
            vals = values_of(feats[self.name]) if self.name in feats else None
            if vals is None:
                if self.default is not None:
                    return shaped(self.default_values(), self.shape, self.name)
                if self.optional:
                    return None
                raise Fail(f"the data lacks the required feature {self.name!r}")
            return shaped(vals, self.shape, self.name)
        if self.kind == "var":
            return values_of(feats[self.name]) if present(feats, self.name) else None
        if self.kind == "sequence":
            if not present(feats, self.name):
                return None
            vals = values_of(feats[self.name]) or []
            row = max(self.n, 1)
            return [shaped(vals[i : i + row], self.shape, self.name) for i in range(0, len(vals), row)]
        if self.kind == "sparse":
            if not present(feats, self.value_key):
                return None
            vals = values_of(feats[self.value_key])
            index = [values_of(feats[k]) if present(feats, k) else [] for k in self.index_keys]
            entries = []
            for i, v in enumerate(vals):
                e = {k: index[d][i] for d, k in enumerate(self.index_keys)}
                e[self.value_key] = v
                entries.append(e)
            return entries
        # ragged
        keys = [self.value_key] + [v for kind, v in self.partitions if kind != "uniform_row_length"]
        if not any(present(feats, k) for k in keys):
            return None
        cur = values_of(feats[self.value_key]) if present(feats, self.value_key) else []
        for kind, v in reversed(self.partitions):
            if kind == "uniform_row_length":
                splits = list(range(0, len(cur) + 1, v))
            else:
                p = values_of(feats[v]) if present(feats, v) else []
                if kind == "row_splits":
                    splits = p or [0]
                elif kind == "row_lengths":
                    splits = [0]
                    for n in p:
                        splits.append(splits[-1] + n)
                else:
                    raise Fail(f"the model has no partition {kind}")
            cur = [cur[a:b] for a, b in itertools.pairwise(splits)]
        return cur


def shaped(vals, shape, name):
    """Flat values nested into a fixed shape (a scalar for `[]`)."""
    if len(vals) != math.prod(shape):
        raise Fail(f"the data gives {name!r} {len(vals)} values for shape {shape}")
    if not shape:
        return vals[0]
    if len(shape) == 1:
        return list(vals)
    size = math.prod(shape[1:])
    return [shaped(vals[i * size : (i + 1) * size], shape[1:], name) for i in range(shape[0])]


def value_type(dtype, large=False):
    return {
        "int64": pa.int64(),
        "int32": pa.int32(),
        "bool": pa.bool_(),
        "float": pa.float32(),
        "double": pa.float64(),
        "bytes": pa.large_binary() if large else pa.binary(),
        "string": pa.large_string() if large else pa.string(),
    }[dtype]


def spec_feats(toml_text):
    """The features of the one record of a TOML spec, in order, and the record's kind."""
    doc = tomllib.loads(toml_text)
    (record,) = doc["records"].values()
    feats = []
    for table in ("features", "context", "sequence"):
        for name, d in record.get(table, {}).items():
            feats.append(Feat(table, name, d))
    return feats, record.get("kind", "example")


def feat_summary(f):
    return (f.table, f.name, f.kind, f.dtype, f.shape, f.nullable(), f.index_keys, f.value_key,
            f.partitions, f.default_values() if f.default is not None else None)


# ---------------------------------------------------------------------------------------------
# Comparing a Parquet file with the records


def parquet_spec(table):
    meta = table.schema.metadata or {}
    if SPEC_KEY not in meta:
        raise Fail(f"the Parquet schema has no {SPEC_KEY.decode()} metadata: {short(meta)}")
    return meta[SPEC_KEY].decode()


def check_types(table, feats, large=False, ordered=True):
    diffs = []
    names = [f.name for f in feats]
    got_names = table.schema.names
    if (got_names if ordered else sorted(got_names)) != (names if ordered else sorted(names)):
        diffs.append(f"columns {got_names}, the spec has {names}")
    for f in feats:
        if f.name not in got_names:
            continue
        field = table.schema.field(f.name)
        want = pa.field(f.name, f.arrow_type(large), nullable=f.nullable())
        if field_text(field) != field_text(want) or field.type != want.type:
            diffs.append(f"column {f.name!r} ({f.kind}):\n  found    {field_text(field)}\n  expected {field_text(want)}")
    if diffs:
        raise Fail(limited(diffs))


def check_cells(table, feats, records, sequence=False):
    """Every cell of `table` against the documented cell of the protobuf record."""
    if table.num_rows != len(records):
        raise Fail(f"{table.num_rows} rows, the file holds {len(records)} records")
    rows = table.to_pylist()
    diffs = []
    for i, (row, raw) in enumerate(zip(rows, records)):
        if sequence:
            m = SequenceExample.FromString(raw)
            feats_map, lists = m.context.feature, m.feature_lists.feature_list
        else:
            feats_map, lists = Example.FromString(raw).features.feature, None
        for f in feats:
            want = f.cell(feats_map, lists)
            got = row.get(f.name)
            if norm(got) != norm(want):
                diffs.append(f"row {i} column {f.name!r}:\n  parquet  {short(got)}\n  records  {short(want)}")
    if diffs:
        raise Fail(limited(diffs))


def check_coverage(table, feats, records, sequence=False):
    """The data holds what the checks claim: per feature a null row and a non-null one where
    nullable, an empty list and a non-empty one where a list, a record needing the default
    where there is one."""
    rows = table.to_pylist()
    gaps = []
    for f in feats:
        cells = [r[f.name] for r in rows]
        # (Sparse rows are all present here: a separate check covers an absent sparse feature.)
        if f.nullable() and f.kind != "sparse" and (None not in cells or all(c is None for c in cells)):
            gaps.append(f"{f.name}: no null row, or only null rows")
        if f.levels() and f.levels()[0] == "list" and not ([] in cells and any(c for c in cells)):
            gaps.append(f"{f.name}: no empty list, or only empty lists")
        if f.default is not None and not sequence:
            maps = [Example.FromString(r).features.feature for r in records]
            if all(f.name in m and m[f.name].WhichOneof("kind") for m in maps):
                gaps.append(f"{f.name}: no record takes the default")
    if gaps:
        raise Fail("the data does not cover the cases the check is about:\n" + limited(gaps))


def tf_dtype(dtype):
    return {"int64": tf.int64, "float": tf.float32, "bytes": tf.string, "string": tf.string}[dtype]


def check_against_parse_example(table, feats, records):
    """Sparse and ragged rows against `tf.io.parse_example` with the equivalent feature spec:
    the same entries per row (sparse: as a set, TensorFlow sorts them), the same nested lists
    (ragged; a null row is TensorFlow's empty row)."""
    ctor = {"row_lengths": tf.io.RaggedFeature.RowLengths, "row_splits": tf.io.RaggedFeature.RowSplits,
            "uniform_row_length": tf.io.RaggedFeature.UniformRowLength}
    desc = {}
    for f in feats:
        if f.kind == "sparse":
            ik = f.index_keys[0] if len(f.index_keys) == 1 else f.index_keys
            size = SPARSE_SIZES[f.name]
            desc[f.name] = tf.io.SparseFeature(ik, f.value_key, tf_dtype(f.dtype), size[0] if len(size) == 1 else size)
        elif f.kind == "ragged":
            parts = tuple(ctor[k](v) for k, v in f.partitions)
            desc[f.name] = tf.io.RaggedFeature(tf_dtype(f.dtype), value_key=f.value_key, partitions=parts,
                                               row_splits_dtype=tf.int64)
    parsed = tf.io.parse_example(tf.constant(records), desc)
    rows = table.to_pylist()
    diffs = []
    for name, t in parsed.items():
        f = next(x for x in feats if x.name == name)
        if f.kind == "sparse":
            want = [[] for _ in rows]
            for idx, v in zip(t.indices.numpy().tolist(), t.values.numpy().tolist()):
                want[idx[0]].append((tuple(idx[1:]), norm(v)))
            for i, row in enumerate(rows):
                got = sorted((tuple(e[k] for k in f.index_keys), norm(e[f.value_key])) for e in row[name] or [])
                if got != sorted(want[i]):
                    diffs.append(f"row {i} sparse {name!r}:\n  parquet          {short(got)}\n  tf.parse_example {short(sorted(want[i]))}")
        else:
            want = t.to_list()
            for i, row in enumerate(rows):
                got = row[name] if row[name] is not None else []
                if norm(got) != norm(want[i]):
                    diffs.append(f"row {i} ragged {name!r}:\n  parquet          {short(got)}\n  tf.parse_example {short(want[i])}")
    if diffs:
        raise Fail(limited(diffs))


def read_parquet(path):
    return pq.read_table(path)


# ---------------------------------------------------------------------------------------------
# Examples: a spec with every kind, and records TensorFlow writes for it

EXAMPLE_SPEC = """\
[records.Ex]

[records.Ex.features.id]
dtype = "int64"

[records.Ex.features.label]
dtype = "int64"
default = -1

[records.Ex.features.weight]
dtype = "float"
optional = true

[records.Ex.features.title]
dtype = "string"
optional = true

[records.Ex.features.blob]
dtype = "bytes"
default = "none"

[records.Ex.features.rgb]
dtype = "float"
shape = [3]
default = 0.5

[records.Ex.features.grid]
dtype = "int64"
shape = [2, 3]

[records.Ex.features.cube]
dtype = "bytes"
shape = [2, 1, 2]
optional = true

[records.Ex.features.tags]
dtype = "string"
kind = "var"

[records.Ex.features.raw]
dtype = "bytes"
kind = "var"

[records.Ex.features.scores]
dtype = "float"
kind = "var"

[records.Ex.features.ids]
dtype = "int64"
kind = "var"

[records.Ex.features.boxes]
dtype = "float"
shape = [-1, 4]

[records.Ex.features.points]
dtype = "int64"
kind = "sequence"
shape = [2]

[records.Ex.features.sp1]
dtype = "float"
kind = "sparse"
index_key = "sp1/i"
value_key = "sp1/v"
size = [10]

[records.Ex.features.sp2]
dtype = "string"
kind = "sparse"
index_key = ["sp2/r", "sp2/c"]
size = [4, 5]

[records.Ex.features.rl]
dtype = "int64"
kind = "ragged"
partitions = [{ row_lengths = "rl/lengths" }]

[records.Ex.features.rs]
dtype = "float"
kind = "ragged"
value_key = "rs/values"
partitions = [{ row_splits = "rs/splits" }]

[records.Ex.features.ru]
dtype = "bytes"
kind = "ragged"
partitions = [{ uniform_row_length = 2 }]

[records.Ex.features.rn]
dtype = "string"
kind = "ragged"
partitions = [{ row_lengths = "rn/outer" }, { uniform_row_length = 2 }]

[records.Ex.features.rf]
dtype = "int64"
kind = "ragged"
"""
SPARSE_SIZES = {"sp1": [10], "sp2": [4, 5]}


def gen_example(rng, exact=False, sparse_absent=False):
    """An Example for EXAMPLE_SPEC. With `exact`, only what the mapping writes back as it was
    (no feature without a kind, no absent feature that has a default, no keys outside the
    spec); `sparse_absent` leaves out the sparse features' keys."""
    f = {}

    def maybe(key, dtype, values, absent=0.15, kindless=0.1):
        r = rng.random()
        if r < absent:
            return
        if r < absent + kindless and not exact:
            f[key] = tf.train.Feature()
            return
        f[key] = feature(dtype, values)

    f["id"] = feature("int64", [rand_int64(rng)])
    maybe("label", "int64", [rand_int64(rng)], absent=0 if exact else 0.15)
    maybe("weight", "float", [rand_float(rng)])
    maybe("title", "string", [rand_text(rng).encode()], kindless=0)
    maybe("blob", "bytes", [rand_bytes(rng)], absent=0 if exact else 0.15)
    maybe("rgb", "float", rand_values(rng, "float", 3), absent=0 if exact else 0.15)
    f["grid"] = feature("int64", rand_values(rng, "int64", 6))
    maybe("cube", "bytes", rand_values(rng, "bytes", 4))
    for key, dtype in (("tags", "string"), ("raw", "bytes"), ("scores", "float"), ("ids", "int64")):
        maybe(key, dtype, rand_values(rng, dtype, rng.choice([0, 0, 1, 2, 5])))
    maybe("boxes", "float", rand_values(rng, "float", 4 * rng.randrange(4)))
    maybe("points", "int64", rand_values(rng, "int64", 2 * rng.randrange(4)))
    if not sparse_absent:
        cells = rng.sample(range(10), rng.randrange(0, 5))
        f["sp1/i"] = feature("int64", cells)
        f["sp1/v"] = feature("float", rand_values(rng, "float", len(cells)))
        cells = rng.sample([(r, c) for r in range(4) for c in range(5)], rng.randrange(0, 5))
        f["sp2/r"] = feature("int64", [r for r, _ in cells])
        f["sp2/c"] = feature("int64", [c for _, c in cells])
        f["sp2"] = feature("string", rand_values(rng, "string", len(cells)))
    if rng.random() < 0.85:
        lengths = [rng.randrange(4) for _ in range(rng.randrange(4))]
        f["rl/lengths"] = feature("int64", lengths)
        f["rl"] = feature("int64", rand_values(rng, "int64", sum(lengths)))
    if rng.random() < 0.85:
        lengths = [rng.randrange(4) for _ in range(rng.randrange(4))]
        splits = [0]
        for n in lengths:
            splits.append(splits[-1] + n)
        f["rs/splits"] = feature("int64", splits)
        f["rs/values"] = feature("float", rand_values(rng, "float", splits[-1]))
    if rng.random() < 0.85:
        f["ru"] = feature("bytes", rand_values(rng, "bytes", 2 * rng.randrange(4)))
    if rng.random() < 0.85:
        outer = [rng.randrange(3) for _ in range(rng.randrange(4))]
        f["rn/outer"] = feature("int64", outer)
        f["rn"] = feature("string", rand_values(rng, "string", 2 * sum(outer)))
    if rng.random() < 0.85:
        f["rf"] = feature("int64", rand_values(rng, "int64", rng.randrange(4)))
    if not exact:
        # Keys outside the spec (the inferred spec leaves out the no-kind one).
        f["extra/no kind"] = tf.train.Feature()
        if rng.random() < 0.5:
            f["extra/bytes"] = feature("bytes", [rand_bytes(rng)])
    return Example(features=tf.train.Features(feature=f))


SEQUENCE_SPEC = """\
[records.Seq]
kind = "sequence_example"

[records.Seq.context.length]
dtype = "int64"

[records.Seq.context.lang]
dtype = "string"
default = "en"

[records.Seq.context.score]
dtype = "float"
optional = true

[records.Seq.context.ids]
dtype = "int64"
kind = "var"

[records.Seq.sequence.tokens]
dtype = "string"
kind = "var"

[records.Seq.sequence.frames]
dtype = "float"
shape = [3]
allow_missing = true

[records.Seq.sequence.labels]
dtype = "int64"

[records.Seq.sequence.audio]
dtype = "bytes"
kind = "var"
"""


def gen_sequence_example(rng, exact=False):
    ctx = {"length": feature("int64", [rand_int64(rng)])}
    if exact or rng.random() < 0.8:
        ctx["lang"] = feature("string", [rand_text(rng).encode()])
    if rng.random() < 0.7:
        ctx["score"] = feature("float", [rand_float(rng)])
    r = rng.random()
    if r < 0.7:
        ctx["ids"] = feature("int64", rand_values(rng, "int64", rng.randrange(4)))
    elif r < 0.8 and not exact:
        ctx["ids"] = tf.train.Feature()
    lists = {}

    def steps(key, dtype, count, kindless):
        out = []
        for _ in range(rng.randrange(5)):
            if kindless and not exact and rng.random() < 0.15:
                out.append(tf.train.Feature())
            else:
                out.append(feature(dtype, rand_values(rng, dtype, count())))
        lists[key] = tf.train.FeatureList(feature=out)

    if rng.random() < 0.8:
        steps("tokens", "string", lambda: rng.randrange(4), kindless=True)
    if rng.random() < 0.7:
        steps("frames", "float", lambda: 3, kindless=False)
    steps("labels", "int64", lambda: 1, kindless=False)
    if rng.random() < 0.7:
        steps("audio", "bytes", lambda: rng.randrange(3), kindless=True)
    if not exact and rng.random() < 0.3:
        lists["extra"] = tf.train.FeatureList(feature=[feature("int64", [1])])
    return SequenceExample(
        context=tf.train.Features(feature=ctx),
        feature_lists=tf.train.FeatureLists(feature_list=lists),
    )


def tf_write(path, msgs):
    with tf.io.TFRecordWriter(path) as w:
        for m in msgs:
            w.write(m.SerializeToString(deterministic=True))


def tf_read(path):
    return [r.numpy() for r in tf.data.TFRecordDataset(path)]


def write_ofrecords(path, msgs):
    """OneFlow's documented writer: a native int64 length, then the message."""
    with open(path, "wb") as f:
        for m in msgs:
            b = m.SerializeToString(deterministic=True)
            f.write(struct.pack("q", len(b)))
            f.write(b)


# ---------------------------------------------------------------------------------------------
# Tables pyarrow writes


def nullable(rng, value, p=0.2):
    return None if rng.random() < p else value


def foreign_table(rng, n):
    """A table of every column type the mapping reads, in pyarrow's own spellings (list items
    nullable by default, but holding no null)."""
    def item(t):
        return pa.field("item", t, nullable=False)

    # Within a float's range (a finite double beyond it is refused when narrowed: see
    # `doubles_beyond_the_float_range`), and FLT_MAX itself.
    def f64(g):
        return g.choice([0.1, 1 / 3, -0.0, math.nan, math.inf, 1e38, -1e-50, 2.0**-149 * 1.5,
                         3.4028234663852886e38, 123456789.123, g.uniform(-1e10, 1e10)])

    cols = {
        "i64": (pa.int64(), False, lambda g: rand_int64(g)),
        "i64n": (pa.int64(), True, lambda g: rand_int64(g)),
        "i32": (pa.int32(), False, lambda g: g.choice([INT32_MIN, INT32_MAX, 0, g.randrange(-99, 99)])),
        "f32": (pa.float32(), True, rand_float),
        "f64": (pa.float64(), False, f64),
        "flag": (pa.bool_(), True, lambda g: g.random() < 0.5),
        "s": (pa.string(), False, rand_text),
        "ls": (pa.large_string(), True, rand_text),
        "b": (pa.binary(), True, rand_bytes),
        "li": (pa.list_(pa.int64()), True, lambda g: rand_values(g, "int64", g.choice([0, 1, 3]))),
        "lf": (pa.large_list(item(pa.float32())), True, lambda g: rand_values(g, "float", g.randrange(4))),
        "lsn": (pa.list_(pa.string()), True, lambda g: [rand_text(g) for _ in range(g.randrange(3))]),
        "lb": (pa.list_(item(pa.binary())), False, lambda g: rand_values(g, "bytes", g.randrange(3))),
        "fsl": (pa.list_(pa.float32(), 3), True, lambda g: rand_values(g, "float", 3)),
        "fsl2": (pa.list_(item(pa.list_(item(pa.int64()), 2)), 2), False,
                 lambda g: [rand_values(g, "int64", 2) for _ in range(2)]),
        "fsl2n": (pa.list_(pa.list_(pa.string(), 2), 3), True, lambda g: [[rand_text(g), rand_text(g)] for _ in range(3)]),
        "seq": (pa.list_(pa.list_(pa.float32(), 2)), True,
                lambda g: [rand_values(g, "float", 2) for _ in range(g.randrange(3))]),
    }
    arrays, fields = [], []
    for name, (t, null, gen) in cols.items():
        vals = [nullable(rng, gen(rng)) if null else gen(rng) for _ in range(n)]
        arrays.append(pa.array(vals, type=t))
        fields.append(pa.field(name, t, nullable=null))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def flatten(v):
    if isinstance(v, list):
        return [x for e in v for x in flatten(e)]
    return [v]


def base_type(t):
    while pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        t = t.value_type
    return t


def record_from_row(row, schema, of):
    """The features a row becomes, by the documented mapping: {key: (list kind, values)}, a
    null cell left out. `of`: OFRecord's list kinds (int32 and double kept), else an Example's
    (int32 and bool as int64, float64 rounded to float32)."""
    out = {}
    for field in schema:
        v = row[field.name]
        if v is None:
            continue
        vals = flatten(v)
        t = base_type(field.type)
        if pa.types.is_int32(t) and of:
            out[field.name] = ("int32_list", vals)
        elif pa.types.is_integer(t) or pa.types.is_boolean(t):
            out[field.name] = ("int64_list", [int(x) for x in vals])
        elif pa.types.is_float64(t) and of:
            out[field.name] = ("double_list", vals)
        elif pa.types.is_floating(t):
            out[field.name] = ("float_list", [f32(x) for x in vals])
        elif pa.types.is_string(t) or pa.types.is_large_string(t):
            out[field.name] = ("bytes_list", [x.encode() for x in vals])
        else:
            out[field.name] = ("bytes_list", vals)
    return out


def compare_records(got_msgs, rows, schema, of, what):
    diffs = []
    if len(got_msgs) != len(rows):
        diffs.append(f"{what}: {len(got_msgs)} records for {len(rows)} rows")
    for i, (m, row) in enumerate(zip(got_msgs, rows)):
        fmap = m.feature if of else m.features.feature
        got = {k: (f.WhichOneof("kind"), list(getattr(f, f.WhichOneof("kind")).value) if f.WhichOneof("kind") else None)
               for k, f in fmap.items()}
        want = record_from_row(row, schema, of)
        if set(got) != set(want):
            diffs.append(f"{what} record {i}: keys {sorted(got)}, the row's non-null columns {sorted(want)}")
        for k in sorted(set(got) & set(want)):
            if got[k][0] != want[k][0] or norm(got[k][1]) != norm(want[k][1]):
                diffs.append(f"{what} record {i} key {k!r}:\n  records {short(got[k])}\n  table   {short(want[k])}")
    if diffs:
        raise Fail(limited(diffs))


def rows_equal(got, want, what):
    """Two tables: the same schema (names, types, nullability; not the metadata) and the same
    cells (floats by bit pattern)."""
    diffs = []
    gs = [field_text(f) for f in got.schema]
    ws = [field_text(f) for f in want.schema]
    if gs != ws:
        diffs.append(f"{what}: schema\n  found    {gs}\n  expected {ws}")
    g, w = got.to_pylist(), want.to_pylist()
    if len(g) != len(w):
        diffs.append(f"{what}: {len(g)} rows, expected {len(w)}")
    for i, (a, b) in enumerate(zip(g, w)):
        for k in b:
            if norm(a.get(k)) != norm(b[k]):
                diffs.append(f"{what} row {i} column {k!r}:\n  found    {short(a.get(k))}\n  expected {short(b[k])}")
    if diffs:
        raise Fail(limited(diffs))


# The table of the types the mapping keeps, and the spec that `from-parquet` reads off it.
def kept_table(rng, n, of):
    def item(t):
        return pa.field("item", t, nullable=False)

    cols = [
        ("i64", pa.int64(), False, rand_int64),
        ("i64n", pa.int64(), True, rand_int64),
        ("f32", pa.float32(), True, rand_float),
        ("s", pa.string(), False, rand_text),
        ("sn", pa.string(), True, rand_text),
        ("b", pa.binary(), True, rand_bytes),
        ("li", pa.list_(item(pa.int64())), True, lambda g: rand_values(g, "int64", g.randrange(4))),
        ("lb", pa.list_(item(pa.binary())), True, lambda g: rand_values(g, "bytes", g.randrange(3))),
        ("ls", pa.list_(item(pa.string())), True, lambda g: [rand_text(g) for _ in range(g.randrange(3))]),
        ("fsl", pa.list_(item(pa.float32()), 3), True, lambda g: rand_values(g, "float", 3)),
        ("fsl2", pa.list_(item(pa.list_(item(pa.int64()), 2)), 2), False,
         lambda g: [rand_values(g, "int64", 2) for _ in range(2)]),
        ("seq", pa.list_(item(pa.list_(item(pa.float32()), 2))), True,
         lambda g: [rand_values(g, "float", 2) for _ in range(g.randrange(3))]),
    ]
    if of:
        cols += [
            ("i32", pa.int32(), False, lambda g: g.choice([INT32_MIN, INT32_MAX, 0, g.randrange(-99, 99)])),
            ("i32n", pa.int32(), True, lambda g: g.randrange(INT32_MIN, INT32_MAX)),
            ("f64", pa.float64(), True, lambda g: g.choice([0.1, 1 / 3, -0.0, math.nan, 1e300, 2.0**-1074])),
            ("lf64", pa.list_(item(pa.float64())), True, lambda g: [g.uniform(-1e9, 1e9) for _ in range(g.randrange(3))]),
        ]
    else:
        cols += [("flag", pa.bool_(), True, lambda g: g.random() < 0.5)]
    arrays, fields = [], []
    for name, t, null, gen in cols:
        vals = [nullable(rng, gen(rng)) if null else gen(rng) for _ in range(n)]
        arrays.append(pa.array(vals, type=t))
        fields.append(pa.field(name, t, nullable=null))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def spec_of_table(schema, of, record="Kept"):
    """The TOML spec of the documented reading of a foreign schema: a value a fixed scalar
    (optional when nullable), nested fixed-size lists a fixed shape, a list `var`, a list of
    fixed-size lists a sequence. `of`: for OFRecord, whose double lists hold float64."""
    dtypes = {pa.int64(): "int64", pa.int32(): "int32", pa.bool_(): "bool", pa.float32(): "float",
              pa.float64(): "double", pa.string(): "string", pa.binary(): "bytes"}
    out = [f"[records.{record}]"] + (['dialect = "ofrecord"'] if of else [])
    for field in schema:
        t = field.type
        lines = []
        is_list = pa.types.is_list(t)
        if is_list:
            t = t.value_type
        shape = []
        while pa.types.is_fixed_size_list(t):
            shape.append(t.list_size)
            t = t.value_type
        lines.append(f'dtype = "{dtypes[t]}"')
        if is_list and not shape:
            lines.append('kind = "var"')
        elif is_list:
            lines.append(f"shape = {[-1, *shape]}")
        else:
            if shape:
                lines.append(f"shape = {shape}")
            if field.nullable:
                lines.append("optional = true")
        out += ["", f"[records.{record}.features.{field.name}]", *lines]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# Running the binary and the checks


class Cli:
    def __init__(self, binary):
        self.binary = binary

    def run(self, args, ok=True):
        p = subprocess.run([self.binary, *args], capture_output=True, stdin=subprocess.DEVNULL, check=False)
        if ok and p.returncode != 0:
            raise Fail(f"tfrecord {' '.join(args)} exited {p.returncode}:\n{p.stderr.decode(errors='replace')}")
        return p

    def fails(self, args, *needles):
        """Runs a command that must fail, its message naming each of `needles`."""
        p = self.run(args, ok=False)
        err = p.stderr.decode(errors="replace")
        if p.returncode == 0:
            raise Fail(f"tfrecord {' '.join(args)} succeeded, expected a failure")
        missing = [n for n in needles if n not in err]
        if missing:
            raise Fail(f"tfrecord {' '.join(args)}: the message does not name {missing}:\n{err}")
        return err


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="the tfrecord binary")
    ap.add_argument("--seed", type=int, default=20240615)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    if not os.access(binary, os.X_OK):
        sys.exit(f"check_arrow.py: {binary} is not an executable")
    tmp = tempfile.mkdtemp(prefix="tfrecord-arrow-")
    runner = Runner()
    try:
        run_all(runner, Cli(binary), tmp, random.Random(args.seed))
    finally:
        if args.keep:
            print(f"(kept {tmp})")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"{runner.passed} passed, {runner.failed} failed")
    return 1 if runner.failed else 0


def run_all(R, cli, tmp, rng):
    def path(name):
        return os.path.join(tmp, name)

    def write_spec(name, text):
        with open(path(name), "w", encoding="utf-8") as f:
            f.write(text)
        return path(name)

    # -- 1. TensorFlow's Examples -> to-parquet -> pyarrow --------------------------------------
    ex_spec = write_spec("ex.toml", EXAMPLE_SPEC)
    ex_feats, _ = spec_feats(EXAMPLE_SPEC)
    ex_msgs = [gen_example(rng) for _ in range(120)]
    tf_write(path("ex.tfrecord"), ex_msgs)
    ex_records = tf_read(path("ex.tfrecord"))

    def to_parquet(src, out, *extra):
        cli.run(["to-parquet", *extra, src, "-o", path(out)])
        return read_parquet(path(out))

    def ex_types():
        table = to_parquet(path("ex.tfrecord"), "ex.parquet", "--spec", ex_spec)
        check_types(table, ex_feats)
        stored, _ = spec_feats(parquet_spec(table))
        if [feat_summary(f) for f in stored] != [feat_summary(f) for f in ex_feats]:
            raise Fail("the tfrecord.spec metadata differs from the spec given:\n"
                       + limited([f"  stored {feat_summary(a)}\n  given  {feat_summary(b)}"
                                  for a, b in zip(stored, ex_feats) if feat_summary(a) != feat_summary(b)]))

    def ex_cells():
        table = read_parquet(path("ex.parquet"))
        check_cells(table, ex_feats, ex_records)
        check_coverage(table, ex_feats, ex_records)

    def ex_parse_example():
        check_against_parse_example(read_parquet(path("ex.parquet")), ex_feats, ex_records)

    def ex_inferred():
        table = to_parquet(path("ex.tfrecord"), "ex-inferred.parquet")
        feats, _ = spec_feats(parquet_spec(table))
        if not feats or "extra/no kind" in [f.name for f in feats]:
            raise Fail(f"the inferred spec has features {[f.name for f in feats]}")
        check_types(table, feats)
        check_cells(table, feats, ex_records)

    def ex_options():
        # Other codecs, large lists, many batches and row groups: the same cells, the large
        # types, the codec and the row groups as the Parquet metadata says.
        # pyarrow names the LZ4_RAW codec (what `--codec lz4` writes, as pyarrow's own
        # `compression="lz4"` does) "LZ4" in its metadata.
        for codec, parquet_name in (("zstd", "ZSTD"), ("lz4", "LZ4"), ("gzip", "GZIP"), ("brotli", "BROTLI"),
                                    ("none", "UNCOMPRESSED")):
            out = f"ex-{codec}.parquet"
            table = to_parquet(path("ex.tfrecord"), out, "--spec", ex_spec, "--codec", codec, "--large-lists",
                               "--batch-size", "7", "--row-group-size", "16")
            check_types(table, ex_feats, large=True)
            check_cells(table, ex_feats, ex_records)
            meta = pq.ParquetFile(path(out)).metadata
            want_groups = -(-len(ex_records) // 16)
            if meta.num_row_groups != want_groups:
                raise Fail(f"--codec {codec}: {meta.num_row_groups} row groups, expected {want_groups}")
            got = meta.row_group(0).column(0).compression
            if got != parquet_name:
                raise Fail(f"--codec {codec}: the column chunks say {got}")

    R.check("Examples -> to-parquet --spec: Arrow types are the documented ones (and the spec is in the metadata)", ex_types)
    R.check("Examples -> to-parquet --spec: every cell equals the TensorFlow-written records", ex_cells)
    R.check("Examples -> to-parquet --spec: sparse and ragged rows equal tf.io.parse_example's", ex_parse_example)
    R.check("Examples -> to-parquet (spec inferred): documented types, every cell equal", ex_inferred)
    R.check("to-parquet --codec zstd/lz4/gzip/brotli/none --large-lists, small batches and row groups", ex_options)

    def sparse_absent():
        # A record without a sparse feature's keys: TensorFlow gives an empty row, the
        # documented layout a null row.
        msgs = [gen_example(rng, sparse_absent=i % 2 == 1) for i in range(6)]
        tf_write(path("sparse-absent.tfrecord"), msgs)
        records = tf_read(path("sparse-absent.tfrecord"))
        table = to_parquet(path("sparse-absent.tfrecord"), "sparse-absent.parquet", "--spec", ex_spec)
        check_types(table, ex_feats)
        check_cells(table, ex_feats, records)
        check_against_parse_example(table, ex_feats, records)

    R.check("a record without a sparse feature's keys is a null row (tf.io.parse_example: an empty row)", sparse_absent)

    # -- 2. SequenceExamples -------------------------------------------------------------------
    seq_spec = write_spec("seq.toml", SEQUENCE_SPEC)
    seq_feats, _ = spec_feats(SEQUENCE_SPEC)
    seq_msgs = [gen_sequence_example(rng) for _ in range(80)]
    tf_write(path("seq.tfrecord"), seq_msgs)
    seq_records = tf_read(path("seq.tfrecord"))

    def seq_with_spec():
        table = to_parquet(path("seq.tfrecord"), "seq.parquet", "--spec", seq_spec)
        check_types(table, seq_feats, ordered=False)
        check_cells(table, seq_feats, seq_records, sequence=True)
        check_coverage(table, seq_feats, seq_records, sequence=True)

    def seq_inferred():
        table = to_parquet(path("seq.tfrecord"), "seq-inferred.parquet", "--sequence")
        feats, kind = spec_feats(parquet_spec(table))
        if kind != "sequence_example" or not any(f.steps for f in feats):
            raise Fail(f"the inferred spec is a {kind} with features {[(f.table, f.name) for f in feats]}")
        check_types(table, feats, ordered=False)
        check_cells(table, feats, seq_records, sequence=True)

    R.check("SequenceExamples -> to-parquet --spec: documented types, every cell equal", seq_with_spec)
    R.check("SequenceExamples -> to-parquet --sequence (spec inferred): documented types, every cell equal", seq_inferred)

    # -- 3. pyarrow's Parquet -> from-parquet -> TensorFlow / OneFlow's reader -----------------
    foreign = [foreign_table(rng, 45), foreign_table(rng, 30)]
    pq.write_table(foreign[0], path("foreign-0.parquet"), compression="snappy", row_group_size=8)
    pq.write_table(foreign[1], path("foreign-1.parquet"), compression="zstd", row_group_size=11)
    foreign_paths = [path("foreign-0.parquet"), path("foreign-1.parquet")]
    foreign_read = [read_parquet(p) for p in foreign_paths]
    foreign_rows = [r for t in foreign_read for r in t.to_pylist()]

    def foreign_files_are_what_was_meant():
        # The inputs hold several row groups, both codecs and pyarrow's nullable list items.
        for p, codec in zip(foreign_paths, ("SNAPPY", "ZSTD")):
            meta = pq.ParquetFile(p).metadata
            if meta.num_row_groups < 3 or meta.row_group(0).column(0).compression != codec:
                raise Fail(f"{p}: {meta.num_row_groups} row groups, {meta.row_group(0).column(0).compression}")
        if not foreign_read[0].schema.field("li").type.value_field.nullable:
            raise Fail("the list column `li` should have nullable items")

    def foreign_to_tfrecord():
        out = path("foreign.tfrecord")
        cli.fails(["from-parquet", *foreign_paths, "-o", out], "f64", "--allow-lossy-double")
        if os.path.exists(out):
            raise Fail(f"the refused from-parquet left {out}")
        cli.run(["from-parquet", "--allow-lossy-double", *foreign_paths, "-o", out])
        msgs = [Example.FromString(r) for r in tf_read(out)]
        compare_records(msgs, foreign_rows, foreign_read[0].schema, of=False, what="TFRecord")

    def foreign_to_ofrecord():
        os.makedirs(path("of"), exist_ok=True)
        out = path("of/part-00000")
        cli.run(["from-parquet", *foreign_paths, "-o", out, "--output-format", "ofrecord"])
        compare_records(read_ofrecord_file(out), foreign_rows, foreign_read[0].schema, of=True, what="OFRecord")

    def dictionary_brotli():
        # Dictionary-encoded strings (pandas categoricals), at the top and inside lists, in a
        # brotli-compressed file: read as their values, nulls absent.
        cats = pa.array(["a", "b", None, "a"]).dictionary_encode()
        items = pa.array([["p"], ["q", "p"], [], None], type=pa.list_(pa.dictionary(pa.int32(), pa.string())))
        pq.write_table(pa.table({"c": cats, "l": items}), path("dict.parquet"), compression="brotli")
        if pq.ParquetFile(path("dict.parquet")).metadata.row_group(0).column(0).compression != "BROTLI":
            raise Fail("the input is not brotli-compressed")
        out = path("dict.tfrecord")
        cli.run(["from-parquet", path("dict.parquet"), "-o", out])
        got = []
        for r in tf_read(out):
            feats = Example.FromString(r).features.feature
            got.append({k: [v.decode() for v in feats[k].bytes_list.value] if k in feats else None
                        for k in ("c", "l")})
        want = [{"c": ["a"], "l": ["p"]}, {"c": ["b"], "l": ["q", "p"]}, {"c": None, "l": []},
                {"c": ["a"], "l": None}]
        if got != want:
            raise Fail(f"read back {got}, expected {want}")

    def doubles_beyond_the_float_range():
        # Narrowed to a float list, a finite double beyond the float's range would become
        # infinity: refused, naming the column and row; OFRecord keeps it exact.
        pq.write_table(pa.table({"d": pa.array([1.5, -1e300])}), path("big.parquet"))
        err = cli.fails(["from-parquet", "--allow-lossy-double", path("big.parquet"), "-o", path("big.tfrecord")],
                        "beyond the range of a float")
        if '"d"' not in err or "record 1" not in err:
            raise Fail(f"the error does not name the column and row: {err}")
        os.makedirs(path("big-of"), exist_ok=True)
        out = path("big-of/part-00000")
        cli.run(["from-parquet", path("big.parquet"), "-o", out, "--output-format", "ofrecord"])
        got = [list(m.feature["d"].double_list.value) for m in read_ofrecord_file(out)]
        if got != [[1.5], [-1e300]]:
            raise Fail(f"OFRecord holds {got}")

    def fixed_lists_without_the_arrow_schema():
        # Without the Arrow schema in the file (store_schema=False, as Spark and DuckDB write),
        # a fixed-size list comes back as a List: a spec's shape [2] reads it, a null row is an
        # absent feature, and a row of another length is refused, naming the row.
        rows = pa.array([[1.0, 2.0], [3.0, 4.0], None], type=pa.list_(pa.float32(), 2))
        pq.write_table(pa.table({"v": rows}), path("fsl.parquet"), store_schema=False)
        spec = path("fsl.toml")
        with open(spec, "w") as f:
            f.write('[records.R.features]\nv = { dtype = "float", shape = [2], optional = true }\n')
        out = path("fsl.tfrecord")
        cli.run(["from-parquet", "--spec", spec, path("fsl.parquet"), "-o", out])
        got = []
        for r in tf_read(out):
            feats = Example.FromString(r).features.feature
            got.append(list(feats["v"].float_list.value) if "v" in feats else None)
        if got != [[1.0, 2.0], [3.0, 4.0], None]:
            raise Fail(f"read back {got}")
        pq.write_table(pa.table({"v": pa.array([[1.0, 2.0], [3.0]], type=pa.list_(pa.float32()))}),
                       path("fsl-short.parquet"))
        err = cli.fails(["from-parquet", "--spec", spec, path("fsl-short.parquet"), "-o", path("fsl-short.tfrecord")],
                        "one holds 1")
        if "record 1" not in err:
            raise Fail(f"the error does not name the row: {err}")

    R.check("pyarrow's Parquet files hold what the checks below need", foreign_files_are_what_was_meant)
    R.check("pyarrow Parquet without the Arrow schema: a List of 2 items per row reads for shape [2]",
            fixed_lists_without_the_arrow_schema)
    R.check("from-parquet refuses to narrow a double beyond the float range; OFRecord keeps it",
            doubles_beyond_the_float_range)
    R.check("pyarrow Parquet (brotli, dictionary columns at the top and in lists) -> from-parquet -> TensorFlow",
            dictionary_brotli)
    R.check("pyarrow Parquet -> from-parquet (--allow-lossy-double; refused without) -> TensorFlow reads the table", foreign_to_tfrecord)
    R.check("pyarrow Parquet -> from-parquet --output-format ofrecord -> OneFlow's reader reads the table, doubles exact", foreign_to_ofrecord)

    # -- 4. Round trips -------------------------------------------------------------------------
    def cat_json(src, *extra):
        return cli.run(["cat", "--json", *extra, src]).stdout

    def round_trip(src, name, to_args, from_args, cat_args):
        pq_out = path(f"{name}.parquet")
        back = path(f"{name}.back")
        cli.run(["to-parquet", *to_args, src, "-o", pq_out])
        cli.run(["from-parquet", pq_out, "-o", back, *from_args])
        want, got = cat_json(src, *cat_args), cat_json(back, *cat_args)
        if got != want:
            gl, wl = got.splitlines(), want.splitlines()
            bad = [i for i in range(min(len(gl), len(wl))) if gl[i] != wl[i]]
            first = bad[0] if bad else min(len(gl), len(wl))
            raise Fail(f"{name}: cat --json differs ({len(gl)} lines, expected {len(wl)}); first at record {first}:\n"
                       f"  back  {short(gl[first] if first < len(gl) else None, 600)}\n"
                       f"  input {short(wl[first] if first < len(wl) else None, 600)}")

    rt_ex = [gen_example(rng, exact=True) for _ in range(60)]
    tf_write(path("rt-ex.tfrecord"), rt_ex)
    rt_seq = [gen_sequence_example(rng, exact=True) for _ in range(40)]
    tf_write(path("rt-seq.tfrecord"), rt_seq)
    rt_of = gen_ofrecords(rng, 50)
    write_ofrecords(path("rt.ofrecord"), rt_of)

    R.check("round trip: Examples -> to-parquet --spec -> from-parquet: cat --json identical",
            lambda: round_trip(path("rt-ex.tfrecord"), "rt-ex-spec", ["--spec", ex_spec], [], []))
    R.check("round trip: Examples -> to-parquet (inferred) -> from-parquet: cat --json identical",
            lambda: round_trip(path("rt-ex.tfrecord"), "rt-ex", [], [], []))
    R.check("round trip: SequenceExamples -> to-parquet --spec -> from-parquet: cat --json --sequence identical",
            lambda: round_trip(path("rt-seq.tfrecord"), "rt-seq-spec", ["--spec", seq_spec], [], ["--sequence"]))
    R.check("round trip: SequenceExamples -> to-parquet --sequence -> from-parquet: cat --json --sequence identical",
            lambda: round_trip(path("rt-seq.tfrecord"), "rt-seq", ["--sequence"], [], ["--sequence"]))
    R.check("round trip: OFRecords -> to-parquet --input-format ofrecord -> from-parquet --output-format ofrecord: identical",
            lambda: round_trip(path("rt.ofrecord"), "rt-of", ["--input-format", "ofrecord"],
                               ["--output-format", "ofrecord"], ["--input-format", "ofrecord"]))

    def table_round_trip(of):
        name = "kept-of" if of else "kept"
        table = kept_table(rng, 60, of)
        pq.write_table(table, path(f"{name}.parquet"), row_group_size=25)
        spec = write_spec(f"{name}.toml", spec_of_table(table.schema, of))
        records = path(f"{name}.records")
        fmt = ["--output-format", "ofrecord"] if of else []
        cli.run(["from-parquet", path(f"{name}.parquet"), "-o", records, *fmt])
        fmt = ["--input-format", "ofrecord"] if of else []
        back = to_parquet(records, f"{name}-back.parquet", "--spec", spec, *fmt)
        rows_equal(back, table, name)

    R.check("round trip: pyarrow -> from-parquet -> to-parquet -> pyarrow: the same table (TFRecord)",
            lambda: table_round_trip(False))
    R.check("round trip: pyarrow -> from-parquet -> to-parquet -> pyarrow: the same table (OFRecord: int32, float64)",
            lambda: table_round_trip(True))

    # -- 5. Errors ----------------------------------------------------------------------------
    def null_inside_list():
        t = pa.table({"ok": pa.array([1, 2, 3], pa.int64()),
                      "li": pa.array([[1], [2, None], []], pa.list_(pa.int64()))})
        pq.write_table(t, path("null-item.parquet"))
        out = path("null-item.tfrecord")
        err = cli.fails(["from-parquet", path("null-item.parquet"), "-o", out], "`li`", "null-item.parquet")
        if "null" not in err:
            raise Fail(f"the message does not say the value is null:\n{err}")
        if os.path.exists(out):
            raise Fail(f"the failed from-parquet left {out}")

    def string_not_utf8():
        msgs = [Example(features=tf.train.Features(feature={"name": feature("bytes", [v])}))
                for v in (b"fine", "ünï".encode(), b"bad \xff\xfe", b"ok")]
        tf_write(path("not-utf8.tfrecord"), msgs)
        spec = write_spec("not-utf8.toml", '[records.R.features.name]\ndtype = "string"\n')
        out = path("not-utf8.parquet")
        cli.fails(["to-parquet", "--spec", spec, path("not-utf8.tfrecord"), "-o", out],
                  '"name"', "record 2", "not-utf8.tfrecord")
        if os.path.exists(out):
            raise Fail(f"the failed to-parquet left {out}")
        # Without a spec the feature is inferred as bytes, and every value is kept.
        table = to_parquet(path("not-utf8.tfrecord"), "not-utf8-inferred.parquet")
        if table.schema.field("name").type != pa.binary() or table.column("name").to_pylist()[2] != b"bad \xff\xfe":
            raise Fail(f"inferred: {table.schema.field('name')}, {table.column('name').to_pylist()}")

    def existing_output():
        out = path("exists.parquet")
        with open(out, "wb") as f:
            f.write(b"keep me")
        cli.fails(["to-parquet", "--spec", ex_spec, path("ex.tfrecord"), "-o", out], "exists.parquet", "--force")
        rec = path("exists.tfrecord")
        with open(rec, "wb") as f:
            f.write(b"keep me")
        cli.fails(["from-parquet", path("ex.parquet"), "-o", rec], "exists.tfrecord", "--force")
        for p in (out, rec):
            with open(p, "rb") as f:
                if f.read() != b"keep me":
                    raise Fail(f"{p} was changed without --force")
        cli.run(["to-parquet", "--force", "--spec", ex_spec, path("ex.tfrecord"), "-o", out])
        cli.run(["from-parquet", "--force", out, "-o", rec])
        if tf_read(rec) != ex_records_written_back():
            raise Fail("--force outputs differ from the same commands' outputs to new files")

    def ex_records_written_back():
        cli.run(["from-parquet", path("ex.parquet"), "-o", path("ex-back.tfrecord")])
        return tf_read(path("ex-back.tfrecord"))

    R.check("from-parquet refuses a null inside a list, naming the column and the file", null_inside_list)
    R.check("to-parquet refuses a string feature that is not UTF-8, naming the key, record and file", string_not_utf8)
    R.check("to-parquet / from-parquet refuse an existing output without --force", existing_output)


def gen_ofrecords(rng, n):
    """OFRecords with all five list kinds, one kind per key; some keys absent."""
    out = []
    for _ in range(n):
        r = ofrecord.OFRecord()
        r.feature["i32"].int32_list.value.extend([rng.choice([INT32_MIN, INT32_MAX, 0, rng.randrange(-9, 9)])])
        if rng.random() < 0.8:
            r.feature["i64s"].int64_list.value.extend(rand_values(rng, "int64", rng.randrange(4)))
        r.feature["img"].float_list.value.extend(rand_values(rng, "float", 4))
        if rng.random() < 0.8:
            r.feature["dbl"].double_list.value.extend(
                rng.choice([0.1, 1 / 3, -0.0, math.nan, math.inf, 1e300, 2.0**-1074]) for _ in range(rng.randrange(3)))
        r.feature["raw"].bytes_list.value.extend(rand_values(rng, "bytes", rng.randrange(3)))
        if rng.random() < 0.7:
            r.feature["name"].bytes_list.value.extend([rand_text(rng).encode()])
        out.append(r)
    return out


if __name__ == "__main__":
    sys.exit(main())
