//! Writing: our framing must be byte-identical to TensorFlow's (and OneFlow's), and our
//! compressed streams must read back to the same records, with our reader and with a plain
//! gzip/zlib decoder.

use std::io::Read;

use tfrecord_core::{
    Compression, Format, ReaderOptions, RecordReader, RecordWriter, WriterOptions,
};

use crate::support::{fixture, raw_records, read_all};

/// Splits an uncompressed stream by its framing, without checking anything: a reference
/// independent of the library's reader.
fn split_frames(bytes: &[u8], format: Format) -> Vec<Vec<u8>> {
    let (header, footer) = match format {
        Format::TfRecord => (12, 4),
        Format::OfRecord => (8, 0),
    };
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let len_bytes: [u8; 8] = bytes[at..at + 8].try_into().expect("8 bytes");
        let len = usize::try_from(u64::from_le_bytes(len_bytes)).expect("fits");
        out.push(bytes[at + header..at + header + len].to_vec());
        at += header + len + footer;
    }
    assert_eq!(at, bytes.len());
    out
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("valid gzip");
    out
}

fn unzlib(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("valid zlib");
    out
}

fn write_all(records: &[Vec<u8>], opts: WriterOptions) -> Vec<u8> {
    let mut writer = RecordWriter::new(Vec::new(), opts);
    for r in records {
        writer.write(r).expect("write");
    }
    assert_eq!(writer.records_written(), records.len() as u64);
    writer.finish().expect("finish")
}

#[test]
fn plain_output_is_byte_identical_to_tensorflow() {
    let records = raw_records();
    let reference = std::fs::read(fixture("raw_records.tfrecord")).expect("read");
    assert_eq!(write_all(&records, WriterOptions::new()), reference);

    // The same through a file.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("out.tfrecord");
    let mut writer = RecordWriter::create(&path, WriterOptions::for_path(&path)).expect("create");
    for r in &records {
        writer.write(r).expect("write");
    }
    drop(writer.finish().expect("finish"));
    assert_eq!(std::fs::read(&path).expect("read"), reference);

    // And the 42 examples, 1 MiB record included.
    let examples = std::fs::read(fixture("examples.tfrecord")).expect("read");
    let example_records = split_frames(&examples, Format::TfRecord);
    assert_eq!(example_records.len(), 42);
    assert_eq!(write_all(&example_records, WriterOptions::new()), examples);
}

#[test]
fn tensorflow_compressed_fixtures_hold_the_plain_stream() {
    let plain = std::fs::read(fixture("raw_records.tfrecord")).expect("read");
    let gz = std::fs::read(fixture("raw_records.tfrecord.gz")).expect("read");
    let zlib = std::fs::read(fixture("raw_records.tfrecord.zlib")).expect("read");
    assert_eq!(gunzip(&gz), plain);
    assert_eq!(unzlib(&zlib), plain);
    assert_eq!(split_frames(&plain, Format::TfRecord), raw_records());
}

#[test]
fn ofrecord_output_is_byte_identical_to_the_fixture() {
    let reference = std::fs::read(fixture("part-00000")).expect("read");
    let records = split_frames(&reference, Format::OfRecord);
    assert_eq!(records.len(), 10);
    let opts = WriterOptions::new().format(Format::OfRecord);
    assert_eq!(write_all(&records, opts), reference);
}

#[test]
fn compressed_output_reads_back() {
    let records = raw_records();
    let plain = std::fs::read(fixture("raw_records.tfrecord")).expect("read");
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, compression) in [
        ("out.tfrecord.gz", Compression::Gzip),
        ("out.zlib", Compression::Zlib),
    ] {
        for level in [0, 1, 6, 9] {
            let opts = WriterOptions::new().compression(compression).level(level);
            let bytes = write_all(&records, opts);
            match compression {
                Compression::Gzip => {
                    assert_eq!(&bytes[..2], [0x1f, 0x8b]);
                    assert_eq!(gunzip(&bytes), plain, "level {level}");
                }
                _ => {
                    assert_eq!(bytes[0], 0x78);
                    assert_eq!(unzlib(&bytes), plain, "level {level}");
                }
            }
            // Read back from memory and from a file named so that the compression is guessed.
            let reader =
                RecordReader::new(&bytes[..], ReaderOptions::new().compression(compression));
            let (got, err) = read_all(reader);
            assert!(err.is_none(), "{compression:?} level {level}");
            assert_eq!(got, records);
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).expect("write");
            let reader = RecordReader::open(&path, ReaderOptions::for_path(&path)).expect("open");
            let (got, err) = read_all(reader);
            assert!(err.is_none(), "{compression:?} level {level}");
            assert_eq!(got, records);
            // Without data checksum verification: the same.
            let opts = ReaderOptions::for_path(&path).verify_data_crc(false);
            let (got, err) = read_all(RecordReader::open(&path, opts).expect("open"));
            assert!(err.is_none());
            assert_eq!(got, records);
        }
    }
}

#[test]
fn compression_levels_matter() {
    // Compressible records: level 0 stores, level 9 shrinks.
    let records: Vec<Vec<u8>> = (0..200u8).map(|i| vec![i % 4; 300]).collect();
    for compression in [Compression::Gzip, Compression::Zlib] {
        let stored = write_all(
            &records,
            WriterOptions::new().compression(compression).level(0),
        );
        let small = write_all(
            &records,
            WriterOptions::new().compression(compression).level(9),
        );
        let plain_len: usize = records.iter().map(|r| r.len() + 16).sum();
        assert!(stored.len() > plain_len, "{compression:?}: level 0 stores");
        assert!(
            small.len() * 20 < plain_len,
            "{compression:?}: level 9 compresses"
        );
        // Levels above 9 are taken as 9.
        let over = write_all(
            &records,
            WriterOptions::new().compression(compression).level(99),
        );
        assert_eq!(over, small);
        for bytes in [stored, small] {
            let reader =
                RecordReader::new(&bytes[..], ReaderOptions::new().compression(compression));
            let (got, err) = read_all(reader);
            assert!(err.is_none());
            assert_eq!(got, records);
        }
    }
}

#[test]
fn flush_mid_stream_and_concatenated_gzip_members() {
    let records = raw_records();
    for compression in [Compression::None, Compression::Gzip, Compression::Zlib] {
        let mut writer =
            RecordWriter::new(Vec::new(), WriterOptions::new().compression(compression));
        for (i, r) in records.iter().enumerate() {
            writer.write(r).expect("write");
            if i % 2 == 0 {
                writer.flush().expect("flush");
            }
        }
        let bytes = writer.finish().expect("finish");
        let reader = RecordReader::new(&bytes[..], ReaderOptions::new().compression(compression));
        let (got, err) = read_all(reader);
        assert!(err.is_none(), "{compression:?}");
        assert_eq!(got, records, "{compression:?}");
    }

    // Two gzip members, one after the other, read as one stream.
    let first = write_all(
        &records[..3],
        WriterOptions::new().compression(Compression::Gzip),
    );
    let second = write_all(
        &records[3..],
        WriterOptions::new().compression(Compression::Gzip),
    );
    let both = [first, second].concat();
    let reader = RecordReader::new(
        &both[..],
        ReaderOptions::new().compression(Compression::Gzip),
    );
    let (got, err) = read_all(reader);
    assert!(err.is_none());
    assert_eq!(got, records);
}

#[test]
fn dropping_an_unfinished_writer_still_ends_the_stream() {
    let records = raw_records();
    let dir = tempfile::tempdir().expect("temp dir");
    for name in ["dropped.tfrecord", "dropped.tfrecord.gz", "dropped.zlib"] {
        let path = dir.path().join(name);
        {
            let mut writer =
                RecordWriter::create(&path, WriterOptions::for_path(&path)).expect("create");
            for r in &records {
                writer.write(r).expect("write");
            }
        }
        let (got, err) =
            read_all(RecordReader::open(&path, ReaderOptions::for_path(&path)).expect("open"));
        assert!(err.is_none(), "{name}: {err:?}");
        assert_eq!(got, records, "{name}");
    }
}

#[test]
fn creating_in_a_missing_directory_names_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("no/such/dir/out.tfrecord");
    let Err(err) = RecordWriter::create(&path, WriterOptions::new()) else {
        panic!("created a file in a missing directory");
    };
    assert!(err.is_io(std::io::ErrorKind::NotFound), "{err}");
    assert_eq!(err.path(), Some(path.as_path()));
    assert!(err.to_string().contains("out.tfrecord"), "{err}");
}

/// A value that does not fit the `shape` its type declares is refused by the writers, naming
/// the field, and nothing is written: TensorFlow's `parse_example` refuses such a record
/// ("Values size: 3 but output shape: [2]"; "not a multiple of stride length" for
/// `[-1, 2]`), as this crate's readers do.
#[test]
fn the_writers_refuse_a_value_that_does_not_fit_its_declared_shape() {
    use tfrecord_core::{Example, SequenceExample, Writer};

    #[derive(Example, Debug, PartialEq, Default)]
    struct Shaped {
        #[example(shape = [2])]
        v: Vec<f32>,
        #[example(shape = [-1, 2])]
        rows: Vec<i64>,
        #[example(shape = [2])]
        maybe: Option<Vec<i64>>,
    }
    #[derive(Example, Debug, PartialEq, Default)]
    struct Outer {
        id: i64,
        #[example(flatten)]
        inner: Shaped,
    }
    #[derive(SequenceExample, Debug, PartialEq, Default)]
    struct Clip {
        #[example(shape = [2])]
        ctx: Vec<f32>,
        #[example(sequence, shape = [2])]
        pairs: Vec<Vec<i64>>,
    }
    let fits = Shaped {
        v: vec![1.0, 2.0],
        rows: vec![1, 2, 3, 4],
        maybe: None,
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("shaped.tfrecord");
    let mut w = Writer::<Shaped>::create(&path).expect("creates");
    w.write(&fits).expect("fits");
    let bad = [
        (
            "v",
            Shaped {
                v: vec![1.0, 2.0, 3.0],
                ..Shaped::default()
            },
        ),
        (
            "rows",
            Shaped {
                v: vec![1.0, 2.0],
                rows: vec![1, 2, 3],
                maybe: None,
            },
        ),
        (
            "maybe",
            Shaped {
                v: vec![1.0, 2.0],
                rows: vec![],
                maybe: Some(vec![1]),
            },
        ),
    ];
    for (key, value) in &bad {
        let err = w.write(value).expect_err("does not fit");
        assert_eq!(err.key(), Some(*key), "{err}");
        assert!(err.to_string().contains(&format!("Shaped::{key}")), "{err}");
    }
    w.finish().expect("finishes");
    let read: Vec<Shaped> = tfrecord_core::Reader::<Shaped>::open(&path)
        .expect("opens")
        .collect::<Result<_, _>>()
        .expect("reads");
    assert_eq!(read, [fits]);

    let path = dir.path().join("outer.tfrecord");
    let mut w = Writer::<Outer>::create(&path).expect("creates");
    let outer = Outer {
        id: 1,
        inner: Shaped {
            v: vec![1.0],
            ..Shaped::default()
        },
    };
    let err = w
        .write(&outer)
        .expect_err("the flattened member does not fit");
    assert_eq!(err.key(), Some("inner/v"), "{err}");

    let path = dir.path().join("clip.tfrecord");
    let mut w = Writer::<Clip, tfrecord_core::TfSequenceExample>::create(&path).expect("creates");
    w.write(&Clip {
        ctx: vec![1.0, 2.0],
        pairs: vec![vec![1, 2], vec![3, 4]],
    })
    .expect("fits");
    let err = w
        .write(&Clip {
            ctx: vec![1.0, 2.0],
            pairs: vec![vec![1, 2], vec![3]],
        })
        .expect_err("a step does not fit");
    assert_eq!(err.key(), Some("pairs"), "{err}");
    let err = w
        .write(&Clip {
            ctx: vec![1.0],
            pairs: vec![],
        })
        .expect_err("the context does not fit");
    assert_eq!(err.key(), Some("ctx"), "{err}");
}

/// A sparse value the readers would refuse is refused by the writers, naming the key: an
/// index outside the declared size (negative or past it), index and value lists of different
/// lengths (TensorFlow 2.21's `parse_example` with `SparseFeature("i", "v", tf.float32, 10)`
/// raises "Dimensions 2 and 1 are not compatible"), and indices of another rank than the
/// field's index keys (whose extra dimensions would not be written).
#[test]
fn the_writers_refuse_a_sparse_value_the_readers_would_refuse() {
    use tfrecord_core::{Example, Sparse, TfExample, Writer};

    #[derive(Example, Debug, PartialEq, Default)]
    struct Sparsely {
        #[example(sparse(index = "i", value = "v", size = [10]))]
        one: Sparse<f32>,
        #[example(sparse(index = ["r", "c"], value = "w", size = [3, 3]))]
        two: Sparse<i64>,
    }
    let fits = Sparsely {
        one: Sparse::new_1d(vec![0, 9], vec![1.0, 2.0]),
        two: Sparse {
            indices: vec![vec![2], vec![0]],
            values: vec![7],
        },
    };
    let mut w =
        Writer::<Sparsely, TfExample, _>::new(Vec::new(), tfrecord_core::WriterOptions::new());
    w.write(&fits).expect("fits");
    let one = |indices: Vec<Vec<i64>>, values: Vec<f32>| Sparsely {
        one: Sparse { indices, values },
        ..Sparsely::default()
    };
    let bad = [
        ("i", one(vec![vec![10]], vec![1.0]), "sparse index 10"),
        ("i", one(vec![vec![-1]], vec![1.0]), "sparse index -1"),
        (
            "i",
            one(vec![vec![1, 2]], vec![1.0]),
            "expected 1 value, found 2",
        ),
        ("v", one(vec![], vec![1.0]), "indices of 0 dimension(s)"),
        (
            "v",
            one(vec![vec![1], vec![1]], vec![1.0]),
            "indices of 2 dimension(s)",
        ),
        (
            "c",
            Sparsely {
                two: Sparse {
                    indices: vec![vec![1], vec![]],
                    values: vec![1],
                },
                ..Sparsely::default()
            },
            "expected 1 value, found 0",
        ),
    ];
    for (key, value, says) in &bad {
        let err = w.write(value).expect_err("does not fit");
        assert_eq!(err.key(), Some(*key), "{err}");
        assert!(err.to_string().contains(says), "{err}");
        assert!(err.to_string().contains("Sparsely::"), "{err}");
    }
    // An empty value with no index lists, as `Default` makes it, is written as empty lists.
    w.write(&Sparsely::default())
        .expect("an empty sparse value");
    let bytes = w.finish().expect("finishes");
    let empty = Sparsely {
        one: Sparse::new_1d(vec![], vec![]),
        two: Sparse {
            indices: vec![vec![], vec![]],
            values: vec![],
        },
    };
    let read: Vec<Sparsely> = tfrecord_core::Reader::<Sparsely, TfExample, _>::new(
        &bytes[..],
        tfrecord_core::ReaderOptions::new(),
    )
    .collect::<Result<_, _>>()
    .expect("reads");
    assert_eq!(read, [fits, empty]);
}
