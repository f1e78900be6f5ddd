//! TFRecord / `tf.train.Example` and OFRecord data as Apache Arrow: records decoded into
//! [`RecordBatch`](arrow_array::RecordBatch)es by one documented type mapping, and batches
//! written back as records, with Parquet through the `parquet` crate.

mod from_arrow;
mod schema;
mod to_arrow;

pub use from_arrow::ArrowEncoder;
pub use schema::{SPEC_METADATA_KEY, record_from_schema};
pub use to_arrow::ArrowDecoder;

/// Re-exported: the Arrow and Parquet crates this one is built on, at their versions.
pub use {arrow_array, arrow_schema, parquet};

/// How records map to Arrow types where there is a choice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArrowOptions {
    /// `LargeList`, `LargeBinary` and `LargeUtf8` (64-bit offsets) instead of `List`, `Binary`
    /// and `Utf8`: for batches holding more than 2 GiB of bytes or 2^31 values in a column.
    pub large_lists: bool,
}

impl ArrowOptions {
    /// The default options: 32-bit offsets.
    pub fn new() -> Self {
        ArrowOptions::default()
    }

    /// With [`large_lists`](Self::large_lists) set.
    #[must_use]
    pub fn with_large_lists(mut self, large: bool) -> Self {
        self.large_lists = large;
        self
    }
}
