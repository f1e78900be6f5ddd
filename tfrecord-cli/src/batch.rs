//! Batches of records read from several inputs, and the location of each record, so that an
//! error about record `i` of a batch names its file, byte offset and index in that file.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::PathBuf;

use tfrecord_core::{Error, ErrorKind};

use crate::error::CliError;
use crate::input::Location;

/// Where a record of the batch came from.
struct Origin {
    file: usize,
    offset: u64,
    record: u64,
    split_start: Option<u64>,
}

/// The records of one batch and their origins.
pub(crate) struct Batch<'a> {
    files: &'a [PathBuf],
    /// Each file's index in `files` (the first, for a file given twice), by its name: a
    /// record's file is found in one lookup, however many files there are.
    index: HashMap<&'a OsStr, usize>,
    /// The records' buffers, in order: the first `len` hold the batch, the rest are kept for
    /// the next batches.
    buffers: Vec<Vec<u8>>,
    len: usize,
    origins: Vec<Origin>,
    size: usize,
    /// The bytes of the batch's records.
    bytes: usize,
    max_bytes: usize,
}

impl<'a> Batch<'a> {
    /// An empty batch of up to `size` records from `files`.
    pub(crate) fn new(files: &'a [PathBuf], size: usize) -> Self {
        let mut index = HashMap::with_capacity(files.len());
        for (i, f) in files.iter().enumerate() {
            index.entry(f.as_os_str()).or_insert(i);
        }
        Batch {
            files,
            index,
            buffers: Vec::new(),
            len: 0,
            origins: Vec::new(),
            size,
            bytes: 0,
            max_bytes: usize::MAX,
        }
    }

    /// Full early once its records reach `max` bytes.
    pub(crate) fn with_max_bytes(mut self, max: usize) -> Self {
        self.max_bytes = max;
        self
    }

    /// The records of the batch.
    pub(crate) fn records(&self) -> &[Vec<u8>] {
        &self.buffers[..self.len]
    }

    /// Adds a record read at `loc`, copied into a buffer of an earlier batch where there is
    /// one; true when the batch is full.
    pub(crate) fn push_copy(&mut self, record: &[u8], loc: &Location<'_>) -> bool {
        match self.buffers.get_mut(self.len) {
            Some(buf) => {
                buf.clear();
                buf.extend_from_slice(record);
            }
            None => self.buffers.push(record.to_vec()),
        }
        self.added(loc)
    }

    /// Adds a record made from one read at `loc`; true when the batch is full.
    pub(crate) fn push(&mut self, record: Vec<u8>, loc: &Location<'_>) -> bool {
        match self.buffers.get_mut(self.len) {
            Some(buf) => *buf = record,
            None => self.buffers.push(record),
        }
        self.added(loc)
    }

    fn added(&mut self, loc: &Location<'_>) -> bool {
        self.bytes = self.bytes.saturating_add(self.buffers[self.len].len());
        self.len += 1;
        // The input the record came from (a shuffle mixes them).
        let file = self.index.get(loc.path.as_os_str()).copied().unwrap_or(0);
        self.origins.push(Origin {
            file,
            offset: loc.offset,
            record: loc.record,
            split_start: loc.split_start,
        });
        self.len >= self.size || self.bytes >= self.max_bytes
    }

    /// Empties the batch (keeping its buffers).
    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.bytes = 0;
        self.origins.clear();
    }

    /// Turns the batch index of an error (its record index, counted from the batch's first
    /// record) into the file, byte offset and record index of the record it is about.
    pub(crate) fn locate(&self, e: Error) -> CliError {
        match e.record().and_then(|i| usize::try_from(i).ok()) {
            Some(i) => self.locate_at(i, e),
            None => e.into(),
        }
    }

    /// Names record `i` of the batch (its file, byte offset and record index) in an error
    /// about it, in place of any record index the error holds.
    pub(crate) fn locate_at(&self, i: usize, e: Error) -> CliError {
        let Some(origin) = self.origins.get(i) else {
            return e.into();
        };
        let fresh = match e.kind() {
            ErrorKind::Feature { problem, detail } => {
                Error::feature_problem(problem.clone(), detail.clone())
            }
            ErrorKind::Decode { message, detail } => Error::decode(message, detail),
            _ => Error::feature(e.to_string()),
        };
        let mut located = fresh;
        if let Some(path) = self.files.get(origin.file) {
            let loc = Location {
                path,
                offset: origin.offset,
                record: origin.record,
                split_start: origin.split_start,
            };
            located = loc.apply(located);
        }
        located = located
            .with_offset(origin.offset)
            .with_record(origin.record);
        if let Some(key) = e.key() {
            located = located.with_key(key);
        }
        located.into()
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::Batch;
    use crate::input::Location;

    #[test]
    fn a_batch_is_full_at_its_size_or_its_bytes() {
        let files = [PathBuf::from("a.tfrecord")];
        let loc = |record| Location {
            path: Path::new("a.tfrecord"),
            offset: 0,
            record,
            split_start: None,
        };
        let mut by_bytes = Batch::new(&files, 10).with_max_bytes(100);
        assert!(!by_bytes.push_copy(&[0; 40], &loc(0)));
        assert!(!by_bytes.push_copy(&[0; 40], &loc(1)));
        assert!(by_bytes.push_copy(&[0; 40], &loc(2)), "120 bytes of 100");
        by_bytes.clear();
        assert!(
            !by_bytes.push(vec![0; 99], &loc(3)),
            "a new batch counts afresh"
        );
        assert!(by_bytes.push(vec![0; 1], &loc(4)));

        let mut by_count = Batch::new(&files, 2);
        assert!(!by_count.push_copy(&[0; 1000], &loc(0)));
        assert!(by_count.push_copy(&[0; 1000], &loc(1)));
    }
}
