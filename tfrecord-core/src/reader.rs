//! Reading records: TFRecord and OFRecord framing over plain, gzip or zlib streams, one frame at
//! a time ([`RecordReader`]) or in chunks of whole frames for several threads.

mod boundary;
mod chunks;
mod cutter;
pub(crate) mod frames;
mod parallel;
mod shared;
mod source;

pub use chunks::{Chunk, ChunkRecords};
pub use cutter::ChunkReader;
pub use frames::{ReaderOptions, RecordReader, Unverified};
pub use parallel::for_each_chunk;
pub use shared::SharedChunks;
