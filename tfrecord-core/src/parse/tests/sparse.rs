//! `SparseFeature` in `parse_example`: TensorFlow's merge of the index and value keys, the
//! reorder, several index keys, and the check of their counts.

use super::{ex, f, i, spec};
use crate::parse::{DType, FeatureSpec, Tensor, Values, parse_example};

#[test]
fn sparse_feature_sorting_and_dimensions() {
    let records = [
        ex(&[("idx", i(&[5, 1, 3])), ("val", f(&[0.5, 0.1, 0.3]))]),
        ex(&[("idx", i(&[2])), ("val", f(&[0.2]))]),
    ];
    let sp = |sorted| FeatureSpec::Sparse {
        index_keys: vec!["idx".into()],
        value_key: "val".into(),
        dtype: DType::Float,
        size: vec![10],
        already_sorted: sorted,
    };
    let out = parse_example(&spec(&[("s", sp(false))]), &records).expect("parses");
    assert_eq!(
        out["s"],
        Tensor::Sparse {
            indices: vec![0, 1, 0, 3, 0, 5, 1, 2],
            values: Values::Float32(vec![0.1, 0.3, 0.5, 0.2]),
            dense_shape: vec![2, 10],
        }
    );
    let out = parse_example(&spec(&[("s", sp(true))]), &records).expect("parses");
    assert_eq!(
        out["s"],
        Tensor::Sparse {
            indices: vec![0, 5, 0, 1, 0, 3, 1, 2],
            values: Values::Float32(vec![0.5, 0.1, 0.3, 0.2]),
            dense_shape: vec![2, 10],
        }
    );
    // Two index keys, in the spec's order, and a VarLen output sharing a key.
    let records = [ex(&[
        ("r", i(&[1, 0])),
        ("c", i(&[0, 4])),
        ("v", i(&[10, 20])),
    ])];
    let s = spec(&[
        (
            "m",
            FeatureSpec::Sparse {
                index_keys: vec!["r".into(), "c".into()],
                value_key: "v".into(),
                dtype: DType::Int64,
                size: vec![2, 5],
                already_sorted: false,
            },
        ),
        ("r", FeatureSpec::var_len(DType::Int64)),
    ]);
    let out = parse_example(&s, &records).expect("parses");
    assert_eq!(
        out["m"],
        Tensor::Sparse {
            indices: vec![0, 0, 4, 0, 1, 0],
            values: Values::Int64(vec![20, 10]),
            dense_shape: vec![1, 2, 5],
        }
    );
    assert_eq!(out["m"].sparse_index(1), Some(&[0i64, 1, 0][..]));
    assert!(matches!(out["r"], Tensor::Sparse { .. }));
    // Index and value counts must agree (in total, as TensorFlow checks).
    let bad = [
        ex(&[("idx", i(&[1])), ("val", f(&[0.5]))]),
        ex(&[("idx", i(&[1, 2])), ("val", f(&[0.5]))]),
    ];
    let err = parse_example(&spec(&[("s", sp(false))]), &bad).expect_err("counts");
    assert_eq!((err.key(), err.record()), (Some("s"), Some(1)));
}

/// Index and value counts that differ per record but agree over the batch: TensorFlow 2.21
/// parses them and takes each entry's batch row from the index feature (recorded from
/// `tf.io.parse_example` on these two records: indices `[[0, 1], [0, 2], [1, 3]]`, values
/// `[1, 2, 3]`).
#[test]
fn sparse_rows_come_from_the_index_feature() {
    let records = [
        ex(&[("i", i(&[1, 2])), ("v", f(&[1.0]))]),
        ex(&[("i", i(&[3])), ("v", f(&[2.0, 3.0]))]),
    ];
    let s = spec(&[(
        "s",
        FeatureSpec::Sparse {
            index_keys: vec!["i".into()],
            value_key: "v".into(),
            dtype: DType::Float,
            size: vec![10],
            already_sorted: false,
        },
    )]);
    let out = parse_example(&s, &records).expect("parses");
    assert_eq!(
        out["s"],
        Tensor::Sparse {
            indices: vec![0, 1, 0, 2, 1, 3],
            values: Values::Float32(vec![1.0, 2.0, 3.0]),
            dense_shape: vec![2, 10],
        }
    );
}
