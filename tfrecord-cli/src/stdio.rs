//! How standard input and output are named: `-` on the command line, `<stdin>` and `<stdout>`
//! in messages.

use std::path::Path;

/// The name standard input goes by in messages.
pub(crate) use tfrecord_core::STDIN_NAME;

/// The name standard output goes by in messages.
pub(crate) const STDOUT_NAME: &str = "<stdout>";

/// True when the argument means standard input / output.
pub(crate) fn is_dash(path: &Path) -> bool {
    path.as_os_str() == "-"
}
