//! The record shuffle buffer, with tf.data's `shuffle(buffer_size)` semantics: the buffer is
//! filled from the input with `buffer_size` records; each record out is drawn uniformly from the
//! full buffer and the next record in takes its place; once the input has ended, each record out
//! is drawn from those left (the last one moving into the place of the one drawn). Only the
//! draws come from the seeded generator, so the order is a function of the seed and the input
//! order.
//!
//! While the buffer is full every draw is `below(buffer_size)`, so the next draws are known in
//! advance: they are made [`AHEAD`] records early, and the memory of the records they pick is
//! prefetched then (the buffer's place, then what the value points to), so that the memory of
//! several records is on its way at once rather than one cold record at a time. When the input ends, the draws made ahead are taken back (the
//! generator returns to its state before them) and made again against the shrinking buffer,
//! so the order is exactly as if each draw were made when its record leaves.

use std::collections::VecDeque;

use crate::block::Start;
use crate::error::Result;
use crate::prefetch;
use crate::rng::Rng;

/// How many draws are made ahead of time.
const AHEAD: usize = 16;

/// How much of a value's heap memory is prefetched.
const HEAP_BYTES: usize = 1024;

/// A record with where it came from: its split in the epoch's plan and its position there.
pub(crate) struct Held<O> {
    pub(crate) value: O,
    pub(crate) split: usize,
    pub(crate) at: Start,
}

/// The shuffle buffer of one epoch.
pub(crate) struct ShuffleBuffer<O> {
    items: Vec<Held<O>>,
    size: usize,
    rng: Rng,
    input_done: bool,
    /// Draws made ahead: the index, and the generator before the draw.
    ahead: VecDeque<(usize, Rng)>,
    /// The heap memory of a value worth prefetching (empty for none).
    heap: fn(&O) -> &[u8],
}

impl<O> ShuffleBuffer<O> {
    /// An empty buffer of `size` records (at least 1) drawing from `rng`; `heap` gives the
    /// heap memory of a value worth prefetching.
    pub(crate) fn new(size: usize, rng: Rng, heap: fn(&O) -> &[u8]) -> Self {
        Self::restore(size, rng, Vec::with_capacity(size.clamp(1, 1 << 16)), heap)
    }

    /// A buffer holding `items` (in buffer order) whose generator is at `rng`.
    pub(crate) fn restore(
        size: usize,
        rng: Rng,
        items: Vec<Held<O>>,
        heap: fn(&O) -> &[u8],
    ) -> Self {
        ShuffleBuffer {
            items,
            size: size.max(1),
            rng,
            input_done: false,
            ahead: VecDeque::with_capacity(AHEAD),
            heap,
        }
    }

    /// The next record: `pull` gives records in, `None` at the end of the input.
    ///
    /// # Errors
    /// The first error `pull` gives, at once.
    pub(crate) fn next(
        &mut self,
        mut pull: impl FnMut() -> Option<Result<Held<O>>>,
    ) -> Option<Result<Held<O>>> {
        while !self.input_done && self.items.len() < self.size {
            match pull() {
                Some(Ok(held)) => self.items.push(held),
                Some(Err(e)) => return Some(Err(e)),
                None => self.input_done = true,
            }
        }
        if self.items.is_empty() {
            return None;
        }
        if self.input_done {
            let i = self.rng.index(self.items.len());
            return Some(Ok(self.items.swap_remove(i)));
        }
        // Full, with more input to come: draw (ahead) from the full buffer.
        self.draw_ahead();
        let (i, before) = self.ahead.pop_front()?;
        match pull() {
            Some(Ok(held)) => Some(Ok(std::mem::replace(&mut self.items[i], held))),
            Some(Err(e)) => {
                self.take_back(before);
                Some(Err(e))
            }
            None => {
                // This draw stands (the buffer was full); the ones after it are made again
                // against the shrinking buffer.
                self.input_done = true;
                if let Some((_, after)) = self.ahead.front() {
                    self.rng = after.clone();
                }
                self.ahead.clear();
                Some(Ok(self.items.swap_remove(i)))
            }
        }
    }

    /// As [`next`](Self::next) called until `out` holds `max` values, each value drawn moved
    /// straight into `out`, while the buffer is full and the input goes on (the steady state
    /// of a long read). `None` when it moved nothing, for `next` to go on: the buffer is
    /// filling or draining.
    ///
    /// # Errors
    /// The first error `pull` gives, after the values moved before it.
    pub(crate) fn next_many(
        &mut self,
        mut pull: impl FnMut() -> Option<Result<Held<O>>>,
        max: usize,
        out: &mut Vec<O>,
    ) -> Option<Result<()>> {
        let before = out.len();
        while out.len() < max && !self.input_done && self.items.len() >= self.size {
            self.draw_ahead();
            let (i, drawn) = self.ahead.pop_front()?;
            match pull() {
                Some(Ok(held)) => out.push(std::mem::replace(&mut self.items[i], held).value),
                Some(Err(e)) => {
                    self.take_back(drawn);
                    return Some(Err(e));
                }
                None => {
                    // As in `next`: this draw stands, the ones after it are made again.
                    self.input_done = true;
                    if let Some((_, after)) = self.ahead.front() {
                        self.rng = after.clone();
                    }
                    self.ahead.clear();
                    out.push(self.items.swap_remove(i).value);
                }
            }
        }
        (out.len() > before).then_some(Ok(()))
    }

    /// Tops the draws made ahead up to [`AHEAD`], prefetching the memory of the records they
    /// pick: their places in the buffer at once, what the value points to half a window later
    /// (when its place has arrived).
    fn draw_ahead(&mut self) {
        while self.ahead.len() < AHEAD {
            let before = self.rng.clone();
            let i = self.rng.index(self.items.len());
            prefetch::value(&self.items[i]);
            self.ahead.push_back((i, before));
            if let Some(&(j, _)) = self.ahead.get(AHEAD / 2) {
                prefetch::bytes((self.heap)(&self.items[j].value), HEAP_BYTES);
            }
        }
    }

    /// Returns the generator to `before` and forgets every draw made ahead.
    fn take_back(&mut self, before: Rng) {
        self.rng = before;
        self.ahead.clear();
    }

    /// How many draws the generator has made for records that have left.
    pub(crate) fn draws(&self) -> u64 {
        self.ahead
            .front()
            .map_or_else(|| self.rng.draws(), |(_, before)| before.draws())
    }

    /// The buffered records' positions, in buffer order.
    pub(crate) fn positions(&self) -> impl Iterator<Item = (usize, Start)> + '_ {
        self.items.iter().map(|h| (h.split, h.at))
    }
}

/// For values whose heap memory is not worth prefetching.
pub(crate) fn no_heap<O>(_: &O) -> &[u8] {
    &[]
}

/// For raw records: their bytes. (A `&Vec` to fit `fn(&O) -> &[u8]` with `O = Vec<u8>`.)
#[allow(clippy::ptr_arg)]
pub(crate) fn raw_bytes(bytes: &Vec<u8>) -> &[u8] {
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Use;

    fn run(size: usize, n: u64, seed: u64, checkpoint_at: Option<usize>) -> Vec<u64> {
        let mut buf = ShuffleBuffer::new(size, Rng::new(seed, 0, Use::Buffer), no_heap);
        let mut input = 0..n;
        let mut out = Vec::new();
        let pull = |input: &mut std::ops::Range<u64>| {
            input.next().map(|i| {
                Ok(Held {
                    value: i,
                    split: 0,
                    at: Start {
                        record: i,
                        offset: i,
                    },
                })
            })
        };
        while let Some(held) = buf.next(|| pull(&mut input)) {
            out.push(held.expect("no errors").value);
            if checkpoint_at == Some(out.len()) {
                // What a checkpoint keeps: the draws and the records, in buffer order.
                let items = buf
                    .positions()
                    .map(|(split, at)| Held {
                        value: at.record,
                        split,
                        at,
                    })
                    .collect();
                let rng = Rng::at(seed, 0, Use::Buffer, buf.draws());
                buf = ShuffleBuffer::restore(size, rng, items, no_heap);
            }
        }
        out
    }

    #[test]
    fn every_record_once_and_none_before_it_is_read() {
        for size in [2, 3, 10, 100, 1000] {
            let out = run(size, 500, 9, None);
            let mut sorted = out.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..500).collect::<Vec<_>>(), "size {size}");
            // The k-th record out was among the first k + size records in.
            for (k, &v) in out.iter().enumerate() {
                assert!(v < (k + size) as u64, "size {size}: out[{k}] = {v}");
            }
        }
    }

    #[test]
    fn a_restored_buffer_continues_the_same_order() {
        for size in [3, 10, 100] {
            let whole = run(size, 300, 5, None);
            for at in [1, 7, 150, 299 - size, 295, 299] {
                assert_eq!(run(size, 300, 5, Some(at)), whole, "size {size}, at {at}");
            }
        }
    }

    /// Runs of [`ShuffleBuffer::next_many`] between calls of `next` give the order `next`
    /// alone gives, through the filling, the steady state and the draining.
    #[test]
    fn runs_give_the_order_of_one_by_one() {
        for (size, n, run_len) in [(10, 300, 7), (100, 1000, 64), (1000, 1500, 1024), (3, 5, 2)] {
            let mut buf = ShuffleBuffer::new(size, Rng::new(6, 0, Use::Buffer), no_heap);
            let mut input = (0..n).map(|i| {
                Ok(Held {
                    value: i,
                    split: 0,
                    at: Start::default(),
                })
            });
            let mut out = Vec::new();
            loop {
                let max = out.len() + run_len;
                match buf.next_many(|| input.next(), max, &mut out) {
                    Some(r) => r.expect("no errors"),
                    None => match buf.next(|| input.next()) {
                        Some(held) => out.push(held.expect("no errors").value),
                        None => break,
                    },
                }
            }
            assert_eq!(out, run(size, n, 6, None), "size {size}, runs of {run_len}");
        }
    }

    #[test]
    fn a_buffer_of_one_keeps_the_order() {
        assert_eq!(run(1, 50, 3, None), (0..50).collect::<Vec<_>>());
        assert_eq!(run(0, 50, 3, None), (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn a_large_buffer_moves_records_far() {
        let out = run(1000, 1000, 4, None);
        // A permutation that displaces records by a few hundred places on average; a buffer
        // that only swapped neighbours, or did not draw at all, would not.
        let moved: u64 = out
            .iter()
            .enumerate()
            .map(|(k, &v)| (k as u64).abs_diff(v))
            .sum();
        assert!(moved / 1000 > 100, "mean displacement {}", moved / 1000);
    }
}
