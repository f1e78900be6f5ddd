//! The generic messages with the keys of their feature maps kept as bytes, as TensorFlow's C++
//! parsers read them.
//!
//! `tensorflow.Example`'s maps are `map<string, Feature>`, and proto3 requires a `string` to be
//! UTF-8: the [prost types](super::tensorflow) (like protobuf's own Python runtime) reject a
//! record whose key is not. TensorFlow's `tf.io.parse_example` does not check keys, and its
//! writers write whatever bytes they are given, so such records exist and TensorFlow reads them.
//! These types read every record the prost types read, to the same values (a key as its UTF-8
//! bytes), and also those with keys that are not UTF-8. Values are the prost messages.
//!
//! Decoding follows protobuf's rules as the prost types do: map entries in any field order, a
//! missing key or value as empty, a repeated key keeping its last entry, a repeated message
//! field merged, unknown fields skipped.

use std::collections::BTreeMap;

use prost::Message;

use super::{oneflow, tensorflow};
use crate::codec::wire::{Fields, Value};
use crate::codec::{FeatureBytes, for_each_entry};
use crate::error::{Error, Result};

/// A feature map: key bytes to value, ordered by bytes.
pub type Map<V> = BTreeMap<Vec<u8>, V>;

/// `tensorflow.Features`, with byte keys.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Features {
    /// The features by key.
    pub feature: Map<tensorflow::Feature>,
}

/// `tensorflow.Example`, with byte keys.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Example {
    /// The features; `None` when the record has no `features` field.
    pub features: Option<Features>,
}

/// `tensorflow.FeatureLists`, with byte keys.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FeatureLists {
    /// The feature lists by key.
    pub feature_list: Map<tensorflow::FeatureList>,
}

/// `tensorflow.SequenceExample`, with byte keys.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SequenceExample {
    /// The context features; `None` when the record has no `context` field.
    pub context: Option<Features>,
    /// The feature lists; `None` when the record has no `feature_lists` field.
    pub feature_lists: Option<FeatureLists>,
}

/// `oneflow.OFRecord`, with byte keys.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OfRecord {
    /// The features by key.
    pub feature: Map<oneflow::Feature>,
}

/// A map value: its message, merged from every slice it came in.
fn value<M: Message + Default>(bytes: &FeatureBytes<'_>) -> std::result::Result<M, String> {
    let mut m = M::default();
    for slice in bytes.slices() {
        m.merge(slice).map_err(|e| e.to_string())?;
    }
    Ok(m)
}

/// What a wire-level error says, without the "invalid protobuf message" its kind adds.
fn wire_detail(e: &Error) -> String {
    e.to_string()
        .trim_start_matches("invalid protobuf message: ")
        .to_string()
}

/// Adds the entries of one serialized map message (`field` 1 holds the entries) to `map`; the
/// error says what is malformed. `what` names a value in messages.
fn merge_map<M: Message + Default>(
    msg: &[u8],
    what: &str,
    map: &mut Map<M>,
) -> std::result::Result<(), String> {
    let mut bad = None;
    for_each_entry(msg, 1, &mut |key, v| {
        match value::<M>(&v) {
            Ok(m) => {
                map.insert(key.to_vec(), m);
            }
            Err(e) => {
                bad.get_or_insert_with(|| {
                    format!("{what} \"{}\": {e}", crate::text::c_escape(key))
                });
            }
        }
        Ok(())
    })
    .map_err(|e| wire_detail(&e))?;
    bad.map_or(Ok(()), Err)
}

/// Walks the top-level fields of a message: `f(number, body)` for each length-delimited field
/// among `wanted`; other fields are skipped, and so is a wanted field of another wire type,
/// which protobuf and TensorFlow's parsers read as an unknown field.
fn top_fields(
    bytes: &[u8],
    message: &'static str,
    wanted: &[u32],
    mut f: impl FnMut(u32, &[u8]) -> std::result::Result<(), String>,
) -> Result<()> {
    let mut fields = Fields::new(bytes);
    loop {
        let (num, v) = match fields.next_field() {
            Ok(Some(field)) => field,
            Ok(None) => return Ok(()),
            Err(e) => return Err(Error::decode(message, e.0)),
        };
        let Value::Len(body) = v else {
            continue;
        };
        if !wanted.contains(&num) {
            continue;
        }
        f(num, body).map_err(|detail| Error::decode(message, detail))?;
    }
}

/// Checks that the keys of a map stay distinct as JSON object keys: a key that is not UTF-8 is
/// written in its escaped form, which another key of the map may spell.
fn distinct_json_keys<V>(map: &Map<V>, what: &str) -> Result<()> {
    for key in map.keys() {
        if std::str::from_utf8(key).is_ok() {
            continue;
        }
        let shown = crate::text::c_escape(key);
        if map.contains_key(shown.as_bytes()) {
            return Err(Error::feature(format!(
                "{what} key \"{shown}\" is not UTF-8, and JSON writes it as `{shown}`, which is \
                 also a key of the record: a JSON object cannot hold both (the text format can)"
            )));
        }
    }
    Ok(())
}

impl Example {
    /// Decodes a serialized `tensorflow.Example`.
    ///
    /// # Errors
    /// Bytes that are not a valid `tensorflow.Example` (anything but the keys' UTF-8).
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let mut out = Example::default();
        top_fields(bytes, "tensorflow.Example", &[1], |_, body| {
            let features = out.features.get_or_insert_with(Features::default);
            merge_map(body, "feature", &mut features.feature)
        })?;
        Ok(out)
    }

    /// Every feature key, in order.
    pub fn keys(&self) -> impl Iterator<Item = &[u8]> {
        self.features
            .iter()
            .flat_map(|f| f.feature.keys())
            .map(Vec::as_slice)
    }

    /// Serializes the record as [`encode_example`](super::encode_example) does.
    pub fn encode(&self) -> Vec<u8> {
        super::example_bytes(self.features.as_ref().map(|f| &f.feature))
    }

    /// The record as an `OFRecord`, as
    /// [`convert::example_to_ofrecord`](crate::convert::example_to_ofrecord) converts it; keys
    /// are kept.
    pub fn to_ofrecord(&self) -> OfRecord {
        OfRecord {
            feature: self
                .features
                .as_ref()
                .map(|f| crate::convert::features_to_of(&f.feature))
                .unwrap_or_default(),
        }
    }

    /// The protobuf text format, as [`text::example_to_text`](crate::text::example_to_text)
    /// writes it; a key that is not UTF-8 is escaped as any other (`key: "\377"`).
    pub fn to_text(&self) -> String {
        crate::text::example_text(self.features.as_ref().map(|f| &f.feature))
    }

    /// The proto3 JSON mapping, as [`json::example_to_json`](crate::json::example_to_json)
    /// writes it, with a key that is not UTF-8 in its escaped form
    /// (its escape in the text format, [`c_escape`](crate::text::c_escape)).
    ///
    /// # Errors
    /// A key that is not UTF-8 whose escaped form is also a key of the record.
    pub fn to_json(&self) -> Result<serde_json::Value> {
        json_value(|out| self.write_json(out))
    }

    /// Appends the text of [`to_json`](Example::to_json) to `out`, written in one pass.
    ///
    /// # Errors
    /// As [`to_json`](Example::to_json); nothing is appended then.
    pub fn write_json(&self, out: &mut Vec<u8>) -> Result<()> {
        let features = self.features.as_ref().map(|f| &f.feature);
        if let Some(f) = features {
            distinct_json_keys(f, "feature")?;
        }
        crate::json::write::example(out, features);
        Ok(())
    }
}

impl SequenceExample {
    /// Decodes a serialized `tensorflow.SequenceExample`.
    ///
    /// # Errors
    /// Bytes that are not a valid `tensorflow.SequenceExample` (anything but the keys' UTF-8).
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let mut out = SequenceExample::default();
        top_fields(bytes, "tensorflow.SequenceExample", &[1, 2], |num, body| {
            if num == 1 {
                let context = out.context.get_or_insert_with(Features::default);
                merge_map(body, "context feature", &mut context.feature)
            } else {
                let lists = out.feature_lists.get_or_insert_with(FeatureLists::default);
                merge_map(body, "feature list", &mut lists.feature_list)
            }
        })?;
        Ok(out)
    }

    /// Every key of the context features, then every key of the feature lists, each in order.
    pub fn keys(&self) -> impl Iterator<Item = &[u8]> {
        let context = self.context.iter().flat_map(|f| f.feature.keys());
        let lists = self
            .feature_lists
            .iter()
            .flat_map(|l| l.feature_list.keys());
        context.chain(lists).map(Vec::as_slice)
    }

    /// Serializes the record as [`encode_sequence_example`](super::encode_sequence_example)
    /// does.
    pub fn encode(&self) -> Vec<u8> {
        super::sequence_example_bytes(
            self.context.as_ref().map(|c| &c.feature),
            self.feature_lists.as_ref().map(|l| &l.feature_list),
        )
    }

    /// The protobuf text format, as
    /// [`text::sequence_example_to_text`](crate::text::sequence_example_to_text) writes it; a
    /// key that is not UTF-8 is escaped as any other.
    pub fn to_text(&self) -> String {
        crate::text::sequence_example_text(
            self.context.as_ref().map(|c| &c.feature),
            self.feature_lists.as_ref().map(|l| &l.feature_list),
        )
    }

    /// The proto3 JSON mapping, as
    /// [`json::sequence_example_to_json`](crate::json::sequence_example_to_json) writes it,
    /// with a key that is not UTF-8 in its escaped form
    /// (its escape in the text format, [`c_escape`](crate::text::c_escape)).
    ///
    /// # Errors
    /// A key that is not UTF-8 whose escaped form is also a key of the same map.
    pub fn to_json(&self) -> Result<serde_json::Value> {
        json_value(|out| self.write_json(out))
    }

    /// Appends the text of [`to_json`](SequenceExample::to_json) to `out`, written in one pass.
    ///
    /// # Errors
    /// As [`to_json`](SequenceExample::to_json); nothing is appended then.
    pub fn write_json(&self, out: &mut Vec<u8>) -> Result<()> {
        let context = self.context.as_ref().map(|c| &c.feature);
        let lists = self.feature_lists.as_ref().map(|l| &l.feature_list);
        if let Some(c) = context {
            distinct_json_keys(c, "context feature")?;
        }
        if let Some(l) = lists {
            distinct_json_keys(l, "feature list")?;
        }
        crate::json::write::sequence_example(out, context, lists);
        Ok(())
    }
}

impl OfRecord {
    /// Decodes a serialized `oneflow.OFRecord`.
    ///
    /// # Errors
    /// Bytes that are not a valid `oneflow.OFRecord` (anything but the keys' UTF-8).
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let mut out = OfRecord::default();
        merge_map(bytes, "feature", &mut out.feature)
            .map_err(|detail| Error::decode("oneflow.OFRecord", detail))?;
        Ok(out)
    }

    /// Every feature key, in order.
    pub fn keys(&self) -> impl Iterator<Item = &[u8]> {
        self.feature.keys().map(Vec::as_slice)
    }

    /// Serializes the record as [`encode_ofrecord`](super::encode_ofrecord) does.
    pub fn encode(&self) -> Vec<u8> {
        super::ofrecord_bytes(&self.feature)
    }

    /// The record as a `tf.train.Example`, as
    /// [`convert::ofrecord_to_example`](crate::convert::ofrecord_to_example) converts it; keys
    /// are kept.
    ///
    /// # Errors
    /// A double list without `allow_lossy_double`; the error names the feature key (escaped as
    /// in the text format when it is not UTF-8).
    pub fn to_example(&self, allow_lossy_double: bool) -> Result<Example> {
        let feature = crate::convert::features_to_tf(&self.feature, allow_lossy_double, |k| {
            crate::text::shown_key(k)
        })?;
        Ok(Example {
            features: Some(Features { feature }),
        })
    }

    /// The protobuf text format, as [`text::ofrecord_to_text`](crate::text::ofrecord_to_text)
    /// writes it; a key that is not UTF-8 is escaped as any other.
    pub fn to_text(&self) -> String {
        crate::text::ofrecord_text(&self.feature)
    }

    /// The proto3 JSON mapping, as [`json::ofrecord_to_json`](crate::json::ofrecord_to_json)
    /// writes it, with a key that is not UTF-8 in its escaped form
    /// (its escape in the text format, [`c_escape`](crate::text::c_escape)).
    ///
    /// # Errors
    /// A key that is not UTF-8 whose escaped form is also a key of the record.
    pub fn to_json(&self) -> Result<serde_json::Value> {
        json_value(|out| self.write_json(out))
    }

    /// Appends the text of [`to_json`](OfRecord::to_json) to `out`, written in one pass.
    ///
    /// # Errors
    /// As [`to_json`](OfRecord::to_json); nothing is appended then.
    pub fn write_json(&self, out: &mut Vec<u8>) -> Result<()> {
        distinct_json_keys(&self.feature, "feature")?;
        crate::json::write::ofrecord(out, &self.feature);
        Ok(())
    }
}

/// The JSON text `write` appends, read back as a value.
fn json_value(write: impl FnOnce(&mut Vec<u8>) -> Result<()>) -> Result<serde_json::Value> {
    let mut out = Vec::new();
    write(&mut out)?;
    serde_json::from_slice(&out).map_err(|e| Error::json(e.to_string()))
}

fn bytes_keyed<V>(map: BTreeMap<String, V>) -> Map<V> {
    map.into_iter().map(|(k, v)| (k.into_bytes(), v)).collect()
}

impl From<tensorflow::Features> for Features {
    fn from(f: tensorflow::Features) -> Self {
        Features {
            feature: bytes_keyed(f.feature),
        }
    }
}

impl From<tensorflow::Example> for Example {
    fn from(e: tensorflow::Example) -> Self {
        Example {
            features: e.features.map(Features::from),
        }
    }
}

impl From<tensorflow::SequenceExample> for SequenceExample {
    fn from(e: tensorflow::SequenceExample) -> Self {
        SequenceExample {
            context: e.context.map(Features::from),
            feature_lists: e.feature_lists.map(|l| FeatureLists {
                feature_list: bytes_keyed(l.feature_list),
            }),
        }
    }
}

impl From<oneflow::OfRecord> for OfRecord {
    fn from(r: oneflow::OfRecord) -> Self {
        OfRecord {
            feature: bytes_keyed(r.feature),
        }
    }
}

#[cfg(test)]
mod tests;
