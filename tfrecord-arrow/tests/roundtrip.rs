//! Records -> Arrow -> records -> Arrow, for random specs and records of every feature kind:
//! the records written back from Arrow decode (with protobuf's own types) to the messages they
//! came from, and decode to the same Arrow batch.

use std::collections::BTreeMap;

use proptest::prelude::*;
use tfrecord_arrow::{ArrowDecoder, ArrowEncoder, ArrowOptions};
use tfrecord_core::proto::{oneflow, tensorflow as tf};
use tfrecord_core::{Format, Message};
use tfrecord_schema::ir::Schema;

/// A value type of the generated features.
#[derive(Clone, Copy, Debug)]
enum Ty {
    Int64,
    Float,
    Bytes,
    Text,
    /// OFRecord only.
    Int32,
    /// OFRecord only.
    Double,
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Ty::Int64 => "int64",
            Ty::Float => "float",
            Ty::Bytes => "bytes",
            Ty::Text => "string",
            Ty::Int32 => "int32",
            Ty::Double => "double",
        }
    }
}

/// The kind of a generated feature.
#[derive(Clone, Debug)]
enum Kind {
    /// A scalar, `optional` or not.
    Scalar {
        optional: bool,
    },
    /// A fixed shape.
    Shape(Vec<u64>),
    Var,
    /// Rows of `k` values (`shape = [-1, k]`).
    Rows(u64),
    /// Sparse with this many index keys.
    Sparse(usize),
    /// Ragged, partitioned by this partition kind (`None`: no partition).
    Ragged(Option<&'static str>),
    /// A feature list of var steps (SequenceExample).
    StepsVar,
    /// A feature list of `k` values per step (SequenceExample).
    StepsFixed(u64),
}

#[derive(Clone, Debug)]
struct Feature {
    key: String,
    ty: Ty,
    kind: Kind,
}

/// One list of values of a type.
#[derive(Clone, Debug)]
enum List {
    Int(Vec<i64>),
    Float(Vec<f32>),
    Bytes(Vec<Vec<u8>>),
    Int32(Vec<i32>),
    Double(Vec<f64>),
}

impl List {
    fn tf(&self) -> tf::Feature {
        use tf::feature::Kind as K;
        let kind = match self {
            List::Int(v) => K::Int64List(tf::Int64List { value: v.clone() }),
            List::Float(v) => K::FloatList(tf::FloatList { value: v.clone() }),
            List::Bytes(v) => K::BytesList(tf::BytesList { value: v.clone() }),
            List::Int32(_) | List::Double(_) => unreachable!("OFRecord only"),
        };
        tf::Feature { kind: Some(kind) }
    }

    fn of(&self) -> oneflow::Feature {
        use oneflow::feature::Kind as K;
        let kind = match self {
            List::Int(v) => K::Int64List(oneflow::Int64List { value: v.clone() }),
            List::Float(v) => K::FloatList(oneflow::FloatList { value: v.clone() }),
            List::Bytes(v) => K::BytesList(oneflow::BytesList { value: v.clone() }),
            List::Int32(v) => K::Int32List(oneflow::Int32List { value: v.clone() }),
            List::Double(v) => K::DoubleList(oneflow::DoubleList { value: v.clone() }),
        };
        oneflow::Feature { kind: Some(kind) }
    }
}

fn values(ty: Ty, n: usize) -> BoxedStrategy<List> {
    match ty {
        Ty::Int64 => prop::collection::vec(any::<i64>(), n)
            .prop_map(List::Int)
            .boxed(),
        Ty::Int32 => prop::collection::vec(any::<i32>(), n)
            .prop_map(List::Int32)
            .boxed(),
        Ty::Float => prop::collection::vec(any::<f32>(), n)
            .prop_map(List::Float)
            .boxed(),
        Ty::Double => prop::collection::vec(any::<f64>(), n)
            .prop_map(List::Double)
            .boxed(),
        Ty::Bytes => prop::collection::vec(prop::collection::vec(any::<u8>(), 0..6), n)
            .prop_map(List::Bytes)
            .boxed(),
        Ty::Text => prop::collection::vec("[a-zé✓]{0,5}", n)
            .prop_map(|v| List::Bytes(v.into_iter().map(String::into_bytes).collect()))
            .boxed(),
    }
}

fn ints(v: Vec<i64>) -> List {
    List::Int(v)
}

/// The map entries one record holds for a feature (none when absent).
fn entries(f: &Feature) -> BoxedStrategy<Vec<(String, List)>> {
    let key = f.key.clone();
    let one = move |l: List| vec![(key.clone(), l)];
    let maybe =
        |s: BoxedStrategy<Vec<(String, List)>>| prop_oneof![1 => Just(Vec::new()), 4 => s].boxed();
    match &f.kind {
        Kind::Scalar { optional } => {
            let s = values(f.ty, 1).prop_map(one).boxed();
            if *optional { maybe(s) } else { s }
        }
        Kind::Shape(dims) => {
            let n = usize::try_from(dims.iter().product::<u64>()).unwrap();
            values(f.ty, n).prop_map(one).boxed()
        }
        Kind::Var => {
            let ty = f.ty;
            maybe(
                (0usize..4)
                    .prop_flat_map(move |n| values(ty, n))
                    .prop_map(one)
                    .boxed(),
            )
        }
        Kind::Rows(k) => {
            let (k, ty) = (usize::try_from(*k).unwrap(), f.ty);
            maybe(
                (0usize..3)
                    .prop_flat_map(move |r| values(ty, r * k))
                    .prop_map(one)
                    .boxed(),
            )
        }
        Kind::Sparse(dims) => {
            let (dims, ty, key) = (*dims, f.ty, f.key.clone());
            maybe(
                (0usize..4)
                    .prop_flat_map(move |n| {
                        (
                            values(ty, n),
                            prop::collection::vec(prop::collection::vec(0i64..10, n), dims),
                        )
                    })
                    .prop_map(move |(v, idx)| {
                        let mut out = vec![(key.clone(), v)];
                        for (d, i) in idx.into_iter().enumerate() {
                            out.push((format!("{key}_i{d}"), ints(i)));
                        }
                        out
                    })
                    .boxed(),
            )
        }
        Kind::Ragged(part) => {
            let (ty, key, part) = (f.ty, f.key.clone(), *part);
            maybe(
                prop::collection::vec(0usize..3, 0..4)
                    .prop_flat_map(move |lens| {
                        let n: usize = lens.iter().sum();
                        (Just(lens), values(ty, n))
                    })
                    .prop_map(move |(lens, v)| {
                        let mut out = vec![(key.clone(), v)];
                        let l = |x: usize| i64::try_from(x).unwrap();
                        match part {
                            Some("row_lengths") => {
                                out.push((
                                    format!("{key}_p"),
                                    ints(lens.iter().map(|&x| l(x)).collect()),
                                ));
                            }
                            Some("row_splits") => {
                                let mut s = vec![0i64];
                                for x in &lens {
                                    s.push(s.last().unwrap() + l(*x));
                                }
                                out.push((format!("{key}_p"), ints(s)));
                            }
                            Some("value_rowids") => {
                                // Trailing empty rows have no ids; keep rows non-empty.
                                let ids = lens
                                    .iter()
                                    .filter(|x| **x > 0)
                                    .enumerate()
                                    .flat_map(|(r, x)| std::iter::repeat_n(l(r), *x))
                                    .collect();
                                out.push((format!("{key}_p"), ints(ids)));
                            }
                            _ => {}
                        }
                        out
                    })
                    .boxed(),
            )
        }
        Kind::StepsVar | Kind::StepsFixed(_) => unreachable!("feature lists are made apart"),
    }
}

/// The spec text of one feature.
fn toml(f: &Feature, table: &str) -> String {
    let mut s = format!(
        "[records.R.{table}.{:?}]\ndtype = \"{}\"\n",
        f.key,
        f.ty.name()
    );
    match &f.kind {
        Kind::Scalar { optional } => {
            if *optional {
                s.push_str("optional = true\n");
            }
        }
        Kind::Shape(dims) => s.push_str(&format!("shape = {dims:?}\n")),
        Kind::Var | Kind::StepsVar => s.push_str("kind = \"var\"\n"),
        Kind::Rows(k) => s.push_str(&format!("shape = [-1, {k}]\n")),
        Kind::StepsFixed(k) => s.push_str(&format!(
            "kind = \"sequence\"\nshape = [{k}]\nallow_missing = true\n"
        )),
        Kind::Sparse(dims) => {
            let keys: Vec<String> = (0..*dims).map(|d| format!("{}_i{d}", f.key)).collect();
            s.push_str(&format!(
                "kind = \"sparse\"\nindex_key = {keys:?}\nsize = {:?}\n",
                vec![10; *dims]
            ));
        }
        Kind::Ragged(part) => {
            s.push_str("kind = \"ragged\"\n");
            if let Some(p) = part {
                s.push_str(&format!("partitions = [{{ {p} = \"{}_p\" }}]\n", f.key));
            }
        }
    }
    s
}

fn ty(of: bool) -> BoxedStrategy<Ty> {
    if of {
        prop_oneof![
            Just(Ty::Int64),
            Just(Ty::Float),
            Just(Ty::Bytes),
            Just(Ty::Text),
            Just(Ty::Int32),
            Just(Ty::Double)
        ]
        .boxed()
    } else {
        prop_oneof![
            Just(Ty::Int64),
            Just(Ty::Float),
            Just(Ty::Bytes),
            Just(Ty::Text)
        ]
        .boxed()
    }
}

fn kind() -> BoxedStrategy<Kind> {
    prop_oneof![
        any::<bool>().prop_map(|optional| Kind::Scalar { optional }),
        prop::collection::vec(1u64..4, 1..3).prop_map(Kind::Shape),
        Just(Kind::Var),
        (1u64..3).prop_map(Kind::Rows),
        (1usize..3).prop_map(Kind::Sparse),
        prop_oneof![
            Just(None),
            Just(Some("row_lengths")),
            Just(Some("row_splits")),
            Just(Some("value_rowids"))
        ]
        .prop_map(Kind::Ragged),
    ]
    .boxed()
}

fn features(of: bool) -> BoxedStrategy<Vec<Feature>> {
    prop::collection::vec((ty(of), kind()), 1..6)
        .prop_map(|fs| {
            fs.into_iter()
                .enumerate()
                .map(|(i, (ty, kind))| Feature {
                    key: format!("f{i}"),
                    ty,
                    kind,
                })
                .collect()
        })
        .boxed()
}

/// Decodes, writes back and decodes again; checks both identities.
fn round_trip(
    spec: &str,
    format: Format,
    records: &[Vec<u8>],
    large: bool,
    same: impl Fn(&[u8], &[u8]) -> bool,
) {
    let schema = Schema::from_toml_str(spec, "spec.toml").unwrap();
    let record = &schema.records[0];
    let options = ArrowOptions::new().with_large_lists(large);
    let decoder = ArrowDecoder::with_options(record, format, options).unwrap();
    let encoder = ArrowEncoder::new(record, format).unwrap();
    let a = decoder.decode(records, 0).unwrap();
    let mut back = Vec::new();
    encoder
        .encode(&a, 0, |r| {
            back.push(r.to_vec());
            Ok(())
        })
        .unwrap();
    assert_eq!(back.len(), records.len());
    for (i, (x, y)) in records.iter().zip(&back).enumerate() {
        assert!(
            same(x, y),
            "record {i} differs after Arrow and back\nspec:\n{spec}"
        );
    }
    let b = decoder.decode(&back, 0).unwrap();
    assert_eq!(
        a, b,
        "the Arrow batch differs after records and back\nspec:\n{spec}"
    );
}

fn example_records(fs: &[Feature]) -> BoxedStrategy<Vec<Vec<u8>>> {
    let one: Vec<_> = fs.iter().map(entries).collect();
    prop::collection::vec(one, 0..6)
        .prop_map(|rows| {
            rows.into_iter()
                .map(|row| {
                    let mut m = BTreeMap::new();
                    for (k, l) in row.into_iter().flatten() {
                        m.insert(k, l);
                    }
                    m
                })
                .map(|m| {
                    // As TensorFlow writes it: no `features` when there are none.
                    let feature: BTreeMap<_, _> =
                        m.iter().map(|(k, l)| (k.clone(), l.tf())).collect();
                    let features = (!feature.is_empty()).then_some(tf::Features { feature });
                    tf::Example { features }.encode_to_vec()
                })
                .collect()
        })
        .boxed()
}

fn same_example(a: &[u8], b: &[u8]) -> bool {
    tf::Example::decode(a).unwrap() == tf::Example::decode(b).unwrap()
}

fn spec_of(head: &str, tables: &[(&[Feature], &str)]) -> String {
    let mut s = head.to_string();
    for (fs, table) in tables {
        for f in *fs {
            s.push_str(&toml(f, table));
        }
    }
    s
}

fn of_records(fs: &[Feature]) -> BoxedStrategy<Vec<Vec<u8>>> {
    let one: Vec<_> = fs.iter().map(entries).collect();
    prop::collection::vec(one, 0..6)
        .prop_map(|rows| {
            rows.into_iter()
                .map(|row| {
                    let feature = row
                        .into_iter()
                        .flatten()
                        .map(|(k, l)| (k, l.of()))
                        .collect();
                    oneflow::OfRecord { feature }.encode_to_vec()
                })
                .collect()
        })
        .boxed()
}

type Steps = (String, Option<Vec<List>>);

fn sequence_records(ctx: &[Feature], lists: &[Feature]) -> BoxedStrategy<Vec<Vec<u8>>> {
    let ctx_s: Vec<_> = ctx.iter().map(entries).collect();
    let list_s: Vec<BoxedStrategy<Steps>> = lists
        .iter()
        .map(|f| {
            let (key, ty) = (f.key.clone(), f.ty);
            let step = match f.kind {
                Kind::StepsFixed(k) => values(ty, usize::try_from(k).unwrap()),
                _ => (0usize..3).prop_flat_map(move |n| values(ty, n)).boxed(),
            };
            let steps = prop::collection::vec(step, 0..4);
            prop_oneof![1 => Just(None), 4 => steps.prop_map(Some)]
                .prop_map(move |s| (key.clone(), s))
                .boxed()
        })
        .collect();
    prop::collection::vec((ctx_s, list_s), 0..5)
        .prop_map(|rows| {
            rows.into_iter()
                .map(|(c, l)| {
                    let feature: BTreeMap<_, _> =
                        c.into_iter().flatten().map(|(k, v)| (k, v.tf())).collect();
                    let context = (!feature.is_empty()).then_some(tf::Features { feature });
                    let feature_list: BTreeMap<_, _> = l
                        .into_iter()
                        .filter_map(|(k, steps)| {
                            let feature = steps?.iter().map(List::tf).collect();
                            Some((k, tf::FeatureList { feature }))
                        })
                        .collect();
                    let feature_lists =
                        (!feature_list.is_empty()).then_some(tf::FeatureLists { feature_list });
                    tf::SequenceExample {
                        context,
                        feature_lists,
                    }
                    .encode_to_vec()
                })
                .collect()
        })
        .boxed()
}

fn named(fs: Vec<(Ty, Kind)>, prefix: &str) -> Vec<Feature> {
    fs.into_iter()
        .enumerate()
        .map(|(i, (ty, kind))| Feature {
            key: format!("{prefix}{i}"),
            ty,
            kind,
        })
        .collect()
}

fn context_kind() -> BoxedStrategy<Kind> {
    prop_oneof![Just(Kind::Var), Just(Kind::Scalar { optional: true })].boxed()
}

fn list_kind() -> BoxedStrategy<Kind> {
    prop_oneof![Just(Kind::StepsVar), (1u64..3).prop_map(Kind::StepsFixed)].boxed()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn examples(
        (fs, records) in features(false).prop_flat_map(|fs| {
            let r = example_records(&fs);
            (Just(fs), r)
        }),
        large in any::<bool>(),
    ) {
        let spec = spec_of("[records.R]\n", &[(&fs, "features")]);
        round_trip(&spec, Format::TfRecord, &records, large, same_example);
    }

    #[test]
    fn ofrecords(
        (fs, records) in features(true).prop_flat_map(|fs| {
            let r = of_records(&fs);
            (Just(fs), r)
        }),
    ) {
        let spec = spec_of("[records.R]\ndialect = \"ofrecord\"\n", &[(&fs, "features")]);
        round_trip(&spec, Format::OfRecord, &records, false, |a, b| {
            oneflow::OfRecord::decode(a).unwrap() == oneflow::OfRecord::decode(b).unwrap()
        });
    }

    #[test]
    fn sequence_examples(
        (ctx, lists, records) in (
            prop::collection::vec((ty(false), context_kind()), 0..3),
            prop::collection::vec((ty(false), list_kind()), 1..3),
        )
            .prop_flat_map(|(c, l)| {
                let (ctx, lists) = (named(c, "c"), named(l, "l"));
                let r = sequence_records(&ctx, &lists);
                (Just(ctx), Just(lists), r)
            }),
    ) {
        let spec = spec_of(
            "[records.R]\nkind = \"sequence_example\"\n",
            &[(&ctx, "context"), (&lists, "sequence")],
        );
        round_trip(&spec, Format::TfRecord, &records, false, |a, b| {
            tf::SequenceExample::decode(a).unwrap() == tf::SequenceExample::decode(b).unwrap()
        });
    }
}
