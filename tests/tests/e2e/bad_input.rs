//! Bad input: truncated, corrupted, oversized and foreign files. Every error names the file and
//! the record, a clean end is only ever at a record boundary, and no input makes the reader
//! panic or return data that differs from what was written. Truncations and single-bit flips
//! are tried exhaustively on small files.

use std::path::Path;
use std::time::{Duration, Instant};

use tfrecord_core::crc::masked_crc32c;
use tfrecord_core::{
    Chunk, ChunkReader, Compression, Error, ErrorKind, Format, ReaderOptions, RecordReader,
    RecordWriter, SharedChunks, WriterOptions, for_each_chunk,
};

use crate::support::{fixture, read_all};

/// A small valid file: four records of different sizes, one of them empty.
struct Sample {
    format: Format,
    records: Vec<Vec<u8>>,
    /// The uncompressed stream.
    bytes: Vec<u8>,
    /// Where each frame starts, and the end of the stream last.
    starts: Vec<u64>,
}

impl Sample {
    fn new(format: Format) -> Self {
        let records = vec![
            b"first record".to_vec(),
            Vec::new(),
            (0..=199u8).collect(),
            b"x".to_vec(),
        ];
        let mut writer = RecordWriter::new(Vec::new(), WriterOptions::new().format(format));
        for r in &records {
            writer.write(r).expect("write");
        }
        let bytes = writer.finish().expect("finish");
        let (header, footer) = framing(format);
        let mut starts = vec![0u64];
        for r in &records {
            let last = *starts.last().expect("non-empty");
            starts.push(last + header + r.len() as u64 + footer);
        }
        assert_eq!(*starts.last().expect("non-empty"), bytes.len() as u64);
        Sample {
            format,
            records,
            bytes,
            starts,
        }
    }

    /// The stream compressed as a whole.
    fn compressed(&self, compression: Compression) -> Vec<u8> {
        let opts = WriterOptions::new()
            .format(self.format)
            .compression(compression);
        let mut writer = RecordWriter::new(Vec::new(), opts);
        for r in &self.records {
            writer.write(r).expect("write");
        }
        writer.finish().expect("finish")
    }

    fn opts(&self) -> ReaderOptions {
        ReaderOptions::new().format(self.format)
    }

    /// The index of the record whose frame holds byte `at`.
    fn record_at(&self, at: u64) -> usize {
        self.starts
            .iter()
            .rposition(|&s| s <= at)
            .expect("starts at 0")
    }
}

/// Header and footer sizes of a frame.
fn framing(format: Format) -> (u64, u64) {
    match format {
        Format::TfRecord => (12, 4),
        Format::OfRecord => (8, 0),
    }
}

/// Checks the location and message every reader error must carry.
fn check_location(err: &Error, path: &Path, start: u64, record: usize) {
    assert_eq!(err.path(), Some(path), "{err}");
    assert_eq!(err.offset(), Some(start), "{err}");
    assert_eq!(err.record(), Some(record as u64), "{err}");
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("{}: ", path.display())),
        "the message names the file: {msg}"
    );
}

/// What reading a file cut to `cut` bytes must give: the whole records before the cut, then
/// either a clean end (only when the cut is at a frame boundary) or a truncation error that
/// names the file, the cut record's start and index, and the exact byte counts: the header
/// when it is cut, else the payload and footer expected and the bytes found of them, the same
/// whether the stream's size is known in advance (a file) or not (a pipe, a decompressed
/// stream).
fn check_cut(s: &Sample, cut: u64, (got, err): (Vec<Vec<u8>>, Option<Error>), path: &Path) {
    if let Some(k) = s.starts.iter().position(|&b| b == cut) {
        assert!(
            err.is_none(),
            "cut at boundary {cut}: {}",
            err.expect("checked")
        );
        assert_eq!(got, s.records[..k], "cut {cut}");
        return;
    }
    let k = s.record_at(cut);
    assert_eq!(got, s.records[..k], "cut {cut}");
    let err = err.unwrap_or_else(|| panic!("cut {cut} inside record {k}: no error"));
    let start = s.starts[k];
    let (header, footer) = framing(s.format);
    let len = s.records[k].len() as u64;
    let have = cut - start;
    let expected = if have < header {
        (header, have)
    } else {
        (len + footer, have - header)
    };
    match err.kind() {
        ErrorKind::Truncated { needed, found } => {
            assert_eq!((*needed, *found), expected, "cut {cut}: {err}");
        }
        other => panic!("cut {cut}: expected a truncation, got {other:?}: {err}"),
    }
    check_location(&err, path, start, k);
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("truncated record at byte {start} (record {k})")),
        "{msg}"
    );
}

#[test]
fn every_truncation_of_a_tfrecord_file() {
    let s = Sample::new(Format::TfRecord);
    assert!(s.bytes.len() < 400);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("cut.tfrecord");
    for cut in 0..=s.bytes.len() {
        let part = &s.bytes[..cut];
        std::fs::write(&path, part).expect("write");
        let reader = RecordReader::open(&path, s.opts()).expect("opens");
        check_cut(&s, cut as u64, read_all(reader), &path);
        // From memory, where the size is not known in advance.
        let name = Path::new("memory.tfrecord");
        let reader = RecordReader::new(part, s.opts()).with_path(name);
        check_cut(&s, cut as u64, read_all(reader), name);
    }
}

#[test]
fn every_truncation_of_an_ofrecord_file() {
    let s = Sample::new(Format::OfRecord);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("part-00000");
    for cut in 0..=s.bytes.len() {
        let part = &s.bytes[..cut];
        std::fs::write(&path, part).expect("write");
        let reader = RecordReader::open(&path, s.opts()).expect("opens");
        check_cut(&s, cut as u64, read_all(reader), &path);
        let name = Path::new("memory-part");
        let reader = RecordReader::new(part, s.opts()).with_path(name);
        check_cut(&s, cut as u64, read_all(reader), name);
    }
}

/// What a single-bit flip at byte `at` of a TFRecord stream must give with both checksums
/// verified: the records before the flipped one, then an error about the flipped record.
fn check_flip(s: &Sample, at: u64, (got, err): (Vec<Vec<u8>>, Option<Error>), path: &Path) {
    let k = s.record_at(at);
    let start = s.starts[k];
    assert_eq!(got, s.records[..k], "flip at byte {at}");
    let err = err.unwrap_or_else(|| panic!("flip at byte {at}: no error"));
    check_location(&err, path, start, k);
    let msg = err.to_string();
    let in_header = at - start < 12;
    match (err.kind(), in_header, k) {
        (ErrorKind::NotTfRecord { .. }, true, 0) => {
            assert!(msg.contains("not a TFRecord file"), "{msg}");
        }
        (ErrorKind::Corrupted { what, .. }, true, 1..) => {
            assert_eq!(*what, "length", "{msg}");
            assert!(
                msg.contains(&format!("corrupted record at byte {start} (record {k})")),
                "{msg}"
            );
        }
        (ErrorKind::Corrupted { what, .. }, false, _) => {
            assert_eq!(*what, "data", "{msg}");
            assert!(
                msg.contains(&format!("corrupted record at byte {start} (record {k})")),
                "{msg}"
            );
        }
        (other, _, _) => panic!("flip at byte {at}: unexpected {other:?}: {msg}"),
    }
}

#[test]
fn every_bit_flip_of_a_tfrecord_file() {
    let s = Sample::new(Format::TfRecord);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("flipped.tfrecord");
    let name = Path::new("memory.tfrecord");
    for at in 0..s.bytes.len() {
        for bit in 0..8 {
            let mut bytes = s.bytes.clone();
            bytes[at] ^= 1 << bit;
            std::fs::write(&path, &bytes).expect("write");
            let reader = RecordReader::open(&path, s.opts()).expect("opens");
            check_flip(&s, at as u64, read_all(reader), &path);
            let reader = RecordReader::new(&bytes[..], s.opts()).with_path(name);
            check_flip(&s, at as u64, read_all(reader), name);
        }
    }
}

/// Reads every record with `read_unverified`, checking each data checksum afterwards, as a
/// pipeline that verifies on other threads does.
fn read_all_unverified<R: std::io::Read>(
    mut reader: RecordReader<R>,
) -> (Vec<Vec<u8>>, Option<Error>) {
    let mut got = Vec::new();
    let mut buf = Vec::new();
    loop {
        match reader.read_unverified(&mut buf) {
            Ok(None) => return (got, None),
            Ok(Some(frame)) => {
                if let Err(e) = frame.verify(&buf) {
                    return (got, Some(e));
                }
                got.push(buf.clone());
            }
            Err(e) => return (got, Some(e)),
        }
    }
}

#[test]
fn every_bit_flip_with_the_data_crc_checked_later() {
    let s = Sample::new(Format::TfRecord);
    let name = Path::new("deferred.tfrecord");
    for at in 0..s.bytes.len() {
        for bit in 0..8 {
            let mut bytes = s.bytes.clone();
            bytes[at] ^= 1 << bit;
            let reader = RecordReader::new(&bytes[..], s.opts()).with_path(name);
            let (got, err) = read_all_unverified(reader);
            let now = read_all(RecordReader::new(&bytes[..], s.opts()).with_path(name));
            assert_eq!(
                err.as_ref().map(ToString::to_string),
                now.1.as_ref().map(ToString::to_string),
                "flip at {at}: the same error as read_into"
            );
            check_flip(&s, at as u64, (got, err), name);
        }
    }
}

/// Calls `f` with `bytes` intact, cut at every length, and with every single-bit flip.
fn every_damage(bytes: &[u8], f: impl FnMut(&[u8], &str)) {
    damage(bytes, &[1, 2, 4, 8, 16, 32, 64, 128], f);
}

/// Calls `f` with `bytes` intact, cut at every length, and with each byte XORed with each
/// of `masks` in turn.
fn damage(bytes: &[u8], masks: &[u8], mut f: impl FnMut(&[u8], &str)) {
    f(bytes, "intact");
    for cut in 0..bytes.len() {
        f(&bytes[..cut], &format!("cut at {cut}"));
    }
    for at in 0..bytes.len() {
        for &mask in masks {
            let mut flipped = bytes.to_vec();
            flipped[at] ^= mask;
            f(&flipped, &format!("flip {mask:#04x} at {at}"));
        }
    }
}

/// Asserts that two reads of the same bytes gave the same records and the same error text.
fn assert_same_read(
    got: &(Vec<Vec<u8>>, Option<Error>),
    want: &(Vec<Vec<u8>>, Option<Error>),
    what: &str,
) {
    assert_eq!(got.0, want.0, "{what}");
    assert_eq!(
        got.1.as_ref().map(ToString::to_string),
        want.1.as_ref().map(ToString::to_string),
        "{what}"
    );
}

/// Reads every record with `read_lent`, which lends whole buffered frames and copies the rest.
fn read_all_lent<R: std::io::Read>(mut reader: RecordReader<R>) -> (Vec<Vec<u8>>, Option<Error>) {
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

#[test]
fn lent_records_match_copied_ones_under_every_flip_and_cut() {
    // Buffers smaller than a frame, around one, and the default: frames lent whole, split
    // over refills, and copied.
    let s = Sample::new(Format::TfRecord);
    let name = Path::new("lent.tfrecord");
    let same = |bytes: &[u8], opts: ReaderOptions, what: &str| {
        let lent = read_all_lent(RecordReader::new(bytes, opts.clone()).with_path(name));
        let copied = read_all(RecordReader::new(bytes, opts).with_path(name));
        assert_same_read(&lent, &copied, what);
    };
    for size in [1, 16, 40, 1 << 20] {
        for verify in [true, false] {
            let opts = s.opts().buffer_size(size).verify_data_crc(verify);
            every_damage(&s.bytes, |bytes, what| {
                same(bytes, opts.clone(), &format!("{what}, buffer {size}"));
            });
        }
    }
    let gz = s.compressed(Compression::Gzip);
    for size in [16, 1 << 20] {
        let opts = s.opts().compression(Compression::Gzip).buffer_size(size);
        // One flip per byte: every bit of a compressed stream would take 8x as long.
        damage(&gz, &[0x10], |bytes, what| {
            same(bytes, opts.clone(), &format!("gzip {what}, buffer {size}"));
        });
    }
}

/// Reads a chunk's records through its reader and through `Chunk::records` (lent in place),
/// which must agree record for record and on the error.
fn read_chunk(chunk: &Chunk) -> (Vec<Vec<u8>>, Option<Error>) {
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
    assert_same_read(&(in_place, err), &via_reader, "records lent in place");
    via_reader
}

/// Reads every record through a `ChunkReader` and each chunk's reader, in order.
fn read_all_chunked<R: std::io::Read>(mut chunks: ChunkReader<R>) -> (Vec<Vec<u8>>, Option<Error>) {
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

#[test]
fn chunked_reading_matches_reading_in_turn_under_every_flip_and_cut() {
    let name = Path::new("chunked.tfrecord");
    let same = |bytes: &[u8], opts: ReaderOptions, size: usize, what: &str| {
        let chunks = ChunkReader::new(bytes, opts.clone(), size).with_path(name);
        let chunked = read_all_chunked(chunks);
        let plain = read_all(RecordReader::new(bytes, opts).with_path(name));
        assert_same_read(&chunked, &plain, &format!("{what}, chunks of {size}"));
    };
    for format in [Format::TfRecord, Format::OfRecord] {
        let s = Sample::new(format);
        for size in [1, 30, 100, 1 << 16] {
            every_damage(&s.bytes, |bytes, what| {
                same(bytes, s.opts(), size, &format!("{format:?} {what}"));
            });
        }
        for compression in [Compression::Gzip, Compression::Zlib] {
            let z = s.compressed(compression);
            let opts = s.opts().compression(compression);
            for size in [30, 1 << 16] {
                damage(&z, &[0x10], |bytes, what| {
                    same(
                        bytes,
                        opts.clone(),
                        size,
                        &format!("{compression:?} {what}"),
                    );
                });
                let mut extra = z.clone();
                extra.extend_from_slice(b"junk");
                same(
                    &extra,
                    opts.clone(),
                    size,
                    &format!("{compression:?} trailing bytes"),
                );
            }
        }
    }
}

#[test]
fn chunks_of_a_file_word_errors_as_reading_the_file_does() {
    // `RecordReader::open` knows the file's size, which shapes truncation errors; the chunks of
    // `ChunkReader::open` must say the same.
    let s = Sample::new(Format::TfRecord);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("damaged.tfrecord");
    every_damage(&s.bytes, |bytes, what| {
        std::fs::write(&path, bytes).expect("write");
        let plain = read_all(RecordReader::open(&path, s.opts()).expect("opens"));
        for size in [30, 1 << 16] {
            let chunks = ChunkReader::open(&path, s.opts(), size).expect("opens");
            let got = read_all_chunked(chunks);
            assert_same_read(&got, &plain, &format!("{what}, chunks of {size}"));
        }
    });
}

/// Reads a file through `SharedChunks` on `threads` threads; the chunks, put in file order,
/// must follow each other (offsets and record indices) and give the records and the first
/// error.
fn read_all_shared(
    path: &Path,
    opts: ReaderOptions,
    size: usize,
    threads: usize,
) -> (Vec<Vec<u8>>, Option<Error>) {
    let chunks = SharedChunks::open(path, opts, size).expect("opens");
    // Each chunk: where it starts, its first record and bytes, its records and error.
    type Got = (u64, u64, usize, Vec<Vec<u8>>, Option<Error>);
    let got = std::sync::Mutex::new(Vec::<Got>::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let next = chunks.next_chunk();
                    let mut got = got.lock().expect("no panics");
                    match next {
                        Ok(Some(chunk)) => {
                            let (records, e) = read_chunk(&chunk);
                            let len = chunk.bytes().len();
                            got.push((chunk.offset(), chunk.first_record(), len, records, e));
                        }
                        Ok(None) => break,
                        Err(e) => {
                            got.push((u64::MAX, 0, 0, Vec::new(), Some(e)));
                            break;
                        }
                    }
                }
            });
        }
    });
    let mut got = got.into_inner().expect("no panics");
    got.sort_by_key(|g| g.0);
    let (mut records, mut offset) = (Vec::new(), 0u64);
    for (at, first, len, chunk_records, err) in got {
        if at != u64::MAX {
            assert_eq!(
                (at, first),
                (offset, records.len() as u64),
                "chunks in a row"
            );
            offset += len as u64;
        }
        records.extend(chunk_records);
        if err.is_some() {
            return (records, err);
        }
    }
    (records, None)
}

/// Why a decoder stopped inflating a compressed stream.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stop {
    /// At the end of the (last) stream, with nothing after it.
    End,
    /// At the end of a zlib stream that bytes follow.
    Trailing,
    /// At damage, or where the compressed bytes ran out.
    Damage,
}

/// Everything a decoder inflates from `bytes` before it stops, in as few calls as it takes:
/// what no read of the stream, however small or large its reads, can go past.
fn inflate_all(bytes: &[u8], compression: Compression) -> (Vec<u8>, Stop) {
    if bytes.is_empty() {
        // No compressed byte at all: an empty stream, as TensorFlow reads a 0-byte GZIP or
        // ZLIB file (no records).
        return (Vec::new(), Stop::End);
    }
    let gzip = compression == Compression::Gzip;
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
        out.reserve(1 << 16);
        let before = state.total_in();
        let ret = state.decompress_vec(input, &mut out, flate2::FlushDecompress::Finish);
        let used = usize::try_from(state.total_in() - before).expect("small");
        input = &input[used..];
        match ret {
            Ok(flate2::Status::StreamEnd) if input.is_empty() => return (out, Stop::End),
            // Concatenated gzip members.
            Ok(flate2::Status::StreamEnd) if gzip => state = fresh(),
            Ok(flate2::Status::StreamEnd) => return (out, Stop::Trailing),
            // Room left but no progress: the compressed bytes ran out.
            Ok(_) if out.len() < out.capacity() => return (out, Stop::Damage),
            Ok(_) => {}
            Err(_) => return (out, Stop::Damage),
        }
    }
}

/// An error as every reader must give it: its kind (named only, for a damaged compressed
/// stream, whose detail is the decoder's), byte offset and record index.
type Where = (String, u64, u64);

fn where_of(err: &Error) -> Where {
    let kind = match err.kind() {
        ErrorKind::Compressed { compression, .. } => format!("Compressed({compression})"),
        other => format!("{other:?}"),
    };
    (
        kind,
        err.offset().expect("an offset"),
        err.record().expect("a record"),
    )
}

/// What every reader must give for `bytes` read with `opts`, whatever its buffer and chunk
/// sizes: every record whose frame is intact before the damage, then the error at the damage.
/// For a compressed stream, the frames the decoder inflates whole before it stops are read as
/// an uncompressed stream; a frame the decoder stopped inside (or the end of what it
/// inflated) is where the compressed stream's error is.
fn intact_before_damage(bytes: &[u8], opts: &ReaderOptions) -> (Vec<Vec<u8>>, Option<Where>) {
    let compression = opts.get_compression();
    let (inflated, stop) = match compression {
        Compression::None => (bytes.to_vec(), Stop::End),
        Compression::Gzip | Compression::Zlib => inflate_all(bytes, compression),
    };
    let plain = opts.clone().compression(Compression::None);
    let (records, err) = read_all(RecordReader::new(&inflated[..], plain));
    let err = err.as_ref().map(where_of);
    let end = (inflated.len() as u64, records.len() as u64);
    let err = match (stop, err) {
        (Stop::End, err) => err,
        (Stop::Trailing, None) => Some(("TrailingData".to_string(), end.0, end.1)),
        (Stop::Damage, None) => Some((format!("Compressed({})", compression.name()), end.0, end.1)),
        (Stop::Damage, Some((kind, offset, record))) if kind.starts_with("Truncated") => Some((
            format!("Compressed({})", compression.name()),
            offset,
            record,
        )),
        (_, err) => err,
    };
    (records, err)
}

/// Reads `bytes` with a `RecordReader` (records copied and lent) and a `ChunkReader` (each
/// chunk through its reader and lent in place) with each buffer size and chunk size, and for an
/// uncompressed stream through `SharedChunks` too: every read must give the records intact
/// before the damage and the same error at it.
fn check_every_reader_stops_at_the_damage(
    bytes: &[u8],
    opts: &ReaderOptions,
    buffers: &[usize],
    chunk_sizes: &[usize],
    file: &Path,
    what: &str,
) {
    let (want, want_err) = intact_before_damage(bytes, opts);
    let name = Path::new("damaged.tfrecord");
    let check = |got: &(Vec<Vec<u8>>, Option<Error>), reference: &str, how: &str| {
        assert_eq!(got.0, want, "{what}, {how}: records");
        assert_eq!(
            got.1.as_ref().map(where_of),
            want_err,
            "{what}, {how}: error"
        );
        if let Some(e) = &got.1 {
            assert_eq!(e.to_string(), reference, "{what}, {how}: error text");
        }
    };
    for &buffer in buffers {
        let opts = opts.clone().buffer_size(buffer);
        let plain = read_all(RecordReader::new(bytes, opts.clone()).with_path(name));
        let reference = plain
            .1
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        check(&plain, &reference, &format!("buffer {buffer}"));
        let lent = read_all_lent(RecordReader::new(bytes, opts.clone()).with_path(name));
        check(&lent, &reference, &format!("buffer {buffer}, lent"));
        for &size in chunk_sizes {
            let chunks = ChunkReader::new(bytes, opts.clone(), size).with_path(name);
            let how = format!("buffer {buffer}, chunks of {size}");
            check(&read_all_chunked(chunks), &reference, &how);
        }
        if opts.get_compression() == Compression::None {
            std::fs::write(file, bytes).expect("write");
            let reference = read_all(RecordReader::open(file, opts.clone()).expect("opens"));
            for &size in chunk_sizes {
                let how = format!("buffer {buffer}, shared cells of {size}");
                let got = read_all_shared(file, opts.clone(), size, 2);
                assert_same_read(&got, &reference, &format!("{what}, {how}"));
                assert_eq!(got.0, want, "{what}, {how}: records");
            }
        }
    }
}

#[test]
fn a_damaged_zlib_stream_gives_the_same_intact_records_to_every_reader() {
    // Four records of 40 pseudo-random bytes (so that deflate stores them as literals) in a
    // zlib stream, one byte near its end changed: the readers used to disagree with small
    // read buffers, the chunk reader losing whole records it had inflated in a read that
    // also met the damage.
    let mut seed = 7u32;
    let records: Vec<Vec<u8>> = (0..4)
        .map(|_| {
            (0..40)
                .map(|_| {
                    seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    (seed >> 16) as u8
                })
                .collect()
        })
        .collect();
    let opts = ReaderOptions::new().compression(Compression::Zlib);
    let mut writer = RecordWriter::new(
        Vec::new(),
        WriterOptions::new().compression(Compression::Zlib),
    );
    for r in &records {
        writer.write(r).expect("write");
    }
    let z = writer.finish().expect("finish");
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("unused.tfrecord");
    let mut damaged_somewhere = 0;
    for at in z.len().saturating_sub(40)..z.len() {
        let mut bytes = z.clone();
        bytes[at] ^= 0x10;
        let (got, err) = intact_before_damage(&bytes, &opts);
        if err.is_some() && !got.is_empty() {
            damaged_somewhere += 1;
        }
        let sizes: Vec<usize> = (1..=300).step_by(7).chain([1 << 16]).collect();
        check_every_reader_stops_at_the_damage(
            &bytes,
            &opts,
            &[64, 100, 1 << 20],
            &sizes,
            &file,
            &format!("flip at {at}"),
        );
    }
    assert!(
        damaged_somewhere > 0,
        "some flips are damage after intact records"
    );
}

#[test]
fn every_reader_gives_the_intact_records_before_any_cut_or_flip() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("damaged.tfrecord");
    let buffers = [64, 100, 1 << 20];
    for format in [Format::TfRecord, Format::OfRecord] {
        let s = Sample::new(format);
        every_damage(&s.bytes, |bytes, what| {
            let what = format!("{format:?} {what}");
            check_every_reader_stops_at_the_damage(
                bytes,
                &s.opts(),
                &buffers,
                &[1, 30, 1 << 16],
                &file,
                &what,
            );
        });
        for compression in [Compression::Gzip, Compression::Zlib] {
            let opts = s.opts().compression(compression);
            damage(
                &s.compressed(compression),
                &[0x01, 0x10, 0x80],
                |bytes, what| {
                    let what = format!("{format:?} {compression:?} {what}");
                    check_every_reader_stops_at_the_damage(
                        bytes,
                        &opts,
                        &buffers,
                        &[1, 30, 64, 1 << 16],
                        &file,
                        &what,
                    );
                },
            );
        }
    }
}

mod damage_anywhere {
    use proptest::prelude::*;

    use super::*;

    /// Records of any length up to a few hundred bytes, some random (stored as literals by
    /// deflate), some repetitive (stored as back references).
    fn records() -> impl Strategy<Value = Vec<Vec<u8>>> {
        let record = prop_oneof![
            prop::collection::vec(any::<u8>(), 0..300),
            (any::<u8>(), 0..300usize).prop_map(|(b, n)| vec![b; n]),
        ];
        prop::collection::vec(record, 1..6)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Any records, any compression, any cut or bit flip, any buffer and chunk size: every
        /// reader gives the records intact before the damage and the same error there.
        #[test]
        fn every_reader_gives_the_intact_records_before_the_damage(
            records in records(),
            compression in prop_oneof![
                Just(Compression::None),
                Just(Compression::Gzip),
                Just(Compression::Zlib),
            ],
            ofrecord in any::<bool>(),
            at in any::<prop::sample::Index>(),
            flip in prop::option::of(1u8..=255),
            buffer in prop_oneof![64usize..600, Just(1usize << 20)],
            chunk in prop_oneof![1usize..700, Just(1usize << 16)],
        ) {
            let format = if ofrecord { Format::OfRecord } else { Format::TfRecord };
            let wopts = WriterOptions::new().format(format).compression(compression);
            let mut writer = RecordWriter::new(Vec::new(), wopts);
            for r in &records {
                writer.write(r).expect("write");
            }
            let mut bytes = writer.finish().expect("finish");
            let at = at.index(bytes.len());
            match flip {
                Some(mask) => bytes[at] ^= mask,
                None => bytes.truncate(at),
            }
            let dir = tempfile::tempdir().expect("temp dir");
            let opts = ReaderOptions::new().format(format).compression(compression);
            let what = format!("{format:?} {compression:?}, {flip:?} at {at}");
            check_every_reader_stops_at_the_damage(
                &bytes,
                &opts,
                &[buffer],
                &[chunk],
                &dir.path().join("damaged.tfrecord"),
                &what,
            );
        }
    }
}

#[test]
fn shared_chunks_read_as_reading_the_file_does_on_one_thread_and_two() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("shared.tfrecord");
    for format in [Format::TfRecord, Format::OfRecord] {
        let s = Sample::new(format);
        every_damage(&s.bytes, |bytes, what| {
            std::fs::write(&path, bytes).expect("write");
            let plain = read_all(RecordReader::open(&path, s.opts()).expect("opens"));
            for (size, threads) in [(1, 1), (30, 1), (100, 2), (1 << 16, 2)] {
                let got = read_all_shared(&path, s.opts(), size, threads);
                let at = format!("{format:?} {what}, cells of {size}, {threads} threads");
                assert_same_read(&got, &plain, &at);
            }
        });
    }
    // Compressed files inflate in order: an error naming the file, not a wrong read.
    let err = SharedChunks::open(
        &path,
        ReaderOptions::new().compression(Compression::Gzip),
        64,
    )
    .expect_err("gzip");
    assert!(err.to_string().contains("shared.tfrecord"), "{err}");
}

/// Records with where each starts (byte offset, record index), and the error that ended the
/// read.
type Located = (Vec<(u64, u64, Vec<u8>)>, Option<Error>);

/// Reads a file with `for_each_chunk`: the records of each chunk with where
/// `ChunkRecords` says each starts (byte offset, record index), put in stream order.
fn read_all_parallel(path: &Path, opts: ReaderOptions, threads: usize) -> Located {
    type Chunks = Vec<(u64, Vec<(u64, u64, Vec<u8>)>)>;
    let each = |got: &mut Chunks, chunk: &Chunk| {
        let mut records = chunk.records();
        let mut lent = Vec::new();
        loop {
            let at = (records.offset(), records.records_read());
            let Some(r) = records.next_record()? else {
                break;
            };
            lent.push((at.0, at.1, r.to_vec()));
        }
        got.push((chunk.offset(), lent));
        Ok::<_, Error>(())
    };
    let res = for_each_chunk(path, opts, threads, Chunks::new, each, Ok);
    match res {
        Ok(states) => {
            let mut chunks: Chunks = states.into_iter().flatten().collect();
            chunks.sort_by_key(|c| c.0);
            (chunks.into_iter().flat_map(|c| c.1).collect(), None)
        }
        Err(e) => (Vec::new(), Some(e)),
    }
}

/// Each record of a plain read, with the offset and record count the reader gave before it.
fn read_all_located<R: std::io::Read>(mut reader: RecordReader<R>) -> Located {
    let mut got = Vec::new();
    loop {
        let at = (reader.offset(), reader.records_read());
        let mut buf = Vec::new();
        match reader.read_into(&mut buf) {
            Ok(true) => got.push((at.0, at.1, buf)),
            Ok(false) => return (got, None),
            Err(e) => return (got, Some(e)),
        }
    }
}

#[test]
fn reading_a_file_on_several_threads_gives_what_one_reader_gives() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("parallel.tfrecord");
    let same = |bytes: &[u8], opts: ReaderOptions, what: &str| {
        std::fs::write(&path, bytes).expect("write");
        for (size, threads) in [(64, 1), (64, 2), (64, 0), (100, 3), (1 << 16, 2)] {
            let at = format!("{what}, chunks of {size}, {threads} threads");
            // Buffers of other sizes: how far a damaged compressed stream inflates before its
            // error does not depend on them.
            let plain = read_all_located(RecordReader::open(&path, opts.clone()).expect("opens"));
            let got = read_all_parallel(&path, opts.clone().buffer_size(size), threads);
            // On an error, the one the plain read meets first (then no records come back).
            let err = |r: &(_, Option<Error>)| r.1.as_ref().map(ToString::to_string);
            assert_eq!(err(&got), err(&plain), "{at}");
            if got.1.is_none() {
                assert_eq!(got.0, plain.0, "{at}");
            }
        }
    };
    for format in [Format::TfRecord, Format::OfRecord] {
        let s = Sample::new(format);
        every_damage(&s.bytes, |bytes, what| {
            same(bytes, s.opts(), &format!("{format:?} {what}"));
        });
        for compression in [Compression::Gzip, Compression::Zlib] {
            let opts = s.opts().compression(compression);
            damage(&s.compressed(compression), &[0x10], |bytes, what| {
                same(
                    bytes,
                    opts.clone(),
                    &format!("{format:?} {compression:?} {what}"),
                );
            });
        }
    }
}

#[test]
fn of_several_failing_chunks_the_first_in_the_file_is_reported() {
    // 400 records of 50 bytes in 66-byte frames; the data CRC of records 30 and 45 broken, in
    // chunks of about ten frames one after the other, which the two threads check at once, so
    // that either may fail first.
    let records: Vec<Vec<u8>> = (0..400u32).map(|i| vec![i as u8; 50]).collect();
    let mut writer = RecordWriter::new(Vec::new(), WriterOptions::new());
    for r in &records {
        writer.write(r).expect("write");
    }
    let mut bytes = writer.finish().expect("finish");
    for bad in [30, 45] {
        bytes[bad * 66 + 12] ^= 1;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("two_bad.tfrecord");
    std::fs::write(&path, &bytes).expect("write");
    let want = read_all(RecordReader::open(&path, ReaderOptions::new()).expect("opens"));
    let want = want.1.expect("an error").to_string();
    assert!(want.contains("record 30"), "{want}");
    for compression in [Compression::None, Compression::Gzip] {
        let file = dir.path().join("two_bad.tfrecord.gz");
        let (path, opts) = if compression == Compression::None {
            (path.clone(), ReaderOptions::new())
        } else {
            let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut z, &bytes).expect("gzip");
            std::fs::write(&file, z.finish().expect("gzip")).expect("write");
            (file, ReaderOptions::new().compression(compression))
        };
        for _ in 0..20 {
            let got = read_all_parallel(&path, opts.clone().buffer_size(640), 2);
            let got = got.1.expect("an error").to_string();
            assert_eq!(got.replace(".gz", ""), want, "{compression:?}");
        }
    }
}

#[test]
fn errors_of_the_callers_type_come_back_in_the_order_of_the_stream() {
    #[derive(Debug)]
    enum Mine {
        Read(Error),
        TooLong(u64),
    }
    impl From<Error> for Mine {
        fn from(e: Error) -> Self {
            Mine::Read(e)
        }
    }
    let s = Sample::new(Format::TfRecord);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("mine.tfrecord");
    std::fs::write(&path, &s.bytes).expect("write");
    let each = |(): &mut (), chunk: &Chunk| {
        let mut records = chunk.records();
        loop {
            let index = records.records_read();
            match records.next_record()? {
                Some(r) if r.len() > 100 => return Err(Mine::TooLong(index)),
                Some(_) => {}
                None => return Ok(()),
            }
        }
    };
    let opts = s.opts().buffer_size(64);
    let res = for_each_chunk(&path, opts.clone(), 2, || (), each, Ok);
    assert!(matches!(res, Err(Mine::TooLong(2))), "{res:?}");
    // An error of `finish` on every thread.
    let res = for_each_chunk(
        &path,
        opts,
        2,
        || (),
        |(), _| Ok(()),
        |()| Err::<(), _>(Mine::TooLong(7)),
    );
    assert!(matches!(res, Err(Mine::TooLong(7))), "{res:?}");
    let missing = dir.path().join("missing.tfrecord");
    let res = for_each_chunk(&missing, s.opts(), 2, || (), |(), _| Ok(()), Ok);
    assert!(
        matches!(&res, Err(Mine::Read(e)) if e.to_string().contains("missing.tfrecord")),
        "{res:?}"
    );
    // A stream that fails to inflate: the reader's error comes before any error of `finish`,
    // whichever thread meets which.
    let gz = dir.path().join("cut.tfrecord.gz");
    let z = s.compressed(Compression::Gzip);
    std::fs::write(&gz, &z[..z.len() - 10]).expect("write");
    let opts = s.opts().compression(Compression::Gzip).buffer_size(64);
    for _ in 0..20 {
        let each = |(): &mut (), chunk: &Chunk| {
            let mut records = chunk.records();
            while records.next_record()?.is_some() {}
            Ok(())
        };
        let finish = |()| Err::<(), _>(Mine::TooLong(7));
        let res = for_each_chunk(&gz, opts.clone(), 3, || (), each, finish);
        assert!(
            matches!(&res, Err(Mine::Read(e)) if e.is_io(std::io::ErrorKind::UnexpectedEof) || e.to_string().contains("gzip")),
            "{res:?}"
        );
    }
}

#[test]
fn a_panic_on_a_reading_thread_reaches_the_caller() {
    let s = Sample::new(Format::TfRecord);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("panics.tfrecord");
    std::fs::write(&path, &s.bytes).expect("write");
    for threads in [1, 2] {
        let res = std::panic::catch_unwind(|| {
            let each = |(): &mut (), chunk: &Chunk| {
                assert!(chunk.first_record() < 2, "a panic in `each`");
                Ok::<_, Error>(())
            };
            for_each_chunk(&path, s.opts().buffer_size(64), threads, || (), each, Ok)
        });
        let payload = res.expect_err("the panic is resumed");
        let text = payload.downcast_ref::<&str>().copied();
        assert_eq!(text, Some("a panic in `each`"), "{threads} threads");
    }
}

#[cfg(unix)]
#[test]
fn a_pipe_read_on_several_threads_gives_every_record() {
    // A pipe has no size to cut into cells: its chunks are read in order, not taken as empty.
    let s = Sample::new(Format::TfRecord);
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("records.pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo: {made}");
    let through_pipe = |bytes: &[u8]| {
        std::thread::scope(|scope| {
            scope.spawn(|| std::fs::write(&fifo, bytes).expect("write to the pipe"));
            read_all_parallel(&fifo, s.opts().buffer_size(64), 2)
        })
    };
    let got = through_pipe(&s.bytes);
    let want = read_all_located(RecordReader::new(&s.bytes[..], s.opts()));
    assert!(got.1.is_none() && want.1.is_none(), "{:?}", got.1);
    assert_eq!(got.0, want.0);
    assert_eq!(got.0.len(), s.records.len());
    // Cut short, it ends in the error a reader of a stream of unknown size gives.
    let cut = &s.bytes[..s.bytes.len() - 3];
    let (_, err) = through_pipe(cut);
    let want = read_all(RecordReader::new(cut, s.opts()).with_path(&fifo));
    assert_eq!(err.map(|e| e.to_string()), want.1.map(|e| e.to_string()));
    // A directory is an error naming it, whichever way it is read.
    let err = SharedChunks::open(dir.path(), s.opts(), 64).expect_err("a directory");
    assert_eq!(err.path(), Some(dir.path()), "{err}");
    let err = read_all_parallel(dir.path(), s.opts(), 2).1;
    let err = err.expect("a directory does not read");
    assert_eq!(err.path(), Some(dir.path()), "{err}");
}

#[test]
fn a_record_failing_its_crc_is_not_counted_by_any_read() {
    let s = Sample::new(Format::TfRecord);
    let mut bytes = s.bytes.clone();
    bytes[14] ^= 1; // the first record's payload
    let mut r = RecordReader::new(&bytes[..], s.opts());
    assert!(r.read_into(&mut Vec::new()).is_err());
    assert_eq!((r.records_read(), r.offset()), (0, 0));
    let mut r = RecordReader::new(&bytes[..], s.opts());
    assert!(r.read_lent(&mut Vec::new()).is_err());
    assert_eq!((r.records_read(), r.offset()), (0, 0));
}

#[test]
fn bit_flips_without_data_crc_check() {
    // The data checksum is skipped, so a flipped payload bit comes through; the length
    // checksum is still verified, so the framing is never lost.
    let s = Sample::new(Format::TfRecord);
    let name = Path::new("unchecked.tfrecord");
    let opts = s.opts().verify_data_crc(false);
    for at in 0..s.bytes.len() {
        for bit in 0..8 {
            let mut bytes = s.bytes.clone();
            bytes[at] ^= 1 << bit;
            let reader = RecordReader::new(&bytes[..], opts.clone()).with_path(name);
            let (got, err) = read_all(reader);
            let k = s.record_at(at as u64);
            let start = s.starts[k];
            let off = at as u64 - start;
            let len = s.records[k].len() as u64;
            if off < 12 {
                let err = err.unwrap_or_else(|| panic!("length flip at {at}: no error"));
                check_location(&err, name, start, k);
                assert!(
                    matches!(
                        err.kind(),
                        ErrorKind::Corrupted { what: "length", .. } | ErrorKind::NotTfRecord { .. }
                    ),
                    "{err}"
                );
                assert_eq!(got, s.records[..k]);
            } else if off < 12 + len {
                assert!(err.is_none(), "{}", err.expect("checked"));
                let mut want = s.records.clone();
                let i = usize::try_from(off - 12).expect("small");
                want[k][i] ^= 1 << bit;
                assert_eq!(got, want, "flip at {at}");
            } else {
                assert!(err.is_none(), "{}", err.expect("checked"));
                assert_eq!(got, s.records, "data checksum flip at {at}");
            }
        }
    }
}

#[test]
fn every_bit_flip_of_an_ofrecord_file() {
    // OFRecord has no checksum: a payload flip comes through, a length flip may reframe the
    // rest of the file. Neither may panic, and the records before the flip are intact.
    let s = Sample::new(Format::OfRecord);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("part-00001");
    for at in 0..s.bytes.len() {
        for bit in 0..8 {
            let mut bytes = s.bytes.clone();
            bytes[at] ^= 1 << bit;
            std::fs::write(&path, &bytes).expect("write");
            let reader = RecordReader::open(&path, s.opts()).expect("opens");
            let (got, err) = read_all(reader);
            let k = s.record_at(at as u64);
            let start = s.starts[k];
            let off = at as u64 - start;
            if off < 8 {
                assert!(got.len() >= k, "flip at {at}");
                assert_eq!(got[..k], s.records[..k], "flip at {at}");
                if let Some(err) = &err {
                    assert_eq!(err.path(), Some(path.as_path()));
                }
                if off == 7 && bit == 7 {
                    let err = err.expect("a negative length is an error");
                    check_location(&err, &path, start, k);
                    assert!(
                        matches!(err.kind(), ErrorKind::NegativeLength { declared } if *declared < 0),
                        "{err}"
                    );
                    assert!(
                        err.to_string().contains("declares negative length"),
                        "{err}"
                    );
                }
            } else {
                assert!(err.is_none(), "{}", err.expect("checked"));
                let mut want = s.records.clone();
                let i = usize::try_from(off - 8).expect("small");
                want[k][i] ^= 1 << bit;
                assert_eq!(got, want, "flip at {at}");
            }
        }
    }
}

/// A compressed file that was cut or flipped reads either as the original records or as an
/// error naming the file after some of the original records; never other data.
fn check_compressed(
    s: &Sample,
    (got, err): (Vec<Vec<u8>>, Option<Error>),
    path: &Path,
    what: &str,
) -> bool {
    match err {
        None => {
            assert_eq!(got, s.records, "{what}: no error but different records");
            false
        }
        Some(err) => {
            // The error may come after every record was read, when only the end of the
            // compressed stream (its checksum) is damaged or missing.
            assert!(got.len() <= s.records.len(), "{what}: {err}");
            assert_eq!(got, s.records[..got.len()], "{what}: {err}");
            assert_eq!(err.path(), Some(path), "{what}: {err}");
            assert!(
                err.to_string().contains(&path.display().to_string()),
                "{err}"
            );
            true
        }
    }
}

fn cut_and_flip_compressed(compression: Compression, name: &str) {
    let s = Sample::new(Format::TfRecord);
    let compressed = s.compressed(compression);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    assert_eq!(Compression::from_path(&path), compression);
    // A small buffer: the file is tiny, and this loop opens thousands of readers.
    let opts = ReaderOptions::for_path(&path).buffer_size(4096);

    // Every truncation: only the empty file (no stream at all) and the whole file may read
    // cleanly; any other cut loses the end of the compressed stream and is an error.
    for cut in 0..=compressed.len() {
        std::fs::write(&path, &compressed[..cut]).expect("write");
        let reader = RecordReader::open(&path, opts.clone()).expect("opens");
        let (got, err) = read_all(reader);
        if cut == 0 {
            assert!(got.is_empty(), "an empty file has no records");
            if let Some(err) = &err {
                assert_eq!(err.path(), Some(path.as_path()));
            }
            continue;
        }
        let failed = check_compressed(&s, (got, err), &path, &format!("{name} cut {cut}"));
        assert_eq!(failed, cut < compressed.len(), "{name} cut {cut}");
    }

    // Every single-bit flip: the stream's own checksum (gzip CRC-32, zlib Adler-32) and the
    // TFRecord checksums leave no way for changed data to come through.
    let mut errors = 0;
    for at in 0..compressed.len() {
        for bit in 0..8 {
            let mut bytes = compressed.clone();
            bytes[at] ^= 1 << bit;
            std::fs::write(&path, &bytes).expect("write");
            let reader = RecordReader::open(&path, opts.clone()).expect("opens");
            let what = format!("{name} flip {at}.{bit}");
            if check_compressed(&s, read_all(reader), &path, &what) {
                errors += 1;
            }
            // Without the data checksum, a changed record can come through before the stream's
            // own checksum (checked at its end) fails; but the damage is still reported: the
            // read never ends cleanly with other data.
            let reader =
                RecordReader::new(&bytes[..], opts.clone().verify_data_crc(false)).with_path(&path);
            let (got, err) = read_all(reader);
            match err {
                None => assert_eq!(got, s.records, "{what} (data crc off): different data"),
                Some(err) => assert_eq!(err.path(), Some(path.as_path()), "{what}: {err}"),
            }
        }
    }
    // Most flips must be detected (some header bits, like gzip's MTIME or OS, are not data).
    assert!(
        errors > compressed.len() * 8 * 3 / 4,
        "{name}: {errors} errors"
    );
}

#[test]
fn every_truncation_and_bit_flip_of_a_gzip_file() {
    cut_and_flip_compressed(Compression::Gzip, "sample.tfrecord.gz");
}

#[test]
fn every_truncation_and_bit_flip_of_a_zlib_file() {
    cut_and_flip_compressed(Compression::Zlib, "sample.tfrecord.zlib");
}

/// A 20-byte file whose first frame declares a length of 2^60 with a valid length checksum.
fn huge_length_file() -> Vec<u8> {
    let len = 1u64 << 60;
    let mut bytes = len.to_le_bytes().to_vec();
    bytes.extend_from_slice(&masked_crc32c(&len.to_le_bytes()).to_le_bytes());
    bytes.extend_from_slice(b"8 bytes!");
    assert_eq!(bytes.len(), 20);
    bytes
}

#[test]
fn a_huge_declared_length_is_an_error_without_allocating_it() {
    // Allocating 2^60 bytes would abort the test process, so an error here also shows that
    // the length was never allocated.
    let bytes = huge_length_file();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("huge.tfrecord");
    std::fs::write(&path, &bytes).expect("write");
    let started = Instant::now();

    // Over the default 1 GiB limit.
    let (got, err) = read_all(RecordReader::open(&path, ReaderOptions::new()).expect("opens"));
    assert!(got.is_empty());
    let err = err.expect("an error");
    check_location(&err, &path, 0, 0);
    match err.kind() {
        ErrorKind::LengthTooLarge {
            declared,
            limit,
            bound,
        } => {
            assert_eq!(*declared, 1 << 60);
            assert_eq!(*limit, 1 << 30);
            assert_eq!(*bound, "limit");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string()
            .contains("record at byte 0 (record 0) declares length 1152921504606846976"),
        "{err}"
    );

    // With no limit, the file size bounds the length: truncated.
    let opts = ReaderOptions::new().max_record_len(u64::MAX);
    let (got, err) = read_all(RecordReader::open(&path, opts.clone()).expect("opens"));
    assert!(got.is_empty());
    let err = err.expect("an error");
    check_location(&err, &path, 0, 0);
    assert!(
        matches!(err.kind(), ErrorKind::Truncated { needed, found: 8 } if *needed == (1 << 60) + 4),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("truncated record at byte 0"),
        "{err}"
    );

    // From a reader whose size is unknown (a byte slice, a pipe): the payload is only read
    // as far as bytes arrive, then it is truncated, with the same counts as from the file.
    let name = Path::new("stdin");
    let (got, err) = read_all(RecordReader::new(&bytes[..], opts).with_path(name));
    assert!(got.is_empty());
    let err = err.expect("an error");
    check_location(&err, name, 0, 0);
    assert!(
        matches!(err.kind(), ErrorKind::Truncated { needed, found: 8 } if *needed == (1 << 60) + 4),
        "{err:?}"
    );
    // And with the default limit from memory: over the limit.
    let (_, err) = read_all(RecordReader::new(&bytes[..], ReaderOptions::new()));
    assert!(matches!(
        err.expect("an error").kind(),
        ErrorKind::LengthTooLarge { .. }
    ));
    assert!(started.elapsed() < Duration::from_secs(5), "not quick");

    // The same length as an OFRecord frame, and a gzip-compressed stream of the huge frame.
    let mut of = (1i64 << 60).to_le_bytes().to_vec();
    of.extend_from_slice(b"tail");
    let opts = ReaderOptions::new()
        .format(Format::OfRecord)
        .max_record_len(u64::MAX);
    let (_, err) = read_all(RecordReader::new(&of[..], opts));
    assert!(matches!(
        err.expect("an error").kind(),
        ErrorKind::Truncated { found: 4, .. }
    ));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &bytes).expect("compress");
    let gz = gz.finish().expect("finish");
    let path = dir.path().join("huge.tfrecord.gz");
    std::fs::write(&path, &gz).expect("write");
    let opts = ReaderOptions::for_path(&path).max_record_len(u64::MAX);
    let (_, err) = read_all(RecordReader::open(&path, opts).expect("opens"));
    let err = err.expect("an error");
    check_location(&err, &path, 0, 0);
    assert!(matches!(err.kind(), ErrorKind::Truncated { .. }), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5), "not quick");
}

#[test]
fn max_record_len_is_a_configurable_limit() {
    let s = Sample::new(Format::TfRecord);
    let longest = 200;
    let path = Path::new("limited.tfrecord");
    // At the limit: fine.
    let opts = ReaderOptions::new().max_record_len(longest);
    let (got, err) = read_all(RecordReader::new(&s.bytes[..], opts).with_path(path));
    assert!(err.is_none());
    assert_eq!(got, s.records);
    // One below: the 200-byte record (record 2) is refused, the ones before it are read.
    let opts = ReaderOptions::new().max_record_len(longest - 1);
    let (got, err) = read_all(RecordReader::new(&s.bytes[..], opts).with_path(path));
    assert_eq!(got, s.records[..2]);
    let err = err.expect("an error");
    check_location(&err, path, s.starts[2], 2);
    assert!(
        matches!(
            err.kind(),
            ErrorKind::LengthTooLarge {
                declared: 200,
                limit: 199,
                bound: "limit"
            }
        ),
        "{err:?}"
    );
    let want = format!(
        "limited.tfrecord: record at byte {} (record 2) declares length 200, larger than the limit \
         (199; raised by ReaderOptions::max_record_len, the CLI's --max-record-len)",
        s.starts[2]
    );
    assert_eq!(err.to_string(), want);
    // The same for OFRecord framing.
    let of = Sample::new(Format::OfRecord);
    let opts = of.opts().max_record_len(12);
    let (got, err) = read_all(RecordReader::new(&of.bytes[..], opts));
    assert_eq!(got, of.records[..2]);
    assert!(matches!(
        err.expect("an error").kind(),
        ErrorKind::LengthTooLarge {
            declared: 200,
            limit: 12,
            ..
        }
    ));
}

/// Reads a file that is not TFRecord and returns the error.
fn read_garbage(path: &Path) -> Error {
    let (got, err) = read_all(RecordReader::open(path, ReaderOptions::new()).expect("opens"));
    assert!(got.is_empty(), "{}", path.display());
    let err = err.unwrap_or_else(|| panic!("{}: no error", path.display()));
    check_location(&err, path, 0, 0);
    let msg = err.to_string();
    assert!(msg.contains("not a TFRecord file"), "{msg}");
    err
}

/// The error for a file that is not TFRecord names the byte offset it failed at, as every other
/// error does.
#[test]
fn not_tfrecord_names_the_byte_offset() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("text.tfrecord");
    std::fs::write(&path, b"plain text, sixteen bytes or more").expect("writes");
    let msg = read_garbage(&path).to_string();
    assert!(
        msg.contains("not a TFRecord file at byte 0 (record 0): the first record's length"),
        "{msg}"
    );
}

fn hint(err: &Error) -> Option<&'static str> {
    match err.kind() {
        ErrorKind::NotTfRecord { hint } => *hint,
        other => panic!("not NotTfRecord: {other:?}"),
    }
}

#[test]
fn garbage_is_not_a_tfrecord_file() {
    let dir = tempfile::tempdir().expect("temp dir");

    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "These are just some notes, not records at all.\n").expect("write");
    assert_eq!(hint(&read_garbage(&text)), None);

    // Pseudo-random bytes (a fixed LCG, so the test is deterministic).
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let random: Vec<u8> = (0..4096)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            x.to_be_bytes()[0]
        })
        .collect();
    let random_path = dir.path().join("random.bin");
    std::fs::write(&random_path, &random).expect("write");
    read_garbage(&random_path);

    let json = read_garbage(&fixture("examples.json"));
    assert!(hint(&json).is_some_and(|h| h.contains("JSON")), "{json}");

    let gz = read_garbage(&fixture("raw_records.tfrecord.gz"));
    assert!(hint(&gz).is_some_and(|h| h.contains("gzip")), "{gz}");
    assert!(gz.to_string().contains("raw_records.tfrecord.gz"));

    let zlib = read_garbage(&fixture("raw_records.tfrecord.zlib"));
    assert!(hint(&zlib).is_some_and(|h| h.contains("zlib")), "{zlib}");

    // A record file in the wrong framing is not TFRecord either.
    read_garbage(&fixture("part-00000"));

    // Garbage after valid records is a corrupted record, not "not a TFRecord file".
    let s = Sample::new(Format::TfRecord);
    let mut bytes = s.bytes.clone();
    bytes.extend_from_slice(b"trailing garbage");
    let path = dir.path().join("trailing.tfrecord");
    std::fs::write(&path, &bytes).expect("write");
    let (got, err) = read_all(RecordReader::open(&path, ReaderOptions::new()).expect("opens"));
    assert_eq!(got, s.records);
    let err = err.expect("an error");
    check_location(&err, &path, s.starts[4], 4);
    assert!(
        matches!(err.kind(), ErrorKind::Corrupted { what: "length", .. }),
        "{err}"
    );
}

#[test]
fn ofrecord_negative_length_is_an_error() {
    for declared in [-1i64, i64::MIN, -(1 << 40)] {
        let s = Sample::new(Format::OfRecord);
        let mut bytes = s.bytes.clone();
        bytes.extend_from_slice(&declared.to_le_bytes());
        bytes.extend_from_slice(b"payload");
        let path = Path::new("negative/part-00000");
        let (got, err) = read_all(RecordReader::new(&bytes[..], s.opts()).with_path(path));
        assert_eq!(got, s.records);
        let err = err.expect("an error");
        check_location(&err, path, s.starts[4], 4);
        assert!(
            matches!(err.kind(), ErrorKind::NegativeLength { declared: d } if *d == declared),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .contains(&format!("(record 4) declares negative length {declared}")),
            "{err}"
        );
    }
}

#[test]
fn unchecked_data_crc_still_checks_the_length_crc() {
    let s = Sample::new(Format::TfRecord);
    // Break record 2's data checksum and record 3's length checksum.
    let mut bytes = s.bytes.clone();
    let data_crc = usize::try_from(s.starts[3]).expect("small") - 1;
    bytes[data_crc] ^= 0x10;
    let len_crc = usize::try_from(s.starts[3]).expect("small") + 9;
    bytes[len_crc] ^= 0x01;
    let path = Path::new("both.tfrecord");

    let (got, err) = read_all(RecordReader::new(&bytes[..], ReaderOptions::new()).with_path(path));
    assert_eq!(got, s.records[..2]);
    let err = err.expect("data checksum error");
    check_location(&err, path, s.starts[2], 2);
    match err.kind() {
        ErrorKind::Corrupted {
            what,
            stored,
            computed,
        } => {
            assert_eq!(*what, "data");
            assert_eq!(*computed, masked_crc32c(&s.records[2]));
            assert_eq!(*stored, computed ^ 0x1000_0000);
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("data checksum mismatch"), "{err}");

    let opts = ReaderOptions::new().verify_data_crc(false);
    let (got, err) = read_all(RecordReader::new(&bytes[..], opts).with_path(path));
    assert_eq!(got, s.records[..3]);
    let err = err.expect("length checksum error");
    check_location(&err, path, s.starts[3], 3);
    assert!(
        matches!(err.kind(), ErrorKind::Corrupted { what: "length", .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("length checksum mismatch"),
        "{err}"
    );
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("missing.tfrecord");
    let Err(err) = RecordReader::open(&path, ReaderOptions::new()) else {
        panic!("opened a missing file");
    };
    assert!(err.is_io(std::io::ErrorKind::NotFound), "{err}");
    assert_eq!(err.path(), Some(path.as_path()));
    assert!(err.to_string().contains("missing.tfrecord"), "{err}");
}

#[test]
fn a_directory_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let err = match RecordReader::open(dir.path(), ReaderOptions::new()) {
        Err(err) => err,
        Ok(reader) => {
            let (got, err) = read_all(reader);
            assert!(got.is_empty());
            err.expect("reading a directory fails")
        }
    };
    assert!(matches!(err.kind(), ErrorKind::Io(_)), "{err}");
    assert_eq!(err.path(), Some(dir.path()));
}

#[test]
fn gzip_with_trailing_garbage_is_an_error_after_the_records() {
    let s = Sample::new(Format::TfRecord);
    let mut bytes = s.compressed(Compression::Gzip);
    bytes.extend_from_slice(b"this is not another gzip member");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("trailing.tfrecord.gz");
    std::fs::write(&path, &bytes).expect("write");
    let reader = RecordReader::open(&path, ReaderOptions::for_path(&path)).expect("opens");
    let (got, err) = read_all(reader);
    assert_eq!(got, s.records);
    let err = err.expect("the garbage is reported");
    check_location(&err, &path, s.starts[4], 4);
    assert!(
        matches!(
            err.kind(),
            ErrorKind::Compressed {
                compression: "gzip",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn an_empty_file_has_no_records() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, format) in [
        ("empty.tfrecord", Format::TfRecord),
        ("part-empty", Format::OfRecord),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, b"").expect("write");
        let opts = ReaderOptions::new().format(format);
        let mut reader = RecordReader::open(&path, opts).expect("opens");
        let mut buf = vec![1, 2, 3];
        assert!(!reader.read_into(&mut buf).expect("clean end"));
        assert!(buf.is_empty());
        assert_eq!(reader.records_read(), 0);
    }
}
