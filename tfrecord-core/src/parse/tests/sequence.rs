//! `parse_sequence_example`: context and feature-list features of every kind, their errors and
//! quirks, ragged feature lists with partitions, and parsing in given-back buffers.

use serde_json::json;

use super::{b, dense_i64, f, i, none, seq, spec, to_list};
use crate::parse::{
    Buffers, DType, FeatureSpec, Partition, SequenceExampleParser, Spec, Tensor, Values,
    parse_sequence_example,
};
use crate::proto::tensorflow::Feature;

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
    // A required context feature no record has: missing, as TensorFlow 2.21 says it ("Feature:
    // id (data type: int64) is required but could not be found."), not a count.
    let required = spec(&[("id", FeatureSpec::fixed_len(DType::Int64, []))]);
    let records = [seq(&[], &[]), seq(&[], &[])];
    let err = parse_sequence_example(&required, &Spec::new(), &records).expect_err("missing");
    assert_eq!((err.key(), err.record()), (Some("id"), Some(0)));
    assert!(
        err.to_string()
            .contains("is required but could not be found"),
        "{err}"
    );
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
