//! Generates Rust types from the TOML specs in `specs/` (into `OUT_DIR`), as any crate using
//! `tfrecord-schema` as a build dependency would.

fn main() -> Result<(), tfrecord_schema::Error> {
    tfrecord_schema::Builder::new()
        .schema("specs/mnist.toml")
        .compile()
}
