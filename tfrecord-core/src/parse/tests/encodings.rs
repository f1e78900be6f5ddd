//! Records in the encodings writers choose and in other valid ones (unpacked, split, repeated,
//! reordered, with unknown fields, of the wrong kind): the fast path agrees with the general
//! path on all of them, over short and long batches.

use super::paths::{example_paths_agree, sequence_paths_agree};
use super::{Rng, b, f, i, len_field, spec};
use crate::Message;
use crate::codec::wire::put_varint;
use crate::parse::{DType, ExampleParser, FeatureSpec, Partition, SequenceExampleParser, Values};

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

/// A packed list written as two runs is one list of all their values, as protobuf decodes it
/// (`tf.train.Example.FromString` gives `[1, 2, 3]` here). TensorFlow 2.21's fast parser keeps
/// only the first run (`parse_example` gives `[1, 2]` for a `VarLenFeature`, and fails a
/// `FixedLenFeature([3])`); the parser here keeps protobuf's rule.
#[test]
fn split_packed_runs_are_one_list() {
    let run = |values: &[u64]| {
        let mut body = Vec::new();
        for &v in values {
            put_varint(&mut body, v);
        }
        len_field(1, &body)
    };
    let list = [run(&[1, 2]), run(&[3])].concat();
    let feature = len_field(3, &list);
    let entry = [len_field(1, b"x"), len_field(2, &feature)].concat();
    let record = len_field(1, &len_field(1, &entry));
    let var = crate::parse::parse_example(
        &spec(&[("x", FeatureSpec::var_len(DType::Int64))]),
        std::slice::from_ref(&record),
    )
    .expect("parses");
    assert_eq!(var["x"].values(), &Values::Int64(vec![1, 2, 3]));
    let fixed = crate::parse::parse_example(
        &spec(&[("x", FeatureSpec::fixed_len(DType::Int64, [3]))]),
        &[record],
    )
    .expect("parses");
    assert_eq!(fixed["x"].values(), &Values::Int64(vec![1, 2, 3]));
}
