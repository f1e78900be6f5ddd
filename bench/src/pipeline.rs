//! Batch consumers, and the multi-threaded drivers: a reader thread feeding batches of
//! [`BATCH`] records to worker threads, and in-memory batches split over threads.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use tfrecord_core::{ReaderOptions, RecordReader, Unverified};

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
    /// How many records a reader thread hands over at a time.
    const CHUNK: usize = BATCH;
    /// Parses one batch.
    ///
    /// # Errors
    /// A record that does not decode or does not fit the spec.
    fn batch<R: AsRef<[u8]>>(&mut self, recs: &[R]) -> Result<(), String>;
    /// Consumes what is left after the last batch.
    fn finish(&mut self) {}
    /// Rows and values extracted so far.
    fn totals(&self) -> Totals;
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

    /// Consumes the last partial batch.
    pub(crate) fn finish(&mut self) {
        self.0.flush();
    }
}

impl<S: Shape> BatchSink for Derived<S> {
    /// Records are decoded one by one into columns consumed every [`BATCH`] rows, so they can
    /// arrive in smaller chunks: a chunk still in the cache of the core that read it is cheaper
    /// to decode on another core than a batch of 1024 records (up to 2.5 MB here).
    const CHUNK: usize = 128;

    fn batch<R: AsRef<[u8]>>(&mut self, recs: &[R]) -> Result<(), String> {
        for r in recs {
            let rec = decode::<S>(r.as_ref()).map_err(|e| e.to_string())?;
            S::push(&mut self.0.cols, &rec);
            self.0.end_row();
        }
        Ok(())
    }
    fn finish(&mut self) {
        self.0.flush();
    }
    fn totals(&self) -> Totals {
        Totals {
            records: 0,
            rows: self.0.total_rows,
            values: self.0.total_values,
        }
    }
}

/// A batch of records read from the file, with their data checksums still to check; the
/// buffers are reused.
struct Batch {
    recs: Vec<Vec<u8>>,
    frames: Vec<Unverified>,
    n: usize,
}

fn worker<K: BatchSink>(
    rx: &Arc<Mutex<Receiver<Batch>>>,
    back: &mpsc::Sender<Batch>,
    mut sink: K,
) -> Result<Totals, String> {
    loop {
        let next = rx.lock().map_err(|_| "poisoned")?.recv();
        let Ok(batch) = next else { break };
        // The data CRCs, checked here rather than on the reading thread.
        for (frame, rec) in batch.frames.iter().zip(&batch.recs[..batch.n]) {
            frame.verify(rec).map_err(|e| e.to_string())?;
        }
        sink.batch(&batch.recs[..batch.n])?;
        // The reader may have finished and dropped its end: the buffers are then freed here.
        let _ = back.send(batch);
    }
    sink.finish();
    Ok(sink.totals())
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
            sink.finish();
            return Ok(Totals {
                records,
                ..sink.totals()
            });
        }
    }
}

/// One thread reads frames (framing, length CRCs, decompression) into batches of
/// [`BatchSink::CHUNK`] records; `workers` threads check the data CRCs and parse the batches,
/// each into its own columns.
pub(crate) fn read_parallel<K: BatchSink>(
    sc: &Sidecar,
    opts: ReaderOptions,
    workers: usize,
    make: impl Fn() -> K + Sync,
) -> Result<Totals, String> {
    // A batch's worth of records in flight per worker, whatever the chunk size: enough to
    // keep the workers busy, and what bounds the memory held.
    let in_flight = workers * (BATCH / K::CHUNK).max(1);
    let (tx, rx): (SyncSender<Batch>, Receiver<Batch>) = mpsc::sync_channel(in_flight);
    let (back_tx, back_rx) = mpsc::channel::<Batch>();
    let rx = Arc::new(Mutex::new(rx));
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let rx = Arc::clone(&rx);
                let back = back_tx.clone();
                let make = &make;
                s.spawn(move || worker(&rx, &back, make()))
            })
            .collect();
        drop(rx);
        drop(back_tx);
        let read = (|| -> Result<u64, String> {
            let mut reader = RecordReader::open(&sc.path, opts).map_err(|e| e.to_string())?;
            let mut records = 0u64;
            loop {
                let mut b = back_rx.try_recv().unwrap_or_else(|_| Batch {
                    recs: Vec::new(),
                    frames: Vec::with_capacity(K::CHUNK),
                    n: 0,
                });
                b.n = 0;
                b.frames.clear();
                while b.n < K::CHUNK {
                    if b.recs.len() == b.n {
                        b.recs.push(Vec::new());
                    }
                    let Some(frame) = reader
                        .read_unverified(&mut b.recs[b.n])
                        .map_err(|e| e.to_string())?
                    else {
                        break;
                    };
                    b.frames.push(frame);
                    b.n += 1;
                }
                records += b.n as u64;
                let last = b.n < K::CHUNK;
                if b.n > 0 && tx.send(b).is_err() {
                    return Err("every worker stopped".into());
                }
                if last {
                    return Ok(records);
                }
            }
        })();
        drop(tx);
        let mut t = Totals::default();
        let mut first_err = None;
        for h in handles {
            match h.join() {
                Ok(Ok(w)) => t.add(w),
                Ok(Err(e)) => first_err = first_err.or(Some(e)),
                Err(_) => first_err = first_err.or(Some("a worker panicked".to_string())),
            }
        }
        // A worker's decode error explains a reader's "every worker stopped".
        if let Some(e) = first_err {
            return Err(e);
        }
        t.records = read?;
        Ok(t)
    })
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
                    sink.finish();
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
