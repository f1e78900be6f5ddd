//! The checks every derive test type goes through. For each value:
//!
//! - the derived encoding decodes through prost to exactly the model's features, and with each
//!   map's entries put in key order it is byte for byte what protobuf writes for them;
//! - the derived encoding decodes back through the derive to the same model;
//! - a prost message built from the model decodes through the derive to the same model;
//! - hand-built wire bytes in other valid encodings decode the same through prost and through
//!   the derive.
//!
//! And for values that must not decode: the error names its feature key and field.

use std::fmt::Debug;

use proptest::prelude::*;
use tfrecord_core::proto::{oneflow, tensorflow};
use tfrecord_core::{
    Decode, DecodeOwned, Encode, Error, ErrorKind, Message, OfRecord, TfExample, TfSequenceExample,
};

use super::model::{
    Feats, Model, SeqModel, feats_of_of, feats_of_tf, of_bytes, seq_feats_of, tf_bytes, tf_sequence,
};
use super::styled::{Style, styled_of, styled_tf};

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
pub(crate) fn check_of<T>(v: &T) -> T
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
pub(crate) fn check_both<T>(v: &T) -> (T, T)
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
pub(crate) fn check_styled<T>(v: &T, s: Style)
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
pub(crate) fn check_seq<T>(v: &T) -> T
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
pub(crate) fn feature_error<T: Debug>(r: tfrecord_core::Result<T>) -> (Option<String>, String) {
    let e: Error = r.expect_err("decoding must fail");
    assert!(
        matches!(e.kind(), ErrorKind::Feature { .. }),
        "a feature error, not {e:?}"
    );
    (e.key().map(str::to_string), e.to_string())
}

/// Asserts that decoding `feats` as `T` fails on `key` with a message containing each of
/// `parts`, in tf.train.Example (`of == false`) or OFRecord.
pub(crate) fn assert_fails<T>(of: bool, feats: &Feats, key: &str, parts: &[&str])
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

/// The proptest configuration of the derive tests.
pub(crate) fn cfg() -> ProptestConfig {
    ProptestConfig::with_cases(64)
}
