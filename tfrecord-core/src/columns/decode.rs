//! The columnar decoder's general path, which reads every layout protobuf allows and words the
//! errors: each record's feature map collected once into slots for the spec's keys, then each
//! column's values appended from its feature's wire bytes; and the columns being filled, which
//! the fast path ([`fast`](super::fast)) fills too.

use tfrecord_schema::ir::RecordKind;

use super::partition::{Scratch, splits};
use super::plan::{Absent, ColPlan, Part, Plan, Shape, to_i64};
use super::values::{
    Slots, append, has_kind, int64s, list_tag, missing, overfilled, problem, step_problem,
};
use super::{Column, ColumnLayout, Leaf, Level, LevelKind};
use crate::codec::{
    DecodeElem, FeatureBytes, OfRecord, Tf, TfExample, canonical_step_values, for_each_step,
    scan_features, scan_sequence,
};
use crate::compression::Format;
use crate::error::{Error, Result};
use crate::feature::FeatureProblem;
use crate::feature::ListKind;
use crate::parse::DType;
use crate::parse::fast::Sink;

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
        scratch.budget = scratch.budget.saturating_add(bytes.len().saturating_mul(8));
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
            Shape::Sparse { index, .. } => Leaf::Sparse {
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

    /// Appends the lengths of the column's parts to `marks`, for [`cut`](Self::cut) to cut
    /// it back to.
    pub(super) fn mark(&self, marks: &mut Vec<usize>) {
        marks.extend([
            self.rows,
            self.valid.len(),
            usize::from(self.nulls),
            self.leaf.len(),
        ]);
        marks.extend(self.levels.iter().map(|l| match l {
            Level::List(offsets) => offsets.len(),
            Level::Fixed(_) => 0,
        }));
    }

    /// Cuts the column back to the lengths [`mark`](Self::mark) appended at the start of
    /// `marks`; the marks after its own.
    pub(super) fn cut<'m>(&mut self, marks: &'m [usize]) -> &'m [usize] {
        let [rows, valid, nulls, leaf, rest @ ..] = marks else {
            return &[];
        };
        self.rows = *rows;
        self.valid.truncate(*valid);
        self.nulls = *nulls != 0;
        self.leaf.truncate(*leaf);
        let (levels, rest) = rest.split_at(self.levels.len().min(rest.len()));
        for (level, &n) in self.levels.iter_mut().zip(levels) {
            if let Level::List(offsets) = level {
                offsets.truncate(n);
            }
        }
        rest
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
            Absent::Null => {
                self.close(0, 0);
                self.row(false);
                Ok(())
            }
            // A var feature's default: a list of its values.
            Absent::Default(v) => {
                if !self.leaf.may_fill(v.len(), v.string_bytes(), c.max_filled) {
                    return Err(overfilled(&c.key, c.max_filled));
                }
                self.leaf.push_values(v);
                self.close(0, v.len());
                self.row(true);
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
                        if !self.leaf.may_fill(v.len(), v.string_bytes(), c.max_filled) {
                            return Err(overfilled(&c.key, c.max_filled));
                        }
                        self.leaf.push_values(v);
                        self.row(true);
                    }
                    (None, Absent::Null) => {
                        if !self.leaf.may_fill(*n, 0, c.max_filled) {
                            return Err(overfilled(&c.key, c.max_filled));
                        }
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
            Shape::Sparse { index, size } => self.sparse(format, c, index, size, slots)?,
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
                    let tag = list_tag(format, ListKind::holding(c.dtype, format));
                    let rest = match (fb.single(), tag) {
                        (Some(bytes), Some(tag)) => {
                            self.canonical_steps(bytes, tag, fixed, &mut steps)
                        }
                        _ => None,
                    };
                    let fb = &rest.map_or_else(|| fb.clone(), FeatureBytes::new);
                    for_each_step(fb, |step| {
                        let in_step = |p| step_problem(&c.key, c.dtype, p, steps);
                        let m = append(&mut self.leaf, c.dtype, format, &FeatureBytes::new(step))
                            .map_err(in_step)?
                            .unwrap_or(0);
                        match fixed {
                            Some(n) if m != n => {
                                return Err(in_step(FeatureProblem::Count {
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
        size: &[u64],
        slots: &Slots<'_>,
    ) -> Result<()> {
        let Leaf::Sparse { indices, values } = &mut self.leaf else {
            return Err(Error::feature(
                "internal error: a sparse column without a sparse leaf",
            ));
        };
        let set = |s: usize| slots[s].as_ref().filter(|fb| has_kind(format, fb));
        // An absent value feature beside a present index feature holds no values, as
        // TensorFlow reads it: the indices must then be empty too.
        let value_absent = set(c.slot).is_none();
        let m = match set(c.slot) {
            Some(fb) => append(values, c.dtype, format, fb)
                .map_err(|p| problem(&c.key, c.dtype, p))?
                .unwrap_or(0),
            None if index.iter().any(|(s, _)| set(*s).is_some()) => 0,
            None => return self.absent_list(c),
        };
        for (d, ((slot, key), out)) in index.iter().zip(indices.iter_mut()).enumerate() {
            let before = out.len();
            if let Some(fb) = slots[*slot].as_ref() {
                int64s(fb, format, out).map_err(|p| problem(key, DType::Int64, p))?;
            }
            sparse_indices_fit(&out[before..], size.get(d).copied(), key)?;
            let k = out.len() - before;
            if k != m {
                return Err(Error::feature_problem(
                    FeatureProblem::Count {
                        expected: m,
                        found: k,
                    },
                    if value_absent {
                        format!(
                            "expected no indices (the value feature {:?} is absent), found {k}",
                            c.key
                        )
                    } else {
                        format!(
                            "expected {m} indices (one per value of {:?}), found {k}",
                            c.key
                        )
                    },
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
            splits(p, slots, n, format, scratch).map_err(|e| match e.key() {
                Some(_) => e,
                None => e.with_key(c.key.clone()),
            })?;
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

/// An error unless every index lies in `0..size` (any size when the spec gives none): an Arrow
/// row holds one record's entries, checked as the generated `Sparse` type checks them
/// (TensorFlow's parser leaves this to `tf.sparse.to_dense`).
pub(super) fn sparse_indices_fit(indices: &[i64], size: Option<u64>, key: &str) -> Result<()> {
    let Some(size) = size else {
        return Ok(());
    };
    match indices
        .iter()
        .find(|&&i| u64::try_from(i).map_or(true, |i| i >= size))
    {
        Some(i) => Err(Error::feature(format!(
            "sparse index {i} of {key:?} is outside the feature's size: expected 0 to {}",
            size.saturating_sub(1)
        ))
        .with_key(key.to_string())),
        None => Ok(()),
    }
}
