//! Helpers shared by the test modules: fixture paths, hex, SHA-256, reading a whole record
//! stream, comparing decoded features with the recorded JSON, and protobuf wire-format builders;
//! and, in modules of their own, what the `derive_*` tests share: the model of a feature map,
//! the encodings prost never writes, the checks, and the test types.

use std::io::Read;
use std::path::PathBuf;

use serde_json::Value;
use tfrecord_core::proto::{oneflow, tensorflow};
use tfrecord_core::{Error, RecordReader};

#[path = "support/attr_types.rs"]
pub(crate) mod attr_types;
#[path = "support/checks.rs"]
pub(crate) mod checks;
#[path = "support/model.rs"]
pub(crate) mod model;
#[path = "support/styled.rs"]
pub(crate) mod styled;
#[path = "support/value_types.rs"]
pub(crate) mod value_types;

/// The folder of the recorded conformance fixtures (copied from TensorFlow 2.21 / protobuf).
pub(crate) const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/conformance");

/// The path of one fixture file.
pub(crate) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(FIXTURES).join(name)
}

/// Parses a JSON fixture.
pub(crate) fn load_json(name: &str) -> Value {
    let text = std::fs::read_to_string(fixture(name)).expect("fixture JSON is readable");
    serde_json::from_str(&text).expect("fixture JSON parses")
}

/// Decodes lower-case or upper-case hex.
pub(crate) fn hex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex length: {s:?}");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("valid hex"))
        .collect()
}

/// Encodes bytes as lower-case hex.
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The records of `raw_records.json`, decoded from hex.
pub(crate) fn raw_records() -> Vec<Vec<u8>> {
    load_json("raw_records.json")["records_hex"]
        .as_array()
        .expect("records_hex is an array")
        .iter()
        .map(|h| hex(h.as_str().expect("hex string")))
        .collect()
}

/// SHA-256 (FIPS 180-4), written out here because the workspace has no hashing crate; checked
/// against known digests in `support_self_test`.
pub(crate) fn sha256(data: &[u8]) -> [u8; 32] {
    const K: [u32; 64] = [
        0x428a_2f98,
        0x7137_4491,
        0xb5c0_fbcf,
        0xe9b5_dba5,
        0x3956_c25b,
        0x59f1_11f1,
        0x923f_82a4,
        0xab1c_5ed5,
        0xd807_aa98,
        0x1283_5b01,
        0x2431_85be,
        0x550c_7dc3,
        0x72be_5d74,
        0x80de_b1fe,
        0x9bdc_06a7,
        0xc19b_f174,
        0xe49b_69c1,
        0xefbe_4786,
        0x0fc1_9dc6,
        0x240c_a1cc,
        0x2de9_2c6f,
        0x4a74_84aa,
        0x5cb0_a9dc,
        0x76f9_88da,
        0x983e_5152,
        0xa831_c66d,
        0xb003_27c8,
        0xbf59_7fc7,
        0xc6e0_0bf3,
        0xd5a7_9147,
        0x06ca_6351,
        0x1429_2967,
        0x27b7_0a85,
        0x2e1b_2138,
        0x4d2c_6dfc,
        0x5338_0d13,
        0x650a_7354,
        0x766a_0abb,
        0x81c2_c92e,
        0x9272_2c85,
        0xa2bf_e8a1,
        0xa81a_664b,
        0xc24b_8b70,
        0xc76c_51a3,
        0xd192_e819,
        0xd699_0624,
        0xf40e_3585,
        0x106a_a070,
        0x19a4_c116,
        0x1e37_6c08,
        0x2748_774c,
        0x34b0_bcb5,
        0x391c_0cb3,
        0x4ed8_aa4a,
        0x5b9c_ca4f,
        0x682e_6ff3,
        0x748f_82ee,
        0x78a5_636f,
        0x84c8_7814,
        0x8cc7_0208,
        0x90be_fffa,
        0xa450_6ceb,
        0xbef9_a3f7,
        0xc671_78f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09_e667,
        0xbb67_ae85,
        0x3c6e_f372,
        0xa54f_f53a,
        0x510e_527f,
        0x9b05_688c,
        0x1f83_d9ab,
        0x5be0_cd19,
    ];
    let bit_len = (data.len() as u64).wrapping_mul(8);
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for (k, wi) in K.iter().zip(w) {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(*k)
                .wrapping_add(wi);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 32];
    for (chunk, word) in out.chunks_exact_mut(4).zip(h) {
        chunk.copy_from_slice(&word.to_be_bytes());
    }
    out
}

/// Reads records until the end or the first error. Also checks that the reader yields nothing
/// more after an error (it is documented as finished then).
pub(crate) fn read_all<R: Read>(mut reader: RecordReader<R>) -> (Vec<Vec<u8>>, Option<Error>) {
    let mut records = Vec::new();
    for item in reader.by_ref() {
        match item {
            Ok(record) => records.push(record),
            Err(err) => {
                assert!(reader.next().is_none(), "the reader goes on after an error");
                return (records, Some(err));
            }
        }
    }
    (records, None)
}

/// The expected `i64`s of a JSON `value` array.
fn json_i64s(expected: &Value) -> Vec<i64> {
    expected["value"]
        .as_array()
        .expect("value array")
        .iter()
        .map(|v| v.as_i64().expect("int64 value"))
        .collect()
}

/// The expected IEEE-754 bit patterns of a JSON float list (`f32_bits`), checked against
/// `value` where that is a number, so the two halves of the fixture agree.
fn json_f32_bits(expected: &Value) -> Vec<u32> {
    let bits: Vec<u32> = expected["f32_bits"]
        .as_array()
        .expect("f32_bits array")
        .iter()
        .map(|b| u32::try_from(b.as_u64().expect("u32 bits")).expect("fits u32"))
        .collect();
    let values = expected["value"].as_array().expect("value array");
    assert_eq!(values.len(), bits.len(), "value and f32_bits disagree");
    for (v, b) in values.iter().zip(&bits) {
        let f = f32::from_bits(*b);
        match v {
            Value::Number(n) => assert_eq!(
                (n.as_f64().expect("number") as f32).to_bits(),
                *b,
                "value {n} vs bits {b:#x}"
            ),
            Value::String(s) => match s.as_str() {
                "nan" => assert!(f.is_nan()),
                "inf" => assert_eq!(f, f32::INFINITY),
                "-inf" => assert_eq!(f, f32::NEG_INFINITY),
                other => panic!("unexpected float string {other:?}"),
            },
            other => panic!("unexpected float value {other}"),
        }
    }
    bits
}

/// Checks one `bytes_list` value against a JSON entry `{hex}` or `{len, sha256}`.
fn check_bytes_value(actual: &[u8], expected: &Value, what: &str) {
    if let Some(h) = expected.get("hex") {
        assert_eq!(to_hex(actual), h.as_str().expect("hex string"), "{what}");
    } else {
        let len = expected["len"].as_u64().expect("len");
        assert_eq!(actual.len() as u64, len, "{what}: length");
        let digest = expected["sha256"].as_str().expect("sha256");
        assert_eq!(to_hex(&sha256(actual)), digest, "{what}: sha256");
    }
}

/// Checks a decoded `tensorflow.Feature` against its JSON form `{kind, value[, f32_bits]}`.
pub(crate) fn check_tf_feature(actual: &tensorflow::Feature, expected: &Value, what: &str) {
    use tensorflow::feature::Kind;
    match (expected["kind"].as_str(), &actual.kind) {
        (None, None) => {
            assert!(expected["kind"].is_null(), "{what}: kind must be null");
            assert_eq!(
                expected["value"].as_array().map(Vec::len),
                Some(0),
                "{what}"
            );
        }
        (Some("int64_list"), Some(Kind::Int64List(list))) => {
            assert_eq!(list.value, json_i64s(expected), "{what}");
        }
        (Some("float_list"), Some(Kind::FloatList(list))) => {
            let bits: Vec<u32> = list.value.iter().map(|f| f.to_bits()).collect();
            assert_eq!(bits, json_f32_bits(expected), "{what}");
        }
        (Some("bytes_list"), Some(Kind::BytesList(list))) => {
            let values = expected["value"].as_array().expect("value array");
            assert_eq!(list.value.len(), values.len(), "{what}: count");
            for (i, (a, e)) in list.value.iter().zip(values).enumerate() {
                check_bytes_value(a, e, &format!("{what}[{i}]"));
            }
        }
        (kind, actual) => panic!("{what}: expected kind {kind:?}, decoded {actual:?}"),
    }
}

/// Checks a decoded `tensorflow.Features` map against a JSON object of features, key by key.
pub(crate) fn check_tf_features(
    actual: Option<&tensorflow::Features>,
    expected: &Value,
    what: &str,
) {
    let expected = expected.as_object().expect("features object");
    let empty = tensorflow::Features::default();
    let actual = actual.unwrap_or(&empty);
    let actual_keys: Vec<&str> = actual.feature.keys().map(String::as_str).collect();
    let mut expected_keys: Vec<&str> = expected.keys().map(String::as_str).collect();
    expected_keys.sort_unstable();
    assert_eq!(actual_keys, expected_keys, "{what}: keys");
    for (key, feature) in &actual.feature {
        check_tf_feature(feature, &expected[key], &format!("{what}[{key:?}]"));
    }
}

/// Checks a decoded `oneflow.Feature` against its JSON form (kinds `bytes_list` with
/// `value_hex`, `float_list` with `f32_bits`, `double_list` with `f64_bits`, `int32_list`,
/// `int64_list`).
pub(crate) fn check_of_feature(actual: &oneflow::Feature, expected: &Value, what: &str) {
    use oneflow::feature::Kind;
    match (expected["kind"].as_str(), &actual.kind) {
        (Some("bytes_list"), Some(Kind::BytesList(list))) => {
            let values: Vec<String> = list.value.iter().map(|v| to_hex(v)).collect();
            let wanted: Vec<&str> = expected["value_hex"]
                .as_array()
                .expect("value_hex array")
                .iter()
                .map(|v| v.as_str().expect("hex string"))
                .collect();
            assert_eq!(values, wanted, "{what}");
        }
        (Some("float_list"), Some(Kind::FloatList(list))) => {
            let bits: Vec<u32> = list.value.iter().map(|f| f.to_bits()).collect();
            assert_eq!(bits, json_f32_bits(expected), "{what}");
        }
        (Some("double_list"), Some(Kind::DoubleList(list))) => {
            let bits: Vec<u64> = list.value.iter().map(|f| f.to_bits()).collect();
            let wanted: Vec<u64> = expected["f64_bits"]
                .as_array()
                .expect("f64_bits array")
                .iter()
                .map(|b| b.as_u64().expect("u64 bits"))
                .collect();
            assert_eq!(bits, wanted, "{what}");
            let values: Vec<f64> = expected["value"]
                .as_array()
                .expect("value array")
                .iter()
                .map(|v| v.as_f64().expect("number"))
                .collect();
            let value_bits: Vec<u64> = values.iter().map(|f| f.to_bits()).collect();
            assert_eq!(value_bits, wanted, "{what}: value and f64_bits disagree");
        }
        (Some("int32_list"), Some(Kind::Int32List(list))) => {
            let wanted: Vec<i32> = json_i64s(expected)
                .into_iter()
                .map(|v| i32::try_from(v).expect("int32 value"))
                .collect();
            assert_eq!(list.value, wanted, "{what}");
        }
        (Some("int64_list"), Some(Kind::Int64List(list))) => {
            assert_eq!(list.value, json_i64s(expected), "{what}");
        }
        (kind, actual) => panic!("{what}: expected kind {kind:?}, decoded {actual:?}"),
    }
}

// ---- Protobuf wire format, built by hand ----

/// Protobuf wire types.
pub(crate) const VARINT: u8 = 0;
pub(crate) const FIXED64: u8 = 1;
pub(crate) const LEN: u8 = 2;
pub(crate) const FIXED32: u8 = 5;

/// A base-128 varint.
pub(crate) fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = u8::try_from(v & 0x7f).expect("7 bits");
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// A field key: `(field << 3) | wire_type`.
pub(crate) fn tag(field: u32, wire_type: u8) -> Vec<u8> {
    varint((u64::from(field) << 3) | u64::from(wire_type))
}

/// A length-delimited field.
pub(crate) fn len_field(field: u32, payload: &[u8]) -> Vec<u8> {
    [
        tag(field, LEN),
        varint(payload.len() as u64),
        payload.to_vec(),
    ]
    .concat()
}

/// A varint field.
pub(crate) fn varint_field(field: u32, v: u64) -> Vec<u8> {
    [tag(field, VARINT), varint(v)].concat()
}

/// A fixed32 field.
pub(crate) fn fixed32_field(field: u32, v: u32) -> Vec<u8> {
    [tag(field, FIXED32), v.to_le_bytes().to_vec()].concat()
}

/// A fixed64 field.
pub(crate) fn fixed64_field(field: u32, v: u64) -> Vec<u8> {
    [tag(field, FIXED64), v.to_le_bytes().to_vec()].concat()
}

/// One unknown field of each wire type (varint, fixed32, fixed64, length-delimited), with field
/// numbers no message here uses; the length-delimited one holds bytes that would be a valid
/// feature if it were parsed.
pub(crate) fn unknown_fields() -> Vec<u8> {
    [
        varint_field(100, u64::MAX),
        fixed32_field(101, 0xdead_beef),
        fixed64_field(102_000, 0x0123_4567_89ab_cdef),
        len_field(536_870_911, &len_field(1, b"not a field")),
    ]
    .concat()
}

/// `int64`s as a packed field.
pub(crate) fn packed_int64(field: u32, values: &[i64]) -> Vec<u8> {
    let payload: Vec<u8> = values
        .iter()
        .flat_map(|v| varint(v.cast_unsigned()))
        .collect();
    len_field(field, &payload)
}

/// `int64`s as unpacked varint fields.
pub(crate) fn unpacked_int64(field: u32, values: &[i64]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| varint_field(field, v.cast_unsigned()))
        .collect()
}

/// `float`s as a packed field.
pub(crate) fn packed_f32(field: u32, values: &[f32]) -> Vec<u8> {
    let payload: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    len_field(field, &payload)
}

/// `float`s as unpacked fixed32 fields.
pub(crate) fn unpacked_f32(field: u32, values: &[f32]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| fixed32_field(field, v.to_bits()))
        .collect()
}

/// `double`s as a packed field.
pub(crate) fn packed_f64(field: u32, values: &[f64]) -> Vec<u8> {
    let payload: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    len_field(field, &payload)
}

/// `double`s as unpacked fixed64 fields.
pub(crate) fn unpacked_f64(field: u32, values: &[f64]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| fixed64_field(field, v.to_bits()))
        .collect()
}

/// A map entry (`key` = field 1, `value` = field 2) as field `field` of the map's message.
pub(crate) fn map_entry(field: u32, key: &str, value: &[u8]) -> Vec<u8> {
    len_field(
        field,
        &[len_field(1, key.as_bytes()), len_field(2, value)].concat(),
    )
}

#[test]
fn support_self_test() {
    // Digests from Python's hashlib.
    assert_eq!(
        to_hex(&sha256(b"abc")),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        to_hex(&sha256(b"")),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    let data: Vec<u8> = (0..1000u32)
        .map(|i| u8::try_from(i % 251).expect("< 251"))
        .collect();
    assert_eq!(
        to_hex(&sha256(&data)),
        "4e4c294b331f7a2099a379bec34b9f9fc03dc46ab465d998f4d683da53487e6d"
    );
    assert_eq!(hex("00ff7A"), vec![0, 255, 0x7a]);
    // The varint examples of the protobuf encoding guide.
    assert_eq!(varint(1), vec![0x01]);
    assert_eq!(varint(150), vec![0x96, 0x01]);
    assert_eq!(varint(u64::MAX).len(), 10);
    assert_eq!(tag(1, LEN), vec![0x0a]);
    assert_eq!(varint_field(1, 150), vec![0x08, 0x96, 0x01]);
}
