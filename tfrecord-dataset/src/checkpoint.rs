//! Checkpoints: a small, serializable reading position from which a data set resumes exactly.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::interleave::InterleaveState;
use crate::plan::Fnv;

/// The checkpoint format this crate writes and reads (2: sealed).
const VERSION: u32 = 2;

/// Where a data set's reading stands, taken by `checkpoint()` on its iterators
/// ([`Records::checkpoint`](crate::Records::checkpoint),
/// [`Values::checkpoint`](crate::Values::checkpoint),
/// [`ValueBatches::checkpoint`](crate::ValueBatches::checkpoint)) and given back to
/// [`Dataset::resume`](crate::Dataset::resume): the records after it are exactly those an
/// uninterrupted read would have given after the same point, in the same order (in
/// deterministic mode), with any number of threads.
///
/// It holds no records: the epoch; how many records have been read (skipped ones included);
/// the interleave's turn and, for each open split, the index and byte offset of its next record;
/// and, with a shuffle buffer, the number of draws the generator has made and the position of
/// each buffered record (split, record index, byte offset), which are read again on resume
/// (by seeking in uncompressed files, by reading forward in compressed ones). A fingerprint of
/// the files (their paths and sizes) and the options that decide the order makes resuming with
/// other inputs or options, or after a file changed size, an error rather than a silently
/// different stream; and a seal, a hash of the rest, makes resuming from a checkpoint that was
/// changed or damaged after it was taken an error too.
///
/// Serialized with serde; [`to_json`](Self::to_json) and [`from_json`](Self::from_json) give
/// its JSON form. Its size is a few hundred bytes plus about 30 bytes per buffered record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub(crate) version: u32,
    pub(crate) fingerprint: String,
    pub(crate) epoch: u64,
    /// Records taken from the stream so far, skipped ones included.
    pub(crate) records: u64,
    /// Records taken from the current epoch so far.
    pub(crate) epoch_records: u64,
    /// Every record has been read.
    pub(crate) finished: bool,
    /// The interleave's position; `None` at the start of an epoch.
    pub(crate) interleave: Option<InterleaveState>,
    /// The shuffle buffer; `None` without one, or at the start of an epoch.
    pub(crate) shuffle: Option<BufferState>,
    /// FNV-1a of the JSON form with this field 0 ([`sealed`](Self::sealed)).
    pub(crate) seal: u64,
}

/// The shuffle buffer of a checkpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BufferState {
    /// 64-bit outputs the epoch's buffer generator has produced.
    pub(crate) draws: u64,
    /// Each buffered record, in buffer order: `[split, record index, byte offset]`.
    pub(crate) records: Vec<[u64; 3]>,
}

impl BufferState {
    /// Checks that the buffer fits a shuffle buffer of `size` records filled from the first
    /// `opened` splits: no more records than that, none twice.
    ///
    /// # Errors
    /// [`Error::Checkpoint`], saying what does not fit.
    pub(crate) fn check(&self, size: usize, opened: usize) -> Result<()> {
        if self.records.len() > size {
            return Err(Error::Checkpoint(format!(
                "the shuffle buffer holds {} records, more than its size of {size}",
                self.records.len()
            )));
        }
        if let Some(&[split, ..]) = self.records.iter().find(|r| r[0] >= opened as u64) {
            return Err(Error::Checkpoint(format!(
                "a buffered record of split {split}, which is not open ({opened} splits opened)"
            )));
        }
        let mut seen: Vec<(u64, u64)> = self.records.iter().map(|r| (r[0], r[1])).collect();
        seen.sort_unstable();
        if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::Checkpoint(format!(
                "record {} of split {} is in the shuffle buffer twice",
                w[0].1, w[0].0
            )));
        }
        Ok(())
    }
}

impl Checkpoint {
    /// The position before the first record.
    pub(crate) fn start(fingerprint: String) -> Self {
        Checkpoint {
            version: VERSION,
            fingerprint,
            epoch: 0,
            records: 0,
            epoch_records: 0,
            finished: false,
            interleave: None,
            shuffle: None,
            seal: 0,
        }
    }

    /// The checkpoint with its seal set, as it is handed out.
    pub(crate) fn sealed(mut self) -> Self {
        self.seal = self.hash();
        self
    }

    /// The hash of the contents: of the JSON form with the seal 0.
    fn hash(&self) -> u64 {
        let unsealed = Checkpoint {
            seal: 0,
            ..self.clone()
        };
        let mut h = Fnv::new();
        h.bytes(unsealed.to_json().as_bytes());
        h.finish()
    }

    /// The epoch being read (0 for the first).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// How many records have been taken from the stream, skipped ones included.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// True when every record has been read.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The JSON form.
    pub fn to_json(&self) -> String {
        // Plain integers, strings and arrays: serialization cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads the JSON form.
    ///
    /// # Errors
    /// Text that is not a checkpoint, or one of another format version.
    pub fn from_json(text: &str) -> Result<Self> {
        let ckpt: Checkpoint = serde_json::from_str(text)
            .map_err(|e| Error::Checkpoint(format!("not a data set checkpoint: {e}")))?;
        ckpt.check_version()?;
        Ok(ckpt)
    }

    /// Checks the format version, the seal, and the fingerprint against a data set's.
    pub(crate) fn check(&self, fingerprint: &str) -> Result<()> {
        self.check_version()?;
        if self.seal != self.hash() {
            return Err(Error::Checkpoint(
                "its contents do not match its seal: it was changed or damaged after it was \
                 taken, and resuming from it would give another stream than the one it was \
                 taken from"
                    .into(),
            ));
        }
        if self.fingerprint != fingerprint {
            return Err(Error::Checkpoint(format!(
                "it was taken with other files or options (fingerprint {}, this data set \
                 {fingerprint}): resume with the same inputs, unchanged (their paths and \
                 sizes), and the same order, shuffle seed and buffer, shard, epochs, skip and \
                 take",
                self.fingerprint
            )));
        }
        Ok(())
    }

    fn check_version(&self) -> Result<()> {
        if self.version != VERSION {
            return Err(Error::Checkpoint(format!(
                "format version {} (this crate reads version {VERSION})",
                self.version
            )));
        }
        Ok(())
    }
}
