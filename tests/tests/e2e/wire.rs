//! Decoding hand-built protobuf wire bytes: every valid encoding the protobuf specification
//! allows must decode to the same values, whatever encoder wrote it (packed or not, split runs,
//! map entries in any field order, repeated map keys, oneof members seen twice, unknown
//! fields anywhere).

use std::collections::BTreeMap;

use tfrecord_core::Message;
use tfrecord_core::proto::oneflow::{self, OfRecord};
use tfrecord_core::proto::tensorflow::{
    self, BytesList, Example, Feature, FeatureList, FeatureLists, Features, FloatList, Int64List,
    SequenceExample, feature::Kind,
};

use crate::support::{
    len_field, map_entry, packed_f32, packed_f64, packed_int64, unknown_fields, unpacked_f32,
    unpacked_f64, unpacked_int64, varint, varint_field,
};

// tensorflow.Feature oneof numbers.
const BYTES: u32 = 1;
const FLOATS: u32 = 2;
const INT64S: u32 = 3;

fn int64s(values: &[i64]) -> Feature {
    Feature {
        kind: Some(Kind::Int64List(Int64List {
            value: values.to_vec(),
        })),
    }
}

fn floats(values: &[f32]) -> Feature {
    Feature {
        kind: Some(Kind::FloatList(FloatList {
            value: values.to_vec(),
        })),
    }
}

fn bytes(values: &[&[u8]]) -> Feature {
    Feature {
        kind: Some(Kind::BytesList(BytesList {
            value: values.iter().map(|v| v.to_vec()).collect(),
        })),
    }
}

fn features(entries: &[(&str, Feature)]) -> Features {
    Features {
        feature: entries
            .iter()
            .map(|(k, f)| ((*k).to_string(), f.clone()))
            .collect(),
    }
}

/// An Example holding the given `Features` wire bytes.
fn example_bytes(features_payload: &[u8]) -> Vec<u8> {
    len_field(1, features_payload)
}

fn decode_example(bytes: &[u8]) -> Example {
    Example::decode(bytes).unwrap_or_else(|e| panic!("decodes: {e}"))
}

/// Float bit patterns, so that NaN and -0.0 compare exactly.
fn float_bits(feature: &Feature) -> Vec<u32> {
    match &feature.kind {
        Some(Kind::FloatList(l)) => l.value.iter().map(|f| f.to_bits()).collect(),
        other => panic!("not a float list: {other:?}"),
    }
}

const INTS: [i64; 7] = [0, 1, -1, 300, i64::MAX, i64::MIN, -2_147_483_649];

fn special_floats() -> [f32; 7] {
    [
        0.0,
        -0.0,
        1.5,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::from_bits(1),
    ]
}

#[test]
fn packed_and_unpacked_int64_and_float() {
    let fl = special_floats();
    let payload = [
        map_entry(1, "packed_i", &len_field(INT64S, &packed_int64(1, &INTS))),
        map_entry(
            1,
            "unpacked_i",
            &len_field(INT64S, &unpacked_int64(1, &INTS)),
        ),
        map_entry(1, "packed_f", &len_field(FLOATS, &packed_f32(1, &fl))),
        map_entry(1, "unpacked_f", &len_field(FLOATS, &unpacked_f32(1, &fl))),
    ]
    .concat();
    let ex = decode_example(&example_bytes(&payload));
    let f = &ex.features.expect("features").feature;
    assert_eq!(f["packed_i"], int64s(&INTS));
    assert_eq!(f["unpacked_i"], int64s(&INTS));
    let want: Vec<u32> = fl.iter().map(|x| x.to_bits()).collect();
    assert_eq!(float_bits(&f["packed_f"]), want);
    assert_eq!(float_bits(&f["unpacked_f"]), want);
}

#[test]
fn packed_runs_split_and_mixed_with_unpacked() {
    // A packed run split in two.
    let split = [packed_int64(1, &INTS[..3]), packed_int64(1, &INTS[3..])].concat();
    // Unpacked, packed, unpacked, packed (and an empty packed run).
    let mixed = [
        unpacked_int64(1, &INTS[..1]),
        packed_int64(1, &INTS[1..4]),
        packed_int64(1, &[]),
        unpacked_int64(1, &INTS[4..5]),
        packed_int64(1, &INTS[5..]),
    ]
    .concat();
    let fl = special_floats();
    let mixed_f = [
        packed_f32(1, &fl[..2]),
        unpacked_f32(1, &fl[2..4]),
        packed_f32(1, &fl[4..]),
    ]
    .concat();
    let payload = [
        map_entry(1, "split", &len_field(INT64S, &split)),
        map_entry(1, "mixed", &len_field(INT64S, &mixed)),
        map_entry(1, "mixed_f", &len_field(FLOATS, &mixed_f)),
    ]
    .concat();
    let ex = decode_example(&example_bytes(&payload));
    let f = &ex.features.expect("features").feature;
    assert_eq!(f["split"], int64s(&INTS));
    assert_eq!(f["mixed"], int64s(&INTS));
    let want: Vec<u32> = fl.iter().map(|x| x.to_bits()).collect();
    assert_eq!(float_bits(&f["mixed_f"]), want);
}

#[test]
fn map_entries_in_any_order_and_with_missing_parts() {
    let value = len_field(INT64S, &packed_int64(1, &[42]));
    let value_first = len_field(
        1,
        &[len_field(2, &value), len_field(1, b"value_first")].concat(),
    );
    // A key given twice inside one entry: the last one counts.
    let key_twice = len_field(
        1,
        &[
            len_field(1, b"ignored"),
            len_field(2, &value),
            len_field(1, b"key_twice"),
        ]
        .concat(),
    );
    // No key: the key is "". No value: the default Feature (no kind).
    let no_key = len_field(1, &len_field(2, &len_field(BYTES, &len_field(1, b"x"))));
    let no_value = len_field(1, &len_field(1, b"no_value"));
    let payload = [value_first, key_twice, no_key, no_value].concat();
    let ex = decode_example(&example_bytes(&payload));
    let want = features(&[
        ("value_first", int64s(&[42])),
        ("key_twice", int64s(&[42])),
        ("", bytes(&[b"x"])),
        ("no_value", Feature { kind: None }),
    ]);
    assert_eq!(ex.features, Some(want));
}

#[test]
fn duplicate_feature_keys_keep_the_last_value() {
    let payload = [
        map_entry(1, "a", &len_field(INT64S, &packed_int64(1, &[1, 2]))),
        map_entry(1, "b", &len_field(BYTES, &len_field(1, b"b"))),
        // Same kind again: replaced, not merged.
        map_entry(1, "a", &len_field(INT64S, &packed_int64(1, &[3]))),
        // A different kind for "b": the last one counts.
        map_entry(1, "b", &len_field(FLOATS, &packed_f32(1, &[2.5]))),
    ]
    .concat();
    let ex = decode_example(&example_bytes(&payload));
    assert_eq!(
        ex.features,
        Some(features(&[("a", int64s(&[3])), ("b", floats(&[2.5]))]))
    );
}

#[test]
fn example_features_given_twice_are_merged() {
    // A non-repeated message field seen twice is merged: the two maps are combined, and a
    // key in both keeps the later value.
    let first = example_bytes(
        &[
            map_entry(1, "a", &len_field(INT64S, &packed_int64(1, &[1]))),
            map_entry(1, "b", &len_field(INT64S, &packed_int64(1, &[2]))),
        ]
        .concat(),
    );
    let second = example_bytes(&map_entry(
        1,
        "b",
        &len_field(INT64S, &packed_int64(1, &[3])),
    ));
    let ex = decode_example(&[first, second].concat());
    assert_eq!(
        ex.features,
        Some(features(&[("a", int64s(&[1])), ("b", int64s(&[3]))]))
    );
}

#[test]
fn oneof_set_twice() {
    // Different members: the last member wins, nothing of the first is kept.
    let int_then_float = [
        len_field(INT64S, &packed_int64(1, &[1, 2])),
        len_field(FLOATS, &packed_f32(1, &[0.5])),
    ]
    .concat();
    let float_then_bytes = [
        len_field(FLOATS, &packed_f32(1, &[0.5])),
        len_field(BYTES, &len_field(1, b"last")),
    ]
    .concat();
    // The same member twice: the two messages are merged, so the values concatenate.
    let int_twice = [
        len_field(INT64S, &packed_int64(1, &[1, 2])),
        len_field(INT64S, &unpacked_int64(1, &[3])),
    ]
    .concat();
    let bytes_twice = [
        len_field(BYTES, &len_field(1, b"a")),
        len_field(BYTES, &[len_field(1, b""), len_field(1, b"c")].concat()),
    ]
    .concat();
    let float_twice = [
        len_field(FLOATS, &packed_f32(1, &[1.0])),
        len_field(FLOATS, &packed_f32(1, &[2.0, 3.0])),
    ]
    .concat();
    // A, B, A: switching members drops what came before, so only the last A is left.
    let int_float_int = [
        len_field(INT64S, &packed_int64(1, &[1])),
        len_field(FLOATS, &packed_f32(1, &[2.0])),
        len_field(INT64S, &packed_int64(1, &[3])),
    ]
    .concat();
    let cases: [(&str, Vec<u8>, Feature); 6] = [
        ("int_then_float", int_then_float, floats(&[0.5])),
        ("float_then_bytes", float_then_bytes, bytes(&[b"last"])),
        ("int_twice", int_twice, int64s(&[1, 2, 3])),
        ("bytes_twice", bytes_twice, bytes(&[b"a", b"", b"c"])),
        ("float_twice", float_twice, floats(&[1.0, 2.0, 3.0])),
        ("int_float_int", int_float_int, int64s(&[3])),
    ];
    for (name, feature_bytes, want) in cases {
        assert_eq!(
            Feature::decode(&feature_bytes[..]).expect("decodes"),
            want,
            "{name}"
        );
        // The same inside a whole Example.
        let ex = decode_example(&example_bytes(&map_entry(1, name, &feature_bytes)));
        assert_eq!(ex.features.expect("features").feature[name], want, "{name}");
    }
}

#[test]
fn unknown_fields_are_skipped_everywhere_in_an_example() {
    let u = unknown_fields();
    let int_list = [
        u.clone(),
        packed_int64(1, &[7, -7]),
        u.clone(),
        unpacked_int64(1, &[8]),
    ]
    .concat();
    let float_list = [unpacked_f32(1, &[1.25]), u.clone(), packed_f32(1, &[-0.0])].concat();
    let bytes_list = [u.clone(), len_field(1, b"v"), u.clone()].concat();
    let feature_i = [u.clone(), len_field(INT64S, &int_list), u.clone()].concat();
    let feature_f = [len_field(FLOATS, &float_list), u.clone()].concat();
    let feature_b = [u.clone(), len_field(BYTES, &bytes_list)].concat();
    let entry = |key: &str, value: &[u8]| -> Vec<u8> {
        len_field(
            1,
            &[
                u.clone(),
                len_field(1, key.as_bytes()),
                u.clone(),
                len_field(2, value),
                u.clone(),
            ]
            .concat(),
        )
    };
    let features_payload = [
        u.clone(),
        entry("i", &feature_i),
        u.clone(),
        entry("f", &feature_f),
        entry("b", &feature_b),
        u.clone(),
    ]
    .concat();
    let example = [u.clone(), example_bytes(&features_payload), u.clone()].concat();
    let ex = decode_example(&example);
    let f = ex.features.expect("features").feature;
    assert_eq!(f.len(), 3);
    assert_eq!(f["i"], int64s(&[7, -7, 8]));
    assert_eq!(float_bits(&f["f"]), [1.25f32.to_bits(), 0x8000_0000]);
    assert_eq!(f["b"], bytes(&[b"v"]));

    // Only unknown fields: an Example with no features.
    assert_eq!(decode_example(&u), Example::default());
}

#[test]
fn non_minimal_varints_and_int64_encodings() {
    // 1 with redundant continuation bytes; -1 as the 10-byte varint; 300 as three bytes.
    let payload = [
        vec![0x08, 0x81, 0x80, 0x80, 0x00],
        varint_field(1, u64::MAX),
        vec![0x08, 0xac, 0x82, 0x00],
        // A packed run whose length prefix itself is non-minimal (2 as 0x82 0x00).
        vec![0x0a, 0x82, 0x00, 0x05, 0x06],
    ]
    .concat();
    assert_eq!(
        Int64List::decode(&payload[..]).expect("decodes").value,
        [1, -1, 300, 5, 6]
    );
    // Malformed input is an error, never a panic: a length past the end, a varint of 11
    // bytes, a key of field 0.
    for bad in [
        vec![0x0a, 0x05, 0x01],
        [vec![0x08], vec![0xff; 10], vec![0x01]].concat(),
        vec![0x00, 0x01],
        vec![0x0a],
    ] {
        assert!(Int64List::decode(&bad[..]).is_err(), "{bad:02x?}");
        assert!(
            Example::decode(&len_field(1, &bad)[..]).is_err(),
            "{bad:02x?}"
        );
    }
    assert_eq!(varint(0x80), [0x80, 0x01]);
}

#[test]
fn sequence_example_all_encodings() {
    let u = unknown_fields();
    let context = [
        u.clone(),
        map_entry(1, "id", &len_field(INT64S, &unpacked_int64(1, &[9]))),
        // Value before key in the context map.
        len_field(
            1,
            &[
                len_field(2, &len_field(BYTES, &len_field(1, b"en"))),
                len_field(1, b"lang"),
            ]
            .concat(),
        ),
        map_entry(1, "id", &len_field(INT64S, &packed_int64(1, &[10]))),
    ]
    .concat();
    let tokens_list = [
        u.clone(),
        len_field(1, &len_field(INT64S, &packed_int64(1, &[1, 2]))),
        len_field(1, &len_field(INT64S, &unpacked_int64(1, &[3]))),
        u.clone(),
        // A feature whose oneof is set twice with the same member: merged.
        len_field(
            1,
            &[
                len_field(INT64S, &packed_int64(1, &[4])),
                len_field(INT64S, &packed_int64(1, &[5])),
            ]
            .concat(),
        ),
        // An empty Feature in the list.
        len_field(1, &[]),
    ]
    .concat();
    let scores_list = [
        len_field(1, &len_field(FLOATS, &unpacked_f32(1, &[0.25]))),
        len_field(
            1,
            &[
                len_field(INT64S, &packed_int64(1, &[1])),
                len_field(FLOATS, &packed_f32(1, &[0.5])),
            ]
            .concat(),
        ),
    ]
    .concat();
    let feature_lists = [
        u.clone(),
        // Value before key.
        len_field(
            1,
            &[
                len_field(2, &tokens_list),
                u.clone(),
                len_field(1, b"tokens"),
            ]
            .concat(),
        ),
        map_entry(
            1,
            "scores",
            &len_field(1, &len_field(FLOATS, &packed_f32(1, &[9.0]))),
        ),
        // The same key again: the last FeatureList replaces the first.
        map_entry(1, "scores", &scores_list),
        map_entry(1, "empty", &[]),
    ]
    .concat();
    let wire = [
        u.clone(),
        len_field(2, &feature_lists),
        len_field(1, &context),
        u.clone(),
    ]
    .concat();
    let seq = SequenceExample::decode(&wire[..]).expect("decodes");
    let want = SequenceExample {
        context: Some(features(&[
            ("id", int64s(&[10])),
            ("lang", bytes(&[b"en"])),
        ])),
        feature_lists: Some(FeatureLists {
            feature_list: BTreeMap::from([
                (
                    "tokens".to_string(),
                    FeatureList {
                        feature: vec![
                            int64s(&[1, 2]),
                            int64s(&[3]),
                            int64s(&[4, 5]),
                            Feature { kind: None },
                        ],
                    },
                ),
                (
                    "scores".to_string(),
                    FeatureList {
                        feature: vec![floats(&[0.25]), floats(&[0.5])],
                    },
                ),
                ("empty".to_string(), FeatureList { feature: vec![] }),
            ]),
        }),
    };
    assert_eq!(seq, want);

    // Context given twice: merged like any message field.
    let twice = [
        len_field(
            1,
            &map_entry(1, "a", &len_field(INT64S, &packed_int64(1, &[1]))),
        ),
        len_field(
            1,
            &map_entry(1, "b", &len_field(BYTES, &len_field(1, b"b"))),
        ),
    ]
    .concat();
    let seq = SequenceExample::decode(&twice[..]).expect("decodes");
    assert_eq!(
        seq.context,
        Some(features(&[("a", int64s(&[1])), ("b", bytes(&[b"b"]))]))
    );
    assert_eq!(seq.feature_lists, None);
}

// oneflow.Feature oneof numbers: 1 bytes, 2 float, 3 double, 4 int32, 5 int64.
const OF_BYTES: u32 = 1;
const OF_FLOATS: u32 = 2;
const OF_DOUBLES: u32 = 3;
const OF_INT32S: u32 = 4;
const OF_INT64S: u32 = 5;

fn of(kind: oneflow::feature::Kind) -> oneflow::Feature {
    oneflow::Feature { kind: Some(kind) }
}

#[test]
fn ofrecord_all_encodings() {
    use oneflow::feature::Kind as K;
    let u = unknown_fields();
    let doubles = [
        0.0,
        -0.0,
        std::f64::consts::PI,
        f64::NAN,
        f64::INFINITY,
        f64::MIN_POSITIVE,
        1e300,
    ];
    let double_bits: Vec<u64> = doubles.iter().map(|d| d.to_bits()).collect();
    // int32 on the wire: negative values are sign-extended 10-byte varints; a value wider than
    // 32 bits is truncated, as protobuf specifies.
    let int32_payload = [
        u.clone(),
        varint_field(1, (-5i64).cast_unsigned()),
        len_field(1, &[varint(7), varint((-1i64).cast_unsigned())].concat()),
        varint_field(1, 0x1_0000_0003),
        u.clone(),
    ]
    .concat();
    let payload = [
        u.clone(),
        // The map is field 1 of OFRecord itself.
        map_entry(
            1,
            "d_packed",
            &len_field(OF_DOUBLES, &packed_f64(1, &doubles)),
        ),
        map_entry(
            1,
            "d_mixed",
            &len_field(
                OF_DOUBLES,
                &[
                    unpacked_f64(1, &doubles[..3]),
                    u.clone(),
                    packed_f64(1, &doubles[3..]),
                ]
                .concat(),
            ),
        ),
        map_entry(1, "i32", &len_field(OF_INT32S, &int32_payload)),
        map_entry(
            1,
            "i64",
            &len_field(
                OF_INT64S,
                &[packed_int64(1, &INTS[..2]), unpacked_int64(1, &INTS[2..])].concat(),
            ),
        ),
        // Value before key, unknown fields in the entry.
        len_field(
            1,
            &[
                u.clone(),
                len_field(
                    2,
                    &[len_field(OF_BYTES, &len_field(1, b"jpeg")), u.clone()].concat(),
                ),
                len_field(1, b"img"),
            ]
            .concat(),
        ),
        map_entry(
            1,
            "f",
            &len_field(OF_FLOATS, &unpacked_f32(1, &[0.5, -2.0])),
        ),
        // Oneof: int32 then int64 => int64 only.
        map_entry(
            1,
            "switch",
            &[
                len_field(OF_INT32S, &packed_int64(1, &[1])),
                len_field(OF_INT64S, &packed_int64(1, &[2])),
            ]
            .concat(),
        ),
        // Oneof: double twice => merged.
        map_entry(
            1,
            "merge",
            &[
                len_field(OF_DOUBLES, &packed_f64(1, &[1.0])),
                len_field(OF_DOUBLES, &unpacked_f64(1, &[2.0])),
            ]
            .concat(),
        ),
        // Duplicate key: the last one wins.
        map_entry(1, "dup", &len_field(OF_INT64S, &packed_int64(1, &[1]))),
        map_entry(1, "dup", &len_field(OF_BYTES, &len_field(1, b"last"))),
        u.clone(),
    ]
    .concat();
    let rec = OfRecord::decode(&payload[..]).expect("decodes");
    let f = &rec.feature;
    let keys: Vec<&str> = f.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "d_mixed", "d_packed", "dup", "f", "i32", "i64", "img", "merge", "switch"
        ]
    );
    for key in ["d_packed", "d_mixed"] {
        let Some(K::DoubleList(l)) = &f[key].kind else {
            panic!("{key} is a double list");
        };
        let bits: Vec<u64> = l.value.iter().map(|d| d.to_bits()).collect();
        assert_eq!(bits, double_bits, "{key}");
    }
    assert_eq!(
        f["i32"],
        of(K::Int32List(oneflow::Int32List {
            value: vec![-5, 7, -1, 3]
        }))
    );
    assert_eq!(
        f["i64"],
        of(K::Int64List(oneflow::Int64List {
            value: INTS.to_vec()
        }))
    );
    assert_eq!(
        f["img"],
        of(K::BytesList(oneflow::BytesList {
            value: vec![b"jpeg".to_vec()]
        }))
    );
    assert_eq!(
        f["f"],
        of(K::FloatList(oneflow::FloatList {
            value: vec![0.5, -2.0]
        }))
    );
    assert_eq!(
        f["switch"],
        of(K::Int64List(oneflow::Int64List { value: vec![2] }))
    );
    assert_eq!(
        f["merge"],
        of(K::DoubleList(oneflow::DoubleList {
            value: vec![1.0, 2.0]
        }))
    );
    assert_eq!(
        f["dup"],
        of(K::BytesList(oneflow::BytesList {
            value: vec![b"last".to_vec()]
        }))
    );

    // The numbering differs from tensorflow.Feature: field 3 is a double list in OFRecord
    // but an int64 list in tensorflow. The same bytes decode differently.
    let three = len_field(3, &packed_f64(1, &[1.0]));
    assert_eq!(
        oneflow::Feature::decode(&three[..]).expect("decodes"),
        of(K::DoubleList(oneflow::DoubleList { value: vec![1.0] }))
    );
    let tf = tensorflow::Feature::decode(&three[..]).expect("decodes as int64 varints");
    assert!(matches!(tf.kind, Some(Kind::Int64List(_))));
}
