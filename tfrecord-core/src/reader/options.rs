//! How a record stream is read: format, compression, checks, limits, and what to do with
//! damaged records.

use std::path::Path;

use super::policy::BadRecords;
use crate::compression::{Compression, Format};
use crate::error::{Error, ErrorKind, Result};

/// The default limit on one record's length: 1 GiB. Protobuf messages cannot exceed 2 GiB,
/// and a larger declared length in a real file is almost always corruption.
pub(super) const DEFAULT_MAX_RECORD_LEN: u64 = 1 << 30;

/// The default read buffer: 1 MiB, so that reads from the OS are large and sequential.
pub(super) const DEFAULT_BUFFER_SIZE: usize = 1 << 20;

/// How to read a record stream.
#[derive(Clone, Debug)]
pub struct ReaderOptions {
    pub(super) format: Format,
    pub(super) compression: Compression,
    pub(super) verify_data_crc: bool,
    pub(super) max_record_len: u64,
    pub(super) buffer_size: usize,
    pub(super) bad_records: BadRecords,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            format: Format::TfRecord,
            compression: Compression::None,
            verify_data_crc: true,
            max_record_len: DEFAULT_MAX_RECORD_LEN,
            buffer_size: DEFAULT_BUFFER_SIZE,
            bad_records: BadRecords::fail(),
        }
    }
}

impl ReaderOptions {
    /// TFRecord, uncompressed, both checksums verified, 1 GiB record limit, 1 MiB buffer, the
    /// first damaged record an error.
    pub fn new() -> Self {
        Self::default()
    }

    /// The default options with the compression guessed from the file name
    /// (see [`Compression::from_path`]).
    pub fn for_path(path: impl AsRef<Path>) -> Self {
        Self::default().compression(Compression::from_path(path))
    }

    /// The container format.
    #[must_use]
    pub fn format(mut self, format: Format) -> Self {
        self.format = format;
        self
    }

    /// The stream compression.
    #[must_use]
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// Whether to verify each record's data checksum (default `true`). The length checksum is
    /// always verified: without it a corrupt length would silently lose the framing.
    #[must_use]
    pub fn verify_data_crc(mut self, verify: bool) -> Self {
        self.verify_data_crc = verify;
        self
    }

    /// The largest record length accepted; a larger declared length is an error and is never
    /// allocated.
    #[must_use]
    pub fn max_record_len(mut self, max: u64) -> Self {
        self.max_record_len = max;
        self
    }

    /// The size of the read buffer.
    #[must_use]
    pub fn buffer_size(mut self, size: usize) -> Self {
        self.buffer_size = size.max(64);
        self
    }

    /// What a [`RecordReader`](crate::RecordReader) does with damaged records: fail (the
    /// default), skip them, or also resynchronize after broken framing, within a budget; see
    /// [`BadRecords`]. The chunked readers ([`ChunkReader`](crate::ChunkReader),
    /// [`SharedChunks`](crate::SharedChunks), [`for_each_chunk`](crate::for_each_chunk)) only
    /// fail, and refuse options that say otherwise.
    #[must_use]
    pub fn bad_records(mut self, policy: BadRecords) -> Self {
        self.bad_records = policy;
        self
    }

    /// The configured container format.
    pub fn get_format(&self) -> Format {
        self.format
    }

    /// The configured compression.
    pub fn get_compression(&self) -> Compression {
        self.compression
    }

    /// The configured largest record length.
    pub fn get_max_record_len(&self) -> u64 {
        self.max_record_len
    }

    /// Whether data checksums are verified.
    pub fn get_verify_data_crc(&self) -> bool {
        self.verify_data_crc
    }

    /// The configured policy for damaged records.
    pub fn get_bad_records(&self) -> &BadRecords {
        &self.bad_records
    }
}

/// The chunked readers fail on the first damaged record; options that ask for another policy
/// are refused rather than ignored.
pub(super) fn only_failing(opts: &ReaderOptions, reader: &str) -> Result<()> {
    if !opts.bad_records.skips() {
        return Ok(());
    }
    Err(Error::new(ErrorKind::Unsupported {
        detail: format!(
            "{reader} fails on the first damaged record; to skip damaged records (or \
             resynchronize), read the file in order with RecordReader"
        ),
    }))
}
