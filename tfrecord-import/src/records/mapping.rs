//! The type mapping: the list kind a field's scalars take (inferred over all records), and
//! scalars converted to the values of a kind or of a forced dtype.

use tfrecord_core::narrow_f64;
use tfrecord_core::parse::{ByteStrings, Values};
use tfrecord_schema::ir::DType;

use super::input::Scalar;

/// The list kind inferred for a field over all records.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum ListKind {
    /// `int64_list`.
    Int,
    /// `float_list`.
    Float,
    /// `int64_list` of 0 / 1.
    Bool,
    /// `bytes_list`.
    Bytes,
    /// Kinds that do not unify: (record, message).
    Conflict(u64, String),
}

/// The kind of one scalar.
fn scalar_kind(s: &Scalar) -> ListKind {
    match s {
        Scalar::Int(_) | Scalar::BigInt(_) => ListKind::Int,
        Scalar::Float(_) => ListKind::Float,
        Scalar::Bool(_) => ListKind::Bool,
        Scalar::Str(_) => ListKind::Bytes,
    }
}

/// The kind's values in a message: `integers`, `floats`, ...
pub(super) fn kind_word(k: &ListKind) -> &'static str {
    match k {
        ListKind::Int => "integers",
        ListKind::Float => "floats",
        ListKind::Bool => "booleans",
        ListKind::Bytes => "strings",
        ListKind::Conflict(..) => "conflicting values",
    }
}

/// The kind holding both, if any: integers widen to floats, booleans (0/1) to integers.
pub(super) fn unify(a: &ListKind, b: &ListKind) -> Option<ListKind> {
    Some(match (a, b) {
        (x, y) if x == y => x.clone(),
        (ListKind::Int, ListKind::Float) | (ListKind::Float, ListKind::Int) => ListKind::Float,
        (ListKind::Bool, ListKind::Int) | (ListKind::Int, ListKind::Bool) => ListKind::Int,
        (ListKind::Bool, ListKind::Float) | (ListKind::Float, ListKind::Bool) => ListKind::Float,
        _ => return None,
    })
}

/// Which kinds a CSV cell's text parses as: (an integer, a number, a boolean). Digits beyond
/// int64 are neither: a float would round them (`99999999999999999999` to `1e20`), so their
/// column stays text, which keeps them. Nor are zero-padded digits (`007`, `-01`: a postal
/// code, an id), which a number would keep without their zeros.
pub(super) fn cell_kinds(text: &str) -> (bool, bool, bool) {
    let t = text.trim();
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    let integral = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    let padded = integral && digits.len() > 1 && digits.starts_with('0');
    let int = !padded && t.parse::<i64>().is_ok();
    let float = int || (!integral && t.parse::<f64>().is_ok());
    let boolean = t.eq_ignore_ascii_case("true") || t.eq_ignore_ascii_case("false");
    (int, float, boolean)
}

/// A list's kind: its scalars' kinds unified, or why they do not unify.
pub(super) fn list_kind(scalars: &[Scalar]) -> std::result::Result<Option<ListKind>, String> {
    let mut kind: Option<ListKind> = None;
    for s in scalars {
        let k = scalar_kind(s);
        kind = Some(match &kind {
            None => k,
            Some(prev) => unify(prev, &k).ok_or_else(|| {
                format!(
                    "a list mixing {} and {} cannot be a feature",
                    kind_word(prev),
                    kind_word(&k)
                )
            })?,
        });
    }
    Ok(kind)
}

/// Converts scalars to values of a forced dtype; the reason when one does not fit.
pub(super) fn convert_to_dtype(
    scalars: &[Scalar],
    dtype: DType,
) -> std::result::Result<Values, String> {
    let bad = |s: &Scalar| {
        if let (Scalar::BigInt(t), DType::Int64 | DType::Int32) = (s, dtype) {
            return format!("the integer {t} does not fit in {}", dtype.name());
        }
        format!(
            "{} ({}) does not convert to {}",
            s.word(),
            match s {
                Scalar::Int(i) => i.to_string(),
                Scalar::BigInt(t) => t.clone(),
                Scalar::Float(x) => float_text(*x),
                Scalar::Bool(b) => b.to_string(),
                Scalar::Str(t) => format!("{t:?}"),
            },
            dtype.name()
        )
    };
    let as_i64 = |s: &Scalar| -> Option<i64> {
        match s {
            Scalar::Int(i) => Some(*i),
            Scalar::Bool(b) => Some(i64::from(*b)),
            // Every whole float in [-2^63, 2^63) is an int64, exactly.
            #[allow(clippy::cast_possible_truncation)]
            Scalar::Float(x) if x.fract() == 0.0 && (-I64_BOUND..I64_BOUND).contains(x) => {
                Some(*x as i64)
            }
            Scalar::Str(t) => {
                let t = t.trim();
                t.parse::<i64>().ok().or_else(|| {
                    if t.eq_ignore_ascii_case("true") {
                        Some(1)
                    } else if t.eq_ignore_ascii_case("false") {
                        Some(0)
                    } else {
                        None
                    }
                })
            }
            Scalar::Float(_) | Scalar::BigInt(_) => None,
        }
    };
    let as_f64 = |s: &Scalar| -> Option<f64> {
        match s {
            #[allow(clippy::cast_precision_loss)]
            Scalar::Int(i) => Some(*i as f64),
            Scalar::Float(x) => Some(*x),
            Scalar::Bool(b) => Some(f64::from(u8::from(*b))),
            Scalar::Str(t) | Scalar::BigInt(t) => t.trim().parse::<f64>().ok(),
        }
    };
    Ok(match dtype {
        DType::Int64 => Values::Int64(
            scalars
                .iter()
                .map(|s| as_i64(s).ok_or_else(|| bad(s)))
                .collect::<std::result::Result<_, _>>()?,
        ),
        DType::Int32 => Values::Int32(
            scalars
                .iter()
                .map(|s| {
                    as_i64(s)
                        .and_then(|i| i32::try_from(i).ok())
                        .ok_or_else(|| bad(s))
                })
                .collect::<std::result::Result<_, _>>()?,
        ),
        DType::Bool => Values::Bool(
            scalars
                .iter()
                .map(|s| match as_i64(s) {
                    Some(0) => Ok(false),
                    Some(1) => Ok(true),
                    _ => Err(bad(s)),
                })
                .collect::<std::result::Result<_, _>>()?,
        ),
        // A number beyond the float's range does not convert (it is not infinity): written
        // out (`3.5e38`) or beyond even a double (`1e400`, which parses as infinity). Only
        // `inf`, `infinity` and `nan` (any case, signed) are the special values. Text is read
        // straight to the nearest float, as `tf.io.decode_csv` and `tf.strings.to_number`
        // read it (through a double, a decimal near a halfway point would be rounded twice).
        DType::Float => Values::Float32(
            scalars
                .iter()
                .map(|s| {
                    if let Scalar::Str(t) | Scalar::BigInt(t) = s {
                        let x = t.trim().parse::<f32>().map_err(|_| bad(s))?;
                        return if overflows(s, f64::from(x)) {
                            Err(beyond(s, "a float (about 3.4e38)"))
                        } else {
                            Ok(x)
                        };
                    }
                    let x = as_f64(s).ok_or_else(|| bad(s))?;
                    match narrow_f64(x) {
                        Some(v) if !overflows(s, x) => Ok(v),
                        _ => Err(beyond(s, "a float (about 3.4e38)")),
                    }
                })
                .collect::<std::result::Result<_, _>>()?,
        ),
        DType::Double => Values::Float64(
            scalars
                .iter()
                .map(|s| {
                    let x = as_f64(s).ok_or_else(|| bad(s))?;
                    if overflows(s, x) {
                        Err(beyond(s, "a double (about 1.8e308)"))
                    } else {
                        Ok(x)
                    }
                })
                .collect::<std::result::Result<_, _>>()?,
        ),
        _ => Values::Bytes(
            scalars
                .iter()
                .map(|s| match s {
                    Scalar::Str(t) | Scalar::BigInt(t) => t.as_bytes().to_vec(),
                    Scalar::Int(i) => i.to_string().into_bytes(),
                    Scalar::Float(x) => float_text(*x).into_bytes(),
                    Scalar::Bool(b) => b.to_string().into_bytes(),
                })
                .collect::<ByteStrings>(),
        ),
    })
}

/// 2^63: the whole floats below it (and at or above its negation) are int64 values.
const I64_BOUND: f64 = 9_223_372_036_854_775_808.0;

/// A float as Python's `str` and `repr` write it: the shortest digits that read back to it,
/// in positional notation for exponents -4 to 15 (`0.0001`, `100.0`,
/// `1000000000000000.0`), else in scientific notation with a signed exponent of at least two
/// digits (`1e-05`, `1e+16`, `1.5e+300`); `nan`, `inf`, `-inf`.
pub(super) fn float_text(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    // `{:e}` gives the shortest round-trip digits: `-1.2345e17`, `1e-5`, `0e0`.
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    if (-4..16).contains(&exp) {
        let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        let point = usize::try_from(exp + 1).unwrap_or(0);
        let text = if exp < 0 {
            let zeros = "0".repeat(usize::try_from(-exp - 1).unwrap_or(0));
            format!("0.{zeros}{digits}")
        } else if digits.len() > point {
            format!("{}.{}", &digits[..point], &digits[point..])
        } else {
            format!("{digits}{}.0", "0".repeat(point - digits.len()))
        };
        format!("{sign}{text}")
    } else {
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{esign}{:02}", exp.unsigned_abs())
    }
}

/// Whether `x`, read from `s`, is an infinity that `s` does not spell out: a number too large
/// for a double.
fn overflows(s: &Scalar, x: f64) -> bool {
    let (Scalar::Str(t) | Scalar::BigInt(t)) = s else {
        return false;
    };
    let word = t.trim().trim_start_matches(['+', '-']).to_ascii_lowercase();
    x.is_infinite() && word != "inf" && word != "infinity"
}

/// Why `s` does not convert: its number is beyond `limit`.
fn beyond(s: &Scalar, limit: &str) -> String {
    let text = match s {
        Scalar::Str(t) | Scalar::BigInt(t) => t.trim().to_string(),
        Scalar::Float(x) => format!("{x:e}"),
        Scalar::Int(i) => i.to_string(),
        Scalar::Bool(b) => b.to_string(),
    };
    format!("{text} is beyond the range of {limit}")
}

/// Values of an inferred kind.
pub(super) fn convert_to_kind(
    scalars: &[Scalar],
    kind: &ListKind,
    csv: bool,
) -> std::result::Result<Values, String> {
    match kind {
        ListKind::Int | ListKind::Bool => convert_to_dtype(scalars, DType::Int64),
        ListKind::Float => convert_to_dtype(scalars, DType::Float),
        _ if csv => convert_to_dtype(scalars, DType::Bytes),
        _ => {
            // JSON: only strings are bytes.
            if let Some(s) = scalars.iter().find(|s| !matches!(s, Scalar::Str(_))) {
                return Err(format!("{} where other records hold strings", s.word()));
            }
            convert_to_dtype(scalars, DType::Bytes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Python 3's `str` of the same floats.
    #[test]
    fn floats_are_written_as_python_writes_them() {
        let cases = [
            (1e300, "1e+300"),
            (1e-7, "1e-07"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-0.0, "-0.0"),
            (0.0, "0.0"),
            (1.5e300, "1.5e+300"),
            (123_456_789.123, "123456789.123"),
            (1.0 / 3.0, "0.3333333333333333"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (-2.5e-5, "-2.5e-05"),
            (12_345_678_901_234_567.0, "1.2345678901234568e+16"),
            (9.1e18, "9.1e+18"),
            (0.000_123, "0.000123"),
            (f64::NAN, "nan"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for (x, text) in cases {
            assert_eq!(float_text(x), text, "{x:e}");
        }
    }

    #[test]
    fn whole_floats_below_two_to_the_63_are_int64() {
        let int = |x: f64| convert_to_dtype(&[Scalar::Float(x)], DType::Int64);
        assert!(matches!(int(9.1e18), Ok(Values::Int64(v)) if v == [9_100_000_000_000_000_000]));
        assert!(matches!(int(-I64_BOUND), Ok(Values::Int64(v)) if v == [i64::MIN]));
        assert!(int(I64_BOUND).is_err());
        assert!(int(1.5).is_err());
        let text = convert_to_dtype(&[Scalar::Float(1e300)], DType::Bytes);
        assert!(matches!(text, Ok(Values::Bytes(b)) if b.iter().next() == Some(&b"1e+300"[..])));
    }
}
