//! Criterion benches of the hot paths the harness runs measure end to end, on small synthetic
//! data made here (no files needed): framing + CRC read and write, gzip read and write, the
//! derived SequenceExample decode and encode, and the runtime spec parser on Example and
//! SequenceExample batches. (`tfrecord-core/benches/codec.rs` has the derived Example
//! decode/encode against prost.)
//!
//! `cargo bench -p tfrecord-bench --bench hot_paths`; CI only builds it
//! (`cargo bench --workspace --no-run`).

// Synthetic data from small counters: the casts cannot wrap.
#![allow(
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss
)]

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tfrecord_core::parse::{DType, ExampleParser, FeatureSpec, SequenceExampleParser};
use tfrecord_core::{
    Compression, Decode, Encode, Example, ReaderOptions, RecordReader, RecordWriter,
    SequenceExample, TfExample, TfSequenceExample, WriterOptions,
};

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

#[derive(SequenceExample, Clone, Debug, PartialEq)]
struct Seq {
    id: i64,
    lang: Vec<u8>,
    #[example(sequence)]
    tokens: Vec<Vec<i64>>,
    #[example(sequence)]
    scores: Vec<f32>,
}

#[derive(SequenceExample, Debug, PartialEq)]
struct SeqRef<'a> {
    id: i64,
    lang: &'a [u8],
    #[example(sequence)]
    tokens: Vec<Vec<i64>>,
    #[example(sequence)]
    scores: Vec<f32>,
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

fn seq(i: u64) -> Seq {
    let steps = 10 + i % 191;
    Seq {
        id: i as i64,
        lang: b"en".to_vec(),
        tokens: (0..steps)
            .map(|s| {
                (0..1 + (s + i) % 4)
                    .map(|k| ((s * 31 + k * 7 + i) % 50_000) as i64)
                    .collect()
            })
            .collect(),
        scores: (0..steps).map(|s| s as f32 / 200.0).collect(),
    }
}

/// `records` framed as a TFRecord stream, optionally gzip-compressed.
fn framed(records: &[Vec<u8>], compression: Compression) -> Vec<u8> {
    let mut w = RecordWriter::new(Vec::new(), WriterOptions::new().compression(compression));
    for r in records {
        w.write(r).expect("in memory");
    }
    w.finish().expect("in memory")
}

fn stream(c: &mut Criterion) {
    let records: Vec<Vec<u8>> = (0..2000)
        .map(|i| Encode::<TfExample>::encode_to_vec(&ctr(i)))
        .collect();
    let stream_bytes: usize = records.iter().map(|r| r.len() + 16).sum();
    for (name, compression) in [("plain", Compression::None), ("gzip", Compression::Gzip)] {
        let file = framed(&records, compression);
        let mut g = c.benchmark_group(format!("stream/{name}"));
        g.throughput(Throughput::Bytes(stream_bytes as u64));
        g.bench_function("read_crc", |b| {
            let mut buf = Vec::new();
            b.iter(|| {
                let opts = ReaderOptions::new().compression(compression);
                let mut r = RecordReader::new(&file[..], opts);
                while r.read_into(&mut buf).expect("valid") {
                    black_box(&buf);
                }
            });
        });
        g.bench_function("write_crc", |b| {
            b.iter(|| black_box(framed(&records, compression)));
        });
        g.finish();
    }
}

fn sequence(c: &mut Criterion) {
    let values: Vec<Seq> = (0..500).map(seq).collect();
    let encoded: Vec<Vec<u8>> = values
        .iter()
        .map(Encode::<TfSequenceExample>::encode_to_vec)
        .collect();
    for (v, e) in values.iter().zip(&encoded) {
        assert_eq!(
            &<Seq as Decode<TfSequenceExample>>::decode(e).expect("decodes"),
            v
        );
    }
    let mut g = c.benchmark_group("seq");
    g.throughput(Throughput::Elements(values.len() as u64));
    g.bench_function("decode/derived_borrowed", |b| {
        b.iter(|| {
            for e in &encoded {
                black_box(
                    <SeqRef<'_> as Decode<TfSequenceExample>>::decode(black_box(e))
                        .expect("decodes"),
                );
            }
        });
    });
    let mut buf = Vec::new();
    g.bench_function("encode/derived", |b| {
        b.iter(|| {
            for v in &values {
                buf.clear();
                Encode::<TfSequenceExample>::encode_raw(v, &mut buf);
                black_box(&buf);
            }
        });
    });
    g.finish();
}

fn spec_parser(c: &mut Criterion) {
    let ctr_records: Vec<Vec<u8>> = (0..1024)
        .map(|i| Encode::<TfExample>::encode_to_vec(&ctr(i)))
        .collect();
    let mut spec = BTreeMap::new();
    spec.insert("id".to_string(), FeatureSpec::fixed_len(DType::Int64, []));
    spec.insert(
        "cat/a".to_string(),
        FeatureSpec::fixed_len(DType::Bytes, []),
    );
    spec.insert(
        "cat/b".to_string(),
        FeatureSpec::fixed_len(DType::Bytes, []),
    );
    spec.insert("hist".to_string(), FeatureSpec::var_len(DType::Int64));
    spec.insert(
        "dense".to_string(),
        FeatureSpec::fixed_len(DType::Float, [16]),
    );
    let parser = ExampleParser::new(&spec).expect("valid spec");

    let seq_records: Vec<Vec<u8>> = (0..256)
        .map(|i| Encode::<TfSequenceExample>::encode_to_vec(&seq(i)))
        .collect();
    let mut ctx = BTreeMap::new();
    ctx.insert("id".to_string(), FeatureSpec::fixed_len(DType::Int64, []));
    ctx.insert("lang".to_string(), FeatureSpec::fixed_len(DType::Bytes, []));
    let mut lists = BTreeMap::new();
    lists.insert("tokens".to_string(), FeatureSpec::var_len(DType::Int64));
    lists.insert(
        "scores".to_string(),
        FeatureSpec::fixed_len_sequence(DType::Float, [], false),
    );
    let seq_parser = SequenceExampleParser::new(&ctx, &lists).expect("valid spec");

    let mut g = c.benchmark_group("spec_parser");
    g.throughput(Throughput::Elements(ctr_records.len() as u64));
    g.bench_function("example_batch_1024", |b| {
        b.iter(|| black_box(parser.parse(black_box(&ctr_records)).expect("parses")));
    });
    g.bench_function("example_batch_1024_parallel_2", |b| {
        b.iter(|| {
            black_box(
                parser
                    .parse_parallel(black_box(&ctr_records), 2)
                    .expect("parses"),
            )
        });
    });
    g.throughput(Throughput::Elements(seq_records.len() as u64));
    g.bench_function("sequence_batch_256", |b| {
        b.iter(|| black_box(seq_parser.parse(black_box(&seq_records)).expect("parses")));
    });
    g.finish();
}

criterion_group!(benches, stream, sequence, spec_parser);
criterion_main!(benches);
