//! Reading ahead on `threads - 1` worker threads, and on the caller's thread while it would
//! otherwise wait for a block (so that `threads` threads work in all, not one more than asked
//! for: an extra thread would only take turns on the same cores). Each split the interleave
//! will ask for has a bounded queue of blocks in split order. A worker either reads the next
//! block of a split (one worker per split at a time, so a split is read from its first record
//! to its last as a single thread would) or decodes a block already read (any number at once,
//! each into its own place in the queue). The interleave takes blocks off the front of a queue
//! once decoded. So one split is decoded on every thread, and several splits are read at once.
//!
//! Work is taken from the split the interleave needs soonest: the open splits in split order,
//! then the next unopened ones; within a split, decoding before reading. Only the first
//! [`scan_len`] open splits are read ahead, so that finding work costs the same with a cycle of
//! thousands of splits (and their blocks stay bounded); the caller's thread reads the split it
//! waits for itself when no worker does.
//!
//! Memory: at most `2 * threads + 2` blocks per split, for the first [`scan_len`] splits open
//! in the cycle, `threads` splits ahead of it, and the split the interleave waits for.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use tfrecord_core::ReaderOptions;

use crate::block::{Block, Contents, Decoder, RawBlock, Start};
use crate::error::Error;
use crate::fetch::Window;
use crate::split::{Split, SplitReader};

/// A place in a split's queue.
enum Slot<O> {
    /// Read, waiting to be decoded.
    Raw(RawBlock),
    /// Being decoded by a worker.
    Decoding,
    /// Ready for the interleave.
    Done(Block<O>),
}

/// One split's reading state.
struct Stream<O> {
    /// The open reader, when no worker holds it.
    reader: Option<SplitReader>,
    /// Where reading starts, until the split is opened.
    start: Start,
    /// A worker is reading a block of it.
    reading: bool,
    /// Its last block has been read.
    ended: bool,
    queue: VecDeque<Slot<O>>,
    /// Blocks taken off the front so far: the queue's first slot is block number `taken`.
    taken: u64,
}

impl<O> Stream<O> {
    fn new(start: Start) -> Self {
        Stream {
            reader: None,
            start,
            reading: false,
            ended: false,
            queue: VecDeque::new(),
            taken: 0,
        }
    }
}

struct State<O> {
    streams: HashMap<usize, Stream<O>>,
    /// The window: open splits (sorted), then `next_input..ahead_end`.
    open: Vec<usize>,
    next_input: usize,
    ahead_end: usize,
    /// Positions for splits that resume, taken when their stream is made.
    starts: HashMap<usize, Start>,
    shutdown: bool,
    /// A worker panicked: nothing more can be read.
    broken: bool,
    /// Workers waiting for work.
    idle: usize,
    /// The interleave is waiting for a block.
    wanted: bool,
    /// A window was set: the splits open then have streams.
    windowed: bool,
}

struct Shared<D: Decoder> {
    state: Mutex<State<D::Out>>,
    /// Workers wait here for work.
    work: Condvar,
    /// The interleave waits here for a block.
    ready: Condvar,
    splits: Arc<[Split]>,
    opts: ReaderOptions,
    decoder: Arc<D>,
    threads: usize,
}

impl<D: Decoder> Shared<D> {
    fn lock(&self) -> MutexGuard<'_, State<D::Out>> {
        // A worker that panicked sets `broken` while unwinding; the state stays consistent
        // (slots it held stay `Decoding` and are never waited for), so a poisoned lock is
        // used as it is.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'a>(
        &self,
        on: &Condvar,
        guard: MutexGuard<'a, State<D::Out>>,
    ) -> MutexGuard<'a, State<D::Out>> {
        on.wait(guard).unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes a waiting worker, if any, when there is work worth a wake-up: a block to decode, or
    /// a split whose queue has drained to half its length (not at every block taken: a worker
    /// then reads several blocks for each time it sleeps and is woken, which costs more than
    /// reading a block on a virtual machine's cores).
    fn wake_worker(&self, state: &State<D::Out>) {
        if state.idle > 0 && worth_waking(state, self.queue_len(), D::ON_WORKERS, self.threads) {
            self.work.notify_one();
        }
    }

    /// A block as the interleave gets it ([`RawBlock::hand_out`] for a raw one).
    fn hand_out(&self, block: Block<D::Out>, split: usize) -> Block<D::Out> {
        match block.contents {
            Contents::Raw(raw) => raw.hand_out(&*self.decoder, &self.splits[split].path),
            Contents::Items(_) => block,
        }
    }

    /// Blocks queued per split: deep enough that a thread reading one split ahead keeps busy
    /// while the others decode the split being handed out (with `threads + 1`, two threads
    /// were no faster than one on 8 shards).
    fn queue_len(&self) -> usize {
        2 * self.threads + 2
    }
}

/// What a worker does next.
enum Task {
    /// Read the next block of a split.
    Read(usize, Option<SplitReader>, Start),
    /// Decode block number `.1` of a split.
    Decode(usize, u64, RawBlock),
}

/// Worker threads reading and decoding the splits of one epoch ahead of the interleave.
pub(crate) struct Pool<D: Decoder> {
    shared: Arc<Shared<D>>,
    workers: Vec<JoinHandle<()>>,
}

impl<D: Decoder> Pool<D> {
    /// Starts `threads - 1` workers (the caller's thread is the last one, in
    /// [`next_block`](Self::next_block)); nothing is read until the first
    /// [`window`](Self::window).
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
                idle: 0,
                wanted: false,
                windowed: false,
            }),
            work: Condvar::new(),
            ready: Condvar::new(),
            splits,
            opts,
            decoder,
            threads,
        });
        // Workers as the system gives them: once it refuses one, the rest are not asked for
        // (the caller's thread reads as well, so the pool works with fewer).
        let workers = (1..threads)
            .map_while(|i| {
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
        let end = (window.next_input + self.shared.threads).min(self.shared.splits.len());
        debug_assert!(window.open.is_sorted());
        state.open.clear();
        state.open.extend_from_slice(window.open);
        state.next_input = window.next_input;
        state.ahead_end = end;
        // Streams for the splits open at the first window (several, when an epoch resumes),
        // then for those ahead: a split opens as `next_input`, which the window before had
        // ahead of it (the last open split is looked at too, at no cost).
        let open = if std::mem::replace(&mut state.windowed, true) {
            window.open.last().map_or(&[][..], std::slice::from_ref)
        } else {
            window.open
        };
        for split in open.iter().copied().chain(window.next_input..end) {
            if !state.streams.contains_key(&split) {
                let start = state.starts.remove(&split).unwrap_or_default();
                state.streams.insert(split, Stream::new(start));
            }
        }
        if state.idle > 0 {
            self.shared.work.notify_all();
        }
    }

    /// The next block of `split`: decoded, or read and still raw if no worker has started on
    /// it (the caller then decodes as it hands records out). While it is not read yet, the
    /// caller's thread works as a worker does (the most urgent task first, which is usually
    /// this very block), and waits only when every task is taken.
    pub(crate) fn next_block(&mut self, split: usize) -> Block<D::Out> {
        let shared = &*self.shared;
        let mut state = shared.lock();
        loop {
            if let Some(block) = take_front(&mut state, split, true) {
                shared.wake_worker(&state);
                drop(state);
                return shared.hand_out(block, split);
            }
            if state.broken {
                let start = state
                    .streams
                    .get(&split)
                    .map(|s| s.start)
                    .unwrap_or_default();
                return Block::failed(broken(&shared.splits[split]), start);
            }
            if let Some(task) = pick(&mut state, shared, D::ON_WORKERS, Some(split)) {
                drop(state);
                state = run(shared, task);
                continue;
            }
            state.wanted = true;
            state = shared.wait(&shared.ready, state);
            state.wanted = false;
        }
    }

    /// The next block of `split` if one is ready now.
    pub(crate) fn try_block(&mut self, split: usize) -> Option<Block<D::Out>> {
        let mut state = self.shared.lock();
        let block = take_front(&mut state, split, true);
        if block.is_some() {
            self.shared.wake_worker(&state);
        }
        drop(state);
        block.map(|b| self.shared.hand_out(b, split))
    }

    /// The reader options the splits are read with.
    pub(crate) fn opts(&self) -> &ReaderOptions {
        &self.shared.opts
    }

    /// What turns records into values.
    pub(crate) fn decoder(&self) -> &D {
        &self.shared.decoder
    }

    /// The splits of the epoch.
    pub(crate) fn splits(&self) -> &Arc<[Split]> {
        &self.shared.splits
    }

    /// Drops a split's stream (its reader and anything still queued); a worker still busy
    /// with it finds it gone and drops its work.
    pub(crate) fn close(&mut self, split: usize) {
        // Dropped once the lock is released: its blocks may hold many values.
        let stream = self.shared.lock().streams.remove(&split);
        drop(stream);
    }
}

impl<D: Decoder> Drop for Pool<D> {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.work.notify_all();
        for worker in self.workers.drain(..) {
            // A worker's panic was already reported as a broken pool.
            let _ = worker.join();
        }
    }
}

/// Takes the front block of `split` off its queue when it is decoded, or (with `raw`) when it
/// is read and no worker has started decoding it: the caller then decodes each record as it
/// hands it out, so the values it makes are fresh in its own cache and allocator.
fn take_front<O>(state: &mut State<O>, split: usize, raw: bool) -> Option<Block<O>> {
    let stream = state.streams.get_mut(&split)?;
    match stream.queue.front() {
        Some(Slot::Done(_)) => {}
        Some(Slot::Raw(_)) if raw => {}
        _ => return None,
    }
    stream.taken += 1;
    match stream.queue.pop_front() {
        Some(Slot::Done(block)) => Some(block),
        Some(Slot::Raw(raw)) => {
            let last = raw.is_last();
            Some(Block {
                contents: Contents::Raw(raw),
                last,
                skipped: Vec::new(),
            })
        }
        _ => None,
    }
}

fn broken(split: &Split) -> Error {
    Error::Record(
        tfrecord_core::Error::from(std::io::Error::other(
            "a reading thread of the data set stopped unexpectedly",
        ))
        .with_path(split.path.clone()),
    )
}

/// How many open splits (the first, by index) are read ahead: every split of a cycle of up to
/// 64, more with many threads.
pub(crate) fn scan_len(threads: usize) -> usize {
    threads.saturating_mul(4).max(64)
}

/// The splits work is looked for in, most urgent first: the first [`scan_len`] open ones, then
/// those ahead.
fn order<O>(state: &State<O>, threads: usize) -> impl Iterator<Item = usize> + use<'_, O> {
    let open = &state.open[..state.open.len().min(scan_len(threads))];
    open.iter()
        .copied()
        .chain(state.next_input..state.ahead_end)
}

/// The most urgent task, taken out of the state (decoding only if `decode`): for split
/// `first` if it has one, else the first of [`order`].
fn pick<D: Decoder>(
    state: &mut State<D::Out>,
    shared: &Shared<D>,
    decode: bool,
    first: Option<usize>,
) -> Option<Task> {
    let queue_len = shared.queue_len();
    if let Some(split) = first
        && let Some(task) = task_of(state, split, queue_len, decode)
    {
        return Some(task);
    }
    // As `order`, by index: the tasks are taken out of the state.
    for k in 0..state.open.len().min(scan_len(shared.threads)) {
        let split = state.open[k];
        if let Some(task) = task_of(state, split, queue_len, decode) {
            return Some(task);
        }
    }
    (state.next_input..state.ahead_end).find_map(|split| task_of(state, split, queue_len, decode))
}

/// The task split `split` has, taken out of the state: a block to decode (if `decode`), else
/// a block to read.
fn task_of<O>(state: &mut State<O>, split: usize, queue_len: usize, decode: bool) -> Option<Task> {
    let stream = state.streams.get_mut(&split)?;
    if let Some(i) = stream
        .queue
        .iter()
        .position(|s| matches!(s, Slot::Raw(_)))
        .filter(|_| decode)
    {
        let Slot::Raw(raw) = std::mem::replace(&mut stream.queue[i], Slot::Decoding) else {
            return None;
        };
        return Some(Task::Decode(split, stream.taken + i as u64, raw));
    }
    if !stream.reading && !stream.ended && stream.queue.len() < queue_len {
        stream.reading = true;
        return Some(Task::Read(split, stream.reader.take(), stream.start));
    }
    None
}

/// Whether [`pick`] finds a block to decode (if `decode`), or a split to read whose queue holds
/// at most half of `queue_len` blocks.
fn worth_waking<O>(state: &State<O>, queue_len: usize, decode: bool, threads: usize) -> bool {
    order(state, threads).any(|split| {
        state.streams.get(&split).is_some_and(|stream| {
            (decode && stream.queue.iter().any(|s| matches!(s, Slot::Raw(_))))
                || (!stream.reading && !stream.ended && stream.queue.len() <= queue_len / 2)
        })
    })
}

/// Marks the pool broken if a worker unwinds.
struct PanicGuard<'a, D: Decoder>(&'a Shared<D>);

impl<D: Decoder> Drop for PanicGuard<'_, D> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock().broken = true;
            self.0.ready.notify_all();
        }
    }
}

fn work<D: Decoder>(shared: &Shared<D>) {
    let _guard = PanicGuard(shared);
    loop {
        let task = {
            let mut state = shared.lock();
            loop {
                if state.shutdown {
                    return;
                }
                if let Some(task) = pick(&mut state, shared, D::ON_WORKERS, None) {
                    break task;
                }
                state.idle += 1;
                state = shared.wait(&shared.work, state);
                state.idle -= 1;
            }
        };
        drop(run(shared, task));
    }
}

/// Does a task (on a worker, or on the caller's thread while it would wait) and stores what
/// it made; returns the state, locked.
fn run<D: Decoder>(shared: &Shared<D>, task: Task) -> MutexGuard<'_, State<D::Out>> {
    let mut state = match task {
        Task::Read(split, reader, start) => {
            let (slot, ended, reader) = read(shared, split, reader, start);
            let mut state = shared.lock();
            if let Some(stream) = state.streams.get_mut(&split) {
                stream.reading = false;
                stream.ended = ended;
                stream.queue.push_back(slot);
                stream.reader = if ended { None } else { reader };
            }
            state
        }
        Task::Decode(split, number, raw) => {
            let block = raw.decode(&*shared.decoder, &shared.splits[split].path);
            let mut state = shared.lock();
            if let Some(stream) = state.streams.get_mut(&split)
                && let Some(i) = number.checked_sub(stream.taken)
                && let Some(slot) = stream
                    .queue
                    .get_mut(usize::try_from(i).unwrap_or(usize::MAX))
            {
                *slot = Slot::Done(block);
            }
            state
        }
    };
    // The task may have made work (a block to decode, a split free to read again) for a
    // worker that waits, and a block for the interleave.
    shared.wake_worker(&state);
    if state.wanted {
        state.wanted = false;
        shared.ready.notify_one();
    }
    state
}

/// Reads one block of `split`, opening it first if needed: raw when decoding is deferred,
/// decoded otherwise. Returns the slot, whether the split ended, and the reader.
fn read<D: Decoder>(
    shared: &Shared<D>,
    split: usize,
    reader: Option<SplitReader>,
    start: Start,
) -> (Slot<D::Out>, bool, Option<SplitReader>) {
    let mut reader = match reader {
        Some(r) => r,
        None => match SplitReader::open(&shared.splits[split], &shared.opts, start) {
            Ok(r) => r,
            Err(e) => return (Slot::Done(Block::failed(e, start)), true, None),
        },
    };
    if D::DEFERRED || !D::ON_WORKERS {
        let raw = reader.read_raw();
        let ended = raw.is_last();
        (Slot::Raw(raw), ended, Some(reader))
    } else {
        let block = reader.read_block(&*shared.decoder);
        let ended = block.last;
        (Slot::Done(block), ended, Some(reader))
    }
}
