//! Confirming where a byte-range split starts. A position that passes the boundary test
//! (`scan.rs`) is a frame of the file's own stream, except where a record's payload itself
//! holds TFRecord frames (a record storing a TFRecord file's bytes, whole or in pieces): the
//! embedded frames pass the test as well as the file's own do.
//!
//! Embedded frames give themselves away where they stop: the bytes after the last of them are
//! the rest of the enclosing record, not a header, or its last header claims more bytes than
//! the enclosing record holds; either way the chain of frames from them breaks, while the
//! file's own chain runs on to the end of the file. So a start stands when the frames from it
//! chain on, frame after frame (both checksums), to the end of the file or for
//! [`CONFIRM_BYTES`]. When they
//! break first, either the start lies inside a record of the file, or the file is damaged
//! where they break. It lies inside one when a frame (both checksums passing, within
//! [`BACK_BYTES`] before it) encloses it: then the split's start is looked for again from the
//! end of that frame, and the embedded frames are left to the enclosing record, as the reader
//! of the split before reads it. Otherwise the file is damaged there, the start stands, and
//! reading reports the damage under the reader's [`BadRecords`](crate::BadRecords) policy, as
//! it does for any damage.
//!
//! What is left: embedded frames that chain on for more than [`CONFIRM_BYTES`] past the
//! split's start, and a start more than [`BACK_BYTES`] into the record that holds them.
//!
//! What it costs: the [`CONFIRM_BYTES`] after each byte-range split's start are read once
//! more; and when the frames from a start break (embedded frames, or damage), up to
//! [`BACK_BYTES`] before it.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::options::ReaderOptions;
use super::scan::{Lookahead, header_len};
use crate::crc::MaskedCrc32c;

/// How far the frames from a start must chain on (when the file does not end first) for the
/// start to stand.
const CONFIRM_BYTES: u64 = 8 << 20;

/// How far before a start a record enclosing it is looked for (or less: the options' record
/// length limit and frame).
const BACK_BYTES: u64 = 64 << 20;

/// The bytes read at a time.
const BLOCK: usize = 64 << 10;

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
    /// passed the boundary test: `at` when it stands, else the first start that stands after
    /// the records enclosing it (the end of the file when there is none).
    ///
    /// # Errors
    /// Reading the file.
    pub(super) fn start(&mut self, mut at: u64) -> io::Result<u64> {
        loop {
            if !self.chain_breaks(at)? {
                return Ok(at);
            }
            let Some(end) = self.enclosing_end(at)? else {
                return Ok(at); // damage where the chain breaks, for reading to report
            };
            // `end > at`: every turn moves on.
            match self.next_candidate(end)? {
                Some(next) => at = next,
                None => return Ok(self.size),
            }
        }
    }

    /// Whether the chain of frames from `at` breaks (a header whose length checksum fails, a
    /// length over the limit, a frame past the end of the file, a payload whose data checksum
    /// fails) before the end of the file and within [`CONFIRM_BYTES`].
    fn chain_breaks(&mut self, at: u64) -> io::Result<bool> {
        let horizon = at.saturating_add(CONFIRM_BYTES);
        let mut pos = at;
        self.file.seek(SeekFrom::Start(at))?;
        while pos < self.size && pos < horizon {
            if self.size - pos < 12 {
                return Ok(true);
            }
            let mut header = [0u8; 12];
            self.file.read_exact(&mut header)?;
            let Some(len) = header_len(&header).filter(|&l| l <= self.opts.max_record_len) else {
                return Ok(true);
            };
            let Some(next) = len.checked_add(16).and_then(|f| pos.checked_add(f)) else {
                return Ok(true);
            };
            if next > self.size || !self.payload_passes_here(len)? {
                return Ok(true);
            }
            pos = next;
        }
        Ok(false)
    }

    /// The first position at or after `from` that passes the boundary test.
    fn next_candidate(&mut self, from: u64) -> io::Result<Option<u64>> {
        if from >= self.size {
            return Ok(None);
        }
        self.file.seek(SeekFrom::Start(from))?;
        let mut look = Lookahead::new(from, Vec::new());
        look.scan(&mut self.file, self.opts, from, u64::MAX, Some(self.size))
    }

    /// The end of the nearest frame before `at` that encloses it (starts before it, ends after
    /// it, within the file, both checksums passing), looked for within [`BACK_BYTES`].
    fn enclosing_end(&mut self, at: u64) -> io::Result<Option<u64>> {
        let reach = self.opts.max_record_len.saturating_add(16).min(BACK_BYTES);
        let lo = at.saturating_sub(reach);
        let mut hi = at;
        let mut buf = vec![0u8; BLOCK + 11];
        while hi > lo {
            let block_lo = hi.saturating_sub(BLOCK as u64).max(lo);
            // Every header that starts in `block_lo..hi`, whole where the file holds it.
            let block_end = hi.saturating_add(11).min(self.size);
            let n = usize::try_from(block_end - block_lo).map_err(io::Error::other)?;
            // After a seek the reader's buffer is empty, and a read longer than it goes to the
            // file directly.
            self.file.seek(SeekFrom::Start(block_lo))?;
            self.file.read_exact(&mut buf[..n])?;
            for a in (block_lo..hi).rev() {
                let i = usize::try_from(a - block_lo).map_err(io::Error::other)?;
                let Some(header) = buf[..n].get(i..i + 12) else {
                    continue;
                };
                // The length's bounds first: they turn away almost every byte without a
                // checksum.
                let Some(len_bytes) = header.first_chunk::<8>() else {
                    continue;
                };
                let len = u64::from_le_bytes(*len_bytes);
                let Some(end) = len.checked_add(16).and_then(|f| a.checked_add(f)) else {
                    continue;
                };
                if end <= at
                    || end > self.size
                    || len > self.opts.max_record_len
                    || header_len(header).is_none()
                {
                    continue;
                }
                if self.payload_passes(a, len)? {
                    return Ok(Some(end));
                }
            }
            hi = block_lo;
        }
        Ok(None)
    }

    /// Whether the payload of the frame at `a`, of `len` bytes, passes its data checksum.
    fn payload_passes(&mut self, a: u64, len: u64) -> io::Result<bool> {
        self.file.seek(SeekFrom::Start(a + 12))?;
        self.payload_passes_here(len)
    }

    /// Whether the `len` bytes at the reader's position, and the data checksum after them,
    /// agree; the reader is left after the checksum.
    fn payload_passes_here(&mut self, len: u64) -> io::Result<bool> {
        // Checksummed where the reader holds the bytes: nothing is copied or allocated.
        let mut crc = MaskedCrc32c::new();
        let mut left = len;
        while left > 0 {
            let held = self.file.fill_buf()?;
            if held.is_empty() {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            let n = held.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            crc.update(&held[..n]);
            self.file.consume(n);
            left -= n as u64;
        }
        let mut stored = [0u8; 4];
        self.file.read_exact(&mut stored)?;
        Ok(u32::from_le_bytes(stored) == crc.finish())
    }
}
