//! Wire-level differential tests of the derive against prost: re-encoded and byte-exact
//! encodings, packed and unpacked lists, duplicate keys, replaced oneof members, OFRecord-only
//! oneof members as unknown fields, and records of more than 64 features.

use std::fmt::Debug;

use tfrecord_core::proto::{oneflow, tensorflow};
use tfrecord_core::{Decode, DecodeOwned, Encode, Example, Message, OfRecord, TfExample};

use crate::support::attr_types::{Deep, Middle, Outer};
use crate::support::checks::{assert_fails, check_both, check_styled};
use crate::support::model::{
    Feat, Feats, M, Model, feats_of_of, feats_of_tf, of_bytes, of_feature, tf_bytes, tf_feature,
};
use crate::support::styled::{
    Style, add_raw_tf_entry, put_len, put_varint, put_varint_field, styled_tf,
};
use crate::support::value_types::{Floats, IntLists, Ints, sample_ints};

/// Decodes `bytes` with prost and with the derive, and checks both see `want`.
fn same_as_prost_tf<T: Model + DecodeOwned<TfExample> + Debug>(bytes: &[u8], want: &Feats) -> T {
    let msg = tensorflow::Example::decode(bytes).expect("valid Example");
    assert_eq!(&feats_of_tf(&msg), want, "prost");
    let v = <T as Decode<TfExample>>::decode(bytes).expect("derive");
    assert_eq!(&v.feats(false), want, "derive");
    v
}

#[test]
fn prost_reencoding_sorts_keys_and_decodes_the_same() {
    // Outer's fields are not in key order, so prost's (sorted) re-encoding differs in bytes.
    let v = Outer {
        id: -9,
        middle: Middle {
            inner_count: 7,
            deep: Deep { x: 1, tag: None },
        },
        other: Deep {
            x: 2,
            tag: Some("b".into()),
        },
        trailing: vec![1.0, 2.0],
    };
    let derived = Encode::<TfExample>::encode_to_vec(&v);
    let reencoded = tensorflow::Example::decode(&derived[..])
        .unwrap()
        .encode_to_vec();
    assert_ne!(derived, reencoded, "the key order differs");
    assert_eq!(derived.len(), reencoded.len());
    let back: Outer = same_as_prost_tf(&reencoded, &v.feats(false));
    assert_eq!(back, v);
    let derived = Encode::<OfRecord>::encode_to_vec(&v);
    let reencoded = oneflow::OfRecord::decode(&derived[..])
        .unwrap()
        .encode_to_vec();
    assert_eq!(Decode::<OfRecord>::decode(&reencoded).ok(), Some(v));
}

#[test]
fn derived_encoding_matches_prost_byte_for_byte_when_keys_are_sorted() {
    // A type whose keys are declared in sorted order, as prost writes its BTreeMap.
    #[derive(Example, Debug, PartialEq)]
    struct Sorted {
        a: i64,
        b: Vec<f32>,
        c: String,
        d: Vec<i64>,
        e: Option<i32>,
        f: Vec<String>,
    }
    let v = Sorted {
        a: -1,
        b: vec![0.5, -0.0],
        c: "héllo".into(),
        d: vec![],
        e: Some(-3),
        f: vec![String::new(), "x".into()],
    };
    let derived = Encode::<TfExample>::encode_to_vec(&v);
    let prost = tensorflow::Example::decode(&derived[..])
        .unwrap()
        .encode_to_vec();
    assert_eq!(derived, prost, "tf.train.Example");
    let derived = Encode::<OfRecord>::encode_to_vec(&v);
    let prost = oneflow::OfRecord::decode(&derived[..])
        .unwrap()
        .encode_to_vec();
    assert_eq!(derived, prost, "OFRecord");
}

#[test]
fn packed_and_unpacked_lists_decode_the_same() {
    let v = IntLists {
        v_i64: vec![1, -1, i64::MAX],
        v_i32: vec![-5, 5],
        v_i16: vec![],
        v_i8: vec![-128],
        v_u32: vec![u32::MAX],
        v_u16: vec![1, 2, 3, 4],
        v_u64: vec![u64::MAX, 0],
        v_bool: vec![true, false, true],
        arr_i64: [1, 2, 3],
        arr_i32: [i32::MIN, 0],
        arr_bool: [true],
        mat: vec![1, 2, 3, 4, 5, 6],
    };
    let f = Floats {
        f: 1.5,
        v: vec![f32::NAN, -0.0, 3.25],
        arr: [1.0, 2.0, 3.0, 4.0],
        mat: vec![0.0; 6],
        opt: Some(2.5),
        d: 0.5,
        dv: vec![0.25, 8.0],
        da: [1.0, -1.0],
    };
    let plain = Style::PLAIN;
    for s in [
        plain,
        Style {
            unpacked: true,
            ..plain
        },
        Style {
            split: true,
            ..plain
        },
        Style {
            split: true,
            split_entry: true,
            unknown: true,
            ..plain
        },
    ] {
        check_styled(&v, s);
        check_styled(&f, s);
        let back: IntLists = same_as_prost_tf(&styled_tf(&v.feats(false), s), &v.feats(false));
        assert_eq!(back, v);
    }
}

#[test]
fn duplicate_keys_last_wins() {
    // Two map entries with key "a_i64": protobuf keeps the last.
    let v = sample_ints(7);
    let mut feats = v.feats(false);
    feats.remove("a_i64");
    let mut bytes = tf_bytes(&feats);
    let mut features = Vec::new();
    for value in [111i64, 222] {
        let mut list = Vec::new();
        let mut packed = Vec::new();
        put_varint(&mut packed, value.cast_unsigned());
        put_len(&mut list, 1, &packed);
        let mut feature = Vec::new();
        put_len(&mut feature, 3, &list);
        let mut entry = Vec::new();
        put_len(&mut entry, 1, b"a_i64");
        put_len(&mut entry, 2, &feature);
        put_len(&mut features, 1, &entry);
    }
    put_len(&mut bytes, 1, &features);
    let want = Ints {
        a_i64: 222,
        ..v.clone()
    };
    let back: Ints = same_as_prost_tf(&bytes, &want.feats(false));
    assert_eq!(back, want);

    // The same in an OFRecord, with the earlier entry of another kind and the key repeated
    // inside one entry (the last key of an entry wins too).
    let mut feats = v.feats(true);
    feats.remove("a_u8");
    let mut bytes = of_bytes(&feats);
    let mut first = Vec::new();
    put_len(&mut first, 1, b"a_u8");
    put_len(
        &mut first,
        2,
        &of_feature(&Feat::Bytes(vec![b"no".to_vec()])).encode_to_vec(),
    );
    put_len(&mut bytes, 1, &first);
    let mut second = Vec::new();
    put_len(&mut second, 1, b"wrong key");
    put_len(
        &mut second,
        2,
        &of_feature(&Feat::Int(vec![17])).encode_to_vec(),
    );
    put_len(&mut second, 1, b"a_u8");
    put_len(&mut bytes, 1, &second);
    let prost = oneflow::OfRecord::decode(&bytes[..]).unwrap();
    assert_eq!(feats_of_of(&prost)["a_u8"], Feat::Int(vec![17]));
    assert!(!prost.feature.contains_key("wrong key"));
    let back: Ints = Decode::<OfRecord>::decode(&bytes).unwrap();
    assert_eq!(back, Ints { a_u8: 17, ..v });
}

#[test]
fn oneof_member_replaced_by_a_later_one() {
    // A Feature with a bytes_list, then an int64_list: the last member set wins.
    let mut feature = Vec::new();
    put_len(
        &mut feature,
        1,
        &tensorflow::BytesList {
            value: vec![b"x".to_vec()],
        }
        .encode_to_vec(),
    );
    put_len(
        &mut feature,
        3,
        &tensorflow::Int64List { value: vec![77] }.encode_to_vec(),
    );
    let v = sample_ints(8);
    let mut feats = v.feats(false);
    feats.remove("a_i64");
    let bytes = add_raw_tf_entry(tf_bytes(&feats), "a_i64", &feature);
    let want = Ints { a_i64: 77, ..v };
    let back: Ints = same_as_prost_tf(&bytes, &want.feats(false));
    assert_eq!(back, want);
}

#[test]
fn oneflow_only_oneof_numbers_are_unknown_fields_in_tf() {
    // tf.train.Feature's oneof is fields 1..=3; fields 4 and 5 (OFRecord's int32 and int64
    // lists) are unknown fields there, which protobuf skips wherever they appear.
    let v = sample_ints(9);
    for (unknown_field, body) in [
        (4u32, oneflow::Int32List { value: vec![5] }.encode_to_vec()),
        (5, oneflow::Int64List { value: vec![6] }.encode_to_vec()),
    ] {
        let mut feature = tf_feature(&Feat::Int(vec![v.a_i64])).encode_to_vec();
        put_len(&mut feature, unknown_field, &body);
        let mut feats = v.feats(false);
        feats.remove("a_i64");
        let bytes = add_raw_tf_entry(tf_bytes(&feats), "a_i64", &feature);
        let back: Ints = same_as_prost_tf(&bytes, &v.feats(false));
        assert_eq!(back, v);
        // The same as a varint field.
        let mut feature = tf_feature(&Feat::Int(vec![v.a_i64])).encode_to_vec();
        put_varint_field(&mut feature, unknown_field, 1);
        let bytes = add_raw_tf_entry(tf_bytes(&feats), "a_i64", &feature);
        let back: Ints = same_as_prost_tf(&bytes, &v.feats(false));
        assert_eq!(back, v);
    }
}

macro_rules! wide_struct {
    ($($f:ident)*) => {
        /// More features than the decoder's largest inline slot table (64).
        #[derive(Example, Debug, Clone, PartialEq)]
        struct Wide {
            $($f: i64,)*
        }

        impl Model for Wide {
            fn feats(&self, of: bool) -> Feats {
                let mut m = M::new(of);
                $(m.int(stringify!($f), [self.$f]);)*
                m.done()
            }
        }

        fn wide(seed: i64) -> Wide {
            let mut i = 0;
            Wide {
                $($f: {
                    i += 1;
                    seed * 100 + i
                },)*
            }
        }
    };
}

wide_struct!(w00 w01 w02 w03 w04 w05 w06 w07 w08 w09 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 w21 w22 w23 w24 w25 w26 w27 w28 w29 w30 w31 w32 w33 w34 w35 w36 w37 w38 w39 w40 w41 w42 w43 w44 w45 w46 w47 w48 w49 w50 w51 w52 w53 w54 w55 w56 w57 w58 w59 w60 w61 w62 w63 w64 w65 w66 w67 w68 w69);

#[test]
fn more_than_64_features() {
    for seed in [-3, 0, 7] {
        let v = wide(seed);
        let (tf, of) = check_both(&v);
        assert_eq!(tf, v);
        assert_eq!(of, v);
    }
    let v = wide(1);
    for of in [false, true] {
        for key in ["w00", "w63", "w64", "w69"] {
            let mut feats = v.feats(of);
            feats.remove(key);
            assert_fails::<Wide>(
                of,
                &feats,
                key,
                &[
                    "required feature is missing",
                    &format!("(field `Wide::{key}`)"),
                ],
            );
        }
    }
    let mut feats = v.feats(false);
    feats.insert("w65".into(), Feat::Int(vec![-65]));
    let back: Wide = same_as_prost_tf(&tf_bytes(&feats), &feats);
    assert_eq!(back.w65, -65);
}

#[test]
fn a_top_level_field_of_another_wire_type_is_unknown() {
    // TensorFlow 2.21's parsers and protobuf's runtimes skip `features` (Example), `context`
    // and `feature_lists` (SequenceExample) written with another wire type, as unknown fields
    // (prost alone refuses them); inside them the same is an error (`interop/check_parse.py`
    // checks both live).
    use tfrecord_core::{SequenceExample, TfSequenceExample};

    #[derive(SequenceExample, Debug, PartialEq)]
    struct Seq {
        id: i64,
        #[example(sequence)]
        tok: Vec<Vec<i64>>,
    }

    let v = sample_ints(3);
    let bytes = tf_bytes(&v.feats(false));
    for prefix in [
        &b"\x08\x01"[..],
        b"\x0d\x01\x02\x03\x04",
        b"\x09\x01\x02\x03\x04\x05\x06\x07\x08",
    ] {
        let odd = [prefix, &bytes].concat();
        let back: Ints = Decode::<TfExample>::decode(&odd).expect("derive");
        assert_eq!(back, v);
    }
    let s = Seq {
        id: 9,
        tok: vec![vec![5], vec![]],
    };
    let bytes = Encode::<TfSequenceExample>::encode_to_vec(&s);
    for prefix in [&b"\x08\x01"[..], b"\x10\x05", b"\x15\x01\x02\x03\x04"] {
        let odd = [prefix, &bytes].concat();
        let back: Seq = Decode::<TfSequenceExample>::decode(&odd).expect("derive");
        assert_eq!(back, s);
    }
    // Inside `features`, a map entry of another wire type is an error, as in TensorFlow.
    let v_bytes = tf_bytes(&v.feats(false));
    let features = tensorflow::Example::decode(&v_bytes[..])
        .expect("valid Example")
        .features
        .expect("features")
        .encode_to_vec();
    let mut inside = Vec::new();
    put_len(&mut inside, 1, &[&b"\x08\x01"[..], &features].concat());
    let err = <Ints as Decode<TfExample>>::decode(&inside).expect_err("refused");
    assert!(err.to_string().contains("map entry"), "{err}");
}
