//! End-to-end tests of the `tfrecord` binary: files are built with `tfrecord_core`, the binary is
//! run on them, and its output, exit status and error messages are checked.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use tfrecord_core::proto::{oneflow, tensorflow};
use tfrecord_core::{
    Compression, Format, Message, ReaderOptions, RecordReader, RecordWriter, WriterOptions, json,
};

mod support;
use support::{bin, fails, ok, run, run_with_stdin, s, stderr, stdout};

// ---------------------------------------------------------------------------------------------
// Helpers

fn tf_feature(kind: tensorflow::feature::Kind) -> tensorflow::Feature {
    tensorflow::Feature { kind: Some(kind) }
}

fn example(pairs: Vec<(&str, tensorflow::feature::Kind)>) -> tensorflow::Example {
    let mut features = tensorflow::Features::default();
    for (k, kind) in pairs {
        features.feature.insert(k.to_string(), tf_feature(kind));
    }
    tensorflow::Example {
        features: Some(features),
    }
}

fn int64s(v: &[i64]) -> tensorflow::feature::Kind {
    tensorflow::feature::Kind::Int64List(tensorflow::Int64List { value: v.to_vec() })
}

fn floats(v: &[f32]) -> tensorflow::feature::Kind {
    tensorflow::feature::Kind::FloatList(tensorflow::FloatList { value: v.to_vec() })
}

fn bytes(v: &[&[u8]]) -> tensorflow::feature::Kind {
    tensorflow::feature::Kind::BytesList(tensorflow::BytesList {
        value: v.iter().map(|b| b.to_vec()).collect(),
    })
}

/// The Example whose text form is spelled out in `cat_prints_python_text_format`.
fn known_example() -> tensorflow::Example {
    example(vec![
        ("label", int64s(&[1, -2])),
        ("name", bytes(&[b"cat", b"\xff\n"])),
        ("score", floats(&[0.5, 0.1])),
    ])
}

fn samples(n: usize) -> Vec<tensorflow::Example> {
    (0..n)
        .map(|i| {
            let i64v = i64::try_from(i).expect("small");
            #[allow(clippy::cast_precision_loss)]
            let f = i as f32 / 4.0;
            example(vec![
                ("id", int64s(&[i64v, i64::MIN, i64::MAX])),
                ("x", floats(&[f, -1.5, f32::NAN, f32::INFINITY])),
                ("raw", bytes(&[format!("rec{i}").as_bytes(), b"\x00\x01"])),
                ("empty", floats(&[])),
            ])
        })
        .collect()
}

fn sequence_samples() -> Vec<tensorflow::SequenceExample> {
    let mut lists = tensorflow::FeatureLists::default();
    lists.feature_list.insert(
        "tokens".into(),
        tensorflow::FeatureList {
            feature: vec![tf_feature(int64s(&[1, 2])), tf_feature(int64s(&[3]))],
        },
    );
    lists.feature_list.insert(
        "frames".into(),
        tensorflow::FeatureList {
            feature: vec![tf_feature(floats(&[0.25]))],
        },
    );
    let with_lists = tensorflow::SequenceExample {
        context: known_example().features,
        feature_lists: Some(lists),
    };
    vec![with_lists, tensorflow::SequenceExample::default()]
}

fn of_feature(kind: oneflow::feature::Kind) -> oneflow::Feature {
    oneflow::Feature { kind: Some(kind) }
}

fn ofrecord_with_double() -> oneflow::OfRecord {
    let mut r = oneflow::OfRecord::default();
    r.feature.insert(
        "d".into(),
        of_feature(oneflow::feature::Kind::DoubleList(oneflow::DoubleList {
            value: vec![0.1, -2.5],
        })),
    );
    r.feature.insert(
        "i".into(),
        of_feature(oneflow::feature::Kind::Int32List(oneflow::Int32List {
            value: vec![-7, 2_147_483_647],
        })),
    );
    r
}

fn write_file(path: &Path, opts: WriterOptions, payloads: &[Vec<u8>]) {
    let mut w = RecordWriter::create(path, opts).expect("create");
    for p in payloads {
        w.write(p).expect("write");
    }
    w.finish().expect("finish");
}

fn write_examples(path: &Path, examples: &[tensorflow::Example]) {
    let payloads: Vec<Vec<u8>> = examples.iter().map(Message::encode_to_vec).collect();
    write_file(path, WriterOptions::for_path(path), &payloads);
}

fn read_payloads(path: &Path, opts: ReaderOptions) -> Vec<Vec<u8>> {
    RecordReader::open(path, opts)
        .expect("open")
        .collect::<Result<Vec<_>, _>>()
        .expect("read")
}

fn read_examples(path: &Path) -> Vec<tensorflow::Example> {
    read_payloads(path, ReaderOptions::for_path(path))
        .iter()
        .map(|p| tensorflow::Example::decode(&p[..]).expect("Example"))
        .collect()
}

/// Writes [`sequence_samples`] as `seq.tfrecord` into `dir` and returns its path.
fn sequence_file(dir: &Path) -> PathBuf {
    let path = dir.join("seq.tfrecord");
    let payloads: Vec<Vec<u8>> = sequence_samples()
        .iter()
        .map(Message::encode_to_vec)
        .collect();
    write_file(&path, WriterOptions::new(), &payloads);
    path
}

/// Writes a TOML spec into `dir` and returns its path.
fn write_spec(dir: &Path, toml: &str) -> PathBuf {
    let spec = dir.join("spec.toml");
    std::fs::write(&spec, toml).expect("write spec");
    spec
}

fn json_lines(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

fn jsonl(values: &[Value]) -> String {
    values.iter().map(|v| format!("{v}\n")).collect()
}

// ---------------------------------------------------------------------------------------------
// cat

#[test]
fn cat_prints_python_text_format() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("known.tfrecord");
    write_examples(&path, &[known_example(), tensorflow::Example::default()]);
    let out = ok(&run(&["cat", s(&path)]));
    let expected = r#"features {
  feature {
    key: "label"
    value {
      int64_list {
        value: 1
        value: -2
      }
    }
  }
  feature {
    key: "name"
    value {
      bytes_list {
        value: "cat"
        value: "\377\n"
      }
    }
  }
  feature {
    key: "score"
    value {
      float_list {
        value: 0.5
        value: 0.1
      }
    }
  }
}


"#;
    // Each record is printed as Python's print(example) would: its text, then a newline (so
    // the empty second Example contributes just one blank line).
    assert_eq!(out, expected);
}

#[test]
fn cat_json_matches_core_json_mapping() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.tfrecord");
    let examples = samples(5);
    write_examples(&path, &examples);
    let out = ok(&run(&["cat", "--json", s(&path)]));
    let got = json_lines(&out);
    let want: Vec<Value> = examples.iter().map(json::example_to_json).collect();
    assert_eq!(got, want);
    // Spot-check the canonical mapping's shape.
    assert_eq!(
        got[0]["features"]["feature"]["id"]["int64List"]["value"][1],
        "-9223372036854775808"
    );
    assert_eq!(
        got[0]["features"]["feature"]["x"]["floatList"]["value"][2],
        "NaN"
    );
    assert_eq!(
        got[0]["features"]["feature"]["raw"]["bytesList"]["value"][1],
        "AAE="
    );
}

#[test]
fn cat_limit_and_several_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = dir.path().join("a.tfrecord");
    let b = dir.path().join("b.tfrecord.gz");
    write_examples(&a, &samples(2));
    write_examples(&b, &samples(3));
    let all = json_lines(&ok(&run(&["cat", "--json", s(&a), s(&b)])));
    assert_eq!(all.len(), 5);
    let limited = json_lines(&ok(&run(&["cat", "--json", "-n", "3", s(&a), s(&b)])));
    assert_eq!(limited, all[..3].to_vec());
}

#[test]
fn cat_sequence_example() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("seq.tfrecord");
    let seqs = sequence_samples();
    let payloads: Vec<Vec<u8>> = seqs.iter().map(Message::encode_to_vec).collect();
    write_file(&path, WriterOptions::new(), &payloads);
    let got = json_lines(&ok(&run(&["cat", "--json", "--sequence", s(&path)])));
    let want: Vec<Value> = seqs.iter().map(json::sequence_example_to_json).collect();
    assert_eq!(got, want);
    let text = ok(&run(&["cat", "--sequence", s(&path)]));
    let want_text = format!(
        "{}\n{}\n",
        tfrecord_core::text::sequence_example_to_text(&seqs[0]),
        tfrecord_core::text::sequence_example_to_text(&seqs[1])
    );
    assert_eq!(text, want_text);
    assert!(text.contains("feature_lists {"), "{text}");
}

#[test]
fn cat_ofrecord_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("data.ofrecord");
    let r = ofrecord_with_double();
    write_file(
        &path,
        WriterOptions::new().format(Format::OfRecord),
        &[r.encode_to_vec()],
    );
    let got = json_lines(&ok(&run(&[
        "cat",
        "--json",
        "--input-format",
        "ofrecord",
        s(&path),
    ])));
    assert_eq!(got, vec![json::ofrecord_to_json(&r)]);
    let text = ok(&run(&["cat", "--input-format", "ofrecord", s(&path)]));
    assert_eq!(
        text,
        format!("{}\n", tfrecord_core::text::ofrecord_to_text(&r))
    );
    // OFRecord has no sequences.
    let o = run(&["cat", "--sequence", "--input-format", "ofrecord", s(&path)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn cat_decode_error_names_file_offset_and_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bad-payload.tfrecord");
    let first = known_example().encode_to_vec();
    let first_len = u64::try_from(first.len()).expect("len");
    // Valid framing, but the second payload is not a protobuf message.
    write_file(
        &path,
        WriterOptions::new(),
        &[first, vec![0xff, 0xff, 0xff]],
    );
    let o = run(&["cat", s(&path)]);
    let err = fails(&o);
    let offset = 16 + first_len;
    assert!(err.contains(s(&path)), "{err}");
    assert!(err.contains("tensorflow.Example"), "{err}");
    assert!(
        err.contains(&format!("at byte {offset} (record 1)")),
        "{err}"
    );
    // The record before the bad one was printed.
    assert!(stdout(&o).contains("key: \"label\""));
}

#[test]
fn garbage_file_is_not_a_tfrecord_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("garbage.tfrecord");
    std::fs::write(
        &path,
        b"this is plainly not a TFRecord file, just some text\n",
    )
    .expect("w");
    for cmd in ["cat", "count", "verify"] {
        let err = fails(&run(&[cmd, s(&path)]));
        assert!(err.contains("not a TFRecord file"), "{cmd}: {err}");
        assert!(err.contains(s(&path)), "{cmd}: {err}");
    }
}

#[test]
fn closed_stdout_pipe_is_quiet_success() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("many.tfrecord");
    write_examples(&path, &samples(20_000));
    let mut child = bin()
        .args(["cat", s(&path)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut head = [0u8; 64];
    child
        .stdout
        .take()
        .expect("stdout")
        .read_exact(&mut head)
        .expect("some output");
    // The pipe's read end is dropped here, as `| head` would close it.
    let out = child.wait_with_output().expect("wait");
    assert!(
        out.status.success(),
        "status {:?}: {}",
        out.status,
        stderr(&out)
    );
    assert_eq!(stderr(&out), "");
}

/// A named output (`-o FIFO`) whose reader goes away is an error: the output is incomplete.
/// Only standard output closed by its reader (`| head`) ends a command quietly.
#[cfg(unix)]
#[test]
fn a_named_output_whose_reader_left_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("many.tfrecord");
    write_examples(&path, &samples(20_000));
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut head = [0u8; 64];
            std::fs::File::open(&fifo)
                .expect("opens the FIFO")
                .read_exact(&mut head)
                .expect("some output");
            // Closed here, with most of the output unread.
        })
    };
    let out = run(&["convert", s(&path), "-o", s(&fifo)]);
    reader.join().expect("reader");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(s(&fifo)) && err.contains("roken pipe"),
        "{err}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let o = run(&["cat", "--no-such-flag", "x"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["from-json"]);
    assert_eq!(o.status.code(), Some(2), "-o is required");
    let o = run(&["count", "--compression", "brotli", "x"]);
    assert_eq!(o.status.code(), Some(2));
}

/// A writer of one file given a directory as its output says so, as a usage error, rather
/// than an I/O error naming no cause (or a `part-*` promise it does not keep).
#[test]
fn one_file_outputs_refuse_a_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, "{}\n").expect("write");
    let new_dir = format!("{}/", dir.path().join("parts").display());
    for out in [s(dir.path()), new_dir.as_str()] {
        let o = run(&[
            "from-json",
            "--output-format",
            "ofrecord",
            "-o",
            out,
            s(&input),
        ]);
        assert_eq!(o.status.code(), Some(2), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("names a directory"), "{err}");
    }
    assert!(!dir.path().join("parts").exists());
}

#[test]
fn missing_file_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("nope.tfrecord");
    let err = fails(&run(&["cat", s(&path)]));
    assert!(err.contains("nope.tfrecord"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// count

#[test]
fn count_one_file_prints_one_integer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.tfrecord.zz");
    write_examples(&path, &samples(7));
    assert_eq!(ok(&run(&["count", s(&path)])), "7\n");
}

#[test]
fn count_several_files_ends_with_total() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = dir.path().join("a.tfrecord");
    let b = dir.path().join("b.tfrecord.gz");
    let c = dir.path().join("c.tfrecord");
    write_examples(&a, &samples(1));
    write_examples(&b, &samples(2));
    write_examples(&c, &[]);
    let out = ok(&run(&["count", s(&a), s(&b), s(&c)]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.last().copied(), Some("3"));
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(lines[0], format!("{}\t1", s(&a)));
    assert_eq!(lines[1], format!("{}\t2", s(&b)));
    assert_eq!(lines[2], format!("{}\t0", s(&c)));
}

#[test]
fn count_with_explicit_compression_and_stdin() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("no-suffix");
    let payloads: Vec<Vec<u8>> = samples(4).iter().map(Message::encode_to_vec).collect();
    write_file(
        &path,
        WriterOptions::new().compression(Compression::Zlib),
        &payloads,
    );
    assert_eq!(
        ok(&run(&["count", "--compression", "zlib", s(&path)])),
        "4\n"
    );
    // Without the flag the name says nothing, so the zlib stream is not TFRecord framing.
    let err = fails(&run(&["count", s(&path)]));
    assert!(err.contains("zlib"), "{err}");
    let bytes = std::fs::read(&path).expect("read");
    let out = ok(&run_with_stdin(
        &["count", "--compression", "zlib", "-"],
        &bytes,
    ));
    assert_eq!(out, "4\n");
}

#[test]
fn directory_input_expands_part_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("dataset");
    std::fs::create_dir(&data).expect("mkdir");
    let r = ofrecord_with_double().encode_to_vec();
    let opts = WriterOptions::new().format(Format::OfRecord);
    write_file(
        &data.join("part-00000"),
        opts.clone(),
        &[r.clone(), r.clone()],
    );
    write_file(&data.join("part-00001"), opts, &[r]);
    std::fs::write(data.join("_SUCCESS"), b"").expect("w");
    let out = ok(&run(&["count", "--input-format", "ofrecord", s(&data)]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].ends_with("part-00000\t2"), "{out}");
    assert!(lines[1].ends_with("part-00001\t1"), "{out}");
    assert_eq!(lines[2], "3");
    let cat = json_lines(&ok(&run(&[
        "cat",
        "--json",
        "--input-format",
        "ofrecord",
        s(&data),
    ])));
    assert_eq!(cat.len(), 3);
}

// ---------------------------------------------------------------------------------------------
// verify

/// Writes three records and returns the file and the frame offsets of each record.
fn three_records(dir: &Path) -> (PathBuf, Vec<u64>) {
    let path = dir.join("v.tfrecord");
    let examples = samples(3);
    write_examples(&path, &examples);
    let mut offsets = Vec::new();
    let mut at = 0u64;
    for e in &examples {
        offsets.push(at);
        at += 16 + u64::try_from(e.encoded_len()).expect("len");
    }
    (path, offsets)
}

#[test]
fn verify_passes_on_intact_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, _) = three_records(dir.path());
    let out = ok(&run(&["verify", s(&path)]));
    assert_eq!(out, format!("{}\tOK\t3 records\n", s(&path)));
    let out = ok(&run(&["verify", "--decode", s(&path)]));
    assert!(out.contains("OK"));
}

#[test]
fn verify_flipped_payload_byte_names_offset() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, offsets) = three_records(dir.path());
    let mut bytes = std::fs::read(&path).expect("read");
    let at = usize::try_from(offsets[1]).expect("usize") + 12 + 3;
    bytes[at] ^= 0x20;
    std::fs::write(&path, &bytes).expect("write");
    let o = run(&["verify", s(&path)]);
    let err = fails(&o);
    assert!(err.contains(s(&path)), "{err}");
    assert!(
        err.contains(&format!("at byte {} (record 1)", offsets[1])),
        "{err}"
    );
    assert!(err.contains("data checksum"), "{err}");
    assert!(stdout(&o).contains("FAILED"));
    // Reading without the data CRC check still finds every frame.
    let out = ok(&run(&["count", "--no-verify-data-crc", s(&path)]));
    assert_eq!(out, "3\n");
    // cat refuses by default.
    fails(&run(&["cat", s(&path)]));
}

#[test]
fn verify_truncated_file_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, offsets) = three_records(dir.path());
    let bytes = std::fs::read(&path).expect("read");
    std::fs::write(&path, &bytes[..bytes.len() - 3]).expect("write");
    let err = fails(&run(&["verify", s(&path)]));
    assert!(err.contains("truncated"), "{err}");
    assert!(
        err.contains(&format!("at byte {} (record 2)", offsets[2])),
        "{err}"
    );
}

#[test]
fn verify_goes_on_after_a_bad_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (bad, _) = three_records(dir.path());
    let bytes = std::fs::read(&bad).expect("read");
    std::fs::write(&bad, &bytes[..20]).expect("write");
    let good = dir.path().join("good.tfrecord.gz");
    write_examples(&good, &samples(2));
    let missing = dir.path().join("missing.tfrecord");
    let o = run(&["verify", s(&good), s(&bad), s(&missing), s(&good)]);
    let err = fails(&o);
    let out = stdout(&o);
    assert_eq!(out.matches("\tOK\t2 records").count(), 2, "{out}");
    assert!(out.contains(&format!("{}\tFAILED", s(&bad))), "{out}");
    assert!(out.contains(&format!("{}\tFAILED", s(&missing))), "{out}");
    assert!(err.contains("v.tfrecord"), "{err}");
    assert!(err.contains("missing.tfrecord"), "{err}");
}

#[test]
fn count_and_verify_say_the_same_on_any_number_of_threads() {
    let dir = tempfile::tempdir().expect("tempdir");
    // About 3 MiB, so that the threads take several chunks of 1 MiB.
    let payloads: Vec<Vec<u8>> = samples(30_000).iter().map(Message::encode_to_vec).collect();
    let mut offsets = vec![0u64];
    for p in &payloads {
        offsets.push(offsets.last().expect("an offset") + 16 + p.len() as u64);
    }
    let frames = |payloads: &[Vec<u8>]| {
        let mut w = RecordWriter::new(Vec::new(), WriterOptions::new());
        for p in payloads {
            w.write(p).expect("write");
        }
        w.finish().expect("finish")
    };
    let intact = frames(&payloads);
    // Two broken data CRCs in cells of 1 MiB one after the other, which two threads check at
    // once: the last frame that starts in the second cell, and the second of the third.
    let starts_before = |at: u64| offsets.iter().rposition(|&o| o < at).expect("a frame");
    let (first_bad, second_bad) = (starts_before(2 << 20), starts_before(2 << 20) + 2);
    let mut two_bad_crcs = intact.clone();
    for r in [first_bad, second_bad] {
        two_bad_crcs[usize::try_from(offsets[r]).expect("usize") + 14] ^= 1;
    }
    let mut not_an_example = payloads.clone();
    not_an_example[27_000] = vec![0xff, 0xff];
    // The bytes, and the record the error names (with `--decode` only, or always).
    let cases = [
        ("intact", intact.clone(), None),
        ("two bad CRCs", two_bad_crcs, Some((first_bad, false))),
        (
            "not an Example",
            frames(&not_an_example),
            Some((27_000, true)),
        ),
        (
            "truncated",
            intact[..intact.len() - 3].to_vec(),
            Some((29_999, false)),
        ),
    ];
    for (what, bytes, bad) in cases {
        for compression in [Compression::None, Compression::Gzip] {
            let path = dir.path().join(match compression {
                Compression::None => "many.tfrecord",
                _ => "many.tfrecord.gz",
            });
            let stored = if compression == Compression::None {
                bytes.clone()
            } else {
                let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                z.write_all(&bytes).expect("gzip");
                z.finish().expect("gzip")
            };
            std::fs::write(&path, stored).expect("write");
            for cmd in [&["count"][..], &["verify"], &["verify", "--decode"]] {
                let at = format!("{what}, {compression:?}, {cmd:?}");
                let with = |threads: &str| {
                    let mut args = cmd.to_vec();
                    args.extend(["--threads", threads, s(&path)]);
                    run(&args)
                };
                let one = with("1");
                match bad {
                    Some((r, decode_only)) if !decode_only || cmd.contains(&"--decode") => {
                        let err = fails(&one);
                        assert!(err.contains(&format!("(record {r})")), "{at}: {err}");
                    }
                    _ => {
                        ok(&one);
                    }
                }
                for threads in ["0", "2", "3"] {
                    let many = with(threads);
                    assert_eq!(
                        many.status.code(),
                        one.status.code(),
                        "{at}, {threads} threads"
                    );
                    assert_eq!(stdout(&many), stdout(&one), "{at}, {threads} threads");
                    assert_eq!(stderr(&many), stderr(&one), "{at}, {threads} threads");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// from-json

/// Runs from-json on the lines, then cat --json on the result, and checks the round trip.
/// Returns the record file written.
fn from_json_roundtrip(
    dir: &Path,
    file_name: &str,
    extra_write: &[&str],
    extra_read: &[&str],
    lines: &[Value],
) -> PathBuf {
    let input = dir.join("in.jsonl");
    std::fs::write(&input, jsonl(lines)).expect("write json");
    let out = dir.join(file_name);
    let mut args = vec!["from-json", "-o", s(&out)];
    args.extend_from_slice(extra_write);
    args.push(s(&input));
    assert_eq!(ok(&run(&args)), "", "from-json prints nothing on success");
    let mut cat = vec!["cat", "--json"];
    cat.extend_from_slice(extra_read);
    cat.push(s(&out));
    assert_eq!(json_lines(&ok(&run(&cat))), lines);
    out
}

fn example_lines() -> Vec<Value> {
    samples(4).iter().map(json::example_to_json).collect()
}

fn sample_payloads() -> Vec<Vec<u8>> {
    samples(4).iter().map(Message::encode_to_vec).collect()
}

#[test]
fn from_json_roundtrip_plain() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = from_json_roundtrip(dir.path(), "x.tfrecord", &[], &[], &example_lines());
    assert_eq!(read_payloads(&out, ReaderOptions::new()), sample_payloads());
}

#[test]
fn from_json_roundtrip_gzip() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = from_json_roundtrip(dir.path(), "x.tfrecord.gz", &[], &[], &example_lines());
    let head = std::fs::read(&out).expect("read");
    assert_eq!(&head[..2], &[0x1f, 0x8b], "a gzip stream");
    let opts = ReaderOptions::new().compression(Compression::Gzip);
    assert_eq!(read_payloads(&out, opts), sample_payloads());
}

#[test]
fn from_json_roundtrip_zlib() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = from_json_roundtrip(
        dir.path(),
        "x.tfrecord.zlib",
        &["--level", "9"],
        &[],
        &example_lines(),
    );
    let head = std::fs::read(&out).expect("read");
    assert_eq!(head[0], 0x78, "a zlib stream");
    let opts = ReaderOptions::new().compression(Compression::Zlib);
    assert_eq!(read_payloads(&out, opts), sample_payloads());
}

#[test]
fn from_json_explicit_compression_overrides_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = from_json_roundtrip(
        dir.path(),
        "plain-name.bin",
        &["--compression", "gzip"],
        &["--compression", "gzip"],
        &example_lines(),
    );
    let opts = ReaderOptions::new().compression(Compression::Gzip);
    assert_eq!(read_payloads(&out, opts), sample_payloads());
}

#[test]
fn from_json_roundtrip_ofrecord() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = ofrecord_with_double();
    let lines = vec![
        json::ofrecord_to_json(&r),
        json::ofrecord_to_json(&oneflow::OfRecord::default()),
    ];
    let out = from_json_roundtrip(
        dir.path(),
        "part-00000",
        &["--output-format", "ofrecord"],
        &["--input-format", "ofrecord"],
        &lines,
    );
    let payloads = read_payloads(&out, ReaderOptions::new().format(Format::OfRecord));
    assert_eq!(payloads.len(), 2);
    assert_eq!(
        oneflow::OfRecord::decode(&payloads[0][..]).expect("decode"),
        r
    );
}

#[test]
fn from_json_roundtrip_sequence() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seqs = sequence_samples();
    let lines: Vec<Value> = seqs.iter().map(json::sequence_example_to_json).collect();
    let out = from_json_roundtrip(
        dir.path(),
        "seq.tfrecord.gz",
        &["--sequence"],
        &["--sequence"],
        &lines,
    );
    let payloads = read_payloads(&out, ReaderOptions::for_path(&out));
    let decoded: Vec<tensorflow::SequenceExample> = payloads
        .iter()
        .map(|p| tensorflow::SequenceExample::decode(&p[..]).expect("decode"))
        .collect();
    assert_eq!(decoded, seqs);
}

#[test]
fn from_json_accepts_python_json_format_spellings_and_blank_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("in.jsonl");
    // Hand-written, as json_format.MessageToJson (indent=None) writes it; snake_case accepted
    // too; blank lines skipped.
    let text = concat!(
        "{\"features\": {\"feature\": {\"label\": {\"int64List\": {\"value\": [\"1\", \"-2\"]}}, ",
        "\"name\": {\"bytesList\": {\"value\": [\"Y2F0\", \"/wo=\"]}}, ",
        "\"score\": {\"floatList\": {\"value\": [0.5, 0.1]}}}}}\n",
        "\n   \n",
        "{\"features\": {\"feature\": {\"label\": {\"int64_list\": {\"value\": [3]}}}}}\r\n",
    );
    std::fs::write(&input, text).expect("write");
    let out = dir.path().join("o.tfrecord");
    ok(&run(&["from-json", "-o", s(&out), s(&input)]));
    let got = read_examples(&out);
    assert_eq!(
        got,
        vec![known_example(), example(vec![("label", int64s(&[3]))])]
    );
}

#[test]
fn from_json_error_names_file_line_and_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("bad.jsonl");
    let good = json::example_to_json(&known_example());
    let text = format!(
        "{good}\n\n{}\n",
        r#"{"features": {"feature": {"age": {"int64List": {"value": ["ten"]}}}}}"#
    );
    std::fs::write(&input, text).expect("write");
    let out = dir.path().join("o.tfrecord");
    let err = fails(&run(&["from-json", "-o", s(&out), s(&input)]));
    assert!(err.contains("bad.jsonl"), "{err}");
    let at = good.to_string().len() + 2;
    assert!(err.contains(&format!("line 3 (at byte {at})")), "{err}");
    assert!(err.contains("(record 1)"), "{err}");
    assert!(err.contains("age"), "{err}");
    assert!(err.contains("int64List"), "{err}");
    assert!(!out.exists(), "no partial output is left behind");
    // After another input, the record is counted on: it would have been record 3.
    let first = dir.path().join("first.jsonl");
    std::fs::write(&first, format!("{good}\n{good}\n")).expect("write");
    let err = fails(&run(&["from-json", "-o", s(&out), s(&first), s(&input)]));
    assert!(
        err.contains("bad.jsonl") && err.contains("line 3") && err.contains("(record 3)"),
        "{err}"
    );
    std::fs::remove_file(&first).expect("rm");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).expect("ls").collect();
    assert_eq!(leftovers.len(), 1, "no temporary file is left behind");

    std::fs::write(&input, "{\"features\": \n").expect("write");
    let err = fails(&run(&["from-json", "-o", s(&out), s(&input)]));
    assert!(
        err.contains("line 1") && err.contains("not valid JSON"),
        "{err}"
    );

    std::fs::write(&input, "{\"feature\": {}}\n").expect("write");
    let err = fails(&run(&["from-json", "-o", s(&out), s(&input)]));
    assert!(err.contains("unknown field"), "{err}");

    // Gzip-compressed JSON Lines are not decompressed: the error says what the data looks like.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(good.to_string().as_bytes()).expect("compress");
    std::fs::write(&input, gz.finish().expect("compress")).expect("write");
    let err = fails(&run(&["from-json", "-o", s(&out), s(&input)]));
    assert!(
        err.contains("line 1") && err.contains("starts like a gzip stream"),
        "{err}"
    );
}

#[test]
fn stdin_and_stdout_with_dash() {
    let lines = example_lines();
    let o = run_with_stdin(&["from-json", "-o", "-", "-"], jsonl(&lines).as_bytes());
    assert!(o.status.success(), "{}", stderr(&o));
    let records = o.stdout.clone();
    let payloads: Vec<Vec<u8>> = RecordReader::new(&records[..], ReaderOptions::new())
        .collect::<Result<_, _>>()
        .expect("framed records on stdout");
    assert_eq!(payloads, sample_payloads());
    // Without IN, from-json reads standard input too; with gzip on stdout.
    let o = run_with_stdin(
        &["from-json", "--compression", "gzip", "-o", "-"],
        jsonl(&lines).as_bytes(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let gz = o.stdout.clone();
    let back = json_lines(&ok(&run_with_stdin(
        &["cat", "--json", "--compression", "gzip", "-"],
        &gz,
    )));
    assert_eq!(back, lines);
    let back = json_lines(&ok(&run_with_stdin(
        &["cat", "--json", "--compression", "gzip"],
        &gz,
    )));
    assert_eq!(back, lines);
    // convert from stdin to stdout.
    let o = run_with_stdin(
        &[
            "convert",
            "--input-compression",
            "gzip",
            "--output-format",
            "ofrecord",
            "-o",
            "-",
            "-",
        ],
        &gz,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let of = o.stdout.clone();
    let n = ok(&run_with_stdin(
        &["count", "--input-format", "ofrecord", "-"],
        &of,
    ));
    assert_eq!(n, "4\n");
}

// ---------------------------------------------------------------------------------------------
// convert

#[test]
fn convert_tfrecord_to_ofrecord_and_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src.tfrecord");
    let examples = vec![known_example(), example(vec![("only", int64s(&[]))])];
    write_examples(&src, &examples);
    let of = dir.path().join("mid.ofrecord.gz");
    ok(&run(&[
        "convert",
        s(&src),
        "--output-format",
        "ofrecord",
        "-o",
        s(&of),
    ]));
    let mid = read_payloads(&of, ReaderOptions::for_path(&of).format(Format::OfRecord));
    let want: Vec<oneflow::OfRecord> = examples
        .iter()
        .map(tfrecord_core::convert::example_to_ofrecord)
        .collect();
    let got: Vec<oneflow::OfRecord> = mid
        .iter()
        .map(|p| oneflow::OfRecord::decode(&p[..]).expect("OFRecord"))
        .collect();
    assert_eq!(got, want);
    let back = dir.path().join("back.tfrecord");
    ok(&run(&[
        "convert",
        "--input-format",
        "ofrecord",
        s(&of),
        "-o",
        s(&back),
    ]));
    assert_eq!(read_examples(&back), examples);
}

#[test]
fn convert_double_needs_explicit_flag() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("d.ofrecord");
    let opts = WriterOptions::new().format(Format::OfRecord);
    write_file(
        &src,
        opts,
        &[
            oneflow::OfRecord::default().encode_to_vec(),
            ofrecord_with_double().encode_to_vec(),
        ],
    );
    let out = dir.path().join("d.tfrecord");
    let args = [
        "convert",
        "--input-format",
        "ofrecord",
        s(&src),
        "-o",
        s(&out),
    ];
    let err = fails(&run(&args));
    assert!(err.contains("\"d\""), "names the key: {err}");
    assert!(err.contains("double"), "{err}");
    assert!(err.contains("d.ofrecord"), "{err}");
    assert!(err.contains("(record 1)"), "{err}");
    assert!(!out.exists());

    let mut lossy = args.to_vec();
    lossy.push("--allow-lossy-double");
    ok(&run(&lossy));
    let got = read_examples(&out);
    assert_eq!(got.len(), 2);
    let features = got[1].features.as_ref().expect("features");
    assert_eq!(features.feature["d"], tf_feature(floats(&[0.1, -2.5])));
    assert_eq!(
        features.feature["i"],
        tf_feature(int64s(&[-7, 2_147_483_647]))
    );
}

#[test]
fn convert_sequence_to_ofrecord_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("seq.tfrecord");
    let payloads: Vec<Vec<u8>> = sequence_samples()
        .iter()
        .map(Message::encode_to_vec)
        .collect();
    write_file(&src, WriterOptions::new(), &payloads);
    let out = dir.path().join("o.ofrecord");
    let o = run(&[
        "convert",
        "--sequence",
        s(&src),
        "--output-format",
        "ofrecord",
        "-o",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("OFRecord has no sequences"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    // Without --sequence, the record is refused for what it is, not sent to --sequence.
    let o = run(&[
        "convert",
        s(&src),
        "--output-format",
        "ofrecord",
        "-o",
        s(&out),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("OFRecord has no sequences"), "{err}");
    assert!(!err.contains("--sequence"), "{err}");
    assert!(!out.exists());
    // TFRecord to TFRecord with --sequence is a plain re-encoding.
    let gz = dir.path().join("seq.tfrecord.gz");
    ok(&run(&["convert", "--sequence", s(&src), "-o", s(&gz)]));
    assert_eq!(read_payloads(&gz, ReaderOptions::for_path(&gz)), payloads);
}

#[test]
fn convert_same_container_copies_records_verbatim() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = dir.path().join("a.tfrecord");
    let b = dir.path().join("b.tfrecord.gz");
    // Payloads that are not protobuf at all: a raw copy must not decode them.
    let raw_a = vec![b"\xff\xfe not protobuf".to_vec(), Vec::new()];
    let raw_b = vec![b"second file".to_vec()];
    write_file(&a, WriterOptions::new(), &raw_a);
    write_file(&b, WriterOptions::for_path(&b), &raw_b);
    let out = dir.path().join("merged.zz");
    ok(&run(&["convert", s(&a), s(&b), "-o", s(&out)]));
    let mut want = raw_a.clone();
    want.extend(raw_b);
    let opts = ReaderOptions::new().compression(Compression::Zlib);
    assert_eq!(read_payloads(&out, opts), want);
    assert_eq!(ok(&run(&["count", s(&out)])), "3\n");
}

#[test]
fn convert_in_place_keeps_the_input_readable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("inplace.tfrecord");
    write_examples(&path, &samples(3));
    let before = read_payloads(&path, ReaderOptions::new());
    // Without --force an existing output is refused, and left as it was.
    let err = fails(&run(&[
        "convert",
        s(&path),
        "--compression",
        "gzip",
        "-o",
        s(&path),
    ]));
    assert!(err.contains("pass --force"), "{err}");
    assert_eq!(read_payloads(&path, ReaderOptions::new()), before);
    ok(&run(&[
        "convert",
        s(&path),
        "--compression",
        "gzip",
        "--force",
        "-o",
        s(&path),
    ]));
    let opts = ReaderOptions::new().compression(Compression::Gzip);
    assert_eq!(read_payloads(&path, opts), before);
    // A directory is no output file, with --force or without.
    for force in [&[][..], &["--force"][..]] {
        let mut args = vec!["convert", s(&path), "-o", s(dir.path())];
        args.extend(force);
        let o = run(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("a directory"), "{err}");
    }
}

#[test]
fn convert_payload_decode_error_names_location() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("bad.tfrecord");
    let first = known_example().encode_to_vec();
    let offset = 16 + u64::try_from(first.len()).expect("len");
    write_file(&src, WriterOptions::new(), &[first, vec![0x0a, 0x05, 0x01]]);
    let out = dir.path().join("o.ofrecord");
    let err = fails(&run(&[
        "convert",
        s(&src),
        "--output-format",
        "ofrecord",
        "-o",
        s(&out),
    ]));
    assert!(
        err.contains(&format!(
            "bad.tfrecord: invalid tensorflow.Example at byte {offset} (record 1)"
        )),
        "{err}"
    );
    assert!(!out.exists());
}

// ---------------------------------------------------------------------------------------------
// gen

const MNIST_SPEC: &str = r#"[records.Mnist]
doc = "28x28 digits"

[records.Mnist.features."image/encoded"]
dtype = "bytes"
field = "image"

[records.Mnist.features.label]
dtype = "int64"
default = 0
"#;

#[test]
fn gen_writes_code_and_check_tells_when_it_is_stale() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("mnist.toml");
    std::fs::write(&spec, MNIST_SPEC).expect("write spec");
    let out_dir = dir.path().join("gen");
    let generated = out_dir.join("mnist.rs");

    // Before anything is generated, --check names the missing file and writes nothing.
    let err = fails(&run(&["gen", "--check", s(&spec), "-o", s(&out_dir)]));
    assert!(err.contains("mnist.rs (missing)"), "{err}");
    assert!(!out_dir.exists());

    let stdout = ok(&run(&["gen", s(&spec), "-o", s(&out_dir)]));
    assert!(stdout.contains("wrote\t"), "{stdout}");
    let code = std::fs::read_to_string(&generated).expect("generated file");
    assert!(code.starts_with("// This file is @generated by tfrecord-schema. Do not edit.\n"));
    assert!(code.contains("pub struct Mnist {"), "{code}");
    assert!(
        code.contains("#[example(key = \"label\", default = 0)]"),
        "{code}"
    );

    // Generating again changes nothing; --check passes.
    let stdout = ok(&run(&["gen", s(&spec), "-o", s(&out_dir)]));
    assert!(stdout.contains("unchanged\t"), "{stdout}");
    let stdout = ok(&run(&["gen", "--check", s(&spec), "-o", s(&out_dir)]));
    assert_eq!(stdout, "1 generated files up to date\n");

    // An edited spec makes the checked-in file stale; --check fails and leaves it alone.
    std::fs::write(&spec, MNIST_SPEC.replace("default = 0", "default = 1")).expect("edit");
    let err = fails(&run(&["gen", "--check", s(&spec), "-o", s(&out_dir)]));
    assert!(err.contains("mnist.rs (differs)"), "{err}");
    assert!(err.contains("without `--check`"), "{err}");
    assert_eq!(std::fs::read_to_string(&generated).expect("read"), code);

    // The include file lists every spec's module.
    ok(&run(&[
        "gen",
        s(&spec),
        "-o",
        s(&out_dir),
        "--include-file",
        "_includes.rs",
    ]));
    let includes = std::fs::read_to_string(out_dir.join("_includes.rs")).expect("includes");
    assert!(includes.contains("pub mod mnist {"), "{includes}");
}

#[test]
fn gen_reports_every_spec_error_rustc_style() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("bad.toml");
    std::fs::write(
        &spec,
        "[records.Bad.features.label]\ndtype = \"int46\"\nkidn = \"var\"\n",
    )
    .expect("write spec");
    let out_dir = dir.path().join("gen");
    let err = fails(&run(&["gen", s(&spec), "-o", s(&out_dir)]));
    let at = format!("--> {}:2:9", spec.display());
    assert!(err.contains("error: unknown dtype `int46`"), "{err}");
    assert!(err.contains(&at), "{err}");
    assert!(
        err.contains("2 | dtype = \"int46\"\n  |         ^^^^^^^"),
        "{err}"
    );
    assert!(err.contains("= help: did you mean `int64`?"), "{err}");
    assert!(err.contains("error: unknown feature key `kidn`"), "{err}");
    assert!(
        err.contains("tfrecord: error: could not generate code due to 2 previous errors"),
        "{err}"
    );
    assert!(!out_dir.exists());
}

// ---------------------------------------------------------------------------------------------
// parse

const PARSE_SPEC: &str = r#"
[records.Sample.features.label]
dtype = "int64"
default = -1

[records.Sample.features.name]
dtype = "bytes"
kind = "var"

[records.Sample.features.score]
dtype = "float"
shape = [2]

[records.Sample.features.cells]
dtype = "float"
kind = "sparse"
index_key = "cells/idx"
value_key = "cells/val"
size = 4

[records.Other.features.label]
dtype = "int64"
"#;

fn parse_samples() -> Vec<tensorflow::Example> {
    vec![
        example(vec![
            ("label", int64s(&[7])),
            ("name", bytes(&[b"a", b"bc"])),
            ("score", floats(&[0.5, -1.0])),
            ("cells/idx", int64s(&[3, 1])),
            ("cells/val", floats(&[30.0, 10.0])),
        ]),
        example(vec![("score", floats(&[2.0, f32::NAN]))]),
        example(vec![
            ("label", int64s(&[9])),
            ("name", bytes(&[b"\xff"])),
            ("score", floats(&[0.0, 1.0])),
        ]),
    ]
}

#[test]
fn parse_prints_tensors_as_parse_example_returns_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("spec.toml");
    std::fs::write(&spec, PARSE_SPEC).expect("write spec");
    let data = dir.path().join("data.tfrecord");
    write_examples(&data, &parse_samples());

    let out = ok(&run(&[
        "parse",
        "--spec",
        s(&spec),
        "--record",
        "Sample",
        s(&data),
    ]));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 1, "all records in one batch: {out}");
    let want: Value = serde_json::json!({
        "label": {"dense": {"shape": [3], "values": [7, -1, 9]}},
        "name": {"sparse": {"indices": [[0, 0], [0, 1], [2, 0]], "values": ["YQ==", "YmM=", "/w=="], "dense_shape": [3, 2]}},
        "score": {"dense": {"shape": [3, 2], "values": [0.5, -1.0, 2.0, "NaN", 0.0, 1.0]}},
        "cells": {"sparse": {"indices": [[0, 1], [0, 3]], "values": [10.0, 30.0], "dense_shape": [3, 4]}},
    });
    assert_eq!(lines[0], want);

    // Batches of two records: the last one is shorter; batches run on over files.
    let out = ok(&run(&[
        "parse",
        "--spec",
        s(&spec),
        "--record",
        "Sample",
        "--batch-size",
        "2",
        s(&data),
        s(&data),
    ]));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(
        lines[0]["label"]["dense"]["values"],
        serde_json::json!([7, -1])
    );
    assert_eq!(
        lines[1]["label"]["dense"]["values"],
        serde_json::json!([9, 7])
    );
    assert_eq!(
        lines[2]["label"]["dense"]["values"],
        serde_json::json!([-1, 9])
    );
    assert_eq!(
        lines[2]["name"]["sparse"]["dense_shape"],
        serde_json::json!([2, 1])
    );

    // Compressed input and standard input.
    let gz = dir.path().join("data.tfrecord.gz");
    write_examples(&gz, &parse_samples());
    let out = ok(&run(&[
        "parse",
        "--spec",
        s(&spec),
        "--record",
        "Sample",
        s(&gz),
    ]));
    assert_eq!(json_lines(&out)[0], want);
    let raw = std::fs::read(&data).expect("read data");
    let out = ok(&run_with_stdin(
        &["parse", "--spec", s(&spec), "--record", "Sample", "-"],
        &raw,
    ));
    assert_eq!(json_lines(&out)[0], want);

    // No records, no output.
    let empty = dir.path().join("empty.tfrecord");
    write_examples(&empty, &[]);
    let out = ok(&run(&[
        "parse",
        "--spec",
        s(&spec),
        "--record",
        "Sample",
        s(&empty),
    ]));
    assert_eq!(out, "");
}

/// A spec with `deny_unknown_keys` refuses a record holding a feature it does not read, as
/// the typed readers do; without it, the feature is passed over, as `tf.io.parse_example`
/// passes over it.
#[test]
fn parse_honours_deny_unknown_keys() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data.tfrecord");
    write_examples(
        &data,
        &[
            example(vec![("b", int64s(&[1]))]),
            example(vec![("b", int64s(&[2])), ("extra", floats(&[0.5]))]),
        ],
    );
    let spec = |deny: bool| {
        format!(
            "[records.R]\ndeny_unknown_keys = {deny}\n[records.R.features.b]\ndtype = \"int64\"\n"
        )
    };
    let lenient = write_spec(dir.path(), &spec(false));
    let out = ok(&run(&["parse", "--spec", s(&lenient), s(&data)]));
    assert_eq!(
        json_lines(&out)[0]["b"]["dense"]["values"],
        serde_json::json!([1, 2])
    );
    let strict = write_spec(dir.path(), &spec(true));
    let o = run(&["parse", "--spec", s(&strict), s(&data)]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains(s(&data))
            && err.contains("\"extra\"")
            && err.contains("record 1")
            && err.contains("`R` denies unknown keys"),
        "{err}"
    );
}

#[test]
fn parse_errors_name_file_record_and_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("spec.toml");
    std::fs::write(&spec, PARSE_SPEC).expect("write spec");
    let good = dir.path().join("good.tfrecord");
    write_examples(&good, &parse_samples());
    let bad = dir.path().join("bad.tfrecord");
    let mut records = parse_samples();
    records.push(example(vec![("score", int64s(&[1, 2]))]));
    write_examples(&bad, &records);

    // The fourth record of the second file (the seventh of the batch) has int64 scores.
    let err = fails(&run(&[
        "parse",
        "--spec",
        s(&spec),
        "--record",
        "Sample",
        s(&good),
        s(&bad),
    ]));
    assert!(err.contains(&format!("{}:", bad.display())), "{err}");
    assert!(err.contains("(record 3)"), "{err}");
    assert!(err.contains("\"score\""), "{err}");

    // Several records and no --record: the names are listed (a usage error).
    let o = run(&["parse", "--spec", s(&spec), s(&good)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("(Sample, Other)"), "{}", stderr(&o));
    let o = run(&["parse", "--spec", s(&spec), "--record", "Nope", s(&good)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no record `Nope`"), "{}", stderr(&o));

    // A required feature that a record lacks.
    let err = fails(&run(&[
        "parse",
        "--spec",
        s(&spec),
        "--record",
        "Other",
        s(&good),
    ]));
    assert!(err.contains("(record 1)"), "{err}");
    assert!(err.contains("\"label\""), "{err}");

    // An invalid spec is reported rustc-style.
    let broken = dir.path().join("broken.toml");
    std::fs::write(&broken, "[records.R.features.x]\ndtype = \"int46\"\n").expect("write");
    let err = fails(&run(&["parse", "--spec", s(&broken), s(&good)]));
    assert!(err.contains("error: unknown dtype `int46`"), "{err}");
    assert!(err.contains("invalid spec"), "{err}");
}

/// An error found only when the batch's tensors are built (a ragged tensor, a sparse
/// feature's counts) names the record it comes from, with that record's own counts, as
/// `--batch-size 1` would.
#[test]
fn parse_batch_errors_name_the_record_they_come_from() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ragged = write_spec(
        dir.path(),
        "[records.R.features.r]\ndtype = \"int64\"\nkind = \"ragged\"\nvalue_key = \"v\"\n\
         partitions = [{ uniform_row_length = 2 }]\n",
    );
    let file = dir.path().join("r.tfrecord");
    let rows = [&[1, 2][..], &[3, 4, 5, 6], &[7, 8, 9], &[]];
    let records: Vec<_> = rows
        .iter()
        .map(|v| example(vec![("v", int64s(v))]))
        .collect();
    write_examples(&file, &records);
    let offsets: Vec<u64> = records
        .iter()
        .scan(0, |at, e| {
            let here = *at;
            *at += e.encoded_len() as u64 + 16;
            Some(here)
        })
        .collect();
    let err = fails(&run(&["parse", "--spec", s(&ragged), s(&file)]));
    let at = format!(
        "{}: bad feature \"r\" at byte {} (record 2)",
        file.display(),
        offsets[2]
    );
    assert!(err.contains(&at), "{err}");
    assert!(
        err.contains("cannot reshape 3 values into rows of 2"),
        "{err}"
    );

    let sparse = write_spec(
        dir.path(),
        "[records.R.features.x]\ndtype = \"float\"\nkind = \"sparse\"\nindex_key = \"i\"\n\
         value_key = \"v\"\nsize = 5\n",
    );
    let file = dir.path().join("s.tfrecord");
    let records = [
        example(vec![("i", int64s(&[0])), ("v", floats(&[1.0]))]),
        example(vec![("i", int64s(&[0, 1, 2, 3])), ("v", floats(&[1.0]))]),
    ];
    write_examples(&file, &records);
    let err = fails(&run(&["parse", "--spec", s(&sparse), s(&file)]));
    assert!(err.contains("(record 1)"), "{err}");
    assert!(err.contains("expected 1, found 4"), "{err}");
}

#[test]
fn parse_sequence_examples_prints_context_lists_and_lengths() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("seq.toml");
    std::fs::write(
        &spec,
        r#"[records.Clip]
kind = "sequence_example"
[records.Clip.context.label]
dtype = "int64"
kind = "var"
[records.Clip.sequence.frames]
dtype = "float"
allow_missing = true
[records.Clip.sequence.tokens]
dtype = "int64"
kind = "var"
"#,
    )
    .expect("write spec");
    let data = sequence_file(dir.path());
    let out = ok(&run(&["parse", "--spec", s(&spec), s(&data)]));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 1, "{out}");
    let want = serde_json::json!({
        "context": {"label": {"sparse": {"indices": [[0, 0], [0, 1]], "values": [1, -2], "dense_shape": [2, 2]}}},
        "sequence": {
            "frames": {"dense": {"shape": [2, 1], "values": [0.25, 0.0]}},
            "tokens": {"sparse": {"indices": [[0, 0, 0], [0, 0, 1], [0, 1, 0]], "values": [1, 2, 3], "dense_shape": [2, 2, 2]}},
        },
        "lengths": {"frames": {"dense": {"shape": [2], "values": [1, 0]}}},
    });
    assert_eq!(lines[0], want);
}

/// Without `--batch-size`, `parse` cuts the records into batches of 1024, so that memory stays
/// bounded on any file; `--one-batch` puts them all in one batch, as one `tf.io.parse_example`
/// call over them.
#[test]
fn parse_batches_by_default_and_one_batch_on_request() {
    let dir = tempfile::tempdir().expect("temp dir");
    let spec = write_spec(dir.path(), "[records.N.features.n]\ndtype = \"int64\"\n");
    let data = dir.path().join("n.tfrecord");
    let payloads: Vec<Vec<u8>> = (0..1500)
        .map(|i| example(vec![("n", int64s(&[i]))]).encode_to_vec())
        .collect();
    write_file(&data, WriterOptions::new(), &payloads);
    let shape = |line: &Value| line["n"]["dense"]["shape"].clone();
    let lines = json_lines(&ok(&run(&["parse", "--spec", s(&spec), s(&data)])));
    assert_eq!(
        lines.iter().map(shape).collect::<Vec<_>>(),
        [serde_json::json!([1024]), serde_json::json!([476])]
    );
    assert_eq!(lines[1]["n"]["dense"]["values"][0], 1024);
    let lines = json_lines(&ok(&run(&[
        "parse",
        "--one-batch",
        "--spec",
        s(&spec),
        s(&data),
    ])));
    assert_eq!(
        lines.iter().map(shape).collect::<Vec<_>>(),
        [serde_json::json!([1500])]
    );
    let o = run(&[
        "parse",
        "--one-batch",
        "--batch-size",
        "2",
        "--spec",
        s(&spec),
        s(&data),
    ]);
    assert_eq!(o.status.code(), Some(2), "a usage error");
    let err = stderr(&o);
    assert!(
        err.contains("--one-batch") && err.contains("--batch-size"),
        "{err}"
    );
}

/// A file of SequenceExamples read as Examples (no `--sequence`) is refused, by every command
/// that decodes Examples, rather than read with its feature lists silently dropped; with
/// `--sequence` the same file reads.
#[test]
fn sequence_examples_read_as_examples_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = sequence_file(dir.path());
    let out = dir.path().join("out.ofrecord");
    for args in [
        vec!["cat", s(&data)],
        vec!["cat", "--json", s(&data)],
        vec!["infer", s(&data)],
        vec!["verify", "--decode", s(&data)],
    ] {
        let err = fails(&run(&args));
        assert!(
            err.contains("feature_lists") && err.contains("--sequence") && err.contains("byte 0"),
            "{args:?}: {err}"
        );
    }
    // To OFRecord, which has no sequences, --sequence would not help: the error says so.
    let err = fails(&run(&[
        "convert",
        s(&data),
        "-o",
        s(&out),
        "--output-format",
        "ofrecord",
    ]));
    assert!(
        err.contains("feature_lists")
            && err.contains("OFRecord has no sequences")
            && err.contains("byte 0"),
        "{err}"
    );
    assert!(!out.exists(), "no output is left behind");
    let text = ok(&run(&["cat", "--sequence", s(&data)]));
    assert!(text.contains("feature_lists"), "{text}");
}

/// `parse` holds `int32` and `bool` features to their type, as the type `gen` makes from the
/// same spec does: the error names the file, byte offset, record, key and value.
#[test]
fn parse_holds_int32_and_bool_to_their_type() {
    let dir = tempfile::tempdir().expect("temp dir");
    let spec = write_spec(
        dir.path(),
        "[records.T.features.n]\ndtype = \"int32\"\n[records.T.features.b]\ndtype = \"bool\"\n",
    );
    for (n, b, what) in [(1i64 << 40, 1i64, "1099511627776"), (7, 850, "850")] {
        let data = dir.path().join("t.tfrecord");
        let payloads = vec![
            example(vec![("n", int64s(&[1])), ("b", int64s(&[0]))]).encode_to_vec(),
            example(vec![("n", int64s(&[n])), ("b", int64s(&[b]))]).encode_to_vec(),
        ];
        write_file(&data, WriterOptions::new(), &payloads);
        let err = fails(&run(&["parse", "--spec", s(&spec), s(&data)]));
        assert!(
            err.contains("(record 1)") && err.contains(what) && err.contains("t.tfrecord"),
            "{err}"
        );
    }
}

/// An interrupted command (SIGINT or SIGTERM mid-`convert`) removes its hidden temporary
/// outputs (one file, or every shard) and exits with status 130, leaving neither a partial
/// file nor a final name.
#[test]
fn interrupted_convert_leaves_no_temporary_file() {
    let cases: [(&str, &[&str], usize); 4] = [
        ("-INT", &[], 1),
        ("-TERM", &[], 1),
        ("-INT", &["--shards", "3"], 3),
        ("-TERM", &["--max-records-per-shard", "1"], 1),
    ];
    for (signal, flags, temporaries) in cases {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("out.tfrecord.gz");
        let mut child = bin()
            .args(["convert", "-", "-o", s(&out)])
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn tfrecord");
        // One record, then the input stays open: the command waits, mid-output.
        let mut input = child.stdin.take().expect("stdin");
        let mut w = RecordWriter::new(Vec::new(), WriterOptions::new());
        w.write(&known_example().encode_to_vec()).expect("write");
        input.write_all(&w.finish().expect("finish")).expect("feed");
        input.flush().expect("flush");
        let staged = || {
            std::fs::read_dir(dir.path())
                .expect("list")
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().contains(".tmp-"))
                .count()
        };
        let started = std::time::Instant::now();
        while staged() == 0 && started.elapsed() < std::time::Duration::from_secs(20) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // The shards still empty may be created after the first record's.
        while staged() < temporaries && started.elapsed() < std::time::Duration::from_secs(20) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(
            staged(),
            temporaries,
            "{flags:?}: staged under temporary names"
        );
        let killed = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(killed.success());
        let status = child.wait().expect("wait");
        drop(input);
        assert_eq!(status.code(), Some(130), "{signal} {flags:?}");
        assert_eq!(
            staged(),
            0,
            "{signal} {flags:?}: the temporary files are removed"
        );
        let left: Vec<_> = std::fs::read_dir(dir.path()).expect("list").collect();
        assert!(
            left.is_empty(),
            "{signal} {flags:?}: no output under a final name"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// infer

/// The workspace root, where the conformance fixtures and the checked-in inferred spec live.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

fn infer_at_root(args: &[&str]) -> String {
    let o = bin()
        .args(args)
        .current_dir(workspace())
        .stdin(Stdio::null())
        .output()
        .expect("run tfrecord");
    ok(&o)
}

/// `tests/specs/inferred_examples.toml` and `inferred_sequence.toml` are exactly what
/// `tfrecord infer` prints for the conformance `examples.tfrecord` and `sequence.tfrecord` (the
/// tests package generates types from them and reads the files with them). `UPDATE_GOLDEN=1`
/// rewrites them.
#[test]
fn infer_matches_the_checked_in_specs() {
    let cases = [
        (
            &["infer", "tests/fixtures/conformance/examples.tfrecord"][..],
            "tests/specs/inferred_examples.toml",
        ),
        (
            &[
                "infer",
                "--sequence",
                "tests/fixtures/conformance/sequence.tfrecord",
            ][..],
            "tests/specs/inferred_sequence.toml",
        ),
    ];
    for (args, golden) in cases {
        let out = infer_at_root(args);
        let golden = workspace().join(golden);
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&golden, &out).expect("write the golden spec");
        }
        let want = std::fs::read_to_string(&golden).expect("read the golden spec");
        assert_eq!(
            out,
            want,
            "`tfrecord {}` output changed; rerun with UPDATE_GOLDEN=1 and review the diff",
            args.join(" ")
        );
    }
    let out = infer_at_root(&["infer", "tests/fixtures/conformance/examples.tfrecord"]);
    assert!(out.starts_with("# Inferred by `tfrecord infer` from 42 tf.train.Example records"));
    assert!(out.contains("# Left out: \"unset_kind\": "), "{out}");
    assert!(
        out.contains(
            "[records.Examples.features.emb]\ndtype = \"float\"\nshape = [4]\noptional = true\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("[records.Examples.features.hist]\ndtype = \"int64\"\nkind = \"var\"\n"),
        "{out}"
    );
}

/// What `infer` prints, `parse --spec` accepts for the same file, and `gen` turns into code.
#[test]
fn inferred_specs_parse_their_files_and_generate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = [
        ("examples.tfrecord", false, "Examples"),
        ("examples.tfrecord.gz", false, "Examples"),
        ("sequence.tfrecord", true, "Sequence"),
    ];
    for (file, sequence, record) in cases {
        let data = workspace().join("tests/fixtures/conformance").join(file);
        let mut args = vec!["infer"];
        if sequence {
            args.push("--sequence");
        }
        args.push(s(&data));
        let spec_text = ok(&run(&args));
        assert!(
            spec_text.contains(&format!("[records.{record}]")),
            "{spec_text}"
        );
        let spec = dir.path().join(format!("{record}.toml"));
        std::fs::write(&spec, &spec_text).expect("write spec");
        let out = ok(&run(&["parse", "--spec", s(&spec), s(&data)]));
        let lines = json_lines(&out);
        assert_eq!(lines.len(), 1, "{file}");
        let out = ok(&run(&[
            "parse",
            "--spec",
            s(&spec),
            "--batch-size",
            "5",
            s(&data),
        ]));
        assert!(json_lines(&out).len() >= 3, "{file}");
        let gen_dir = dir.path().join("gen");
        ok(&run(&["gen", s(&spec), "-o", s(&gen_dir)]));
        let code = std::fs::read_to_string(gen_dir.join(format!("{}.rs", record.to_lowercase())))
            .expect("generated code");
        assert!(code.contains(&format!("pub struct {record} {{")), "{code}");
    }
    let lines = json_lines(&ok(&run(&[
        "parse",
        "--spec",
        s(&dir.path().join("Sequence.toml")),
        s(&workspace().join("tests/fixtures/conformance/sequence.tfrecord")),
    ])));
    assert_eq!(
        lines[0]["context"]["id"]["dense"]["shape"],
        serde_json::json!([12])
    );
    assert!(lines[0]["lengths"]["scores"].is_object(), "{}", lines[0]);
}

#[test]
fn infer_reads_ofrecord_and_names_records() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("train.ofrecord");
    let payloads = vec![ofrecord_with_double().encode_to_vec(); 2];
    write_file(
        &data,
        WriterOptions::new().format(Format::OfRecord),
        &payloads,
    );
    let out = ok(&run(&["infer", "--input-format", "ofrecord", s(&data)]));
    assert!(
        out.contains("[records.Train]\ndialect = \"ofrecord\"\n"),
        "{out}"
    );
    assert!(
        out.contains("[records.Train.features.d]\ndtype = \"double\"\nshape = [2]\n"),
        "{out}"
    );
    assert!(
        out.contains("[records.Train.features.i]\ndtype = \"int32\"\nshape = [2]\n"),
        "{out}"
    );
    let out = ok(&run(&[
        "infer",
        "--input-format",
        "ofrecord",
        "--record",
        "Point",
        "-n",
        "1",
        s(&data),
    ]));
    assert!(out.contains("from 1 OFRecord record of"), "{out}");
    assert!(out.contains("[records.Point]"), "{out}");
    let o = run(&["infer", "--record", "not a name", s(&data)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("such as `NotAName`"), "{}", stderr(&o));
    // A keyword stays one in UpperCamelCase: the name suggested is one that works.
    for keyword in ["Self", "self"] {
        let o = run(&["infer", "--record", keyword, s(&data)]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("such as `Self_`"), "{}", stderr(&o));
    }
}

#[test]
fn parse_reads_ofrecord_as_examples() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("spec.toml");
    std::fs::write(
        &spec,
        "[records.R.features.i]\ndtype = \"int32\"\nshape = [2]\n",
    )
    .expect("write spec");
    let data = dir.path().join("part-00000");
    let mut r = oneflow::OfRecord::default();
    r.feature.insert(
        "i".into(),
        of_feature(oneflow::feature::Kind::Int32List(oneflow::Int32List {
            value: vec![-7, 2_147_483_647],
        })),
    );
    write_file(
        &data,
        WriterOptions::new().format(Format::OfRecord),
        &[r.encode_to_vec()],
    );
    let out = ok(&run(&[
        "parse",
        "--spec",
        s(&spec),
        "--input-format",
        "ofrecord",
        s(&data),
    ]));
    assert_eq!(
        json_lines(&out)[0],
        serde_json::json!({"i": {"dense": {"shape": [1, 2], "values": [-7, 2_147_483_647]}}})
    );
    // A double list the spec does not read is left out; one it reads is an error naming it,
    // not a float without a word, and with --allow-lossy-double the float32 values the parser
    // reads (`tf.io.parse_example` has no float64), for a `double` or `float` feature alike.
    let doubles = dir.path().join("doubles");
    write_file(
        &doubles,
        WriterOptions::new().format(Format::OfRecord),
        &[ofrecord_with_double().encode_to_vec()],
    );
    let parse_with = |spec_text: &str, flags: &[&str]| {
        std::fs::write(&spec, spec_text).expect("write spec");
        let mut args = vec!["parse", "--spec", s(&spec), "--input-format", "ofrecord"];
        args.extend_from_slice(flags);
        args.push(s(&doubles));
        run(&args)
    };
    let parse = |spec_text: &str| parse_with(spec_text, &["--allow-lossy-double"]);
    let out = ok(&parse(
        "[records.R.features.i]\ndtype = \"int32\"\nshape = [2]\n",
    ));
    assert_eq!(
        json_lines(&out)[0],
        serde_json::json!({"i": {"dense": {"shape": [1, 2], "values": [-7, 2_147_483_647]}}})
    );
    let out = ok(&parse(
        "[records.R]\ndialect = \"ofrecord\"\n\
         [records.R.features.d]\ndtype = \"double\"\nshape = [2]\n",
    ));
    assert_eq!(
        json_lines(&out)[0],
        serde_json::json!({"d": {"dense": {"shape": [1, 2], "values": [0.1, -2.5]}}})
    );
    // A ragged feature reads its value key.
    let out = ok(&parse(
        "[records.R]\ndialect = \"ofrecord\"\n\
         [records.R.features.r]\ndtype = \"double\"\nkind = \"ragged\"\nvalue_key = \"d\"\n",
    ));
    assert_eq!(
        json_lines(&out)[0]["r"]["ragged"]["flat_values"],
        serde_json::json!([0.1, -2.5])
    );
    let out = ok(&parse(
        "[records.R.features.d]\ndtype = \"float\"\nshape = [2]\n",
    ));
    assert_eq!(
        json_lines(&out)[0],
        serde_json::json!({"d": {"dense": {"shape": [1, 2], "values": [0.1, -2.5]}}})
    );
    for dtype in ["double", "float"] {
        let err = fails(&parse_with(
            &format!(
                "[records.R]\ndialect = \"ofrecord\"\n\
                 [records.R.features.d]\ndtype = \"{dtype}\"\nshape = [2]\n"
            ),
            &[],
        ));
        assert!(err.contains("found double_list"), "{err}");
        assert!(err.contains("--allow-lossy-double"), "{err}");
        assert!(err.contains("(record 0)"), "{err}");
        assert!(err.contains("key `d`") || err.contains("\"d\""), "{err}");
    }
}

/// A file read in the wrong container or compression: the error says how the data looks, and
/// a note names the flag that reads it so (`convert --compression` sets the output's, so the
/// input's flag is named by its input name).
#[test]
fn a_misread_input_names_the_flag_that_reads_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plain = dir.path().join("t.tfrecord");
    let gz_unnamed = dir.path().join("gz.tfrecord");
    let plain_named_gz = dir.path().join("plain.tfrecord.gz");
    let payloads: Vec<Vec<u8>> = (0..3)
        .map(|i| example(vec![("a", int64s(&[i]))]).encode_to_vec())
        .collect();
    write_file(&plain, WriterOptions::new(), &payloads);
    write_file(
        &gz_unnamed,
        WriterOptions::new().compression(Compression::Gzip),
        &payloads,
    );
    std::fs::copy(&plain, &plain_named_gz).expect("copy");
    let note = |err: &str| -> String {
        err.lines()
            .find(|l| l.starts_with("tfrecord: note: "))
            .unwrap_or_default()
            .to_string()
    };

    // A TFRecord file read as OFRecord: framing without checksums cannot tell, the note can.
    for cmd in ["count", "cat"] {
        let err = fails(&run(&[cmd, "--input-format", "ofrecord", s(&plain)]));
        assert!(
            note(&err).contains("starts like a TFRecord file")
                && note(&err).contains("leave out --input-format ofrecord"),
            "{cmd}: {err}"
        );
    }
    let out = dir.path().join("o.tfrecord");
    let err = fails(&run(&[
        "convert",
        s(&gz_unnamed),
        "--compression",
        "gzip",
        "-o",
        s(&out),
    ]));
    assert!(
        err.contains("starts like a gzip stream")
            && note(&err).contains("pass --input-compression gzip"),
        "{err}"
    );
    // Where `--compression` is the inputs' (not `convert`), the note names it, as `--help`
    // lists it.
    let err = fails(&run(&["cat", s(&plain_named_gz)]));
    assert!(note(&err).contains("pass --compression none"), "{err}");
    let err = fails(&run(&["count", s(&gz_unnamed)]));
    assert!(note(&err).contains("pass --compression gzip"), "{err}");
    // The flag the note names reads the file.
    ok(&run(&["count", "--compression", "gzip", s(&gz_unnamed)]));
    ok(&run(&[
        "count",
        "--input-compression",
        "gzip",
        s(&gz_unnamed),
    ]));
    ok(&run(&[
        "count",
        "--input-compression",
        "none",
        s(&plain_named_gz),
    ]));
    // An OFRecord file that is damaged is not said to be a TFRecord file.
    let of = dir.path().join("d.ofrecord");
    let mut bytes = 5u64.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"\x0a\x03abc");
    std::fs::write(&of, &bytes).expect("write");
    let err = fails(&run(&["cat", "--input-format", "ofrecord", s(&of)]));
    assert!(note(&err).is_empty(), "{err}");
}
