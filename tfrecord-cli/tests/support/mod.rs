//! Running the `tfrecord` binary in the command-line tests, and reading what it printed.

// Each test file uses some of these.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The binary, ready for arguments.
pub(crate) fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tfrecord"))
}

/// Runs the binary with `args` and nothing on standard input.
pub(crate) fn run(args: &[&str]) -> Output {
    bin()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run tfrecord")
}

/// Runs the binary with `args`, writing `stdin` to its standard input.
pub(crate) fn run_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tfrecord");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        // The command may stop reading early; a broken pipe here is fine.
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait tfrecord");
    feeder.join().expect("stdin feeder");
    out
}

/// Standard output, which must be UTF-8.
pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

/// Standard error (any bytes that are not UTF-8 replaced).
pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts success and returns standard output.
pub(crate) fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "command failed with {:?}\nstderr:\n{}",
        o.status,
        stderr(o)
    );
    stdout(o)
}

/// Asserts failure with status 1 and a `tfrecord: error:` message; returns standard error.
pub(crate) fn fails(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(1),
        "expected exit status 1\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        stderr(o)
    );
    let err = stderr(o);
    assert!(err.contains("tfrecord: error: "), "stderr: {err}");
    err
}

/// Asserts failure of any kind (an error or a usage error); returns standard error.
pub(crate) fn unsuccessful(o: &Output) -> String {
    assert!(!o.status.success(), "succeeded unexpectedly");
    stderr(o)
}

/// A path as an argument.
pub(crate) fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}
