//! The framing readers over plain, gzip and zlib streams: every way of reading a record stream
//! must hand out the same records before damage and stop at the same byte offset and record.
//!
//! The input is three option bytes, then the stream:
//!
//! - byte 0: bits 0-1 the compression (1 gzip, 2 zlib, else none), bit 2 OFRecord framing,
//!   bit 3 data checksums not verified, bit 4 a record length limit of 4 times byte 1, bit 5
//!   the readers of a file too (slower: a file is written, and two threads read it);
//! - byte 1: the read buffer, `64 + 4 * byte` bytes;
//! - byte 2: the chunk size, `1 + 3 * byte` bytes.
//!
//! The truth the readers are held to is computed apart from them: the stream inflated in one go
//! by `flate2` (up to where the decoder stops), read as an uncompressed stream. Every reader
//! below must give its records and its error's kind, byte offset and record index:
//! [`RecordReader`] (records copied, lent, and checked apart with [`Unverified::verify`];
//! with the chosen buffer and the default one), [`ChunkReader`] (each chunk through its reader
//! and lent in place), and (with bit 5) on a file [`RecordReader::open`], [`ChunkReader::open`],
//! [`SharedChunks`] and [`for_each_chunk`] on two threads.
//!
//! [`Unverified::verify`]: tfrecord_core::Unverified::verify

use std::io::Write as _;
use std::path::Path;
use std::sync::Mutex;

use tfrecord_core::{
    Chunk, ChunkReader, Compression, Error, ErrorKind, Format, ReaderOptions, RecordReader,
    SharedChunks, for_each_chunk,
};

use super::heap::{self, Bound};

/// The heap bound of one reader over a stream of `n` bytes (inflated, for a compressed one):
/// 8 bytes per byte, for the records handed out (a record's `Vec` is 24 bytes, and an empty
/// record's frame 8 or 16, doubled by the growth of the list of records) and the chunk that
/// holds their frames; plus 8 MiB, for the 1 MiB default read buffer, the compressed stream's
/// buffer and the inflated stream's buffer of the same size, the decoder's window and state,
/// and the 4 MiB a reader reserves at once for a declared record length up to that size.
pub const FRAMING_BOUND: Bound = Bound {
    per_byte: 8,
    fixed: 8 << 20,
};

/// A stream inflating past this many bytes is skipped: the truth is computed in memory.
const MAX_INFLATED: usize = 64 << 20;

/// The records a reader handed out before it stopped, and the error that stopped it.
type Got = (Vec<Vec<u8>>, Option<Error>);

/// An error as every reader must give it: its kind (by name only, for a damaged compressed
/// stream, whose detail is the decoder's), byte offset and record index.
type Where = (String, u64, u64);

fn where_of(err: &Error) -> Where {
    let kind = match err.kind() {
        ErrorKind::Compressed { compression, .. } => format!("Compressed({compression})"),
        other => format!("{other:?}"),
    };
    let offset = err.offset();
    let record = err.record();
    let (Some(offset), Some(record)) = (offset, record) else {
        panic!("a framing error without its byte offset and record index: {err}");
    };
    (kind, offset, record)
}

/// [`where_of`] with the kind's name alone: a reader that knows the file's size words a
/// truncated frame with other counts.
fn loosely(w: &Where) -> (&str, u64, u64) {
    let name = w.0.split([' ', '(', '{']).next().unwrap_or_default();
    (name, w.1, w.2)
}

/// Why the one-go decoder stopped.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stop {
    /// At the end of the (last) stream, with nothing after it.
    End,
    /// At the end of a zlib stream that bytes follow.
    Trailing,
    /// At damage, or where the compressed bytes ran out.
    Damage,
}

/// Everything a decoder inflates from `bytes` before it stops; `None` past [`MAX_INFLATED`].
fn inflate_all(bytes: &[u8], gzip: bool) -> Option<(Vec<u8>, Stop)> {
    let fresh = || {
        if gzip {
            flate2::Decompress::new_gzip(15)
        } else {
            flate2::Decompress::new(true)
        }
    };
    let mut state = fresh();
    let (mut out, mut input) = (Vec::new(), bytes);
    loop {
        if out.len() > MAX_INFLATED {
            return None;
        }
        out.reserve(1 << 16);
        let before = state.total_in();
        let ret = state.decompress_vec(input, &mut out, flate2::FlushDecompress::Finish);
        let used = usize::try_from(state.total_in() - before).unwrap_or(input.len());
        input = &input[used.min(input.len())..];
        match ret {
            Ok(flate2::Status::StreamEnd) if input.is_empty() => return Some((out, Stop::End)),
            // Concatenated gzip members.
            Ok(flate2::Status::StreamEnd) if gzip => state = fresh(),
            Ok(flate2::Status::StreamEnd) => return Some((out, Stop::Trailing)),
            // Room left but no progress: the compressed bytes ran out.
            Ok(_) if out.len() < out.capacity() => return Some((out, Stop::Damage)),
            Ok(_) => {}
            Err(_) => return Some((out, Stop::Damage)),
        }
    }
}

/// What every reader must give for `bytes` read with `opts`: every record whose frame is
/// intact before the damage, then the error at the damage, and the size of the inflated
/// stream. For a compressed stream, the frames the decoder inflates whole before it stops are
/// read as an uncompressed stream; a frame the decoder stopped inside (or the end of what it
/// inflated) is where the compressed stream's error is.
fn truth(bytes: &[u8], opts: &ReaderOptions) -> Option<(Vec<Vec<u8>>, Option<Where>, usize)> {
    let compression = opts.get_compression();
    let (inflated, stop) = match compression {
        Compression::None => (bytes.to_vec(), Stop::End),
        Compression::Gzip => inflate_all(bytes, true)?,
        Compression::Zlib => inflate_all(bytes, false)?,
    };
    let plain = opts.clone().compression(Compression::None);
    let (records, err) = read_all(RecordReader::new(&inflated[..], plain));
    let err = err.as_ref().map(where_of);
    let end = (inflated.len() as u64, records.len() as u64);
    let damaged = || format!("Compressed({})", compression.name());
    let err = match (stop, err) {
        (Stop::End, err) => err,
        (Stop::Trailing, None) => Some(("TrailingData".to_string(), end.0, end.1)),
        (Stop::Damage, None) => Some((damaged(), end.0, end.1)),
        (Stop::Damage, Some((kind, offset, record))) if kind.starts_with("Truncated") => {
            Some((damaged(), offset, record))
        }
        (_, err) => err,
    };
    Some((records, err, inflated.len()))
}

/// Reads every record, copied.
fn read_all<R: std::io::Read>(reader: RecordReader<R>) -> Got {
    let mut got = Vec::new();
    for record in reader {
        match record {
            Ok(r) => got.push(r),
            Err(e) => return (got, Some(e)),
        }
    }
    (got, None)
}

/// Reads every record with `read_lent`, which lends whole buffered frames and copies the rest.
fn read_all_lent<R: std::io::Read>(mut reader: RecordReader<R>) -> Got {
    let mut got = Vec::new();
    let mut scratch = Vec::new();
    loop {
        match reader.read_lent(&mut scratch) {
            Ok(None) => return (got, None),
            Ok(Some(r)) => got.push(r.to_vec()),
            Err(e) => return (got, Some(e)),
        }
    }
}

/// Reads every record with `read_unverified`, checking each data checksum apart when `verify`.
fn read_all_unverified<R: std::io::Read>(mut reader: RecordReader<R>, verify: bool) -> Got {
    let mut got = Vec::new();
    loop {
        let mut buf = Vec::new();
        match reader.read_unverified(&mut buf) {
            Ok(None) => return (got, None),
            Ok(Some(frame)) => {
                if verify && let Err(e) = frame.verify(&buf) {
                    return (got, Some(e));
                }
                got.push(buf);
            }
            Err(e) => return (got, Some(e)),
        }
    }
}

/// Reads a chunk's records through its reader and lent in place, which must agree.
fn read_chunk(chunk: &Chunk) -> Got {
    let via_reader = read_all(chunk.reader());
    let mut in_place = Vec::new();
    let mut records = chunk.records();
    let err = loop {
        match records.next_record() {
            Ok(Some(r)) => in_place.push(r.to_vec()),
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    same(
        &(in_place, err),
        &via_reader,
        "a chunk's records lent in place",
    );
    via_reader
}

/// Reads every chunk in order, each through [`read_chunk`].
fn read_all_chunked<R: std::io::Read>(mut chunks: ChunkReader<R>) -> Got {
    let mut got = Vec::new();
    loop {
        match chunks.next_chunk() {
            Ok(None) => return (got, None),
            Ok(Some(chunk)) => {
                let (records, err) = read_chunk(&chunk);
                got.extend(records);
                if err.is_some() {
                    return (got, err);
                }
            }
            Err(e) => return (got, Some(e)),
        }
    }
}

/// Reads a file's chunks through [`SharedChunks`] on one thread, checking that each follows
/// the last.
fn read_all_shared(path: &Path, opts: ReaderOptions, size: usize) -> Got {
    let chunks = match SharedChunks::open(path, opts, size) {
        Ok(c) => c,
        Err(e) => return (Vec::new(), Some(e)),
    };
    let (mut got, mut offset) = (Vec::new(), 0u64);
    loop {
        match chunks.next_chunk() {
            Ok(None) => return (got, None),
            Ok(Some(chunk)) => {
                assert_eq!(
                    (chunk.offset(), chunk.first_record()),
                    (offset, got.len() as u64),
                    "shared chunks follow each other"
                );
                offset += chunk.bytes().len() as u64;
                let (records, err) = read_chunk(&chunk);
                got.extend(records);
                if err.is_some() {
                    return (got, err);
                }
            }
            Err(e) => return (got, Some(e)),
        }
    }
}

/// Reads a file with [`for_each_chunk`] on two threads: the chunks, put in stream order up to
/// the error, give the records.
fn read_all_parallel(path: &Path, opts: ReaderOptions) -> Got {
    let chunks = Mutex::new(Vec::<(u64, Vec<Vec<u8>>)>::new());
    let each = |(): &mut (), chunk: &Chunk| {
        let (records, err) = read_chunk(chunk);
        chunks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((chunk.offset(), records));
        err.map_or(Ok(()), Err)
    };
    let result = for_each_chunk(path, opts, 2, || (), each, |()| Ok::<_, Error>(()));
    let mut chunks = chunks
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    chunks.sort_by_key(|c| c.0);
    let err = result.err();
    let last = err.as_ref().and_then(Error::offset).unwrap_or(u64::MAX);
    let records = chunks
        .into_iter()
        .take_while(|c| c.0 <= last)
        .flat_map(|c| c.1)
        .collect();
    (records, err)
}

/// Two reads must give the same records and the same error text.
fn same(got: &Got, want: &Got, how: &str) {
    assert!(
        got.0 == want.0,
        "{how}: {} records, not {}",
        got.0.len(),
        want.0.len()
    );
    assert_eq!(
        got.1.as_ref().map(ToString::to_string),
        want.1.as_ref().map(ToString::to_string),
        "{how}: the error"
    );
}

/// The framing readers agree on `data` (see the [module](self) docs).
///
/// # Panics
/// When two readers disagree, a reader disagrees with the stream inflated apart, a reader
/// panics, or the heap grows past [`FRAMING_BOUND`].
pub fn framing(data: &[u8]) {
    let Some((&[mode, buffer, chunk], stream)) = data.split_first_chunk::<3>() else {
        return;
    };
    let compression = match mode & 3 {
        1 => Compression::Gzip,
        2 => Compression::Zlib,
        _ => Compression::None,
    };
    let format = if mode & 4 == 0 {
        Format::TfRecord
    } else {
        Format::OfRecord
    };
    let verify = mode & 8 == 0;
    let mut opts = ReaderOptions::new()
        .format(format)
        .compression(compression)
        .verify_data_crc(verify);
    if mode & 16 != 0 {
        opts = opts.max_record_len(4 * u64::from(buffer));
    }
    let buffer = 64 + 4 * usize::from(buffer);
    let chunk = 1 + 3 * usize::from(chunk);
    let small = opts.clone().buffer_size(buffer);

    let Some((want, want_err, inflated)) = truth(stream, &opts) else {
        return;
    };
    let size = stream.len().max(inflated);
    let measured = |what: &str, read: &dyn Fn() -> Got| {
        let got = heap::within(what, size, FRAMING_BOUND, read);
        assert!(
            got.0 == want,
            "{what}: {} records, not the {} intact ones",
            got.0.len(),
            want.len()
        );
        assert_eq!(got.1.as_ref().map(where_of), want_err, "{what}: the error");
        got
    };

    let name = Path::new("fuzz.tfrecord");
    let reference = measured("RecordReader", &|| {
        read_all(RecordReader::new(stream, small.clone()).with_path(name))
    });
    let checks: [(&str, &dyn Fn() -> Got); 4] = [
        ("RecordReader, default buffer", &|| {
            read_all(RecordReader::new(stream, opts.clone()).with_path(name))
        }),
        ("RecordReader::read_lent", &|| {
            read_all_lent(RecordReader::new(stream, small.clone()).with_path(name))
        }),
        ("RecordReader::read_unverified", &|| {
            let reader = RecordReader::new(stream, small.clone()).with_path(name);
            read_all_unverified(reader, verify)
        }),
        ("ChunkReader", &|| {
            read_all_chunked(ChunkReader::new(stream, small.clone(), chunk).with_path(name))
        }),
    ];
    for (what, read) in checks {
        same(&measured(what, read), &reference, what);
    }

    // On a file: an uncompressed file's size bounds every length, which words truncation
    // errors with other counts.
    if mode & 32 == 0 {
        return;
    }
    let Ok(mut file) = tempfile::NamedTempFile::new() else {
        return;
    };
    if file.write_all(stream).and_then(|()| file.flush()).is_err() {
        return;
    }
    let path = file.path();
    let loose = |what: &str, read: &dyn Fn() -> Got| {
        let got = heap::within(what, size, FRAMING_BOUND, read);
        assert!(
            got.0 == want,
            "{what}: {} records, not the {} intact ones",
            got.0.len(),
            want.len()
        );
        let at = got.1.as_ref().map(where_of);
        assert_eq!(
            at.as_ref().map(loosely),
            want_err.as_ref().map(loosely),
            "{what}: the error"
        );
        got
    };
    let reference = loose(
        "RecordReader::open",
        &|| match RecordReader::open(path, small.clone()) {
            Ok(reader) => read_all(reader),
            Err(e) => (Vec::new(), Some(e)),
        },
    );
    let chunked = || match ChunkReader::open(path, small.clone(), chunk) {
        Ok(chunks) => read_all_chunked(chunks),
        Err(e) => (Vec::new(), Some(e)),
    };
    let parallel = || read_all_parallel(path, small.clone());
    let shared = || read_all_shared(path, small.clone(), chunk);
    let mut on_file: Vec<(&str, &dyn Fn() -> Got)> = vec![
        ("ChunkReader::open", &chunked),
        ("for_each_chunk", &parallel),
    ];
    if compression == Compression::None {
        on_file.push(("SharedChunks", &shared));
    }
    for (what, read) in on_file {
        same(&loose(what, read), &reference, what);
    }
}
