//! What an absent feature gives a variable-length list: an empty `Vec` (zero steps for a
//! feature list of lists), as `tf.io.parse_example` and `tf.io.parse_sequence_example` read an
//! absent `VarLenFeature`; with `#[example(required)]`, an error naming the key and the field.
//! Values, arrays and `Vec`s with a `shape` stay required.

use tfrecord_core::{
    Decode, Example, Message, OfRecord, Ragged, SequenceExample, TfExample, TfSequenceExample,
};

use crate::support::checks::feature_error;
use crate::support::model::{Feat, Feats, M, SeqFeats, of_bytes, tf_bytes, tf_sequence};
use crate::support::value_types::Fruit;

/// Every variable-length list type next to the required kinds.
#[derive(Example, Debug, Clone, PartialEq)]
struct Lists<'a> {
    ints: Vec<i64>,
    narrow: Vec<u16>,
    floats: Vec<f32>,
    texts: Vec<String>,
    blobs: Vec<Vec<u8>>,
    words: Vec<&'a str>,
    fruits: Vec<Fruit>,
    #[example(key = "image/labels")]
    labels: Vec<i64>,
    maybe: Option<Vec<i64>>,
    #[example(required)]
    must: Vec<i64>,
    #[example(shape = [2])]
    pair: Vec<i64>,
    arr: [f32; 2],
    one: i64,
}

/// A nested record read through `flatten` (the general decode path, not the one-pass one).
#[derive(Example, Debug, Clone, PartialEq)]
struct Inner {
    ids: Vec<i64>,
    #[example(required)]
    must: Vec<String>,
}

#[derive(Example, Debug, Clone, PartialEq)]
struct Outer {
    id: i64,
    #[example(flatten)]
    inner: Inner,
}

/// The features every record of these tests has: the required ones.
fn required_feats(of: bool) -> Feats {
    let mut m = M::new(of);
    m.int("must", [4]);
    m.int("pair", [1, 2]);
    m.f32("arr", [0.5, 1.5]);
    m.int("one", [9]);
    m.done()
}

fn decode_lists(of: bool, bytes: &[u8]) -> tfrecord_core::Result<Lists<'_>> {
    if of {
        <Lists<'_> as Decode<OfRecord>>::decode(bytes)
    } else {
        <Lists<'_> as Decode<TfExample>>::decode(bytes)
    }
}

fn bytes_of(of: bool, feats: &Feats) -> Vec<u8> {
    if of { of_bytes(feats) } else { tf_bytes(feats) }
}

#[test]
fn absent_lists_are_empty_and_equal_present_empty_lists() {
    for of in [false, true] {
        let bytes = bytes_of(of, &required_feats(of));
        let v = decode_lists(of, &bytes).expect("absent lists are empty");
        let want = Lists {
            ints: vec![],
            narrow: vec![],
            floats: vec![],
            texts: vec![],
            blobs: vec![],
            words: vec![],
            fruits: vec![],
            labels: vec![],
            maybe: None,
            must: vec![4],
            pair: vec![1, 2],
            arr: [0.5, 1.5],
            one: 9,
        };
        assert_eq!(v, want, "of = {of}");

        // The same record with every list present and empty decodes the same (but `maybe`,
        // which tells an empty list from an absent one).
        let mut feats = required_feats(of);
        let mut m = M::new(of);
        m.int("ints", []);
        m.int("narrow", []);
        m.f32("floats", []);
        m.bytes::<&[u8]>("texts", []);
        m.bytes::<&[u8]>("blobs", []);
        m.bytes::<&[u8]>("words", []);
        m.bytes::<&[u8]>("fruits", []);
        m.int("image/labels", []);
        feats.extend(m.done());
        let present = bytes_of(of, &feats);
        assert_eq!(decode_lists(of, &present).expect("empty lists"), want);
    }
}

#[test]
fn required_lists_and_fixed_shapes_name_key_and_field_when_absent() {
    for of in [false, true] {
        for (key, member) in [
            ("must", "must"),
            ("pair", "pair"),
            ("arr", "arr"),
            ("one", "one"),
        ] {
            let mut feats = required_feats(of);
            feats.remove(key);
            let bytes = bytes_of(of, &feats);
            let (got, msg) = feature_error(decode_lists(of, &bytes));
            assert_eq!(got.as_deref(), Some(key), "{msg}");
            assert_eq!(
                msg,
                format!(
                    "bad feature \"{key}\": required feature is missing (field `Lists::{member}`)"
                )
            );
        }
    }
}

#[test]
fn flattened_lists_follow_the_same_rule() {
    let mut m = M::new(false);
    m.int("id", [1]);
    m.bytes("inner/must", ["x"]);
    let v = <Outer as Decode<TfExample>>::decode(&tf_bytes(&m.done())).expect("ids absent");
    assert_eq!(
        v.inner,
        Inner {
            ids: vec![],
            must: vec!["x".into()]
        }
    );

    let mut m = M::new(false);
    m.int("id", [1]);
    m.int("inner/ids", [3]);
    let (key, msg) = feature_error(<Outer as Decode<TfExample>>::decode(&tf_bytes(&m.done())));
    assert_eq!(key.as_deref(), Some("inner/must"), "{msg}");
    assert!(
        msg.contains("required feature is missing (field `Inner::must`)"),
        "{msg}"
    );
}

/// A SequenceExample: variable-length context features and feature lists of lists are empty
/// when absent; a feature list of fixed steps (`FixedLenSequenceFeature`) is required.
#[derive(SequenceExample, Debug, Clone, PartialEq)]
struct Clip {
    id: i64,
    labels: Vec<i64>,
    names: Vec<String>,
    #[example(required)]
    must_ctx: Vec<String>,
    #[example(sequence)]
    tokens: Vec<Vec<i64>>,
    #[example(sequence)]
    words: Ragged<String>,
    #[example(sequence, required)]
    must_list: Vec<Vec<i64>>,
    #[example(sequence)]
    scores: Vec<f32>,
}

fn clip_feats() -> SeqFeats {
    let mut s = SeqFeats::default();
    s.context.insert("id".into(), Feat::Int(vec![7]));
    s.context
        .insert("must_ctx".into(), Feat::Bytes(vec![b"a".to_vec()]));
    s.lists
        .insert("must_list".into(), vec![Some(Feat::Int(vec![1, 2]))]);
    s.lists.insert(
        "scores".into(),
        vec![Some(Feat::Float(vec![0.25f32.to_bits()]))],
    );
    s
}

fn decode_clip(s: &SeqFeats) -> tfrecord_core::Result<Clip> {
    <Clip as Decode<TfSequenceExample>>::decode(&tf_sequence(s).encode_to_vec())
}

#[test]
fn sequence_example_absent_lists() {
    let v = decode_clip(&clip_feats()).expect("absent lists are empty");
    assert_eq!(
        v,
        Clip {
            id: 7,
            labels: vec![],
            names: vec![],
            must_ctx: vec!["a".into()],
            tokens: vec![],
            words: Ragged::default(),
            must_list: vec![vec![1, 2]],
            scores: vec![0.25],
        }
    );
    assert_eq!(v.words.len(), 0);

    for (key, member) in [
        ("must_ctx", "must_ctx"),
        ("must_list", "must_list"),
        ("scores", "scores"),
        ("id", "id"),
    ] {
        let mut s = clip_feats();
        if s.context.remove(key).is_none() {
            s.lists.remove(key);
        }
        let (got, msg) = feature_error(decode_clip(&s));
        assert_eq!(got.as_deref(), Some(key), "{msg}");
        assert!(
            msg.contains(&format!(
                "required feature is missing (field `Clip::{member}`)"
            )),
            "{msg}"
        );
    }
}

/// Kind-less features (a `tf.train.Feature()` with no list set) beside the required ones.
#[derive(Example, Debug, Clone, PartialEq)]
struct Kindless {
    maybe: Option<i64>,
    #[example(default = 7)]
    seven: i64,
    ids: Vec<i64>,
    maybe_ids: Option<Vec<i64>>,
    #[example(required)]
    must: Vec<i64>,
    one: i64,
}

/// An Example (or OFRecord) whose `keys` are set to features with no list.
fn kindless_record(of: bool, keys: &[&str]) -> Vec<u8> {
    use tfrecord_core::proto::{oneflow, tensorflow};
    let mut tf = tensorflow::Features::default();
    let mut ofr = oneflow::OfRecord::default();
    let int =
        |v: i64| tensorflow::feature::Kind::Int64List(tensorflow::Int64List { value: vec![v] });
    let of_int = |v: i64| oneflow::feature::Kind::Int64List(oneflow::Int64List { value: vec![v] });
    for key in ["maybe", "seven", "ids", "maybe_ids", "must", "one"] {
        let set = !keys.contains(&key);
        tf.feature.insert(
            key.into(),
            tensorflow::Feature {
                kind: set.then(|| int(3)),
            },
        );
        ofr.feature.insert(
            key.into(),
            oneflow::Feature {
                kind: set.then(|| of_int(3)),
            },
        );
    }
    if of {
        ofr.encode_to_vec()
    } else {
        tensorflow::Example { features: Some(tf) }.encode_to_vec()
    }
}

/// A `Feature` with no list set is an absent feature, as `tf.io.parse_example` reads it (a
/// `FixedLenFeature` missing or its default, a `VarLenFeature` empty) and as the columnar
/// decoder reads it (null), not a list of no values: on both decode paths.
#[test]
fn a_feature_with_no_list_set_is_absent() {
    for of in [false, true] {
        let decode = |bytes: &[u8]| -> tfrecord_core::Result<Kindless> {
            let fresh = if of {
                <Kindless as Decode<OfRecord>>::decode(bytes)
            } else {
                <Kindless as Decode<TfExample>>::decode(bytes)
            };
            let mut reused = Kindless {
                maybe: Some(1),
                seven: 1,
                ids: vec![1, 2],
                maybe_ids: Some(vec![1]),
                must: vec![1],
                one: 1,
            };
            let into = if of {
                <Kindless as Decode<OfRecord>>::decode_into(&mut reused, bytes)
            } else {
                <Kindless as Decode<TfExample>>::decode_into(&mut reused, bytes)
            };
            match (fresh, into) {
                (Ok(v), Ok(())) => {
                    assert_eq!(v, reused, "decode_into gives what decode gives");
                    Ok(v)
                }
                (Err(e), Err(e2)) => {
                    assert_eq!(e.to_string(), e2.to_string());
                    Err(e)
                }
                (a, b) => panic!("the two paths disagree: {a:?} vs {b:?}"),
            }
        };
        let v = decode(&kindless_record(
            of,
            &["maybe", "seven", "ids", "maybe_ids"],
        ))
        .expect("reads");
        let want = Kindless {
            maybe: None,
            seven: 7,
            ids: vec![],
            maybe_ids: None,
            must: vec![3],
            one: 3,
        };
        assert_eq!(v, want, "of: {of}");
        for key in ["must", "one"] {
            let e = decode(&kindless_record(of, &[key])).expect_err("required");
            assert!(e.to_string().contains("missing"), "{key}: {e}");
            assert_eq!(e.key(), Some(key));
        }
    }
}
