//! The record shuffle buffer, with tf.data's `shuffle(buffer_size)` semantics: before each
//! record out, the buffer is topped up from the input to `buffer_size` records (fewer at the end
//! of the input); the record out is drawn uniformly from the buffer; the last record of the
//! buffer takes its place, and the next record in is appended. Only the draws come from the
//! seeded generator, so the order is a function of the seed and the input order.

use crate::block::Start;
use crate::error::Result;
use crate::rng::Rng;

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
}

impl<O> ShuffleBuffer<O> {
    /// An empty buffer of `size` records (at least 1) drawing from `rng`.
    pub(crate) fn new(size: usize, rng: Rng) -> Self {
        ShuffleBuffer {
            items: Vec::with_capacity(size.clamp(1, 1 << 16)),
            size: size.max(1),
            rng,
            input_done: false,
        }
    }

    /// A buffer holding `items` (in buffer order) whose generator is at `rng`.
    pub(crate) fn restore(size: usize, rng: Rng, items: Vec<Held<O>>) -> Self {
        ShuffleBuffer {
            items,
            size: size.max(1),
            rng,
            input_done: false,
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
        let i = self.rng.index(self.items.len());
        Some(Ok(self.items.swap_remove(i)))
    }

    /// How many draws the generator has made.
    pub(crate) fn draws(&self) -> u64 {
        self.rng.draws()
    }

    /// The buffered records' positions, in buffer order.
    pub(crate) fn positions(&self) -> impl Iterator<Item = (usize, Start)> + '_ {
        self.items.iter().map(|h| (h.split, h.at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Use;

    fn run(size: usize, n: u64, seed: u64) -> Vec<u64> {
        let mut buf = ShuffleBuffer::new(size, Rng::new(seed, 0, Use::Buffer));
        let mut input = 0..n;
        let mut out = Vec::new();
        while let Some(held) = buf.next(|| {
            input.next().map(|i| {
                Ok(Held {
                    value: i,
                    split: 0,
                    at: Start::default(),
                })
            })
        }) {
            out.push(held.expect("no errors").value);
        }
        out
    }

    #[test]
    fn every_record_once_and_none_before_it_is_read() {
        for size in [2, 3, 10, 100, 1000] {
            let out = run(size, 500, 9);
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
    fn a_buffer_of_one_keeps_the_order() {
        assert_eq!(run(1, 50, 3), (0..50).collect::<Vec<_>>());
        assert_eq!(run(0, 50, 3), (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn a_large_buffer_moves_records_far() {
        let out = run(1000, 1000, 4);
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
