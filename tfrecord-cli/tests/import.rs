//! End-to-end tests of `tfrecord from-avro`, `from-records` and `from-images` on the bundled
//! sample data (`examples/data/`): outputs, exit statuses and error messages.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;
use tfrecord_core::proto::tensorflow::{self, feature::Kind};
use tfrecord_core::{Message, ReaderOptions, RecordReader};

mod support;
use support::{bin, ok, run, s, stderr, unsuccessful};

fn data(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/data")
        .join(rel)
        .display()
        .to_string()
}

fn examples(path: &Path) -> Vec<tensorflow::Example> {
    RecordReader::open(path, ReaderOptions::new())
        .expect("open output")
        .map(|r| tensorflow::Example::decode(&r.expect("record")[..]).expect("Example"))
        .collect()
}

fn kind<'a>(e: &'a tensorflow::Example, key: &str) -> &'a Kind {
    e.features.as_ref().expect("features").feature[key]
        .kind
        .as_ref()
        .expect("kind")
}

fn strings(e: &tensorflow::Example, key: &str) -> Vec<String> {
    match kind(e, key) {
        Kind::BytesList(l) => l
            .value
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect(),
        other => panic!("{key}: {other:?}"),
    }
}

fn ints(e: &tensorflow::Example, key: &str) -> Vec<i64> {
    match kind(e, key) {
        Kind::Int64List(l) => l.value.clone(),
        other => panic!("{key}: {other:?}"),
    }
}

#[test]
fn from_avro_writes_records_that_parse_back_to_the_tensors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("persons.tfrecord.gz");
    let spec = data("avro/persons.toml");
    let avro = data("avro/persons.avro");
    let o = out.display().to_string();
    let written = run(&["from-avro", "--spec", &spec, &avro, "-o", &o]);
    ok(&written);
    // Lists nested in lists are written flat, and said so once per feature.
    let said = stderr(&written);
    for (feature, dims) in [("friend_streets", 2), ("coworkers", 2)] {
        let warning = format!("feature \"{feature}\": its key expression has {dims} dimensions");
        assert_eq!(said.matches(&warning).count(), 1, "{said}");
    }
    // Compressed because of the name.
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b]);
    let plain = dir.path().join("p.tfrecord");
    ok(&run(&[
        "from-avro",
        "--spec",
        &spec,
        &avro,
        "-o",
        &plain.display().to_string(),
    ]));
    let records = examples(&plain);
    assert_eq!(records.len(), 5);
    assert_eq!(strings(&records[0], "first_name"), ["Alice"]);
    assert_eq!(strings(&records[3], "namesake_initials"), ["V"]);
    assert_eq!(strings(&records[2], "second_friend"), ["-"]);
    assert_eq!(ints(&records[0], "cylinders"), [4, 6]);
    assert_eq!(ints(&records[0], "multi_int"), [7]);

    // `parse --spec` on the records gives the `--tensors` output, where the dtypes agree
    // (records widen int32 and bool to int64, double to float).
    let parsed = ok(&run(&[
        "parse",
        "--spec",
        &spec,
        &plain.display().to_string(),
    ]));
    let tensors = ok(&run(&["from-avro", "--spec", &spec, "--tensors", &avro]));
    let parsed: Value = serde_json::from_str(parsed.trim()).unwrap();
    let tensors: Value = serde_json::from_str(tensors.trim()).unwrap();
    for key in [
        "first_name",
        "second_friend",
        "friends",
        "unknown_gender_friends",
        "namesake_initials",
        "nickname_car_color",
        "nickname",
        "account",
        "height",
        "eye_color",
        "photo",
        "engines",
        "age",
        "multi_int",
    ] {
        assert_eq!(parsed[key], tensors[key], "{key}");
    }
    assert_eq!(
        tensors["active"]["dense"]["values"],
        serde_json::json!([true, false, true, false, true])
    );
    // Batches.
    let batched = ok(&run(&[
        "from-avro",
        "--spec",
        &spec,
        "--tensors",
        "--batch-size",
        "2",
        &avro,
    ]));
    assert_eq!(batched.lines().count(), 3);
}

#[test]
fn from_avro_errors_name_file_record_and_feature() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.toml");
    std::fs::write(
        &spec,
        "[records.P.features.c]\nsource = \"cars['nickname'].color\"\ndtype = \"string\"\n",
    )
    .unwrap();
    let out = dir.path().join("o.tfrecord");
    let avro = data("avro/persons.avro");
    let e = unsuccessful(&run(&[
        "from-avro",
        "--spec",
        &spec.display().to_string(),
        &avro,
        "-o",
        &out.display().to_string(),
    ]));
    assert!(
        e.contains("persons.avro: record 2: feature \"c\": Unable to find key 'nickname'."),
        "{e}"
    );
    assert!(!out.exists(), "no partial output");
    // A bad key expression, an unknown spec key and a missing -o.
    std::fs::write(
        &spec,
        "[records.P.features.c]\nsource = \"cars[\"\ndtype = \"string\"\n",
    )
    .unwrap();
    let e = unsuccessful(&run(&[
        "from-avro",
        "--spec",
        &spec.display().to_string(),
        "--tensors",
        &avro,
    ]));
    assert!(e.contains("invalid key expression `cars[`"), "{e}");
    std::fs::write(
        &spec,
        "[records.P.features.c]\nsorce = \"x\"\ndtype = \"string\"\n",
    )
    .unwrap();
    let e = unsuccessful(&run(&[
        "from-avro",
        "--spec",
        &spec.display().to_string(),
        "--tensors",
        &avro,
    ]));
    assert!(e.contains("did you mean `source`?"), "{e}");
    let e = unsuccessful(&run(&[
        "from-avro",
        "--spec",
        &data("avro/persons.toml"),
        &avro,
    ]));
    assert!(e.contains("needs -o OUT"), "{e}");
    // Not an Avro file.
    let e = unsuccessful(&run(&[
        "from-avro",
        "--spec",
        &data("avro/persons.toml"),
        &data("records.csv"),
        "--tensors",
    ]));
    assert!(
        e.contains("records.csv: not an Avro object container file"),
        "{e}"
    );
    // A spec `parse` refuses would write records no spec reads back: refused for records,
    // printed as tensors.
    std::fs::write(
        &spec,
        "[records.P.features.f]\nsource = \"friends[*].address[*].street\"\ndtype = \"string\"\nkind = \"var\"\nrank = 2\n",
    )
    .unwrap();
    let spec_arg = spec.display().to_string();
    let e = unsuccessful(&run(&[
        "from-avro",
        "--spec",
        &spec_arg,
        &avro,
        "-o",
        &out.display().to_string(),
    ]));
    assert!(e.contains("would not read back with this spec"), "{e}");
    assert!(!out.exists(), "no output");
    ok(&run(&[
        "from-avro",
        "--spec",
        &spec_arg,
        &avro,
        "--tensors",
    ]));
}

#[test]
fn from_records_json_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.tfrecord");
    let o = out.display().to_string();
    ok(&run(&["from-records", &data("records.jsonl"), "-o", &o]));
    let r = examples(&out);
    assert_eq!(r.len(), 3);
    assert_eq!(ints(&r[0], "matrix"), [1, 2, 3, 4]);
    assert_eq!(strings(&r[1], "name"), ["Bo"]);

    ok(&run(&[
        "from-records",
        &data("records.csv"),
        "--spec",
        &data("records.toml"),
        "-o",
        &o,
        "--force",
    ]));
    let r = examples(&out);
    assert_eq!(ints(&r[2], "label"), [3]);
    assert_eq!(strings(&r[0], "city"), ["Paris, France"]);

    // A `.txt` name is neither format: JSON Lines unless `--format csv` says otherwise (it
    // was read as CSV, turning JSON into a header and cells without a word).
    let txt = dir.path().join("data.txt");
    std::fs::write(&txt, "{\"a\":1}\n{\"a\":2}\n").unwrap();
    let t = txt.display().to_string();
    ok(&run(&["from-records", &t, "-o", &o, "--force"]));
    let r = examples(&out);
    assert_eq!((ints(&r[0], "a"), ints(&r[1], "a")), (vec![1], vec![2]));
    // CSV in it, read so, says how to read it as CSV.
    std::fs::write(&txt, "a,b\n1,2\n").unwrap();
    let e = unsuccessful(&run(&["from-records", &t, "-o", &o, "--force"]));
    assert!(e.contains("pass --format csv for CSV (line 1)"), "{e}");
    // A delimiter must be one byte of the file (`é` is U+00E9 but two bytes in UTF-8), and not
    // CSV's quote.
    std::fs::write(&txt, "a\u{e9}b\n1\u{e9}2\n").unwrap();
    for (delimiter, why) in [
        ("\u{e9}", "not an ASCII character"),
        ("\"", "CSV's quote or a line end"),
    ] {
        let args = [
            "from-records",
            &t,
            "--format",
            "csv",
            "--delimiter",
            delimiter,
            "-o",
            &o,
            "--force",
        ];
        let e = run(&args);
        assert_eq!(e.status.code(), Some(2), "{}", stderr(&e));
        assert!(stderr(&e).contains(why), "{}", stderr(&e));
    }

    // Standard input needs --format for CSV; OFRecord output.
    let of = dir.path().join("part-00000");
    let csv = std::fs::read(data("records.csv")).unwrap();
    let mut child = bin()
        .args([
            "from-records",
            "--format",
            "csv",
            "-",
            "-o",
            &of.display().to_string(),
            "--output-format",
            "ofrecord",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(&csv).unwrap();
    }
    let o2 = child.wait_with_output().unwrap();
    ok(&o2);
    let n = ok(&run(&[
        "count",
        "--input-format",
        "ofrecord",
        &of.display().to_string(),
    ]));
    assert_eq!(n.trim(), "3");

    // Unmappable: an error, or a warning with --skip-unmappable.
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"a\": [{\"b\": 1}], \"c\": 1}\n").unwrap();
    let e = unsuccessful(&run(&[
        "from-records",
        &bad.display().to_string(),
        "-o",
        &o,
        "--force",
    ]));
    assert!(
        e.contains("bad.jsonl: record 0: field \"a\": a list of objects cannot be a feature"),
        "{e}"
    );
    let o3 = run(&[
        "from-records",
        "--skip-unmappable",
        &bad.display().to_string(),
        "-o",
        &o,
        "--force",
    ]);
    ok(&o3);
    assert!(
        stderr(&o3).contains("tfrecord: warning: "),
        "{}",
        stderr(&o3)
    );
    let r = examples(&out);
    assert_eq!(
        r[0].features
            .as_ref()
            .unwrap()
            .feature
            .keys()
            .collect::<Vec<_>>(),
        ["c"]
    );
}

/// A lossy `double` is rounded into a float list; a value beyond the float's range would become
/// infinity, so it is an error naming the row and feature, and nothing is left under the
/// output's name. OFRecord keeps the double.
#[test]
fn from_records_refuses_a_double_beyond_the_float_range() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("d.csv");
    std::fs::write(&csv, "x\n0.5\n1e300\n").unwrap();
    let spec = dir.path().join("d.toml");
    std::fs::write(
        &spec,
        "[records.R.features.x]\ndtype = \"double\"\nkind = \"fixed\"\nlossy = true\n",
    )
    .unwrap();
    let out = dir.path().join("d.tfrecord");
    let of = dir.path().join("part-00000");
    // `from-records CSV --spec SPEC -o OUT`, then `extra`.
    let from_records = |to: &std::path::Path, extra: &[&str]| {
        let mut args = vec!["from-records", s(&csv), "--spec", s(&spec), "-o", s(to)];
        args.extend_from_slice(extra);
        run(&args)
    };
    let e = unsuccessful(&from_records(&out, &[]));
    assert!(
        e.contains("d.csv: record 1: feature \"x\": 1e300 is beyond the range of a float"),
        "{e}"
    );
    assert!(!out.exists(), "no output under the final name");

    ok(&from_records(&of, &["--output-format", "ofrecord"]));
    let json = ok(&run(&[
        "cat",
        "--json",
        "--input-format",
        "ofrecord",
        s(&of),
    ]));
    assert!(json.contains("1e+300") || json.contains("1e300"), "{json}");

    // A spec of the OFRecord dialect keeps doubles: read into a tf.train.Example they would be
    // rounded, which only `lossy` allows.
    std::fs::write(
        &spec,
        "[records.R]\ndialect = \"ofrecord\"\n[records.R.features.x]\ndtype = \"double\"\nkind = \"fixed\"\n",
    )
    .unwrap();
    let e = unsuccessful(&from_records(&out, &[]));
    assert!(
        e.contains("feature `x` is a `double`") && e.contains("lossy"),
        "{e}"
    );
    assert!(!out.exists(), "no output under the final name");
    ok(&from_records(
        &of,
        &["--output-format", "ofrecord", "--force"],
    ));
}

#[test]
fn from_images_shards_and_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let flowers = data("flowers");
    let out = dir.path().join("flowers.tfrecord");
    let o = run(&[
        "from-images",
        &flowers,
        "-o",
        &out.display().to_string(),
        "--shards",
        "4",
        "--seed",
        "3",
    ]);
    ok(&o);
    assert!(stderr(&o).contains("8 images (3 classes) written to 4 files"));
    let mut all: Vec<(String, i64)> = Vec::new();
    for i in 0..4 {
        let shard: PathBuf = dir.path().join(format!("flowers-{i:05}-of-00004.tfrecord"));
        for e in examples(&shard) {
            all.push((
                strings(&e, "image/filename")[0].clone(),
                ints(&e, "label")[0],
            ));
        }
    }
    assert_eq!(all.len(), 8);
    assert!(all.contains(&("tulips/tulips_2.png".to_string(), 2)));

    // The same seed, one stream on standard output: the same order.
    let o = run(&["from-images", &flowers, "-o", "-", "--seed", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let file = dir.path().join("stdout.tfrecord");
    std::fs::write(&file, &o.stdout).unwrap();
    let order: Vec<(String, i64)> = examples(&file)
        .iter()
        .map(|e| (strings(e, "image/filename")[0].clone(), ints(e, "label")[0]))
        .collect();
    assert_eq!(order, all);
    // --no-shuffle keeps name order.
    let o = run(&["from-images", &flowers, "-o", "-", "--no-shuffle"]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(&file, &o.stdout).unwrap();
    let names: Vec<String> = examples(&file)
        .iter()
        .map(|e| strings(e, "image/filename")[0].clone())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);

    // OFRecord part files.
    let of = dir.path().join("of");
    ok(&run(&[
        "from-images",
        &flowers,
        "-o",
        &of.display().to_string(),
        "--output-format",
        "ofrecord",
        "--shards",
        "2",
    ]));
    let n = ok(&run(&[
        "count",
        "--input-format",
        "ofrecord",
        &of.display().to_string(),
    ]));
    assert_eq!(n.lines().last(), Some("8"));

    let e = unsuccessful(&run(&["from-images", &flowers, "-o", "-", "--shards", "2"]));
    assert!(e.contains("--shards needs a file output"), "{e}");
    let e = unsuccessful(&run(&[
        "from-images",
        &dir.path().join("nope").display().to_string(),
        "-o",
        &out.display().to_string(),
    ]));
    assert!(e.contains("nope"), "{e}");
}

#[test]
fn from_images_refuses_a_truncated_image() {
    // A class folder of a good PNG and a JPEG cut inside its scan data, which
    // tf.io.decode_image refuses: the import fails naming the file, and leaves no output.
    let dir = tempfile::tempdir().unwrap();
    let class = dir.path().join("in").join("cls");
    std::fs::create_dir_all(&class).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/images");
    std::fs::copy(fixtures.join("rgb.png"), class.join("good.png")).unwrap();
    let jpeg = std::fs::read(fixtures.join("rgb.jpg")).unwrap();
    // Its scan data is bytes 623..665.
    std::fs::write(class.join("cut.jpg"), &jpeg[..650]).unwrap();
    let input = dir.path().join("in").display().to_string();
    let out = dir.path().join("out.tfrecord");
    let e = unsuccessful(&run(&[
        "from-images",
        &input,
        "-o",
        &out.display().to_string(),
    ]));
    assert!(
        e.contains("cut.jpg") && e.contains("truncated JPEG: the file ends inside its scan data"),
        "{e}"
    );
    assert!(!out.exists());
    // Standard output too.
    let e = unsuccessful(&run(&["from-images", &input, "-o", "-"]));
    assert!(e.contains("cut.jpg") && e.contains("truncated JPEG"), "{e}");

    // The whole file imports; a file that is not an image by its extension is noted.
    std::fs::write(class.join("cut.jpg"), &jpeg).unwrap();
    std::fs::write(class.join("notes.txt"), b"x").unwrap();
    let o = run(&["from-images", &input, "-o", &out.display().to_string()]);
    ok(&o);
    assert!(
        stderr(&o).contains("2 images (1 class) written to 1 file")
            && stderr(&o).contains("note: 1 file left out, not an image by its extension (jpg")
            && stderr(&o).contains("notes.txt"),
        "{}",
        stderr(&o)
    );
}

/// Every importer refuses to write over an existing output without `--force`, with the message
/// `convert` gives, and leaves the file as it was; with `--force` it writes over it. Missing
/// directories of the output are made.
#[test]
fn importers_refuse_an_existing_output_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("new").join("dir").join("out.tfrecord");
    let o = out.display().to_string();
    let spec = data("avro/persons.toml");
    let avro = data("avro/persons.avro");
    let flowers = data("flowers");
    let records = data("records.jsonl");
    let commands: [Vec<&str>; 3] = [
        vec!["from-records", &records],
        vec!["from-avro", "--spec", &spec, &avro],
        vec!["from-images", &flowers],
    ];
    for args in &commands {
        let _ = std::fs::remove_file(&out);
        let first = [&args[..], &["-o", &o]].concat();
        let written = run(&first);
        assert!(written.status.success(), "{args:?}: {}", stderr(&written));
        std::fs::write(&out, b"keep").unwrap();
        let again = run(&first);
        assert_eq!(again.status.code(), Some(1), "{args:?}");
        let e = stderr(&again);
        assert!(
            e.contains(&format!(
                "{o}: the output exists; pass --force to write over it"
            )),
            "{args:?}: {e}"
        );
        assert_eq!(std::fs::read(&out).unwrap(), b"keep", "{args:?}");
        let forced = [&args[..], &["-o", &o, "--force"]].concat();
        let o2 = run(&forced);
        assert!(o2.status.success(), "{args:?}: {}", stderr(&o2));
        assert_ne!(std::fs::read(&out).unwrap(), b"keep", "{args:?}");
        // A symbolic link to nothing is an output there too.
        #[cfg(unix)]
        {
            std::fs::remove_file(&out).unwrap();
            std::os::unix::fs::symlink(dir.path().join("nowhere"), &out).unwrap();
            let e = stderr(&run(&first));
            assert!(e.contains("a symbolic link to nothing"), "{args:?}: {e}");
            assert!(
                std::fs::symlink_metadata(&out)
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
        }
    }
}

/// `from-images --shards N` refuses another shard set of its output's name without `--force`
/// (as `convert` does); with it, the old set's files that the new set does not write over are
/// removed, each named on standard error.
#[test]
fn from_images_shards_replace_another_set_only_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let flowers = data("flowers");
    let out = dir.path().join("flowers.tfrecord").display().to_string();
    let shards = |n: &str, force: bool| {
        let mut args = vec!["from-images", &flowers, "-o", &out, "--shards", n];
        if force {
            args.push("--force");
        }
        run(&args)
    };
    ok(&shards("3", false));
    let e = unsuccessful(&shards("2", false));
    assert!(
        e.contains("flowers-00000-of-00003.tfrecord: another shard set of this output's name")
            && e.contains("--force"),
        "{e}"
    );
    let o = shards("2", true);
    ok(&o);
    let e = stderr(&o);
    for i in 0..3 {
        assert!(
            e.contains(&format!(
                "tfrecord: note: removed {} (a shard of another set",
                dir.path()
                    .join(format!("flowers-{i:05}-of-00003.tfrecord"))
                    .display()
            )),
            "{e}"
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "flowers-00000-of-00002.tfrecord",
            "flowers-00001-of-00002.tfrecord"
        ]
    );
}

/// The importers name standard input `<stdin>` in their errors, as every reader does.
#[test]
fn importers_name_standard_input_as_readers_do() {
    let dir = tempfile::tempdir().expect("temp dir");
    let spec = dir.path().join("a.toml");
    std::fs::write(&spec, "[records.E.features.a]\ndtype = \"int64\"\n").expect("write spec");
    let out = dir.path().join("o.tfrecord");
    let o = support::run_with_stdin(
        &[
            "from-avro",
            "--spec",
            support::s(&spec),
            "-",
            "-o",
            support::s(&out),
        ],
        b"garbage\n",
    );
    let err = support::stderr(&o);
    assert!(
        err.contains("<stdin>: not an Avro object container"),
        "{err}"
    );
    let o = support::run_with_stdin(
        &["from-records", "-", "-o", support::s(&out)],
        b"{\"a\": 1}\n{\"a\": \"x\"}\n",
    );
    let err = support::stderr(&o);
    assert!(err.contains("<stdin>: record 1"), "{err}");
}

/// An output that is a FIFO (or a device) is written in place, never replaced by a regular
/// file (`from-images -o /dev/null` once replaced the device), as every other writer does.
#[cfg(unix)]
#[test]
fn from_images_writes_into_a_fifo_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("ff");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return; // no mkfifo here: nothing to check
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let o = run(&[
        "from-images",
        &data("flowers"),
        "-o",
        &fifo.display().to_string(),
    ]);
    ok(&o);
    let bytes = reader.join().unwrap();
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    let copy = dir.path().join("copy.tfrecord");
    std::fs::write(&copy, bytes).unwrap();
    assert_eq!(examples(&copy).len(), 8);
}

/// `from-records` reads its input twice: a FIFO is read into memory first, as standard input
/// is (opened again, it would wait for a writer that is gone).
#[cfg(unix)]
#[test]
fn from_records_reads_a_fifo_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("in.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return; // no mkfifo here: nothing to check
    }
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, "{\"a\": 1}\n{\"a\": 2.5}\n").unwrap())
    };
    let out = dir.path().join("o.tfrecord");
    let o = run(&[
        "from-records",
        &fifo.display().to_string(),
        "-o",
        &out.display().to_string(),
    ]);
    ok(&o);
    writer.join().unwrap();
    assert_eq!(examples(&out).len(), 2);
}
