//! The heap-growth check: one call on an input must not make the heap grow far beyond the
//! input's size.
//!
//! The peak is counted by `peakmem_alloc`'s instrumented system allocator, which the binary
//! running the targets installs as its global allocator (the fuzz binaries and
//! `tests/fuzz_replay.rs` do):
//!
//! ```text
//! #[global_allocator]
//! static GLOBAL: &PeakMemAlloc<System> = &INSTRUMENTED_SYSTEM;
//! ```
//!
//! The count is process-wide: calls measured at the same time on several threads would add
//! up, so a binary runs them one at a time.

use std::sync::atomic::{AtomicBool, Ordering};

use peakmem_alloc::{INSTRUMENTED_SYSTEM, PeakMemAllocTrait};

/// How much the heap may grow during one call: `per_byte` times the size of what the call
/// reads, plus `fixed`.
#[derive(Clone, Copy, Debug)]
pub struct Bound {
    /// Bytes per byte of input.
    pub per_byte: usize,
    /// Bytes whatever the input: read buffers and reservations of a fixed size.
    pub fixed: usize,
}

impl Bound {
    /// The most the heap may grow for `len` bytes of input.
    pub fn limit(self, len: usize) -> usize {
        self.per_byte.saturating_mul(len).saturating_add(self.fixed)
    }
}

/// Whether the instrumented allocator was seen counting.
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Panics unless the instrumented allocator counts this process's allocations: without it
/// every peak would read 0 and the check would pass whatever happened.
fn check_installed() {
    if INSTALLED.load(Ordering::Relaxed) {
        return;
    }
    INSTRUMENTED_SYSTEM.reset_peak_memory();
    let probe: Vec<u8> = std::hint::black_box(Vec::with_capacity(4096));
    let peak = INSTRUMENTED_SYSTEM.get_peak_memory();
    drop(probe);
    assert!(
        peak >= 4096,
        "the heap check needs `peakmem_alloc::INSTRUMENTED_SYSTEM` as the global allocator \
         (a 4096-byte allocation counted {peak} bytes)"
    );
    INSTALLED.store(true, Ordering::Relaxed);
}

/// Runs `f`, which reads `len` bytes of input, and returns what it returns.
///
/// # Panics
/// When the heap grew by more than `bound` allows for `len` bytes during the call (a bug: an
/// input drove an allocation that its bytes do not back), naming `what`; and when the
/// instrumented allocator is not installed.
pub fn within<T>(what: &str, len: usize, bound: Bound, f: impl FnOnce() -> T) -> T {
    within_plus(what, len, bound, || (f(), 0))
}

/// As [`within`], for a call whose output the input does not bound: `f` returns its result and
/// the bytes of output it was asked to make regardless of the input's size (dense tensors
/// padded to the longest record, as `tf.io.parse_example` pads them), which the bound allows on
/// top.
///
/// # Panics
/// As [`within`].
pub fn within_plus<T>(what: &str, len: usize, bound: Bound, f: impl FnOnce() -> (T, usize)) -> T {
    check_installed();
    INSTRUMENTED_SYSTEM.reset_peak_memory();
    let (out, extra) = f();
    let peak = INSTRUMENTED_SYSTEM.get_peak_memory();
    let limit = bound.limit(len).saturating_add(extra);
    assert!(
        peak <= limit,
        "{what}: the heap grew by {peak} bytes while reading {len} bytes of input, over the \
         bound of {limit} ({} per byte + {} + {extra} of padded output)",
        bound.per_byte,
        bound.fixed
    );
    out
}
