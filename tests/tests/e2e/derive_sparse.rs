//! Sparse fields (the `tf.io.SparseFeature` layout): round trips, errors, and absence.

use proptest::prelude::*;
use tfrecord_core::{Decode, TfExample};

use crate::support::attr_types::{Sparsey, sparsey};
use crate::support::checks::{assert_fails, cfg, check_both};
use crate::support::model::{Feat, Feats, Model, tf_bytes};

proptest! {
    #![proptest_config(cfg())]

    /// Sparse fields round-trip in both containers, index features first, as prost sees them.
    #[test]
    fn sparse_fields_round_trip(v in sparsey()) {
        let (tf, of) = check_both(&v);
        prop_assert_eq!(tf.feats(false), v.feats(false));
        prop_assert_eq!(of.feats(true), v.feats(true));
    }
}

#[test]
fn sparse_field_errors_and_absence() {
    let mut base = Feats::new();
    base.insert("label".into(), Feat::Int(vec![1]));
    // Every sparse feature absent: empty sparse tensors, as tf.io.SparseFeature reads them.
    let v = <Sparsey as Decode<TfExample>>::decode(&tf_bytes(&base)).expect("absent is empty");
    assert!(v.one_d.is_empty() && v.two_d.is_empty());
    assert_eq!(v.two_d.indices, vec![Vec::<i64>::new(), Vec::new()]);

    // An index outside the declared size.
    let mut f = base.clone();
    f.insert("idx".into(), Feat::Int(vec![100]));
    f.insert("weight".into(), Feat::Float(vec![1.0f32.to_bits()]));
    assert_fails::<Sparsey>(
        false,
        &f,
        "idx",
        &["sparse index 100", "declared size 100", "Sparsey::one_d"],
    );
    // Index and value lists of different lengths.
    let mut f = base.clone();
    f.insert("idx".into(), Feat::Int(vec![1, 2]));
    f.insert("weight".into(), Feat::Float(vec![1.0f32.to_bits()]));
    assert_fails::<Sparsey>(true, &f, "idx", &["expected 1 value, found 2"]);
    // Values whose index feature is absent: the message says which list is missing.
    let mut f = base.clone();
    f.insert("weight".into(), Feat::Float(vec![1.0f32.to_bits()]));
    assert_fails::<Sparsey>(
        false,
        &f,
        "idx",
        &[
            "the index feature is absent",
            "\"weight\" holds 1 value(s)",
            "Sparsey::one_d",
        ],
    );
    // A negative index.
    let mut f = base;
    f.insert("row".into(), Feat::Int(vec![-1]));
    f.insert("col".into(), Feat::Int(vec![0]));
    f.insert("two_d".into(), Feat::Bytes(vec![b"x".to_vec()]));
    assert_fails::<Sparsey>(false, &f, "row", &["sparse index -1"]);
}

/// Entries out of index order: put in order unless `already_sorted`, as TensorFlow 2.21's
/// `tf.io.parse_example` gives them. With `row = [1, 0]`, `col = [0, 2]` and values `[a, b]`,
/// `SparseFeature(["row", "col"], "two_d", tf.string, [3, 4])` returns indices
/// `[[0, 2], [1, 0]]` and values `[b, a]`; with `already_sorted=True`, the record's order.
#[test]
fn sparse_entries_come_in_index_order_unless_already_sorted() {
    let mut f = Feats::new();
    f.insert("label".into(), Feat::Int(vec![1]));
    f.insert("row".into(), Feat::Int(vec![1, 0, 1]));
    f.insert("col".into(), Feat::Int(vec![0, 2, 0]));
    f.insert(
        "two_d".into(),
        Feat::Bytes(vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]),
    );
    f.insert("idx".into(), Feat::Int(vec![7, 3]));
    f.insert(
        "weight".into(),
        Feat::Float(vec![1.0f32.to_bits(), 2.0f32.to_bits()]),
    );
    let v = <Sparsey as Decode<TfExample>>::decode(&tf_bytes(&f)).expect("decodes");
    // Equal indices keep their order (`a` before `c`).
    assert_eq!(v.two_d.indices, vec![vec![0, 1, 1], vec![2, 0, 0]]);
    assert_eq!(v.two_d.values, ["b", "a", "c"]);
    // `already_sorted`: as the record has them.
    assert_eq!(v.one_d.indices, vec![vec![7, 3]]);
    assert_eq!(v.one_d.values, [1.0, 2.0]);
}
