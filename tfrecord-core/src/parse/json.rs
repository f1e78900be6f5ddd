//! The JSON form of tensors, what `tfrecord parse` prints, as a [`serde::Serialize`] model:
//! written straight to a writer (`serde_json::to_writer`), a batch takes no memory beyond its
//! tensors and the text, and [`Tensor::to_json`] / [`tensors_to_json`](super::tensors_to_json)
//! build the same form as a `serde_json::Value`.
//!
//! Objects list their keys in order (`serde_json`'s maps are sorted): `{"dense": {"shape",
//! "values"}}`, `{"ragged": {"flat_values", "nested_row_splits"}}`, `{"sparse":
//! {"dense_shape", "indices", "values"}}`.

use base64::Engine;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use super::tensor::{Tensor, Values};

/// One float element: the shortest decimal that reads back as the same value, or `"NaN"`,
/// `"Infinity"`, `"-Infinity"`.
fn float<S: Serializer>(s: S, v: f64, finite: impl FnOnce(f64) -> f64) -> Result<S::Ok, S::Error> {
    if v.is_nan() {
        s.serialize_str("NaN")
    } else if v.is_infinite() {
        s.serialize_str(if v > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        s.serialize_f64(finite(v))
    }
}

/// An `f32` element (its shortest decimal as an `f32`).
struct F32(f32);

impl Serialize for F32 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        float(s, f64::from(v), |_| crate::text::shortest_float(v))
    }
}

/// An `f64` element.
struct F64(f64);

impl Serialize for F64 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        float(s, self.0, |v| v)
    }
}

/// A bytes element, as standard base64.
struct Base64<'a>(&'a [u8]);

impl Serialize for Base64<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(self.0))
    }
}

/// The elements as a JSON array: numbers, floats as their shortest decimals (or `"NaN"`,
/// `"Infinity"`, `"-Infinity"`), bytes as standard base64, booleans as `true` / `false`.
impl Serialize for Values {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        fn all<S: Serializer, T: Serialize>(
            s: S,
            n: usize,
            items: impl Iterator<Item = T>,
        ) -> Result<S::Ok, S::Error> {
            let mut seq = s.serialize_seq(Some(n))?;
            for item in items {
                seq.serialize_element(&item)?;
            }
            seq.end()
        }
        match self {
            Values::Int64(v) => all(s, v.len(), v.iter()),
            Values::Float32(v) => all(s, v.len(), v.iter().map(|&x| F32(x))),
            Values::Bytes(v) => all(s, v.len(), v.iter().map(Base64)),
            Values::Bool(v) => all(s, v.len(), v.iter()),
            Values::Int32(v) => all(s, v.len(), v.iter()),
            Values::Float64(v) => all(s, v.len(), v.iter().map(|&x| F64(x))),
        }
    }
}

/// A sparse tensor's index matrix as one array of `rank` numbers per entry (`n` empty arrays
/// for rank 0).
struct Rows<'a> {
    indices: &'a [i64],
    rank: usize,
    n: usize,
}

impl Serialize for Rows<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.rank == 0 {
            let mut seq = s.serialize_seq(Some(self.n))?;
            for _ in 0..self.n {
                seq.serialize_element(&[0i64; 0])?;
            }
            return seq.end();
        }
        let mut seq = s.serialize_seq(Some(self.indices.len() / self.rank))?;
        for row in self.indices.chunks(self.rank) {
            seq.serialize_element(row)?;
        }
        seq.end()
    }
}

/// The body of a tensor's form: its fields, in key order.
struct Body<'a>(&'a Tensor);

impl Serialize for Body<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Tensor::Dense { shape, values } => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("shape", shape)?;
                m.serialize_entry("values", values)?;
                m.end()
            }
            Tensor::Sparse {
                indices,
                values,
                dense_shape,
            } => {
                let rows = Rows {
                    indices,
                    rank: dense_shape.len(),
                    n: values.len(),
                };
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("dense_shape", dense_shape)?;
                m.serialize_entry("indices", &rows)?;
                m.serialize_entry("values", values)?;
                m.end()
            }
            Tensor::Ragged {
                flat_values,
                nested_row_splits,
            } => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("flat_values", flat_values)?;
                m.serialize_entry("nested_row_splits", nested_row_splits)?;
                m.end()
            }
        }
    }
}

/// The tensor's form: `{"dense": ...}`, `{"sparse": ...}` or `{"ragged": ...}` (see
/// [`Tensor::to_json`]).
impl Serialize for Tensor {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let kind = match self {
            Tensor::Dense { .. } => "dense",
            Tensor::Sparse { .. } => "sparse",
            Tensor::Ragged { .. } => "ragged",
        };
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry(kind, &Body(self))?;
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{ByteStrings, Tensors, tensors_to_json};

    /// Every form, written by serde straight to text and built as a `Value`, is the same text:
    /// keys in order, floats as their shortest decimals or the names of the special values,
    /// bytes as base64, a rank-0 sparse tensor's indices as empty rows.
    #[test]
    fn streamed_text_is_the_value_text() {
        let mut t = Tensors::new();
        t.insert(
            "d".into(),
            Tensor::Dense {
                shape: vec![2, 2],
                values: Values::Float32(vec![0.1, f32::NAN, f32::NEG_INFINITY, -0.0]),
            },
        );
        t.insert(
            "s".into(),
            Tensor::Sparse {
                indices: vec![0, 1, 1, 0],
                values: Values::Bytes(ByteStrings::from_iter([&b"ab"[..], b"\xff"])),
                dense_shape: vec![2, 2],
            },
        );
        t.insert(
            "s0".into(),
            Tensor::Sparse {
                indices: vec![],
                values: Values::Int64(vec![i64::MIN, i64::MAX]),
                dense_shape: vec![],
            },
        );
        t.insert(
            "r".into(),
            Tensor::Ragged {
                flat_values: Values::Float64(vec![1e-300, f64::INFINITY]),
                nested_row_splits: vec![vec![0, 2]],
            },
        );
        t.insert(
            "b".into(),
            Tensor::Dense {
                shape: vec![3],
                values: Values::Bool(vec![true, false, true]),
            },
        );
        t.insert(
            "i".into(),
            Tensor::Dense {
                shape: vec![1],
                values: Values::Int32(vec![-7]),
            },
        );
        let streamed = serde_json::to_string(&t).expect("serializes");
        assert_eq!(streamed, tensors_to_json(&t).to_string());
        assert_eq!(
            streamed,
            r#"{"b":{"dense":{"shape":[3],"values":[true,false,true]}},"d":{"dense":{"shape":[2,2],"values":[0.1,"NaN","-Infinity",-0.0]}},"i":{"dense":{"shape":[1],"values":[-7]}},"r":{"ragged":{"flat_values":[1e-300,"Infinity"],"nested_row_splits":[[0,2]]}},"s":{"sparse":{"dense_shape":[2,2],"indices":[[0,1],[1,0]],"values":["YWI=","/w=="]}},"s0":{"sparse":{"dense_shape":[],"indices":[[],[]],"values":[-9223372036854775808,9223372036854775807]}}}"#
        );
    }
}
