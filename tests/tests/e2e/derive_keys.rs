//! Which key each derived field reads and what an absent key gives: options, defaults, enums by
//! name and by discriminant, flattened members, renamed and skipped fields, unknown keys, and
//! missing required features.

use tfrecord_core::proto::{oneflow, tensorflow};
use tfrecord_core::{Decode, Encode, Message, OfRecord, TfExample};

use crate::support::attr_types::{
    Borrowed, Deep, Kebab, Middle, NotAFeature, Outer, Pascal, Renamed, Strict,
    sample_borrowed_feats,
};
use crate::support::checks::{assert_fails, check_both, feature_error};
use crate::support::model::{Feat, Feats, M, Model, bytes_feat, feats_of_tf, of_bytes, tf_bytes};
use crate::support::styled::add_raw_tf_entry;
use crate::support::value_types::{
    Defaults, Enums, Fruit, IntLists, Ints, Level, Opts, opts_all_none, sample_ints,
};

#[test]
fn none_is_not_written_and_absent_is_none() {
    let v = opts_all_none();
    for of in [false, true] {
        let bytes = if of {
            Encode::<OfRecord>::encode_to_vec(&v)
        } else {
            Encode::<TfExample>::encode_to_vec(&v)
        };
        if of {
            assert!(bytes.is_empty(), "an OFRecord with no features is empty");
            assert!(
                oneflow::OfRecord::decode(&bytes[..])
                    .unwrap()
                    .feature
                    .is_empty()
            );
        } else {
            let e = tensorflow::Example::decode(&bytes[..]).unwrap();
            assert!(feats_of_tf(&e).is_empty(), "no feature is written for None");
        }
    }
    let (tf, of) = check_both(&v);
    assert_eq!(tf, v);
    assert_eq!(of, v);
    // Absent entirely: an empty message decodes to all None.
    let tf: Opts = Decode::<TfExample>::decode(&[]).unwrap();
    let of: Opts = Decode::<OfRecord>::decode(&[]).unwrap();
    assert_eq!(tf, v);
    assert_eq!(of, v);
    // Some of an empty list is present, and distinct from None.
    let v = Opts {
        o_vec: Some(vec![]),
        o_levels: Some(vec![]),
        ..opts_all_none()
    };
    let (tf, _) = check_both(&v);
    assert_eq!(tf.o_vec, Some(vec![]));
    assert_eq!(tf.o_levels, Some(vec![]));
}

#[test]
fn defaults_fill_absent_features() {
    for of in [false, true] {
        let empty = if of {
            of_bytes(&Feats::new())
        } else {
            tf_bytes(&Feats::new())
        };
        let v: Defaults = if of {
            Decode::<OfRecord>::decode(&empty).unwrap()
        } else {
            Decode::<TfExample>::decode(&empty).unwrap()
        };
        assert_eq!(v, Defaults::absent());
    }
    // Present features win over defaults.
    let present = Defaults {
        i: -1,
        n: 0,
        big: 0,
        i32_: -5,
        f: 0.0,
        f_from_int: -0.0,
        b: false,
        s: String::new(),
        by: vec![],
        bb: bytes::Bytes::new(),
        v: vec![],
        arr: [0.0, 0.0],
        mat: vec![9, 9, 9, 9],
        vs: vec![],
        empty: vec![7],
        td_i: 3,
        td_s: "x".into(),
        td_v: vec![1.0],
        td_e: Fruit::Kiwi,
    };
    let (tf, of) = check_both(&present);
    assert_eq!(tf, present);
    assert_eq!(of, present);
    // A default list must still have the shape's count when present.
    let mut feats = present.feats(false);
    feats.insert("mat".into(), Feat::Int(vec![1, 2, 3]));
    assert_fails::<Defaults>(false, &feats, "mat", &["expected 4 values, found 3"]);
    // Defaults are for absent features only: a present feature of the wrong kind is an error.
    let mut feats = present.feats(true);
    feats.insert("i".into(), Feat::Bytes(vec![]));
    assert_fails::<Defaults>(
        true,
        &feats,
        "i",
        &["expected int64_list, found bytes_list"],
    );
    // Borrowed defaults.
    let mut feats = sample_borrowed_feats();
    for k in ["d", "db", "dc", "opt"] {
        feats.remove(k);
    }
    let bytes = tf_bytes(&feats);
    let b: Borrowed<'_> = Decode::<TfExample>::decode(&bytes).unwrap();
    assert_eq!(
        (b.d, b.db, &*b.dc, b.opt),
        ("dflt", &b"dflt-bytes"[..], &b"cow"[..], None)
    );
}

#[test]
fn enums_by_name_and_discriminant() {
    let v = Enums {
        fruit: Fruit::Kiwi,
        fruits: vec![Fruit::RedApple, Fruit::Banana],
        level: Level::Low,
        levels: [Level::Top, Level::Mid],
        fallback: Fruit::Banana,
    };
    let (tf, of) = check_both(&v);
    assert_eq!(tf, v);
    assert_eq!(of, v);
    let e = tensorflow::Example::decode(&Encode::<TfExample>::encode_to_vec(&v)[..]).unwrap();
    let feats = feats_of_tf(&e);
    assert_eq!(feats["fruit"], bytes_feat(["kiwi!"]));
    assert_eq!(feats["fruits"], bytes_feat(["red_apple", "banana"]));
    assert_eq!(feats["level"], Feat::Int(vec![-1]));
    assert_eq!(feats["levels"], Feat::Int(vec![1_000_000_000_000, 0]));
    for of in [false, true] {
        // Unknown names and numbers are errors naming the value.
        let mut feats = v.feats(of);
        feats.insert("fruit".into(), bytes_feat(["Kiwi"]));
        assert_fails::<Enums>(of, &feats, "fruit", &["no enum variant matches \"Kiwi\""]);
        let mut feats = v.feats(of);
        feats.insert("fruits".into(), bytes_feat(["banana", "cherry"]));
        assert_fails::<Enums>(
            of,
            &feats,
            "fruits",
            &["no enum variant matches \"cherry\""],
        );
        let mut feats = v.feats(of);
        feats.insert("level".into(), Feat::Int(vec![1]));
        assert_fails::<Enums>(of, &feats, "level", &["no enum variant matches 1"]);
        let mut feats = v.feats(of);
        feats.insert("levels".into(), Feat::Int(vec![10, 11]));
        assert_fails::<Enums>(of, &feats, "levels", &["no enum variant matches 11"]);
        // A name enum in an int list, and the other way round, are wrong kinds.
        let mut feats = v.feats(of);
        feats.insert("level".into(), bytes_feat(["High"]));
        assert_fails::<Enums>(
            of,
            &feats,
            "level",
            &["expected int64_list, found bytes_list"],
        );
        // `default` on an enum field takes the enum's `Default`.
        let mut feats = v.feats(of);
        feats.remove("fallback");
        let d: Enums = if of {
            Decode::<OfRecord>::decode(&of_bytes(&feats)).unwrap()
        } else {
            Decode::<TfExample>::decode(&tf_bytes(&feats)).unwrap()
        };
        assert_eq!(d.fallback, Fruit::RedApple);
    }
}

#[test]
fn flatten_keys_and_errors() {
    let v = Outer {
        id: 1,
        middle: Middle {
            inner_count: 2,
            deep: Deep {
                x: 3,
                tag: Some("t".into()),
            },
        },
        other: Deep { x: 4, tag: None },
        trailing: vec![0.5],
    };
    let (tf, of) = check_both(&v);
    assert_eq!(tf, v);
    assert_eq!(of, v);
    let e = tensorflow::Example::decode(&Encode::<TfExample>::encode_to_vec(&v)[..]).unwrap();
    let keys: Vec<String> = feats_of_tf(&e).into_keys().collect();
    assert_eq!(
        keys,
        [
            "alt/prefix/x",
            "id",
            "middle/deep/tag",
            "middle/deep/x",
            "middle/innerCount",
            "trailing"
        ]
    );
    for of in [false, true] {
        // A missing member of a nested flattened struct names the full key and the inner field.
        let mut feats = v.feats(of);
        feats.remove("middle/deep/x");
        assert_fails::<Outer>(
            of,
            &feats,
            "middle/deep/x",
            &["required feature is missing", "(field `Deep::x`)"],
        );
        let mut feats = v.feats(of);
        feats.insert("alt/prefix/x".into(), Feat::Bytes(vec![]));
        assert_fails::<Outer>(of, &feats, "alt/prefix/x", &["expected int64_list"]);
        // The un-prefixed inner keys are not the flattened ones.
        let mut feats = v.feats(of);
        let x = feats.remove("middle/deep/x").unwrap();
        feats.insert("x".into(), x.clone());
        feats.insert("deep/x".into(), x);
        assert_fails::<Outer>(of, &feats, "middle/deep/x", &["missing"]);
    }
}

#[test]
fn renames_keys_and_skip() {
    let v = Renamed {
        image_width: 28,
        image_data: vec![1, 2, 3],
        r#type: "png".into(),
        cache: vec!["not written".into()],
        not_a_feature: NotAFeature(9),
    };
    let (tf, of) = check_both(&v);
    let expected = Renamed {
        cache: vec![],
        not_a_feature: NotAFeature(0),
        ..v.clone()
    };
    assert_eq!(tf, expected, "skipped fields decode as Default");
    assert_eq!(of, expected);
    let e = tensorflow::Example::decode(&Encode::<TfExample>::encode_to_vec(&v)[..]).unwrap();
    let keys: Vec<String> = feats_of_tf(&e).into_keys().collect();
    assert_eq!(keys, ["IMAGE_WIDTH", "TYPE", "image/encoded"]);
    // A feature named like a skipped field is ignored.
    let mut feats = v.feats(false);
    feats.insert("cache".into(), Feat::Int(vec![1]));
    feats.insert("CACHE".into(), Feat::Int(vec![1]));
    let d: Renamed = Decode::<TfExample>::decode(&tf_bytes(&feats)).unwrap();
    assert_eq!(d, expected);

    let k = Kebab {
        first_value: 1,
        second_long_name: 2,
    };
    let e = tensorflow::Example::decode(&Encode::<TfExample>::encode_to_vec(&k)[..]).unwrap();
    let keys: Vec<String> = feats_of_tf(&e).into_keys().collect();
    assert_eq!(keys, ["first-value", "second-long-name"]);
    assert_eq!(
        Decode::<TfExample>::decode(&e.encode_to_vec()).ok(),
        Some(k)
    );
    let p = Pascal { first_value: 5 };
    let r = oneflow::OfRecord::decode(&Encode::<OfRecord>::encode_to_vec(&p)[..]).unwrap();
    assert_eq!(r.feature.keys().collect::<Vec<_>>(), ["FirstValue"]);
    assert_eq!(Decode::<OfRecord>::decode(&r.encode_to_vec()).ok(), Some(p));
}

#[test]
fn unknown_keys_are_skipped_or_denied() {
    // Extra features are skipped by default.
    for of in [false, true] {
        let v = sample_ints(5);
        let mut feats = v.feats(of);
        feats.insert("zzz_extra".into(), Feat::Float(vec![1]));
        feats.insert("a_i64/nested".into(), Feat::Bytes(vec![b"x".to_vec()]));
        feats.insert(String::new(), Feat::Int(vec![1]));
        let d: Ints = if of {
            Decode::<OfRecord>::decode(&of_bytes(&feats)).unwrap()
        } else {
            Decode::<TfExample>::decode(&tf_bytes(&feats)).unwrap()
        };
        assert_eq!(d, v);
    }
    // deny_unknown_keys rejects them, naming the key.
    let strict = Strict {
        a: 1,
        o: Some(3),
        inner: Deep { x: 2, tag: None },
    };
    for of in [false, true] {
        let mut m = M::new(of);
        m.int("a", [1]);
        m.int("o", [3]);
        m.int("inner/x", [2]);
        let mut feats = m.done();
        let decode = |feats: &Feats| {
            if of {
                <Strict as Decode<OfRecord>>::decode(&of_bytes(feats))
            } else {
                <Strict as Decode<TfExample>>::decode(&tf_bytes(feats))
            }
        };
        assert_eq!(decode(&feats).unwrap(), strict);
        for extra in ["b", "inner/y", "inner", "x", "o/x"] {
            feats.insert(extra.into(), Feat::Int(vec![0]));
            let (key, msg) = feature_error(decode(&feats));
            assert_eq!(key.as_deref(), Some(extra), "{msg}");
            assert!(msg.contains("`Strict` denies unknown keys"), "{msg}");
            feats.remove(extra);
        }
    }
}

#[test]
fn missing_required_feature_names_struct_field_and_key() {
    for of in [false, true] {
        let mut feats = sample_ints(6).feats(of);
        feats.remove("a_u16");
        let r = if of {
            <Ints as Decode<OfRecord>>::decode(&of_bytes(&feats))
        } else {
            <Ints as Decode<TfExample>>::decode(&tf_bytes(&feats))
        };
        let e = r.unwrap_err();
        assert_eq!(e.key(), Some("a_u16"));
        assert_eq!(
            e.to_string(),
            "bad feature \"a_u16\": required feature is missing (field `Ints::a_u16`)"
        );
        // With a renamed key, the message names the Rust field and the key.
        let mut feats = Renamed {
            image_width: 1,
            image_data: vec![],
            r#type: String::new(),
            cache: vec![],
            not_a_feature: NotAFeature(0),
        }
        .feats(of);
        feats.remove("image/encoded");
        assert_fails::<Renamed>(
            of,
            &feats,
            "image/encoded",
            &[
                "required feature is missing",
                "(field `Renamed::image_data`)",
            ],
        );
    }
    // A feature with no kind set is absent, as TensorFlow 2.21's `parse_example` reads it: an
    // empty list for a Vec (`VarLenFeature`), "required but could not be found" for a value.
    let mut bytes = tf_bytes(&IntLists::default_value().feats(false));
    bytes = add_raw_tf_entry(bytes, "v_i64", &[]);
    let v: IntLists = Decode::<TfExample>::decode(&bytes).unwrap();
    assert!(v.v_i64.is_empty());
    let bytes = add_raw_tf_entry(tf_bytes(&sample_ints(1).feats(false)), "a_i64", &[]);
    let (key, msg) = feature_error(<Ints as Decode<TfExample>>::decode(&bytes));
    assert_eq!(key.as_deref(), Some("a_i64"));
    assert!(msg.contains("required feature is missing"), "{msg}");
}
