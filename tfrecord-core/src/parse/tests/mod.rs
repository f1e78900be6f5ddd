//! The batch parser's unit tests, each checked against TensorFlow's documented or implemented
//! behaviour, in files by topic. This file holds what they share: records built from features,
//! the tensors read back as plain data, and a small random generator.

mod dense;
mod encodings;
mod fuzz;
mod invalid;
mod json;
mod paths;
mod ragged;
mod sequence;
mod sparse;

use serde_json::{Value, json};

use crate::Message;
use crate::codec::wire::put_varint;
use crate::parse::{FeatureSpec, Spec, Tensor, Values};
use crate::proto::tensorflow::{
    BytesList, Example, Feature, FeatureList, FeatureLists, Features, FloatList, Int64List,
    SequenceExample, feature::Kind,
};

// ---- Building records ----

fn i(v: &[i64]) -> Feature {
    Feature {
        kind: Some(Kind::Int64List(Int64List { value: v.to_vec() })),
    }
}

fn f(v: &[f32]) -> Feature {
    Feature {
        kind: Some(Kind::FloatList(FloatList { value: v.to_vec() })),
    }
}

fn b(v: &[&str]) -> Feature {
    Feature {
        kind: Some(Kind::BytesList(BytesList {
            value: v.iter().map(|s| s.as_bytes().to_vec()).collect(),
        })),
    }
}

fn none() -> Feature {
    Feature { kind: None }
}

fn features(entries: &[(&str, Feature)]) -> Features {
    Features {
        feature: entries
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.clone()))
            .collect(),
    }
}

fn ex(entries: &[(&str, Feature)]) -> Vec<u8> {
    Example {
        features: Some(features(entries)),
    }
    .encode_to_vec()
}

fn len_field(field: u32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    put_varint(&mut out, u64::from(field) << 3 | 2);
    put_varint(&mut out, body.len() as u64);
    out.extend_from_slice(body);
    out
}

/// An Example whose entries are written in the given order, repeats included.
fn ex_raw(entries: &[(&str, Feature)]) -> Vec<u8> {
    let body: Vec<u8> = entries
        .iter()
        .flat_map(|(k, v)| {
            len_field(
                1,
                &[len_field(1, k.as_bytes()), len_field(2, &v.encode_to_vec())].concat(),
            )
        })
        .collect();
    len_field(1, &body)
}

fn seq(context: &[(&str, Feature)], lists: &[(&str, Vec<Feature>)]) -> Vec<u8> {
    SequenceExample {
        context: Some(features(context)),
        feature_lists: Some(FeatureLists {
            feature_list: lists
                .iter()
                .map(|(k, v)| ((*k).to_string(), FeatureList { feature: v.clone() }))
                .collect(),
        }),
    }
    .encode_to_vec()
}

fn spec(entries: &[(&str, FeatureSpec)]) -> Spec {
    entries
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect()
}

fn dense_i64(t: &Tensor) -> (Vec<usize>, Vec<i64>) {
    match t {
        Tensor::Dense {
            shape,
            values: Values::Int64(v),
        } => (shape.clone(), v.clone()),
        other => panic!("not an int64 dense tensor: {other:?}"),
    }
}

/// A ragged tensor of int64 as nested lists, as `RaggedTensor.to_list()` shows it.
fn to_list(t: &Tensor) -> Value {
    let Tensor::Ragged {
        flat_values: Values::Int64(v),
        nested_row_splits,
    } = t
    else {
        panic!("not an int64 ragged tensor: {t:?}");
    };
    fn level(splits: &[Vec<i64>], values: &[i64], lo: i64, hi: i64) -> Value {
        let (lo, hi) = (
            usize::try_from(lo).expect("split"),
            usize::try_from(hi).expect("split"),
        );
        match splits.split_first() {
            None => json!(values[lo..hi]),
            Some((s, rest)) => Value::Array(
                (lo..hi)
                    .map(|r| level(rest, values, s[r], s[r + 1]))
                    .collect(),
            ),
        }
    }
    let outer = &nested_row_splits[0];
    let rows = outer.len() - 1;
    Value::Array(
        (0..rows)
            .map(|r| level(&nested_row_splits[1..], v, outer[r], outer[r + 1]))
            .collect(),
    )
}

/// A small deterministic generator, so that the test needs no crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
