"""`tfrecord parse --spec` against the real `tf.io.parse_example` / `tf.io.parse_sequence_example`.

Each case draws a random feature spec and random records that fit it, from a fixed seed:

- Examples: `FixedLenFeature` scalars and shapes, with and without `default_value` (a
  shape's default sometimes one value in the TOML spec, which fills the shape, and the full
  tensor for TensorFlow, which refuses the scalar); `VarLenFeature` (sometimes with a declared
  `rank = 1`); `FixedLenSequenceFeature` with `allow_missing=True`, with and without a padding
  `default_value`, spelled in the TOML spec as `kind = "sequence"` or as a fixed shape whose
  first dimension is unknown (`shape = [-1, ...]`); `SparseFeature` with one and two index keys (sorted or `already_sorted`),
  their index and value counts sometimes differing per record but agreeing over the batch;
  `RaggedFeature` with `RowLengths`, `RowSplits`, `RowStarts`, `RowLimits`, `ValueRowIds` and
  `UniformRowLength` partitions (nested, int32 and int64 row splits), value row ids sometimes
  moved between records of a batch (and, in broken cases, one too many); every dtype.
- SequenceExamples: context `FixedLenFeature` / `VarLenFeature`, feature lists
  `FixedLenSequenceFeature` (with and without `allow_missing`) and `VarLenFeature`.

The spec is written both as a TensorFlow `feature_description` dict and as a TOML spec; the
records are written by TensorFlow (`tf.io.TFRecordWriter`, sometimes gzip). TensorFlow parses
them in batches (`tf.data.TFRecordDataset(path).batch(N)` then `tf.io.parse_example`), and
`tfrecord parse --spec SPEC --batch-size N` prints its JSON lines; every tensor of every batch
must agree: dense values and shapes, sparse indices / values / dense_shape, ragged flat values
and row splits (TensorFlow's inner uniform dimensions counted as row splits), floats by their
float32 bit patterns. A few cases break a record on purpose (a missing required feature, a
wrong value count, a wrong type): then both must fail.

Then specs TensorFlow refuses (`allow_missing=False` in an Example, two unknown dimensions) or
cannot state (a VarLen rank other than the data's): `parse` must refuse them too, naming the
feature. Last, records with a field of the wrong wire type at each level of the message:
`parse` and `cat --json` must read what TensorFlow reads and refuse what it refuses.

Prints one PASS/FAIL line per case and `N passed, M failed`; exits 1 on any failure.
"""

import argparse
import base64
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import tensorflow as tf
from checks import Fail

tf.get_logger().setLevel("ERROR")  # SparseFeature warns on every use


DTYPES = ["int64", "float", "bytes"]
TF_DTYPE = {"int64": tf.int64, "float": tf.float32, "bytes": tf.string}


# ---------------------------------------------------------------------------------------------
# Random values


def rand_f32(rng):
    c = rng.random()
    if c < 0.05:
        return rng.choice([0.0, -0.0, math.inf, -math.inf, math.nan, 3.4028234663852886e38, 1e-45])
    return struct.unpack("<f", struct.pack("<f", rng.uniform(-1e4, 1e4)))[0]


def rand_value(rng, dtype):
    if dtype == "int64":
        return rng.choice([rng.randrange(-1000, 1000), rng.randrange(-(2**63), 2**63)])
    if dtype == "float":
        return rand_f32(rng)
    n = rng.randrange(0, 6)
    if rng.random() < 0.2:
        return bytes(rng.randrange(256) for _ in range(n))
    return "".join(rng.choice("abcxyzé✓") for _ in range(n)).encode()


def rand_default(rng, dtype):
    """A default that TOML and TensorFlow both spell exactly (finite floats, UTF-8 text)."""
    if dtype == "int64":
        return rng.choice([0, -1, rng.randrange(-(2**63), 2**63)])
    if dtype == "float":
        return rng.choice([0.0, -0.0, 1.5, struct.unpack("<f", struct.pack("<f", rng.uniform(-100, 100)))[0], math.inf])
    return "".join(rng.choice("abc✓") for _ in range(rng.randrange(0, 4)))


def feature(dtype, values):
    if dtype == "int64":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    if dtype == "float":
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


def move_last_int(a, b, key):
    """Moves the last value of int64 feature `key` from record `a` to the front of record `b`
    (creating it there); False when `a` has none."""
    vals = list(a[key].int64_list.value) if key in a else []
    if not vals:
        return False
    last = vals.pop()
    a[key] = feature("int64", vals)
    b[key] = feature("int64", [last] + (list(b[key].int64_list.value) if key in b else []))
    return True


# ---------------------------------------------------------------------------------------------
# TOML


def toml_str(s):
    return json.dumps(s, ensure_ascii=False)


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return toml_str(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(v)


def spec_dtype(rng, dtype):
    return rng.choice(["bytes", "string"]) if dtype == "bytes" else dtype


# ---------------------------------------------------------------------------------------------
# Features: each knows its TF config, its TOML table, and how to fill a record.


class Fixed:
    def __init__(self, rng, name, table="features"):
        self.name, self.table = name, table
        self.dtype = rng.choice(DTYPES)
        self.shape = rng.choice([[], [], [2], [3], [2, 2], [1, 3]])
        n = int(np.prod(self.shape)) if self.shape else 1
        self.n = n
        self.default = None
        # One default value for a whole shape: TensorFlow refuses the scalar
        # (`FixedLenFeature([3], default_value=0)` fails to reshape), so it is given the full
        # tensor, and the TOML spec the one value that fills it.
        self.scalar_default = False
        if rng.random() < 0.5:
            self.default = [rand_default(rng, self.dtype) for _ in range(n)]
            if n > 1 and rng.random() < 0.3:
                self.default = [self.default[0]] * n
                self.scalar_default = True
        self.toml_dtype = spec_dtype(rng, self.dtype)

    def tf(self):
        if self.default is None:
            return {self.name: tf.io.FixedLenFeature(self.shape, TF_DTYPE[self.dtype])}
        # A numpy array, not a Python scalar: TensorFlow's eager constant cache takes -0.0 for
        # an earlier 0.0 (they compare equal).
        d = self.default
        if self.dtype == "bytes":
            value = np.array([x.encode() for x in d], dtype=object)
        elif self.dtype == "float":
            value = np.array(d, dtype=np.float32)
        else:
            value = np.array(d, dtype=np.int64)
        value = value.reshape(self.shape)
        return {self.name: tf.io.FixedLenFeature(self.shape, TF_DTYPE[self.dtype], default_value=value)}

    def toml(self):
        lines = [f"dtype = {toml_str(self.toml_dtype)}"]
        if self.shape:
            lines.append(f"shape = {toml_value(self.shape)}")
        if self.default is not None:
            whole = self.shape and not self.scalar_default
            lines.append(f"default = {toml_value(self.default if whole else self.default[0])}")
        return {self.name: lines}

    def fill(self, rng, f):
        if self.default is not None and rng.random() < 0.3:
            return
        f[self.name] = feature(self.dtype, [rand_value(rng, self.dtype) for _ in range(self.n)])

    def breaks(self, rng, f):
        """Makes the record one TensorFlow rejects, if this feature can."""
        if self.default is None and rng.random() < 0.5:
            f.pop(self.name, None)
        else:
            f[self.name] = feature(self.dtype, [rand_value(rng, self.dtype) for _ in range(self.n + 1)])
        return True

    def outputs(self):
        return {self.name: self.dtype}


class VarLen:
    def __init__(self, rng, name, table="features"):
        self.name, self.table = name, table
        self.dtype = rng.choice(DTYPES)
        self.toml_dtype = spec_dtype(rng, self.dtype)
        # The declared rank (tensorflow-io's VarLenFeatureWithRank): one list per record.
        self.rank = rng.random() < 0.3

    def tf(self):
        return {self.name: tf.io.VarLenFeature(TF_DTYPE[self.dtype])}

    def toml(self):
        lines = [f"dtype = {toml_str(self.toml_dtype)}", 'kind = "var"']
        if self.rank:
            lines.append("rank = 1")
        return {self.name: lines}

    def fill(self, rng, f):
        if rng.random() < 0.2:
            return
        f[self.name] = feature(self.dtype, [rand_value(rng, self.dtype) for _ in range(rng.randrange(0, 5))])

    def breaks(self, rng, f):
        other = {"int64": "float", "float": "bytes", "bytes": "int64"}[self.dtype]
        f[self.name] = feature(other, [rand_value(rng, other)])
        return True

    def outputs(self):
        return {self.name: self.dtype}


class SparseF:
    def __init__(self, rng, name):
        self.name, self.table = name, "features"
        self.dtype = rng.choice(DTYPES)
        self.toml_dtype = spec_dtype(rng, self.dtype)
        rank = rng.choice([1, 2])
        self.size = [rng.randrange(3, 9) for _ in range(rank)]
        self.index_keys = [f"{name}/i{d}" for d in range(rank)]
        self.value_key = rng.choice([name, f"{name}/v"])
        self.sorted = rng.random() < 0.3

    def tf(self):
        ik = self.index_keys[0] if len(self.index_keys) == 1 else self.index_keys
        size = self.size[0] if len(self.size) == 1 else self.size
        return {self.name: tf.io.SparseFeature(ik, self.value_key, TF_DTYPE[self.dtype], size, already_sorted=self.sorted)}

    def toml(self):
        lines = [f"dtype = {toml_str(self.toml_dtype)}", 'kind = "sparse"']
        if len(self.index_keys) == 1 and rng_choice_flag(self.name):
            lines.append(f"index_key = {toml_str(self.index_keys[0])}")
        else:
            lines.append(f"index_key = {toml_value(self.index_keys)}")
        if self.value_key != self.name:
            lines.append(f"value_key = {toml_str(self.value_key)}")
        lines.append(f"size = {toml_value(self.size)}")
        if self.sorted:
            lines.append("already_sorted = true")
        return {self.name: lines}

    def fill(self, rng, f):
        if rng.random() < 0.15:
            return
        cells = set()
        total = int(np.prod(self.size))
        for _ in range(rng.randrange(0, min(5, total) + 1)):
            cells.add(tuple(rng.randrange(s) for s in self.size))
        cells = list(cells)
        rng.shuffle(cells)
        if self.sorted:
            cells.sort()
        for d, k in enumerate(self.index_keys):
            f[k] = feature("int64", [c[d] for c in cells])
        f[self.value_key] = feature(self.dtype, [rand_value(rng, self.dtype) for _ in cells])

    def breaks(self, rng, f):
        f[self.index_keys[0]] = feature("int64", [0, 1, 2])
        f[self.value_key] = feature(self.dtype, [rand_value(rng, self.dtype)])
        return True

    def shift(self, rng, a, b):
        # Index and value counts that differ per record but agree over the batch: TensorFlow
        # takes each entry's batch row from the (first) index feature.
        if all(k in a and a[k].int64_list.value for k in self.index_keys):
            for k in self.index_keys:
                move_last_int(a, b, k)

    def outputs(self):
        return {self.name: self.dtype}


def rng_choice_flag(name):
    # A deterministic coin per feature name: write a single index key as a string or a list.
    return sum(map(ord, name)) % 2 == 0


PARTITIONS = ["row_lengths", "row_splits", "row_starts", "row_limits", "value_rowids", "uniform_row_length"]


class RaggedF:
    def __init__(self, rng, name, table="features"):
        self.name, self.table = name, table
        self.dtype = rng.choice(DTYPES)
        self.toml_dtype = spec_dtype(rng, self.dtype)
        self.value_key = rng.choice([name, f"{name}/values"])
        depth = rng.choice([0, 1, 1, 2])
        self.parts = []
        for d in range(depth):
            kind = rng.choice(PARTITIONS)
            if kind == "uniform_row_length":
                self.parts.append((kind, rng.randrange(1, 4)))
            else:
                self.parts.append((kind, f"{name}/p{d}"))
        self.splits = rng.choice(["int32", "int64"])

    def tf(self):
        ctor = {
            "row_lengths": tf.io.RaggedFeature.RowLengths,
            "row_splits": tf.io.RaggedFeature.RowSplits,
            "row_starts": tf.io.RaggedFeature.RowStarts,
            "row_limits": tf.io.RaggedFeature.RowLimits,
            "value_rowids": tf.io.RaggedFeature.ValueRowIds,
            "uniform_row_length": tf.io.RaggedFeature.UniformRowLength,
        }
        parts = tuple(ctor[k](v) for k, v in self.parts)
        return {self.name: tf.io.RaggedFeature(
            TF_DTYPE[self.dtype], value_key=self.value_key, partitions=parts,
            row_splits_dtype=tf.int32 if self.splits == "int32" else tf.int64)}

    def toml(self):
        lines = [f"dtype = {toml_str(self.toml_dtype)}", 'kind = "ragged"']
        if self.value_key != self.name:
            lines.append(f"value_key = {toml_str(self.value_key)}")
        if self.parts:
            parts = ", ".join(f"{{ {k} = {toml_value(v)} }}" for k, v in self.parts)
            lines.append(f"partitions = [{parts}]")
        if self.splits == "int64":
            lines.append('row_splits_dtype = "int64"')
        return {self.name: lines}

    def fill(self, rng, f):
        if rng.random() < 0.1 and not self.parts:
            return
        rows = rng.randrange(0, 4)
        for kind, v in self.parts:
            if kind == "uniform_row_length":
                lengths = [v] * rows
            else:
                lengths = [rng.randrange(0, 4) for _ in range(rows)]
                # Value row ids cannot tell trailing empty rows; give the last row a value.
                if kind == "value_rowids" and lengths and lengths[-1] == 0:
                    lengths[-1] = 1
            starts = [sum(lengths[:i]) for i in range(rows)]
            if kind == "row_lengths":
                vals = lengths
            elif kind == "row_splits":
                vals = [0] + [s + n for s, n in zip(starts, lengths)]
            elif kind == "row_starts":
                vals = starts
            elif kind == "row_limits":
                vals = [s + n for s, n in zip(starts, lengths)]
            elif kind == "value_rowids":
                vals = [r for r, n in enumerate(lengths) for _ in range(n)]
            else:
                vals = None
            if vals is not None:
                f[v] = feature("int64", vals)
            rows = sum(lengths)
        f[self.value_key] = feature(self.dtype, [rand_value(rng, self.dtype) for _ in range(rows)])

    def breaks(self, rng, f):
        # One value row id too many over the batch: TensorFlow's from_value_rowids fails.
        for kind, key in self.parts:
            if kind == "value_rowids":
                f[key] = feature("int64", list(f[key].int64_list.value if key in f else []) + [0])
                return True
        return False

    def shift(self, rng, a, b):
        # Value row ids that differ per record from the rows below but agree over the batch.
        for kind, key in self.parts:
            if kind == "value_rowids":
                move_last_int(a, b, key)

    def outputs(self):
        return {self.name: self.dtype}


class Rows:
    """A `FixedLenSequenceFeature` in an Example (`allow_missing=True`, as TensorFlow requires),
    written in the TOML spec either as `kind = "sequence"` or as a fixed shape whose first
    dimension is unknown (`shape = [-1, ...]`, tensorflow-io's `[None, ...]`)."""

    def __init__(self, rng, name):
        self.name, self.table = name, "features"
        self.dtype = rng.choice(DTYPES)
        self.toml_dtype = spec_dtype(rng, self.dtype)
        self.shape = rng.choice([[], [2], [3], [2, 2]])
        self.n = int(np.prod(self.shape)) if self.shape else 1
        self.default = rand_default(rng, self.dtype) if rng.random() < 0.5 else None
        self.spelling = rng.choice(["sequence", "unknown"])

    def tf(self):
        if self.default is None:
            return {self.name: tf.io.FixedLenSequenceFeature(self.shape, TF_DTYPE[self.dtype], allow_missing=True)}
        # A numpy value, not a Python scalar: TensorFlow's eager constant cache takes -0.0 for
        # an earlier 0.0 (they compare equal).
        if self.dtype == "bytes":
            d = np.array(self.default.encode(), dtype=object)
        else:
            d = np.array(self.default, dtype=np.float32 if self.dtype == "float" else np.int64)
        return {self.name: tf.io.FixedLenSequenceFeature(
            self.shape, TF_DTYPE[self.dtype], allow_missing=True, default_value=d)}

    def toml(self):
        lines = [f"dtype = {toml_str(self.toml_dtype)}"]
        if self.spelling == "sequence":
            lines.append('kind = "sequence"')
            if self.shape:
                lines.append(f"shape = {toml_value(self.shape)}")
            if rng_choice_flag(self.name):
                lines.append("allow_missing = true")
        else:
            lines.append(f"shape = {toml_value([-1] + self.shape)}")
        if self.default is not None:
            lines.append(f"default = {toml_value(self.default)}")
        return {self.name: lines}

    def fill(self, rng, f):
        if rng.random() < 0.2:
            return
        rows = rng.randrange(0, 5)
        f[self.name] = feature(self.dtype, [rand_value(rng, self.dtype) for _ in range(rows * self.n)])

    def breaks(self, rng, f):
        if self.n > 1:
            f[self.name] = feature(self.dtype, [rand_value(rng, self.dtype) for _ in range(self.n + 1)])
        else:
            other = {"int64": "float", "float": "bytes", "bytes": "int64"}[self.dtype]
            f[self.name] = feature(other, [rand_value(rng, other)])
        return True

    def outputs(self):
        return {self.name: self.dtype}


class FixedSeq:
    """A `FixedLenSequenceFeature` in a SequenceExample's feature lists."""

    def __init__(self, rng, name):
        self.name, self.table = name, "sequence"
        self.dtype = rng.choice(DTYPES)
        self.toml_dtype = spec_dtype(rng, self.dtype)
        self.shape = rng.choice([[], [], [2], [3]])
        self.n = self.shape[0] if self.shape else 1
        self.allow_missing = rng.random() < 0.5

    def tf(self):
        return {self.name: tf.io.FixedLenSequenceFeature(self.shape, TF_DTYPE[self.dtype], allow_missing=self.allow_missing)}

    def toml(self):
        lines = [f"dtype = {toml_str(self.toml_dtype)}"]
        if self.shape:
            lines.append(f"shape = {toml_value(self.shape)}")
        if self.allow_missing:
            lines.append("allow_missing = true")
        return {self.name: lines}

    def fill(self, rng, lists):
        if self.allow_missing and rng.random() < 0.2:
            return
        fl = tf.train.FeatureList(feature=[
            feature(self.dtype, [rand_value(rng, self.dtype) for _ in range(self.n)])
            for _ in range(rng.randrange(0, 5))])
        lists[self.name] = fl

    def breaks(self, rng, lists):
        lists[self.name] = tf.train.FeatureList(feature=[
            feature(self.dtype, [rand_value(rng, self.dtype) for _ in range(self.n + 1)])])
        return True

    def outputs(self):
        return {self.name: self.dtype}


class VarSeq:
    """A `VarLenFeature` in a SequenceExample's feature lists."""

    def __init__(self, rng, name):
        self.name, self.table = name, "sequence"
        self.dtype = rng.choice(DTYPES)
        self.toml_dtype = spec_dtype(rng, self.dtype)

    def tf(self):
        return {self.name: tf.io.VarLenFeature(TF_DTYPE[self.dtype])}

    def toml(self):
        return {self.name: [f"dtype = {toml_str(self.toml_dtype)}", 'kind = "var"']}

    def fill(self, rng, lists):
        if rng.random() < 0.2:
            return
        lists[self.name] = tf.train.FeatureList(feature=[
            feature(self.dtype, [rand_value(rng, self.dtype) for _ in range(rng.randrange(0, 4))])
            for _ in range(rng.randrange(0, 5))])

    def breaks(self, rng, lists):
        return False

    def outputs(self):
        return {self.name: self.dtype}


# ---------------------------------------------------------------------------------------------
# Cases


class Case:
    def __init__(self, rng, index, sequence):
        self.sequence = sequence
        self.record = f"Case{index}"
        n = rng.randrange(1, 6)
        self.features = []
        names = [f"f{i}" if rng.random() < 0.5 else f"g{i}/x" for i in range(n)]
        if sequence:
            for i, name in enumerate(names):
                cls = rng.choice([Fixed, VarLen, FixedSeq, VarSeq])
                self.features.append(cls(rng, name, "context") if cls in (Fixed, VarLen) else cls(rng, name))
        else:
            for name in names:
                cls = rng.choice([Fixed, Fixed, VarLen, SparseF, RaggedF, Rows])
                self.features.append(cls(rng, name))
        self.count = rng.randrange(1, 40)
        self.batch = rng.choice([1, 2, 3, 7, 16, 64])
        self.compression = rng.choice(["", "", "GZIP"])

    def tables(self):
        ctx = [f for f in self.features if f.table in ("features", "context")]
        seq = [f for f in self.features if f.table == "sequence"]
        return ctx, seq

    def tf_specs(self):
        ctx, seq = self.tables()
        c, s = {}, {}
        for f in ctx:
            c.update(f.tf())
        for f in seq:
            s.update(f.tf())
        return c, s

    def toml(self):
        out = [f"[records.{self.record}]"]
        if self.sequence:
            out.append('kind = "sequence_example"')
        for f in self.features:
            for name, lines in f.toml().items():
                out.append("")
                out.append(f"[records.{self.record}.{f.table}.{toml_str(name)}]")
                out.extend(lines)
        return "\n".join(out) + "\n"

    def records(self, rng, broken_at=None):
        out = []
        ctx, seq = self.tables()
        # Example cases: feature dicts first, so that some features can move values between
        # neighbouring records of one batch (counts that agree only over the batch).
        dicts = [] if not self.sequence and broken_at is None else None
        for i in range(self.count):
            f, lists = {}, {}
            for x in ctx:
                x.fill(rng, f)
            for x in seq:
                x.fill(rng, lists)
            broke = False
            if i == broken_at:
                for x in rng.sample(self.features, len(self.features)):
                    target = lists if x.table == "sequence" else f
                    if x.breaks(rng, target):
                        broke = True
                        break
            if dicts is not None:
                dicts.append(f)
                continue
            if self.sequence:
                m = tf.train.SequenceExample(
                    context=tf.train.Features(feature=f),
                    feature_lists=tf.train.FeatureLists(feature_list=lists))
            else:
                m = tf.train.Example(features=tf.train.Features(feature=f))
            out.append(m.SerializeToString())
            if i == broken_at and not broke:
                return None
        if dicts is not None:
            for i in range(len(dicts) - 1):
                if i // self.batch == (i + 1) // self.batch and rng.random() < 0.3:
                    for x in self.features:
                        if hasattr(x, "shift"):
                            x.shift(rng, dicts[i], dicts[i + 1])
            out = [tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString() for f in dicts]
        return out


# ---------------------------------------------------------------------------------------------
# Normalized tensors


def norm_values(values, dtype):
    out = []
    for v in values:
        if dtype == "int64":
            out.append(int(v))
        elif dtype == "float":
            if isinstance(v, str):
                v = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[v]
            x = float(v)
            out.append("nan" if math.isnan(x) else struct.unpack("<I", struct.pack("<f", x))[0])
        else:
            out.append(bytes(v))
    return out


def from_json(t, dtype):
    if "dense" in t:
        d = t["dense"]
        return ("dense", list(d["shape"]), norm_values(d["values"], dtype))
    if "sparse" in t:
        d = t["sparse"]
        vals = d["values"] if dtype != "bytes" else [base64.b64decode(v) for v in d["values"]]
        return ("sparse", [list(i) for i in d["indices"]], norm_values(vals, dtype), list(d["dense_shape"]))
    d = t["ragged"]
    vals = d["flat_values"] if dtype != "bytes" else [base64.b64decode(v) for v in d["flat_values"]]
    return ("ragged", norm_values(vals, dtype), [list(s) for s in d["nested_row_splits"]])


def from_json_values(t, dtype):
    if dtype == "bytes" and "dense" in t:
        t = {"dense": dict(t["dense"], values=[base64.b64decode(v) for v in t["dense"]["values"]])}
    return from_json(t, dtype)


def tf_flat(arr):
    return np.asarray(arr).reshape(-1).tolist()


def from_tf(t, dtype):
    if isinstance(t, tf.SparseTensor):
        return ("sparse", t.indices.numpy().tolist(), norm_values(tf_flat(t.values.numpy()), dtype), t.dense_shape.numpy().tolist())
    if isinstance(t, tf.RaggedTensor):
        splits = [s.numpy().tolist() for s in t.nested_row_splits]
        fv = t.flat_values.numpy()
        # Inner uniform dimensions (a trailing UniformRowLength) count as row splits.
        while fv.ndim > 1:
            rows, n = fv.shape[0], fv.shape[1]
            splits.append(list(range(0, rows * n + 1, n)) if n > 0 else [0] * (rows + 1))
            fv = fv.reshape((rows * n,) + fv.shape[2:])
        return ("ragged", norm_values(fv.tolist(), dtype), splits)
    return ("dense", list(t.shape), norm_values(tf_flat(t.numpy()), dtype))


def same_up_to_duplicates(got, want):
    """Sparse tensors whose entries differ only in the order of entries with one index: the
    order among duplicates is unspecified (TensorFlow's reorder is not a stable sort)."""
    if got[0] != "sparse" or got[1] != want[1] or got[3] != want[3]:
        return False
    runs_got, runs_want = {}, {}
    for idx, g, w in zip(got[1], got[2], want[2]):
        runs_got.setdefault(tuple(idx), []).append(repr(g))
        runs_want.setdefault(tuple(idx), []).append(repr(w))
    return all(sorted(v) == sorted(runs_want[k]) for k, v in runs_got.items())


def diff(got, want, where):
    if got == want or same_up_to_duplicates(got, want):
        return
    if got[0] != want[0]:
        raise Fail(f"{where}: tfrecord gives a {got[0]} tensor, TensorFlow a {want[0]} tensor")
    parts = {"dense": ["shape", "values"], "sparse": ["indices", "values", "dense_shape"], "ragged": ["flat_values", "nested_row_splits"]}[got[0]]
    for name, g, w in zip(parts, got[1:], want[1:]):
        if g != w:
            raise Fail(f"{where}: {name} differ:\n      tfrecord:   {str(g)[:300]}\n      TensorFlow: {str(w)[:300]}")


# ---------------------------------------------------------------------------------------------
# Running


def run_cli(binary, spec_path, data_path, batch):
    p = subprocess.run([binary, "parse", "--spec", spec_path, "--batch-size", str(batch), data_path],
                       capture_output=True, stdin=subprocess.DEVNULL, check=False)
    return p.returncode, p.stdout.decode(), p.stderr.decode(errors="replace")


def tf_batches(case, path):
    ctx, seq = case.tf_specs()
    ds = tf.data.TFRecordDataset(path, compression_type=case.compression).batch(case.batch)
    out = []
    for batch in ds:
        if case.sequence:
            c, s, lengths = tf.io.parse_sequence_example(batch, context_features=ctx or None, sequence_features=seq or None)
            out.append((c, s, lengths))
        else:
            out.append(tf.io.parse_example(batch, ctx))
    return out


def check_case(binary, tmp, case, rng, broken):
    ext = ".tfrecord.gz" if case.compression == "GZIP" else ".tfrecord"
    path = os.path.join(tmp, case.record + ext)
    spec_path = os.path.join(tmp, case.record + ".toml")
    broken_at = rng.randrange(case.count) if broken else None
    records = case.records(rng, broken_at)
    if records is None:
        return "skipped (no feature can break)"
    with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(compression_type=case.compression)) as w:
        for r in records:
            w.write(r)
    with open(spec_path, "w", encoding="utf-8") as f:
        f.write(case.toml())
    code, stdout, stderr = run_cli(binary, spec_path, path, case.batch)
    try:
        want = tf_batches(case, path)
        tf_error = None
    except (tf.errors.InvalidArgumentError, ValueError) as e:
        want, tf_error = None, e
    if broken:
        if tf_error is None:
            # Some breaks (an extra value in a list TensorFlow reads whole) are legal.
            if code != 0:
                raise Fail(f"TensorFlow parses the broken record, tfrecord fails: {stderr.strip()[:300]}")
        else:
            if code == 0:
                raise Fail(f"TensorFlow fails ({str(tf_error).splitlines()[0][:200]}), tfrecord parses the records")
            if "(record " not in stderr:
                raise Fail(f"the error does not name the record: {stderr.strip()[:300]}")
            return "both fail"
    elif tf_error is not None:
        # Values moved between records can leave nested partitions that do not line up over
        # the batch (TensorFlow: "Shapes (21,) and (23,) are incompatible"): both must fail.
        if code == 0:
            raise Fail(f"TensorFlow fails ({str(tf_error).splitlines()[0][:200]}), tfrecord parses the records")
        if "(record " not in stderr:
            raise Fail(f"the error does not name the record: {stderr.strip()[:300]}")
        return "both fail"
    if code != 0:
        raise Fail(f"tfrecord parse failed: {stderr.strip()[:500]}\n{case.toml()}")
    lines = [json.loads(l) for l in stdout.splitlines() if l.strip()]
    if len(lines) != len(want):
        raise Fail(f"{len(lines)} batches from tfrecord, {len(want)} from TensorFlow")
    dtypes = {}
    for f in case.features:
        dtypes.update(f.outputs())
    compared = 0
    for b, (got, w) in enumerate(zip(lines, want)):
        if case.sequence:
            groups = [("context", w[0]), ("sequence", w[1]), ("lengths", w[2])]
        else:
            groups = [(None, w)]
        for group, tensors in groups:
            have = got[group] if group else got
            if sorted(have) != sorted(tensors):
                raise Fail(f"batch {b} {group or ''}: outputs {sorted(have)} vs TensorFlow {sorted(tensors)}")
            for name, t in tensors.items():
                dtype = "int64" if group == "lengths" else dtypes[name]
                diff(from_json_values(have[name], dtype), from_tf(t, dtype), f"batch {b} {group + ' ' if group else ''}{name!r}")
                compared += 1
    return f"{compared} tensors in {len(want)} batches"


def spec_refusals(binary, tmp):
    """Specs that TensorFlow refuses (or cannot state) must be refused by `parse` too, with an
    error naming the feature: yields (name, problem or None)."""
    path = os.path.join(tmp, "refusals.tfrecord")
    ex = tf.train.Example(features=tf.train.Features(feature={"a": feature("int64", [1, 2])}))
    with tf.io.TFRecordWriter(path) as w:
        w.write(ex.SerializeToString())

    def tf_refuses(spec):
        try:
            tf.io.parse_example([ex.SerializeToString()], spec)
        except (ValueError, tf.errors.InvalidArgumentError):
            return True
        return False

    cases = [
        ("allow_missing = false in an Example",
         'dtype = "int64"\nkind = "sequence"\nallow_missing = false\n',
         {"a": tf.io.FixedLenSequenceFeature([], tf.int64, allow_missing=False)}),
        ("FixedLenFeature([None, 2]) spelled [-1, -1]",
         'dtype = "int64"\nshape = [-1, -1]\n',
         {"a": tf.io.FixedLenFeature([None, None], tf.int64)}),
        ("VarLenFeatureWithRank(int64, 2) on a flat feature",
         'dtype = "int64"\nkind = "var"\nrank = 2\n',
         None),
    ]
    for name, table, tf_spec in cases:
        if tf_spec is not None and not tf_refuses(tf_spec):
            yield name, "TensorFlow accepts the spec; the check expects it to refuse it"
            continue
        spec_path = os.path.join(tmp, "refusal.toml")
        with open(spec_path, "w", encoding="utf-8") as f:
            f.write("[records.R.features.a]\n" + table)
        code, _, stderr = run_cli(binary, spec_path, path, 1)
        if code == 0:
            yield name, "tfrecord parse accepts the spec"
        elif '"a"' not in stderr and "`a`" not in stderr and "refusal.toml:" not in stderr:
            yield name, f"the error does not name the feature: {stderr.strip()[:300]}"
        else:
            yield name, None


def wire_type_cases(binary, tmp):
    """Hand-made records with a field of the wrong wire type, at each level of the message:
    `parse` (and `cat --json`, which decodes every field) must accept what TensorFlow's parser
    reads, with its values, and refuse what it refuses. At a record's top level such a field is
    unknown to TensorFlow; inside `Features`, a map entry or a `Feature`, it is an error.
    Yields (name, problem or None)."""

    def ld(tag, body):
        return bytes([tag, len(body)]) + body

    feat = ld(0x1A, b"\x0a\x01\x09")  # Feature { int64_list { value: 9 } }
    entry = b"\x0a\x02id" + ld(0x12, feat)
    ex = ld(0x0A, ld(0x0A, entry))
    seq_ex = tf.train.SequenceExample()
    seq_ex.context.feature["id"].int64_list.value.append(9)
    seq_ex.feature_lists.feature_list["tok"].feature.add().int64_list.value.append(5)
    seq = seq_ex.SerializeToString()
    cases = [
        ("Example: `features` also as a varint", False, b"\x08\x01" + ex),
        ("Example: `features` also as a fixed32", False, b"\x0d\x01\x02\x03\x04" + ex),
        ("Example: a map entry as a varint", False, ld(0x0A, b"\x08\x01" + ld(0x0A, entry))),
        ("Example: a map entry's value as a varint", False,
         ld(0x0A, ld(0x0A, b"\x0a\x02id\x10\x05" + ld(0x12, feat)))),
        ("Example: a Feature's list as a varint", False,
         ld(0x0A, ld(0x0A, b"\x0a\x02id" + ld(0x12, b"\x1a\x01" + feat)))),
        ("SequenceExample: `context` also as a varint", True, b"\x08\x01" + seq),
        ("SequenceExample: `feature_lists` also as a varint", True, b"\x10\x05" + seq),
    ]
    ctx = {"id": tf.io.FixedLenFeature([], tf.int64)}
    lists = {"tok": tf.io.VarLenFeature(tf.int64)}
    for i, (name, sequence, record) in enumerate(cases):
        path = os.path.join(tmp, f"wire{i}.tfrecord")
        with tf.io.TFRecordWriter(path) as w:
            w.write(record)
        spec_path = os.path.join(tmp, f"wire{i}.toml")
        with open(spec_path, "w", encoding="utf-8") as f:
            if sequence:
                f.write('[records.R]\nkind = "sequence_example"\n'
                        '[records.R.context.id]\ndtype = "int64"\n'
                        '[records.R.sequence.tok]\ndtype = "int64"\nkind = "var"\n')
            else:
                f.write('[records.R.features.id]\ndtype = "int64"\n')
        try:
            if sequence:
                c, q, _ = tf.io.parse_sequence_example([record], context_features=ctx, sequence_features=lists)
                want = {"id": c["id"].numpy().tolist(), "tok": q["tok"].values.numpy().tolist()}
            else:
                want = {"id": tf.io.parse_example([record], ctx)["id"].numpy().tolist()}
        except tf.errors.InvalidArgumentError:
            want = None
        code, stdout, stderr = run_cli(binary, spec_path, path, 1)
        cat = subprocess.run([binary, "cat", "--json"] + (["--sequence"] if sequence else []) + [path],
                             capture_output=True, stdin=subprocess.DEVNULL, check=False)
        if want is None:
            if code == 0 or cat.returncode == 0:
                yield name, f"TensorFlow refuses the record; parse exits {code}, cat exits {cat.returncode}"
            elif "(record 0)" not in stderr:
                yield name, f"the error does not name the record: {stderr.strip()[:300]}"
            else:
                yield name, None
            continue
        if code != 0 or cat.returncode != 0:
            yield name, f"TensorFlow reads {want}; parse: {stderr.strip()[:200]} cat: {cat.stderr.decode()[:200]}"
            continue
        got = json.loads(stdout.splitlines()[0])
        if sequence:
            got = {"id": got["context"]["id"]["dense"]["values"], "tok": got["sequence"]["tok"]["sparse"]["values"]}
        else:
            got = {"id": got["id"]["dense"]["values"]}
        yield name, None if got == want else f"parse gives {got}, TensorFlow {want}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="path to the tfrecord binary")
    ap.add_argument("--seed", type=int, default=2021)
    ap.add_argument("--cases", type=int, default=40, help="random Example cases (half as many SequenceExample cases)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    tmp = tempfile.mkdtemp(prefix="tfrecord-parse-interop-")
    rng = random.Random(args.seed)
    passed = failed = 0
    plan = [(False, False)] * args.cases + [(True, False)] * (args.cases // 2)
    plan += [(False, True)] * (args.cases // 4) + [(True, True)] * (args.cases // 8)
    for i, (sequence, broken) in enumerate(plan):
        case = Case(rng, i, sequence)
        kinds = ",".join(sorted({type(f).__name__ for f in case.features}))
        name = (f"P{i:02d} {'SequenceExample' if sequence else 'Example'}"
                f"{' broken' if broken else ''} [{kinds}] {case.count} records, batch {case.batch}"
                f"{', gzip' if case.compression else ''}")
        try:
            what = check_case(binary, tmp, case, rng, broken)
            passed += 1
            print(f"PASS {name}: {what}", flush=True)
        except Exception as e:  # noqa: BLE001 - report every failure and go on
            failed += 1
            print(f"FAIL {name}: {e}", flush=True)
            print(f"      spec: {os.path.join(tmp, case.record + '.toml')}", flush=True)
            args.keep = True
    for label, results in [("refused spec", spec_refusals(binary, tmp)), ("wire type", wire_type_cases(binary, tmp))]:
        for name, problem in results:
            if problem is None:
                passed += 1
                print(f"PASS {label}: {name}", flush=True)
            else:
                failed += 1
                print(f"FAIL {label}: {name}: {problem}", flush=True)
    if args.keep:
        print(f"files kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
