//! The output tensors of both parsers, built from the parsed keys: each key's buffers made a
//! raw tensor ([`RawOut`]: dense, padded rows, one list per record, ragged splits), then each
//! output of the spec put together from them (`VarLenFeature` as COO, `SparseFeature`'s merge
//! and reorder, ragged partitions composed), as TensorFlow's Python layer does.

use std::collections::BTreeMap;

use super::buffers::Buffers;
use super::example::KeyBuf;
use super::narrow;
use super::plan::{OutputPlan, Plan, RawKind};
use super::ragged::{PartT, Rag, compose};
use super::read::to_i64;
use super::spec::SplitsDType;
use super::tensor::{Tensor, Values};
use crate::error::{Error, Result};

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

/// The raw outputs of a `SequenceExample` batch: context keys, feature-list keys, feature-list
/// lengths.
pub(crate) type RawBatch = (Vec<RawOut>, Vec<RawOut>, BTreeMap<String, Tensor>);

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
                    .map_err(|e| {
                        let err = ragged_error(name, &e.detail);
                        match e.record {
                            Some(r) => err.with_record(u64::try_from(r).unwrap_or(u64::MAX)),
                            None => err,
                        }
                    })?
                    .into_tensor()
            }
        };
        out.insert(name.clone(), tensor);
    }
    for (name, dtype) in &plan.narrow {
        if let Some(t) = out.get(name) {
            narrow::check(name, *dtype, t)?;
        }
    }
    Ok(out)
}

#[cold]
pub(crate) fn ragged_error(name: &str, detail: &str) -> Error {
    Error::feature(format!("cannot build the ragged tensor: {detail}")).with_key(name)
}

/// A `SparseFeature`: TensorFlow's `sparse_merge` of the index keys' and value key's sparse
/// tensors (each entry in the batch row of its first index), then `sparse_reorder` unless
/// `already_sorted`.
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
    // Each entry's batch row is its record in the first index feature, as in TensorFlow's
    // `sparse_merge` (`sp_ids[0].indices[:, :-1]`): the index and value features need the same
    // number of values over the batch, not in every record.
    let rows = ids
        .first()
        .map_or(ends, |(_, _, id_ends)| id_ends.as_slice());
    for (b, &end) in rows.iter().enumerate() {
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
