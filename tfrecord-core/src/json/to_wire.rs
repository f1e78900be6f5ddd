//! One line of JSON read straight into the record's protobuf wire bytes: no tree of values, no
//! message, the feature map's entries sorted by key as references into the text.
//!
//! This reads the forms `json_format.MessageToJson` writes and the common variations of them
//! (whitespace, the original field names, `null` fields, int64 as numbers, both orders of
//! fields); for anything else it gives `None` (see [`scan`](super::scan)), and the line is read
//! by the full reader, which gives the same bytes or the error. What this accepts, the full
//! reader accepts with the same bytes: the tests check that on variations of every form.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::scan::{Fast, Scan, integer};
use crate::codec::wire::{len_field_len, put_len_prefix, put_varint_value};

/// The value type of a list of a feature's `kind`.
#[derive(Clone, Copy)]
enum Elem {
    Bytes,
    Float,
    Double,
    Int32,
    Int64,
}

/// The members of a feature's `kind`, their field numbers one up from their index.
type Kinds = [(&'static [u8], &'static [u8], Elem)];

const TF_KINDS: &Kinds = &[
    (b"bytesList", b"bytes_list", Elem::Bytes),
    (b"floatList", b"float_list", Elem::Float),
    (b"int64List", b"int64_list", Elem::Int64),
];

const OF_KINDS: &Kinds = &[
    (b"bytesList", b"bytes_list", Elem::Bytes),
    (b"floatList", b"float_list", Elem::Float),
    (b"doubleList", b"double_list", Elem::Double),
    (b"int32List", b"int32_list", Elem::Int32),
    (b"int64List", b"int64_list", Elem::Int64),
];

/// A map entry read: its key's range in the text and its value's range in `Buffers::values`.
#[derive(Clone, Copy)]
struct Entry {
    key: (usize, usize),
    value: (usize, usize),
}

/// Buffers kept from one line to the next.
#[derive(Default)]
pub(super) struct Buffers {
    /// The serialized values of the map being read, one after another.
    values: Vec<u8>,
    entries: Vec<Entry>,
    /// A list's values.
    list: Vec<u8>,
    /// One feature of a feature list.
    feature: Vec<u8>,
    /// A `SequenceExample`'s feature lists, written after its context.
    lists: Vec<u8>,
}

/// A member of a message: the index of `key` among `known` (lowerCamelCase or original name),
/// marked in `seen`; a key not known or given twice is left to the full reader.
#[inline]
fn member(key: &[u8], known: &[(&[u8], &[u8])], seen: &mut u8) -> Fast<usize> {
    let i = known.iter().position(|(c, o)| key == *c || key == *o)?;
    let bit = 1u8 << i;
    if *seen & bit != 0 {
        return None;
    }
    *seen |= bit;
    Some(i)
}

/// Reads a message object, calling `each(scan, index)` for each member whose value is not
/// `null` (a `null` member is "not set").
#[inline]
fn message<'a>(
    sc: &mut Scan<'a>,
    known: &[(&[u8], &[u8])],
    mut each: impl FnMut(&mut Scan<'a>, usize) -> Fast<()>,
) -> Fast<()> {
    let mut seen = 0;
    let mut more = sc.begin_object()?;
    while more {
        let i = member(sc.key()?, known, &mut seen)?;
        if !sc.null() {
            each(sc, i)?;
        }
        more = sc.next_member()?;
    }
    Some(())
}

/// A float given as a string: only the three names of the values JSON numbers cannot hold.
fn special(s: &[u8]) -> Fast<f64> {
    match s {
        b"NaN" => Some(f64::NAN),
        b"Infinity" => Some(f64::INFINITY),
        b"-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

fn double(sc: &mut Scan<'_>) -> Fast<f64> {
    if sc.at_string() {
        return special(sc.string()?);
    }
    // Correctly rounded, as the full reader's `serde_json` (with `float_roundtrip`) reads it;
    // a number too large for a double is an error of the full reader's.
    let d: f64 = std::str::from_utf8(sc.number()?).ok()?.parse().ok()?;
    d.is_finite().then_some(d)
}

fn float(sc: &mut Scan<'_>) -> Fast<f32> {
    // A finite value that overflows a float is an error of the full reader's.
    crate::feature::narrow_f64(double(sc)?)
}

/// An integer given as a string or a number without fraction or exponent.
fn int(sc: &mut Scan<'_>, min: i64, max: i64) -> Fast<i64> {
    let text = if sc.at_string() {
        sc.string()?
    } else {
        sc.number()?
    };
    integer(text, min, max)
}

/// Base64 in the standard alphabet with padding, appended to `out` as a `bytes` field 1.
fn bytes(sc: &mut Scan<'_>, out: &mut Vec<u8>) -> Fast<()> {
    let s = sc.string()?;
    let pad = s.iter().rev().take(2).filter(|&&b| b == b'=').count();
    if s.len() % 4 != 0 {
        return None;
    }
    let n = s.len() / 4 * 3 - pad;
    put_len_prefix(out, 1, n);
    let at = out.len();
    out.resize(at + s.len() / 4 * 3, 0);
    match STANDARD.decode_slice(s, &mut out[at..]) {
        Ok(got) if got == n => {
            out.truncate(at + n);
            Some(())
        }
        _ => None,
    }
}

/// A list message's `value` array appended to `out`: the values as a packed run (the body of
/// field 1 of the list message: every list of numbers here is packed, as prost writes them),
/// or one `bytes` field per value (the list message's body).
fn list(sc: &mut Scan<'_>, elem: Elem, out: &mut Vec<u8>) -> Fast<()> {
    message(sc, &[(b"value", b"value")], |sc, _| {
        let mut more = sc.begin_array()?;
        while more {
            match elem {
                Elem::Bytes => bytes(sc, out)?,
                Elem::Float => out.extend_from_slice(&float(sc)?.to_le_bytes()),
                Elem::Double => out.extend_from_slice(&double(sc)?.to_le_bytes()),
                Elem::Int32 => {
                    let v = int(sc, i32::MIN.into(), i32::MAX.into())?;
                    put_varint_value(out, v.cast_unsigned());
                }
                Elem::Int64 => put_varint_value(out, int(sc, i64::MIN, i64::MAX)?.cast_unsigned()),
            }
            more = sc.next_element()?;
        }
        Some(())
    })
}

/// A `Feature` (of `kinds`) appended to `out` as its message body; `list` is scratch.
fn feature(
    sc: &mut Scan<'_>,
    kinds: &Kinds,
    list_buf: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Fast<()> {
    let known: &[(&[u8], &[u8])] = &[
        (kinds[0].0, kinds[0].1),
        (kinds[1].0, kinds[1].1),
        (kinds[2].0, kinds[2].1),
        (
            kinds.get(3).map_or(b"", |k| k.0),
            kinds.get(3).map_or(b"", |k| k.1),
        ),
        (
            kinds.get(4).map_or(b"", |k| k.0),
            kinds.get(4).map_or(b"", |k| k.1),
        ),
    ];
    let known = &known[..kinds.len()];
    let mut set = false;
    message(sc, known, |sc, i| {
        if std::mem::replace(&mut set, true) {
            // Two members of the oneof: an error of the full reader's.
            return None;
        }
        list_buf.clear();
        let elem = kinds[i].2;
        list(sc, elem, list_buf)?;
        let field = u32::try_from(i + 1).ok()?;
        if matches!(elem, Elem::Bytes) || list_buf.is_empty() {
            put_len_prefix(out, field, list_buf.len());
        } else {
            put_len_prefix(out, field, len_field_len(list_buf.len()));
            put_len_prefix(out, 1, list_buf.len());
        }
        out.extend_from_slice(list_buf);
        Some(())
    })
}

impl Buffers {
    /// A JSON object of keys to values read by `value` into `self.values`, appended to `out`
    /// as map entries (field 1 of the map message), every entry with key and value, in key
    /// order; after `prefix` (the length-delimited field holding them) when it is given.
    fn map<'a>(
        &mut self,
        sc: &mut Scan<'a>,
        prefix: Option<u32>,
        out: &mut Vec<u8>,
        mut value: impl FnMut(&mut Scan<'a>, &mut Self) -> Fast<()>,
    ) -> Fast<()> {
        self.values.clear();
        self.entries.clear();
        let mut more = sc.begin_object()?;
        while more {
            let key = sc.key_range()?;
            let start = self.values.len();
            value(sc, self)?;
            let value = (start, self.values.len());
            self.entries.push(Entry { key, value });
            more = sc.next_member()?;
        }
        self.entries
            .sort_unstable_by(|a, b| sc.slice(a.key.0, a.key.1).cmp(sc.slice(b.key.0, b.key.1)));
        let entry_len =
            |e: &Entry| len_field_len(e.key.1 - e.key.0) + len_field_len(e.value.1 - e.value.0);
        let mut total = 0;
        for (i, e) in self.entries.iter().enumerate() {
            if i > 0 {
                let before = &self.entries[i - 1];
                if sc.slice(before.key.0, before.key.1) == sc.slice(e.key.0, e.key.1) {
                    // A key given twice: the full reader keeps the last.
                    return None;
                }
            }
            total += len_field_len(entry_len(e));
        }
        if let Some(field) = prefix {
            put_len_prefix(out, field, total);
        }
        out.reserve(total);
        for e in &self.entries {
            let key = sc.slice(e.key.0, e.key.1);
            put_len_prefix(out, 1, entry_len(e));
            put_len_prefix(out, 1, key.len());
            out.extend_from_slice(key);
            put_len_prefix(out, 2, e.value.1 - e.value.0);
            out.extend_from_slice(&self.values[e.value.0..e.value.1]);
        }
        Some(())
    }

    /// A `Features` message appended to `out` as field `field`.
    fn features(&mut self, sc: &mut Scan<'_>, field: u32, out: &mut Vec<u8>) -> Fast<()> {
        let mut empty = true;
        message(sc, &[(b"feature", b"feature")], |sc, _| {
            empty = false;
            self.map(sc, Some(field), out, |sc, b| {
                feature(sc, TF_KINDS, &mut b.list, &mut b.values)
            })
        })?;
        if empty {
            put_len_prefix(out, field, 0);
        }
        Some(())
    }

    /// A `tensorflow.Example`, appended to `out`.
    pub(super) fn example(&mut self, text: &str, out: &mut Vec<u8>) -> Fast<()> {
        let mut sc = Scan::new(text);
        message(&mut sc, &[(b"features", b"features")], |sc, _| {
            self.features(sc, 1, out)
        })?;
        sc.at_end().then_some(())
    }

    /// A `tensorflow.SequenceExample`, appended to `out`.
    pub(super) fn sequence_example(&mut self, text: &str, out: &mut Vec<u8>) -> Fast<()> {
        let mut sc = Scan::new(text);
        let mut lists = std::mem::take(&mut self.lists);
        lists.clear();
        let known: &[(&[u8], &[u8])] = &[
            (b"context", b"context"),
            (b"featureLists", b"feature_lists"),
        ];
        let read = message(&mut sc, known, |sc, i| {
            if i == 0 {
                return self.features(sc, 1, out);
            }
            let mut empty = true;
            message(sc, &[(b"featureList", b"feature_list")], |sc, _| {
                empty = false;
                self.map(sc, Some(2), &mut lists, |sc, b| {
                    message(sc, &[(b"feature", b"feature")], |sc, _| {
                        let mut more = sc.begin_array()?;
                        while more {
                            b.feature.clear();
                            feature(sc, TF_KINDS, &mut b.list, &mut b.feature)?;
                            put_len_prefix(&mut b.values, 1, b.feature.len());
                            b.values.extend_from_slice(&b.feature);
                            more = sc.next_element()?;
                        }
                        Some(())
                    })
                })
            })?;
            if empty {
                put_len_prefix(&mut lists, 2, 0);
            }
            Some(())
        });
        out.extend_from_slice(&lists);
        self.lists = lists;
        read?;
        sc.at_end().then_some(())
    }

    /// A `oneflow.OFRecord`, appended to `out`.
    pub(super) fn ofrecord(&mut self, text: &str, out: &mut Vec<u8>) -> Fast<()> {
        let mut sc = Scan::new(text);
        message(&mut sc, &[(b"feature", b"feature")], |sc, _| {
            self.map(sc, None, out, |sc, b| {
                feature(sc, OF_KINDS, &mut b.list, &mut b.values)
            })
        })?;
        sc.at_end().then_some(())
    }
}

#[cfg(test)]
mod tests;
