//! Whole records: walking the feature map of an Example, SequenceExample or OFRecord, and
//! writing one.

use std::borrow::Cow;

use super::container::Container;
use super::dialect::Dialect;
use super::field::{DecodeField, EncodeField, FieldInfo, kind_tag};
use super::message::{FeatureBytes, malformed};
use super::steps::{DecodeSteps, EncodeSteps};
use super::wire::Fields as WireFields;
use super::wire::{self, Value, len_field_len, len_tag_byte, put_len_prefix};
use crate::compression::Format;
use crate::error::{Error, ErrorKind, Result};
use crate::feature::FeatureProblem;

/// Reads a map entry (`key` = 1, `value` = 2): the last key wins; repeated values merge.
#[inline]
fn read_entry<'de>(entry: &'de [u8]) -> Result<(&'de [u8], FeatureBytes<'de>)> {
    if let Some((key, value)) = canonical_entry(entry) {
        return Ok((key, FeatureBytes::new(value)));
    }
    let mut key: &[u8] = &[];
    let mut value = FeatureBytes::default();
    let mut has_value = false;
    let mut fields = WireFields::new(entry);
    while let Some((num, v)) = fields.next_field()? {
        match (num, v) {
            (1, Value::Len(k)) => key = k,
            (2, Value::Len(b)) => {
                if has_value {
                    value.push(b);
                } else {
                    value.first = b;
                    has_value = true;
                }
            }
            (1 | 2, _) => {
                return Err(Error::decode(
                    "map entry",
                    "key or value of the wrong wire type",
                ));
            }
            _ => {}
        }
    }
    Ok((key, value))
}

/// A map entry in the layout every writer produces: key (field 1), then value (field 2),
/// nothing else. `(key, value)`, or `None` for any other layout.
#[inline(always)]
fn canonical_entry(entry: &[u8]) -> Option<(&[u8], &[u8])> {
    // A key and a feature of under 128 bytes each, the most common case: `0a K key 12 F
    // feature`, both lengths in one byte.
    if let [0x0a, k, rest @ ..] = entry
        && *k < 0x80
        && let Some((key, [0x12, f, feature @ ..])) = rest.split_at_checked(usize::from(*k))
        && *f < 0x80
        && usize::from(*f) == feature.len()
    {
        return Some((key, feature));
    }
    canonical_entry_long(entry)
}

/// [`canonical_entry`] for keys or features of 128 bytes or more, and for what is not in the usual
/// layout.
#[inline]
fn canonical_entry_long(entry: &[u8]) -> Option<(&[u8], &[u8])> {
    let [0x0a, rest @ ..] = entry else {
        return None;
    };
    let (key, rest) = wire::split_len(rest)?;
    let [0x12, rest @ ..] = rest else {
        return None;
    };
    match wire::split_len(rest)? {
        (value, []) => Some((key, value)),
        _ => None,
    }
}

/// Calls `f(key, value)` for each entry of a `map<string, _>` field `field` in `msg`.
#[inline]
pub(crate) fn for_each_entry<'de>(
    msg: &'de [u8],
    field: u32,
    f: &mut impl FnMut(&'de [u8], FeatureBytes<'de>) -> Result<()>,
) -> Result<()> {
    // The entries' one-byte tag (`field` is 1 here); any other byte starts a field the general
    // walk reads, which also reports what is malformed.
    let tag = u8::try_from((field << 3) | 2).unwrap_or(0);
    let mut rest = msg;
    while let [t, tail @ ..] = rest {
        if *t == tag
            && let Some((entry, after)) = super::wire::split_len(tail)
        {
            rest = after;
            let (key, value) = read_entry(entry)?;
            f(key, value)?;
            continue;
        }
        let mut fields = WireFields::new(rest);
        let Some((num, v)) = fields.next_field()? else {
            break;
        };
        rest = fields.rest();
        if num == field {
            let Value::Len(entry) = v else {
                return Err(Error::decode("map entry", "not length-delimited"));
            };
            let (key, value) = read_entry(entry)?;
            f(key, value)?;
        }
    }
    Ok(())
}

/// Walks the feature map of a `tensorflow.Example` (`features` = 1, then `feature` = 1) or an
/// `OFRecord` (`feature` = 1), calling `f` for each entry in wire order.
///
/// # Errors
/// Malformed protobuf, or an error from `f`.
pub fn scan_features<'de, C: Container>(
    bytes: &'de [u8],
    mut f: impl FnMut(&'de [u8], FeatureBytes<'de>) -> Result<()>,
) -> Result<()> {
    let res = if C::FORMAT == Format::OfRecord {
        for_each_entry(bytes, 1, &mut f)
    } else {
        let mut fields = WireFields::new(bytes);
        (|| {
            while let Some((num, v)) = fields.next_field()? {
                // `features` of another wire type is an unknown field, as TensorFlow's
                // parsers and protobuf read it.
                if let (1, Value::Len(features)) = (num, v) {
                    for_each_entry(features, 1, &mut f)?;
                }
            }
            Ok(())
        })()
    };
    res.map_err(|e| match e.kind() {
        ErrorKind::Decode { .. } => malformed(C::MESSAGE, &e),
        _ => e,
    })
}

/// Walks the feature map of a `tensorflow.Example` or an `OFRecord` in the layout every writer
/// produces, calling `f(key, feature)` with each entry's key and serialized `Feature`, in wire
/// order: one `features` field (Example), entries of exactly a key then a value, nothing else.
///
/// Returns `false` as soon as the bytes leave that layout or `f` returns `false`; the caller
/// then decodes the record through [`scan_features`], which reads every layout protobuf allows
/// and words any error. This is the derived decoders' one-pass walk: it only collects each
/// feature's bytes (a repeated key: the last entry's), and the fields are decoded after it in
/// their declaration order, as from the general path's slots, so that both paths give the same
/// value or the same first error.
#[doc(hidden)]
#[inline(always)]
pub fn walk_canonical<'de, C: Container>(
    bytes: &'de [u8],
    mut f: impl FnMut(&'de [u8], &'de [u8]) -> bool,
) -> bool {
    let map = if C::FORMAT == Format::OfRecord {
        bytes
    } else {
        match bytes {
            [] => bytes,
            [0x0a, rest @ ..] => match wire::split_len(rest) {
                Some((map, [])) => map,
                _ => return false,
            },
            _ => return false,
        }
    };
    let mut rest = map;
    while let [0x0a, tail @ ..] = rest {
        let Some((entry, after)) = wire::split_len(tail) else {
            return false;
        };
        if let Some((key, feature)) = canonical_entry(entry)
            && f(key, feature)
        {
            rest = after;
            continue;
        }
        return false;
    }
    rest.is_empty()
}

/// Walks a `tensorflow.SequenceExample`: `context` (1) entries go to `ctx`, `feature_lists`
/// (2) entries to `lists`.
///
/// # Errors
/// Malformed protobuf, or an error from a callback.
pub fn scan_sequence<'de>(
    bytes: &'de [u8],
    mut ctx: impl FnMut(&'de [u8], FeatureBytes<'de>) -> Result<()>,
    mut lists: impl FnMut(&'de [u8], FeatureBytes<'de>) -> Result<()>,
) -> Result<()> {
    let mut fields = WireFields::new(bytes);
    let res = (|| -> Result<()> {
        while let Some((num, v)) = fields.next_field()? {
            match (num, v) {
                (1, Value::Len(m)) => for_each_entry(m, 1, &mut ctx)?,
                (2, Value::Len(m)) => for_each_entry(m, 1, &mut lists)?,
                // `context` or `feature_lists` of another wire type, like any other field, is
                // an unknown field, as TensorFlow's parsers and protobuf read it.
                _ => {}
            }
        }
        Ok(())
    })();
    res.map_err(|e| match e.kind() {
        ErrorKind::Decode { .. } => malformed("tensorflow.SequenceExample", &e),
        _ => e,
    })
}

/// The key table of a derived type: which slot each feature key fills.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be flattened into a record: it does not derive `Example`",
    label = "`#[example(flatten)]` needs a struct deriving `Example`",
    note = "`flatten` inlines the features of a struct that derives `Example` under keys \
            `field/inner`; for a single value, use a supported value type or a unit-only enum \
            deriving `Example`"
)]
pub trait FieldTable {
    /// How many slots (features) the type reads, including flattened members.
    const SLOTS: usize;
    /// The feature keys the type writes, for the checks of a struct it is flattened into.
    const KEYS: &'static super::KeyTable;
    /// The slot of a feature key, `None` for keys the type does not read.
    fn slot(key: &[u8]) -> Option<usize>;
}

/// Encoding the features of a derived type as map entries.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be flattened here: it does not derive `Example` for this container",
    label = "`#[example(flatten)]` needs a struct deriving `Example` for this container",
    note = "`flatten` inlines the features of a struct that derives `Example` (a `dialect` \
            attribute on it limits which containers it supports)"
)]
pub trait EncodeFields<D: Dialect> {
    /// The length of all the type's map entries (each as field 1 of the enclosing message),
    /// with every key prefixed by `prefix`.
    fn entries_len(&self, prefix: &[u8]) -> usize;
    /// Appends all the type's map entries.
    fn put_entries(&self, prefix: &[u8], buf: &mut Vec<u8>);

    /// Checks that the values fit the layout the type declares (the count of a fixed
    /// `shape`, whole rows of a `[-1, ..]` one, a sparse field's index lists), as decoding
    /// checks them; the default accepts every value.
    ///
    /// # Errors
    /// A field whose values do not fit, naming it.
    fn check_fields(&self) -> Result<()> {
        Ok(())
    }
}

/// Decoding a derived type from the feature values found for its slots.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be flattened here: it does not derive `Example` for this container",
    label = "`#[example(flatten)]` needs a struct deriving `Example` for this container",
    note = "`flatten` inlines the features of a struct that derives `Example` (a `dialect` \
            attribute on it limits which containers it supports)"
)]
pub trait DecodeFields<'de, D: Dialect>: Sized {
    /// Builds the value; `slots` has [`FieldTable::SLOTS`] entries.
    ///
    /// # Errors
    /// Missing required features, wrong kinds and counts, values out of range.
    fn from_slots(slots: &mut [Option<FeatureBytes<'de>>]) -> Result<Self>;
}

/// Decodes a derived type from a `tensorflow.Example` or an `OFRecord`.
///
/// # Errors
/// As [`DecodeFields::from_slots`], malformed protobuf, and unknown keys when `deny_unknown`
/// names the type.
#[inline]
pub fn decode_record<'de, C, T>(bytes: &'de [u8], deny_unknown: Option<&'static str>) -> Result<T>
where
    C: Container,
    T: FieldTable + DecodeFields<'de, C::Dialect>,
{
    match T::SLOTS {
        0..=4 => decode_with::<C, T, 4>(bytes, deny_unknown),
        5..=16 => decode_with::<C, T, 16>(bytes, deny_unknown),
        17..=64 => decode_with::<C, T, 64>(bytes, deny_unknown),
        _ => {
            let mut slots: Vec<Option<FeatureBytes<'de>>> = vec![None; T::SLOTS];
            scan_features::<C>(bytes, |key, msg| {
                assign::<T>(&mut slots, key, msg, deny_unknown)
            })?;
            T::from_slots(&mut slots)
        }
    }
}

#[inline]
fn decode_with<'de, C, T, const N: usize>(
    bytes: &'de [u8],
    deny_unknown: Option<&'static str>,
) -> Result<T>
where
    C: Container,
    T: FieldTable + DecodeFields<'de, C::Dialect>,
{
    let mut slots: [Option<FeatureBytes<'de>>; N] = std::array::from_fn(|_| None);
    scan_features::<C>(bytes, |key, msg| {
        assign::<T>(&mut slots, key, msg, deny_unknown)
    })?;
    T::from_slots(&mut slots[..T::SLOTS])
}

#[inline]
fn assign<'de, T: FieldTable>(
    slots: &mut [Option<FeatureBytes<'de>>],
    key: &'de [u8],
    msg: FeatureBytes<'de>,
    deny_unknown: Option<&'static str>,
) -> Result<()> {
    match T::slot(key) {
        Some(i) => {
            if let Some(s) = slots.get_mut(i) {
                *s = Some(msg); // a repeated key: the last entry wins
            }
            Ok(())
        }
        None => match deny_unknown {
            Some(name) => Err(unknown_key(name, key)),
            None => Ok(()),
        },
    }
}

/// Joins a key prefix and a flattened member's prefix without allocating in the common case.
pub fn join_prefix<'a>(prefix: &[u8], member: &'a [u8]) -> Cow<'a, [u8]> {
    if prefix.is_empty() {
        Cow::Borrowed(member)
    } else {
        let mut v = Vec::with_capacity(prefix.len() + member.len());
        v.extend_from_slice(prefix);
        v.extend_from_slice(member);
        Cow::Owned(v)
    }
}

/// The length of one map entry (as a field of its enclosing message) holding a feature.
#[inline]
pub fn entry_len<D: Dialect, T: EncodeField<D>>(key_len: usize, value: &T) -> usize {
    if !value.present() {
        return 0;
    }
    let feature = len_field_len(value.body_len());
    len_field_len(len_field_len(key_len) + len_field_len(feature))
}

/// Appends one map entry holding a feature, keyed `prefix` + `key`.
#[inline]
pub fn put_entry<D: Dialect, T: EncodeField<D>>(
    buf: &mut Vec<u8>,
    prefix: &[u8],
    key: &[u8],
    value: &T,
) {
    if !value.present() {
        return;
    }
    let key_len = prefix.len() + key.len();
    let body = value.body_len();
    let feature = len_field_len(body);
    let entry = len_field_len(key_len) + len_field_len(feature);
    if let (Ok(short), Some(list_tag)) = (u8::try_from(entry), len_tag_byte(kind_tag::<D, T>()))
        && short < 0x80
    {
        // The canonical entry: it and every length inside it (each shorter than the entry) take
        // one byte, so each header is one fixed-size copy instead of a store per byte.
        buf.reserve(usize::from(short) + 2);
        buf.extend_from_slice(&[1 << 3 | wire::LEN, short, 1 << 3 | wire::LEN, key_len as u8]);
        buf.extend_from_slice(prefix);
        buf.extend_from_slice(key);
        buf.extend_from_slice(&[2 << 3 | wire::LEN, feature as u8, list_tag, body as u8]);
        value.put_body(buf);
        return;
    }
    put_len_prefix(buf, 1, entry);
    put_len_prefix(buf, 1, key_len);
    buf.extend_from_slice(prefix);
    buf.extend_from_slice(key);
    put_len_prefix(buf, 2, feature);
    put_len_prefix(buf, kind_tag::<D, T>(), body);
    value.put_body(buf);
}

/// The length of a `FeatureLists` entry holding a feature list whose body is `list_len` bytes
/// ([`EncodeSteps::list_len`]).
#[inline]
pub fn steps_entry_len(key_len: usize, list_len: usize) -> usize {
    len_field_len(len_field_len(key_len) + len_field_len(list_len))
}

/// Appends a `FeatureLists` entry holding a feature list field whose body is `len` bytes
/// ([`EncodeSteps::list_len`], computed once by the caller for both passes).
#[inline]
pub fn put_steps_entry<D: Dialect, L: EncodeSteps<D>>(
    buf: &mut Vec<u8>,
    key: &[u8],
    list: &L,
    len: usize,
) {
    put_len_prefix(buf, 1, len_field_len(key.len()) + len_field_len(len));
    put_len_prefix(buf, 1, key.len());
    buf.extend_from_slice(key);
    put_len_prefix(buf, 2, len);
    list.put_list(buf);
}

/// The length of a whole `tensorflow.Example` whose feature map entries take `entries` bytes.
#[inline]
pub fn example_len(entries: usize) -> usize {
    len_field_len(entries)
}

/// Appends the header of a `tensorflow.Example` (its `features` field) whose entries follow.
#[inline]
pub fn put_example_header(buf: &mut Vec<u8>, entries: usize) {
    put_len_prefix(buf, 1, entries);
}

/// The length of a `tensorflow.SequenceExample` with `context` and `feature_lists` entries.
#[inline]
pub fn sequence_len(context: usize, lists: usize) -> usize {
    len_field_len(context) + len_field_len(lists)
}

/// Appends the `context` header of a `tensorflow.SequenceExample`.
#[inline]
pub fn put_context_header(buf: &mut Vec<u8>, context: usize) {
    put_len_prefix(buf, 1, context);
}

/// Appends the `feature_lists` header of a `tensorflow.SequenceExample`.
#[inline]
pub fn put_lists_header(buf: &mut Vec<u8>, lists: usize) {
    put_len_prefix(buf, 2, lists);
}

/// A field's slot as its decoder takes it: a `Feature` with no list set is an absent feature,
/// as `tf.io.parse_example` reads it (a fixed feature's default or a "missing" error, an empty
/// var feature) and as the columnar decoder does.
#[inline(always)]
pub fn kindful(slot: Option<FeatureBytes<'_>>) -> Option<FeatureBytes<'_>> {
    slot.filter(|m| !m.is_empty())
}

/// Decodes a field from its slot: absent gives `Option`'s `None` or a "missing" error.
///
/// # Errors
/// Missing, wrong kind or count, out of range; naming the field and key.
#[inline(always)]
pub fn field<'de, D: Dialect, T: DecodeField<'de, D>>(
    slot: Option<FeatureBytes<'de>>,
    info: &FieldInfo,
) -> Result<T> {
    match slot {
        Some(m) => present::<D, T>(m, info),
        None => T::absent().ok_or_else(|| info.error(FeatureProblem::Missing)),
    }
}

/// Decodes a present feature.
///
/// # Errors
/// As [`field`].
#[inline(always)]
pub fn present<'de, D: Dialect, T: DecodeField<'de, D>>(
    m: FeatureBytes<'de>,
    info: &FieldInfo,
) -> Result<T> {
    super::field::decode_feature::<D, T>(m).map_err(|e| info.error(e))
}

/// Decodes a present feature into `value`, reusing what it holds ([`DecodeField::decode_into`]).
///
/// # Errors
/// As [`field`].
#[inline(always)]
pub fn present_into<'de, D: Dialect, T: DecodeField<'de, D>>(
    value: &mut T,
    m: FeatureBytes<'de>,
    info: &FieldInfo,
) -> Result<()> {
    value.decode_into(m).map_err(|e| info.error(e))
}

/// Checks a fixed-shape list's value count.
///
/// # Errors
/// A count other than `n`.
#[inline]
pub fn check_len<T>(values: &[T], n: usize, info: &FieldInfo) -> Result<()> {
    if values.len() == n {
        Ok(())
    } else {
        Err(info.error(FeatureProblem::Count {
            expected: n,
            found: values.len(),
        }))
    }
}

/// Checks that a rows field (`shape = [-1, ...]`) holds whole rows of `row` values.
///
/// # Errors
/// A count that is not a multiple of `row`, naming the field.
pub fn check_rows<T>(values: &[T], row: usize, info: &FieldInfo) -> Result<()> {
    if row == 0 || values.len().is_multiple_of(row) {
        Ok(())
    } else {
        Err(info.error(FeatureProblem::Rows {
            row,
            found: values.len(),
        }))
    }
}

/// Decodes a `FeatureList` slot into a feature list field; `None` when the list is absent.
///
/// # Errors
/// As [`DecodeSteps::decode_list`], naming the key.
pub fn steps<'de, D: Dialect, L: DecodeSteps<'de, D>>(
    slot: Option<FeatureBytes<'de>>,
    info: &FieldInfo,
) -> Result<Option<L>> {
    let Some(m) = slot else { return Ok(None) };
    L::decode_list(&m, info)
        .map(Some)
        .map_err(|e| e.with_key(info.key))
}

/// Decodes a present `FeatureList` into a feature list field, reusing what it holds
/// ([`DecodeSteps::decode_list_into`]).
///
/// # Errors
/// As [`steps`].
pub fn steps_into<'de, D: Dialect, L: DecodeSteps<'de, D>>(
    value: &mut L,
    m: FeatureBytes<'de>,
    info: &FieldInfo,
) -> Result<()> {
    value
        .decode_list_into(&m, info)
        .map_err(|e| e.with_key(info.key))
}

/// The first (up to) eight bytes of a key as a little-endian integer: with the key's length it
/// lets generated code dispatch on a key with integer comparisons instead of byte-string ones.
#[inline]
pub fn key_prefix_word(key: &[u8]) -> u64 {
    // Two overlapping loads of the widest size that fits instead of a variable-length copy:
    // the bytes they share are the same in both, so OR-ing them in place is exact.
    let n = key.len();
    if let Some(w) = key.first_chunk::<8>() {
        u64::from_le_bytes(*w)
    } else if let (Some(lo), Some(hi)) = (key.first_chunk::<4>(), key.last_chunk::<4>()) {
        u64::from(u32::from_le_bytes(*lo)) | (u64::from(u32::from_le_bytes(*hi)) << (8 * (n - 4)))
    } else if let (Some(lo), Some(hi)) = (key.first_chunk::<2>(), key.last_chunk::<2>()) {
        u64::from(u16::from_le_bytes(*lo)) | (u64::from(u16::from_le_bytes(*hi)) << (8 * (n - 2)))
    } else {
        key.first().map_or(0, |&b| u64::from(b))
    }
}

/// The error for a key a `deny_unknown_keys` type does not read.
#[cold]
pub fn unknown_key(record: &'static str, key: &[u8]) -> Error {
    Error::feature(format!("unknown feature (`{record}` denies unknown keys)"))
        .with_key(String::from_utf8_lossy(key))
}

/// The error for a required feature that is absent.
#[cold]
pub fn missing(info: &FieldInfo) -> Error {
    info.error(FeatureProblem::Missing)
}

#[cfg(test)]
mod tests {
    use super::{canonical_entry, canonical_entry_long, key_prefix_word, put_entry};
    use crate::codec::{EncodeField, Tf};
    use crate::proto::{self, tensorflow};

    /// `put_entry`'s bytes against protobuf's for the same one-feature map, the `Features`
    /// header taken off.
    fn check_entry<T: EncodeField<Tf>>(
        prefix: &str,
        key: &str,
        value: &T,
        kind: tensorflow::feature::Kind,
    ) {
        let mut ours = Vec::new();
        put_entry::<Tf, T>(&mut ours, prefix.as_bytes(), key.as_bytes(), value);
        let mut fs = tensorflow::Features::default();
        fs.feature.insert(
            format!("{prefix}{key}"),
            tensorflow::Feature { kind: Some(kind) },
        );
        let want = proto::encode_example(&tensorflow::Example { features: Some(fs) });
        let mut fields = crate::codec::wire::Fields::new(&want);
        let Ok(Some((1, crate::codec::wire::Value::Len(entries)))) = fields.next_field() else {
            panic!("no Features field");
        };
        assert_eq!(ours, entries, "{prefix}{key}: {} bytes", ours.len());
    }

    #[test]
    fn entries_match_protobuf_on_both_sides_of_one_byte_lengths() {
        use tensorflow::feature::Kind;
        // Entries from under ten bytes to over three hundred: below, at and above 127,
        // where the entry's length, and then the lengths inside it, stop fitting in one byte.
        for (prefix, key) in [("", "k"), ("group/", "a_longer_key")] {
            for n in 0..=300usize {
                let v: Vec<u8> = (0..n).map(|i| i as u8).collect();
                check_entry(
                    prefix,
                    key,
                    &v,
                    Kind::BytesList(tensorflow::BytesList {
                        value: vec![v.clone()],
                    }),
                );
            }
            for n in 0..=40i64 {
                let v: Vec<i64> = (0..n)
                    .map(|i| i.wrapping_mul(0x0123_4567_89ab_cdef))
                    .collect();
                check_entry(
                    prefix,
                    key,
                    &v,
                    Kind::Int64List(tensorflow::Int64List { value: v.clone() }),
                );
                let f: Vec<f32> = v.iter().map(|&i| i as f32 / 3.0).collect();
                check_entry(
                    prefix,
                    key,
                    &f,
                    Kind::FloatList(tensorflow::FloatList { value: f.clone() }),
                );
            }
        }
    }

    #[test]
    fn key_word_is_the_first_eight_bytes_zero_padded() {
        let key = b"abcdefghijk";
        for n in 0..=key.len() {
            let k = &key[..n];
            let mut w = [0u8; 8];
            w[..n.min(8)].copy_from_slice(&k[..n.min(8)]);
            assert_eq!(key_prefix_word(k), u64::from_le_bytes(w), "{n}");
        }
    }

    /// Lengths on both sides of the one-byte varint limit.
    const LENS: [usize; 10] = [0, 1, 2, 3, 0x7e, 0x7f, 0x80, 0x81, 0x82, 0x100];

    #[test]
    fn canonical_entry_takes_one_byte_lengths_as_the_general_walk_does() {
        // Every stated length against every actual size: the one-byte fast path must agree
        // with the varint walk, including where a stated length byte is a varint's first.
        let mut checked = 0;
        for (k, key_len) in LENS.iter().flat_map(|&k| LENS.map(|n| (k, n))) {
            for (f, feature_len) in LENS.iter().flat_map(|&f| LENS.map(|n| (f, n))) {
                for tags in [[0x0a, 0x12], [0x12, 0x0a], [0x0a, 0x1a]] {
                    let mut entry = vec![tags[0]];
                    entry.push(u8::try_from(k & 0xff).unwrap_or(0));
                    entry.extend((0..key_len).map(|i| u8::try_from(i % 0x7f).unwrap_or(1) | 1));
                    entry.push(tags[1]);
                    entry.push(u8::try_from(f & 0xff).unwrap_or(0));
                    entry.extend((0..feature_len).map(|_| 0x01));
                    assert_eq!(
                        canonical_entry(&entry),
                        canonical_entry_long(&entry),
                        "{entry:02x?}"
                    );
                    checked += usize::from(canonical_entry(&entry).is_some());
                }
            }
        }
        assert!(
            checked >= 36,
            "{checked} entries read in the canonical layout"
        );
    }
}
