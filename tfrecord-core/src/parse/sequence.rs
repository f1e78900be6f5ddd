//! `tf.io.parse_sequence_example`: a batch of serialized `tf.train.SequenceExample`s to
//! context tensors, feature-list tensors and feature-list lengths, following TensorFlow's
//! `FastParseSequenceExample`.

use std::collections::BTreeMap;

use super::example::{RawOut, build_outputs};
use super::ragged::Rag;
use super::read::{
    check_kind, dtype_mismatch, extend, feature_error, field_error, for_each_step, to_i64, view,
};
use super::spec::{Plan, RawKey, RawKind, shape_string};
use super::tensor::{Tensor, Values};
use crate::codec::{FeatureView, FieldError, Msg, scan_sequence};
use crate::error::{Error, Result};

/// The parsed batch: context tensors, feature-list tensors, feature-list lengths.
pub(crate) type SequenceOutput = (
    BTreeMap<String, Tensor>,
    BTreeMap<String, Tensor>,
    BTreeMap<String, Tensor>,
);

/// Which of TensorFlow's passes a key belongs to, in the order it runs them.
fn pass(kind: &RawKind) -> u8 {
    match kind {
        RawKind::Dense { .. } | RawKind::DenseVar { .. } => 0,
        RawKind::Sparse => 1,
        RawKind::Ragged { .. } => 2,
    }
}

/// Parses a batch of `SequenceExample`s.
pub(crate) fn parse_batch<R: AsRef<[u8]>>(
    ctx: &Plan,
    seq: &Plan,
    records: &[R],
    row_budget: usize,
) -> Result<SequenceOutput> {
    let batch = records.len();
    let (nc, ns) = (ctx.raw.len(), seq.raw.len());
    let mut cslots: Vec<Option<Msg<'_>>> = vec![None; batch.saturating_mul(nc)];
    let mut sslots: Vec<Option<Msg<'_>>> = vec![None; batch.saturating_mul(ns)];
    for (e, record) in records.iter().enumerate() {
        let crow = cslots.get_mut(e * nc..(e + 1) * nc).unwrap_or_default();
        let srow = sslots.get_mut(e * ns..(e + 1) * ns).unwrap_or_default();
        // The last entry of a key wins, as in TensorFlow.
        scan_sequence(
            record.as_ref(),
            |key, msg| {
                if let Some(slot) = ctx.lookup(key).and_then(|i| crow.get_mut(i)) {
                    *slot = Some(msg);
                }
                Ok(())
            },
            |key, msg| {
                if let Some(slot) = seq.lookup(key).and_then(|i| srow.get_mut(i)) {
                    *slot = Some(msg);
                }
                Ok(())
            },
        )
        .map_err(|err| err.with_record(u64::try_from(e).unwrap_or(u64::MAX)))?;
    }
    let cslot = |e: usize, k: usize| cslots.get(e * nc + k).cloned().flatten();
    let sslot = |e: usize, k: usize| sslots.get(e * ns + k).cloned().flatten();

    // First TensorFlow checks the type of every feature present, context then feature lists.
    for (k, raw) in ctx.raw.iter().enumerate() {
        for e in 0..batch {
            if let Some(msg) = cslot(e, k) {
                let f = view(msg, &raw.key, e)?;
                if f.has_kind() {
                    check_kind(&f, raw.dtype).map_err(|err| kind_error(raw, e, None, err))?;
                }
            }
        }
    }
    for (k, raw) in seq.raw.iter().enumerate() {
        for e in 0..batch {
            if let Some(list) = sslot(e, k) {
                for_each_step(&list, &raw.key, e, |step, f| {
                    if f.has_kind() {
                        check_kind(&f, raw.dtype)
                            .map_err(|err| kind_error(raw, e, Some(step), err))?;
                    }
                    Ok(())
                })?;
            }
        }
    }

    // Then it builds the context's dense, sparse and ragged keys, then the feature lists'.
    let mut craws: Vec<Option<RawOut>> = vec![None; nc];
    for p in 0..3u8 {
        for (k, raw) in ctx.raw.iter().enumerate() {
            if pass(&raw.kind) != p {
                continue;
            }
            let slots: Vec<Option<Msg<'_>>> = (0..batch).map(|e| cslot(e, k)).collect();
            if let Some(out) = craws.get_mut(k) {
                *out = Some(context_key(raw, slots)?);
            }
        }
    }
    let mut sraws: Vec<Option<RawOut>> = vec![None; ns];
    let mut lengths = BTreeMap::new();
    for p in 0..3u8 {
        for (k, raw) in seq.raw.iter().enumerate() {
            if pass(&raw.kind) != p {
                continue;
            }
            let slots: Vec<Option<Msg<'_>>> = (0..batch).map(|e| sslot(e, k)).collect();
            let (out, len) = list_key(raw, slots)?;
            if let Some(len) = len {
                lengths.insert(
                    raw.key.clone(),
                    Tensor::Dense {
                        shape: vec![batch],
                        values: Values::Int64(len),
                    },
                );
            }
            if let Some(o) = sraws.get_mut(k) {
                *o = Some(out);
            }
        }
    }
    let unwrap = |v: Vec<Option<RawOut>>| -> Vec<RawOut> {
        v.into_iter()
            .map(|o| {
                o.unwrap_or(RawOut::Var {
                    values: Values::Int64(Vec::new()),
                    ends: Vec::new(),
                })
            })
            .collect()
    };
    let context = build_outputs(ctx, unwrap(craws), row_budget)?;
    let lists = build_outputs(seq, unwrap(sraws), row_budget)?;
    Ok((context, lists, lengths))
}

#[cold]
fn kind_error(raw: &RawKey, record: usize, step: Option<usize>, err: FieldError) -> Error {
    match err {
        FieldError::WrongKind { found, .. } => {
            let place = match step {
                None => "context feature".to_string(),
                Some(s) => format!("feature list step {s}"),
            };
            feature_error(
                &raw.key,
                record,
                format!("{place}: {}", dtype_mismatch(raw.dtype, found)),
            )
        }
        other => field_error(&raw.key, record, raw.dtype, other),
    }
}

/// Reads the values of a present feature (with or without a kind) into `out`.
fn read(out: &mut Values, f: &FeatureView<'_>, raw: &RawKey, record: usize) -> Result<usize> {
    if !f.has_kind() {
        return Ok(0);
    }
    extend(out, f).map_err(|err| field_error(&raw.key, record, raw.dtype, err))
}

/// One context key over the batch.
fn context_key(raw: &RawKey, slots: Vec<Option<Msg<'_>>>) -> Result<RawOut> {
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
            if longest != n {
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
                    (None, Some(d)) => values.extend_from(d),
                    (None, None) => {
                        return Err(feature_error(
                            key,
                            e,
                            format!(
                                "feature (data type: {}) is required but could not be found: \
                                 expected {n} values of shape {}, found none and no default",
                                raw.dtype.name(),
                                shape_string(false, shape)
                            ),
                        ));
                    }
                    (Some(c), _) => {
                        if *c != n {
                            return Err(feature_error(
                                key,
                                e,
                                format!(
                                    "unexpected number of elements: expected {n} (shape {}), found {c}",
                                    shape_string(false, shape)
                                ),
                            ));
                        }
                        move_range(&mut values, &mut found, at, at + c);
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

/// Moves `src[a..b]` to the end of `out` (same type).
fn move_range(out: &mut Values, src: &mut Values, a: usize, b: usize) {
    match (out, src) {
        (Values::Int64(d), Values::Int64(s)) => d.extend_from_slice(s.get(a..b).unwrap_or(&[])),
        (Values::Float32(d), Values::Float32(s)) => {
            d.extend_from_slice(s.get(a..b).unwrap_or(&[]));
        }
        (Values::Bytes(d), Values::Bytes(s)) => {
            if let Some(r) = s.get_mut(a..b) {
                d.extend(r.iter_mut().map(std::mem::take));
            }
        }
        _ => {}
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
fn list_key(raw: &RawKey, slots: Vec<Option<Msg<'_>>>) -> Result<(RawOut, Option<Vec<i64>>)> {
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
                        return Err(feature_error(
                            key,
                            e,
                            "feature list is required but could not be found (set allow_missing \
                             to treat a missing list as empty)",
                        ));
                    }
                    None => (0, 0),
                    Some(r) => {
                        if let Some((step, c)) = r.bad_step {
                            return Err(feature_error(
                                key,
                                e,
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
                move_range(&mut values, &mut found, at, at + n);
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
