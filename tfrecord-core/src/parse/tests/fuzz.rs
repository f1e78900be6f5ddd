//! Robustness: arbitrary bytes (valid records cut, changed or replaced) never make the parsers
//! panic, and the fast path agrees with the general path on them.

use super::paths::{example_paths_agree, sequence_paths_agree};
use super::{Rng, b, ex, f, i, seq, spec};
use crate::parse::{DType, ExampleParser, FeatureSpec, Partition, SequenceExampleParser};

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
