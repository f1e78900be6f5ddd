//! Edge cases of the batch parser, each checked against TensorFlow's documented or implemented
//! behaviour.

use serde_json::{Value, json};

use super::*;
use crate::Message;
use crate::codec::wire::put_varint;
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

// ---- Ragged features ----

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

// ---- Dense, sparse, and duplicates ----

#[test]
fn duplicate_keys_keep_the_last_entry_but_dense_skips_empty_ones() {
    let records = [ex_raw(&[
        ("d", i(&[1])),
        ("d", i(&[2])),
        ("d", none()),
        ("s", i(&[1, 2])),
        ("s", none()),
    ])];
    let s = spec(&[
        ("d", FeatureSpec::fixed_len(DType::Int64, [])),
        ("s", FeatureSpec::var_len(DType::Int64)),
    ]);
    let out = parse_example(&s, &records).expect("parses");
    assert_eq!(dense_i64(&out["d"]), (vec![1], vec![2]));
    match &out["s"] {
        Tensor::Sparse {
            values,
            dense_shape,
            ..
        } => {
            assert!(values.is_empty());
            assert_eq!(dense_shape, &vec![1, 0]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn fixed_len_missing_empty_and_wrong() {
    let s = spec(&[(
        "x",
        FeatureSpec::fixed_len_with_default(DType::Float, [2], vec![7i64, 8]),
    )]);
    // A Feature with no list set is missing; the integer default is converted to float.
    let out =
        parse_example(&s, &[ex(&[("x", none())]), ex(&[("x", f(&[1.5, -0.0]))])]).expect("parses");
    assert_eq!(
        out["x"],
        Tensor::Dense {
            shape: vec![2, 2],
            values: Values::Float32(vec![7.0, 8.0, 1.5, -0.0]),
        }
    );
    // An empty list of the right type is not missing: 0 values, not 2.
    let err = parse_example(&s, &[ex(&[]), ex(&[("x", f(&[]))])]).expect_err("count");
    assert_eq!((err.key(), err.record()), (Some("x"), Some(1)));
    assert!(err.to_string().contains("found 0"), "{err}");
    // An empty list of another type is a type error.
    let err = parse_example(&s, &[ex(&[("x", b(&[]))])]).expect_err("type");
    assert!(err.to_string().contains("expected float"), "{err}");
    // Strings, scalar shape, no default.
    let s = spec(&[("n", FeatureSpec::fixed_len(DType::Bytes, []))]);
    let out =
        parse_example(&s, &[ex(&[("n", b(&["a"]))]), ex(&[("n", b(&[""]))])]).expect("parses");
    assert_eq!(
        out["n"],
        Tensor::Dense {
            shape: vec![2],
            values: Values::from(vec![b"a".to_vec(), Vec::new()]),
        }
    );
    // An empty batch.
    let out = parse_example(&s, &[] as &[Vec<u8>]).expect("parses");
    assert_eq!(
        out["n"],
        Tensor::Dense {
            shape: vec![0],
            values: Values::Bytes(ByteStrings::new()),
        }
    );
}

#[test]
fn fixed_len_sequence_in_parse_example() {
    let s = spec(&[(
        "p",
        FeatureSpec::FixedLenSequence {
            dtype: DType::Bytes,
            shape: vec![2],
            allow_missing: true,
            default: Some(Values::from("pad")),
        },
    )]);
    let records = [
        ex(&[("p", b(&["a", "b", "c", "d"]))]),
        ex(&[]),
        ex(&[("p", b(&["e", "f"]))]),
    ];
    let out = parse_example(&s, &records).expect("parses");
    let bytes: Vec<&[u8]> = [
        "a", "b", "c", "d", "pad", "pad", "pad", "pad", "e", "f", "pad", "pad",
    ]
    .iter()
    .map(|s| s.as_bytes())
    .collect();
    assert_eq!(
        out["p"],
        Tensor::Dense {
            shape: vec![3, 2, 2],
            values: Values::Bytes(bytes.iter().collect()),
        }
    );
    let err = parse_example(&s, &[ex(&[("p", b(&["a", "b", "c"]))])]).expect_err("stride");
    assert!(err.to_string().contains("multiple of"), "{err}");
    // TensorFlow refuses a FixedLenSequenceFeature without allow_missing in parse_example.
    let s = spec(&[(
        "p",
        FeatureSpec::fixed_len_sequence(DType::Int64, [], false),
    )]);
    assert!(parse_example(&s, &records).is_err());
}

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

#[test]
fn invalid_specs_are_rejected() {
    let bad = [
        spec(&[]),
        // A default that does not fit the shape.
        spec(&[(
            "x",
            FeatureSpec::fixed_len_with_default(DType::Int64, [3], vec![1i64, 2]),
        )]),
        // A float default for an int64 feature.
        spec(&[(
            "x",
            FeatureSpec::fixed_len_with_default(DType::Int64, [], 1.5f32),
        )]),
        // The same key as a sparse float and a sparse int64.
        spec(&[
            ("x", FeatureSpec::var_len(DType::Float)),
            ("s", FeatureSpec::sparse("x", "v", DType::Float, 4)),
        ]),
        // The same key as dense and sparse.
        spec(&[
            ("x", FeatureSpec::fixed_len(DType::Int64, [])),
            ("s", FeatureSpec::sparse("x", "v", DType::Float, 4)),
        ]),
        // The same key as dense and ragged.
        spec(&[
            ("x", FeatureSpec::fixed_len(DType::Int64, [])),
            ("r", FeatureSpec::ragged_with(DType::Int64, "x", [])),
        ]),
        // A padding value of two elements.
        spec(&[(
            "p",
            FeatureSpec::FixedLenSequence {
                dtype: DType::Int64,
                shape: vec![],
                allow_missing: true,
                default: Some(Values::Int64(vec![1, 2])),
            },
        )]),
    ];
    for s in &bad {
        assert!(ExampleParser::new(s).is_err(), "{s:?}");
    }
    // An empty default of a scalar is no default, as in TensorFlow.
    let s = spec(&[(
        "x",
        FeatureSpec::fixed_len_with_default(DType::Int64, [], Vec::<i64>::new()),
    )]);
    let err = parse_example(&s, &[ex(&[])]).expect_err("required");
    assert!(err.to_string().contains("required"), "{err}");
    // SparseFeature is not a context feature; FixedLen is not a feature list.
    let sp = spec(&[("s", FeatureSpec::sparse("i", "v", DType::Int64, 3))]);
    assert!(SequenceExampleParser::new(&sp, &Spec::new()).is_err());
    let fl = spec(&[("x", FeatureSpec::fixed_len(DType::Int64, []))]);
    assert!(SequenceExampleParser::new(&Spec::new(), &fl).is_err());
    // TensorFlow wants no default for a feature list's FixedLenSequenceFeature.
    let d = spec(&[(
        "x",
        FeatureSpec::FixedLenSequence {
            dtype: DType::Int64,
            shape: vec![],
            allow_missing: true,
            default: Some(Values::from(0i64)),
        },
    )]);
    assert!(SequenceExampleParser::new(&Spec::new(), &d).is_err());
}

#[test]
fn malformed_records_name_the_record() {
    let s = spec(&[("x", FeatureSpec::var_len(DType::Int64))]);
    let records = [ex(&[("x", i(&[1]))]), vec![0x0a, 0x03, 0x0a]];
    let err = parse_example(&s, &records).expect_err("malformed");
    assert_eq!(err.record(), Some(1));
}

// ---- Sequence examples ----

#[test]
fn sequence_example_features() {
    let records = [
        seq(
            &[("id", i(&[1]))],
            &[
                ("tok", vec![i(&[1, 2]), none(), i(&[3])]),
                ("emb", vec![f(&[0.5, 1.5]), f(&[2.5, 3.5])]),
                ("w", vec![b(&["a"]), b(&["b", "c"])]),
            ],
        ),
        seq(&[], &[("tok", vec![i(&[4])])]),
    ];
    let ctx = spec(&[(
        "id",
        FeatureSpec::fixed_len_with_default(DType::Int64, [], -1),
    )]);
    let lists = spec(&[
        ("tok", FeatureSpec::var_len(DType::Int64)),
        (
            "emb",
            FeatureSpec::fixed_len_sequence(DType::Float, [2], true),
        ),
        ("w", FeatureSpec::ragged(DType::Bytes)),
    ]);
    let (c, l, lengths) = parse_sequence_example(&ctx, &lists, &records).expect("parses");
    assert_eq!(dense_i64(&c["id"]), (vec![2], vec![1, -1]));
    assert_eq!(
        l["tok"],
        Tensor::Sparse {
            indices: vec![0, 0, 0, 0, 0, 1, 0, 2, 0, 1, 0, 0],
            values: Values::Int64(vec![1, 2, 3, 4]),
            dense_shape: vec![2, 3, 2],
        }
    );
    assert_eq!(
        l["emb"],
        Tensor::Dense {
            shape: vec![2, 2, 2],
            values: Values::Float32(vec![0.5, 1.5, 2.5, 3.5, 0.0, 0.0, 0.0, 0.0]),
        }
    );
    assert_eq!(
        l["w"],
        Tensor::Ragged {
            flat_values: Values::Bytes(["a", "b", "c"].into_iter().collect()),
            nested_row_splits: vec![vec![0, 2, 2], vec![0, 1, 3]],
        }
    );
    assert_eq!(dense_i64(&lengths["emb"]), (vec![2], vec![2, 0]));
    assert_eq!(lengths.len(), 1);

    // Without allow_missing, the second record's missing list is an error.
    let strict = spec(&[(
        "emb",
        FeatureSpec::fixed_len_sequence(DType::Float, [2], false),
    )]);
    let err = parse_sequence_example(&Spec::new(), &strict, &records).expect_err("missing");
    assert_eq!((err.key(), err.record()), (Some("emb"), Some(1)));
    assert!(err.to_string().contains("required"), "{err}");

    // A step of the wrong size, and a step of the wrong type.
    // (TensorFlow first checks that the longest list makes whole rows.)
    let records = [seq(&[], &[("emb", vec![f(&[1.0, 2.0]), f(&[3.0])])])];
    let err = parse_sequence_example(&Spec::new(), &strict, &records).expect_err("total");
    assert!(err.to_string().contains("total values size 3"), "{err}");
    let records = [seq(
        &[],
        &[("emb", vec![f(&[1.0, 2.0]), f(&[3.0]), f(&[4.0])])],
    )];
    let err = parse_sequence_example(&Spec::new(), &strict, &records).expect_err("size");
    assert!(err.to_string().contains("step 1"), "{err}");
    let records = [seq(&[], &[("emb", vec![f(&[1.0, 2.0]), i(&[3, 4])])])];
    let err = parse_sequence_example(&Spec::new(), &strict, &records).expect_err("type");
    assert!(err.to_string().contains("data types don't match"), "{err}");
}

#[test]
fn parse_reusing_builds_in_the_given_back_buffers() {
    let batch = |n: i64| -> Vec<Vec<u8>> {
        (0..n)
            .map(|r| {
                let steps: Vec<Feature> = (0..r % 5).map(|s| i(&vec![s; 40])).collect();
                let scores: Vec<Feature> = (0..r % 3).map(|s| f(&[s as f32])).collect();
                seq(
                    &[("lang", b(&["en"]))],
                    &[("tok", steps), ("score", scores)],
                )
            })
            .collect()
    };
    let ctx = spec(&[("lang", FeatureSpec::fixed_len(DType::Bytes, []))]);
    let lists = spec(&[
        ("tok", FeatureSpec::var_len(DType::Int64)),
        (
            "score",
            FeatureSpec::fixed_len_sequence(DType::Float, [], true),
        ),
    ]);
    let parser = SequenceExampleParser::new(&ctx, &lists).unwrap();
    let mut buffers = Buffers::new();
    let (big, small) = (batch(200), batch(150));
    // Parses `records` with `buffers`, checks the tensors against a parse with new buffers,
    // gives them back, and says where the tokens were.
    let mut parse = |records: &[Vec<u8>]| {
        let (c, l, n) = parser.parse_reusing(records, &mut buffers).unwrap();
        assert_eq!(
            (c.clone(), l.clone(), n.clone()),
            parser.parse(records).unwrap()
        );
        let tokens = l["tok"].values().as_i64().unwrap().as_ptr();
        for t in [c, l, n] {
            buffers.give_back(t);
        }
        tokens
    };
    let was = parse(&big);
    // A smaller batch fits in the same buffers: the tokens land where the last batch's were.
    assert_eq!(parse(&small), was);
    // And the next large batch too: the smaller one did not hand its buffers to other keys.
    assert_eq!(parse(&big), was);
}

#[test]
fn sequence_context_quirks() {
    // An empty Feature in the context counts as present with no values (unlike parse_example).
    let ctx = spec(&[(
        "id",
        FeatureSpec::fixed_len_with_default(DType::Int64, [], 0),
    )]);
    let records = [seq(&[("id", none())], &[])];
    let err = parse_sequence_example(&ctx, &Spec::new(), &records).expect_err("empty");
    assert_eq!((err.key(), err.record()), (Some("id"), Some(0)));
    // More values than the shape.
    let records = [
        seq(&[("id", i(&[1]))], &[]),
        seq(&[("id", i(&[1, 2]))], &[]),
    ];
    let err = parse_sequence_example(&ctx, &Spec::new(), &records).expect_err("count");
    assert_eq!((err.key(), err.record()), (Some("id"), Some(1)));
}

#[test]
fn sequence_ragged_with_partitions() {
    // Each step's values split into rows by a per-step lengths list.
    let records = [
        seq(
            &[],
            &[
                ("v", vec![i(&[1, 2, 3]), i(&[4])]),
                ("l", vec![i(&[1, 2]), i(&[0, 1])]),
            ],
        ),
        seq(&[], &[("v", vec![i(&[5, 6])]), ("l", vec![i(&[2])])]),
    ];
    let lists = spec(&[(
        "r",
        FeatureSpec::ragged_with(DType::Int64, "v", [Partition::RowLengths("l".into())]),
    )]);
    let (_, l, _) = parse_sequence_example(&Spec::new(), &lists, &records).expect("parses");
    assert_eq!(
        to_list(&l["r"]),
        json!([[[[1], [2, 3]], [[], [4]]], [[[5, 6]]]])
    );
}

// ---- JSON ----

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

// ---- Robustness ----

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

#[test]
fn arbitrary_bytes_never_panic() {
    let example_spec = spec(&[
        (
            "a",
            FeatureSpec::fixed_len_with_default(DType::Int64, [2], vec![0i64, 0]),
        ),
        ("b", FeatureSpec::var_len(DType::Float)),
        ("c", FeatureSpec::sparse("i", "b", DType::Float, 3)),
        (
            "d",
            FeatureSpec::ragged_with(
                DType::Bytes,
                "e",
                [
                    Partition::ValueRowIds("f".into()),
                    Partition::RowSplits("g".into()),
                    Partition::UniformRowLength(2),
                ],
            ),
        ),
        (
            "h",
            FeatureSpec::FixedLenSequence {
                dtype: DType::Int64,
                shape: vec![2],
                allow_missing: true,
                default: None,
            },
        ),
    ]);
    let seq_spec = spec(&[
        ("h", FeatureSpec::fixed_len_sequence(DType::Int64, [], true)),
        ("b", FeatureSpec::var_len(DType::Float)),
        (
            "e",
            FeatureSpec::ragged_with(DType::Int64, "e", [Partition::RowStarts("f".into())]),
        ),
    ]);
    let ctx_spec = spec(&[("a", FeatureSpec::fixed_len(DType::Int64, [2]))]);
    // Valid records to mutate.
    let seeds = [
        ex(&[
            ("a", i(&[1, 2])),
            ("b", f(&[1.0])),
            ("i", i(&[2])),
            ("e", b(&["x", "y"])),
            ("f", i(&[0, 1])),
            ("g", i(&[0, 1, 2])),
            ("h", i(&[1, 2])),
        ]),
        seq(
            &[("a", i(&[1, 2]))],
            &[
                ("h", vec![i(&[1]), i(&[2])]),
                ("e", vec![i(&[1, 2])]),
                ("f", vec![i(&[0])]),
            ],
        ),
    ];
    let example = ExampleParser::new(&example_spec).expect("valid");
    let sequence = SequenceExampleParser::new(&ctx_spec, &seq_spec).expect("valid");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..4000 {
        let mut batch = Vec::new();
        for _ in 0..(rng.next() % 4) {
            let mut r = seeds[(rng.next() % 2) as usize].clone();
            match rng.next() % 4 {
                0 if !r.is_empty() => {
                    let n = (rng.next() as usize) % r.len();
                    r.truncate(n);
                }
                1 if !r.is_empty() => {
                    let n = (rng.next() as usize) % r.len();
                    r[n] = rng.next() as u8;
                }
                2 => r = (0..rng.next() % 40).map(|_| rng.next() as u8).collect(),
                _ => {}
            }
            batch.push(r);
        }
        // Whatever the bytes, the fast path (parse, parse_parallel) agrees with the general
        // path.
        example_paths_agree(&example, &batch);
        sequence_paths_agree(&sequence, &batch);
        let _ = round;
    }
}

// ---- The fast path against the general path ----

/// `a` and `b` are the same result: equal tensors (compared through `Debug`, so that NaNs
/// compare equal) or the same error message.
fn same_result<T: std::fmt::Debug>(what: &str, a: &crate::Result<T>, b: &crate::Result<T>) {
    match (a, b) {
        (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{what}"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}"),
        _ => panic!("{what}: fast {a:?} vs general {b:?}"),
    }
}

thread_local! {
    /// The buffers of every batch the tests below parsed before on this thread, whatever its
    /// spec: `parse_reusing` must give the same tensors with them as without.
    static SPENT: std::cell::RefCell<Buffers> = std::cell::RefCell::new(Buffers::new());
}

/// Parses `batch` with [`SPENT`]'s buffers, and gives the tensors back to it.
fn parse_with_spent<T: Clone>(
    parse: impl FnOnce(&mut Buffers) -> Result<T>,
    give_back: impl FnOnce(&mut Buffers, T),
) -> Result<T> {
    SPENT.with_borrow_mut(|spent| {
        let out = parse(spent);
        if let Ok(t) = &out {
            give_back(spent, t.clone());
        }
        out
    })
}

/// Parses `batch` with the fast path and with the general path alone; they must agree. Whether
/// the batch parsed.
fn example_paths_agree(parser: &ExampleParser, batch: &[Vec<u8>]) -> bool {
    let fast = parser.parse(batch);
    let general = example::parse_run(&parser.plan, batch, 0, false, &mut Buffers::new())
        .and_then(|bufs| parser.finish(bufs, batch.len(), total_bytes(batch), &mut Buffers::new()));
    same_result(&format!("{batch:x?}"), &fast, &general);
    let parallel = parser.parse_parallel(batch, 2);
    same_result("parse_parallel", &parallel, &general);
    let reusing = parse_with_spent(|b| parser.parse_reusing(batch, b), Buffers::give_back);
    same_result("parse_reusing", &reusing, &general);
    fast.is_ok()
}

/// As [`example_paths_agree`], for `SequenceExample`s.
fn sequence_paths_agree(parser: &SequenceExampleParser, batch: &[Vec<u8>]) -> bool {
    let fast = parser.parse(batch);
    let budget = row_budget(total_bytes(batch));
    let general = sequence::parse_batch(
        &parser.context,
        &parser.lists,
        batch,
        budget,
        false,
        &mut Buffers::new(),
    );
    same_result(&format!("{batch:x?}"), &fast, &general);
    let reusing = parse_with_spent(
        |b| parser.parse_reusing(batch, b),
        |b, (ctx, lists, lengths)| {
            b.give_back(ctx);
            b.give_back(lists);
            b.give_back(lengths);
        },
    );
    same_result("parse_reusing", &reusing, &general);
    fast.is_ok()
}

/// Writes features and feature lists in the encodings writers choose, and in some others.
struct Gen {
    rng: Rng,
    /// Out of 100: how often a feature is written in an non-canonical (still valid) encoding or
    /// with the wrong kind.
    odd: u64,
}

impl Gen {
    fn pick(&mut self, n: u64) -> u64 {
        self.rng.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.pick(100) < percent
    }

    /// A `Feature` holding `n` values of oneof member `kind` (1 bytes, 2 float, 3 int64).
    fn feature(&mut self, kind: u32, n: usize) -> Vec<u8> {
        let ints: Vec<i64> = (0..n).map(|_| self.pick(300).cast_signed() - 20).collect();
        let canonical = |kind: u32| match kind {
            1 => b(&ints
                .iter()
                .map(|x| ["a", "bc", ""][(*x % 3).unsigned_abs() as usize])
                .collect::<Vec<_>>())
            .encode_to_vec(),
            2 => f(&ints.iter().map(|&x| x as f32 / 4.0).collect::<Vec<_>>()).encode_to_vec(),
            _ => i(&ints).encode_to_vec(),
        };
        if !self.chance(self.odd) {
            return canonical(kind);
        }
        let list_body = |kind: u32| {
            let c = canonical(kind);
            let (body, _) = crate::codec::wire::split_len(&c[1..]).expect("a list");
            body.to_vec()
        };
        match self.pick(9) {
            0 => Vec::new(),
            1 => len_field(kind, &[]),
            // Unpacked numbers; strings one field each (as always).
            2 => {
                let mut body = Vec::new();
                for &x in &ints {
                    match kind {
                        2 => {
                            body.push(0x0d);
                            body.extend_from_slice(&(x as f32).to_le_bytes());
                        }
                        3 => {
                            body.push(0x08);
                            put_varint(&mut body, x.cast_unsigned());
                        }
                        _ => body.extend(len_field(1, b"u")),
                    }
                }
                len_field(kind, &body)
            }
            3 => canonical(kind % 3 + 1),
            // An unknown field after the list.
            4 => [canonical(kind), vec![0x20, 0x01]].concat(),
            // Another kind first, then this one: the last member set wins.
            5 => [canonical(kind % 3 + 1), canonical(kind)].concat(),
            // The same list twice: merged.
            6 => [canonical(kind), canonical(kind)].concat(),
            // The values twice in one list (numbers as two packed runs).
            7 => len_field(kind, &[list_body(kind), list_body(kind)].concat()),
            // An unknown field inside the list.
            _ => len_field(kind, &[list_body(kind), vec![0x10, 0x01]].concat()),
        }
    }

    /// A map entry (`key` = 1, `value` = 2).
    fn entry(&mut self, key: &str, value: &[u8]) -> Vec<u8> {
        let k = len_field(1, key.as_bytes());
        let v = len_field(2, value);
        let body = if self.chance(self.odd / 2) {
            match self.pick(3) {
                0 => [v, k].concat(),
                // The value split in two (an empty second part).
                1 => [k, v, len_field(2, &[])].concat(),
                _ => [k, len_field(2, &[]), v].concat(),
            }
        } else {
            [k, v].concat()
        };
        len_field(1, &body)
    }

    /// The entries of a feature map: each key with its kind and typical value count.
    fn entries(&mut self, keys: &[(&str, u32, usize)]) -> Vec<u8> {
        let mut out: Vec<Vec<u8>> = Vec::new();
        for &(key, kind, n) in keys {
            if self.chance(8) {
                continue;
            }
            let n = if self.chance(10) {
                self.pick(4) as usize
            } else {
                n
            };
            let value = self.feature(kind, n);
            out.push(self.entry(key, &value));
            if self.chance(self.odd / 3) {
                let value = self.feature(kind, n);
                out.push(self.entry(key, &value)); // a repeated key
            }
            if self.chance(5) {
                out.push(self.entry("unknown", &i(&[1]).encode_to_vec()));
            }
        }
        if self.chance(10) {
            let n = out.len() as u64;
            for k in 0..out.len() {
                let j = (self.pick(n)) as usize;
                out.swap(k, j);
            }
        }
        out.concat()
    }

    /// The entries of a `FeatureLists` map: each key with its kind and typical values per step.
    fn lists(&mut self, keys: &[(&str, u32, usize)]) -> Vec<u8> {
        let mut out = Vec::new();
        for &(key, kind, n) in keys {
            if self.chance(8) {
                continue;
            }
            let mut list = Vec::new();
            for _ in 0..self.pick(5) {
                let n = if self.chance(5) {
                    self.pick(4) as usize
                } else {
                    n
                };
                let step = self.feature(kind, n);
                list.extend(len_field(1, &step));
            }
            if self.chance(self.odd / 3) {
                list.extend([0x10, 0x01]); // an unknown field
            }
            out.extend(self.entry(key, &list));
        }
        out
    }
}

#[test]
fn fast_path_agrees_with_the_general_path() {
    let example_spec = spec(&[
        (
            "a",
            FeatureSpec::fixed_len_with_default(DType::Int64, [], -1),
        ),
        (
            "b",
            FeatureSpec::fixed_len_with_default(DType::Float, [2], vec![0.5f32, 1.5]),
        ),
        ("c", FeatureSpec::fixed_len(DType::Bytes, [])),
        ("v", FeatureSpec::var_len(DType::Int64)),
        ("w", FeatureSpec::var_len(DType::Bytes)),
        (
            "q",
            FeatureSpec::FixedLenSequence {
                dtype: DType::Float,
                shape: vec![2],
                allow_missing: true,
                default: Some(Values::Float32(vec![9.0])),
            },
        ),
        (
            "r",
            FeatureSpec::ragged_with(DType::Int64, "r", [Partition::RowLengths("rl".into())]),
        ),
        ("sp", FeatureSpec::sparse("ix", "vx", DType::Float, 8)),
    ]);
    let example_keys = [
        ("a", 3, 1),
        ("b", 2, 2),
        ("c", 1, 1),
        ("v", 3, 2),
        ("w", 1, 1),
        ("q", 2, 4),
        ("r", 3, 3),
        ("rl", 3, 1),
        ("ix", 3, 1),
        ("vx", 2, 1),
    ];
    let ctx_spec = spec(&[
        (
            "id",
            FeatureSpec::fixed_len_with_default(DType::Int64, [], 0),
        ),
        ("lang", FeatureSpec::fixed_len(DType::Bytes, [])),
        ("cv", FeatureSpec::var_len(DType::Float)),
        ("cr", FeatureSpec::ragged(DType::Int64)),
    ]);
    let ctx_keys = [("id", 3, 1), ("lang", 1, 1), ("cv", 2, 2), ("cr", 3, 2)];
    let list_spec = spec(&[
        ("tok", FeatureSpec::var_len(DType::Int64)),
        (
            "sc",
            FeatureSpec::fixed_len_sequence(DType::Float, [], false),
        ),
        ("rg", FeatureSpec::ragged(DType::Bytes)),
        (
            "pair",
            FeatureSpec::fixed_len_sequence(DType::Int64, [2], true),
        ),
    ]);
    let list_keys = [("tok", 3, 2), ("sc", 2, 1), ("rg", 1, 1), ("pair", 3, 2)];
    let example = ExampleParser::new(&example_spec).expect("valid");
    let sequence = SequenceExampleParser::new(&ctx_spec, &list_spec).expect("valid");
    let mut g = Gen {
        rng: Rng(0x2545_f491_4f6c_dd1d),
        odd: 0,
    };
    let (mut parsed_examples, mut parsed_sequences) = (0, 0);
    for _ in 0..1500 {
        g.odd = if g.chance(50) { 0 } else { 6 };
        let n = 1 + g.pick(5) as usize;
        let examples: Vec<Vec<u8>> = (0..n)
            .map(|_| len_field(1, &g.entries(&example_keys)))
            .collect();
        parsed_examples += usize::from(example_paths_agree(&example, &examples));
        let sequences: Vec<Vec<u8>> = (0..n)
            .map(|_| {
                let ctx = len_field(1, &g.entries(&ctx_keys));
                let lists = len_field(2, &g.lists(&list_keys));
                [ctx, lists].concat()
            })
            .collect();
        parsed_sequences += usize::from(sequence_paths_agree(&sequence, &sequences));
    }
    // Long batches: runs of non-canonical records (the fast path then steps aside for a while), then
    // canonical ones again.
    let parsing = |g: &mut Gen, odd: u64, n: usize| -> Vec<Vec<u8>> {
        g.odd = odd;
        let mut out = Vec::new();
        for _ in 0..20_000 {
            let r = len_field(1, &g.entries(&example_keys));
            if example.parse(std::slice::from_ref(&r)).is_ok() {
                out.push(r);
            }
            if out.len() == n {
                break;
            }
        }
        out
    };
    for odd in [30, 100] {
        let mut examples = parsing(&mut g, odd, 150);
        examples.extend(parsing(&mut g, 0, 150));
        assert!(example_paths_agree(&example, &examples));
    }
    // Both outcomes are exercised.
    assert!((100..1400).contains(&parsed_examples), "{parsed_examples}");
    assert!(
        (100..1400).contains(&parsed_sequences),
        "{parsed_sequences}"
    );
}
