//! The record order against TensorFlow's: `interleave.json` holds what tf.data's
//! `files.shard(n, i).interleave(TFRecordDataset, cycle_length, block_length).skip(s).take(t)`
//! yielded for files of known record counts (see `tests/fixtures/README.md`).

use std::collections::BTreeMap;

use serde_json::Value;
use tfrecord_dataset::DatasetOptions;

use super::support::{labels, open, write_labels};

const FIXTURE: &str = include_str!("../fixtures/interleave.json");

fn int(v: &Value) -> usize {
    usize::try_from(v.as_u64().expect("an integer")).expect("small")
}

/// One recorded pipeline: its options, what TensorFlow yielded, whether it cuts the stream
/// (skip or take), and its JSON for messages.
struct Case {
    opts: DatasetOptions,
    order: Vec<String>,
    cut: bool,
    json: String,
}

fn cases() -> (tempfile::TempDir, Vec<Case>) {
    let fixture: Value = serde_json::from_str(FIXTURE).expect("JSON");
    assert!(
        fixture["generator"]
            .as_str()
            .expect("named")
            .starts_with("tensorflow ")
    );
    let dir = tempfile::tempdir().expect("tempdir");
    for (k, file) in fixture["files"]
        .as_array()
        .expect("files")
        .iter()
        .enumerate()
    {
        let name = file["name"].as_str().expect("a name");
        write_labels(&dir.path().join(name), k, int(&file["records"]));
    }
    let mut out = Vec::new();
    for case in fixture["cases"].as_array().expect("cases") {
        let (cycle, block) = (int(&case["cycle_length"]), int(&case["block_length"]));
        let shard = case["shard"].as_array().expect("a shard");
        let skip = case["skip"].as_u64().expect("skip");
        let mut opts = DatasetOptions::new()
            .interleave(cycle, block)
            .shard(int(&shard[0]), int(&shard[1]))
            .skip(skip);
        if let Some(take) = case["take"].as_u64() {
            opts = opts.take(take);
        }
        let order: Vec<String> = case["order"]
            .as_array()
            .expect("an order")
            .iter()
            .map(|v| v.as_str().expect("a label").to_owned())
            .collect();
        out.push(Case {
            opts,
            order,
            cut: skip > 0 || !case["take"].is_null(),
            json: case.to_string(),
        });
    }
    (dir, out)
}

#[test]
fn interleave_shard_skip_take_give_tensorflows_order_on_any_thread_count() {
    let (dir, cases) = cases();
    assert!(cases.len() >= 10);
    for case in cases {
        for threads in [1, 2, 3] {
            let got = labels(&open(dir.path(), case.opts.clone().threads(threads)));
            assert_eq!(
                got, case.order,
                "{threads} threads, case {:.150}",
                case.json
            );
        }
    }
}

#[test]
fn the_non_deterministic_order_holds_the_same_records() {
    let (dir, cases) = cases();
    let counted = |v: Vec<String>| {
        let mut m = BTreeMap::new();
        for s in v {
            *m.entry(s).or_insert(0) += 1;
        }
        m
    };
    // Skip and take cut a stream whose order may vary: whole streams only.
    for case in cases.into_iter().filter(|c| !c.cut) {
        let opts = case.opts.clone().threads(3).deterministic(false);
        let got = labels(&open(dir.path(), opts));
        assert_eq!(counted(got), counted(case.order), "case {:.150}", case.json);
    }
}
