//! Values of records already handed out, kept to decode later records into: the values of a
//! [`ValueBatch`](crate::ValueBatch) come back here when it is dropped, and the threads that decode
//! take them out a block at a time. A value decoded into keeps its `String` and `Vec` buffers
//! ([`Decode::decode_into`](tfrecord_core::Decode::decode_into)), so once batches come back reading
//! allocates nothing per record, and no value made on one thread is freed on another.

use std::sync::{Mutex, PoisonError};

/// At most this many batches are kept (and as many emptied vectors): a value is only kept once
/// it was handed out, so what is kept is bounded by what was in flight, and this caps it (the
/// values of this many batches stay with the data set once reading stops).
const KEPT_BATCHES: usize = 16;

/// Most values a batch's vector has room for before any is read.
const RESERVED: usize = 1 << 16;

/// The values kept, and the emptied vectors of batches to fill again.
pub(crate) struct Spares<T> {
    kept: Mutex<Kept<T>>,
}

struct Kept<T> {
    /// ValueBatches given back, each with values left in it.
    values: Vec<Vec<T>>,
    /// Vectors whose values were all taken.
    empty: Vec<Vec<T>>,
}

impl<T> Spares<T> {
    pub(crate) fn new() -> Self {
        Spares {
            kept: Mutex::new(Kept {
                values: Vec::new(),
                empty: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept<T>> {
        // Only moves of values happen under the lock: a poisoned lock holds a valid state.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps the values of a batch done with.
    pub(crate) fn give(&self, batch: Vec<T>) {
        let mut kept = self.lock();
        if batch.is_empty() {
            if kept.empty.len() < KEPT_BATCHES {
                kept.empty.push(batch);
            }
        } else if kept.values.len() < KEPT_BATCHES {
            kept.values.push(batch);
        }
    }

    /// Moves up to `n` kept values into `into`. The values move outside the lock (a batch is
    /// taken out, and what is left of it put back), so that a thread giving a batch back or
    /// taking values is not put to sleep while another moves hundreds of values.
    pub(crate) fn take(&self, n: usize, into: &mut Vec<T>) {
        while into.len() < n {
            let Some(mut batch) = self.lock().values.pop() else {
                return;
            };
            let from = batch.len().saturating_sub(n - into.len());
            into.extend(batch.drain(from..));
            // What is left of it goes back on top (or the emptied vector with the others).
            self.give(batch);
        }
    }

    /// An empty vector for a batch of `n` values: one a batch came back in, or a new one
    /// (room for `n` values made up front only up to [`RESERVED`]: a batch grows as it fills).
    pub(crate) fn vector(&self, n: usize) -> Vec<T> {
        let n = n.min(RESERVED);
        let reused = self.lock().empty.pop();
        match reused {
            Some(mut v) => {
                v.reserve(n);
                v
            }
            None => Vec::with_capacity(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Spares;

    #[test]
    fn values_come_back_out_and_vectors_are_reused() {
        let spares = Spares::new();
        spares.give(vec![1, 2, 3]);
        spares.give(vec![4, 5]);
        let mut got = Vec::new();
        spares.take(3, &mut got);
        assert_eq!(got, [4, 5, 3]);
        let mut more = Vec::new();
        spares.take(10, &mut more);
        assert_eq!(more, [1, 2]);
        spares.take(10, &mut more);
        assert_eq!(more, [1, 2], "nothing is left to take");
        let v = spares.vector(8);
        assert!(v.is_empty() && v.capacity() >= 2);
    }
}
