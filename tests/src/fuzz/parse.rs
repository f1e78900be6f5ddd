//! The runtime parser (`tfrecord_core::parse`, `tf.io.parse_example` and
//! `tf.io.parse_sequence_example`) over a batch of records with fixed specs: fixed-length
//! features with and without defaults and shapes, var-length, sparse, ragged (several
//! partition kinds) and fixed-length sequence features, and a sequence spec with context
//! features and feature lists.
//!
//! The input is the batch: each record a 2-byte little-endian length, then that many bytes
//! (the last one takes what is left). Each spec parses the batch three ways, which must give
//! the same tensors or the same error: [`ExampleParser::parse`], `parse_parallel` on two
//! threads, and `parse_reusing` with the buffers of the first result given back.

use std::collections::BTreeMap;

use tfrecord_core::parse::{
    Buffers, DType, ExampleParser, FeatureSpec, Partition, SequenceExampleParser, Spec, Tensor,
    Tensors, tensors_to_json,
};

use super::heap::{self, Bound};

/// The heap bound of parsing a batch of `n` bytes: 64 bytes per byte (a one-byte value can
/// become an 8-byte element and a sparse index of 2 or 3 `i64`s, in each of the three parses'
/// results kept side by side), plus 4 MiB (the rows value row ids may imply beyond the input,
/// 64 Ki per batch, as splits of 8 bytes; and the `Tensors` maps); plus the dense output
/// padded to the longest record, which the spec asks for whatever the input's size
/// ([`heap::within_plus`]).
pub const PARSE_BOUND: Bound = Bound {
    per_byte: 64,
    fixed: 4 << 20,
};

/// The batch of records in `data`: each a 2-byte little-endian length, then that many bytes
/// (the `parse` and `columns` targets' input).
pub(crate) fn records(mut data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while let Some((len, rest)) = data.split_first_chunk::<2>() {
        let len = usize::from(u16::from_le_bytes(*len)).min(rest.len());
        let (record, rest) = rest.split_at(len);
        out.push(record);
        data = rest;
    }
    out
}

fn spec(features: impl IntoIterator<Item = (&'static str, FeatureSpec)>) -> Spec {
    features
        .into_iter()
        .map(|(k, f)| (k.to_string(), f))
        .collect::<BTreeMap<_, _>>()
}

/// The `tf.train.Example` specs: one over the keys of the recorded `parse_example` cases (every
/// feature optional), one with required features, and one with every ragged partition.
fn example_specs() -> Vec<Spec> {
    vec![
        spec([
            (
                "age",
                FeatureSpec::fixed_len_with_default(DType::Int64, [], -1i64),
            ),
            (
                "height",
                FeatureSpec::fixed_len_with_default(DType::Float, [], 0.5f32),
            ),
            (
                "name",
                FeatureSpec::fixed_len_with_default(DType::Bytes, [], "none"),
            ),
            (
                "pix",
                FeatureSpec::fixed_len_with_default(DType::Float, [2, 3], vec![0f32; 6]),
            ),
            ("tags", FeatureSpec::var_len(DType::Bytes)),
            (
                "seq",
                FeatureSpec::FixedLenSequence {
                    dtype: DType::Int64,
                    shape: vec![2],
                    allow_missing: true,
                    default: Some(0i64.into()),
                },
            ),
            ("sp", FeatureSpec::sparse("idx", "val", DType::Float, 20)),
            (
                "rv",
                FeatureSpec::ragged_with(DType::Int64, "rv", [Partition::RowLengths("rl".into())]),
            ),
            ("rvals", FeatureSpec::ragged(DType::Int64)),
        ]),
        spec([
            ("age", FeatureSpec::fixed_len(DType::Int64, [])),
            ("pix", FeatureSpec::fixed_len(DType::Float, [6])),
            ("name", FeatureSpec::fixed_len(DType::String, [])),
        ]),
        spec([
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
                "s",
                FeatureSpec::ragged_with(
                    DType::Int64,
                    "h",
                    [
                        Partition::RowStarts("g".into()),
                        Partition::RowLimits("f".into()),
                    ],
                ),
            ),
        ]),
    ]
}

/// The `tf.train.SequenceExample` specs of the recorded `parse_sequence_example` case, with a
/// ragged feature list beside.
fn sequence_specs() -> (Spec, Spec) {
    let context = spec([
        ("id", FeatureSpec::fixed_len(DType::Int64, [])),
        (
            "lang",
            FeatureSpec::fixed_len_with_default(DType::Bytes, [], "xx"),
        ),
        ("ctx", FeatureSpec::var_len(DType::Float)),
    ]);
    let lists = spec([
        ("tokens", FeatureSpec::var_len(DType::Int64)),
        (
            "scores",
            FeatureSpec::fixed_len_sequence(DType::Float, [], true),
        ),
        (
            "ragged",
            FeatureSpec::ragged_with(DType::Int64, "ids", [Partition::RowLengths("n".into())]),
        ),
    ]);
    (context, lists)
}

/// A parse's result as text: its tensors' JSON, or its error.
fn text(result: Result<Vec<&Tensors>, &tfrecord_core::Error>) -> String {
    match result {
        Ok(maps) => maps
            .iter()
            .map(|t| tensors_to_json(t).to_string())
            .collect::<Vec<_>>()
            .join("\n"),
        Err(e) => format!("error: {e}"),
    }
}

/// Bytes of dense output: the part of a result that padding can make larger than the input.
fn dense_bytes(maps: &[&Tensors]) -> usize {
    maps.iter()
        .flat_map(|t| t.values())
        .filter_map(|t| match t {
            Tensor::Dense { values, .. } => Some(values),
            _ => None,
        })
        .map(|values| {
            let strings = values
                .as_bytes()
                .map_or(0, |s| s.iter().map(<[u8]>::len).sum::<usize>());
            16 * values.len() + strings
        })
        .sum()
}

/// The three parses of one spec must agree; the extra heap the padded output asks for.
fn agree<T>(
    what: &str,
    parse: impl Fn(usize) -> tfrecord_core::Result<T>,
    maps: fn(&T) -> Vec<&Tensors>,
) -> usize
where
    T: Sized,
{
    let first = parse(0);
    let want = text(first.as_ref().map(maps));
    for how in [1, 2] {
        let got = parse(how);
        let got = text(got.as_ref().map(maps));
        assert!(got == want, "{what}, parse {how}: {got}\nnot\n{want}");
    }
    first.as_ref().map_or(0, |t| 3 * dense_bytes(&maps(t)))
}

/// The parsers agree with themselves on the batch in `data` (see the [module](self) docs).
///
/// # Panics
/// When two parses of a batch differ, a parser panics, or the heap grows past
/// [`PARSE_BOUND`] and the padded dense output.
pub fn parse(data: &[u8]) {
    let batch = records(data);
    for (i, spec) in example_specs().iter().enumerate() {
        let parser = match ExampleParser::new(spec) {
            Ok(parser) => parser,
            Err(e) => panic!("example spec {i} is valid: {e}"),
        };
        let what = format!("example spec {i}");
        heap::within_plus(&what, data.len(), PARSE_BOUND, || {
            let run = |how: usize| match how {
                0 => parser.parse(&batch),
                1 => parser.parse_parallel(&batch, 2),
                _ => {
                    let mut buffers = Buffers::new();
                    if let Ok(t) = parser.parse(&batch) {
                        buffers.give_back(t);
                    }
                    parser.parse_reusing(&batch, &mut buffers)
                }
            };
            ((), agree(&what, run, |t| vec![t]))
        });
    }
    let (context, lists) = sequence_specs();
    let parser = match SequenceExampleParser::new(&context, &lists) {
        Ok(parser) => parser,
        Err(e) => panic!("the sequence specs are valid: {e}"),
    };
    heap::within_plus("sequence spec", data.len(), PARSE_BOUND, || {
        let run = |how: usize| match how {
            0 | 1 => parser.parse(&batch),
            _ => {
                let mut buffers = Buffers::new();
                if let Ok((c, l, n)) = parser.parse(&batch) {
                    buffers.give_back(c);
                    buffers.give_back(l);
                    buffers.give_back(n);
                }
                parser.parse_reusing(&batch, &mut buffers)
            }
        };
        ((), agree("sequence spec", run, |(c, l, n)| vec![c, l, n]))
    });
}
