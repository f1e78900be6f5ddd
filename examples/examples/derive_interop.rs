//! Derived types against TensorFlow, driven by the live interop check (`interop/`).
//!
//! ```text
//! derive_interop write-example OUT.tfrecord[.gz]   # writes derived records, prints their values as JSON lines
//! derive_interop read-example IN.tfrecord[.gz]     # decodes TensorFlow-written records, prints values as JSON lines
//! derive_interop write-sequence OUT.tfrecord
//! derive_interop read-sequence IN.tfrecord
//! ```
//!
//! The JSON lines carry int64 as numbers, floats as their `f32` bit patterns (`*_bits`, so
//! NaN and -0.0 compare exactly) and bytes as lists of byte values.

use std::io::Write as _;

use serde_json::{Value, json};
use tfrecord_core::{Example, Reader, SequenceExample, TfSequenceExample, Writer};

/// The record both sides agree on; TensorFlow parses it with
/// `image/encoded: FixedLenFeature([], string)`, `label, small, flag: FixedLenFeature([], int64)`,
/// `score: FixedLenFeature([], float32)`, `mat: FixedLenFeature([2, 3], float32)`,
/// `tags: VarLenFeature(string)`, `ids: VarLenFeature(int64)`,
/// `name: FixedLenFeature([], string, default_value="")`.
#[derive(Example, Debug, Clone, PartialEq)]
struct Sample {
    #[example(key = "image/encoded")]
    image: Vec<u8>,
    label: i64,
    score: f32,
    #[example(shape = [2, 3])]
    mat: Vec<f32>,
    tags: Vec<String>,
    ids: Vec<i64>,
    small: i32,
    flag: bool,
    name: Option<String>,
}

/// Context `id: int64`, `lang: string`; feature lists `tokens: VarLenFeature(int64)` and
/// `scores: FixedLenSequenceFeature([], float32)`.
#[derive(SequenceExample, Debug, Clone, PartialEq)]
struct Sequence {
    id: i64,
    lang: String,
    #[example(sequence)]
    tokens: Vec<Vec<i64>>,
    #[example(sequence)]
    scores: Vec<f32>,
}

#[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)] // small non-negative numbers
fn samples() -> Vec<Sample> {
    let specials = [
        0.0f32,
        -0.0,
        1.5,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-40,
        -3.25,
        0.1,
    ];
    (0..24i64)
        .map(|i| Sample {
            image: (0..(i * 37 % 300))
                .map(|b| ((b * 31 + i) % 256) as u8)
                .collect(),
            label: match i {
                0 => i64::MIN,
                1 => i64::MAX,
                _ => i * 1_000_003 - 12,
            },
            score: specials[(i as usize) % specials.len()],
            mat: (0..6).map(|k| (i * 6 + k) as f32 / 7.0).collect(),
            tags: (0..(i % 4)).map(|k| format!("tag-{i}-{k}-ü")).collect(),
            ids: (0..(i % 5)).map(|k| k * i - 7).collect(),
            small: (i as i32 - 12) * 100_000_007 % i32::MAX,
            flag: i % 2 == 0,
            name: (i % 3 != 0).then(|| format!("name {i}")),
        })
        .collect()
}

#[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)] // small non-negative numbers
fn sequences() -> Vec<Sequence> {
    (0..12i64)
        .map(|i| Sequence {
            id: i * 11,
            lang: ["en", "zh", "fr"][(i % 3) as usize].to_string(),
            tokens: (0..(i % 6))
                .map(|s| (0..(s % 4)).map(|t| s * 10 + t + i).collect())
                .collect(),
            scores: (0..(i % 6)).map(|s| s as f32 * 0.25 - 1.0).collect(),
        })
        .collect()
}

fn f32_bits(v: &[f32]) -> Value {
    json!(v.iter().map(|f| f.to_bits()).collect::<Vec<_>>())
}

fn sample_json(s: &Sample) -> Value {
    json!({
        "image/encoded": s.image,
        "label": s.label,
        "score_bits": s.score.to_bits(),
        "mat_bits": f32_bits(&s.mat),
        "tags": s.tags.iter().map(|t| t.as_bytes().to_vec()).collect::<Vec<_>>(),
        "ids": s.ids,
        "small": s.small,
        "flag": i64::from(s.flag),
        "name": s.name.as_ref().map_or_else(Vec::new, |n| n.as_bytes().to_vec()),
    })
}

fn sequence_json(s: &Sequence) -> Value {
    json!({
        "id": s.id,
        "lang": s.lang.as_bytes(),
        "tokens": s.tokens,
        "scores_bits": f32_bits(&s.scores),
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [cmd, path] = args.as_slice() else {
        return Err(
            "usage: derive_interop write-example|read-example|write-sequence|read-sequence FILE"
                .into(),
        );
    };
    let mut out = std::io::stdout().lock();
    match cmd.as_str() {
        "write-example" => {
            let mut w = Writer::<Sample>::create(path)?;
            for s in samples() {
                w.write(&s)?;
                writeln!(out, "{}", sample_json(&s))?;
            }
            w.finish()?;
        }
        "read-example" => {
            for s in Reader::<Sample>::open(path)? {
                writeln!(out, "{}", sample_json(&s?))?;
            }
        }
        "write-sequence" => {
            let mut w = Writer::<Sequence, TfSequenceExample>::create(path)?;
            for s in sequences() {
                w.write(&s)?;
                writeln!(out, "{}", sequence_json(&s))?;
            }
            w.finish()?;
        }
        "read-sequence" => {
            for s in Reader::<Sequence, TfSequenceExample>::open(path)? {
                writeln!(out, "{}", sequence_json(&s?))?;
            }
        }
        other => return Err(format!("unknown command {other:?}").into()),
    }
    out.flush()?;
    Ok(())
}
