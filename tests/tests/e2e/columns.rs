//! The columnar decoder (`tfrecord_core::columns`) on every valid encoding of a record: the
//! layout every writer produces takes its fast path, the others (unpacked lists, split runs,
//! shadowed keys, value-before-key entries, unknown fields, any key order) the general one, and
//! both give the columns the model says, for Examples and OFRecords.

use proptest::prelude::*;
use tfrecord_core::Format;
use tfrecord_core::columns::{ColumnBatch, ColumnDecoder, Leaf, Level};
use tfrecord_core::parse::RecordSpec;
use tfrecord_schema::ir::Schema;

use crate::support::model::{Feat, Feats};
use crate::support::styled::{Style, style, styled_of, styled_tf};

/// The value type of a generated key: int64, float, bytes, and in OFRecord int32 and double.
#[derive(Clone, Copy, Debug)]
enum Ty {
    Int,
    Float,
    Bytes,
    Int32,
    Double,
}

impl Ty {
    fn dtype(self) -> &'static str {
        match self {
            Ty::Int => "int64",
            Ty::Float => "float",
            Ty::Bytes => "bytes",
            Ty::Int32 => "int32",
            Ty::Double => "double",
        }
    }
}

fn values(ty: Ty, n: usize) -> BoxedStrategy<Feat> {
    match ty {
        Ty::Int => prop::collection::vec(any::<i64>(), n)
            .prop_map(Feat::Int)
            .boxed(),
        Ty::Float => prop::collection::vec(any::<u32>(), n)
            .prop_map(Feat::Float)
            .boxed(),
        Ty::Bytes => prop::collection::vec(prop::collection::vec(any::<u8>(), 0..5), n)
            .prop_map(Feat::Bytes)
            .boxed(),
        Ty::Int32 => prop::collection::vec(any::<i32>(), n)
            .prop_map(Feat::Int32)
            .boxed(),
        Ty::Double => prop::collection::vec(any::<u64>(), n)
            .prop_map(Feat::Double)
            .boxed(),
    }
}

/// Keys `k0..`, each `var` of a type; rows holding some of them.
fn case(of: bool) -> impl Strategy<Value = (Vec<Ty>, Vec<Feats>)> {
    let ty = if of {
        prop_oneof![
            Just(Ty::Int),
            Just(Ty::Float),
            Just(Ty::Bytes),
            Just(Ty::Int32),
            Just(Ty::Double)
        ]
        .boxed()
    } else {
        prop_oneof![Just(Ty::Int), Just(Ty::Float), Just(Ty::Bytes)].boxed()
    };
    prop::collection::vec(ty, 1..5).prop_flat_map(|tys| {
        let row: Vec<BoxedStrategy<Option<Feat>>> = tys
            .iter()
            .map(|&t| {
                prop::option::weighted(0.8, (0usize..4).prop_flat_map(move |n| values(t, n)))
                    .boxed()
            })
            .collect();
        let rows = prop::collection::vec(row, 0..5).prop_map(|rows| {
            rows.into_iter()
                .map(|r| {
                    r.into_iter()
                        .enumerate()
                        .filter_map(|(i, f)| Some((format!("k{i}"), f?)))
                        .collect::<Feats>()
                })
                .collect()
        });
        (Just(tys), rows)
    })
}

fn decoder(tys: &[Ty], of: bool) -> ColumnDecoder {
    let mut spec = String::from("[records.R]\n");
    if of {
        spec.push_str("dialect = \"ofrecord\"\n");
    }
    for (i, t) in tys.iter().enumerate() {
        spec.push_str(&format!(
            "[records.R.features.k{i}]\ndtype = \"{}\"\nkind = \"var\"\n",
            t.dtype()
        ));
    }
    let schema = Schema::from_toml_str(&spec, "spec.toml").expect("spec");
    let record = RecordSpec::from_record(&schema.records[0]).expect("runtime spec");
    let format = if of {
        Format::OfRecord
    } else {
        Format::TfRecord
    };
    ColumnDecoder::new(&record, format).expect("decoder")
}

/// The model's rows of key `k{i}`: `None` where a row lacks it.
fn model_column(rows: &[Feats], i: usize) -> Vec<Option<Feat>> {
    rows.iter()
        .map(|r| r.get(&format!("k{i}")).cloned())
        .collect()
}

/// Our column `i` in the model's form.
fn our_column(batch: &ColumnBatch, i: usize, ty: Ty) -> Vec<Option<Feat>> {
    let col = &batch.columns[i];
    let Level::List(offsets) = &col.levels[0] else {
        panic!("a var column is a list");
    };
    (0..batch.rows)
        .map(|r| {
            if col.valid.as_ref().is_some_and(|v| !v[r]) {
                return None;
            }
            let (a, b) = (ix(offsets[r]), ix(offsets[r + 1]));
            Some(match (&col.leaf, ty) {
                (Leaf::Int64(v), Ty::Int) => Feat::Int(v[a..b].to_vec()),
                (Leaf::Float(v), Ty::Float) => {
                    Feat::Float(v[a..b].iter().map(|x| x.to_bits()).collect())
                }
                (Leaf::Bytes(c), Ty::Bytes) => {
                    Feat::Bytes((a..b).map(|j| c.get(j).expect("value").to_vec()).collect())
                }
                (Leaf::Int32(v), Ty::Int32) => Feat::Int32(v[a..b].to_vec()),
                (Leaf::Double(v), Ty::Double) => {
                    Feat::Double(v[a..b].iter().map(|x| x.to_bits()).collect())
                }
                (leaf, ty) => panic!("{ty:?} column holds {leaf:?}"),
            })
        })
        .collect()
}

fn check(of: bool, tys: &[Ty], rows: &[Feats], s: Style) {
    let records: Vec<Vec<u8>> = rows
        .iter()
        .map(|r| if of { styled_of(r, s) } else { styled_tf(r, s) })
        .collect();
    let batch = decoder(tys, of).decode(&records, 0).expect("decode");
    assert_eq!(batch.rows, rows.len());
    for (i, &ty) in tys.iter().enumerate() {
        assert_eq!(
            our_column(&batch, i, ty),
            model_column(rows, i),
            "column k{i} in style {s:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn examples_in_every_encoding((tys, rows) in case(false), s in style()) {
        check(false, &tys, &rows, Style::PLAIN);
        check(false, &tys, &rows, s);
    }

    #[test]
    fn ofrecords_in_every_encoding((tys, rows) in case(true), s in style()) {
        check(true, &tys, &rows, Style::PLAIN);
        check(true, &tys, &rows, s);
    }
}

/// A `tensorflow.SequenceExample` with one feature list `steps` of int64 steps, each step's
/// `Feature` in `style` (`None`: no feature lists).
fn sequence(steps: Option<&[Vec<i64>]>, s: Style) -> Vec<u8> {
    use crate::support::styled::{feature_chunks, map_entry, put_len};
    let Some(steps) = steps else {
        return Vec::new();
    };
    let mut list = Vec::new();
    for step in steps {
        put_len(
            &mut list,
            1,
            &feature_chunks(&Feat::Int(step.clone()), false, s).concat(),
        );
    }
    let mut lists = Vec::new();
    put_len(&mut lists, 1, &map_entry("steps", &[list], Style::PLAIN));
    let mut out = Vec::new();
    put_len(&mut out, 2, &lists);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn feature_lists_in_every_encoding(
        rows in prop::collection::vec(
            prop::option::weighted(0.8, prop::collection::vec(prop::collection::vec(any::<i64>(), 0..4), 0..5)),
            0..5,
        ),
        s in style(),
    ) {
        let spec = "[records.R]\nkind = \"sequence_example\"\n\
                    [records.R.sequence.steps]\ndtype = \"int64\"\nkind = \"var\"\n";
        let schema = Schema::from_toml_str(spec, "spec.toml").expect("spec");
        let record = RecordSpec::from_record(&schema.records[0]).expect("runtime spec");
        let decoder = ColumnDecoder::new(&record, Format::TfRecord).expect("decoder");
        for style in [Style::PLAIN, s] {
            let records: Vec<Vec<u8>> = rows.iter().map(|r| sequence(r.as_deref(), style)).collect();
            let batch = decoder.decode(&records, 0).expect("decode");
            let col = &batch.columns[0];
            let (Level::List(outer), Level::List(inner), Leaf::Int64(values)) =
                (&col.levels[0], &col.levels[1], &col.leaf)
            else {
                panic!("a var feature list is a list of lists of int64");
            };
            for (r, want) in rows.iter().enumerate() {
                let valid = col.valid.as_ref().is_none_or(|v| v[r]);
                let got = valid.then(|| {
                    (ix(outer[r])..ix(outer[r + 1]))
                        .map(|s| values[ix(inner[s])..ix(inner[s + 1])].to_vec())
                        .collect::<Vec<_>>()
                });
                prop_assert_eq!(&got, want, "row {} in style {:?}", r, style);
            }
        }
    }
}

/// An offset as an index (offsets are never negative).
fn ix(offset: i64) -> usize {
    usize::try_from(offset).expect("a non-negative offset")
}
