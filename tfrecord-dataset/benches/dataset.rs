//! Criterion benches of the data set layer, on files made here (8 shards of CTR-like Examples
//! in a temporary directory): typed reads on 1 and 2 threads (`Ctr`, with three heap fields
//! per record, one by one with `values` and in batches of 1024 with `value_batches`; and
//! `Dense`, the same records read into fields that need no allocation), and a shuffle buffer
//! of 10,000 records against no shuffling. The process uses the system allocator (see
//! `DatasetOptions::threads` on what it costs values decoded on workers).
//!
//! `cargo bench -p tfrecord-dataset --bench dataset`; CI only builds it
//! (`cargo bench --workspace --no-run`).

// Synthetic data from small counters: the casts cannot wrap.
#![allow(
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss
)]

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tfrecord_core::{Example, Writer};
use tfrecord_dataset::{Dataset, DatasetOptions, Shuffle};

/// The shape of the harness's `ctr` workload: ids, categorical bytes, a var-len list and 16
/// floats.
#[derive(Example, Clone, Debug, PartialEq)]
struct Ctr {
    id: i64,
    #[example(key = "cat/a")]
    cat_a: Vec<u8>,
    #[example(key = "cat/b")]
    cat_b: Vec<u8>,
    hist: Vec<i64>,
    dense: [f32; 16],
}

fn ctr(i: u64) -> Ctr {
    Ctr {
        id: (i * 7919 % 100_000) as i64 - 1,
        cat_a: format!("{:08x}", i.wrapping_mul(2_654_435_761) & 0xffff_ffff).into_bytes(),
        cat_b: format!("{:08x}", i.wrapping_mul(40_503) & 0xffff_ffff).into_bytes(),
        hist: (0..i % 51)
            .map(|k| ((k * 7919 + i) % 1_000_000) as i64)
            .collect(),
        dense: std::array::from_fn(|k| (k as f32 - i as f32) * 0.01),
    }
}

/// The numeric features of the same records: decoded without allocating (the other features
/// are skipped).
#[derive(Example, Clone, Debug, PartialEq)]
struct Dense {
    id: i64,
    dense: [f32; 16],
}

const SHARDS: u64 = 8;
const PER_SHARD: u64 = 12_500;

fn write_shards(dir: &Path) {
    for s in 0..SHARDS {
        let path = dir.join(format!("ctr-{s:05}-of-{SHARDS:05}.tfrecord"));
        let mut w = Writer::<Ctr>::create(&path).expect("creates");
        for i in 0..PER_SHARD {
            w.write(&ctr(s * PER_SHARD + i)).expect("writes");
        }
        w.finish().expect("finishes");
        // Written back now, not by the kernel's flusher in the middle of a measurement (it
        // takes a core of two about 30 s after the write).
        std::fs::File::open(&path)
            .and_then(|f| f.sync_all())
            .expect("syncs");
    }
}

fn read_all(ds: &Dataset) -> u64 {
    read_as::<Ctr>(ds)
}

fn read_as<T: tfrecord_core::DecodeOwned + Send + 'static>(ds: &Dataset) -> u64 {
    let mut n = 0;
    for v in ds.values::<T>().expect("starts") {
        black_box(v.expect("reads"));
        n += 1;
    }
    assert_eq!(n, SHARDS * PER_SHARD);
    n
}

/// Batches of 1024 `Ctr` values, each dropped (given back) before the next.
fn read_batches(ds: &Dataset) -> u64 {
    let mut n = 0;
    for batch in ds.value_batches::<Ctr>(1024).expect("starts") {
        let batch = batch.expect("reads");
        n += black_box(&*batch).len() as u64;
    }
    assert_eq!(n, SHARDS * PER_SHARD);
    n
}

fn dataset(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    write_shards(dir.path());
    let ds = Dataset::open([dir.path()]).expect("lists");

    let mut g = c.benchmark_group("dataset/8_shards");
    g.sample_size(10);
    g.throughput(Throughput::Elements(SHARDS * PER_SHARD));
    for threads in [1, 2] {
        let ds = ds
            .clone()
            .with_options(DatasetOptions::new().threads(threads));
        g.bench_function(format!("values_threads_{threads}"), |b| {
            b.iter(|| read_all(&ds));
        });
        g.bench_function(format!("value_batches_threads_{threads}"), |b| {
            b.iter(|| read_batches(&ds));
        });
        g.bench_function(format!("dense_threads_{threads}"), |b| {
            b.iter(|| read_as::<Dense>(&ds));
        });
    }
    g.finish();

    let mut g = c.benchmark_group("dataset/shuffle");
    g.sample_size(10);
    g.throughput(Throughput::Elements(SHARDS * PER_SHARD));
    let plain = ds.clone().with_options(DatasetOptions::new());
    g.bench_function("unshuffled", |b| b.iter(|| read_all(&plain)));
    let shuffled = ds
        .clone()
        .with_options(DatasetOptions::new().shuffle(Shuffle::new(1).buffer_size(10_000)));
    g.bench_function("buffer_10000", |b| b.iter(|| read_all(&shuffled)));
    g.bench_function("value_batches_unshuffled", |b| {
        b.iter(|| read_batches(&plain))
    });
    g.bench_function("value_batches_buffer_10000", |b| {
        b.iter(|| read_batches(&shuffled));
    });
    g.finish();
}

criterion_group!(benches, dataset);
criterion_main!(benches);
