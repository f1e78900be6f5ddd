//! Confirming where a byte-range split starts. A position that passes the boundary test
//! (`scan.rs`) is a frame of the file's own stream, except where a record's payload itself
//! holds a TFRecord stream (a record storing a TFRecord file's bytes): the frames of the
//! embedded stream pass the test as well as the file's own do.
//!
//! Such frames give themselves away where the embedded stream ends: the bytes after its last
//! frame are the rest of the enclosing record and its data checksum, not a header, so the chain
//! of frames breaks there, while the file's own chain runs on to the end of the file. So a
//! start stands when the frames from it chain on, header after header, to the end of the file
//! or for [`CONFIRM_BYTES`]. When they break first, either the start lies inside an enclosing
//! record, or the file is damaged where they break. It lies inside one when a frame of the file
//! (both checksums passing) starts before it and ends exactly at the next start that stands
//! after the break: then that next start is the split's start, and the embedded frames are left
//! to the enclosing record, as the reader of the split before reads them. Otherwise the file
//! is damaged there, the start stands, and reading reports the damage under the reader's
//! [`BadRecords`](crate::BadRecords) policy, as it does for any damage.
//!
//! What is left: an embedded stream whose frames chain on for more than [`CONFIRM_BYTES`]
//! past the split's start is taken for the file's own stream.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::options::ReaderOptions;
use super::scan::{Lookahead, header_len};
use crate::crc::MaskedCrc32c;

/// How far the frames from a start must chain on (when the file does not end first) for the
/// start to stand.
const CONFIRM_BYTES: u64 = 8 << 20;

/// How many enclosing records deep a start is looked into (a record holding a stream whose
/// records hold streams, ...).
const MAX_DEPTH: u32 = 4;

/// The bytes read at a time.
const BLOCK: usize = 64 << 10;

/// What a start that passed the boundary test turned out to be.
enum Judged {
    /// A frame of the file's own stream (or the file is damaged after it).
    Stands,
    /// Inside a record of the file, which ends at this start, itself standing (or at the end
    /// of the file).
    Inside(u64),
}

/// The file read on its own handle, apart from the split's reader.
pub(super) struct Confirm<'a> {
    file: BufReader<File>,
    opts: &'a ReaderOptions,
    size: u64,
}

impl<'a> Confirm<'a> {
    /// Opens the file of `size` bytes at `path` for confirming starts.
    ///
    /// # Errors
    /// Opening the file.
    pub(super) fn open(path: &Path, opts: &'a ReaderOptions, size: u64) -> io::Result<Self> {
        Ok(Confirm {
            file: BufReader::with_capacity(BLOCK, File::open(path)?),
            opts,
            size,
        })
    }

    /// The split's start given `at`, the first position at or after the range's start that
    /// passed the boundary test: `at`, or the first start that stands after the record
    /// enclosing it (the end of the file when none does).
    ///
    /// # Errors
    /// Reading the file.
    pub(super) fn start(&mut self, at: u64) -> io::Result<u64> {
        match self.judge(at, 0)? {
            Judged::Stands => Ok(at),
            Judged::Inside(next) => Ok(next),
        }
    }

    fn judge(&mut self, at: u64, depth: u32) -> io::Result<Judged> {
        let Some(broken) = self.chain_breaks(at)? else {
            return Ok(Judged::Stands);
        };
        if depth >= MAX_DEPTH {
            return Ok(Judged::Stands);
        }
        let next = self.next_standing(broken, depth + 1)?;
        Ok(if self.encloses(at, next)? {
            Judged::Inside(next)
        } else {
            Judged::Stands
        })
    }

    /// Where the chain of frames from `at` breaks (a header whose length checksum fails, a
    /// length over the limit, a frame past the end of the file), following headers only;
    /// `None` when it reaches the end of the file or runs [`CONFIRM_BYTES`].
    fn chain_breaks(&mut self, at: u64) -> io::Result<Option<u64>> {
        let horizon = at.saturating_add(CONFIRM_BYTES);
        let mut pos = at;
        self.file.seek(SeekFrom::Start(at))?;
        while pos < self.size && pos < horizon {
            if self.size - pos < 12 {
                return Ok(Some(pos));
            }
            let mut header = [0u8; 12];
            self.file.read_exact(&mut header)?;
            let Some(len) = header_len(&header).filter(|&l| l <= self.opts.max_record_len) else {
                return Ok(Some(pos));
            };
            let Some(next) = len.checked_add(16).and_then(|f| pos.checked_add(f)) else {
                return Ok(Some(pos));
            };
            if next > self.size {
                return Ok(Some(pos));
            }
            let skip = i64::try_from(len + 4).map_err(io::Error::other)?;
            self.file.seek_relative(skip)?;
            pos = next;
        }
        Ok(None)
    }

    /// The first position at or after `from` that passes the boundary test and stands, or the
    /// end of the file (where the file's own chain ends) when none does.
    fn next_standing(&mut self, mut from: u64, depth: u32) -> io::Result<u64> {
        loop {
            if from >= self.size {
                return Ok(self.size);
            }
            self.file.seek(SeekFrom::Start(from))?;
            let mut look = Lookahead::new(from, Vec::new());
            let found = look.scan(&mut self.file, self.opts, from, u64::MAX, Some(self.size))?;
            let Some(p) = found else {
                return Ok(self.size);
            };
            match self.judge(p, depth)? {
                Judged::Stands => return Ok(p),
                Judged::Inside(next) => from = next,
            }
        }
    }

    /// Whether a frame of the file (length and data checksums passing) starts before `at` and
    /// ends exactly at `end`.
    fn encloses(&mut self, at: u64, end: u64) -> io::Result<bool> {
        let longest = self.opts.max_record_len.saturating_add(16);
        let lo = end.saturating_sub(longest);
        let mut hi = at;
        let mut buf = Vec::with_capacity(BLOCK + 12);
        while hi > lo {
            let block_lo = hi.saturating_sub(BLOCK as u64).max(lo);
            // Every header that starts in `block_lo..hi`, whole.
            let block_end = hi.saturating_add(11).min(self.size);
            buf.clear();
            self.file.seek(SeekFrom::Start(block_lo))?;
            (&mut self.file)
                .take(block_end - block_lo)
                .read_to_end(&mut buf)?;
            for a in (block_lo..hi).rev() {
                let Some(len) = end.checked_sub(a).and_then(|f| f.checked_sub(16)) else {
                    continue;
                };
                let i = usize::try_from(a - block_lo).map_err(io::Error::other)?;
                let Some(header) = buf.get(i..i + 12) else {
                    continue;
                };
                if header[..8] == len.to_le_bytes()
                    && header_len(header) == Some(len)
                    && self.payload_passes(a, len)?
                {
                    return Ok(true);
                }
            }
            hi = block_lo;
        }
        Ok(false)
    }

    /// Whether the payload of the frame at `a`, of `len` bytes, passes its data checksum.
    fn payload_passes(&mut self, a: u64, len: u64) -> io::Result<bool> {
        self.file.seek(SeekFrom::Start(a + 12))?;
        let mut crc = MaskedCrc32c::new();
        let mut left = len;
        let mut block = vec![0u8; BLOCK];
        while left > 0 {
            let n = usize::try_from(left.min(BLOCK as u64)).map_err(io::Error::other)?;
            self.file.read_exact(&mut block[..n])?;
            crc.update(&block[..n]);
            left -= n as u64;
        }
        let mut stored = [0u8; 4];
        self.file.read_exact(&mut stored)?;
        Ok(u32::from_le_bytes(stored) == crc.finish())
    }
}
