//! The columnar decoder's general path, which reads every layout protobuf allows and words the
//! errors: each record's feature map collected once into slots for the spec's keys, then each
//! column's values appended from its feature's wire bytes; and the columns being filled, which
//! the fast path ([`fast`](super::fast)) fills too.

use tfrecord_schema::ir::RecordKind;

use super::plan::{Absent, ColPlan, Part, PartKind, Plan, Shape, to_i64};
use super::{ByteColumn, Column, ColumnLayout, Leaf, Level, LevelKind};
use crate::codec::view::ListPiece;
use crate::codec::{
    DecodeElem, Dialect, FeatureBytes, FeatureView, Of, OfRecord, RawValue, Tf, TfExample, TfLossy,
    canonical_step_values, for_each_step, scan_features, scan_sequence,
};
use crate::compression::Format;
use crate::error::{Error, Result};
use crate::feature::{FeatureProblem, ListKind};
use crate::parse::DType;
use crate::parse::fast::Sink;

/// The feature found for each slot of a key table in the current record.
pub(super) type Slots<'de> = Vec<Option<FeatureBytes<'de>>>;

/// Decodes one record by the general path, which reads every layout protobuf allows and words
/// the errors: its features collected into `features` and `lists` (empty, and left so), then
/// each column's values appended in spec order.
pub(super) fn general_record<'de>(
    plan: &Plan,
    cols: &mut [Builder],
    bytes: &'de [u8],
    (features, lists): (&mut Slots<'de>, &mut Slots<'de>),
    scratch: &mut Scratch,
) -> Result<()> {
    features.resize(plan.features.len(), None);
    lists.resize(plan.lists.len(), None);
    let res = collect(plan, bytes, features, lists).and_then(|()| {
        scratch.budget = bytes.len().saturating_mul(8).saturating_add(1 << 16);
        for (c, b) in plan.cols.iter().zip(cols.iter_mut()) {
            let slots = if c.list { &*lists } else { &*features };
            b.record(plan.format, c, slots, scratch)?;
        }
        Ok(())
    });
    features.clear();
    lists.clear();
    res
}

/// Fills the slots with the record's features (a repeated key: the last entry).
fn collect<'de>(
    plan: &Plan,
    bytes: &'de [u8],
    features: &mut Slots<'de>,
    lists: &mut Slots<'de>,
) -> Result<()> {
    let deny = plan.deny_unknown.as_deref();
    let put_feature = |k: &[u8], v| put(&plan.features, features, k, v, deny);
    match (plan.format, plan.kind) {
        (Format::OfRecord, _) => scan_features::<OfRecord>(bytes, put_feature),
        (Format::TfRecord, RecordKind::SequenceExample) => {
            scan_sequence(bytes, put_feature, |k, v| {
                put(&plan.lists, lists, k, v, deny)
            })
        }
        (Format::TfRecord, _) => scan_features::<TfExample>(bytes, put_feature),
    }
}

fn put<'de>(
    table: &super::plan::KeyTable,
    slots: &mut Slots<'de>,
    key: &[u8],
    value: FeatureBytes<'de>,
    deny: Option<&str>,
) -> Result<()> {
    match table.find(key) {
        Some(s) => slots[s] = Some(value),
        None => {
            if let Some(record) = deny {
                let key = String::from_utf8_lossy(key).into_owned();
                return Err(Error::feature(format!(
                    "record `{record}` has no feature {key:?} (the spec denies unknown keys)"
                ))
                .with_key(key));
            }
        }
    }
    Ok(())
}

/// Buffers reused across records.
#[derive(Default)]
pub(super) struct Scratch {
    /// A partition feature's values.
    part: Vec<i64>,
    /// Row splits, relative to the record.
    splits: Vec<i64>,
    /// How many rows a value-row-ids partition may make in the current record.
    budget: usize,
}

/// How much room a column's buffers are given at the start of a batch.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Room {
    /// Values of the leaf.
    pub(super) values: usize,
    /// Bytes of its string values.
    pub(super) bytes: usize,
    /// Entries of the second level (the steps of a feature list).
    pub(super) inner: usize,
}

/// A column being filled.
pub(super) struct Builder {
    name: String,
    /// Each row's validity, kept from the first null row on (every row before it is valid).
    pub(super) valid: Vec<bool>,
    /// Whether a row so far is null.
    pub(super) nulls: bool,
    /// The rows so far.
    pub(super) rows: usize,
    pub(super) levels: Vec<Level>,
    pub(super) leaf: Leaf,
}

impl Builder {
    pub(super) fn new(c: &ColPlan, layout: &ColumnLayout, rows: usize, room: Room) -> Self {
        let levels = layout
            .levels
            .iter()
            .enumerate()
            .map(|(i, l)| match l {
                LevelKind::List => {
                    let cap = match i {
                        0 => rows,
                        1 => room.inner,
                        _ => 0,
                    };
                    let mut offsets = Vec::with_capacity(cap.saturating_add(1));
                    offsets.push(0);
                    Level::List(offsets)
                }
                LevelKind::Fixed(n) => Level::Fixed(*n),
            })
            .collect();
        let mut leaf = match &c.shape {
            Shape::Sparse { index } => Leaf::Sparse {
                indices: vec![Vec::new(); index.len()],
                values: Box::new(Leaf::empty(c.dtype)),
            },
            _ => Leaf::empty(c.dtype),
        };
        leaf.reserve(room.values, room.bytes);
        Builder {
            name: layout.name.clone(),
            valid: Vec::new(),
            nulls: false,
            rows: 0,
            levels,
            leaf,
        }
    }

    pub(super) fn finish(mut self) -> Column {
        if self.nulls {
            self.valid.resize(self.rows, true);
        }
        Column {
            name: self.name,
            valid: self.nulls.then_some(self.valid),
            levels: self.levels,
            leaf: self.leaf,
        }
    }

    /// What the column holds: the room the next batch's column is given.
    pub(super) fn held(&self) -> Room {
        Room {
            values: self.leaf.len(),
            bytes: self.leaf.string_bytes(),
            inner: match self.levels.get(1) {
                Some(Level::List(offsets)) => offsets.len() - 1,
                _ => 0,
            },
        }
    }

    /// Ends a row.
    #[inline]
    pub(super) fn row(&mut self, valid: bool) {
        if !valid && !self.nulls {
            self.nulls = true;
            self.valid.clear();
            self.valid.resize(self.rows, true);
        }
        if self.nulls {
            self.valid.push(valid);
        }
        self.rows += 1;
    }

    /// The offsets of list level `i`.
    #[inline]
    pub(super) fn offsets(&mut self, i: usize) -> Option<&mut Vec<i64>> {
        match self.levels.get_mut(i) {
            Some(Level::List(offsets)) => Some(offsets),
            _ => None,
        }
    }

    /// Ends the row's entry of list level `i` after `count` more entries of the level below.
    #[inline]
    pub(super) fn close(&mut self, i: usize, count: usize) {
        if let Some(Level::List(offsets)) = self.levels.get_mut(i) {
            let last = offsets.last().copied().unwrap_or(0);
            offsets.push(last + to_i64(count));
        }
    }

    /// A record of a list column without the feature.
    pub(super) fn absent_list(&mut self, c: &ColPlan) -> Result<()> {
        match &c.absent {
            Absent::Error => Err(missing(&c.key)),
            Absent::Null | Absent::Default(_) => {
                self.close(0, 0);
                self.row(false);
                Ok(())
            }
        }
    }

    pub(super) fn record(
        &mut self,
        format: Format,
        c: &ColPlan,
        slots: &Slots<'_>,
        scratch: &mut Scratch,
    ) -> Result<()> {
        let found = slots[c.slot].as_ref();
        let problem = |p: FeatureProblem| problem(&c.key, c.dtype, p);
        match &c.shape {
            Shape::Fixed { n } => {
                let got = match found {
                    Some(fb) => append(&mut self.leaf, c.dtype, format, fb).map_err(problem)?,
                    None => None,
                };
                match (got, &c.absent) {
                    (Some(m), _) if m == *n => self.row(true),
                    (Some(m), _) => {
                        return Err(problem(FeatureProblem::Count {
                            expected: *n,
                            found: m,
                        }));
                    }
                    (None, Absent::Default(v)) => {
                        self.leaf.push_values(v);
                        self.row(true);
                    }
                    (None, Absent::Null) => {
                        self.leaf.push_zeros(*n);
                        self.row(false);
                    }
                    (None, Absent::Error) => return Err(missing(&c.key)),
                }
            }
            Shape::Var => match found.map(|fb| append(&mut self.leaf, c.dtype, format, fb)) {
                Some(Ok(Some(m))) => {
                    self.close(0, m);
                    self.row(true);
                }
                Some(Err(p)) => return Err(problem(p)),
                // Absent, or a `Feature` with no list set.
                Some(Ok(None)) | None => self.absent_list(c)?,
            },
            Shape::Rows { row } => {
                match found.map(|fb| append(&mut self.leaf, c.dtype, format, fb)) {
                    Some(Err(p)) => return Err(problem(p)),
                    Some(Ok(None)) | None => self.absent_list(c)?,
                    Some(Ok(Some(m))) => {
                        if !m.is_multiple_of(*row) {
                            return Err(problem(FeatureProblem::Rows {
                                row: *row,
                                found: m,
                            }));
                        }
                        self.close(0, m / row);
                        self.row(true);
                    }
                }
            }
            Shape::Sparse { index } => self.sparse(format, c, index, slots)?,
            Shape::Ragged { parts } => self.ragged(format, c, parts, slots, scratch)?,
            Shape::StepsVar | Shape::StepsFixed { .. } => match found {
                Some(fb) => {
                    let fixed = match c.shape {
                        Shape::StepsFixed { n } => Some(n),
                        _ => None,
                    };
                    let mut steps = 0usize;
                    // The steps in the layout every writer produces first, straight into the
                    // buffers; the rest (and any error) through the general walk.
                    let tag = list_tag(format, list_kind(c.dtype, format));
                    let rest = match (fb.single(), tag) {
                        (Some(bytes), Some(tag)) => {
                            self.canonical_steps(bytes, tag, fixed, &mut steps)
                        }
                        _ => None,
                    };
                    let fb = &rest.map_or_else(|| fb.clone(), FeatureBytes::new);
                    for_each_step(fb, |step| {
                        let m = append(&mut self.leaf, c.dtype, format, &FeatureBytes::new(step))
                            .map_err(problem)?
                            .unwrap_or(0);
                        match fixed {
                            Some(n) if m != n => {
                                return Err(problem(FeatureProblem::Count {
                                    expected: n,
                                    found: m,
                                }));
                            }
                            Some(_) => {}
                            None => self.close(1, m),
                        }
                        steps += 1;
                        Ok(())
                    })
                    .map_err(|e| {
                        if e.key().is_none() {
                            e.with_key(c.key.clone())
                        } else {
                            e
                        }
                    })?;
                    self.close(0, steps);
                    self.row(true);
                }
                None => self.absent_list(c)?,
            },
        }
        Ok(())
    }

    /// Reads the leading steps of a feature list that are in the canonical layout (one list of
    /// one `value` field each), stopping at the first that is not, or whose count is wrong;
    /// returns the bytes of the steps left, or `None` for a leaf type it does not read.
    pub(super) fn canonical_steps<'de>(
        &mut self,
        bytes: &'de [u8],
        tag: u32,
        fixed: Option<usize>,
        steps: &mut usize,
    ) -> Option<&'de [u8]> {
        let Builder { leaf, levels, .. } = self;
        let mut inner = match (fixed, levels.get_mut(1)) {
            (None, Some(Level::List(offsets))) => Some(offsets),
            _ => None,
        };
        // One step's values, pushed by `push`; kept only when there are as many as `fixed`.
        let mut step = |n: usize| -> bool {
            if fixed.is_some_and(|f| f != n) {
                return false;
            }
            if let Some(offsets) = inner.as_mut() {
                let last = offsets.last().copied().unwrap_or(0);
                offsets.push(last + to_i64(n));
            }
            *steps += 1;
            true
        };
        Some(match leaf {
            Leaf::Int64(v) => canonical_step_values(bytes, tag, |value, tail| {
                let before = v.len();
                let ok = <i64 as DecodeElem<'_, Tf>>::extend_packed_within(tail, value.len(), v)
                    .is_ok()
                    && step(v.len() - before);
                if !ok {
                    v.truncate(before);
                }
                ok
            }),
            Leaf::Float(v) => canonical_step_values(bytes, tag, |value, _| {
                let before = v.len();
                let ok = v.push_value(value).is_some() && step(v.len() - before);
                if !ok {
                    v.truncate(before);
                }
                ok
            }),
            Leaf::Bytes(col) => canonical_step_values(bytes, tag, |value, _| {
                let ok = step(1);
                if ok {
                    col.push(value);
                }
                ok
            }),
            Leaf::String(col) => canonical_step_values(bytes, tag, |value, _| {
                let ok = std::str::from_utf8(value).is_ok() && step(1);
                if ok {
                    col.push(value);
                }
                ok
            }),
            _ => return None,
        })
    }

    fn sparse(
        &mut self,
        format: Format,
        c: &ColPlan,
        index: &[(usize, String)],
        slots: &Slots<'_>,
    ) -> Result<()> {
        let Leaf::Sparse { indices, values } = &mut self.leaf else {
            return Err(Error::feature(
                "internal error: a sparse column without a sparse leaf",
            ));
        };
        let set = |s: usize| slots[s].as_ref().filter(|fb| has_kind(format, fb));
        let Some(fb) = set(c.slot) else {
            if let Some((_, key)) = index.iter().find(|(s, _)| set(*s).is_some()) {
                return Err(Error::feature(format!(
                    "the sparse feature's index feature {key:?} is present, its value feature {:?} is not",
                    c.key
                ))
                .with_key(c.key.clone()));
            }
            return self.absent_list(c);
        };
        let m = append(values, c.dtype, format, fb)
            .map_err(|p| problem(&c.key, c.dtype, p))?
            .unwrap_or(0);
        for ((slot, key), out) in index.iter().zip(indices.iter_mut()) {
            let before = out.len();
            if let Some(fb) = slots[*slot].as_ref() {
                int64s(fb, format, out).map_err(|p| problem(key, DType::Int64, p))?;
            }
            let k = out.len() - before;
            if k != m {
                return Err(Error::feature_problem(
                    FeatureProblem::Count {
                        expected: m,
                        found: k,
                    },
                    format!(
                        "expected {m} indices (one per value of {:?}), found {k}",
                        c.key
                    ),
                )
                .with_key(key.clone()));
            }
        }
        self.close(0, m);
        self.row(true);
        Ok(())
    }

    fn ragged(
        &mut self,
        format: Format,
        c: &ColPlan,
        parts: &[Part],
        slots: &Slots<'_>,
        scratch: &mut Scratch,
    ) -> Result<()> {
        let found = slots[c.slot].as_ref().filter(|fb| has_kind(format, fb));
        let any_part = parts.iter().any(|p| {
            matches!(p, Part::Keyed { slot, .. }
                if slots[*slot].as_ref().is_some_and(|fb| has_kind(format, fb)))
        });
        if found.is_none() && !any_part {
            self.close(0, 0);
            self.row(false);
            return Ok(());
        }
        let mut n = match found {
            Some(fb) => append(&mut self.leaf, c.dtype, format, fb)
                .map_err(|p| problem(&c.key, c.dtype, p))?
                .unwrap_or(0),
            None => 0,
        };
        for (i, p) in parts.iter().enumerate().rev() {
            splits(p, slots, n, format, scratch)?;
            if let Some(Level::List(offsets)) = self.levels.get_mut(i + 1) {
                let base = offsets.last().copied().unwrap_or(0);
                offsets.extend(scratch.splits.iter().skip(1).map(|s| base + s));
            }
            n = scratch.splits.len().saturating_sub(1);
        }
        self.close(0, n);
        self.row(true);
        Ok(())
    }
}

/// The row splits a ragged partition makes of `n` entries, relative to the record, in
/// `scratch.splits`.
fn splits(p: &Part, slots: &Slots<'_>, n: usize, format: Format, s: &mut Scratch) -> Result<()> {
    s.splits.clear();
    let n64 = to_i64(n);
    let (key, kind) = match p {
        Part::Uniform(k) => {
            if !n.is_multiple_of(*k) {
                return Err(Error::feature(format!(
                    "a uniform row length of {k} does not divide the {n} values"
                )));
            }
            s.splits.extend((0..=n / k).map(|r| to_i64(r * k)));
            return Ok(());
        }
        Part::Keyed { slot, key, kind } => {
            s.part.clear();
            if let Some(fb) = slots[*slot].as_ref() {
                int64s(fb, format, &mut s.part).map_err(|p| problem(key, DType::Int64, p))?;
            }
            (key, *kind)
        }
    };
    let bad = |what: String| {
        Error::feature(format!(
            "ragged partition {key:?} ({}) {what}",
            match kind {
                PartKind::Splits => "row_splits",
                PartKind::Lengths => "row_lengths",
                PartKind::Starts => "row_starts",
                PartKind::Limits => "row_limits",
                PartKind::RowIds => "value_rowids",
            }
        ))
        .with_key(key.clone())
    };
    let v = &s.part;
    let sorted = v.windows(2).all(|w| w[0] <= w[1]);
    match kind {
        PartKind::Splits => {
            if v.is_empty() && n == 0 {
                s.splits.push(0);
            } else if v.first() != Some(&0) || !sorted || v.last() != Some(&n64) {
                return Err(bad(format!(
                    "must start at 0, never decrease and end at the {n} entries it splits"
                )));
            } else {
                s.splits.extend_from_slice(v);
            }
        }
        PartKind::Lengths => {
            s.splits.push(0);
            let mut total = 0i64;
            for &len in v {
                total = match total.checked_add(len) {
                    Some(t) if len >= 0 && t <= n64 => t,
                    _ => return Err(bad(format!("must be lengths summing to {n}"))),
                };
                s.splits.push(total);
            }
            if total != n64 {
                return Err(bad(format!("sum to {total}, not to the {n} entries")));
            }
        }
        PartKind::Starts => {
            if v.is_empty() {
                if n != 0 {
                    return Err(bad(format!("holds no rows for {n} entries")));
                }
                s.splits.push(0);
            } else if v[0] != 0 || !sorted || v.last().is_some_and(|l| *l > n64) {
                return Err(bad(format!(
                    "must start at 0, never decrease and stay within the {n} entries"
                )));
            } else {
                s.splits.extend_from_slice(v);
                s.splits.push(n64);
            }
        }
        PartKind::Limits => {
            let ok = sorted
                && v.first().is_none_or(|f| *f >= 0)
                && v.last().copied().unwrap_or(0) == n64;
            if !ok {
                return Err(bad(format!(
                    "must never decrease and end at the {n} entries it splits"
                )));
            }
            s.splits.push(0);
            s.splits.extend_from_slice(v);
        }
        PartKind::RowIds => {
            if v.len() != n || !sorted || v.first().is_some_and(|f| *f < 0) {
                return Err(bad(format!(
                    "must hold one non-decreasing row id per entry ({n}), found {}",
                    v.len()
                )));
            }
            let rows = v.last().map_or(0, |l| {
                usize::try_from(*l).unwrap_or(usize::MAX).saturating_add(1)
            });
            if rows > s.budget {
                return Err(bad(format!(
                    "makes {rows} rows, more than a record of its size may"
                )));
            }
            s.splits.reserve(rows + 1);
            s.splits.push(0);
            let mut at = 0usize;
            for r in 0..rows {
                while at < v.len() && v[at] == to_i64(r) {
                    at += 1;
                }
                s.splits.push(to_i64(at));
            }
        }
    }
    Ok(())
}

/// Whether a `Feature` has a list set (malformed bytes count as set: decoding reports them).
fn has_kind(format: Format, fb: &FeatureBytes<'_>) -> bool {
    let view = if format == Format::OfRecord {
        FeatureView::new::<Of>(fb.clone())
    } else {
        FeatureView::new::<Tf>(fb.clone())
    };
    view.map_or(true, |v| v.has_kind())
}

/// The list kind holding values of `dtype` in `format`'s messages.
pub(super) fn list_kind(dtype: DType, format: Format) -> ListKind {
    let of = format == Format::OfRecord;
    match dtype {
        DType::Int64 | DType::Bool => ListKind::Int64,
        DType::Int32 if of => ListKind::Int32,
        DType::Int32 => ListKind::Int64,
        DType::Float => ListKind::Float,
        DType::Double if of => ListKind::Double,
        DType::Double => ListKind::Float,
        DType::Bytes | DType::String => ListKind::Bytes,
    }
}

/// Appends the feature's values to `leaf`: how many, or `None` for a `Feature` with no list
/// set.
fn append(
    leaf: &mut Leaf,
    dtype: DType,
    format: Format,
    fb: &FeatureBytes<'_>,
) -> std::result::Result<Option<usize>, FeatureProblem> {
    let kind = list_kind(dtype, format);
    // The layout every writer produces (one list, numbers packed): decoded without a view. Any
    // other layout, an empty `Feature` and a malformed one take the general path below.
    if let Some(bytes) = fb.single().filter(|b| !b.is_empty())
        && let Some(tag) = list_tag(format, kind)
        && let Some(n) = append_canonical(leaf, tag, bytes)?
    {
        return Ok(Some(n));
    }
    let values = if format == Format::OfRecord {
        let view = FeatureView::new::<Of>(fb.clone())?;
        if !view.has_kind() {
            return Ok(None);
        }
        view.values::<Of>(kind)?
    } else {
        let view = FeatureView::new::<Tf>(fb.clone())?;
        if !view.has_kind() {
            return Ok(None);
        }
        view.values::<Tf>(kind)?
    };
    let before = leaf.len();
    let of = format == Format::OfRecord;
    match leaf {
        Leaf::Int64(v) => values.extend_into::<Tf, i64>(v)?,
        Leaf::Int32(v) if of => values.extend_into::<Of, i32>(v)?,
        Leaf::Int32(v) => values.extend_into::<Tf, i32>(v)?,
        Leaf::Bool(v) => values.extend_into::<Tf, bool>(v)?,
        Leaf::Float(v) => values.extend_into::<Tf, f32>(v)?,
        Leaf::Double(v) if of => values.extend_into::<Of, f64>(v)?,
        Leaf::Double(v) => values.extend_into::<TfLossy, f64>(v)?,
        Leaf::Bytes(col) => push_bytes(values, col, false)?,
        Leaf::String(col) => push_bytes(values, col, true)?,
        Leaf::Sparse { .. } => {
            return Err(FeatureProblem::Malformed(
                "a sparse leaf takes its values one level down",
            ));
        }
    }
    Ok(Some(leaf.len() - before))
}

/// The oneof member of a list kind in `format`'s `Feature`.
pub(super) fn list_tag(format: Format, kind: ListKind) -> Option<u32> {
    if format == Format::OfRecord {
        Of::tag(kind)
    } else {
        Tf::tag(kind)
    }
}

/// [`Sink::extend_canonical`] into a leaf of one of the types the fast path reads: how many
/// values, or `None` (with the leaf as it was) for any other layout or type.
fn append_canonical(
    leaf: &mut Leaf,
    tag: u32,
    bytes: &[u8],
) -> std::result::Result<Option<usize>, FeatureProblem> {
    fn fast<S: Sink>(
        s: &mut S,
        tag: u32,
        bytes: &[u8],
        undo: impl Fn(&mut S, usize),
    ) -> Option<usize> {
        let before = s.count();
        let n = s.extend_canonical(tag, bytes);
        if n.is_none() {
            undo(s, before);
        }
        n
    }
    Ok(match leaf {
        Leaf::Int64(v) => fast(v, tag, bytes, |v, n| v.truncate(n)),
        Leaf::Float(v) => fast(v, tag, bytes, |v, n| v.truncate(n)),
        Leaf::Bytes(c) => fast(c, tag, bytes, ByteColumn::truncate),
        Leaf::String(c) => {
            let before = c.len();
            let n = fast(c, tag, bytes, ByteColumn::truncate);
            if n.is_some()
                && (before..c.len())
                    .any(|i| c.get(i).is_some_and(|b| std::str::from_utf8(b).is_err()))
            {
                return Err(FeatureProblem::Utf8);
            }
            n
        }
        _ => None,
    })
}

impl Sink for ByteColumn {
    fn count(&self) -> usize {
        self.len()
    }

    #[inline]
    fn push_value(&mut self, value: &[u8]) -> Option<()> {
        self.push(value);
        Some(())
    }
}

fn push_bytes(
    mut values: crate::codec::view::Values<'_>,
    col: &mut ByteColumn,
    utf8: bool,
) -> std::result::Result<(), FeatureProblem> {
    while let Some(piece) = values.next_chunk()? {
        let ListPiece::One(RawValue::Bytes(b)) = piece else {
            return Err(FeatureProblem::Malformed(
                "a bytes value that is not length-delimited",
            ));
        };
        if utf8 && std::str::from_utf8(b).is_err() {
            return Err(FeatureProblem::Utf8);
        }
        col.push(b);
    }
    Ok(())
}

/// Appends an `int64` feature's values (a partition or sparse index).
fn int64s(
    fb: &FeatureBytes<'_>,
    format: Format,
    out: &mut Vec<i64>,
) -> std::result::Result<(), FeatureProblem> {
    let mut leaf = Leaf::Int64(std::mem::take(out));
    let res = append(&mut leaf, DType::Int64, format, fb);
    if let Leaf::Int64(v) = leaf {
        *out = v;
    }
    res.map(|_| ())
}

#[cold]
fn missing(key: &str) -> Error {
    Error::feature_problem(FeatureProblem::Missing, "required feature is missing")
        .with_key(key.to_string())
}

#[cold]
fn problem(key: &str, dtype: DType, p: FeatureProblem) -> Error {
    let detail = match &p {
        FeatureProblem::WrongKind { expected, found } => format!(
            "data types don't match: expected {} ({}), found {}",
            dtype.name(),
            expected.name(),
            found.name()
        ),
        other => other.to_string(),
    };
    Error::feature_problem(p, detail).with_key(key.to_string())
}
