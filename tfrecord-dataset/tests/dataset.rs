//! Integration tests of the data set layer: sources, order against TensorFlow's recorded
//! interleave, determinism across runs and thread counts, shards, skip/take, checkpoints and
//! sharded writers (including a writer killed mid-write).

mod dataset {
    pub(crate) mod support;

    mod checkpoint;
    mod determinism;
    mod interleave_tf;
    mod sources;
    mod undecodable;
    mod value_batches;
    mod writer;
    mod writer_crash;
}
