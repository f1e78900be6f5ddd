//! Batches of records read from several inputs, and the location of each record, so that an
//! error about record `i` of a batch names its file, byte offset and index in that file.

use std::path::PathBuf;

use tfrecord_core::{Error, ErrorKind};

use crate::error::CliError;
use crate::input::Location;

/// Where a record of the batch came from.
struct Origin {
    file: usize,
    offset: u64,
    record: u64,
}

/// The records of one batch and their origins.
pub(crate) struct Batch<'a> {
    files: &'a [PathBuf],
    /// The records, in order.
    pub(crate) records: Vec<Vec<u8>>,
    origins: Vec<Origin>,
    size: usize,
}

impl<'a> Batch<'a> {
    /// An empty batch of up to `size` records from `files`.
    pub(crate) fn new(files: &'a [PathBuf], size: usize) -> Self {
        Batch {
            files,
            records: Vec::new(),
            origins: Vec::new(),
            size,
        }
    }

    /// Adds a record read at `loc`; true when the batch is full.
    pub(crate) fn push(&mut self, record: Vec<u8>, loc: &Location<'_>) -> bool {
        self.records.push(record);
        // The input the record came from (a shuffle mixes them).
        let file = self.files.iter().position(|f| f == loc.path).unwrap_or(0);
        self.origins.push(Origin {
            file,
            offset: loc.offset,
            record: loc.record,
        });
        self.records.len() >= self.size
    }

    /// Empties the batch.
    pub(crate) fn clear(&mut self) {
        self.records.clear();
        self.origins.clear();
    }

    /// Turns the batch index of an error (its record index, counted from the batch's first
    /// record) into the file, byte offset and record index of the record it is about.
    pub(crate) fn locate(&self, e: Error) -> CliError {
        let Some(origin) = e
            .record()
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| self.origins.get(i))
        else {
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
            located = located.with_path(path);
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
