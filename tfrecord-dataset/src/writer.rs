//! Sharded writers: records split over numbered files, each written under a temporary name and
//! renamed into place only when the whole set is complete.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use tfrecord_core::{Container, Encode, Format, RecordWriter, WriterOptions};

use crate::error::{Error, Result};
use crate::names::{ShardName, is_part, part_path, shard_path, split_suffix};

/// How records are dealt to shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardSplit {
    /// `n` shards (at least 1), all open at once; record `k` goes to shard `k % n`. Reading
    /// the shards with `interleave(n, 1)` gives the records back in the order written.
    RoundRobin(u64),
    /// A new shard after every `n` records (at least 1); the last shard may hold fewer.
    Records(u64),
    /// A new shard once the current one holds at least `n` bytes of framed records (counted
    /// before compression); every shard holds at least one record.
    Bytes(u64),
    /// `shards` shards (at least 1) of consecutive records, sizes differing by at most one,
    /// for exactly `total` records: shard `i` holds records `i * total / shards` up to
    /// `(i + 1) * total / shards`. One file is open at a time.
    Even {
        /// How many shards.
        shards: u64,
        /// How many records will be written.
        total: u64,
    },
}

/// How shard files are named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShardNaming {
    /// TensorFlow / Beam names beside a base path, the base's record extensions kept after
    /// the number: `train.tfrecord` gives `train-00000-of-00004.tfrecord`, ... (the base's
    /// directory made if missing).
    TensorFlow(PathBuf),
    /// OneFlow names in a directory (made if missing): `part-00000`, `part-00001`, ...
    OneFlow(PathBuf),
}

impl ShardNaming {
    fn dir(&self) -> PathBuf {
        match self {
            ShardNaming::TensorFlow(base) => match base.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            },
            ShardNaming::OneFlow(dir) => dir.clone(),
        }
    }

    fn path(&self, index: u64, count: u64) -> PathBuf {
        match self {
            ShardNaming::TensorFlow(base) => shard_path(base, index, count),
            ShardNaming::OneFlow(dir) => part_path(dir, index),
        }
    }

    /// The existing files of shard sets of this naming, of any shard count, sorted: what a new
    /// set would replace, or be mixed up with when read as a directory (TensorFlow names with
    /// the base's stem and suffix, `train-*-of-*.tfrecord` for `train.tfrecord`; OneFlow's
    /// `part-*` files in the directory). A directory that does not exist holds none.
    ///
    /// # Errors
    /// A directory that cannot be listed.
    pub fn existing(&self) -> Result<Vec<PathBuf>> {
        existing_members(self, &self.dir())
    }

    /// True for an existing file name that belongs to a shard set of this naming (of any
    /// count): what a new set would replace or be mixed up with.
    fn is_member(&self, name: &str) -> bool {
        match self {
            ShardNaming::TensorFlow(base) => {
                let base = base.file_name().map(|n| n.to_string_lossy().into_owned());
                let (stem, suffix) = split_suffix(base.as_deref().unwrap_or(""));
                ShardName::parse(name).is_some_and(|s| s.stem == stem && s.rest == suffix)
            }
            ShardNaming::OneFlow(_) => is_part(name),
        }
    }
}

/// How a [`ShardedWriter`] writes.
#[derive(Clone, Debug)]
pub struct ShardedWriterOptions {
    naming: ShardNaming,
    split: ShardSplit,
    format: Format,
    writer: WriterOptions,
    sync: bool,
    overwrite: bool,
}

impl ShardedWriterOptions {
    /// TFRecord, compressed as a TensorFlow name's suffix says (`train.tfrecord.gz`: gzip, as
    /// [`WriterOptions::for_path`] reads it; else uncompressed), no `fsync`, never over
    /// existing outputs.
    pub fn new(naming: ShardNaming, split: ShardSplit) -> Self {
        let writer = match &naming {
            ShardNaming::TensorFlow(base) => WriterOptions::for_path(base),
            ShardNaming::OneFlow(_) => WriterOptions::new(),
        };
        ShardedWriterOptions {
            naming,
            split,
            format: Format::TfRecord,
            writer,
            sync: false,
            overwrite: false,
        }
    }

    /// The container format of every shard.
    #[must_use]
    pub fn format(mut self, format: Format) -> Self {
        self.format = format;
        self
    }

    /// Compression, level and buffer of every shard (the format is [`format`](Self::format)'s).
    /// A compression other than the one a TensorFlow name's suffix says (`.gz`, `.zz`,
    /// `.zlib`) is an error at [`ShardedWriter::create`]: readers take the compression from
    /// the name.
    #[must_use]
    pub fn writer(mut self, writer: WriterOptions) -> Self {
        self.writer = writer;
        self
    }

    /// Whether each shard and the directory are `fsync`ed before and after the renames, so
    /// that the complete set survives a power loss (default `false`).
    #[must_use]
    pub fn sync(mut self, sync: bool) -> Self {
        self.sync = sync;
        self
    }

    /// Whether existing files of the same naming (any shard count) may be replaced: they are
    /// all moved aside to hidden names before the first shard of the new set is renamed into
    /// place, and removed once the whole new set is, so that the directory never holds two
    /// sets of one name: an error on the way puts the older set back, a crash leaves one set
    /// with shards missing (default `false`: such files are an error, [`Error::Exists`],
    /// before anything is written).
    /// [`ShardedWriter::finish_report`] says which files were removed and not replaced.
    #[must_use]
    pub fn overwrite(mut self, overwrite: bool) -> Self {
        self.overwrite = overwrite;
        self
    }
}

/// What [`ShardedWriter::finish_report`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FinishedShards {
    /// The shards written, by their final paths in shard order.
    pub paths: Vec<PathBuf>,
    /// Files of other shard sets of the output's name that were removed, and not replaced by a
    /// shard of the new set (only with [`overwrite`](ShardedWriterOptions::overwrite)), sorted:
    /// another shard count's set, or the leftovers of one, which would otherwise be read
    /// together with the new set.
    pub removed: Vec<PathBuf>,
}

/// One shard being written or written.
struct Shard {
    index: usize,
    temp: PathBuf,
    writer: Option<RecordWriter<File>>,
    records: u64,
    bytes: u64,
}

/// Writes records over several shard files.
///
/// Every shard is written under a hidden temporary name (`.name.tmp-PID-K`) in the output
/// directory, which no data set listing reads; [`finish`](Self::finish) renames them to their
/// final names once every shard is complete and the shard count is known. A process that dies
/// before that leaves only temporary files; dropping an unfinished writer removes them. During
/// the renames themselves a crash can leave a set with shards missing (an older set it
/// replaces is removed first), which a directory listing reports as an incomplete set
/// ([`Error::MissingShards`]) for TensorFlow names.
///
/// ```
/// use tfrecord_dataset::{Dataset, ShardNaming, ShardSplit, ShardedWriter, ShardedWriterOptions};
/// # let dir = tempfile::tempdir()?;
/// let base = dir.path().join("train.tfrecord");
/// let opts = ShardedWriterOptions::new(ShardNaming::TensorFlow(base), ShardSplit::RoundRobin(3));
/// let mut writer = ShardedWriter::create(opts)?;
/// for i in 0..10u32 {
///     writer.write(&i.to_le_bytes())?;
/// }
/// let paths = writer.finish()?;
/// assert!(paths[2].ends_with("train-00002-of-00003.tfrecord"));
/// assert_eq!(Dataset::open([dir.path()])?.records()?.count(), 10);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ShardedWriter {
    opts: ShardedWriterOptions,
    dir: PathBuf,
    shards: Vec<Shard>,
    written: u64,
    buf: Vec<u8>,
    failed: bool,
}

impl ShardedWriter {
    /// Creates the writer (and for [`ShardSplit::RoundRobin`] every shard's temporary file).
    ///
    /// # Errors
    /// A shard count or size of 0 ([`Error::Options`]); existing outputs without
    /// [`overwrite`](ShardedWriterOptions::overwrite) ([`Error::Exists`]); a directory that
    /// cannot be made or listed, or a file that cannot be created.
    pub fn create(opts: ShardedWriterOptions) -> Result<Self> {
        let (ShardSplit::RoundRobin(n)
        | ShardSplit::Records(n)
        | ShardSplit::Bytes(n)
        | ShardSplit::Even { shards: n, .. }) = opts.split;
        if n == 0 {
            return Err(Error::Options(format!(
                "{:?}: shard counts and sizes must be at least 1",
                opts.split
            )));
        }
        if let ShardNaming::TensorFlow(prefix) = &opts.naming {
            let named = tfrecord_core::Compression::from_path(prefix);
            let chosen = opts.writer.get_compression();
            if named != tfrecord_core::Compression::None && named != chosen {
                return Err(Error::Options(format!(
                    "{}: the name says {} compression, but the shards would be written with \
                     {}: readers take the compression from the name (write {} shards, or drop \
                     the suffix)",
                    prefix.display(),
                    named.name(),
                    chosen.name(),
                    named.name()
                )));
            }
            let text = prefix.as_os_str().to_string_lossy();
            if prefix.is_dir() || text.ends_with(std::path::MAIN_SEPARATOR) || text.ends_with('/') {
                return Err(Error::Options(format!(
                    "{}: a directory, where the shards' name prefix goes (they are named \
                     PREFIX-00000-of-0000N): give a file name inside it, e.g. {}",
                    prefix.display(),
                    prefix.join("train.tfrecord").display()
                )));
            }
        }
        let dir = opts.naming.dir();
        fs::create_dir_all(&dir).map_err(|e| Error::io(e, &dir))?;
        if !opts.overwrite
            && let Some(existing) = existing_members(&opts.naming, &dir)?.into_iter().next()
        {
            return Err(Error::Exists(existing));
        }
        let mut this = ShardedWriter {
            opts,
            dir,
            shards: Vec::new(),
            written: 0,
            buf: Vec::new(),
            failed: false,
        };
        if let ShardSplit::RoundRobin(n) = this.opts.split {
            for _ in 0..n {
                this.open_shard()?;
            }
        }
        Ok(this)
    }

    fn open_shard(&mut self) -> Result<()> {
        let index = self.shards.len() as u64;
        let label = match &self.opts.naming {
            ShardNaming::TensorFlow(base) => {
                let name = base.file_name().map(|n| n.to_string_lossy().into_owned());
                let (stem, suffix) = split_suffix(name.as_deref().unwrap_or("out"));
                format!("{stem}-{index:05}{suffix}")
            }
            ShardNaming::OneFlow(_) => format!("part-{index:05}"),
        };
        let (file, temp) = create_temp(&self.dir, &label).map_err(|e| {
            let what = format!("creating shard {index} ({label}): {e}");
            Error::io(io::Error::new(e.kind(), what), &self.dir)
        })?;
        let mut wopts = self.opts.writer.clone().format(self.opts.format);
        if let ShardSplit::RoundRobin(n) = self.opts.split
            && n > 64
        {
            // Many files open at once: smaller buffers keep the total near 64 MiB.
            let each = usize::try_from((64 << 20) / n).unwrap_or(usize::MAX);
            wopts = wopts.buffer_size(each.max(64 << 10));
        }
        self.shards.push(Shard {
            index: self.shards.len(),
            writer: Some(RecordWriter::new(file, wopts).with_path(temp.clone())),
            temp,
            records: 0,
            bytes: 0,
        });
        Ok(())
    }

    /// Ends a shard's stream and (with `sync`) flushes it to disk.
    fn close_shard(shard: &mut Shard, sync: bool) -> Result<()> {
        if let Some(writer) = shard.writer.take() {
            let file = writer.finish()?;
            if sync {
                file.sync_all().map_err(|e| Error::io(e, &shard.temp))?;
            }
        }
        Ok(())
    }

    /// Writes one record (its serialized bytes).
    ///
    /// # Errors
    /// I/O errors, naming the temporary file, offset and record index; after an error the
    /// writer only fails (dropping it removes its files).
    pub fn write(&mut self, record: &[u8]) -> Result<()> {
        if self.failed {
            return Err(Error::Options(
                "an earlier write of this sharded writer failed".into(),
            ));
        }
        let res = self.write_inner(record);
        self.failed = res.is_err();
        res
    }

    fn write_inner(&mut self, record: &[u8]) -> Result<()> {
        let index = match self.opts.split {
            ShardSplit::RoundRobin(n) => usize::try_from(self.written % n).unwrap_or(0),
            ShardSplit::Records(max) => self.roll_if(|s| s.records >= max)?,
            ShardSplit::Bytes(max) => self.roll_if(|s| s.bytes >= max)?,
            ShardSplit::Even { shards, total } => {
                if self.written >= total {
                    return Err(Error::Options(format!(
                        "{} records written to {shards} even shards declared for {total}",
                        self.written + 1
                    )));
                }
                let written = self.written;
                let end = |i: usize| even_bound(i as u64 + 1, shards, total);
                self.roll_if(|s| written >= end(s.index))?
            }
        };
        let overhead = if self.opts.format == Format::TfRecord {
            16
        } else {
            8
        };
        let shard = &mut self.shards[index];
        let writer = shard.writer.as_mut().ok_or_else(|| {
            Error::Options(format!("{}: shard already closed", shard.temp.display()))
        })?;
        writer.write(record)?;
        shard.records += 1;
        shard.bytes += record.len() as u64 + overhead;
        self.written += 1;
        Ok(())
    }

    /// The shard to write to, after starting a new one when the current one is `full`.
    fn roll_if(&mut self, full: impl Fn(&Shard) -> bool) -> Result<usize> {
        loop {
            match self.shards.last_mut() {
                Some(last) if !full(last) => return Ok(self.shards.len() - 1),
                Some(last) => {
                    Self::close_shard(last, self.opts.sync)?;
                    self.open_shard()?;
                }
                None => self.open_shard()?,
            }
        }
    }

    /// Encodes a value of a derived type as a record of container `C` and writes it
    /// (`writer.write_value::<TfExample, _>(&value)`: the container is named, as one type
    /// may derive several).
    ///
    /// # Errors
    /// A container whose format is not the writer's ([`Error::Options`]); a value that does
    /// not fit the layout its type declares ([`Encode::check`]); as [`write`](Self::write).
    pub fn write_value<C: Container, T: Encode<C>>(&mut self, value: &T) -> Result<()> {
        if C::FORMAT != self.opts.format {
            return Err(Error::Options(format!(
                "{} records are {}, but this writer writes {}",
                C::MESSAGE,
                C::FORMAT.name(),
                self.opts.format.name()
            )));
        }
        value.check()?;
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        value.encode_raw(&mut buf);
        let res = self.write(&buf);
        self.buf = buf;
        res
    }

    /// How many records have been written.
    pub fn records_written(&self) -> u64 {
        self.written
    }

    /// Completes every shard and renames them into place (one empty shard when nothing was
    /// written with a size split; every declared shard with [`ShardSplit::Even`]); returns the
    /// final paths in shard order. With [`overwrite`](ShardedWriterOptions::overwrite), files of
    /// other sets of the output's name are removed: [`finish_report`](Self::finish_report) also
    /// says which.
    ///
    /// # Errors
    /// As [`finish_report`](Self::finish_report).
    pub fn finish(self) -> Result<Vec<PathBuf>> {
        self.finish_report().map(|done| done.paths)
    }

    /// Completes every shard and renames them into place, as [`finish`](Self::finish) does;
    /// returns the final paths and the files of other sets of the output's name it removed
    /// (with [`overwrite`](ShardedWriterOptions::overwrite)), for a caller to report.
    ///
    /// # Errors
    /// An earlier failed write; another number of records than [`ShardSplit::Even`] declared;
    /// I/O errors completing, syncing, renaming or removing; an output that
    /// appeared meanwhile without [`overwrite`](ShardedWriterOptions::overwrite); a file of an
    /// older set that cannot be moved aside (a directory of its name, say). On error no
    /// temporary file is left, no shard of the new set is in place, and an older set is back
    /// under its names as it was.
    pub fn finish_report(mut self) -> Result<FinishedShards> {
        if self.failed {
            return Err(Error::Options(
                "an earlier write of this sharded writer failed; nothing was renamed".into(),
            ));
        }
        if let ShardSplit::Even { shards, total } = self.opts.split {
            if self.written != total {
                return Err(Error::Options(format!(
                    "{} records written to {shards} even shards declared for {total}; nothing \
                     was renamed",
                    self.written
                )));
            }
            while (self.shards.len() as u64) < shards {
                if let Some(last) = self.shards.last_mut() {
                    Self::close_shard(last, self.opts.sync)?;
                }
                self.open_shard()?;
            }
        }
        if self.shards.is_empty() {
            self.open_shard()?;
        }
        for shard in &mut self.shards {
            Self::close_shard(shard, self.opts.sync)?;
        }
        let count = self.shards.len() as u64;
        let finals: Vec<PathBuf> = (0..count)
            .map(|i| self.opts.naming.path(i, count))
            .collect();
        let stale = existing_members(&self.opts.naming, &self.dir)?;
        if !self.opts.overwrite
            && let Some(existing) = stale.first()
        {
            return Err(Error::Exists(existing.clone()));
        }
        // The renames under the lock of the unfinished files: an interrupt's clean-up
        // (`remove_unfinished_shards`) waits for the whole set to be in place rather than
        // leave some shards under their final names and remove the rest.
        let mut unfinished = unfinished();
        // An interrupt's clean-up that ran first took (and removed) this writer's files: the
        // older set stays as it is, since no new one can take its place.
        if let Some(gone) = self
            .shards
            .iter()
            .find(|shard| !unfinished.contains(&shard.temp))
        {
            return Err(Error::io(
                io::Error::new(
                    io::ErrorKind::NotFound,
                    "the shards' temporary files were removed (an interrupt's clean-up): no \
                     shard was renamed into place and no file of another set removed",
                ),
                &gone.temp,
            ));
        }
        // Every file of an older set is moved aside (to a hidden name beside it) before the
        // first shard of the new one is renamed into place, so that a crash in between leaves
        // one set with shards missing, never shards of two sets under one name; and so that a
        // failure (a file that cannot be moved, a rename that fails) puts everything back as it
        // was: renames can be undone, removals cannot. The files aside go once the new set is
        // in place.
        let mut aside: Vec<(PathBuf, PathBuf)> = Vec::new();
        if self.opts.overwrite {
            for (n, old) in stale.iter().enumerate() {
                let hidden = aside_name(old, n);
                let moved = match fs::symlink_metadata(old) {
                    Ok(m) if m.is_dir() => Err(io::Error::other(
                        "a directory named as a shard of this output, not a shard to replace",
                    )),
                    Ok(_) => fs::rename(old, &hidden),
                    Err(e) => Err(e),
                };
                if let Err(e) = moved {
                    put_back(&aside);
                    let note = format!(
                        "{e} (replacing the older set of this output's name: it is left as it \
                         was, and the new set was not put in place)"
                    );
                    return Err(Error::io(io::Error::new(e.kind(), note), old));
                }
                aside.push((hidden, old.clone()));
            }
        }
        for (i, (shard, dest)) in self.shards.iter().zip(&finals).enumerate() {
            if let Err(e) = fs::rename(&shard.temp, dest) {
                for (placed, at) in self.shards.iter().zip(&finals).take(i) {
                    let _ = fs::rename(at, &placed.temp);
                }
                put_back(&aside);
                let note = format!(
                    "{e} (putting shard {} of {count} in place: no shard of the new set is left \
                     in place, and the older set is as it was)",
                    shard.index
                );
                return Err(Error::io(io::Error::new(e.kind(), note), dest));
            }
        }
        for shard in &mut self.shards {
            unfinished.retain(|p| p != &shard.temp);
            shard.temp = PathBuf::new();
        }
        // Still under the lock: an interrupt's clean-up waits for the files aside to go too,
        // and those an earlier run left (killed while it replaced a set) go with them.
        if self.opts.overwrite {
            for left in left_aside(&self.opts.naming, &self.dir) {
                let _ = fs::remove_file(left);
            }
        }
        let mut removed = Vec::new();
        for (hidden, old) in aside {
            // A file that cannot be removed stays under its hidden name, never read as data.
            let _ = fs::remove_file(&hidden);
            // By name: the listing's paths start with the directory (`./` for a bare name),
            // the final paths as the naming gives them.
            if !finals.iter().any(|f| f.file_name() == old.file_name()) {
                removed.push(old);
            }
        }
        drop(unfinished);
        if self.opts.sync {
            sync_dir(&self.dir)?;
        }
        Ok(FinishedShards {
            paths: finals,
            removed,
        })
    }
}

impl Drop for ShardedWriter {
    fn drop(&mut self) {
        for shard in &mut self.shards {
            drop(shard.writer.take());
            if !shard.temp.as_os_str().is_empty() {
                // Best effort: a file that cannot be removed is hidden and never read as data.
                let _ = fs::remove_file(&shard.temp);
                unfinished().retain(|p| p != &shard.temp);
            }
        }
    }
}

/// The hidden name beside `old` that a file of an older set is moved to while a new set takes
/// its place: `.NAME.old-PID-N`.
fn aside_name(old: &Path, n: usize) -> PathBuf {
    let name = old
        .file_name()
        .map_or_else(|| "shard".into(), |n| n.to_string_lossy());
    old.with_file_name(format!(".{name}.old-{}-{n}", std::process::id()))
}

/// Moves the files set aside back to their names, the last first.
fn put_back(aside: &[(PathBuf, PathBuf)]) {
    for (hidden, old) in aside.iter().rev() {
        let _ = fs::rename(hidden, old);
    }
}

/// Where even shard `i` of `shards` over `total` records begins: `i * total / shards`.
fn even_bound(i: u64, shards: u64, total: u64) -> u64 {
    let bound = u128::from(i) * u128::from(total) / u128::from(shards);
    u64::try_from(bound).unwrap_or(u64::MAX)
}

/// Existing files of `naming`'s sets in `dir`, sorted.
/// `fsync`s a directory, so that the renames and removals in it survive a power loss.
fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(e, dir))
}

fn existing_members(naming: &ShardNaming, dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(e, dir)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(e, dir))?;
        if naming.is_member(&entry.file_name().to_string_lossy()) {
            found.push(entry.path());
        }
    }
    found.sort();
    Ok(found)
}

/// Files of older sets of `naming`'s name moved aside (`.NAME.old-PID-N`, NAME a member's
/// name) and left there by a run killed while it replaced them.
fn left_aside(naming: &ShardNaming, dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let (member, _) = name.strip_prefix('.')?.rsplit_once(".old-")?;
            naming.is_member(member).then(|| entry.path())
        })
        .collect()
}

/// The temporary files of every [`ShardedWriter`] of the process not finished yet.
static UNFINISHED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Set by [`remove_unfinished_shards`]: no shard file is made after it.
static CLEANED_UP: AtomicBool = AtomicBool::new(false);

fn unfinished() -> MutexGuard<'static, Vec<PathBuf>> {
    // Only paths are pushed and removed under the lock: a poisoned lock holds a valid list.
    UNFINISHED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Removes the temporary files of every [`ShardedWriter`] of this process that is not
/// finished, for a program about to exit without running destructors on an interrupt, as the
/// `tfrecord` command line does from the thread its SIGINT / SIGTERM handler runs on (such as
/// the `ctrlc` crate's). It takes a lock and allocates: never call it inside a signal handler
/// itself. A set being renamed into place is waited for, and stays. A writer whose files were
/// removed fails on [`finish`](ShardedWriter::finish) (writes into a removed file may still
/// succeed) before it changes anything: no shard is renamed into place from them and no file
/// of another set is removed. Returns how many temporary files were removed.
pub fn remove_unfinished_shards() -> usize {
    let mut guard = unfinished();
    CLEANED_UP.store(true, Ordering::SeqCst);
    let listed = std::mem::take(&mut *guard);
    drop(guard);
    listed
        .iter()
        .filter(|path| fs::remove_file(path).is_ok())
        .count()
}

/// Creates a new, empty hidden file in `dir` with a name no other file has, listed among the
/// unfinished ones.
fn create_temp(dir: &Path, label: &str) -> io::Result<(File, PathBuf)> {
    let pid = std::process::id();
    let mut attempt = 0u32;
    // Made and listed under the lock, so that an interrupt's clean-up removes every file made
    // before it, and none is made after it.
    let mut listed = unfinished();
    if CLEANED_UP.load(Ordering::SeqCst) {
        return Err(io::Error::other(
            "the process is being interrupted: no new shard is made",
        ));
    }
    loop {
        let candidate = dir.join(format!(".{label}.tmp-{pid}-{attempt}"));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(f) => {
                listed.push(candidate.clone());
                return Ok((f, candidate));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 1000 => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}
