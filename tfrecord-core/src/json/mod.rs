//! The canonical proto3 JSON mapping of `tensorflow.Example`, `tensorflow.SequenceExample` and
//! `oneflow.OFRecord`: what protobuf's `json_format.MessageToJson` writes and `json_format.Parse`
//! accepts.
//!
//! Output uses lowerCamelCase names, int64 as decimal strings, floats as numbers (the shortest
//! decimal that reads back to the same `f32`, spelled as Python's `repr`) or `"NaN"` /
//! `"Infinity"` / `"-Infinity"`, bytes as standard base64, and omits empty lists and unset
//! fields. Input accepts what `json_format.Parse` accepts: both lowerCamelCase and the original
//! snake_case names, int64 as strings or integral numbers, floats as numbers or strings, strings
//! read as Python reads them (base64 leniently, numbers through `int` and `float`), `[]` or `""`
//! as an empty message, and `null` as "not set"; any other field is an error. Two departures:
//! `±3.4028235e+38`, which `MessageToJson` prints for the float limits, is read as them (Python's
//! `Parse` refuses its own output there, protobuf's C++ parser reads it); and an integral float
//! literal of exactly -2^63 for an int64 (`-9.223372036854775808e18`) is refused, as the integer
//! literals just below int64's minimum that round to the same number are.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::proto::{oneflow, tensorflow};

mod python;
mod scan;
mod to_wire;
mod tree;
mod wire;
pub(crate) mod write;

use tree::Tree;

/// The JSON text written by `write` read back as a value: the one place the mapping is written.
fn value_of(write: impl FnOnce(&mut Vec<u8>)) -> Value {
    let mut out = Vec::new();
    write(&mut out);
    // The writer's output is JSON by construction.
    serde_json::from_slice(&out).unwrap_or(Value::Null)
}

/// The JSON form of one `tensorflow.Feature`.
pub fn tf_feature_to_json(f: &tensorflow::Feature) -> Value {
    value_of(|out| write::tf_feature(out, f))
}

/// The JSON form of a `tensorflow.Example`.
pub fn example_to_json(e: &tensorflow::Example) -> Value {
    value_of(|out| write_example(e, out))
}

/// The JSON form of a `tensorflow.SequenceExample`.
pub fn sequence_example_to_json(e: &tensorflow::SequenceExample) -> Value {
    value_of(|out| write_sequence_example(e, out))
}

/// The JSON form of one `oneflow.Feature`.
pub fn of_feature_to_json(f: &oneflow::Feature) -> Value {
    value_of(|out| write::of_feature(out, f))
}

/// The JSON form of a `oneflow.OFRecord`.
pub fn ofrecord_to_json(r: &oneflow::OfRecord) -> Value {
    value_of(|out| write_ofrecord(r, out))
}

/// Appends the JSON text of a `tensorflow.Example` to `out`: the value protobuf's
/// `MessageToJson` gives, written compactly on one line (map keys sorted, non-ASCII text as it
/// is, floats as Python's `repr` writes them); the text [`example_to_json`] reads, written in one
/// pass without building a value (for output streams of many records).
pub fn write_example(e: &tensorflow::Example, out: &mut Vec<u8>) {
    write::example(out, e.features.as_ref().map(|f| &f.feature));
}

/// Appends the JSON text of a serialized `tensorflow.Example` to `out`, as [`write_example`]
/// writes the decoded record, straight from its wire bytes: for records in the layout
/// TensorFlow's writers give them (one packed run per numeric list, UTF-8 keys, no key twice),
/// without decoding them. Returns `false`, with `out` as it was, for any other record:
/// decode it and use [`write_example`] (or
/// [`bytes_keys::Example::write_json`](crate::proto::bytes_keys::Example::write_json)).
///
/// ```
/// use tfrecord_core::proto::tensorflow::{Example, Feature, Features, Int64List, feature};
/// use tfrecord_core::{Message, json};
///
/// let mut features = Features::default();
/// let ids = feature::Kind::Int64List(Int64List { value: vec![7, -1] });
/// features.feature.insert("ids".into(), Feature { kind: Some(ids) });
/// let example = Example { features: Some(features) };
/// let mut line = Vec::new();
/// assert!(json::write_example_bytes(&example.encode_to_vec(), &mut line));
/// assert_eq!(line, br#"{"features":{"feature":{"ids":{"int64List":{"value":["7","-1"]}}}}}"#);
/// ```
pub fn write_example_bytes(bytes: &[u8], out: &mut Vec<u8>) -> bool {
    wire::example(bytes, out)
}

/// Appends the JSON text of a `tensorflow.SequenceExample` to `out`, as [`write_example`].
pub fn write_sequence_example(e: &tensorflow::SequenceExample, out: &mut Vec<u8>) {
    write::sequence_example(
        out,
        e.context.as_ref().map(|c| &c.feature),
        e.feature_lists.as_ref().map(|l| &l.feature_list),
    );
}

/// Appends the JSON text of a `oneflow.OFRecord` to `out`, as [`write_example`].
pub fn write_ofrecord(r: &oneflow::OfRecord, out: &mut Vec<u8>) {
    write::ofrecord(out, &r.feature);
}

// ---------------------------------------------------------------------------------------------
// Parsing

/// The JSON text (one line) read as a [`Tree`]; a syntax error names its column.
fn tree(text: &str) -> Result<Tree<'_>> {
    serde_json::from_str(text).map_err(|e| {
        let mut s = e.to_string();
        if let Some(i) = s.rfind(" at line ") {
            s.truncate(i);
        }
        Error::json(format!("column {}: not valid JSON: {s}", e.column()))
    })
}

/// Walks the fields of a JSON object, accepting each known field under its lowerCamelCase or
/// original name, and rejecting unknown ones.
fn fields<'a>(
    v: &'a Tree<'a>,
    what: &dyn fmt::Display,
    known: &[(&str, &str)],
) -> Result<impl Iterator<Item = (usize, &'a Tree<'a>)>> {
    // An empty array or string is a message of no fields to json_format.Parse, which walks a
    // message's JSON by iterating it.
    let m: &[(std::borrow::Cow<'a, str>, Tree<'a>)] = match v {
        Tree::Object(m) => m,
        Tree::Array(a) if a.is_empty() => &[],
        Tree::String(s) if s.is_empty() => &[],
        _ => {
            return Err(Error::json(format!(
                "{what}: expected a JSON object, found {}",
                type_name(v)
            )));
        }
    };
    // Every message here has at most five fields: no allocation per object.
    let mut out: [Option<&'a Tree<'a>>; 8] = [None; 8];
    let mut seen = [false; 8];
    for (n, (k, val)) in m.iter().enumerate() {
        let k: &str = k;
        if m[n + 1..].iter().any(|(later, _)| later == k) {
            return Err(twice(what, k));
        }
        let Some(i) = known
            .iter()
            .position(|(camel, orig)| k == *camel || k == *orig)
        else {
            let names: Vec<&str> = known.iter().map(|(c, _)| *c).collect();
            return Err(Error::json(format!(
                "{what}: unknown field {k:?} (expected one of {})",
                names.join(", ")
            )));
        };
        if std::mem::replace(&mut seen[i], true) {
            return Err(Error::json(format!("{what}: field {k:?} given twice")));
        }
        if !val.is_null() {
            out[i] = Some(val);
        }
    }
    Ok(out
        .into_iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (i, v))))
}

fn type_name(v: &Tree<'_>) -> &'static str {
    match v {
        Tree::Null => "null",
        Tree::Bool(_) => "a boolean",
        Tree::Number(_) => "a number",
        Tree::String(_) => "a string",
        Tree::Array(_) => "an array",
        Tree::Object(_) => "an object",
    }
}

fn list_values<'a>(v: &'a Tree<'a>, what: &dyn fmt::Display) -> Result<&'a [Tree<'a>]> {
    let mut values: &[Tree<'a>] = &[];
    for (_, val) in fields(v, what, &[("value", "value")])? {
        match val {
            Tree::Array(a) => values = a,
            other => {
                return Err(Error::json(format!(
                    "{what}.value: expected an array, found {}",
                    type_name(other)
                )));
            }
        }
    }
    Ok(values)
}

fn parse_bytes(v: &Tree<'_>, what: &dyn fmt::Display) -> Result<Vec<u8>> {
    let Tree::String(s) = v else {
        return Err(Error::json(format!(
            "{what}: expected a base64 string, found {}",
            type_name(v)
        )));
    };
    python::base64(s).ok_or_else(|| {
        Error::json(format!(
            "{what}: {} is not valid base64",
            clipped(&format!("{s:?}"))
        ))
    })
}

/// At most [`SHOWN`] characters of a value quoted in an error (a line may hold megabytes of
/// it), and how long it is when cut.
fn clipped(text: &str) -> String {
    match text.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}... ({} bytes in all)", &text[..cut], text.len()),
        None => text.to_owned(),
    }
}

/// How many characters of a value an error quotes.
const SHOWN: usize = 80;

fn parse_int(v: &Tree<'_>, what: &dyn fmt::Display, min: i128, max: i128) -> Result<i128> {
    let parsed: Option<i128> = match v {
        Tree::Number(n) => {
            if let Some(i) = n.as_i64() {
                Some(i128::from(i))
            } else if let Some(u) = n.as_u64() {
                Some(i128::from(u))
            } else {
                // An integral float such as 1e3 or 5.0 is accepted, as json_format does. An
                // integer literal beyond int64 and uint64 arrives here as the float nearest to
                // it: just below int64's minimum that is -2^63 itself, which only such a
                // literal (json_format: out of range) or a float literal of -2^63 can give, so
                // it is refused rather than read as a value the text does not hold.
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 2f64.powi(63))
                    .map(|f| f as i128)
            }
        }
        Tree::String(s) => python::int(s),
        _ => None,
    };
    match parsed {
        Some(i) if (min..=max).contains(&i) => Ok(i),
        Some(i) => Err(Error::json(format!(
            "{what}: {i} is out of range [{min}, {max}]"
        ))),
        None => Err(Error::json(format!(
            "{what}: expected an integer, found {}",
            clipped(&v.to_string())
        ))),
    }
}

fn parse_i64(v: &Tree<'_>, what: &dyn fmt::Display) -> Result<i64> {
    let i = parse_int(v, what, i128::from(i64::MIN), i128::from(i64::MAX))?;
    i64::try_from(i).map_err(|e| Error::json(format!("{what}: {e}")))
}

fn parse_i32(v: &Tree<'_>, what: &dyn fmt::Display) -> Result<i32> {
    let i = parse_int(v, what, i128::from(i32::MIN), i128::from(i32::MAX))?;
    i32::try_from(i).map_err(|e| Error::json(format!("{what}: {e}")))
}

fn parse_double(v: &Tree<'_>, what: &dyn fmt::Display) -> Result<f64> {
    match v {
        Tree::Number(n) => n
            .as_f64()
            .ok_or_else(|| Error::json(format!("{what}: bad number {n}"))),
        Tree::String(s) => python::float(s).ok_or_else(|| {
            Error::json(format!(
                "{what}: {} is not a number",
                clipped(&format!("{s:?}"))
            ))
        }),
        // json_format.Parse passes a boolean to Python's `float`, which reads it as 1 or 0.
        Tree::Bool(b) => Ok(f64::from(u8::from(*b))),
        other => Err(Error::json(format!(
            "{what}: expected a number, found {}",
            type_name(other)
        ))),
    }
}

fn parse_float(v: &Tree<'_>, what: &dyn fmt::Display) -> Result<f32> {
    let d = parse_double(v, what)?;
    // A string is read as Python's `float` and stored into the float field as it is, beyond
    // the range an infinity (json_format checks the range of JSON numbers only).
    if let Tree::String(_) = v {
        #[allow(clippy::cast_possible_truncation)]
        return Ok(d as f32);
    }
    // A finite value that rounds to infinity overflows a float. (Values that round to
    // +-FLT_MAX, such as the 3.4028235e+38 json_format prints for it, are accepted, as
    // protobuf's C++ parser does.)
    crate::feature::narrow_f64(d)
        .ok_or_else(|| Error::json(format!("{what}: {d:e} is too large for a float")))
}

/// `base.name` or `base[key]`, for errors: written only when one is raised.
enum Sub<'a> {
    Field(&'a dyn fmt::Display, &'a str),
    Key(&'a dyn fmt::Display, &'a str),
    Index(&'a dyn fmt::Display, usize),
}

impl fmt::Display for Sub<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sub::Field(base, name) => write!(f, "{base}.{name}"),
            Sub::Key(base, key) => write!(f, "{base}[{key:?}]"),
            Sub::Index(base, i) => write!(f, "{base}[{i}]"),
        }
    }
}

/// Where a list's value is, for errors: written only when one is raised.
struct At<'a> {
    list: &'a dyn fmt::Display,
    index: usize,
}

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.value[{}]", self.list, self.index)
    }
}

fn each<T>(
    values: &[Tree<'_>],
    what: &dyn fmt::Display,
    f: impl Fn(&Tree<'_>, &dyn fmt::Display) -> Result<T>,
) -> Result<Vec<T>> {
    values
        .iter()
        .enumerate()
        .map(|(index, v)| f(v, &At { list: what, index }))
        .collect()
}

/// Parses the JSON form of one `tensorflow.Feature`.
///
/// # Errors
/// When the JSON is not a valid `tensorflow.Feature`.
pub fn tf_feature_from_json(v: &Value, what: &str) -> Result<tensorflow::Feature> {
    tf_feature(&Tree::of(v), &what)
}

fn tf_feature(v: &Tree<'_>, what: &dyn fmt::Display) -> Result<tensorflow::Feature> {
    use tensorflow::feature::Kind;
    let known = [
        ("bytesList", "bytes_list"),
        ("floatList", "float_list"),
        ("int64List", "int64_list"),
    ];
    let kind = one_list(v, what, &known, |i, values, w| {
        Ok(match i {
            0 => Kind::BytesList(tensorflow::BytesList {
                value: each(values, w, parse_bytes)?,
            }),
            1 => Kind::FloatList(tensorflow::FloatList {
                value: each(values, w, parse_float)?,
            }),
            _ => Kind::Int64List(tensorflow::Int64List {
                value: each(values, w, parse_i64)?,
            }),
        })
    })?;
    Ok(tensorflow::Feature { kind })
}

/// The one list of a `Feature`'s oneof `kind` (members `known`, by index), built by `build`
/// from its values; `None` when no member is set.
fn one_list<K>(
    v: &Tree<'_>,
    what: &dyn fmt::Display,
    known: &[(&str, &str)],
    build: impl Fn(usize, &[Tree<'_>], &dyn fmt::Display) -> Result<K>,
) -> Result<Option<K>> {
    let mut kind = None;
    for (i, val) in fields(v, what, known)? {
        if kind.is_some() {
            return Err(Error::json(format!(
                "{what}: more than one member of the oneof `kind` is set"
            )));
        }
        let w = Sub::Field(what, known[i].0);
        kind = Some(build(i, list_values(val, &w)?, &w)?);
    }
    Ok(kind)
}

fn feature_map<T>(
    v: &Tree<'_>,
    what: &dyn fmt::Display,
    f: impl Fn(&Tree<'_>, &dyn fmt::Display) -> Result<T>,
) -> Result<BTreeMap<String, T>> {
    let Tree::Object(m) = v else {
        return Err(Error::json(format!(
            "{what}: expected a JSON object, found {}",
            type_name(v)
        )));
    };
    let mut out = BTreeMap::new();
    for (k, val) in m {
        let value = f(val, &Sub::Key(what, k))?;
        if out.insert(k.to_string(), value).is_some() {
            return Err(twice(what, k));
        }
    }
    Ok(out)
}

/// The error for a key an object holds twice, which protobuf's `json_format.Parse` refuses
/// ("duplicate key"), rather than keep one of the values.
fn twice(what: &dyn fmt::Display, key: &str) -> Error {
    Error::json(format!(
        "{what}: duplicate key {key:?} (protobuf's json_format.Parse refuses it)"
    ))
}

fn tf_features_from_json(v: &Tree<'_>, what: &str) -> Result<tensorflow::Features> {
    let mut out = tensorflow::Features::default();
    for (_, val) in fields(v, &what, &[("feature", "feature")])? {
        out.feature = feature_map(val, &Sub::Field(&what, "feature"), tf_feature)?;
    }
    Ok(out)
}

/// Parses the JSON form of a `tensorflow.Example`.
///
/// # Errors
/// When the JSON is not a valid `tensorflow.Example`; the message names the field.
pub fn example_from_json(v: &Value) -> Result<tensorflow::Example> {
    example_from_tree(&Tree::of(v))
}

/// Parses one line of JSON text as a `tensorflow.Example`, as [`example_from_json`] reads the
/// value, without building a [`Value`] (strings are read in place where they have no escapes).
///
/// # Errors
/// Text that is not JSON, and what [`example_from_json`] refuses.
pub fn example_from_json_str(text: &str) -> Result<tensorflow::Example> {
    example_from_tree(&tree(text)?)
}

fn example_from_tree(v: &Tree<'_>) -> Result<tensorflow::Example> {
    let mut out = tensorflow::Example::default();
    for (_, val) in fields(v, &"Example", &[("features", "features")])? {
        out.features = Some(tf_features_from_json(val, "features")?);
    }
    Ok(out)
}

/// Parses the JSON form of a `tensorflow.SequenceExample`.
///
/// # Errors
/// When the JSON is not a valid `tensorflow.SequenceExample`; the message names the field.
pub fn sequence_example_from_json(v: &Value) -> Result<tensorflow::SequenceExample> {
    sequence_example_from_tree(&Tree::of(v))
}

/// Parses one line of JSON text as a `tensorflow.SequenceExample`, as
/// [`sequence_example_from_json`] reads the value, without building a [`Value`].
///
/// # Errors
/// Text that is not JSON, and what [`sequence_example_from_json`] refuses.
pub fn sequence_example_from_json_str(text: &str) -> Result<tensorflow::SequenceExample> {
    sequence_example_from_tree(&tree(text)?)
}

fn sequence_example_from_tree(v: &Tree<'_>) -> Result<tensorflow::SequenceExample> {
    let mut out = tensorflow::SequenceExample::default();
    let known = [("context", "context"), ("featureLists", "feature_lists")];
    for (i, val) in fields(v, &"SequenceExample", &known)? {
        if i == 0 {
            out.context = Some(tf_features_from_json(val, "context")?);
            continue;
        }
        let mut lists = tensorflow::FeatureLists::default();
        for (_, m) in fields(val, &"featureLists", &[("featureList", "feature_list")])? {
            lists.feature_list = feature_map(m, &"featureLists.featureList", |list, what| {
                let mut fl = tensorflow::FeatureList::default();
                for (_, items) in fields(list, what, &[("feature", "feature")])? {
                    let Tree::Array(items) = items else {
                        return Err(Error::json(format!("{what}.feature: expected an array")));
                    };
                    fl.feature = items
                        .iter()
                        .enumerate()
                        .map(|(i, f)| tf_feature(f, &Sub::Index(&Sub::Field(what, "feature"), i)))
                        .collect::<Result<_>>()?;
                }
                Ok(fl)
            })?;
        }
        out.feature_lists = Some(lists);
    }
    Ok(out)
}

/// Parses the JSON form of one `oneflow.Feature`.
///
/// # Errors
/// When the JSON is not a valid `oneflow.Feature`.
pub fn of_feature_from_json(v: &Value, what: &str) -> Result<oneflow::Feature> {
    of_feature(&Tree::of(v), &what)
}

fn of_feature(v: &Tree<'_>, what: &dyn fmt::Display) -> Result<oneflow::Feature> {
    use oneflow::feature::Kind;
    let known = [
        ("bytesList", "bytes_list"),
        ("floatList", "float_list"),
        ("doubleList", "double_list"),
        ("int32List", "int32_list"),
        ("int64List", "int64_list"),
    ];
    let kind = one_list(v, what, &known, |i, values, w| {
        Ok(match i {
            0 => Kind::BytesList(oneflow::BytesList {
                value: each(values, w, parse_bytes)?,
            }),
            1 => Kind::FloatList(oneflow::FloatList {
                value: each(values, w, parse_float)?,
            }),
            2 => Kind::DoubleList(oneflow::DoubleList {
                value: each(values, w, parse_double)?,
            }),
            3 => Kind::Int32List(oneflow::Int32List {
                value: each(values, w, parse_i32)?,
            }),
            _ => Kind::Int64List(oneflow::Int64List {
                value: each(values, w, parse_i64)?,
            }),
        })
    })?;
    Ok(oneflow::Feature { kind })
}

/// Parses the JSON form of a `oneflow.OFRecord`.
///
/// # Errors
/// When the JSON is not a valid `oneflow.OFRecord`; the message names the field.
pub fn ofrecord_from_json(v: &Value) -> Result<oneflow::OfRecord> {
    ofrecord_from_tree(&Tree::of(v))
}

/// Parses one line of JSON text as a `oneflow.OFRecord`, as [`ofrecord_from_json`] reads the
/// value, without building a [`Value`].
///
/// # Errors
/// Text that is not JSON, and what [`ofrecord_from_json`] refuses.
pub fn ofrecord_from_json_str(text: &str) -> Result<oneflow::OfRecord> {
    ofrecord_from_tree(&tree(text)?)
}

fn ofrecord_from_tree(v: &Tree<'_>) -> Result<oneflow::OfRecord> {
    let mut out = oneflow::OfRecord::default();
    for (_, val) in fields(v, &"OFRecord", &[("feature", "feature")])? {
        out.feature = feature_map(val, &"feature", of_feature)?;
    }
    Ok(out)
}

/// Reads lines of JSON text into serialized records: the bytes [`proto::encode_example`] (and
/// its siblings) write for the message [`example_from_json_str`] (and its siblings) read, and
/// the same errors, but most lines are read straight into the wire bytes, without building the
/// message. Keeps its buffers from one line to the next.
///
/// [`proto::encode_example`]: crate::proto::encode_example
#[derive(Default)]
pub struct LineEncoder {
    bufs: to_wire::Buffers,
}

impl LineEncoder {
    /// An encoder with empty buffers.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the serialized `tensorflow.Example` of one line of JSON text to `out`.
    ///
    /// # Errors
    /// What [`example_from_json_str`] refuses; `out` is then as it was.
    pub fn example(&mut self, text: &str, out: &mut Vec<u8>) -> Result<()> {
        let at = out.len();
        if self.bufs.example(text, out).is_some() {
            return Ok(());
        }
        out.truncate(at);
        let e = example_from_json_str(text)?;
        out.extend_from_slice(&crate::proto::encode_example(&e));
        Ok(())
    }

    /// Appends the serialized `tensorflow.SequenceExample` of one line of JSON text to `out`.
    ///
    /// # Errors
    /// What [`sequence_example_from_json_str`] refuses; `out` is then as it was.
    pub fn sequence_example(&mut self, text: &str, out: &mut Vec<u8>) -> Result<()> {
        let at = out.len();
        if self.bufs.sequence_example(text, out).is_some() {
            return Ok(());
        }
        out.truncate(at);
        let e = sequence_example_from_json_str(text)?;
        out.extend_from_slice(&crate::proto::encode_sequence_example(&e));
        Ok(())
    }

    /// Appends the serialized `oneflow.OFRecord` of one line of JSON text to `out`.
    ///
    /// # Errors
    /// What [`ofrecord_from_json_str`] refuses; `out` is then as it was.
    pub fn ofrecord(&mut self, text: &str, out: &mut Vec<u8>) -> Result<()> {
        let at = out.len();
        if self.bufs.ofrecord(text, out).is_some() {
            return Ok(());
        }
        out.truncate(at);
        let r = ofrecord_from_json_str(text)?;
        out.extend_from_slice(&crate::proto::encode_ofrecord(&r));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A long value in an error is quoted in part, with its length: a line of megabytes does
    /// not become an error of megabytes.
    #[test]
    fn errors_quote_long_values_in_part() {
        let digits = "9".repeat(10_000);
        for (list, value) in [
            ("int64List", format!("\"{digits}x\"")),
            ("floatList", format!("\"{digits}x\"")),
            // Base64 of a length that is not a multiple of 4.
            ("bytesList", format!("\"{digits}9\"")),
        ] {
            let line = format!(
                r#"{{"features":{{"feature":{{"x":{{"{list}":{{"value":[{value}]}}}}}}}}}}"#
            );
            let e = example_from_json_str(&line).expect_err(list).to_string();
            assert!(e.len() < 300, "{list}: {} bytes: {e:.300}", e.len());
            assert!(e.contains("bytes in all)"), "{list}: {e}");
        }
    }

    /// A key given twice in one object is refused, as protobuf's `json_format.Parse` refuses
    /// it ("duplicate key"), on every path a line is read by: the one-pass encoder leaves such
    /// a line to the full reader, which words the error.
    #[test]
    fn a_key_given_twice_is_refused() {
        let lines = [
            (
                r#"{"features":{"feature":{"x":{"int64List":{"value":[1]}},"x":{"floatList":{"value":[2]}}}}}"#,
                "features.feature: duplicate key \"x\"",
            ),
            (
                r#"{"features":{"feature":{}},"features":{"feature":{}}}"#,
                "duplicate key \"features\"",
            ),
            (
                r#"{"features":{"feature":{"x":{"int64List":{"value":[1],"value":[2]}}}}}"#,
                "duplicate key \"value\"",
            ),
        ];
        for (line, want) in lines {
            let e = example_from_json_str(line).expect_err(line).to_string();
            assert!(e.contains(want), "{line}: {e}");
            let mut out = Vec::new();
            let e = LineEncoder::default()
                .example(line, &mut out)
                .expect_err(line)
                .to_string();
            assert!(e.contains(want), "{line}: {e}");
        }
        let of = r#"{"feature":{"k":{"int32List":{"value":[1]}},"k":{"int32List":{"value":[2]}}}}"#;
        let e = ofrecord_from_json_str(of).expect_err(of).to_string();
        assert!(e.contains("duplicate key \"k\""), "{e}");
    }

    /// An integer literal just below int64's minimum rounds to it as a float: refused, as
    /// json_format refuses it ("out of range"), on both paths; int64's own extremes are read.
    #[test]
    fn an_int64_literal_below_the_minimum_is_refused() {
        let line = |v: &str| {
            format!(r#"{{"features":{{"feature":{{"k":{{"int64List":{{"value":[{v}]}}}}}}}}}}"#)
        };
        for v in [
            "-9223372036854775809",
            "-9223372036854775900",
            "-9223372036854776000",
        ] {
            let text = line(v);
            assert!(example_from_json_str(&text).is_err(), "{v}");
            let mut out = Vec::new();
            assert!(
                LineEncoder::default().example(&text, &mut out).is_err(),
                "{v}"
            );
        }
        for v in ["-9223372036854775808", "9223372036854775807", "1e3"] {
            let text = line(v);
            example_from_json_str(&text).expect(v);
        }
    }

    /// Strings as protobuf 7's `json_format.Parse` reads them (each outcome recorded from it in
    /// TensorFlow 2.21's environment): base64 read leniently as Python's `urlsafe_b64decode`
    /// reads it, floats and integers as Python's `float` and `int` read them, `[]` as an empty
    /// message.
    #[test]
    fn strings_are_read_as_json_format_parse_reads_them() {
        let feature = |kind: &str, v: &str| {
            format!(r#"{{"features":{{"feature":{{"k":{{"{kind}":{{"value":[{v}]}}}}}}}}}}"#)
        };
        let read = |line: &str| {
            let e = example_from_json_str(line).ok()?;
            e.features?.feature.get("k")?.kind.clone()
        };
        use tensorflow::feature::Kind;
        let bytes = |v: &str| match read(&feature("bytesList", v)) {
            Some(Kind::BytesList(l)) => Some(l.value.concat()),
            _ => None,
        };
        for (v, want) in [
            (r#""YWJjZA=""#, Some(&b"abcd"[..])),
            (r#""YWJ""#, Some(b"ab")),
            (r#""YW Jj""#, Some(b"abc")),
            (r#""Y\nWJj""#, Some(b"abc")),
            (r#""YWJjZA===""#, Some(b"abcd")),
            (r#""=YWJj""#, Some(b"abc")),
            (r#""!!!!""#, Some(b"")),
            (r#""YWJj-_""#, Some(b"abc\xfb")),
            (r#""Y""#, None),
        ] {
            assert_eq!(bytes(v).as_deref(), want, "{v}");
        }
        let float = |v: &str| match read(&feature("floatList", v)) {
            Some(Kind::FloatList(l)) => l.value.first().copied(),
            _ => None,
        };
        for (v, want) in [
            (r#""inf""#, Some(f32::INFINITY)),
            (r#""+Infinity""#, Some(f32::INFINITY)),
            (r#""Infinity ""#, Some(f32::INFINITY)),
            (r#""1_0""#, Some(10.0)),
            (r#""1e39""#, Some(f32::INFINITY)),
            (r#"" 1.5""#, Some(1.5)),
            ("true", Some(1.0)),
            (r#""nan""#, None),
            (r#""1__0""#, None),
            (r#""0x10""#, None),
            (r#""infinite""#, None),
            ("1e39", None),
        ] {
            assert_eq!(float(v), want, "{v}");
        }
        assert!(float(r#""-NaN""#).is_some_and(f32::is_nan));
        let int = |v: &str| match read(&feature("int64List", v)) {
            Some(Kind::Int64List(l)) => l.value.first().copied(),
            _ => None,
        };
        for (v, want) in [
            (r#""\t1""#, Some(1)),
            (r#""1_000""#, Some(1000)),
            (r#""1e3""#, Some(1000)),
            (r#""1.0""#, Some(1)),
            (r#"" 1""#, None),
            (r#""1 ""#, None),
            (r#""1.5""#, None),
            (r#""1e19""#, None),
            ("true", None),
        ] {
            assert_eq!(int(v), want, "{v}");
        }
        for empty in ["[]", r#""""#] {
            let e = example_from_json_str(empty).expect("an empty message");
            assert_eq!(e, tensorflow::Example::default());
            let features = example_from_json_str(&format!(r#"{{"features":{empty}}}"#));
            let features = features.expect("empty features").features;
            assert_eq!(features, Some(tensorflow::Features::default()));
        }
        let list = read(r#"{"features":{"feature":{"k":{"int64List":""}}}}"#);
        assert_eq!(
            list,
            Some(Kind::Int64List(tensorflow::Int64List::default()))
        );
        assert!(
            example_from_json_str(r#"{"features":{"feature":[]}}"#).is_err(),
            "a map"
        );
    }

    #[test]
    fn example_roundtrip_and_shape() {
        let v = json!({"features": {"feature": {
            "a": {"int64List": {"value": ["-9223372036854775808", "9223372036854775807"]}},
            "b": {"floatList": {"value": [0.1, "NaN", "-Infinity", -0.0]}},
            "c": {"bytesList": {"value": ["aGk="]}},
            "d": {"floatList": {}},
            "e": {}
        }}});
        let e = example_from_json(&v).unwrap();
        let back = example_to_json(&e);
        assert_eq!(
            back["features"]["feature"]["a"],
            v["features"]["feature"]["a"]
        );
        assert_eq!(
            back["features"]["feature"]["b"]["floatList"]["value"][0],
            json!(0.1)
        );
        assert_eq!(
            back["features"]["feature"]["b"]["floatList"]["value"][1],
            json!("NaN")
        );
        assert_eq!(
            back["features"]["feature"]["c"],
            v["features"]["feature"]["c"]
        );
        assert_eq!(back["features"]["feature"]["d"], json!({"floatList": {}}));
        assert_eq!(back["features"]["feature"]["e"], json!({}));
        let neg_zero = &e.features.unwrap().feature["b"];
        let Some(tensorflow::feature::Kind::FloatList(l)) = &neg_zero.kind else {
            panic!()
        };
        assert_eq!(l.value[3].to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    fn snake_case_and_bad_input() {
        let e = example_from_json(
            &json!({"features": {"feature": {"x": {"int64_list": {"value": [3]}}}}}),
        );
        assert!(e.is_ok());
        let err = example_from_json(
            &json!({"features": {"feature": {"x": {"int64List": {"value": ["x"]}}}}}),
        );
        assert!(err.unwrap_err().to_string().contains("expected an integer"));
        let err = example_from_json(&json!({"feature": {}}));
        assert!(err.unwrap_err().to_string().contains("unknown field"));
        let err = example_from_json(
            &json!({"features": {"feature": {"x": {"floatList": {"value": [1e39]}}}}}),
        );
        assert!(err.unwrap_err().to_string().contains("too large"));
    }

    #[test]
    fn ofrecord_int32_range() {
        let ok =
            ofrecord_from_json(&json!({"feature": {"i": {"int32List": {"value": [2147483647]}}}}));
        assert!(ok.is_ok());
        let bad = ofrecord_from_json(
            &json!({"feature": {"i": {"int32List": {"value": [2147483648i64]}}}}),
        );
        assert!(bad.is_err());
    }
}
