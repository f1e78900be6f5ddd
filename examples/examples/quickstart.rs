//! The main job on bundled data: write typed records as TFRecord (plain and gzip) and as
//! OneFlow OFRecord, read them back (the plain file also on every core), and read the
//! TensorFlow-written file bundled with the tests.
//!
//! ```text
//! cargo run --release -p tfrecord-examples --example quickstart [OUT_DIR]
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;

use tfrecord_core::proto::tensorflow;
use tfrecord_core::{
    Chunk, Example, Message, OfRecord, Reader, ReaderOptions, RecordReader, TfExample, Writer,
    for_each_chunk,
};

/// A digit image with its label, as MNIST datasets store it.
#[derive(Example, Debug, Clone, PartialEq)]
struct Digit {
    /// The encoded image.
    #[example(key = "image/encoded")]
    image: Vec<u8>,
    /// The class, 0..=9.
    label: i64,
    /// Where the image came from; absent in some records.
    source: Option<String>,
    /// A small embedding of fixed length.
    embedding: [f32; 4],
}

#[allow(clippy::cast_possible_wrap, clippy::cast_possible_truncation)] // small numbers
fn digits(n: usize) -> Vec<Digit> {
    (0..n)
        .map(|i| Digit {
            image: (0..784).map(|p| ((p * 7 + i * 13) % 256) as u8).collect(),
            label: (i % 10) as i64,
            source: (i % 3 == 0).then(|| format!("scan-{i}")),
            embedding: [i as f32, 0.5, -1.0, f32::EPSILON],
        })
        .collect()
}

fn main() -> Result<(), tfrecord_core::Error> {
    let out = std::env::args().nth(1).map_or_else(
        || std::env::temp_dir().join("tfrecord-quickstart"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&out)?;
    let records = digits(1000);

    // TFRecord, plain and gzip (the compression follows the file name).
    for name in ["digits.tfrecord", "digits.tfrecord.gz"] {
        let path = out.join(name);
        let mut writer = Writer::<Digit>::create(&path)?;
        for r in &records {
            writer.write(r)?;
        }
        writer.finish()?;
        let back: Vec<Digit> = Reader::<Digit>::open(&path)?.collect::<Result<_, _>>()?;
        assert_eq!(back, records);
        let size = std::fs::metadata(&path)?.len();
        println!(
            "wrote and read back {} records: {} ({size} bytes)",
            back.len(),
            path.display()
        );
    }

    // The plain file again, read on every core: each thread decodes the records of the chunks
    // it takes, lent in place, and counts their labels; errors say where the record is.
    let path = out.join("digits.tfrecord");
    let count_labels = |labels: &mut BTreeMap<i64, u64>, chunk: &Chunk| {
        let mut lent = chunk.records();
        while let Some(digit) = lent.next_decoded::<Digit, TfExample>()? {
            *labels.entry(digit.label).or_default() += 1;
        }
        Ok::<_, tfrecord_core::Error>(())
    };
    let opts = ReaderOptions::new().buffer_size(64 << 10);
    let per_thread = for_each_chunk(&path, opts, 0, BTreeMap::new, count_labels, Ok)?;
    let mut labels = BTreeMap::new();
    for (label, n) in per_thread.iter().flatten() {
        *labels.entry(*label).or_default() += n;
    }
    assert_eq!(labels, (0..10).map(|d| (d, 100)).collect());
    println!(
        "read {} records back on {} threads, {} labels of 100 each",
        labels.values().sum::<u64>(),
        per_thread.len(),
        labels.len()
    );

    // OneFlow OFRecord: the same type, another container, in a part-NNNNN file.
    let part = out.join("part-00000");
    let mut writer = Writer::<Digit, OfRecord>::create(&part)?;
    for r in &records {
        writer.write(r)?;
    }
    writer.finish()?;
    let back: Vec<Digit> = Reader::<Digit, OfRecord>::open(&part)?.collect::<Result<_, _>>()?;
    assert_eq!(back, records);
    println!(
        "wrote and read back {} OFRecords: {}",
        back.len(),
        part.display()
    );

    // A file TensorFlow wrote, read with the generic message types.
    let bundled = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/conformance/examples.tfrecord");
    let mut keys = std::collections::BTreeSet::new();
    let mut count = 0;
    for record in RecordReader::open(&bundled, ReaderOptions::new())? {
        let example = tensorflow::Example::decode(&record?[..])
            .map_err(|e| tfrecord_core::Error::decode("tensorflow.Example", e))?;
        keys.extend(
            example
                .features
                .into_iter()
                .flat_map(|f| f.feature.into_keys()),
        );
        count += 1;
    }
    println!(
        "read {count} TensorFlow-written Examples from {} with keys {:?}",
        bundled
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        keys
    );
    Ok(())
}
