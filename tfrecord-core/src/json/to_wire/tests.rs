//! The wire reader against the full reader (tree, message, prost-based encoder), which the
//! interop checks hold to protobuf's `json_format.Parse`: whatever the wire reader takes, the
//! full reader takes with the same bytes.

use super::Buffers;
use crate::json::{
    LineEncoder, example_from_json_str, ofrecord_from_json_str, sequence_example_from_json_str,
};
use crate::proto::{encode_example, encode_ofrecord, encode_sequence_example};

#[derive(Clone, Copy, Debug)]
enum Kind {
    Example,
    Sequence,
    OfRecord,
}

/// The wire reader's bytes, `None` where it leaves the line to the full reader.
fn fast(kind: Kind, text: &str) -> Option<Vec<u8>> {
    let mut b = Buffers::default();
    let mut out = vec![0xAA];
    match kind {
        Kind::Example => b.example(text, &mut out),
        Kind::Sequence => b.sequence_example(text, &mut out),
        Kind::OfRecord => b.ofrecord(text, &mut out),
    }?;
    // Appended after what `out` held.
    assert_eq!(out[0], 0xAA);
    Some(out.split_off(1))
}

/// The full reader's bytes or error.
fn full(kind: Kind, text: &str) -> Result<Vec<u8>, String> {
    let r = match kind {
        Kind::Example => example_from_json_str(text).map(|m| encode_example(&m)),
        Kind::Sequence => sequence_example_from_json_str(text).map(|m| encode_sequence_example(&m)),
        Kind::OfRecord => ofrecord_from_json_str(text).map(|m| encode_ofrecord(&m)),
    };
    r.map_err(|e| e.to_string())
}

/// The public encoder: the same bytes or the same error as the full reader.
fn encoder(kind: Kind, text: &str) -> Result<Vec<u8>, String> {
    let mut enc = LineEncoder::new();
    let mut out = Vec::new();
    let r = match kind {
        Kind::Example => enc.example(text, &mut out),
        Kind::Sequence => enc.sequence_example(text, &mut out),
        Kind::OfRecord => enc.ofrecord(text, &mut out),
    };
    r.map(|()| out).map_err(|e| e.to_string())
}

/// `text` read by both readers: where the wire reader takes it, the full reader gives the same
/// bytes; and the encoder always agrees with the full reader. Whether the wire reader took it.
fn agree(kind: Kind, text: &str) -> bool {
    let want = full(kind, text);
    assert_eq!(encoder(kind, text), want, "{kind:?} {text}");
    match fast(kind, text) {
        Some(got) => {
            assert_eq!(Ok(&got), want.as_ref(), "{kind:?} {text}");
            true
        }
        None => false,
    }
}

const EXAMPLE: &str = r#"{"features":{"feature":{"C1":{"bytesList":{"value":["ZjhlYjUyMjQ=","","AA==","/+8="]}},"I1":{"int64List":{"value":["0","-9223372036854775808","9223372036854775807","594868","-1"]}},"dense":{"floatList":{"value":[-0.43553883,1.9042801,0.1,3.4028235e+38,1e-45,"NaN","Infinity","-Infinity",-0.0]}},"empty":{},"none":{"int64List":{}},"a":{"floatList":{"value":[]}}}}}"#;

const SEQUENCE: &str = r#"{"context":{"feature":{"id":{"int64List":{"value":["7"]}},"lang":{"bytesList":{"value":["ZnI="]}}}},"featureLists":{"featureList":{"scores":{"feature":[{"floatList":{"value":[0.4166424]}},{},{"int64List":{"value":["1","2"]}}]},"none":{},"empty":{"feature":[]}}}}"#;

const OFRECORD: &str = r#"{"feature":{"b":{"bytesList":{"value":["aGk="]}},"f":{"floatList":{"value":[1.5,-2]}},"d":{"doubleList":{"value":[0.1,1e300,"NaN",-0.0]}},"i":{"int32List":{"value":[-2147483648,"2147483647",0,-1]}},"l":{"int64List":{"value":["-5",6]}},"e":{}}}"#;

#[test]
fn the_written_forms_are_read_here() {
    assert!(agree(Kind::Example, EXAMPLE));
    assert!(agree(Kind::Sequence, SEQUENCE));
    assert!(agree(Kind::OfRecord, OFRECORD));
    for (kind, text) in [
        (Kind::Example, "{}"),
        (Kind::Example, r#"{"features":{}}"#),
        (Kind::Example, r#"{"features":{"feature":{}}}"#),
        (Kind::Example, r#"{"features":null}"#),
        (Kind::Sequence, "{}"),
        (Kind::Sequence, r#"{"featureLists":{}}"#),
        (Kind::Sequence, r#"{"context":{}}"#),
        (Kind::OfRecord, "{}"),
        (Kind::OfRecord, r#"{"feature":{}}"#),
    ] {
        assert!(agree(kind, text), "{text}");
    }
}

#[test]
fn variations_json_format_accepts_are_read_here() {
    for (kind, text) in [
        // Whitespace of every kind JSON allows, between every token.
        (
            Kind::Example,
            " {\t\"features\" :\r\n{ \"feature\" : { \"x\" : { \"int64List\" : { \"value\" : [ 1 , \"2\" ] } } } } } ",
        ),
        // Original field names, members in another order, null members.
        (
            Kind::Example,
            r#"{"features":{"feature":{"z":{"int64_list":{"value":[3]}},"a":{"bytes_list":null,"float_list":{"value":[1]}}}}}"#,
        ),
        (
            Kind::Sequence,
            r#"{"feature_lists":{"feature_list":{"s":{"feature":[{"float_list":{"value":[2.5]}}]}}},"context":{"feature":{"c":{}}}}"#,
        ),
        (Kind::Sequence, r#"{"context":null,"featureLists":null}"#),
        // Numbers: integers as numbers and strings with leading zeros, exponent forms, integral
        // floats.
        (
            Kind::Example,
            r#"{"features":{"feature":{"i":{"int64List":{"value":[-0,"007","-0",12345678901234567]}},"f":{"floatList":{"value":[1E3,2e-3,-1.5E+2,0,7,1e-50,123456789012345678901234567890]}}}}}"#,
        ),
        // Empty and unusual keys (no escapes).
        (
            Kind::Example,
            r#"{"features":{"feature":{"":{"int64List":{"value":[1]}},"é ü":{},"a b":{},"A":{}}}}"#,
        ),
        (
            Kind::OfRecord,
            r#"{"feature":{"x":{"int32_list":{"value":["-2147483648"]}},"y":{"double_list":{"value":["Infinity",5]}}}}"#,
        ),
    ] {
        assert!(agree(kind, text), "{text}");
    }
}

#[test]
fn other_forms_are_left_to_the_full_reader() {
    for (kind, text) in [
        // Escapes in keys and strings.
        (Kind::Example, r#"{"features":{"feature":{"\u0041":{}}}}"#),
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{"bytesList":{"value":["aGk\u003d"]}}}}}"#,
        ),
        (Kind::Example, r#"{"f\u0065atures":{}}"#),
        // Base64 without padding or in the URL-safe alphabet.
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{"bytesList":{"value":["aGk"]}}}}}"#,
        ),
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{"bytesList":{"value":["-_8="]}}}}}"#,
        ),
        // Integers with a fraction or an exponent, in strings with spaces or a plus sign.
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{"int64List":{"value":[5.0]}}}}}"#,
        ),
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{"int64List":{"value":[1e3]}}}}}"#,
        ),
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{"int64List":{"value":[" 5"]}}}}}"#,
        ),
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{"int64List":{"value":["+5"]}}}}}"#,
        ),
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{"int64List":{"value":["1e3"]}}}}}"#,
        ),
        // Floats as decimal strings.
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{"floatList":{"value":["1.5"]}}}}}"#,
        ),
        // Keys written twice.
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{},"a":{"int64List":{}}}}}"#,
        ),
        (Kind::Example, r#"{"features":5,"features":{}}"#),
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{"int64List":null,"int64List":{}}}}}"#,
        ),
        // Errors: the full reader words them.
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{"int64List":{"value":["x"]}}}}}"#,
        ),
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{"int64List":{"value":["9223372036854775808"]}}}}}"#,
        ),
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{"floatList":{"value":[1e39]}}}}}"#,
        ),
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{"floatList":{"value":[1e400]}}}}}"#,
        ),
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{"floatList":{"value":[01]}}}}}"#,
        ),
        (
            Kind::Example,
            r#"{"features":{"feature":{"a":{"bytesList":{},"int64List":{}}}}}"#,
        ),
        (Kind::Example, r#"{"features":{"feature":{"a":null}}}"#),
        (Kind::Example, r#"{"feature":{}}"#),
        (Kind::Example, r#"{"features":{}} x"#),
        (Kind::Example, r#"{"features":{},}"#),
        (Kind::Example, "{"),
        (
            Kind::OfRecord,
            r#"{"feature":{"i":{"int32List":{"value":[2147483648]}}}}"#,
        ),
        (
            Kind::Sequence,
            r#"{"featureLists":{"featureList":{"s":{"feature":[null]}}}}"#,
        ),
    ] {
        assert!(!agree(kind, text), "{text}");
    }
}

/// Every text one edit away from a written form: a byte removed, or one of the bytes JSON's
/// grammar turns on put in, at every place.
fn one_edit_away(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for i in 0..=bytes.len() {
        if i < bytes.len() {
            let mut v = bytes.to_vec();
            v.remove(i);
            out.extend(String::from_utf8(v).ok());
        }
        for &c in b" \",:{}[]\\n0-.eE+=A_" {
            let mut v = bytes.to_vec();
            v.insert(i, c);
            out.extend(String::from_utf8(v).ok());
        }
    }
    out
}

#[test]
fn texts_one_edit_away_agree() {
    for (kind, text) in [
        (Kind::Example, EXAMPLE),
        (Kind::Sequence, SEQUENCE),
        (Kind::OfRecord, OFRECORD),
    ] {
        let mut taken = 0;
        let texts = one_edit_away(text);
        for t in &texts {
            taken += usize::from(agree(kind, t));
        }
        // Many edits keep the text valid (whitespace, digits) and are read here.
        assert!(
            taken > texts.len() / 20,
            "{kind:?}: {taken} of {}",
            texts.len()
        );
    }
}
