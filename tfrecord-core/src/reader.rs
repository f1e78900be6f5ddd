//! Reading records: TFRecord and OFRecord framing over plain, gzip or zlib streams, one frame at
//! a time ([`RecordReader`]), from byte ranges of a file, or in chunks of whole frames for
//! several threads; damaged records failed on, skipped or resynchronized past.

mod boundary;
mod chunks;
mod confirm;
mod cutter;
pub(crate) mod frames;
mod options;
mod parallel;
mod policy;
mod recover;
mod scan;
mod shared;
mod source;
mod split;
mod unverified;

pub use chunks::{Chunk, ChunkRecords};
pub use cutter::ChunkReader;
pub use frames::{Located, RecordReader};
pub use options::ReaderOptions;
pub use parallel::for_each_chunk;
pub use policy::{BadRecords, SkipReason, SkipSummary, Skipped};
pub use shared::SharedChunks;
pub(crate) use shared::read_exact_at;
pub use split::split_range;
pub use unverified::Unverified;
