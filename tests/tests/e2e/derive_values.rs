//! The derive on hand-picked values: integer extremes and ranges, bools, float bits (NaN
//! payloads, `-0.0`), UTF-8, array counts and shapes, and wrong list kinds; every error names
//! its feature key and field.

use tfrecord_core::proto::{oneflow, tensorflow};
use tfrecord_core::{Decode, Encode, Example, Message, OfRecord, TfExample};

use crate::support::attr_types::{Borrowed, sample_borrowed_feats};
use crate::support::checks::{assert_fails, check_both, feature_error};
use crate::support::model::{Feat, Feats, M, Model, feats_of_of, feats_of_tf, of_bytes, tf_bytes};
use crate::support::styled::{put_len, put_varint};
use crate::support::value_types::{
    Doubles, Floats, IntLists, Ints, Opts, Texts, opts_all_none, sample_ints,
};

#[test]
fn integer_extremes_both_containers() {
    let min = Ints {
        a_i64: i64::MIN,
        a_i32: i32::MIN,
        a_i16: i16::MIN,
        a_i8: i8::MIN,
        a_u8: u8::MIN,
        a_u32: u32::MIN,
        a_u16: u16::MIN,
        a_u64: u64::MIN,
        a_bool: false,
    };
    let max = Ints {
        a_i64: i64::MAX,
        a_i32: i32::MAX,
        a_i16: i16::MAX,
        a_i8: i8::MAX,
        a_u8: u8::MAX,
        a_u32: u32::MAX,
        a_u16: u16::MAX,
        a_u64: u64::MAX,
        a_bool: true,
    };
    for v in [&min, &max] {
        let (tf, of) = check_both(v);
        assert_eq!(&tf, v);
        assert_eq!(&of, v);
    }
    // u64 is bit-preserving: u64::MAX is int64 -1 on the wire, and -1 reads back as u64::MAX.
    let msg = tensorflow::Example::decode(&Encode::<TfExample>::encode_to_vec(&max)[..]).unwrap();
    assert_eq!(
        feats_of_tf(&msg)["a_u64"],
        Feat::Int(vec![-1]),
        "u64::MAX is stored as int64 -1"
    );
    assert_eq!(feats_of_tf(&msg)["a_u32"], Feat::Int(vec![4_294_967_295]));
    // In OFRecord, i32 is an int32_list; everything else an int64_list.
    let rec = oneflow::OfRecord::decode(&Encode::<OfRecord>::encode_to_vec(&min)[..]).unwrap();
    assert_eq!(feats_of_of(&rec)["a_i32"], Feat::Int32(vec![i32::MIN]));
    assert_eq!(feats_of_of(&rec)["a_i64"], Feat::Int(vec![i64::MIN]));
}

#[test]
fn narrow_integers_out_of_range_are_errors() {
    let base = sample_ints(1);
    // (key, value, Rust type, OFRecord too): the value does not fit the field's type.
    let cases: &[(&str, i64, &str, bool)] = &[
        ("a_i8", 128, "i8", true),
        ("a_i8", -129, "i8", true),
        ("a_i16", 32_768, "i16", true),
        ("a_i16", -32_769, "i16", true),
        ("a_u8", 256, "u8", true),
        ("a_u8", -1, "u8", true),
        ("a_u16", 65_536, "u16", true),
        ("a_u16", -1, "u16", true),
        ("a_u32", 1 << 32, "u32", true),
        ("a_u32", -1, "u32", true),
        ("a_i32", 1 << 31, "i32", false),
        ("a_i32", -(1 << 31) - 1, "i32", false),
    ];
    for &(key, value, ty, in_of) in cases {
        for of in [false, true] {
            if of && !in_of {
                continue;
            }
            let mut feats = base.feats(of);
            feats.insert(key.into(), Feat::Int(vec![value]));
            assert_fails::<Ints>(
                of,
                &feats,
                key,
                &[
                    &format!("value {value} does not fit in `{ty}`"),
                    &format!("(field `Ints::{key}`)"),
                ],
            );
        }
    }
    // The same values in range decode (the boundaries are inclusive).
    let mut feats = base.feats(false);
    feats.insert("a_i8".into(), Feat::Int(vec![-128]));
    feats.insert("a_u32".into(), Feat::Int(vec![u32::MAX.into()]));
    let v: Ints = Decode::<TfExample>::decode(&tf_bytes(&feats)).unwrap();
    assert_eq!((v.a_i8, v.a_u32), (-128, u32::MAX));
    // Lists are range-checked value by value.
    let mut feats = IntLists::default_value().feats(false);
    feats.insert("v_i8".into(), Feat::Int(vec![1, 2, 300]));
    assert_fails::<IntLists>(false, &feats, "v_i8", &["value 300 does not fit in `i8`"]);
}

#[test]
fn ofrecord_int32_reads_the_low_32_bits_like_protobuf() {
    // An int32_list varint wider than 32 bits: protobuf keeps the low 32 bits.
    let mut body = Vec::new();
    put_varint(&mut body, (1u64 << 32) + 5);
    let mut list = Vec::new();
    put_len(&mut list, 1, &body);
    let mut feature = Vec::new();
    put_len(&mut feature, 4, &list);
    let mut feats = Feats::new();
    feats.insert("i".into(), Feat::Int32(vec![0]));
    feats.insert("d".into(), Feat::Double(vec![0]));
    feats.insert("dv".into(), Feat::Double(vec![]));
    feats.insert("da".into(), Feat::Double(vec![0; 3]));
    feats.insert("iv".into(), Feat::Int32(vec![]));
    let mut bytes = of_bytes(&feats);
    let mut entry = Vec::new();
    put_len(&mut entry, 1, b"i");
    put_len(&mut entry, 2, &feature);
    put_len(&mut bytes, 1, &entry);
    let prost = oneflow::OfRecord::decode(&bytes[..]).unwrap();
    assert_eq!(feats_of_of(&prost)["i"], Feat::Int32(vec![5]));
    let v: Doubles = Decode::<OfRecord>::decode(&bytes).unwrap();
    assert_eq!(v.i, 5);
    // An OFRecord i32 field reads an int32_list only.
    feats.insert("i".into(), Feat::Int(vec![5]));
    let (key, msg) = feature_error(<Doubles as Decode<OfRecord>>::decode(&of_bytes(&feats)));
    assert_eq!(key.as_deref(), Some("i"));
    assert!(
        msg.contains("expected int32_list, found int64_list"),
        "{msg}"
    );
}

#[test]
fn bool_other_than_0_or_1_is_an_error() {
    for of in [false, true] {
        for bad in [2, -1, i64::MAX] {
            let mut feats = sample_ints(2).feats(of);
            feats.insert("a_bool".into(), Feat::Int(vec![bad]));
            assert_fails::<Ints>(
                of,
                &feats,
                "a_bool",
                &[&format!("expected 0 or 1 for a `bool`, found {bad}")],
            );
        }
    }
    let mut feats = IntLists::default_value().feats(false);
    feats.insert("v_bool".into(), Feat::Int(vec![0, 1, 2]));
    assert_fails::<IntLists>(false, &feats, "v_bool", &["found 2"]);
}

#[test]
fn float_bits_nan_and_negative_zero() {
    let v = Floats {
        f: -0.0,
        v: vec![
            f32::NAN,
            f32::from_bits(0xffc0_0001),
            f32::INFINITY,
            f32::MIN_POSITIVE / 4.0,
        ],
        arr: [-0.0, 0.0, f32::NEG_INFINITY, f32::from_bits(0x7f80_0001)],
        mat: vec![1.0; 6],
        opt: Some(-0.0),
        d: -0.0,
        dv: vec![f64::NAN, 1.0e-320, -1.0e300],
        da: [f64::INFINITY, 0.1],
    };
    let (tf, of) = check_both(&v);
    assert_eq!(tf.f.to_bits(), (-0.0f32).to_bits());
    assert_eq!(
        tf.v.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
        v.v.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
        "NaN payloads survive"
    );
    assert_eq!(of.arr.map(f32::to_bits), v.arr.map(f32::to_bits));
    assert_eq!(of.opt.map(f32::to_bits), Some((-0.0f32).to_bits()));
    // OFRecord keeps f64 bit-exact, NaN included.
    assert_eq!(
        of.dv.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
        v.dv.iter().map(|d| d.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!(of.d.to_bits(), (-0.0f64).to_bits());
    // tf.train.Example rounds to f32: a NaN stays NaN, 1e-320 flushes to 0, -1e300 to -inf.
    assert!(tf.dv[0].is_nan());
    assert_eq!(tf.dv[1].to_bits(), 0.0f64.to_bits());
    assert_eq!(tf.dv[2], f64::NEG_INFINITY);
    #[allow(clippy::cast_possible_truncation)]
    let narrowed = f64::from(0.1f64 as f32);
    assert_eq!(tf.da[1], narrowed);
    assert_ne!(tf.da[1], 0.1, "lossy really is lossy");
    assert_eq!(tf.d.to_bits(), (-0.0f64).to_bits());
}

#[test]
fn invalid_utf8_is_an_error() {
    let base = Texts {
        s: "ok".into(),
        b: vec![],
        by: bytes::Bytes::new(),
        vs: vec![],
        vb: vec![],
        vby: vec![],
        arr_s: [String::new(), String::new()],
        opt_s: None,
        opt_b: None,
        pair: vec![vec![], vec![]],
    };
    for of in [false, true] {
        for (key, value) in [
            ("s", vec![vec![0xff]]),
            ("vs", vec![b"fine".to_vec(), vec![0xc3, 0x28]]),
            ("arr_s", vec![b"a".to_vec(), vec![0x80]]),
            ("opt_s", vec![vec![0xed, 0xa0, 0x80]]),
        ] {
            let mut feats = base.feats(of);
            feats.insert(key.into(), Feat::Bytes(value));
            assert_fails::<Texts>(
                of,
                &feats,
                key,
                &["expected UTF-8 text, found invalid UTF-8 bytes"],
            );
        }
        // Bytes fields take any bytes.
        let mut feats = base.feats(of);
        feats.insert("b".into(), Feat::Bytes(vec![vec![0xff, 0xfe]]));
        let v: Texts = if of {
            Decode::<OfRecord>::decode(&of_bytes(&feats)).unwrap()
        } else {
            Decode::<TfExample>::decode(&tf_bytes(&feats)).unwrap()
        };
        assert_eq!(v.b, vec![0xff, 0xfe]);
    }
    // Borrowed text too.
    let mut feats = sample_borrowed_feats();
    feats.insert("text".into(), Feat::Bytes(vec![vec![0xff]]));
    let bytes = tf_bytes(&feats);
    let (key, msg) = feature_error(<Borrowed<'_> as Decode<TfExample>>::decode(&bytes));
    assert_eq!(key.as_deref(), Some("text"));
    assert!(msg.contains("invalid UTF-8"), "{msg}");
    feats.insert("text".into(), Feat::Bytes(vec![b"t".to_vec()]));
    feats.insert("cow_s".into(), Feat::Bytes(vec![vec![0xff]]));
    let bytes = tf_bytes(&feats);
    let (key, _) = feature_error(<Borrowed<'_> as Decode<TfExample>>::decode(&bytes));
    assert_eq!(key.as_deref(), Some("cow_s"));
}

#[test]
fn counts_of_arrays_and_shapes_are_checked() {
    let base = IntLists::default_value();
    for of in [false, true] {
        let cases: &[(&str, Feat, &str)] = &[
            (
                "arr_i64",
                Feat::Int(vec![1, 2]),
                "expected 3 values, found 2",
            ),
            (
                "arr_i64",
                Feat::Int(vec![1, 2, 3, 4]),
                "expected 3 values, found 4",
            ),
            ("arr_bool", Feat::Int(vec![]), "expected 1 value, found 0"),
            ("mat", Feat::Int(vec![1; 5]), "expected 6 values, found 5"),
            ("mat", Feat::Int(vec![1; 7]), "expected 6 values, found 7"),
        ];
        for (key, feat, msg) in cases {
            let mut feats = base.feats(of);
            feats.insert((*key).into(), feat.clone());
            assert_fails::<IntLists>(of, &feats, key, &[msg, &format!("IntLists::{key}")]);
        }
        // A scalar needs exactly one value.
        for (feat, msg) in [
            (Feat::Int(vec![]), "expected 1 value, found 0"),
            (Feat::Int(vec![1, 2, 3]), "expected 1 value, found 3"),
        ] {
            let mut feats = sample_ints(3).feats(of);
            feats.insert("a_i64".into(), feat);
            assert_fails::<Ints>(of, &feats, "a_i64", &[msg]);
        }
    }
    // Shaped optional lists too.
    let mut feats = opts_all_none().feats(false);
    feats.insert("o_shaped".into(), Feat::Int(vec![1, 2, 3]));
    assert_fails::<Opts>(false, &feats, "o_shaped", &["expected 2 values, found 3"]);
    feats.insert("o_shaped".into(), Feat::Int(vec![1, 2]));
    let v: Opts = Decode::<TfExample>::decode(&tf_bytes(&feats)).unwrap();
    assert_eq!(v.o_shaped, Some(vec![1, 2]));
}

#[test]
fn wrong_kind_is_an_error() {
    for of in [false, true] {
        let mut feats = sample_ints(4).feats(of);
        feats.insert("a_i64".into(), Feat::Float(vec![1.0f32.to_bits()]));
        assert_fails::<Ints>(
            of,
            &feats,
            "a_i64",
            &["expected int64_list, found float_list"],
        );
        let mut feats = sample_ints(4).feats(of);
        feats.insert("a_u16".into(), Feat::Bytes(vec![b"1".to_vec()]));
        assert_fails::<Ints>(
            of,
            &feats,
            "a_u16",
            &["expected int64_list, found bytes_list"],
        );
    }
}

/// Float defaults as TensorFlow 2.21 gives them when the feature is absent: a `lossy` `f64`
/// is stored as a float, so its default is the nearest float too
/// (`FixedLenFeature([], tf.float32, default_value=1e300)` gives infinity, `0.1` gives
/// 0.10000000149011612), as a present value reads back; in OFRecord the double is kept. The
/// largest float, written as the `3.4028235e38` it prints as, is a valid default.
#[test]
fn float_defaults_read_as_stored_values_do() {
    #[derive(Example, Debug)]
    struct Defaults {
        #[example(lossy, default = 1e300)]
        big: f64,
        #[example(lossy, default = 0.1)]
        tenth: f64,
        #[example(default = 3.4028235e38)]
        max: f32,
        #[example(lossy, default = [0.1, -1e300])]
        pair: [f64; 2],
        label: i64,
    }
    let mut m = M::new(false);
    m.int("label", [1]);
    let tf = <Defaults as Decode<TfExample>>::decode(&tf_bytes(&m.done())).expect("decodes");
    #[allow(clippy::cast_possible_truncation)]
    let tenth = f64::from(0.1f64 as f32);
    assert_eq!(tf.big, f64::INFINITY);
    assert_eq!(tf.tenth, tenth);
    assert_eq!(tf.max, f32::MAX);
    assert_eq!(tf.pair, [tenth, f64::NEG_INFINITY]);
    // A present value reads back the same way.
    let present = Defaults {
        big: 1e300,
        tenth: 0.1,
        max: f32::MAX,
        pair: [0.1, -1e300],
        label: 1,
    };
    let back =
        <Defaults as Decode<TfExample>>::decode(&Encode::<TfExample>::encode_to_vec(&present))
            .expect("decodes");
    assert_eq!((back.big, back.tenth), (tf.big, tf.tenth));
    assert_eq!(back.pair, tf.pair);
    // OFRecord stores doubles: the default is kept as written.
    let mut m = M::new(true);
    m.int("label", [1]);
    let of = <Defaults as Decode<OfRecord>>::decode(&of_bytes(&m.done())).expect("decodes");
    assert_eq!((of.big, of.tenth, of.pair), (1e300, 0.1, [0.1, -1e300]));
}
