//! Random `tensorflow.Example`s for property tests: every kind of list (and none), floats
//! with NaN, infinities, -0.0 and subnormals among them.

use proptest::prelude::*;

use super::tensorflow;

/// Examples whose keys match `keys` (a regex), with `features` features each.
pub(crate) fn examples(
    keys: &'static str,
    features: std::ops::Range<usize>,
) -> impl Strategy<Value = tensorflow::Example> {
    use tensorflow::feature::Kind as K;
    let float = prop_oneof![
        any::<f32>(),
        Just(f32::NAN),
        Just(f32::INFINITY),
        Just(-0.0f32),
        Just(f32::MAX),
        Just(1e-45f32),
    ];
    let kind = prop_oneof![
        Just(None),
        proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..6), 0..4)
            .prop_map(|value| Some(K::BytesList(tensorflow::BytesList { value }))),
        proptest::collection::vec(float, 0..5)
            .prop_map(|value| Some(K::FloatList(tensorflow::FloatList { value }))),
        proptest::collection::vec(any::<i64>(), 0..5)
            .prop_map(|value| Some(K::Int64List(tensorflow::Int64List { value }))),
    ];
    proptest::collection::btree_map(keys, kind, features).prop_map(|m| {
        let feature = m
            .into_iter()
            .map(|(k, kind)| (k, tensorflow::Feature { kind }))
            .collect();
        tensorflow::Example {
            features: Some(tensorflow::Features { feature }),
        }
    })
}
