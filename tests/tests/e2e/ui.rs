//! Compile-fail tests of the derives' diagnostics (`ui/<category>/<case>.rs` in this package, each with
//! the expected `.stderr`), run with trybuild. Regenerate the expected output with
//! `TRYBUILD=overwrite` and review every message and span by hand.

#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("ui/**/*.rs");
}
