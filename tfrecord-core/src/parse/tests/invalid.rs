//! What the parsers refuse: the specs TensorFlow's Python layer rejects, and malformed records,
//! named by their index.

use super::{ex, i, spec};
use crate::parse::{
    DType, ExampleParser, FeatureSpec, SequenceExampleParser, Spec, Values, parse_example,
};

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

/// Features declared `int32` or `bool` are read from their `int64_list` and each value is held
/// to the type, with the derived types' rule and error: 2^40 is no `int32`, 850 no `bool`; the
/// error names the output, the record and the value.
#[test]
fn int32_and_bool_values_are_held_to_their_type() {
    use crate::FeatureProblem;
    let s = spec(&[
        ("n", FeatureSpec::fixed_len(DType::Int32, [])),
        ("b", FeatureSpec::var_len(DType::Bool)),
    ]);
    let good = [
        ex(&[("n", i(&[-(1 << 31)])), ("b", i(&[0, 1]))]),
        ex(&[("n", i(&[(1 << 31) - 1])), ("b", i(&[]))]),
    ];
    let out = parse_example(&s, &good).expect("in range");
    assert_eq!(
        out["n"].values(),
        &crate::parse::Values::Int64(vec![-(1 << 31), (1 << 31) - 1])
    );
    let wide = [
        ex(&[("n", i(&[1])), ("b", i(&[1]))]),
        ex(&[("n", i(&[1 << 40])), ("b", i(&[0]))]),
    ];
    let err = parse_example(&s, &wide).expect_err("2^40 is no int32");
    assert_eq!((err.key(), err.record()), (Some("n"), Some(1)), "{err}");
    assert!(
        matches!(
            err.kind(),
            crate::ErrorKind::Feature {
                problem: FeatureProblem::Range { .. },
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("1099511627776"), "{err}");
    let not_bool = [
        ex(&[("n", i(&[1])), ("b", i(&[1]))]),
        ex(&[("n", i(&[2])), ("b", i(&[0, 850]))]),
    ];
    let err = parse_example(&s, &not_bool).expect_err("850 is no bool");
    assert_eq!((err.key(), err.record()), (Some("b"), Some(1)), "{err}");
    assert!(
        matches!(
            err.kind(),
            crate::ErrorKind::Feature {
                problem: FeatureProblem::Bool(850),
                ..
            }
        ),
        "{err}"
    );
}
