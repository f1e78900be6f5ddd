//! Compile-fail tests of the derives' diagnostics (`ui/<category>/<case>.rs` in this package, each with
//! the expected `.stderr`), run with trybuild. Regenerate the expected output with
//! `TRYBUILD=overwrite` and review every message and span by hand.
//!
//! The `ui/schema/` cases check structs against spec files with
//! `#[example(schema = "ui/schema/mnist.toml")]`, a path relative to the crate root
//! (`CARGO_MANIFEST_DIR`). trybuild compiles each case as a binary of its own project in
//! `<target>/tests/trybuild/tfrecord-tests/`, and that project's directory is the
//! `CARGO_MANIFEST_DIR` the derive sees; so the spec files are copied there first, to the same
//! relative paths, and the cases read the same way in the project as in this crate.

use std::path::{Path, PathBuf};

/// trybuild's project directory: `<target>/tests/trybuild/<package>/`, where `<target>` is
/// the directory `CARGO_TARGET_TMPDIR` (`<target>/tmp`) lies in.
fn trybuild_project() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent()
        .unwrap_or(tmp)
        .join("tests")
        .join("trybuild")
        .join(env!("CARGO_PKG_NAME"))
}

/// Copies the spec files of `ui/schema/` into trybuild's project, at the same relative paths.
fn stage_specs() {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/schema");
    let to = trybuild_project().join("ui/schema");
    std::fs::create_dir_all(&to).expect("create trybuild's project directory");
    for entry in std::fs::read_dir(&from).expect("ui/schema is readable") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let name = path.file_name().expect("a file name");
            std::fs::copy(&path, to.join(name)).expect("copy a spec file");
        }
    }
}

#[test]
fn ui() {
    stage_specs();
    trybuild::TestCases::new().compile_fail("ui/**/*.rs");
}
