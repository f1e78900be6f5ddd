//! The byte-keyed messages against prost's: the same values for every encoding prost reads
//! (keys as their UTF-8 bytes), and keys that are not UTF-8 kept where prost refuses them.

use prost::Message;

use super::{Example, OfRecord, SequenceExample};
use crate::codec::wire::put_len_prefix;
use crate::proto::{oneflow, tensorflow};

/// A length-delimited field.
fn len(field: u32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    put_len_prefix(&mut out, field, body.len());
    out.extend_from_slice(body);
    out
}

/// A map entry field (number 1 of its map message): key, then value.
fn entry(key: &[u8], value: &[u8]) -> Vec<u8> {
    len(1, &[len(1, key), len(2, value)].concat())
}

fn ints(v: &[i64]) -> Vec<u8> {
    tensorflow::Feature {
        kind: Some(tensorflow::feature::Kind::Int64List(
            tensorflow::Int64List { value: v.to_vec() },
        )),
    }
    .encode_to_vec()
}

fn floats(v: &[f32]) -> Vec<u8> {
    tensorflow::Feature {
        kind: Some(tensorflow::feature::Kind::FloatList(
            tensorflow::FloatList { value: v.to_vec() },
        )),
    }
    .encode_to_vec()
}

/// Feature maps (the body of a `Features`, `FeatureLists` or `OFRecord`) in the encodings
/// protobuf allows, with UTF-8 keys.
fn maps(value: &dyn Fn(usize) -> Vec<u8>) -> Vec<Vec<u8>> {
    let (a, b, c) = (value(0), value(1), value(2));
    vec![
        // Canonical.
        [entry(b"a", &a), entry(b"b", &b)].concat(),
        // Empty.
        Vec::new(),
        // The value before the key.
        len(1, &[len(2, &a), len(1, b"a")].concat()),
        // No key (the empty key), and no value (an empty message).
        [len(1, &len(2, &a)), len(1, &len(1, b"k"))].concat(),
        // A repeated key: the last entry wins.
        [entry(b"a", &a), entry(b"b", &b), entry(b"a", &c)].concat(),
        // A key given twice in one entry (the last wins), a value given twice (merged).
        len(
            1,
            &[len(1, b"x"), len(2, &a), len(1, b"y"), len(2, &b)].concat(),
        ),
        // Unknown fields in the map message and in an entry; a non-ASCII key.
        [
            vec![0x18, 0x05],
            len(
                1,
                &[
                    len(1, "ключ".as_bytes()),
                    vec![0x25, 0, 0, 0, 0],
                    len(2, &a),
                ]
                .concat(),
            ),
            len(9, b"junk"),
        ]
        .concat(),
    ]
}

fn feature_value(i: usize) -> Vec<u8> {
    match i {
        0 => ints(&[1, -2]),
        1 => floats(&[0.5]),
        _ => ints(&[3]),
    }
}

fn list_value(i: usize) -> Vec<u8> {
    let steps: Vec<Vec<u8>> = (0..i).map(feature_value).collect();
    steps.iter().map(|s| len(1, s)).collect::<Vec<_>>().concat()
}

#[test]
fn examples_read_as_prost_reads_them() {
    let mut records = vec![Vec::new(), len(1, b""), vec![0x10, 0x01]];
    for map in maps(&feature_value) {
        records.push(len(1, &map));
        // The `features` field twice: the two maps merge.
        records.push([len(1, &map), len(1, &entry(b"z", &ints(&[9])))].concat());
    }
    for bytes in records {
        let want = tensorflow::Example::decode(&bytes[..]).expect("prost reads it");
        let got = Example::decode(&bytes).expect("reads what prost reads");
        assert_eq!(got, Example::from(want.clone()), "{bytes:02x?}");
        assert_eq!(got.encode(), crate::proto::encode_example(&want));
        assert_eq!(got.to_text(), crate::text::example_to_text(&want));
        assert_eq!(
            got.to_json().expect("UTF-8 keys"),
            crate::json::example_to_json(&want)
        );
    }
}

#[test]
fn sequence_examples_read_as_prost_reads_them() {
    let context = maps(&feature_value);
    let lists = maps(&list_value);
    let mut records = vec![Vec::new()];
    for (c, l) in context.iter().zip(&lists) {
        records.push([len(1, c), len(2, l)].concat());
        records.push([len(2, l), len(1, c), len(2, &entry(b"q", b""))].concat());
    }
    for bytes in records {
        let want = tensorflow::SequenceExample::decode(&bytes[..]).expect("prost reads it");
        let got = SequenceExample::decode(&bytes).expect("reads what prost reads");
        assert_eq!(got, SequenceExample::from(want.clone()), "{bytes:02x?}");
        assert_eq!(got.encode(), crate::proto::encode_sequence_example(&want));
        assert_eq!(got.to_text(), crate::text::sequence_example_to_text(&want));
        assert_eq!(
            got.to_json().expect("UTF-8 keys"),
            crate::json::sequence_example_to_json(&want)
        );
    }
}

#[test]
fn ofrecords_read_as_prost_reads_them() {
    let of_value = |i: usize| {
        let kind = match i {
            0 => oneflow::feature::Kind::DoubleList(oneflow::DoubleList { value: vec![0.25] }),
            1 => oneflow::feature::Kind::Int32List(oneflow::Int32List { value: vec![-1] }),
            _ => oneflow::feature::Kind::BytesList(oneflow::BytesList {
                value: vec![b"\xff".to_vec()],
            }),
        };
        oneflow::Feature { kind: Some(kind) }.encode_to_vec()
    };
    for bytes in maps(&of_value) {
        let want = oneflow::OfRecord::decode(&bytes[..]).expect("prost reads it");
        let got = OfRecord::decode(&bytes).expect("reads what prost reads");
        assert_eq!(got, OfRecord::from(want.clone()), "{bytes:02x?}");
        assert_eq!(got.encode(), crate::proto::encode_ofrecord(&want));
        assert_eq!(got.to_text(), crate::text::ofrecord_to_text(&want));
        assert_eq!(
            got.to_json().expect("UTF-8 keys"),
            crate::json::ofrecord_to_json(&want)
        );
        let converted = got.to_example(true).expect("lossy doubles allowed");
        let prost_converted =
            crate::convert::ofrecord_to_example(&want, true).expect("lossy doubles allowed");
        assert_eq!(converted, Example::from(prost_converted.clone()));
        assert_eq!(
            converted.to_ofrecord(),
            OfRecord::from(crate::convert::example_to_ofrecord(&prost_converted))
        );
    }
}

#[test]
fn keys_that_are_not_utf8_are_kept() {
    let map = [
        entry(b"\xff", &ints(&[1])),
        entry(b"ok", &ints(&[2])),
        entry(b"caf\xe9", &floats(&[0.5])),
    ]
    .concat();
    let bytes = len(1, &map);
    let err = tensorflow::Example::decode(&bytes[..]).expect_err("prost requires UTF-8 keys");
    assert!(err.to_string().contains("UTF-8"), "{err}");
    let e = Example::decode(&bytes).expect("any key bytes");
    let keys: Vec<&[u8]> = e.keys().collect();
    assert_eq!(keys, [&b"caf\xe9"[..], b"ok", b"\xff"]);
    // Re-encoded in key order, every entry with its key and value.
    let sorted = len(
        1,
        &[
            entry(b"caf\xe9", &floats(&[0.5])),
            entry(b"ok", &ints(&[2])),
            entry(b"\xff", &ints(&[1])),
        ]
        .concat(),
    );
    assert_eq!(e.encode(), sorted);
    assert_eq!(Example::decode(&e.encode()).expect("reads back"), e);

    let text = e.to_text();
    assert!(text.contains("    key: \"caf\\351\"\n"), "{text}");
    assert!(text.contains("    key: \"\\377\"\n"), "{text}");
    let json = e.to_json().expect("no escaped key is also a key");
    let map = &json["features"]["feature"];
    assert_eq!(map["caf\\351"]["floatList"]["value"][0], 0.5);
    assert_eq!(map["\\377"]["int64List"]["value"][0], "1");
    assert_eq!(map["ok"]["int64List"]["value"][0], "2");

    // Converted to an OFRecord and back, the keys stay.
    let back = e.to_ofrecord().to_example(false).expect("no doubles");
    assert_eq!(back, e);

    // In a SequenceExample, in the context and the feature lists alike.
    let seq = [
        len(1, &entry(b"\xfe", &ints(&[1]))),
        len(2, &entry(b"\x80", &len(1, &ints(&[2])))),
    ]
    .concat();
    assert!(tensorflow::SequenceExample::decode(&seq[..]).is_err());
    let s = SequenceExample::decode(&seq).expect("any key bytes");
    assert_eq!(s.keys().collect::<Vec<_>>(), [&b"\xfe"[..], b"\x80"]);
    assert_eq!(s.encode(), seq);
}

#[test]
fn an_escaped_key_that_is_also_a_key_cannot_be_json() {
    let bytes = len(
        1,
        &[entry(b"\xff", &ints(&[1])), entry(b"\\377", &ints(&[2]))].concat(),
    );
    let e = Example::decode(&bytes).expect("two distinct keys");
    assert_eq!(e.keys().count(), 2);
    let err = e.to_json().expect_err("both keys would be `\\377` in JSON");
    assert!(err.to_string().contains("\"\\377\" is not UTF-8"), "{err}");
    // The text format tells them apart.
    let text = e.to_text();
    assert!(text.contains("key: \"\\\\377\""), "{text}");
    assert!(text.contains("key: \"\\377\""), "{text}");
}

/// Changed, cut and grown records: wherever prost reads the bytes, the byte-keyed decoder reads
/// the same; it refuses only what prost refuses, and reads keys prost refuses as not UTF-8.
#[test]
fn damaged_records_agree_with_prost() {
    let base = [
        len(1, &maps(&feature_value)[0]),
        len(1, &maps(&feature_value)[6]),
        len(
            1,
            &[entry(b"\xc3", &ints(&[5])), entry(b"b", &floats(&[1.0]))].concat(),
        ),
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut both, mut utf8_only) = (0, 0);
    for round in 0..20_000 {
        let mut bytes = base[round % base.len()].clone();
        for _ in 0..=(next() % 3) {
            let at = usize::try_from(next() % (bytes.len() as u64 + 1)).unwrap_or(0);
            match next() % 4 {
                0 if at < bytes.len() => bytes[at] = (next() & 0xff) as u8,
                1 => bytes.truncate(at),
                2 => bytes.insert(at.min(bytes.len()), (next() & 0xff) as u8),
                _ if at < bytes.len() => bytes[at] ^= 0x80,
                _ => {}
            }
        }
        let ours = Example::decode(&bytes);
        match tensorflow::Example::decode(&bytes[..]) {
            Ok(want) => {
                both += 1;
                assert_eq!(ours.expect("reads what prost reads"), Example::from(want));
            }
            Err(e) => {
                if let Ok(got) = ours {
                    // Only keys that are not UTF-8 may make the difference.
                    assert!(e.to_string().contains("UTF-8"), "{e}: {bytes:02x?}");
                    assert!(got.keys().any(|k| std::str::from_utf8(k).is_err()));
                    utf8_only += 1;
                }
            }
        }
    }
    assert!(
        both > 1000 && utf8_only > 100,
        "{both} read by both, {utf8_only} by ours only"
    );
}
