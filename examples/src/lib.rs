//! Runnable examples: see the `examples/` folder.
