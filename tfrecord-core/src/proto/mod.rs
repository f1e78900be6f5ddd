//! Protobuf message types generated with prost from the `.proto` files in the workspace's
//! `proto/` folder.
//!
//! Decoding through these types follows the protobuf specification, not TensorFlow's fast
//! parser: packed and unpacked repeated values (also mixed, and packed runs split in two) are
//! all accepted, map entries may carry the value before the key, a repeated map key keeps its
//! last value, a oneof member seen twice is merged as the specification says, and unknown
//! fields are skipped anywhere.
//!
//! Maps are `BTreeMap`s so that iteration, printing and JSON output are ordered by key.

/// `tensorflow.Example` and friends, from `tensorflow/core/example/{feature,example}.proto`.
#[allow(missing_docs, clippy::all, unreachable_pub)]
pub mod tensorflow {
    include!("tensorflow.rs");
}

/// `oneflow.OFRecord` and friends, from `oneflow/core/record/record.proto` (proto2).
#[allow(missing_docs, clippy::all, unreachable_pub)]
pub mod oneflow {
    include!("oneflow.rs");
}

pub mod bytes_keys;
pub(crate) mod check;
#[cfg(test)]
pub(crate) mod strategies;

pub use check::{check_example, check_ofrecord, check_sequence_example};

use std::collections::BTreeMap;

use crate::codec::wire::{Fields, Value, len_field_len, put_len_prefix};
use prost::Message;

/// Appends map entries (field `field` of the enclosing message) with both `key` and `value`
/// always present, as protobuf's C++ and Python runtimes write them. (prost leaves out a key or
/// value equal to its default, which protobuf allows but TensorFlow's C++ Example parsers
/// reject.)
fn put_map<'a, K: AsRef<[u8]> + 'a, V: Message + 'a>(
    buf: &mut Vec<u8>,
    field: u32,
    entries: impl Iterator<Item = (&'a K, &'a V)>,
) {
    for (k, v) in entries {
        let k = k.as_ref();
        let vlen = v.encoded_len();
        put_len_prefix(buf, field, len_field_len(k.len()) + len_field_len(vlen));
        put_len_prefix(buf, 1, k.len());
        buf.extend_from_slice(k);
        put_len_prefix(buf, 2, vlen);
        v.encode_raw(buf);
    }
}

fn map_len<'a, K: AsRef<[u8]> + 'a, V: Message + 'a>(
    entries: impl Iterator<Item = (&'a K, &'a V)>,
) -> usize {
    entries
        .map(|(k, v)| {
            len_field_len(len_field_len(k.as_ref().len()) + len_field_len(v.encoded_len()))
        })
        .sum()
}

/// A serialized map message (a `Features`, `FeatureLists` or `OFRecord`): its entries as
/// field 1, written as [`put_map`] writes them.
fn put_map_message<K: AsRef<[u8]>, V: Message>(
    buf: &mut Vec<u8>,
    field: u32,
    map: &BTreeMap<K, V>,
) {
    put_len_prefix(buf, field, map_len(map.iter()));
    put_map(buf, 1, map.iter());
}

/// A serialized `tensorflow.Example` with these features (`None`: no `features` field).
pub(crate) fn example_bytes<K: AsRef<[u8]>>(
    features: Option<&BTreeMap<K, tensorflow::Feature>>,
) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Some(f) = features {
        put_map_message(&mut buf, 1, f);
    }
    buf
}

/// A serialized `tensorflow.SequenceExample` with this context and these feature lists.
pub(crate) fn sequence_example_bytes<K: AsRef<[u8]>, L: AsRef<[u8]>>(
    context: Option<&BTreeMap<K, tensorflow::Feature>>,
    lists: Option<&BTreeMap<L, tensorflow::FeatureList>>,
) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Some(c) = context {
        put_map_message(&mut buf, 1, c);
    }
    if let Some(l) = lists {
        put_map_message(&mut buf, 2, l);
    }
    buf
}

/// A serialized `oneflow.OFRecord` with these features.
pub(crate) fn ofrecord_bytes<K: AsRef<[u8]>>(feature: &BTreeMap<K, oneflow::Feature>) -> Vec<u8> {
    let mut buf = Vec::new();
    put_map(&mut buf, 1, feature.iter());
    buf
}

/// Serializes a `tensorflow.Example` as TensorFlow and protobuf's C++ runtime do: every map
/// entry carries its key and its value, even when empty. Decoding the result with any protobuf
/// library gives back `e`.
pub fn encode_example(e: &tensorflow::Example) -> Vec<u8> {
    example_bytes(e.features.as_ref().map(|f| &f.feature))
}

/// Serializes a `tensorflow.SequenceExample` with every map entry's key and value written (see
/// [`encode_example`]).
pub fn encode_sequence_example(e: &tensorflow::SequenceExample) -> Vec<u8> {
    sequence_example_bytes(
        e.context.as_ref().map(|c| &c.feature),
        e.feature_lists.as_ref().map(|l| &l.feature_list),
    )
}

/// Serializes a `oneflow.OFRecord` with every map entry's key and value written (see
/// [`encode_example`]).
pub fn encode_ofrecord(r: &oneflow::OfRecord) -> Vec<u8> {
    ofrecord_bytes(&r.feature)
}

/// Whether a serialized record holds feature lists: a `tensorflow.SequenceExample` with a
/// non-empty `feature_lists` (field 2). Such a record also decodes as a `tensorflow.Example`
/// (its `context` is field 1, as an Example's `features`), and that decode drops its feature
/// lists without a word: readers that decode Examples use this to refuse such records instead.
/// Malformed bytes give `false` (the decode that follows reports them).
pub fn has_feature_lists(bytes: &[u8]) -> bool {
    let mut fields = Fields::new(bytes);
    while let Ok(Some((num, value))) = fields.next_field() {
        if let (2, Value::Len(body)) = (num, value)
            && !body.is_empty()
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_entries_keep_empty_keys_and_values() {
        // Python's protobuf writes {"x": Feature()} as `0a 05 0a 01 78 12 00` inside Features.
        let mut fs = tensorflow::Features::default();
        fs.feature
            .insert("x".into(), tensorflow::Feature::default());
        fs.feature.insert(
            String::new(),
            tensorflow::Feature {
                kind: Some(tensorflow::feature::Kind::Int64List(
                    tensorflow::Int64List { value: vec![1] },
                )),
            },
        );
        let e = tensorflow::Example { features: Some(fs) };
        let bytes = encode_example(&e);
        // Worked out by hand from the protobuf encoding rules; entries in key order.
        let expected = [
            0x0a, 0x12, // Example.features, 18 bytes
            0x0a, 0x09, 0x0a, 0x00, 0x12, 0x05, 0x1a, 0x03, 0x0a, 0x01,
            0x01, // "" -> int64_list [1]
            0x0a, 0x05, 0x0a, 0x01, b'x', 0x12, 0x00, // "x" -> Feature {}
        ];
        assert_eq!(bytes, expected);
        assert_eq!(tensorflow::Example::decode(&bytes[..]).unwrap(), e);
        let mut lists = tensorflow::FeatureLists::default();
        lists
            .feature_list
            .insert("empty".into(), tensorflow::FeatureList::default());
        let s = tensorflow::SequenceExample {
            context: None,
            feature_lists: Some(lists),
        };
        let sb = encode_sequence_example(&s);
        assert!(sb.ends_with(&[0x0a, 0x05, b'e', b'm', b'p', b't', b'y', 0x12, 0x00]));
        assert_eq!(tensorflow::SequenceExample::decode(&sb[..]).unwrap(), s);
    }

    use std::path::Path;

    /// Regenerates the prost code from `proto/` and compares it with the checked-in files.
    /// With `UPDATE_GOLDEN=1` the checked-in files are rewritten instead.
    #[test]
    fn generated_code_is_fresh() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../proto");
        let fds = protox::compile(
            [
                "tensorflow/core/example/feature.proto",
                "tensorflow/core/example/example.proto",
                "oneflow/core/record/record.proto",
            ],
            [&root],
        )
        .expect("the .proto files compile");
        let out = tempfile::tempdir().expect("temp dir");
        prost_build::Config::new()
            .btree_map(["."])
            .out_dir(out.path())
            .compile_fds(fds)
            .expect("prost-build generates code");
        let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/proto");
        let update = std::env::var_os("UPDATE_GOLDEN").is_some();
        for name in ["tensorflow.rs", "oneflow.rs"] {
            let generated = std::fs::read_to_string(out.path().join(name)).expect("generated");
            let expected = format!(
                "// This file is @generated by prost-build from the workspace's proto/ folder.\n\
                 // Do not edit: run `UPDATE_GOLDEN=1 cargo test -p tfrecord-core generated_code_is_fresh`.\n\n{generated}"
            );
            let path = here.join(name);
            if update {
                std::fs::write(&path, &expected).expect("write generated code");
            } else {
                let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
                assert!(
                    checked_in == expected,
                    "{} is stale; rerun with UPDATE_GOLDEN=1",
                    path.display()
                );
            }
        }
    }
}
