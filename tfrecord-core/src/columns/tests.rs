//! The fast path against the general path: records of every form a feature may take (the
//! canonical layout, absent, an empty `Feature`, another kind, another count, a repeated key,
//! unpacked numbers, values out of range, bad UTF-8, broken steps) decode to the same columns,
//! or fail with the same error, whichever path takes them.

use tfrecord_schema::ir::Schema;

use super::{ColumnBatch, ColumnDecoder};
use crate::compression::Format;
use crate::error::Result;
use crate::parse::RecordSpec;

const EXAMPLE: &str = r#"
[records.R.features.a]
dtype = "int64"
default = 7
[records.R.features.b]
dtype = "float"
optional = true
[records.R.features.c]
dtype = "bytes"
optional = true
[records.R.features.s]
dtype = "string"
default = "none"
[records.R.features.i32]
dtype = "int32"
default = 0
[records.R.features.flag]
dtype = "bool"
kind = "var"
[records.R.features.d]
dtype = "double"
lossy = true
shape = [2]
optional = true
[records.R.features.v]
dtype = "int64"
kind = "var"
[records.R.features.f3]
dtype = "float"
shape = [3]
default = 0.5
[records.R.features.rows]
dtype = "float"
shape = [-1, 2]
[records.R.features.bs]
dtype = "bytes"
kind = "var"
"#;

const SEQUENCE: &str = r#"
[records.R]
kind = "sequence_example"
[records.R.context.id]
dtype = "int64"
default = 0
[records.R.context.lang]
dtype = "string"
optional = true
[records.R.sequence.tokens]
dtype = "int64"
kind = "var"
[records.R.sequence.scores]
dtype = "float"
kind = "sequence"
shape = []
allow_missing = true
[records.R.sequence.words]
dtype = "bytes"
kind = "var"
"#;

/// The decoders of a spec with and without the fast path.
fn decoders(toml: &str) -> (ColumnDecoder, ColumnDecoder) {
    let schema = Schema::from_toml_str(toml, "t.toml").expect("a valid spec");
    let spec = RecordSpec::from_record(&schema.records[0]).expect("a valid record");
    let fast = ColumnDecoder::new(&spec, Format::TfRecord).expect("compiles");
    assert!(fast.fast.is_some(), "the fast path takes the spec");
    let mut general = fast.clone();
    general.fast = None;
    (fast, general)
}

/// A small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(u8::try_from(v & 0x7f).unwrap_or(0) | 0x80);
        v >>= 7;
    }
    out.push(u8::try_from(v).unwrap_or(0));
}

/// Field `field` of wire type 2 holding `body`.
fn len_field(field: u32, body: &[u8], out: &mut Vec<u8>) {
    varint(u64::from(field << 3 | 2), out);
    varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

/// A `Feature` of list kind `kind` (1 bytes, 2 float, 3 int64): `values` each as its own
/// `value` field when `unpacked` or a string, else one packed run.
fn feature(kind: u32, values: &[Vec<u8>], unpacked: bool) -> Vec<u8> {
    let mut list = Vec::new();
    if kind == 1 {
        values.iter().for_each(|v| len_field(1, v, &mut list));
    } else if unpacked {
        for v in values {
            list.push(if kind == 2 { 0x0d } else { 0x08 }); // field 1: fixed32, or a varint
            list.extend_from_slice(v);
        }
    } else if !values.is_empty() {
        len_field(1, &values.concat(), &mut list);
    }
    let mut f = Vec::new();
    len_field(kind, &list, &mut f);
    f
}

/// The values of one feature of list kind `kind`, `n` of them, some out of the usual range.
fn values(rng: &mut Rng, kind: u32, n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|_| {
            let mut v = Vec::new();
            match kind {
                1 => match rng.next(40) {
                    0 => v.extend_from_slice(&[0xff, 0xfe]), // not UTF-8
                    1 => v.extend(std::iter::repeat_n(b'x', 200)),
                    _ => v.extend(format!("s{}", rng.next(1000)).bytes()),
                },
                2 => v.extend_from_slice(&(rng.next(1000) as f32).to_le_bytes()),
                _ => match rng.next(40) {
                    0 => varint(u64::MAX, &mut v), // -1
                    1 => varint(1 << 40, &mut v),  // out of int32's range
                    2 => varint(2, &mut v),        // not a bool
                    _ => varint(rng.next(300), &mut v),
                },
            }
            v
        })
        .collect()
}

/// One serialized feature in one of the forms it may take; `None` for an absent one.
fn any_feature(rng: &mut Rng, kind: u32, n: usize) -> Option<Vec<u8>> {
    let count = match rng.next(30) {
        0 => n + 1,
        1 => 0,
        _ => n,
    };
    let kind = if rng.next(40) == 0 {
        1 + (kind % 3)
    } else {
        kind
    };
    match rng.next(16) {
        0 => None,
        1 => Some(Vec::new()), // no list set
        2 => Some(feature(kind, &values(rng, kind, count), true)),
        _ => Some(feature(kind, &values(rng, kind, count), false)),
    }
}

/// A map of `(key, kind, count)` features in one of its forms: entries in order, some
/// repeated, some with unknown keys, fields out of order.
fn any_map(
    rng: &mut Rng,
    keys: &[(&str, u32, usize)],
    value: impl Fn(&mut Rng, u32, usize) -> Option<Vec<u8>>,
) -> Vec<u8> {
    let mut map = Vec::new();
    for &(key, kind, n) in keys {
        let repeats = if rng.next(20) == 0 { 2 } else { 1 };
        for _ in 0..repeats {
            if let Some(f) = value(rng, kind, n) {
                let mut entry = Vec::new();
                if rng.next(30) == 0 {
                    len_field(2, &f, &mut entry); // value before key
                    len_field(1, key.as_bytes(), &mut entry);
                } else {
                    len_field(1, key.as_bytes(), &mut entry);
                    len_field(2, &f, &mut entry);
                }
                len_field(1, &entry, &mut map);
            }
        }
        if rng.next(40) == 0 {
            let mut entry = Vec::new();
            len_field(1, b"unknown", &mut entry);
            len_field(2, &feature(3, &[vec![1]], false), &mut entry);
            len_field(1, &entry, &mut map);
        }
    }
    map
}

/// A `FeatureList` of steps of list kind `kind`, in one of its forms.
fn any_steps(rng: &mut Rng, kind: u32, n: usize) -> Option<Vec<u8>> {
    if rng.next(15) == 0 {
        return None;
    }
    let mut list = Vec::new();
    for _ in 0..rng.next(6) {
        let count = match (n, rng.next(10)) {
            (1, 0) => 2,
            (1, _) => 1,
            (_, k) => usize::try_from(k % 4).unwrap_or(0),
        };
        let step = match rng.next(25) {
            0 => Vec::new(),
            1 => feature(kind, &values(rng, kind, count), true),
            2 => feature(1 + (kind % 3), &values(rng, 1 + (kind % 3), count), false),
            _ => feature(kind, &values(rng, kind, count), false),
        };
        len_field(1, &step, &mut list);
    }
    Some(list)
}

fn example(rng: &mut Rng) -> Vec<u8> {
    let keys = [
        ("a", 3, 1),
        ("b", 2, 1),
        ("c", 1, 1),
        ("s", 1, 1),
        ("i32", 3, 1),
        ("flag", 3, 2),
        ("d", 2, 2),
        ("v", 3, 3),
        ("f3", 2, 3),
        ("rows", 2, 4),
        ("bs", 1, 2),
    ];
    let map = any_map(rng, &keys, any_feature);
    let mut out = Vec::new();
    len_field(1, &map, &mut out);
    out
}

fn sequence(rng: &mut Rng) -> Vec<u8> {
    let context = any_map(rng, &[("id", 3, 1), ("lang", 1, 1)], any_feature);
    let lists = any_map(
        rng,
        &[("tokens", 3, 3), ("scores", 2, 1), ("words", 1, 2)],
        any_steps,
    );
    let mut out = Vec::new();
    if rng.next(20) == 0 {
        len_field(2, &lists, &mut out); // the feature lists first
        len_field(1, &context, &mut out);
    } else {
        len_field(1, &context, &mut out);
        len_field(2, &lists, &mut out);
    }
    out
}

fn same(fast: &Result<ColumnBatch>, general: &Result<ColumnBatch>, what: &str) {
    match (fast, general) {
        (Ok(f), Ok(g)) => assert_eq!(f, g, "{what}"),
        (Err(f), Err(g)) => assert_eq!(f.to_string(), g.to_string(), "{what}"),
        _ => panic!("{what}: fast {fast:?}, general {general:?}"),
    }
}

/// Each record alone, then every record the general path decodes in one batch (so that the
/// fast path declines records at every position of it).
fn agree(toml: &str, make: fn(&mut Rng) -> Vec<u8>) {
    let (fast, general) = decoders(toml);
    let mut rng = Rng(7);
    let records: Vec<Vec<u8>> = (0..3000).map(|_| make(&mut rng)).collect();
    let mut good = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let g = general.decode(&[r], 0);
        same(&fast.decode(&[r], 0), &g, &format!("record {i}: {r:02x?}"));
        if g.is_ok() {
            good.push(r);
        }
    }
    assert!(
        good.len() >= 100 && good.len() < records.len(),
        "{} of {} records decode",
        good.len(),
        records.len()
    );
    let batch = general.decode(&good, 0);
    assert!(batch.is_ok());
    same(&fast.decode(&good, 0), &batch, "one batch");
    // Twice: the second batch reserves its buffers from the first.
    same(&fast.decode(&good, 0), &batch, "one batch again");
}

#[test]
fn examples_decode_alike_by_both_paths() {
    agree(EXAMPLE, example);
}

#[test]
fn sequence_examples_decode_alike_by_both_paths() {
    agree(SEQUENCE, sequence);
}

/// A ragged feature list without partitions (what `tfrecord infer` writes for steps of varying
/// length) has the layout of var steps, and decodes as they do; with partitions it has none.
#[test]
fn a_ragged_feature_list_decodes_as_var_steps() {
    let ragged = SEQUENCE.replace(
        "[records.R.sequence.tokens]\ndtype = \"int64\"\nkind = \"var\"",
        "[records.R.sequence.tokens]\ndtype = \"int64\"\nkind = \"ragged\"",
    );
    assert_ne!(ragged, SEQUENCE);
    let (var, _) = decoders(SEQUENCE);
    let (rag, rag_general) = decoders(&ragged);
    assert_eq!(rag.layouts(), var.layouts());
    let mut rng = Rng(11);
    let records: Vec<Vec<u8>> = (0..200).map(|_| sequence(&mut rng)).collect();
    let want = var.decode(&records, 0);
    same(&rag.decode(&records, 0), &want, "ragged, fast");
    same(&rag_general.decode(&records, 0), &want, "ragged, general");

    let partitioned = ragged.replace(
        "kind = \"ragged\"",
        "kind = \"ragged\"\npartitions = [{ uniform_row_length = 2 }]",
    );
    let schema = Schema::from_toml_str(&partitioned, "t.toml").expect("a valid spec");
    let spec = RecordSpec::from_record(&schema.records[0]).expect("a valid record");
    let err = ColumnDecoder::new(&spec, Format::TfRecord).expect_err("no layout");
    assert!(err.to_string().contains("ragged"), "{err}");
}

/// An Example whose map holds `key` as a packed int64 list of `values`, or nothing at all.
fn int64_example(key: &[u8], values: Option<&[u64]>) -> Vec<u8> {
    let signed: Option<Vec<i64>> = values.map(|vs| vs.iter().map(|v| v.cast_signed()).collect());
    let features: Vec<(&[u8], &[i64])> = signed.iter().map(|vs| (key, vs.as_slice())).collect();
    int64_features(&features)
}

/// A sparse feature whose value feature is absent while an index feature is present holds no
/// values, as `tf.io.parse_example` reads it: with an empty index list the row is empty (not
/// null, as when both are absent); with indices, their count does not match.
#[test]
fn a_sparse_feature_without_its_value_feature_holds_no_values() {
    use super::{Leaf, Level};
    let toml = "[records.R.features.sp]\ndtype = \"float\"\nkind = \"sparse\"\n\
                index_key = \"si\"\nvalue_key = \"sv\"\nsize = 100\n";
    // The fast path does not take a sparse feature: the general path decides.
    let schema = Schema::from_toml_str(toml, "t.toml").expect("a valid spec");
    let spec = RecordSpec::from_record(&schema.records[0]).expect("a valid record");
    let decoder = ColumnDecoder::new(&spec, Format::TfRecord).expect("compiles");
    let record = |indices: Option<&[u64]>| int64_example(b"si", indices);
    let batch = decoder
        .decode(&[record(Some(&[])), record(None)], 0)
        .expect("decodes");
    let col = &batch.columns[0];
    assert_eq!(col.levels, vec![Level::List(vec![0, 0, 0])]);
    assert_eq!(col.valid, Some(vec![true, false]));
    assert!(matches!(&col.leaf, Leaf::Sparse { indices, .. } if indices[0].is_empty()));
    let err = decoder
        .decode(&[record(Some(&[3]))], 0)
        .expect_err("an index without a value");
    assert_eq!(err.key(), Some("si"), "{err}");
    assert!(
        err.to_string().contains("value feature \"sv\" is absent"),
        "{err}"
    );
}

/// A var feature's `default` fills the row of a record that lacks the feature, as the derived
/// types fill their field (a present empty list stays empty), by both paths.
#[test]
fn a_var_default_fills_an_absent_row() {
    use super::{Leaf, Level};
    let toml = "[records.R.features.v]\ndtype = \"int64\"\nkind = \"var\"\ndefault = [5, 6]\n";
    let (fast, general) = decoders(toml);
    let record = |values: Option<&[u64]>| int64_example(b"v", values);
    let records = [record(Some(&[1, 2])), record(None), record(Some(&[]))];
    for (decoder, path) in [(&fast, "fast"), (&general, "general")] {
        let batch = decoder.decode(&records, 0).expect("decodes");
        let col = &batch.columns[0];
        assert_eq!(col.levels, vec![Level::List(vec![0, 2, 4, 4])], "{path}");
        assert_eq!(col.leaf, Leaf::Int64(vec![1, 2, 5, 6]), "{path}");
        assert_eq!(col.valid, None, "{path}");
    }
}

/// A default, or an optional fixed feature's null row of zeros, is taken by every record
/// lacking the feature: once a batch's column would pass the bound (2 GiB; a few hundred bytes
/// here), the record that would pass it is an error naming the key and the record, by both
/// paths.
#[test]
fn fills_past_the_bound_are_an_error() {
    for toml in [
        "[records.R.features.v]\ndtype = \"int64\"\nshape = [10]\ndefault = 5\n",
        "[records.R.features.v]\ndtype = \"int64\"\nshape = [10]\noptional = true\n",
        "[records.R.features.v]\ndtype = \"int64\"\nkind = \"var\"\ndefault = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n",
    ] {
        let (mut fast, mut general) = decoders(toml);
        for decoder in [&mut fast, &mut general] {
            for c in &mut decoder.plan.cols {
                c.max_filled = 240;
            }
        }
        let lacking = int64_example(b"w", Some(&[1]));
        let fits = [lacking.clone(), lacking.clone(), lacking.clone()];
        let four = [lacking.clone(), lacking.clone(), lacking.clone(), lacking];
        for (decoder, path) in [(&fast, "fast"), (&general, "general")] {
            decoder.decode(&fits, 0).expect("three fills fit");
            let err = decoder.decode(&four, 0).expect_err("the fourth does not");
            assert_eq!(
                (err.key(), err.record()),
                (Some("v"), Some(3)),
                "{path}: {err}"
            );
            assert!(
                err.to_string().contains("read fewer records per batch"),
                "{err}"
            );
        }
    }
}

/// An Example of packed int64 features, in the order given.
fn int64_features(features: &[(&[u8], &[i64])]) -> Vec<u8> {
    let mut map = Vec::new();
    for (key, values) in features {
        let mut packed = Vec::new();
        for &v in *values {
            varint(v.cast_unsigned(), &mut packed);
        }
        let (mut list, mut feature, mut entry) = (Vec::new(), Vec::new(), Vec::new());
        len_field(1, &packed, &mut list);
        len_field(3, &list, &mut feature);
        len_field(1, key, &mut entry);
        len_field(2, &feature, &mut entry);
        len_field(1, &entry, &mut map);
    }
    let mut example = Vec::new();
    len_field(1, &map, &mut example);
    example
}

/// A ragged partition that cannot split the values says what is wrong with it: where it
/// decreases, where it starts, that it is absent.
#[test]
fn a_bad_ragged_partition_says_what_is_wrong() {
    let toml = "[records.R.features.tok]\ndtype = \"int64\"\nkind = \"ragged\"\n\
                partitions = [{ value_rowids = \"ids\" }]\n";
    let schema = Schema::from_toml_str(toml, "t.toml").expect("a valid spec");
    let spec = RecordSpec::from_record(&schema.records[0]).expect("a valid record");
    let decoder = ColumnDecoder::new(&spec, Format::TfRecord).expect("compiles");
    let ok = int64_features(&[(b"tok", &[5, 6]), (b"ids", &[0, 2])]);
    decoder.decode(&[ok], 0).expect("row ids 0 and 2");
    for (ids, says) in [
        (Some(&[1, 0][..]), "but decreases at position 1: 0 after 1"),
        (Some(&[-1, 0][..]), "but starts at -1"),
        (Some(&[0][..]), "but holds 1 row ids"),
        (
            None,
            "\"ids\" is absent from the record, and the 2 values need it",
        ),
    ] {
        let mut features: Vec<(&[u8], &[i64])> = vec![(b"tok", &[5, 6])];
        if let Some(ids) = ids {
            features.push((b"ids", ids));
        }
        let err = decoder
            .decode(&[int64_features(&features)], 0)
            .expect_err("a bad partition");
        assert_eq!(err.key(), Some("ids"), "{err}");
        assert!(err.to_string().contains(says), "{ids:?}: {err}");
    }
}
