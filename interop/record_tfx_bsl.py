"""Records what tfx_bsl's Arrow decoders make of TFRecord fixtures, as JSON for Rust tests.

Run from the tfx_bsl virtualenv (made by `bench/tfx_bsl/setup.sh`):

    "$(bench/tfx_bsl/setup.sh)" interop/record_tfx_bsl.py

Inputs: the TensorFlow-recorded `tests/fixtures/conformance/examples.tfrecord` (42 Examples)
and `sequence.tfrecord` (12 SequenceExamples), plus three small files this script writes with
TensorFlow's own `tf.train` protos and `tf.io.TFRecordWriter` (deterministic serialization, so
a rerun writes the same bytes):

- `extra_examples.tfrecord`: every list kind, absent keys, empty lists, a feature whose kind
  is never set, one whose kind is set in some records only, special floats, int64 extremes.
- `extra_sequence.tfrecord`: SequenceExamples with no context or feature lists, an empty
  feature list, steps that are empty or have no kind, a context key equal to a feature-list
  key.
- `extra_errors.tfrecord`: records the decoders refuse (a key whose kind differs between
  records, bytes that are no Example, a feature list whose steps differ in kind).

Every input is decoded with `tfx_bsl.coders.example_coder.ExamplesToRecordBatchDecoder` or
`tfx_bsl.coders.sequence_example_coder.SequenceExamplesToRecordBatchDecoder`, without a schema
(types inferred per batch) and with a TFMD schema, and written to `tests/fixtures/tfx_bsl/` as
`<input>.json`. Each file holds the generator versions, the input's name, record count and
sha256, and `cases`; each case names its decoder, the records decoded (`first_record`,
`num_records`), the batch size (records per `DecodeBatch` call), the schema (text proto and a
plain `schema_features` list) or null, and either `error` (the decoder's message) or
`batches`, one per `DecodeBatch` call, each with `num_rows` and `columns` in the RecordBatch's
order. A column holds:

- `name`; `type`: `str(field.type)`; `nullable`: `field.nullable`; `null_count`;
- `values`: the column's `to_pylist()`, with null as JSON null, a struct row as an object,
  bytes as lowercase hex (or `{"len", "sha256"}` for a value over 4096 bytes), floats as
  numbers (`"NaN"`, `"Infinity"`, `"-Infinity"` for those);
- `f32_bits` (only when the type holds floats): the same structure with every float as its
  IEEE-754 bit pattern read from the Arrow buffer, the exact reference for NaN and -0.0.
"""

import argparse
import hashlib
import importlib.metadata
import json
import math
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")

import pyarrow as pa
import tensorflow as tf
from google.protobuf import text_format
from tensorflow_metadata.proto.v0 import schema_pb2
from tfx_bsl.coders import example_coder, sequence_example_coder

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFORMANCE = os.path.join(REPO, "tests", "fixtures", "conformance")
DEFAULT_OUT = os.path.join(REPO, "tests", "fixtures", "tfx_bsl")
BIG_BYTES = 4096
SEQUENCE_COLUMN = "##SEQUENCE##"
EXAMPLE_DECODER = "ExamplesToRecordBatchDecoder"
SEQUENCE_DECODER = "SequenceExamplesToRecordBatchDecoder"


# ---------------------------------------------------------------- values


def _float_readable(x):
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def _bytes_json(b):
    if len(b) > BIG_BYTES:
        return {"len": len(b), "sha256": hashlib.sha256(b).hexdigest()}
    return b.hex()


def _has_float(t):
    if pa.types.is_floating(t):
        return True
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _has_float(t.value_type)
    if pa.types.is_struct(t):
        return any(_has_float(t.field(i).type) for i in range(t.num_fields))
    return False


def _encode(arr, bits):
    """The values of `arr` as JSON-ready Python values (see the module doc), walking the
    Arrow arrays themselves so floats come from the buffer, not through a Python float."""
    t = arr.type
    if pa.types.is_null(t):
        return [None] * len(arr)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        out = []
        for i in range(len(arr)):
            if arr[i].is_valid:
                out.append(_encode(arr[i].values, bits))
            else:
                out.append(None)
        return out
    if pa.types.is_struct(t):
        fields = [(t.field(i).name, _encode(arr.field(i), bits)) for i in range(t.num_fields)]
        valid = arr.is_valid().to_pylist()
        return [
            {name: vals[i] for name, vals in fields} if valid[i] else None
            for i in range(len(arr))
        ]
    if pa.types.is_float32(t):
        if bits:
            return arr.view(pa.uint32()).to_pylist()
        return [None if v is None else _float_readable(v) for v in arr.to_pylist()]
    if pa.types.is_integer(t):
        return arr.to_pylist()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return [None if v is None else _bytes_json(v) for v in arr.to_pylist()]
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return arr.to_pylist()
    raise ValueError(f"no JSON form for Arrow type {t}")


def _column(field, arr):
    col = {
        "name": field.name,
        "type": str(field.type),
        "nullable": field.nullable,
        "null_count": arr.null_count,
        "values": _encode(arr, bits=False),
    }
    if _has_float(field.type):
        col["f32_bits"] = _encode(arr, bits=True)
    return col


def _batch_json(rb):
    return {
        "num_rows": rb.num_rows,
        "schema_metadata": (
            None
            if rb.schema.metadata is None
            else {k.decode(): v.hex() for k, v in rb.schema.metadata.items()}
        ),
        "columns": [_column(f, rb.column(i)) for i, f in enumerate(rb.schema)],
    }


# ---------------------------------------------------------------- schemas


def _schema_features(schema):
    def feat(f):
        d = {"name": f.name, "type": schema_pb2.FeatureType.Name(f.type)}
        if f.HasField("struct_domain"):
            d["struct"] = [feat(g) for g in f.struct_domain.feature]
        return d

    return [feat(f) for f in schema.feature]


def _schema(text):
    return text_format.Parse(text, schema_pb2.Schema())


# ---------------------------------------------------------------- cases


def _decoder(kind, schema):
    ser = None if schema is None else schema.SerializeToString()
    if kind == EXAMPLE_DECODER:
        return example_coder.ExamplesToRecordBatchDecoder(ser)
    if ser is None:
        return sequence_example_coder.SequenceExamplesToRecordBatchDecoder(SEQUENCE_COLUMN)
    return sequence_example_coder.SequenceExamplesToRecordBatchDecoder(SEQUENCE_COLUMN, ser)


def _case(name, kind, records, first=0, count=None, batch_size=None, schema_text=None):
    """Decode records[first:first+count] in batches of batch_size (all in one if None)."""
    count = len(records) - first if count is None else count
    recs = records[first:first + count]
    size = batch_size or count
    schema = None if schema_text is None else _schema(schema_text)
    case = {
        "name": name,
        "decoder": kind,
        "first_record": first,
        "num_records": count,
        "batch_size": size,
        "schema_text": schema_text,
        "schema_features": None if schema is None else _schema_features(schema),
    }
    if kind == SEQUENCE_DECODER:
        case["sequence_feature_column_name"] = SEQUENCE_COLUMN
    try:
        dec = _decoder(kind, schema)
        if schema is not None:
            case["arrow_schema"] = [
                {"name": f.name, "type": str(f.type), "nullable": f.nullable}
                for f in dec.ArrowSchema()
            ]
        case["batches"] = [
            _batch_json(dec.DecodeBatch(recs[i:i + size])) for i in range(0, count, size)
        ]
    except RuntimeError as e:
        case.pop("batches", None)
        case["error"] = str(e)
    return case


# ---------------------------------------------------------------- extra inputs

_F = tf.train.Feature


def _ints(*v):
    return _F(int64_list=tf.train.Int64List(value=v))


def _floats(*v):
    return _F(float_list=tf.train.FloatList(value=v))


def _bytes(*v):
    return _F(bytes_list=tf.train.BytesList(value=v))


def _example(**features):
    return tf.train.Example(features=tf.train.Features(feature=features))


def _ser(msg):
    return msg.SerializeToString(deterministic=True)


def extra_examples():
    e = _example
    return [
        _ser(e(i=_ints(1, 2, 3), f=_floats(1.5, -2.25), b=_bytes(b"x", b""),
               kind_later=_F(), ragged=_ints(1))),
        _ser(e()),
        _ser(e(i=_ints(), f=_floats(), b=_bytes(), ragged=_ints(2, 3, 4, 5))),
        _ser(e(i=_ints(-(2**63), 2**63 - 1, 0, -1),
               f=_floats(float("nan"), -0.0, 0.0, float("inf"), float("-inf"), 1e-45,
                         3.4028234663852886e38),
               b=_bytes(b"\x00\xff\x80", "ünï".encode()), kind_later=_ints(7))),
        _ser(e(never_kind=_F(), kind_later=_F())),
        _ser(e(i=_ints(0), f=_floats(3.0), only_empty_bytes=_bytes(), never_kind=_F(),
               kind_later=_ints())),
    ]


def extra_sequence():
    def s(text):
        return _ser(text_format.Parse(text, tf.train.SequenceExample()))

    return [
        s(""),
        s('context { feature { key: "id" value { int64_list { value: [1] } } } }'),
        s('feature_lists { feature_list { key: "tok" value {} } }'),
        s('context { feature { key: "id" value { int64_list { value: [] } } } '
          '          feature { key: "w" value { float_list { value: [0.5, -0.0] } } } } '
          'feature_lists { feature_list { key: "tok" value { '
          '  feature {} feature { int64_list {} } feature { int64_list { value: [5, 6] } } } } }'),
        s('feature_lists { feature_list { key: "no_kind" value { feature {} feature {} } } }'),
        s('context { feature { key: "tok" value { bytes_list { value: ["ctx"] } } } } '
          'feature_lists { feature_list { key: "f" value { '
          '  feature { float_list { value: [1.5, nan] } } feature { float_list {} } } } '
          '  feature_list { key: "s" value { feature { bytes_list { value: ["a", ""] } } } } }'),
    ]


def extra_errors():
    seq = text_format.Parse(
        'feature_lists { feature_list { key: "t" value { '
        '  feature { int64_list { value: [1] } } feature { float_list { value: [2] } } } } }',
        tf.train.SequenceExample())
    return [
        _ser(_example(x=_ints(1))),
        _ser(_example(x=_floats(1.0))),
        b"\xff\xff\xff",
        _ser(_example(y=_floats(1.0))),
        _ser(seq),
    ]


# ---------------------------------------------------------------- schemas used

EXAMPLES_SCHEMA = """
feature { name: "label" type: INT }
feature { name: "score" type: FLOAT }
feature { name: "tags" type: BYTES }
feature { name: "unset_kind" type: INT }
feature { name: "not_in_data" type: FLOAT }
"""

SEQUENCE_SCHEMA = f"""
feature {{ name: "lang" type: BYTES }}
feature {{ name: "id" type: INT }}
feature {{ name: "not_in_data" type: INT }}
feature {{ name: "{SEQUENCE_COLUMN}" type: STRUCT struct_domain {{
  feature {{ name: "tokens" type: INT }}
  feature {{ name: "scores" type: FLOAT }}
  feature {{ name: "not_in_data" type: BYTES }}
}} }}
"""

EXTRA_EXAMPLES_SCHEMA = """
feature { name: "f" type: FLOAT }
feature { name: "i" type: INT }
feature { name: "b" type: BYTES }
feature { name: "kind_later" type: INT }
feature { name: "never_kind" type: FLOAT }
feature { name: "absent_everywhere" type: BYTES }
"""

EXTRA_SEQUENCE_SCHEMA = f"""
feature {{ name: "id" type: INT }}
feature {{ name: "tok" type: BYTES }}
feature {{ name: "{SEQUENCE_COLUMN}" type: STRUCT struct_domain {{
  feature {{ name: "tok" type: INT }}
  feature {{ name: "f" type: FLOAT }}
  feature {{ name: "no_kind" type: BYTES }}
  feature {{ name: "absent" type: INT }}
}} }}
"""


def all_inputs():
    """(file name, records, whether this script writes the file, cases)."""
    def read(name):
        return [r.numpy() for r in tf.data.TFRecordDataset(os.path.join(CONFORMANCE, name))]

    ex = read("examples.tfrecord")
    sq = read("sequence.tfrecord")
    xe = extra_examples()
    xs = extra_sequence()
    xr = extra_errors()
    E, S = EXAMPLE_DECODER, SEQUENCE_DECODER
    return [
        ("examples.tfrecord", ex, False, [
            _case("inferred, one batch", E, ex),
            _case("inferred, batches of 16", E, ex, batch_size=16),
            _case("schema", E, ex, schema_text=EXAMPLES_SCHEMA),
        ]),
        ("sequence.tfrecord", sq, False, [
            _case("inferred, one batch", S, sq),
            _case("inferred, batches of 5", S, sq, batch_size=5),
            _case("schema", S, sq, schema_text=SEQUENCE_SCHEMA),
        ]),
        ("extra_examples.tfrecord", xe, True, [
            _case("inferred, one batch", E, xe),
            _case("inferred, batches of 2", E, xe, batch_size=2),
            _case("schema", E, xe, schema_text=EXTRA_EXAMPLES_SCHEMA),
        ]),
        ("extra_sequence.tfrecord", xs, True, [
            _case("inferred, one batch", S, xs),
            _case("inferred, batches of 2", S, xs, batch_size=2),
            _case("inferred, only the empty feature list", S, xs, 2, 1),
            _case("schema", S, xs, schema_text=EXTRA_SEQUENCE_SCHEMA),
        ]),
        ("extra_errors.tfrecord", xr, True, [
            _case("a key int64 in one record and float in the next", E, xr, 0, 2),
            _case("the same two records in separate batches", E, xr, 0, 2, batch_size=1),
            _case("bytes that are no Example", E, xr, 2, 1),
            _case("a float feature where the schema says INT", E, xr, 3, 1,
                  schema_text='feature { name: "y" type: INT }'),
            _case("feature list steps int64 then float", S, xr, 4, 1),
            _case("a schema feature of type STRUCT in an Example schema", E, xr, 0, 1,
                  schema_text='feature { name: "x" type: STRUCT struct_domain { '
                              'feature { name: "z" type: INT } } }'),
        ]),
    ]


def versions():
    return {p: importlib.metadata.version(p)
            for p in ("tfx-bsl", "tensorflow", "pyarrow", "protobuf", "tensorflow-metadata")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT, help="output directory")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    gen = versions()
    for fname, records, write_input, cases in all_inputs():
        if write_input:
            path = os.path.join(args.out, fname)
            with tf.io.TFRecordWriter(path) as w:
                for r in records:
                    w.write(r)
            with open(path, "rb") as f:
                file_sha = hashlib.sha256(f.read()).hexdigest()
            input_path = f"tests/fixtures/tfx_bsl/{fname}"
        else:
            with open(os.path.join(CONFORMANCE, fname), "rb") as f:
                file_sha = hashlib.sha256(f.read()).hexdigest()
            input_path = f"tests/fixtures/conformance/{fname}"
        doc = {
            "generator": gen,
            "command": "interop/record_tfx_bsl.py",
            "input": input_path,
            "input_sha256": file_sha,
            "num_records": len(records),
            "cases": cases,
        }
        out = os.path.join(args.out, fname.removesuffix(".tfrecord") + ".json")
        with open(out, "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False, indent=None, separators=(",", ":"),
                      allow_nan=False)
            f.write("\n")
        n_err = sum("error" in c for c in cases)
        print(f"wrote {os.path.relpath(out, REPO)}: {len(cases)} cases ({n_err} errors)",
              file=sys.stderr)


if __name__ == "__main__":
    main()
