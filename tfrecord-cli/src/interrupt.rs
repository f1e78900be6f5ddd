//! Temporary outputs removed when the command is interrupted (SIGINT, SIGTERM, SIGHUP), as
//! they are on an error: an interrupted `convert` or import leaves no hidden partial file.
//!
//! Outputs register their temporary file while they write it ([`Staged`]); the handler, on its
//! own thread, removes whatever is registered and exits with status 130 (for SIGTERM and SIGHUP
//! too: the handler is not told which signal came). An output renamed into place before the
//! handler ran is whole and stays; one being renamed is waited for.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

/// The temporary files being written now.
static STAGED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The exit status of an interrupted command (128 + SIGINT, as shells report it).
const INTERRUPTED: i32 = 130;

/// Set by the handler before it removes anything.
static HANDLING: AtomicBool = AtomicBool::new(false);

/// Installs the handler. Call once, before any output is created.
pub(crate) fn install() {
    // Without a handler (another one installed, or none allowed) the signal ends the process
    // as it would have; the outputs still clean up on errors.
    let _ = ctrlc::set_handler(|| {
        HANDLING.store(true, Ordering::SeqCst);
        let staged = std::mem::take(&mut *STAGED.lock().unwrap_or_else(PoisonError::into_inner));
        // A file renamed into place just now is no longer there to remove.
        let removed = staged.iter().filter(|p| fs::remove_file(p).is_ok()).count();
        // The shards of `convert --shards` and the importers' sharded outputs.
        let shards = tfrecord_dataset::remove_unfinished_shards();
        // An output already in place is whole: only what was not yet is removed.
        if removed + shards > 0 {
            eprintln!("tfrecord: interrupted; partial outputs removed");
        } else {
            eprintln!("tfrecord: interrupted");
        }
        std::process::exit(INTERRUPTED);
    });
}

/// Waits for the handler to end the process when an interrupt is being handled: the command's
/// own outcome, an error from a file the handler has just removed (a shard renamed into place
/// after its temporary file went) or success, must not win the race to exit.
pub(crate) fn wait_if_interrupted() {
    if HANDLING.load(Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
}

/// A temporary file registered for removal on interrupt while this lives.
#[derive(Debug)]
pub(crate) struct Staged {
    path: PathBuf,
}

impl Staged {
    /// Registers `path`.
    pub(crate) fn new(path: PathBuf) -> Self {
        registry().push(path.clone());
        Staged { path }
    }

    /// The temporary file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        registry().retain(|p| p != &self.path);
    }
}

fn registry() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    STAGED.lock().unwrap_or_else(PoisonError::into_inner)
}
