//! The columnar decoder's fast path: each map entry of a record in the layout every writer
//! produces (each key once, each feature one list of its column's kind, numbers packed, steps
//! of one list each) decoded straight into its column as the walk finds it, with no slots
//! collected first and no [`FeatureView`](crate::codec::FeatureView).
//!
//! Nothing here words an error: a record the fast path does not take whole (another layout, a
//! wrong kind or count, a value out of range, a repeated key, a required feature absent) is
//! rolled back ([`rollback`]) and decoded by the general path, which decides what it means.

use tfrecord_schema::ir::RecordKind;

use super::decode::Builder;
use super::plan::{Absent, KeyTable, Plan, Shape, to_i64};
use super::values::list_tag;
use super::{Leaf, Level};
use crate::codec::view::{canonical_feature, short_feature};
use crate::codec::wire::{get_varint, split_len};
use crate::codec::{DecodeElem, Of, OfRecord, Tf, TfExample, TfLossy, walk_canonical};
use crate::compression::Format;
use crate::feature::ListKind;
use crate::parse::DType;
use crate::parse::fast::{Sink, same_key};

/// How the fast path reads one column's feature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    /// A fixed feature of one `int64`.
    Int64,
    /// A fixed feature of one `float`.
    Float,
    /// A fixed feature of one `bytes` value (`string`: checked to be UTF-8).
    Bytes { utf8: bool },
    /// A fixed feature of exactly `n` values.
    Fixed(usize),
    /// A var feature.
    Var,
    /// A sequence feature of rows of `n` values.
    Rows(usize),
    /// A feature list of var steps.
    StepsVar,
    /// A feature list of steps of exactly `n` values.
    StepsFixed(usize),
}

/// No slot, no column.
const NONE: usize = usize::MAX;

/// The column of each slot of one key table, and each slot's key.
#[derive(Clone, Debug)]
struct Slots {
    cols: Vec<usize>,
    keys: Vec<Box<[u8]>>,
}

impl Slots {
    fn new(table: &KeyTable) -> Self {
        let mut keys = vec![Box::default(); table.len()];
        for (key, slot) in table.entries() {
            if let Some(k) = keys.get_mut(slot) {
                *k = key.into();
            }
        }
        Slots {
            cols: vec![NONE; table.len()],
            keys,
        }
    }
}

/// A [`Plan`] compiled for the fast path.
#[derive(Clone, Debug)]
pub(super) struct FastPlan {
    /// Per column: its op and the oneof member of its list kind.
    ops: Vec<(Op, u32)>,
    features: Slots,
    lists: Slots,
}

impl FastPlan {
    /// `None` for a plan the fast path does not take at all: a sparse or ragged column (of
    /// several keys), or a key read by two columns.
    pub(super) fn compile(plan: &Plan) -> Option<Self> {
        let mut fast = FastPlan {
            ops: Vec::with_capacity(plan.cols.len()),
            features: Slots::new(&plan.features),
            lists: Slots::new(&plan.lists),
        };
        for (i, c) in plan.cols.iter().enumerate() {
            let op = match (&c.shape, c.dtype) {
                (Shape::Fixed { n: 1 }, DType::Int64) => Op::Int64,
                (Shape::Fixed { n: 1 }, DType::Float) => Op::Float,
                (Shape::Fixed { n: 1 }, DType::Bytes) => Op::Bytes { utf8: false },
                (Shape::Fixed { n: 1 }, DType::String) => Op::Bytes { utf8: true },
                (Shape::Fixed { n }, _) => Op::Fixed(*n),
                (Shape::Var, _) => Op::Var,
                (Shape::Rows { row }, _) if *row > 0 => Op::Rows(*row),
                (Shape::StepsVar, _) => Op::StepsVar,
                (Shape::StepsFixed { n }, _) => Op::StepsFixed(*n),
                _ => return None,
            };
            let slots = if c.list {
                &mut fast.lists
            } else {
                &mut fast.features
            };
            let col = slots.cols.get_mut(c.slot)?;
            if *col != NONE {
                return None;
            }
            *col = i;
            fast.ops.push((
                op,
                list_tag(plan.format, ListKind::holding(c.dtype, plan.format))?,
            ));
        }
        let every_slot = |s: &Slots| s.cols.iter().all(|c| *c != NONE);
        (every_slot(&fast.features) && every_slot(&fast.lists)).then_some(fast)
    }
}

/// The fast path over the records of one batch.
pub(super) struct FastRun<'p> {
    plan: &'p Plan,
    fast: &'p FastPlan,
    /// For each column, the mark of the last record that held it.
    seen: Vec<usize>,
    /// The current record's mark (1 + its row), and how many columns it held so far.
    mark: usize,
    held: usize,
    /// Per key table (features, lists): the slot of the entry at each position of the previous
    /// record, and the position of the current record's next entry.
    last: [Vec<usize>; 2],
    pos: [usize; 2],
}

impl<'p> FastRun<'p> {
    /// Positions remembered: enough for any spec, bounded whatever a record holds.
    const MAX_POSITIONS: usize = 4096;

    pub(super) fn new(plan: &'p Plan, fast: &'p FastPlan) -> Self {
        FastRun {
            plan,
            fast,
            seen: vec![0; plan.cols.len()],
            mark: 0,
            held: 0,
            last: [Vec::new(), Vec::new()],
            pos: [0, 0],
        }
    }

    /// Decodes record `row` of the batch into `cols`. `false` when the fast path does not
    /// take it, with `cols` holding part of it (see [`rollback`]).
    pub(super) fn record(&mut self, cols: &mut [Builder], bytes: &[u8], row: usize) -> bool {
        self.mark = row + 1;
        self.held = 0;
        self.pos = [0, 0];
        let walked = match (self.plan.format, self.plan.kind) {
            (Format::OfRecord, _) => {
                walk_canonical::<OfRecord>(bytes, |k, f| self.entry(cols, 0, k, f))
            }
            (Format::TfRecord, RecordKind::SequenceExample) => self.sequence(cols, bytes),
            (Format::TfRecord, _) => {
                walk_canonical::<TfExample>(bytes, |k, f| self.entry(cols, 0, k, f))
            }
        };
        walked && (self.held == cols.len() || self.absent(cols))
    }

    /// A `tf.train.SequenceExample` in the layout writers produce: the context (field 1), then
    /// the feature lists (field 2), each at most once, each a map walked as an OFRecord's is.
    fn sequence(&mut self, cols: &mut [Builder], bytes: &[u8]) -> bool {
        let mut rest = bytes;
        if let [0x0a, tail @ ..] = rest {
            let Some((context, after)) = split_len(tail) else {
                return false;
            };
            if !walk_canonical::<OfRecord>(context, |k, f| self.entry(cols, 0, k, f)) {
                return false;
            }
            rest = after;
        }
        if let [0x12, tail @ ..] = rest {
            let Some((lists, after)) = split_len(tail) else {
                return false;
            };
            if !walk_canonical::<OfRecord>(lists, |k, f| self.entry(cols, 1, k, f)) {
                return false;
            }
            rest = after;
        }
        rest.is_empty()
    }

    /// Reads one map entry of key table `t` (0 features, 1 feature lists).
    #[inline(always)]
    fn entry(&mut self, cols: &mut [Builder], t: usize, key: &[u8], feature: &[u8]) -> bool {
        let (slots, table) = if t == 0 {
            (&self.fast.features, &self.plan.features)
        } else {
            (&self.fast.lists, &self.plan.lists)
        };
        let (Some(pos), Some(last)) = (self.pos.get_mut(t), self.last.get_mut(t)) else {
            return false;
        };
        let at = *pos;
        *pos += 1;
        // The key at the same position in the previous record, most of the time.
        let slot = match last.get(at) {
            Some(&s) if slots.keys.get(s).is_some_and(|k| same_key(k, key)) => Some(s),
            _ => {
                let s = table.find(key);
                if let Some(l) = last.get_mut(at) {
                    *l = s.unwrap_or(NONE);
                } else if at == last.len() && at < Self::MAX_POSITIONS {
                    last.push(s.unwrap_or(NONE));
                }
                s
            }
        };
        let Some(slot) = slot else {
            return self.plan.deny_unknown.is_none();
        };
        let Some(&c) = slots.cols.get(slot) else {
            return false;
        };
        let (Some(seen), Some(b), Some(&(op, tag))) =
            (self.seen.get_mut(c), cols.get_mut(c), self.fast.ops.get(c))
        else {
            return false;
        };
        if *seen == self.mark {
            return false; // a repeated key: the last entry wins, as the general path decides
        }
        *seen = self.mark;
        self.held += 1;
        read(b, self.plan.format, op, tag, feature)
    }

    /// Fills the columns the record lacks: their defaults or null rows. `false` when one is
    /// required.
    fn absent(&self, cols: &mut [Builder]) -> bool {
        for ((c, b), &seen) in self.plan.cols.iter().zip(cols).zip(&self.seen) {
            if seen == self.mark {
                continue;
            }
            match (&c.shape, &c.absent) {
                (_, Absent::Error) => return false,
                // Past the bound, the general path says so.
                (Shape::Fixed { .. }, Absent::Default(v)) => {
                    if !b.leaf.may_fill(v.len(), v.string_bytes(), c.max_filled) {
                        return false;
                    }
                    b.leaf.push_values(v);
                    b.row(true);
                }
                (Shape::Fixed { n }, Absent::Null) => {
                    if !b.leaf.may_fill(*n, 0, c.max_filled) {
                        return false;
                    }
                    b.leaf.push_zeros(*n);
                    b.row(false);
                }
                // A list: null, or a var feature's default, as the general path fills it.
                _ => {
                    if b.absent_list(c).is_err() {
                        return false;
                    }
                }
            }
        }
        true
    }
}

/// Reads one feature (its serialized `Feature` or `FeatureList`) into its column.
#[inline(always)]
fn read(b: &mut Builder, format: Format, op: Op, tag: u32, feature: &[u8]) -> bool {
    // A `Feature` with no list set is an absent feature: the general path's to decide.
    if feature.is_empty() && !matches!(op, Op::StepsVar | Op::StepsFixed(_)) {
        return false;
    }
    let ok = match op {
        Op::Int64 => match (&mut b.leaf, one_varint(tag, feature)) {
            (Leaf::Int64(v), Some(x)) => {
                v.push(x.cast_signed());
                true
            }
            _ => false,
        },
        Op::Float => match (&mut b.leaf, feature) {
            (Leaf::Float(v), [t, 6, 0x0a, 4, x0, x1, x2, x3]) if u32::from(*t) == tag << 3 | 2 => {
                v.push(f32::from_le_bytes([*x0, *x1, *x2, *x3]));
                true
            }
            _ => false,
        },
        Op::Bytes { utf8 } => match (&mut b.leaf, one_value(tag, feature)) {
            (Leaf::Bytes(c) | Leaf::String(c), Some(value))
                if !utf8 || std::str::from_utf8(value).is_ok() =>
            {
                c.push(value);
                true
            }
            _ => false,
        },
        Op::Fixed(n) => extend(&mut b.leaf, format, tag, feature) == Some(n),
        Op::Var => match extend(&mut b.leaf, format, tag, feature) {
            Some(m) => {
                b.close(0, m);
                true
            }
            None => false,
        },
        Op::Rows(row) => match extend(&mut b.leaf, format, tag, feature) {
            Some(m) if m.is_multiple_of(row) => {
                b.close(0, m / row);
                true
            }
            _ => false,
        },
        Op::StepsVar | Op::StepsFixed(_) => {
            let (values, inner) = (b.leaf.len(), b.offsets(1).map_or(0, |o| o.len()));
            if let Some(steps) = steps_fast(b, op, tag, feature) {
                b.close(0, steps);
                b.row(true);
                return true;
            }
            b.leaf.truncate(values);
            if let Some(o) = b.offsets(1) {
                o.truncate(inner);
            }
            let fixed = match op {
                Op::StepsFixed(n) => Some(n),
                _ => None,
            };
            let mut steps = 0;
            match b.canonical_steps(feature, tag, fixed, &mut steps) {
                Some([]) => {
                    b.close(0, steps);
                    true
                }
                _ => false,
            }
        }
    };
    if ok {
        b.row(true);
    }
    ok
}

/// A feature list of `int64` var steps or of one `float` per step, each step in the canonical
/// layout, in one tight loop: the number of steps, or `None` (with `b` holding part of them)
/// for any other list, which [`Builder::canonical_steps`] reads.
#[inline]
fn steps_fast(b: &mut Builder, op: Op, tag: u32, bytes: &[u8]) -> Option<usize> {
    let t = u8::try_from(tag << 3 | 2).ok()?;
    let Builder { leaf, levels, .. } = b;
    match (op, leaf, levels.get_mut(1)) {
        (Op::StepsFixed(1), Leaf::Float(v), _) => {
            // `0a 08 t 06 0a 04` and the four bytes of the value, per step.
            let (steps, []) = bytes.as_chunks::<10>() else {
                return None;
            };
            v.reserve(steps.len());
            for step in steps {
                match step {
                    [0x0a, 8, tt, 6, 0x0a, 4, x0, x1, x2, x3] if *tt == t => {
                        v.push(f32::from_le_bytes([*x0, *x1, *x2, *x3]));
                    }
                    _ => return None,
                }
            }
            Some(steps.len())
        }
        (Op::StepsVar, Leaf::Int64(v), Some(Level::List(inner))) => {
            let mut rest = bytes;
            let mut steps = 0;
            let base = inner.last().copied().unwrap_or(0) - to_i64(v.len());
            while let [0x0a, l1, tt, l2, 0x0a, l3, tail @ ..] = rest {
                let len = usize::from(*l3);
                if *tt != t
                    || *l1 >= 0x80
                    || usize::from(*l1) != len + 4
                    || usize::from(*l2) != len + 2
                {
                    return None;
                }
                let after = tail.get(len..)?;
                // A word at a time, past the run's end into the rest of the record.
                <i64 as DecodeElem<'_, Tf>>::extend_packed_within(tail, len, v).ok()?;
                inner.push(base + to_i64(v.len()));
                steps += 1;
                rest = after;
            }
            rest.is_empty().then_some(steps)
        }
        _ => None,
    }
}

/// The one value of a `Feature` whose list (oneof member `tag`) holds one `value` field.
#[inline(always)]
fn one_value(tag: u32, feature: &[u8]) -> Option<&[u8]> {
    match short_feature(feature) {
        Some((t, value)) => (t == tag).then_some(value),
        None => canonical_feature(feature).and_then(|(t, value)| (t == tag).then_some(value)),
    }
}

/// The one varint of a `Feature` whose list (oneof member `tag`) is a packed run of one.
#[inline(always)]
fn one_varint(tag: u32, feature: &[u8]) -> Option<u64> {
    let (t, mut value) = short_feature(feature)?;
    match value {
        [b] if t == tag && *b < 0x80 => Some(u64::from(*b)),
        _ if t == tag => {
            let v = get_varint(&mut value).ok()?;
            value.is_empty().then_some(v)
        }
        _ => None,
    }
}

/// Appends the values of a `Feature` in the canonical layout to `leaf`: how many, or `None`
/// for any other layout, kind or a value the type does not hold (`leaf` may then hold some).
#[inline]
fn extend(leaf: &mut Leaf, format: Format, tag: u32, feature: &[u8]) -> Option<usize> {
    let of = format == Format::OfRecord;
    match leaf {
        Leaf::Int64(v) => v.extend_canonical(tag, feature),
        Leaf::Float(v) => v.extend_canonical(tag, feature),
        Leaf::Bytes(c) => c.extend_canonical(tag, feature),
        Leaf::String(c) => {
            let before = c.len();
            let n = c.extend_canonical(tag, feature)?;
            (before..c.len())
                .all(|i| c.get(i).is_some_and(|b| std::str::from_utf8(b).is_ok()))
                .then_some(n)
        }
        Leaf::Int32(v) if of => packed(tag, feature, v, <i32 as DecodeElem<'_, Of>>::extend_packed),
        Leaf::Int32(v) => packed(tag, feature, v, <i32 as DecodeElem<'_, Tf>>::extend_packed),
        Leaf::Bool(v) => packed(tag, feature, v, <bool as DecodeElem<'_, Tf>>::extend_packed),
        Leaf::Double(v) if of => {
            packed(tag, feature, v, <f64 as DecodeElem<'_, Of>>::extend_packed)
        }
        Leaf::Double(v) => packed(
            tag,
            feature,
            v,
            <f64 as DecodeElem<'_, TfLossy>>::extend_packed,
        ),
        Leaf::Sparse { .. } => None,
    }
}

/// The values of a `Feature` whose list holds one packed run, converted by `ext`.
fn packed<'a, T>(
    tag: u32,
    feature: &'a [u8],
    out: &mut Vec<T>,
    ext: fn(&'a [u8], &mut Vec<T>) -> Result<(), crate::feature::FeatureProblem>,
) -> Option<usize> {
    let (t, value) = canonical_feature(feature)?;
    if t != tag {
        return None;
    }
    let before = out.len();
    ext(value, out).ok()?;
    Some(out.len() - before)
}

/// Drops what row `row` added to `cols`: every earlier row added exactly one row to each
/// column.
pub(super) fn rollback(plan: &Plan, cols: &mut [Builder], row: usize) {
    /// Truncates list level `i` to `n` entries; the end of the last.
    fn cut(b: &mut Builder, i: usize, n: usize) -> usize {
        b.offsets(i).map_or(0, |offsets| {
            offsets.truncate(n + 1);
            offsets
                .last()
                .and_then(|e| usize::try_from(*e).ok())
                .unwrap_or(0)
        })
    }
    for (c, b) in plan.cols.iter().zip(cols) {
        b.rows = row;
        if b.nulls {
            b.valid.truncate(row);
            if !b.valid.contains(&false) {
                b.nulls = false;
                b.valid.clear();
            }
        }
        let values = match c.shape {
            Shape::Fixed { n } => row * n,
            Shape::Var => cut(b, 0, row),
            Shape::Rows { row: n } | Shape::StepsFixed { n } => cut(b, 0, row) * n,
            Shape::StepsVar => {
                let steps = cut(b, 0, row);
                cut(b, 1, steps)
            }
            // Not in a plan the fast path takes.
            Shape::Sparse { .. } | Shape::Ragged { .. } => continue,
        };
        b.leaf.truncate(values);
    }
}
