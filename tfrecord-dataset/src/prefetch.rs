//! Cache prefetch hints: asking the processor to bring memory into cache before it is read,
//! without waiting for it. A shuffle buffer reads its records at random places of a buffer
//! larger than the cache; a load that misses stalls the thread, a prefetch made a few records
//! early does not.
//!
//! The only `unsafe` of the crate: `_mm_prefetch` is a hint that never faults, never changes
//! memory and never changes what a later load returns, whatever the address; the addresses
//! given here are those of live references. On other architectures the hints do nothing.
#![allow(unsafe_code)]

/// The size of a cache line on the processors this targets.
const LINE: usize = 64;

/// Prefetches every cache line of `value`'s own memory (not what it points to).
#[inline]
pub(crate) fn value<T>(value: &T) {
    span(std::ptr::from_ref(value).cast(), size_of::<T>());
}

/// Prefetches the cache lines of `bytes`, at most `max` bytes of them.
#[inline]
pub(crate) fn bytes(bytes: &[u8], max: usize) {
    span(bytes.as_ptr(), bytes.len().min(max));
}

#[inline]
fn span(start: *const u8, len: usize) {
    if len == 0 {
        return;
    }
    let first = start.addr() & !(LINE - 1);
    let last = (start.addr() + len - 1) & !(LINE - 1);
    for addr in (first..=last).step_by(LINE) {
        line(start.with_addr(addr.max(start.addr())));
    }
}

#[inline(always)]
fn line(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch instruction reads nothing the program sees and cannot fault, on
    // any address; `sse` is part of every x86_64 target.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}
