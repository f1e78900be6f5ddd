//! Reading a damaged Avro file allocates only what its bytes back: a count or length mutated
//! to a huge value in a 1 KB file is an error naming the file, the record and the block, and
//! the heap does not grow by more than a few MiB on the way.
//!
//! A test binary of its own: the peak-counting global allocator counts every thread of the
//! process, so this file holds one test.

use std::alloc::System;
use std::path::PathBuf;

use peakmem_alloc::{INSTRUMENTED_SYSTEM, PeakMemAlloc, PeakMemAllocTrait};
use tfrecord_import::apache_avro::types::{Record, Value};
use tfrecord_import::apache_avro::{Codec, Schema, Writer};
use tfrecord_import::avro;

#[global_allocator]
static GLOBAL: &PeakMemAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The most the heap may grow while reading one damaged file.
const BOUND: usize = 64 << 20;

/// `n` as an Avro (zig-zag varint) `long` of exactly `width` bytes.
fn long_of_width(n: i64, width: usize) -> Vec<u8> {
    let mut v = ((n << 1) ^ (n >> 63)).cast_unsigned();
    let mut out = Vec::new();
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            break;
        }
        out.push(byte | 0x80);
    }
    assert_eq!(out.len(), width, "{n} takes {} bytes", out.len());
    out
}

#[test]
fn huge_counts_and_lengths_are_errors_without_allocating_them() {
    let schema = Schema::parse_str(
        r#"{"type": "record", "name": "r", "fields": [
            {"name": "id", "type": "long"},
            {"name": "tags", "type": {"type": "array", "items": "long"}},
            {"name": "attrs", "type": {"type": "map", "values": "long"}},
            {"name": "name", "type": "string"}]}"#,
    )
    .expect("schema");
    let mut writer = Writer::new(&schema, Vec::new()).expect("writer");
    for id in 0..20i64 {
        let mut r = Record::new(&schema).expect("record");
        r.put("id", id);
        r.put("tags", Value::Array(vec![Value::Long(0); 4]));
        r.put(
            "attrs",
            Value::Map([("a".to_string(), Value::Long(0))].into()),
        );
        r.put("name", "abcdefgh");
        writer.append_value(r).expect("append");
    }
    let file = writer.into_inner().expect("file");
    assert!(file.len() < 1024, "{} bytes", file.len());
    // The one block: its record count, byte size, the records, then the sync marker, which
    // also ends the header.
    let marker = &file[file.len() - 16..];
    let header = file
        .windows(16)
        .position(|w| w == marker)
        .expect("the header's marker")
        + 16;
    // 20 records (zig-zag 40) of 21 bytes (zig-zag 840, two bytes).
    assert_eq!(&file[header..header + 3], &[40, 0xc8, 0x06]);
    let data = header + 3;
    let first = &file[data..data + 21];
    let want: &[u8] = &[0, 8, 0, 0, 0, 0, 0, 2, 2, b'a', 0, 0, 16];
    assert_eq!(&first[..want.len()], want, "record 0: {first:?}");

    // Counts and lengths the decoder would have reserved room for (just under its own 512 MiB
    // limit), each written over bytes of the same width so that the framing stays intact.
    let value = i64::try_from(std::mem::size_of::<Value>()).expect("small");
    let entry = i64::try_from(std::mem::size_of::<(String, Value)>()).expect("small");
    let dir = tempfile::tempdir().expect("temp dir");
    for (what, at, huge, width) in [
        ("array item count", 1, (400 << 20) / value, 4),
        ("map entry count", 7, (400 << 20) / entry, 4),
        ("string length", 12, 400 << 20, 5),
    ] {
        let mut bytes = file.clone();
        let start = data + at;
        bytes[start..start + width].copy_from_slice(&long_of_width(huge, width));
        let path: PathBuf = dir.path().join(format!("{}.avro", what.replace(' ', "_")));
        std::fs::write(&path, &bytes).expect("write");

        GLOBAL.reset_peak_memory();
        let err = avro::read_all(std::slice::from_ref(&path), None)
            .expect_err(what)
            .to_string();
        let peak = GLOBAL.get_peak_memory();

        assert!(
            peak < BOUND,
            "{what}: the heap grew by {} MiB: {err}",
            peak >> 20
        );
        assert!(
            err.starts_with(&path.display().to_string()),
            "{what}: {err}"
        );
        assert!(err.contains("record 0"), "{what}: {err}");
        assert!(err.contains("block 0"), "{what}: {err}");
        assert!(err.contains(&huge.to_string()), "{what}: {err}");
    }

    // A snappy block that declares 400 MiB of data (a plain varint) in 12 bytes.
    let mut snappy = Writer::with_codec(&schema, Vec::new(), Codec::Snappy).expect("writer");
    snappy
        .add_user_metadata("k".into(), b"v")
        .expect("metadata");
    let mut bytes = snappy.into_inner().expect("header");
    let marker = bytes[bytes.len() - 16..].to_vec();
    let mut block = vec![0x80, 0x80, 0x80, 0xc8, 0x01, 0, 0, 0, 1, 2, 3, 4];
    let declared = 400 << 20;
    assert_eq!(block[..5], [0x80, 0x80, 0x80, 0xc8, 0x01], "{declared}");
    bytes.extend([2, 24]);
    bytes.append(&mut block);
    bytes.extend(&marker);
    let path = dir.path().join("snappy.avro");
    std::fs::write(&path, &bytes).expect("write");
    GLOBAL.reset_peak_memory();
    let err = avro::read_all(std::slice::from_ref(&path), None)
        .expect_err("snappy")
        .to_string();
    let peak = GLOBAL.get_peak_memory();
    assert!(
        peak < BOUND,
        "snappy: the heap grew by {} MiB: {err}",
        peak >> 20
    );
    assert!(err.starts_with(&path.display().to_string()), "{err}");
    assert!(err.contains(&format!("declares {declared} bytes")), "{err}");
}
