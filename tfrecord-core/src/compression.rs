//! Whole-stream compression, as TensorFlow's `TFRecordOptions` does it.

use std::path::Path;

/// How a record stream is compressed. As with TensorFlow's `TFRecordOptions`, the whole stream
/// (headers, payloads and checksums) is compressed, not each record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Compression {
    /// No compression.
    #[default]
    None,
    /// A gzip stream (RFC 1952); concatenated gzip members are read as one stream.
    Gzip,
    /// A zlib stream (RFC 1950).
    Zlib,
}

impl Compression {
    /// Guesses the compression from a file name: `.gz` is gzip, `.zlib` and `.zz` are zlib (in
    /// any case), anything else is none.
    pub fn from_path(path: impl AsRef<Path>) -> Self {
        let ext = path.as_ref().extension().and_then(|e| e.to_str());
        let is = |name: &str| ext.is_some_and(|e| e.eq_ignore_ascii_case(name));
        if is("gz") {
            Compression::Gzip
        } else if is("zlib") || is("zz") {
            Compression::Zlib
        } else {
            Compression::None
        }
    }

    /// Parses `none`, `gzip` or `zlib` (also TensorFlow's `""`, `GZIP` and `ZLIB`).
    pub fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "" | "none" => Some(Compression::None),
            "gzip" | "gz" => Some(Compression::Gzip),
            "zlib" => Some(Compression::Zlib),
            _ => None,
        }
    }

    /// The lower-case name: `none`, `gzip` or `zlib`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zlib => "zlib",
        }
    }
}

/// The container format of a record file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Format {
    /// TensorFlow's TFRecord: `u64 LE length | u32 LE masked CRC32C of the length | data |
    /// u32 LE masked CRC32C of the data`.
    #[default]
    TfRecord,
    /// OneFlow's OFRecord framing: `i64 LE length | data`, no checksum.
    OfRecord,
}

impl Format {
    /// Parses `tfrecord` or `ofrecord`.
    pub fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "tfrecord" => Some(Format::TfRecord),
            "ofrecord" => Some(Format::OfRecord),
            _ => None,
        }
    }

    /// The lower-case name: `tfrecord` or `ofrecord`.
    pub fn name(self) -> &'static str {
        match self {
            Format::TfRecord => "tfrecord",
            Format::OfRecord => "ofrecord",
        }
    }

    /// The bytes a frame adds around its payload: 16 for TFRecord (the length, its checksum
    /// and the data checksum), 8 for OFRecord (the length).
    ///
    /// ```
    /// use tfrecord_core::Format;
    ///
    /// assert_eq!(Format::TfRecord.frame_overhead(), 16);
    /// assert_eq!(Format::OfRecord.frame_overhead(), 8);
    /// ```
    pub fn frame_overhead(self) -> u64 {
        match self {
            Format::TfRecord => 16,
            Format::OfRecord => 8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_path_by_extension() {
        assert_eq!(Compression::from_path("a/b.tfrecord.gz"), Compression::Gzip);
        assert_eq!(Compression::from_path("a.zlib"), Compression::Zlib);
        assert_eq!(Compression::from_path("a.zz"), Compression::Zlib);
        assert_eq!(Compression::from_path("A.TFRECORD.GZ"), Compression::Gzip);
        assert_eq!(Compression::from_path("a.tfrecord"), Compression::None);
        assert_eq!(Compression::from_path("part-00000"), Compression::None);
    }
}
