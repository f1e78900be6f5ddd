//! Checking that bytes are a valid serialized `tensorflow.Example`, `SequenceExample` or
//! `oneflow.OFRecord` without decoding them into maps: every field walked, every list checked
//! as the decoder reads it (wire types, packed lengths, varints). What a decode would refuse is
//! an error here too, with the key of the feature where the damage is; keys are bytes, as
//! TensorFlow takes them (a key that is not UTF-8 is no error).

use crate::codec::wire::{self, Fields, Value};
use crate::error::{Error, Result};

/// Protobuf wire type 2, as [`Value::wire_type`] gives it.
const LEN: u8 = 2;

/// The list messages, all with their values in field 1.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `BytesList`.
    Bytes,
    /// `FloatList`.
    Float,
    /// `DoubleList` (OFRecord).
    Double,
    /// `Int32List` (OFRecord).
    Int32,
    /// `Int64List`.
    Int64,
}

/// Checks a list body as the decoder reads it: field 1 packed or not, the right wire type,
/// whole fixed-width values, well-formed varints.
pub(crate) fn check_list(kind: Kind, list: &[u8]) -> std::result::Result<(), &'static str> {
    let mut fields = Fields::new(list);
    while let Some((num, value)) = fields.next_field().map_err(|e| e.0)? {
        if num != 1 {
            continue;
        }
        let ok = match (kind, value) {
            (Kind::Bytes, Value::Len(_))
            | (Kind::Float, Value::Fixed32(_))
            | (Kind::Double, Value::Fixed64(_))
            | (Kind::Int32 | Kind::Int64, Value::Varint(_)) => true,
            (Kind::Float, Value::Len(b)) => b.len().is_multiple_of(4),
            (Kind::Double, Value::Len(b)) => b.len().is_multiple_of(8),
            (Kind::Int32 | Kind::Int64, Value::Len(mut b)) => {
                while !b.is_empty() {
                    wire::get_varint(&mut b).map_err(|e| e.0)?;
                }
                true
            }
            _ => false,
        };
        if !ok {
            return Err(match value.wire_type() {
                LEN => "a packed list's length is not a whole number of values",
                _ => "a list value has the wrong wire type",
            });
        }
    }
    Ok(())
}

/// Which message a feature map belongs to, for its kinds and its messages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Tf,
    Of,
}

fn bad(message: &'static str, what: impl std::fmt::Display) -> Error {
    Error::decode(message, what)
}

/// The fields of `body`, each handed to `each`; a malformed field is an error.
fn walk<'a>(
    message: &'static str,
    body: &'a [u8],
    mut each: impl FnMut(u32, Value<'a>) -> Result<()>,
) -> Result<()> {
    let mut fields = Fields::new(body);
    while let Some((num, value)) = fields.next_field().map_err(|e| bad(message, e.0))? {
        each(num, value)?;
    }
    Ok(())
}

/// A `Feature` body: each list of a known kind checked.
fn feature(message: &'static str, dialect: Dialect, key: &[u8], body: &[u8]) -> Result<()> {
    let fast = single_list(body).map(|(tag, list)| (u32::from(tag >> 3), Value::Len(list)));
    let each = |num: u32, value: Value<'_>| {
        let kind = match (dialect, num) {
            (_, 1) => Kind::Bytes,
            (_, 2) => Kind::Float,
            (Dialect::Tf, 3) | (Dialect::Of, 5) => Kind::Int64,
            (Dialect::Of, 3) => Kind::Double,
            (Dialect::Of, 4) => Kind::Int32,
            _ => return Ok(()),
        };
        let checked = match value {
            Value::Len(list) => check_list(kind, list),
            _ => Err("a feature's list is not a message"),
        };
        checked
            .map_err(|what| bad(message, what).with_key(String::from_utf8_lossy(key).into_owned()))
    };
    match fast {
        Some((num, value)) => each(num, value),
        None => walk(message, body, each),
    }
}

/// A map body (`Features`, `FeatureLists`, `OFRecord`): each entry's value checked by `value`.
fn map(
    message: &'static str,
    body: &[u8],
    mut value: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<()> {
    walk(message, body, |num, v| {
        if num != 1 {
            return Ok(());
        }
        let Value::Len(entry) = v else {
            return Err(bad(message, "a map entry is not a message"));
        };
        if let Some((key, v)) = canonical_entry(entry) {
            return value(key, v);
        }
        // The key may come after the value: the values are checked once the entry is read.
        let mut key: &[u8] = &[];
        let mut first: Option<&[u8]> = None;
        let mut rest: Vec<&[u8]> = Vec::new();
        walk(message, entry, |num, v| {
            match (num, v) {
                (1, Value::Len(k)) => key = k,
                (2, Value::Len(b)) if first.is_none() => first = Some(b),
                (2, Value::Len(b)) => rest.push(b),
                (1 | 2, _) => {
                    return Err(bad(
                        message,
                        "a map entry's key or value has the wrong wire type",
                    ));
                }
                _ => {}
            }
            Ok(())
        })?;
        // A value written twice merges: each part is checked.
        for b in first.into_iter().chain(rest) {
            value(key, b)?;
        }
        Ok(())
    })
}

/// A map entry in the layout every writer produces, `key` then `value`: `(key, value)`.
pub(crate) fn canonical_entry(entry: &[u8]) -> Option<(&[u8], &[u8])> {
    let (key, rest) = entry
        .split_first()
        .filter(|(t, _)| **t == 0x0a)
        .and_then(|(_, r)| wire::split_len(r))?;
    let (value, rest) = rest
        .split_first()
        .filter(|(t, _)| **t == 0x12)
        .and_then(|(_, r)| wire::split_len(r))?;
    rest.is_empty().then_some((key, value))
}

/// A `Feature` body that is one list field and nothing else: `(tag byte, list body)`.
pub(crate) fn single_list(feature: &[u8]) -> Option<(u8, &[u8])> {
    let (&tag, rest) = feature.split_first()?;
    let (list, rest) = wire::split_len(rest)?;
    // One tag byte, wire type 2, and a field number: 0 is none (the walker refuses it too).
    (rest.is_empty() && tag & 7 == LEN && (0x08..0x80).contains(&tag)).then_some((tag, list))
}

fn features(message: &'static str, body: &[u8]) -> Result<()> {
    map(message, body, |key, v| {
        feature(message, Dialect::Tf, key, v)
    })
}

/// Checks that `bytes` decode as a `tensorflow.Example`.
///
/// # Errors
/// What decoding would refuse, with the feature key where it applies.
pub fn check_example(bytes: &[u8]) -> Result<()> {
    const M: &str = "tensorflow.Example";
    walk(M, bytes, |num, v| match (num, v) {
        (1, Value::Len(body)) => features(M, body),
        (1, _) => Err(bad(M, "`features` is not a message")),
        _ => Ok(()),
    })
}

/// Checks that `bytes` decode as a `tensorflow.SequenceExample`.
///
/// # Errors
/// As [`check_example`].
pub fn check_sequence_example(bytes: &[u8]) -> Result<()> {
    const M: &str = "tensorflow.SequenceExample";
    walk(M, bytes, |num, v| match (num, v) {
        (1, Value::Len(body)) => features(M, body),
        (2, Value::Len(body)) => map(M, body, |key, list| {
            walk(M, list, |num, v| match (num, v) {
                (1, Value::Len(f)) => feature(M, Dialect::Tf, key, f),
                (1, _) => Err(bad(M, "a feature list's feature is not a message")
                    .with_key(String::from_utf8_lossy(key).into_owned())),
                _ => Ok(()),
            })
        }),
        (1 | 2, _) => Err(bad(M, "`context` or `feature_lists` is not a message")),
        _ => Ok(()),
    })
}

/// Checks that `bytes` decode as a `oneflow.OFRecord`.
///
/// # Errors
/// As [`check_example`].
pub fn check_ofrecord(bytes: &[u8]) -> Result<()> {
    const M: &str = "oneflow.OFRecord";
    map(M, bytes, |key, v| feature(M, Dialect::Of, key, v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::proto::{bytes_keys, tensorflow};
    use proptest::prelude::*;

    fn example() -> impl Strategy<Value = Vec<u8>> {
        use tensorflow::feature::Kind as K;
        let kind = prop_oneof![
            Just(None),
            proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..4), 0..3)
                .prop_map(|value| Some(K::BytesList(tensorflow::BytesList { value }))),
            proptest::collection::vec(any::<f32>(), 0..4)
                .prop_map(|value| Some(K::FloatList(tensorflow::FloatList { value }))),
            proptest::collection::vec(any::<i64>(), 0..4)
                .prop_map(|value| Some(K::Int64List(tensorflow::Int64List { value }))),
        ];
        proptest::collection::btree_map("[a-z]{0,3}", kind, 0..4).prop_map(|m| {
            let feature = m
                .into_iter()
                .map(|(k, kind)| (k, tensorflow::Feature { kind }))
                .collect();
            tensorflow::Example {
                features: Some(tensorflow::Features { feature }),
            }
            .encode_to_vec()
        })
    }

    fn damage(mut bytes: Vec<u8>, flips: &[(usize, u8)], cut: usize) -> Vec<u8> {
        if !bytes.is_empty() {
            for &(at, x) in flips {
                let i = at % bytes.len();
                bytes[i] ^= x;
            }
        }
        bytes.truncate(cut % (bytes.len() + 1));
        bytes
    }

    /// The check accepts what the decoder accepts (groups aside, which these messages never
    /// use and the walker refuses), and nothing else.
    fn agrees(checked: Result<()>, decoded: bool) -> std::result::Result<(), TestCaseError> {
        match checked {
            Ok(()) => prop_assert!(decoded, "the check accepts what the decoder refuses"),
            Err(e) => prop_assert!(
                !decoded || e.to_string().contains("groups"),
                "the check refuses what the decoder accepts: {e}"
            ),
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn examples_are_checked_as_they_decode(
            bytes in example(),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..3),
            cut in any::<usize>(),
        ) {
            let bytes = if flips.is_empty() { bytes } else { damage(bytes, &flips, cut) };
            agrees(check_example(&bytes), bytes_keys::Example::decode(&bytes).is_ok())?;
            agrees(check_ofrecord(&bytes), bytes_keys::OfRecord::decode(&bytes).is_ok())?;
            agrees(
                check_sequence_example(&bytes),
                bytes_keys::SequenceExample::decode(&bytes).is_ok(),
            )?;
        }
    }

    #[test]
    fn a_bad_list_names_its_key() {
        // OFRecord { "d": Feature { double_list: DoubleList { value: packed, 7 bytes } } }
        let list = [&[0x0a, 7][..], &[0u8; 7]].concat();
        let feature = [&[0x1a, list.len() as u8][..], &list].concat();
        let entry = [&[0x0a, 1, b'd', 0x12, feature.len() as u8][..], &feature].concat();
        let bytes = [&[0x0a, entry.len() as u8][..], &entry].concat();
        assert!(bytes_keys::OfRecord::decode(&bytes).is_err());
        let e = check_ofrecord(&bytes).unwrap_err();
        assert_eq!(e.key(), Some("d"), "{e}");
        assert!(e.to_string().contains("packed list"), "{e}");
    }

    #[test]
    fn field_number_zero_is_refused_on_the_fast_path_too() {
        // OFRecord { "k": Feature { <field 0, length-delimited>: "" } }: one tag byte 0x02.
        let feature = [0x02, 0x00];
        let entry = [&[0x0a, 1, b'k', 0x12, feature.len() as u8][..], &feature].concat();
        let bytes = [&[0x0a, entry.len() as u8][..], &entry].concat();
        assert!(bytes_keys::OfRecord::decode(&bytes).is_err());
        assert!(check_ofrecord(&bytes).is_err());
    }
}
