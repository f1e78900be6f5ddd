//! TOML specs against the derive. `build.rs` compiles `specs/*.toml` with
//! `tfrecord_schema::Builder`, as a user's build script would; this module includes the result
//! and holds every generated type against a hand-derived twin written the way a person would
//! (default keys, an array for a fixed shape). For the same values, in every container:
//!
//! - both encode to the same bytes;
//! - each decodes the other's bytes (compared by re-encoding, so NaN payloads count);
//!
//! and the generated types read absent features with TensorFlow's semantics. The twins also
//! carry `#[example(schema = .., record = ..)]`, so the derive checks them against the spec
//! they copy: a spec edited without its twin fails to compile.
//!
//! `specs/inferred_examples.toml` and `specs/inferred_sequence.toml` are what `tfrecord infer`
//! makes of the conformance files `examples.tfrecord` and `sequence.tfrecord` (tfrecord-cli's
//! tests keep them in step); their types must read those files.

use proptest::prelude::*;
use tfrecord_core::proto::tensorflow;
use tfrecord_core::{
    Decode, Encode, Example, Message, OfRecord, SequenceExample, Sparse, TfExample,
    TfSequenceExample,
};

#[allow(unreachable_pub)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/_specs.rs"));
}

use generated::clips::Clip;
use generated::inferred_examples::Examples;
use generated::inferred_sequence::Sequence;
use generated::records::{Measurement, Sample};

// ---------------------------------------------------------------------------------------------
// The hand-derived twins.

#[derive(Example, Debug, Clone, PartialEq)]
#[example(schema = "specs/records.toml", record = "Sample")]
struct SampleTwin {
    #[example(key = "image/encoded")]
    image: Vec<u8>,
    #[example(default = -1)]
    label: i64,
    score: f32,
    #[example(default = true)]
    valid: bool,
    small: i32,
    caption: Option<String>,
    tags: Vec<String>,
    #[example(shape = [2, 2])]
    embedding: [f32; 4],
    #[example(key = "bbox/ymin")]
    bbox_ymin: Option<Vec<f32>>,
    #[example(key = "type", default = [1, 2, 3])]
    kind: [i64; 3],
    #[example(default = 7)]
    ones: [i64; 3],
    #[example(shape = [-1, 2])]
    points: Vec<f32>,
    #[example(sparse(index = "clicks/idx", value = "clicks/weight", size = [100]))]
    clicks: Sparse<f32>,
    #[example(sparse(index = ["cells/row", "cells/col"], size = [3, 4]))]
    cells: Sparse<String>,
}

impl From<&Sample> for SampleTwin {
    fn from(s: &Sample) -> Self {
        SampleTwin {
            image: s.image.clone(),
            label: s.label,
            score: s.score,
            valid: s.valid,
            small: s.small,
            caption: s.caption.clone(),
            tags: s.tags.clone(),
            embedding: s.embedding.clone().try_into().expect("4 values"),
            bbox_ymin: s.bbox_ymin.clone(),
            kind: s.r#type.clone().try_into().expect("3 values"),
            ones: s.ones.clone().try_into().expect("3 values"),
            points: s.points.clone(),
            clicks: s.clicks.clone(),
            cells: s.cells.clone(),
        }
    }
}

#[derive(Example, Debug, Clone, PartialEq)]
#[example(dialect = "ofrecord", deny_unknown_keys)]
#[example(schema = "specs/records.toml", record = "Measurement")]
struct MeasurementTwin {
    value: f64,
    counts: Vec<i32>,
    #[example(default = 0.5)]
    offset: f64,
}

impl From<&Measurement> for MeasurementTwin {
    fn from(m: &Measurement) -> Self {
        MeasurementTwin {
            value: m.value,
            counts: m.counts.clone(),
            offset: m.offset,
        }
    }
}

#[derive(SequenceExample, Debug, Clone, PartialEq)]
#[example(dialect = "tf", schema = "specs/clips.toml", record = "Clip")]
struct ClipTwin {
    id: i64,
    #[example(default = "en")]
    lang: String,
    #[example(lossy)]
    weight: f64,
    #[example(sequence)]
    tokens: Vec<i64>,
    #[example(sequence, key = "frames/box", default)]
    frames_box: Vec<[f32; 4]>,
    #[example(sequence)]
    words: Vec<Vec<String>>,
}

impl From<&Clip> for ClipTwin {
    fn from(c: &Clip) -> Self {
        ClipTwin {
            id: c.id,
            lang: c.lang.clone(),
            weight: c.weight,
            tokens: c.tokens.clone(),
            frames_box: c
                .frames_box
                .iter()
                .map(|b| b.clone().try_into().expect("4 values per step"))
                .collect(),
            words: c.words.clone(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The differential check.

/// Same bytes both ways, and each side decodes the other's bytes to a value that re-encodes
/// to them.
fn differential<C, G, T>(generated: &G, twin: &T)
where
    C: tfrecord_core::Container,
    G: Encode<C> + for<'de> Decode<'de, C> + std::fmt::Debug,
    T: Encode<C> + for<'de> Decode<'de, C> + std::fmt::Debug,
{
    let g = generated.encode_to_vec();
    let t = twin.encode_to_vec();
    assert_eq!(g, t, "encodings differ for {generated:?}");
    assert_eq!(g.len(), generated.encoded_len());
    let as_twin = T::decode(&g).expect("the twin decodes the generated type's bytes");
    assert_eq!(as_twin.encode_to_vec(), g);
    let as_generated = G::decode(&t).expect("the generated type decodes the twin's bytes");
    assert_eq!(as_generated.encode_to_vec(), t);
}

fn sample() -> impl Strategy<Value = Sample> {
    let clicks = proptest::collection::vec((0i64..100, any::<f32>()), 0..5);
    let cells = proptest::collection::vec((0i64..3, 0i64..4, "[a-z]{0,3}"), 0..5);
    (
        (
            proptest::collection::vec(any::<u8>(), 0..16),
            any::<i64>(),
            any::<f32>(),
            any::<bool>(),
            any::<i32>(),
            proptest::option::of(".{0,8}"),
        ),
        (
            proptest::collection::vec("[a-z/ ]{0,6}", 0..4),
            proptest::collection::vec(any::<f32>(), 4),
            proptest::option::of(proptest::collection::vec(any::<f32>(), 0..4)),
            proptest::collection::vec(any::<i64>(), 3),
            clicks,
            cells,
        ),
        (
            proptest::collection::vec(any::<i64>(), 3),
            (0usize..4).prop_flat_map(|rows| proptest::collection::vec(any::<f32>(), rows * 2)),
        ),
    )
        .prop_map(
            |(
                (image, label, score, valid, small, caption),
                (tags, emb, bbox, ty, mut clicks, mut cells),
                (ones, points),
            )| {
                // In index order, as the sparse fields decode (equal indices keep their
                // order), so that a decoded value re-encodes to the same bytes.
                clicks.sort_by_key(|c| c.0);
                cells.sort_by_key(|c| (c.0, c.1));
                Sample {
                    image,
                    label,
                    score,
                    valid,
                    small,
                    caption,
                    tags,
                    embedding: emb,
                    bbox_ymin: bbox,
                    r#type: ty,
                    ones,
                    points,
                    clicks: Sparse::new_1d(
                        clicks.iter().map(|c| c.0).collect(),
                        clicks.iter().map(|c| c.1).collect(),
                    ),
                    cells: Sparse {
                        indices: vec![
                            cells.iter().map(|c| c.0).collect(),
                            cells.iter().map(|c| c.1).collect(),
                        ],
                        values: cells.into_iter().map(|c| c.2).collect(),
                    },
                }
            },
        )
}

fn clip() -> impl Strategy<Value = Clip> {
    (
        any::<i64>(),
        "[a-z]{0,3}",
        // Values a float holds exactly, so that the lossy double round-trips.
        any::<f32>().prop_map(f64::from),
        proptest::collection::vec(any::<i64>(), 0..5),
        proptest::collection::vec(proptest::collection::vec(any::<f32>(), 4), 0..4),
        proptest::collection::vec(proptest::collection::vec("[a-z]{0,4}", 0..3), 0..4),
    )
        .prop_map(|(id, lang, weight, tokens, frames_box, words)| Clip {
            id,
            lang,
            weight,
            tokens,
            frames_box,
            words,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn example_twins_encode_identically(s in sample()) {
        let twin = SampleTwin::from(&s);
        differential::<TfExample, _, _>(&s, &twin);
        differential::<OfRecord, _, _>(&s, &twin);
    }

    #[test]
    fn sequence_twins_encode_identically(c in clip()) {
        differential::<TfSequenceExample, _, _>(&c, &ClipTwin::from(&c));
    }

    #[test]
    fn ofrecord_twins_encode_identically(
        value in any::<f64>(),
        counts in proptest::collection::vec(any::<i32>(), 0..5),
        offset in any::<f64>(),
    ) {
        let m = Measurement { value, counts, offset };
        differential::<OfRecord, _, _>(&m, &MeasurementTwin::from(&m));
    }
}

// ---------------------------------------------------------------------------------------------
// TensorFlow's semantics for absent features, through the generated types.

fn example_bytes(features: &[(&str, tensorflow::Feature)]) -> Vec<u8> {
    let mut f = tensorflow::Features::default();
    for (k, v) in features {
        f.feature.insert((*k).to_string(), v.clone());
    }
    tensorflow::Example { features: Some(f) }.encode_to_vec()
}

fn floats(v: &[f32]) -> tensorflow::Feature {
    tensorflow::Feature {
        kind: Some(tensorflow::feature::Kind::FloatList(
            tensorflow::FloatList { value: v.to_vec() },
        )),
    }
}

fn ints(v: &[i64]) -> tensorflow::Feature {
    tensorflow::Feature {
        kind: Some(tensorflow::feature::Kind::Int64List(
            tensorflow::Int64List { value: v.to_vec() },
        )),
    }
}

fn bytes(v: &[&str]) -> tensorflow::Feature {
    tensorflow::Feature {
        kind: Some(tensorflow::feature::Kind::BytesList(
            tensorflow::BytesList {
                value: v.iter().map(|s| s.as_bytes().to_vec()).collect(),
            },
        )),
    }
}

#[test]
fn absent_features_read_as_tensorflow_reads_them() {
    // Only the features without a default: fixed without `default` is required.
    let minimal = example_bytes(&[
        ("image/encoded", bytes(&["png"])),
        ("score", floats(&[0.5])),
        ("small", ints(&[7])),
        ("embedding", floats(&[1.0, 2.0, 3.0, 4.0])),
    ]);
    let s = <Sample as Decode<TfExample>>::decode(&minimal).expect("minimal record");
    assert_eq!(s.label, -1, "fixed with a default");
    assert!(s.valid);
    assert_eq!(s.r#type, [1, 2, 3]);
    assert_eq!(s.caption, None, "optional");
    assert_eq!(s.bbox_ymin, None);
    assert!(s.tags.is_empty(), "var: absent is empty");
    assert!(s.clicks.values.is_empty(), "sparse: absent is empty");
    assert_eq!(s.cells.indices, [Vec::<i64>::new(), Vec::new()]);
    assert_eq!(s.ones, [7, 7, 7], "one default value fills the shape");
    assert!(s.points.is_empty(), "rows: absent is zero rows");
    // The hand-written twin's plain `Vec<String>` reads the absent `var` feature the same way.
    let twin = <SampleTwin as Decode<TfExample>>::decode(&minimal).expect("minimal record");
    assert_eq!(twin, SampleTwin::from(&s));

    // Rows hold whole rows: a multiple of the row's values, in both types.
    let mut odd = minimal.clone();
    odd.extend(example_bytes(&[("points", floats(&[1.0, 2.0, 3.0]))]));
    let err = <Sample as Decode<TfExample>>::decode(&odd).unwrap_err();
    assert!(err.to_string().contains("\"points\""), "{err}");
    assert!(err.to_string().contains("a multiple of 2 values"), "{err}");
    let err = <SampleTwin as Decode<TfExample>>::decode(&odd).unwrap_err();
    assert!(err.to_string().contains("a multiple of 2 values"), "{err}");
    let mut two_rows = minimal.clone();
    two_rows.extend(example_bytes(&[("points", floats(&[1.0, 2.0, 3.0, 4.0]))]));
    let s = <Sample as Decode<TfExample>>::decode(&two_rows).expect("two rows");
    assert_eq!(s.points, [1.0, 2.0, 3.0, 4.0]);

    // A required fixed feature is an error naming its key.
    let missing = example_bytes(&[("image/encoded", bytes(&["png"]))]);
    let err = <Sample as Decode<TfExample>>::decode(&missing).unwrap_err();
    assert!(err.to_string().contains("\"score\""), "{err}");

    // A fixed shape's count is checked.
    let short = example_bytes(&[
        ("image/encoded", bytes(&["png"])),
        ("score", floats(&[0.5])),
        ("small", ints(&[7])),
        ("embedding", floats(&[1.0, 2.0, 3.0])),
    ]);
    let err = <Sample as Decode<TfExample>>::decode(&short).unwrap_err();
    assert!(err.to_string().contains("\"embedding\""), "{err}");
}

fn sequence_bytes(
    context: &[(&str, tensorflow::Feature)],
    lists: &[(&str, Vec<tensorflow::Feature>)],
) -> Vec<u8> {
    let mut c = tensorflow::Features::default();
    for (k, v) in context {
        c.feature.insert((*k).to_string(), v.clone());
    }
    let mut l = tensorflow::FeatureLists::default();
    for (k, steps) in lists {
        l.feature_list.insert(
            (*k).to_string(),
            tensorflow::FeatureList {
                feature: steps.clone(),
            },
        );
    }
    tensorflow::SequenceExample {
        context: Some(c),
        feature_lists: Some(l),
    }
    .encode_to_vec()
}

#[test]
fn feature_lists_follow_fixed_len_sequence_feature() {
    let context = [("id", ints(&[1])), ("weight", floats(&[0.5]))];
    // `frames/box` (allow_missing) and `words` (var) may be absent; `tokens` may not.
    let ok = sequence_bytes(&context, &[("tokens", vec![ints(&[4]), ints(&[5])])]);
    let c = <Clip as Decode<TfSequenceExample>>::decode(&ok).expect("decodes");
    assert_eq!(c.tokens, [4, 5]);
    assert!(c.frames_box.is_empty());
    assert!(c.words.is_empty());
    assert_eq!(c.lang, "en");
    let twin = <ClipTwin as Decode<TfSequenceExample>>::decode(&ok).expect("decodes");
    assert_eq!(
        twin,
        ClipTwin::from(&c),
        "a plain `Vec<Vec<String>>` list is empty too"
    );

    let no_tokens = sequence_bytes(&context, &[]);
    let err = <Clip as Decode<TfSequenceExample>>::decode(&no_tokens).unwrap_err();
    assert!(err.to_string().contains("\"tokens\""), "{err}");

    // Every step of a shaped feature list holds exactly the shape's values.
    let bad_step = sequence_bytes(
        &context,
        &[
            ("tokens", vec![]),
            (
                "frames/box",
                vec![floats(&[1.0, 2.0, 3.0, 4.0]), floats(&[1.0])],
            ),
        ],
    );
    let err = <Clip as Decode<TfSequenceExample>>::decode(&bad_step).unwrap_err();
    assert!(err.to_string().contains("\"frames/box\""), "{err}");
    let err = <ClipTwin as Decode<TfSequenceExample>>::decode(&bad_step).unwrap_err();
    assert!(err.to_string().contains("\"frames/box\""), "{err}");

    // A scalar step holds exactly one value.
    let two_values = sequence_bytes(&context, &[("tokens", vec![ints(&[1, 2])])]);
    assert!(<Clip as Decode<TfSequenceExample>>::decode(&two_values).is_err());
}

#[test]
fn generated_ofrecord_type_denies_unknown_keys() {
    let m = Measurement {
        value: 1.25,
        counts: vec![-1, 2],
        offset: 0.5,
    };
    let bytes = Encode::<OfRecord>::encode_to_vec(&m);
    assert_eq!(
        <Measurement as Decode<OfRecord>>::decode(&bytes).unwrap(),
        m
    );
    let mut with_extra = tfrecord_core::proto::oneflow::OfRecord::decode(&bytes[..]).unwrap();
    with_extra.feature.insert(
        "extra".to_string(),
        tfrecord_core::proto::oneflow::Feature::default(),
    );
    let err = <Measurement as Decode<OfRecord>>::decode(&with_extra.encode_to_vec()).unwrap_err();
    assert!(err.to_string().contains("extra"), "{err}");
}

/// The type generated from `tfrecord infer`'s spec of `examples.tfrecord` reads every record of
/// that file, with the values the generic protobuf types see, and re-encodes to records that
/// read back the same.
#[test]
fn inferred_spec_reads_the_file_it_came_from() {
    use tfrecord_core::proto::tensorflow::feature::Kind;
    let path = crate::support::fixture("examples.tfrecord");
    let typed: Vec<Examples> = tfrecord_core::Reader::<Examples>::open(&path)
        .expect("the fixture opens")
        .enumerate()
        .map(|(i, r)| r.unwrap_or_else(|e| panic!("record {i}: {e}")))
        .collect();
    let generic: Vec<tensorflow::Example> =
        tfrecord_core::RecordReader::open(&path, Default::default())
            .expect("the fixture opens")
            .map(|r| tensorflow::Example::decode(&r.expect("a record")[..]).expect("an Example"))
            .collect();
    assert_eq!(typed.len(), 42);
    assert_eq!(typed.len(), generic.len());
    let ints = |e: &tensorflow::Example, k: &str| -> Option<Vec<i64>> {
        match e.features.as_ref()?.feature.get(k)?.kind.as_ref()? {
            Kind::Int64List(l) => Some(l.value.clone()),
            _ => None,
        }
    };
    let float_bits = |e: &tensorflow::Example, k: &str| -> Option<Vec<u32>> {
        match e.features.as_ref()?.feature.get(k)?.kind.as_ref()? {
            Kind::FloatList(l) => Some(l.value.iter().map(|x| x.to_bits()).collect()),
            _ => None,
        }
    };
    let strings = |e: &tensorflow::Example, k: &str| -> Option<Vec<Vec<u8>>> {
        match e.features.as_ref()?.feature.get(k)?.kind.as_ref()? {
            Kind::BytesList(l) => Some(l.value.clone()),
            _ => None,
        }
    };
    for (i, (t, g)) in typed.iter().zip(&generic).enumerate() {
        assert_eq!(t.id, ints(g, "id").map(|v| v[0]), "record {i}");
        assert_eq!(t.label, ints(g, "label").map(|v| v[0]), "record {i}");
        assert_eq!(t.hist, ints(g, "hist").unwrap_or_default(), "record {i}");
        assert_eq!(t.special_i, ints(g, "special_i"), "record {i}");
        let bits = |v: &Option<Vec<f32>>| {
            v.as_ref()
                .map(|v| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
        };
        assert_eq!(bits(&t.emb), float_bits(g, "emb"), "record {i}");
        assert_eq!(bits(&t.special_f), float_bits(g, "special_f"), "record {i}");
        assert_eq!(
            t.score.map(f32::to_bits),
            float_bits(g, "score").map(|v| v[0]),
            "record {i}"
        );
        let tags: Vec<Vec<u8>> = t.tags.iter().map(|s| s.as_bytes().to_vec()).collect();
        assert_eq!(tags, strings(g, "tags").unwrap_or_default(), "record {i}");
        assert_eq!(
            t.image_encoded,
            strings(g, "image/encoded").map(|v| v[0].clone()),
            "record {i}"
        );
        assert_eq!(
            t.big_bytes,
            strings(g, "big_bytes").map(|v| v[0].clone()),
            "record {i}"
        );
        assert_eq!(t.many_bytes, strings(g, "many_bytes"), "record {i}");
        assert_eq!(
            t.n_code.as_ref().map(|s| s.as_bytes().to_vec()),
            strings(g, "ünïcode/ключ").map(|v| v[0].clone()),
            "record {i}"
        );
        let bytes = Encode::<TfExample>::encode_to_vec(t);
        let again =
            <Examples as Decode<TfExample>>::decode(&bytes).expect("a re-encoded record decodes");
        // By bytes: the record holds a NaN.
        assert!(
            Encode::<TfExample>::encode_to_vec(&again) == bytes,
            "record {i}"
        );
    }
}

/// The type generated from `tfrecord infer --sequence`'s spec of `sequence.tfrecord` reads every
/// record of that file, with the values the generic protobuf types see.
#[test]
fn inferred_sequence_spec_reads_the_file_it_came_from() {
    use tfrecord_core::proto::tensorflow::feature::Kind;
    let path = crate::support::fixture("sequence.tfrecord");
    let typed: Vec<Sequence> = tfrecord_core::Reader::<Sequence, TfSequenceExample>::open(&path)
        .expect("the fixture opens")
        .enumerate()
        .map(|(i, r)| r.unwrap_or_else(|e| panic!("record {i}: {e}")))
        .collect();
    let generic: Vec<tensorflow::SequenceExample> =
        tfrecord_core::RecordReader::open(&path, Default::default())
            .expect("the fixture opens")
            .map(|r| {
                tensorflow::SequenceExample::decode(&r.expect("a record")[..])
                    .expect("a SequenceExample")
            })
            .collect();
    assert_eq!(typed.len(), 12);
    assert_eq!(typed.len(), generic.len());
    for (i, (t, g)) in typed.iter().zip(&generic).enumerate() {
        let ctx = &g.context.as_ref().expect("a context").feature;
        match ctx["id"].kind.as_ref() {
            Some(Kind::Int64List(l)) => assert_eq!(l.value, [t.id], "record {i}"),
            other => panic!("record {i}: id is {other:?}"),
        }
        match ctx["lang"].kind.as_ref() {
            Some(Kind::BytesList(l)) => assert_eq!(l.value, [t.lang.as_bytes()], "record {i}"),
            other => panic!("record {i}: lang is {other:?}"),
        }
        let lists = &g
            .feature_lists
            .as_ref()
            .expect("feature lists")
            .feature_list;
        let tokens: Vec<Vec<i64>> = lists["tokens"]
            .feature
            .iter()
            .map(|f| match f.kind.as_ref() {
                Some(Kind::Int64List(l)) => l.value.clone(),
                other => panic!("record {i}: a tokens step is {other:?}"),
            })
            .collect();
        assert_eq!(t.tokens, tokens, "record {i}");
        let scores: Vec<u32> = lists["scores"]
            .feature
            .iter()
            .map(|f| match f.kind.as_ref() {
                Some(Kind::FloatList(l)) => l.value[0].to_bits(),
                other => panic!("record {i}: a scores step is {other:?}"),
            })
            .collect();
        let got: Vec<u32> = t.scores.iter().map(|x| x.to_bits()).collect();
        assert_eq!(got, scores, "record {i}");
    }
}

/// A spec file's record, the type generated from it and its hand-derived twin give the same
/// columns: the one mapping, whether the spec came from TOML or the derive.
#[test]
fn spec_file_generated_type_and_derive_have_the_same_columns() {
    use tfrecord_core::Format;
    use tfrecord_core::columns::ColumnDecoder;
    use tfrecord_core::parse::RecordSpec;
    use tfrecord_schema::ir::Schema;

    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/specs/records.toml"))
        .expect("spec file");
    let schema = Schema::from_toml_str(&text, "records.toml").expect("spec");
    let record = schema
        .records
        .iter()
        .find(|r| r.name == "Sample")
        .expect("record Sample");
    let from_file = ColumnDecoder::new(
        &RecordSpec::from_record(record).expect("runtime spec"),
        Format::TfRecord,
    )
    .expect("decoder");
    let generated = ColumnDecoder::for_type::<Sample>(Format::TfRecord).expect("generated");
    let twin = ColumnDecoder::for_type::<SampleTwin>(Format::TfRecord).expect("twin");
    assert_eq!(generated.layouts(), from_file.layouts());
    assert_eq!(twin.layouts(), from_file.layouts());
    assert_eq!(from_file.layouts().len(), 14);
}
