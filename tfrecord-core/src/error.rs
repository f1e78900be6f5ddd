//! The one error type of the crate.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::feature::FeatureProblem;

/// The name standard input goes by where an error names its file (`-` on a command line).
pub const STDIN_NAME: &str = "<stdin>";

/// What went wrong, without the location; see [`Error`] for where.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The stream ended inside a record's header, payload or footer.
    Truncated {
        /// How many bytes the frame part needed.
        needed: u64,
        /// How many bytes were left in the stream.
        found: u64,
    },
    /// A masked CRC32C did not match the bytes it covers.
    Corrupted {
        /// Which checksum failed: `"length"` or `"data"`.
        what: &'static str,
        /// The checksum stored in the file.
        stored: u32,
        /// The checksum of the bytes read.
        computed: u32,
    },
    /// Bytes follow the end of a compressed stream.
    TrailingData,
    /// The gzip or zlib stream itself is damaged or truncated (or is not compressed at all).
    Compressed {
        /// `gzip` or `zlib`.
        compression: &'static str,
        /// What the decompressor said.
        detail: String,
    },
    /// The first frame of the stream is not a TFRecord frame at all.
    NotTfRecord {
        /// A hint about what the bytes look like instead, when one is known.
        hint: Option<&'static str>,
    },
    /// A record declares a length larger than the configured limit (or than the address
    /// space). A length larger than what is left of a file is [`ErrorKind::Truncated`].
    LengthTooLarge {
        /// The declared length.
        declared: u64,
        /// The limit it exceeds.
        limit: u64,
        /// `"limit"` for the configured limit, `"address space"` when it cannot be addressed.
        bound: &'static str,
    },
    /// An OFRecord frame declares a negative length.
    NegativeLength {
        /// The declared (negative) length.
        declared: i64,
    },
    /// A record's payload is not a valid protobuf message of the expected type.
    Decode {
        /// The protobuf message type, e.g. `tensorflow.Example`.
        message: &'static str,
        /// What the protobuf decoder said.
        detail: String,
    },
    /// A feature has the wrong kind, count or value, or is missing.
    Feature {
        /// What is wrong, to match on: missing, wrong kind, wrong count, out of range, ...
        problem: FeatureProblem,
        /// Expected versus found, in words (what the error prints).
        detail: String,
    },
    /// JSON input that is not a valid record.
    Json {
        /// What is wrong with it.
        detail: String,
    },
    /// A damaged record or byte range that the reader's policy would skip, after the policy's
    /// budget of skips is spent ([`BadRecords`](crate::BadRecords)).
    TooManyBadRecords {
        /// The budget: how many skips the policy allows.
        max: u64,
        /// What would have been skipped: the record or bytes, and why.
        last: String,
    },
    /// An operation the input does not allow, such as splitting a compressed file by byte
    /// range.
    Unsupported {
        /// What cannot be done, and why.
        detail: String,
    },
    /// An index file (one `offset size` line per record) that is malformed or does not match
    /// its record file.
    Index {
        /// The 1-based line of the index file, when the error is about one.
        line: Option<u64>,
        /// What is wrong.
        detail: String,
    },
    /// Reading or writing failed.
    Io(io::Error),
}

/// An error with its location: file, byte offset, record index and feature key, where known.
///
/// The `Display` form reads like
/// `data.tfrecord: corrupted record at byte 1024 (record 3): data checksum mismatch ...`.
/// Byte offsets of compressed files count bytes of the decompressed stream.
///
/// It is one pointer wide, so that `Result`s in hot decoding loops stay small.
pub struct Error(Box<Inner>);

/// The message, as `Display` words it (what `fn main() -> Result<(), Error>` prints on an
/// error); `{:#?}` gives the fields.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            f.debug_tuple("Error").field(&self.0).finish()
        } else {
            self.write(f, true)
        }
    }
}

#[derive(Debug)]
struct Inner {
    kind: ErrorKind,
    path: Option<PathBuf>,
    offset: Option<u64>,
    record: Option<u64>,
    /// Where the record index counts from, when not from the start of the file.
    record_base: Option<u64>,
    key: Option<String>,
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of the given kind with no location yet.
    #[cold]
    pub fn new(kind: ErrorKind) -> Self {
        Error(Box::new(Inner {
            kind,
            path: None,
            offset: None,
            record: None,
            record_base: None,
            key: None,
        }))
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// The file the error is about, if known.
    pub fn path(&self) -> Option<&Path> {
        self.0.path.as_deref()
    }

    /// The byte offset of the record (its frame start) in the (decompressed) stream, if known.
    pub fn offset(&self) -> Option<u64> {
        self.0.offset
    }

    /// The 0-based index of the record in its file, if known; in a byte-range split, from the
    /// split's first record (see [`record_base`](Self::record_base)).
    pub fn record(&self) -> Option<u64> {
        self.0.record
    }

    /// When [`record`](Self::record) does not count from the start of the file: the byte
    /// offset of the record it numbers 0. A reader of a byte range of a file
    /// ([`RecordReader::open_range`](crate::RecordReader::open_range)) cannot know how many
    /// records come before the range, so it counts from its first one.
    pub fn record_base(&self) -> Option<u64> {
        self.0.record_base
    }

    /// The feature key, if the error is about one feature.
    pub fn key(&self) -> Option<&str> {
        self.0.key.as_deref()
    }

    /// Sets the file name unless one is already set.
    #[must_use]
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        if self.0.path.is_none() {
            self.0.path = Some(path.into());
        }
        self
    }

    /// Sets the byte offset unless one is already set.
    #[must_use]
    pub fn with_offset(mut self, offset: u64) -> Self {
        self.0.offset.get_or_insert(offset);
        self
    }

    /// Sets the record index unless one is already set.
    #[must_use]
    pub fn with_record(mut self, record: u64) -> Self {
        self.0.record.get_or_insert(record);
        self
    }

    /// Sets where the record index counts from (see [`record_base`](Self::record_base)),
    /// unless it is already set.
    #[must_use]
    pub fn with_record_base(mut self, offset: u64) -> Self {
        self.0.record_base.get_or_insert(offset);
        self
    }

    /// Sets the feature key unless one is already set.
    #[must_use]
    pub fn with_key(mut self, key: impl Into<String>) -> Self {
        if self.0.key.is_none() {
            self.0.key = Some(key.into());
        }
        self
    }

    /// A decode error for the named protobuf message type.
    pub fn decode(message: &'static str, err: impl fmt::Display) -> Self {
        Error::new(ErrorKind::Decode {
            message,
            detail: err.to_string(),
        })
    }

    /// A feature error that fits none of [`FeatureProblem`]'s named cases
    /// ([`FeatureProblem::Other`]), worded by `detail`.
    pub fn feature(detail: impl Into<String>) -> Self {
        Error::feature_problem(FeatureProblem::Other, detail)
    }

    /// A feature error: `problem` to match on, worded by `detail`.
    pub fn feature_problem(problem: FeatureProblem, detail: impl Into<String>) -> Self {
        Error::new(ErrorKind::Feature {
            problem,
            detail: detail.into(),
        })
    }

    /// A JSON input error.
    pub fn json(detail: impl Into<String>) -> Self {
        Error::new(ErrorKind::Json {
            detail: detail.into(),
        })
    }

    /// Prepends `prefix` to the feature key (used for flattened structs, whose keys are
    /// `outer/inner`).
    #[must_use]
    pub fn prefix_key(mut self, prefix: &str) -> Self {
        if let Some(key) = &mut self.0.key {
            key.insert_str(0, prefix);
        }
        self
    }

    /// The message without the file, byte offset and record index: what went wrong, as a
    /// report that gives the location itself words it.
    pub(crate) fn describe(&self) -> String {
        struct Unlocated<'a>(&'a Error);
        impl fmt::Display for Unlocated<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.write(f, false)
            }
        }
        Unlocated(self).to_string()
    }

    /// True when the error is an I/O error of the given kind.
    pub fn is_io(&self, kind: io::ErrorKind) -> bool {
        matches!(&self.0.kind, ErrorKind::Io(e) if e.kind() == kind)
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::new(ErrorKind::Io(e))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, true)
    }
}

impl Error {
    /// The message, with the file, byte offset and record index when `located`.
    fn write(&self, f: &mut fmt::Formatter<'_>, located: bool) -> fmt::Result {
        if located && let Some(path) = &self.0.path {
            write!(f, "{}: ", path.display())?;
        }
        let at = |f: &mut fmt::Formatter<'_>| -> fmt::Result {
            if !located {
                return Ok(());
            }
            let record = |f: &mut fmt::Formatter<'_>, r: u64| match self.0.record_base {
                Some(base) => write!(f, "record {r} of the split starting at byte {base}"),
                None => write!(f, "record {r}"),
            };
            match (self.0.offset, self.0.record) {
                (Some(o), Some(r)) => {
                    write!(f, " at byte {o} (")?;
                    record(f, r)?;
                    f.write_str(")")
                }
                (Some(o), None) => write!(f, " at byte {o}"),
                (None, Some(r)) => {
                    f.write_str(" (")?;
                    record(f, r)?;
                    f.write_str(")")
                }
                (None, None) => Ok(()),
            }
        };
        match &self.0.kind {
            ErrorKind::Truncated { needed, found } => {
                f.write_str("truncated record")?;
                at(f)?;
                write!(f, ": expected {needed} more bytes, found {found}")?;
            }
            ErrorKind::Corrupted {
                what,
                stored,
                computed,
            } => {
                f.write_str("corrupted record")?;
                at(f)?;
                write!(
                    f,
                    ": {what} checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
                )?;
            }
            ErrorKind::NotTfRecord { hint } => {
                f.write_str("not a TFRecord file")?;
                at(f)?;
                f.write_str(": the first record's length checksum does not match")?;
                if let Some(hint) = hint {
                    write!(f, " ({hint})")?;
                }
            }
            ErrorKind::LengthTooLarge {
                declared,
                limit,
                bound,
            } => {
                f.write_str("record")?;
                at(f)?;
                write!(
                    f,
                    " declares length {declared}, larger than the {bound} ({limit}"
                )?;
                if *bound == "limit" {
                    // The reader's own limit, which a file of longer records needs raised.
                    f.write_str(
                        "; raised by ReaderOptions::max_record_len, the CLI's --max-record-len",
                    )?;
                }
                f.write_str(")")?;
            }
            ErrorKind::Compressed {
                compression,
                detail,
            } => {
                write!(f, "corrupted {compression} stream")?;
                at(f)?;
                write!(f, ": {detail}")?;
            }
            ErrorKind::TrailingData => {
                f.write_str("unexpected bytes after the end of the compressed stream")?;
                at(f)?;
            }
            ErrorKind::NegativeLength { declared } => {
                f.write_str("record")?;
                at(f)?;
                write!(f, " declares negative length {declared}")?;
            }
            ErrorKind::Decode { message, detail } => {
                write!(f, "invalid {message}")?;
                at(f)?;
                write!(f, ": {detail}")?;
            }
            ErrorKind::Feature { detail, .. } => {
                f.write_str("bad feature")?;
                if let Some(key) = &self.0.key {
                    write!(f, " {key:?}")?;
                }
                at(f)?;
                write!(f, ": {detail}")?;
                return Ok(());
            }
            ErrorKind::Json { detail } => {
                f.write_str("invalid JSON record")?;
                at(f)?;
                write!(f, ": {detail}")?;
            }
            ErrorKind::TooManyBadRecords { max, last } => {
                f.write_str("too many bad records")?;
                at(f)?;
                write!(
                    f,
                    ": the budget of {max} skipped records or byte ranges is spent; "
                )?;
                write!(f, "not skipped: {last}")?;
            }
            ErrorKind::Unsupported { detail } => {
                f.write_str("unsupported")?;
                at(f)?;
                write!(f, ": {detail}")?;
            }
            ErrorKind::Index { line, detail } => {
                f.write_str("invalid index")?;
                if let Some(line) = line {
                    write!(f, " line {line}")?;
                }
                at(f)?;
                write!(f, ": {detail}")?;
            }
            ErrorKind::Io(e) => {
                f.write_str("I/O error")?;
                at(f)?;
                write!(f, ": {e}")?;
            }
        }
        if let Some(key) = &self.0.key {
            write!(f, " [feature {key:?}]")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// Adds where in which stream an error happened.
pub(crate) fn locate(err: Error, path: Option<&Path>, offset: u64, record: u64) -> Error {
    let err = err.with_offset(offset).with_record(record);
    match path {
        Some(p) => err.with_path(p.to_path_buf()),
        None => err,
    }
}

#[cfg(test)]
mod tests {
    use super::Error;

    /// `fn main() -> Result<(), Error>` prints the `Debug` form: the message, as `Display`
    /// words it; `{:#?}` keeps the fields.
    #[test]
    fn debug_is_the_message_and_alternate_debug_the_fields() {
        let e = Error::feature("expected float_list, found int64_list")
            .with_key("id")
            .with_record(3)
            .with_path("data.tfrecord");
        assert_eq!(format!("{e:?}"), e.to_string());
        assert!(e.to_string().starts_with("data.tfrecord: "), "{e}");
        let fields = format!("{e:#?}");
        assert!(
            fields.contains("record: Some(\n") && fields.contains("\"id\""),
            "{fields}"
        );
    }
}
