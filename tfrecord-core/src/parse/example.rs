//! `tf.io.parse_example`'s walk over a batch: each serialized `tf.train.Example` read into one
//! buffer per spec key ([`KeyBuf`]), by the fast path where the record is in the canonical form
//! and by the general path otherwise, following TensorFlow's `FastParseExample`. The tensors are
//! built from these buffers in [`outputs`](super::outputs).

use super::buffers::Buffers;
use super::dtype::dtype_name;
use super::fast::{KeyPredictor, extend_canonical, list_tag};
use super::plan::{BatchHeld, Plan, RawKey, RawKind, shape_string};
use super::read::{extend, feature_error, field_error, overfilled, problem_error, view};
use super::tensor::Values;
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
                        // Past the bound, the general path says so.
                        Some(d) if buf.values.may_fill(d, plan.max_filled) => {
                            buf.values.extend_from(d)
                        }
                        _ => return false,
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

pub(crate) fn total_bytes<R: AsRef<[u8]>>(records: &[R]) -> usize {
    records
        .iter()
        .fold(0usize, |acc, r| acc.saturating_add(r.as_ref().len()))
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
    let bytes = total_bytes(records);
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
        read_key(raw, slot.take(), buf, index, plan.max_filled)?;
    }
    Ok(())
}

/// Reads one key of one record into its buffer.
fn read_key(
    raw: &RawKey,
    slot: Option<FeatureBytes<'_>>,
    buf: &mut KeyBuf,
    index: usize,
    max_filled: usize,
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
                Some(d) if buf.values.may_fill(d, max_filled) => buf.values.extend_from(d),
                Some(d) => return Err(overfilled(key, index, d.len(), max_filled)),
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
