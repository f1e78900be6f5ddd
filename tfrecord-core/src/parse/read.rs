//! Reading one feature's values out of the wire bytes, and the errors that name it.

use super::dtype::{DType, dtype_name, kind_type_name, list_kind};
use super::tensor::Values;
use crate::codec::{FeatureBytes, FeatureView, Tf};
use crate::error::Error;
use crate::feature::{FeatureProblem, ListKind};

/// An error about feature `key` of record `record`.
#[cold]
pub(crate) fn feature_error(key: &str, record: usize, detail: impl Into<String>) -> Error {
    problem_error(key, record, FeatureProblem::Other, detail)
}

/// An error about feature `key` of record `record`, with the problem callers match on.
#[cold]
pub(crate) fn problem_error(
    key: &str,
    record: usize,
    problem: FeatureProblem,
    detail: impl Into<String>,
) -> Error {
    Error::feature_problem(problem, detail)
        .with_key(key)
        .with_record(u64::try_from(record).unwrap_or(u64::MAX))
}

/// The error for a batch whose defaults fill one key past `max_filled` bytes.
#[cold]
pub(crate) fn overfilled(key: &str, record: usize, default_len: usize, max_filled: usize) -> Error {
    feature_error(
        key,
        record,
        format!(
            "the batch's values of this feature would pass {max_filled} bytes with its default \
             ({default_len} values) filled in for this record, as for every record lacking it: \
             parse fewer records at a time"
        ),
    )
}

/// Turns a wire-level error about feature `key` of record `record` into an [`Error`].
#[cold]
pub(crate) fn field_error(key: &str, record: usize, dtype: DType, e: FeatureProblem) -> Error {
    match e {
        FeatureProblem::WrongKind { found, .. } => problem_error(
            key,
            record,
            wrong_kind(dtype, found),
            dtype_mismatch(dtype, found),
        ),
        FeatureProblem::Malformed(what) => Error::decode("tensorflow.Feature", what)
            .with_key(key)
            .with_record(u64::try_from(record).unwrap_or(u64::MAX)),
        other => {
            let detail = other.to_string();
            problem_error(key, record, other, detail)
        }
    }
}

/// The problem of a feature of `expected` type holding a list of kind `found`.
pub(crate) fn wrong_kind(expected: DType, found: ListKind) -> FeatureProblem {
    FeatureProblem::WrongKind {
        expected: list_kind(expected),
        found,
    }
}

/// TensorFlow's "Data types don't match", with expected versus found.
pub(crate) fn dtype_mismatch(expected: DType, found: ListKind) -> String {
    format!(
        "data types don't match: expected {} ({}), found {} ({})",
        dtype_name(expected),
        list_kind(expected).name(),
        kind_type_name(found),
        found.name()
    )
}

/// The `Feature` message of a map entry, decoded far enough to know its kind.
pub(crate) fn view<'de>(
    msg: FeatureBytes<'de>,
    key: &str,
    record: usize,
) -> Result<FeatureView<'de>, Error> {
    FeatureView::new::<Tf>(msg).map_err(|e| field_error(key, record, DType::Int64, e))
}

/// Appends the values of `view` to `out` (whose variant is the expected type) and returns how
/// many there were. A feature with no kind set adds nothing.
///
/// # Errors
/// A list of another kind, or malformed protobuf.
pub(crate) fn extend(out: &mut Values, view: &FeatureView<'_>) -> Result<usize, FeatureProblem> {
    let before = out.len();
    match out {
        Values::Int64(v) => view.extend_into::<Tf, i64>(v)?,
        Values::Float32(v) => view.extend_into::<Tf, f32>(v)?,
        Values::Bytes(v) => {
            let mut strings: Vec<&[u8]> = Vec::new();
            view.extend_into::<Tf, &[u8]>(&mut strings)?;
            v.extend(strings);
        }
        // Feature specs never hold these types (`Plan::compile` rejects them).
        Values::Bool(_) | Values::Int32(_) | Values::Float64(_) => {
            return Err(FeatureProblem::Range {
                value: "a list".into(),
                ty: "a dtype tf.train.Example cannot hold",
            });
        }
    }
    Ok(out.len() - before)
}

/// Checks that `view` (with a kind set) holds values of `dtype`, without decoding them.
///
/// # Errors
/// A list of another kind.
pub(crate) fn check_kind(view: &FeatureView<'_>, dtype: DType) -> Result<(), FeatureProblem> {
    view.values::<Tf>(list_kind(dtype)).map(|_| ())
}

/// Calls `f(step, feature)` for each `Feature` of a `FeatureList` message (`feature` = 1), in
/// order.
///
/// # Errors
/// Malformed protobuf, or an error from `f`.
pub(crate) fn for_each_step<'de>(
    list: &FeatureBytes<'de>,
    key: &str,
    record: usize,
    mut f: impl FnMut(usize, FeatureView<'de>) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut step = 0usize;
    crate::codec::for_each_step(list, |bytes| {
        f(step, view(FeatureBytes::new(bytes), key, record)?)?;
        step += 1;
        Ok(())
    })
    .map_err(|e| {
        e.with_key(key)
            .with_record(u64::try_from(record).unwrap_or(u64::MAX))
    })
}

/// `n` as an `i64` (lengths always fit).
#[inline]
pub(crate) fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
