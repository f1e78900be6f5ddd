//! The byte source under the framing: a record stream read through a buffer, inflated when it
//! is gzip or zlib, and what its errors and first bytes say about it.

use std::io::{self, BufRead, BufReader, Read};

use flate2::{Decompress, FlushDecompress, Status};

use crate::compression::Compression;
use crate::error::{Error, ErrorKind};

/// A record stream as the framing reads it: buffered, and inflated when compressed. It reads
/// as one `BufRead` whose methods pick the variant inline, so that the framing's reads of an
/// uncompressed stream compile to the read buffer's own code.
pub(super) enum Source<R: Read> {
    /// Uncompressed.
    Plain(BufReader<R>),
    /// GZIP (one member or several concatenated) or ZLIB.
    Inflated(Box<Inflate<R>>),
    /// Bytes read ahead while looking for a frame and given back ([`Source::unread`]), served
    /// before the stream goes on.
    Replay(Box<Replay<R>>),
}

/// Bytes given back to a [`Source`], then the source itself.
pub(super) struct Replay<R: Read> {
    bytes: Vec<u8>,
    pos: usize,
    /// Always `Some` outside [`Source::unread`], which moves the source in here.
    inner: Option<Source<R>>,
}

impl<R: Read> Source<R> {
    /// Reads `inner` with `compression`, through read buffers of `size` bytes.
    pub(super) fn new(inner: R, compression: Compression, size: usize) -> Self {
        let inner = BufReader::with_capacity(size, inner);
        match compression {
            Compression::None => Source::Plain(inner),
            Compression::Gzip => Source::Inflated(Box::new(Inflate::new(inner, true, size))),
            Compression::Zlib => Source::Inflated(Box::new(Inflate::new(inner, false, size))),
        }
    }

    /// The (decompressed) stream.
    pub(super) fn buf(&mut self) -> &mut dyn BufRead {
        self
    }

    /// At the end of the records: whether compressed bytes follow the end of a zlib stream,
    /// which has an end marker and no framing after it (gzip members may be concatenated, and
    /// bytes after a member that do not start another are already an error).
    pub(super) fn trailing_data(&mut self) -> io::Result<bool> {
        match self {
            Source::Inflated(r) if !r.dec.gzip => Ok(!r.dec.inner.fill_buf()?.is_empty()),
            Source::Replay(r) if r.pos == r.bytes.len() => match r.inner.as_mut() {
                Some(inner) => inner.trailing_data(),
                None => Ok(false),
            },
            Source::Plain(_) | Source::Inflated(_) | Source::Replay(_) => Ok(false),
        }
    }

    /// Gives bytes back: the next reads return `bytes`, then what the stream held after the
    /// bytes read so far.
    pub(super) fn unread(&mut self, mut bytes: Vec<u8>) {
        if bytes.is_empty() {
            return;
        }
        if let Source::Replay(r) = self {
            // Still to serve: the given bytes, then what was left of earlier ones.
            bytes.extend_from_slice(r.bytes.get(r.pos..).unwrap_or_default());
            r.bytes = bytes;
            r.pos = 0;
            return;
        }
        let replay = Replay {
            bytes,
            pos: 0,
            inner: None,
        };
        let inner = std::mem::replace(self, Source::Replay(Box::new(replay)));
        if let Source::Replay(r) = self {
            r.inner = Some(inner);
        }
    }

    /// Goes back to reading the stream directly once the bytes given back are all read.
    #[inline]
    pub(super) fn settle(&mut self) {
        if let Source::Replay(r) = self
            && r.pos == r.bytes.len()
            && let Some(inner) = r.inner.take()
        {
            *self = inner;
        }
    }
}

impl<R: Read> Read for Source<R> {
    #[inline]
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::Plain(r) => r.read(out),
            Source::Inflated(r) => r.read(out),
            Source::Replay(r) => r.read(out),
        }
    }
}

impl<R: Read> BufRead for Source<R> {
    #[inline]
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self {
            Source::Plain(r) => r.fill_buf(),
            Source::Inflated(r) => r.fill_buf(),
            Source::Replay(r) => r.fill_buf(),
        }
    }

    #[inline]
    fn consume(&mut self, n: usize) {
        match self {
            Source::Plain(r) => r.consume(n),
            Source::Inflated(r) => r.consume(n),
            Source::Replay(r) => r.consume(n),
        }
    }
}

impl<R: Read> Read for Replay<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos < self.bytes.len() {
            let avail = &self.bytes[self.pos..];
            let n = avail.len().min(out.len());
            out[..n].copy_from_slice(&avail[..n]);
            self.pos += n;
            return Ok(n);
        }
        match self.inner.as_mut() {
            Some(inner) => inner.read(out),
            None => Ok(0),
        }
    }
}

impl<R: Read> BufRead for Replay<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos < self.bytes.len() {
            return Ok(&self.bytes[self.pos..]);
        }
        match self.inner.as_mut() {
            Some(inner) => inner.fill_buf(),
            None => Ok(&[]),
        }
    }

    fn consume(&mut self, n: usize) {
        if self.pos < self.bytes.len() {
            self.pos = (self.pos + n).min(self.bytes.len());
        } else if let Some(inner) = self.inner.as_mut() {
            inner.consume(n);
        }
    }
}

/// A gzip or zlib stream inflated through a buffer of its own.
///
/// Every byte the decoder produces before it finds damage is handed out before the error, and
/// the error is then reported at every later read: what comes out before the damage does not
/// depend on the size of the reads. (`flate2`'s `Read` decoders drop the bytes a read inflated
/// when that same read meets the damage, so a large read lost intact records that small reads
/// delivered.) Reads at least as large as the buffer inflate straight into the caller's
/// buffer, as `BufReader` does: an intact stream is not copied twice.
pub(super) struct Inflate<R: Read> {
    dec: Decoder<R>,
    buf: Box<[u8]>,
    pos: usize,
    filled: usize,
}

/// The decoder of an [`Inflate`], apart from its buffer.
struct Decoder<R: Read> {
    /// The compressed stream.
    inner: BufReader<R>,
    state: Decompress,
    /// Gzip members (else one zlib stream).
    gzip: bool,
    /// The zlib stream, or the current gzip member, has ended.
    ended: bool,
    /// The damage found, reported once the bytes inflated before it are read.
    failed: Option<(io::ErrorKind, String)>,
    /// Some compressed input has been read (the stream's first bytes are behind).
    started: bool,
}

impl<R: Read> Inflate<R> {
    fn new(inner: BufReader<R>, gzip: bool, size: usize) -> Self {
        Inflate {
            dec: Decoder {
                inner,
                state: Decoder::<R>::fresh(gzip),
                gzip,
                ended: false,
                failed: None,
                started: false,
            },
            buf: vec![0; size.max(1)].into_boxed_slice(),
            pos: 0,
            filled: 0,
        }
    }
}

impl<R: Read> Decoder<R> {
    fn fresh(gzip: bool) -> Decompress {
        if gzip {
            Decompress::new_gzip(15)
        } else {
            Decompress::new(true)
        }
    }

    /// The damage found, as an error.
    fn failure(&self) -> Option<io::Error> {
        self.failed
            .as_ref()
            .map(|(kind, detail)| io::Error::new(*kind, detail.clone()))
    }

    /// Inflates into `out` (not empty); `Ok(0)` at the end of the stream. Bytes inflated before
    /// damage are returned first; the damage is reported from the next call on.
    fn inflate(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if let Some(e) = self.failure() {
            return Err(e);
        }
        loop {
            let input = self.inner.fill_buf()?;
            let eof = input.is_empty();
            if self.ended {
                if !self.gzip || eof {
                    return Ok(0);
                }
                // Another gzip member follows.
                self.state = Self::fresh(true);
                self.ended = false;
            }
            if eof && self.state.total_in() == 0 && self.state.total_out() == 0 {
                // No compressed byte at all: an empty file holds no records, as TensorFlow's
                // reader reads it (a stream cut short after its first byte is damage).
                return Ok(0);
            }
            let (before_in, before_out) = (self.state.total_in(), self.state.total_out());
            // An uncompressed TFRecord file read as compressed: its first bytes are a frame
            // header (a length and that length's masked CRC), which the error then names.
            let plain_frame = !self.started && starts_like_frame(input);
            self.started = true;
            let flush = if eof {
                FlushDecompress::Finish
            } else {
                FlushDecompress::None
            };
            let ret = self.state.decompress(input, out, flush);
            let consumed = usize::try_from(self.state.total_in() - before_in).unwrap_or(0);
            let produced = usize::try_from(self.state.total_out() - before_out).unwrap_or(0);
            self.inner.consume(consumed);
            match ret {
                Ok(Status::StreamEnd) => {
                    self.ended = true;
                    if produced > 0 {
                        return Ok(produced);
                    }
                }
                Ok(Status::Ok | Status::BufError) if produced > 0 => return Ok(produced),
                Ok(Status::Ok | Status::BufError) if eof => {
                    self.failed = Some((
                        io::ErrorKind::UnexpectedEof,
                        "the compressed data stops before the end of the stream".to_string(),
                    ));
                    return Err(self
                        .failure()
                        .unwrap_or_else(|| io::ErrorKind::Other.into()));
                }
                Ok(Status::Ok | Status::BufError) => {}
                Err(e) => {
                    let mut detail = damage(&e.to_string());
                    if plain_frame {
                        detail.push_str(
                            "; the data starts like an uncompressed TFRecord file; read it \
                             without compression",
                        );
                    }
                    self.failed = Some((io::ErrorKind::InvalidData, detail));
                    if produced > 0 {
                        return Ok(produced);
                    }
                    return Err(self
                        .failure()
                        .unwrap_or_else(|| io::ErrorKind::Other.into()));
                }
            }
        }
    }
}

/// Whether `bytes` start with a TFRecord frame header: a length and its masked CRC-32C (odds
/// of about 2^-32 for other data).
fn starts_like_frame(bytes: &[u8]) -> bool {
    let (Some(len), Some(crc)) = (bytes.get(..8), bytes.get(8..12)) else {
        return false;
    };
    crc == crate::crc::masked_crc32c(len).to_le_bytes()
}

/// What a decoder error says about the damage, in words that do not depend on how the bytes
/// were read: the decoder names a bad code or distance on some paths and not on others, so
/// those are all "invalid compressed data"; header and checksum failures are named.
fn damage(message: &str) -> String {
    let said = |words: &[&str]| words.iter().any(|w| message.contains(w));
    if said(&["incorrect data check", "incorrect length check"]) {
        "the stream's checksum does not match its data".to_string()
    } else if said(&[
        "incorrect header check",
        "header crc mismatch",
        "unknown compression method",
        "unknown header flags",
        "invalid window size",
    ]) {
        "the stream's header is invalid".to_string()
    } else {
        "invalid compressed data".to_string()
    }
}

impl<R: Read> Read for Inflate<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        if self.pos == self.filled && out.len() >= self.buf.len() {
            return self.dec.inflate(out);
        }
        let avail = self.fill_buf()?;
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> BufRead for Inflate<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.filled {
            self.filled = self.dec.inflate(&mut self.buf)?;
            self.pos = 0;
        }
        Ok(&self.buf[self.pos..self.filled])
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.filled);
    }
}

/// An error reading the (decompressed) stream: flate2 reports a damaged, truncated or absent
/// compressed stream as these kinds.
pub(super) fn io_error(e: io::Error, compression: Compression) -> Error {
    let damaged = matches!(
        e.kind(),
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof
    );
    match compression {
        Compression::Gzip | Compression::Zlib if damaged => Error::new(ErrorKind::Compressed {
            compression: compression.name(),
            detail: e.to_string(),
        }),
        _ => Error::from(e),
    }
}

/// Recognizes a few formats that are often mistaken for TFRecord.
pub(super) fn sniff(head: &[u8]) -> Option<&'static str> {
    match head {
        [0x1f, 0x8b, ..] => {
            Some("the data starts like a gzip stream; read it with gzip compression")
        }
        [0x78, 0x01 | 0x5e | 0x9c | 0xda, ..] => {
            Some("the data starts like a zlib stream; read it with zlib compression")
        }
        [b'O', b'b', b'j', 1, ..] => Some("the data starts like an Avro object container file"),
        [b'{' | b'[', ..] => Some("the data starts like JSON text"),
        // An OFRecord frame: a little-endian length of a few bytes up to a few GiB, no
        // checksum, then a `oneflow.OFRecord` whose first field is a map entry.
        [l0, l1, l2, l3, l4, 0, 0, 0, 0x0a, ..] if [*l0, *l1, *l2, *l3, *l4] != [0; 5] => Some(
            "the data starts like an OFRecord file (a length without a checksum); read it as OFRecord",
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn compress(data: &[u8], gzip: bool) -> Vec<u8> {
        let level = flate2::Compression::default();
        if gzip {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), level);
            e.write_all(data).unwrap();
            e.finish().unwrap()
        } else {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), level);
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
    }

    /// Reads everything with reads of `read` bytes through a buffer of `size`: the bytes, and
    /// the error that ended the read (asked twice: it stays).
    fn read_in_steps(bytes: &[u8], gzip: bool, size: usize, read: usize) -> (Vec<u8>, String) {
        let compression = if gzip {
            Compression::Gzip
        } else {
            Compression::Zlib
        };
        let mut src = Source::new(bytes, compression, size);
        let mut out = Vec::new();
        let mut step = vec![0; read];
        loop {
            match src.buf().read(&mut step) {
                Ok(0) => return (out, String::new()),
                Ok(n) => out.extend_from_slice(&step[..n]),
                Err(e) => {
                    let again = src.buf().read(&mut step).unwrap_err();
                    assert_eq!(again.to_string(), e.to_string());
                    return (out, format!("{:?}: {e}", e.kind()));
                }
            }
        }
    }

    #[test]
    fn an_ofrecord_file_is_named_when_read_as_tfrecord() {
        use crate::{Format, RecordReader, RecordWriter, WriterOptions};
        let mut w = RecordWriter::new(Vec::new(), WriterOptions::new().format(Format::OfRecord));
        // A oneflow.OFRecord of one feature, `x`.
        w.write(&[0x0a, 0x07, 0x0a, 0x01, b'x', 0x12, 0x02, 0x2a, 0x00])
            .unwrap();
        let bytes = w.finish().unwrap();
        let err = RecordReader::new(&bytes[..], crate::ReaderOptions::new())
            .next()
            .unwrap()
            .unwrap_err();
        assert!(err.to_string().contains("like an OFRecord file"), "{err}");
        assert_eq!(sniff(&[0; 12]), None);
    }

    #[test]
    fn an_uncompressed_file_read_as_compressed_is_named() {
        use crate::{Compression, RecordReader, RecordWriter, WriterOptions};
        let mut w = RecordWriter::new(Vec::new(), WriterOptions::new());
        w.write(b"a record").unwrap();
        let bytes = w.finish().unwrap();
        for compression in [Compression::Gzip, Compression::Zlib] {
            let opts = crate::ReaderOptions::new().compression(compression);
            let err = RecordReader::new(&bytes[..], opts)
                .next()
                .unwrap()
                .unwrap_err();
            assert!(
                err.to_string()
                    .contains("the data starts like an uncompressed TFRecord file"),
                "{compression:?}: {err}"
            );
        }
        // Damage inside a real compressed stream is not taken for it.
        let mut gz = compress(&bytes, true);
        gz[3] = 0xff; // reserved flag bits: an invalid header
        let (_, err) = read_in_steps(&gz, true, 64, 64);
        assert!(
            err.contains("InvalidData") && !err.contains("uncompressed TFRecord"),
            "{err}"
        );
    }

    #[test]
    fn the_bytes_before_damage_do_not_depend_on_the_read_sizes() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7919 % 251) as u8).collect();
        for gzip in [false, true] {
            let z = compress(&data, gzip);
            let mut damages = vec![z[..z.len() / 2].to_vec(), z[..z.len() - 1].to_vec()];
            for at in [z.len() / 3, z.len() / 2, z.len() - 2] {
                let mut flipped = z.clone();
                flipped[at] ^= 0x21;
                damages.push(flipped);
            }
            for bytes in &damages {
                let want = read_in_steps(bytes, gzip, 64, 1);
                assert!(!want.1.is_empty(), "damage is an error");
                for (size, read) in [(64, 64), (64, 100_000), (1 << 16, 7), (1 << 16, 1 << 20)] {
                    let got = read_in_steps(bytes, gzip, size, read);
                    assert!(
                        got.0 == want.0,
                        "{size} {read}: {} bytes, not {}",
                        got.0.len(),
                        want.0.len()
                    );
                    assert_eq!(got.1, want.1, "{size} {read}");
                }
            }
            assert!(read_in_steps(&z, gzip, 64, 1_000_000) == (data.clone(), String::new()));
        }
    }

    #[test]
    fn an_empty_file_is_an_empty_stream_and_one_byte_is_damage() {
        // As TensorFlow reads a 0-byte GZIP or ZLIB record file: no records, no error.
        for gzip in [false, true] {
            assert_eq!(
                read_in_steps(&[], gzip, 64, 16),
                (Vec::new(), String::new())
            );
            let z = compress(b"data", gzip);
            let cut = read_in_steps(&z[..1], gzip, 64, 16);
            assert!(cut.1.contains("UnexpectedEof"), "{cut:?}");
        }
    }

    #[test]
    fn gzip_members_follow_each_other_and_zlib_trailing_bytes_are_seen() {
        let mut two = compress(b"one ", true);
        two.extend(compress(b"two", true));
        assert_eq!(read_in_steps(&two, true, 64, 3).0, b"one two");
        let mut z = compress(b"zlib", false);
        z.extend_from_slice(b"junk");
        let mut src = Source::new(&z[..], Compression::Zlib, 64);
        let mut out = Vec::new();
        src.buf().read_to_end(&mut out).unwrap();
        assert_eq!(out, b"zlib");
        assert!(src.trailing_data().unwrap());
    }
}
