//! The JSON text of a `tensorflow.Example` written straight from its wire bytes, for records
//! in the layout TensorFlow's writers give them: one `features` field, each map entry a key
//! (UTF-8) then a value (either left out when empty), each `Feature` one list, each numeric list one packed run, no key
//! twice. Nothing is decoded into messages and nothing allocated but the output and the list
//! of entries. Any other record is left to the writer of decoded messages
//! ([`write`](super::write)), whose text this equals byte for byte.

use super::write;
use crate::codec::wire::{Fields, Value, get_varint};

/// Appends the JSON text of the serialized `tensorflow.Example` `bytes` to `out` when the
/// record is in the layout this reads; `false`, with `out` as it was, otherwise.
pub(crate) fn example(bytes: &[u8], out: &mut Vec<u8>) -> bool {
    let start = out.len();
    let written = write_example(bytes, out).is_some();
    if !written {
        out.truncate(start);
    }
    written
}

fn write_example(bytes: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let mut top = Fields::new(bytes);
    let Some((1, Value::Len(features))) = top.next_field().ok()? else {
        return None;
    };
    if top.remaining() != 0 {
        return None;
    }
    let mut entries: Vec<(&str, &[u8])> = Vec::with_capacity(64);
    let mut fields = Fields::new(features);
    while let Some(field) = fields.next_field().ok()? {
        let (1, Value::Len(entry)) = field else {
            return None;
        };
        // The key, then the value; a writer may leave out either when it is empty.
        let mut e = Fields::new(entry);
        let mut next = e.next_field().ok()?;
        let mut key: &[u8] = &[];
        if let Some((1, Value::Len(k))) = next {
            key = k;
            next = e.next_field().ok()?;
        }
        let mut value: &[u8] = &[];
        if let Some((2, Value::Len(v))) = next {
            value = v;
            next = e.next_field().ok()?;
        }
        if next.is_some() {
            return None;
        }
        entries.push((std::str::from_utf8(key).ok()?, value));
    }
    if entries.is_empty() {
        return None;
    }
    // Byte order of UTF-8 keys is the order of the strings, as the decoded writer orders them.
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    if entries.windows(2).any(|w| w[0].0 == w[1].0) {
        return None;
    }
    out.extend_from_slice(b"{\"features\":{\"feature\":{");
    for (i, (key, value)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write::string(out, key);
        out.push(b':');
        feature(value, out)?;
    }
    out.extend_from_slice(b"}}}");
    Some(())
}

/// One `Feature`: no list (`{}`), or one list.
fn feature(body: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let mut f = Fields::new(body);
    let Some((kind, Value::Len(list))) = f.next_field().ok()? else {
        return body.is_empty().then(|| out.extend_from_slice(b"{}"));
    };
    if f.remaining() != 0 {
        return None;
    }
    match kind {
        1 => bytes_list(list, out),
        2 => float_list(list, out),
        3 => int64_list(list, out),
        _ => None,
    }
}

/// `{"<name>":{"value":[` (or `{"<name>":{` for no values), `each` writing the values, then
/// the closing brackets; `each` says how many it wrote.
fn list(
    out: &mut Vec<u8>,
    name: &[u8],
    each: impl FnOnce(&mut Vec<u8>) -> Option<usize>,
) -> Option<()> {
    out.extend_from_slice(b"{\"");
    out.extend_from_slice(name);
    out.extend_from_slice(b"\":{\"value\":[");
    let open = out.len();
    if each(out)? == 0 {
        // `"value":[` again off: an empty list has no member.
        out.truncate(open - b"\"value\":[".len());
    } else {
        out.push(b']');
    }
    out.extend_from_slice(b"}}");
    Some(())
}

fn bytes_list(body: &[u8], out: &mut Vec<u8>) -> Option<()> {
    list(out, b"bytesList", |out| {
        let mut f = Fields::new(body);
        let mut n = 0;
        while let Some(field) = f.next_field().ok()? {
            let (1, Value::Len(v)) = field else {
                return None;
            };
            if n > 0 {
                out.push(b',');
            }
            write::base64(out, v);
            n += 1;
        }
        Some(n)
    })
}

/// The one packed run of a numeric list (empty for a list without values).
fn packed(body: &[u8]) -> Option<&[u8]> {
    if body.is_empty() {
        return Some(body);
    }
    let mut f = Fields::new(body);
    match f.next_field().ok()? {
        Some((1, Value::Len(run))) if f.remaining() == 0 => Some(run),
        _ => None,
    }
}

fn float_list(body: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let run = packed(body)?;
    let (values, []) = run.as_chunks::<4>() else {
        return None;
    };
    list(out, b"floatList", |out| {
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write::float(out, f32::from_le_bytes(*v));
        }
        Some(values.len())
    })
}

fn int64_list(body: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let mut run = packed(body)?;
    list(out, b"int64List", |out| {
        let mut n = 0;
        while !run.is_empty() {
            if n > 0 {
                out.push(b',');
            }
            // An int64 is the varint's 64 bits, two's complement.
            #[allow(clippy::cast_possible_wrap)]
            write::int64(out, get_varint(&mut run).ok()? as i64);
            n += 1;
        }
        Some(n)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;
    use crate::proto::{bytes_keys, tensorflow};
    use proptest::prelude::*;

    /// The text of the decoding writer, when the record decodes and has no key its JSON
    /// form cannot tell apart from another.
    fn decoded(bytes: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        bytes_keys::Example::decode(bytes)
            .ok()?
            .write_json(&mut out)
            .ok()?;
        Some(out)
    }

    /// Writes `bytes` after a prefix: the prefix is kept, and whatever is written after it
    /// is the decoding writer's text.
    fn agrees(bytes: &[u8]) -> std::result::Result<bool, TestCaseError> {
        let mut out = b"prefix".to_vec();
        let written = example(bytes, &mut out);
        prop_assert!(out.starts_with(b"prefix"));
        if written {
            let want = decoded(bytes);
            prop_assert!(want.is_some(), "written, but the record does not decode");
            let want = want.unwrap_or_default();
            prop_assert_eq!(
                String::from_utf8_lossy(&out[6..]),
                String::from_utf8_lossy(&want)
            );
        } else {
            prop_assert_eq!(&out[..], b"prefix");
        }
        Ok(written)
    }

    fn examples() -> impl Strategy<Value = tensorflow::Example> {
        crate::proto::strategies::examples("[a-z/\"\\\\é\u{1F600} ]{0,4}", 1..6)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Records as TensorFlow's writers lay them out are written from their bytes, as
        /// the decoding writer writes them.
        #[test]
        fn canonical_records_are_written_as_decoded(e in examples()) {
            prop_assert!(agrees(&e.encode_to_vec())?, "a canonical record was passed over");
        }

        /// Whatever the bytes (damaged, reordered, truncated), what is written is what the
        /// decoding writer writes, or nothing.
        #[test]
        fn any_bytes_are_written_as_decoded_or_not_at_all(
            e in examples(),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..3),
            cut in any::<usize>(),
        ) {
            let mut bytes = e.encode_to_vec();
            let n = bytes.len();
            for (at, x) in flips {
                bytes[at % n] ^= x;
            }
            bytes.truncate(cut % (n + 1));
            agrees(&bytes)?;
        }
    }

    /// Layouts protobuf merges that TensorFlow's writers never give are left to the decoding
    /// writer, which merges them.
    #[test]
    fn other_layouts_are_left_to_the_decoding_writer() {
        let entry = |key: &[u8], feature: &[u8]| {
            let mut e = vec![0x0a, key.len() as u8];
            e.extend_from_slice(key);
            e.extend_from_slice(&[0x12, feature.len() as u8]);
            e.extend_from_slice(feature);
            e
        };
        let record = |entries: &[Vec<u8>]| {
            let mut features = Vec::new();
            for e in entries {
                features.extend_from_slice(&[0x0a, e.len() as u8]);
                features.extend_from_slice(e);
            }
            let mut out = vec![0x0a, features.len() as u8];
            out.extend_from_slice(&features);
            out
        };
        let ints = |list: &[u8]| {
            let mut f = vec![0x1a, list.len() as u8];
            f.extend_from_slice(list);
            f
        };
        for (what, bytes) in [
            (
                "unpacked ints",
                record(&[entry(b"a", &ints(&[0x08, 1, 0x08, 2]))]),
            ),
            (
                "a packed run in two",
                record(&[entry(b"a", &ints(&[0x0a, 1, 1, 0x0a, 1, 2]))]),
            ),
            (
                "a key twice",
                record(&[
                    entry(b"a", &ints(&[0x0a, 1, 1])),
                    entry(b"a", &ints(&[0x0a, 1, 2])),
                ]),
            ),
            (
                "a key not UTF-8",
                record(&[entry(b"\xff", &ints(&[0x0a, 1, 1]))]),
            ),
            ("no features", Vec::new()),
        ] {
            let mut out = Vec::new();
            assert!(!example(&bytes, &mut out), "{what}");
            assert!(out.is_empty(), "{what}");
            assert!(
                decoded(&bytes).is_some(),
                "{what}: the decoding writer writes it"
            );
        }
    }
}
