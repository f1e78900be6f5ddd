//! One record file read by several threads: chunks of whole frames handed out in turn, each
//! checked and decoded by the thread that took it.

use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use super::chunks::Chunk;
use super::cutter::ChunkReader;
use super::options::ReaderOptions;
use super::shared::SharedChunks;
use crate::compression::Compression;
use crate::error::{Error, Result};

/// Reads a record file on `threads` threads, handing every chunk of whole frames (about the
/// options' [`buffer_size`](ReaderOptions::buffer_size) each, 1 MiB by default) to `each`
/// together with the state of the thread that took it. Each thread makes its state with `init`
/// before its first chunk and hands it to `finish` after its last; the results of `finish`
/// come back in thread order.
///
/// `threads` of 0 means one per core the machine gives the process
/// ([`std::thread::available_parallelism`], asked once per process); 1 reads on the calling thread, and so does an
/// uncompressed file of one chunk or less (no thread would have a chunk to take: many small
/// files are not read at the cost of starting threads for each). `init` runs on
/// the thread that then uses the state, so setup that belongs to a thread (a thread-local,
/// the thread's CPU affinity) goes there; the threads are left where the operating system
/// puts them otherwise.
///
/// - An uncompressed file is cut with [`SharedChunks`]: each thread reads its own chunk out of
///   the file, so that reading, checking and decoding are all spread over the threads.
/// - A compressed stream inflates in order, and a pipe reads in order: the threads take turns
///   at one [`ChunkReader`], each reading (and inflating) the next chunk while the others
///   check and decode theirs.
///
/// Chunks go to threads in no fixed order; [`Chunk::offset`] and [`Chunk::first_record`] say
/// where each lies in the stream, and [`Chunk::records`] lends its records in place with every
/// check a [`RecordReader`](super::frames::RecordReader) makes. Those checks run as `each` reads the
/// records: a chunk is cut where a frame fails its length checks, and the error shows when
/// [`ChunkRecords::next_record`](super::chunks::ChunkRecords::next_record) reaches that frame, so an
/// `each` that stops reading a chunk early may not see it.
///
/// ```
/// use tfrecord_core::{RecordWriter, ReaderOptions, WriterOptions, for_each_chunk};
///
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("data.tfrecord");
/// let mut writer = RecordWriter::create(&path, WriterOptions::new())?;
/// for i in 0..10_000u32 {
///     writer.write(&i.to_le_bytes())?;
/// }
/// writer.finish()?;
///
/// // Each thread sums the records of the chunks it takes.
/// let opts = ReaderOptions::new().buffer_size(4096);
/// let sum_chunk = |sum: &mut u64, chunk: &tfrecord_core::Chunk| {
///     let mut records = chunk.records();
///     while let Some(r) = records.next_record()? {
///         *sum += u64::from(u32::from_le_bytes(r.try_into().unwrap()));
///     }
///     Ok::<_, tfrecord_core::Error>(())
/// };
/// let sums = for_each_chunk(&path, opts, 2, || 0u64, sum_chunk, Ok)?;
/// assert_eq!(sums.len(), 2);
/// assert_eq!(sums.iter().sum::<u64>(), 9_999 * 10_000 / 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// The error first in the stream, as reading the file on one thread would meet it: an error
/// `each` returns for a chunk (say a record failing its CRC, located by [`Chunk::records`] in
/// the whole stream, or a record that does not decode), else one of the reader (opening the
/// file, I/O, inflating, starting a thread), else one of `finish`. Once a thread fails or
/// panics, the others stop at their next chunk; a thread that had already run out of chunks
/// may still call `finish`, whose result is then dropped. A panic in `init`, `each` or
/// `finish` is resumed on the calling thread.
pub fn for_each_chunk<S, R, E>(
    path: impl AsRef<Path>,
    opts: ReaderOptions,
    threads: usize,
    init: impl Fn() -> S + Sync,
    each: impl Fn(&mut S, &Chunk) -> std::result::Result<(), E> + Sync,
    finish: impl Fn(S) -> std::result::Result<R, E> + Sync,
) -> std::result::Result<Vec<R>, E>
where
    R: Send,
    E: From<Error> + Send,
{
    let path = path.as_ref();
    let chunk_size = opts.buffer_size;
    let meta = std::fs::metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_file);
    let regular = meta.is_some();
    // An uncompressed file has at most one chunk per `chunk_size` bytes to hand out.
    let most = match &meta {
        Some(m) if opts.compression == Compression::None => {
            let chunks = m.len().div_ceil(chunk_size.max(1) as u64).max(1);
            usize::try_from(chunks).unwrap_or(usize::MAX)
        }
        _ => usize::MAX,
    };
    let threads = match threads {
        0 if most > 1 => crate::cores(),
        0 => 1,
        n => n,
    }
    .min(most);
    let cutter = if opts.compression == Compression::None && regular {
        Cutter::Shared(SharedChunks::open(path, opts, chunk_size)?)
    } else {
        Cutter::InTurn(Box::new(Mutex::new(ChunkReader::open(
            path, opts, chunk_size,
        )?)))
    };
    let stop = AtomicBool::new(false);
    let work = || worker(&cutter, &stop, &init, &each, &finish);
    let outcomes: Vec<Outcome<R, E>> = if threads == 1 {
        vec![work()]
    } else {
        std::thread::scope(|s| {
            let mut outcomes = Vec::with_capacity(threads);
            let mut handles = Vec::with_capacity(threads);
            for _ in 0..threads {
                match std::thread::Builder::new().spawn_scoped(s, work) {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        stop.store(true, Ordering::Relaxed);
                        let e = Error::from(e).with_path(path);
                        outcomes.push(Outcome::Failed(Place::Reader, E::from(e)));
                        break;
                    }
                }
            }
            for h in handles {
                outcomes.push(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            }
            outcomes
        })
    };
    let mut results = Vec::with_capacity(outcomes.len());
    // The error first in the stream, when several threads met one.
    let mut first: Option<(Place, E)> = None;
    for outcome in outcomes {
        match outcome {
            Outcome::Done(r) => results.push(r),
            Outcome::Stopped => {}
            Outcome::Failed(at, e) => {
                if first.as_ref().is_none_or(|(first_at, _)| at < *first_at) {
                    first = Some((at, e));
                }
            }
        }
    }
    match first {
        Some((_, e)) => Err(e),
        None => Ok(results),
    }
}

/// How one thread of [`for_each_chunk`] ended.
enum Outcome<R, E> {
    /// The stream ended; what `finish` returned.
    Done(R),
    /// Another thread failed.
    Stopped,
    /// This thread failed, with an error from this place.
    Failed(Place, E),
}

/// Where an error of [`for_each_chunk`] comes from, in the order one reader would meet them:
/// the chunks are cut in stream order and none is cut past a failure of the reader, so an
/// error of `each` in any chunk handed out comes before one of the reader, and `finish` runs
/// after both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    /// `each`, for the chunk at this offset.
    Chunk(u64),
    /// The reader, or starting a thread.
    Reader,
    /// `finish`.
    Finish,
}

/// Tells the other threads to stop when this one unwinds from a panic.
struct StopOnPanic<'a>(&'a AtomicBool);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// Where [`for_each_chunk`]'s threads take their chunks.
enum Cutter {
    /// An uncompressed file, read by every thread.
    Shared(SharedChunks),
    /// A compressed stream, inflated by one thread at a time.
    InTurn(Box<Mutex<ChunkReader<File>>>),
}

impl Cutter {
    /// The next chunk, after giving back the buffer of the last one.
    fn next(&self, done: Option<Chunk>) -> Result<Option<Chunk>> {
        match self {
            Cutter::Shared(chunks) => {
                if let Some(chunk) = done {
                    chunks.give_back(chunk);
                }
                chunks.next_chunk()
            }
            Cutter::InTurn(chunks) => {
                let mut reader = chunks.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(chunk) = done {
                    reader.give_back(chunk);
                }
                reader.next_chunk()
            }
        }
    }
}

/// One thread of [`for_each_chunk`]: takes chunks until the stream ends or a thread fails.
fn worker<S, R, E: From<Error>>(
    cutter: &Cutter,
    stop: &AtomicBool,
    init: &impl Fn() -> S,
    each: &impl Fn(&mut S, &Chunk) -> std::result::Result<(), E>,
    finish: &impl Fn(S) -> std::result::Result<R, E>,
) -> Outcome<R, E> {
    let _guard = StopOnPanic(stop);
    let fail = |at: Place, e: E| {
        stop.store(true, Ordering::Relaxed);
        Outcome::Failed(at, e)
    };
    let mut state = init();
    let mut done: Option<Chunk> = None;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Outcome::Stopped;
        }
        let chunk = match cutter.next(done.take()) {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(e) => return fail(Place::Reader, E::from(e)),
        };
        if let Err(e) = each(&mut state, &chunk) {
            return fail(Place::Chunk(chunk.offset()), e);
        }
        done = Some(chunk);
    }
    match finish(state) {
        Ok(r) => Outcome::Done(r),
        Err(e) => fail(Place::Finish, e),
    }
}
