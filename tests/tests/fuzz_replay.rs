//! Every committed fuzz input, replayed as an ordinary test: the seed corpus of each target
//! (`fuzz/corpus/<target>/`) and the inputs that once found a bug (`fuzz/regressions/<target>/`)
//! run through the same bodies libFuzzer runs (`tfrecord_tests::fuzz`), with the same checks:
//! the readers agree, the round trips hold, nothing panics, and the heap stays within the
//! target's bound.
//!
//! A test binary of its own: the heap check needs the counting global allocator, which counts
//! every thread of the process, so the tests here run their inputs one at a time.

use std::alloc::System;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use peakmem_alloc::{INSTRUMENTED_SYSTEM, PeakMemAlloc};
use tfrecord_tests::fuzz::TARGETS;

#[global_allocator]
static GLOBAL: &PeakMemAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Held while a target runs: the heap's peak is counted for the whole process.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The `fuzz/` folder.
fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// The files of `fuzz/<folder>/<target>/`, sorted; none when the folder does not exist.
fn inputs(folder: &str, target: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(fuzz_dir().join(folder).join(target)) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("a readable folder entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Runs every corpus and regression input of `target`; fails naming each input that panicked.
fn replay(target: &str) {
    let (_, body) = TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .unwrap_or_else(|| panic!("no target named {target}"));
    let corpus = inputs("corpus", target);
    assert!(!corpus.is_empty(), "fuzz/corpus/{target}/ holds no input");
    let all: Vec<PathBuf> = corpus
        .into_iter()
        .chain(inputs("regressions", target))
        .collect();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let mut failed = Vec::new();
    for path in &all {
        let data = std::fs::read(path).expect("a readable input");
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| body(&data))) {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic without a message");
            failed.push(format!("{}: {message}", path.display()));
        }
    }
    assert!(
        failed.is_empty(),
        "{target}: {} of {} inputs failed:\n{}",
        failed.len(),
        all.len(),
        failed.join("\n")
    );
}

#[test]
fn every_target_has_a_fuzz_binary_and_a_test_here() {
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    let this = include_str!("fuzz_replay.rs");
    for (name, _) in TARGETS {
        let wrapper = fuzz_dir().join("fuzz_targets").join(format!("{name}.rs"));
        let source = std::fs::read_to_string(&wrapper)
            .unwrap_or_else(|e| panic!("{}: {e}", wrapper.display()));
        assert!(
            source.contains(&format!("fuzz::{name}(")),
            "{} calls tfrecord_tests::fuzz::{name}",
            wrapper.display()
        );
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "fuzz/Cargo.toml has a [[bin]] {name}"
        );
        assert!(
            this.contains(&format!("replay(\"{name}\")")),
            "a test here replays {name}"
        );
    }
}

#[test]
fn framing() {
    replay("framing");
}

#[test]
fn messages() {
    replay("messages");
}

#[test]
fn derived() {
    replay("derived");
}

#[test]
fn parse() {
    replay("parse");
}

#[test]
fn columns() {
    replay("columns");
}

#[test]
fn spec() {
    replay("spec");
}

#[test]
fn avro_expr() {
    replay("avro_expr");
}

#[test]
fn avro_file() {
    replay("avro_file");
}

#[test]
fn json_lines() {
    replay("json_lines");
}
