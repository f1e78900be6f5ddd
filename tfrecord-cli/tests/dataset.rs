//! The data set flags of the reading commands (`--shard`, `--shuffle --seed`, `--skip`,
//! `--limit`, `--max-bad-records`, `--resync`), globs and shard directories as inputs, and
//! `convert --shards` / `--force`, through the `tfrecord` binary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tfrecord_core::proto::tensorflow::{Example, Feature, Features, Int64List, feature};
use tfrecord_core::{Message, ReaderOptions, RecordReader, RecordWriter, WriterOptions};

mod support;
use support::{ok, run, s};

/// An Example whose `id` feature is `id`.
fn example(id: i64) -> Vec<u8> {
    let mut f = Features::default();
    let list = feature::Kind::Int64List(Int64List { value: vec![id] });
    f.feature.insert("id".into(), Feature { kind: Some(list) });
    Example { features: Some(f) }.encode_to_vec()
}

fn write(path: &Path, ids: impl IntoIterator<Item = i64>) {
    let mut w = RecordWriter::create(path, WriterOptions::new()).expect("create");
    for id in ids {
        w.write(&example(id)).expect("write");
    }
    w.finish().expect("finish");
}

/// The `id`s `cat --json` prints, in order.
fn ids(out: &str) -> Vec<i64> {
    out.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json line");
            v["features"]["feature"]["id"]["int64List"]["value"][0]
                .as_str()
                .expect("an id")
                .parse()
                .expect("a number")
        })
        .collect()
}

/// Three TensorFlow-named shards (120 records) and one big file (500), as a directory.
fn data() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let set = dir.path().join("set");
    std::fs::create_dir(&set).expect("mkdir");
    for k in 0..3 {
        let path = set.join(format!("train-{k:05}-of-00003.tfrecord"));
        write(&path, (k * 40)..(k * 40 + 40));
    }
    let big = dir.path().join("big.tfrecord");
    write(&big, 1000..1500);
    (dir, big)
}

fn sorted(mut v: Vec<i64>) -> Vec<i64> {
    v.sort_unstable();
    v
}

#[test]
fn shards_hold_every_record_once_for_files_directories_and_globs() {
    let (dir, big) = data();
    let set = dir.path().join("set");
    let pattern = format!("{}/train-*", s(&set));
    for inputs in [
        vec![s(&set)],
        vec![pattern.as_str()],
        vec![s(&big)],
        vec![s(&set), s(&big)],
    ] {
        let mut all_args = vec!["cat", "--json"];
        all_args.extend(&inputs);
        let all = ids(&ok(&run(&all_args)));
        assert!(!all.is_empty());
        for n in [2, 3, 5] {
            let mut union = Vec::new();
            for i in 0..n {
                let shard = format!("{i}/{n}");
                let mut args = vec!["cat", "--json", "--shard", &shard];
                args.extend(&inputs);
                let got = ids(&ok(&run(&args)));
                // One file over five workers: its byte ranges give every worker records.
                assert!(!got.is_empty(), "{inputs:?}: shard {shard} is empty");
                let mut count_args = vec!["count", "--shard", &shard];
                count_args.extend(&inputs);
                let counted: usize = ok(&run(&count_args)).trim().parse().expect("a count");
                assert_eq!(counted, got.len(), "{inputs:?} {shard}");
                union.extend(got);
            }
            assert_eq!(sorted(union), sorted(all.clone()), "{inputs:?}, {n} shards");
        }
    }
    let err = run(&["cat", "--shard", "2/2", s(&big)]);
    assert_eq!(
        err.status.code(),
        Some(2),
        "an index past the count is a usage error"
    );
}

#[test]
fn shuffle_is_reproducible_and_skip_and_limit_come_after_it() {
    let (dir, big) = data();
    let set = dir.path().join("set");
    let shuffled = |seed: &str| {
        ids(&ok(&run(&[
            "cat",
            "--json",
            "--shuffle",
            "--seed",
            seed,
            s(&set),
            s(&big),
        ])))
    };
    let a = shuffled("7");
    assert_eq!(a, shuffled("7"), "the same seed gives the same order");
    assert_ne!(a, shuffled("8"));
    let plain = ids(&ok(&run(&["cat", "--json", s(&set), s(&big)])));
    assert_ne!(a, plain);
    assert_eq!(sorted(a.clone()), sorted(plain.clone()));
    let cut = ids(&ok(&run(&[
        "cat",
        "--json",
        "--shuffle",
        "--seed",
        "7",
        "--skip",
        "100",
        "--limit",
        "25",
        s(&set),
        s(&big),
    ])));
    assert_eq!(cut, a[100..125]);
    let head = ids(&ok(&run(&[
        "cat",
        "--json",
        "--skip",
        "3",
        "--limit",
        "5",
        s(&big),
    ])));
    assert_eq!(head, (1003..1008).collect::<Vec<_>>());
}

/// The records per file of `verify`'s output lines (`<file>\tOK\t<n> records`), and its
/// closing line.
fn verified(out: &str) -> (BTreeMap<String, u64>, String) {
    let mut lines: Vec<&str> = out.lines().collect();
    let last = lines.pop().expect("a closing line").to_string();
    let per_file = lines
        .iter()
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols[1], "OK", "{out}");
            let n = cols[2].split(' ').next().expect("a count");
            (cols[0].to_string(), n.parse().expect("a number"))
        })
        .collect();
    (per_file, last)
}

#[test]
fn verify_chooses_records_over_all_inputs_as_cat_does() {
    let (dir, big) = data();
    let set = dir.path().join("set");
    let total = |m: &BTreeMap<String, u64>| m.values().sum::<u64>();
    // --limit and --skip count over all inputs, not per file.
    let (files, last) = verified(&ok(&run(&["verify", "--limit", "50", s(&set), s(&big)])));
    assert_eq!(files.len(), 4);
    assert_eq!(total(&files), 50);
    assert_eq!(files[s(&big)], 0, "the first 50 records are all in the set");
    assert_eq!(last, "all 4 files intact");
    let (files, _) = verified(&ok(&run(&["verify", "--skip", "600", s(&set), s(&big)])));
    assert_eq!(total(&files), 20);
    assert_eq!(files[s(&big)], 20);
    // Each shard checks the records `cat` gives it; together, every record once.
    let mut sum = 0;
    for i in 0..3 {
        let shard = format!("{i}/3");
        let (files, _) = verified(&ok(&run(&["verify", "--shard", &shard, s(&set), s(&big)])));
        let cat = ids(&ok(&run(&[
            "cat",
            "--json",
            "--shard",
            &shard,
            s(&set),
            s(&big),
        ])));
        assert_eq!(total(&files), cat.len() as u64, "shard {shard}");
        sum += total(&files);
    }
    assert_eq!(sum, 620);
}

/// The byte offset of each record of a plain TFRecord file.
fn offsets(path: &Path) -> Vec<u64> {
    let mut r = RecordReader::open(path, ReaderOptions::new()).expect("open");
    let mut out = Vec::new();
    let mut buf = Vec::new();
    loop {
        let at = r.offset();
        if !r.read_into(&mut buf).expect("read") {
            return out;
        }
        out.push(at);
    }
}

#[test]
fn damaged_records_are_skipped_within_the_budget_and_each_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("damaged.tfrecord");
    write(&path, 0..10);
    let at = offsets(&path);
    let mut bytes = std::fs::read(&path).expect("read");
    // A flipped bit in record 3's payload (its data checksum fails), and garbage after record 6.
    let payload3 = usize::try_from(at[3]).expect("small") + 12;
    bytes[payload3] ^= 0x01;
    let after6 = usize::try_from(at[7]).expect("small");
    bytes.splice(after6..after6, [0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x02]);
    std::fs::write(&path, &bytes).expect("write");

    // Failing is the default.
    assert_eq!(run(&["count", s(&path)]).status.code(), Some(1));
    // A budget of 1 skips record 3, then stops at the garbage (no resync).
    let o = run(&["cat", "--json", "--max-bad-records", "1", s(&path)]);
    assert_eq!(o.status.code(), Some(1));
    // Resync within a budget of 2: every sound record, each skip on its own line.
    let o = run(&[
        "cat",
        "--json",
        "--resync",
        "--max-bad-records",
        "2",
        s(&path),
    ]);
    let got = ids(&ok(&o));
    assert_eq!(got, [0, 1, 2, 4, 5, 6, 7, 8, 9]);
    let err = String::from_utf8(o.stderr).expect("utf-8");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(lines.len(), 2, "two skip lines: {err}");
    assert_eq!(
        err.lines().last(),
        Some(
            "tfrecord: in all, passed over 1 damaged record(s) and 1 damaged byte range(s) (38 bytes)"
        ),
        "a total that does not say skipped: {err}"
    );
    assert!(
        lines[0].contains(s(&path)) && lines[0].contains(&format!("byte {}", at[3])),
        "{err}"
    );
    assert!(lines[1].contains(&format!("byte {}", at[7])), "{err}");
    // Over budget: an error that says so.
    let o = run(&["count", "--resync", "--max-bad-records", "1", s(&path)]);
    assert_eq!(o.status.code(), Some(1));
    // A first pass (inferring the spec) that runs over the budget reports what it skipped.
    let parquet = dir.path().join("out.parquet");
    let o = run(&[
        "to-parquet",
        "--resync",
        "--max-bad-records",
        "1",
        s(&path),
        "-o",
        s(&parquet),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.lines()
            .any(|l| l.contains("skipped") && l.contains(&format!("byte {}", at[3]))),
        "{err}"
    );
    // verify takes the budget too, and names a file whose damage it skipped.
    let o = run(&["verify", "--resync", "--max-bad-records", "2", s(&path)]);
    assert!(
        ok(&o).contains("DAMAGED\t9 records, 2 damaged record(s) or byte range(s) skipped"),
        "{o:?}"
    );
    // One budget over every file: two copies of the damage need 4.
    let copy = dir.path().join("copy.tfrecord");
    std::fs::write(&copy, &bytes).expect("write");
    let clean = dir.path().join("clean.tfrecord");
    write(&clean, 0..3);
    let args = ["verify", "--resync", "--max-bad-records"];
    let o = run(&[&args[..], &["3", s(&path), s(&copy), s(&clean)]].concat());
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let o = run(&[&args[..], &["4", s(&path), s(&copy), s(&clean)]].concat());
    let out = ok(&o);
    assert!(out.contains("clean.tfrecord\tOK\t3 records"), "{out}");
    assert!(
        out.ends_with("2 of 3 files DAMAGED, the damage skipped within the budget\n"),
        "{out}"
    );
}

#[test]
fn convert_writes_shards_and_refuses_an_existing_output_without_force() {
    let (dir, big) = data();
    let out = dir.path().join("out").join("train.tfrecord");
    std::fs::create_dir(out.parent().expect("parent")).expect("mkdir");
    ok(&run(&["convert", "--shards", "4", "-o", s(&out), s(&big)]));
    let names: Vec<String> = std::fs::read_dir(out.parent().expect("parent"))
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        names,
        (0..4)
            .map(|i| format!("train-{i:05}-of-00004.tfrecord"))
            .collect::<Vec<_>>()
    );
    let mut per_shard = BTreeMap::new();
    let mut union = Vec::new();
    for name in &names {
        let got = ids(&ok(&run(&["cat", "--json", s(&out.with_file_name(name))])));
        per_shard.insert(name.clone(), got.len());
        union.extend(got);
    }
    assert_eq!(sorted(union), (1000..1500).collect::<Vec<_>>());
    assert!(per_shard.values().all(|&n| n == 125), "{per_shard:?}");
    // The same again is refused: the shards exist.
    assert_eq!(
        run(&["convert", "--shards", "4", "-o", s(&out), s(&big)])
            .status
            .code(),
        Some(1)
    );
    ok(&run(&[
        "convert",
        "--shards",
        "4",
        "--force",
        "-o",
        s(&out),
        s(&big),
    ]));

    // OFRecord into a directory: OneFlow's part files, read back as a directory of parts.
    // A name ending with `/` is a directory to make; an existing directory is one too.
    let parts = dir.path().join("parts");
    let slash = format!("{}/", parts.display());
    let of = |extra: &[&str]| {
        let base = [
            "convert",
            "--output-format",
            "ofrecord",
            "-o",
            &slash,
            s(&big),
        ];
        run(&[&base[..], extra].concat())
    };
    ok(&of(&["--shards", "3"]));
    let names: std::collections::BTreeSet<String> = std::fs::read_dir(&parts)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    let want: std::collections::BTreeSet<String> = (0..3).map(|i| format!("part-{i:05}")).collect();
    assert_eq!(names, want);
    let total = ok(&run(&["count", "--input-format", "ofrecord", s(&parts)]));
    assert_eq!(total.lines().last(), Some("500"), "{total}");
    assert_eq!(of(&[]).status.code(), Some(1), "the parts exist");
    // OneFlow reads its parts uncompressed: a compressed part set is refused.
    let gz = of(&["--force", "--compression", "gzip"]);
    assert_eq!(gz.status.code(), Some(2), "{gz:?}");
    let base = ["convert", "--output-format", "ofrecord", "--force", "-o"];
    ok(&run(&[&base[..], &[s(&parts), s(&big)]].concat()));
    assert_eq!(
        std::fs::read_dir(&parts).expect("list").count(),
        1,
        "one part"
    );
}

/// File names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Without --force, another shard set of the output's name is refused with a message that
/// says so, names one of its files and says what --force does; with --force, each file of the
/// other sets that is removed is named on standard error.
#[test]
fn forced_shards_name_every_file_of_another_set_they_remove() {
    let (dir, big) = data();
    let out = dir.path().join("o1").join("train.tfrecord");
    ok(&run(&["convert", "--shards", "3", "-o", s(&out), s(&big)]));
    let o1 = out.parent().expect("parent");
    let unrelated = o1.join("train-00009-of-00012.tfrecord");
    std::fs::copy(&big, &unrelated).expect("copy");
    let before = listing(o1);

    let o = run(&["convert", "--shards", "1", "-o", s(&out), s(&big)]);
    let err = support::fails(&o);
    assert!(
        err.contains("train-00000-of-00003.tfrecord: another shard set of this output's name")
            && err.contains("--force replaces it"),
        "{err}"
    );
    assert_eq!(listing(o1), before, "nothing written or removed");

    let o = run(&[
        "convert",
        "--shards",
        "1",
        "--force",
        "-o",
        s(&out),
        s(&big),
    ]);
    let err = support::stderr(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(listing(o1), ["train-00000-of-00001.tfrecord"]);
    for name in [
        "train-00000-of-00003.tfrecord",
        "train-00001-of-00003.tfrecord",
        "train-00002-of-00003.tfrecord",
        "train-00009-of-00012.tfrecord",
    ] {
        let line = format!(
            "tfrecord: note: removed {} (a shard of another set of this output's name)",
            o1.join(name).display()
        );
        assert!(err.lines().any(|l| l == line), "{name}: {err}");
    }
    assert_eq!(err.lines().count(), 4, "{err}");

    // An in-place reshard by record count: the inputs are the set replaced, and named.
    let o = run(&[
        "convert",
        &format!("{}/train-*", o1.display()),
        "--max-records-per-shard",
        "300",
        "--force",
        "-o",
        s(&out),
    ]);
    let err = support::stderr(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(
        listing(o1),
        [
            "train-00000-of-00002.tfrecord",
            "train-00001-of-00002.tfrecord"
        ]
    );
    assert!(
        err.contains("removed ") && err.contains("train-00000-of-00001.tfrecord"),
        "{err}"
    );
    let total = ok(&run(&["count", s(o1)]));
    assert_eq!(total.lines().last(), Some("500"));
    let help = ok(&run(&["convert", "--help"]));
    assert!(help.contains("removed"), "{help}");
}

/// A single output file in a directory that does not exist yet: the directories are made, as
/// for a sharded output.
#[test]
fn convert_makes_the_missing_directories_of_a_single_output() {
    let (dir, big) = data();
    let out = dir.path().join("missing").join("dir").join("x.tfrecord");
    ok(&run(&["convert", s(&big), "-o", s(&out)]));
    let total = ok(&run(&["count", s(&out)]));
    assert_eq!(total.trim(), "500");
    assert_eq!(listing(out.parent().expect("parent")), ["x.tfrecord"]);
}

/// Records longer than the length limit are refused with an error that names the flag raising
/// it; raised, they read (TensorFlow has no limit).
#[test]
fn the_record_length_limit_is_named_and_raised_by_a_flag() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("long.tfrecord");
    let mut w = RecordWriter::create(&path, WriterOptions::new()).expect("create");
    w.write(&[7u8; 10]).expect("write");
    w.write(&[7u8; 5000]).expect("write");
    w.finish().expect("finish");
    for cmd in ["count", "verify"] {
        let o = run(&[cmd, "--max-record-len", "4096", s(&path)]);
        assert_eq!(o.status.code(), Some(1), "{cmd}");
        let err = support::stderr(&o);
        assert!(
            err.contains("declares length 5000") && err.contains("--max-record-len"),
            "{cmd}: {err}"
        );
    }
    let count = ok(&run(&["count", "--max-record-len", "5000", s(&path)]));
    assert_eq!(count.trim(), "2");
    let out = dir.path().join("copy.tfrecord");
    ok(&run(&[
        "convert",
        "--max-record-len",
        "8000",
        s(&path),
        "-o",
        s(&out),
    ]));
    assert_eq!(
        std::fs::read(&out).expect("read"),
        std::fs::read(&path).expect("read")
    );
}

/// Standard input can be read once: `-` given twice is a usage error, not a second, empty
/// read.
#[test]
fn standard_input_given_twice_is_a_usage_error() {
    let o = support::run_with_stdin(&["count", "-", "-"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(support::stderr(&o).contains("more than once"));
}

/// A misused command line exits with status 2 and the tool's own error form, whether clap or
/// a command finds it (`verify` included, which otherwise goes on past a failing file).
#[test]
fn misused_command_lines_exit_2_in_the_tools_error_form() {
    for args in [
        &["count", "--bogus"][..],
        &["count", "--limit", "x", "-"],
        &["verify", "--shard", "0/2", "-"],
        &["cat", "--shuffle", "-"],
        &["count", "--threads", "2000", "-"],
    ] {
        let o = support::run_with_stdin(args, b"");
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        let err = support::stderr(&o);
        assert!(err.starts_with("tfrecord: error: "), "{args:?}: {err}");
    }
}

/// `--force` over a bare output name (a file of the current directory) keeps the new shards
/// and removes only the stale ones of another count.
#[test]
fn forced_shards_under_a_bare_name_are_kept() {
    let (dir, big) = data();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).expect("mkdir");
    let convert = |shards: &str| {
        let o = support::bin()
            .args([
                "convert",
                "--force",
                "--shards",
                shards,
                "-o",
                "k.tfrecord",
                s(&big),
            ])
            .current_dir(&work)
            .output()
            .expect("run");
        assert!(o.status.success(), "{o:?}");
        let mut names: Vec<String> = std::fs::read_dir(&work)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        convert("3"),
        [
            "k-00000-of-00003.tfrecord",
            "k-00001-of-00003.tfrecord",
            "k-00002-of-00003.tfrecord"
        ]
    );
    assert_eq!(
        convert("2"),
        ["k-00000-of-00002.tfrecord", "k-00001-of-00002.tfrecord"],
        "the set of 3 is replaced"
    );
}

/// Through a shuffle as in order: a record whose checksums pass but which is no Example is
/// skipped under the budget and reported at its own byte offset, also right after a record
/// whose checksum fails.
#[test]
fn undecodable_records_are_skipped_alike_in_order_and_shuffled() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("m.tfrecord");
    let mut w = RecordWriter::create(&path, WriterOptions::new()).expect("create");
    for id in 0..5 {
        if id == 2 {
            w.write(&[0xff, 0xff, 0xff, 0xff]).expect("write");
        } else {
            w.write(&example(id)).expect("write");
        }
    }
    w.finish().expect("finish");
    let at = offsets(&path);
    let mut bytes = std::fs::read(&path).expect("read");
    bytes[usize::try_from(at[1]).expect("small") + 12] ^= 0x01; // record 1's checksum fails
    std::fs::write(&path, &bytes).expect("write");
    for extra in [&[][..], &["--shuffle", "--seed", "0"]] {
        let mut args = vec!["cat", "--json", "--max-bad-records", "2"];
        args.extend_from_slice(extra);
        args.push(s(&path));
        let o = run(&args);
        assert_eq!(sorted(ids(&ok(&o))), [0, 3, 4], "{extra:?}");
        let err = support::stderr(&o);
        assert!(
            err.contains(&format!("skipped the record at byte {}", at[1])),
            "{err}"
        );
        assert!(
            err.contains(&format!("skipped the record at byte {}", at[2])),
            "{err}"
        );
        // Over the budget: the error names the undecodable record itself.
        args[3] = "1";
        let err = support::stderr(&run(&args));
        assert!(
            err.contains(&format!("at byte {} (record 2)", at[2])),
            "{extra:?}: {err}"
        );
    }
    // Commands that decode in batches skip it too, as they read it (both passes of an
    // inferred to-parquet).
    let spec = dir.path().join("s.toml");
    std::fs::write(&spec, "[records.R.features.id]\ndtype = \"int64\"\n").expect("spec");
    let parquet = dir.path().join("o.parquet");
    for args in [
        vec![
            "parse",
            "--spec",
            s(&spec),
            "--max-bad-records",
            "2",
            s(&path),
        ],
        vec![
            "to-parquet",
            "--max-bad-records",
            "2",
            s(&path),
            "-o",
            s(&parquet),
        ],
    ] {
        let o = run(&args);
        let err = support::stderr(&o);
        assert!(o.status.success(), "{args:?}: {err}");
        let lines = err
            .lines()
            .filter(|l| l.contains("skipped the record at byte"));
        assert_eq!(lines.count(), 2, "{args:?}: each skip reported once: {err}");
    }
}

/// Under a byte-range `--shard`, record indices count from the split's first record, and a
/// decode error says so, with the byte offset of that first record; in order, they count from
/// the file's start.
#[test]
fn errors_in_a_byte_range_split_say_where_its_record_indices_count_from() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("one.tfrecord");
    // Ten records of one size (long enough for three byte ranges); the ninth has no `id`.
    let mut w = RecordWriter::create(&file, WriterOptions::new()).expect("create");
    for id in 0..10 {
        let key = if id == 8 { "di" } else { "id" };
        let mut f = Features::default();
        let list = feature::Kind::Int64List(Int64List { value: vec![id] });
        f.feature.insert(key.into(), Feature { kind: Some(list) });
        let pad = feature::Kind::Int64List(Int64List {
            value: vec![0; 100],
        });
        f.feature.insert("pad".into(), Feature { kind: Some(pad) });
        w.write(&Example { features: Some(f) }.encode_to_vec())
            .expect("write");
    }
    w.finish().expect("finish");
    let spec = dir.path().join("s.toml");
    std::fs::write(&spec, "[records.R.features.id]\ndtype = \"int64\"\n").expect("spec");
    let at = offsets(&file);

    let first = RecordReader::open_split(&file, 2, 3, ReaderOptions::new())
        .expect("opens")
        .record_base()
        .expect("a byte-range split");
    let k = at
        .iter()
        .position(|&o| o == first)
        .expect("a record boundary");
    assert!(
        k <= 8,
        "the last split holds the ninth record: it starts at record {k}"
    );
    for cmd in ["parse", "to-parquet"] {
        let out = dir.path().join("o.parquet");
        let mut args = vec![cmd, "--spec", s(&spec), "--shard", "2/3", s(&file)];
        if cmd == "to-parquet" {
            args.extend(["-o", s(&out), "--force"]);
        }
        let err = support::fails(&run(&args));
        let want = format!(
            "at byte {} (record {} of the split starting at byte {first})",
            at[8],
            8 - k
        );
        assert!(err.contains(&want), "{cmd}: {err}");
    }
    let err = support::fails(&run(&["parse", "--spec", s(&spec), s(&file)]));
    assert!(
        err.contains(&format!("at byte {} (record 8)", at[8])),
        "{err}"
    );
}

#[test]
fn a_directory_reads_record_names_in_any_case_and_names_the_files_it_leaves_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    // The Object Detection API's names, and a name in capitals.
    write(&d.join("train.record"), 0..3);
    write(&d.join("val.TFRecord"), 3..5);
    // Records under a name no reader recognizes, and files that are never data.
    write(&d.join("test.bin"), 5..7);
    std::fs::write(d.join("_SUCCESS"), b"").expect("writes");
    std::fs::write(d.join("train.record.idx"), b"0 30\n").expect("writes");
    let o = run(&["cat", "--json", s(d)]);
    assert_eq!(ids(&ok(&o)), [0, 1, 2, 3, 4]);
    let err = support::stderr(&o);
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("note:")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(notes[0].contains("left out 1 file"), "{err}");
    assert!(notes[0].contains("test.bin"), "{err}");
    // Not a bad-record report: checks count `skipped` lines.
    assert!(!err.contains("skipped"), "{err}");
    // Named, it is read.
    let o = run(&["cat", "--json", s(&d.join("test.bin"))]);
    assert_eq!(ids(&ok(&o)), [5, 6]);
    assert!(support::stderr(&o).is_empty());
}

#[test]
fn a_directory_names_the_subdirectories_it_does_not_enter() {
    // Spark's partitioned output: part files at the top and in `key=value` directories.
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::create_dir(d.join("year=2024")).expect("mkdir");
    std::fs::create_dir(d.join("_temporary")).expect("mkdir");
    write(&d.join("part-00000"), 0..3);
    write(&d.join("year=2024").join("part-00000"), 3..5);
    let o = run(&["cat", "--json", s(d)]);
    assert_eq!(ids(&ok(&o)), [0, 1, 2]);
    let err = support::stderr(&o);
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("note:")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(
        notes[0].contains("left out 1 subdirectory (not entered)")
            && notes[0].contains("year=2024")
            && notes[0].contains("**"),
        "{err}"
    );
    // The glob the note suggests reads inside.
    let pattern = format!("{}/**/part-*", s(d));
    assert_eq!(
        ids(&ok(&run(&["cat", "--json", &pattern]))),
        [0, 1, 2, 3, 4]
    );
    // A directory of subdirectories only is an error that names them.
    let only = d.join("only");
    std::fs::create_dir_all(only.join("year=2025")).expect("mkdir");
    let o = run(&["count", s(&only)]);
    assert_eq!(o.status.code(), Some(1));
    let err = support::stderr(&o);
    assert!(
        err.contains("1 subdirectory not entered, such as year=2025"),
        "{err}"
    );
}

/// Runs the binary under a shell's `ulimit` (e.g. `-Sn 64`), with `args`.
#[cfg(unix)]
fn run_limited(limit: &str, args: &[&str]) -> std::process::Output {
    let script = format!("ulimit {limit} && exec \"$0\" \"$@\"");
    std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_tfrecord"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runs sh")
}

#[cfg(unix)]
#[test]
fn round_robin_shards_raise_the_open_file_limit_or_say_it_is_too_low() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = dir.path().join("in.tfrecord");
    write(&input, 0..150);
    // A soft limit below the shard count is raised (to the hard limit).
    let out = dir.path().join("a").join("t.tfrecord");
    let o = run_limited(
        "-Sn 64",
        &["convert", s(&input), "--shards", "100", "-o", s(&out)],
    );
    ok(&o);
    let shards = std::fs::read_dir(dir.path().join("a"))
        .expect("lists")
        .count();
    assert_eq!(shards, 100);
    let o = run(&["cat", "--json", s(&dir.path().join("a"))]);
    assert_eq!(sorted(ids(&ok(&o))), (0..150).collect::<Vec<_>>());
    // A hard limit below it is an error that says so before any shard is made (not after
    // making as many as the limit lets it), and leaves nothing behind.
    let out = dir.path().join("b").join("t.tfrecord");
    let o = run_limited(
        "-n 64",
        &["convert", s(&input), "--shards", "100", "-o", s(&out)],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = support::stderr(&o);
    assert!(!err.contains("Too many open files"), "{err}");
    assert!(err.contains("this process may open 64"), "{err}");
    assert!(
        err.contains("--shards 100 keeps 100 files open at once"),
        "{err}"
    );
    assert!(err.contains("--max-records-per-shard"), "{err}");
    let left = std::fs::read_dir(dir.path().join("b")).map_or(0, Iterator::count);
    assert_eq!(left, 0);
}

/// A pipe has no size to cut by byte range: with more shards than inputs it is dealt whole, as
/// a compressed file is, so that shard 0 reads all of it and the others none (before, shard 0
/// refused to split it and shard 1 read an empty range: no record, exit 0).
#[cfg(unix)]
#[test]
fn a_pipe_is_dealt_whole_to_one_shard() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("ids.tfrecord");
    write(&file, 0..50);
    let fifo = dir.path().join("ids.pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    // Shard 1 of 2 holds nothing of the pipe, and does not open it.
    assert_eq!(ok(&run(&["count", "--shard", "1/2", s(&fifo)])).trim(), "0");
    let (from, to) = (file.clone(), fifo.clone());
    let feeder = std::thread::spawn(move || {
        let bytes = std::fs::read(&from).expect("read");
        std::fs::write(&to, bytes).expect("into the pipe");
    });
    assert_eq!(
        ids(&ok(&run(&["cat", "--json", "--shard", "0/2", s(&fifo)]))),
        (0..50).collect::<Vec<_>>()
    );
    feeder.join().expect("fed");
}
