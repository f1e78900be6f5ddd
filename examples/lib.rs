//! Runnable examples of the tfrecord workspace: see `examples/`.
