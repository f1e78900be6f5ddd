//! Dense features in `parse_example` (`FixedLen`, `FixedLenSequence`): defaults, missing and
//! empty features, wrong counts, padding; and which entry of a repeated key counts.

use super::{b, dense_i64, ex, ex_raw, f, i, none, spec};
use crate::parse::{ByteStrings, DType, FeatureSpec, Tensor, Values, parse_example};

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

/// `int32` and `bool` rows are padded as int64 ones are (TensorFlow 2.21: `[[[0, 0]], [[5,
/// 6]]]` for an empty record then one of `[5, 6]`), in `parse_example` and in feature lists.
/// Both are read as int64 values (and checked to fit).
#[test]
fn narrow_fixed_len_sequences_are_padded() {
    use super::seq;
    for dtype in [DType::Int32, DType::Bool] {
        let (a, b) = if dtype == DType::Bool { (1, 0) } else { (5, 6) };
        let s = spec(&[(
            "a",
            FeatureSpec::FixedLenSequence {
                dtype,
                shape: vec![2],
                allow_missing: true,
                default: None,
            },
        )]);
        let records = [ex(&[]), ex(&[("a", i(&[a, b]))])];
        let out = parse_example(&s, &records).expect("parses");
        assert_eq!(
            dense_i64(&out["a"]),
            (vec![2, 1, 2], vec![0, 0, a, b]),
            "{dtype:?}"
        );
        // Steps of one value, two records of 1 and 2 steps.
        let lists = spec(&[("s", FeatureSpec::fixed_len_sequence(dtype, [], true))]);
        let records = [
            seq(&[], &[("s", vec![i(&[1])])]),
            seq(&[], &[("s", vec![i(&[0]), i(&[1])])]),
        ];
        let (_, seqs, _) =
            crate::parse::parse_sequence_example(&spec(&[]), &lists, &records).expect("parses");
        assert_eq!(
            dense_i64(&seqs["s"]),
            (vec![2, 2], vec![1, 0, 0, 1]),
            "{dtype:?}"
        );
    }
}

/// One default value fills the whole shape; a shape whose filled default would pass the bound
/// on a key's values (2 GiB) is an error when the spec is compiled, not an allocation of
/// terabytes (TensorFlow refuses a one-value default for any shape of more than one value).
#[test]
fn a_one_value_default_past_the_bound_is_a_spec_error() {
    let filled = parse_example(
        &spec(&[(
            "k",
            FeatureSpec::fixed_len_with_default(DType::Int64, [3], vec![5i64]),
        )]),
        &[Vec::<u8>::new()],
    )
    .unwrap();
    assert_eq!(dense_i64(&filled["k"]).1, vec![5; 3]);
    // 2^29 values of 8 bytes: 4 GiB.
    for shape in [[1u64 << 40], [1 << 29]] {
        let Err(err) = parse_example(
            &spec(&[(
                "k",
                FeatureSpec::fixed_len_with_default(DType::Int64, shape, vec![0i64]),
            )]),
            &[Vec::<u8>::new()],
        ) else {
            panic!("shape {shape:?} accepted");
        };
        assert_eq!(err.key(), Some("k"), "{err}");
        assert!(
            err.to_string().contains("MiB a key's values may take"),
            "{err}"
        );
    }
}

/// A default is held by every record lacking the feature: once a batch's values of a key
/// would pass the bound (2 GiB; a few hundred bytes here), the record that would pass it is an
/// error naming the key and the record, on both paths and for a SequenceExample's context.
#[test]
fn defaults_filled_past_the_bound_are_an_error() {
    use crate::parse::{ExampleParser, SequenceExampleParser};
    let s = spec(&[
        (
            "x",
            FeatureSpec::fixed_len_with_default(DType::Int64, [10], vec![7i64]),
        ),
        ("y", FeatureSpec::fixed_len(DType::Int64, [])),
    ]);
    let mut parser = ExampleParser::new(&s).unwrap();
    // Three records' defaults fit in 240 bytes; the fourth does not.
    parser.plan.max_filled = 240;
    let lacking = ex(&[("y", i(&[1]))]);
    let holding = ex(&[("x", i(&[1; 10])), ("y", i(&[1]))]);
    let fits = parser.parse(&[&lacking, &lacking, &lacking]).unwrap();
    assert_eq!(dense_i64(&fits["x"]).1, vec![7; 30]);
    // A record holding the feature adds its own values, which count too.
    for batch in [
        vec![&lacking, &lacking, &lacking, &lacking],
        vec![&holding, &lacking, &lacking, &lacking],
    ] {
        let err = parser.parse(&batch).unwrap_err();
        assert_eq!((err.key(), err.record()), (Some("x"), Some(3)), "{err}");
        assert!(
            err.to_string().contains("parse fewer records at a time"),
            "{err}"
        );
    }
    // Not a fast-path record (an entry of another key twice): the general path says the same.
    let odd = ex_raw(&[("y", i(&[1])), ("y", i(&[2]))]);
    let err = parser.parse(&[&odd, &odd, &odd, &odd]).unwrap_err();
    assert_eq!((err.key(), err.record()), (Some("x"), Some(3)), "{err}");

    let context = spec(&[(
        "x",
        FeatureSpec::fixed_len_with_default(DType::Int64, [10], vec![7i64]),
    )]);
    let lists = spec(&[("t", FeatureSpec::var_len(DType::Int64))]);
    let mut parser = SequenceExampleParser::new(&context, &lists).unwrap();
    parser.context.max_filled = 240;
    let record = super::seq(&[], &[("t", vec![i(&[1])])]);
    assert!(parser.parse(&[&record, &record, &record]).is_ok());
    let err = parser
        .parse(&[&record, &record, &record, &record])
        .unwrap_err();
    assert_eq!((err.key(), err.record()), (Some("x"), Some(3)), "{err}");
}
