//! Standard output for the commands that print text: buffered, locked, and flushed also when
//! a command fails.

use std::io::{self, BufWriter, Write};

use crate::error::CliResult;

/// Buffered, locked standard output for text.
pub(crate) type Stdout = BufWriter<io::StdoutLock<'static>>;

/// Standard output, locked and buffered.
pub(crate) fn stdout() -> Stdout {
    BufWriter::with_capacity(1 << 16, io::stdout().lock())
}

/// Runs `body` with a buffered standard output and flushes it afterwards, also after an error
/// (so what was printed before the error is not lost); the first error wins.
pub(crate) fn with_stdout<T>(body: impl FnOnce(&mut Stdout) -> CliResult<T>) -> CliResult<T> {
    let mut out = stdout();
    let res = body(&mut out);
    let flushed = out.flush();
    let value = res?;
    flushed?;
    Ok(value)
}
