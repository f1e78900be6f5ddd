//! The one error type of the crate.

use std::fmt;
use std::path::{Path, PathBuf};

/// Why a data set could not be listed, read, resumed or written.
///
/// Record-level problems (framing, checksums, decoding, I/O) are [`Error::Record`]: the
/// wrapped [`tfrecord_core::Error`] names the file, byte offset, record index and feature key.
/// The other variants are about the data set as a whole.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Reading, decoding or writing a record failed; the inner error says where.
    Record(tfrecord_core::Error),
    /// An input (a directory or a glob pattern) that stands for no record file.
    NoFiles {
        /// The input as given.
        input: PathBuf,
        /// What was looked for, and what was found instead.
        detail: String,
    },
    /// A directory holds part of a numbered shard set (`name-SSSSS-of-NNNNN`) only.
    MissingShards {
        /// The first missing shard's path.
        missing: PathBuf,
        /// How many shards the names announce.
        expected: u64,
        /// How many of them are present.
        found: u64,
    },
    /// A directory holds part of a numbered shard set, and the missing shard is there under
    /// another suffix (`train-00001-of-00002.tfrecord.gz` beside
    /// `train-00000-of-00002.tfrecord`): a set's shards share one suffix.
    MixedSuffixes {
        /// The set, as a pattern: `dir/train-*-of-00002.tfrecord`.
        set: PathBuf,
        /// The missing shard's number.
        index: u64,
        /// How many shards the names announce.
        count: u64,
        /// The file with that number and another suffix.
        other: PathBuf,
    },
    /// A directory holds two numbered shard sets of one name with different shard counts or
    /// suffixes (`train-*-of-00002.tfrecord` beside `train-*-of-00003.tfrecord`, or beside
    /// `train-*-of-00002.tfrecord.gz`): read together they would hold the same data twice, or
    /// mix two versions of it, and which one is current cannot be told from the names.
    ShardSets {
        /// One set, as a pattern: `dir/train-*-of-00002.tfrecord`.
        first: PathBuf,
        /// The other set, as a pattern.
        second: PathBuf,
    },
    /// A directory holds OneFlow / Spark `part-*` files and other record files beside them
    /// (numbered shards, `*.tfrecord`): which of them the directory stands for cannot be told,
    /// and reading either kind alone would leave the other out.
    MixedKinds {
        /// The directory.
        dir: PathBuf,
        /// One `part-*` file.
        part: PathBuf,
        /// One of the other record files.
        record: PathBuf,
    },
    /// A glob pattern that does not parse.
    Pattern {
        /// The pattern as given.
        pattern: String,
        /// What the pattern parser said.
        detail: String,
    },
    /// Options that cannot be used together, or out of range (`shard 4/4`, ...).
    Options(String),
    /// A checkpoint that does not belong to this data set and these options, or that no
    /// longer matches the files.
    Checkpoint(String),
    /// A file of a shard set of the output's name (of any shard count) exists, and overwriting
    /// was not asked for: the new set would replace it, or be mixed with it in the directory.
    Exists(PathBuf),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An I/O error about `path`, as a record-level error naming the file.
    pub(crate) fn io(e: std::io::Error, path: impl Into<PathBuf>) -> Self {
        Error::Record(tfrecord_core::Error::from(e).with_path(path))
    }

    /// A record's error, located at the record: its file, frame offset and index.
    pub(crate) fn at_record(
        e: tfrecord_core::Error,
        path: &Path,
        record: u64,
        offset: u64,
    ) -> Self {
        Error::Record(
            e.with_path(path.to_path_buf())
                .with_offset(offset)
                .with_record(record),
        )
    }

    /// True for errors that a command line reports as a misuse (exit status 2 in the `tfrecord`
    /// command): options out of range or that cannot be combined.
    pub fn is_usage(&self) -> bool {
        matches!(self, Error::Options(_))
    }
}

impl From<tfrecord_core::Error> for Error {
    fn from(e: tfrecord_core::Error) -> Self {
        Error::Record(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Record(e) => write!(f, "{e}"),
            Error::NoFiles { input, detail } => {
                write!(f, "{}: no record files: {detail}", input.display())
            }
            Error::MissingShards {
                missing,
                expected,
                found,
            } => write!(
                f,
                "{}: missing shard: expected {expected} shards, found {found}",
                missing.display()
            ),
            Error::MixedSuffixes {
                set,
                index,
                count,
                other,
            } => write!(
                f,
                "shard {index} of {count} of `{}` is missing; `{}` has another suffix (the \
                 shards of a set share one suffix: rename the odd ones, or read the files by \
                 name)",
                set.display(),
                other.display()
            ),
            Error::ShardSets { first, second } => write!(
                f,
                "two shard sets of one name, `{}` and `{}`: read together they would hold the \
                 same data twice, or mix two versions of it, and the names do not tell which is \
                 current (remove the stale set, or read one set by its pattern)",
                first.display(),
                second.display()
            ),
            Error::MixedKinds { dir, part, record } => write!(
                f,
                "{}: the directory holds part-* files (`{}`) and other record files (`{}`): \
                 name the ones to read with a pattern (`{}` or `{}`)",
                dir.display(),
                file_name(part),
                file_name(record),
                dir.join("part-*").display(),
                dir.join("*.tfrecord").display()
            ),
            Error::Pattern { pattern, detail } => {
                write!(f, "{pattern}: invalid glob pattern: {detail}")
            }
            Error::Options(msg) => f.write_str(msg),
            Error::Checkpoint(msg) => write!(f, "cannot resume from this checkpoint: {msg}"),
            Error::Exists(path) => write!(
                f,
                "{}: a shard set of this output's name exists (this is one of its files), and \
                 writing over it was not asked for (ShardedWriterOptions::overwrite replaces the \
                 set and removes its other files)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Record(e) => Some(e),
            _ => None,
        }
    }
}

/// A path's last component, for messages.
fn file_name(path: &Path) -> std::borrow::Cow<'_, str> {
    path.file_name()
        .map_or_else(|| path.to_string_lossy(), |n| n.to_string_lossy())
}
