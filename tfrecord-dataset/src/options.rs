//! How a data set is read: order, threads, shuffling, epochs, worker shard, skip and take.

use tfrecord_core::ReaderOptions;

use crate::error::{Error, Result};

/// The order records of several splits come in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// One split after the other, each from its first record to its last.
    Sequential,
    /// tf.data's deterministic `interleave(cycle_length, block_length)`: `block_length` records
    /// from each of `cycle_length` open splits in turn; a split that ends is replaced by the
    /// next unopened one when its turn comes again.
    Interleave {
        /// How many splits are open at once (at least 1). Each open split holds an open file
        /// and its read buffer, as each of tf.data's does: a cycle of thousands of files needs
        /// as many file descriptors.
        cycle_length: usize,
        /// How many consecutive records are taken from a split per turn (at least 1).
        block_length: usize,
    },
}

impl Order {
    /// `(cycle_length, block_length)`: sequential order is an interleave of one split.
    pub(crate) fn cycle(self) -> (usize, usize) {
        match self {
            Order::Sequential => (1, 1),
            Order::Interleave {
                cycle_length,
                block_length,
            } => (cycle_length, block_length),
        }
    }
}

/// Seeded shuffling: the order of splits in each epoch, and a record shuffle buffer.
///
/// # Reproducibility
///
/// The same seed gives the same order on every platform and with any number of threads, and
/// in every version of this crate unless its release notes say the order changed (the
/// checkpoints of an older order are then refused, as taken of another data set). Everything
/// random is fixed here, not left to a library version:
///
/// - **Generator**: PCG64, the reference `pcg64` of the PCG family (128-bit LCG with multiplier
///   `0x2360ED051FC65DA44385DF649FCCF645`, XSL-RR output to 64 bits), as `rand_pcg::Pcg64`
///   implements it.
/// - **Seeding**, for the `seed`, the `epoch` (0 for the first) and a use `u` (1: split order,
///   2: shuffle buffer), with `splitmix64` the SplitMix64 finalizer
///   (`z = x + 0x9E3779B97F4A7C15; z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9;
///   z = (z ^ z >> 27) * 0x94D049BB133111EB; z ^ z >> 31`, wrapping):
///   `hi = splitmix64(seed ^ splitmix64(epoch))`, `lo = splitmix64(hi ^ u)`,
///   `Pcg64::new(state = hi << 64 | lo, stream = u << 64 | epoch)`.
/// - **Draws**: an integer below `n` by Lemire's multiply-and-reject method on whole 64-bit
///   outputs (`m = x * n` in 128 bits; draw again while the low 64 bits of `m` are below
///   `(2^64 - n) % n`; the result is `m >> 64`), never `rand`'s distributions, whose algorithms
///   may change between versions.
/// - **Split order**: Fisher-Yates from the last position down
///   (`for i in (1..len).rev() { swap(i, below(i + 1)) }`), over the splits of the shard in
///   listing order.
/// - **Buffer**: one draw `below(len)` per record out (see [`buffer_size`](Self::buffer_size)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shuffle {
    pub(crate) seed: u64,
    pub(crate) buffer_size: usize,
    pub(crate) files: bool,
}

impl Shuffle {
    /// The default shuffle buffer: 10,000 records.
    pub const DEFAULT_BUFFER: usize = 10_000;

    /// Shuffles split order and records (a buffer of [`DEFAULT_BUFFER`](Self::DEFAULT_BUFFER))
    /// from `seed`.
    pub fn new(seed: u64) -> Self {
        Shuffle {
            seed,
            buffer_size: Self::DEFAULT_BUFFER,
            files: true,
        }
    }

    /// The record shuffle buffer, tf.data's `shuffle(buffer_size)`: the buffer is filled, then
    /// each record out is drawn uniformly from it and its place is taken by the next record in.
    /// 0 or 1: records keep the (interleaved) order of the splits. The buffer holds records'
    /// bytes (raw records, and `values`, which decodes each as it leaves), or decoded values
    /// (`value_batches`, whose values are decoded into in place on the reading threads).
    #[must_use]
    pub fn buffer_size(mut self, records: usize) -> Self {
        self.buffer_size = records;
        self
    }

    /// Whether the order of splits is shuffled, anew each epoch (default `true`).
    #[must_use]
    pub fn files(mut self, shuffle: bool) -> Self {
        self.files = shuffle;
        self
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }
}

/// This worker's part of the data: shard `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Shard {
    /// This worker, `0 <= index < count`.
    pub(crate) index: usize,
    /// How many workers share the data.
    pub(crate) count: usize,
}

/// The most threads a data set reads with: each holds blocks of records in flight, and more
/// than this is a mistake rather than a machine.
pub const MAX_THREADS: usize = 1024;

/// How a [`Dataset`](crate::Dataset) is read. Every setting has a builder method; the defaults
/// read every record once, split after split, on the calling thread.
///
/// The stages, in order (as a tf.data pipeline
/// `files.shard().shuffle().interleave().shuffle(buffer).repeat(epochs).skip(skip).take(take)`):
///
/// 1. [`shard`](Self::shard)`(i, n)`: the splits at positions `k` with `k % n == i` of the
///    files in the order [`Sources`](crate::Sources) lists them (each file one split, or cut
///    into byte ranges when there are fewer files than workers), so that which records a
///    worker reads never depends on the seed;
/// 2. with [`shuffle`](Self::shuffle) (and [`Shuffle::files`]), those splits permuted anew
///    each epoch;
/// 3. [`order`](Self::order): sequential or interleaved, read on [`threads`](Self::threads)
///    threads;
/// 4. the shuffle buffer ([`Shuffle::buffer_size`]), emptied at the end of each epoch;
/// 5. [`epochs`](Self::epochs) of the above;
/// 6. [`skip`](Self::skip) and [`take`](Self::take) over the whole stream.
///
/// A command line fills it from flags directly: `--limit N` is `take(N)`, `--skip N` is
/// `skip(N)`, `--shard I/N` is `shard(I, N)`, `--shuffle --seed S` is
/// `shuffle(Shuffle::new(S))`, `--threads N` is `threads(N)`; the reader settings
/// (`verify_data_crc`, limits, and the bad-record policy as it comes) go in
/// [`reader`](Self::reader).
#[derive(Clone, Debug)]
pub struct DatasetOptions {
    pub(crate) order: Order,
    pub(crate) threads: usize,
    pub(crate) deterministic: bool,
    pub(crate) shuffle: Option<Shuffle>,
    pub(crate) epochs: Option<u64>,
    pub(crate) shard: Option<Shard>,
    pub(crate) skip: u64,
    pub(crate) take: Option<u64>,
    pub(crate) reader: ReaderOptions,
}

impl Default for DatasetOptions {
    fn default() -> Self {
        DatasetOptions {
            order: Order::Sequential,
            threads: 1,
            deterministic: true,
            shuffle: None,
            epochs: Some(1),
            shard: None,
            skip: 0,
            take: None,
            reader: ReaderOptions::new(),
        }
    }
}

impl DatasetOptions {
    /// Sequential, one thread, deterministic, no shuffling, one epoch, every shard, nothing
    /// skipped, no limit, the reader's default settings.
    pub fn new() -> Self {
        Self::default()
    }

    /// The order records of several splits come in (default [`Order::Sequential`]).
    #[must_use]
    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// Shorthand for [`Order::Interleave`].
    #[must_use]
    pub fn interleave(self, cycle_length: usize, block_length: usize) -> Self {
        self.order(Order::Interleave {
            cycle_length,
            block_length,
        })
    }

    /// Threads that read and decode, the caller's included (default 1: only the caller's).
    /// With more, `threads - 1` worker threads read splits ahead into bounded queues, and the
    /// caller's thread hands records out and does the same work while its next block is not
    /// ready. A split is read by one thread at a time (in order), while its records are
    /// decoded on every thread, so even one split gains from threads. The workers read ahead
    /// the first `max(64, 4 * threads)` open splits of the cycle (by index) and `threads`
    /// splits after it; the caller's thread reads any other split it waits for. Memory stays
    /// bounded by `(min(cycle_length, max(64, 4 * threads)) + threads + 1) * (2 * threads + 2)`
    /// blocks of at most 256 records or 1 MiB of payload each (plus the record being read when
    /// one is larger), plus the shuffle buffer.
    ///
    /// [`Dataset::value_batches`](crate::Dataset::value_batches) gains the most: its values are
    /// decoded on every thread into the values of batches already given back, so nothing is
    /// allocated per record. [`Dataset::values`](crate::Dataset::values) hands out values the
    /// caller keeps, and a value allocated on a worker but freed on the caller's thread is slow
    /// under glibc's allocator (its arenas are per thread and locked: several times slower on two
    /// threads than on one for types with `Vec` and `String` fields), so its workers only read and
    /// check the records' bytes, and each value is decoded on the caller's thread; it gains little
    /// from threads. Values that own no heap memory (numbers and arrays of them:
    /// `std::mem::needs_drop` is false) are decoded on the workers, and so are all values under
    /// a bad-record policy that skips, so that a record that does not decode is dropped at the
    /// same point on any thread count.
    /// Raw records are likewise read and checked on the workers and copied out on the caller's
    /// thread.
    #[must_use]
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// Whether records come in the deterministic order (default `true`). With `false` and
    /// more than one thread, the turn passes to the next split that has records ready when
    /// the current one has none yet (tf.data's `deterministic=False`): faster when splits read
    /// at uneven speeds, in an order that may differ between runs. Checkpoints still resume
    /// exactly: every record is read once.
    #[must_use]
    pub fn deterministic(mut self, deterministic: bool) -> Self {
        self.deterministic = deterministic;
        self
    }

    /// Seeded shuffling of split order and records (default none).
    #[must_use]
    pub fn shuffle(mut self, shuffle: Shuffle) -> Self {
        self.shuffle = Some(shuffle);
        self
    }

    /// How many times the data is read (default 1); `None` repeats forever, as tf.data's
    /// `repeat()`; an epoch that yields no record ends the repetition, as in tf.data. With
    /// shuffling, each epoch has its own split order and record order.
    #[must_use]
    pub fn epochs(mut self, epochs: Option<u64>) -> Self {
        self.epochs = epochs;
        self
    }

    /// This worker's shard, `index` of `count`: the splits at positions `k` with
    /// `k % count == index` of the files in listing order (each file one split, or its byte
    /// ranges), dealt before any shuffle. The `count` shards together hold every record
    /// exactly once, whatever seed each worker shuffles with. With fewer splits than workers some shards are empty (byte-range splits
    /// of uncompressed files will fill them, see [`Split`](crate::Split)).
    #[must_use]
    pub fn shard(mut self, index: usize, count: usize) -> Self {
        self.shard = Some(Shard { index, count });
        self
    }

    /// Records dropped from the start of the stream (after sharding and shuffling).
    #[must_use]
    pub fn skip(mut self, records: u64) -> Self {
        self.skip = records;
        self
    }

    /// The most records read (after sharding, shuffling and [`skip`](Self::skip)).
    #[must_use]
    pub fn take(mut self, records: u64) -> Self {
        self.take = Some(records);
        self
    }

    /// The reader settings (checksum verification, record length limit, read buffer, and the
    /// bad-record policy). Each file's format and compression come from its
    /// [`SourceFile`](crate::SourceFile).
    ///
    /// A [`BadRecords`](tfrecord_core::BadRecords) policy's budget and shared log are one for
    /// every reader of the data set, its epochs and its resumed reads (make a new policy for a
    /// new budget). Damage is counted and logged as it is read, which can be ahead of the
    /// records handed out: blocks of up to 256 records are read ahead; so with
    /// [`take`](Self::take), or when reading stops early, the log can name damage after the
    /// last record handed out, and a read resumed from a checkpoint meets damage read ahead
    /// past the checkpoint's position again. Damage before a saved position is not met again:
    /// a resumed read returns to each position without reading the frames before it.
    #[must_use]
    pub fn reader(mut self, reader: ReaderOptions) -> Self {
        self.reader = reader;
        self
    }

    /// Checks that the settings can be used: a shard index below the count, a cycle and block
    /// length of at least 1.
    ///
    /// # Errors
    /// [`Error::Options`], saying which setting and why.
    pub fn validate(&self) -> Result<()> {
        if let Some(Shard { index, count }) = self.shard
            && index >= count
        {
            return Err(Error::Options(format!(
                "shard {index}/{count}: the shard index must be below the shard count \
                 (0 <= I < N)"
            )));
        }
        if self.threads > MAX_THREADS {
            return Err(Error::Options(format!(
                "{} threads: at most {MAX_THREADS} (each holds blocks of records in flight)",
                self.threads
            )));
        }
        let (cycle, block) = self.order.cycle();
        if cycle == 0 || block == 0 {
            return Err(Error::Options(format!(
                "interleave cycle length {cycle} and block length {block}: both must be at \
                 least 1"
            )));
        }
        Ok(())
    }
}
