//! Ragged partitions: the row splits each partition kind makes of a record's entries, checked
//! (an Arrow list needs valid offsets), within a batch's budget of rows.

use super::plan::{Part, PartKind, to_i64};
use super::values::{Slots, int64s, problem};
use crate::compression::Format;
use crate::error::{Error, Result};
use crate::parse::DType;

/// Buffers reused across records.
pub(super) struct Scratch {
    /// A partition feature's values.
    pub(super) part: Vec<i64>,
    /// Row splits, relative to the record.
    pub(super) splits: Vec<i64>,
    /// How many more rows value-row-ids partitions may make in the batch: 64 Ki, and 8 per byte
    /// of the records the general path read (as the runtime parser allows), so that a huge id
    /// in a small record is an error, not an allocation.
    pub(super) budget: usize,
}

impl Scratch {
    /// The scratch of a new batch.
    pub(super) fn new() -> Self {
        Scratch {
            part: Vec::new(),
            splits: Vec::new(),
            budget: 1 << 16,
        }
    }
}

/// The row splits a ragged partition makes of `n` entries, relative to the record, in
/// `scratch.splits`.
pub(super) fn splits(
    p: &Part,
    slots: &Slots<'_>,
    n: usize,
    format: Format,
    s: &mut Scratch,
) -> Result<()> {
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
            match slots[*slot].as_ref() {
                Some(fb) => {
                    int64s(fb, format, &mut s.part).map_err(|p| problem(key, DType::Int64, p))?;
                }
                None if n > 0 => {
                    return Err(Error::feature(format!(
                        "ragged partition {key:?} is absent from the record, and the {n} values \
                         need it"
                    ))
                    .with_key(key.clone()));
                }
                None => {}
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
    // The first place the values decrease, worded.
    let decrease = v.windows(2).position(|w| w[0] > w[1]).map(|i| {
        format!(
            "decreases at position {}: {} after {}",
            i + 1,
            v[i + 1],
            v[i]
        )
    });
    let sorted = decrease.is_none();
    match kind {
        PartKind::Splits => {
            if v.is_empty() && n == 0 {
                s.splits.push(0);
            } else if v.first() != Some(&0) || !sorted || v.last() != Some(&n64) {
                let found = match (v.first(), &decrease, v.last()) {
                    (None, ..) => "holds none".to_owned(),
                    (Some(f), ..) if *f != 0 => format!("starts at {f}"),
                    (_, Some(d), _) => d.clone(),
                    (.., Some(l)) => format!("ends at {l}"),
                    _ => String::new(),
                };
                return Err(bad(format!(
                    "must start at 0, never decrease and end at the {n} entries it splits, \
                     but {found}"
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
                let found = match (&decrease, v.last()) {
                    _ if v[0] != 0 => format!("starts at {}", v[0]),
                    (Some(d), _) => d.clone(),
                    (_, Some(l)) => format!("reaches {l}"),
                    _ => String::new(),
                };
                return Err(bad(format!(
                    "must start at 0, never decrease and stay within the {n} entries, but \
                     {found}"
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
                let found = match (v.first(), &decrease, v.last()) {
                    (Some(f), ..) if *f < 0 => format!("starts at {f}"),
                    (_, Some(d), _) => d.clone(),
                    (.., Some(l)) => format!("ends at {l}"),
                    _ => "holds none".to_owned(),
                };
                return Err(bad(format!(
                    "must never decrease and end at the {n} entries it splits, but {found}"
                )));
            }
            s.splits.push(0);
            s.splits.extend_from_slice(v);
        }
        PartKind::RowIds => {
            if v.len() != n || !sorted || v.first().is_some_and(|f| *f < 0) {
                let found = match (v.first(), &decrease) {
                    _ if v.len() != n => format!("holds {} row ids", v.len()),
                    (Some(f), _) if *f < 0 => format!("starts at {f}"),
                    (_, Some(d)) => d.clone(),
                    _ => String::new(),
                };
                return Err(bad(format!(
                    "must hold one row id per entry ({n}), from 0 up, never decreasing, but \
                     {found}"
                )));
            }
            let rows = v.last().map_or(0, |l| {
                usize::try_from(*l).unwrap_or(usize::MAX).saturating_add(1)
            });
            if rows > s.budget {
                return Err(bad(format!(
                    "makes {rows} rows, more than a batch of its size may (8 per byte and 64 Ki)"
                )));
            }
            s.budget -= rows;
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
