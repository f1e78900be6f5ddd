//! `#[derive(Example)]` and `#[derive(SequenceExample)]`: round trips and differential tests
//! against the generic prost message types.
//!
//! Every test type has a *model*: the features it must be written as, per container, in a
//! dialect-neutral form ([`Feat`], floats as bits so that NaN payloads and `-0.0` compare
//! exactly). For each value (hand-picked extremes and proptest-generated ones):
//!
//! - the derived encoding decodes through prost to exactly the model's features, and with
//!   each map's entries put in key order it is byte for byte what protobuf writes for them;
//! - the derived encoding decodes back through the derive to the same model;
//! - a prost message built from the model decodes through the derive to the same model;
//! - hand-built wire bytes in other valid encodings (unpacked lists, split runs, merged
//!   feature members, shadowed duplicate keys, value-before-key map entries, unknown fields,
//!   keys in any order) decode the same through prost and through the derive.
//!
//! Then the value errors (ranges, bools, UTF-8, counts, enum names, missing features, unknown
//! keys) name their feature key and field, and the typed `Writer`/`Reader` round-trip files in
//! both containers, plain and gzip.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Debug;

use proptest::prelude::*;
use tfrecord_core::proto::{oneflow, tensorflow};
use tfrecord_core::{
    Chunk, Decode, DecodeOwned, Encode, Error, ErrorKind, Example, Message, OfRecord, Ragged,
    Reader, ReaderOptions, SequenceExample, TfExample, TfSequenceExample, Writer, for_each_chunk,
};

// ---------------------------------------------------------------------------------------------
// The dialect-neutral model of a feature map.
// ---------------------------------------------------------------------------------------------

/// One feature's list, as the model expects it. Floats are kept as bits.
#[derive(Clone, Debug, PartialEq)]
enum Feat {
    /// `int64_list`.
    Int(Vec<i64>),
    /// `int32_list` (OFRecord only).
    Int32(Vec<i32>),
    /// `float_list`, as `f32` bits.
    Float(Vec<u32>),
    /// `double_list` (OFRecord only), as `f64` bits.
    Double(Vec<u64>),
    /// `bytes_list`.
    Bytes(Vec<Vec<u8>>),
}

impl Feat {
    fn len(&self) -> usize {
        match self {
            Feat::Int(v) => v.len(),
            Feat::Int32(v) => v.len(),
            Feat::Float(v) => v.len(),
            Feat::Double(v) => v.len(),
            Feat::Bytes(v) => v.len(),
        }
    }
}

type Feats = BTreeMap<String, Feat>;

/// Builds a model feature map; `of` selects OFRecord's vocabulary (int32 and double lists).
struct M {
    of: bool,
    out: Feats,
}

impl M {
    fn new(of: bool) -> Self {
        M {
            of,
            out: Feats::new(),
        }
    }

    fn put(&mut self, key: &str, f: Feat) {
        assert!(
            self.out.insert(key.to_string(), f).is_none(),
            "model bug: key {key} twice"
        );
    }

    fn int(&mut self, key: &str, v: impl IntoIterator<Item = i64>) {
        self.put(key, Feat::Int(v.into_iter().collect()));
    }

    fn i32(&mut self, key: &str, v: impl IntoIterator<Item = i32>) {
        let f = i32_feat(self.of, v);
        self.put(key, f);
    }

    fn f32(&mut self, key: &str, v: impl IntoIterator<Item = f32>) {
        self.put(key, f32_feat(v));
    }

    /// An `f64`: a double list in OFRecord, a float list (lossy) in tf.train.Example.
    fn f64(&mut self, key: &str, v: impl IntoIterator<Item = f64>) {
        let f = f64_feat(self.of, v);
        self.put(key, f);
    }

    fn bytes<B: AsRef<[u8]>>(&mut self, key: &str, v: impl IntoIterator<Item = B>) {
        self.put(key, bytes_feat(v));
    }

    /// Inlines a flattened member's features under `prefix/`.
    fn nest(&mut self, prefix: &str, inner: Feats) {
        for (k, f) in inner {
            self.put(&format!("{prefix}/{k}"), f);
        }
    }

    fn done(self) -> Feats {
        self.out
    }
}

fn i32_feat(of: bool, v: impl IntoIterator<Item = i32>) -> Feat {
    if of {
        Feat::Int32(v.into_iter().collect())
    } else {
        Feat::Int(v.into_iter().map(i64::from).collect())
    }
}

fn f32_feat(v: impl IntoIterator<Item = f32>) -> Feat {
    Feat::Float(v.into_iter().map(f32::to_bits).collect())
}

#[allow(clippy::cast_possible_truncation)]
fn f64_feat(of: bool, v: impl IntoIterator<Item = f64>) -> Feat {
    if of {
        Feat::Double(v.into_iter().map(f64::to_bits).collect())
    } else {
        Feat::Float(v.into_iter().map(|d| (d as f32).to_bits()).collect())
    }
}

fn bytes_feat<B: AsRef<[u8]>>(v: impl IntoIterator<Item = B>) -> Feat {
    Feat::Bytes(v.into_iter().map(|b| b.as_ref().to_vec()).collect())
}

/// A test type's expected features.
trait Model {
    /// The features in tf.train.Example (`of == false`) or OFRecord (`of == true`).
    fn feats(&self, of: bool) -> Feats;
}

// ---------------------------------------------------------------------------------------------
// Model <-> prost messages.
// ---------------------------------------------------------------------------------------------

fn tf_feature(f: &Feat) -> tensorflow::Feature {
    use tensorflow::feature::Kind;
    let kind = match f {
        Feat::Int(v) => Kind::Int64List(tensorflow::Int64List { value: v.clone() }),
        Feat::Float(v) => Kind::FloatList(tensorflow::FloatList {
            value: v.iter().copied().map(f32::from_bits).collect(),
        }),
        Feat::Bytes(v) => Kind::BytesList(tensorflow::BytesList { value: v.clone() }),
        Feat::Int32(_) | Feat::Double(_) => panic!("tf.train.Example cannot hold {f:?}"),
    };
    tensorflow::Feature { kind: Some(kind) }
}

fn of_feature(f: &Feat) -> oneflow::Feature {
    use oneflow::feature::Kind;
    let kind = match f {
        Feat::Int(v) => Kind::Int64List(oneflow::Int64List { value: v.clone() }),
        Feat::Int32(v) => Kind::Int32List(oneflow::Int32List { value: v.clone() }),
        Feat::Float(v) => Kind::FloatList(oneflow::FloatList {
            value: v.iter().copied().map(f32::from_bits).collect(),
        }),
        Feat::Double(v) => Kind::DoubleList(oneflow::DoubleList {
            value: v.iter().copied().map(f64::from_bits).collect(),
        }),
        Feat::Bytes(v) => Kind::BytesList(oneflow::BytesList { value: v.clone() }),
    };
    oneflow::Feature { kind: Some(kind) }
}

/// `None` for a feature with no kind set.
fn feat_of_tf(f: &tensorflow::Feature) -> Option<Feat> {
    use tensorflow::feature::Kind;
    Some(match f.kind.as_ref()? {
        Kind::Int64List(l) => Feat::Int(l.value.clone()),
        Kind::FloatList(l) => Feat::Float(l.value.iter().map(|x| x.to_bits()).collect()),
        Kind::BytesList(l) => Feat::Bytes(l.value.clone()),
    })
}

fn feat_of_of(f: &oneflow::Feature) -> Option<Feat> {
    use oneflow::feature::Kind;
    Some(match f.kind.as_ref()? {
        Kind::Int64List(l) => Feat::Int(l.value.clone()),
        Kind::Int32List(l) => Feat::Int32(l.value.clone()),
        Kind::FloatList(l) => Feat::Float(l.value.iter().map(|x| x.to_bits()).collect()),
        Kind::DoubleList(l) => Feat::Double(l.value.iter().map(|x| x.to_bits()).collect()),
        Kind::BytesList(l) => Feat::Bytes(l.value.clone()),
    })
}

fn tf_example(feats: &Feats) -> tensorflow::Example {
    let feature = feats
        .iter()
        .map(|(k, f)| (k.clone(), tf_feature(f)))
        .collect();
    tensorflow::Example {
        features: Some(tensorflow::Features { feature }),
    }
}

fn ofrecord(feats: &Feats) -> oneflow::OfRecord {
    let feature = feats
        .iter()
        .map(|(k, f)| (k.clone(), of_feature(f)))
        .collect();
    oneflow::OfRecord { feature }
}

fn feats_of_tf(e: &tensorflow::Example) -> Feats {
    e.features
        .iter()
        .flat_map(|f| &f.feature)
        .map(|(k, f)| {
            (
                k.clone(),
                feat_of_tf(f).expect("every written feature has a kind"),
            )
        })
        .collect()
}

fn feats_of_of(r: &oneflow::OfRecord) -> Feats {
    r.feature
        .iter()
        .map(|(k, f)| {
            (
                k.clone(),
                feat_of_of(f).expect("every written feature has a kind"),
            )
        })
        .collect()
}

fn tf_bytes(feats: &Feats) -> Vec<u8> {
    tf_example(feats).encode_to_vec()
}

fn of_bytes(feats: &Feats) -> Vec<u8> {
    ofrecord(feats).encode_to_vec()
}

/// The model of a SequenceExample: context features, and feature lists whose steps may be
/// features with no kind set (`None`).
#[derive(Clone, Debug, PartialEq, Default)]
struct SeqFeats {
    context: Feats,
    lists: BTreeMap<String, Vec<Option<Feat>>>,
}

trait SeqModel {
    fn seq_feats(&self) -> SeqFeats;
}

fn tf_sequence(s: &SeqFeats) -> tensorflow::SequenceExample {
    let feature_list = s
        .lists
        .iter()
        .map(|(k, steps)| {
            let feature = steps
                .iter()
                .map(|f| {
                    f.as_ref()
                        .map_or(tensorflow::Feature { kind: None }, tf_feature)
                })
                .collect();
            (k.clone(), tensorflow::FeatureList { feature })
        })
        .collect();
    tensorflow::SequenceExample {
        context: Some(tensorflow::Features {
            feature: s
                .context
                .iter()
                .map(|(k, f)| (k.clone(), tf_feature(f)))
                .collect(),
        }),
        feature_lists: Some(tensorflow::FeatureLists { feature_list }),
    }
}

fn seq_feats_of(e: &tensorflow::SequenceExample) -> SeqFeats {
    SeqFeats {
        context: e
            .context
            .iter()
            .flat_map(|c| &c.feature)
            .map(|(k, f)| {
                (
                    k.clone(),
                    feat_of_tf(f).expect("context features have a kind"),
                )
            })
            .collect(),
        lists: e
            .feature_lists
            .iter()
            .flat_map(|l| &l.feature_list)
            .map(|(k, l)| (k.clone(), l.feature.iter().map(feat_of_tf).collect()))
            .collect(),
    }
}

// ---------------------------------------------------------------------------------------------
// Protobuf wire builders, for encodings prost never writes.
// ---------------------------------------------------------------------------------------------

fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v & 0x7f) as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

fn put_tag(buf: &mut Vec<u8>, field: u32, wire: u8) {
    put_varint(buf, (u64::from(field) << 3) | u64::from(wire));
}

fn put_len(buf: &mut Vec<u8>, field: u32, body: &[u8]) {
    put_tag(buf, field, 2);
    put_varint(buf, body.len() as u64);
    buf.extend_from_slice(body);
}

fn put_varint_field(buf: &mut Vec<u8>, field: u32, v: u64) {
    put_tag(buf, field, 0);
    put_varint(buf, v);
}

/// How to spell a feature map on the wire; every combination is a valid encoding of the same
/// message.
#[derive(Clone, Copy, Debug)]
struct Style {
    /// Numeric lists value by value instead of one packed run.
    unpacked: bool,
    /// Lists of two or more values as two list messages (the oneof member set twice, which
    /// protobuf merges by concatenating the lists); inside each, a packed run and unpacked
    /// values mixed.
    split: bool,
    /// With `split`: the two members in two `value` fields of the map entry (merged too).
    split_entry: bool,
    /// Map entries in reverse key order.
    reverse: bool,
    /// Each key first appears with a different feature, overwritten by the real one.
    shadowed: bool,
    /// Unknown fields in every message.
    unknown: bool,
    /// Map entries with the value before the key.
    value_first: bool,
}

impl Style {
    /// The layout every writer produces.
    const PLAIN: Style = Style {
        unpacked: false,
        split: false,
        split_entry: false,
        reverse: false,
        shadowed: false,
        unknown: false,
        value_first: false,
    };
}

fn style() -> impl Strategy<Value = Style> {
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
fn feature_chunks(f: &Feat, of: bool, s: Style) -> Vec<Vec<u8>> {
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
fn map_entry(key: &str, chunks: &[Vec<u8>], s: Style) -> Vec<u8> {
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
fn styled_tf(feats: &Feats, s: Style) -> Vec<u8> {
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
fn styled_of(feats: &Feats, s: Style) -> Vec<u8> {
    let mut out = map_entries(feats, true, s, 1);
    if s.unknown {
        put_len(&mut out, 9, b"junk");
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The checks every test type goes through.
// ---------------------------------------------------------------------------------------------

/// Encodes `v` as a tf.train.Example, checks it against prost and the model in both
/// directions, and returns the derive's decoding of its own bytes.
fn check_tf<T>(v: &T) -> T
where
    T: Model + Encode<TfExample> + DecodeOwned<TfExample> + Debug,
{
    let want = v.feats(false);
    let bytes = Encode::<TfExample>::encode_to_vec(v);
    assert_eq!(bytes.len(), Encode::<TfExample>::encoded_len(v), "{v:?}");
    let msg = tensorflow::Example::decode(&bytes[..]).expect("derived bytes are a valid Example");
    assert_exact(&bytes, &tfrecord_core::proto::encode_example(&msg), &[&[1]]);
    assert_eq!(
        feats_of_tf(&msg),
        want,
        "derived encoding of {v:?}, read by prost"
    );
    let back = <T as Decode<TfExample>>::decode(&bytes).expect("decode own encoding");
    assert_eq!(back.feats(false), want, "derived round trip of {v:?}");
    let from_prost = <T as Decode<TfExample>>::decode(&tf_bytes(&want)).expect("prost bytes");
    assert_eq!(
        from_prost.feats(false),
        want,
        "prost encoding, read by the derive"
    );
    back
}

/// Byte-exact check of a derived encoding against protobuf's own: `derived` with the map
/// entries of each of its maps sorted by key must be what the reference encoder (prost's
/// messages, whose maps are sorted, with every entry's key and value written as TensorFlow
/// does) writes for the message it decodes to. `maps` are the paths of field numbers from the
/// top of the message to each map's enclosing message (`&[]`: the message itself is the map).
fn assert_exact(derived: &[u8], reference: &[u8], maps: &[&[u32]]) {
    assert_eq!(
        sort_maps(derived, &[], maps),
        reference,
        "derived bytes, map entries sorted"
    );
}

/// `msg` with the entries (field 1) of the maps at `maps` sorted by key; `at` is `msg`'s path.
fn sort_maps(msg: &[u8], at: &[u32], maps: &[&[u32]]) -> Vec<u8> {
    use tfrecord_core::__private::wire::{Fields, Value, put_len_prefix};
    let mut fields: Vec<(u32, Vec<u8>)> = Vec::new();
    let mut walk = Fields::new(msg);
    while let Some((field, value)) = walk.next_field().expect("well-formed message") {
        let Value::Len(body) = value else {
            panic!("only length-delimited fields in a feature message, found {value:?}");
        };
        let path: Vec<u32> = at.iter().copied().chain([field]).collect();
        let inner = if maps.iter().any(|m| m.starts_with(&path)) {
            sort_maps(body, &path, maps)
        } else {
            body.to_vec()
        };
        fields.push((field, inner));
    }
    if maps.contains(&at) {
        // A map entry is (1: key, 2: value); the derive writes the key first.
        let key = |e: &[u8]| match Fields::new(e).next_field() {
            Ok(Some((1, Value::Len(k)))) => k.to_vec(),
            other => panic!("a map entry starts with its key, found {other:?}"),
        };
        fields.sort_by_key(|(_, e)| key(e));
    }
    let mut out = Vec::new();
    for (field, body) in fields {
        put_len_prefix(&mut out, field, body.len());
        out.extend_from_slice(&body);
    }
    out
}

/// As [`check_tf`], for OFRecord.
fn check_of<T>(v: &T) -> T
where
    T: Model + Encode<OfRecord> + DecodeOwned<OfRecord> + Debug,
{
    let want = v.feats(true);
    let bytes = Encode::<OfRecord>::encode_to_vec(v);
    assert_eq!(bytes.len(), Encode::<OfRecord>::encoded_len(v), "{v:?}");
    let msg = oneflow::OfRecord::decode(&bytes[..]).expect("derived bytes are a valid OFRecord");
    assert_exact(&bytes, &tfrecord_core::proto::encode_ofrecord(&msg), &[&[]]);
    assert_eq!(
        feats_of_of(&msg),
        want,
        "derived encoding of {v:?}, read by prost"
    );
    let back = <T as Decode<OfRecord>>::decode(&bytes).expect("decode own encoding");
    assert_eq!(back.feats(true), want, "derived round trip of {v:?}");
    let from_prost = <T as Decode<OfRecord>>::decode(&of_bytes(&want)).expect("prost bytes");
    assert_eq!(
        from_prost.feats(true),
        want,
        "prost encoding, read by the derive"
    );
    back
}

/// Both containers.
fn check_both<T>(v: &T) -> (T, T)
where
    T: Model
        + Encode<TfExample>
        + DecodeOwned<TfExample>
        + Encode<OfRecord>
        + DecodeOwned<OfRecord>
        + Debug,
{
    (check_tf(v), check_of(v))
}

/// `v`'s features in `style`, decoded by prost and by the derive, in both containers.
fn check_styled<T>(v: &T, s: Style)
where
    T: Model + DecodeOwned<TfExample> + DecodeOwned<OfRecord> + Debug,
{
    let want = v.feats(false);
    let bytes = styled_tf(&want, s);
    let msg = tensorflow::Example::decode(&bytes[..]).expect("styled bytes are a valid Example");
    assert_eq!(feats_of_tf(&msg), want, "prost reading {s:?}");
    let back = <T as Decode<TfExample>>::decode(&bytes).expect("derive reads every encoding");
    assert_eq!(back.feats(false), want, "derive reading {s:?}");

    let want = v.feats(true);
    let bytes = styled_of(&want, s);
    let msg = oneflow::OfRecord::decode(&bytes[..]).expect("styled bytes are a valid OFRecord");
    assert_eq!(feats_of_of(&msg), want, "prost reading {s:?}");
    let back = <T as Decode<OfRecord>>::decode(&bytes).expect("derive reads every encoding");
    assert_eq!(back.feats(true), want, "derive reading {s:?}");
}

/// Encodes `v` as a SequenceExample and checks it against prost and the model both ways.
fn check_seq<T>(v: &T) -> T
where
    T: SeqModel + Encode<TfSequenceExample> + DecodeOwned<TfSequenceExample> + Debug,
{
    let want = v.seq_feats();
    let bytes = Encode::<TfSequenceExample>::encode_to_vec(v);
    assert_eq!(bytes.len(), Encode::<TfSequenceExample>::encoded_len(v));
    let msg = tensorflow::SequenceExample::decode(&bytes[..]).expect("valid SequenceExample");
    let reference = tfrecord_core::proto::encode_sequence_example(&msg);
    assert_exact(&bytes, &reference, &[&[1], &[2]]);
    assert_eq!(
        seq_feats_of(&msg),
        want,
        "derived encoding of {v:?}, read by prost"
    );
    let back = <T as Decode<TfSequenceExample>>::decode(&bytes).expect("decode own encoding");
    assert_eq!(back.seq_feats(), want, "derived round trip of {v:?}");
    let built = tf_sequence(&want).encode_to_vec();
    let from_prost = <T as Decode<TfSequenceExample>>::decode(&built).expect("prost bytes");
    assert_eq!(
        from_prost.seq_feats(),
        want,
        "prost encoding, read by the derive"
    );
    back
}

/// The error of a failed decode, with its key and message.
fn feature_error<T: Debug>(r: tfrecord_core::Result<T>) -> (Option<String>, String) {
    let e: Error = r.expect_err("decoding must fail");
    assert!(
        matches!(e.kind(), ErrorKind::Feature { .. }),
        "a feature error, not {e:?}"
    );
    (e.key().map(str::to_string), e.to_string())
}

/// Asserts that decoding `feats` as `T` fails on `key` with a message containing each of
/// `parts`, in tf.train.Example (`of == false`) or OFRecord.
fn assert_fails<T>(of: bool, feats: &Feats, key: &str, parts: &[&str])
where
    T: DecodeOwned<TfExample> + DecodeOwned<OfRecord> + Debug,
{
    let (got_key, msg) = if of {
        feature_error(<T as Decode<OfRecord>>::decode(&of_bytes(feats)))
    } else {
        feature_error(<T as Decode<TfExample>>::decode(&tf_bytes(feats)))
    };
    assert_eq!(got_key.as_deref(), Some(key), "{msg}");
    for p in parts {
        assert!(msg.contains(p), "{msg:?} should contain {p:?}");
    }
}

fn cfg() -> ProptestConfig {
    ProptestConfig::with_cases(64)
}

// ---------------------------------------------------------------------------------------------
// Test types.
// ---------------------------------------------------------------------------------------------

/// A unit-only enum stored by name.
#[derive(Example, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[example(rename_all = "snake_case")]
enum Fruit {
    #[default]
    RedApple,
    Banana,
    #[example(rename = "kiwi!")]
    Kiwi,
}

impl Fruit {
    const ALL: [Fruit; 3] = [Fruit::RedApple, Fruit::Banana, Fruit::Kiwi];
    fn wire(self) -> &'static str {
        match self {
            Fruit::RedApple => "red_apple",
            Fruit::Banana => "banana",
            Fruit::Kiwi => "kiwi!",
        }
    }
}

/// A unit-only enum stored by discriminant.
#[derive(Example, Debug, Clone, Copy, PartialEq, Eq)]
#[example(repr = "int64")]
#[repr(i64)]
enum Level {
    Low = -1,
    Mid,
    High = 10,
    Top = 1_000_000_000_000,
}

impl Level {
    const ALL: [Level; 4] = [Level::Low, Level::Mid, Level::High, Level::Top];
    fn wire(self) -> i64 {
        match self {
            Level::Low => -1,
            Level::Mid => 0,
            Level::High => 10,
            Level::Top => 1_000_000_000_000,
        }
    }
}

/// Every integer and bool scalar.
#[derive(Example, Debug, Clone, PartialEq)]
struct Ints {
    a_i64: i64,
    a_i32: i32,
    a_i16: i16,
    a_i8: i8,
    a_u8: u8,
    a_u32: u32,
    a_u16: u16,
    a_u64: u64,
    a_bool: bool,
}

impl Model for Ints {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.int("a_i64", [self.a_i64]);
        m.i32("a_i32", [self.a_i32]);
        m.int("a_i16", [i64::from(self.a_i16)]);
        m.int("a_i8", [i64::from(self.a_i8)]);
        m.int("a_u8", [i64::from(self.a_u8)]);
        m.int("a_u32", [i64::from(self.a_u32)]);
        m.int("a_u16", [i64::from(self.a_u16)]);
        m.int("a_u64", [self.a_u64.cast_signed()]);
        m.int("a_bool", [i64::from(self.a_bool)]);
        m.done()
    }
}

fn ints() -> impl Strategy<Value = Ints> {
    (
        any::<i64>(),
        any::<i32>(),
        any::<i16>(),
        any::<i8>(),
        any::<u8>(),
        any::<u32>(),
        any::<u16>(),
        any::<u64>(),
        any::<bool>(),
    )
        .prop_map(
            |(a_i64, a_i32, a_i16, a_i8, a_u8, a_u32, a_u16, a_u64, a_bool)| Ints {
                a_i64,
                a_i32,
                a_i16,
                a_i8,
                a_u8,
                a_u32,
                a_u16,
                a_u64,
                a_bool,
            },
        )
}

/// Integer lists and arrays.
#[derive(Example, Debug, Clone, PartialEq)]
struct IntLists {
    v_i64: Vec<i64>,
    v_i32: Vec<i32>,
    v_i16: Vec<i16>,
    v_i8: Vec<i8>,
    v_u32: Vec<u32>,
    v_u16: Vec<u16>,
    v_u64: Vec<u64>,
    v_bool: Vec<bool>,
    arr_i64: [i64; 3],
    arr_i32: [i32; 2],
    arr_bool: [bool; 1],
    #[example(shape = [2, 3])]
    mat: Vec<u16>,
}

impl Model for IntLists {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.int("v_i64", self.v_i64.iter().copied());
        m.i32("v_i32", self.v_i32.iter().copied());
        m.int("v_i16", self.v_i16.iter().map(|&x| i64::from(x)));
        m.int("v_i8", self.v_i8.iter().map(|&x| i64::from(x)));
        m.int("v_u32", self.v_u32.iter().map(|&x| i64::from(x)));
        m.int("v_u16", self.v_u16.iter().map(|&x| i64::from(x)));
        m.int("v_u64", self.v_u64.iter().map(|&x| x.cast_signed()));
        m.int("v_bool", self.v_bool.iter().map(|&x| i64::from(x)));
        m.int("arr_i64", self.arr_i64);
        m.i32("arr_i32", self.arr_i32);
        m.int("arr_bool", self.arr_bool.map(i64::from));
        m.int("mat", self.mat.iter().map(|&x| i64::from(x)));
        m.done()
    }
}

fn small_vec<T: Debug>(s: impl Strategy<Value = T>) -> impl Strategy<Value = Vec<T>> {
    prop::collection::vec(s, 0..5)
}

fn int_lists() -> impl Strategy<Value = IntLists> {
    (
        (
            small_vec(any::<i64>()),
            small_vec(any::<i32>()),
            small_vec(any::<i16>()),
            small_vec(any::<i8>()),
            small_vec(any::<u32>()),
            small_vec(any::<u16>()),
        ),
        (
            small_vec(any::<u64>()),
            small_vec(any::<bool>()),
            any::<[i64; 3]>(),
            any::<[i32; 2]>(),
            any::<[bool; 1]>(),
            prop::collection::vec(any::<u16>(), 6),
        ),
    )
        .prop_map(
            |(
                (v_i64, v_i32, v_i16, v_i8, v_u32, v_u16),
                (v_u64, v_bool, arr_i64, arr_i32, arr_bool, mat),
            )| IntLists {
                v_i64,
                v_i32,
                v_i16,
                v_i8,
                v_u32,
                v_u16,
                v_u64,
                v_bool,
                arr_i64,
                arr_i32,
                arr_bool,
                mat,
            },
        )
}

/// Floats in both containers; `f64` with `lossy` is a double list in OFRecord and a float list
/// in tf.train.Example.
#[derive(Example, Debug, Clone)]
struct Floats {
    f: f32,
    v: Vec<f32>,
    arr: [f32; 4],
    #[example(shape = [2, 3])]
    mat: Vec<f32>,
    opt: Option<f32>,
    #[example(lossy)]
    d: f64,
    #[example(lossy)]
    dv: Vec<f64>,
    #[example(lossy)]
    da: [f64; 2],
}

impl Model for Floats {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.f32("f", [self.f]);
        m.f32("v", self.v.iter().copied());
        m.f32("arr", self.arr);
        m.f32("mat", self.mat.iter().copied());
        if let Some(x) = self.opt {
            m.f32("opt", [x]);
        }
        m.f64("d", [self.d]);
        m.f64("dv", self.dv.iter().copied());
        m.f64("da", self.da);
        m.done()
    }
}

/// Every `f32` bit pattern: NaNs with any payload, infinities, `-0.0`, subnormals.
fn f32_bits() -> impl Strategy<Value = f32> {
    any::<u32>().prop_map(f32::from_bits)
}

/// Every `f64` bit pattern.
fn f64_bits() -> impl Strategy<Value = f64> {
    any::<u64>().prop_map(f64::from_bits)
}

/// `f64`s without NaN: narrowing a NaN to `f32` does not keep its payload, so a lossy NaN
/// only stays a NaN (checked separately).
fn f64_no_nan() -> BoxedStrategy<f64> {
    f64_bits().prop_filter("not NaN", |d| !d.is_nan()).boxed()
}

fn floats(d: impl Strategy<Value = f64> + Clone) -> impl Strategy<Value = Floats> {
    (
        f32_bits(),
        small_vec(f32_bits()),
        prop::array::uniform4(f32_bits()),
        prop::collection::vec(f32_bits(), 6),
        proptest::option::of(f32_bits()),
        d.clone(),
        small_vec(d.clone()),
        prop::array::uniform2(d),
    )
        .prop_map(|(f, v, arr, mat, opt, d, dv, da)| Floats {
            f,
            v,
            arr,
            mat,
            opt,
            d,
            dv,
            da,
        })
}

/// `f64` as OFRecord's double list, exact.
#[derive(Example, Debug, Clone)]
#[example(dialect = "ofrecord")]
struct Doubles {
    d: f64,
    dv: Vec<f64>,
    da: [f64; 3],
    od: Option<f64>,
    i: i32,
    iv: Vec<i32>,
}

impl Model for Doubles {
    fn feats(&self, of: bool) -> Feats {
        assert!(of, "Doubles is OFRecord-only");
        let mut m = M::new(of);
        m.f64("d", [self.d]);
        m.f64("dv", self.dv.iter().copied());
        m.f64("da", self.da);
        if let Some(x) = self.od {
            m.f64("od", [x]);
        }
        m.i32("i", [self.i]);
        m.i32("iv", self.iv.iter().copied());
        m.done()
    }
}

/// Bytes and text in every owned form.
#[derive(Example, Debug, Clone, PartialEq)]
struct Texts {
    s: String,
    b: Vec<u8>,
    by: bytes::Bytes,
    vs: Vec<String>,
    vb: Vec<Vec<u8>>,
    vby: Vec<bytes::Bytes>,
    arr_s: [String; 2],
    opt_s: Option<String>,
    opt_b: Option<Vec<u8>>,
    #[example(shape = [1, 2])]
    pair: Vec<Vec<u8>>,
}

impl Model for Texts {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.bytes("s", [&self.s]);
        m.bytes("b", [&self.b]);
        m.bytes("by", [&self.by]);
        m.bytes("vs", &self.vs);
        m.bytes("vb", &self.vb);
        m.bytes("vby", &self.vby);
        m.bytes("arr_s", &self.arr_s);
        if let Some(s) = &self.opt_s {
            m.bytes("opt_s", [s]);
        }
        if let Some(b) = &self.opt_b {
            m.bytes("opt_b", [b]);
        }
        m.bytes("pair", &self.pair);
        m.done()
    }
}

fn blob() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..12)
}

fn texts() -> impl Strategy<Value = Texts> {
    (
        (
            any::<String>(),
            blob(),
            blob().prop_map(bytes::Bytes::from),
            small_vec(any::<String>()),
            small_vec(blob()),
        ),
        (
            small_vec(blob().prop_map(bytes::Bytes::from)),
            any::<[String; 2]>(),
            proptest::option::of(any::<String>()),
            proptest::option::of(blob()),
            prop::collection::vec(blob(), 2),
        ),
    )
        .prop_map(
            |((s, b, by, vs, vb), (vby, arr_s, opt_s, opt_b, pair))| Texts {
                s,
                b,
                by,
                vs,
                vb,
                vby,
                arr_s,
                opt_s,
                opt_b,
                pair,
            },
        )
}

/// Options of every shape: absent when `None`.
#[derive(Example, Debug, Clone, PartialEq)]
struct Opts {
    o_i64: Option<i64>,
    o_i32: Option<i32>,
    o_u64: Option<u64>,
    o_bool: Option<bool>,
    o_vec: Option<Vec<i64>>,
    o_arr: Option<[u16; 2]>,
    o_s: Option<String>,
    o_fruit: Option<Fruit>,
    o_levels: Option<Vec<Level>>,
    o_by: Option<bytes::Bytes>,
    #[example(shape = [2])]
    o_shaped: Option<Vec<i8>>,
}

impl Model for Opts {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        if let Some(x) = self.o_i64 {
            m.int("o_i64", [x]);
        }
        if let Some(x) = self.o_i32 {
            m.i32("o_i32", [x]);
        }
        if let Some(x) = self.o_u64 {
            m.int("o_u64", [x.cast_signed()]);
        }
        if let Some(x) = self.o_bool {
            m.int("o_bool", [i64::from(x)]);
        }
        if let Some(x) = &self.o_vec {
            m.int("o_vec", x.iter().copied());
        }
        if let Some(x) = self.o_arr {
            m.int("o_arr", x.map(i64::from));
        }
        if let Some(x) = &self.o_s {
            m.bytes("o_s", [x]);
        }
        if let Some(x) = self.o_fruit {
            m.bytes("o_fruit", [x.wire()]);
        }
        if let Some(x) = &self.o_levels {
            m.int("o_levels", x.iter().map(|l| l.wire()));
        }
        if let Some(x) = &self.o_by {
            m.bytes("o_by", [x]);
        }
        if let Some(x) = &self.o_shaped {
            m.int("o_shaped", x.iter().map(|&v| i64::from(v)));
        }
        m.done()
    }
}

fn fruit() -> impl Strategy<Value = Fruit> {
    prop::sample::select(&Fruit::ALL[..])
}

fn level() -> impl Strategy<Value = Level> {
    prop::sample::select(&Level::ALL[..])
}

fn opts() -> impl Strategy<Value = Opts> {
    use proptest::option::of;
    (
        (
            of(any::<i64>()),
            of(any::<i32>()),
            of(any::<u64>()),
            of(any::<bool>()),
            of(small_vec(any::<i64>())),
            of(any::<[u16; 2]>()),
        ),
        (
            of(any::<String>()),
            of(fruit()),
            of(small_vec(level())),
            of(blob().prop_map(bytes::Bytes::from)),
            of(prop::collection::vec(any::<i8>(), 2)),
        ),
    )
        .prop_map(
            |(
                (o_i64, o_i32, o_u64, o_bool, o_vec, o_arr),
                (o_s, o_fruit, o_levels, o_by, o_shaped),
            )| {
                Opts {
                    o_i64,
                    o_i32,
                    o_u64,
                    o_bool,
                    o_vec,
                    o_arr,
                    o_s,
                    o_fruit,
                    o_levels,
                    o_by,
                    o_shaped,
                }
            },
        )
}

/// Enums as values, lists, arrays, options and defaults.
#[derive(Example, Debug, Clone, PartialEq)]
struct Enums {
    fruit: Fruit,
    fruits: Vec<Fruit>,
    level: Level,
    levels: [Level; 2],
    #[example(default)]
    fallback: Fruit,
}

impl Model for Enums {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.bytes("fruit", [self.fruit.wire()]);
        m.bytes("fruits", self.fruits.iter().map(|f| f.wire()));
        m.int("level", [self.level.wire()]);
        m.int("levels", self.levels.map(Level::wire));
        m.bytes("fallback", [self.fallback.wire()]);
        m.done()
    }
}

fn enums() -> impl Strategy<Value = Enums> {
    (
        fruit(),
        small_vec(fruit()),
        level(),
        prop::array::uniform2(level()),
        fruit(),
    )
        .prop_map(|(fruit, fruits, level, levels, fallback)| Enums {
            fruit,
            fruits,
            level,
            levels,
            fallback,
        })
}

/// Defaults: literals of every kind, and the type's `Default`.
#[derive(Example, Debug, Clone, PartialEq)]
struct Defaults {
    #[example(default = 5)]
    i: i64,
    #[example(default = -7)]
    n: i8,
    #[example(default = 18446744073709551615)]
    big: u64,
    #[example(default = 70000)]
    i32_: i32,
    #[example(default = 0.5)]
    f: f32,
    #[example(default = 2)]
    f_from_int: f32,
    #[example(default = true)]
    b: bool,
    #[example(default = "hi")]
    s: String,
    #[example(default = "raw")]
    by: Vec<u8>,
    #[example(default = "bb")]
    bb: bytes::Bytes,
    #[example(default = [1, 2, 3])]
    v: Vec<i64>,
    #[example(default = [1.5, -2])]
    arr: [f32; 2],
    #[example(shape = [2, 2], default = [[1, 2], [3, 4]])]
    mat: Vec<i32>,
    #[example(default = ["a", "b"])]
    vs: Vec<String>,
    #[example(default = [])]
    empty: Vec<u32>,
    #[example(default)]
    td_i: i64,
    #[example(default)]
    td_s: String,
    #[example(default)]
    td_v: Vec<f32>,
    #[example(default)]
    td_e: Fruit,
}

impl Defaults {
    /// What an empty record decodes to.
    fn absent() -> Self {
        Defaults {
            i: 5,
            n: -7,
            big: u64::MAX,
            i32_: 70000,
            f: 0.5,
            f_from_int: 2.0,
            b: true,
            s: "hi".into(),
            by: b"raw".to_vec(),
            bb: bytes::Bytes::from_static(b"bb"),
            v: vec![1, 2, 3],
            arr: [1.5, -2.0],
            mat: vec![1, 2, 3, 4],
            vs: vec!["a".into(), "b".into()],
            empty: vec![],
            td_i: 0,
            td_s: String::new(),
            td_v: vec![],
            td_e: Fruit::RedApple,
        }
    }
}

impl Model for Defaults {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.int("i", [self.i]);
        m.int("n", [i64::from(self.n)]);
        m.int("big", [self.big.cast_signed()]);
        m.i32("i32_", [self.i32_]);
        m.f32("f", [self.f]);
        m.f32("f_from_int", [self.f_from_int]);
        m.int("b", [i64::from(self.b)]);
        m.bytes("s", [&self.s]);
        m.bytes("by", [&self.by]);
        m.bytes("bb", [&self.bb]);
        m.int("v", self.v.iter().copied());
        m.f32("arr", self.arr);
        m.i32("mat", self.mat.iter().copied());
        m.bytes("vs", &self.vs);
        m.int("empty", self.empty.iter().map(|&x| i64::from(x)));
        m.int("td_i", [self.td_i]);
        m.bytes("td_s", [&self.td_s]);
        m.f32("td_v", self.td_v.iter().copied());
        m.bytes("td_e", [self.td_e.wire()]);
        m.done()
    }
}

/// The innermost flattened member.
#[derive(Example, Debug, Clone, PartialEq)]
struct Deep {
    x: i64,
    tag: Option<String>,
}

impl Model for Deep {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.int("x", [self.x]);
        if let Some(t) = &self.tag {
            m.bytes("tag", [t]);
        }
        m.done()
    }
}

/// A flattened member that flattens another, with its own `rename_all`.
#[derive(Example, Debug, Clone, PartialEq)]
#[example(rename_all = "camelCase")]
struct Middle {
    inner_count: u16,
    #[example(flatten)]
    deep: Deep,
}

impl Model for Middle {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.int("innerCount", [i64::from(self.inner_count)]);
        m.nest("deep", self.deep.feats(of));
        m.done()
    }
}

/// Flattening: keys `outer/inner`, nested, and with an explicit key prefix.
#[derive(Example, Debug, Clone, PartialEq)]
struct Outer {
    id: i64,
    #[example(flatten)]
    middle: Middle,
    #[example(flatten, key = "alt/prefix")]
    other: Deep,
    trailing: Vec<f32>,
}

impl Model for Outer {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.int("id", [self.id]);
        m.nest("middle", self.middle.feats(of));
        m.nest("alt/prefix", self.other.feats(of));
        m.f32("trailing", self.trailing.iter().copied());
        m.done()
    }
}

fn deep() -> impl Strategy<Value = Deep> {
    (any::<i64>(), proptest::option::of(any::<String>())).prop_map(|(x, tag)| Deep { x, tag })
}

fn outer() -> impl Strategy<Value = Outer> {
    (
        any::<i64>(),
        any::<u16>(),
        deep(),
        deep(),
        small_vec(-1e6f32..1e6),
    )
        .prop_map(|(id, inner_count, deep, other, trailing)| Outer {
            id,
            middle: Middle { inner_count, deep },
            other,
            trailing,
        })
}

/// Keys: `rename_all`, explicit keys with `/`, raw identifiers, and skipped fields.
#[derive(Example, Debug, Clone, PartialEq)]
#[example(rename_all = "SCREAMING_SNAKE_CASE")]
struct Renamed {
    image_width: i64,
    #[example(key = "image/encoded")]
    image_data: Vec<u8>,
    r#type: String,
    #[example(skip)]
    cache: Vec<String>,
    #[example(skip)]
    not_a_feature: NotAFeature,
}

/// A type with no feature impls: a `skip` field of it needs only `Default`.
#[derive(Debug, Clone, PartialEq, Default)]
struct NotAFeature(u8);

impl Model for Renamed {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.int("IMAGE_WIDTH", [self.image_width]);
        m.bytes("image/encoded", [&self.image_data]);
        m.bytes("TYPE", [&self.r#type]);
        m.done()
    }
}

/// The other `rename_all` rules.
#[derive(Example, Debug, Clone, PartialEq)]
#[example(rename_all = "kebab-case")]
struct Kebab {
    first_value: i64,
    second_long_name: i64,
}

#[derive(Example, Debug, Clone, PartialEq)]
#[example(rename_all = "PascalCase")]
struct Pascal {
    first_value: i64,
}

/// Rejects keys it does not read.
#[derive(Example, Debug, Clone, PartialEq)]
#[example(deny_unknown_keys)]
struct Strict {
    a: i64,
    o: Option<i64>,
    #[example(flatten)]
    inner: Deep,
}

/// Borrowed fields: `&[u8]`, `&str`, `Cow`, in values, lists, arrays, options and defaults.
#[derive(Example, Debug, Clone, PartialEq)]
struct Borrowed<'a> {
    raw: &'a [u8],
    text: &'a str,
    cow_b: Cow<'a, [u8]>,
    cow_s: Cow<'a, str>,
    words: Vec<&'a str>,
    blobs: Vec<Cow<'a, [u8]>>,
    pair: [&'a str; 2],
    opt: Option<&'a [u8]>,
    #[example(default = "dflt")]
    d: &'a str,
    #[example(default = "dflt-bytes")]
    db: &'a [u8],
    #[example(default = "cow")]
    dc: Cow<'a, [u8]>,
    n: i64,
}

impl Model for Borrowed<'_> {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.bytes("raw", [self.raw]);
        m.bytes("text", [self.text]);
        m.bytes("cow_b", [&*self.cow_b]);
        m.bytes("cow_s", [self.cow_s.as_bytes()]);
        m.bytes("words", &self.words);
        m.bytes("blobs", self.blobs.iter().map(|b| &**b));
        m.bytes("pair", self.pair);
        if let Some(o) = self.opt {
            m.bytes("opt", [o]);
        }
        m.bytes("d", [self.d]);
        m.bytes("db", [self.db]);
        m.bytes("dc", [&*self.dc]);
        m.int("n", [self.n]);
        m.done()
    }
}

/// A SequenceExample: context features and feature lists of every step shape.
#[derive(SequenceExample, Debug, Clone, PartialEq)]
struct Seq {
    id: i64,
    name: Option<String>,
    #[example(default = 3)]
    version: u16,
    #[example(lossy)]
    weight: f64,
    #[example(sequence)]
    tokens: Vec<Vec<i64>>,
    #[example(sequence)]
    scores: Vec<f32>,
    #[example(sequence)]
    words: Vec<Vec<String>>,
    #[example(sequence)]
    pairs: Vec<[i32; 2]>,
    #[example(sequence)]
    maybe: Option<Vec<u16>>,
    #[example(sequence, default)]
    extra: Vec<bool>,
    #[example(sequence, key = "frames/data")]
    frames: Vec<Vec<u8>>,
    #[example(sequence)]
    fruits: Vec<Fruit>,
    #[example(sequence, lossy)]
    dbl: Vec<f64>,
    /// The same key as a context feature: feature lists are a separate map.
    #[example(sequence, key = "id")]
    id_steps: Vec<u64>,
    #[example(skip)]
    scratch: u8,
}

impl SeqModel for Seq {
    fn seq_feats(&self) -> SeqFeats {
        let mut c = M::new(false);
        c.int("id", [self.id]);
        if let Some(n) = &self.name {
            c.bytes("name", [n]);
        }
        c.int("version", [i64::from(self.version)]);
        c.f64("weight", [self.weight]);
        let mut lists = BTreeMap::new();
        let mut list = |k: &str, steps: Vec<Feat>| {
            lists.insert(k.to_string(), steps.into_iter().map(Some).collect());
        };
        list(
            "tokens",
            self.tokens.iter().map(|t| Feat::Int(t.clone())).collect(),
        );
        list(
            "scores",
            self.scores.iter().map(|&s| f32_feat([s])).collect(),
        );
        list("words", self.words.iter().map(bytes_feat).collect());
        list(
            "pairs",
            self.pairs.iter().map(|p| i32_feat(false, *p)).collect(),
        );
        if let Some(m) = &self.maybe {
            list(
                "maybe",
                m.iter().map(|&x| Feat::Int(vec![i64::from(x)])).collect(),
            );
        }
        list(
            "extra",
            self.extra
                .iter()
                .map(|&b| Feat::Int(vec![i64::from(b)]))
                .collect(),
        );
        list(
            "frames/data",
            self.frames.iter().map(|f| bytes_feat([f])).collect(),
        );
        list(
            "fruits",
            self.fruits.iter().map(|f| bytes_feat([f.wire()])).collect(),
        );
        list(
            "dbl",
            self.dbl.iter().map(|&d| f64_feat(false, [d])).collect(),
        );
        list(
            "id",
            self.id_steps
                .iter()
                .map(|&x| Feat::Int(vec![x.cast_signed()]))
                .collect(),
        );
        SeqFeats {
            context: c.done(),
            lists,
        }
    }
}

fn seq() -> impl Strategy<Value = Seq> {
    (
        (
            any::<i64>(),
            proptest::option::of(any::<String>()),
            any::<u16>(),
            f64_no_nan(),
            small_vec(small_vec(any::<i64>())),
            small_vec(f32_bits()),
        ),
        (
            small_vec(small_vec(any::<String>())),
            small_vec(any::<[i32; 2]>()),
            proptest::option::of(small_vec(any::<u16>())),
            small_vec(any::<bool>()),
            small_vec(blob()),
            small_vec(fruit()),
        ),
        (small_vec(f64_no_nan()), small_vec(any::<u64>())),
    )
        .prop_map(
            |(
                (id, name, version, weight, tokens, scores),
                (words, pairs, maybe, extra, frames, fruits),
                (dbl, id_steps),
            )| Seq {
                id,
                name,
                version,
                weight,
                tokens,
                scores,
                words,
                pairs,
                maybe,
                extra,
                frames,
                fruits,
                dbl,
                id_steps,
                scratch: 0,
            },
        )
}

fn sample_ints(k: i64) -> Ints {
    Ints {
        a_i64: -k,
        a_i32: 7,
        a_i16: -300,
        a_i8: 5,
        a_u8: 200,
        a_u32: 4_000_000_000,
        a_u16: 65_000,
        a_u64: u64::MAX - 1,
        a_bool: k % 2 == 0,
    }
}

fn sample_seq() -> Seq {
    Seq {
        id: 42,
        name: Some("clip".into()),
        version: 9,
        weight: 0.25,
        tokens: vec![vec![1, 2], vec![], vec![-3]],
        scores: vec![0.5, -0.0, f32::from_bits(0x7fc0_1234)],
        words: vec![vec!["a".into()], vec![]],
        pairs: vec![[i32::MIN, i32::MAX]],
        maybe: Some(vec![]),
        extra: vec![true, false],
        frames: vec![vec![0xff, 0], vec![]],
        fruits: vec![Fruit::Kiwi, Fruit::RedApple],
        dbl: vec![1.0e300, 0.1],
        id_steps: vec![u64::MAX, 0],
        scratch: 0,
    }
}

// ---------------------------------------------------------------------------------------------
// Round trips of every type row.
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn prop_ints(v in ints(), s in style()) {
        let (tf, of) = check_both(&v);
        prop_assert_eq!(&tf, &v);
        prop_assert_eq!(&of, &v);
        check_styled(&v, s);
    }

    #[test]
    fn prop_int_lists(v in int_lists(), s in style()) {
        let (tf, of) = check_both(&v);
        prop_assert_eq!(&tf, &v);
        prop_assert_eq!(&of, &v);
        check_styled(&v, s);
    }

    #[test]
    fn prop_floats_bit_exact(v in floats(f64_no_nan()), s in style()) {
        let (tf, of) = check_both(&v);
        // OFRecord keeps the f64s exactly; tf.train.Example rounds them to f32.
        prop_assert_eq!(of.d.to_bits(), v.d.to_bits());
        prop_assert_eq!(of.dv.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
                        v.dv.iter().map(|d| d.to_bits()).collect::<Vec<_>>());
        #[allow(clippy::cast_possible_truncation)]
        let narrowed = f64::from(v.d as f32);
        prop_assert_eq!(tf.d.to_bits(), narrowed.to_bits());
        // The f32s are bit-exact in both.
        prop_assert_eq!(tf.f.to_bits(), v.f.to_bits());
        prop_assert_eq!(of.arr.map(f32::to_bits), v.arr.map(f32::to_bits));
        check_styled(&v, s);
    }

    #[test]
    fn prop_doubles_in_ofrecord(
        d in f64_bits(),
        dv in small_vec(f64_bits()),
        da in prop::array::uniform3(f64_bits()),
        od in proptest::option::of(f64_bits()),
        i in any::<i32>(),
        iv in small_vec(any::<i32>()),
    ) {
        let v = Doubles { d, dv, da, od, i, iv };
        let back = check_of(&v);
        prop_assert_eq!(back.d.to_bits(), v.d.to_bits());
        prop_assert_eq!(back.da.map(f64::to_bits), v.da.map(f64::to_bits));
        prop_assert_eq!(back.i, v.i);
        prop_assert_eq!(&back.iv, &v.iv);
    }

    #[test]
    fn prop_texts(v in texts(), s in style()) {
        let (tf, of) = check_both(&v);
        prop_assert_eq!(&tf, &v);
        prop_assert_eq!(&of, &v);
        check_styled(&v, s);
    }

    #[test]
    fn prop_options(v in opts(), s in style()) {
        let (tf, of) = check_both(&v);
        prop_assert_eq!(&tf, &v);
        prop_assert_eq!(&of, &v);
        check_styled(&v, s);
    }

    #[test]
    fn prop_enums(v in enums(), s in style()) {
        let (tf, of) = check_both(&v);
        prop_assert_eq!(&tf, &v);
        prop_assert_eq!(&of, &v);
        check_styled(&v, s);
    }

    #[test]
    fn prop_flatten(v in outer(), s in style()) {
        let (tf, of) = check_both(&v);
        prop_assert_eq!(&tf, &v);
        prop_assert_eq!(&of, &v);
        check_styled(&v, s);
    }

    #[test]
    fn prop_sequence(v in seq()) {
        let back = check_seq(&v);
        prop_assert_eq!(back.id, v.id);
        prop_assert_eq!(&back.tokens, &v.tokens);
        prop_assert_eq!(&back.words, &v.words);
        prop_assert_eq!(back.scores.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
                        v.scores.iter().map(|f| f.to_bits()).collect::<Vec<_>>());
        prop_assert_eq!(&back.maybe, &v.maybe);
        prop_assert_eq!(&back.fruits, &v.fruits);
        prop_assert_eq!(&back.id_steps, &v.id_steps);
    }

    #[test]
    fn prop_borrowed(
        raw in blob(),
        text in any::<String>(),
        words in small_vec(any::<String>()),
        blobs in small_vec(blob()),
        opt in proptest::option::of(blob()),
        n in any::<i64>(),
    ) {
        let v = Borrowed {
            raw: &raw,
            text: &text,
            cow_b: Cow::Owned(raw.clone()),
            cow_s: Cow::Borrowed(&text),
            words: words.iter().map(String::as_str).collect(),
            blobs: blobs.iter().map(|b| Cow::Borrowed(&b[..])).collect(),
            pair: [&text, "x"],
            opt: opt.as_deref(),
            d: "d",
            db: b"",
            dc: Cow::Borrowed(b"c"),
            n,
        };
        check_borrowed(&v);
    }
}

/// The borrowed round trips: values equal, and every borrowed field points into the record.
fn check_borrowed(v: &Borrowed<'_>) {
    for of in [false, true] {
        let bytes = if of {
            Encode::<OfRecord>::encode_to_vec(v)
        } else {
            Encode::<TfExample>::encode_to_vec(v)
        };
        let want = v.feats(of);
        let back: Borrowed<'_> = if of {
            Decode::<OfRecord>::decode(&bytes).expect("decode OFRecord")
        } else {
            Decode::<TfExample>::decode(&bytes).expect("decode Example")
        };
        assert_eq!(&back, v);
        assert_eq!(back.feats(of), want);
        let range = bytes.as_ptr_range();
        let inside = |p: *const u8, len: usize| len == 0 || range.contains(&p);
        assert!(inside(back.raw.as_ptr(), back.raw.len()));
        assert!(inside(back.text.as_ptr(), back.text.len()));
        assert!(matches!(back.cow_b, Cow::Borrowed(_)));
        assert!(matches!(back.cow_s, Cow::Borrowed(_)));
        assert!(back.words.iter().all(|w| inside(w.as_ptr(), w.len())));
        assert!(back.blobs.iter().all(|b| matches!(b, Cow::Borrowed(_))));
        assert!(back.opt.is_none_or(|o| inside(o.as_ptr(), o.len())));
        // Prost's encoding of the same features decodes, borrowing from its bytes.
        let built = if of { of_bytes(&want) } else { tf_bytes(&want) };
        let from_prost: Borrowed<'_> = if of {
            Decode::<OfRecord>::decode(&built).expect("decode OFRecord")
        } else {
            Decode::<TfExample>::decode(&built).expect("decode Example")
        };
        assert_eq!(&from_prost, v);
        assert!(built.as_ptr_range().contains(&from_prost.text.as_ptr()) || v.text.is_empty());
    }
}

// ---------------------------------------------------------------------------------------------
// Hand-picked values.
// ---------------------------------------------------------------------------------------------

#[test]
fn integer_extremes_both_containers() {
    let min = Ints {
        a_i64: i64::MIN,
        a_i32: i32::MIN,
        a_i16: i16::MIN,
        a_i8: i8::MIN,
        a_u8: u8::MIN,
        a_u32: u32::MIN,
        a_u16: u16::MIN,
        a_u64: u64::MIN,
        a_bool: false,
    };
    let max = Ints {
        a_i64: i64::MAX,
        a_i32: i32::MAX,
        a_i16: i16::MAX,
        a_i8: i8::MAX,
        a_u8: u8::MAX,
        a_u32: u32::MAX,
        a_u16: u16::MAX,
        a_u64: u64::MAX,
        a_bool: true,
    };
    for v in [&min, &max] {
        let (tf, of) = check_both(v);
        assert_eq!(&tf, v);
        assert_eq!(&of, v);
    }
    // u64 is bit-preserving: u64::MAX is int64 -1 on the wire, and -1 reads back as u64::MAX.
    let msg = tensorflow::Example::decode(&Encode::<TfExample>::encode_to_vec(&max)[..]).unwrap();
    assert_eq!(
        feats_of_tf(&msg)["a_u64"],
        Feat::Int(vec![-1]),
        "u64::MAX is stored as int64 -1"
    );
    assert_eq!(feats_of_tf(&msg)["a_u32"], Feat::Int(vec![4_294_967_295]));
    // In OFRecord, i32 is an int32_list; everything else an int64_list.
    let rec = oneflow::OfRecord::decode(&Encode::<OfRecord>::encode_to_vec(&min)[..]).unwrap();
    assert_eq!(feats_of_of(&rec)["a_i32"], Feat::Int32(vec![i32::MIN]));
    assert_eq!(feats_of_of(&rec)["a_i64"], Feat::Int(vec![i64::MIN]));
}

#[test]
fn narrow_integers_out_of_range_are_errors() {
    let base = sample_ints(1);
    // (key, value, Rust type, OFRecord too): the value does not fit the field's type.
    let cases: &[(&str, i64, &str, bool)] = &[
        ("a_i8", 128, "i8", true),
        ("a_i8", -129, "i8", true),
        ("a_i16", 32_768, "i16", true),
        ("a_i16", -32_769, "i16", true),
        ("a_u8", 256, "u8", true),
        ("a_u8", -1, "u8", true),
        ("a_u16", 65_536, "u16", true),
        ("a_u16", -1, "u16", true),
        ("a_u32", 1 << 32, "u32", true),
        ("a_u32", -1, "u32", true),
        ("a_i32", 1 << 31, "i32", false),
        ("a_i32", -(1 << 31) - 1, "i32", false),
    ];
    for &(key, value, ty, in_of) in cases {
        for of in [false, true] {
            if of && !in_of {
                continue;
            }
            let mut feats = base.feats(of);
            feats.insert(key.into(), Feat::Int(vec![value]));
            assert_fails::<Ints>(
                of,
                &feats,
                key,
                &[
                    &format!("value {value} does not fit in `{ty}`"),
                    &format!("(field `Ints::{key}`)"),
                ],
            );
        }
    }
    // The same values in range decode (the boundaries are inclusive).
    let mut feats = base.feats(false);
    feats.insert("a_i8".into(), Feat::Int(vec![-128]));
    feats.insert("a_u32".into(), Feat::Int(vec![u32::MAX.into()]));
    let v: Ints = Decode::<TfExample>::decode(&tf_bytes(&feats)).unwrap();
    assert_eq!((v.a_i8, v.a_u32), (-128, u32::MAX));
    // Lists are range-checked value by value.
    let mut feats = IntLists::default_value().feats(false);
    feats.insert("v_i8".into(), Feat::Int(vec![1, 2, 300]));
    assert_fails::<IntLists>(false, &feats, "v_i8", &["value 300 does not fit in `i8`"]);
}

#[test]
fn ofrecord_int32_reads_the_low_32_bits_like_protobuf() {
    // An int32_list varint wider than 32 bits: protobuf keeps the low 32 bits.
    let mut body = Vec::new();
    put_varint(&mut body, (1u64 << 32) + 5);
    let mut list = Vec::new();
    put_len(&mut list, 1, &body);
    let mut feature = Vec::new();
    put_len(&mut feature, 4, &list);
    let mut feats = Feats::new();
    feats.insert("i".into(), Feat::Int32(vec![0]));
    feats.insert("d".into(), Feat::Double(vec![0]));
    feats.insert("dv".into(), Feat::Double(vec![]));
    feats.insert("da".into(), Feat::Double(vec![0; 3]));
    feats.insert("iv".into(), Feat::Int32(vec![]));
    let mut bytes = of_bytes(&feats);
    let mut entry = Vec::new();
    put_len(&mut entry, 1, b"i");
    put_len(&mut entry, 2, &feature);
    put_len(&mut bytes, 1, &entry);
    let prost = oneflow::OfRecord::decode(&bytes[..]).unwrap();
    assert_eq!(feats_of_of(&prost)["i"], Feat::Int32(vec![5]));
    let v: Doubles = Decode::<OfRecord>::decode(&bytes).unwrap();
    assert_eq!(v.i, 5);
    // An OFRecord i32 field reads an int32_list only.
    feats.insert("i".into(), Feat::Int(vec![5]));
    let (key, msg) = feature_error(<Doubles as Decode<OfRecord>>::decode(&of_bytes(&feats)));
    assert_eq!(key.as_deref(), Some("i"));
    assert!(
        msg.contains("expected int32_list, found int64_list"),
        "{msg}"
    );
}

impl IntLists {
    fn default_value() -> Self {
        IntLists {
            v_i64: vec![],
            v_i32: vec![],
            v_i16: vec![],
            v_i8: vec![],
            v_u32: vec![],
            v_u16: vec![],
            v_u64: vec![],
            v_bool: vec![],
            arr_i64: [0; 3],
            arr_i32: [0; 2],
            arr_bool: [false],
            mat: vec![0; 6],
        }
    }
}

#[test]
fn bool_other_than_0_or_1_is_an_error() {
    for of in [false, true] {
        for bad in [2, -1, i64::MAX] {
            let mut feats = sample_ints(2).feats(of);
            feats.insert("a_bool".into(), Feat::Int(vec![bad]));
            assert_fails::<Ints>(
                of,
                &feats,
                "a_bool",
                &[&format!("expected 0 or 1 for a `bool`, found {bad}")],
            );
        }
    }
    let mut feats = IntLists::default_value().feats(false);
    feats.insert("v_bool".into(), Feat::Int(vec![0, 1, 2]));
    assert_fails::<IntLists>(false, &feats, "v_bool", &["found 2"]);
}

#[test]
fn float_bits_nan_and_negative_zero() {
    let v = Floats {
        f: -0.0,
        v: vec![
            f32::NAN,
            f32::from_bits(0xffc0_0001),
            f32::INFINITY,
            f32::MIN_POSITIVE / 4.0,
        ],
        arr: [-0.0, 0.0, f32::NEG_INFINITY, f32::from_bits(0x7f80_0001)],
        mat: vec![1.0; 6],
        opt: Some(-0.0),
        d: -0.0,
        dv: vec![f64::NAN, 1.0e-320, -1.0e300],
        da: [f64::INFINITY, 0.1],
    };
    let (tf, of) = check_both(&v);
    assert_eq!(tf.f.to_bits(), (-0.0f32).to_bits());
    assert_eq!(
        tf.v.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
        v.v.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
        "NaN payloads survive"
    );
    assert_eq!(of.arr.map(f32::to_bits), v.arr.map(f32::to_bits));
    assert_eq!(of.opt.map(f32::to_bits), Some((-0.0f32).to_bits()));
    // OFRecord keeps f64 bit-exact, NaN included.
    assert_eq!(
        of.dv.iter().map(|d| d.to_bits()).collect::<Vec<_>>(),
        v.dv.iter().map(|d| d.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!(of.d.to_bits(), (-0.0f64).to_bits());
    // tf.train.Example rounds to f32: a NaN stays NaN, 1e-320 flushes to 0, -1e300 to -inf.
    assert!(tf.dv[0].is_nan());
    assert_eq!(tf.dv[1].to_bits(), 0.0f64.to_bits());
    assert_eq!(tf.dv[2], f64::NEG_INFINITY);
    #[allow(clippy::cast_possible_truncation)]
    let narrowed = f64::from(0.1f64 as f32);
    assert_eq!(tf.da[1], narrowed);
    assert_ne!(tf.da[1], 0.1, "lossy really is lossy");
    assert_eq!(tf.d.to_bits(), (-0.0f64).to_bits());
}

#[test]
fn invalid_utf8_is_an_error() {
    let base = Texts {
        s: "ok".into(),
        b: vec![],
        by: bytes::Bytes::new(),
        vs: vec![],
        vb: vec![],
        vby: vec![],
        arr_s: [String::new(), String::new()],
        opt_s: None,
        opt_b: None,
        pair: vec![vec![], vec![]],
    };
    for of in [false, true] {
        for (key, value) in [
            ("s", vec![vec![0xff]]),
            ("vs", vec![b"fine".to_vec(), vec![0xc3, 0x28]]),
            ("arr_s", vec![b"a".to_vec(), vec![0x80]]),
            ("opt_s", vec![vec![0xed, 0xa0, 0x80]]),
        ] {
            let mut feats = base.feats(of);
            feats.insert(key.into(), Feat::Bytes(value));
            assert_fails::<Texts>(
                of,
                &feats,
                key,
                &["expected UTF-8 text, found invalid UTF-8 bytes"],
            );
        }
        // Bytes fields take any bytes.
        let mut feats = base.feats(of);
        feats.insert("b".into(), Feat::Bytes(vec![vec![0xff, 0xfe]]));
        let v: Texts = if of {
            Decode::<OfRecord>::decode(&of_bytes(&feats)).unwrap()
        } else {
            Decode::<TfExample>::decode(&tf_bytes(&feats)).unwrap()
        };
        assert_eq!(v.b, vec![0xff, 0xfe]);
    }
    // Borrowed text too.
    let mut feats = sample_borrowed_feats();
    feats.insert("text".into(), Feat::Bytes(vec![vec![0xff]]));
    let bytes = tf_bytes(&feats);
    let (key, msg) = feature_error(<Borrowed<'_> as Decode<TfExample>>::decode(&bytes));
    assert_eq!(key.as_deref(), Some("text"));
    assert!(msg.contains("invalid UTF-8"), "{msg}");
    feats.insert("text".into(), Feat::Bytes(vec![b"t".to_vec()]));
    feats.insert("cow_s".into(), Feat::Bytes(vec![vec![0xff]]));
    let bytes = tf_bytes(&feats);
    let (key, _) = feature_error(<Borrowed<'_> as Decode<TfExample>>::decode(&bytes));
    assert_eq!(key.as_deref(), Some("cow_s"));
}

fn sample_borrowed_feats() -> Feats {
    Borrowed {
        raw: b"r",
        text: "t",
        cow_b: Cow::Borrowed(b"c"),
        cow_s: Cow::Borrowed("s"),
        words: vec!["w"],
        blobs: vec![],
        pair: ["p", "q"],
        opt: None,
        d: "d",
        db: b"db",
        dc: Cow::Borrowed(b"dc"),
        n: 1,
    }
    .feats(false)
}

#[test]
fn counts_of_arrays_and_shapes_are_checked() {
    let base = IntLists::default_value();
    for of in [false, true] {
        let cases: &[(&str, Feat, &str)] = &[
            (
                "arr_i64",
                Feat::Int(vec![1, 2]),
                "expected 3 values, found 2",
            ),
            (
                "arr_i64",
                Feat::Int(vec![1, 2, 3, 4]),
                "expected 3 values, found 4",
            ),
            ("arr_bool", Feat::Int(vec![]), "expected 1 value, found 0"),
            ("mat", Feat::Int(vec![1; 5]), "expected 6 values, found 5"),
            ("mat", Feat::Int(vec![1; 7]), "expected 6 values, found 7"),
        ];
        for (key, feat, msg) in cases {
            let mut feats = base.feats(of);
            feats.insert((*key).into(), feat.clone());
            assert_fails::<IntLists>(of, &feats, key, &[msg, &format!("IntLists::{key}")]);
        }
        // A scalar needs exactly one value.
        for (feat, msg) in [
            (Feat::Int(vec![]), "expected 1 value, found 0"),
            (Feat::Int(vec![1, 2, 3]), "expected 1 value, found 3"),
        ] {
            let mut feats = sample_ints(3).feats(of);
            feats.insert("a_i64".into(), feat);
            assert_fails::<Ints>(of, &feats, "a_i64", &[msg]);
        }
    }
    // Shaped optional lists too.
    let mut feats = opts_all_none().feats(false);
    feats.insert("o_shaped".into(), Feat::Int(vec![1, 2, 3]));
    assert_fails::<Opts>(false, &feats, "o_shaped", &["expected 2 values, found 3"]);
    feats.insert("o_shaped".into(), Feat::Int(vec![1, 2]));
    let v: Opts = Decode::<TfExample>::decode(&tf_bytes(&feats)).unwrap();
    assert_eq!(v.o_shaped, Some(vec![1, 2]));
}

#[test]
fn wrong_kind_is_an_error() {
    for of in [false, true] {
        let mut feats = sample_ints(4).feats(of);
        feats.insert("a_i64".into(), Feat::Float(vec![1.0f32.to_bits()]));
        assert_fails::<Ints>(
            of,
            &feats,
            "a_i64",
            &["expected int64_list, found float_list"],
        );
        let mut feats = sample_ints(4).feats(of);
        feats.insert("a_u16".into(), Feat::Bytes(vec![b"1".to_vec()]));
        assert_fails::<Ints>(
            of,
            &feats,
            "a_u16",
            &["expected int64_list, found bytes_list"],
        );
    }
}

fn opts_all_none() -> Opts {
    Opts {
        o_i64: None,
        o_i32: None,
        o_u64: None,
        o_bool: None,
        o_vec: None,
        o_arr: None,
        o_s: None,
        o_fruit: None,
        o_levels: None,
        o_by: None,
        o_shaped: None,
    }
}

#[test]
fn none_is_not_written_and_absent_is_none() {
    let v = opts_all_none();
    for of in [false, true] {
        let bytes = if of {
            Encode::<OfRecord>::encode_to_vec(&v)
        } else {
            Encode::<TfExample>::encode_to_vec(&v)
        };
        if of {
            assert!(bytes.is_empty(), "an OFRecord with no features is empty");
            assert!(
                oneflow::OfRecord::decode(&bytes[..])
                    .unwrap()
                    .feature
                    .is_empty()
            );
        } else {
            let e = tensorflow::Example::decode(&bytes[..]).unwrap();
            assert!(feats_of_tf(&e).is_empty(), "no feature is written for None");
        }
    }
    let (tf, of) = check_both(&v);
    assert_eq!(tf, v);
    assert_eq!(of, v);
    // Absent entirely: an empty message decodes to all None.
    let tf: Opts = Decode::<TfExample>::decode(&[]).unwrap();
    let of: Opts = Decode::<OfRecord>::decode(&[]).unwrap();
    assert_eq!(tf, v);
    assert_eq!(of, v);
    // Some of an empty list is present, and distinct from None.
    let v = Opts {
        o_vec: Some(vec![]),
        o_levels: Some(vec![]),
        ..opts_all_none()
    };
    let (tf, _) = check_both(&v);
    assert_eq!(tf.o_vec, Some(vec![]));
    assert_eq!(tf.o_levels, Some(vec![]));
}

#[test]
fn defaults_fill_absent_features() {
    for of in [false, true] {
        let empty = if of {
            of_bytes(&Feats::new())
        } else {
            tf_bytes(&Feats::new())
        };
        let v: Defaults = if of {
            Decode::<OfRecord>::decode(&empty).unwrap()
        } else {
            Decode::<TfExample>::decode(&empty).unwrap()
        };
        assert_eq!(v, Defaults::absent());
    }
    // Present features win over defaults.
    let present = Defaults {
        i: -1,
        n: 0,
        big: 0,
        i32_: -5,
        f: 0.0,
        f_from_int: -0.0,
        b: false,
        s: String::new(),
        by: vec![],
        bb: bytes::Bytes::new(),
        v: vec![],
        arr: [0.0, 0.0],
        mat: vec![9, 9, 9, 9],
        vs: vec![],
        empty: vec![7],
        td_i: 3,
        td_s: "x".into(),
        td_v: vec![1.0],
        td_e: Fruit::Kiwi,
    };
    let (tf, of) = check_both(&present);
    assert_eq!(tf, present);
    assert_eq!(of, present);
    // A default list must still have the shape's count when present.
    let mut feats = present.feats(false);
    feats.insert("mat".into(), Feat::Int(vec![1, 2, 3]));
    assert_fails::<Defaults>(false, &feats, "mat", &["expected 4 values, found 3"]);
    // Defaults are for absent features only: a present feature of the wrong kind is an error.
    let mut feats = present.feats(true);
    feats.insert("i".into(), Feat::Bytes(vec![]));
    assert_fails::<Defaults>(
        true,
        &feats,
        "i",
        &["expected int64_list, found bytes_list"],
    );
    // Borrowed defaults.
    let mut feats = sample_borrowed_feats();
    for k in ["d", "db", "dc", "opt"] {
        feats.remove(k);
    }
    let bytes = tf_bytes(&feats);
    let b: Borrowed<'_> = Decode::<TfExample>::decode(&bytes).unwrap();
    assert_eq!(
        (b.d, b.db, &*b.dc, b.opt),
        ("dflt", &b"dflt-bytes"[..], &b"cow"[..], None)
    );
}

#[test]
fn enums_by_name_and_discriminant() {
    let v = Enums {
        fruit: Fruit::Kiwi,
        fruits: vec![Fruit::RedApple, Fruit::Banana],
        level: Level::Low,
        levels: [Level::Top, Level::Mid],
        fallback: Fruit::Banana,
    };
    let (tf, of) = check_both(&v);
    assert_eq!(tf, v);
    assert_eq!(of, v);
    let e = tensorflow::Example::decode(&Encode::<TfExample>::encode_to_vec(&v)[..]).unwrap();
    let feats = feats_of_tf(&e);
    assert_eq!(feats["fruit"], bytes_feat(["kiwi!"]));
    assert_eq!(feats["fruits"], bytes_feat(["red_apple", "banana"]));
    assert_eq!(feats["level"], Feat::Int(vec![-1]));
    assert_eq!(feats["levels"], Feat::Int(vec![1_000_000_000_000, 0]));
    for of in [false, true] {
        // Unknown names and numbers are errors naming the value.
        let mut feats = v.feats(of);
        feats.insert("fruit".into(), bytes_feat(["Kiwi"]));
        assert_fails::<Enums>(of, &feats, "fruit", &["no enum variant matches \"Kiwi\""]);
        let mut feats = v.feats(of);
        feats.insert("fruits".into(), bytes_feat(["banana", "cherry"]));
        assert_fails::<Enums>(
            of,
            &feats,
            "fruits",
            &["no enum variant matches \"cherry\""],
        );
        let mut feats = v.feats(of);
        feats.insert("level".into(), Feat::Int(vec![1]));
        assert_fails::<Enums>(of, &feats, "level", &["no enum variant matches 1"]);
        let mut feats = v.feats(of);
        feats.insert("levels".into(), Feat::Int(vec![10, 11]));
        assert_fails::<Enums>(of, &feats, "levels", &["no enum variant matches 11"]);
        // A name enum in an int list, and the other way round, are wrong kinds.
        let mut feats = v.feats(of);
        feats.insert("level".into(), bytes_feat(["High"]));
        assert_fails::<Enums>(
            of,
            &feats,
            "level",
            &["expected int64_list, found bytes_list"],
        );
        // `default` on an enum field takes the enum's `Default`.
        let mut feats = v.feats(of);
        feats.remove("fallback");
        let d: Enums = if of {
            Decode::<OfRecord>::decode(&of_bytes(&feats)).unwrap()
        } else {
            Decode::<TfExample>::decode(&tf_bytes(&feats)).unwrap()
        };
        assert_eq!(d.fallback, Fruit::RedApple);
    }
}

#[test]
fn flatten_keys_and_errors() {
    let v = Outer {
        id: 1,
        middle: Middle {
            inner_count: 2,
            deep: Deep {
                x: 3,
                tag: Some("t".into()),
            },
        },
        other: Deep { x: 4, tag: None },
        trailing: vec![0.5],
    };
    let (tf, of) = check_both(&v);
    assert_eq!(tf, v);
    assert_eq!(of, v);
    let e = tensorflow::Example::decode(&Encode::<TfExample>::encode_to_vec(&v)[..]).unwrap();
    let keys: Vec<String> = feats_of_tf(&e).into_keys().collect();
    assert_eq!(
        keys,
        [
            "alt/prefix/x",
            "id",
            "middle/deep/tag",
            "middle/deep/x",
            "middle/innerCount",
            "trailing"
        ]
    );
    for of in [false, true] {
        // A missing member of a nested flattened struct names the full key and the inner field.
        let mut feats = v.feats(of);
        feats.remove("middle/deep/x");
        assert_fails::<Outer>(
            of,
            &feats,
            "middle/deep/x",
            &["required feature is missing", "(field `Deep::x`)"],
        );
        let mut feats = v.feats(of);
        feats.insert("alt/prefix/x".into(), Feat::Bytes(vec![]));
        assert_fails::<Outer>(of, &feats, "alt/prefix/x", &["expected int64_list"]);
        // The un-prefixed inner keys are not the flattened ones.
        let mut feats = v.feats(of);
        let x = feats.remove("middle/deep/x").unwrap();
        feats.insert("x".into(), x.clone());
        feats.insert("deep/x".into(), x);
        assert_fails::<Outer>(of, &feats, "middle/deep/x", &["missing"]);
    }
}

#[test]
fn renames_keys_and_skip() {
    let v = Renamed {
        image_width: 28,
        image_data: vec![1, 2, 3],
        r#type: "png".into(),
        cache: vec!["not written".into()],
        not_a_feature: NotAFeature(9),
    };
    let (tf, of) = check_both(&v);
    let expected = Renamed {
        cache: vec![],
        not_a_feature: NotAFeature(0),
        ..v.clone()
    };
    assert_eq!(tf, expected, "skipped fields decode as Default");
    assert_eq!(of, expected);
    let e = tensorflow::Example::decode(&Encode::<TfExample>::encode_to_vec(&v)[..]).unwrap();
    let keys: Vec<String> = feats_of_tf(&e).into_keys().collect();
    assert_eq!(keys, ["IMAGE_WIDTH", "TYPE", "image/encoded"]);
    // A feature named like a skipped field is ignored.
    let mut feats = v.feats(false);
    feats.insert("cache".into(), Feat::Int(vec![1]));
    feats.insert("CACHE".into(), Feat::Int(vec![1]));
    let d: Renamed = Decode::<TfExample>::decode(&tf_bytes(&feats)).unwrap();
    assert_eq!(d, expected);

    let k = Kebab {
        first_value: 1,
        second_long_name: 2,
    };
    let e = tensorflow::Example::decode(&Encode::<TfExample>::encode_to_vec(&k)[..]).unwrap();
    let keys: Vec<String> = feats_of_tf(&e).into_keys().collect();
    assert_eq!(keys, ["first-value", "second-long-name"]);
    assert_eq!(
        Decode::<TfExample>::decode(&e.encode_to_vec()).ok(),
        Some(k)
    );
    let p = Pascal { first_value: 5 };
    let r = oneflow::OfRecord::decode(&Encode::<OfRecord>::encode_to_vec(&p)[..]).unwrap();
    assert_eq!(r.feature.keys().collect::<Vec<_>>(), ["FirstValue"]);
    assert_eq!(Decode::<OfRecord>::decode(&r.encode_to_vec()).ok(), Some(p));
}

#[test]
fn unknown_keys_are_skipped_or_denied() {
    // Extra features are skipped by default.
    for of in [false, true] {
        let v = sample_ints(5);
        let mut feats = v.feats(of);
        feats.insert("zzz_extra".into(), Feat::Float(vec![1]));
        feats.insert("a_i64/nested".into(), Feat::Bytes(vec![b"x".to_vec()]));
        feats.insert(String::new(), Feat::Int(vec![1]));
        let d: Ints = if of {
            Decode::<OfRecord>::decode(&of_bytes(&feats)).unwrap()
        } else {
            Decode::<TfExample>::decode(&tf_bytes(&feats)).unwrap()
        };
        assert_eq!(d, v);
    }
    // deny_unknown_keys rejects them, naming the key.
    let strict = Strict {
        a: 1,
        o: Some(3),
        inner: Deep { x: 2, tag: None },
    };
    for of in [false, true] {
        let mut m = M::new(of);
        m.int("a", [1]);
        m.int("o", [3]);
        m.int("inner/x", [2]);
        let mut feats = m.done();
        let decode = |feats: &Feats| {
            if of {
                <Strict as Decode<OfRecord>>::decode(&of_bytes(feats))
            } else {
                <Strict as Decode<TfExample>>::decode(&tf_bytes(feats))
            }
        };
        assert_eq!(decode(&feats).unwrap(), strict);
        for extra in ["b", "inner/y", "inner", "x", "o/x"] {
            feats.insert(extra.into(), Feat::Int(vec![0]));
            let (key, msg) = feature_error(decode(&feats));
            assert_eq!(key.as_deref(), Some(extra), "{msg}");
            assert!(msg.contains("`Strict` denies unknown keys"), "{msg}");
            feats.remove(extra);
        }
    }
}

#[test]
fn missing_required_feature_names_struct_field_and_key() {
    for of in [false, true] {
        let mut feats = sample_ints(6).feats(of);
        feats.remove("a_u16");
        let r = if of {
            <Ints as Decode<OfRecord>>::decode(&of_bytes(&feats))
        } else {
            <Ints as Decode<TfExample>>::decode(&tf_bytes(&feats))
        };
        let e = r.unwrap_err();
        assert_eq!(e.key(), Some("a_u16"));
        assert_eq!(
            e.to_string(),
            "bad feature \"a_u16\": required feature is missing (field `Ints::a_u16`)"
        );
        // With a renamed key, the message names the Rust field and the key.
        let mut feats = Renamed {
            image_width: 1,
            image_data: vec![],
            r#type: String::new(),
            cache: vec![],
            not_a_feature: NotAFeature(0),
        }
        .feats(of);
        feats.remove("image/encoded");
        assert_fails::<Renamed>(
            of,
            &feats,
            "image/encoded",
            &[
                "required feature is missing",
                "(field `Renamed::image_data`)",
            ],
        );
    }
    // A feature with no kind set is an empty list: fine for a Vec, a count error for a value.
    let mut bytes = tf_bytes(&IntLists::default_value().feats(false));
    bytes = add_raw_tf_entry(bytes, "v_i64", &[]);
    let v: IntLists = Decode::<TfExample>::decode(&bytes).unwrap();
    assert!(v.v_i64.is_empty());
    let bytes = add_raw_tf_entry(tf_bytes(&sample_ints(1).feats(false)), "a_i64", &[]);
    let (key, msg) = feature_error(<Ints as Decode<TfExample>>::decode(&bytes));
    assert_eq!(key.as_deref(), Some("a_i64"));
    assert!(msg.contains("expected 1 value, found 0"), "{msg}");
}

/// Appends to a serialized Example one more feature map entry (last wins) with a raw
/// `Feature` body.
fn add_raw_tf_entry(mut example: Vec<u8>, key: &str, feature: &[u8]) -> Vec<u8> {
    let mut entry = Vec::new();
    put_len(&mut entry, 1, key.as_bytes());
    put_len(&mut entry, 2, feature);
    let mut features = Vec::new();
    put_len(&mut features, 1, &entry);
    // A second `features` field merges into the first.
    put_len(&mut example, 1, &features);
    example
}

// ---------------------------------------------------------------------------------------------
// Wire-level differential tests.
// ---------------------------------------------------------------------------------------------

/// Decodes `bytes` with prost and with the derive, and checks both see `want`.
fn same_as_prost_tf<T: Model + DecodeOwned<TfExample> + Debug>(bytes: &[u8], want: &Feats) -> T {
    let msg = tensorflow::Example::decode(bytes).expect("valid Example");
    assert_eq!(&feats_of_tf(&msg), want, "prost");
    let v = <T as Decode<TfExample>>::decode(bytes).expect("derive");
    assert_eq!(&v.feats(false), want, "derive");
    v
}

#[test]
fn prost_reencoding_sorts_keys_and_decodes_the_same() {
    // Outer's fields are not in key order, so prost's (sorted) re-encoding differs in bytes.
    let v = Outer {
        id: -9,
        middle: Middle {
            inner_count: 7,
            deep: Deep { x: 1, tag: None },
        },
        other: Deep {
            x: 2,
            tag: Some("b".into()),
        },
        trailing: vec![1.0, 2.0],
    };
    let derived = Encode::<TfExample>::encode_to_vec(&v);
    let reencoded = tensorflow::Example::decode(&derived[..])
        .unwrap()
        .encode_to_vec();
    assert_ne!(derived, reencoded, "the key order differs");
    assert_eq!(derived.len(), reencoded.len());
    let back: Outer = same_as_prost_tf(&reencoded, &v.feats(false));
    assert_eq!(back, v);
    let derived = Encode::<OfRecord>::encode_to_vec(&v);
    let reencoded = oneflow::OfRecord::decode(&derived[..])
        .unwrap()
        .encode_to_vec();
    assert_eq!(Decode::<OfRecord>::decode(&reencoded).ok(), Some(v));
}

#[test]
fn derived_encoding_matches_prost_byte_for_byte_when_keys_are_sorted() {
    // A type whose keys are declared in sorted order, as prost writes its BTreeMap.
    #[derive(Example, Debug, PartialEq)]
    struct Sorted {
        a: i64,
        b: Vec<f32>,
        c: String,
        d: Vec<i64>,
        e: Option<i32>,
        f: Vec<String>,
    }
    let v = Sorted {
        a: -1,
        b: vec![0.5, -0.0],
        c: "héllo".into(),
        d: vec![],
        e: Some(-3),
        f: vec![String::new(), "x".into()],
    };
    let derived = Encode::<TfExample>::encode_to_vec(&v);
    let prost = tensorflow::Example::decode(&derived[..])
        .unwrap()
        .encode_to_vec();
    assert_eq!(derived, prost, "tf.train.Example");
    let derived = Encode::<OfRecord>::encode_to_vec(&v);
    let prost = oneflow::OfRecord::decode(&derived[..])
        .unwrap()
        .encode_to_vec();
    assert_eq!(derived, prost, "OFRecord");
}

#[test]
fn packed_and_unpacked_lists_decode_the_same() {
    let v = IntLists {
        v_i64: vec![1, -1, i64::MAX],
        v_i32: vec![-5, 5],
        v_i16: vec![],
        v_i8: vec![-128],
        v_u32: vec![u32::MAX],
        v_u16: vec![1, 2, 3, 4],
        v_u64: vec![u64::MAX, 0],
        v_bool: vec![true, false, true],
        arr_i64: [1, 2, 3],
        arr_i32: [i32::MIN, 0],
        arr_bool: [true],
        mat: vec![1, 2, 3, 4, 5, 6],
    };
    let f = Floats {
        f: 1.5,
        v: vec![f32::NAN, -0.0, 3.25],
        arr: [1.0, 2.0, 3.0, 4.0],
        mat: vec![0.0; 6],
        opt: Some(2.5),
        d: 0.5,
        dv: vec![0.25, 8.0],
        da: [1.0, -1.0],
    };
    let plain = Style::PLAIN;
    for s in [
        plain,
        Style {
            unpacked: true,
            ..plain
        },
        Style {
            split: true,
            ..plain
        },
        Style {
            split: true,
            split_entry: true,
            unknown: true,
            ..plain
        },
    ] {
        check_styled(&v, s);
        check_styled(&f, s);
        let back: IntLists = same_as_prost_tf(&styled_tf(&v.feats(false), s), &v.feats(false));
        assert_eq!(back, v);
    }
}

#[test]
fn duplicate_keys_last_wins() {
    // Two map entries with key "a_i64": protobuf keeps the last.
    let v = sample_ints(7);
    let mut feats = v.feats(false);
    feats.remove("a_i64");
    let mut bytes = tf_bytes(&feats);
    let mut features = Vec::new();
    for value in [111i64, 222] {
        let mut list = Vec::new();
        let mut packed = Vec::new();
        put_varint(&mut packed, value.cast_unsigned());
        put_len(&mut list, 1, &packed);
        let mut feature = Vec::new();
        put_len(&mut feature, 3, &list);
        let mut entry = Vec::new();
        put_len(&mut entry, 1, b"a_i64");
        put_len(&mut entry, 2, &feature);
        put_len(&mut features, 1, &entry);
    }
    put_len(&mut bytes, 1, &features);
    let want = Ints {
        a_i64: 222,
        ..v.clone()
    };
    let back: Ints = same_as_prost_tf(&bytes, &want.feats(false));
    assert_eq!(back, want);

    // The same in an OFRecord, with the earlier entry of another kind and the key repeated
    // inside one entry (the last key of an entry wins too).
    let mut feats = v.feats(true);
    feats.remove("a_u8");
    let mut bytes = of_bytes(&feats);
    let mut first = Vec::new();
    put_len(&mut first, 1, b"a_u8");
    put_len(
        &mut first,
        2,
        &of_feature(&Feat::Bytes(vec![b"no".to_vec()])).encode_to_vec(),
    );
    put_len(&mut bytes, 1, &first);
    let mut second = Vec::new();
    put_len(&mut second, 1, b"wrong key");
    put_len(
        &mut second,
        2,
        &of_feature(&Feat::Int(vec![17])).encode_to_vec(),
    );
    put_len(&mut second, 1, b"a_u8");
    put_len(&mut bytes, 1, &second);
    let prost = oneflow::OfRecord::decode(&bytes[..]).unwrap();
    assert_eq!(feats_of_of(&prost)["a_u8"], Feat::Int(vec![17]));
    assert!(!prost.feature.contains_key("wrong key"));
    let back: Ints = Decode::<OfRecord>::decode(&bytes).unwrap();
    assert_eq!(back, Ints { a_u8: 17, ..v });
}

#[test]
fn oneof_member_replaced_by_a_later_one() {
    // A Feature with a bytes_list, then an int64_list: the last member set wins.
    let mut feature = Vec::new();
    put_len(
        &mut feature,
        1,
        &tensorflow::BytesList {
            value: vec![b"x".to_vec()],
        }
        .encode_to_vec(),
    );
    put_len(
        &mut feature,
        3,
        &tensorflow::Int64List { value: vec![77] }.encode_to_vec(),
    );
    let v = sample_ints(8);
    let mut feats = v.feats(false);
    feats.remove("a_i64");
    let bytes = add_raw_tf_entry(tf_bytes(&feats), "a_i64", &feature);
    let want = Ints { a_i64: 77, ..v };
    let back: Ints = same_as_prost_tf(&bytes, &want.feats(false));
    assert_eq!(back, want);
}

proptest! {
    #![proptest_config(cfg())]

    /// Sequence examples re-encoded by prost (keys in sorted order) decode the same.
    #[test]
    fn prop_sequence_prost_reencoding(v in seq()) {
        let bytes = Encode::<TfSequenceExample>::encode_to_vec(&v);
        let msg = tensorflow::SequenceExample::decode(&bytes[..]).unwrap();
        let back: Seq = Decode::<TfSequenceExample>::decode(&msg.encode_to_vec()).unwrap();
        prop_assert_eq!(back.seq_feats(), v.seq_feats());
    }
}

/// Feature lists of list steps, one `Vec` per step.
#[derive(SequenceExample, Debug, Clone, PartialEq)]
struct NestedSeq {
    #[example(sequence)]
    tokens: Vec<Vec<i64>>,
    #[example(sequence)]
    words: Vec<Vec<String>>,
    #[example(sequence, shape = [2])]
    pairs: Vec<Vec<i32>>,
    #[example(sequence)]
    maybe: Option<Vec<Vec<f32>>>,
}

/// The same feature lists held flat.
#[derive(SequenceExample, Debug, Clone, PartialEq)]
struct FlatSeq {
    #[example(sequence)]
    tokens: Ragged<i64>,
    #[example(sequence)]
    words: Ragged<String>,
    #[example(sequence, shape = [2])]
    pairs: Ragged<i32>,
    #[example(sequence)]
    maybe: Option<Ragged<f32>>,
}

impl From<&NestedSeq> for FlatSeq {
    fn from(n: &NestedSeq) -> Self {
        FlatSeq {
            tokens: n.tokens.clone().into(),
            words: n.words.clone().into(),
            pairs: n.pairs.clone().into(),
            maybe: n.maybe.clone().map(Ragged::from),
        }
    }
}

impl SeqModel for NestedSeq {
    fn seq_feats(&self) -> SeqFeats {
        let mut lists = BTreeMap::new();
        let mut list = |k: &str, steps: Vec<Feat>| {
            lists.insert(k.to_string(), steps.into_iter().map(Some).collect());
        };
        list(
            "tokens",
            self.tokens.iter().cloned().map(Feat::Int).collect(),
        );
        list("words", self.words.iter().map(bytes_feat).collect());
        list(
            "pairs",
            self.pairs
                .iter()
                .map(|p| i32_feat(false, p.clone()))
                .collect(),
        );
        if let Some(m) = &self.maybe {
            list("maybe", m.iter().map(|s| f32_feat(s.clone())).collect());
        }
        SeqFeats {
            context: Feats::new(),
            lists,
        }
    }
}

fn nested_seq() -> impl Strategy<Value = NestedSeq> {
    (
        small_vec(small_vec(any::<i64>())),
        small_vec(small_vec(any::<String>())),
        small_vec(any::<[i32; 2]>()),
        proptest::option::of(small_vec(small_vec(f32_bits()))),
    )
        .prop_map(|(tokens, words, pairs, maybe)| NestedSeq {
            tokens,
            words,
            pairs: pairs.into_iter().map(Vec::from).collect(),
            maybe,
        })
}

/// A `tensorflow.SequenceExample` holding `s`'s feature lists, every step in `style`.
fn styled_sequence(s: &SeqFeats, style: Style) -> Vec<u8> {
    let mut lists = Vec::new();
    for (k, steps) in &s.lists {
        let mut list = Vec::new();
        for f in steps.iter().flatten() {
            put_len(&mut list, 1, &feature_chunks(f, false, style).concat());
        }
        put_len(&mut lists, 1, &map_entry(k, &[list], style));
    }
    let mut out = Vec::new();
    put_len(&mut out, 2, &lists);
    out
}

proptest! {
    #![proptest_config(cfg())]

    /// `Ragged<T>` writes the bytes `Vec<Vec<T>>` writes, each reads the other's, and both
    /// read every encoding of the steps.
    #[test]
    fn prop_ragged_lists(n in nested_seq(), s in style()) {
        let flat = FlatSeq::from(&n);
        let nested_bytes = Encode::<TfSequenceExample>::encode_to_vec(&n);
        let flat_bytes = Encode::<TfSequenceExample>::encode_to_vec(&flat);
        prop_assert_eq!(&flat_bytes, &nested_bytes);
        prop_assert_eq!(Encode::<TfSequenceExample>::encoded_len(&flat), flat_bytes.len());
        check_seq(&n);
        // Compared through their encodings, which keep float bits (NaN != NaN).
        let read: FlatSeq = Decode::<TfSequenceExample>::decode(&nested_bytes).unwrap();
        prop_assert_eq!(Encode::<TfSequenceExample>::encode_to_vec(&read), nested_bytes.clone());
        let styled = styled_sequence(&n.seq_feats(), s);
        let read: FlatSeq = Decode::<TfSequenceExample>::decode(&styled).unwrap();
        prop_assert_eq!(Encode::<TfSequenceExample>::encode_to_vec(&read), nested_bytes.clone());
        let read: NestedSeq = Decode::<TfSequenceExample>::decode(&styled).unwrap();
        prop_assert_eq!(Encode::<TfSequenceExample>::encode_to_vec(&read), nested_bytes);
    }
}

#[test]
fn ragged_steps_either_side_of_one_byte_lengths() {
    // A packed step of up to 12 values has one-byte lengths in its headers whatever the
    // values; -1 takes 10 bytes as a varint, so 12 of them are 120 payload bytes and 13 are
    // 130, past the one-byte range of the headers around them. Floats take 4 bytes: 30 of them
    // stay under it and 31 do not. Short and long steps in one list, and lists of only short
    // ones.
    let ints = |n: usize, v: i64| vec![v; n];
    let floats = |n: u16| (0..n).map(|i| f32::from(i) * 0.5).collect::<Vec<f32>>();
    let cases = [
        NestedSeq {
            tokens: vec![
                ints(12, -1),
                ints(13, -1),
                vec![],
                ints(1, 5),
                ints(40, 300),
            ],
            words: vec![],
            pairs: vec![vec![-1, -1]],
            maybe: Some(vec![floats(12), floats(13), floats(30), floats(31), vec![]]),
        },
        NestedSeq {
            tokens: vec![
                ints(12, -1),
                ints(11, i64::MIN),
                ints(1, 0),
                ints(12, 1 << 40),
            ],
            words: vec![vec!["a".into()]],
            pairs: vec![vec![i32::MIN, 7]; 3],
            maybe: Some(vec![floats(1), vec![], floats(12)]),
        },
    ];
    for n in &cases {
        // Against protobuf's own encoding of the same message.
        check_seq(n);
        let nested_bytes = Encode::<TfSequenceExample>::encode_to_vec(n);
        let flat = FlatSeq::from(n);
        let flat_bytes = Encode::<TfSequenceExample>::encode_to_vec(&flat);
        assert_eq!(flat_bytes, nested_bytes);
        assert_eq!(
            Encode::<TfSequenceExample>::encoded_len(&flat),
            flat_bytes.len()
        );
        let read: FlatSeq = Decode::<TfSequenceExample>::decode(&flat_bytes).unwrap();
        assert_eq!(read, flat);
    }
}

#[test]
fn a_bad_step_after_usual_ones_is_worded_by_the_general_path() {
    // Two steps in the usual layout, then one whose packed run ends mid-varint.
    let plain = Style::PLAIN;
    let mut steps = Vec::new();
    for run in [&[1u8, 2][..], &[3], &[4, 0xff]] {
        let mut body = Vec::new();
        put_len(&mut body, 1, run);
        let mut feature = Vec::new();
        put_len(&mut feature, 3, &body);
        put_len(&mut steps, 1, &feature);
    }
    let mut lists = Vec::new();
    put_len(&mut lists, 1, &map_entry("tokens", &[steps], plain));
    let mut bytes = Vec::new();
    put_len(&mut bytes, 2, &lists);
    let (key, flat) = feature_error(<FlatSeq as Decode<TfSequenceExample>>::decode(&bytes));
    let (_, nested) = feature_error(<NestedSeq as Decode<TfSequenceExample>>::decode(&bytes));
    assert_eq!(key.as_deref(), Some("tokens"));
    assert!(flat.contains("bad varint"), "{flat}");
    assert_eq!(flat.replace("FlatSeq", "NestedSeq"), nested);
}

#[test]
fn ragged_step_errors_name_the_field() {
    let mut feats = NestedSeq {
        tokens: vec![vec![1]],
        words: vec![],
        pairs: vec![vec![1, 2], vec![3]],
        maybe: None,
    }
    .seq_feats();
    let bytes = tf_sequence(&feats).encode_to_vec();
    let (key, msg) = feature_error(<FlatSeq as Decode<TfSequenceExample>>::decode(&bytes));
    assert_eq!(key.as_deref(), Some("pairs"));
    assert!(
        msg.contains("expected 2 values, found 1 (field `FlatSeq::pairs`)"),
        "{msg}"
    );
    feats
        .lists
        .insert("pairs".into(), vec![Some(f32_feat([1.0, 2.0]))]);
    let bytes = tf_sequence(&feats).encode_to_vec();
    let (key, msg) = feature_error(<FlatSeq as Decode<TfSequenceExample>>::decode(&bytes));
    assert_eq!(key.as_deref(), Some("pairs"));
    assert!(
        msg.contains("expected int64_list, found float_list"),
        "{msg}"
    );
}

// ---------------------------------------------------------------------------------------------
// SequenceExample.
// ---------------------------------------------------------------------------------------------

#[test]
fn sequence_example_values_and_errors() {
    let v = sample_seq();
    let back = check_seq(&v);
    assert_eq!(back.tokens, v.tokens);
    assert_eq!(back.scores[2].to_bits(), 0x7fc0_1234);
    assert_eq!(back.id_steps, v.id_steps);
    let msg =
        tensorflow::SequenceExample::decode(&Encode::<TfSequenceExample>::encode_to_vec(&v)[..])
            .unwrap();
    let feats = seq_feats_of(&msg);
    assert_eq!(feats.context["id"], Feat::Int(vec![42]));
    assert_eq!(
        feats.lists["id"],
        vec![Some(Feat::Int(vec![-1])), Some(Feat::Int(vec![0]))]
    );
    assert_eq!(feats.lists["tokens"][1], Some(Feat::Int(vec![])));
    assert!(feats.lists.contains_key("frames/data"));

    // Absent optional and defaulted lists and context features.
    let mut want = v.seq_feats();
    want.lists.remove("maybe");
    want.lists.remove("extra");
    want.context.remove("name");
    want.context.remove("version");
    let d: Seq = Decode::<TfSequenceExample>::decode(&tf_sequence(&want).encode_to_vec()).unwrap();
    assert_eq!(
        (d.maybe, d.extra, d.name, d.version),
        (None, vec![], None, 3)
    );

    // A missing required feature list, and a missing context feature.
    let mut bad = v.seq_feats();
    bad.lists.remove("scores");
    let r = <Seq as Decode<TfSequenceExample>>::decode(&tf_sequence(&bad).encode_to_vec());
    let (key, msg) = feature_error(r);
    assert_eq!(key.as_deref(), Some("scores"));
    assert!(
        msg.contains("required feature is missing (field `Seq::scores`)"),
        "{msg}"
    );
    let mut bad = v.seq_feats();
    bad.context.remove("id");
    let r = <Seq as Decode<TfSequenceExample>>::decode(&tf_sequence(&bad).encode_to_vec());
    let (key, msg) = feature_error(r);
    assert_eq!(key.as_deref(), Some("id"));
    assert!(msg.contains("(field `Seq::id`)"), "{msg}");

    // A bad step names the list's key.
    let mut bad = v.seq_feats();
    bad.lists
        .get_mut("pairs")
        .unwrap()
        .push(Some(Feat::Int(vec![1, 2, 3])));
    let r = <Seq as Decode<TfSequenceExample>>::decode(&tf_sequence(&bad).encode_to_vec());
    let (key, msg) = feature_error(r);
    assert_eq!(key.as_deref(), Some("pairs"));
    assert!(msg.contains("expected 2 values, found 3"), "{msg}");
    let mut bad = v.seq_feats();
    bad.lists
        .insert("fruits".into(), vec![Some(bytes_feat(["fig"]))]);
    let r = <Seq as Decode<TfSequenceExample>>::decode(&tf_sequence(&bad).encode_to_vec());
    let (key, msg) = feature_error(r);
    assert_eq!(key.as_deref(), Some("fruits"));
    assert!(msg.contains("no enum variant matches \"fig\""), "{msg}");
    let mut bad = v.seq_feats();
    bad.lists
        .insert("scores".into(), vec![Some(Feat::Int(vec![1]))]);
    let r = <Seq as Decode<TfSequenceExample>>::decode(&tf_sequence(&bad).encode_to_vec());
    let (key, msg) = feature_error(r);
    assert_eq!(key.as_deref(), Some("scores"));
    assert!(
        msg.contains("expected float_list, found int64_list"),
        "{msg}"
    );

    // Unknown context features and feature lists are skipped.
    let mut extra = v.seq_feats();
    extra.context.insert("other".into(), Feat::Int(vec![1]));
    extra
        .lists
        .insert("other".into(), vec![None, Some(Feat::Int(vec![]))]);
    let d: Seq = Decode::<TfSequenceExample>::decode(&tf_sequence(&extra).encode_to_vec()).unwrap();
    assert_eq!(d.seq_feats(), v.seq_feats());
}

/// A SequenceExample that denies unknown keys, in both maps.
#[derive(SequenceExample, Debug, PartialEq)]
#[example(deny_unknown_keys, rename_all = "camelCase")]
struct StrictSeq {
    video_id: String,
    #[example(sequence)]
    frame_bytes: Vec<Vec<u8>>,
}

#[test]
fn sequence_example_deny_unknown_keys_and_rename() {
    let v = StrictSeq {
        video_id: "v".into(),
        frame_bytes: vec![vec![1], vec![2, 3]],
    };
    let bytes = Encode::<TfSequenceExample>::encode_to_vec(&v);
    let msg = tensorflow::SequenceExample::decode(&bytes[..]).unwrap();
    let feats = seq_feats_of(&msg);
    assert_eq!(feats.context.keys().collect::<Vec<_>>(), ["videoId"]);
    assert_eq!(feats.lists.keys().collect::<Vec<_>>(), ["frameBytes"]);
    assert_eq!(
        Decode::<TfSequenceExample>::decode(&bytes).ok(),
        Some(StrictSeq {
            video_id: "v".into(),
            frame_bytes: vec![vec![1], vec![2, 3]],
        })
    );
    for in_context in [true, false] {
        let mut f = feats.clone();
        if in_context {
            f.context.insert("extra".into(), Feat::Int(vec![]));
        } else {
            f.lists.insert("extra".into(), vec![]);
        }
        let r = <StrictSeq as Decode<TfSequenceExample>>::decode(&tf_sequence(&f).encode_to_vec());
        let (key, msg) = feature_error(r);
        assert_eq!(key.as_deref(), Some("extra"));
        assert!(msg.contains("`StrictSeq` denies unknown keys"), "{msg}");
    }
}

/// Feature-list steps that are options: `None` is a step with no list kind set.
#[derive(SequenceExample, Debug, PartialEq)]
struct SparseSteps {
    #[example(sequence)]
    values: Vec<Option<i64>>,
    #[example(sequence)]
    lists: Vec<Option<Vec<f32>>>,
}

#[test]
fn sequence_optional_steps() {
    let v = SparseSteps {
        values: vec![Some(1), None, Some(-3)],
        lists: vec![None, Some(vec![]), Some(vec![1.5])],
    };
    let bytes = Encode::<TfSequenceExample>::encode_to_vec(&v);
    let msg = tensorflow::SequenceExample::decode(&bytes[..]).unwrap();
    let feats = seq_feats_of(&msg);
    assert_eq!(
        feats.lists["values"],
        vec![Some(Feat::Int(vec![1])), None, Some(Feat::Int(vec![-3]))]
    );
    assert_eq!(
        feats.lists["lists"],
        vec![None, Some(Feat::Float(vec![])), Some(f32_feat([1.5]))]
    );
    let back: SparseSteps = Decode::<TfSequenceExample>::decode(&bytes).expect("round trip");
    assert_eq!(back, v);
    let back: SparseSteps =
        Decode::<TfSequenceExample>::decode(&msg.encode_to_vec()).expect("prost round trip");
    assert_eq!(back, v);
}

// ---------------------------------------------------------------------------------------------
// Files through the typed Writer and Reader.
// ---------------------------------------------------------------------------------------------

#[test]
fn typed_writer_and_reader_files_both_containers_and_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<Ints> = (0..5).map(sample_ints).collect();
    for name in ["ints.tfrecord", "ints.tfrecord.gz"] {
        let path = dir.path().join(name);
        let mut w = Writer::<Ints>::create(&path).unwrap();
        for v in &values {
            w.write(v).unwrap();
        }
        w.finish().unwrap();
        let raw = std::fs::read(&path).unwrap();
        assert_eq!(
            raw.starts_with(&[0x1f, 0x8b]),
            name.ends_with(".gz"),
            "{name}"
        );
        let back: Vec<Ints> = Reader::<Ints>::open(&path)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, values, "{name}");
        // The records are plain tf.train.Examples.
        let records: Vec<Vec<u8>> =
            tfrecord_core::RecordReader::open(&path, tfrecord_core::ReaderOptions::for_path(&path))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
        for (r, v) in records.iter().zip(&values) {
            let e = tensorflow::Example::decode(&r[..]).unwrap();
            assert_eq!(feats_of_tf(&e), v.feats(false));
        }
    }
    for name in ["part-00000", "part-00000.gz"] {
        let path = dir.path().join(name);
        let mut w = Writer::<Ints, OfRecord>::create(&path).unwrap();
        for v in &values {
            w.write(v).unwrap();
        }
        w.finish().unwrap();
        let raw = std::fs::read(&path).unwrap();
        assert_eq!(
            raw.starts_with(&[0x1f, 0x8b]),
            name.ends_with(".gz"),
            "{name}"
        );
        if !name.ends_with(".gz") {
            // OFRecord framing: an i64 little-endian length, then the message.
            let first = Encode::<OfRecord>::encode_to_vec(&values[0]);
            assert_eq!(raw[..8], i64::try_from(first.len()).unwrap().to_le_bytes());
            assert_eq!(raw[8..8 + first.len()], first[..]);
        }
        let back: Vec<Ints> = Reader::<Ints, OfRecord>::open(&path)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, values, "{name}");
    }
    // SequenceExamples, and borrowed decoding from a reader.
    let path = dir.path().join("seq.tfrecord.gz");
    let seqs = vec![
        sample_seq(),
        Seq {
            id: 7,
            ..sample_seq()
        },
    ];
    let mut w = Writer::<Seq, TfSequenceExample>::create(&path).unwrap();
    for s in &seqs {
        w.write(s).unwrap();
    }
    w.finish().unwrap();
    let back: Vec<Seq> = Reader::<Seq, TfSequenceExample>::open(&path)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(back.len(), 2);
    assert_eq!(back[1].id, 7);
    assert_eq!(back[0].seq_feats(), seqs[0].seq_feats());

    let path = dir.path().join("borrowed.tfrecord");
    let b = Borrowed {
        raw: b"raw",
        text: "text",
        cow_b: Cow::Borrowed(b"cb"),
        cow_s: Cow::Borrowed("cs"),
        words: vec!["a", "b"],
        blobs: vec![Cow::Borrowed(b"x")],
        pair: ["p", "q"],
        opt: Some(b"o"),
        d: "d",
        db: b"db",
        dc: Cow::Borrowed(b"dc"),
        n: -1,
    };
    let mut w = Writer::<Borrowed<'_>>::create(&path).unwrap();
    w.write(&b).unwrap();
    w.write(&b).unwrap();
    w.finish().unwrap();
    let mut r = Reader::<Borrowed<'static>>::open(&path).unwrap();
    let mut n = 0;
    loop {
        let mut buf = Vec::new();
        let Some(rec) = r.next_borrowed::<Borrowed<'_>>(&mut buf) else {
            break;
        };
        assert_eq!(rec.unwrap(), b);
        n += 1;
    }
    assert_eq!(n, 2);
    // The same records decoded in place from the chunks two threads take.
    let each = |n: &mut usize, chunk: &Chunk| {
        let mut records = chunk.records();
        while let Some(rec) = records.next_decoded::<Borrowed<'_>, TfExample>()? {
            assert_eq!(rec, b);
            *n += 1;
        }
        Ok::<_, Error>(())
    };
    let counts = for_each_chunk(&path, ReaderOptions::new(), 2, || 0, each, Ok).unwrap();
    assert_eq!(counts.iter().sum::<usize>(), 2);

    // A decode error from a file names the file, the record and the key.
    let path = dir.path().join("bad.tfrecord");
    let mut w = Writer::<Ints>::create(&path).unwrap();
    w.write(&values[0]).unwrap();
    w.finish().unwrap();
    let mut r = Reader::<Renamed>::open(&path).unwrap();
    let e = r.next().unwrap().unwrap_err();
    assert_eq!(e.record(), Some(0));
    assert!(e.key().is_some());
    assert!(e.to_string().contains("bad.tfrecord"), "{e}");
    // Decoded from a chunk, the same error.
    let each = |(): &mut (), chunk: &Chunk| {
        let mut records = chunk.records();
        while records.next_decoded::<Renamed, TfExample>()?.is_some() {}
        Ok::<_, Error>(())
    };
    let in_chunk = for_each_chunk(&path, ReaderOptions::new(), 2, || (), each, Ok);
    assert_eq!(in_chunk.unwrap_err().to_string(), e.to_string());
}

#[test]
fn oneflow_only_oneof_numbers_are_unknown_fields_in_tf() {
    // tf.train.Feature's oneof is fields 1..=3; fields 4 and 5 (OFRecord's int32 and int64
    // lists) are unknown fields there, which protobuf skips wherever they appear.
    let v = sample_ints(9);
    for (unknown_field, body) in [
        (4u32, oneflow::Int32List { value: vec![5] }.encode_to_vec()),
        (5, oneflow::Int64List { value: vec![6] }.encode_to_vec()),
    ] {
        let mut feature = tf_feature(&Feat::Int(vec![v.a_i64])).encode_to_vec();
        put_len(&mut feature, unknown_field, &body);
        let mut feats = v.feats(false);
        feats.remove("a_i64");
        let bytes = add_raw_tf_entry(tf_bytes(&feats), "a_i64", &feature);
        let back: Ints = same_as_prost_tf(&bytes, &v.feats(false));
        assert_eq!(back, v);
        // The same as a varint field.
        let mut feature = tf_feature(&Feat::Int(vec![v.a_i64])).encode_to_vec();
        put_varint_field(&mut feature, unknown_field, 1);
        let bytes = add_raw_tf_entry(tf_bytes(&feats), "a_i64", &feature);
        let back: Ints = same_as_prost_tf(&bytes, &v.feats(false));
        assert_eq!(back, v);
    }
}

macro_rules! wide_struct {
    ($($f:ident)*) => {
        /// More features than the decoder's largest inline slot table (64).
        #[derive(Example, Debug, Clone, PartialEq)]
        struct Wide {
            $($f: i64,)*
        }

        impl Model for Wide {
            fn feats(&self, of: bool) -> Feats {
                let mut m = M::new(of);
                $(m.int(stringify!($f), [self.$f]);)*
                m.done()
            }
        }

        fn wide(seed: i64) -> Wide {
            let mut i = 0;
            Wide {
                $($f: {
                    i += 1;
                    seed * 100 + i
                },)*
            }
        }
    };
}

wide_struct!(w00 w01 w02 w03 w04 w05 w06 w07 w08 w09 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 w21 w22 w23 w24 w25 w26 w27 w28 w29 w30 w31 w32 w33 w34 w35 w36 w37 w38 w39 w40 w41 w42 w43 w44 w45 w46 w47 w48 w49 w50 w51 w52 w53 w54 w55 w56 w57 w58 w59 w60 w61 w62 w63 w64 w65 w66 w67 w68 w69);

#[test]
fn more_than_64_features() {
    for seed in [-3, 0, 7] {
        let v = wide(seed);
        let (tf, of) = check_both(&v);
        assert_eq!(tf, v);
        assert_eq!(of, v);
    }
    let v = wide(1);
    for of in [false, true] {
        for key in ["w00", "w63", "w64", "w69"] {
            let mut feats = v.feats(of);
            feats.remove(key);
            assert_fails::<Wide>(
                of,
                &feats,
                key,
                &[
                    "required feature is missing",
                    &format!("(field `Wide::{key}`)"),
                ],
            );
        }
    }
    let mut feats = v.feats(false);
    feats.insert("w65".into(), Feat::Int(vec![-65]));
    let back: Wide = same_as_prost_tf(&tf_bytes(&feats), &feats);
    assert_eq!(back.w65, -65);
}

// ---------------------------------------------------------------------------------------------
// Sparse fields (tf.io.SparseFeature layout).
// ---------------------------------------------------------------------------------------------

#[derive(Example, Debug, Clone, PartialEq)]
struct Sparsey {
    label: i64,
    #[example(sparse(index = "idx", value = "weight", size = [100]))]
    one_d: tfrecord_core::Sparse<f32>,
    #[example(sparse(index = ["row", "col"], size = [3, 4]))]
    two_d: tfrecord_core::Sparse<String>,
}

impl Model for Sparsey {
    fn feats(&self, of: bool) -> Feats {
        let mut m = M::new(of);
        m.int("label", [self.label]);
        m.int("idx", self.one_d.indices[0].clone());
        m.f32("weight", self.one_d.values.clone());
        m.int("row", self.two_d.indices[0].clone());
        m.int("col", self.two_d.indices[1].clone());
        m.bytes("two_d", self.two_d.values.iter().map(String::as_bytes));
        m.done()
    }
}

fn sparsey() -> impl Strategy<Value = Sparsey> {
    let one = proptest::collection::vec((0i64..100, any::<f32>()), 0..6);
    let two = proptest::collection::vec((0i64..3, 0i64..4, "[a-z]{0,3}"), 0..6);
    (any::<i64>(), one, two).prop_map(|(label, one, two)| Sparsey {
        label,
        one_d: tfrecord_core::Sparse::new_1d(
            one.iter().map(|p| p.0).collect(),
            one.iter().map(|p| p.1).collect(),
        ),
        two_d: tfrecord_core::Sparse {
            indices: vec![
                two.iter().map(|t| t.0).collect(),
                two.iter().map(|t| t.1).collect(),
            ],
            values: two.into_iter().map(|t| t.2).collect(),
        },
    })
}

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
    // A negative index.
    let mut f = base;
    f.insert("row".into(), Feat::Int(vec![-1]));
    f.insert("col".into(), Feat::Int(vec![0]));
    f.insert("two_d".into(), Feat::Bytes(vec![b"x".to_vec()]));
    assert_fails::<Sparsey>(false, &f, "row", &["sparse index -1"]);
}

// ---------------------------------------------------------------------------------------------
// Damaged input: the derived decoders return an error or a value, never panic.
// ---------------------------------------------------------------------------------------------

/// Calls `f` with every strict prefix of `bytes`, and with `bytes` where the byte at `at` is
/// overwritten with `byte`.
fn cuts_and_overwrite(bytes: &[u8], at: prop::sample::Index, byte: u8, f: impl Fn(&[u8])) {
    for cut in 0..bytes.len() {
        f(&bytes[..cut]);
    }
    if !bytes.is_empty() {
        let mut damaged = bytes.to_vec();
        damaged[at.index(bytes.len())] = byte;
        f(&damaged);
    }
}

/// Decodes `bytes` with every derived type and container; only a panic fails.
fn decode_everything(bytes: &[u8]) {
    let _ = <Texts as Decode<TfExample>>::decode(bytes);
    let _ = <Texts as Decode<OfRecord>>::decode(bytes);
    let _ = <IntLists as Decode<TfExample>>::decode(bytes);
    let _ = <IntLists as Decode<OfRecord>>::decode(bytes);
    let _ = <Outer as Decode<TfExample>>::decode(bytes);
    let _ = <Opts as Decode<OfRecord>>::decode(bytes);
    let _ = <Sparsey as Decode<TfExample>>::decode(bytes);
    let _ = <Borrowed<'_> as Decode<TfExample>>::decode(bytes);
    let _ = <Seq as Decode<TfSequenceExample>>::decode(bytes);
}

proptest! {
    #![proptest_config(cfg())]

    /// Every truncation and a random byte overwrite of valid records, in each container.
    #[test]
    fn damaged_records_never_panic(
        t in texts(),
        l in int_lists(),
        s in seq(),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        for bytes in [
            Encode::<TfExample>::encode_to_vec(&t),
            Encode::<OfRecord>::encode_to_vec(&t),
            Encode::<TfExample>::encode_to_vec(&l),
            Encode::<TfSequenceExample>::encode_to_vec(&s),
        ] {
            cuts_and_overwrite(&bytes, at, byte, decode_everything);
        }
    }

    /// Arbitrary bytes.
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        decode_everything(&bytes);
    }
}

// ---------------------------------------------------------------------------------------------
// The one-pass decode and the general path.
// ---------------------------------------------------------------------------------------------

/// Rejects keys it does not read; all its features are plain, so it decodes in one pass.
#[derive(Example, Debug, Clone, PartialEq)]
#[example(deny_unknown_keys)]
struct StrictPlain {
    a: i64,
    o: Option<i64>,
}

/// Decodes `bytes` as `T` through `Decode` (the one-pass walk, falling back to the general
/// path) and through the general path alone: both give the same value or the same error.
fn agree<'a, C, T>(bytes: &'a [u8], deny: Option<&'static str>)
where
    C: tfrecord_core::Container,
    T: Decode<'a, C>
        + tfrecord_core::__private::FieldTable
        + tfrecord_core::__private::DecodeFields<'a, C::Dialect>
        + Debug,
{
    let one_pass = <T as Decode<'a, C>>::decode(bytes);
    let general = tfrecord_core::__private::decode_record::<C, T>(bytes, deny);
    match (&one_pass, &general) {
        (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{bytes:?}"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{bytes:?}"),
        _ => panic!("one pass {one_pass:?}, general path {general:?}, bytes {bytes:?}"),
    }
}

/// [`agree`] for every plain derived type, in each container it supports.
fn one_pass_agrees(bytes: &[u8]) {
    agree::<TfExample, Texts>(bytes, None);
    agree::<OfRecord, Texts>(bytes, None);
    agree::<TfExample, IntLists>(bytes, None);
    agree::<OfRecord, IntLists>(bytes, None);
    agree::<TfExample, Ints>(bytes, None);
    agree::<TfExample, Opts>(bytes, None);
    agree::<OfRecord, Opts>(bytes, None);
    agree::<TfExample, Enums>(bytes, None);
    agree::<TfExample, Defaults>(bytes, None);
    agree::<TfExample, Borrowed<'_>>(bytes, None);
    agree::<TfExample, StrictPlain>(bytes, Some("StrictPlain"));
    agree::<OfRecord, StrictPlain>(bytes, Some("StrictPlain"));
}

/// An Example holding the map entries `entries` (key, serialized `Feature`), in wire order.
fn example_of(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut map = Vec::new();
    for (k, f) in entries {
        let mut entry = Vec::new();
        put_len(&mut entry, 1, k.as_bytes());
        put_len(&mut entry, 2, f);
        put_len(&mut map, 1, &entry);
    }
    let mut out = Vec::new();
    put_len(&mut out, 1, &map);
    out
}

#[test]
fn one_pass_keeps_the_last_of_repeated_keys_and_words_errors_as_the_general_path() {
    let int = |v: i64| tf_feature(&Feat::Int(vec![v])).encode_to_vec();
    let text = |s: &str| tf_feature(&Feat::Bytes(vec![s.into()])).encode_to_vec();
    // A bad first entry shadowed by a good one decodes; the reverse is an error naming `a`.
    let good_last = example_of(&[("a", text("x")), ("a", int(5))]);
    let bad_last = example_of(&[("a", int(5)), ("a", text("x"))]);
    let v = <StrictPlain as Decode<TfExample>>::decode(&good_last).expect("last entry wins");
    assert_eq!(v, StrictPlain { a: 5, o: None });
    let (key, msg) = feature_error(<StrictPlain as Decode<TfExample>>::decode(&bad_last));
    assert_eq!(key.as_deref(), Some("a"), "{msg}");
    // An unknown key, a missing feature, and two errors (the first field's is reported).
    let unknown = example_of(&[("a", int(1)), ("zz", int(2))]);
    let err = <StrictPlain as Decode<TfExample>>::decode(&unknown).expect_err("unknown key");
    assert!(err.to_string().contains("zz"), "{err}");
    let missing = example_of(&[("o", int(1))]);
    let (key, _) = feature_error(<StrictPlain as Decode<TfExample>>::decode(&missing));
    assert_eq!(key.as_deref(), Some("a"));
    let both = example_of(&[("o", text("x")), ("a", text("y"))]);
    let (key, _) = feature_error(<StrictPlain as Decode<TfExample>>::decode(&both));
    assert_eq!(key.as_deref(), Some("a"));
    for bytes in [good_last, bad_last, unknown, missing, both] {
        one_pass_agrees(&bytes);
    }
}

proptest! {
    #![proptest_config(cfg())]

    /// Each style of encoding, two records' entries in one map, and every truncation and a
    /// random byte overwrite: the one-pass decode agrees with the general path.
    #[test]
    fn one_pass_agrees_with_the_general_path(
        t in texts(),
        o in opts(),
        l in int_lists(),
        e in enums(),
        s in style(),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let mut records = vec![
            Encode::<TfExample>::encode_to_vec(&t),
            Encode::<OfRecord>::encode_to_vec(&t),
            Encode::<TfExample>::encode_to_vec(&o),
            Encode::<OfRecord>::encode_to_vec(&l),
            Encode::<TfExample>::encode_to_vec(&e),
            styled_tf(&t.feats(false), s),
            styled_of(&o.feats(true), s),
            styled_tf(&e.feats(false), s),
        ];
        // One map holding both records' entries: `o`'s keys shadow nothing, `t`'s come first.
        let mut merged = t.feats(false);
        merged.extend(o.feats(false));
        records.push(tf_bytes(&merged));
        for bytes in &records {
            one_pass_agrees(bytes);
            cuts_and_overwrite(bytes, at, byte, one_pass_agrees);
        }
    }
}
