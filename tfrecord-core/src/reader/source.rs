//! The byte source under the framing: a record stream read through a buffer, inflated when it
//! is gzip or zlib, and what its errors and first bytes say about it.

use std::io::{self, BufRead, BufReader, Read};

use flate2::bufread::{MultiGzDecoder, ZlibDecoder};

use crate::compression::Compression;
use crate::error::{Error, ErrorKind};

/// A record stream as the framing reads it: buffered, and inflated when compressed.
pub(super) enum Source<R: Read> {
    /// Uncompressed.
    Plain(BufReader<R>),
    /// GZIP, one member or several concatenated.
    Gzip(BufReader<MultiGzDecoder<BufReader<R>>>),
    /// ZLIB.
    Zlib(BufReader<ZlibDecoder<BufReader<R>>>),
}

impl<R: Read> Source<R> {
    /// Reads `inner` with `compression`, through read buffers of `size` bytes.
    pub(super) fn new(inner: R, compression: Compression, size: usize) -> Self {
        match compression {
            Compression::None => Source::Plain(BufReader::with_capacity(size, inner)),
            Compression::Gzip => Source::Gzip(BufReader::with_capacity(
                size,
                MultiGzDecoder::new(BufReader::with_capacity(size, inner)),
            )),
            Compression::Zlib => Source::Zlib(BufReader::with_capacity(
                size,
                ZlibDecoder::new(BufReader::with_capacity(size, inner)),
            )),
        }
    }

    /// The (decompressed) stream.
    pub(super) fn buf(&mut self) -> &mut dyn BufRead {
        match self {
            Source::Plain(r) => r,
            Source::Gzip(r) => r,
            Source::Zlib(r) => r,
        }
    }

    /// At the end of the records: whether compressed bytes follow the end of a zlib stream,
    /// which has an end marker and no framing after it (gzip members may be concatenated, and
    /// its decoder already rejects garbage).
    pub(super) fn trailing_data(&mut self) -> io::Result<bool> {
        match self {
            Source::Zlib(r) => Ok(!r.get_mut().get_mut().fill_buf()?.is_empty()),
            Source::Plain(_) | Source::Gzip(_) => Ok(false),
        }
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
        _ => None,
    }
}
