//! File names: which names are record files, numbered shard names (`name-SSSSS-of-NNNNN`), and
//! the names sharded outputs are written under.

use std::path::{Path, PathBuf};

/// Extensions of record files, in any case (each may be followed by a compression extension):
/// `record` and `records` as the TensorFlow Object Detection API names its files
/// (`train.record`).
const RECORD_EXTENSIONS: &[&str] = &[
    "tfrecord",
    "tfrecords",
    "tfrec",
    "ofrecord",
    "record",
    "records",
];

/// Extensions of compressed streams, as [`tfrecord_core::Compression::from_path`] reads them.
const COMPRESSION_EXTENSIONS: &[&str] = &["gz", "zlib", "zz"];

/// True for names that are never data: hidden files (`.name`, which includes the temporary
/// files of writers), Hadoop/Spark markers (`_SUCCESS`, `_metadata`, any `_name`), checksum
/// side files (`.crc`) and record index files (`.idx`).
pub(crate) fn is_ignored(name: &str) -> bool {
    name.starts_with('.')
        || name.starts_with('_')
        || name.ends_with(".crc")
        || name.ends_with(".idx")
}

/// True for OneFlow and Spark part files: `part-00000`, `part-r-00000`, `part-00000-<uuid>...`.
pub(crate) fn is_part(name: &str) -> bool {
    name.starts_with("part-")
}

/// True for names that are record files by their extension (`x.tfrecord`, `x.TFRecord.gz`,
/// `x.ofrecord`, `x.record`, ...) or by a numbered shard name (`x-00042-of-01024...`).
pub(crate) fn is_record_name(name: &str) -> bool {
    if ShardName::parse(name).is_some() {
        return true;
    }
    let one_of = |ext: &str, list: &[&str]| list.iter().any(|e| e.eq_ignore_ascii_case(ext));
    let mut rest = name;
    if let Some((head, ext)) = rest.rsplit_once('.')
        && one_of(ext, COMPRESSION_EXTENSIONS)
    {
        rest = head;
    }
    rest.rsplit_once('.')
        .is_some_and(|(_, ext)| one_of(ext, RECORD_EXTENSIONS))
}

/// A numbered shard name, `{stem}-{index}-of-{count}{rest}`, as TensorFlow, Beam and TFDS
/// write them (`train-00042-of-01024.tfrecord`, `mnist-train.tfrecord-00000-of-00001`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ShardName<'a> {
    /// What comes before `-{index}`.
    pub(crate) stem: &'a str,
    /// The shard's number.
    pub(crate) index: u64,
    /// How many shards the set has.
    pub(crate) count: u64,
    /// How many digits the index is written with.
    pub(crate) index_width: usize,
    /// The count as written.
    pub(crate) count_digits: &'a str,
    /// What follows `{count}`: usually the extension.
    pub(crate) rest: &'a str,
}

impl<'a> ShardName<'a> {
    /// Parses the last `-DIGITS-of-DIGITS` of a file name.
    pub(crate) fn parse(name: &'a str) -> Option<Self> {
        let mut search = name.len();
        while let Some(at) = name[..search].rfind("-of-") {
            if let Some(shard) = Self::parse_at(name, at) {
                return Some(shard);
            }
            search = at;
        }
        None
    }

    fn parse_at(name: &'a str, at: usize) -> Option<Self> {
        let before = &name[..at];
        let digits_start = before.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let index_digits = &before[digits_start..];
        let stem = before[..digits_start].strip_suffix('-')?;
        let after = &name[at + 4..];
        let count_len = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let (count_digits, rest) = after.split_at(count_len);
        if index_digits.is_empty() || count_digits.is_empty() || stem.is_empty() {
            return None;
        }
        Some(ShardName {
            stem,
            index: index_digits.parse().ok()?,
            count: count_digits.parse().ok()?,
            index_width: index_digits.len(),
            count_digits,
            rest,
        })
    }
}

/// Splits an output path into the part before the shard number and the suffix kept after it:
/// `train.tfrecord` is `("train", ".tfrecord")`, `data.v2.tfrecord.gz` is
/// `("data.v2", ".tfrecord.gz")`, `out.bin` is `("out", ".bin")`, `out` is `("out", "")`.
///
/// The suffix is the trailing run of record and compression extensions when there is one, else
/// the last extension.
pub(crate) fn split_suffix(file_name: &str) -> (&str, &str) {
    let mut cut = file_name.len();
    loop {
        let head = &file_name[..cut];
        match head.rsplit_once('.') {
            Some((stem, ext))
                if !stem.is_empty()
                    && (RECORD_EXTENSIONS.contains(&ext)
                        || COMPRESSION_EXTENSIONS.contains(&ext)) =>
            {
                cut = stem.len();
            }
            _ => break,
        }
    }
    if cut == file_name.len()
        && let Some((stem, _)) = file_name.rsplit_once('.')
        && !stem.is_empty()
    {
        cut = stem.len();
    }
    file_name.split_at(cut)
}

/// The name of shard `index` of `count` for the output `base`:
/// `train.tfrecord` -> `train-00000-of-00004.tfrecord` (five digits at least, as TensorFlow and
/// Beam write them; more when the count needs them).
pub(crate) fn shard_path(base: &Path, index: u64, count: u64) -> PathBuf {
    let name = base
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let (stem, suffix) = split_suffix(&name);
    base.with_file_name(format!("{stem}-{index:05}-of-{count:05}{suffix}"))
}

/// The name of OneFlow part `index` in `dir`: `part-00000`.
pub(crate) fn part_path(dir: &Path, index: u64) -> PathBuf {
    dir.join(format!("part-{index:05}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_names_parse_with_stem_and_rest() {
        let s = ShardName::parse("train-00042-of-01024.tfrecord").expect("a shard name");
        assert_eq!(
            (s.stem, s.index, s.count, s.rest),
            ("train", 42, 1024, ".tfrecord")
        );
        let s = ShardName::parse("mnist-train.tfrecord-00000-of-00001").expect("TFDS");
        assert_eq!(
            (s.stem, s.index, s.count, s.rest),
            ("mnist-train.tfrecord", 0, 1, "")
        );
        let s = ShardName::parse("a-of-b-3-of-7.gz").expect("the last match");
        assert_eq!((s.stem, s.index, s.count, s.rest), ("a-of-b", 3, 7, ".gz"));
        assert_eq!(ShardName::parse("train-of-00001"), None);
        assert_eq!(ShardName::parse("00001-of-00002"), None);
        assert_eq!(ShardName::parse("train-1-of-.tfrecord"), None);
    }

    #[test]
    fn record_names_and_ignored_names() {
        for name in [
            "a.tfrecord",
            "a.tfrecords.gz",
            "a.tfrec",
            "b.ofrecord.zlib",
            "x-1-of-2",
            "train.record",
            "val.records.gz",
            "x.TFRecord",
            "y.TFRECORDS.GZ",
        ] {
            assert!(is_record_name(name), "{name}");
        }
        for name in [
            "a.json",
            "README",
            "a.gz",
            "tfrecord",
            "a.recording",
            "record",
        ] {
            assert!(!is_record_name(name), "{name}");
        }
        for name in [
            ".a.tfrecord",
            "_SUCCESS",
            "a.tfrecord.crc",
            "a.tfrecord.idx",
            "_meta",
        ] {
            assert!(is_ignored(name), "{name}");
        }
        assert!(!is_ignored("part-00000"));
    }

    #[test]
    fn output_names_keep_the_suffix_after_the_number() {
        let p = |b: &str, i, n| shard_path(Path::new(b), i, n);
        assert_eq!(
            p("train.tfrecord", 0, 4),
            Path::new("train-00000-of-00004.tfrecord")
        );
        assert_eq!(
            p("d/x.v2.tfrecord.gz", 3, 4),
            Path::new("d/x.v2-00003-of-00004.tfrecord.gz")
        );
        assert_eq!(p("out", 1, 2), Path::new("out-00001-of-00002"));
        assert_eq!(p("out.bin", 1, 2), Path::new("out-00001-of-00002.bin"));
        assert_eq!(p(".hidden", 0, 1), Path::new(".hidden-00000-of-00001"));
        assert_eq!(p("big", 7, 123_456), Path::new("big-00007-of-123456"));
        assert_eq!(part_path(Path::new("d"), 12), Path::new("d/part-00012"));
    }
}
