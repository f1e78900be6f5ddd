//! Protobuf wire builders for the derive tests: the valid encodings prost never writes
//! (unpacked lists, split runs, merged feature members, shadowed duplicate keys, value-before-key
//! map entries, unknown fields, keys in any order), and raw map entries appended to a message.

use std::fmt::Debug;

use proptest::prelude::*;

use super::model::{Feat, Feats};

/// Appends a base-128 varint.
pub(crate) fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v & 0x7f) as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Appends a field key.
fn put_tag(buf: &mut Vec<u8>, field: u32, wire: u8) {
    put_varint(buf, (u64::from(field) << 3) | u64::from(wire));
}

/// Appends a length-delimited field.
pub(crate) fn put_len(buf: &mut Vec<u8>, field: u32, body: &[u8]) {
    put_tag(buf, field, 2);
    put_varint(buf, body.len() as u64);
    buf.extend_from_slice(body);
}

/// Appends a varint field.
pub(crate) fn put_varint_field(buf: &mut Vec<u8>, field: u32, v: u64) {
    put_tag(buf, field, 0);
    put_varint(buf, v);
}

/// How to spell a feature map on the wire; every combination is a valid encoding of the same
/// message.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Style {
    /// Numeric lists value by value instead of one packed run.
    pub(crate) unpacked: bool,
    /// Lists of two or more values as two list messages (the oneof member set twice, which
    /// protobuf merges by concatenating the lists); inside each, a packed run and unpacked
    /// values mixed.
    pub(crate) split: bool,
    /// With `split`: the two members in two `value` fields of the map entry (merged too).
    pub(crate) split_entry: bool,
    /// Map entries in reverse key order.
    pub(crate) reverse: bool,
    /// Each key first appears with a different feature, overwritten by the real one.
    pub(crate) shadowed: bool,
    /// Unknown fields in every message.
    pub(crate) unknown: bool,
    /// Map entries with the value before the key.
    pub(crate) value_first: bool,
}

impl Style {
    /// The layout every writer produces.
    pub(crate) const PLAIN: Style = Style {
        unpacked: false,
        split: false,
        split_entry: false,
        reverse: false,
        shadowed: false,
        unknown: false,
        value_first: false,
    };
}

/// A strategy for [`Style`].
pub(crate) fn style() -> impl Strategy<Value = Style> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(unpacked, split, split_entry, reverse, shadowed, unknown, value_first)| Style {
                unpacked,
                split,
                split_entry,
                reverse,
                shadowed,
                unknown,
                value_first,
            },
        )
}

/// The oneof field number of a list in tf.train.Feature or oneflow.Feature.
fn kind_tag(f: &Feat, of: bool) -> u32 {
    match (f, of) {
        (Feat::Bytes(_), _) => 1,
        (Feat::Float(_), _) => 2,
        (Feat::Int(_), false) => 3,
        (Feat::Double(_), true) => 3,
        (Feat::Int32(_), true) => 4,
        (Feat::Int(_), true) => 5,
        (_, false) => panic!("tf.train.Example cannot hold {f:?}"),
    }
}

/// One list message body holding values `range` of `f`.
fn list_body(f: &Feat, range: std::ops::Range<usize>, s: Style, mixed: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if s.unknown {
        put_varint_field(&mut out, 7, 99);
    }
    // Value encoders: (packed payload, unpacked field).
    let mut packed = Vec::new();
    let mut unpacked = Vec::new();
    let n = range.len();
    for (j, i) in range.enumerate() {
        // In a mixed body the first half is packed, the rest unpacked.
        let as_packed = if mixed { j < n / 2 } else { !s.unpacked };
        match f {
            Feat::Bytes(v) => put_len(&mut unpacked, 1, &v[i]),
            Feat::Int(v) => {
                let raw = v[i].cast_unsigned();
                if as_packed {
                    put_varint(&mut packed, raw);
                } else {
                    put_varint_field(&mut unpacked, 1, raw);
                }
            }
            Feat::Int32(v) => {
                // protobuf writes a negative int32 sign-extended to ten bytes.
                let raw = i64::from(v[i]).cast_unsigned();
                if as_packed {
                    put_varint(&mut packed, raw);
                } else {
                    put_varint_field(&mut unpacked, 1, raw);
                }
            }
            Feat::Float(v) => {
                if as_packed {
                    packed.extend_from_slice(&v[i].to_le_bytes());
                } else {
                    put_tag(&mut unpacked, 1, 5);
                    unpacked.extend_from_slice(&v[i].to_le_bytes());
                }
            }
            Feat::Double(v) => {
                if as_packed {
                    packed.extend_from_slice(&v[i].to_le_bytes());
                } else {
                    put_tag(&mut unpacked, 1, 1);
                    unpacked.extend_from_slice(&v[i].to_le_bytes());
                }
            }
        }
    }
    if !packed.is_empty() {
        put_len(&mut out, 1, &packed);
    }
    out.extend_from_slice(&unpacked);
    out
}

/// The `Feature` message of `f`, as one or more chunks (each a whole number of fields) that
/// concatenate to a valid message.
pub(crate) fn feature_chunks(f: &Feat, of: bool, s: Style) -> Vec<Vec<u8>> {
    let tag = kind_tag(f, of);
    let n = f.len();
    let mut chunks = Vec::new();
    if s.split && n >= 2 {
        let mid = n / 2;
        let mut a = Vec::new();
        put_len(&mut a, tag, &list_body(f, 0..mid, s, true));
        let mut b = Vec::new();
        put_len(&mut b, tag, &list_body(f, mid..n, s, true));
        chunks.push(a);
        chunks.push(b);
    } else {
        let mut a = Vec::new();
        put_len(&mut a, tag, &list_body(f, 0..n, s, false));
        chunks.push(a);
    }
    if s.unknown {
        // Unknown fields after the oneof member leave the member set. In tf.train.Feature,
        // OFRecord's int32 and int64 list numbers (4, 5) are unknown fields too.
        if let Some(last) = chunks.last_mut() {
            put_varint_field(last, 15, 1);
            if !of {
                put_len(last, 4, &[0x08, 0x01]);
                put_varint_field(last, 5, 3);
            }
        }
    }
    chunks
}

/// One map entry (`key` = 1, `value` = 2).
pub(crate) fn map_entry(key: &str, chunks: &[Vec<u8>], s: Style) -> Vec<u8> {
    let mut values = Vec::new();
    if s.split_entry {
        for c in chunks {
            put_len(&mut values, 2, c);
        }
    } else {
        put_len(&mut values, 2, &chunks.concat());
    }
    let mut out = Vec::new();
    if s.value_first {
        out.extend_from_slice(&values);
        put_len(&mut out, 1, key.as_bytes());
    } else {
        put_len(&mut out, 1, key.as_bytes());
        out.extend_from_slice(&values);
    }
    if s.unknown {
        put_varint_field(&mut out, 3, 5);
    }
    out
}

/// The entries of a feature map in `style`, each as field `field` of the enclosing message.
fn map_entries(feats: &Feats, of: bool, s: Style, field: u32) -> Vec<u8> {
    let mut keys: Vec<(&String, &Feat)> = feats.iter().collect();
    if s.reverse {
        keys.reverse();
    }
    let mut out = Vec::new();
    for (k, f) in keys {
        if s.shadowed {
            let decoy = Feat::Bytes(vec![b"decoy".to_vec(), Vec::new()]);
            put_len(
                &mut out,
                field,
                &map_entry(k, &feature_chunks(&decoy, of, s), s),
            );
        }
        put_len(&mut out, field, &map_entry(k, &feature_chunks(f, of, s), s));
    }
    out
}

/// A `tensorflow.Example` in `style`.
pub(crate) fn styled_tf(feats: &Feats, s: Style) -> Vec<u8> {
    let mut features = map_entries(feats, false, s, 1);
    if s.unknown {
        put_len(&mut features, 9, b"junk");
    }
    let mut out = Vec::new();
    if s.unknown {
        put_varint_field(&mut out, 4, 1);
    }
    put_len(&mut out, 1, &features);
    out
}

/// A `oneflow.OFRecord` in `style`.
pub(crate) fn styled_of(feats: &Feats, s: Style) -> Vec<u8> {
    let mut out = map_entries(feats, true, s, 1);
    if s.unknown {
        put_len(&mut out, 9, b"junk");
    }
    out
}

/// Appends to a serialized Example one more feature map entry (last wins) with a raw
/// `Feature` body.
pub(crate) fn add_raw_tf_entry(mut example: Vec<u8>, key: &str, feature: &[u8]) -> Vec<u8> {
    let mut entry = Vec::new();
    put_len(&mut entry, 1, key.as_bytes());
    put_len(&mut entry, 2, feature);
    let mut features = Vec::new();
    put_len(&mut features, 1, &entry);
    // A second `features` field merges into the first.
    put_len(&mut example, 1, &features);
    example
}
