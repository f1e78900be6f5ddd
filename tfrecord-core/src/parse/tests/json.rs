//! The JSON form of tensors: non-finite floats, bytes as base64, 64-bit integers.

use std::collections::BTreeMap;

use crate::parse::{Tensor, Values, tensors_to_json};

#[test]
fn json_forms() {
    let t = Tensor::Dense {
        shape: vec![5],
        values: Values::Float32(vec![0.1, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0]),
    };
    assert_eq!(
        t.to_json().to_string(),
        r#"{"dense":{"shape":[5],"values":[0.1,"NaN","Infinity","-Infinity",-0.0]}}"#
    );
    let t = Tensor::Sparse {
        indices: vec![0, 1],
        values: Values::from(&b"\xff\x00ab"[..]),
        dense_shape: vec![1, 2],
    };
    assert_eq!(
        t.to_json().to_string(),
        r#"{"sparse":{"dense_shape":[1,2],"indices":[[0,1]],"values":["/wBhYg=="]}}"#
    );
    let t = Tensor::Ragged {
        flat_values: Values::Int64(vec![i64::MIN]),
        nested_row_splits: vec![vec![0, 1]],
    };
    let mut m = BTreeMap::new();
    m.insert("r".to_string(), t);
    assert_eq!(
        tensors_to_json(&m).to_string(),
        r#"{"r":{"ragged":{"flat_values":[-9223372036854775808],"nested_row_splits":[[0,1]]}}}"#
    );
}
