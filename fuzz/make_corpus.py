"""Writes the seed corpus of every fuzz target from the test fixtures.

Run from anywhere: `python3 fuzz/make_corpus.py`. The output is deterministic (no time stamps
in the gzip headers), so running it again changes no committed file. Only the small fixtures
are used, whole or in part: the committed corpus stays small.
"""

import base64
import gzip
import json
import struct
import zlib
from pathlib import Path

FUZZ = Path(__file__).resolve().parent
FIXTURES = FUZZ.parent / "tests" / "fixtures"
CONFORMANCE = FIXTURES / "conformance"
AVRO = FIXTURES / "avro"
SPECS = FUZZ.parent / "tests" / "specs"


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tf_frame(record: bytes) -> bytes:
    length = struct.pack("<Q", len(record))
    return (
        length
        + struct.pack("<I", masked(length))
        + record
        + struct.pack("<I", masked(record))
    )


def tf_records(path: Path) -> list[bytes]:
    data = path.read_bytes()
    out, at = [], 0
    while at < len(data):
        (n,) = struct.unpack_from("<Q", data, at)
        out.append(data[at + 12 : at + 12 + n])
        at += 16 + n
    return out


def of_records(path: Path) -> list[bytes]:
    data = path.read_bytes()
    out, at = [], 0
    while at < len(data):
        (n,) = struct.unpack_from("<q", data, at)
        out.append(data[at + 8 : at + 8 + n])
        at += 8 + n
    return out


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


# Protobuf encoding, enough for tf.train.Example and SequenceExample.
def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def ints(values: list[int]) -> bytes:
    return field(3, field(1, b"".join(varint(v) for v in values)))


def floats(values: list[float]) -> bytes:
    return field(2, field(1, b"".join(struct.pack("<f", v) for v in values)))


def strings(values: list[bytes]) -> bytes:
    return field(1, b"".join(field(1, v) for v in values))


def features(feats: dict[str, bytes]) -> bytes:
    entries = b"".join(
        field(1, field(1, key.encode()) + field(2, value))
        for key, value in sorted(feats.items())
    )
    return entries


def example(feats: dict[str, bytes]) -> bytes:
    return field(1, features(feats))


def sequence_example(context: dict[str, bytes], lists: dict[str, list[bytes]]) -> bytes:
    fl = b"".join(
        field(
            1,
            field(1, key.encode()) + field(2, b"".join(field(1, f) for f in steps)),
        )
        for key, steps in sorted(lists.items())
    )
    return field(1, features(context)) + field(2, fl)


def batch(records: list[bytes]) -> bytes:
    return b"".join(struct.pack("<H", len(r)) + r for r in records)


def lcg_records() -> list[bytes]:
    """Four records of 40 pseudo-random bytes, so that deflate stores them as literals."""
    seed, out = 7, []
    for _ in range(4):
        record = bytearray()
        for _ in range(40):
            seed = (seed * 1_103_515_245 + 12_345) & 0xFFFFFFFF
            record.append((seed >> 16) & 0xFF)
        out.append(bytes(record))
    return out


def framing() -> dict[str, bytes]:
    raw = tf_records(CONFORMANCE / "raw_records.tfrecord")
    small = b"".join(tf_frame(r) for r in raw if len(r) < 4000)
    seq = (CONFORMANCE / "sequence.tfrecord").read_bytes()
    of = (CONFORMANCE / "part-00000").read_bytes()
    flipped = bytearray(small)
    flipped[len(flipped) // 2] ^= 0x10
    return {
        "raw_plain": bytes([32, 0, 10]) + small,
        "raw_gzip": bytes([33, 0, 10]) + gz(small),
        "raw_zlib": bytes([2, 3, 40]) + zlib.compress(small),
        "raw_flipped": bytes([32, 1, 5]) + bytes(flipped),
        "raw_limit": bytes([16, 4, 7]) + small,
        "sequence_plain": bytes([0, 255, 255]) + seq,
        "sequence_unverified_gzip": bytes([9, 9, 33]) + gz(seq),
        "ofrecord_plain": bytes([4, 0, 50]) + of,
        "ofrecord_zlib": bytes([38, 20, 20]) + zlib.compress(of[:600]),
        "gzip_two_members": bytes([1, 0, 3]) + gz(small[:40]) + gz(small[40:]),
        "gzip_cut": bytes([33, 0, 9])
        + (CONFORMANCE / "raw_records.tfrecord.gz").read_bytes()[:300],
    }


def framing_regressions() -> dict[str, bytes]:
    # A zlib stream of four records with a byte changed near its end, read through a small
    # buffer: the chunk reader once handed out fewer of the intact records than the record
    # reader, having dropped what it inflated in a read that also met the damage.
    z = bytearray(zlib.compress(b"".join(tf_frame(r) for r in lcg_records())))
    z[len(z) - 12] ^= 0x10
    return {"zlib_damage_small_buffer": bytes([34, 0, 20]) + bytes(z)}


def single_records() -> dict[str, bytes]:
    out = {"empty": b""}
    for i, r in enumerate(tf_records(CONFORMANCE / "examples.tfrecord")[:3]):
        out[f"example_{i}"] = r
    for i, r in enumerate(tf_records(CONFORMANCE / "sequence.tfrecord")[:3]):
        out[f"sequence_{i}"] = r
    for i, r in enumerate(of_records(CONFORMANCE / "part-00000")[:2]):
        out[f"ofrecord_{i}"] = r
    cases = json.loads((CONFORMANCE / "parse_example.json").read_text())["cases"]
    for case in cases[:6]:
        out[case["name"]] = bytes.fromhex(case["records_hex"][0])
    return out


def derived() -> dict[str, bytes]:
    mixed = example(
        {
            "id": ints([42]),
            "small": ints([-3]),
            "word": ints([65535]),
            "big": ints([-1]),
            "flag": ints([1]),
            "count": ints([9]),
            "score": floats([0.25]),
            "ratio": floats([1.5]),
            "name": strings([b"mixed"]),
            "image/encoded": strings([b"\x89PNG"]),
            "note": strings([b"hello"]),
            "words": strings([b"a", b"bc"]),
            "ints": ints([1, -2, 3]),
            "floats": floats([1.0, float("nan"), -0.0]),
            "pair": ints([5, 6]),
            "grid": ints([1, 2, 3, 4]),
            "color": strings([b"red"]),
            "level": ints([7]),
            "inner/x": ints([8]),
            "inner/tags": strings([b"t"]),
            "sp_idx": ints([3, 1]),
            "sp_val": floats([0.5, 1.5]),
        }
    )
    clip = sequence_example(
        {"id": ints([1]), "title": strings([b"clip"]), "version": ints([4])},
        {
            "frames": [ints([10]), ints([11])],
            "words": [strings([b"x"]), strings([])],
            "points": [floats([1.0, 2.0]), floats([3.0, 4.0])],
            "tokens": [ints([1, 2, 3]), ints([])],
            "frames/data": [strings([b"\x00\x01"]), strings([b""])],
        },
    )
    of = field(1, field(1, b"id") + field(2, field(5, field(1, varint(42)))))
    return {
        "mixed": mixed,
        "clip": clip,
        "mixed_ofrecord": of,
        "minimal": example({"id": ints([0])}),
    }


def parse() -> dict[str, bytes]:
    out = {}
    cases = json.loads((CONFORMANCE / "parse_example.json").read_text())["cases"]
    for case in cases:
        out[case["name"]] = batch([bytes.fromhex(h) for h in case["records_hex"]])
    out["sequence"] = batch(tf_records(CONFORMANCE / "sequence.tfrecord"))
    return out


def of_ints(values: list[int], tag: int = 5) -> bytes:
    """An OFRecord Feature: int64 list (5) or int32 list (4)."""
    return field(tag, field(1, b"".join(varint(v & 0xFFFFFFFFFFFFFFFF) for v in values)))


def of_doubles(values: list[float]) -> bytes:
    return field(3, field(1, b"".join(struct.pack("<d", v) for v in values)))


def columns() -> dict[str, bytes]:
    """Records for the columnar target's specs: every kind present, absent, empty and wrong."""
    # Each feature's values by list type: "i" int64, "f" float, "b" bytes, "i32", "d" double.
    values = {
        "label": ("i", [7]), "score": ("f", [0.5]), "image": ("b", [b"a", b"b", b"c", b"d"]),
        "ids": ("i", [1, 2, 3]), "flags": ("i", [0, 1]), "small": ("i", [5, 6]),
        "points": ("f", [1.0, 2.0, 3.0, 4.0]), "box/row": ("i", [0, 3]), "box/col": ("i", [1, 2]),
        "box/score": ("f", [0.25, 0.75]), "tokens": ("i", [1, 2, 3, 4, 5, 6]),
        "tokens/len": ("i", [2, 1]), "rlimits": ("i", [1, 2, 3, 4, 5, 6]),
        "rlimits/limits": ("i", [2, 6]), "words": ("b", [b"x", b"y"]),
        "words/splits": ("i", [0, 1, 2]), "rids": ("i", [1, 2, 3]), "rids/rows": ("i", [0, 0, 2]),
        "rstarts": ("f", [1.0, 2.0]), "rstarts/starts": ("i", [0, 1]),
    }

    def tf(feats):
        enc = {"i": ints, "f": floats, "b": strings}
        return {k: enc[t](v) for k, (t, v) in feats.items()}

    def of(feats):
        enc = {"i": of_ints, "f": floats, "b": strings, "i32": lambda v: of_ints(v, 4), "d": of_doubles}
        return {k: enc[t](v) for k, (t, v) in feats.items()}

    text = dict(values, name=("b", ["café".encode()]))
    return {
        "examples": batch([example(tf(text)), example({}), example(tf({"label": ("i", [1])}))]),
        "out_of_range": batch([example(tf(dict(text, small=("i", [5, 2**31]))))]),
        "bad_text": batch([example(tf(text)), example(tf(dict(text, name=("b", [b"\xff"]))))]),
        "bad_splits": batch([example(tf(dict(text, **{"words/splits": ("i", [1, 2])})))]),
        "huge_rows": batch([example(tf(dict(text, **{"rids/rows": ("i", [0, 0, 2**40])})))]),
        "ofrecords": batch([
            features(of(dict(values, small=("i32", [-5, 6]), wide=("d", [1.5, -0.0])))),
            features({}),
        ]),
        "sequence": batch(tf_records(CONFORMANCE / "sequence.tfrecord")),
        "sequences": batch([
            sequence_example({"id": ints([1]), "lang": strings([b"en"])},
                             {"tokens": [ints([1, 2]), ints([])], "scores": [floats([1.0, 2.0])],
                              "words": [strings([b"a"])]}),
            sequence_example({}, {}),
        ]),
    }


def spec() -> dict[str, bytes]:
    return {p.stem: p.read_bytes() for p in sorted(SPECS.glob("*.toml"))}


def spec_regressions() -> dict[str, bytes]:
    # CRLF line ends and a string left open at a line end: the error's span starts on the
    # `\r`, past the line's text, where the diagnostics once panicked; and a lone `\r`.
    return {
        "crlf_open_string": b'[records.R.features.x]\r\ndtype = "int64\r\n',
        "lone_carriage_return": b'[records.A.features.x]\rdtype = "int64"\n',
    }


def avro_expr() -> dict[str, bytes]:
    out = {}
    for path in sorted(AVRO.glob("*_bs1.json")):
        case = json.loads(path.read_text())
        for i, (source, feature) in enumerate(sorted(case["features"].items())):
            lines = [source]
            if feature.get("kind") == "sparse":
                index = feature["index_key"]
                lines += [
                    index if isinstance(index, str) else index[0],
                    feature["value_key"],
                ]
            out[f"{path.stem.removesuffix('_bs1')}_{i}"] = "\n".join(lines).encode()
    return out


def avro_file() -> dict[str, bytes]:
    return {p.stem: p.read_bytes() for p in sorted(AVRO.glob("*.avro"))}


def proto_json_feature(f: dict) -> dict:
    kind, values = f["kind"], f["value"]
    if kind == "bytes_list":
        return {
            "bytesList": {
                "value": [
                    base64.b64encode(bytes.fromhex(v["hex"])).decode() for v in values
                ]
            }
        }
    if kind == "float_list":
        return {"floatList": {"value": values}}
    if kind == "int64_list":
        return {"int64List": {"value": [str(v) for v in values]}}
    return {}


def lines(rows: list) -> bytes:
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows).encode()


def json_lines() -> dict[str, bytes]:
    persons = json.loads((AVRO / "persons.records.json").read_text())["records"][:3]
    examples = json.loads((CONFORMANCE / "examples.json").read_text())["examples"][:3]
    proto = [
        {"features": {"feature": {k: proto_json_feature(f) for k, f in e.items()}}}
        for e in examples
    ]
    return {
        "persons": lines(persons),
        "proto_examples": lines(proto),
        "flat": b'{"a": 1, "b": 2.5, "c": "x", "d": [1, 2], "e": true, "f": {"g": null}}\n'
        b'{"a": 2, "b": 3, "c": "y", "d": [], "e": false}\n',
        "csv": b"a,b,c\n1,2.5,x\n2,nan,y\n",
        "sequence": b'{"context": {"feature": {"id": {"int64List": {"value": ["1"]}}}}, '
        b'"featureLists": {"featureList": {"t": {"feature": [{"floatList": {"value": [1, "NaN"]}}]}}}}\n',
    }


def write(folder: str, target: str, inputs: dict[str, bytes]) -> None:
    out = FUZZ / folder / target
    out.mkdir(parents=True, exist_ok=True)
    for name, data in inputs.items():
        (out / name).write_bytes(data)


def main() -> None:
    records = single_records()
    write("corpus", "framing", framing())
    write("regressions", "framing", framing_regressions())
    write("corpus", "messages", records)
    write("corpus", "derived", {**derived(), **records})
    write("corpus", "parse", parse())
    write("corpus", "columns", columns())
    write("corpus", "spec", spec())
    write("regressions", "spec", spec_regressions())
    write("corpus", "avro_expr", avro_expr())
    write("corpus", "avro_file", avro_file())
    write("corpus", "json_lines", json_lines())


if __name__ == "__main__":
    main()
