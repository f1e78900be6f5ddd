//! `#[derive(SequenceExample)]`: prost's re-encodings, `Ragged<T>` and `Vec<Vec<T>>` steps, the
//! values and errors of every step shape, `deny_unknown_keys` and renames, and optional steps.

use std::collections::BTreeMap;
use std::fmt::Debug;

use proptest::prelude::*;
use tfrecord_core::proto::tensorflow;
use tfrecord_core::{Decode, Encode, Message, Ragged, SequenceExample, TfSequenceExample};

use crate::support::attr_types::{Seq, sample_seq, seq};
use crate::support::checks::{cfg, check_seq, feature_error};
use crate::support::model::{
    Feat, Feats, SeqFeats, SeqModel, bytes_feat, f32_feat, i32_feat, seq_feats_of, tf_sequence,
};
use crate::support::styled::{Style, feature_chunks, map_entry, put_len, style};
use crate::support::value_types::{f32_bits, small_vec};

proptest! {
    #![proptest_config(cfg())]

    /// Sequence examples re-encoded by prost (keys in sorted order) decode the same.
    #[test]
    fn prop_sequence_prost_reencoding(v in seq()) {
        let bytes = Encode::<TfSequenceExample>::encode_to_vec(&v);
        let msg = tensorflow::SequenceExample::decode(&bytes[..]).unwrap();
        let back: Seq = Decode::<TfSequenceExample>::decode(&msg.encode_to_vec()).unwrap();
        prop_assert_eq!(back.seq_feats(), v.seq_feats());
    }
}

/// Feature lists of list steps, one `Vec` per step.
#[derive(SequenceExample, Debug, Clone, PartialEq)]
struct NestedSeq {
    #[example(sequence)]
    tokens: Vec<Vec<i64>>,
    #[example(sequence)]
    words: Vec<Vec<String>>,
    #[example(sequence, shape = [2])]
    pairs: Vec<Vec<i32>>,
    #[example(sequence)]
    maybe: Option<Vec<Vec<f32>>>,
}

/// The same feature lists held flat.
#[derive(SequenceExample, Debug, Clone, PartialEq)]
struct FlatSeq {
    #[example(sequence)]
    tokens: Ragged<i64>,
    #[example(sequence)]
    words: Ragged<String>,
    #[example(sequence, shape = [2])]
    pairs: Ragged<i32>,
    #[example(sequence)]
    maybe: Option<Ragged<f32>>,
}

impl From<&NestedSeq> for FlatSeq {
    fn from(n: &NestedSeq) -> Self {
        FlatSeq {
            tokens: n.tokens.clone().into(),
            words: n.words.clone().into(),
            pairs: n.pairs.clone().into(),
            maybe: n.maybe.clone().map(Ragged::from),
        }
    }
}

impl SeqModel for NestedSeq {
    fn seq_feats(&self) -> SeqFeats {
        let mut lists = BTreeMap::new();
        let mut list = |k: &str, steps: Vec<Feat>| {
            lists.insert(k.to_string(), steps.into_iter().map(Some).collect());
        };
        list(
            "tokens",
            self.tokens.iter().cloned().map(Feat::Int).collect(),
        );
        list("words", self.words.iter().map(bytes_feat).collect());
        list(
            "pairs",
            self.pairs
                .iter()
                .map(|p| i32_feat(false, p.clone()))
                .collect(),
        );
        if let Some(m) = &self.maybe {
            list("maybe", m.iter().map(|s| f32_feat(s.clone())).collect());
        }
        SeqFeats {
            context: Feats::new(),
            lists,
        }
    }
}

fn nested_seq() -> impl Strategy<Value = NestedSeq> {
    (
        small_vec(small_vec(any::<i64>())),
        small_vec(small_vec(any::<String>())),
        small_vec(any::<[i32; 2]>()),
        proptest::option::of(small_vec(small_vec(f32_bits()))),
    )
        .prop_map(|(tokens, words, pairs, maybe)| NestedSeq {
            tokens,
            words,
            pairs: pairs.into_iter().map(Vec::from).collect(),
            maybe,
        })
}

/// A `tensorflow.SequenceExample` holding `s`'s feature lists, every step in `style`.
fn styled_sequence(s: &SeqFeats, style: Style) -> Vec<u8> {
    let mut lists = Vec::new();
    for (k, steps) in &s.lists {
        let mut list = Vec::new();
        for f in steps.iter().flatten() {
            put_len(&mut list, 1, &feature_chunks(f, false, style).concat());
        }
        put_len(&mut lists, 1, &map_entry(k, &[list], style));
    }
    let mut out = Vec::new();
    put_len(&mut out, 2, &lists);
    out
}

proptest! {
    #![proptest_config(cfg())]

    /// `Ragged<T>` writes the bytes `Vec<Vec<T>>` writes, each reads the other's, and both
    /// read every encoding of the steps.
    #[test]
    fn prop_ragged_lists(n in nested_seq(), s in style()) {
        let flat = FlatSeq::from(&n);
        let nested_bytes = Encode::<TfSequenceExample>::encode_to_vec(&n);
        let flat_bytes = Encode::<TfSequenceExample>::encode_to_vec(&flat);
        prop_assert_eq!(&flat_bytes, &nested_bytes);
        prop_assert_eq!(Encode::<TfSequenceExample>::encoded_len(&flat), flat_bytes.len());
        check_seq(&n);
        // Compared through their encodings, which keep float bits (NaN != NaN).
        let read: FlatSeq = Decode::<TfSequenceExample>::decode(&nested_bytes).unwrap();
        prop_assert_eq!(Encode::<TfSequenceExample>::encode_to_vec(&read), nested_bytes.clone());
        let styled = styled_sequence(&n.seq_feats(), s);
        let read: FlatSeq = Decode::<TfSequenceExample>::decode(&styled).unwrap();
        prop_assert_eq!(Encode::<TfSequenceExample>::encode_to_vec(&read), nested_bytes.clone());
        let read: NestedSeq = Decode::<TfSequenceExample>::decode(&styled).unwrap();
        prop_assert_eq!(Encode::<TfSequenceExample>::encode_to_vec(&read), nested_bytes);
    }

    /// `decode_into` a value holding other steps (more, fewer, longer) gives the value
    /// `decode` gives, for every encoding of the steps, nested and flat.
    #[test]
    fn prop_decode_into_reuses_steps(a in nested_seq(), n in nested_seq(), s in style()) {
        let nested_bytes = Encode::<TfSequenceExample>::encode_to_vec(&n);
        let styled = styled_sequence(&n.seq_feats(), s);
        for bytes in [&nested_bytes, &styled] {
            let mut nested = a.clone();
            nested.decode_into(bytes).unwrap();
            prop_assert_eq!(Encode::<TfSequenceExample>::encode_to_vec(&nested), nested_bytes.clone());
            let mut flat = FlatSeq::from(&a);
            flat.decode_into(bytes).unwrap();
            prop_assert_eq!(Encode::<TfSequenceExample>::encode_to_vec(&flat), nested_bytes.clone());
        }
    }
}

#[test]
fn ragged_steps_either_side_of_one_byte_lengths() {
    // A packed step of up to 12 values has one-byte lengths in its headers whatever the
    // values; -1 takes 10 bytes as a varint, so 12 of them are 120 payload bytes and 13 are
    // 130, past the one-byte range of the headers around them. Floats take 4 bytes: 30 of them
    // stay under it and 31 do not. Short and long steps in one list, and lists of only short
    // ones.
    let ints = |n: usize, v: i64| vec![v; n];
    let floats = |n: u16| (0..n).map(|i| f32::from(i) * 0.5).collect::<Vec<f32>>();
    let cases = [
        NestedSeq {
            tokens: vec![
                ints(12, -1),
                ints(13, -1),
                vec![],
                ints(1, 5),
                ints(40, 300),
            ],
            words: vec![],
            pairs: vec![vec![-1, -1]],
            maybe: Some(vec![floats(12), floats(13), floats(30), floats(31), vec![]]),
        },
        NestedSeq {
            tokens: vec![
                ints(12, -1),
                ints(11, i64::MIN),
                ints(1, 0),
                ints(12, 1 << 40),
            ],
            words: vec![vec!["a".into()]],
            pairs: vec![vec![i32::MIN, 7]; 3],
            maybe: Some(vec![floats(1), vec![], floats(12)]),
        },
    ];
    for n in &cases {
        // Against protobuf's own encoding of the same message.
        check_seq(n);
        let nested_bytes = Encode::<TfSequenceExample>::encode_to_vec(n);
        let flat = FlatSeq::from(n);
        let flat_bytes = Encode::<TfSequenceExample>::encode_to_vec(&flat);
        assert_eq!(flat_bytes, nested_bytes);
        assert_eq!(
            Encode::<TfSequenceExample>::encoded_len(&flat),
            flat_bytes.len()
        );
        let read: FlatSeq = Decode::<TfSequenceExample>::decode(&flat_bytes).unwrap();
        assert_eq!(read, flat);
    }
}

#[test]
fn a_bad_step_after_canonical_ones_is_worded_by_the_general_path() {
    // Two steps in the canonical layout, then one whose packed run ends mid-varint.
    let plain = Style::PLAIN;
    let mut steps = Vec::new();
    for run in [&[1u8, 2][..], &[3], &[4, 0xff]] {
        let mut body = Vec::new();
        put_len(&mut body, 1, run);
        let mut feature = Vec::new();
        put_len(&mut feature, 3, &body);
        put_len(&mut steps, 1, &feature);
    }
    let mut lists = Vec::new();
    put_len(&mut lists, 1, &map_entry("tokens", &[steps], plain));
    let mut bytes = Vec::new();
    put_len(&mut bytes, 2, &lists);
    let (key, flat) = feature_error(<FlatSeq as Decode<TfSequenceExample>>::decode(&bytes));
    let (_, nested) = feature_error(<NestedSeq as Decode<TfSequenceExample>>::decode(&bytes));
    assert_eq!(key.as_deref(), Some("tokens"));
    assert!(flat.contains("bad varint"), "{flat}");
    assert_eq!(flat.replace("FlatSeq", "NestedSeq"), nested);
}

#[test]
fn ragged_step_errors_name_the_field() {
    let mut feats = NestedSeq {
        tokens: vec![vec![1]],
        words: vec![],
        pairs: vec![vec![1, 2], vec![3]],
        maybe: None,
    }
    .seq_feats();
    let bytes = tf_sequence(&feats).encode_to_vec();
    let (key, msg) = feature_error(<FlatSeq as Decode<TfSequenceExample>>::decode(&bytes));
    assert_eq!(key.as_deref(), Some("pairs"));
    assert!(
        msg.contains("expected 2 values, found 1 (field `FlatSeq::pairs`)"),
        "{msg}"
    );
    feats
        .lists
        .insert("pairs".into(), vec![Some(f32_feat([1.0, 2.0]))]);
    let bytes = tf_sequence(&feats).encode_to_vec();
    let (key, msg) = feature_error(<FlatSeq as Decode<TfSequenceExample>>::decode(&bytes));
    assert_eq!(key.as_deref(), Some("pairs"));
    assert!(
        msg.contains("expected int64_list, found float_list"),
        "{msg}"
    );
}

// ---------------------------------------------------------------------------------------------
// SequenceExample.
// ---------------------------------------------------------------------------------------------

#[test]
fn sequence_example_values_and_errors() {
    let v = sample_seq();
    let back = check_seq(&v);
    assert_eq!(back.tokens, v.tokens);
    assert_eq!(back.scores[2].to_bits(), 0x7fc0_1234);
    assert_eq!(back.id_steps, v.id_steps);
    let msg =
        tensorflow::SequenceExample::decode(&Encode::<TfSequenceExample>::encode_to_vec(&v)[..])
            .unwrap();
    let feats = seq_feats_of(&msg);
    assert_eq!(feats.context["id"], Feat::Int(vec![42]));
    assert_eq!(
        feats.lists["id"],
        vec![Some(Feat::Int(vec![-1])), Some(Feat::Int(vec![0]))]
    );
    assert_eq!(feats.lists["tokens"][1], Some(Feat::Int(vec![])));
    assert!(feats.lists.contains_key("frames/data"));

    // Absent optional and defaulted lists and context features.
    let mut want = v.seq_feats();
    want.lists.remove("maybe");
    want.lists.remove("extra");
    want.context.remove("name");
    want.context.remove("version");
    let d: Seq = Decode::<TfSequenceExample>::decode(&tf_sequence(&want).encode_to_vec()).unwrap();
    assert_eq!(
        (d.maybe, d.extra, d.name, d.version),
        (None, vec![], None, 3)
    );

    // A missing required feature list, and a missing context feature.
    let mut bad = v.seq_feats();
    bad.lists.remove("scores");
    let r = <Seq as Decode<TfSequenceExample>>::decode(&tf_sequence(&bad).encode_to_vec());
    let (key, msg) = feature_error(r);
    assert_eq!(key.as_deref(), Some("scores"));
    assert!(
        msg.contains("required feature is missing (field `Seq::scores`)"),
        "{msg}"
    );
    let mut bad = v.seq_feats();
    bad.context.remove("id");
    let r = <Seq as Decode<TfSequenceExample>>::decode(&tf_sequence(&bad).encode_to_vec());
    let (key, msg) = feature_error(r);
    assert_eq!(key.as_deref(), Some("id"));
    assert!(msg.contains("(field `Seq::id`)"), "{msg}");

    // A bad step names the list's key.
    let mut bad = v.seq_feats();
    bad.lists
        .get_mut("pairs")
        .unwrap()
        .push(Some(Feat::Int(vec![1, 2, 3])));
    let r = <Seq as Decode<TfSequenceExample>>::decode(&tf_sequence(&bad).encode_to_vec());
    let (key, msg) = feature_error(r);
    assert_eq!(key.as_deref(), Some("pairs"));
    assert!(msg.contains("expected 2 values, found 3"), "{msg}");
    let mut bad = v.seq_feats();
    bad.lists
        .insert("fruits".into(), vec![Some(bytes_feat(["fig"]))]);
    let r = <Seq as Decode<TfSequenceExample>>::decode(&tf_sequence(&bad).encode_to_vec());
    let (key, msg) = feature_error(r);
    assert_eq!(key.as_deref(), Some("fruits"));
    assert!(msg.contains("no enum variant matches \"fig\""), "{msg}");
    let mut bad = v.seq_feats();
    bad.lists
        .insert("scores".into(), vec![Some(Feat::Int(vec![1]))]);
    let r = <Seq as Decode<TfSequenceExample>>::decode(&tf_sequence(&bad).encode_to_vec());
    let (key, msg) = feature_error(r);
    assert_eq!(key.as_deref(), Some("scores"));
    assert!(
        msg.contains("expected float_list, found int64_list"),
        "{msg}"
    );

    // Unknown context features and feature lists are skipped.
    let mut extra = v.seq_feats();
    extra.context.insert("other".into(), Feat::Int(vec![1]));
    extra
        .lists
        .insert("other".into(), vec![None, Some(Feat::Int(vec![]))]);
    let d: Seq = Decode::<TfSequenceExample>::decode(&tf_sequence(&extra).encode_to_vec()).unwrap();
    assert_eq!(d.seq_feats(), v.seq_feats());
}

/// A SequenceExample that denies unknown keys, in both maps.
#[derive(SequenceExample, Debug, PartialEq)]
#[example(deny_unknown_keys, rename_all = "camelCase")]
struct StrictSeq {
    video_id: String,
    #[example(sequence)]
    frame_bytes: Vec<Vec<u8>>,
}

#[test]
fn sequence_example_deny_unknown_keys_and_rename() {
    let v = StrictSeq {
        video_id: "v".into(),
        frame_bytes: vec![vec![1], vec![2, 3]],
    };
    let bytes = Encode::<TfSequenceExample>::encode_to_vec(&v);
    let msg = tensorflow::SequenceExample::decode(&bytes[..]).unwrap();
    let feats = seq_feats_of(&msg);
    assert_eq!(feats.context.keys().collect::<Vec<_>>(), ["videoId"]);
    assert_eq!(feats.lists.keys().collect::<Vec<_>>(), ["frameBytes"]);
    assert_eq!(
        Decode::<TfSequenceExample>::decode(&bytes).ok(),
        Some(StrictSeq {
            video_id: "v".into(),
            frame_bytes: vec![vec![1], vec![2, 3]],
        })
    );
    for in_context in [true, false] {
        let mut f = feats.clone();
        if in_context {
            f.context.insert("extra".into(), Feat::Int(vec![]));
        } else {
            f.lists.insert("extra".into(), vec![]);
        }
        let r = <StrictSeq as Decode<TfSequenceExample>>::decode(&tf_sequence(&f).encode_to_vec());
        let (key, msg) = feature_error(r);
        assert_eq!(key.as_deref(), Some("extra"));
        assert!(msg.contains("`StrictSeq` denies unknown keys"), "{msg}");
    }
}

/// Feature-list steps that are options: `None` is a step with no list kind set.
#[derive(SequenceExample, Debug, PartialEq)]
struct SparseSteps {
    #[example(sequence)]
    values: Vec<Option<i64>>,
    #[example(sequence)]
    lists: Vec<Option<Vec<f32>>>,
}

#[test]
fn sequence_optional_steps() {
    let v = SparseSteps {
        values: vec![Some(1), None, Some(-3)],
        lists: vec![None, Some(vec![]), Some(vec![1.5])],
    };
    let bytes = Encode::<TfSequenceExample>::encode_to_vec(&v);
    let msg = tensorflow::SequenceExample::decode(&bytes[..]).unwrap();
    let feats = seq_feats_of(&msg);
    assert_eq!(
        feats.lists["values"],
        vec![Some(Feat::Int(vec![1])), None, Some(Feat::Int(vec![-3]))]
    );
    assert_eq!(
        feats.lists["lists"],
        vec![None, Some(Feat::Float(vec![])), Some(f32_feat([1.5]))]
    );
    let back: SparseSteps = Decode::<TfSequenceExample>::decode(&bytes).expect("round trip");
    assert_eq!(back, v);
    let back: SparseSteps =
        Decode::<TfSequenceExample>::decode(&msg.encode_to_vec()).expect("prost round trip");
    assert_eq!(back, v);
}
