use std::collections::BTreeMap;

use tfrecord_core::{Example, SequenceExample};

#[derive(Example)]
struct Record {
    label: i64,
    rows: Vec<Vec<i64>>,
    // Byte strings: one bytes_list of several values, which is fine.
    blobs: Vec<Vec<u8>>,
    counts: Option<BTreeMap<String, i64>>,
}

#[derive(SequenceExample)]
struct Clip {
    id: i64,
    // Lists of any length per step: a feature list, once marked `sequence`.
    frames: Vec<Vec<f32>>,
}

fn main() {}
