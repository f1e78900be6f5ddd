//! Batch consumers, and the multi-threaded drivers: threads taking turns at one chunk reader
//! and parsing their chunks, and in-memory batches split over threads.

use std::sync::atomic::{AtomicUsize, Ordering};

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
    mut sink: K,
) -> Result<Totals, String> {
    let mut reader = RecordReader::open(&sc.path, opts).map_err(|e| e.to_string())?;
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
