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
        Scalar::Int(_) => ListKind::Int,
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
        format!(
            "{} ({}) does not convert to {}",
            s.word(),
            match s {
                Scalar::Int(i) => i.to_string(),
                Scalar::Float(x) => x.to_string(),
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
            #[allow(clippy::cast_possible_truncation)]
            Scalar::Float(x) if x.fract() == 0.0 && x.abs() < 9.0e18 => Some(*x as i64),
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
            Scalar::Float(_) => None,
        }
    };
    let as_f64 = |s: &Scalar| -> Option<f64> {
        match s {
            #[allow(clippy::cast_precision_loss)]
            Scalar::Int(i) => Some(*i as f64),
            Scalar::Float(x) => Some(*x),
            Scalar::Bool(b) => Some(f64::from(u8::from(*b))),
            Scalar::Str(t) => t.trim().parse::<f64>().ok(),
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
                    if let Scalar::Str(t) = s {
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
                    Scalar::Str(t) => t.as_bytes().to_vec(),
                    Scalar::Int(i) => i.to_string().into_bytes(),
                    Scalar::Float(x) => x.to_string().into_bytes(),
                    Scalar::Bool(b) => b.to_string().into_bytes(),
                })
                .collect::<ByteStrings>(),
        ),
    })
}

/// Whether `x`, read from `s`, is an infinity that `s` does not spell out: a number too large
/// for a double.
fn overflows(s: &Scalar, x: f64) -> bool {
    let Scalar::Str(t) = s else {
        return false;
    };
    let word = t.trim().trim_start_matches(['+', '-']).to_ascii_lowercase();
    x.is_infinite() && word != "inf" && word != "infinity"
}

/// Why `s` does not convert: its number is beyond `limit`.
fn beyond(s: &Scalar, limit: &str) -> String {
    let text = match s {
        Scalar::Str(t) => t.trim().to_string(),
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
