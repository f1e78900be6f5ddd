//! Records whose feature keys are not UTF-8, as TensorFlow writes and reads them, through
//! `cat` (text and JSON), `verify --decode`, `infer` (and `parse` with the inferred spec) and
//! `convert`. The files and the expected outputs are in `tests/fixtures/non_utf8_keys/`,
//! recorded from TensorFlow and protobuf by its `record.py` (see its README).

use std::path::{Path, PathBuf};

use serde_json::Value;

mod support;
use support::{ok, run, stderr};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/non_utf8_keys")
}

fn fixture(name: &str) -> String {
    fixtures()
        .join(name)
        .to_str()
        .expect("a UTF-8 path")
        .to_string()
}

fn read(name: &str) -> String {
    std::fs::read_to_string(fixtures().join(name)).expect("a fixture file")
}

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digits"))
        .collect()
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// `keys.json`: for each file, each distinct key with whether it is UTF-8 and its escape by
/// protobuf's `text_encoding.CEscape`; and what TensorFlow's parsers returned.
fn keys_json() -> Value {
    serde_json::from_str(&read("keys.json")).expect("keys.json")
}

/// The escaped forms of the keys of `file` that are not UTF-8.
fn non_utf8_keys(file: &str) -> Vec<String> {
    let keys = keys_json();
    let list = keys["keys"][file].as_array().expect("a key list");
    let out: Vec<String> = list
        .iter()
        .filter(|k| k["utf8"] == false)
        .map(|k| k["escaped"].as_str().expect("an escape").to_string())
        .collect();
    assert!(!out.is_empty(), "{file} has keys that are not UTF-8");
    out
}

/// The three files, the flags that read them, and their expected outputs' stem.
const FILES: [(&str, &[&str], &str); 3] = [
    ("examples.tfrecord", &[], "examples"),
    ("sequence.tfrecord", &["--sequence"], "sequence"),
    ("part-00000", &["--input-format", "ofrecord"], "ofrecord"),
];

#[test]
fn cat_prints_the_text_format_protobuf_prints() {
    for (file, flags, stem) in FILES {
        let path = fixture(file);
        let mut args = vec!["cat"];
        args.extend(flags);
        args.push(&path);
        let o = run(&args);
        assert_eq!(ok(&o), read(&format!("{stem}.txt")), "{file}");
        assert_eq!(stderr(&o), "", "no warning for the text format");
    }
}

#[test]
fn cat_json_escapes_keys_and_warns_once() {
    for (file, flags, stem) in FILES {
        let path = fixture(file);
        let mut args = vec!["cat", "--json"];
        args.extend(flags);
        args.push(&path);
        let o = run(&args);
        let got = json_lines(&ok(&o));
        let want = json_lines(&read(&format!("{stem}.jsonl")));
        assert_eq!(got, want, "{file}");
        // Once, naming the first record's first key that is not UTF-8 and where it is.
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(err.matches("tfrecord: warning: ").count(), 1, "{err}");
        assert!(
            err.contains(&format!("{path} at byte 0 (record 0)")),
            "{err}"
        );
        assert!(err.contains("is not UTF-8"), "{err}");
        assert!(err.contains("`from-json`"), "{err}");
        assert!(
            non_utf8_keys(file)
                .iter()
                .any(|k| err.contains(&format!("feature key \"{k}\""))),
            "{err}"
        );
    }
    // Records whose keys are all UTF-8 give no warning.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("utf8.tfrecord");
    write_records(&path, &[example(&[b"ok", "ключ".as_bytes()])]);
    let o = run(&["cat", "--json", path.to_str().expect("a UTF-8 path")]);
    assert_eq!(json_lines(&ok(&o)).len(), 1);
    assert_eq!(stderr(&o), "");
}

/// A serialized `tf.train.Example` with these keys, each with an empty `Feature`.
fn example(keys: &[&[u8]]) -> Vec<u8> {
    let mut map = Vec::new();
    for key in keys {
        let entry = [&[0x0a, short(key.len())][..], key, &[0x12, 0x00]].concat();
        map.extend([0x0a, short(entry.len())]);
        map.extend(entry);
    }
    [&[0x0a, short(map.len())][..], &map].concat()
}

fn short(n: usize) -> u8 {
    u8::try_from(n)
        .ok()
        .filter(|&b| b < 0x80)
        .expect("a one-byte length")
}

fn write_records(path: &Path, records: &[Vec<u8>]) {
    let mut w = tfrecord_core::RecordWriter::create(path, tfrecord_core::WriterOptions::new())
        .expect("create");
    for r in records {
        w.write(r).expect("write");
    }
    w.finish().expect("finish");
}

#[test]
fn cat_json_refuses_an_escaped_key_that_is_also_a_key() {
    // Keys b"\xff" and the four characters `\377`: JSON would give both the same name.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("clash.tfrecord");
    write_records(&path, &[example(&[b"\xff", b"\\377"])]);
    let path = path.to_str().expect("a UTF-8 path");
    let o = run(&["cat", "--json", path]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("(record 0)"), "{err}");
    assert!(err.contains("a JSON object cannot hold both"), "{err}");
    // The text format can.
    let text = ok(&run(&["cat", path]));
    assert!(text.contains("key: \"\\377\"\n"), "{text}");
    assert!(text.contains("key: \"\\\\377\"\n"), "{text}");
}

#[test]
fn verify_decode_accepts_the_records() {
    for (file, flags, _) in FILES {
        for threads in ["1", "2"] {
            let path = fixture(file);
            let mut args = vec!["verify", "--decode", "--threads", threads];
            args.extend(flags);
            args.push(&path);
            let out = ok(&run(&args));
            assert!(out.starts_with(&format!("{path}\tOK\t")), "{out}");
        }
    }
}

#[test]
fn infer_leaves_such_keys_out_and_its_spec_reads_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tf_parse = keys_json()["tf_parse"].clone();
    for (file, flags, _) in &FILES[..2] {
        let path = fixture(file);
        let mut args = vec!["infer"];
        args.extend(*flags);
        args.push(&path);
        let spec = ok(&run(&args));
        for key in non_utf8_keys(file) {
            assert!(
                spec.contains(&format!(
                    "# Left out: \"{key}\" (escaped as in the text format): the key is not UTF-8"
                )),
                "{key}: {spec}"
            );
        }
        // Every UTF-8 key is in the spec, as a table of its own.
        for k in keys_json()["keys"][*file].as_array().expect("keys") {
            if k["utf8"] == true {
                let key =
                    String::from_utf8(unhex(k["hex"].as_str().expect("hex"))).expect("a UTF-8 key");
                let bare = format!(".{key}]\n");
                let quoted = format!(".\"{key}\"]\n");
                assert!(
                    spec.contains(&bare) || spec.contains(&quoted),
                    "{key}: {spec}"
                );
            }
        }
        let spec_path = dir.path().join(format!("{file}.toml"));
        std::fs::write(&spec_path, &spec).expect("write the spec");
        let out = ok(&run(&[
            "parse",
            "--spec",
            spec_path.to_str().expect("UTF-8"),
            &path,
        ]));
        let batch = &json_lines(&out)[0];
        // The values TensorFlow's parsers read from the same file.
        match *file {
            "examples.tfrecord" => {
                assert_eq!(
                    batch["ok"]["dense"]["values"], tf_parse[file]["ok"],
                    "{batch}"
                );
            }
            _ => assert_eq!(
                batch["context"]["id"]["dense"]["values"], tf_parse[file]["id"],
                "{batch}"
            ),
        }
    }
}

#[test]
fn convert_keeps_the_key_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let of = dir.path().join("part-00000");
    let back = dir.path().join("back.tfrecord");
    let (of, back) = (of.to_str().expect("UTF-8"), back.to_str().expect("UTF-8"));
    let examples = fixture("examples.tfrecord");
    ok(&run(&[
        "convert",
        &examples,
        "-o",
        of,
        "--output-format",
        "ofrecord",
    ]));
    ok(&run(&[
        "convert",
        "--input-format",
        "ofrecord",
        of,
        "-o",
        back,
    ]));
    assert_eq!(ok(&run(&["cat", back])), read("examples.txt"));
}
