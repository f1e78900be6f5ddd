//! Index files: written from record files, read back (errors naming the index file and line),
//! counted, and used to read single records.

use tfrecord_core::index::{Index, IndexEntry, IndexedFile, count_records, write_index};
use tfrecord_core::{Compression, ErrorKind, Format, ReaderOptions, RecordReader};

use super::common::{build, build_as, build_compressed, records, write};

/// The index text of frames at `offsets` with payloads `recs` and `framing` bytes around each.
fn expected(recs: &[Vec<u8>], offsets: &[u64], framing: u64) -> String {
    recs.iter()
        .zip(offsets)
        .map(|(r, o)| format!("{o} {}\n", r.len() as u64 + framing))
        .collect()
}

#[test]
fn the_index_lists_every_frame() {
    let dir = tempfile::tempdir().unwrap();
    let recs = records(12);
    let built = build(&recs);
    let path = write(dir.path(), "d.tfrecord", &built.bytes);
    let index = Index::build(&path, ReaderOptions::new()).unwrap();
    assert_eq!(index.to_text(), expected(&recs, &built.offsets, 16));
    assert_eq!(index.len(), 12);
    // Streamed to a writer, the same text.
    let mut out = Vec::new();
    let mut reader = RecordReader::open(&path, ReaderOptions::new()).unwrap();
    assert_eq!(write_index(&mut reader, &mut out, "d.idx").unwrap(), 12);
    assert_eq!(String::from_utf8(out).unwrap(), index.to_text());
    // An empty file has an empty index.
    let empty = write(dir.path(), "e.tfrecord", b"");
    assert!(
        Index::build(&empty, ReaderOptions::new())
            .unwrap()
            .is_empty()
    );
    // OFRecord frames are 8 bytes longer than their payload.
    let of = build_as(&recs, Format::OfRecord);
    let of_path = write(dir.path(), "part-00000", &of.bytes);
    let opts = ReaderOptions::new().format(Format::OfRecord);
    let index = Index::build(&of_path, opts).unwrap();
    assert_eq!(index.to_text(), expected(&recs, &of.offsets, 8));
}

#[test]
fn damaged_and_compressed_files_are_not_indexed() {
    let dir = tempfile::tempdir().unwrap();
    let recs = records(5);
    let built = build(&recs);
    let mut bytes = built.bytes.clone();
    bytes[built.offsets[3] as usize + 12] ^= 1;
    let bad = write(dir.path(), "bad.tfrecord", &bytes);
    let err = Index::build(&bad, ReaderOptions::new()).unwrap_err();
    assert_eq!(
        (err.offset(), err.record()),
        (Some(built.offsets[3]), Some(3))
    );
    let gz = write(
        dir.path(),
        "d.tfrecord.gz",
        &build_compressed(&recs, Compression::Gzip),
    );
    let err = Index::build(&gz, ReaderOptions::for_path(&gz)).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Unsupported { .. }), "{err}");
    assert!(err.to_string().contains("d.tfrecord.gz"), "{err}");
}

#[test]
fn an_index_reads_back_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let text = "0 20\n20 16\r\n\n36\t100\n  136 17  \n";
    let path = write(dir.path(), "x.idx", text.as_bytes());
    let index = Index::read(&path).unwrap();
    let want =
        [(0, 20), (20, 16), (36, 100), (136, 17)].map(|(offset, size)| IndexEntry { offset, size });
    assert_eq!(index.entries(), want);
    assert_eq!(count_records(&path).unwrap(), 4);
    assert_eq!(index.to_text(), "0 20\n20 16\n36 100\n136 17\n");
}

#[test]
fn a_malformed_index_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("0 20\n20\n", 2, "two numbers"),
        ("0 20\n20 16 3\n", 2, "two numbers"),
        ("0 20\n20 sixteen\n", 2, "size as a decimal number"),
        ("-1 20\n", 1, "offset as a decimal number"),
        (
            "0 20\n\n10 16\n",
            3,
            "before the end of the record on the line before (byte 20)",
        ),
        ("0 18446744073709551616\n", 1, "size"),
    ];
    for (text, line, words) in cases {
        let path = write(dir.path(), "bad.idx", text.as_bytes());
        for err in [
            Index::read(&path).unwrap_err(),
            count_records(&path).unwrap_err(),
        ] {
            assert!(
                matches!(err.kind(), ErrorKind::Index { line: Some(l), .. } if *l == line),
                "{text:?}: {err}"
            );
            let msg = err.to_string();
            assert!(
                msg.contains("bad.idx") && msg.contains(&format!("line {line}")),
                "{msg}"
            );
            assert!(msg.contains(words), "{text:?}: {msg}");
        }
    }
    let long = format!("0 {}\n", "1".repeat(400));
    let path = write(dir.path(), "long.idx", long.as_bytes());
    let err = Index::read(&path).unwrap_err();
    assert!(err.to_string().contains("longer than"), "{err}");
    let err = Index::read(dir.path().join("missing.idx")).unwrap_err();
    assert!(err.to_string().contains("missing.idx"), "{err}");
}

#[test]
fn records_are_read_one_at_a_time_through_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let recs = records(30);
    let built = build(&recs);
    let path = write(dir.path(), "d.tfrecord", &built.bytes);
    let idx = write(
        dir.path(),
        "d.tfrecord.idx",
        expected(&recs, &built.offsets, 16).as_bytes(),
    );
    let file = IndexedFile::open(&path, &idx, ReaderOptions::new()).unwrap();
    assert_eq!(file.len(), 30);
    let mut buf = vec![1, 2, 3];
    for k in (0..30).rev().step_by(3).chain([0, 29, 7]) {
        file.read(k, &mut buf).unwrap();
        assert_eq!(buf, recs[k as usize], "record {k}");
    }
    let err = file.read(30, &mut buf).unwrap_err();
    assert!(
        err.to_string()
            .contains("record 30 is past the 30 records indexed"),
        "{err}"
    );
    // Threads share one.
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let (file, recs) = (&file, &recs);
            s.spawn(move || {
                let mut buf = Vec::new();
                for k in (t..30).step_by(2) {
                    file.read(k, &mut buf).unwrap();
                    assert_eq!(buf, recs[k as usize]);
                }
            });
        }
    });
}

#[test]
fn an_index_that_disagrees_with_the_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let recs = records(6);
    let built = build(&recs);
    let mut bytes = built.bytes.clone();
    bytes[built.offsets[4] as usize + 12] ^= 0x20;
    let path = write(dir.path(), "d.tfrecord", &bytes);
    let good = expected(&recs, &built.offsets, 16);
    let idx = write(dir.path(), "d.idx", good.as_bytes());
    let file = IndexedFile::open(&path, &idx, ReaderOptions::new()).unwrap();
    let mut buf = Vec::new();
    // A damaged payload: the data checksum, located in the record file.
    let err = file.read(4, &mut buf).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Corrupted { what: "data", .. }),
        "{err}"
    );
    assert_eq!(
        (err.offset(), err.record()),
        (Some(built.offsets[4]), Some(4))
    );
    assert!(err.to_string().starts_with("") && err.path() == Some(path.as_path()));
    // Unless data checksums are not verified.
    let lax = IndexedFile::open(&path, &idx, ReaderOptions::new().verify_data_crc(false)).unwrap();
    lax.read(4, &mut buf).unwrap();
    assert_eq!(buf.len(), recs[4].len());

    // A size that is not the frame's; an offset that is not a frame; past the end of the file.
    let lines: Vec<&str> = good.lines().collect();
    let size2 = recs[2].len() + 16;
    let off5 = built.offsets[5];
    let end = bytes.len();
    let cases = [
        (2, format!("{} {}", built.offsets[2], size2 - 1), "payload"),
        (
            2,
            format!("{} {}", built.offsets[2] + 1, size2 - 1),
            "length checksum",
        ),
        (
            5,
            format!("{off5} {}", end as u64 - off5 + 1),
            "past the end of the file",
        ),
    ];
    for (k, line, words) in cases {
        let mut text: Vec<String> = lines.iter().map(|l| (*l).to_string()).collect();
        text[k] = line;
        // A blank line, which is no entry: the error names the entry by its record.
        text.insert(1, String::new());
        let idx = write(dir.path(), "wrong.idx", (text.join("\n") + "\n").as_bytes());
        let file = IndexedFile::open(&path, &idx, ReaderOptions::new()).unwrap();
        let err = file.read(k as u64, &mut buf).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(words), "{msg}");
        assert!(msg.contains("d.tfrecord"), "{msg}");
        assert_eq!(err.record(), Some(k as u64));
        // An offset where no frame starts too: the index or the file is wrong.
        assert!(
            msg.contains(&format!("the entry of record {k} in index")) && msg.contains("wrong.idx"),
            "{msg}"
        );
    }
    // An index of a compressed file cannot be used.
    let err = IndexedFile::with_index(
        &path,
        Index::default(),
        ReaderOptions::new().compression(Compression::Zlib),
    )
    .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Unsupported { .. }));
}

#[test]
fn ofrecord_records_are_read_through_their_index() {
    let dir = tempfile::tempdir().unwrap();
    let recs = records(7);
    let built = build_as(&recs, Format::OfRecord);
    let path = write(dir.path(), "part-00000", &built.bytes);
    let opts = ReaderOptions::new().format(Format::OfRecord);
    let index = Index::build(&path, opts.clone()).unwrap();
    let file = IndexedFile::with_index(&path, index, opts).unwrap();
    let mut buf = Vec::new();
    for k in [6, 0, 3] {
        file.read(k, &mut buf).unwrap();
        assert_eq!(buf, recs[k as usize]);
    }
}
