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

/// Whether `list`, a list body of `kind`, is in the layout every writer produces and sound:
/// bytes values each in a field 1, numbers in one packed field 1 (or none). `true` only where
/// [`check_list`] accepts; `false` decides nothing (the caller asks [`check_list`]), so this
/// only has to be quick on the common layout.
#[inline(always)]
pub(crate) fn plain_list_is_sound(kind: Kind, list: &[u8]) -> bool {
    if kind == Kind::Bytes {
        let mut rest = list;
        loop {
            match rest {
                [] => return true,
                [0x0a, n, tail @ ..] if *n < 0x80 => match tail.get(usize::from(*n)..) {
                    Some(after) => rest = after,
                    None => return false,
                },
                [0x0a, tail @ ..] => match wire::split_len(tail) {
                    Some((_, after)) => rest = after,
                    None => return false,
                },
                _ => return false,
            }
        }
    }
    let run = match list {
        [] => return true,
        [0x0a, tail @ ..] => match wire::split_len(tail) {
            Some((run, [])) => run,
            _ => return false,
        },
        _ => return false,
    };
    match kind {
        Kind::Float => run.len().is_multiple_of(4),
        Kind::Double => run.len().is_multiple_of(8),
        Kind::Int32 | Kind::Int64 => packed_varints_are_short(run),
        Kind::Bytes => false,
    }
}

/// Whether `run`, a packed run of varints, ends on a varint's last byte and holds no varint
/// of ten bytes or more (the only ones that can overflow 64 bits): then every varint in it
/// reads. Looks at eight bytes at a time; `false` decides nothing.
#[inline(always)]
fn packed_varints_are_short(run: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    if run.last().is_some_and(|&b| b >= 0x80) {
        return false;
    }
    // Bytes with the high bit set (a varint goes on) just before the current word.
    let mut going_on = 0u32;
    let (words, tail) = run.as_chunks::<8>();
    for w in words {
        // The high bit of each byte that ends a varint.
        let ends = !u64::from_le_bytes(*w) & HIGH;
        // Nine bytes that go on make a varint of ten bytes or more; within one word there are
        // at most six between two ends.
        if ends == 0 || going_on + ends.trailing_zeros() / 8 >= 9 {
            return false;
        }
        going_on = ends.leading_zeros() / 8;
    }
    for &b in tail {
        going_on = if b < 0x80 { 0 } else { going_on + 1 };
        if going_on >= 9 {
            return false;
        }
    }
    true
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

/// The kind of list field `num` of a `Feature` holds, as `dialect` numbers them; `None` for an
/// unknown field, which decoding skips.
#[inline(always)]
fn kind_of(dialect: Dialect, num: u32) -> Option<Kind> {
    match (dialect, num) {
        (_, 1) => Some(Kind::Bytes),
        (_, 2) => Some(Kind::Float),
        (Dialect::Tf, 3) | (Dialect::Of, 5) => Some(Kind::Int64),
        (Dialect::Of, 3) => Some(Kind::Double),
        (Dialect::Of, 4) => Some(Kind::Int32),
        _ => None,
    }
}

/// A `Feature` body: each list of a known kind checked.
#[inline]
fn feature(message: &'static str, dialect: Dialect, key: &[u8], body: &[u8]) -> Result<()> {
    // One list in the layout every writer produces, checked in line; anything else (and any
    // damage, to report it) the general way.
    if let Some((tag, list)) = single_list(body)
        && let Some(kind) = kind_of(dialect, u32::from(tag >> 3))
        && plain_list_is_sound(kind, list)
    {
        return Ok(());
    }
    feature_fields(message, dialect, key, body)
}

/// [`feature`] for any layout, with the error naming the key.
#[inline(never)]
fn feature_fields(message: &'static str, dialect: Dialect, key: &[u8], body: &[u8]) -> Result<()> {
    let fast = single_list(body).map(|(tag, list)| (u32::from(tag >> 3), Value::Len(list)));
    let each = |num: u32, value: Value<'_>| {
        let Some(kind) = kind_of(dialect, num) else {
            return Ok(());
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
    let mut rest = body;
    while !rest.is_empty() {
        rest = map_field(message, rest, &mut value)?;
    }
    Ok(())
}

/// The field at the front of a non-empty map body: an entry's value checked by `value`, any
/// other field skipped. Returns the bytes after it.
#[inline(always)]
fn map_field<'a>(
    message: &'static str,
    body: &'a [u8],
    value: &mut impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<&'a [u8]> {
    // An entry under its one-byte tag, as every writer puts it; any other field the general
    // walk reads, which also reports what is malformed.
    if let [0x0a, tail @ ..] = body
        && let Some((entry, after)) = wire::split_len(tail)
    {
        entry_value(message, entry, value)?;
        return Ok(after);
    }
    let mut fields = Fields::new(body);
    if let Some((num, v)) = fields.next_field().map_err(|e| bad(message, e.0))?
        && num == 1
    {
        let Value::Len(entry) = v else {
            return Err(bad(message, "a map entry is not a message"));
        };
        entry_value(message, entry, value)?;
    }
    Ok(fields.rest())
}

/// A feature map body (`Features`, `OFRecord`): each entry's feature checked.
fn feature_map(message: &'static str, dialect: Dialect, body: &[u8]) -> Result<()> {
    let mut rest = body;
    loop {
        // Entries in the layout every writer produces, holding one list in the layout they
        // write, pass here; any other field (and any damage, to report it) the general way.
        while let Some(entry) = plain_entry(rest)
            && let Some(kind) = kind_of(dialect, u32::from(entry.tag >> 3))
            && plain_list_is_sound(kind, entry.list)
        {
            rest = &rest[entry.len..];
        }
        if rest.is_empty() {
            return Ok(());
        }
        rest = map_field(message, rest, &mut |key, v| {
            feature(message, dialect, key, v)
        })?;
    }
}

/// One map entry's value (or values) checked by `value`, with the entry's key.
#[inline(always)]
fn entry_value(
    message: &'static str,
    entry: &[u8],
    value: &mut impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<()> {
    match canonical_entry(entry) {
        Some((key, v)) => value(key, v),
        None => entry_fields(message, entry, value),
    }
}

/// [`entry_value`] for an entry in any layout.
#[inline(never)]
fn entry_fields(
    message: &'static str,
    entry: &[u8],
    value: &mut impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<()> {
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
}

/// A feature map entry in the layout every writer produces, at the front of a map body: under
/// its one-byte tag and a shortest length, `key` then `value`, the value one list.
#[derive(Clone, Copy)]
pub(crate) struct PlainEntry<'a> {
    /// The bytes of the whole field, its tag and length included.
    pub(crate) len: usize,
    /// Where the list's tag is in the field.
    pub(crate) tag_at: usize,
    /// The list's tag: one byte, wire type 2.
    pub(crate) tag: u8,
    /// The list's body.
    pub(crate) list: &'a [u8],
}

/// The entry at the front of `map` when it is a [`PlainEntry`]; `None` decides nothing (the
/// general walk reads the field and reports what is wrong).
#[inline(always)]
pub(crate) fn plain_entry(map: &[u8]) -> Option<PlainEntry<'_>> {
    // Every length under 128, the usual case: `0a E 0a K key 12 V T L list`, where the
    // entry's length E bounds the others, so that each is one byte and fixed by what is left.
    if let [0x0a, e, 0x0a, k, ..] = *map
        && e < 0x80
        && let Some(field) = map.get(..2 + usize::from(e))
        && let Some(&[0x12, v, tag, l]) = field.get(4 + usize::from(k)..8 + usize::from(k))
        && usize::from(v) + usize::from(k) + 4 == usize::from(e)
        && usize::from(l) + usize::from(k) + 6 == usize::from(e)
        && tag & 7 == LEN
        && (0x08..0x80).contains(&tag)
    {
        let tag_at = 6 + usize::from(k);
        return Some(PlainEntry {
            len: field.len(),
            tag_at,
            tag,
            list: &field[tag_at + 2..],
        });
    }
    plain_entry_long(map)
}

/// [`plain_entry`] for entries of 128 bytes or more, and for what is not in the usual layout.
#[inline]
fn plain_entry_long(map: &[u8]) -> Option<PlainEntry<'_>> {
    let [0x0a, tail @ ..] = map else {
        return None;
    };
    let (entry, after) = wire::split_len(tail)?;
    let len = map.len() - after.len();
    // A longer length than needed is read the same, but is not what writers write.
    if len != 1 + wire::varint_len(entry.len() as u64) + entry.len() {
        return None;
    }
    let (_, value) = canonical_entry(entry)?;
    let (tag, list) = single_list(value)?;
    Some(PlainEntry {
        len,
        tag_at: len - value.len(),
        tag,
        list,
    })
}

/// A map entry in the layout every writer produces, `key` then `value`: `(key, value)`.
#[inline(always)]
pub(crate) fn canonical_entry(entry: &[u8]) -> Option<(&[u8], &[u8])> {
    // A key and a value of under 128 bytes each, the usual case: `0a K key 12 V value`.
    if let [0x0a, k, rest @ ..] = entry
        && *k < 0x80
        && let Some((key, [0x12, v, value @ ..])) = rest.split_at_checked(usize::from(*k))
        && *v < 0x80
        && usize::from(*v) == value.len()
    {
        return Some((key, value));
    }
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
#[inline(always)]
pub(crate) fn single_list(feature: &[u8]) -> Option<(u8, &[u8])> {
    let (&tag, rest) = feature.split_first()?;
    let (list, rest) = wire::split_len(rest)?;
    // One tag byte, wire type 2, and a field number: 0 is none (the walker refuses it too).
    (rest.is_empty() && tag & 7 == LEN && (0x08..0x80).contains(&tag)).then_some((tag, list))
}

fn features(message: &'static str, body: &[u8]) -> Result<()> {
    feature_map(message, Dialect::Tf, body)
}

/// Checks that `bytes` decode as a `tensorflow.Example`.
///
/// # Errors
/// What decoding would refuse, with the feature key where it applies.
pub fn check_example(bytes: &[u8]) -> Result<()> {
    const M: &str = "tensorflow.Example";
    walk(M, bytes, |num, v| match (num, v) {
        (1, Value::Len(body)) => features(M, body),
        // Of another wire type, an unknown field (as protobuf and TensorFlow read it).
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
        // Of another wire type, an unknown field (as protobuf and TensorFlow read it).
        _ => Ok(()),
    })
}

/// Checks that `bytes` decode as a `oneflow.OFRecord`.
///
/// # Errors
/// As [`check_example`].
pub fn check_ofrecord(bytes: &[u8]) -> Result<()> {
    const M: &str = "oneflow.OFRecord";
    feature_map(M, Dialect::Of, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::proto::bytes_keys;
    use proptest::prelude::*;

    fn example() -> impl Strategy<Value = Vec<u8>> {
        crate::proto::strategies::examples("[a-z]{0,3}", 0..4).prop_map(|e| e.encode_to_vec())
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

    /// List bodies near the common layout: a packed field 1 (or bytes values), then damage.
    fn list_body() -> impl Strategy<Value = Vec<u8>> {
        // Varints of every length, some of ten bytes with a last byte past 1 (an overflow).
        let varint = prop_oneof![
            any::<u64>().prop_map(|v| {
                let mut b = Vec::new();
                wire::put_varint(&mut b, v);
                b
            }),
            (0u8..0x80, 0usize..12).prop_map(|(last, n)| {
                let mut b = vec![0x80u8; n];
                b.push(last);
                b
            }),
        ];
        let packed = proptest::collection::vec(varint, 0..12).prop_map(|vs| {
            let run = vs.concat();
            let mut b = vec![0x0a];
            wire::put_varint(&mut b, run.len() as u64);
            b.extend_from_slice(&run);
            b
        });
        let values =
            proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 0..4)
                .prop_map(|vs| {
                    let mut b = Vec::new();
                    for v in vs {
                        b.push(0x0a);
                        wire::put_varint(&mut b, v.len() as u64);
                        b.extend_from_slice(&v);
                    }
                    b
                });
        (
            prop_oneof![packed, values],
            proptest::collection::vec((any::<usize>(), any::<u8>()), 0..2),
            any::<usize>(),
        )
            .prop_map(|(b, flips, cut)| {
                if flips.is_empty() {
                    b
                } else {
                    damage(b, &flips, cut)
                }
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// The quick check of the common layout accepts only what the full check accepts, and
        /// accepts the common layout itself whenever the full check does.
        #[test]
        fn the_quick_list_check_never_accepts_more(list in list_body()) {
            for kind in [Kind::Bytes, Kind::Float, Kind::Double, Kind::Int32, Kind::Int64] {
                let full = check_list(kind, &list).is_ok();
                if plain_list_is_sound(kind, &list) {
                    prop_assert!(full);
                }
            }
        }
    }

    #[test]
    fn the_quick_check_takes_short_varints_and_leaves_long_ones() {
        for n in 0..=12usize {
            for lead in 0..8usize {
                // `lead` one-byte varints, then one of `n + 1` bytes ending in 2 (an overflow
                // at ten bytes), so that the long varint falls anywhere in a word.
                let mut run = vec![1u8; lead];
                run.extend(std::iter::repeat_n(0x80, n));
                run.push(2);
                let mut list = vec![0x0a];
                wire::put_varint(&mut list, run.len() as u64);
                list.extend_from_slice(&run);
                let full = check_list(Kind::Int64, &list).is_ok();
                assert_eq!(full, n < 9, "{n} {lead}");
                // Varints of up to eight bytes pass; one of nine may be left to the full check.
                let quick = plain_list_is_sound(Kind::Int64, &list);
                assert!(!quick || full, "{n} {lead}");
                assert!(quick || n >= 8, "{n} {lead}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// The one-byte form of a plain entry reads what the general form reads, on entries of
        /// every size around 128 bytes, damaged or not.
        #[test]
        fn plain_entries_read_alike_in_both_forms(
            key_len in 0usize..140,
            list_len in 0usize..140,
            tag in any::<u8>(),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..2),
            cut in any::<usize>(),
            tail in proptest::collection::vec(any::<u8>(), 0..3),
        ) {
            let mut value = vec![tag];
            wire::put_varint(&mut value, list_len as u64);
            value.extend(std::iter::repeat_n(0x5a, list_len));
            let mut entry = vec![0x0a];
            wire::put_varint(&mut entry, key_len as u64);
            entry.extend(std::iter::repeat_n(b'k', key_len));
            entry.push(0x12);
            wire::put_varint(&mut entry, value.len() as u64);
            entry.extend_from_slice(&value);
            let mut map = vec![0x0a];
            wire::put_varint(&mut map, entry.len() as u64);
            map.extend_from_slice(&entry);
            let mut map = if flips.is_empty() { map } else { damage(map, &flips, cut) };
            map.extend_from_slice(&tail);
            let read = |e: Option<PlainEntry<'_>>| e.map(|e| (e.len, e.tag_at, e.tag, e.list.to_vec()));
            prop_assert_eq!(read(plain_entry(&map)), read(plain_entry_long(&map)));
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
