//! One record file read by several threads: chunks of whole frames handed out in turn, each
//! checked and decoded by the thread that took it.

use std::fs::File;
use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use super::{Chunk, ChunkReader, ReaderOptions, SharedChunks};
use crate::compression::Compression;
use crate::error::{Error, Result};

/// Reads a record file on `threads` threads, handing every chunk of whole frames (about the
/// options' [`buffer_size`](ReaderOptions::buffer_size) each, 1 MiB by default) to `each`
/// together with the state of the thread that took it. Each thread makes its state with `init`
/// before its first chunk and hands it to `finish` after its last; the results of `finish`
/// come back in thread order.
///
/// `threads` of 0 means one per core the machine gives the process
/// ([`std::thread::available_parallelism`]); 1 reads on the calling thread.
///
/// - An uncompressed file is cut with [`SharedChunks`]: each thread reads its own chunk out of
///   the file, so that reading, checking and decoding are all spread over the threads.
/// - A compressed stream inflates in order, and a pipe reads in order: the threads take turns
///   at one [`ChunkReader`], each reading (and inflating) the next chunk while the others
///   check and decode theirs.
///
/// Chunks go to threads in no fixed order; [`Chunk::offset`] and [`Chunk::first_record`] say
/// where each lies in the stream, and [`Chunk::records`] lends its records in place with every
/// check a [`RecordReader`](super::RecordReader) makes.
///
/// ```
/// use tfrecord_core::{RecordWriter, ReaderOptions, WriterOptions, reader};
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
/// let sums = reader::for_each_chunk(&path, opts, 2, || 0u64, sum_chunk, Ok)?;
/// assert_eq!(sums.len(), 2);
/// assert_eq!(sums.iter().sum::<u64>(), 9_999 * 10_000 / 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// The error first in the stream, as reading the file on one thread would meet it: an error
/// `each` returns for a chunk (say a record failing its CRC, located by [`Chunk::records`] in
/// the whole stream, or a record that does not decode), else one of the reader (opening the
/// file, I/O, inflating), else one of `finish`. Once a thread fails, the others stop at their
/// next chunk, and do not call `finish`. A panic in `init`, `each` or `finish` is resumed on
/// the calling thread.
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
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
        n => n,
    };
    let chunk_size = opts.buffer_size;
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    let source = if opts.compression == Compression::None && regular {
        Source::Shared(SharedChunks::open(path, opts, chunk_size)?)
    } else {
        Source::InTurn(Box::new(Mutex::new(ChunkReader::open(
            path, opts, chunk_size,
        )?)))
    };
    let stop = AtomicBool::new(false);
    let work = || worker(&source, &stop, &init, &each, &finish);
    let outcomes: Vec<Outcome<R, E>> = if threads == 1 {
        vec![work()]
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads).map(|_| s.spawn(work)).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        })
    };
    let mut results = Vec::with_capacity(outcomes.len());
    // The error first in the stream, when several threads met one.
    let mut first: Option<(u64, E)> = None;
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
    /// This thread failed, with an error lying this far into the stream.
    Failed(u64, E),
}

/// Where [`for_each_chunk`]'s threads take their chunks.
enum Source {
    /// An uncompressed file, read by every thread.
    Shared(SharedChunks),
    /// A compressed stream, inflated by one thread at a time.
    InTurn(Box<Mutex<ChunkReader<File>>>),
}

impl Source {
    /// The next chunk, after giving back the buffer of the last one.
    fn next(&self, done: Option<Chunk>) -> Result<Option<Chunk>> {
        match self {
            Source::Shared(chunks) => {
                if let Some(chunk) = done {
                    chunks.give_back(chunk);
                }
                chunks.next_chunk()
            }
            Source::InTurn(chunks) => {
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
///
/// An error of `each` comes with its chunk's offset. An error of the reader or of `finish`
/// comes with `u64::MAX`: the chunks are cut in stream order and none is cut past a failure,
/// so it lies after every chunk handed out, and any error `each` meets in one of them comes
/// first.
fn worker<S, R, E: From<Error>>(
    source: &Source,
    stop: &AtomicBool,
    init: &impl Fn() -> S,
    each: &impl Fn(&mut S, &Chunk) -> std::result::Result<(), E>,
    finish: &impl Fn(S) -> std::result::Result<R, E>,
) -> Outcome<R, E> {
    let fail = |at: u64, e: E| {
        stop.store(true, Ordering::Relaxed);
        Outcome::Failed(at, e)
    };
    let mut state = init();
    let mut done: Option<Chunk> = None;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Outcome::Stopped;
        }
        let chunk = match source.next(done.take()) {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(e) => return fail(u64::MAX, E::from(e)),
        };
        if let Err(e) = each(&mut state, &chunk) {
            return fail(chunk.offset(), e);
        }
        done = Some(chunk);
    }
    match finish(state) {
        Ok(r) => Outcome::Done(r),
        Err(e) => fail(u64::MAX, e),
    }
}
