//! Conversion between `tensorflow.Example` and `oneflow.OFRecord`.
//!
//! Each feature keeps its key and maps kind to kind: bytes to bytes, float to float, int64 to
//! int64. From OFRecord, int32 lists widen to int64 (lossless); double lists narrow to float
//! only when the caller allows it, since that loses precision.
//!
//! [`example_to_ofrecord`] and [`ofrecord_to_example`] convert decoded messages;
//! [`example_to_ofrecord_bytes`] and [`ofrecord_to_example_bytes`] convert serialized records
//! straight into serialized records, with the same result and without building the maps.

mod wire;

pub use wire::{example_to_ofrecord_bytes, ofrecord_to_example_bytes};

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::proto::{oneflow, tensorflow};

/// One `tf.train.Example` feature as an OFRecord feature: kind to kind.
fn tf_to_of(f: &tensorflow::Feature) -> oneflow::Feature {
    use oneflow::feature::Kind as O;
    use tensorflow::feature::Kind as T;
    let kind = f.kind.as_ref().map(|kind| match kind {
        T::BytesList(l) => O::BytesList(oneflow::BytesList {
            value: l.value.clone(),
        }),
        T::FloatList(l) => O::FloatList(oneflow::FloatList {
            value: l.value.clone(),
        }),
        T::Int64List(l) => O::Int64List(oneflow::Int64List {
            value: l.value.clone(),
        }),
    });
    oneflow::Feature { kind }
}

/// One OFRecord feature as a `tf.train.Example` feature; the error (without a key) says why not.
fn of_to_tf(f: &oneflow::Feature, allow_lossy_double: bool) -> Result<tensorflow::Feature> {
    use oneflow::feature::Kind as O;
    use tensorflow::feature::Kind as T;
    let kind = match &f.kind {
        None => None,
        Some(O::BytesList(l)) => Some(T::BytesList(tensorflow::BytesList {
            value: l.value.clone(),
        })),
        Some(O::FloatList(l)) => Some(T::FloatList(tensorflow::FloatList {
            value: l.value.clone(),
        })),
        Some(O::Int64List(l)) => Some(T::Int64List(tensorflow::Int64List {
            value: l.value.clone(),
        })),
        Some(O::Int32List(l)) => Some(T::Int64List(tensorflow::Int64List {
            value: l.value.iter().map(|&v| i64::from(v)).collect(),
        })),
        Some(O::DoubleList(l)) => {
            if !allow_lossy_double {
                return Err(Error::feature(
                    "expected a kind tf.train.Example can hold, found double_list \
                     (narrowing to float_list loses precision; allow it explicitly: \
                     `allow_lossy_double`, the CLI's --allow-lossy-double)",
                ));
            }
            let mut value = Vec::with_capacity(l.value.len());
            for &d in &l.value {
                value.push(crate::feature::narrow_f64(d).ok_or_else(|| beyond_float(d))?);
            }
            Some(T::FloatList(tensorflow::FloatList { value }))
        }
    };
    Ok(tensorflow::Feature { kind })
}

/// The error for a double that a float list cannot hold.
pub(crate) fn beyond_float(d: f64) -> Error {
    Error::feature(format!(
        "{d:e} is beyond the range of a float (about 3.4e38): narrowing the double list to a \
         float list would make it infinity"
    ))
}

/// The features of a `tf.train.Example` as OFRecord features, keys kept.
pub(crate) fn features_to_of<K: Ord + Clone>(
    features: &BTreeMap<K, tensorflow::Feature>,
) -> BTreeMap<K, oneflow::Feature> {
    features
        .iter()
        .map(|(k, f)| (k.clone(), tf_to_of(f)))
        .collect()
}

/// The features of an OFRecord as `tf.train.Example` features, keys kept; an error names the
/// key, as `name` spells it.
pub(crate) fn features_to_tf<K: Ord + Clone>(
    features: &BTreeMap<K, oneflow::Feature>,
    allow_lossy_double: bool,
    name: impl Fn(&K) -> String,
) -> Result<BTreeMap<K, tensorflow::Feature>> {
    features
        .iter()
        .map(|(k, f)| match of_to_tf(f, allow_lossy_double) {
            Ok(f) => Ok((k.clone(), f)),
            Err(e) => Err(e.with_key(name(k))),
        })
        .collect()
}

/// Converts a `tf.train.Example` to an `OFRecord`. Lossless. A feature with no kind set becomes
/// an OFRecord feature with no kind set.
pub fn example_to_ofrecord(e: &tensorflow::Example) -> oneflow::OfRecord {
    oneflow::OfRecord {
        feature: e
            .features
            .as_ref()
            .map(|f| features_to_of(&f.feature))
            .unwrap_or_default(),
    }
}

/// Converts an `OFRecord` to a `tf.train.Example`.
///
/// Int32 lists widen to int64. Double lists become float lists only with `allow_lossy_double`
/// (each value rounded to the nearest `f32`).
///
/// # Errors
/// A double list without `allow_lossy_double`; the error names the feature key.
pub fn ofrecord_to_example(
    r: &oneflow::OfRecord,
    allow_lossy_double: bool,
) -> Result<tensorflow::Example> {
    let feature = features_to_tf(&r.feature, allow_lossy_double, String::clone)?;
    Ok(tensorflow::Example {
        features: Some(tensorflow::Features { feature }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_double_policy() {
        let mut r = oneflow::OfRecord::default();
        r.feature.insert(
            "i".into(),
            oneflow::Feature {
                kind: Some(oneflow::feature::Kind::Int32List(oneflow::Int32List {
                    value: vec![-1, 7],
                })),
            },
        );
        let e = ofrecord_to_example(&r, false).unwrap();
        let back = example_to_ofrecord(&e);
        let Some(oneflow::feature::Kind::Int64List(l)) = &back.feature["i"].kind else {
            panic!()
        };
        assert_eq!(l.value, vec![-1, 7]);

        r.feature.insert(
            "d".into(),
            oneflow::Feature {
                kind: Some(oneflow::feature::Kind::DoubleList(oneflow::DoubleList {
                    value: vec![0.1],
                })),
            },
        );
        let err = ofrecord_to_example(&r, false).unwrap_err();
        assert_eq!(err.key(), Some("d"));
        assert!(ofrecord_to_example(&r, true).is_ok());
    }
}
