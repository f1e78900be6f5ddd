//! A batch being decoded, one record at a time: each record by the fast path where it is in
//! the layout every writer produces, else by the general path; the buffers sized from what the
//! last batch of the same decoder held.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::ColumnBatch;
use super::decode::{Builder, Room, general_record};
use super::fast::{FastPlan, FastRun, rollback};
use super::partition::Scratch;
use super::plan::Plan;
use super::values::Slots;
use crate::error::Result;

/// How much each column held per record in the last batch, in 1/16ths: the next batch
/// reserves its buffers from it at once instead of growing them by doubling (which copies,
/// and touches fresh memory several times over). Only a guess: any value works.
#[derive(Debug, Default)]
pub(super) struct Hints(Vec<[AtomicUsize; 3]>);

impl Clone for Hints {
    fn clone(&self) -> Self {
        let copy = |a: &AtomicUsize| AtomicUsize::new(a.load(Ordering::Relaxed));
        Hints(self.0.iter().map(|h| h.each_ref().map(copy)).collect())
    }
}

impl Hints {
    pub(super) fn new(columns: usize) -> Self {
        Hints((0..columns).map(|_| Default::default()).collect())
    }

    /// The room for column `i` in a batch of `rows` records: what the last batch held per
    /// record, plus a sixteenth.
    fn room(&self, i: usize, rows: usize) -> Room {
        let Some([values, bytes, inner]) = self.0.get(i) else {
            return Room::default();
        };
        let scale = |a: &AtomicUsize| {
            let n = a.load(Ordering::Relaxed).saturating_mul(rows) / 16;
            n.saturating_add(n / 16)
        };
        Room {
            values: scale(values),
            bytes: scale(bytes),
            inner: scale(inner),
        }
    }

    /// Remembers what column `i` held in a batch of `rows` records.
    fn learn(&self, i: usize, rows: usize, held: Room) {
        if let Some([values, bytes, inner]) = self.0.get(i)
            && rows > 0
        {
            let per = |n: usize| n.saturating_mul(16) / rows;
            values.store(per(held.values), Ordering::Relaxed);
            bytes.store(per(held.bytes), Ordering::Relaxed);
            inner.store(per(held.inner), Ordering::Relaxed);
        }
    }
}

/// Records the fast path declined in a row past which it only tries now and then, so that a
/// run of records in another layout costs little more than the general path alone.
const DECLINED: usize = 8;

/// A batch being decoded: [`push`](Self::push) each record, then [`finish`](Self::finish).
pub(crate) struct BatchBuilder<'p> {
    plan: &'p Plan,
    hints: &'p Hints,
    cols: Vec<Builder>,
    fast: Option<FastRun<'p>>,
    /// The general path's slot vectors, kept empty between records for their allocations.
    spare: (Slots<'static>, Slots<'static>),
    scratch: Scratch,
    rows: usize,
    declined: usize,
    /// The columns' lengths before the record the general path reads ([`Builder::mark`]).
    marks: Vec<usize>,
}

impl<'p> BatchBuilder<'p> {
    /// A batch of about `rows` records.
    pub(super) fn new(
        plan: &'p Plan,
        fast: Option<&'p FastPlan>,
        hints: &'p Hints,
        rows: usize,
    ) -> Self {
        let cols = plan
            .cols
            .iter()
            .zip(plan.layouts())
            .enumerate()
            .map(|(i, (c, l))| Builder::new(c, l, rows, hints.room(i, rows)))
            .collect();
        BatchBuilder {
            plan,
            hints,
            cols,
            fast: fast.map(|f| FastRun::new(plan, f)),
            spare: (Vec::new(), Vec::new()),
            scratch: Scratch::new(),
            rows: 0,
            declined: 0,
            marks: Vec::new(),
        }
    }

    /// Decodes one record, whose index in its file or data set is `index` (for errors).
    ///
    /// # Errors
    /// As [`ColumnDecoder::decode`](super::ColumnDecoder::decode); the batch then holds the
    /// records before this one, so that a caller may skip it and go on.
    pub(crate) fn push(&mut self, record: &[u8], index: u64) -> Result<()> {
        let row = self.rows;
        if let Some(run) = self.fast.as_mut()
            && (self.declined < DECLINED || row.is_multiple_of(64))
        {
            if run.record(&mut self.cols, record, row) {
                self.declined = 0;
                self.rows += 1;
                return Ok(());
            }
            rollback(self.plan, &mut self.cols, row);
        }
        self.declined += 1;
        self.marks.clear();
        for b in &self.cols {
            b.mark(&mut self.marks);
        }
        let mut features: Slots<'_> = std::mem::take(&mut self.spare.0);
        let mut lists: Slots<'_> = std::mem::take(&mut self.spare.1);
        let res = general_record(
            self.plan,
            &mut self.cols,
            record,
            (&mut features, &mut lists),
            &mut self.scratch,
        );
        self.spare = (recycle(features), recycle(lists));
        match res {
            Ok(()) => {
                self.rows += 1;
                Ok(())
            }
            Err(e) => {
                // The batch as it was before the record, for a caller that skips it.
                let mut marks = &self.marks[..];
                for b in &mut self.cols {
                    marks = b.cut(marks);
                }
                Err(e.with_record(index))
            }
        }
    }

    /// The batch of the records pushed.
    pub(crate) fn finish(self) -> ColumnBatch {
        let rows = self.rows;
        let columns = self
            .cols
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                self.hints.learn(i, rows, b.held());
                b.finish()
            })
            .collect();
        ColumnBatch { rows, columns }
    }
}

/// An empty slot vector's allocation, kept for the next record (a vector of the same layout
/// collected in place).
fn recycle(mut slots: Slots<'_>) -> Slots<'static> {
    slots.clear();
    slots.into_iter().map(|_| None).collect()
}
