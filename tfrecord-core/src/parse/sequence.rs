//! `tf.io.parse_sequence_example`: a batch of serialized `tf.train.SequenceExample`s to
//! context tensors, feature-list tensors and feature-list lengths, following TensorFlow's
//! `FastParseSequenceExample`.

use std::collections::BTreeMap;

use super::buffers::Buffers;
use super::dtype::dtype_name;
use super::example::{FastRun, KeyBuf, key_bufs, learn_sizes, not_canonical};
use super::fast::{KeyPredictor, Sink, for_each_field_1, list_tag};
use super::outputs::{RawOut, build_outputs, finish_keys, pad_rows, row_splits};
use super::plan::{BatchHeld, Plan, RawKey, RawKind, shape_string};
use super::ragged::Rag;
use super::read::{
    check_kind, dtype_mismatch, extend, feature_error, field_error, for_each_step, problem_error,
    to_i64, view, wrong_kind,
};
use super::spec::SplitsDType;
use super::tensor::{Tensor, Values};
use crate::codec::{FeatureBytes, FeatureView, canonical_step_values, scan_sequence};
use crate::error::{Error, Result};
use crate::feature::FeatureProblem;

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

/// The raw outputs of a batch: context keys, feature-list keys, feature-list lengths.
type RawBatch = (Vec<RawOut>, Vec<RawOut>, BTreeMap<String, Tensor>);

/// Parses a batch of `SequenceExample`s: by the fast path, or when that declines the batch (or
/// `fast` is false, as tests ask) by the general path. The fast path builds its outputs in
/// buffers from `spare`.
pub(crate) fn parse_batch<R: AsRef<[u8]>>(
    ctx: &Plan,
    seq: &Plan,
    records: &[R],
    row_budget: usize,
    fast: bool,
    spare: &mut Buffers,
) -> Result<SequenceOutput> {
    let raws = if fast {
        fast_batch(ctx, seq, records, spare)
    } else {
        None
    };
    let (craws, sraws, lengths) = match raws {
        Some(raws) => raws,
        None => general_batch(ctx, seq, records)?,
    };
    let context = build_outputs(ctx, craws, row_budget, spare)?;
    let lists = build_outputs(seq, sraws, row_budget, spare)?;
    Ok((context, lists, lengths))
}

/// Parses a batch by the general path, which reads every valid encoding and words the errors
/// as TensorFlow orders them.
fn general_batch<R: AsRef<[u8]>>(ctx: &Plan, seq: &Plan, records: &[R]) -> Result<RawBatch> {
    let batch = records.len();
    let (nc, ns) = (ctx.raw.len(), seq.raw.len());
    let mut cslots: Vec<Option<FeatureBytes<'_>>> = vec![None; batch.saturating_mul(nc)];
    let mut sslots: Vec<Option<FeatureBytes<'_>>> = vec![None; batch.saturating_mul(ns)];
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
            let slots: Vec<Option<FeatureBytes<'_>>> = (0..batch).map(|e| cslot(e, k)).collect();
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
            let slots: Vec<Option<FeatureBytes<'_>>> = (0..batch).map(|e| sslot(e, k)).collect();
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
    Ok((unwrap(craws), unwrap(sraws), lengths))
}

#[cold]
fn kind_error(raw: &RawKey, record: usize, step: Option<usize>, err: FeatureProblem) -> Error {
    match err {
        FeatureProblem::WrongKind { found, .. } => {
            let place = match step {
                None => "context feature".to_string(),
                Some(s) => format!("feature list step {s}"),
            };
            problem_error(
                &raw.key,
                record,
                wrong_kind(raw.dtype, found),
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
fn context_key(raw: &RawKey, slots: Vec<Option<FeatureBytes<'_>>>) -> Result<RawOut> {
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
fn list_key(
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

// ---- The fast path ----

/// How the fast path reads one feature-list key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StepKind {
    /// `FixedLenSequence`: exactly `stride` values per step.
    Rows { stride: usize, allow_missing: bool },
    /// `VarLen`: any number of values per step, indexed `[record, step, i]`.
    Sparse,
    /// `Ragged`: any number of values per step, split by step.
    Ragged(SplitsDType),
}

/// One feature-list key over the batch, as the fast path collects it.
struct StepBuf {
    values: Values,
    /// The end of each record's values.
    ends: Vec<usize>,
    /// The end of each record's steps.
    record_steps: Vec<usize>,
    steps: Steps,
}

/// What the fast path keeps of a feature-list key's steps, besides the values.
struct Steps {
    kind: StepKind,
    /// The oneof member of the key's list kind.
    tag: u32,
    /// `Sparse`: the indices, and the most values of a step.
    indices: Vec<i64>,
    max_values: usize,
    /// `Ragged`: the row splits of the steps, `[0, ...]`.
    splits: Vec<i64>,
}

impl Steps {
    /// Reads the steps of a serialized `FeatureList` (one slice) of record `e`, their values
    /// into `out`; the number of steps, `None` when the list is not in the canonical form.
    ///
    /// The leading steps with one-byte lengths take one tight loop over the list's bytes
    /// ([`canonical_step_values`]), the others a walk of its fields.
    #[inline]
    fn read<S: Sink>(&mut self, out: &mut S, list: &[u8], e: usize) -> Option<usize> {
        let mut steps = 0usize;
        let mut canonical = true;
        let rest = canonical_step_values(list, self.tag, |value, within| {
            let before = out.count();
            canonical = out.push_within(within, value.len()).is_some()
                && self.step(out.count() - before, out.count(), e, steps);
            steps += 1;
            canonical
        });
        if !canonical {
            return None;
        }
        let canonical = for_each_field_1(rest, |step| {
            let Some(n) = out.extend_canonical(self.tag, step) else {
                return false;
            };
            let ok = self.step(n, out.count(), e, steps);
            steps += 1;
            ok
        });
        canonical.then_some(steps)
    }

    /// Records step `step` of record `e`, which held `n` values, `count` values in all so far;
    /// `false` when a `FixedLenSequence` step holds another number of values.
    #[inline]
    fn step(&mut self, n: usize, count: usize, e: usize, step: usize) -> bool {
        match self.kind {
            StepKind::Rows { stride, .. } => n == stride,
            StepKind::Sparse => {
                self.max_values = self.max_values.max(n);
                let (e, step) = (to_i64(e), to_i64(step));
                for i in 0..n {
                    self.indices.extend_from_slice(&[e, step, to_i64(i)]);
                }
                true
            }
            StepKind::Ragged(dt) => {
                self.splits.push(dt.fit(to_i64(count)));
                true
            }
        }
    }
}

impl StepBuf {
    /// [`Steps::read`] into the values buffer of the key's type.
    fn read(&mut self, list: &[u8], e: usize) -> Option<usize> {
        match &mut self.values {
            Values::Int64(v) => self.steps.read(v, list, e),
            Values::Float32(v) => self.steps.read(v, list, e),
            Values::Bytes(v) => self.steps.read(v, list, e),
            Values::Bool(_) | Values::Int32(_) | Values::Float64(_) => None,
        }
    }
}

/// The fast path over the feature lists of a batch: steps are decoded straight into the key
/// buffers, as long as every list is in the canonical form (each key at most once per record, in
/// one piece, steps in the canonical layout of the right kind and count).
struct StepRun<'a> {
    bufs: Vec<StepBuf>,
    /// For each raw key, the mark of the last record that held it.
    seen: Vec<usize>,
    predict: KeyPredictor<'a>,
    /// The current record, its mark (1 + its index), and the position of its next map entry.
    record: usize,
    mark: usize,
    pos: usize,
}

impl<'a> StepRun<'a> {
    fn new(plan: &Plan, batch: usize, bytes: usize, spare: &mut Buffers) -> Option<Self> {
        let bufs = plan
            .raw
            .iter()
            .zip(&plan.hints)
            .map(|(raw, hint)| {
                let guess = hint.guess(batch, bytes);
                let kind = match &raw.kind {
                    RawKind::DenseVar {
                        stride,
                        allow_missing,
                        ..
                    } => StepKind::Rows {
                        stride: *stride,
                        allow_missing: *allow_missing,
                    },
                    RawKind::Sparse => StepKind::Sparse,
                    RawKind::Ragged { splits } => StepKind::Ragged(*splits),
                    RawKind::Dense { .. } => return None,
                };
                let values = spare.values(raw.dtype, guess.values, guess.bytes);
                let (mut indices, mut splits) = (Vec::new(), Vec::new());
                match kind {
                    StepKind::Sparse => indices = spare.i64s(guess.values.saturating_mul(3)),
                    StepKind::Ragged(_) => splits = spare.i64s(guess.steps.saturating_add(1)),
                    StepKind::Rows { .. } => {}
                }
                splits.push(0);
                Some(StepBuf {
                    values,
                    ends: spare.usizes(batch),
                    record_steps: spare.usizes(batch),
                    steps: Steps {
                        kind,
                        tag: list_tag(raw.dtype),
                        indices,
                        max_values: 0,
                        splits,
                    },
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(StepRun {
            seen: vec![0; bufs.len()],
            bufs,
            predict: KeyPredictor::new(),
            record: 0,
            mark: 0,
            pos: 0,
        })
    }

    /// Starts record `e` of the batch.
    fn start(&mut self, e: usize) {
        self.record = e;
        self.mark = e + 1;
        self.pos = 0;
    }

    /// Reads one feature list of the current record. `Err` (a placeholder) when it is not in
    /// the canonical form.
    #[inline]
    fn entry(&mut self, plan: &Plan, key: &'a [u8], msg: &FeatureBytes<'_>) -> Result<()> {
        let found = self.predict.lookup(plan, self.pos, key);
        self.pos += 1;
        let Some(i) = found else { return Ok(()) };
        let (Some(buf), Some(seen)) = (self.bufs.get_mut(i), self.seen.get_mut(i)) else {
            return Err(not_canonical());
        };
        if *seen == self.mark {
            return Err(not_canonical()); // a repeated key
        }
        *seen = self.mark;
        let steps = msg
            .single()
            .and_then(|list| buf.read(list, self.record))
            .ok_or_else(not_canonical)?;
        let before = buf.record_steps.last().copied().unwrap_or(0);
        buf.record_steps.push(before + steps);
        Ok(())
    }

    /// Ends the current record: empty lists for the keys it lacks. `false` when a required
    /// list is missing.
    fn finish(&mut self) -> bool {
        for (buf, &seen) in self.bufs.iter_mut().zip(&self.seen) {
            if seen != self.mark {
                if let StepKind::Rows {
                    allow_missing: false,
                    ..
                } = buf.steps.kind
                {
                    return false;
                }
                let before = buf.record_steps.last().copied().unwrap_or(0);
                buf.record_steps.push(before);
            }
            buf.ends.push(buf.values.len());
        }
        true
    }

    /// The raw outputs of the feature-list keys, and the lengths of the `FixedLenSequence`
    /// ones. `None` when the padded output cannot be made (the general path words the error).
    fn into_raws(
        self,
        plan: &Plan,
        batch: usize,
        spare: &mut Buffers,
    ) -> Option<(Vec<RawOut>, BTreeMap<String, Tensor>)> {
        let mut raws = Vec::with_capacity(self.bufs.len());
        let mut lengths = BTreeMap::new();
        for ((raw, hint), buf) in plan.raw.iter().zip(&plan.hints).zip(self.bufs) {
            let StepBuf {
                values,
                ends,
                record_steps,
                steps: st,
            } = buf;
            let held = BatchHeld {
                values: values.len(),
                bytes: values.string_bytes(),
                steps: record_steps.last().copied().unwrap_or(0),
            };
            hint.learn(batch, held);
            let out = match (&raw.kind, st.kind) {
                (
                    RawKind::DenseVar {
                        row_shape,
                        stride,
                        pad,
                        ..
                    },
                    StepKind::Rows { .. },
                ) => {
                    let mut len = spare.i64s(batch);
                    len.extend(per_record(&record_steps).map(to_i64));
                    let rows = KeyBuf { values, ends };
                    let t = pad_rows(&raw.key, rows, batch, row_shape, *stride, pad, spare).ok()?;
                    let len = Tensor::Dense {
                        shape: vec![batch],
                        values: Values::Int64(len),
                    };
                    lengths.insert(raw.key.clone(), len);
                    RawOut::Tensor(t)
                }
                (RawKind::Sparse, StepKind::Sparse) => {
                    let max_steps = per_record(&record_steps).max().unwrap_or(0);
                    spare.keep_usizes(ends);
                    RawOut::Tensor(Tensor::Sparse {
                        indices: st.indices,
                        values,
                        dense_shape: vec![to_i64(batch), to_i64(max_steps), to_i64(st.max_values)],
                    })
                }
                (RawKind::Ragged { .. }, StepKind::Ragged(dt)) => {
                    let record_splits = row_splits(&record_steps, dt, spare);
                    spare.keep_usizes(ends);
                    RawOut::Rag(Rag {
                        splits: vec![record_splits, st.splits],
                        values,
                        dense_inner: 0,
                    })
                }
                _ => return None,
            };
            spare.keep_usizes(record_steps);
            raws.push(out);
        }
        Some((raws, lengths))
    }
}

/// The sizes of consecutive ranges from their ends.
fn per_record(ends: &[usize]) -> impl Iterator<Item = usize> + '_ {
    let mut start = 0usize;
    ends.iter().map(move |&end| {
        let n = end.saturating_sub(start);
        start = end;
        n
    })
}

/// Parses a batch by the fast path: `None` unless every record is in the canonical form, in
/// which case the general path takes the whole batch. The outputs are the general path's.
fn fast_batch<R: AsRef<[u8]>>(
    ctx: &Plan,
    seq: &Plan,
    records: &[R],
    spare: &mut Buffers,
) -> Option<RawBatch> {
    let batch = records.len();
    if batch == 0 {
        return None; // TensorFlow's checks of an empty batch have their quirks
    }
    let bytes = super::total_bytes(records);
    let mut cbufs = key_bufs(ctx, batch, bytes, spare);
    let mut crun = FastRun::new(ctx);
    let mut srun = StepRun::new(seq, batch, bytes, spare)?;
    for (e, record) in records.iter().enumerate() {
        crun.start(e);
        srun.start(e);
        scan_sequence(
            record.as_ref(),
            |key, msg| match msg.single() {
                Some(feature) => crun.entry(ctx, key, feature, &mut cbufs),
                None => Err(not_canonical()),
            },
            |key, msg| srun.entry(seq, key, &msg),
        )
        .ok()?;
        if !(crun.finish(ctx, &mut cbufs) && srun.finish()) {
            return None;
        }
    }
    learn_sizes(ctx, &cbufs, batch);
    let craws = finish_keys(ctx, cbufs, batch, spare).ok()?;
    let (sraws, lengths) = srun.into_raws(seq, batch, spare)?;
    Some((craws, sraws, lengths))
}
