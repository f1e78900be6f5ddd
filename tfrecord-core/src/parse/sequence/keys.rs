//! One key over the batch, as the general path of `tf.io.parse_sequence_example` reads it: a
//! context key (`FixedLen`, `VarLen`, `Ragged`) or a feature-list key (`FixedLenSequence` with
//! its lengths, `VarLen`, `Ragged`), with TensorFlow's checks and their wording.

use crate::codec::{FeatureBytes, FeatureView};
use crate::error::{Error, Result};
use crate::feature::FeatureProblem;
use crate::parse::dtype::dtype_name;
use crate::parse::outputs::RawOut;
use crate::parse::plan::{RawKey, RawKind, shape_string};
use crate::parse::ragged::Rag;
use crate::parse::read::{
    extend, feature_error, field_error, for_each_step, overfilled, problem_error, to_i64, view,
};
use crate::parse::tensor::{Tensor, Values};

/// Reads the values of a present feature (with or without a kind) into `out`.
fn read(out: &mut Values, f: &FeatureView<'_>, raw: &RawKey, record: usize) -> Result<usize> {
    if !f.has_kind() {
        return Ok(0);
    }
    extend(out, f).map_err(|err| field_error(&raw.key, record, raw.dtype, err))
}

/// One context key over the batch; its values may take `max_filled` bytes once defaults are
/// filled in.
pub(super) fn context_key(
    raw: &RawKey,
    slots: Vec<Option<FeatureBytes<'_>>>,
    max_filled: usize,
) -> Result<RawOut> {
    let key = raw.key.as_str();
    match &raw.kind {
        RawKind::Dense {
            shape,
            stride,
            default,
        } => {
            let n = *stride;
            let mut found = Values::empty(raw.dtype);
            // `None`: the record lacks the feature; `Some(count)`: it has it.
            let mut counts: Vec<Option<usize>> = Vec::with_capacity(slots.len());
            let mut longest = if default.is_some() { n } else { 0 };
            for (e, slot) in slots.into_iter().enumerate() {
                match slot {
                    None => counts.push(None),
                    Some(m) => {
                        let c = read(&mut found, &view(m, key, e)?, raw, e)?;
                        longest = longest.max(c);
                        counts.push(Some(c));
                    }
                }
            }
            // (When no record has the feature at all, the loop below says it is missing.)
            if longest != n && counts.iter().any(Option::is_some) {
                let record = counts.iter().position(|c| *c == Some(longest)).unwrap_or(0);
                return Err(feature_error(
                    key,
                    record,
                    format!(
                        "inconsistent max number of elements: expected {n} (shape {}), found {longest}",
                        shape_string(false, shape)
                    ),
                ));
            }
            let mut values = Values::empty(raw.dtype);
            let mut at = 0usize;
            for (e, c) in counts.iter().enumerate() {
                match (c, default) {
                    (None, Some(d)) if values.may_fill(d, max_filled) => values.extend_from(d),
                    (None, Some(d)) => return Err(overfilled(key, e, d.len(), max_filled)),
                    (None, None) => {
                        return Err(problem_error(
                            key,
                            e,
                            FeatureProblem::Missing,
                            format!(
                                "feature (data type: {}) is required but could not be found: \
                                 expected {n} values of shape {}, found none and no default",
                                dtype_name(raw.dtype),
                                shape_string(false, shape)
                            ),
                        ));
                    }
                    (Some(c), _) => {
                        if *c != n {
                            return Err(problem_error(
                                key,
                                e,
                                FeatureProblem::Count {
                                    expected: n,
                                    found: *c,
                                },
                                format!(
                                    "unexpected number of elements: expected {n} (shape {}), found {c}",
                                    shape_string(false, shape)
                                ),
                            ));
                        }
                        values.extend_range(&found, at, at + c);
                        at += c;
                    }
                }
            }
            let mut s = Vec::with_capacity(shape.len() + 1);
            s.push(counts.len());
            s.extend_from_slice(shape);
            Ok(RawOut::Tensor(Tensor::Dense { shape: s, values }))
        }
        RawKind::Sparse | RawKind::Ragged { .. } => {
            let mut values = Values::empty(raw.dtype);
            let mut ends = Vec::with_capacity(slots.len());
            for (e, slot) in slots.into_iter().enumerate() {
                if let Some(m) = slot {
                    read(&mut values, &view(m, key, e)?, raw, e)?;
                }
                ends.push(values.len());
            }
            Ok(match raw.kind {
                RawKind::Ragged { splits } => {
                    let mut s = Vec::with_capacity(ends.len() + 1);
                    s.push(0);
                    s.extend(ends.iter().map(|&x| splits.fit(to_i64(x))));
                    RawOut::Rag(Rag {
                        values,
                        splits: vec![s],
                        dense_inner: 0,
                    })
                }
                _ => RawOut::Var { values, ends },
            })
        }
        // Rejected when the spec is compiled.
        RawKind::DenseVar { .. } => Err(Error::feature(
            "FixedLenSequenceFeature is not supported in the context",
        )
        .with_key(key)),
    }
}

/// What one record's feature list held.
struct ListRecord {
    /// The number of values.
    total: usize,
    /// The number of steps.
    steps: usize,
    /// The first step whose value count is not the row size: (step, count).
    bad_step: Option<(usize, usize)>,
}

/// One feature-list key over the batch, and the lengths of a `FixedLenSequenceFeature`.
pub(super) fn list_key(
    raw: &RawKey,
    slots: Vec<Option<FeatureBytes<'_>>>,
) -> Result<(RawOut, Option<Vec<i64>>)> {
    let key = raw.key.as_str();
    let batch = slots.len();
    match &raw.kind {
        RawKind::DenseVar {
            row_shape,
            stride,
            pad,
            allow_missing,
        } => {
            let stride = *stride;
            let mut found = Values::empty(raw.dtype);
            let mut recs: Vec<Option<ListRecord>> = Vec::with_capacity(batch);
            for (e, slot) in slots.into_iter().enumerate() {
                let Some(list) = slot else {
                    recs.push(None);
                    continue;
                };
                let mut rec = ListRecord {
                    total: 0,
                    steps: 0,
                    bad_step: None,
                };
                for_each_step(&list, key, e, |step, f| {
                    let c = read(&mut found, &f, raw, e)?;
                    if c != stride && rec.bad_step.is_none() {
                        rec.bad_step = Some((step, c));
                    }
                    rec.total += c;
                    rec.steps += 1;
                    Ok(())
                })?;
                recs.push(Some(rec));
            }
            let longest = recs.iter().flatten().map(|r| r.total).max().unwrap_or(0);
            if !longest.is_multiple_of(stride) {
                let record = recs
                    .iter()
                    .position(|r| r.as_ref().is_some_and(|r| r.total == longest))
                    .unwrap_or(0);
                return Err(feature_error(
                    key,
                    record,
                    format!(
                        "feature list has an unexpected number of values: total values size \
                         {longest} is not consistent with output shape {}",
                        shape_string(true, row_shape)
                    ),
                ));
            }
            let rows = longest / stride;
            let total = batch
                .checked_mul(longest)
                .ok_or_else(|| Error::feature("padded output is too large").with_key(key))?;
            let mut values = Values::empty(raw.dtype);
            values.try_reserve(total).map_err(|err| {
                Error::feature(format!("padded output of {total} values: {err}")).with_key(key)
            })?;
            let mut lengths = Vec::with_capacity(batch);
            let mut at = 0usize;
            for (e, rec) in recs.iter().enumerate() {
                let (n, steps) = match rec {
                    None if !allow_missing => {
                        return Err(problem_error(
                            key,
                            e,
                            FeatureProblem::Missing,
                            "feature list is required but could not be found (set allow_missing \
                             to treat a missing list as empty)",
                        ));
                    }
                    None => (0, 0),
                    Some(r) => {
                        if let Some((step, c)) = r.bad_step {
                            return Err(problem_error(
                                key,
                                e,
                                FeatureProblem::Count {
                                    expected: stride,
                                    found: c,
                                },
                                format!(
                                    "step {step}: number of values != expected: expected {stride} \
                                     (output shape {}), found {c}",
                                    shape_string(false, row_shape)
                                ),
                            ));
                        }
                        (r.total, r.steps)
                    }
                };
                values.extend_range(&found, at, at + n);
                at += n;
                values.push_repeat(pad, 0, longest.saturating_sub(n));
                lengths.push(to_i64(steps));
            }
            let mut shape = Vec::with_capacity(row_shape.len() + 2);
            shape.push(batch);
            shape.push(rows);
            shape.extend_from_slice(row_shape);
            Ok((
                RawOut::Tensor(Tensor::Dense { shape, values }),
                Some(lengths),
            ))
        }
        RawKind::Sparse => {
            let mut values = Values::empty(raw.dtype);
            let mut indices = Vec::new();
            let (mut max_rows, mut max_cols) = (0usize, 0usize);
            for (e, slot) in slots.into_iter().enumerate() {
                let Some(list) = slot else { continue };
                let mut steps = 0usize;
                for_each_step(&list, key, e, |step, f| {
                    let c = read(&mut values, &f, raw, e)?;
                    max_cols = max_cols.max(c);
                    for i in 0..c {
                        indices.extend_from_slice(&[to_i64(e), to_i64(step), to_i64(i)]);
                    }
                    steps += 1;
                    Ok(())
                })?;
                max_rows = max_rows.max(steps);
            }
            Ok((
                RawOut::Tensor(Tensor::Sparse {
                    indices,
                    values,
                    dense_shape: vec![to_i64(batch), to_i64(max_rows), to_i64(max_cols)],
                }),
                None,
            ))
        }
        RawKind::Ragged { splits } => {
            let dt = *splits;
            let mut values = Values::empty(raw.dtype);
            let mut inner = vec![0i64];
            let mut outer = Vec::with_capacity(batch + 1);
            outer.push(0i64);
            for (e, slot) in slots.into_iter().enumerate() {
                if let Some(list) = slot {
                    for_each_step(&list, key, e, |_, f| {
                        read(&mut values, &f, raw, e)?;
                        inner.push(dt.fit(to_i64(values.len())));
                        Ok(())
                    })?;
                }
                outer.push(dt.fit(to_i64(inner.len() - 1)));
            }
            Ok((
                RawOut::Rag(Rag {
                    values,
                    splits: vec![outer, inner],
                    dense_inner: 0,
                }),
                None,
            ))
        }
        // Rejected when the spec is compiled.
        RawKind::Dense { .. } => Err(Error::feature(
            "FixedLenFeature is not supported in the feature lists",
        )
        .with_key(key)),
    }
}
