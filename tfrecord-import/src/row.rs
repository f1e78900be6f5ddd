//! One output record as plain data: feature key to values, and its encoding as a
//! `tf.train.Example` or an `OFRecord`.

use std::collections::BTreeMap;

use tfrecord_core::Format;
use tfrecord_core::Message;
use tfrecord_core::parse::Values;
use tfrecord_core::proto::{oneflow, tensorflow};

/// The features of one output record, by key. Values of the types a `tf.train.Feature` cannot
/// hold are stored as the nearest list: `bool` and `int32` in an `int64_list` (`int32_list` in
/// OFRecord), `float64` in a `float_list` (rounded to `f32`; OFRecord keeps a `double_list`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FeatureRow {
    /// Feature key to values.
    pub features: BTreeMap<String, Values>,
}

impl FeatureRow {
    /// An empty row.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets a feature (replacing one with the same key).
    pub fn insert(&mut self, key: impl Into<String>, values: impl Into<Values>) {
        self.features.insert(key.into(), values.into());
    }

    /// The row as a `tf.train.Example`.
    pub fn to_example(&self) -> tensorflow::Example {
        use tensorflow::feature::Kind;
        let mut features = tensorflow::Features::default();
        for (k, v) in &self.features {
            let kind = match v {
                Values::Int64(v) => Kind::Int64List(tensorflow::Int64List { value: v.clone() }),
                Values::Int32(v) => Kind::Int64List(tensorflow::Int64List {
                    value: v.iter().map(|&x| i64::from(x)).collect(),
                }),
                Values::Bool(v) => Kind::Int64List(tensorflow::Int64List {
                    value: v.iter().map(|&x| i64::from(x)).collect(),
                }),
                Values::Float32(v) => Kind::FloatList(tensorflow::FloatList { value: v.clone() }),
                #[allow(clippy::cast_possible_truncation)]
                Values::Float64(v) => Kind::FloatList(tensorflow::FloatList {
                    value: v.iter().map(|&x| x as f32).collect(),
                }),
                Values::Bytes(v) => Kind::BytesList(tensorflow::BytesList { value: v.to_vecs() }),
                _ => continue,
            };
            features
                .feature
                .insert(k.clone(), tensorflow::Feature { kind: Some(kind) });
        }
        tensorflow::Example {
            features: Some(features),
        }
    }

    /// The row as a OneFlow `OFRecord`.
    pub fn to_ofrecord(&self) -> oneflow::OfRecord {
        use oneflow::feature::Kind;
        let mut out = oneflow::OfRecord::default();
        for (k, v) in &self.features {
            let kind = match v {
                Values::Int64(v) => Kind::Int64List(oneflow::Int64List { value: v.clone() }),
                Values::Int32(v) => Kind::Int32List(oneflow::Int32List { value: v.clone() }),
                Values::Bool(v) => Kind::Int64List(oneflow::Int64List {
                    value: v.iter().map(|&x| i64::from(x)).collect(),
                }),
                Values::Float32(v) => Kind::FloatList(oneflow::FloatList { value: v.clone() }),
                Values::Float64(v) => Kind::DoubleList(oneflow::DoubleList { value: v.clone() }),
                Values::Bytes(v) => Kind::BytesList(oneflow::BytesList { value: v.to_vecs() }),
                _ => continue,
            };
            out.feature
                .insert(k.clone(), oneflow::Feature { kind: Some(kind) });
        }
        out
    }

    /// The serialized message for a container: a `tf.train.Example` for TFRecord, an
    /// `OFRecord` for OFRecord.
    pub fn encode(&self, format: Format) -> Vec<u8> {
        match format {
            Format::OfRecord => self.to_ofrecord().encode_to_vec(),
            _ => self.to_example().encode_to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_every_type_to_its_list() {
        let mut r = FeatureRow::new();
        r.insert("b", vec![true, false]);
        r.insert("i", vec![7i32]);
        r.insert("d", vec![0.5f64]);
        r.insert("s", "x");
        let e = r.to_example();
        let f = &e.features.as_ref().unwrap().feature;
        assert_eq!(
            f["b"].kind,
            Some(tensorflow::feature::Kind::Int64List(
                tensorflow::Int64List { value: vec![1, 0] }
            ))
        );
        assert_eq!(
            f["d"].kind,
            Some(tensorflow::feature::Kind::FloatList(
                tensorflow::FloatList { value: vec![0.5] }
            ))
        );
        let o = r.to_ofrecord();
        assert_eq!(
            o.feature["i"].kind,
            Some(oneflow::feature::Kind::Int32List(oneflow::Int32List {
                value: vec![7]
            }))
        );
        assert_eq!(
            o.feature["d"].kind,
            Some(oneflow::feature::Kind::DoubleList(oneflow::DoubleList {
                value: vec![0.5]
            }))
        );
        assert!(!r.encode(Format::TfRecord).is_empty());
    }
}
