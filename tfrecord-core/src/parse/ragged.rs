//! Building `RaggedFeature` outputs from the parsed value and partition keys, step for step as
//! TensorFlow's `_add_batched_ragged_partition` does (with `validate=False`, its default: the
//! partitions are applied as given, not checked against the values).

use super::plan::PartitionPlan;
use super::spec::SplitsDType;
use super::tensor::{Tensor, Values};

/// A ragged tensor under construction: `values` split by `splits` (outermost first). The last
/// `dense_inner` levels are uniform levels that TensorFlow keeps as dense inner dimensions of
/// the values (they do not count in its `ragged_rank`).
#[derive(Clone, Debug)]
pub(crate) struct Rag {
    pub(crate) values: Values,
    pub(crate) splits: Vec<Vec<i64>>,
    pub(crate) dense_inner: usize,
}

impl Rag {
    /// TensorFlow's `ragged_rank`.
    fn ragged_rank(&self) -> usize {
        self.splits.len().saturating_sub(self.dense_inner)
    }

    /// The number of rows of `self.values` (the next level, or the flat values).
    fn inner_rows(&self) -> usize {
        match self.splits.get(1) {
            Some(s) => s.len().saturating_sub(1),
            None => self.values.len(),
        }
    }

    /// `row_starts()`: the outer splits without the last entry.
    fn row_starts(&self) -> &[i64] {
        match self.splits.first() {
            Some(s) => &s[..s.len().saturating_sub(1)],
            None => &[],
        }
    }

    pub(crate) fn into_tensor(self) -> Tensor {
        Tensor::Ragged {
            flat_values: self.values,
            nested_row_splits: self.splits,
        }
    }
}

/// A partition tensor with one ragged level: `values` split into rows by `splits`.
pub(crate) struct PartT {
    pub(crate) splits: Vec<i64>,
    pub(crate) values: Vec<i64>,
}

impl PartT {
    /// The innermost level of a parsed partition key (`partition_t.values` when there are two
    /// batch dimensions), its values cast to the splits type.
    pub(crate) fn from_rag(r: &Rag, dt: SplitsDType) -> PartT {
        PartT {
            splits: r.splits.last().cloned().unwrap_or_else(|| vec![0]),
            values: r
                .values
                .as_i64()
                .unwrap_or(&[])
                .iter()
                .map(|&v| dt.fit(v))
                .collect(),
        }
    }

    fn rows(&self) -> usize {
        self.splits.len().saturating_sub(1)
    }

    /// `(row, value)` for every value, rows in order.
    fn by_row(&self) -> impl Iterator<Item = (usize, i64)> + '_ {
        self.splits.windows(2).enumerate().flat_map(move |(r, w)| {
            let (a, b) = (
                clamp(w[0], self.values.len()),
                clamp(w[1], self.values.len()),
            );
            self.values
                .get(a..b.max(a))
                .unwrap_or(&[])
                .iter()
                .map(move |&v| (r, v))
        })
    }

    /// `partition_t[:, 1:]`: every row without its first value.
    fn drop_first(&self) -> PartT {
        let mut splits = Vec::with_capacity(self.splits.len());
        let mut values = Vec::with_capacity(self.values.len());
        splits.push(0);
        for w in self.splits.windows(2) {
            let (a, b) = (
                clamp(w[0], self.values.len()),
                clamp(w[1], self.values.len()),
            );
            if let Some(row) = self.values.get(a..b.max(a))
                && let Some(rest) = row.get(1..)
            {
                values.extend_from_slice(rest);
            }
            splits.push(super::read::to_i64(values.len()));
        }
        PartT { splits, values }
    }
}

/// Why a ragged output cannot be built, and the record it is about when one is to blame.
#[derive(Debug)]
pub(crate) struct RaggedError {
    pub(crate) detail: String,
    pub(crate) record: Option<usize>,
}

impl From<String> for RaggedError {
    fn from(detail: String) -> Self {
        RaggedError {
            detail,
            record: None,
        }
    }
}

impl From<&str> for RaggedError {
    fn from(detail: &str) -> Self {
        RaggedError::from(detail.to_string())
    }
}

fn clamp(v: i64, len: usize) -> usize {
    usize::try_from(v.max(0)).unwrap_or(usize::MAX).min(len)
}

/// Applies the partitions of a `RaggedFeature` (outermost first) to its parsed values.
/// `part(i)` is the parsed partition key `i`. `row_budget` bounds the rows that value row ids
/// may imply, so a small record cannot demand a huge allocation.
///
/// # Errors
/// What TensorFlow rejects: partitions whose rows do not line up with the values' rows (its
/// `repeat` fails), a uniform row length that does not divide the values (its `reshape`
/// fails), negative value row ids (its `bincount` fails), value row ids whose count over the
/// batch differs from the values' rows (its `from_value_rowids` fails).
pub(crate) fn compose(
    value: Rag,
    partitions: &[PartitionPlan],
    mut part: impl FnMut(usize) -> Option<PartT>,
    dt: SplitsDType,
    row_budget: usize,
) -> Result<Rag, RaggedError> {
    let mut rt = value;
    // A batch of SequenceExamples has two batch dimensions: collapse them, and restore the
    // outer one at the end.
    let outer = if rt.ragged_rank() > 1 {
        let outer = rt.splits.remove(0);
        Some(outer)
    } else {
        None
    };
    for p in partitions.iter().rev() {
        rt = match *p {
            PartitionPlan::Uniform(len) => uniform(rt, len, dt)?,
            PartitionPlan::Splits(i) => {
                let pt = part(i).ok_or("a partition feature is missing")?;
                limits(rt, &pt.drop_first(), dt)?
            }
            PartitionPlan::Limits(i) => {
                let pt = part(i).ok_or("a partition feature is missing")?;
                limits(rt, &pt, dt)?
            }
            PartitionPlan::Starts(i) => {
                let pt = part(i).ok_or("a partition feature is missing")?;
                starts(rt, &pt, dt)?
            }
            PartitionPlan::Lengths(i) => {
                let pt = part(i).ok_or("a partition feature is missing")?;
                lengths(rt, pt, dt)
            }
            PartitionPlan::RowIds(i) => {
                let pt = part(i).ok_or("a partition feature is missing")?;
                row_ids(rt, &pt, dt, row_budget).map_err(|mut e| {
                    // With two batch dimensions the rows are a record's steps: name the record.
                    if let (Some(outer), Some(step)) = (&outer, e.record) {
                        let step = super::read::to_i64(step);
                        e.record = outer.windows(2).position(|w| w[0] <= step && step < w[1]);
                    }
                    e
                })?
            }
        };
    }
    if let Some(outer) = outer {
        rt.splits.insert(0, outer);
    }
    Ok(rt)
}

/// The new splits: the partition's rows, then `level`, then the inner levels of `rt`.
fn wrap(rt: Rag, outer: Vec<i64>, level: Vec<i64>) -> Rag {
    let mut splits = Vec::with_capacity(rt.splits.len() + 1);
    splits.push(outer);
    splits.push(level);
    splits.extend(rt.splits.into_iter().skip(1));
    Rag {
        values: rt.values,
        splits,
        dense_inner: rt.dense_inner,
    }
}

/// `partition_t.values + repeat(rt.row_starts(), partition_t.row_lengths())`.
fn adjust(rt: &Rag, pt: &PartT, dt: SplitsDType) -> Result<Vec<i64>, String> {
    let starts = rt.row_starts();
    if starts.len() != pt.rows() {
        return Err(format!(
            "values and partitions are not aligned: the values have {} rows, the partition {}",
            starts.len(),
            pt.rows()
        ));
    }
    Ok(pt
        .by_row()
        .map(|(r, v)| dt.fit(v.wrapping_add(starts.get(r).copied().unwrap_or(0))))
        .collect())
}

/// `RowLimits` (and `RowSplits` without each row's leading entry).
fn limits(rt: Rag, pt: &PartT, dt: SplitsDType) -> Result<Rag, String> {
    let adjusted = adjust(&rt, pt, dt)?;
    let mut level = Vec::with_capacity(adjusted.len() + 1);
    level.push(0);
    level.extend(adjusted);
    Ok(wrap(rt, pt.splits.clone(), level))
}

/// `RowStarts`: the starts, then the number of rows of the values.
fn starts(rt: Rag, pt: &PartT, dt: SplitsDType) -> Result<Rag, String> {
    let mut level = adjust(&rt, pt, dt)?;
    level.push(dt.fit(super::read::to_i64(rt.inner_rows())));
    Ok(wrap(rt, pt.splits.clone(), level))
}

/// `RowLengths`: `[0] + cumsum(lengths)`.
fn lengths(rt: Rag, pt: PartT, dt: SplitsDType) -> Rag {
    let mut level = Vec::with_capacity(pt.values.len() + 1);
    let mut acc = 0i64;
    level.push(0);
    for v in &pt.values {
        acc = dt.fit(acc.wrapping_add(*v));
        level.push(acc);
    }
    wrap(rt, pt.splits, level)
}

/// `ValueRowIds`: each batch item has `max(row id) + 1` rows; the ids are shifted past the
/// rows of the items before, then counted into row lengths (`bincount`, which TensorFlow does
/// in 32 bits).
fn row_ids(rt: Rag, pt: &PartT, dt: SplitsDType, row_budget: usize) -> Result<Rag, RaggedError> {
    // `from_value_rowids` needs one row id per row of the values, over the batch (not in each
    // record); TensorFlow fails with "Shapes (n,) and (m,) are incompatible" otherwise.
    if pt.values.len() != rt.inner_rows() {
        // TensorFlow only sees the totals; name the first record whose counts differ.
        let per_record = |s: &[i64]| s.windows(2).map(|w| w[1] - w[0]).collect::<Vec<_>>();
        let ids = per_record(&pt.splits);
        let rows = rt.splits.first().map(|s| per_record(s)).unwrap_or_default();
        return Err(RaggedError {
            detail: format!(
                "value row ids and values are not aligned: {} row ids over the batch for {} \
                 values (or rows)",
                pt.values.len(),
                rt.inner_rows()
            ),
            record: ids.iter().zip(&rows).position(|(a, b)| a != b),
        });
    }
    let rows = pt.rows();
    let mut nrows = vec![0i64; rows];
    for (r, v) in pt.by_row() {
        if let Some(n) = nrows.get_mut(r) {
            *n = (*n).max(dt.fit(v.wrapping_add(1)));
        }
    }
    let mut offsets = Vec::with_capacity(rows);
    let mut acc = 0i64;
    let mut outer = Vec::with_capacity(rows + 1);
    outer.push(0);
    for &n in &nrows {
        offsets.push(acc);
        acc = dt.fit(acc.wrapping_add(n));
        outer.push(acc);
    }
    let adjusted: Vec<i64> = pt
        .by_row()
        .map(|(r, v)| dt.fit(v.wrapping_add(offsets.get(r).copied().unwrap_or(0))))
        .collect();
    // from_value_rowids: nrows is the last id + 1; bincount works on int32.
    let n = adjusted
        .last()
        .map_or(0, |&last| dt.fit(last.wrapping_add(1)));
    // TensorFlow's bincount counts rows in 32 bits: more rows than that cannot be counted
    // (it fails on the shapes), and wrapping them would describe rows the counts do not hold.
    let Ok(n32) = i32::try_from(n) else {
        return Err(if n < 0 {
            format!("value row ids imply a negative number of rows ({n})")
        } else {
            format!(
                "value row ids imply {n} rows, more than the 32-bit row count TensorFlow \
                 counts them with holds"
            )
        }
        .into());
    };
    if n32 < 0 {
        return Err(format!("value row ids imply a negative number of rows ({n32})").into());
    }
    let n = usize::try_from(n32).unwrap_or(usize::MAX);
    if n > row_budget {
        return Err(format!(
            "value row ids imply {n} rows, more than the batch can describe ({row_budget})"
        )
        .into());
    }
    let mut counts = vec![0i64; n];
    for &id in &adjusted {
        let id32 = id as i32;
        if id32 < 0 {
            return Err(format!("value row ids must be non-negative, found {id32}").into());
        }
        if let Some(c) = usize::try_from(id32).ok().and_then(|i| counts.get_mut(i)) {
            *c += 1;
        }
    }
    let mut level = Vec::with_capacity(n + 1);
    let mut acc = 0i64;
    level.push(0);
    for c in counts {
        acc = dt.fit(acc.wrapping_add(c));
        level.push(acc);
    }
    Ok(wrap(rt, outer, level))
}

/// `UniformRowLength`: inside a ragged dimension, rows of `len` of the inner rows (a remainder
/// is dropped, as `from_uniform_row_length` does); directly on the values, a reshape, which
/// needs the values to divide evenly.
fn uniform(rt: Rag, len: i64, dt: SplitsDType) -> Result<Rag, String> {
    let len = dt.fit(len).max(1);
    let inner = rt.inner_rows();
    let ulen = usize::try_from(len).unwrap_or(usize::MAX);
    let reshape = rt.ragged_rank() <= 1;
    if reshape && !inner.is_multiple_of(ulen) {
        return Err(format!(
            "cannot reshape {inner} values into rows of {len} (uniform row length)"
        ));
    }
    let n = inner / ulen;
    let level: Vec<i64> = (0..=n)
        .map(|i| dt.fit(super::read::to_i64(i).wrapping_mul(len)))
        .collect();
    let outer: Vec<i64> = rt
        .splits
        .first()
        .map(|s| s.iter().map(|&v| dt.fit(v.div_euclid(len))).collect())
        .unwrap_or_default();
    let dense_inner = rt.dense_inner + usize::from(reshape);
    let mut out = wrap(rt, outer, level);
    out.dense_inner = dense_inner;
    Ok(out)
}
