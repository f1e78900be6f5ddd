//! An uncompressed record file cut into chunks of whole frames by several threads at once.

use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use super::boundary::{Frame, frame_at};
use super::chunks::{Chunk, keep_spare};
use super::options::{ReaderOptions, only_failing};
use crate::compression::Compression;
use crate::error::{Error, Result, locate};

/// An uncompressed record file cut into chunks of whole frames by several threads at once:
/// the chunks [`ChunkReader::open`](crate::ChunkReader::open) gives, with their offsets and
/// record indices, but each thread copies its own chunk out of the file
/// ([`next_chunk`](Self::next_chunk) takes `&self`), so that reading the file is spread over the
/// threads as well as checking and decoding it.
///
/// The file is divided into cells of `chunk_size` bytes, taken by the calling threads in turn;
/// a chunk holds the frames that start in its cell. A thread reads its cell while others read
/// theirs; then it waits only for the thread of the cell before it to say where the first
/// frame of its cell starts (a walk over the frames' headers), walks its own, and passes on.
///
/// ```
/// use std::sync::Mutex;
/// use tfrecord_core::{RecordWriter, ReaderOptions, SharedChunks, WriterOptions};
///
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("data.tfrecord");
/// let mut writer = RecordWriter::create(&path, WriterOptions::new())?;
/// for i in 0..1000u32 {
///     writer.write(&i.to_le_bytes())?;
/// }
/// writer.finish()?;
///
/// let chunks = SharedChunks::open(&path, ReaderOptions::new(), 4096)?;
/// let sums = Mutex::new(Vec::new());
/// std::thread::scope(|s| {
///     for _ in 0..2 {
///         s.spawn(|| -> tfrecord_core::Result<()> {
///             while let Some(chunk) = chunks.next_chunk()? {
///                 let mut records = chunk.records();
///                 let mut n = 0u64;
///                 while let Some(r) = records.next_record()? {
///                     n += u64::from(u32::from_le_bytes(r.try_into().unwrap()));
///                 }
///                 sums.lock().unwrap().push(n);
///             }
///             Ok(())
///         });
///     }
/// });
/// assert_eq!(sums.into_inner().unwrap().iter().sum::<u64>(), 999 * 1000 / 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SharedChunks {
    file: File,
    path: Arc<Path>,
    opts: ReaderOptions,
    size: u64,
    chunk_size: u64,
    /// The next cell to hand out.
    next_cell: AtomicU64,
    /// Set once no chunk follows, so that threads stop reading cells nobody needs.
    ended: AtomicBool,
    /// Where the frames of the next cell to cut start.
    link: Mutex<Link>,
    turn: Condvar,
    /// Buffers of chunks given back.
    spare: Mutex<Vec<Vec<u8>>>,
}

/// What the thread of one cell passes to the thread of the next.
#[derive(Clone, Copy, Debug)]
struct Link {
    /// The cell whose chunk is cut next.
    cell: u64,
    /// Where its first frame starts: at or after the cell's start.
    start: u64,
    /// Records before that frame.
    records: u64,
    /// No chunk follows: the end of the file, an error, or a chunk that ends in one.
    ended: bool,
}

/// What [`SharedChunks::walk`] found in a cell.
struct Walk {
    /// Where the chunk ends in the cell's bytes.
    cut: usize,
    /// Where the whole frames walked over end: `cut`, unless a frame that fails a check or a
    /// truncated one follows them.
    walked: usize,
    /// The whole frames walked over.
    frames: u64,
    /// Whether the chunk is the last one.
    ended: bool,
}

impl Walk {
    /// The last chunk: everything read, the frame at `walked` (one that fails a check, or a
    /// truncated one) included; the chunk's reader reports it.
    fn last(data: &[u8], walked: usize, frames: u64) -> Walk {
        Walk {
            cut: data.len(),
            walked,
            frames,
            ended: true,
        }
    }
}

/// Hands the link to the next cell's thread when dropped: every cell taken passes it on exactly
/// once, whatever happens to the thread that took it (an early return ends the chain).
struct LinkHandOff<'a> {
    chunks: &'a SharedChunks,
    next: Link,
}

impl Drop for LinkHandOff<'_> {
    fn drop(&mut self) {
        if self.next.ended {
            self.chunks.ended.store(true, Ordering::Relaxed);
        }
        // Nothing panics while holding the lock: a poisoned one still holds the last link.
        let mut link = self
            .chunks
            .link
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *link = self.next;
        self.chunks.turn.notify_all();
    }
}

impl SharedChunks {
    /// Opens an uncompressed record file, to be cut into chunks of about `chunk_size` bytes.
    ///
    /// # Errors
    /// When the file cannot be opened, for what is not a regular file (a pipe reads in order),
    /// and for compressed files (a compressed stream inflates in order): cut those with
    /// [`ChunkReader`](crate::ChunkReader). Options whose [`BadRecords`](crate::BadRecords)
    /// policy skips damage are refused too.
    pub fn open(path: impl AsRef<Path>, opts: ReaderOptions, chunk_size: usize) -> Result<Self> {
        let path = path.as_ref();
        let located = |e: Error| e.with_path(path.to_path_buf());
        only_failing(&opts, "SharedChunks").map_err(located)?;
        if opts.compression != Compression::None {
            return Err(located(Error::from(io::Error::new(
                io::ErrorKind::InvalidInput,
                "SharedChunks reads uncompressed files; a compressed stream inflates in order \
                 (cut it with ChunkReader)",
            ))));
        }
        let file = File::open(path).map_err(|e| located(e.into()))?;
        let meta = file.metadata().map_err(|e| located(e.into()))?;
        if !meta.is_file() {
            // A pipe or a device has no size to cut into cells, nor positions to read at.
            return Err(located(Error::from(io::Error::new(
                io::ErrorKind::InvalidInput,
                "SharedChunks reads regular files; a pipe or device reads in order \
                 (cut it with ChunkReader)",
            ))));
        }
        let size = meta.len();
        Ok(SharedChunks {
            file,
            path: Arc::from(path),
            opts,
            size,
            chunk_size: u64::try_from(chunk_size.max(1)).unwrap_or(u64::MAX),
            next_cell: AtomicU64::new(0),
            ended: AtomicBool::new(false),
            link: Mutex::new(Link {
                cell: 0,
                start: 0,
                records: 0,
                ended: false,
            }),
            turn: Condvar::new(),
            spare: Mutex::new(Vec::new()),
        })
    }

    /// Takes back a chunk that has been read, to reuse its buffer for a later chunk.
    pub fn give_back(&self, chunk: Chunk) {
        if let Ok(mut spare) = self.spare.lock() {
            keep_spare(&mut spare, chunk);
        }
    }

    /// The next chunk of whole frames, from any thread; `Ok(None)` once the frames end. The
    /// chunks come in file order to one thread; threads sharing the reader each get some of
    /// them ([`Chunk::offset`] and [`Chunk::first_record`] say where each belongs).
    ///
    /// # Errors
    /// I/O errors, located at the cell being read; framing errors are left to the chunk's
    /// reader, as with [`ChunkReader`](crate::ChunkReader).
    pub fn next_chunk(&self) -> Result<Option<Chunk>> {
        loop {
            if self.ended.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let cell = self.next_cell.fetch_add(1, Ordering::Relaxed);
            let cell_start = cell.saturating_mul(self.chunk_size);
            let cell_end = cell_start.saturating_add(self.chunk_size).min(self.size);
            // The cell's bytes, read before its turn: the copy needs nothing from other cells.
            let mut data = self
                .spare
                .lock()
                .ok()
                .and_then(|mut s| s.pop())
                .unwrap_or_default();
            let read = self.read_to(&mut data, 0, cell_start, cell_end);
            let link = self.wait_turn(cell);
            let mut hand_off = LinkHandOff {
                chunks: self,
                next: Link {
                    cell: cell + 1,
                    ended: true,
                    ..link
                },
            };
            if link.ended {
                return Ok(None);
            }
            read.map_err(|e| self.fail(e, cell_start, link.records))?;
            if link.start >= self.size {
                return Ok(None); // the end of the file
            }
            if link.start >= cell_end {
                // A frame from an earlier cell spans this one: no frame starts in it.
                hand_off.next.ended = false;
                drop(hand_off);
                continue;
            }
            let first = usize::try_from(link.start - cell_start).unwrap_or(usize::MAX);
            let Walk {
                cut,
                walked,
                frames,
                ended,
            } = self.walk(&mut data, cell_start, cell_end, first, link.records)?;
            let end = cell_start + cut as u64;
            hand_off.next = Link {
                cell: cell + 1,
                start: end,
                records: link.records + frames,
                ended: ended || end >= self.size,
            };
            drop(hand_off);
            // The frames are `data[first..cut]`: the bytes before are the end of the frame
            // that the previous cell's chunk holds, left in place rather than moved out.
            data.truncate(cut);
            return Ok(Some(Chunk {
                buf: data,
                start: first,
                offset: link.start,
                first_record: link.records,
                bounded: true,
                checked: walked - first,
                path: Some(Arc::clone(&self.path)),
                opts: self.opts.clone(),
            }));
        }
    }

    /// Walks the frames that start in the cell from `data[first..]` (`data` holds the file
    /// from `cell_start`; `records` frames come before the first), reading on past the cell for
    /// the last one. A frame that fails a check, or a truncated last frame, ends the chunk and
    /// the file's chunks, as with [`ChunkReader`](crate::ChunkReader), and the chunk's reader
    /// reports it.
    fn walk(
        &self,
        data: &mut Vec<u8>,
        cell_start: u64,
        cell_end: u64,
        first: usize,
        records: u64,
    ) -> Result<Walk> {
        let (mut cut, mut frames) = (first, 0u64);
        while cell_start + (cut as u64) < cell_end {
            match frame_at(&self.opts, data.get(cut..).unwrap_or_default()) {
                Frame::Whole(len) => {
                    cut += len;
                    frames += 1;
                }
                Frame::Partial(need) => {
                    let have = cell_start + data.len() as u64;
                    let want = (cell_start + (cut + need) as u64).min(self.size);
                    // Located at the frame being read, as a reader in order would.
                    self.read_to(data, data.len(), have, want)
                        .map_err(|e| self.fail(e, cell_start + cut as u64, records + frames))?;
                    if want == self.size && data.len() < cut + need {
                        return Ok(Walk::last(data, cut, frames)); // truncated at the end
                    }
                }
                Frame::Bad => return Ok(Walk::last(data, cut, frames)),
            }
        }
        Ok(Walk {
            cut,
            walked: cut,
            frames,
            ended: false,
        })
    }

    /// Makes `data[at..]` the file's bytes `from..to`. A reused buffer's old bytes are read
    /// over in place; only bytes past its old length are zeroed before the read.
    fn read_to(&self, data: &mut Vec<u8>, at: usize, from: u64, to: u64) -> io::Result<()> {
        let n = usize::try_from(to.saturating_sub(from))
            .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        let end = at.saturating_add(n);
        if data.len() < end {
            data.resize(end, 0);
        } else {
            data.truncate(end);
        }
        read_exact_at(&self.file, &mut data[at..], from)
    }

    /// Waits until the link reaches `cell`. Nothing panics while holding the lock (see
    /// [`LinkHandOff`]), so a poisoned lock still holds the last link passed on; the caller must
    /// pass it on, or the threads of later cells would wait forever.
    fn wait_turn(&self, cell: u64) -> Link {
        let mut link = self.link.lock().unwrap_or_else(PoisonError::into_inner);
        while link.cell < cell {
            link = self.turn.wait(link).unwrap_or_else(PoisonError::into_inner);
        }
        *link
    }

    fn fail(&self, e: io::Error, offset: u64, record: u64) -> Error {
        locate(Error::from(e), Some(&self.path), offset, record)
    }
}

/// Fills `buf` from the file's bytes at `offset`, without moving any file position that
/// other reads share.
#[cfg(unix)]
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

/// Fills `buf` from the file's bytes at `offset`.
#[cfg(windows)]
pub(crate) fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
