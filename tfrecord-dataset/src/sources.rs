//! Sources: the record files that paths, directories and glob patterns stand for, each with its
//! format and compression, in a deterministic order.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use tfrecord_core::{Compression, Format};

use crate::error::{Error, Result};
use crate::names::{ShardName, is_ignored, is_part, is_record_name};

/// One record file of a data set, with how to read it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceFile {
    /// The file.
    pub path: PathBuf,
    /// Its container format.
    pub format: Format,
    /// Its stream compression.
    pub compression: Compression,
}

impl SourceFile {
    /// A TFRecord file, with the compression guessed from its name
    /// ([`Compression::from_path`]).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        SourceFile {
            compression: Compression::from_path(&path),
            format: Format::TfRecord,
            path,
        }
    }
}

/// One input as given, with its reading settings.
#[derive(Clone, Debug)]
struct Input {
    path: PathBuf,
    format: Format,
    compression: Option<Compression>,
}

/// The inputs of a data set: files, directories and glob patterns, resolved by
/// [`resolve`](Sources::resolve) into [`SourceFile`]s.
///
/// - A **file** is itself, whatever its name.
/// - A **directory** stands for its OneFlow / Spark `part-*` files when it has any (as OneFlow
///   reads an OFRecord directory), and then must hold no other record files
///   ([`Error::MixedKinds`]); otherwise for its record files: numbered shards
///   (`train-00042-of-01024.tfrecord`, `mnist-train.tfrecord-00000-of-00001`) and files named
///   `*.tfrecord`, `*.tfrecords`, `*.tfrec`, `*.ofrecord`, `*.record` or `*.records`, in any
///   case (each possibly `.gz`, `.zlib`, `.zz`); [`resolve_with_left_out`](Self::resolve_with_left_out)
///   gives the other files, for a caller to report. Hidden files (`.name`, which includes writers' temporary files), `_SUCCESS` and
///   other `_name` files, `*.crc` and `*.idx` are never data. Subdirectories are not entered
///   (a Spark partition such as `year=2024/`, say): [`resolve_with_left_out`](Self::resolve_with_left_out)
///   gives them too, and a `**` pattern reads inside them.
///   A directory whose numbered shards do not form complete sets (`0..N` of `-of-N`) is an
///   error naming the first missing shard (or the file that holds it under another suffix),
///   and so is a directory holding two sets of one name with different shard counts or
///   suffixes (`train-*-of-00002.tfrecord` beside `train-*-of-00003.tfrecord`, or beside
///   `train-*-of-00002.tfrecord.gz`: the same data twice, or two versions of it, which a reader
///   cannot tell apart), unless
///   [`allow_missing_shards`](Self::allow_missing_shards).
/// - A path that does not exist and holds `*`, `?` or `[` is a **glob pattern** (the `glob`
///   crate's syntax; `*` does not cross `/`, and does not match a leading `.`): the files it
///   matches, ignored names left out, and the directories it matches as above.
///
/// Each input's files are sorted by path (byte order); inputs keep the order they were given
/// in. A directory or pattern that stands for no record file is an error naming it.
///
/// ```
/// use tfrecord_dataset::Sources;
/// # let dir = tempfile::tempdir()?;
/// # for name in ["train-00001-of-00002.tfrecord", "train-00000-of-00002.tfrecord", "_SUCCESS"] {
/// #     std::fs::write(dir.path().join(name), b"")?;
/// # }
/// let files = Sources::new().input(dir.path()).resolve()?;
/// let names: Vec<_> = files.iter().map(|f| f.path.file_name().unwrap().to_owned()).collect();
/// assert_eq!(names, ["train-00000-of-00002.tfrecord", "train-00001-of-00002.tfrecord"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Sources {
    inputs: Vec<Input>,
    format: Format,
    compression: Option<Compression>,
    allow_missing_shards: bool,
}

impl Default for Sources {
    fn default() -> Self {
        Sources {
            inputs: Vec::new(),
            format: Format::TfRecord,
            compression: None,
            allow_missing_shards: false,
        }
    }
}

impl Sources {
    /// No inputs yet; TFRecord, compression from each file's name.
    pub fn new() -> Self {
        Self::default()
    }

    /// The format of the inputs added after this call (TFRecord until set).
    #[must_use]
    pub fn format(mut self, format: Format) -> Self {
        self.format = format;
        self
    }

    /// The compression of the inputs added after this call; `None` (the default) guesses it
    /// from each file's name ([`Compression::from_path`]).
    #[must_use]
    pub fn compression(mut self, compression: Option<Compression>) -> Self {
        self.compression = compression;
        self
    }

    /// Adds a file, a directory or a glob pattern.
    #[must_use]
    pub fn input(mut self, input: impl Into<PathBuf>) -> Self {
        self.inputs.push(Input {
            path: input.into(),
            format: self.format,
            compression: self.compression,
        });
        self
    }

    /// Adds several inputs, in order.
    #[must_use]
    pub fn inputs<P: Into<PathBuf>>(self, inputs: impl IntoIterator<Item = P>) -> Self {
        inputs.into_iter().fold(self, Sources::input)
    }

    /// Accepts directories whose numbered shards are an incomplete set, or two sets of one
    /// name (by default an error: a missing shard is data silently left out, and two sets are
    /// two versions of the data mixed).
    #[must_use]
    pub fn allow_missing_shards(mut self, allow: bool) -> Self {
        self.allow_missing_shards = allow;
        self
    }

    /// Lists the files, in order.
    ///
    /// # Errors
    /// An input that does not exist (and is no pattern), a directory or pattern that stands for
    /// no record file, an invalid pattern, an incomplete shard set ([`Error::MissingShards`],
    /// [`Error::MixedSuffixes`]), two shard sets of one name ([`Error::ShardSets`]), `part-*`
    /// files beside other record files ([`Error::MixedKinds`]), or a directory that cannot be
    /// listed; each names the input.
    pub fn resolve(&self) -> Result<Vec<SourceFile>> {
        self.resolve_with_left_out().map(|(files, _)| files)
    }

    /// As [`resolve`](Self::resolve), with the files of the directories listed that were left
    /// out because their names are not record file names (`train.bin`, `README.md`), then
    /// their subdirectories, which are not entered, in listing order: for a caller to say so,
    /// since such a file or directory may well hold records (a file named as an input, or
    /// matched by a pattern, is read whatever its name). Names that are never data (hidden,
    /// `_*`, `*.crc`, `*.idx`) are not among them.
    ///
    /// ```
    /// use tfrecord_dataset::Sources;
    /// # let dir = tempfile::tempdir()?;
    /// # for name in ["val.tfrecord", "train.bin", "_SUCCESS"] {
    /// #     std::fs::write(dir.path().join(name), b"")?;
    /// # }
    /// let (files, left_out) = Sources::new().input(dir.path()).resolve_with_left_out()?;
    /// assert!(files[0].path.ends_with("val.tfrecord"));
    /// assert_eq!(left_out, [dir.path().join("train.bin")]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`resolve`](Self::resolve).
    pub fn resolve_with_left_out(&self) -> Result<(Vec<SourceFile>, Vec<PathBuf>)> {
        let mut out = Vec::new();
        let mut left_out = Vec::new();
        for input in &self.inputs {
            for path in self.expand(&input.path, &mut left_out)? {
                out.push(SourceFile {
                    compression: input
                        .compression
                        .unwrap_or_else(|| Compression::from_path(&path)),
                    format: input.format,
                    path,
                });
            }
        }
        Ok((out, left_out))
    }

    fn expand(&self, input: &Path, left_out: &mut Vec<PathBuf>) -> Result<Vec<PathBuf>> {
        match fs::metadata(input) {
            Ok(meta) if meta.is_dir() => list_dir(input, self.allow_missing_shards, left_out),
            Ok(_) => Ok(vec![input.to_path_buf()]),
            Err(e) if is_pattern(input) && e.kind() == std::io::ErrorKind::NotFound => {
                expand_glob(input, self.allow_missing_shards, left_out)
            }
            Err(e) => Err(Error::io(e, input)),
        }
    }
}

/// Lists the record files one path stands for: the path itself when it is a file; a
/// directory's record files, or a glob pattern's matches, as [`Sources`] describes them.
///
/// # Errors
/// As [`Sources::resolve`].
pub fn expand_path(path: impl AsRef<Path>) -> Result<Vec<PathBuf>> {
    Sources::new()
        .input(path.as_ref())
        .resolve()
        .map(|files| files.into_iter().map(|f| f.path).collect())
}

fn is_pattern(path: &Path) -> bool {
    path.to_string_lossy().contains(['*', '?', '['])
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// A directory's record files, sorted; the files left out by name are added to `left_out`.
fn list_dir(
    dir: &Path,
    allow_missing_shards: bool,
    left_out: &mut Vec<PathBuf>,
) -> Result<Vec<PathBuf>> {
    let mut parts = Vec::new();
    let mut records = Vec::new();
    let mut others = Vec::new();
    let mut subdirs = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| Error::io(e, dir))? {
        let entry = entry.map_err(|e| Error::io(e, dir))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        // Symbolic links count as what they point at; one named as data that points at
        // nothing is an error (as TensorFlow's reader fails on it), not a file left out.
        if is_ignored(&name) {
            continue;
        }
        if is_part(&name) || is_record_name(&name) {
            // The entry's type comes with the listing: no call for a plain file.
            broken_link(&path, entry.file_type().is_ok_and(|t| t.is_symlink()))?;
        }
        if !path.is_file() {
            if path.is_dir() {
                subdirs.push(path);
            }
            continue;
        }
        if is_part(&name) {
            parts.push(path);
        } else if is_record_name(&name) {
            records.push(path);
        } else {
            others.push(path);
        }
    }
    if let (Some(part), Some(record)) = (parts.iter().min(), records.iter().min()) {
        return Err(Error::MixedKinds {
            dir: dir.to_path_buf(),
            part: part.clone(),
            record: record.clone(),
        });
    }
    let mut files = if parts.is_empty() { records } else { parts };
    if files.is_empty() {
        others.sort();
        let n = others.len();
        let mut shown: Vec<String> = others.iter().take(3).map(|p| file_name(p)).collect();
        if n > 3 {
            shown.push("...".into());
        }
        let listed = if n == 0 {
            String::new()
        } else {
            format!(": {}", shown.join(", "))
        };
        let mut detail = format!(
            "the directory holds no part-* files, no numbered shards (name-00000-of-00010) and \
             no *.tfrecord, *.tfrecords, *.tfrec, *.ofrecord or *.record files ({n} other \
             file{} left out{listed}; name a file to read it whatever its name)",
            if n == 1 { "" } else { "s" }
        );
        if !subdirs.is_empty() {
            detail.push_str(&not_entered(dir, &mut subdirs));
        }
        return Err(Error::NoFiles {
            input: dir.to_path_buf(),
            detail,
        });
    }
    files.sort();
    if !allow_missing_shards {
        check_shard_sets(&files)?;
    }
    others.sort();
    left_out.append(&mut others);
    subdirs.sort();
    left_out.append(&mut subdirs);
    Ok(files)
}

/// Says that the subdirectories `subdirs` of `dir` were not entered, and how to read inside.
fn not_entered(dir: &Path, subdirs: &mut [PathBuf]) -> String {
    subdirs.sort();
    let n = subdirs.len();
    let first = subdirs.first().map_or_else(String::new, |p| file_name(p));
    format!(
        "; {n} subdirector{} not entered, such as {first}: a quoted glob such as '{}' reads \
         the files inside",
        if n == 1 { "y" } else { "ies" },
        dir.join("**").join("part-*").display()
    )
}

/// An error when `path`, a symbolic link when `is_link`, points at nothing (a file since moved
/// or deleted). Only a link is looked at further.
fn broken_link(path: &Path, is_link: bool) -> Result<()> {
    if !is_link {
        return Ok(());
    }
    match fs::metadata(path) {
        Err(e) => {
            let target =
                fs::read_link(path).map_or_else(|_| "?".into(), |t| t.display().to_string());
            Err(Error::io(
                std::io::Error::new(
                    e.kind(),
                    format!("a symbolic link to {target}, which cannot be read: {e}"),
                ),
                path,
            ))
        }
        Ok(_) => Ok(()),
    }
}

/// The files and directories a glob pattern matches, sorted.
fn expand_glob(
    pattern: &Path,
    allow_missing_shards: bool,
    left_out: &mut Vec<PathBuf>,
) -> Result<Vec<PathBuf>> {
    let matched = crate::globs::glob_paths(pattern)?;
    let mut files = Vec::new();
    for path in matched {
        if path.is_dir() {
            files.extend(list_dir(&path, allow_missing_shards, left_out)?);
        } else if !is_ignored(&file_name(&path)) {
            let is_link = fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
            broken_link(&path, is_link)?;
            if path.is_file() {
                files.push(path);
            }
        }
    }
    if files.is_empty() {
        return Err(Error::NoFiles {
            input: pattern.to_path_buf(),
            detail: "the pattern matches no record file (hidden files, _* files, *.crc and \
                     *.idx are never data)"
                .into(),
        });
    }
    Ok(files)
}

/// Checks that each set of numbered shards in one directory is complete (`0..N` of `-of-N`),
/// and that no two sets share a name (stem and suffix) with different shard counts.
fn check_shard_sets(files: &[PathBuf]) -> Result<()> {
    // (stem, rest, count as written) -> (index width, count, present indices)
    type Set = (usize, u64, Vec<u64>);
    let mut sets: BTreeMap<(String, String, String), Set> = BTreeMap::new();
    for path in files {
        let name = file_name(path);
        if let Some(s) = ShardName::parse(&name) {
            let key = (
                s.stem.to_owned(),
                s.rest.to_owned(),
                s.count_digits.to_owned(),
            );
            let set = sets
                .entry(key)
                .or_insert((s.index_width, s.count, Vec::new()));
            set.2.push(s.index);
        }
    }
    let Some(dir) = files.first().and_then(|f| f.parent()) else {
        return Ok(());
    };
    let pattern = |(stem, rest, count_digits): &(String, String, String)| {
        dir.join(format!("{stem}-*-of-{count_digits}{rest}"))
    };
    // Sets of one name are next to each other in the map's order.
    let keys: Vec<&(String, String, String)> = sets.keys().collect();
    for pair in keys.windows(2) {
        if let [a, b] = pair
            && (&a.0, &a.1) == (&b.0, &b.1)
        {
            return Err(Error::ShardSets {
                first: pattern(a),
                second: pattern(b),
            });
        }
    }
    for (key, (width, count, present)) in &sets {
        let (stem, rest, count_digits) = key;
        let mut present = present.clone();
        present.sort_unstable();
        present.dedup();
        let found = present.iter().filter(|&&i| i < *count).count() as u64;
        if found == *count {
            continue;
        }
        // The first index in 0..count that is absent.
        let missing = (0..*count)
            .zip(present.iter().copied().chain(std::iter::repeat(u64::MAX)))
            .find(|(want, have)| want != have)
            .map_or(0, |(want, _)| want);
        // The same shard under another suffix: name the file that is there.
        let other = sets.iter().find_map(|((s, r, c), (w, _, idx))| {
            (s == stem && c == count_digits && r != rest && idx.contains(&missing))
                .then(|| dir.join(format!("{s}-{missing:0w$}-of-{c}{r}")))
        });
        if let Some(other) = other {
            return Err(Error::MixedSuffixes {
                set: pattern(key),
                index: missing,
                count: *count,
                other,
            });
        }
        let name = format!("{stem}-{missing:0width$}-of-{count_digits}{rest}");
        return Err(Error::MissingShards {
            missing: dir.join(name),
            expected: *count,
            found,
        });
    }
    // Complete sets of one name under two suffixes (`.tfrecord` and `.tfrecord.gz`): the
    // same data twice, or two versions of it.
    let mut by_stem: BTreeMap<&str, &(String, String, String)> = BTreeMap::new();
    for key in sets.keys() {
        if let Some(first) = by_stem.insert(&key.0, key) {
            return Err(Error::ShardSets {
                first: pattern(first),
                second: pattern(key),
            });
        }
    }
    Ok(())
}
