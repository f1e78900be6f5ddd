//! The `#[derive(Example)]` macro: a thin shell over `tfrecord-schema`.
