//! Ragged features in `parse_example`: every partition kind, uniform row lengths, value row
//! ids, and row splits of either type.

use serde_json::json;

use super::{ex, i, spec, to_list};
use crate::parse::{
    DType, ExampleParser, FeatureSpec, Partition, SplitsDType, Tensor, parse_example,
};

/// The batch of `tf.io.RaggedFeature`'s own documentation, with its printed results.
#[test]
fn ragged_feature_documentation_example() {
    let records = [
        ex(&[
            ("v", i(&[3, 1, 4, 1, 5, 9])),
            ("s1", i(&[0, 2, 3, 3, 6])),
            ("s2", i(&[0, 2, 3, 4])),
        ]),
        ex(&[
            ("v", i(&[2, 7, 1, 8, 2, 8, 1])),
            ("s1", i(&[0, 3, 4, 5, 7])),
            ("s2", i(&[0, 1, 1, 4])),
        ]),
    ];
    let s = spec(&[
        ("f1", FeatureSpec::ragged_with(DType::Int64, "v", [])),
        (
            "f2",
            FeatureSpec::ragged_with(DType::Int64, "v", [Partition::RowSplits("s1".into())]),
        ),
        (
            "f3",
            FeatureSpec::ragged_with(
                DType::Int64,
                "v",
                [
                    Partition::RowSplits("s2".into()),
                    Partition::RowSplits("s1".into()),
                ],
            ),
        ),
    ]);
    let out = parse_example(&s, &records).expect("parses");
    assert_eq!(out.len(), 3, "partition keys are not outputs");
    assert_eq!(
        to_list(&out["f1"]),
        json!([[3, 1, 4, 1, 5, 9], [2, 7, 1, 8, 2, 8, 1]])
    );
    assert_eq!(
        to_list(&out["f2"]),
        json!([[[3, 1], [4], [], [1, 5, 9]], [[2, 7, 1], [8], [2], [8, 1]]])
    );
    assert_eq!(
        to_list(&out["f3"]),
        json!([
            [[[3, 1], [4]], [[]], [[1, 5, 9]]],
            [[[2, 7, 1]], [], [[8], [2], [8, 1]]]
        ])
    );
}

/// Every partition kind describing the same rows gives the same tensor.
#[test]
fn every_partition_kind_agrees() {
    // Rows [[3, 1], [4], [], [1, 5, 9]] and [[2], [], [7, 1]].
    let records = [
        ex(&[
            ("v", i(&[3, 1, 4, 1, 5, 9])),
            ("splits", i(&[0, 2, 3, 3, 6])),
            ("lengths", i(&[2, 1, 0, 3])),
            ("starts", i(&[0, 2, 3, 3])),
            ("limits", i(&[2, 3, 3, 6])),
            ("ids", i(&[0, 0, 1, 3, 3, 3])),
        ]),
        ex(&[
            ("v", i(&[2, 7, 1])),
            ("splits", i(&[0, 1, 1, 3])),
            ("lengths", i(&[1, 0, 2])),
            ("starts", i(&[0, 1, 1])),
            ("limits", i(&[1, 1, 3])),
            ("ids", i(&[0, 2, 2])),
        ]),
    ];
    let want = json!([[[3, 1], [4], [], [1, 5, 9]], [[2], [], [7, 1]]]);
    let parts = [
        Partition::RowSplits("splits".into()),
        Partition::RowLengths("lengths".into()),
        Partition::RowStarts("starts".into()),
        Partition::RowLimits("limits".into()),
        Partition::ValueRowIds("ids".into()),
    ];
    for dt in [SplitsDType::Int32, SplitsDType::Int64] {
        for p in &parts {
            let s = spec(&[(
                "r",
                FeatureSpec::Ragged {
                    dtype: DType::Int64,
                    value_key: Some("v".into()),
                    partitions: vec![p.clone()],
                    row_splits_dtype: dt,
                },
            )]);
            let out = parse_example(&s, &records).expect("parses");
            assert_eq!(to_list(&out["r"]), want, "{p:?}");
            let Tensor::Ragged {
                nested_row_splits, ..
            } = &out["r"]
            else {
                panic!()
            };
            assert_eq!(
                nested_row_splits,
                &vec![vec![0, 4, 7], vec![0, 2, 3, 3, 6, 7, 7, 9]],
                "{p:?}"
            );
        }
    }
}

#[test]
fn uniform_row_length() {
    let records = [
        ex(&[("v", i(&[1, 2, 3, 4, 5, 6]))]),
        ex(&[("v", i(&[7, 8]))]),
    ];
    let uniform = |n| FeatureSpec::ragged_with(DType::Int64, "v", [Partition::UniformRowLength(n)]);
    let out = parse_example(&spec(&[("r", uniform(2))]), &records).expect("parses");
    assert_eq!(
        to_list(&out["r"]),
        json!([[[1, 2], [3, 4], [5, 6]], [[7, 8]]])
    );
    let Tensor::Ragged {
        nested_row_splits, ..
    } = &out["r"]
    else {
        panic!()
    };
    // TensorFlow's row splits [0, 3, 4], then the uniform inner dimension as a splits level.
    assert_eq!(nested_row_splits, &vec![vec![0, 3, 4], vec![0, 2, 4, 6, 8]]);

    // TensorFlow reshapes all the values at once: 8 values do not make rows of 3.
    let err = parse_example(&spec(&[("r", uniform(3))]), &records).expect_err("reshape");
    assert_eq!(err.key(), Some("r"));
    assert!(err.to_string().contains("rows of 3"), "{err}");

    // Outside an inner ragged dimension: rows of rows.
    let records = [ex(&[
        ("v", i(&[1, 2, 3, 4, 5, 6])),
        ("l", i(&[1, 2, 0, 3])),
    ])];
    let s = spec(&[(
        "r",
        FeatureSpec::ragged_with(
            DType::Int64,
            "v",
            [
                Partition::UniformRowLength(2),
                Partition::RowLengths("l".into()),
            ],
        ),
    )]);
    let out = parse_example(&s, &records).expect("parses");
    assert_eq!(
        to_list(&out["r"]),
        json!([[[[1], [2, 3]], [[], [4, 5, 6]]]])
    );

    assert!(ExampleParser::new(&spec(&[("r", uniform(0))])).is_err());
}

#[test]
fn value_row_ids_with_empty_rows_and_bad_ids() {
    let records = [
        ex(&[("v", i(&[1, 2])), ("ids", i(&[0, 3]))]),
        ex(&[]),
        ex(&[("v", i(&[5])), ("ids", i(&[1]))]),
    ];
    let s = spec(&[(
        "r",
        FeatureSpec::ragged_with(DType::Int64, "v", [Partition::ValueRowIds("ids".into())]),
    )]);
    let out = parse_example(&s, &records).expect("parses");
    assert_eq!(
        to_list(&out["r"]),
        json!([[[1], [], [], [2]], [], [[], [5]]])
    );

    // bincount rejects negative ids.
    let bad = [ex(&[("v", i(&[1])), ("ids", i(&[-2]))])];
    assert!(parse_example(&s, &bad).is_err());
    // A huge id in a tiny record is an error, not a huge allocation.
    let huge = [ex(&[("v", i(&[1])), ("ids", i(&[1 << 30]))])];
    let err = parse_example(&s, &huge).expect_err("too many rows");
    assert_eq!(err.key(), Some("r"));
    // Past 32 bits the row count TensorFlow counts ids with cannot hold the rows (TensorFlow:
    // "Tensor's shape (4,) is not compatible with supplied shape (4294967300,)"); wrapped, the
    // count would describe 4 rows under splits that claim 4294967300.
    let ids64 = spec(&[(
        "r",
        FeatureSpec::Ragged {
            dtype: DType::Int64,
            value_key: Some("v".into()),
            partitions: vec![Partition::ValueRowIds("ids".into())],
            row_splits_dtype: SplitsDType::Int64,
        },
    )]);
    for id in [(1 << 32) + 3, 1 << 40] {
        let past = [ex(&[("v", i(&[1])), ("ids", i(&[id]))])];
        let err = parse_example(&ids64, &past).expect_err("more rows than 32 bits count");
        assert!(err.to_string().contains("32-bit row count"), "{err}");
        assert_eq!(err.key(), Some("r"));
    }
}

#[test]
fn int32_row_splits_wrap_like_tensorflow() {
    // Lengths beyond int32 wrap when cast, as `tf.cast` does; int64 keeps them.
    let records = [ex(&[("v", i(&[1])), ("l", i(&[(1 << 32) + 1]))])];
    let with = |dt| {
        spec(&[(
            "r",
            FeatureSpec::Ragged {
                dtype: DType::Int64,
                value_key: Some("v".into()),
                partitions: vec![Partition::RowLengths("l".into())],
                row_splits_dtype: dt,
            },
        )])
    };
    let splits = |t: &Tensor| match t {
        Tensor::Ragged {
            nested_row_splits, ..
        } => nested_row_splits.clone(),
        _ => panic!(),
    };
    let out = parse_example(&with(SplitsDType::Int32), &records).expect("parses");
    assert_eq!(splits(&out["r"]), vec![vec![0, 1], vec![0, 1]]);
    let out = parse_example(&with(SplitsDType::Int64), &records).expect("parses");
    assert_eq!(splits(&out["r"]), vec![vec![0, 1], vec![0, (1 << 32) + 1]]);
}

/// Value row ids must number the values over the batch, as TensorFlow 2.21's
/// `from_value_rowids` requires ("Shapes (2,) and (3,) are incompatible"); per record they may
/// differ (recorded from `tf.io.parse_example`: `[[[1.0]], [[2.0, 3.0]]]` for the last batch).
#[test]
fn value_row_ids_must_number_the_values_over_the_batch() {
    let s = spec(&[(
        "r",
        FeatureSpec::ragged_with(DType::Float, "v", [Partition::ValueRowIds("ids".into())]),
    )]);
    for (values, ids) in [
        (&[1.0, 2.0, 3.0][..], &[0, 0][..]),
        (&[1.0, 2.0], &[0, 0, 1]),
    ] {
        let bad = [ex(&[("v", super::f(values)), ("ids", i(ids))])];
        let err = parse_example(&s, &bad).expect_err("ids and values are not aligned");
        assert_eq!((err.key(), err.record()), (Some("r"), Some(0)), "{err}");
        assert!(err.to_string().contains("not aligned"), "{err}");
    }
    let shifted = [
        ex(&[("v", super::f(&[1.0, 2.0])), ("ids", i(&[0]))]),
        ex(&[("v", super::f(&[3.0])), ("ids", i(&[0, 0]))]),
    ];
    let out = parse_example(&s, &shifted).expect("aligned over the batch");
    assert_eq!(
        out["r"],
        Tensor::Ragged {
            flat_values: crate::parse::Values::Float32(vec![1.0, 2.0, 3.0]),
            nested_row_splits: vec![vec![0, 1, 2], vec![0, 1, 3]],
        }
    );
}
