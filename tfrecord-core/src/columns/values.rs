//! Reading one feature's values from its wire bytes into a column's leaf: the general path
//! through a `FeatureView`, the canonical layout without one, and the errors that name the
//! feature.

use super::{ByteColumn, Leaf};
use crate::codec::view::ListPiece;
use crate::codec::{Dialect, FeatureBytes, FeatureView, Of, RawValue, Tf, TfLossy};
use crate::compression::Format;
use crate::error::Error;
use crate::feature::{FeatureProblem, ListKind};
use crate::parse::DType;
use crate::parse::fast::Sink;

/// The feature found for each slot of a key table in the current record.
pub(super) type Slots<'de> = Vec<Option<FeatureBytes<'de>>>;

/// Whether a `Feature` has a list set (malformed bytes count as set: decoding reports them).
pub(super) fn has_kind(format: Format, fb: &FeatureBytes<'_>) -> bool {
    let view = if format == Format::OfRecord {
        FeatureView::new::<Of>(fb.clone())
    } else {
        FeatureView::new::<Tf>(fb.clone())
    };
    view.map_or(true, |v| v.has_kind())
}

/// Appends the feature's values to `leaf`: how many, or `None` for a `Feature` with no list
/// set.
pub(super) fn append(
    leaf: &mut Leaf,
    dtype: DType,
    format: Format,
    fb: &FeatureBytes<'_>,
) -> std::result::Result<Option<usize>, FeatureProblem> {
    let kind = ListKind::holding(dtype, format);
    // The layout every writer produces (one list, numbers packed): decoded without a view. Any
    // other layout, an empty `Feature` and a malformed one take the general path below.
    if let Some(bytes) = fb.single().filter(|b| !b.is_empty())
        && let Some(tag) = list_tag(format, kind)
        && let Some(n) = append_canonical(leaf, tag, bytes)?
    {
        return Ok(Some(n));
    }
    let values = if format == Format::OfRecord {
        let view = FeatureView::new::<Of>(fb.clone())?;
        if !view.has_kind() {
            return Ok(None);
        }
        view.values::<Of>(kind)?
    } else {
        let view = FeatureView::new::<Tf>(fb.clone())?;
        if !view.has_kind() {
            return Ok(None);
        }
        view.values::<Tf>(kind)?
    };
    let before = leaf.len();
    let of = format == Format::OfRecord;
    match leaf {
        Leaf::Int64(v) => values.extend_into::<Tf, i64>(v)?,
        Leaf::Int32(v) if of => values.extend_into::<Of, i32>(v)?,
        Leaf::Int32(v) => values.extend_into::<Tf, i32>(v)?,
        Leaf::Bool(v) => values.extend_into::<Tf, bool>(v)?,
        Leaf::Float(v) => values.extend_into::<Tf, f32>(v)?,
        Leaf::Double(v) if of => values.extend_into::<Of, f64>(v)?,
        Leaf::Double(v) => values.extend_into::<TfLossy, f64>(v)?,
        Leaf::Bytes(col) => push_bytes(values, col, false)?,
        Leaf::String(col) => push_bytes(values, col, true)?,
        Leaf::Sparse { .. } => {
            return Err(FeatureProblem::Malformed(
                "a sparse leaf takes its values one level down",
            ));
        }
    }
    Ok(Some(leaf.len() - before))
}

/// The oneof member of a list kind in `format`'s `Feature`.
pub(super) fn list_tag(format: Format, kind: ListKind) -> Option<u32> {
    if format == Format::OfRecord {
        Of::tag(kind)
    } else {
        Tf::tag(kind)
    }
}

/// [`Sink::extend_canonical`] into a leaf of one of the types the fast path reads: how many
/// values, or `None` (with the leaf as it was) for any other layout or type.
pub(super) fn append_canonical(
    leaf: &mut Leaf,
    tag: u32,
    bytes: &[u8],
) -> std::result::Result<Option<usize>, FeatureProblem> {
    fn fast<S: Sink>(
        s: &mut S,
        tag: u32,
        bytes: &[u8],
        undo: impl Fn(&mut S, usize),
    ) -> Option<usize> {
        let before = s.count();
        let n = s.extend_canonical(tag, bytes);
        if n.is_none() {
            undo(s, before);
        }
        n
    }
    Ok(match leaf {
        Leaf::Int64(v) => fast(v, tag, bytes, |v, n| v.truncate(n)),
        Leaf::Float(v) => fast(v, tag, bytes, |v, n| v.truncate(n)),
        Leaf::Bytes(c) => fast(c, tag, bytes, ByteColumn::truncate),
        Leaf::String(c) => {
            let before = c.len();
            let n = fast(c, tag, bytes, ByteColumn::truncate);
            if n.is_some()
                && (before..c.len())
                    .any(|i| c.get(i).is_some_and(|b| std::str::from_utf8(b).is_err()))
            {
                return Err(FeatureProblem::Utf8);
            }
            n
        }
        _ => None,
    })
}

impl Sink for ByteColumn {
    fn count(&self) -> usize {
        self.len()
    }

    #[inline]
    fn push_value(&mut self, value: &[u8]) -> Option<()> {
        self.push(value);
        Some(())
    }
}

pub(super) fn push_bytes(
    mut values: crate::codec::view::Values<'_>,
    col: &mut ByteColumn,
    utf8: bool,
) -> std::result::Result<(), FeatureProblem> {
    while let Some(piece) = values.next_chunk()? {
        let ListPiece::One(RawValue::Bytes(b)) = piece else {
            return Err(FeatureProblem::Malformed(
                "a bytes value that is not length-delimited",
            ));
        };
        if utf8 && std::str::from_utf8(b).is_err() {
            return Err(FeatureProblem::Utf8);
        }
        col.push(b);
    }
    Ok(())
}

/// Appends an `int64` feature's values (a partition or sparse index).
pub(super) fn int64s(
    fb: &FeatureBytes<'_>,
    format: Format,
    out: &mut Vec<i64>,
) -> std::result::Result<(), FeatureProblem> {
    let mut leaf = Leaf::Int64(std::mem::take(out));
    let res = append(&mut leaf, DType::Int64, format, fb);
    if let Leaf::Int64(v) = leaf {
        *out = v;
    }
    res.map(|_| ())
}

/// The error for a record lacking `key` whose default (or null row) would fill the batch's
/// column past `max` bytes.
#[cold]
pub(super) fn overfilled(key: &str, max: usize) -> Error {
    Error::feature(format!(
        "the batch's values of this feature would pass {max} bytes with its default (or null \
         row) filled in for this record, as for every record lacking it: read fewer records \
         per batch"
    ))
    .with_key(key.to_string())
}

#[cold]
pub(super) fn missing(key: &str) -> Error {
    Error::feature_problem(FeatureProblem::Missing, "required feature is missing")
        .with_key(key.to_string())
}

#[cold]
/// [`problem`] in step `step` of a feature list, which the message names first, as the runtime
/// parser's does (TensorFlow's says `Feature list: key, Index: step`).
pub(super) fn step_problem(key: &str, dtype: DType, p: FeatureProblem, step: usize) -> Error {
    let e = problem(key, dtype, p.clone());
    let detail = match e.kind() {
        crate::error::ErrorKind::Feature { detail, .. } => detail.clone(),
        _ => p.to_string(),
    };
    Error::feature_problem(p, format!("step {step}: {detail}")).with_key(key.to_string())
}

pub(super) fn problem(key: &str, dtype: DType, p: FeatureProblem) -> Error {
    let detail = match &p {
        FeatureProblem::WrongKind { expected, found } => format!(
            "data types don't match: expected {} ({}), found {}",
            dtype.name(),
            expected.name(),
            found.name()
        ),
        other => other.to_string(),
    };
    Error::feature_problem(p, detail).with_key(key.to_string())
}
