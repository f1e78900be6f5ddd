//! Finding a TFRecord frame boundary at an arbitrary byte: the test byte-range splits start
//! with and the `resync` policy recovers with, over bytes read ahead of a reader.
//!
//! A frame starts at byte `p` when the 12 bytes there are a header whose length checksum
//! passes, the length is within `max_record_len`, the payload's data checksum passes, and the
//! next frame lines up: the bytes after the frame are the end of the stream or another header
//! whose length checksum passes. See `split.rs` for how likely a wrong position is to pass.

use std::io::{self, BufRead};

use super::options::ReaderOptions;
use super::source::Source;
use crate::crc::masked_crc32c;

/// The bytes read ahead at a time while scanning.
const SCAN_BLOCK: usize = 64 << 10;

/// Bytes of a stream read ahead of a reader, from stream offset `base` on.
pub(super) struct Lookahead {
    base: u64,
    bytes: Vec<u8>,
    /// The stream has no more bytes after these.
    eof: bool,
}

/// The header at the front of `h` (12 bytes or more), when its length checksum passes: the
/// declared length.
#[inline]
pub(super) fn header_len(h: &[u8]) -> Option<u64> {
    let (len, rest) = h.split_first_chunk::<8>()?;
    let crc = rest.first_chunk::<4>()?;
    (u32::from_le_bytes(*crc) == masked_crc32c(len)).then(|| u64::from_le_bytes(*len))
}

impl Lookahead {
    /// Starts at stream offset `base` with `bytes`, the stream's bytes from there that were
    /// already taken from the source.
    pub(super) fn new(base: u64, bytes: Vec<u8>) -> Self {
        Lookahead {
            base,
            bytes,
            eof: false,
        }
    }

    /// The stream offset just past the bytes read so far.
    pub(super) fn end(&self) -> u64 {
        self.base + self.bytes.len() as u64
    }

    /// The bytes from stream offset `at` on (empty past them).
    fn from(&self, at: u64) -> &[u8] {
        let i = usize::try_from(at.saturating_sub(self.base)).unwrap_or(usize::MAX);
        self.bytes.get(i..).unwrap_or_default()
    }

    /// Reads until the bytes reach stream offset `upto` or the stream ends.
    fn fill_to(&mut self, src: &mut dyn BufRead, upto: u64) -> io::Result<()> {
        while !self.eof && self.end() < upto {
            let avail = match src.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if avail.is_empty() {
                self.eof = true;
                break;
            }
            let want = usize::try_from(upto - self.end()).unwrap_or(usize::MAX);
            let take = avail.len().min(want);
            self.bytes.extend_from_slice(&avail[..take]);
            src.consume(take);
        }
        Ok(())
    }

    /// Drops the bytes before stream offset `at`.
    fn drop_before(&mut self, at: u64) {
        let n = usize::try_from(at.saturating_sub(self.base))
            .unwrap_or(usize::MAX)
            .min(self.bytes.len());
        self.bytes.drain(..n);
        self.base += n as u64;
    }

    /// Whether the bytes at stream offset `q` are the end of the stream or a header whose
    /// length checksum passes.
    ///
    /// # Errors
    /// Reading the source.
    pub(super) fn lines_up(&mut self, src: &mut dyn BufRead, q: u64) -> io::Result<bool> {
        self.fill_to(src, q.saturating_add(12))?;
        let rest = self.from(q);
        Ok(match rest.len() {
            0 => self.eof && self.end() == q,
            1..=11 => false,
            _ => header_len(rest).is_some(),
        })
    }

    /// The length of the frame at stream offset `p` when one starts there by the boundary
    /// test (see the module docs); `stream_end`, when known, bounds the lengths worth reading.
    ///
    /// # Errors
    /// Reading the source.
    pub(super) fn frame_at(
        &mut self,
        src: &mut dyn BufRead,
        opts: &ReaderOptions,
        p: u64,
        stream_end: Option<u64>,
    ) -> io::Result<Option<u64>> {
        self.fill_to(src, p.saturating_add(12))?;
        let Some(len) = header_len(self.from(p)) else {
            return Ok(None);
        };
        if len > opts.max_record_len {
            return Ok(None);
        }
        let Some(frame) = len.checked_add(16) else {
            return Ok(None);
        };
        let next = p.saturating_add(frame);
        if stream_end.is_some_and(|end| next > end) {
            return Ok(None);
        }
        self.fill_to(src, next)?;
        let Ok(len_usize) = usize::try_from(len) else {
            return Ok(None);
        };
        let Some((payload, footer)) = self.from(p.saturating_add(12)).split_at_checked(len_usize)
        else {
            return Ok(None); // the stream ends inside the candidate
        };
        let Some(stored) = footer.first_chunk::<4>() else {
            return Ok(None);
        };
        if u32::from_le_bytes(*stored) != masked_crc32c(payload) {
            return Ok(None);
        }
        Ok(self.lines_up(src, next)?.then_some(frame))
    }

    /// The first stream offset in `from..before` where a frame starts by the boundary test.
    /// Bytes before the offset examined are dropped as the scan goes.
    ///
    /// # Errors
    /// Reading the source.
    pub(super) fn scan(
        &mut self,
        src: &mut dyn BufRead,
        opts: &ReaderOptions,
        from: u64,
        before: u64,
        stream_end: Option<u64>,
    ) -> io::Result<Option<u64>> {
        let mut p = from;
        while p < before {
            if self.end() < p.saturating_add(12) {
                if self.eof {
                    return Ok(None); // fewer than a header's bytes are left
                }
                self.drop_before(p);
                let more = self.end().saturating_add(SCAN_BLOCK as u64);
                self.fill_to(src, more)?;
                continue;
            }
            // The header test over every position in the bytes at hand, without a call each.
            let window = self.from(p);
            let last = window.len() - 12;
            let stop = usize::try_from(before - p)
                .unwrap_or(usize::MAX)
                .min(last + 1);
            let hit = (0..stop).find(|&i| header_len(&window[i..]).is_some());
            match hit {
                Some(i) => {
                    p += i as u64;
                    if self.frame_at(src, opts, p, stream_end)?.is_some() {
                        return Ok(Some(p));
                    }
                    p += 1;
                }
                None => p += stop as u64,
            }
        }
        Ok(None)
    }

    /// Gives the bytes from stream offset `at` on back to the source, for the reader to read
    /// next.
    pub(super) fn give_back<R: std::io::Read>(mut self, src: &mut Source<R>, at: u64) {
        self.drop_before(at);
        src.unread(self.bytes);
    }

    /// The bytes read ahead, from `base` (nothing is dropped before a scan).
    pub(super) fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Reads the rest of the stream, dropping it; the stream offset where it ends.
    ///
    /// # Errors
    /// Reading the source.
    pub(super) fn read_to_end(&mut self, src: &mut dyn BufRead) -> io::Result<u64> {
        while !self.eof {
            let end = self.end();
            self.drop_before(end);
            self.fill_to(src, end.saturating_add(SCAN_BLOCK as u64))?;
        }
        Ok(self.end())
    }
}
