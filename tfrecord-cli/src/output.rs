//! Outputs: a record writer to standard output or to a file that appears only on success.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, StdoutLock, Write};
use std::path::{Path, PathBuf};

use tfrecord_core::{Error, RecordWriter, WriterOptions};

use crate::cli::WriteOpts;
use crate::error::{CliError, CliResult};
use crate::interrupt::Staged;
use crate::stdio::{STDOUT_NAME, is_dash};

/// Removes a temporary file when dropped (and on interrupt while it lives), unless it was
/// [`disarm`](TempFile::disarm)ed.
struct TempFile {
    path: Option<Staged>,
}

impl TempFile {
    fn disarm(&mut self) {
        self.path = None;
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = fs::remove_file(p.path());
        }
    }
}

/// Where records go.
enum Target {
    /// Standard output.
    Stdout(RecordWriter<StdoutLock<'static>>),
    /// A temporary file renamed to `dest` by [`RecordSink::finish`].
    Staged {
        writer: RecordWriter<File>,
        temp: TempFile,
        dest: PathBuf,
    },
    /// A file written in place (a device, FIFO or other non-regular file).
    Direct(RecordWriter<File>),
}

/// A record writer for the `-o` output of `from-json`, `convert`, `from-parquet` and the
/// importers.
///
/// A regular file is written under a temporary name in the same directory (made when missing)
/// and renamed into place by [`finish`](Self::finish); on any error (or when dropped unfinished) the temporary
/// file is removed, so no partial output is left and an input may be overwritten safely.
pub(crate) struct RecordSink {
    target: Target,
}

impl RecordSink {
    /// Opens the output that the flags describe: format, compression (from the flag, else the
    /// file name, none for standard output) and level.
    ///
    /// # Errors
    /// When the output file (or its missing directory) cannot be created; the error names it.
    pub(crate) fn create(opts: &WriteOpts) -> CliResult<Self> {
        let dest = &opts.output;
        let compression = match (opts.encoding.compression, is_dash(dest)) {
            (Some(c), _) => c.into(),
            (None, true) => tfrecord_core::Compression::None,
            (None, false) => tfrecord_core::Compression::from_path(dest),
        };
        let wopts = WriterOptions::new()
            .format(opts.encoding.output_format.into())
            .compression(compression)
            .level(opts.encoding.level);
        if is_dash(dest) {
            let w = RecordWriter::new(io::stdout().lock(), wopts).with_path(STDOUT_NAME);
            return Ok(RecordSink {
                target: Target::Stdout(w),
            });
        }
        if names_directory(dest) {
            return Err(CliError::Usage(format!(
                "{}: names a directory, and this output is one file: give -o a file name \
                 (`convert` and `from-parquet` with --output-format ofrecord write OneFlow \
                 `part-*` files into a directory)",
                dest.display()
            )));
        }
        let special = fs::metadata(dest).is_ok_and(|m| !m.is_file());
        if special {
            let w = RecordWriter::create(dest, wopts)?;
            return Ok(RecordSink {
                target: Target::Direct(w),
            });
        }
        let (file, temp) = create_temp(dest).map_err(|e| Error::from(e).with_path(dest))?;
        let writer = RecordWriter::new(file, wopts).with_path(dest);
        Ok(RecordSink {
            target: Target::Staged {
                writer,
                temp: TempFile {
                    path: Some(Staged::new(temp)),
                },
                dest: dest.clone(),
            },
        })
    }

    /// Writes one record.
    ///
    /// # Errors
    /// I/O errors, naming the output, byte offset and record index.
    pub(crate) fn write(&mut self, data: &[u8]) -> CliResult<()> {
        match &mut self.target {
            Target::Stdout(w) => w.write(data)?,
            Target::Staged { writer, .. } | Target::Direct(writer) => writer.write(data)?,
        }
        Ok(())
    }

    /// Ends the stream, flushes, and (for a staged file) syncs and renames it into place.
    /// Returns how many records were written.
    ///
    /// # Errors
    /// I/O errors, naming the output.
    pub(crate) fn finish(self) -> CliResult<u64> {
        match self.target {
            Target::Stdout(w) => {
                let n = w.records_written();
                drop(w.finish()?);
                Ok(n)
            }
            Target::Direct(w) => {
                let n = w.records_written();
                w.finish()?;
                Ok(n)
            }
            Target::Staged {
                writer,
                mut temp,
                dest,
            } => {
                let n = writer.records_written();
                let file = writer.finish()?;
                let located = |e: io::Error| Error::from(e).with_path(&dest);
                file.sync_all().map_err(located)?;
                drop(file);
                if let Some(tmp) = &temp.path {
                    fs::rename(tmp.path(), &dest).map_err(located)?;
                }
                temp.disarm();
                Ok(n)
            }
        }
    }
}

/// Whether `path` names a directory: an existing one, or a name ending with a separator.
pub(crate) fn names_directory(path: &Path) -> bool {
    let text = path.as_os_str().to_string_lossy();
    path.is_dir() || text.ends_with('/') || text.ends_with(std::path::MAIN_SEPARATOR)
}

/// Writes a text output with `body`: to standard output for `-`, in place for a device or
/// FIFO, else to a temporary file beside `dest` renamed into place when `body` succeeds (and
/// removed when it fails, or on interrupt).
///
/// # Errors
/// What `body` returns, and I/O errors creating, writing, syncing or renaming the file (naming
/// `dest`).
pub(crate) fn write_text_file(
    dest: &Path,
    body: impl FnOnce(&mut dyn Write) -> CliResult<()>,
) -> CliResult<()> {
    let located = |e: io::Error| Error::from(e).with_path(dest);
    if is_dash(dest) {
        let mut out = BufWriter::new(io::stdout().lock());
        body(&mut out)?;
        return out.flush().map_err(|e| located(e).into());
    }
    write_file(dest, |file| {
        let mut out = BufWriter::new(file);
        body(&mut out)?;
        out.into_inner().map_err(|e| located(e.into_error()).into())
    })
}

/// Writes a file with `body`, which gets the open file and gives it back when done: in place
/// for standard output (`-`), a device or a FIFO (the formats written this way are written
/// front to back, with no seeking), else to a temporary file beside `dest` renamed into place
/// when `body` succeeds (and removed when it fails, or on interrupt).
///
/// # Errors
/// What `body` returns, and I/O errors creating, syncing or renaming the file (naming `dest`).
pub(crate) fn write_file(dest: &Path, body: impl FnOnce(File) -> CliResult<File>) -> CliResult<()> {
    let located = |e: io::Error| Error::from(e).with_path(dest);
    if is_dash(dest) {
        body(stdout_file().map_err(located)?)?;
        return Ok(());
    }
    if fs::metadata(dest).is_ok_and(|m| !m.is_file()) {
        body(File::create(dest).map_err(located)?)?;
        return Ok(());
    }
    let (file, temp) = create_temp(dest).map_err(located)?;
    let mut temp = TempFile {
        path: Some(Staged::new(temp)),
    };
    let file = body(file)?;
    file.sync_all().map_err(located)?;
    drop(file);
    if let Some(tmp) = &temp.path {
        fs::rename(tmp.path(), dest).map_err(located)?;
    }
    temp.disarm();
    Ok(())
}

/// Standard output as a `File` of its own (a duplicate of its descriptor), for writers that
/// take a file. Nothing else is written to standard output meanwhile.
fn stdout_file() -> io::Result<File> {
    #[cfg(unix)]
    let owned = {
        use std::os::fd::AsFd;
        io::stdout().as_fd().try_clone_to_owned()?
    };
    #[cfg(windows)]
    let owned = {
        use std::os::windows::io::AsHandle;
        io::stdout().as_handle().try_clone_to_owned()?
    };
    Ok(File::from(owned))
}

/// Says on standard error, one line each, which files of other shard sets of the output's name
/// `--force` removed before the new set was renamed into place (and did not replace).
pub(crate) fn note_removed(removed: &[PathBuf]) {
    let mut err = io::stderr().lock();
    for path in removed {
        let _ = writeln!(
            err,
            "tfrecord: note: removed {} (a shard of another set of this output's name)",
            path.display()
        );
    }
}

/// Creates directory `dir` and its missing parents; an error says which directory could not be
/// made.
///
/// # Errors
/// The directory cannot be created (a file in the way, no permission, ...).
pub(crate) fn create_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot create the directory {}: {e}", dir.display()),
        )
    })
}

/// Refuses to write over an existing regular file without `--force`, and to write a file
/// where a directory is. With `--force` the output may be one of the inputs: every input is
/// read before the output is renamed into place, so the command works in place.
///
/// # Errors
/// The file exists and `force` is false; `dest` is a directory (a usage error).
pub(crate) fn check_overwrite(dest: &Path, force: bool) -> CliResult<()> {
    if !is_dash(dest) && fs::metadata(dest).is_ok_and(|m| m.is_dir()) {
        return Err(crate::error::CliError::Usage(format!(
            "{}: a directory: the output is one file, so give a file name",
            dest.display()
        )));
    }
    if !is_dash(dest) && !force && fs::metadata(dest).is_ok_and(|m| m.is_file()) {
        return Err(crate::error::CliError::Failed(format!(
            "{}: the output exists; pass --force to write over it",
            dest.display()
        )));
    }
    // A symbolic link that points nowhere is there too: the output would replace it.
    if !is_dash(dest)
        && !force
        && fs::metadata(dest).is_err()
        && fs::symlink_metadata(dest).is_ok_and(|m| m.file_type().is_symlink())
    {
        return Err(crate::error::CliError::Failed(format!(
            "{}: the output is a symbolic link to nothing, which the output would replace; \
             pass --force to write over it",
            dest.display()
        )));
    }
    Ok(())
}

/// Refuses an output that is one of the inputs (the same file, by its canonical path), for a
/// command that writes over its output without asking for `--force`: the input would be
/// replaced by what was made of it without the user saying so.
///
/// # Errors
/// `dest` is an input (a usage error).
pub(crate) fn check_not_input<P: AsRef<Path>>(
    dest: &Path,
    inputs: impl IntoIterator<Item = P>,
) -> CliResult<()> {
    if is_dash(dest) {
        return Ok(());
    }
    let Ok(out) = fs::canonicalize(dest) else {
        return Ok(()); // not there yet: no input can be it
    };
    for input in inputs {
        let input = input.as_ref();
        if !is_dash(input) && fs::canonicalize(input).is_ok_and(|i| i == out) {
            return Err(crate::error::CliError::Usage(format!(
                "{}: the output is also an input ({}): write to another file",
                dest.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

/// Creates a new, empty file beside `dest` with a name no other file has, after creating
/// `dest`'s directory when it is missing (as the sharded outputs do).
fn create_temp(dest: &Path) -> io::Result<(File, PathBuf)> {
    let dir = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    create_dir(&dir)?;
    let base = dest
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let pid = std::process::id();
    let mut attempt = 0u32;
    loop {
        let candidate = dir.join(format!(".{base}.tmp-{pid}-{attempt}"));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(f) => return Ok((f, candidate)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 1000 => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}
