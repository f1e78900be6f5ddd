//! Files of records built for the tests, and readers that collect what they read.

use std::ops::Range;
use std::path::{Path, PathBuf};

use tfrecord_core::{
    Compression, Format, ReaderOptions, RecordReader, RecordWriter, Result, SkipReason, Skipped,
    WriterOptions,
};

/// A record file in memory and where each record's frame starts.
pub(crate) struct Built {
    pub(crate) bytes: Vec<u8>,
    pub(crate) offsets: Vec<u64>,
}

/// The records framed by `RecordWriter` in `format`, uncompressed.
pub(crate) fn build_as(records: &[Vec<u8>], format: Format) -> Built {
    let mut w = RecordWriter::new(Vec::new(), WriterOptions::new().format(format));
    let mut offsets = Vec::new();
    let framing = match format {
        Format::TfRecord => 16,
        Format::OfRecord => 8,
    };
    let mut at = 0u64;
    for r in records {
        offsets.push(at);
        at += framing + r.len() as u64;
        w.write(r).expect("in memory");
    }
    let bytes = w.finish().expect("in memory");
    assert_eq!(
        bytes.len() as u64,
        at,
        "frames are their payload plus the framing"
    );
    Built { bytes, offsets }
}

/// The records as TFRecord frames.
pub(crate) fn build(records: &[Vec<u8>]) -> Built {
    build_as(records, Format::TfRecord)
}

/// The records as one compressed TFRecord stream.
pub(crate) fn build_compressed(records: &[Vec<u8>], compression: Compression) -> Vec<u8> {
    let mut w = RecordWriter::new(Vec::new(), WriterOptions::new().compression(compression));
    for r in records {
        w.write(r).expect("in memory");
    }
    w.finish().expect("in memory")
}

/// One TFRecord frame of `payload`.
pub(crate) fn frame(payload: &[u8]) -> Vec<u8> {
    build(&[payload.to_vec()]).bytes
}

/// `n` records of distinct contents and sizes (some empty).
pub(crate) fn records(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let len = if i % 5 == 1 { 0 } else { (i * 37) % 90 + 1 };
            (0..len).map(|j| (i * 131 + j * 7 + 1) as u8).collect()
        })
        .collect()
}

/// Writes `bytes` to `name` in `dir`.
pub(crate) fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write test file");
    path
}

/// What a reader read: the records, the skips reported (as they were drained after each read),
/// and the error that ended it.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub(crate) records: Vec<Vec<u8>>,
    pub(crate) skipped: Vec<Skipped>,
    pub(crate) error: Option<tfrecord_core::Error>,
}

impl Outcome {
    /// The skips as `(offset, length, kind of reason)`, without the reasons' words (a stream
    /// of unknown length words a truncation otherwise than a file does).
    pub(crate) fn skip_kinds(&self) -> Vec<(u64, Option<u64>, &'static str)> {
        self.skipped
            .iter()
            .map(|s| {
                let kind = match s.reason() {
                    SkipReason::DataChecksum { .. } => "data checksum",
                    SkipReason::Undecodable(_) => "undecodable",
                    SkipReason::Damaged(_) => "damaged",
                    SkipReason::Truncated(_) => "truncated",
                    SkipReason::Compressed(_) => "compressed",
                    _ => "other",
                };
                (s.offset(), s.byte_len(), kind)
            })
            .collect()
    }

    /// The skips as `(offset, length, reason)`.
    pub(crate) fn skips(&self) -> Vec<(u64, Option<u64>, SkipReason)> {
        self.skipped
            .iter()
            .map(|s| (s.offset(), s.byte_len(), s.reason().clone()))
            .collect()
    }
}

/// How a test reads: the owned iterator, `read_into` with one buffer, or `read_lent`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Api {
    Iter,
    Into,
    Lent,
}

pub(crate) const APIS: [Api; 3] = [Api::Iter, Api::Into, Api::Lent];

/// Reads everything `reader` gives with `api`.
pub(crate) fn drain<R: std::io::Read>(mut reader: RecordReader<R>, api: Api) -> Outcome {
    let mut out = Outcome {
        records: Vec::new(),
        skipped: Vec::new(),
        error: None,
    };
    let mut buf = Vec::new();
    loop {
        let step: Result<Option<Vec<u8>>> = match api {
            Api::Iter => reader.next().transpose(),
            Api::Into => reader
                .read_into(&mut buf)
                .map(|more| more.then(|| buf.clone())),
            Api::Lent => reader.read_lent(&mut buf).map(|r| r.map(<[u8]>::to_vec)),
        };
        out.skipped.extend(reader.drain_skipped());
        match step {
            Ok(Some(r)) => out.records.push(r),
            Ok(None) => break,
            Err(e) => {
                out.error = Some(e);
                break;
            }
        }
    }
    // Nothing more after the end or an error.
    assert!(reader.next().is_none(), "the reader is finished");
    out
}

/// Opens `range` of the file and reads it with `api`.
pub(crate) fn read_range(path: &Path, range: Range<u64>, opts: ReaderOptions, api: Api) -> Outcome {
    drain(
        RecordReader::open_range(path, range, opts).expect("open range"),
        api,
    )
}

/// Reads the whole file with `api`.
pub(crate) fn read_file(path: &Path, opts: ReaderOptions, api: Api) -> Outcome {
    drain(RecordReader::open(path, opts).expect("open"), api)
}
