//! Types from a TOML spec: `specs/mnist.toml` describes the records in TensorFlow's vocabulary,
//! `build.rs` generates `Digit` from it with `tfrecord_schema::Builder`, and this program
//! includes the generated code, writes records of it as TFRecord and OFRecord, and reads them
//! back, both with the type and with the generic message types.
//!
//! ```text
//! cargo run --release -p tfrecord-examples --example from_spec [OUT_DIR]
//! ```

use std::path::PathBuf;

use tfrecord_core::proto::tensorflow;
use tfrecord_core::{
    Compression, Decode, Message, OfRecord, Reader, ReaderOptions, RecordReader, TfExample, Writer,
};

// `Digit`, generated from specs/mnist.toml: a `#[derive(Example)]` struct.
include!(concat!(env!("OUT_DIR"), "/mnist.rs"));

#[allow(clippy::cast_possible_wrap, clippy::cast_possible_truncation)] // small numbers
fn digits(n: usize) -> Vec<Digit> {
    (0..n)
        .map(|i| Digit {
            image: (0..784).map(|p| ((p * 7 + i * 13) % 256) as u8).collect(),
            image_format: "png".to_string(),
            label: (i % 10) as i64,
            label_text: vec![
                format!("{}", i % 10),
                ["zero", "one", "two"][i % 3].to_string(),
            ],
            embedding: vec![i as f32, 0.5, -1.0, 0.25],
            source: (i % 4 == 0).then(|| format!("scan-{i}")),
        })
        .collect()
}

fn main() -> Result<(), tfrecord_core::Error> {
    let out = std::env::args().nth(1).map_or_else(
        || std::env::temp_dir().join("tfrecord-from-spec"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&out)?;
    let records = digits(100);

    // TFRecord, gzip-compressed (the compression follows the file name).
    let path = out.join("digits.tfrecord.gz");
    let mut writer = Writer::<Digit>::create(&path)?;
    for r in &records {
        writer.write(r)?;
    }
    writer.finish()?;
    let back: Vec<Digit> = Reader::<Digit>::open(&path)?.collect::<Result<_, _>>()?;
    assert_eq!(back, records);
    println!(
        "wrote and read back {} Digit records generated from specs/mnist.toml: {}",
        back.len(),
        path.display()
    );

    // The same records are plain tf.train.Examples to anything else.
    let gzip = ReaderOptions::new().compression(Compression::Gzip);
    let first = RecordReader::open(&path, gzip)?
        .next()
        .expect("one record")?;
    let mut example = tensorflow::Example::decode(&first[..])
        .map_err(|e| tfrecord_core::Error::decode("tensorflow.Example", e))?;
    let features = &mut example.features.get_or_insert_default().feature;
    println!(
        "the first record's feature keys: {:?}",
        features.keys().collect::<Vec<_>>()
    );

    // Absent features read as the spec says: `image/format` takes its default, `source` is
    // optional, `label/text` (var) is empty.
    for key in ["image/format", "label/text", "source"] {
        features.remove(key);
    }
    let d = <Digit as Decode<TfExample>>::decode(&example.encode_to_vec())?;
    println!(
        "without its optional features it reads as format {:?}, source {:?}, {} label texts",
        d.image_format,
        d.source,
        d.label_text.len()
    );

    // OneFlow OFRecord: the same generated type, another container.
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
    Ok(())
}
