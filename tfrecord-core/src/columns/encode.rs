//! Columns back to records: each row of a [`ColumnBatch`] written as one serialized
//! `tf.train.Example`, `tf.train.SequenceExample` or `oneflow.OFRecord`, the inverse of the
//! decoder's layout. A null row leaves its feature out; the map entries are written sorted by
//! key, as [`encode_example`](crate::proto::encode_example) writes them; an empty map is left
//! out (an Example without features).

use tfrecord_schema::ir::RecordKind;

use super::plan::{ColPlan, Part, PartKind, Plan, Shape, to_i64};
use super::{ColumnBatch, Leaf, Level, LevelKind};
use crate::codec::wire::{put_len_prefix, put_varint};
use crate::codec::{Dialect, Of, Tf};
use crate::compression::Format;
use crate::error::{Error, Result};
use crate::parse::DType;

/// What a map entry of a record holds.
#[derive(Clone, Copy, Debug)]
enum Role {
    /// The column's values.
    Values,
    /// Index dimension `d` of a sparse column.
    Index(usize),
    /// The feature of ragged partition `p`.
    Partition(usize),
}

/// One map entry per record: a feature key, and where its values come from.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    key: String,
    col: usize,
    role: Role,
}

/// The entries of each map, sorted by key: `(features or context, feature lists)`.
pub(crate) fn entries(plan: &Plan) -> (Vec<Entry>, Vec<Entry>) {
    let mut features = Vec::new();
    let mut lists = Vec::new();
    for (col, c) in plan.cols.iter().enumerate() {
        let target = if c.list { &mut lists } else { &mut features };
        target.push(Entry {
            key: c.key.clone(),
            col,
            role: Role::Values,
        });
        match &c.shape {
            Shape::Sparse { index, .. } => {
                for (d, (_, key)) in index.iter().enumerate() {
                    target.push(Entry {
                        key: key.clone(),
                        col,
                        role: Role::Index(d),
                    });
                }
            }
            Shape::Ragged { parts } => {
                for (p, part) in parts.iter().enumerate() {
                    if let Part::Keyed { key, .. } = part {
                        target.push(Entry {
                            key: key.clone(),
                            col,
                            role: Role::Partition(p),
                        });
                    }
                }
            }
            _ => {}
        }
    }
    features.sort_by(|a, b| a.key.cmp(&b.key));
    lists.sort_by(|a, b| a.key.cmp(&b.key));
    (features, lists)
}

/// Checks that a batch has the plan's columns, each with consistent levels: after this, every
/// range the encoder takes is within its buffers.
pub(crate) fn check_batch(plan: &Plan, batch: &ColumnBatch) -> Result<()> {
    if batch.columns.len() != plan.cols.len() {
        return Err(Error::feature(format!(
            "the batch has {} columns, the spec {}",
            batch.columns.len(),
            plan.cols.len()
        )));
    }
    for ((col, c), layout) in batch.columns.iter().zip(&plan.cols).zip(plan.layouts()) {
        let bad = |what: String| {
            Error::feature(format!("column `{}`: {what}", layout.name)).with_key(c.key.clone())
        };
        if col.valid.as_ref().is_some_and(|v| v.len() != batch.rows) {
            return Err(bad(format!(
                "{} validity flags for {} rows",
                col.valid.as_ref().map_or(0, Vec::len),
                batch.rows
            )));
        }
        if col.levels.len() != layout.levels.len() {
            return Err(bad(format!(
                "{} levels of nesting, the spec's layout has {}",
                col.levels.len(),
                layout.levels.len()
            )));
        }
        let mut count = batch.rows;
        for (level, kind) in col.levels.iter().zip(&layout.levels) {
            count = match (level, kind) {
                (Level::List(offsets), LevelKind::List) => {
                    let ok = offsets.len() == count + 1
                        && offsets.first() == Some(&0)
                        && offsets.windows(2).all(|w| w[0] <= w[1]);
                    if !ok {
                        return Err(bad(format!(
                            "list offsets must be {} non-decreasing offsets from 0",
                            count + 1
                        )));
                    }
                    usize::try_from(offsets.last().copied().unwrap_or(0))
                        .map_err(|_| bad("an offset out of range".into()))?
                }
                (Level::Fixed(n), LevelKind::Fixed(m)) if n == m => count
                    .checked_mul(*n)
                    .ok_or_else(|| bad("too many values".into()))?,
                _ => return Err(bad("levels of another kind than the spec's layout".into())),
            };
        }
        let leaf_ok = match (&col.leaf, &c.shape) {
            (Leaf::Sparse { indices, values }, Shape::Sparse { index, .. }) => {
                indices.len() == index.len()
                    && indices.iter().all(|i| i.len() == values.len())
                    && leaf_type(values, c.dtype)
            }
            (leaf, _) => leaf_type(leaf, c.dtype),
        };
        if !leaf_ok {
            return Err(bad(format!(
                "values of another type than the spec's {}",
                c.dtype.name()
            )));
        }
        if col.leaf.len() != count {
            return Err(bad(format!(
                "{} values where the offsets reach {count}",
                col.leaf.len()
            )));
        }
        if let Shape::Ragged { parts } = &c.shape {
            for (p, part) in parts.iter().enumerate() {
                if let (Part::Uniform(k), Some(Level::List(o))) = (part, col.levels.get(p + 1))
                    && o.windows(2).any(|w| w[1] - w[0] != to_i64(*k))
                {
                    return Err(bad(format!(
                        "a row is not {k} long (its uniform row length)"
                    )));
                }
            }
        }
    }
    Ok(())
}

fn leaf_type(leaf: &Leaf, dtype: DType) -> bool {
    matches!(
        (leaf, dtype),
        (Leaf::Int64(_), DType::Int64)
            | (Leaf::Int32(_), DType::Int32)
            | (Leaf::Bool(_), DType::Bool)
            | (Leaf::Float(_), DType::Float)
            | (Leaf::Double(_), DType::Double)
            | (Leaf::Bytes(_), DType::Bytes)
            | (Leaf::String(_), DType::String)
    )
}

/// Writes row `r` of a checked batch as one serialized record into `out` (cleared first).
pub(crate) fn encode_row(
    plan: &Plan,
    entries: &(Vec<Entry>, Vec<Entry>),
    batch: &ColumnBatch,
    r: usize,
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) -> Result<()> {
    out.clear();
    let mut map = Vec::new();
    write_map(plan, &entries.0, batch, r, &mut map, scratch)?;
    // A message field is written only when its map has entries, as TensorFlow writes an
    // Example without features.
    let put = |out: &mut Vec<u8>, field: u32, map: &[u8]| {
        if !map.is_empty() {
            put_len_prefix(out, field, map.len());
            out.extend_from_slice(map);
        }
    };
    match (plan.format, plan.kind) {
        (Format::OfRecord, _) => out.extend_from_slice(&map),
        (Format::TfRecord, RecordKind::SequenceExample) => {
            put(out, 1, &map);
            map.clear();
            write_map(plan, &entries.1, batch, r, &mut map, scratch)?;
            put(out, 2, &map);
        }
        (Format::TfRecord, _) => put(out, 1, &map),
    }
    Ok(())
}

/// The map entries (field 1 each) of row `r`, skipping null rows' features.
fn write_map(
    plan: &Plan,
    entries: &[Entry],
    batch: &ColumnBatch,
    r: usize,
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) -> Result<()> {
    for e in entries {
        let col = &batch.columns[e.col];
        if col.valid.as_ref().is_some_and(|v| !v[r]) {
            continue;
        }
        let c = &plan.cols[e.col];
        scratch.clear();
        value_message(plan.format, c, &col.levels, &col.leaf, e.role, r, scratch)?;
        let key = e.key.as_bytes();
        let entry_len =
            1 + varint_len(key.len()) + key.len() + 1 + varint_len(scratch.len()) + scratch.len();
        put_len_prefix(out, 1, entry_len);
        put_len_prefix(out, 1, key.len());
        out.extend_from_slice(key);
        put_len_prefix(out, 2, scratch.len());
        out.extend_from_slice(scratch);
    }
    Ok(())
}

fn varint_len(n: usize) -> usize {
    crate::codec::wire::varint_len(u64::try_from(n).unwrap_or(u64::MAX))
}

/// The entries of the level below that entries `[a, b)` of `level` span.
fn bounds(level: &Level, a: usize, b: usize) -> (usize, usize) {
    match level {
        Level::List(o) => {
            let at = |i: usize| usize::try_from(o[i]).unwrap_or(0);
            (at(a), at(b))
        }
        Level::Fixed(n) => (a * n, b * n),
    }
}

/// Entries `[a, b)` of the first of `levels`, walked down to the entries below the last.
fn walk(levels: &[Level], a: usize, b: usize) -> (usize, usize) {
    levels.iter().fold((a, b), |(a, b), l| bounds(l, a, b))
}

/// The serialized `Feature` (or `FeatureList`) of row `r` for an entry.
fn value_message(
    format: Format,
    c: &ColPlan,
    levels: &[Level],
    leaf: &Leaf,
    role: Role,
    r: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    match (role, &c.shape, leaf) {
        (Role::Index(d), Shape::Sparse { index, size }, Leaf::Sparse { indices, .. }) => {
            let (a, b) = walk(levels, r, r + 1);
            let row = &indices[d][a..b];
            // Checked row by row, so that the error names the record.
            let (_, index_key) = &index[d];
            super::decode::sparse_indices_fit(row, size.get(d).copied(), index_key)?;
            put_i64s(format, row, out);
        }
        (Role::Values, Shape::Sparse { .. }, Leaf::Sparse { values, .. }) => {
            let (a, b) = walk(levels, r, r + 1);
            put_feature(format, c, values, a, b, out)?;
        }
        (Role::Partition(p), Shape::Ragged { parts }, _) => {
            let (a, b) = walk(&levels[..=p], r, r + 1);
            partition(&parts[p], &levels[p + 1], a, b, format, out)?;
        }
        (Role::Values, Shape::StepsVar | Shape::StepsFixed { .. }, _) => {
            let (a, b) = bounds(&levels[0], r, r + 1);
            let mut step = Vec::new();
            for s in a..b {
                step.clear();
                let (va, vb) = walk(&levels[1..], s, s + 1);
                put_feature(format, c, leaf, va, vb, &mut step)?;
                put_len_prefix(out, 1, step.len());
                out.extend_from_slice(&step);
            }
        }
        (Role::Values, _, _) => {
            let (a, b) = walk(levels, r, r + 1);
            put_feature(format, c, leaf, a, b, out)?;
        }
        _ => {
            return Err(Error::feature(
                "internal error: an entry of another column kind",
            ));
        }
    }
    Ok(())
}

/// A ragged partition's feature for one row: the offsets of `level` over the row's entries
/// `[a, b)` of it, in the partition's encoding.
fn partition(
    part: &Part,
    level: &Level,
    a: usize,
    b: usize,
    format: Format,
    out: &mut Vec<u8>,
) -> Result<()> {
    let Level::List(o) = level else {
        return Err(Error::feature(
            "internal error: a ragged level that is not a list",
        ));
    };
    let base = o[a];
    let rel = |i: usize| o[i] - base;
    let (kind, key) = match part {
        Part::Keyed { kind, key, .. } => (*kind, key),
        // Checked for the whole batch by `check_batch`; no feature holds it.
        Part::Uniform(_) => return Ok(()),
    };
    let mut v: Vec<i64> = Vec::with_capacity(b - a + 1);
    match kind {
        PartKind::Splits => v.extend((a..=b).map(rel)),
        PartKind::Lengths => v.extend((a..b).map(|i| rel(i + 1) - rel(i))),
        PartKind::Starts => v.extend((a..b).map(rel)),
        PartKind::Limits => v.extend((a..b).map(|i| rel(i + 1))),
        PartKind::RowIds => {
            // Row ids make as many rows as the last id says: a trailing empty row has no id,
            // and would be lost.
            if b > a && rel(b) == rel(b - 1) {
                return Err(Error::feature(format!(
                    "ragged partition {key:?} (value_rowids) cannot hold these {} rows: the \
                     last is empty, and row ids only count rows up to the last id (use \
                     row_splits or row_lengths to keep trailing empty rows)",
                    b - a
                ))
                .with_key(key.clone()));
            }
            for (row, i) in (a..b).enumerate() {
                let n = usize::try_from(rel(i + 1) - rel(i)).unwrap_or(0);
                v.extend(std::iter::repeat_n(to_i64(row), n));
            }
        }
    }
    put_i64s(format, &v, out);
    Ok(())
}

/// An `int64_list` `Feature` of these values.
fn put_i64s(format: Format, v: &[i64], out: &mut Vec<u8>) {
    let tag = list_tag(format, crate::feature::ListKind::Int64);
    let mut body = Vec::with_capacity(v.len() * 2);
    for x in v {
        put_varint(&mut body, x.cast_unsigned());
    }
    put_packed(tag, &body, out);
}

/// `tag` list message holding one packed run `body` (nothing for no values).
fn put_packed(tag: u32, body: &[u8], out: &mut Vec<u8>) {
    let inner = if body.is_empty() {
        0
    } else {
        1 + varint_len(body.len()) + body.len()
    };
    put_len_prefix(out, tag, inner);
    if !body.is_empty() {
        put_len_prefix(out, 1, body.len());
        out.extend_from_slice(body);
    }
}

fn list_tag(format: Format, kind: crate::feature::ListKind) -> u32 {
    let tag = if format == Format::OfRecord {
        Of::tag(kind)
    } else {
        Tf::tag(kind)
    };
    tag.unwrap_or(0)
}

/// A `Feature` of leaf values `[a, b)` in the column's list kind.
fn put_feature(
    format: Format,
    c: &ColPlan,
    leaf: &Leaf,
    a: usize,
    b: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    use crate::feature::ListKind;
    let of = format == Format::OfRecord;
    let mut body = Vec::new();
    let kind = match leaf {
        Leaf::Int64(v) => {
            v[a..b]
                .iter()
                .for_each(|x| put_varint(&mut body, x.cast_unsigned()));
            ListKind::Int64
        }
        Leaf::Int32(v) => {
            v[a..b]
                .iter()
                .for_each(|x| put_varint(&mut body, i64::from(*x).cast_unsigned()));
            if of { ListKind::Int32 } else { ListKind::Int64 }
        }
        Leaf::Bool(v) => {
            v[a..b]
                .iter()
                .for_each(|x| put_varint(&mut body, u64::from(*x)));
            ListKind::Int64
        }
        Leaf::Float(v) => {
            v[a..b]
                .iter()
                .for_each(|x| body.extend_from_slice(&x.to_le_bytes()));
            ListKind::Float
        }
        Leaf::Double(v) if of => {
            v[a..b]
                .iter()
                .for_each(|x| body.extend_from_slice(&x.to_le_bytes()));
            ListKind::Double
        }
        Leaf::Double(v) => {
            // The spec's lossy `double` in a float list: each value rounded to the nearest
            // `f32`; one beyond its range would become infinity, which is not a rounding.
            for x in &v[a..b] {
                let Some(f) = crate::feature::narrow_f64(*x) else {
                    return Err(Error::feature(format!(
                        "{x:e} is beyond the range of a float (about 3.4e38), which a lossy \
                         `double` is stored as in a float list"
                    ))
                    .with_key(c.key.clone()));
                };
                body.extend_from_slice(&f.to_le_bytes());
            }
            ListKind::Float
        }
        Leaf::Bytes(col) | Leaf::String(col) => {
            let mut list = Vec::new();
            for i in a..b {
                let value = col.get(i).unwrap_or_default();
                put_len_prefix(&mut list, 1, value.len());
                list.extend_from_slice(value);
            }
            put_len_prefix(out, list_tag(format, ListKind::Bytes), list.len());
            out.extend_from_slice(&list);
            return Ok(());
        }
        Leaf::Sparse { .. } => {
            return Err(
                Error::feature("internal error: a sparse leaf as values").with_key(c.key.clone())
            );
        }
    };
    put_packed(list_tag(format, kind), &body, out);
    Ok(())
}
