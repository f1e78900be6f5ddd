//! A training loop's input: a sharded data set written with `ShardedWriter`, then read as
//! batches of a derived type on two threads, interleaved and shuffled from a seed, for two
//! epochs, with a checkpoint taken mid-way and the read resumed from it as a restarted job
//! would.
//!
//! `cargo run -p tfrecord-examples --example training_loop -- OUT_DIR`

use std::error::Error;
use std::path::PathBuf;

use tfrecord_core::{Example, TfExample};
use tfrecord_dataset::{
    Checkpoint, Dataset, DatasetOptions, ShardNaming, ShardSplit, ShardedWriter,
    ShardedWriterOptions, Shuffle,
};

/// One click of a recommendation log.
#[derive(Example, Clone, Debug, PartialEq)]
struct Click {
    user: i64,
    item: String,
    history: Vec<i64>,
    label: f32,
}

const RECORDS: u64 = 20_000;
const SHARDS: u64 = 8;
const BATCH: usize = 256;

fn click(i: u64) -> Click {
    let i = i64::try_from(i).expect("small");
    Click {
        user: i % 997,
        item: format!("item-{}", i % 5003),
        history: (0..i % 17).map(|k| (i * 31 + k) % 10_000).collect(),
        label: if i % 3 == 0 { 1.0 } else { 0.0 },
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or("usage: training_loop OUT_DIR")?,
    );
    std::fs::create_dir_all(&dir)?;

    // Eight shards, `train-00000-of-00008.tfrecord` ..., each renamed into place when the set
    // is complete.
    let naming = ShardNaming::TensorFlow(dir.join("train.tfrecord"));
    let split = ShardSplit::Even {
        shards: SHARDS,
        total: RECORDS,
    };
    let opts = ShardedWriterOptions::new(naming, split).overwrite(true);
    let mut writer = ShardedWriter::create(opts)?;
    for i in 0..RECORDS {
        writer.write_value::<TfExample, _>(&click(i))?;
    }
    let shards = writer.finish()?;
    println!("wrote {} shards", shards.len());

    let options = DatasetOptions::new()
        .interleave(4, 16)
        .shuffle(Shuffle::new(7).buffer_size(2_000))
        .epochs(Some(2))
        .threads(2);
    let dataset = Dataset::open([&dir])?.with_options(options);

    // The first part of the run: 30 batches, then the job stops with a checkpoint.
    let mut batches = dataset.value_batches::<Click>(BATCH)?;
    let mut seen = 0usize;
    let mut positives = 0usize;
    for batch in batches.by_ref().take(30) {
        let batch = batch?;
        seen += batch.len();
        positives += batch.iter().filter(|c| c.label > 0.5).count();
    }
    let saved = batches.checkpoint().to_json();
    drop(batches);
    println!(
        "stopped after {seen} records; checkpoint of {} bytes",
        saved.len()
    );

    // The restarted job: the same data set and options, from the checkpoint.
    let resumed = dataset.clone().resume(Checkpoint::from_json(&saved)?);
    for batch in resumed.value_batches::<Click>(BATCH)? {
        let batch = batch?;
        seen += batch.len();
        positives += batch.iter().filter(|c| c.label > 0.5).count();
    }

    // Every record of both epochs exactly once, across the stop.
    let expected = 2 * usize::try_from(RECORDS)?;
    let expected_positives = 2 * (0..RECORDS).filter(|i| i % 3 == 0).count();
    println!("read {seen} records in all, {positives} positive");
    if seen != expected || positives != expected_positives {
        return Err(format!(
            "expected {expected} records and {expected_positives} positive, read {seen} and \
             {positives}"
        )
        .into());
    }
    Ok(())
}
