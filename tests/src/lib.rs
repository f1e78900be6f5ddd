//! End-to-end tests of the workspace live in `tests/`; this library holds the bodies of the
//! fuzz targets ([`fuzz`]), which the `fuzz/` crate runs under libFuzzer and
//! `tests/fuzz_replay.rs` replays on their corpus as ordinary tests.

pub mod fuzz;
