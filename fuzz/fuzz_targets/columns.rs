//! `tfrecord_tests::fuzz::columns` under libFuzzer, with the counting allocator its heap check
//! reads.
#![no_main]

use std::alloc::System;

use libfuzzer_sys::fuzz_target;
use peakmem_alloc::{INSTRUMENTED_SYSTEM, PeakMemAlloc};

#[global_allocator]
static GLOBAL: &PeakMemAlloc<System> = &INSTRUMENTED_SYSTEM;

fuzz_target!(|data: &[u8]| tfrecord_tests::fuzz::columns(data));
