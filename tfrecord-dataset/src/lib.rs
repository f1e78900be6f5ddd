//! Many-shard TFRecord and OFRecord data sets: the layer between record files and a training
//! loop, as tf.data's `TFRecordDataset` pipelines are.
//!
//! - **Sources** ([`Sources`]): files, directories (TensorFlow / Beam / TFDS shard sets such as
//!   `train-00042-of-01024.tfrecord`, OneFlow and Spark `part-*` files; hidden files,
//!   `_SUCCESS`, `*.crc` and `*.idx` are never data) and glob patterns, each file with its
//!   format and compression, in a deterministic sorted order.
//! - **Order** ([`Order`]): sequential, or tf.data's deterministic
//!   `interleave(cycle_length, block_length)`; read and decoded on several threads with
//!   bounded memory, in the same order whatever the thread count (or, when asked, in a faster
//!   order that may vary).
//! - **Shuffling** ([`Shuffle`]): split order per epoch and a record shuffle buffer with
//!   tf.data's `shuffle(buffer_size)` semantics, from a seed; the same seed gives the same
//!   order on every platform and thread count (the generator and every draw are fixed and
//!   documented, see [`Shuffle`]). Epochs repeat with a new order each.
//! - **Sharding** ([`DatasetOptions::shard`]) for workers, by split: whole files while there
//!   are enough of them, else byte ranges of uncompressed TFRecord files, so that every worker
//!   gets records (see [`Split`]), dealt before any shuffle so that workers with seeds of
//!   their own still read every record once between them; and **skip / take** after it, as
//!   tf.data's `shard().skip().take()`.
//! - **Checkpoints** ([`Checkpoint`]): a small serde / JSON position from which reading
//!   resumes exactly, shuffle buffer included.
//! - **Bad records** (the reader options' [`BadRecords`](tfrecord_core::BadRecords)): damaged
//!   or undecodable records skipped within one budget for the whole data set, counted in the
//!   order the records are handed out (so a read over budget stops at the same record on any
//!   number of threads), each skip reported once (`drain_skipped` on the iterators).
//! - **Sharded writers** ([`ShardedWriter`]): output split by count, records or bytes, named
//!   `train-00000-of-00004.tfrecord` or `part-00000`, each shard written under a temporary
//!   name and renamed only when the set is complete.
//!
//! Records come raw ([`Dataset::records`], each with its file, offset and index) or decoded as
//! types deriving `Example` / `SequenceExample`: one by one ([`Dataset::values`]), or in
//! [`ValueBatch`]es of a fixed size ([`Dataset::value_batches`]). Batches are decoded on every
//! reading thread into the values of batches already given back, so that reading them
//! allocates nothing per record.
//! Errors name the file, byte offset, record index and feature key.
//!
//! # Example
//!
//! ```
//! use tfrecord_core::{Example, Writer};
//! use tfrecord_dataset::{Dataset, DatasetOptions, Shuffle};
//!
//! #[derive(Example, Debug, PartialEq)]
//! struct Sample {
//!     id: i64,
//!     text: String,
//! }
//!
//! let dir = tempfile::tempdir()?;
//! for shard in 0..4 {
//!     let path = dir.path().join(format!("train-{shard:05}-of-00004.tfrecord"));
//!     let mut w = Writer::<Sample>::create(path)?;
//!     for i in 0..25 {
//!         w.write(&Sample { id: shard * 100 + i, text: format!("record {i}") })?;
//!     }
//!     w.finish()?;
//! }
//!
//! // Worker 1 of 2: two of the four shards, interleaved, shuffled, on two threads.
//! let options = DatasetOptions::new()
//!     .interleave(2, 4)
//!     .shuffle(Shuffle::new(42).buffer_size(16))
//!     .shard(1, 2)
//!     .threads(2);
//! let dataset = Dataset::open([dir.path()])?.with_options(options);
//!
//! let mut values = dataset.values::<Sample>()?;
//! let first: Vec<Sample> = values.by_ref().take(10).collect::<Result<_, _>>()?;
//! let checkpoint = values.checkpoint().to_json();
//! let rest: Vec<Sample> = values.collect::<Result<_, _>>()?;
//! assert_eq!(first.len() + rest.len(), 50);
//!
//! // Later, maybe in another process: the same stream from where it stopped.
//! let saved = tfrecord_dataset::Checkpoint::from_json(&checkpoint)?;
//! let resumed: Vec<Sample> = dataset.resume(saved).values::<Sample>()?.collect::<Result<_, _>>()?;
//! assert_eq!(resumed, rest);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod block;
mod checkpoint;
mod dataset;
mod error;
mod fetch;
mod globs;
mod interleave;
mod names;
mod options;
mod pipeline;
mod plan;
mod pool;
mod prefetch;
mod rng;
mod shuffle;
mod sources;
mod spares;
mod split;
mod writer;

pub use checkpoint::Checkpoint;
pub use dataset::{Dataset, Record, Records, ValueBatch, ValueBatches, Values};
pub use error::{Error, Result};
pub use globs::glob_paths;
pub use options::{DatasetOptions, MAX_THREADS, Order, Shuffle};
pub use sources::{SourceFile, Sources, expand_path};
pub use split::Split;
pub use writer::{
    FinishedShards, ShardNaming, ShardSplit, ShardedWriter, ShardedWriterOptions,
    remove_unfinished_shards,
};
