//! `tf.io.parse_example`: a batch of serialized `tf.train.Example`s to tensors, following
//! TensorFlow's `FastParseExample` and the Python layer above it.

use std::collections::BTreeMap;

use super::buffers::Buffers;
use super::dtype::dtype_name;
use super::fast::{KeyPredictor, extend_canonical, list_tag};
use super::plan::{BatchHeld, OutputPlan, Plan, RawKey, RawKind, shape_string};
use super::ragged::{PartT, Rag, compose};
use super::read::{extend, feature_error, field_error, problem_error, to_i64, view};
use super::spec::SplitsDType;
use super::tensor::{Tensor, Values};
use crate::codec::{FeatureBytes, FeatureView, TfExample, scan_features, walk_canonical};
use crate::error::{Error, Result};
use crate::feature::FeatureProblem;

/// What one key collected over a run of records: the values, and where each record's end.
#[derive(Clone, Debug)]
pub(crate) struct KeyBuf {
    pub(crate) values: Values,
    /// The end of each record's values in `values` (not kept for fixed-length dense keys).
    pub(crate) ends: Vec<usize>,
}

/// A parsed key, before the outputs are put together.
#[derive(Clone, Debug)]
pub(crate) enum RawOut {
    /// A finished tensor (dense keys; sparse keys of feature lists).
    Tensor(Tensor),
    /// A sparse key of `parse_example`: one list per record.
    Var { values: Values, ends: Vec<usize> },
    /// A ragged key.
    Rag(Rag),
}

/// How the fast path treats one raw key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FastKind {
    /// A fixed-length dense key: exactly `stride` values, or missing.
    Fixed,
    /// A `FixedLenSequence` key: a multiple of `stride` values.
    Rows,
    /// A sparse or ragged key: any number of values.
    List,
}

/// What the fast path needs to know of one raw key.
#[derive(Clone, Copy, Debug)]
struct FastKey {
    kind: FastKind,
    /// The oneof member of the key's list kind.
    tag: u32,
    stride: usize,
}

impl FastKey {
    fn new(raw: &RawKey) -> Self {
        let (kind, stride) = match &raw.kind {
            RawKind::Dense { stride, .. } => (FastKind::Fixed, *stride),
            RawKind::DenseVar { stride, .. } => (FastKind::Rows, *stride),
            RawKind::Sparse | RawKind::Ragged { .. } => (FastKind::List, 1),
        };
        FastKey {
            kind,
            tag: list_tag(raw.dtype),
            stride,
        }
    }

    /// Whether `n` values are what the key takes without further checks.
    #[inline]
    fn accepts(self, n: usize) -> bool {
        match self.kind {
            FastKind::Fixed => n == self.stride,
            FastKind::Rows => n.is_multiple_of(self.stride),
            FastKind::List => true,
        }
    }
}

/// The fast path over a run of records: each record's map entries are decoded straight into
/// the key buffers as they come, as long as the record is in the canonical form (every spec key
/// at most once, in the canonical layout, of the right kind and count); otherwise the caller drops
/// what the record added (see [`rollback`]) and runs the general path.
pub(crate) struct FastRun<'a> {
    keys: Vec<FastKey>,
    /// The keys with per-record ends (every kind but `Fixed`).
    with_ends: Vec<usize>,
    /// How many keys are `Fixed`.
    fixed_keys: usize,
    /// For each raw key, the mark of the last record that held it.
    seen: Vec<usize>,
    predict: KeyPredictor<'a>,
    /// The current record: its mark (1 + its index in the run), the position of its next map
    /// entry, and how many `Fixed` keys it held so far.
    mark: usize,
    pos: usize,
    fixed: usize,
}

impl<'a> FastRun<'a> {
    pub(crate) fn new(plan: &Plan) -> Self {
        let keys: Vec<FastKey> = plan.raw.iter().map(FastKey::new).collect();
        FastRun {
            with_ends: keys
                .iter()
                .enumerate()
                .filter(|(_, k)| k.kind != FastKind::Fixed)
                .map(|(i, _)| i)
                .collect(),
            fixed_keys: keys.iter().filter(|k| k.kind == FastKind::Fixed).count(),
            seen: vec![0; keys.len()],
            keys,
            predict: KeyPredictor::new(),
            mark: 0,
            pos: 0,
            fixed: 0,
        }
    }

    /// Parses record `j` of the run, a `tf.train.Example`, into `bufs`. `false` when it is not
    /// in the canonical form, with `bufs` holding part of it.
    fn record(&mut self, plan: &Plan, record: &'a [u8], j: usize, bufs: &mut [KeyBuf]) -> bool {
        self.start(j);
        walk_canonical::<TfExample>(record, |key, feature| {
            self.entry(plan, key, feature, bufs).is_ok()
        }) && self.finish(plan, bufs)
    }

    /// Starts record `j` of the run.
    pub(crate) fn start(&mut self, j: usize) {
        self.mark = j + 1;
        self.pos = 0;
        self.fixed = 0;
    }

    /// Reads one map entry of the current record, its serialized `Feature` in one slice. `Err`
    /// (a placeholder, not for the user) when the record is not in the canonical form.
    #[inline]
    pub(crate) fn entry(
        &mut self,
        plan: &Plan,
        key: &'a [u8],
        feature: &[u8],
        bufs: &mut [KeyBuf],
    ) -> Result<()> {
        let found = self.predict.lookup(plan, self.pos, key);
        self.pos += 1;
        let Some(i) = found else { return Ok(()) };
        let (Some(&k), Some(seen), Some(buf)) =
            (self.keys.get(i), self.seen.get_mut(i), bufs.get_mut(i))
        else {
            return Err(not_canonical());
        };
        if *seen == self.mark {
            return Err(not_canonical()); // a repeated key
        }
        *seen = self.mark;
        // An empty `Feature` of a dense key does not count as a value (general path).
        let n = Some(feature)
            .filter(|b| k.kind == FastKind::List || !b.is_empty())
            .and_then(|b| extend_canonical(&mut buf.values, k.tag, b));
        match n {
            Some(n) if k.accepts(n) => {
                self.fixed += usize::from(k.kind == FastKind::Fixed);
                Ok(())
            }
            _ => Err(not_canonical()),
        }
    }

    /// Ends the current record: the defaults of the fixed-length keys it lacks, and the ends
    /// of the others. `false` when a required key is missing.
    pub(crate) fn finish(&mut self, plan: &Plan, bufs: &mut [KeyBuf]) -> bool {
        if self.fixed != self.fixed_keys {
            for ((raw, buf), &seen) in plan.raw.iter().zip(bufs.iter_mut()).zip(&self.seen) {
                if let RawKind::Dense { default, .. } = &raw.kind
                    && seen != self.mark
                {
                    match default {
                        Some(d) => buf.values.extend_from(d),
                        None => return false,
                    }
                }
            }
        }
        for &i in &self.with_ends {
            if let Some(buf) = bufs.get_mut(i) {
                buf.ends.push(buf.values.len());
            }
        }
        true
    }
}

/// The signal of the fast path's scans to stop: the general path takes the record.
#[cold]
pub(crate) fn not_canonical() -> Error {
    Error::feature("not in the canonical layout")
}

/// Drops what record `j` of the run added to `bufs`: every earlier record added exactly
/// `stride` values to a fixed-length key, and its end to every other key.
fn rollback(plan: &Plan, bufs: &mut [KeyBuf], j: usize) {
    for (raw, buf) in plan.raw.iter().zip(bufs.iter_mut()) {
        match &raw.kind {
            RawKind::Dense { stride, .. } => buf.values.truncate(j.saturating_mul(*stride)),
            _ => {
                buf.ends.truncate(j);
                buf.values.truncate(buf.ends.last().copied().unwrap_or(0));
            }
        }
    }
}

/// Empty buffers for the raw keys of `plan`, for a run of `n` records of `bytes` bytes in all,
/// with room for what they will likely hold (see [`SizeHint`](super::plan::SizeHint)), taken
/// from `spare` where it has them.
pub(crate) fn key_bufs(plan: &Plan, n: usize, bytes: usize, spare: &mut Buffers) -> Vec<KeyBuf> {
    plan.raw
        .iter()
        .zip(&plan.hints)
        .map(|(r, hint)| {
            let guess = hint.guess(n, bytes);
            let (count, ends) = match r.kind {
                RawKind::Dense { stride, .. } => (stride.saturating_mul(n), 0),
                _ => (guess.values, n),
            };
            KeyBuf {
                values: spare.values(r.dtype, count, guess.bytes),
                ends: if ends == 0 {
                    Vec::new()
                } else {
                    spare.usizes(ends)
                },
            }
        })
        .collect()
}

/// Remembers what the buffers of a run of `n` records held, to size the next run's.
pub(crate) fn learn_sizes(plan: &Plan, bufs: &[KeyBuf], n: usize) {
    for (hint, buf) in plan.hints.iter().zip(bufs) {
        let held = BatchHeld {
            values: buf.values.len(),
            bytes: buf.values.string_bytes(),
            steps: 0,
        };
        hint.learn(n, held);
    }
}

/// Parses `records[..]`, whose first has index `base` in the batch, into one buffer per key:
/// each record by the fast path, or when that declines it (or `fast` is false, as tests ask)
/// by the general path.
pub(crate) fn parse_run<R: AsRef<[u8]>>(
    plan: &Plan,
    records: &[R],
    base: usize,
    fast: bool,
    spare: &mut Buffers,
) -> Result<Vec<KeyBuf>> {
    let bytes = super::total_bytes(records);
    let mut bufs = key_bufs(plan, records.len(), bytes, spare);
    let mut run = FastRun::new(plan);
    let mut slots: Vec<Option<FeatureBytes<'_>>> = vec![None; plan.raw.len()];
    // Records the fast path declined in a row: past a few, it only tries now and then, so that
    // a run of non-canonical records costs little more than the general path alone.
    let mut declined = 0usize;
    for (j, record) in records.iter().enumerate() {
        let try_fast = fast && (declined < 8 || j.is_multiple_of(64));
        if try_fast && run.record(plan, record.as_ref(), j, &mut bufs) {
            declined = 0;
        } else {
            declined += 1;
            rollback(plan, &mut bufs, j);
            general_record(plan, record.as_ref(), base + j, &mut slots, &mut bufs)?;
        }
    }
    learn_sizes(plan, &bufs, records.len());
    Ok(bufs)
}

/// Parses record `index` of the batch into `bufs` by the general path, which reads every
/// valid encoding and words the errors. `slots` are all `None`, and left so.
fn general_record<'a>(
    plan: &Plan,
    record: &'a [u8],
    index: usize,
    slots: &mut [Option<FeatureBytes<'a>>],
    bufs: &mut [KeyBuf],
) -> Result<()> {
    scan_features::<TfExample>(record, |key, msg| {
        if let Some(i) = plan.lookup(key)
            && let (Some(raw), Some(slot)) = (plan.raw.get(i), slots.get_mut(i))
        {
            // The last entry of a key wins. For a dense key TensorFlow skips an entry whose
            // `Feature` is empty, so an earlier entry with a value wins over it.
            let dense = matches!(raw.kind, RawKind::Dense { .. } | RawKind::DenseVar { .. });
            if !(dense && msg.slices().all(<[u8]>::is_empty)) {
                *slot = Some(msg);
            }
        }
        Ok(())
    })
    .map_err(|e| e.with_record(u64::try_from(index).unwrap_or(u64::MAX)))?;
    for ((raw, slot), buf) in plan.raw.iter().zip(slots.iter_mut()).zip(bufs.iter_mut()) {
        read_key(raw, slot.take(), buf, index)?;
    }
    Ok(())
}

/// Reads one key of one record into its buffer.
fn read_key(
    raw: &RawKey,
    slot: Option<FeatureBytes<'_>>,
    buf: &mut KeyBuf,
    index: usize,
) -> Result<()> {
    let key = raw.key.as_str();
    let feature: Option<FeatureView<'_>> = match slot {
        Some(m) => Some(view(m, key, index)?).filter(FeatureView::has_kind),
        None => None,
    };
    match &raw.kind {
        RawKind::Dense {
            shape,
            stride,
            default,
        } => match feature {
            None => match default {
                Some(d) => buf.values.extend_from(d),
                None => {
                    return Err(problem_error(
                        key,
                        index,
                        FeatureProblem::Missing,
                        format!(
                            "feature (data type: {}) is required but could not be found: \
                             expected {stride} value{} of shape {}, found none and no default",
                            dtype_name(raw.dtype),
                            if *stride == 1 { "" } else { "s" },
                            shape_string(false, shape)
                        ),
                    ));
                }
            },
            Some(f) => {
                let n = extend(&mut buf.values, &f)
                    .map_err(|e| field_error(key, index, raw.dtype, e))?;
                if n != *stride {
                    return Err(problem_error(
                        key,
                        index,
                        FeatureProblem::Count {
                            expected: *stride,
                            found: n,
                        },
                        format!(
                            "number of {} values != expected: expected {stride} (output shape {}), found {n}",
                            dtype_name(raw.dtype),
                            shape_string(false, shape)
                        ),
                    ));
                }
            }
        },
        RawKind::DenseVar {
            row_shape, stride, ..
        } => {
            if let Some(f) = feature {
                let n = extend(&mut buf.values, &f)
                    .map_err(|e| field_error(key, index, raw.dtype, e))?;
                if !n.is_multiple_of(*stride) {
                    return Err(feature_error(
                        key,
                        index,
                        format!(
                            "number of {} values is not a multiple of stride length: expected a \
                             multiple of {stride} (output shape {}), found {n}",
                            dtype_name(raw.dtype),
                            shape_string(true, row_shape)
                        ),
                    ));
                }
            }
            buf.ends.push(buf.values.len());
        }
        RawKind::Sparse | RawKind::Ragged { .. } => {
            if let Some(f) = feature {
                extend(&mut buf.values, &f).map_err(|e| field_error(key, index, raw.dtype, e))?;
            }
            buf.ends.push(buf.values.len());
        }
    }
    Ok(())
}

/// Concatenates the buffers of consecutive runs of records.
pub(crate) fn merge_runs(mut runs: Vec<Vec<KeyBuf>>) -> Vec<KeyBuf> {
    if runs.len() == 1 {
        return runs.pop().unwrap_or_default();
    }
    let mut iter = runs.into_iter();
    let Some(mut acc) = iter.next() else {
        return Vec::new();
    };
    for run in iter {
        for (a, b) in acc.iter_mut().zip(run) {
            let offset = a.values.len();
            a.ends.extend(b.ends.into_iter().map(|e| e + offset));
            a.values.append(b.values);
        }
    }
    acc
}

/// Turns the merged buffers into the raw tensors of each key; the buffers they leave go to
/// `spare`.
pub(crate) fn finish_keys(
    plan: &Plan,
    bufs: Vec<KeyBuf>,
    batch: usize,
    spare: &mut Buffers,
) -> Result<Vec<RawOut>> {
    plan.raw
        .iter()
        .zip(bufs)
        .map(|(raw, buf)| {
            Ok(match &raw.kind {
                RawKind::Dense { shape, .. } => {
                    let mut s = Vec::with_capacity(shape.len() + 1);
                    s.push(batch);
                    s.extend_from_slice(shape);
                    RawOut::Tensor(Tensor::Dense {
                        shape: s,
                        values: buf.values,
                    })
                }
                RawKind::DenseVar {
                    row_shape,
                    stride,
                    pad,
                    ..
                } => RawOut::Tensor(pad_rows(
                    &raw.key, buf, batch, row_shape, *stride, pad, spare,
                )?),
                RawKind::Sparse => RawOut::Var {
                    values: buf.values,
                    ends: buf.ends,
                },
                RawKind::Ragged { splits } => {
                    let splits = row_splits(&buf.ends, *splits, spare);
                    spare.keep_usizes(buf.ends);
                    RawOut::Rag(Rag {
                        values: buf.values,
                        splits: vec![splits],
                        dense_inner: 0,
                    })
                }
            })
        })
        .collect()
}

/// `[0] + ends`, in the splits type.
pub(crate) fn row_splits(ends: &[usize], dt: SplitsDType, spare: &mut Buffers) -> Vec<i64> {
    let mut s = spare.i64s(ends.len() + 1);
    s.push(0);
    s.extend(ends.iter().map(|&e| dt.fit(to_i64(e))));
    s
}

/// The rows of a `FixedLenSequenceFeature`, padded to the longest record:
/// `[batch, max_rows] + row_shape`. The buffers of `buf` it does not use go to `spare`.
pub(crate) fn pad_rows(
    key: &str,
    buf: KeyBuf,
    batch: usize,
    row_shape: &[usize],
    stride: usize,
    pad: &Values,
    spare: &mut Buffers,
) -> Result<Tensor> {
    let mut start = 0usize;
    let mut max = 0usize;
    for &end in &buf.ends {
        max = max.max(end.saturating_sub(start));
        start = end;
    }
    let rows = max / stride.max(1);
    let total = batch
        .checked_mul(max)
        .ok_or_else(|| Error::feature("padded output is too large").with_key(key))?;
    let out = if total == buf.values.len() {
        // Every record has the most rows: nothing to pad.
        buf.values
    } else {
        let mut out = spare.values(buf.values.dtype(), total, 0);
        out.try_reserve(total).map_err(|e| {
            Error::feature(format!("padded output of {total} values: {e}")).with_key(key)
        })?;
        let mut start = 0usize;
        for &end in &buf.ends {
            out.extend_range(&buf.values, start, end);
            out.push_repeat(pad, 0, max.saturating_sub(end.saturating_sub(start)));
            start = end;
        }
        spare.keep_values(buf.values);
        out
    };
    spare.keep_usizes(buf.ends);
    let mut shape = Vec::with_capacity(row_shape.len() + 2);
    shape.push(batch);
    shape.push(rows);
    shape.extend_from_slice(row_shape);
    Ok(Tensor::Dense { shape, values: out })
}

/// The sparse tensor of a `VarLenFeature`: `[batch, index]` indices in record order.
pub(crate) fn var_to_sparse(values: Values, ends: &[usize], spare: &mut Buffers) -> Tensor {
    let mut indices = spare.i64s(values.len().saturating_mul(2));
    let mut start = 0usize;
    let mut max = 0usize;
    for (b, &end) in ends.iter().enumerate() {
        let n = end.saturating_sub(start);
        max = max.max(n);
        for i in 0..n {
            indices.push(to_i64(b));
            indices.push(to_i64(i));
        }
        start = end;
    }
    Tensor::Sparse {
        indices,
        values,
        dense_shape: vec![to_i64(ends.len()), to_i64(max)],
    }
}

/// The raw tensors of a batch, handed out to the outputs: the last user of a key takes it,
/// earlier ones get a copy.
pub(crate) struct Pool {
    items: Vec<Option<RawOut>>,
    uses: Vec<usize>,
}

impl Pool {
    pub(crate) fn new(items: Vec<RawOut>, plan: &Plan) -> Pool {
        let mut uses = vec![0usize; items.len()];
        let mut count = |i: usize| {
            if let Some(u) = uses.get_mut(i) {
                *u += 1;
            }
        };
        for (_, out) in &plan.outputs {
            match out {
                OutputPlan::Raw(i) => count(*i),
                OutputPlan::Sparse { index, value, .. } => {
                    index.iter().for_each(|&i| count(i));
                    count(*value);
                }
                OutputPlan::Ragged {
                    value, partitions, ..
                } => {
                    count(*value);
                    for p in partitions {
                        if let Some(i) = partition_key(p) {
                            count(i);
                        }
                    }
                }
            }
        }
        Pool {
            items: items.into_iter().map(Some).collect(),
            uses,
        }
    }

    pub(crate) fn take(&mut self, i: usize) -> Option<RawOut> {
        let uses = self.uses.get_mut(i)?;
        *uses = uses.saturating_sub(1);
        let last = *uses == 0;
        let slot = self.items.get_mut(i)?;
        if last { slot.take() } else { slot.clone() }
    }

    /// A partition key as a one-level partition tensor.
    pub(crate) fn partition(&mut self, i: usize, dt: SplitsDType) -> Option<PartT> {
        match self.take(i)? {
            RawOut::Rag(r) => Some(PartT::from_rag(&r, dt)),
            _ => None,
        }
    }
}

pub(crate) fn partition_key(p: &super::plan::PartitionPlan) -> Option<usize> {
    use super::plan::PartitionPlan as P;
    match *p {
        P::Splits(i) | P::Lengths(i) | P::Starts(i) | P::Limits(i) | P::RowIds(i) => Some(i),
        P::Uniform(_) => None,
    }
}

/// Puts the outputs of `plan` together from the parsed keys.
pub(crate) fn build_outputs(
    plan: &Plan,
    raws: Vec<RawOut>,
    row_budget: usize,
    spare: &mut Buffers,
) -> Result<BTreeMap<String, Tensor>> {
    let mut pool = Pool::new(raws, plan);
    let mut out = BTreeMap::new();
    for (name, p) in &plan.outputs {
        let missing = || Error::feature("internal error: a parsed key is missing").with_key(name);
        let tensor = match p {
            OutputPlan::Raw(i) => match pool.take(*i).ok_or_else(missing)? {
                RawOut::Tensor(t) => t,
                RawOut::Var { values, ends } => {
                    let t = var_to_sparse(values, &ends, spare);
                    spare.keep_usizes(ends);
                    t
                }
                RawOut::Rag(r) => r.into_tensor(),
            },
            OutputPlan::Sparse {
                index,
                index_names,
                value,
                size,
                already_sorted,
            } => {
                let (values, ends) = match pool.take(*value).ok_or_else(missing)? {
                    RawOut::Var { values, ends } => (values, ends),
                    _ => return Err(missing()),
                };
                let mut ids = Vec::with_capacity(index.len());
                for (&i, n) in index.iter().zip(index_names) {
                    match pool.take(i).ok_or_else(missing)? {
                        RawOut::Var {
                            values: Values::Int64(v),
                            ends,
                        } => ids.push((n.as_str(), v, ends)),
                        _ => return Err(missing()),
                    }
                }
                sparse_feature(name, values, &ends, &ids, size, *already_sorted)?
            }
            OutputPlan::Ragged {
                value,
                partitions,
                splits,
            } => {
                let rag = match pool.take(*value).ok_or_else(missing)? {
                    RawOut::Rag(r) => r,
                    _ => return Err(missing()),
                };
                let dt = *splits;
                compose(rag, partitions, |i| pool.partition(i, dt), dt, row_budget)
                    .map_err(|e| ragged_error(name, &e))?
                    .into_tensor()
            }
        };
        out.insert(name.clone(), tensor);
    }
    Ok(out)
}

#[cold]
pub(crate) fn ragged_error(name: &str, detail: &str) -> Error {
    Error::feature(format!("cannot build the ragged tensor: {detail}")).with_key(name)
}

/// A `SparseFeature`: TensorFlow's `sparse_merge` of the index keys' and value key's sparse
/// tensors, then `sparse_reorder` unless `already_sorted`.
fn sparse_feature(
    name: &str,
    values: Values,
    ends: &[usize],
    ids: &[(&str, Vec<i64>, Vec<usize>)],
    size: &[i64],
    already_sorted: bool,
) -> Result<Tensor> {
    let nnz = values.len();
    for (key, v, id_ends) in ids {
        if v.len() != nnz {
            // TensorFlow only sees the totals; name the first record that differs.
            let record = first_difference(ends, id_ends);
            let mut e = Error::feature(format!(
                "SparseFeature index feature {key:?} and value feature must have the same number \
                 of values: expected {nnz}, found {}",
                v.len()
            ))
            .with_key(name);
            if let Some(r) = record {
                e = e.with_record(u64::try_from(r).unwrap_or(u64::MAX));
            }
            return Err(e);
        }
    }
    let rank = ids.len() + 1;
    let mut indices = Vec::with_capacity(nnz * rank);
    let mut start = 0usize;
    for (b, &end) in ends.iter().enumerate() {
        for j in start..end.max(start) {
            indices.push(to_i64(b));
            for (_, v, _) in ids {
                indices.push(v.get(j).copied().unwrap_or(0));
            }
        }
        start = end;
    }
    let mut dense_shape = Vec::with_capacity(rank);
    dense_shape.push(to_i64(ends.len()));
    dense_shape.extend_from_slice(size);
    let sorted = |a: &[i64], b: &[i64]| a < b;
    let in_order = indices
        .chunks_exact(rank)
        .zip(indices.chunks_exact(rank).skip(1))
        .all(|(a, b)| sorted(a, b));
    if already_sorted || in_order {
        return Ok(Tensor::Sparse {
            indices,
            values,
            dense_shape,
        });
    }
    let mut perm: Vec<usize> = (0..nnz).collect();
    perm.sort_by(|&a, &b| {
        let ra = indices.get(a * rank..(a + 1) * rank).unwrap_or(&[]);
        let rb = indices.get(b * rank..(b + 1) * rank).unwrap_or(&[]);
        ra.cmp(rb)
    });
    let mut sorted_indices = Vec::with_capacity(indices.len());
    for &p in &perm {
        sorted_indices.extend_from_slice(indices.get(p * rank..(p + 1) * rank).unwrap_or(&[]));
    }
    Ok(Tensor::Sparse {
        indices: sorted_indices,
        values: values.permuted(&perm),
        dense_shape,
    })
}

/// The first record whose per-record counts differ between two sparse keys.
fn first_difference(a: &[usize], b: &[usize]) -> Option<usize> {
    let mut prev = (0usize, 0usize);
    for (r, (&x, &y)) in a.iter().zip(b).enumerate() {
        if x.saturating_sub(prev.0) != y.saturating_sub(prev.1) {
            return Some(r);
        }
        prev = (x, y);
    }
    None
}
