//! Shared helpers: files of labelled records, and reading a data set's labels.

use std::path::{Path, PathBuf};

use tfrecord_core::{Compression, Example, RecordWriter, WriterOptions};
use tfrecord_dataset::{Dataset, DatasetOptions, Record};

/// A typed record: the label of its file and its index there.
#[derive(Example, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Labelled {
    pub(crate) file: i64,
    pub(crate) index: i64,
    pub(crate) pad: Vec<u8>,
}

/// The numbers of a [`Labelled`] record alone: a value that owns no heap memory, which the
/// workers decode.
#[derive(Example, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    pub(crate) file: i64,
    pub(crate) index: i64,
}

/// The label of record `i` of file `k`: `"k:i"`.
pub(crate) fn label(k: usize, i: usize) -> String {
    format!("{k}:{i}")
}

/// Writes `count` records labelled `"k:i"` to `path` (compression from the name).
pub(crate) fn write_labels(path: &Path, k: usize, count: usize) {
    let opts = WriterOptions::new().compression(Compression::from_path(path));
    let mut w = RecordWriter::create(path, opts).expect("creates");
    for i in 0..count {
        w.write(label(k, i).as_bytes()).expect("writes");
    }
    w.finish().expect("finishes");
}

/// Writes files `name(k)` with `counts[k]` labelled records each; returns their paths.
pub(crate) fn write_set(
    dir: &Path,
    counts: &[usize],
    name: impl Fn(usize) -> String,
) -> Vec<PathBuf> {
    counts
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            let path = dir.join(name(k));
            write_labels(&path, k, n);
            path
        })
        .collect()
}

/// Writes `counts[k]` typed records to `dir/train-KKKKK-of-NNNNN.tfrecord`.
pub(crate) fn write_typed_set(dir: &Path, counts: &[usize]) {
    for (k, &n) in counts.iter().enumerate() {
        let path = dir.join(format!("train-{k:05}-of-{:05}.tfrecord", counts.len()));
        let mut w = tfrecord_core::Writer::<Labelled>::create(&path).expect("creates");
        for i in 0..n {
            let value = Labelled {
                file: i64::try_from(k).expect("small"),
                index: i64::try_from(i).expect("small"),
                pad: vec![b'x'; (k * 7 + i * 13) % 50],
            };
            w.write(&value).expect("writes");
        }
        w.finish().expect("finishes");
    }
}

/// The record's label.
pub(crate) fn text(r: &Record) -> String {
    String::from_utf8(r.bytes().to_vec()).expect("a label")
}

/// Every label a data set gives, in order.
pub(crate) fn labels(ds: &Dataset) -> Vec<String> {
    ds.records()
        .expect("starts")
        .map(|r| text(&r.expect("reads")))
        .collect()
}

/// The data set of the files in `dir` with `opts`.
pub(crate) fn open(dir: &Path, opts: DatasetOptions) -> Dataset {
    Dataset::open([dir]).expect("lists").with_options(opts)
}

/// A small deterministic generator for picking test positions (xorshift64*).
pub(crate) struct Picker(u64);

impl Picker {
    pub(crate) fn new(seed: u64) -> Self {
        Picker(seed | 1)
    }

    /// A number below `n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x % n as u64) as usize
    }
}
