//! The images walkthrough on bundled data: write the flowers-style folder
//! `examples/data/flowers/<class>/*` as two shuffled TFRecord shards with
//! `tfrecord_import::images`, read the records back, and check that every image's bytes, size
//! and label came through.
//!
//! ```text
//! cargo run --release -p tfrecord-examples --example images [OUT_DIR]
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tfrecord_core::proto::tensorflow::{self, feature::Kind};
use tfrecord_core::{Message, ReaderOptions, RecordReader};
use tfrecord_import::images::{self, ImageOptions};

/// The bytes list or int64 list of one feature.
fn bytes(e: &tensorflow::Example, key: &str) -> Option<Vec<u8>> {
    match &e.features.as_ref()?.feature.get(key)?.kind {
        Some(Kind::BytesList(l)) => l.value.first().cloned(),
        _ => None,
    }
}

fn int(e: &tensorflow::Example, key: &str) -> Option<i64> {
    match &e.features.as_ref()?.feature.get(key)?.kind {
        Some(Kind::Int64List(l)) => l.value.first().copied(),
        _ => None,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1).map_or_else(
        || std::env::temp_dir().join("tfrecord-images-example"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&out)?;
    let flowers = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/flowers");

    // Write: one record per image, shuffled with a seed, in two shards.
    let opts = ImageOptions {
        shards: 2,
        seed: 42,
        ..ImageOptions::default()
    };
    let summary = images::write_images(&flowers, &out.join("flowers.tfrecord"), &opts)?;
    println!(
        "wrote {} images of classes {:?} to {:?}",
        summary.records(),
        summary.classes,
        summary
            .files
            .iter()
            .map(|(p, n)| format!("{} ({n})", p.display()))
            .collect::<Vec<_>>()
    );

    // Read back and check every image against its file.
    let mut seen = BTreeMap::new();
    for (path, _) in &summary.files {
        for record in RecordReader::open(path, ReaderOptions::new())? {
            let example = tensorflow::Example::decode(&record?[..])?;
            let name = String::from_utf8(bytes(&example, "image/filename").ok_or("no filename")?)?;
            let encoded = bytes(&example, "image/encoded").ok_or("no image")?;
            let on_disk = std::fs::read(flowers.join(&name))?;
            assert_eq!(encoded, on_disk, "{name}: the stored bytes are the file's");
            let info = images::read_header(&on_disk)?;
            assert_eq!(int(&example, "height"), Some(i64::from(info.height)));
            assert_eq!(int(&example, "width"), Some(i64::from(info.width)));
            assert_eq!(int(&example, "depth"), Some(i64::from(info.depth)));
            let class = name.split('/').next().unwrap_or_default();
            let text = bytes(&example, "label/text").ok_or("no label text")?;
            assert_eq!(text, class.as_bytes(), "{name}: label from the folder");
            let label = int(&example, "label").ok_or("no label")?;
            assert_eq!(
                summary
                    .classes
                    .get(usize::try_from(label)?)
                    .map(String::as_str),
                Some(class)
            );
            println!(
                "  {name}: {} {}x{}x{}, label {label} ({class})",
                String::from_utf8_lossy(&bytes(&example, "image/format").unwrap_or_default()),
                info.height,
                info.width,
                info.depth
            );
            seen.insert(name, label);
        }
    }
    assert_eq!(seen.len() as u64, summary.records(), "every image once");
    println!("all {} images read back intact", seen.len());
    Ok(())
}
