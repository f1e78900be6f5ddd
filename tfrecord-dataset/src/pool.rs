//! Reading ahead on worker threads: each split the interleave will ask for has a bounded queue
//! of blocks; workers take the lowest-numbered split whose queue has room and that no other
//! worker holds, read one block from it, and queue it. A split is read by one worker at a time,
//! from its first record to its last, so its blocks are the ones a single thread would read.
//!
//! Memory: at most [`QUEUE_BLOCKS`] queued blocks per split, for the splits open in the cycle
//! and `threads` splits ahead of it, plus one block being read per worker.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use tfrecord_core::ReaderOptions;

use crate::error::Error;
use crate::fetch::Window;
use crate::split::{Block, Decoder, Split, SplitReader, Start};

/// Blocks queued per split.
const QUEUE_BLOCKS: usize = 2;

/// One split's reading state.
struct Stream<O> {
    /// The open reader, when no worker holds it.
    reader: Option<SplitReader>,
    /// Where reading starts, until the split is opened.
    start: Start,
    /// A worker is reading a block of it.
    busy: bool,
    /// Its last block has been queued.
    ended: bool,
    queue: VecDeque<Block<O>>,
}

struct State<O> {
    streams: HashMap<usize, Stream<O>>,
    /// The window: open splits, then `next_input..ahead_end`.
    open: Vec<usize>,
    next_input: usize,
    ahead_end: usize,
    /// Positions for splits that resume, taken when their stream is made.
    starts: HashMap<usize, Start>,
    shutdown: bool,
    /// A worker panicked: nothing more can be read.
    broken: bool,
}

struct Shared<D: Decoder> {
    state: Mutex<State<D::Out>>,
    changed: Condvar,
    splits: Arc<[Split]>,
    opts: ReaderOptions,
    decoder: Arc<D>,
    ahead: usize,
}

impl<D: Decoder> Shared<D> {
    fn lock(&self) -> MutexGuard<'_, State<D::Out>> {
        // A worker that panicked sets `broken` before the lock is released; the state itself
        // stays consistent, so a poisoned lock is used as it is.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, State<D::Out>>) -> MutexGuard<'a, State<D::Out>> {
        self.changed
            .wait(guard)
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Worker threads reading the splits of one epoch ahead of the interleave.
pub(crate) struct Pool<D: Decoder> {
    shared: Arc<Shared<D>>,
    workers: Vec<JoinHandle<()>>,
}

impl<D: Decoder> Pool<D> {
    /// Starts `threads` workers; nothing is read until the first [`window`](Self::window).
    pub(crate) fn new(
        splits: Arc<[Split]>,
        opts: ReaderOptions,
        decoder: Arc<D>,
        threads: usize,
        starts: HashMap<usize, Start>,
    ) -> Self {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                streams: HashMap::new(),
                open: Vec::new(),
                next_input: 0,
                ahead_end: 0,
                starts,
                shutdown: false,
                broken: false,
            }),
            changed: Condvar::new(),
            splits,
            opts,
            decoder,
            ahead: threads,
        });
        let workers = (0..threads)
            .filter_map(|i| {
                let shared = Arc::clone(&shared);
                std::thread::Builder::new()
                    .name(format!("tfrecord-dataset-{i}"))
                    .spawn(move || work(&shared))
                    .ok()
            })
            .collect();
        Pool { shared, workers }
    }

    /// Sets the splits workers may read: the open ones and `threads` from `next_input` on.
    pub(crate) fn window(&mut self, window: &Window<'_>) {
        let mut state = self.shared.lock();
        let end = (window.next_input + self.shared.ahead).min(self.shared.splits.len());
        state.open.clear();
        state.open.extend_from_slice(window.open);
        state.open.sort_unstable();
        state.next_input = window.next_input;
        state.ahead_end = end;
        let wanted: Vec<usize> = window
            .open
            .iter()
            .copied()
            .chain(window.next_input..end)
            .collect();
        for split in wanted {
            if !state.streams.contains_key(&split) {
                let start = state.starts.remove(&split).unwrap_or_default();
                state.streams.insert(
                    split,
                    Stream {
                        reader: None,
                        start,
                        busy: false,
                        ended: false,
                        queue: VecDeque::new(),
                    },
                );
            }
        }
        drop(state);
        self.shared.changed.notify_all();
    }

    /// The next block of `split`, waiting for a worker to read it.
    pub(crate) fn next_block(&mut self, split: usize) -> Block<D::Out> {
        let mut state = self.shared.lock();
        loop {
            if let Some(block) = pop(&mut state, split) {
                drop(state);
                self.shared.changed.notify_all();
                return block;
            }
            if state.broken || self.workers.is_empty() {
                let start = state
                    .streams
                    .get(&split)
                    .map(|s| s.start)
                    .unwrap_or_default();
                return Block::failed(broken(&self.shared.splits[split]), start);
            }
            state = self.shared.wait(state);
        }
    }

    /// The next block of `split` if one is queued.
    pub(crate) fn try_block(&mut self, split: usize) -> Option<Block<D::Out>> {
        let block = pop(&mut self.shared.lock(), split);
        if block.is_some() {
            self.shared.changed.notify_all();
        }
        block
    }

    /// Drops a split's stream (its reader and anything still queued).
    pub(crate) fn close(&mut self, split: usize) {
        let mut state = self.shared.lock();
        if let Some(stream) = state.streams.get(&split)
            && !stream.busy
        {
            state.streams.remove(&split);
        }
        // A busy stream is removed by its worker, which sees it is outside the window.
    }
}

impl<D: Decoder> Drop for Pool<D> {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.changed.notify_all();
        for worker in self.workers.drain(..) {
            // A worker's panic was already reported as a broken pool.
            let _ = worker.join();
        }
    }
}

fn pop<O>(state: &mut State<O>, split: usize) -> Option<Block<O>> {
    state.streams.get_mut(&split)?.queue.pop_front()
}

fn broken(split: &Split) -> Error {
    Error::Record(
        tfrecord_core::Error::from(std::io::Error::other(
            "a reading thread of the data set stopped unexpectedly",
        ))
        .with_path(split.path.clone()),
    )
}

fn in_window<O>(state: &State<O>, split: usize) -> bool {
    (state.next_input..state.ahead_end).contains(&split) || state.open.binary_search(&split).is_ok()
}

/// The lowest-numbered split in the window that a worker can read a block of now.
fn pick<O>(state: &State<O>) -> Option<usize> {
    let ready = |split: &usize| {
        state
            .streams
            .get(split)
            .is_some_and(|s| !s.busy && !s.ended && s.queue.len() < QUEUE_BLOCKS)
    };
    let open = state.open.iter().copied().find(ready);
    open.or_else(|| (state.next_input..state.ahead_end).find(ready))
}

/// Marks the pool broken if a worker unwinds.
struct PanicGuard<'a, D: Decoder>(&'a Shared<D>);

impl<D: Decoder> Drop for PanicGuard<'_, D> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().broken = true;
            self.0.changed.notify_all();
        }
    }
}

fn work<D: Decoder>(shared: &Shared<D>) {
    let _guard = PanicGuard(shared);
    loop {
        let (split, reader, start) = {
            let mut state = shared.lock();
            loop {
                if state.shutdown {
                    return;
                }
                if let Some(split) = pick(&state)
                    && let Some(stream) = state.streams.get_mut(&split)
                {
                    stream.busy = true;
                    break (split, stream.reader.take(), stream.start);
                }
                state = shared.wait(state);
            }
        };
        let (block, reader) = read(shared, split, reader, start);
        let mut state = shared.lock();
        let keep = in_window(&state, split);
        if let Some(stream) = state.streams.get_mut(&split) {
            stream.busy = false;
            stream.ended = block.last;
            stream.queue.push_back(block);
            stream.reader = if stream.ended { None } else { reader };
        }
        if !keep {
            state.streams.remove(&split);
        }
        drop(state);
        shared.changed.notify_all();
    }
}

/// Reads one block of `split`, opening it first if needed.
fn read<D: Decoder>(
    shared: &Shared<D>,
    split: usize,
    reader: Option<SplitReader>,
    start: Start,
) -> (Block<D::Out>, Option<SplitReader>) {
    let mut reader = match reader {
        Some(r) => r,
        None => match SplitReader::open(&shared.splits[split], &shared.opts, start) {
            Ok(r) => r,
            Err(e) => return (Block::failed(e, start), None),
        },
    };
    let block = reader.read_block(&*shared.decoder);
    (block, Some(reader))
}
