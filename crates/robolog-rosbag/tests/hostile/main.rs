//! The hostile-input tests of robolog-rosbag that bound memory: the corpus of
//! `testdata/bad/rosbag/` and the property tests of damaged bags. A test binary of its own rather
//! than modules of `it/`: the counting allocator installed here sees every allocation of the
//! process, so the bounds hold only if no other test allocates beside these.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Mutex, MutexGuard, PoisonError};

use robolog_testkit::alloc::{CountingAllocator, counting_allocator};

// The generator, shared with `it/hostile_generated.rs`.
#[path = "../it/bad_files/mod.rs"]
mod bad_files;
mod corpus;
mod robustness;

#[global_allocator]
static ALLOCATOR: CountingAllocator = counting_allocator();

/// The allocation peak is process-wide: the corpus test and each property-test case hold this
/// while they allocate, so that one test's buffers never count against another's bound.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}
