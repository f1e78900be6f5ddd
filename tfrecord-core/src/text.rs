//! The protobuf text format of records, as protobuf's `text_format.MessageToString(message,
//! as_utf8=True)` writes it (what `print(example)` shows with protobuf's pure-Python
//! implementation): two-space indents, map entries sorted by key, keys in UTF-8, bytes
//! C-escaped with octal escapes for non-printable and non-ASCII bytes, floats in Python's
//! shortest `repr`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::proto::{oneflow, tensorflow};

/// Escapes bytes as protobuf's text format writes a `string` or `bytes` value between its
/// quotes (Python's `text_encoding.CEscape(.., as_utf8=False)`, C++'s `CEscape`): `\n`, `\r`,
/// `\t`, `\"`, `\'` and `\\`, printable ASCII as is, and every other byte, including each
/// byte of a non-ASCII UTF-8 character and bytes that are not UTF-8, as a three-digit octal
/// escape (`\377`).
///
/// ```
/// assert_eq!(tfrecord_core::text::c_escape(b"a\"\n\xff"), "a\\\"\\n\\377");
/// ```
pub fn c_escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        match (named_escape(char::from(b)), b) {
            (Some(e), _) => out.push_str(e),
            (None, 32..=126) => out.push(char::from(b)),
            (None, _) => {
                let _ = write!(out, "\\{b:03o}");
            }
        }
    }
    out
}

/// The escapes both text forms write by name: `\n`, `\r`, `\t`, `\"`, `\'` and `\\`.
fn named_escape(c: char) -> Option<&'static str> {
    Some(match c {
        '\n' => "\\n",
        '\r' => "\\r",
        '\t' => "\\t",
        '"' => "\\\"",
        '\'' => "\\'",
        '\\' => "\\\\",
        _ => return None,
    })
}

/// Escapes a `string` field's text as Python's text format writes it (`MessageToString`, whose
/// `as_utf8` is on by default since protobuf 5): `\n`, `\r`, `\t`, `\"`, `\'` and `\\`, other
/// control characters and DEL as three-digit octal escapes, and every other character as is,
/// non-ASCII ones included.
fn utf8_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match (named_escape(c), c) {
            (Some(e), _) => out.push_str(e),
            (None, '\0'..='\x1f' | '\x7f') => {
                let _ = write!(out, "\\{:03o}", u32::from(c));
            }
            (None, c) => out.push(c),
        }
    }
    out
}

/// A map key (a `string` field) in the text format: [`utf8_escape`]d when it is UTF-8, else
/// every byte [`c_escape`]d.
fn key_text(key: &[u8]) -> String {
    match std::str::from_utf8(key) {
        Ok(s) => utf8_escape(s),
        Err(_) => c_escape(key),
    }
}

/// A feature key as text: the key itself when it is UTF-8, else its [`c_escape`]d form.
pub(crate) fn shown_key(key: &[u8]) -> String {
    match std::str::from_utf8(key) {
        Ok(s) => s.to_string(),
        Err(_) => c_escape(key),
    }
}

/// Appends Python's `repr` of a finite `f64` (what protobuf's `MessageToJson` and `text_format`
/// print for it): the shortest decimal that reads back as `v`, in positional notation (`1.0`
/// for an integral value) when its decimal exponent is from -4 to 15, else in scientific
/// notation with a sign and at least two exponent digits (`1e-05`, `1.5e+16`).
pub(crate) fn python_repr(out: &mut Vec<u8>, v: f64) {
    let mut text = [0u8; 32];
    let len = shortest_text(&mut text, &v);
    repr_of_shortest(out, &text[..len]);
}

/// Appends Python's `repr` of the `f64` nearest to a finite `f32`'s [`shortest_float`], as
/// protobuf's Python runtime shows a `float` field's value.
pub(crate) fn python_repr_f32(out: &mut Vec<u8>, v: f32) {
    if off_power_of_two(v) {
        // The `f32`'s shortest round-trip decimal is `shortest_float`'s value, whose own
        // shortest decimal as an `f64` has the same digits: written from the `f32`'s text
        // without reading it back.
        let mut text = [0u8; 32];
        let len = shortest_text(&mut text, &v);
        repr_of_shortest(out, &text[..len]);
    } else {
        python_repr(out, shortest_float(v));
    }
}

/// Writes the shortest round-trip decimal of `v` into `buf` as `serde_json` prints it (ryū):
/// `[-]ddd.ddd` or `[-]d[.ddd]e[+-]dd`, at most 24 bytes; returns its length.
fn shortest_text<T: serde::Serialize>(buf: &mut [u8; 32], v: &T) -> usize {
    let mut w = &mut buf[..];
    let _ = serde_json::to_writer(&mut w, v);
    32 - w.len()
}

/// A normal float that is not a power of two: one whose rounding interval is symmetric and
/// narrower than the gap between decimals of 6 digits (see [`shortest_float`]).
fn off_power_of_two(v: f32) -> bool {
    let (exponent, mantissa) = ((v.to_bits() >> 23) & 0xff, v.to_bits() & 0x007f_ffff);
    exponent != 0 && exponent != 0xff && mantissa != 0
}

/// Appends Python's `repr` of the number whose shortest round-trip decimal is `text`, in
/// `serde_json`'s spelling: the same text when it is positional and its first significant
/// digit is at most 4 places after the point (`123.5`, `1.0`, `0.0001`), else respelled from
/// its significant digits and the decimal exponent of the first.
fn repr_of_shortest(out: &mut Vec<u8>, text: &[u8]) {
    use std::io::Write as _;
    let unsigned = text.strip_prefix(b"-").unwrap_or(text);
    let scientific = text.iter().any(|&b| b == b'e' || b == b'E');
    if !scientific && !unsigned.starts_with(b"0.0000") {
        out.extend_from_slice(text);
        return;
    }
    let (negative, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let at_e = text.iter().position(|&b| b == b'e' || b == b'E');
    let (mantissa, exp_text) = match at_e {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, &b""[..]),
    };
    let point = mantissa
        .iter()
        .position(|&b| b == b'.')
        .unwrap_or(mantissa.len());
    let mut digits = [0u8; 32];
    let mut n = 0;
    for &b in mantissa.iter().filter(|b| b.is_ascii_digit()) {
        if let Some(d) = digits.get_mut(n) {
            *d = b;
            n += 1;
        }
    }
    let leading = digits[..n].iter().take_while(|&&d| d == b'0').count();
    let exp_shift: i32 = std::str::from_utf8(exp_text)
        .ok()
        .and_then(|e| e.trim_start_matches('+').parse().ok())
        .unwrap_or(0);
    let (digits, exp) = if leading == n {
        (&b"0"[..], 0)
    } else {
        let significant = &digits[leading..n];
        let trailing = significant.iter().rev().take_while(|&&d| d == b'0').count();
        let whole = i32::try_from(point).unwrap_or(0);
        let skipped = i32::try_from(leading).unwrap_or(0);
        (
            &significant[..significant.len() - trailing],
            whole - 1 - skipped + exp_shift,
        )
    };
    if negative {
        out.push(b'-');
    }
    match usize::try_from(exp) {
        // Positional: the digits, the point after the exponent's place.
        Ok(e) if e < 16 => {
            let whole = e + 1;
            if digits.len() <= whole {
                out.extend_from_slice(digits);
                out.resize(out.len() + whole - digits.len(), b'0');
                out.extend_from_slice(b".0");
            } else {
                out.extend_from_slice(&digits[..whole]);
                out.push(b'.');
                out.extend_from_slice(&digits[whole..]);
            }
        }
        Err(_) if exp >= -4 => {
            out.extend_from_slice(b"0.");
            out.resize(out.len() + exp.unsigned_abs() as usize - 1, b'0');
            out.extend_from_slice(digits);
        }
        _ => {
            out.extend_from_slice(&digits[..1]);
            if digits.len() > 1 {
                out.push(b'.');
                out.extend_from_slice(&digits[1..]);
            }
            let sign = if exp < 0 { '-' } else { '+' };
            let _ = write!(out, "e{sign}{:02}", exp.unsigned_abs());
        }
    }
}

/// The value protobuf's Python runtime shows for a `float` field (`ToShortestFloat`): the
/// decimal with the fewest significant digits, but at least 6, that reads back as the same
/// `f32`, rounded half to even, as an `f64`. `json_format` and `text_format` both print it.
pub(crate) fn shortest_float(v: f32) -> f64 {
    // For a normal float off a power of two, the rounding interval of `v` is symmetric and
    // narrower than the gap between decimals of 6 digits, and the shortest round-trip decimal
    // (Ryu's, which `serde_json` prints for an `f32`) is that decimal: with 6 digits or fewer
    // it is the only decimal of 6 digits within half an ulp of `v`, and with more it is the
    // nearest decimal of its length, which is what rounding gives. At a power of two the
    // interval is lopsided, and a subnormal's is wide: those (and zero, infinity and NaN) are
    // rounded at each precision in turn.
    if off_power_of_two(v) {
        let mut buf = [0u8; 32];
        let n = shortest_text(&mut buf, &v);
        if let Some(d) = std::str::from_utf8(&buf[..n])
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
        {
            return d;
        }
    }
    shortest_float_by_rounding(v)
}

/// [`shortest_float`] found by rounding `v` to 6, 7, 8 and 9 significant digits until one
/// reads back as `v`.
fn shortest_float_by_rounding(v: f32) -> f64 {
    use std::io::Write as _;
    let wide = f64::from(v);
    // A decimal of up to 9 significant digits and its exponent fit in 32 bytes: formatted on
    // the stack.
    let mut buf = [0u8; 32];
    for precision in 6..=9usize {
        let mut cursor = std::io::Cursor::new(&mut buf[..]);
        if write!(cursor, "{:.*e}", precision - 1, wide).is_err() {
            break;
        }
        let n = usize::try_from(cursor.position()).unwrap_or(0);
        let Ok(s) = std::str::from_utf8(&buf[..n]) else {
            break;
        };
        if let Ok(back) = s.parse::<f32>()
            && back.to_bits() == v.to_bits()
        {
            return s.parse::<f64>().unwrap_or(wide);
        }
    }
    wide
}

/// Python's `str()` of a `float` field value (see [`shortest_float`]), with `nan`, `inf` and
/// `-inf`.
pub(crate) fn format_float(v: f32) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        let mut out = Vec::with_capacity(24);
        python_repr_f32(&mut out, v);
        String::from_utf8(out).unwrap_or_default()
    }
}

/// [`python_repr`] as a `String`.
fn repr_string(v: f64) -> String {
    let mut out = Vec::with_capacity(24);
    python_repr(&mut out, v);
    String::from_utf8(out).unwrap_or_default()
}

/// Python's `repr()` of a `double` field value, with `nan`, `inf` and `-inf`.
pub(crate) fn format_double(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        repr_string(v)
    }
}

struct Printer {
    out: String,
    depth: usize,
}

impl Printer {
    fn line(&mut self, s: &str) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn open(&mut self, name: &str) {
        self.line(&format!("{name} {{"));
        self.depth += 1;
    }

    fn close(&mut self) {
        self.depth -= 1;
        self.line("}");
    }

    fn list<T>(&mut self, name: &str, values: &[T], f: impl Fn(&T) -> String) {
        self.open(name);
        for v in values {
            self.line(&format!("value: {}", f(v)));
        }
        self.close();
    }

    fn tf_feature(&mut self, f: &tensorflow::Feature) {
        use tensorflow::feature::Kind;
        match &f.kind {
            None => {}
            Some(Kind::BytesList(l)) => {
                self.list("bytes_list", &l.value, |b| format!("\"{}\"", c_escape(b)));
            }
            Some(Kind::FloatList(l)) => self.list("float_list", &l.value, |&v| format_float(v)),
            Some(Kind::Int64List(l)) => self.list("int64_list", &l.value, ToString::to_string),
        }
    }

    fn of_feature(&mut self, f: &oneflow::Feature) {
        use oneflow::feature::Kind;
        match &f.kind {
            None => {}
            Some(Kind::BytesList(l)) => {
                self.list("bytes_list", &l.value, |b| format!("\"{}\"", c_escape(b)));
            }
            Some(Kind::FloatList(l)) => self.list("float_list", &l.value, |&v| format_float(v)),
            Some(Kind::DoubleList(l)) => self.list("double_list", &l.value, |&v| format_double(v)),
            Some(Kind::Int32List(l)) => self.list("int32_list", &l.value, ToString::to_string),
            Some(Kind::Int64List(l)) => self.list("int64_list", &l.value, ToString::to_string),
        }
    }

    /// A map entry: `proto2` for a map of a proto2 message (`oneflow.OFRecord`), whose entry
    /// fields are always present.
    fn entry(&mut self, name: &str, key: &[u8], proto2: bool, body: impl FnOnce(&mut Self)) {
        self.open(name);
        // A map entry is a message: in proto3 its fields at their default are not printed
        // (protobuf's `MessageToString` leaves out an empty key); in proto2 both are set.
        if proto2 || !key.is_empty() {
            self.line(&format!("key: \"{}\"", key_text(key)));
        }
        self.open("value");
        body(self);
        self.close();
        self.close();
    }

    fn tf_features<K: AsRef<[u8]>>(&mut self, name: &str, fs: &BTreeMap<K, tensorflow::Feature>) {
        self.open(name);
        for (k, f) in fs {
            self.entry("feature", k.as_ref(), false, |p| p.tf_feature(f));
        }
        self.close();
    }
}

/// The text format of a `tensorflow.Example` with these features (`None`: no `features`
/// field), keys as bytes.
pub(crate) fn example_text<K: AsRef<[u8]>>(
    features: Option<&BTreeMap<K, tensorflow::Feature>>,
) -> String {
    let mut p = Printer {
        out: String::new(),
        depth: 0,
    };
    if let Some(f) = features {
        p.tf_features("features", f);
    }
    p.out
}

/// The text format of a `tensorflow.SequenceExample` with this context and these feature
/// lists (`None`: the field is not set), keys as bytes.
pub(crate) fn sequence_example_text<K: AsRef<[u8]>, L: AsRef<[u8]>>(
    context: Option<&BTreeMap<K, tensorflow::Feature>>,
    lists: Option<&BTreeMap<L, tensorflow::FeatureList>>,
) -> String {
    let mut p = Printer {
        out: String::new(),
        depth: 0,
    };
    if let Some(c) = context {
        p.tf_features("context", c);
    }
    if let Some(fl) = lists {
        p.open("feature_lists");
        for (k, list) in fl {
            p.entry("feature_list", k.as_ref(), false, |p| {
                for f in &list.feature {
                    p.open("feature");
                    p.tf_feature(f);
                    p.close();
                }
            });
        }
        p.close();
    }
    p.out
}

/// The text format of a `oneflow.OFRecord` with these features, keys as bytes.
pub(crate) fn ofrecord_text<K: AsRef<[u8]>>(feature: &BTreeMap<K, oneflow::Feature>) -> String {
    let mut p = Printer {
        out: String::new(),
        depth: 0,
    };
    for (k, f) in feature {
        p.entry("feature", k.as_ref(), true, |p| p.of_feature(f));
    }
    p.out
}

/// The text format of a `tensorflow.Example`.
pub fn example_to_text(e: &tensorflow::Example) -> String {
    example_text(e.features.as_ref().map(|f| &f.feature))
}

/// The text format of a `tensorflow.SequenceExample`.
pub fn sequence_example_to_text(e: &tensorflow::SequenceExample) -> String {
    sequence_example_text(
        e.context.as_ref().map(|c| &c.feature),
        e.feature_lists.as_ref().map(|l| &l.feature_list),
    )
}

/// The text format of a `oneflow.OFRecord`.
pub fn ofrecord_to_text(r: &oneflow::OfRecord) -> String {
    ofrecord_text(&r.feature)
}

#[cfg(test)]
mod tests {
    #[test]
    fn shortest_float_is_the_rounding_search() {
        // Bit patterns spread over every sign, exponent and mantissa, and the neighbours of
        // every power of two and of the binade ends.
        let mut bits: Vec<u32> = (0..=u32::MAX).step_by(42_929).collect();
        for e in 0..=255u32 {
            for s in [0, 1u32 << 31] {
                let p = s | e << 23;
                bits.extend([
                    p,
                    p.wrapping_sub(1),
                    p.wrapping_sub(2),
                    p + 1,
                    p + 2,
                    p | 0x7f_ffff,
                ]);
            }
        }
        for b in bits {
            let v = f32::from_bits(b);
            let (got, want) = (
                super::shortest_float(v),
                super::shortest_float_by_rounding(v),
            );
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{b:#x} ({v:e}): {got:e}, rounding gives {want:e}"
            );
        }
    }

    use super::*;

    #[test]
    #[allow(clippy::excessive_precision)] // exact f32 ties, written out in full on purpose
    fn floats_like_python() {
        assert_eq!(format_float(0.1), "0.1");
        assert_eq!(format_float(1.0), "1.0");
        assert_eq!(format_float(-0.0), "-0.0");
        assert_eq!(format_float(1e16), "1e+16");
        assert_eq!(format_float(1e15), "1000000000000000.0");
        assert_eq!(format_float(0.0001), "0.0001");
        assert_eq!(format_float(0.00001), "1e-05");
        assert_eq!(format_float(1.5e-7), "1.5e-07");
        assert_eq!(format_float(f32::MAX), "3.4028235e+38");
        assert_eq!(format_float(123.456), "123.456");
        // Exact ties round half to even, and subnormals keep at least six digits, as
        // protobuf's Python runtime prints them.
        assert_eq!(format_float(226_251.625), "226251.62");
        assert_eq!(format_float(-3_024_143.25), "-3024143.2");
        assert_eq!(format_float(f32::from_bits(1)), "1.4013e-45");
        assert_eq!(format_double(1e300), "1e+300");
        assert_eq!(format_double(2.5), "2.5");
    }

    /// `oneflow.OFRecord` is proto2: its map entries print an empty key, as protobuf 7.36's
    /// `text_format.MessageToString` does (`feature {\n  key: ""\n  value {...`).
    #[test]
    fn ofrecord_layout_prints_an_empty_key() {
        use oneflow::{Feature, FloatList, Int64List, OfRecord, feature::Kind};
        let mut r = OfRecord::default();
        r.feature.insert(
            String::new(),
            Feature {
                kind: Some(Kind::Int64List(Int64List { value: vec![3] })),
            },
        );
        r.feature.insert(
            "a".into(),
            Feature {
                kind: Some(Kind::FloatList(FloatList { value: vec![0.5] })),
            },
        );
        assert_eq!(
            ofrecord_to_text(&r),
            "feature {\n  key: \"\"\n  value {\n    int64_list {\n      value: 3\n    }\n  }\n}\n\
             feature {\n  key: \"a\"\n  value {\n    float_list {\n      value: 0.5\n    }\n  }\n}\n"
        );
    }

    #[test]
    fn escapes_like_python() {
        assert_eq!(c_escape(b"a\"b'\\\n\x00\xff"), "a\\\"b\\'\\\\\\n\\000\\377");
        assert_eq!(c_escape("ä".as_bytes()), "\\303\\244");
        // Keys (`string` fields): as `text_format.MessageToString(.., as_utf8=True)` writes them.
        assert_eq!(key_text("k e y/é".as_bytes()), "k e y/é");
        assert_eq!(
            key_text(b"a\"b'\\\n\t\x01\x7f"),
            "a\\\"b\\'\\\\\\n\\t\\001\\177"
        );
        assert_eq!(key_text(b"\xff"), "\\377");
    }

    #[test]
    fn example_layout() {
        use tensorflow::{Example, Feature, Features, Int64List, feature::Kind};
        let mut fs = Features::default();
        fs.feature.insert(
            "b".into(),
            Feature {
                kind: Some(Kind::Int64List(Int64List { value: vec![1, -2] })),
            },
        );
        fs.feature.insert("a".into(), Feature { kind: None });
        let text = example_to_text(&Example {
            features: Some(fs.clone()),
        });
        let expected = "features {\n  feature {\n    key: \"a\"\n    value {\n    }\n  }\n  feature {\n    key: \"b\"\n    value {\n      int64_list {\n        value: 1\n        value: -2\n      }\n    }\n  }\n}\n";
        assert_eq!(text, expected);
        // An empty key is left out, as protobuf 7.36's `text_format.MessageToString` prints
        // `feature {\n  value {\n  ...` for it.
        fs.feature.clear();
        fs.feature.insert(String::new(), Feature { kind: None });
        let text = example_to_text(&Example { features: Some(fs) });
        assert_eq!(
            text,
            "features {\n  feature {\n    value {\n    }\n  }\n}\n"
        );
    }
}
