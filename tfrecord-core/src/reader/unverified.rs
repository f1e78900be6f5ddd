//! A record whose data checksum is still to be checked, and where it came from.

use std::path::Path;
use std::sync::Arc;

use crate::crc::masked_crc32c;
use crate::error::{Error, ErrorKind, Result, locate};

/// A record read by [`RecordReader::read_unverified`](crate::RecordReader::read_unverified)
/// whose data checksum is still to be checked: where it came from, and the checksum its frame
/// stores.
#[derive(Clone, Debug)]
pub struct Unverified {
    pub(super) stored_crc: Option<u32>,
    pub(super) offset: u64,
    pub(super) record: u64,
    /// Where `record` counts from, `NO_BASE` for the file's start (kept small: one is made per
    /// record).
    pub(super) record_base: u64,
    pub(super) path: Option<Arc<Path>>,
}

/// [`Unverified`]'s `record_base` when the record index counts from the file's start.
pub(super) const NO_BASE: u64 = u64::MAX;

impl Unverified {
    /// Checks the record's payload against the masked CRC32C its frame stores (OFRecord frames
    /// store none: always `Ok`).
    ///
    /// # Errors
    /// A mismatch, naming the file, the frame's byte offset and the record index, as
    /// [`RecordReader::read_into`](crate::RecordReader::read_into) reports it.
    #[inline]
    pub fn verify(&self, payload: &[u8]) -> Result<()> {
        let Some(stored) = self.stored_crc else {
            return Ok(());
        };
        let computed = masked_crc32c(payload);
        if stored == computed {
            return Ok(());
        }
        let err = Error::new(ErrorKind::Corrupted {
            what: "data",
            stored,
            computed,
        });
        let err = locate(err, self.path.as_deref(), self.offset, self.record);
        Err(match self.record_base {
            NO_BASE => err,
            base => err.with_record_base(base),
        })
    }

    /// The record's index in its file (0 for the first), or in its split for a reader of a
    /// byte range ([`RecordReader::open_range`](crate::RecordReader::open_range)).
    pub fn record(&self) -> u64 {
        self.record
    }

    /// The byte offset of the record's frame in the (decompressed) stream.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The checksum the frame stores (`None` for OFRecord).
    pub(super) fn stored_crc(&self) -> Option<u32> {
        self.stored_crc
    }
}
