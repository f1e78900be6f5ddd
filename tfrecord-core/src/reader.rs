//! Reading records: TFRecord and OFRecord framing over plain, gzip or zlib streams, one frame at
//! a time ([`RecordReader`]) or in chunks of whole frames for several threads.

mod chunks;
pub(crate) mod frames;
mod parallel;

pub use chunks::{Chunk, ChunkReader, ChunkRecords, SharedChunks};
pub use frames::{ReaderOptions, RecordReader, Unverified};
pub use parallel::for_each_chunk;
