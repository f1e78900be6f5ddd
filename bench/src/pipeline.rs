//! Batch consumers, and the multi-threaded drivers: threads taking turns at one chunk reader
//! and parsing their chunks, and in-memory batches split over threads.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use tfrecord_core::crc::masked_crc32c;
use tfrecord_core::{Chunk, ReaderOptions, RecordReader, for_each_chunk};

use crate::records::{BATCH, Batcher, Shape, decode};
use crate::sidecar::Sidecar;

/// What one run processed: records read, and rows and values extracted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    /// Records read (or taken from memory).
    pub(crate) records: u64,
    /// Rows that reached the columns.
    pub(crate) rows: u64,
    /// Values that reached the columns.
    pub(crate) values: u64,
}

impl Totals {
    fn add(&mut self, o: Totals) {
        self.records += o.records;
        self.rows += o.rows;
        self.values += o.values;
    }

    /// The totals of a whole run from those of its two halves.
    pub(crate) fn join(
        a: Result<Totals, String>,
        b: Result<Totals, String>,
    ) -> Result<Totals, String> {
        let mut t = a?;
        t.add(b?);
        Ok(t)
    }
}

/// Something that parses whole batches of serialized records.
pub(crate) trait BatchSink: Send {
    /// Parses one batch.
    ///
    /// # Errors
    /// A record that does not decode or does not fit the spec.
    fn batch<R: AsRef<[u8]>>(&mut self, recs: &[R]) -> Result<(), String>;
    /// Checks and parses the records of a chunk of frames (on a worker thread); returns how
    /// many there were. The default gathers them into batches of [`BATCH`] for
    /// [`batch`](Self::batch), the rest at [`finish`](Self::finish).
    ///
    /// # Errors
    /// Framing, checksum and decoding errors.
    fn chunk(&mut self, chunk: &Chunk) -> Result<u64, String>;
    /// Consumes what is left after the last batch.
    ///
    /// # Errors
    /// As [`batch`](Self::batch).
    fn finish(&mut self) -> Result<(), String> {
        Ok(())
    }
    /// Rows and values extracted so far.
    fn totals(&self) -> Totals;
}

/// Records gathered from chunks into batches of [`BATCH`]: the default way a batch parser
/// takes chunks. The buffers are reused.
#[derive(Default)]
pub(crate) struct Gather {
    recs: Vec<Vec<u8>>,
    n: usize,
}

impl Gather {
    /// Copies the chunk's records in, handing each full batch to `parse`.
    pub(crate) fn chunk(
        &mut self,
        chunk: &Chunk,
        mut parse: impl FnMut(&[Vec<u8>]) -> Result<(), String>,
    ) -> Result<u64, String> {
        let mut reader = chunk.records();
        let mut records = 0;
        loop {
            if self.recs.len() == self.n {
                self.recs.push(Vec::new());
            }
            let Some(r) = reader.next_record().map_err(|e| e.to_string())? else {
                return Ok(records);
            };
            let rec = &mut self.recs[self.n];
            rec.clear();
            rec.extend_from_slice(r);
            records += 1;
            self.n += 1;
            if self.n == BATCH {
                parse(&self.recs[..BATCH])?;
                self.n = 0;
            }
        }
    }

    /// Hands the last partial batch to `parse`.
    pub(crate) fn finish(
        &mut self,
        mut parse: impl FnMut(&[Vec<u8>]) -> Result<(), String>,
    ) -> Result<(), String> {
        let n = std::mem::take(&mut self.n);
        if n > 0 {
            parse(&self.recs[..n])
        } else {
            Ok(())
        }
    }
}

/// Derived decode of each record + extraction into per-feature columns.
pub(crate) struct Derived<S: Shape>(Batcher<S::Cols>);

impl<S: Shape> Derived<S> {
    /// Empty columns.
    pub(crate) fn new() -> Self {
        Derived(Batcher::default())
    }

    /// Appends one decoded record.
    #[inline]
    pub(crate) fn push(&mut self, rec: &S::Rec<'_>) {
        S::push(&mut self.0.cols, rec);
        self.0.end_row();
    }
}

impl<S: Shape> BatchSink for Derived<S> {
    fn batch<R: AsRef<[u8]>>(&mut self, recs: &[R]) -> Result<(), String> {
        for r in recs {
            let rec = decode::<S>(r.as_ref()).map_err(|e| e.to_string())?;
            S::push(&mut self.0.cols, &rec);
            self.0.end_row();
        }
        Ok(())
    }
    /// Records are decoded one by one, lent out of the chunk in place, into columns consumed
    /// every [`BATCH`] rows.
    fn chunk(&mut self, chunk: &Chunk) -> Result<u64, String> {
        let mut reader = chunk.records();
        let mut records = 0;
        while let Some(r) = reader.next_record().map_err(|e| e.to_string())? {
            let rec = decode::<S>(r).map_err(|e| e.to_string())?;
            S::push(&mut self.0.cols, &rec);
            self.0.end_row();
            records += 1;
        }
        Ok(records)
    }
    fn finish(&mut self) -> Result<(), String> {
        self.0.flush();
        Ok(())
    }
    fn totals(&self) -> Totals {
        Totals {
            records: 0,
            rows: self.0.total_rows,
            values: self.0.total_values,
        }
    }
}

/// No parse: each record's bytes are only counted (`values` = payload bytes), so
/// [`read_parallel`] with it measures the threads' framing and CRC checks alone.
#[derive(Default)]
pub(crate) struct RawSink(Totals);

impl BatchSink for RawSink {
    fn batch<R: AsRef<[u8]>>(&mut self, recs: &[R]) -> Result<(), String> {
        for r in recs {
            self.0.values += std::hint::black_box(r.as_ref()).len() as u64;
        }
        Ok(())
    }
    fn chunk(&mut self, chunk: &Chunk) -> Result<u64, String> {
        let mut reader = chunk.records();
        let mut records = 0;
        while let Some(r) = reader.next_record().map_err(|e| e.to_string())? {
            self.0.values += std::hint::black_box(r).len() as u64;
            records += 1;
        }
        Ok(records)
    }
    fn totals(&self) -> Totals {
        self.0
    }
}

/// One thread reads batches of [`BATCH`] records and parses each batch before reading the
/// next: the single-threaded driver for batch parsers.
pub(crate) fn read_batches<K: BatchSink>(
    sc: &Sidecar,
    opts: ReaderOptions,
    sink: K,
) -> Result<Totals, String> {
    let reader = RecordReader::open(&sc.path, opts).map_err(|e| e.to_string())?;
    read_batches_from(reader, sink)
}

/// [`read_batches`] from any reader (one half of a file: [`FileHalves`]).
pub(crate) fn read_batches_from<K: BatchSink, R: Read>(
    mut reader: RecordReader<R>,
    mut sink: K,
) -> Result<Totals, String> {
    let mut recs: Vec<Vec<u8>> = (0..BATCH).map(|_| Vec::new()).collect();
    let mut records = 0u64;
    loop {
        let mut n = 0;
        while n < BATCH && reader.read_into(&mut recs[n]).map_err(|e| e.to_string())? {
            n += 1;
        }
        if n > 0 {
            sink.batch(&recs[..n])?;
            records += n as u64;
        }
        if n < BATCH {
            sink.finish()?;
            return Ok(Totals {
                records,
                ..sink.totals()
            });
        }
    }
}

/// An uncompressed record file cut in two where its middle record starts, so that two
/// one-thread readers can each read one half ([`Halves`](crate::timing::Halves)).
pub(crate) struct FileHalves {
    path: PathBuf,
    /// Where half 1 starts, and where the file ends.
    cut: [u64; 2],
}

impl FileHalves {
    /// Finds the start of record `records / 2` by reading the records before it.
    pub(crate) fn new(sc: &Sidecar, opts: ReaderOptions) -> Result<Self, String> {
        let mut reader = RecordReader::open(&sc.path, opts).map_err(|e| e.to_string())?;
        let mut buf = Vec::new();
        for _ in 0..sc.num_records / 2 {
            if !reader.read_into(&mut buf).map_err(|e| e.to_string())? {
                return Err(format!("{}: fewer records than the sidecar says", sc.name));
            }
        }
        let size = std::fs::metadata(&sc.path)
            .map_err(|e| e.to_string())?
            .len();
        Ok(FileHalves {
            path: sc.path.clone(),
            cut: [reader.offset(), size],
        })
    }

    /// The bytes of half 0 or 1, for a reader of them alone.
    pub(crate) fn open(&self, half: usize) -> Result<std::io::Take<File>, String> {
        let (start, end) = if half == 0 {
            (0, self.cut[0])
        } else {
            (self.cut[0], self.cut[1])
        };
        let mut f = File::open(&self.path).map_err(|e| e.to_string())?;
        f.seek(SeekFrom::Start(start)).map_err(|e| e.to_string())?;
        Ok(f.take(end - start))
    }
}

/// Bytes per chunk a worker takes: within the 2 MiB L2 of the core that reads and decodes it,
/// and large enough that waking the other thread at each hand-over of the reader is rare
/// (mnist `mt2` ran 13 % faster than with 256 KiB chunks, paired runs).
const CHUNK_BYTES: usize = 1 << 20;

/// `workers` threads reading and parsing one file with the library's
/// [`for_each_chunk`]: an uncompressed file is cut by `SharedChunks` (each thread
/// copies its own chunk of whole frames out of the file, waits only for the walk over the
/// previous chunk's frame headers to know where its first frame starts, then checks the
/// framing and data CRCs and parses the records into its own columns); a compressed stream
/// inflates in order, the threads taking turns at one `ChunkReader`, each inflating the next
/// chunk while the other checks and parses its own. Each thread finishes its sink itself.
pub(crate) fn read_parallel<K: BatchSink>(
    sc: &Sidecar,
    opts: ReaderOptions,
    workers: usize,
    make: impl Fn() -> K + Sync,
) -> Result<Totals, String> {
    let opts = opts.buffer_size(CHUNK_BYTES);
    let each = |(sink, records): &mut (K, u64), chunk: &Chunk| {
        *records += sink.chunk(chunk)?;
        Ok(())
    };
    let finish = |(mut sink, records): (K, u64)| {
        sink.finish()?;
        Ok(Totals {
            records,
            ..sink.totals()
        })
    };
    let each_thread = for_each_chunk(&sc.path, opts, workers, || (make(), 0), each, finish)
        .map_err(|Failed(e)| e)?;
    let mut t = Totals::default();
    for w in each_thread {
        t.add(w);
    }
    Ok(t)
}

/// An error of [`read_parallel`]: the library's or a sink's, as text.
struct Failed(String);

impl From<tfrecord_core::Error> for Failed {
    fn from(e: tfrecord_core::Error) -> Self {
        Failed(e.to_string())
    }
}

impl From<String> for Failed {
    fn from(e: String) -> Self {
        Failed(e)
    }
}

/// In-memory records split into batches of [`BATCH`], taken by `workers` threads in turn.
pub(crate) fn mem_parallel<K: BatchSink>(
    recs: &[&[u8]],
    workers: usize,
    make: impl Fn() -> K + Sync,
) -> Result<Totals, String> {
    let next = AtomicUsize::new(0);
    let chunks: Vec<&[&[u8]]> = recs.chunks(BATCH).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| -> Result<Totals, String> {
                    let mut sink = make();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(chunk) = chunks.get(i) else { break };
                        sink.batch(chunk)?;
                    }
                    sink.finish()?;
                    Ok(sink.totals())
                })
            })
            .collect();
        let mut t = Totals {
            records: recs.len() as u64,
            ..Totals::default()
        };
        for h in handles {
            t.add(h.join().map_err(|_| "a worker panicked".to_string())??);
        }
        Ok(t)
    })
}

/// The read + framing + CRC limit, as the harness's `frame_crc_file` baseline takes it (not a
/// library op): the whole file read into `whole` (cleared, its capacity reused), then its
/// framing walked by hand and both masked CRC32Cs of every record checked. Returns the records.
pub(crate) fn frame_crc_file(path: &Path, whole: &mut Vec<u8>) -> Result<u64, String> {
    whole.clear();
    File::open(path)
        .and_then(|mut f| f.read_to_end(whole))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let bad = |at: usize, what: &str| format!("{}: byte {at}: {what}", path.display());
    // Little-endian words from slices at least that long.
    let le32 = |b: &[u8]| u32::from_le_bytes(std::array::from_fn(|i| b[i]));
    let le64 = |b: &[u8]| u64::from_le_bytes(std::array::from_fn(|i| b[i]));
    let (mut at, mut records) = (0usize, 0u64);
    while at < whole.len() {
        let head = whole
            .get(at..at + 12)
            .ok_or_else(|| bad(at, "truncated frame header"))?;
        let (len, len_crc) = head.split_at(8);
        if masked_crc32c(len) != le32(len_crc) {
            return Err(bad(at, "length CRC mismatch"));
        }
        let end = usize::try_from(le64(len))
            .ok()
            .and_then(|l| (at + 16).checked_add(l))
            .filter(|&end| end <= whole.len())
            .ok_or_else(|| bad(at, "frame runs past the end of the file"))?;
        let (data, data_crc) = whole[at + 12..end].split_at(end - at - 16);
        if masked_crc32c(data) != le32(data_crc) {
            return Err(bad(at, "data CRC mismatch"));
        }
        std::hint::black_box(data);
        at = end;
        records += 1;
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::frame_crc_file;
    use tfrecord_core::{RecordWriter, WriterOptions};

    #[test]
    fn frame_crc_file_counts_records_and_rejects_a_flipped_bit() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("limit.tfrecord");
        let mut w = RecordWriter::create(&path, WriterOptions::new()).expect("created");
        for i in 0..5u8 {
            w.write(&vec![i; usize::from(i) * 100]).expect("written");
        }
        w.finish().expect("finished");
        let mut whole = Vec::new();
        assert_eq!(frame_crc_file(&path, &mut whole), Ok(5));
        let good = std::fs::read(&path).expect("read back");
        // A payload byte of the last record (4 x 100 bytes, after the first four frames).
        let last = (0..4).map(|i| 16 + i * 100).sum::<usize>();
        for (at, want) in [
            (3, "byte 0: length CRC mismatch"),
            (last + 12 + 7, &format!("byte {last}: data CRC mismatch")),
        ] {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            std::fs::write(&path, &bad).expect("written");
            let err = frame_crc_file(&path, &mut whole).expect_err("the flip is caught");
            assert!(err.ends_with(want), "{err}");
        }
        std::fs::write(&path, &good[..good.len() - 1]).expect("written");
        let err = frame_crc_file(&path, &mut whole).expect_err("the cut is caught");
        assert!(
            err.ends_with("frame runs past the end of the file"),
            "{err}"
        );
    }
}
