//! One output record as plain data: feature key to values, and its encoding as a
//! `tf.train.Example` or an `OFRecord`.

use std::collections::BTreeMap;

use tfrecord_core::parse::Values;
use tfrecord_core::proto::{oneflow, tensorflow};
use tfrecord_core::{Format, Message, narrow_f64};

use crate::error::{Error, Result};

/// The features of one output record, by key. Values of the types a `tf.train.Feature` cannot
/// hold are stored as the nearest list: `bool` and `int32` in an `int64_list` (`int32_list` in
/// OFRecord), `float64` in a `float_list` (rounded to the nearest `f32`; a finite value beyond
/// the float's range is an error rather than infinity; OFRecord keeps a `double_list`).
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
    ///
    /// # Errors
    /// A `float64` value beyond the range of a float (about 3.4e38), which would become
    /// infinity in the `float_list`; the error names the feature.
    pub fn to_example(&self) -> Result<tensorflow::Example> {
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
                Values::Float64(v) => Kind::FloatList(tensorflow::FloatList {
                    value: narrow(k, v)?,
                }),
                Values::Bytes(v) => Kind::BytesList(tensorflow::BytesList { value: v.to_vecs() }),
                _ => continue,
            };
            features
                .feature
                .insert(k.clone(), tensorflow::Feature { kind: Some(kind) });
        }
        Ok(tensorflow::Example {
            features: Some(features),
        })
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
    ///
    /// # Errors
    /// As [`to_example`](Self::to_example), for TFRecord.
    pub fn encode(&self, format: Format) -> Result<Vec<u8>> {
        Ok(match format {
            Format::OfRecord => self.to_ofrecord().encode_to_vec(),
            _ => self.to_example()?.encode_to_vec(),
        })
    }
}

/// The doubles of feature `key` rounded to floats, each within the float's range.
fn narrow(key: &str, values: &[f64]) -> Result<Vec<f32>> {
    values
        .iter()
        .map(|&d| {
            narrow_f64(d).ok_or_else(|| {
                Error::new(format!(
                    "{d:e} is beyond the range of a float (about 3.4e38), which a `double` \
                     feature is stored as in a tf.train.Example's float list"
                ))
                .with_feature(key)
            })
        })
        .collect()
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
        let e = r.to_example().expect("every double fits a float");
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
        assert!(!r.encode(Format::TfRecord).expect("encodes").is_empty());
    }

    #[test]
    fn a_double_beyond_the_float_range_is_an_error_for_tfrecord_only() {
        let mut r = FeatureRow::new();
        r.insert("ok", vec![f64::INFINITY, 3.402_823_5e38, f64::NAN]);
        assert!(
            r.to_example().is_ok(),
            "infinities, NaN and the largest float pass"
        );
        r.insert("big", vec![0.5f64, -1e300]);
        let e = r.to_example().expect_err("-1e300 would become -inf");
        assert_eq!(e.feature(), Some("big"));
        assert!(
            e.message()
                .contains("-1e300 is beyond the range of a float"),
            "{e}"
        );
        assert!(r.encode(Format::TfRecord).is_err());
        let o = r.to_ofrecord();
        assert_eq!(
            o.feature["big"].kind,
            Some(oneflow::feature::Kind::DoubleList(oneflow::DoubleList {
                value: vec![0.5, -1e300]
            }))
        );
    }
}
