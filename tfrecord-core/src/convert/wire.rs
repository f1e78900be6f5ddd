//! Conversion between serialized `tf.train.Example`s and `OFRecord`s without decoding them into
//! maps: the two messages differ by one wrapper (an Example holds its feature map in a
//! `Features` message) and by the numbering of the feature kinds, so each map entry is copied
//! with its kind's field number rewritten.
//!
//! The result decodes to exactly what decoding, [`example_to_ofrecord`](super::example_to_ofrecord)
//! / [`ofrecord_to_example`](super::ofrecord_to_example) and encoding give: entries keep their
//! order (a key written twice is written twice, and the last still wins), repeated messages
//! still merge, unknown fields are left out, and every list is checked as the decoder checks it
//! (wire types, packed lengths, varints), so malformed input is an error here as it is there.
//! Keys are copied as bytes: a key that is not UTF-8, which TensorFlow accepts, stays as it is.

use crate::codec::wire::{self, Fields, Value, put_len_prefix, put_varint, varint_len};
use crate::error::{Error, Result};
use crate::proto::check::{
    self, Kind, canonical_entry, check_list, plain_list_is_sound, single_list,
};

/// The direction of a conversion, with what each side calls a kind.
#[derive(Clone, Copy)]
enum Direction {
    /// `tf.train.Example` to `OFRecord`.
    ToOf,
    /// `OFRecord` to `tf.train.Example`, narrowing doubles to floats when allowed.
    ToTf { allow_lossy_double: bool },
}

impl Direction {
    fn source(self) -> &'static str {
        match self {
            Direction::ToOf => "tensorflow.Example",
            Direction::ToTf { .. } => "oneflow.OFRecord",
        }
    }
}

fn malformed(dir: Direction, what: impl std::fmt::Display) -> Error {
    Error::decode(dir.source(), what)
}

/// Converts a serialized `tf.train.Example` to a serialized `OFRecord`, appended to `out`.
/// Lossless, as [`example_to_ofrecord`](super::example_to_ofrecord).
///
/// # Errors
/// Bytes that do not decode as a `tf.train.Example`.
pub fn example_to_ofrecord_bytes(example: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let dir = Direction::ToOf;
    let mut fields = Fields::new(example);
    while let Some((num, value)) = fields.next_field().map_err(|e| malformed(dir, e.0))? {
        // Of another wire type, `features` is an unknown field (as protobuf and TensorFlow
        // read it), dropped as unknown fields are.
        let (1, Value::Len(features)) = (num, value) else {
            continue;
        };
        entries(dir, features, out)?;
    }
    Ok(())
}

/// Converts a serialized `OFRecord` to a serialized `tf.train.Example`, appended to `out`, as
/// [`ofrecord_to_example`](super::ofrecord_to_example): int32 lists widen to int64 lists, double
/// lists narrow to float lists only with `allow_lossy_double`.
///
/// # Errors
/// Bytes that do not decode as an `OFRecord`; a double list without `allow_lossy_double`,
/// naming its key.
pub fn ofrecord_to_example_bytes(
    record: &[u8],
    allow_lossy_double: bool,
    out: &mut Vec<u8>,
) -> Result<()> {
    // The `features` field of the Example: its length is known once the entries are written.
    out.push(0x0a);
    let len_at = out.len();
    out.push(0);
    entries(Direction::ToTf { allow_lossy_double }, record, out)?;
    let body = out.len() - len_at - 1;
    if body < 0x80 {
        #[allow(clippy::cast_possible_truncation)]
        {
            out[len_at] = body as u8;
        }
    } else {
        let mut prefix = Vec::with_capacity(varint_len(body as u64));
        put_varint(&mut prefix, body as u64);
        out.splice(len_at..=len_at, prefix);
    }
    Ok(())
}

/// How many runs of entries in the usual layout one map has copied ahead in one piece; past
/// that, entry by entry, so that a map mixing layouts is not copied over and over.
const COPIED_RUNS: usize = 8;

/// Rewrites the map entries (field 1) of a `Features` / `OFRecord` body into `out`.
fn entries(dir: Direction, map: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let mut feature = Vec::new();
    let mut rest = map;
    let mut runs = COPIED_RUNS;
    loop {
        if runs > 0 && plain_entry(dir, rest).is_some() {
            runs -= 1;
            rest = copy_run(dir, rest, out);
        }
        if rest.is_empty() {
            return Ok(());
        }
        rest = rewrite_field(dir, rest, out, &mut feature)?;
    }
}

/// Copies the entries in the layout every writer produces at the front of `map` to `out`: all
/// of `map` in one piece, then walked, each number list's tag rewritten in place, and cut at
/// the first entry in another layout. Returns the bytes from that entry on.
fn copy_run<'a>(dir: Direction, map: &'a [u8], out: &mut Vec<u8>) -> &'a [u8] {
    let base = out.len();
    out.extend_from_slice(map);
    let mut at = 0;
    while let Some((len, tag_at, tag)) = plain_entry(dir, &map[at..]) {
        out[base + at + tag_at] = tag;
        at += len;
    }
    out.truncate(base + at);
    &map[at..]
}

/// Rewrites the field at the front of a non-empty map body into `out` (an entry) or skips it
/// (any other field); `feature` is scratch space. Returns the bytes after it.
fn rewrite_field<'a>(
    dir: Direction,
    map: &'a [u8],
    out: &mut Vec<u8>,
    feature: &mut Vec<u8>,
) -> Result<&'a [u8]> {
    let mut fields = Fields::new(map);
    let Some((num, value)) = fields.next_field().map_err(|e| malformed(dir, e.0))? else {
        return Ok(&[]);
    };
    if num != 1 {
        return Ok(fields.rest());
    }
    let Value::Len(entry) = value else {
        return Err(malformed(dir, "a feature map entry is not a message"));
    };
    if copy_canonical(dir, entry, out)? {
        return Ok(fields.rest());
    }
    let mut key: &[u8] = &[];
    let mut values = Vec::new();
    let mut entry_fields = Fields::new(entry);
    while let Some((num, value)) = entry_fields.next_field().map_err(|e| malformed(dir, e.0))? {
        match (num, value) {
            (1, Value::Len(k)) => key = k,
            // A value written twice merges, as protobuf merges a repeated message.
            (2, Value::Len(v)) => values.push(v),
            (1 | 2, _) => {
                return Err(malformed(
                    dir,
                    "a feature map entry's key or value has the wrong wire type",
                ));
            }
            _ => {}
        }
    }
    feature.clear();
    feature_body(dir, key, &values, feature)?;
    let key_field = 1 + varint_len(key.len() as u64) + key.len();
    let value_field = 1 + varint_len(feature.len() as u64) + feature.len();
    put_len_prefix(out, 1, key_field + value_field);
    put_len_prefix(out, 1, key.len());
    out.extend_from_slice(key);
    put_len_prefix(out, 2, feature.len());
    out.extend_from_slice(feature);
    Ok(fields.rest())
}

/// The map field at the front of `map` when it is a [`PlainEntry`](crate::proto::check::PlainEntry)
/// holding a sound list of a kind both sides have: `(length of the field, offset of the list's
/// tag in it, the tag on the other side)`. `None` decides nothing: the general path reads the
/// field and reports what is wrong.
#[inline(always)]
fn plain_entry(dir: Direction, map: &[u8]) -> Option<(usize, usize, u8)> {
    let entry = check::plain_entry(map)?;
    let (int64_from, int64_to) = match dir {
        Direction::ToOf => (0x1a, 0x2a),
        Direction::ToTf { .. } => (0x2a, 0x1a),
    };
    // Tested one by one, most common first, rather than through `retag`'s table: the kinds of
    // a map's entries come in runs, which branches on each kind predict and a jump does not.
    let (sound, new_tag) = if entry.tag == 0x0a {
        (plain_list_is_sound(Kind::Bytes, entry.list), 0x0a)
    } else if entry.tag == int64_from {
        (plain_list_is_sound(Kind::Int64, entry.list), int64_to)
    } else if entry.tag == 0x12 {
        (plain_list_is_sound(Kind::Float, entry.list), 0x12)
    } else {
        return None;
    };
    sound.then_some((entry.len, entry.tag_at, new_tag))
}

/// The kind of a list under `tag` (a one-byte `Feature` field tag) and its tag on the other
/// side; `None` for a kind that converts otherwise, or not at all.
#[inline(always)]
fn retag(dir: Direction, tag: u8) -> Option<(Kind, u8)> {
    match (dir, tag) {
        (_, 0x0a) => Some((Kind::Bytes, 0x0a)),
        (_, 0x12) => Some((Kind::Float, 0x12)),
        (Direction::ToOf, 0x1a) => Some((Kind::Int64, 0x2a)),
        (Direction::ToTf { .. }, 0x2a) => Some((Kind::Int64, 0x1a)),
        _ => None,
    }
}

/// The entry in the layout every writer produces (`key`, then `value` holding one list), whose
/// list is copied as it is: the entry is copied whole with the one byte of its list's tag
/// rewritten. `Ok(false)` for any other entry, which the general path rewrites.
fn copy_canonical(dir: Direction, entry: &[u8], out: &mut Vec<u8>) -> Result<bool> {
    let Some((key, value)) = canonical_entry(entry) else {
        return Ok(false);
    };
    let Some((tag, list)) = single_list(value) else {
        return Ok(false);
    };
    let Some((kind, new_tag)) = retag(dir, tag) else {
        return Ok(false);
    };
    if !plain_list_is_sound(kind, list) {
        check_list(kind, list).map_err(|what| {
            malformed(dir, what).with_key(String::from_utf8_lossy(key).into_owned())
        })?;
    }
    put_len_prefix(out, 1, entry.len());
    // The value is the entry's tail; its first byte is the list's tag.
    let tag_at = out.len() + (entry.len() - value.len());
    out.extend_from_slice(entry);
    out[tag_at] = new_tag;
    Ok(true)
}

/// Rewrites one `Feature`, the merge of `values` (the bodies of an entry's value, in order):
/// every list checked, and the lists protobuf keeps copied under the other side's field number
/// (or converted: int32 widened, double narrowed). The kinds are a oneof: a list of another
/// kind than the one before it replaces what came before, and lists of one kind in a row merge.
fn feature_body(dir: Direction, key: &[u8], values: &[&[u8]], out: &mut Vec<u8>) -> Result<()> {
    let keyed = |e: Error| e.with_key(String::from_utf8_lossy(key).into_owned());
    // The lists of the kind set last, from the last change of kind on.
    let mut kept: Vec<(u32, To, &[u8])> = Vec::new();
    for body in values {
        let mut fields = Fields::new(body);
        while let Some((num, value)) = fields.next_field().map_err(|e| malformed(dir, e.0))? {
            let Some((kind, to)) = route(dir, num) else {
                continue;
            };
            let Value::Len(list) = value else {
                return Err(keyed(malformed(dir, "a feature's list is not a message")));
            };
            // Checked even when a later kind replaces it: the decoder reads it first.
            check_list(kind, list).map_err(|what| keyed(malformed(dir, what)))?;
            if kept.first().is_some_and(|&(first, ..)| first != num) {
                kept.clear();
            }
            kept.push((num, to, list));
        }
    }
    for (_, to, list) in kept {
        match to {
            To::Field(field) => {
                put_len_prefix(out, field, list.len());
                out.extend_from_slice(list);
            }
            To::Widen => widen_int32(list, out),
            To::Narrow(true) => narrow_double(list, out).map_err(keyed)?,
            To::Narrow(false) => {
                return Err(keyed(Error::feature(
                    "expected a kind tf.train.Example can hold, found double_list \
                     (narrowing to float_list loses precision; allow it explicitly: \
                     `allow_lossy_double`, the CLI's --allow-lossy-double)",
                )));
            }
        }
    }
    Ok(())
}

/// The list kind of `Feature` field `num` on the side converted from, and where the list goes;
/// `None` for a field that side does not know (an unknown field, left out).
fn route(dir: Direction, num: u32) -> Option<(Kind, To)> {
    Some(match (dir, num) {
        (_, 1) => (Kind::Bytes, To::Field(1)),
        (_, 2) => (Kind::Float, To::Field(2)),
        (Direction::ToOf, 3) => (Kind::Int64, To::Field(5)),
        (Direction::ToTf { .. }, 5) => (Kind::Int64, To::Field(3)),
        (Direction::ToTf { .. }, 4) => (Kind::Int32, To::Widen),
        (Direction::ToTf { allow_lossy_double }, 3) => {
            (Kind::Double, To::Narrow(allow_lossy_double))
        }
        _ => return None,
    })
}

/// Where a list goes: copied under another field number, or converted.
#[derive(Clone, Copy)]
enum To {
    Field(u32),
    /// An int32 list becomes an int64 list.
    Widen,
    /// A double list becomes a float list, if narrowing is allowed.
    Narrow(bool),
}

/// Writes an `Int64List` (field 3 of a TensorFlow `Feature`) of a checked `Int32List`'s values,
/// each read as protobuf reads an int32 (the low 32 bits of its varint) and sign-extended.
fn widen_int32(list: &[u8], out: &mut Vec<u8>) {
    let mut packed = Vec::new();
    let mut push = |v: u64| {
        #[allow(clippy::cast_possible_truncation)]
        let low = (v as u32).cast_signed();
        let wide = i64::from(low).cast_unsigned();
        put_varint(&mut packed, wide);
    };
    let mut fields = Fields::new(list);
    while let Ok(Some((num, value))) = fields.next_field() {
        match (num, value) {
            (1, Value::Varint(v)) => push(v),
            (1, Value::Len(mut b)) => {
                while let Ok(v) = wire::get_varint(&mut b) {
                    push(v);
                    if b.is_empty() {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    let body = 1 + varint_len(packed.len() as u64) + packed.len();
    put_len_prefix(out, 3, body);
    put_len_prefix(out, 1, packed.len());
    out.extend_from_slice(&packed);
}

/// Writes a `FloatList` (field 2) of a checked `DoubleList`'s values, each rounded to the
/// nearest `f32`; a finite value beyond the range of a float (which would become infinity) is
/// an error.
fn narrow_double(list: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let mut packed = Vec::new();
    let mut push = |bits: u64| -> Result<()> {
        let d = f64::from_bits(bits);
        let x = crate::feature::narrow_f64(d).ok_or_else(|| super::beyond_float(d))?;
        packed.extend_from_slice(&x.to_le_bytes());
        Ok(())
    };
    let mut fields = Fields::new(list);
    while let Ok(Some((num, value))) = fields.next_field() {
        match (num, value) {
            (1, Value::Fixed64(v)) => push(v)?,
            (1, Value::Len(b)) => {
                for chunk in b.chunks_exact(8) {
                    let mut word = [0u8; 8];
                    word.copy_from_slice(chunk);
                    push(u64::from_le_bytes(word))?;
                }
            }
            _ => {}
        }
    }
    let body = 1 + varint_len(packed.len() as u64) + packed.len();
    put_len_prefix(out, 2, body);
    put_len_prefix(out, 1, packed.len());
    out.extend_from_slice(&packed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::convert::{example_to_ofrecord, ofrecord_to_example};
    use crate::proto::{oneflow, tensorflow};
    use proptest::prelude::*;

    fn tf_kind() -> impl Strategy<Value = Option<tensorflow::feature::Kind>> {
        use tensorflow::feature::Kind;
        prop_oneof![
            Just(None),
            proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..6), 0..4)
                .prop_map(|value| Some(Kind::BytesList(tensorflow::BytesList { value }))),
            proptest::collection::vec(any::<f32>(), 0..5)
                .prop_map(|value| Some(Kind::FloatList(tensorflow::FloatList { value }))),
            proptest::collection::vec(any::<i64>(), 0..5)
                .prop_map(|value| Some(Kind::Int64List(tensorflow::Int64List { value }))),
        ]
    }

    fn of_kind() -> impl Strategy<Value = Option<oneflow::feature::Kind>> {
        use oneflow::feature::Kind;
        prop_oneof![
            Just(None),
            proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..6), 0..4)
                .prop_map(|value| Some(Kind::BytesList(oneflow::BytesList { value }))),
            proptest::collection::vec(any::<f32>(), 0..5)
                .prop_map(|value| Some(Kind::FloatList(oneflow::FloatList { value }))),
            proptest::collection::vec(any::<f64>(), 0..5)
                .prop_map(|value| Some(Kind::DoubleList(oneflow::DoubleList { value }))),
            proptest::collection::vec(any::<i32>(), 0..5)
                .prop_map(|value| Some(Kind::Int32List(oneflow::Int32List { value }))),
            proptest::collection::vec(any::<i64>(), 0..5)
                .prop_map(|value| Some(Kind::Int64List(oneflow::Int64List { value }))),
        ]
    }

    fn example() -> impl Strategy<Value = tensorflow::Example> {
        proptest::collection::btree_map("[a-z/]{0,4}", tf_kind(), 0..5).prop_map(|m| {
            let mut features = tensorflow::Features::default();
            for (k, kind) in m {
                features.feature.insert(k, tensorflow::Feature { kind });
            }
            tensorflow::Example {
                features: Some(features),
            }
        })
    }

    fn ofrecord() -> impl Strategy<Value = oneflow::OfRecord> {
        proptest::collection::btree_map("[a-z/]{0,4}", of_kind(), 0..5).prop_map(|m| {
            let mut r = oneflow::OfRecord::default();
            for (k, kind) in m {
                r.feature.insert(k, oneflow::Feature { kind });
            }
            r
        })
    }

    /// Other valid encodings of the same message: an unknown field added at the front, and
    /// the bytes split in two messages (protobuf merges concatenated messages).
    fn variants(bytes: &[u8], split: usize) -> Vec<Vec<u8>> {
        let mut with_unknown = vec![0x78, 0x01]; // field 15, varint 1
        with_unknown.extend_from_slice(bytes);
        let mut out = vec![bytes.to_vec(), with_unknown];
        // Splitting at a field boundary of the top level: the first field ends at its length.
        let mut fields = Fields::new(bytes);
        if split.is_multiple_of(2)
            && let Ok(Some(_)) = fields.next_field()
        {
            let cut = bytes.len() - fields.remaining();
            let mut twice = bytes[..cut].to_vec();
            twice.extend_from_slice(&bytes[..cut]);
            twice.extend_from_slice(&bytes[cut..]);
            out.push(twice);
        }
        out
    }

    /// Narrowing rounds to the nearest float: infinities, NaN and the float's largest value
    /// pass; a finite double beyond the float's range (which would become infinity) is an error
    /// naming the key, by both paths.
    #[test]
    fn narrowing_a_double_beyond_the_float_range_is_an_error() {
        let record = |value: Vec<f64>| {
            let mut r = oneflow::OfRecord::default();
            r.feature.insert(
                "d".into(),
                oneflow::Feature {
                    kind: Some(oneflow::feature::Kind::DoubleList(oneflow::DoubleList {
                        value,
                    })),
                },
            );
            r
        };
        let fits = record(vec![f64::INFINITY, f64::NAN, 3.402_823_5e38, -1.5]);
        let mut out = Vec::new();
        ofrecord_to_example_bytes(&fits.encode_to_vec(), true, &mut out).unwrap();
        // Compared as bytes: NaN is not equal to itself.
        assert_eq!(
            out,
            ofrecord_to_example(&fits, true).unwrap().encode_to_vec()
        );
        let big = record(vec![1.5, 1e300]);
        let err =
            ofrecord_to_example_bytes(&big.encode_to_vec(), true, &mut Vec::new()).unwrap_err();
        assert_eq!(err.key(), Some("d"), "{err}");
        assert!(
            err.to_string()
                .contains("1e300 is beyond the range of a float"),
            "{err}"
        );
        let err = ofrecord_to_example(&big, true).unwrap_err();
        assert!(
            err.to_string()
                .contains("1e300 is beyond the range of a float"),
            "{err}"
        );
    }

    /// A serialized Example converts to the OFRecord that decoding and converting it gives.
    fn example_converts_as_decoded(bytes: &[u8]) -> Result<(), TestCaseError> {
        let decoded = tensorflow::Example::decode(bytes).unwrap();
        let mut out = Vec::new();
        example_to_ofrecord_bytes(bytes, &mut out).unwrap();
        prop_assert_eq!(
            oneflow::OfRecord::decode(&out[..]).unwrap(),
            example_to_ofrecord(&decoded)
        );
        Ok(())
    }

    /// A serialized OFRecord converts, with and without narrowing doubles, to the Example that
    /// decoding and converting it gives, or fails on the same key.
    fn ofrecord_converts_as_decoded(bytes: &[u8]) -> Result<(), TestCaseError> {
        let decoded = oneflow::OfRecord::decode(bytes).unwrap();
        for lossy in [false, true] {
            let mut out = Vec::new();
            let got = ofrecord_to_example_bytes(bytes, lossy, &mut out)
                .map(|()| tensorflow::Example::decode(&out[..]).unwrap());
            match (got, ofrecord_to_example(&decoded, lossy)) {
                (Ok(g), Ok(w)) => prop_assert_eq!(g, w),
                (Err(g), Err(w)) => prop_assert_eq!(g.key(), w.key()),
                (g, w) => prop_assert!(false, "{:?} vs {:?}", g, w),
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn examples_convert_as_the_decoded_messages_do(e in example(), split in 0usize..4) {
            for bytes in variants(&e.encode_to_vec(), split) {
                example_converts_as_decoded(&bytes)?;
            }
        }

        #[test]
        fn ofrecords_convert_as_the_decoded_messages_do(r in ofrecord(), split in 0usize..4) {
            for bytes in variants(&r.encode_to_vec(), split) {
                ofrecord_converts_as_decoded(&bytes)?;
            }
        }

        #[test]
        fn features_of_several_kinds_convert_as_decoded(
            kinds in proptest::collection::vec(of_kind(), 1..5),
            tf in proptest::collection::vec(tf_kind(), 1..5),
            value_each in any::<bool>(),
        ) {
            let features: Vec<Vec<u8>> =
                kinds.into_iter().map(|kind| oneflow::Feature { kind }.encode_to_vec()).collect();
            ofrecord_converts_as_decoded(&merged_entry(&features, value_each))?;
            let features: Vec<Vec<u8>> =
                tf.into_iter().map(|kind| tensorflow::Feature { kind }.encode_to_vec()).collect();
            let map = merged_entry(&features, value_each);
            let mut bytes = Vec::new();
            put_len_prefix(&mut bytes, 1, map.len());
            bytes.extend_from_slice(&map);
            example_converts_as_decoded(&bytes)?;
        }

        /// Damaged bytes: whatever converts decodes as the converted decode (or was refused by
        /// the decoder only for a key that is not UTF-8, which is copied as it is).
        #[test]
        fn damaged_examples_never_convert_to_something_else(
            e in example(),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
            cut in any::<usize>(),
        ) {
            let mut bytes = e.encode_to_vec();
            if bytes.is_empty() {
                return Ok(());
            }
            for (at, x) in flips {
                let i = at % bytes.len();
                bytes[i] ^= x;
            }
            bytes.truncate(cut % (bytes.len() + 1));
            let mut out = Vec::new();
            if example_to_ofrecord_bytes(&bytes, &mut out).is_ok() {
                // A `features` field of another wire type is an unknown field to TensorFlow
                // and protobuf (and to the conversion); prost refuses it: decode without it.
                let bytes = without_mistyped_features(&bytes);
                match tensorflow::Example::decode(&bytes[..]) {
                    Ok(decoded) => prop_assert_eq!(
                        oneflow::OfRecord::decode(&out[..]).unwrap(),
                        example_to_ofrecord(&decoded)
                    ),
                    Err(err) => prop_assert!(err.to_string().contains("UTF-8"), "{}", err),
                }
            }
        }
    }

    /// A serialized Example without its top-level fields numbered 1 (`features`) of another
    /// wire type than length-delimited (which a conversion has walked: it is well formed).
    fn without_mistyped_features(bytes: &[u8]) -> Vec<u8> {
        let mut fields = Fields::new(bytes);
        let mut out = Vec::new();
        loop {
            let before = fields.rest();
            match fields.next_field() {
                Ok(Some((1, v))) if !matches!(v, Value::Len(_)) => {}
                Ok(Some(_)) => {
                    let len = before.len() - fields.rest().len();
                    out.extend_from_slice(&before[..len]);
                }
                _ => return out,
            }
        }
    }

    /// A map of one entry, key `k`, whose value is `features` one after another, in one value
    /// field or one each: protobuf merges them all into one `Feature`.
    fn merged_entry(features: &[Vec<u8>], value_each: bool) -> Vec<u8> {
        let mut entry = vec![0x0a, 1, b'k'];
        if value_each {
            for f in features {
                put_len_prefix(&mut entry, 2, f.len());
                entry.extend_from_slice(f);
            }
        } else {
            let body = features.concat();
            put_len_prefix(&mut entry, 2, body.len());
            entry.extend_from_slice(&body);
        }
        let mut map = Vec::new();
        put_len_prefix(&mut map, 1, entry.len());
        map.extend_from_slice(&entry);
        map
    }

    /// A feature's kinds are a oneof: of lists of several kinds in one `Feature`, the last
    /// kind's wins (merged with those of its kind right before it), and what it replaced is
    /// not converted, not even a double list that could not be.
    #[test]
    fn the_last_kind_of_a_feature_is_the_one_converted() {
        use oneflow::feature::Kind;
        let int32 = oneflow::Feature {
            kind: Some(Kind::Int32List(oneflow::Int32List { value: vec![5] })),
        };
        let int64 = oneflow::Feature {
            kind: Some(Kind::Int64List(oneflow::Int64List { value: vec![1] })),
        };
        let double = oneflow::Feature {
            kind: Some(Kind::DoubleList(oneflow::DoubleList { value: vec![0.1] })),
        };
        let ints = |r: &[u8]| {
            let mut out = Vec::new();
            ofrecord_to_example_bytes(r, false, &mut out).unwrap();
            let e = tensorflow::Example::decode(&out[..]).unwrap();
            match &e.features.unwrap().feature["k"].kind {
                Some(tensorflow::feature::Kind::Int64List(l)) => l.value.clone(),
                other => panic!("{other:?}"),
            }
        };
        let record = merged_entry(&[int32.encode_to_vec(), int64.encode_to_vec()], false);
        assert_eq!(ints(&record), [1]);
        let record = merged_entry(&[int64.encode_to_vec(), int32.encode_to_vec()], true);
        assert_eq!(ints(&record), [5]);
        let record = merged_entry(&[double.encode_to_vec(), int64.encode_to_vec()], false);
        assert_eq!(ints(&record), [1]);
        let record = merged_entry(&[int64.encode_to_vec(), int64.encode_to_vec()], true);
        assert_eq!(ints(&record), [1, 1]);
    }

    #[test]
    fn malformed_lists_are_errors_naming_the_key() {
        // Features { "k": Feature { float_list: FloatList { value: packed, 3 bytes } } }
        let float_list = [0x0a, 0x03, 1, 2, 3];
        let feature = [&[0x12, float_list.len() as u8][..], &float_list].concat();
        let entry = [&[0x0a, 0x01, b'k', 0x12, feature.len() as u8][..], &feature].concat();
        let features = [&[0x0a, entry.len() as u8][..], &entry].concat();
        let example = [&[0x0a, features.len() as u8][..], &features].concat();
        assert!(tensorflow::Example::decode(&example[..]).is_err());
        let e = example_to_ofrecord_bytes(&example, &mut Vec::new()).unwrap_err();
        assert_eq!(e.key(), Some("k"), "{e}");
        assert!(e.to_string().contains("packed list"), "{e}");
    }
}
