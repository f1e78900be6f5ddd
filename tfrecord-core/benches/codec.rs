//! Derived encode/decode against the generic prost message types, on an MNIST-like record
//! (784-byte image + label) and a CTR-like record (13 int64, 26 short bytes, a var-len int64
//! list, 16 floats). Also framing + CRC over a buffer of records.
//!
//! `cargo bench -p tfrecord-core --bench codec`

// Synthetic data from small counters: the casts cannot wrap.
#![allow(
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss
)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tfrecord_core::proto::tensorflow;
use tfrecord_core::{
    Decode, Encode, Example, Message, ReaderOptions, RecordReader, RecordWriter, TfExample,
    WriterOptions,
};

#[derive(Example, Clone, Debug, PartialEq)]
struct Mnist {
    #[example(key = "image/encoded")]
    image: Vec<u8>,
    label: i64,
}

#[derive(Example, Clone, Debug, PartialEq)]
struct MnistRef<'a> {
    #[example(key = "image/encoded")]
    image: &'a [u8],
    label: i64,
}

#[derive(Example, Clone, Debug, PartialEq)]
#[example(rename_all = "UPPERCASE")]
struct Ctr {
    i1: i64,
    i2: i64,
    i3: i64,
    i4: i64,
    i5: i64,
    i6: i64,
    i7: i64,
    i8: i64,
    i9: i64,
    i10: i64,
    i11: i64,
    i12: i64,
    i13: i64,
    c1: Vec<u8>,
    c2: Vec<u8>,
    c3: Vec<u8>,
    c4: Vec<u8>,
    c5: Vec<u8>,
    c6: Vec<u8>,
    c7: Vec<u8>,
    c8: Vec<u8>,
    c9: Vec<u8>,
    c10: Vec<u8>,
    c11: Vec<u8>,
    c12: Vec<u8>,
    c13: Vec<u8>,
    c14: Vec<u8>,
    c15: Vec<u8>,
    c16: Vec<u8>,
    c17: Vec<u8>,
    c18: Vec<u8>,
    c19: Vec<u8>,
    c20: Vec<u8>,
    c21: Vec<u8>,
    c22: Vec<u8>,
    c23: Vec<u8>,
    c24: Vec<u8>,
    c25: Vec<u8>,
    c26: Vec<u8>,
    #[example(key = "hist")]
    hist: Vec<i64>,
    #[example(key = "dense")]
    dense: [f32; 16],
}

fn mnist(i: u64) -> Mnist {
    Mnist {
        image: (0..784u64).map(|p| ((p * 31 + i) % 251) as u8).collect(),
        label: (i % 10) as i64,
    }
}

fn ctr(i: u64) -> Ctr {
    let c = |k: u64| format!("{:08x}", (i * 2654435761 + k * 97) & 0xffff_ffff).into_bytes();
    let n = |k: u64| ((i * 31 + k * 17) % 1000) as i64 - 1;
    Ctr {
        i1: n(1),
        i2: n(2),
        i3: n(3),
        i4: n(4),
        i5: n(5),
        i6: n(6),
        i7: n(7),
        i8: n(8),
        i9: n(9),
        i10: n(10),
        i11: n(11),
        i12: n(12),
        i13: n(13),
        c1: c(1),
        c2: c(2),
        c3: c(3),
        c4: c(4),
        c5: c(5),
        c6: c(6),
        c7: c(7),
        c8: c(8),
        c9: c(9),
        c10: c(10),
        c11: c(11),
        c12: c(12),
        c13: c(13),
        c14: c(14),
        c15: c(15),
        c16: c(16),
        c17: c(17),
        c18: c(18),
        c19: c(19),
        c20: c(20),
        c21: c(21),
        c22: c(22),
        c23: c(23),
        c24: c(24),
        c25: c(25),
        c26: c(26),
        hist: (0..(i % 51)).map(|k| (k * 7919 + i) as i64).collect(),
        dense: std::array::from_fn(|k| (k as f32 + i as f32) * 0.01),
    }
}

fn bench_record<T>(c: &mut Criterion, name: &str, records: &[T])
where
    T: Encode<TfExample> + for<'de> Decode<'de, TfExample> + PartialEq + std::fmt::Debug,
{
    let encoded: Vec<Vec<u8>> = records.iter().map(Encode::encode_to_vec).collect();
    let generic: Vec<tensorflow::Example> = encoded
        .iter()
        .map(|b| tensorflow::Example::decode(&b[..]).expect("valid"))
        .collect();
    for (r, b) in records.iter().zip(&encoded) {
        assert_eq!(&T::decode(b).expect("decodes"), r);
    }
    let bytes: u64 = encoded.iter().map(|b| b.len() as u64).sum();
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(records.len() as u64));
    g.bench_function("decode/derived", |b| {
        b.iter(|| {
            for rec in &encoded {
                black_box(T::decode(black_box(rec)).expect("decodes"));
            }
        });
    });
    g.bench_function("decode/prost_generic", |b| {
        b.iter(|| {
            for rec in &encoded {
                black_box(tensorflow::Example::decode(black_box(&rec[..])).expect("decodes"));
            }
        });
    });
    let mut buf = Vec::new();
    g.bench_function("encode/derived", |b| {
        b.iter(|| {
            for r in records {
                buf.clear();
                r.encode_raw(&mut buf);
                black_box(&buf);
            }
        });
    });
    g.bench_function("encode/prost_generic", |b| {
        b.iter(|| {
            for e in &generic {
                buf.clear();
                e.encode(&mut buf).expect("fits");
                black_box(&buf);
            }
        });
    });
    g.finish();
    let _ = bytes;
}

fn codec(c: &mut Criterion) {
    let m: Vec<Mnist> = (0..1000).map(mnist).collect();
    bench_record(c, "mnist", &m);
    let encoded: Vec<Vec<u8>> = m.iter().map(Encode::<TfExample>::encode_to_vec).collect();
    c.bench_function("mnist/decode/derived_borrowed", |b| {
        b.iter(|| {
            for rec in &encoded {
                black_box(
                    <MnistRef<'_> as Decode<TfExample>>::decode(black_box(rec)).expect("decodes"),
                );
            }
        });
    });
    let r: Vec<Ctr> = (0..1000).map(ctr).collect();
    bench_record(c, "ctr", &r);
}

fn framing(c: &mut Criterion) {
    let payload: Vec<Vec<u8>> = (0..1000)
        .map(|i| Encode::<TfExample>::encode_to_vec(&mnist(i)))
        .collect();
    let mut w = RecordWriter::new(Vec::new(), WriterOptions::new());
    for p in &payload {
        w.write(p).expect("in memory");
    }
    let file = w.finish().expect("in memory");
    let mut g = c.benchmark_group("framing");
    g.throughput(Throughput::Bytes(file.len() as u64));
    g.bench_function("read_crc", |b| {
        let mut buf = Vec::new();
        b.iter(|| {
            let mut r = RecordReader::new(&file[..], ReaderOptions::new());
            while r.read_into(&mut buf).expect("valid") {
                black_box(&buf);
            }
        });
    });
    g.bench_function("read_lent_crc", |b| {
        let mut scratch = Vec::new();
        b.iter(|| {
            let mut r = RecordReader::new(&file[..], ReaderOptions::new());
            while let Some(record) = r.read_lent(&mut scratch).expect("valid") {
                black_box(record);
            }
        });
    });
    g.bench_function("write_crc", |b| {
        b.iter(|| {
            let mut w = RecordWriter::new(Vec::with_capacity(file.len()), WriterOptions::new());
            for p in &payload {
                w.write(p).expect("in memory");
            }
            black_box(w.finish().expect("in memory"));
        });
    });
    g.finish();
}

criterion_group!(benches, codec, framing);
criterion_main!(benches);
