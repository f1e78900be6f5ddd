//! The fast path of `tf.io.parse_sequence_example`: the context read by `parse_example`'s
//! [`FastRun`], the feature lists' steps decoded straight into the key buffers, as long as every
//! record of the batch is in the canonical form; otherwise the batch goes to the general path,
//! which gives the same outputs and words the errors.

use std::collections::BTreeMap;

use crate::codec::{FeatureBytes, canonical_step_values, scan_sequence};
use crate::error::Result;
use crate::parse::buffers::Buffers;
use crate::parse::example::{FastRun, KeyBuf, key_bufs, learn_sizes, not_canonical, total_bytes};
use crate::parse::fast::{KeyPredictor, Sink, for_each_field_1, list_tag};
use crate::parse::outputs::{RawBatch, RawOut, finish_keys, pad_rows, row_splits};
use crate::parse::plan::{BatchHeld, Plan, RawKind};
use crate::parse::ragged::Rag;
use crate::parse::read::to_i64;
use crate::parse::spec::SplitsDType;
use crate::parse::tensor::{Tensor, Values};

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
pub(super) fn fast_batch<R: AsRef<[u8]>>(
    ctx: &Plan,
    seq: &Plan,
    records: &[R],
    spare: &mut Buffers,
) -> Option<RawBatch> {
    let batch = records.len();
    if batch == 0 {
        return None; // TensorFlow's checks of an empty batch have their quirks
    }
    let bytes = total_bytes(records);
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
