//! The random stream behind shuffling, fixed so that a seed means the same order everywhere:
//! PCG64 seeded from (seed, epoch, use) by SplitMix64, Lemire's bounded draws and Fisher-Yates,
//! exactly as [`Shuffle`](crate::Shuffle)'s documentation states them (keep the two in step).
//!
//! A generator is saved as the number of 64-bit outputs it has produced, and restored by
//! re-seeding and jumping ahead that many steps (`Pcg64::advance`, logarithmic time).

use rand_core::Rng as _;
use rand_pcg::Pcg64;

/// What a generator is for; part of its seed.
#[derive(Clone, Copy, Debug)]
#[repr(u64)]
pub(crate) enum Use {
    /// The order of splits in an epoch.
    SplitOrder = 1,
    /// The record shuffle buffer.
    Buffer = 2,
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A PCG64 stream that counts its outputs.
#[derive(Clone, Debug)]
pub(crate) struct Rng {
    pcg: Pcg64,
    draws: u64,
}

impl Rng {
    /// The generator for `seed`, `epoch` and `what`, at its start.
    pub(crate) fn new(seed: u64, epoch: u64, what: Use) -> Self {
        let what = what as u64;
        let hi = splitmix64(seed ^ splitmix64(epoch));
        let lo = splitmix64(hi ^ what);
        let state = (u128::from(hi) << 64) | u128::from(lo);
        let stream = (u128::from(what) << 64) | u128::from(epoch);
        Rng {
            pcg: Pcg64::new(state, stream),
            draws: 0,
        }
    }

    /// The generator for `seed`, `epoch` and `what` after `draws` outputs.
    pub(crate) fn at(seed: u64, epoch: u64, what: Use, draws: u64) -> Self {
        let mut rng = Self::new(seed, epoch, what);
        rng.pcg.advance(u128::from(draws));
        rng.draws = draws;
        rng
    }

    /// How many 64-bit outputs have been drawn.
    pub(crate) fn draws(&self) -> u64 {
        self.draws
    }

    fn next_u64(&mut self) -> u64 {
        // A count, not arithmetic: it wraps only for a position edited into a checkpoint.
        self.draws = self.draws.wrapping_add(1);
        self.pcg.next_u64()
    }

    /// A uniform integer in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        // Truncation intended: the low 64 bits of the product.
        #[allow(clippy::cast_possible_truncation)]
        let mut low = m as u64;
        if low < n {
            let threshold = n.wrapping_neg() % n;
            while low < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
                #[allow(clippy::cast_possible_truncation)]
                {
                    low = m as u64;
                }
            }
        }
        #[allow(clippy::cast_possible_truncation)]
        let draw = (m >> 64) as u64;
        draw
    }

    /// A uniform index into a slice of `len` elements (`len > 0`).
    pub(crate) fn index(&mut self, len: usize) -> usize {
        // `below(len)` is less than `len`, so it fits.
        usize::try_from(self.below(len as u64)).unwrap_or(0)
    }

    /// Permutes `items` uniformly (Fisher-Yates).
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.index(i + 1);
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restored_generator_continues_the_same_stream() {
        let mut a = Rng::new(7, 3, Use::Buffer);
        for n in 1..200u64 {
            a.below(n * 977);
        }
        let mut b = Rng::at(7, 3, Use::Buffer, a.draws());
        for n in 1..100u64 {
            assert_eq!(a.below(n), b.below(n));
        }
    }

    #[test]
    fn streams_differ_by_seed_epoch_and_use() {
        let first = |seed, epoch, what| Rng::new(seed, epoch, what).next_u64();
        let base = first(1, 0, Use::Buffer);
        assert_ne!(base, first(2, 0, Use::Buffer));
        assert_ne!(base, first(1, 1, Use::Buffer));
        assert_ne!(base, first(1, 0, Use::SplitOrder));
    }

    #[test]
    fn draws_are_below_the_bound_and_cover_it() {
        let mut rng = Rng::new(0, 0, Use::Buffer);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            let d = rng.below(7);
            seen[usize::try_from(d).expect("small")] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(rng.below(1), 0);
        let mut v: Vec<u32> = (0..50).collect();
        rng.shuffle(&mut v);
        let mut sorted = v.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        assert_ne!(v, sorted);
    }
}
