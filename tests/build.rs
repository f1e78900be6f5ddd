//! Compiles the TOML specs in `specs/` through the public build API, as a user's build script
//! would; `tests/e2e/spec.rs` includes the result and holds it against hand-derived twins.

fn main() -> Result<(), tfrecord_schema::Error> {
    tfrecord_schema::Builder::new()
        .schema("specs/records.toml")
        .schema("specs/clips.toml")
        // What `tfrecord infer` prints for fixtures/conformance/examples.tfrecord and (with
        // `--sequence`) sequence.tfrecord; tfrecord-cli's tests keep them in step. The
        // generated types must read the files they were inferred from.
        .schema("specs/inferred_examples.toml")
        .schema("specs/inferred_sequence.toml")
        .include_file("_specs.rs")
        .compile()
}
