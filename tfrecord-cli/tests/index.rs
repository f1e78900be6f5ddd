//! `tfrecord index`: the `offset size` text index of DALI's `tfrecord2idx` and the PyPI
//! `tfrecord` package, per input.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use tfrecord_core::{Compression, Format, RecordWriter, WriterOptions};

mod support;
use support::{s, stderr};

fn run(args: &[&str], stdin: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tfrecord"));
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    match stdin {
        Some(p) => cmd.stdin(std::fs::File::open(p).expect("stdin file")),
        None => cmd.stdin(Stdio::null()),
    };
    cmd.output().expect("run tfrecord")
}

/// Writes `n` records of lengths 0, 7, 14, ... and returns the expected index: frames are the
/// payload plus 16 bytes (TFRecord) or 8 (OFRecord), back to back from byte 0.
fn records(path: &Path, n: usize, format: Format, compression: Compression) -> String {
    let opts = WriterOptions::new().format(format).compression(compression);
    let mut w = RecordWriter::create(path, opts).expect("create");
    let framing = if format == Format::TfRecord { 16 } else { 8 };
    let mut text = String::new();
    let mut at = 0;
    for i in 0..n {
        let payload = vec![i as u8; i * 7];
        w.write(&payload).expect("write");
        text.push_str(&format!("{at} {}\n", payload.len() + framing));
        at += payload.len() + framing;
    }
    w.finish().expect("finish");
    text
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).expect("read index")
}

#[test]
fn each_input_gets_its_index_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.tfrecord");
    let b = dir.path().join("b");
    let want_a = records(&a, 9, Format::TfRecord, Compression::None);
    let want_b = records(&b, 1, Format::TfRecord, Compression::None);
    let empty = dir.path().join("empty.tfrecord");
    std::fs::write(&empty, b"").unwrap();
    let out = run(&["index", s(&a), s(&b), s(&empty)], None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert_eq!(read(&dir.path().join("a.tfrecord.idx")), want_a);
    assert_eq!(read(&dir.path().join("b.idx")), want_b);
    assert_eq!(read(&dir.path().join("empty.tfrecord.idx")), "");
}

#[test]
fn one_input_may_name_its_index() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.tfrecord");
    let want = records(&a, 5, Format::TfRecord, Compression::None);
    let idx = dir.path().join("custom.index");
    let out = run(&["index", s(&a), "-o", s(&idx)], None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(read(&idx), want);
    assert!(!dir.path().join("a.tfrecord.idx").exists());
    // To standard output, and from standard input.
    let out = run(&["index", s(&a), "-o", "-"], None);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
    let out = run(&["index", "-", "-o", "-"], Some(&a));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), want);
}

#[test]
fn misuse_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.tfrecord");
    let b = dir.path().join("b.tfrecord");
    records(&a, 2, Format::TfRecord, Compression::None);
    records(&b, 2, Format::TfRecord, Compression::None);
    let d = dir.path().display().to_string();
    let cases: [(&[&str], &str); 4] = [
        (
            &["index", s(&a), s(&b), "-o", "x.idx"],
            "-o names the index of one input",
        ),
        (&["index", "-"], "standard input has no file name"),
        (&["index", s(&a), "-o", s(&a)], "would replace the records"),
        (
            &["index", s(&a), "-o", &d],
            "a directory: the index is one file",
        ),
    ];
    for (args, words) in cases {
        let out = run(args, Some(&a));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(words), "{}", stderr(&out));
    }
    assert!(!dir.path().join("a.tfrecord.idx").exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[test]
fn damaged_and_compressed_files_leave_no_index() {
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("c.tfrecord.gz");
    records(&gz, 3, Format::TfRecord, Compression::Gzip);
    let out = run(&["index", s(&gz)], None);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("c.tfrecord.gz") && err.contains("compressed"),
        "{err}"
    );

    let bad = dir.path().join("bad.tfrecord");
    records(&bad, 6, Format::TfRecord, Compression::None);
    let mut bytes = std::fs::read(&bad).unwrap();
    let third = 16 + (16 + 7) + (16 + 14); // records 0..3 hold 0, 7 and 14 bytes
    bytes[third + 12] ^= 1;
    std::fs::write(&bad, &bytes).unwrap();
    let out = run(&["index", s(&bad)], None);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("at byte {third} (record 3)")),
        "{err}"
    );
    // Only the two inputs: no index, no temporary file.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");

    // Several inputs: each is indexed on its own, a bad one reported and passed over.
    let good = dir.path().join("good.tfrecord");
    let want = records(&good, 2, Format::TfRecord, Compression::None);
    let out = run(&["index", s(&gz), s(&bad), s(&good)], None);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("c.tfrecord.gz") && err.contains("compressed"),
        "{err}"
    );
    assert!(
        err.contains(&format!("at byte {third} (record 3)")),
        "{err}"
    );
    assert!(err.contains("2 of 3 inputs not indexed"), "{err}");
    assert_eq!(read(&dir.path().join("good.tfrecord.idx")), want);
    assert!(!dir.path().join("bad.tfrecord.idx").exists());
}

#[test]
fn a_directory_of_ofrecord_parts_is_indexed_part_by_part() {
    let dir = tempfile::tempdir().unwrap();
    let p0 = dir.path().join("part-00000");
    let p1 = dir.path().join("part-00001");
    let want0 = records(&p0, 4, Format::OfRecord, Compression::None);
    let want1 = records(&p1, 3, Format::OfRecord, Compression::None);
    let out = run(
        &["index", "--input-format", "ofrecord", s(dir.path())],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(read(&dir.path().join("part-00000.idx")), want0);
    assert_eq!(read(&dir.path().join("part-00001.idx")), want1);
    // The index files are not parts: indexing again, or counting, reads the two parts only.
    let out = run(
        &["index", "--input-format", "ofrecord", s(dir.path())],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!dir.path().join("part-00000.idx.idx").exists());
    let out = run(
        &["count", "--input-format", "ofrecord", s(dir.path())],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().lines().last(),
        Some("7")
    );
}
