//! The error type of the command, how it maps to an exit status, and how it is reported.

use std::fmt;
use std::io::{self, Write};
use std::process::ExitCode;

use crate::stdio::{STDOUT_NAME, is_dash};

/// Why a command failed.
#[derive(Debug)]
pub(crate) enum CliError {
    /// A library error; its message names file, byte offset, record index and feature key.
    Core(tfrecord_core::Error),
    /// Writing the command's text output (standard output) failed.
    Output(io::Error),
    /// The flags given cannot be used together.
    Usage(String),
    /// Code could not be generated from spec files; the report is rustc-style, one block per
    /// error.
    Spec(tfrecord_schema::Error),
    /// A spec file that does not read; the report is rustc-style, one block per error.
    SpecFile(std::path::PathBuf, tfrecord_schema::Diagnostics),
    /// Anything else that ends a command, as a complete message.
    Failed(String),
}

/// `Result` with [`CliError`].
pub(crate) type CliResult<T> = Result<T, CliError>;

impl CliError {
    /// True when the error only says that the reader of our standard output went away (as
    /// `tfrecord cat x | head` does): that ends the command quietly and successfully. A broken
    /// pipe on an output named with `-o` (a FIFO whose reader left) is an error: the output is
    /// incomplete.
    pub(crate) fn is_broken_pipe(&self) -> bool {
        match self {
            CliError::Core(e) => {
                e.is_io(io::ErrorKind::BrokenPipe)
                    && e.path()
                        .is_none_or(|p| is_dash(p) || p.as_os_str() == STDOUT_NAME)
            }
            CliError::Output(e) => e.kind() == io::ErrorKind::BrokenPipe,
            CliError::Usage(_)
            | CliError::Spec(_)
            | CliError::SpecFile(..)
            | CliError::Failed(_) => false,
        }
    }

    /// The exit status: 2 for a misused command line, 1 for everything else.
    pub(crate) fn exit_code(&self) -> ExitCode {
        match self {
            CliError::Usage(_) => ExitCode::from(2),
            _ => ExitCode::FAILURE,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Core(e) => write!(f, "{e}"),
            CliError::Output(e) => write!(f, "{STDOUT_NAME}: I/O error: {e}"),
            CliError::Usage(msg) | CliError::Failed(msg) => f.write_str(msg),
            CliError::Spec(e) => {
                let n = e.count();
                write!(
                    f,
                    "could not generate code due to {n} previous error{}",
                    if n == 1 { "" } else { "s" }
                )
            }
            CliError::SpecFile(path, d) => {
                let n = d.len();
                write!(
                    f,
                    "{}: invalid spec: {n} error{} above",
                    path.display(),
                    if n == 1 { "" } else { "s" }
                )
            }
        }
    }
}

impl From<tfrecord_core::Error> for CliError {
    fn from(e: tfrecord_core::Error) -> Self {
        CliError::Core(e)
    }
}

impl From<tfrecord_dataset::Error> for CliError {
    fn from(e: tfrecord_dataset::Error) -> Self {
        match e {
            tfrecord_dataset::Error::Record(e) => CliError::Core(e),
            tfrecord_dataset::Error::Exists(path) => CliError::Failed(other_shard_set(&path)),
            e if e.is_usage() => CliError::Usage(e.to_string()),
            e => CliError::Failed(e.to_string()),
        }
    }
}

/// The refusal to write a shard set beside an existing set of its name without `--force`,
/// naming `existing`, a file of that set.
pub(crate) fn other_shard_set(existing: &std::path::Path) -> String {
    format!(
        "{}: another shard set of this output's name exists (this is one of its files); \
         --force replaces it: the new set is written, then the old set's other files are \
         removed, so that the directory does not hold two sets that a reader would mix",
        existing.display()
    )
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        CliError::Output(e)
    }
}

/// Prints an error on standard error, as `main` does for the error that ends a command. Spec
/// errors come first as their own rustc-style report.
pub(crate) fn report(err: &CliError) {
    let mut stderr = io::stderr().lock();
    match err {
        CliError::Spec(e) => {
            let _ = write!(stderr, "{e}");
        }
        CliError::SpecFile(_, d) => {
            let _ = write!(stderr, "{d}");
        }
        _ => {}
    }
    let _ = writeln!(stderr, "tfrecord: error: {err}");
    if let CliError::Core(e) = err
        && let Some(note) = crate::hint::flag_note(e)
    {
        let _ = writeln!(stderr, "tfrecord: note: {note}");
    }
}
