//! Writing the proto3 JSON mapping straight into a byte buffer, one pass over the message and no
//! tree of values: the value protobuf's `MessageToJson` gives, written compactly (object members
//! in key order, non-ASCII text as it is, floats as Python's `repr`); the
//! [`Value`](serde_json::Value)s of [`example_to_json`](super::example_to_json) and its siblings
//! are read back from it.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::proto::{oneflow, tensorflow};

/// Appends `s` as a JSON string, escaped as `serde_json` escapes it.
pub(super) fn string(out: &mut Vec<u8>, s: &str) {
    // Writing into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// Appends a finite `f64` as protobuf's `MessageToJson` writes it: Python's `repr`
/// ([`python_repr`](crate::text::python_repr)).
fn number(out: &mut Vec<u8>, v: f64) {
    crate::text::python_repr(out, v);
}

/// A non-finite float as the proto3 JSON mapping writes it; `None` when `v` is finite.
fn special(v: f64) -> Option<&'static [u8]> {
    if v.is_nan() {
        Some(b"\"NaN\"")
    } else if v.is_infinite() {
        Some(if v > 0.0 {
            b"\"Infinity\""
        } else {
            b"\"-Infinity\""
        })
    } else {
        None
    }
}

pub(super) fn float(out: &mut Vec<u8>, v: f32) {
    match special(f64::from(v)) {
        Some(s) => out.extend_from_slice(s),
        None => crate::text::python_repr_f32(out, v),
    }
}

fn double(out: &mut Vec<u8>, v: f64) {
    match special(v) {
        Some(s) => out.extend_from_slice(s),
        None => number(out, v),
    }
}

pub(super) fn base64(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    let start = out.len();
    out.resize(start + bytes.len().div_ceil(3) * 4, 0);
    let n = STANDARD
        .encode_slice(bytes, &mut out[start..])
        .unwrap_or_default();
    out.truncate(start + n);
    out.push(b'"');
}

/// `{"<name>":{"value":[...]}}`, or `{"<name>":{}}` for an empty list.
fn list<T>(out: &mut Vec<u8>, name: &str, values: &[T], mut each: impl FnMut(&mut Vec<u8>, &T)) {
    out.extend_from_slice(b"{\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":{");
    if !values.is_empty() {
        out.extend_from_slice(b"\"value\":[");
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            each(out, v);
        }
        out.push(b']');
    }
    out.extend_from_slice(b"}}");
}

pub(super) fn int64(out: &mut Vec<u8>, v: i64) {
    out.push(b'"');
    let _ = serde_json::to_writer(&mut *out, &v);
    out.push(b'"');
}

/// One `tensorflow.Feature`.
pub(crate) fn tf_feature(out: &mut Vec<u8>, f: &tensorflow::Feature) {
    use tensorflow::feature::Kind;
    match &f.kind {
        None => out.extend_from_slice(b"{}"),
        Some(Kind::BytesList(l)) => list(out, "bytesList", &l.value, |o, b| base64(o, b)),
        Some(Kind::FloatList(l)) => list(out, "floatList", &l.value, |o, &v| float(o, v)),
        Some(Kind::Int64List(l)) => list(out, "int64List", &l.value, |o, &v| int64(o, v)),
    }
}

/// One `oneflow.Feature`.
pub(crate) fn of_feature(out: &mut Vec<u8>, f: &oneflow::Feature) {
    use oneflow::feature::Kind;
    match &f.kind {
        None => out.extend_from_slice(b"{}"),
        Some(Kind::BytesList(l)) => list(out, "bytesList", &l.value, |o, b| base64(o, b)),
        Some(Kind::FloatList(l)) => list(out, "floatList", &l.value, |o, &v| float(o, v)),
        Some(Kind::DoubleList(l)) => list(out, "doubleList", &l.value, |o, &v| double(o, v)),
        Some(Kind::Int32List(l)) => list(out, "int32List", &l.value, |o, &v| {
            let _ = serde_json::to_writer(&mut *o, &v);
        }),
        Some(Kind::Int64List(l)) => list(out, "int64List", &l.value, |o, &v| int64(o, v)),
    }
}

/// A map as a JSON object in key order, each value by `each`. A key that is not UTF-8 is
/// written in its text format escape ([`c_escape`](crate::text::c_escape)), and the members are
/// then ordered by what is written, as a JSON object's members are.
pub(crate) fn map<K: AsRef<[u8]>, V>(
    out: &mut Vec<u8>,
    map: &BTreeMap<K, V>,
    mut each: impl FnMut(&mut Vec<u8>, &V),
) {
    out.push(b'{');
    if map.keys().all(|k| std::str::from_utf8(k.as_ref()).is_ok()) {
        // Byte order of UTF-8 keys is the order of the strings.
        for (i, (k, v)) in map.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            string(out, std::str::from_utf8(k.as_ref()).unwrap_or_default());
            out.push(b':');
            each(out, v);
        }
    } else {
        let mut shown: Vec<(String, &V)> = map
            .iter()
            .map(|(k, v)| (crate::text::shown_key(k.as_ref()), v))
            .collect();
        shown.sort_by(|a, b| a.0.cmp(&b.0));
        for (i, (k, v)) in shown.into_iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            string(out, &k);
            out.push(b':');
            each(out, v);
        }
    }
    out.push(b'}');
}

/// A `tensorflow.Features` message: `{"feature":{...}}`, or `{}` without features.
fn features<K: AsRef<[u8]>>(out: &mut Vec<u8>, f: &BTreeMap<K, tensorflow::Feature>) {
    if f.is_empty() {
        out.extend_from_slice(b"{}");
    } else {
        out.extend_from_slice(b"{\"feature\":");
        map(out, f, tf_feature);
        out.push(b'}');
    }
}

/// A `tensorflow.Example` with these features (`None`: no `features` field).
pub(crate) fn example<K: AsRef<[u8]>>(
    out: &mut Vec<u8>,
    f: Option<&BTreeMap<K, tensorflow::Feature>>,
) {
    match f {
        None => out.extend_from_slice(b"{}"),
        Some(f) => {
            out.extend_from_slice(b"{\"features\":");
            features(out, f);
            out.push(b'}');
        }
    }
}

/// A `tensorflow.SequenceExample` with this context and these feature lists (`None`: the
/// field is not set).
pub(crate) fn sequence_example<K: AsRef<[u8]>, L: AsRef<[u8]>>(
    out: &mut Vec<u8>,
    context: Option<&BTreeMap<K, tensorflow::Feature>>,
    lists: Option<&BTreeMap<L, tensorflow::FeatureList>>,
) {
    out.push(b'{');
    if let Some(c) = context {
        out.extend_from_slice(b"\"context\":");
        features(out, c);
    }
    if let Some(l) = lists {
        if context.is_some() {
            out.push(b',');
        }
        out.extend_from_slice(b"\"featureLists\":");
        if l.is_empty() {
            out.extend_from_slice(b"{}");
        } else {
            out.extend_from_slice(b"{\"featureList\":");
            map(out, l, |out, list| {
                if list.feature.is_empty() {
                    out.extend_from_slice(b"{}");
                } else {
                    out.extend_from_slice(b"{\"feature\":[");
                    for (i, f) in list.feature.iter().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        tf_feature(out, f);
                    }
                    out.extend_from_slice(b"]}");
                }
            });
            out.push(b'}');
        }
    }
    out.push(b'}');
}

/// A `oneflow.OFRecord` with these features: `{"feature":{...}}`, or `{}`.
pub(crate) fn ofrecord<K: AsRef<[u8]>>(out: &mut Vec<u8>, f: &BTreeMap<K, oneflow::Feature>) {
    if f.is_empty() {
        out.extend_from_slice(b"{}");
    } else {
        out.extend_from_slice(b"{\"feature\":");
        map(out, f, of_feature);
        out.push(b'}');
    }
}

#[cfg(test)]
mod tests {
    /// Floats as protobuf 7's `MessageToJson` (Python's `repr`) wrote them for a
    /// `tf.train.Example` with these values in TensorFlow 2.21's environment.
    #[test]
    fn floats_are_written_as_message_to_json_writes_them() {
        let recorded = [
            (1e16, "1e+16"),
            (1e-5, "1e-05"),
            (2.5e-5, "2.5e-05"),
            (1e-6, "1e-06"),
            (1e-4, "0.0001"),
            (0.000_123_4, "0.0001234"),
            (1.234_567_8e20, "1.2345678e+20"),
            (3.402_823_5e38, "3.4028235e+38"),
            (1.401_3e-45, "1.4013e-45"),
            (123_456.7, "123456.7"),
            (1_234_567.0, "1234567.0"),
            (1e15, "1000000000000000.0"),
            (1.234_567_8e16, "1.2345678e+16"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            // Doubles (an OFRecord's `double_list`), as Python's `repr` writes them.
            (8.977_909_862_605_46e-5, "8.97790986260546e-05"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (-123_456_789.012_345_6, "-123456789.0123456"),
        ];
        for (v, want) in recorded {
            let mut out = Vec::new();
            super::number(&mut out, v);
            assert_eq!(String::from_utf8_lossy(&out), want, "{v:e}");
        }
    }
}
