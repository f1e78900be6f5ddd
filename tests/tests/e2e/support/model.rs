//! The derive tests' model of a feature map, and its conversions to and from the generic prost
//! messages.
//!
//! Every derive test type has a *model*: the features it must be written as, per container, in a
//! dialect-neutral form ([`Feat`], floats as bits so that NaN payloads and `-0.0` compare
//! exactly). The checks of [`checks`](super::checks) hold the derive to it.

use std::collections::BTreeMap;
use std::fmt::Debug;

use tfrecord_core::Message;
use tfrecord_core::proto::{oneflow, tensorflow};

/// One feature's list, as the model expects it. Floats are kept as bits.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Feat {
    /// `int64_list`.
    Int(Vec<i64>),
    /// `int32_list` (OFRecord only).
    Int32(Vec<i32>),
    /// `float_list`, as `f32` bits.
    Float(Vec<u32>),
    /// `double_list` (OFRecord only), as `f64` bits.
    Double(Vec<u64>),
    /// `bytes_list`.
    Bytes(Vec<Vec<u8>>),
}

impl Feat {
    pub(crate) fn len(&self) -> usize {
        match self {
            Feat::Int(v) => v.len(),
            Feat::Int32(v) => v.len(),
            Feat::Float(v) => v.len(),
            Feat::Double(v) => v.len(),
            Feat::Bytes(v) => v.len(),
        }
    }
}

/// A model feature map, by key.
pub(crate) type Feats = BTreeMap<String, Feat>;

/// Builds a model feature map; `of` selects OFRecord's vocabulary (int32 and double lists).
pub(crate) struct M {
    pub(crate) of: bool,
    pub(crate) out: Feats,
}

impl M {
    pub(crate) fn new(of: bool) -> Self {
        M {
            of,
            out: Feats::new(),
        }
    }

    pub(crate) fn put(&mut self, key: &str, f: Feat) {
        assert!(
            self.out.insert(key.to_string(), f).is_none(),
            "model bug: key {key} twice"
        );
    }

    pub(crate) fn int(&mut self, key: &str, v: impl IntoIterator<Item = i64>) {
        self.put(key, Feat::Int(v.into_iter().collect()));
    }

    pub(crate) fn i32(&mut self, key: &str, v: impl IntoIterator<Item = i32>) {
        let f = i32_feat(self.of, v);
        self.put(key, f);
    }

    pub(crate) fn f32(&mut self, key: &str, v: impl IntoIterator<Item = f32>) {
        self.put(key, f32_feat(v));
    }

    /// An `f64`: a double list in OFRecord, a float list (lossy) in tf.train.Example.
    pub(crate) fn f64(&mut self, key: &str, v: impl IntoIterator<Item = f64>) {
        let f = f64_feat(self.of, v);
        self.put(key, f);
    }

    pub(crate) fn bytes<B: AsRef<[u8]>>(&mut self, key: &str, v: impl IntoIterator<Item = B>) {
        self.put(key, bytes_feat(v));
    }

    /// Inlines a flattened member's features under `prefix/`.
    pub(crate) fn nest(&mut self, prefix: &str, inner: Feats) {
        for (k, f) in inner {
            self.put(&format!("{prefix}/{k}"), f);
        }
    }

    pub(crate) fn done(self) -> Feats {
        self.out
    }
}

/// An `int32` list: as itself in OFRecord, widened to `int64` in tf.train.Example.
pub(crate) fn i32_feat(of: bool, v: impl IntoIterator<Item = i32>) -> Feat {
    if of {
        Feat::Int32(v.into_iter().collect())
    } else {
        Feat::Int(v.into_iter().map(i64::from).collect())
    }
}

/// A `float` list.
pub(crate) fn f32_feat(v: impl IntoIterator<Item = f32>) -> Feat {
    Feat::Float(v.into_iter().map(f32::to_bits).collect())
}

#[allow(clippy::cast_possible_truncation)]
pub(crate) fn f64_feat(of: bool, v: impl IntoIterator<Item = f64>) -> Feat {
    if of {
        Feat::Double(v.into_iter().map(f64::to_bits).collect())
    } else {
        Feat::Float(v.into_iter().map(|d| (d as f32).to_bits()).collect())
    }
}

/// A `bytes` list.
pub(crate) fn bytes_feat<B: AsRef<[u8]>>(v: impl IntoIterator<Item = B>) -> Feat {
    Feat::Bytes(v.into_iter().map(|b| b.as_ref().to_vec()).collect())
}

/// A test type's expected features.
pub(crate) trait Model {
    /// The features in tf.train.Example (`of == false`) or OFRecord (`of == true`).
    fn feats(&self, of: bool) -> Feats;
}

// ---------------------------------------------------------------------------------------------
// Model <-> prost messages.
// ---------------------------------------------------------------------------------------------

/// A model feature as a prost `tensorflow.Feature`.
pub(crate) fn tf_feature(f: &Feat) -> tensorflow::Feature {
    use tensorflow::feature::Kind;
    let kind = match f {
        Feat::Int(v) => Kind::Int64List(tensorflow::Int64List { value: v.clone() }),
        Feat::Float(v) => Kind::FloatList(tensorflow::FloatList {
            value: v.iter().copied().map(f32::from_bits).collect(),
        }),
        Feat::Bytes(v) => Kind::BytesList(tensorflow::BytesList { value: v.clone() }),
        Feat::Int32(_) | Feat::Double(_) => panic!("tf.train.Example cannot hold {f:?}"),
    };
    tensorflow::Feature { kind: Some(kind) }
}

/// A model feature as a prost `oneflow.Feature`.
pub(crate) fn of_feature(f: &Feat) -> oneflow::Feature {
    use oneflow::feature::Kind;
    let kind = match f {
        Feat::Int(v) => Kind::Int64List(oneflow::Int64List { value: v.clone() }),
        Feat::Int32(v) => Kind::Int32List(oneflow::Int32List { value: v.clone() }),
        Feat::Float(v) => Kind::FloatList(oneflow::FloatList {
            value: v.iter().copied().map(f32::from_bits).collect(),
        }),
        Feat::Double(v) => Kind::DoubleList(oneflow::DoubleList {
            value: v.iter().copied().map(f64::from_bits).collect(),
        }),
        Feat::Bytes(v) => Kind::BytesList(oneflow::BytesList { value: v.clone() }),
    };
    oneflow::Feature { kind: Some(kind) }
}

/// `None` for a feature with no kind set.
fn feat_of_tf(f: &tensorflow::Feature) -> Option<Feat> {
    use tensorflow::feature::Kind;
    Some(match f.kind.as_ref()? {
        Kind::Int64List(l) => Feat::Int(l.value.clone()),
        Kind::FloatList(l) => Feat::Float(l.value.iter().map(|x| x.to_bits()).collect()),
        Kind::BytesList(l) => Feat::Bytes(l.value.clone()),
    })
}

/// A prost `oneflow.Feature` as a model feature (`None` without a kind).
fn feat_of_of(f: &oneflow::Feature) -> Option<Feat> {
    use oneflow::feature::Kind;
    Some(match f.kind.as_ref()? {
        Kind::Int64List(l) => Feat::Int(l.value.clone()),
        Kind::Int32List(l) => Feat::Int32(l.value.clone()),
        Kind::FloatList(l) => Feat::Float(l.value.iter().map(|x| x.to_bits()).collect()),
        Kind::DoubleList(l) => Feat::Double(l.value.iter().map(|x| x.to_bits()).collect()),
        Kind::BytesList(l) => Feat::Bytes(l.value.clone()),
    })
}

/// A model feature map as a prost `tensorflow.Example`.
fn tf_example(feats: &Feats) -> tensorflow::Example {
    let feature = feats
        .iter()
        .map(|(k, f)| (k.clone(), tf_feature(f)))
        .collect();
    tensorflow::Example {
        features: Some(tensorflow::Features { feature }),
    }
}

/// A model feature map as a prost `oneflow.OFRecord`.
fn ofrecord(feats: &Feats) -> oneflow::OfRecord {
    let feature = feats
        .iter()
        .map(|(k, f)| (k.clone(), of_feature(f)))
        .collect();
    oneflow::OfRecord { feature }
}

/// A prost `tensorflow.Example`'s features.
pub(crate) fn feats_of_tf(e: &tensorflow::Example) -> Feats {
    e.features
        .iter()
        .flat_map(|f| &f.feature)
        .map(|(k, f)| {
            (
                k.clone(),
                feat_of_tf(f).expect("every written feature has a kind"),
            )
        })
        .collect()
}

/// A prost `oneflow.OFRecord`'s features.
pub(crate) fn feats_of_of(r: &oneflow::OfRecord) -> Feats {
    r.feature
        .iter()
        .map(|(k, f)| {
            (
                k.clone(),
                feat_of_of(f).expect("every written feature has a kind"),
            )
        })
        .collect()
}

/// A model feature map as prost encodes it in a tf.train.Example.
pub(crate) fn tf_bytes(feats: &Feats) -> Vec<u8> {
    tf_example(feats).encode_to_vec()
}

/// A model feature map as prost encodes it in an OFRecord.
pub(crate) fn of_bytes(feats: &Feats) -> Vec<u8> {
    ofrecord(feats).encode_to_vec()
}

/// The model of a SequenceExample: context features, and feature lists whose steps may be
/// features with no kind set (`None`).
#[derive(Clone, Debug, PartialEq, Default)]
pub(crate) struct SeqFeats {
    pub(crate) context: Feats,
    pub(crate) lists: BTreeMap<String, Vec<Option<Feat>>>,
}

/// A SequenceExample test type's expected context features and feature lists.
pub(crate) trait SeqModel {
    fn seq_feats(&self) -> SeqFeats;
}

/// A model SequenceExample as a prost `tensorflow.SequenceExample`.
pub(crate) fn tf_sequence(s: &SeqFeats) -> tensorflow::SequenceExample {
    let feature_list = s
        .lists
        .iter()
        .map(|(k, steps)| {
            let feature = steps
                .iter()
                .map(|f| {
                    f.as_ref()
                        .map_or(tensorflow::Feature { kind: None }, tf_feature)
                })
                .collect();
            (k.clone(), tensorflow::FeatureList { feature })
        })
        .collect();
    tensorflow::SequenceExample {
        context: Some(tensorflow::Features {
            feature: s
                .context
                .iter()
                .map(|(k, f)| (k.clone(), tf_feature(f)))
                .collect(),
        }),
        feature_lists: Some(tensorflow::FeatureLists { feature_list }),
    }
}

/// A prost `tensorflow.SequenceExample`'s context features and feature lists.
pub(crate) fn seq_feats_of(e: &tensorflow::SequenceExample) -> SeqFeats {
    SeqFeats {
        context: e
            .context
            .iter()
            .flat_map(|c| &c.feature)
            .map(|(k, f)| {
                (
                    k.clone(),
                    feat_of_tf(f).expect("context features have a kind"),
                )
            })
            .collect(),
        lists: e
            .feature_lists
            .iter()
            .flat_map(|l| &l.feature_list)
            .map(|(k, l)| (k.clone(), l.feature.iter().map(feat_of_tf).collect()))
            .collect(),
    }
}
