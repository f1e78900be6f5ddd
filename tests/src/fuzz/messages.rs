//! The generic protobuf decoders: `tensorflow.Example`, `tensorflow.SequenceExample` and
//! `oneflow.OFRecord` (prost), and their proto3 JSON and text forms.
//!
//! The input is one serialized message, tried as each of the three. Whatever decodes must
//! encode to bytes that decode to a message encoding to the same bytes (decode, encode, decode
//! gives the same message; the bytes stand for it, as a float list may hold NaNs); its JSON
//! form must read back to a message with the same JSON form (which spells every NaN alike),
//! and its text form must be printable. An `Example` converts to an `OFRecord` and back to
//! the same features.
//!
//! The checks without a decode agree with it: `proto::check_example` (and its siblings) accept
//! exactly what decodes, keys as bytes (groups aside, which these messages never use); and the
//! wire converters (`convert::example_to_ofrecord_bytes`, `ofrecord_to_example_bytes`) give
//! bytes that decode to what converting the decoded message gives.

use tfrecord_core::convert::{
    example_to_ofrecord, example_to_ofrecord_bytes, ofrecord_to_example, ofrecord_to_example_bytes,
};
use tfrecord_core::proto::{self, bytes_keys, oneflow, tensorflow};
use tfrecord_core::{Message, json, text};

use super::heap::{self, Bound};

/// The heap bound of one decode, encode, JSON and text round trip over `n` input bytes: 64
/// bytes per byte (a one-byte empty feature list in a map entry becomes a `String` key, a
/// `Feature` and a `BTreeMap` node; JSON and text forms spell every value out, an empty bytes
/// value as `""` and a float as up to 15 characters), plus 64 KiB.
pub const MESSAGES_BOUND: Bound = Bound {
    per_byte: 64,
    fixed: 64 << 10,
};

/// Decodes `data` as `M`, and when it decodes checks the round trip; returns the message.
fn round_trip<M: Message + Default>(data: &[u8], what: &str) -> Option<M> {
    let first = M::decode(data).ok()?;
    let bytes = first.encode_to_vec();
    assert_eq!(bytes.len(), first.encoded_len(), "{what}: encoded_len");
    let again = match M::decode(&bytes[..]) {
        Ok(m) => m,
        Err(e) => panic!("{what}: its own encoding does not decode: {e}"),
    };
    assert!(
        again.encode_to_vec() == bytes,
        "{what}: decode, encode, decode changed the message"
    );
    Some(first)
}

/// The canonical encoding of a message, standing for it in comparisons.
fn bytes_of(m: &impl Message) -> Vec<u8> {
    m.encode_to_vec()
}

/// The decoders agree with their own encodings and JSON forms on `data` (see the
/// [module](self) docs).
///
/// # Panics
/// When a round trip changes a message, a decoder panics, or the heap grows past
/// [`MESSAGES_BOUND`].
pub fn messages(data: &[u8]) {
    heap::within("messages", data.len(), MESSAGES_BOUND, || check(data));
}

/// A check without a decode agrees with the decode: accepts exactly what decodes.
fn check_agrees(what: &str, checked: tfrecord_core::Result<()>, decodes: bool) {
    match checked {
        Ok(()) => assert!(decodes, "{what}: the check accepts what does not decode"),
        Err(e) => assert!(
            !decodes || e.to_string().contains("groups"),
            "{what}: the check refuses what decodes: {e}"
        ),
    }
}

fn wire(data: &[u8]) {
    check_agrees(
        "Example",
        proto::check_example(data),
        bytes_keys::Example::decode(data).is_ok(),
    );
    check_agrees(
        "SequenceExample",
        proto::check_sequence_example(data),
        bytes_keys::SequenceExample::decode(data).is_ok(),
    );
    check_agrees(
        "OFRecord",
        proto::check_ofrecord(data),
        bytes_keys::OfRecord::decode(data).is_ok(),
    );
    let mut out = Vec::new();
    if example_to_ofrecord_bytes(data, &mut out).is_ok()
        && let Ok(e) = tensorflow::Example::decode(data)
    {
        let got = oneflow::OfRecord::decode(&out[..]).expect("the converted bytes decode");
        assert!(
            bytes_of(&got) == bytes_of(&example_to_ofrecord(&e)),
            "Example: the wire conversion differs from the decoded one"
        );
    }
    out.clear();
    if ofrecord_to_example_bytes(data, true, &mut out).is_ok()
        && let Ok(r) = oneflow::OfRecord::decode(data)
    {
        let got = tensorflow::Example::decode(&out[..]).expect("the converted bytes decode");
        let want = ofrecord_to_example(&r, true).expect("doubles narrow when allowed");
        assert!(
            bytes_of(&got) == bytes_of(&want),
            "OFRecord: the wire conversion differs from the decoded one"
        );
    }
}

fn check(data: &[u8]) {
    wire(data);
    if let Some(e) = round_trip::<tensorflow::Example>(data, "Example") {
        let form = json::example_to_json(&e);
        let back = json::example_from_json(&form)
            .unwrap_or_else(|err| panic!("Example: its JSON does not read: {err}"));
        assert_eq!(
            json::example_to_json(&back),
            form,
            "Example: JSON round trip"
        );
        drop(text::example_to_text(&e));
        let of = example_to_ofrecord(&e);
        let back = ofrecord_to_example(&of, false)
            .unwrap_or_else(|err| panic!("Example: its OFRecord does not convert back: {err}"));
        // An `Example` without its `features` message has no features, as one with it empty:
        // the conversion back writes the message.
        assert!(
            bytes_of(&back.features.unwrap_or_default())
                == bytes_of(&e.features.unwrap_or_default()),
            "Example: OFRecord round trip"
        );
    }
    if let Some(s) = round_trip::<tensorflow::SequenceExample>(data, "SequenceExample") {
        let form = json::sequence_example_to_json(&s);
        let back = json::sequence_example_from_json(&form)
            .unwrap_or_else(|err| panic!("SequenceExample: its JSON does not read: {err}"));
        assert_eq!(
            json::sequence_example_to_json(&back),
            form,
            "SequenceExample: JSON round trip"
        );
        drop(text::sequence_example_to_text(&s));
    }
    if let Some(r) = round_trip::<oneflow::OfRecord>(data, "OFRecord") {
        let form = json::ofrecord_to_json(&r);
        let back = json::ofrecord_from_json(&form)
            .unwrap_or_else(|err| panic!("OFRecord: its JSON does not read: {err}"));
        assert_eq!(
            json::ofrecord_to_json(&back),
            form,
            "OFRecord: JSON round trip"
        );
        drop(text::ofrecord_to_text(&r));
    }
}
