//! tf.data's deterministic `interleave(cycle_length, block_length)` over the splits of one
//! epoch, step for step as TensorFlow's `InterleaveDatasetOp` does it:
//!
//! - the cycle has `cycle_length` slots, empty at first; the turn is at slot `cycle_index`;
//! - a slot with a split gives its next record; after `block_length` records from one slot the
//!   turn passes to the next slot (`cycle_index + 1` modulo the cycle);
//! - a slot whose split has ended is emptied and the turn passes on, without a record;
//! - an empty slot whose turn it is opens the next split not yet opened, if any, and gives from
//!   it at once; if every split has been opened, the turn passes on;
//! - the interleave ends when every split has been opened and every slot is empty.
//!
//! Sequential order is the cycle of one slot. In non-deterministic mode the turn also passes
//! when the current split has no block ready yet and another slot has one (or can open a
//! split), as tf.data's `deterministic=False` lets it.

use serde::{Deserialize, Serialize};
use tfrecord_core::Skipped;

use crate::block::{Cursor, Decoder, Item, Start};
use crate::error::{Error, Result};
use crate::fetch::{Fetcher, Window};

/// Where one open split of the cycle is: the next record to give, and its frame offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SlotPosition {
    /// The split's index in the epoch's plan.
    pub(crate) split: usize,
    /// The index of the next record to give (records before it have been given).
    pub(crate) record: u64,
    /// The byte offset of that record's frame.
    pub(crate) offset: u64,
}

/// The interleave's position, as saved in checkpoints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct InterleaveState {
    /// The first split not opened yet.
    pub(crate) next_split: usize,
    /// Whose turn it is.
    pub(crate) cycle_index: usize,
    /// Records given in this turn.
    pub(crate) block_index: usize,
    /// Each slot's split and position; `None` for an empty slot.
    pub(crate) slots: Vec<Option<SlotPosition>>,
}

struct Slot<O> {
    split: usize,
    next: Start,
    /// The rest of the last block fetched.
    pending: Cursor<O>,
    ended: bool,
}

/// The interleave of one epoch's splits.
pub(crate) struct Interleave<O> {
    splits: usize,
    block_length: usize,
    deterministic: bool,
    slots: Vec<Option<Slot<O>>>,
    /// The splits in the slots, sorted (splits open in increasing order, so each is pushed).
    open: Vec<usize>,
    next_input: usize,
    cycle_index: usize,
    block_index: usize,
    started: bool,
    /// What the bad-record policy skipped before the record being handed out, to charge.
    skipped: Vec<Skipped>,
}

/// Charges what the readers skipped to the data set's bad-record policy, in the order the
/// records around it are handed out: the error that ends the stream once the budget is spent.
/// Callers look at `skipped` first: it is empty for nearly every record.
#[cold]
#[inline(never)]
fn charge<D: Decoder>(fetcher: &Fetcher<D>, skipped: &mut Vec<Skipped>) -> Option<Error> {
    let policy = fetcher.policy();
    // The rest are dropped with the drain once the budget is spent: the stream ends there.
    for report in skipped.drain(..) {
        if let Err(e) = policy.charge_skipped(&report) {
            return Some(Error::Record(e));
        }
    }
    None
}

/// The error that ends a split where its next record would have been.
fn failed_at<O>(e: Error, at: Start) -> Item<O> {
    Item {
        value: Err(e),
        record: at.record,
        offset: at.offset,
        end: at.offset,
    }
}

/// A split open in two slots, if any.
fn twice(slots: &[Option<SlotPosition>]) -> Option<usize> {
    let mut splits: Vec<usize> = slots.iter().flatten().map(|s| s.split).collect();
    splits.sort_unstable();
    splits.windows(2).find(|w| w[0] == w[1]).map(|w| w[0])
}

impl<O> Interleave<O> {
    /// At the start of `splits` splits. A cycle longer than there are splits has slots that
    /// would never be filled: it holds one per split.
    pub(crate) fn new(splits: usize, cycle: (usize, usize), deterministic: bool) -> Self {
        let (cycle_length, block_length) = cycle;
        let cycle_length = cycle_length.min(splits.max(1));
        Interleave {
            splits,
            block_length,
            deterministic,
            slots: (0..cycle_length).map(|_| None).collect(),
            open: Vec::new(),
            next_input: 0,
            cycle_index: 0,
            block_index: 0,
            started: false,
            skipped: Vec::new(),
        }
    }

    /// At a saved position.
    ///
    /// # Errors
    /// A state that does not fit this cycle or these splits ([`Error::Checkpoint`]).
    pub(crate) fn restore(
        splits: usize,
        cycle: (usize, usize),
        deterministic: bool,
        state: &InterleaveState,
    ) -> Result<Self> {
        let mut this = Self::new(splits, cycle, deterministic);
        let fits = state.slots.len() == this.slots.len()
            && state.cycle_index < this.slots.len()
            && state.block_index < this.block_length
            && state.next_split <= splits
            && state
                .slots
                .iter()
                .flatten()
                .all(|s| s.split < state.next_split);
        if !fits {
            return Err(Error::Checkpoint(format!(
                "the interleave position (cycle of {}, turn {}, {} of {} splits opened) does \
                 not fit a cycle of {} over {splits} splits",
                state.slots.len(),
                state.cycle_index,
                state.next_split,
                splits,
                this.slots.len()
            )));
        }
        if let Some(split) = twice(&state.slots) {
            return Err(Error::Checkpoint(format!(
                "the interleave position has split {split} open in two slots"
            )));
        }
        for (slot, saved) in this.slots.iter_mut().zip(&state.slots) {
            *slot = saved.map(|s| Slot {
                split: s.split,
                next: Start {
                    record: s.record,
                    offset: s.offset,
                },
                pending: Cursor::empty(),
                ended: false,
            });
        }
        this.open = state.slots.iter().flatten().map(|s| s.split).collect();
        this.open.sort_unstable();
        this.next_input = state.next_split;
        this.cycle_index = state.cycle_index;
        this.block_index = state.block_index;
        Ok(this)
    }

    /// The position after the last record given.
    pub(crate) fn state(&self) -> InterleaveState {
        InterleaveState {
            next_split: self.next_input,
            cycle_index: self.cycle_index,
            block_index: self.block_index,
            slots: self
                .slots
                .iter()
                .map(|s| {
                    s.as_ref().map(|s| SlotPosition {
                        split: s.split,
                        record: s.next.record,
                        offset: s.next.offset,
                    })
                })
                .collect(),
        }
    }

    /// How many splits have been opened (the first ones of the epoch).
    pub(crate) fn opened(&self) -> usize {
        self.next_input
    }

    /// The positions open splits resume at.
    pub(crate) fn starts(&self) -> impl Iterator<Item = (usize, Start)> + '_ {
        self.slots.iter().flatten().map(|s| (s.split, s.next))
    }

    fn advance(&mut self) {
        self.block_index = 0;
        self.cycle_index = (self.cycle_index + 1) % self.slots.len();
    }

    fn tell<D: Decoder<Out = O>>(&self, fetcher: &mut Fetcher<D>) {
        fetcher.window(&Window {
            open: &self.open,
            next_input: self.next_input,
        });
    }

    /// The next record and the index of its split; `None` at the end of the epoch.
    pub(crate) fn next<D: Decoder<Out = O>>(
        &mut self,
        fetcher: &mut Fetcher<D>,
    ) -> Option<(usize, Item<O>)> {
        if !self.started {
            self.started = true;
            self.tell(fetcher);
        }
        loop {
            let ci = self.cycle_index;
            match &mut self.slots[ci] {
                Some(slot) => {
                    if slot.pending.is_empty() && !slot.ended {
                        let split = slot.split;
                        let block = if self.deterministic {
                            fetcher.next_block(split)
                        } else {
                            match fetcher.try_block(split) {
                                Some(block) => block,
                                None if self.pass_turn(fetcher) => continue,
                                None => fetcher.next_block(split),
                            }
                        };
                        let Some(slot) = self.slots[ci].as_mut() else {
                            continue;
                        };
                        slot.ended = block.last;
                        slot.pending = block.into_cursor();
                    }
                    let Some(slot) = self.slots[ci].as_mut() else {
                        continue;
                    };
                    let item = slot.pending.next(
                        fetcher.decoder(),
                        fetcher.path(slot.split),
                        &mut self.skipped,
                    );
                    if !self.skipped.is_empty()
                        && let Some(e) = charge(fetcher, &mut self.skipped)
                    {
                        // The budget ran out before this record: the stream ends there.
                        return Some((slot.split, failed_at(e, slot.next)));
                    }
                    if let Some(item) = item {
                        if item.value.is_err() {
                            // The split ends here; the position stays before the failed record,
                            // so that a checkpoint taken now resumes at it.
                            return Some((slot.split, item));
                        }
                        slot.next = Start {
                            record: item.record.saturating_add(1),
                            offset: item.end,
                        };
                        let split = slot.split;
                        self.block_index += 1;
                        if self.block_index == self.block_length {
                            self.advance();
                        }
                        return Some((split, item));
                    }
                    if !slot.ended {
                        // The block's last records were skipped (records that do not decode,
                        // under a policy that skips them): the split goes on in its next block.
                        continue;
                    }
                    let split = slot.split;
                    self.slots[ci] = None;
                    if let Ok(i) = self.open.binary_search(&split) {
                        self.open.remove(i);
                    }
                    fetcher.close(split);
                    self.tell(fetcher);
                    self.advance();
                }
                None if self.next_input < self.splits => {
                    self.open.push(self.next_input);
                    self.slots[ci] = Some(Slot {
                        split: self.next_input,
                        next: Start::default(),
                        pending: Cursor::empty(),
                        ended: false,
                    });
                    self.next_input += 1;
                    self.tell(fetcher);
                }
                None => {
                    if self.open.is_empty() {
                        return None;
                    }
                    self.advance();
                }
            }
        }
    }

    /// Moves the values of the next records into `out`, as [`next`](Self::next) would give
    /// them one by one: at least one, and more while the turn stays with the same split and
    /// its block has records left, up to `out.len() == max`. `None` at the end of the epoch,
    /// with nothing moved; an error ends a split as in `next`, after the values moved before
    /// it in this call, and comes with the split it is about.
    pub(crate) fn next_many<D: Decoder<Out = O>>(
        &mut self,
        fetcher: &mut Fetcher<D>,
        max: usize,
        out: &mut Vec<O>,
    ) -> Option<Result<(), (usize, Error)>> {
        let (split, item) = self.next(fetcher)?;
        match item.value {
            Ok(value) => out.push(value),
            Err(e) => return Some(Err((split, e))),
        }
        // One slot keeps the turn; with more, the turn stays while `block_index` counts on.
        let single = self.slots.len() == 1;
        let ci = self.cycle_index;
        while out.len() < max && (single || self.block_index > 0) {
            let Some(slot) = self.slots[ci].as_mut().filter(|s| s.split == split) else {
                break;
            };
            // Decoded records with nothing to charge between them move as one run, up to the
            // end of the turn.
            let turn = self.block_length - self.block_index;
            if let Some((n, last)) = slot.pending.take_run((max - out.len()).min(turn), out) {
                slot.next = Start {
                    record: last.record.saturating_add(1),
                    offset: last.end,
                };
                self.block_index += n;
                if self.block_index == self.block_length {
                    self.advance();
                }
                continue;
            }
            let item = slot
                .pending
                .next(fetcher.decoder(), fetcher.path(split), &mut self.skipped);
            if !self.skipped.is_empty()
                && let Some(e) = charge(fetcher, &mut self.skipped)
            {
                return Some(Err((split, e)));
            }
            let Some(item) = item else {
                break;
            };
            match item.value {
                Ok(value) => out.push(value),
                Err(e) => return Some(Err((split, e))),
            }
            slot.next = Start {
                record: item.record.saturating_add(1),
                offset: item.end,
            };
            self.block_index += 1;
            if self.block_index == self.block_length {
                self.advance();
            }
        }
        Some(Ok(()))
    }

    /// Non-deterministic mode: passes the turn to the next slot (in cycle order) that has
    /// records ready, or is empty while splits remain. False when there is none.
    fn pass_turn<D: Decoder<Out = O>>(&mut self, fetcher: &mut Fetcher<D>) -> bool {
        let n = self.slots.len();
        for step in 1..n {
            let k = (self.cycle_index + step) % n;
            let ready = match &mut self.slots[k] {
                Some(slot) if !slot.pending.is_empty() => true,
                Some(slot) if !slot.ended => match fetcher.try_block(slot.split) {
                    Some(block) => {
                        slot.ended = block.last;
                        slot.pending = block.into_cursor();
                        true
                    }
                    None => false,
                },
                Some(_) => true,
                None => self.next_input < self.splits,
            };
            if ready {
                self.cycle_index = k;
                self.block_index = 0;
                return true;
            }
        }
        false
    }
}
