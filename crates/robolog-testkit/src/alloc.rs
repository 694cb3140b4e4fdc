//! A counting global allocator for tests that bound how much memory a reader may take.
//!
//! It is the [`cap`] crate's `Cap<System>` (with its `stats` feature), so no unsafe code of ours
//! is involved: `Cap` forwards every call to the system allocator and keeps the current and the
//! highest number of bytes allocated. We chose `cap` over `stats_alloc` (no peak, only totals) and
//! `peak_alloc` (its `realloc` always copies and its `alloc_zeroed` writes every byte, which would
//! change what a decompression-bomb test measures): `cap` keeps the system allocator's behaviour,
//! tracks the peak, and can refuse allocations past a hard limit so that a runaway reader fails the
//! test instead of exhausting the machine.
//!
//! A test binary installs it with
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: robolog_testkit::alloc::CountingAllocator =
//!     robolog_testkit::alloc::counting_allocator();
//! ```
//!
//! The peak is process-wide and only ever grows, so [`Peak::check`] is called after each unit of
//! work: the first unit after which the peak is over the bound is the one that went over it.

use std::alloc::System;

pub use cap::Cap;

/// The allocator type to install with `#[global_allocator]`.
pub type CountingAllocator = Cap<System>;

/// Allocations that would take the heap past this fail (and the test aborts with "memory
/// allocation of N bytes failed"): far above every bound the tests check, far below what would
/// hurt a 24 GiB CI machine.
pub const HARD_LIMIT: usize = 2 << 30;

/// A counting allocator over the system allocator, refusing to go past [`HARD_LIMIT`].
pub const fn counting_allocator() -> CountingAllocator {
    Cap::new(System, HARD_LIMIT)
}

/// Checks the process-wide allocation peak against a bound.
#[derive(Debug, Clone, Copy)]
pub struct Peak {
    allocator: &'static CountingAllocator,
    bound: usize,
}

impl Peak {
    /// Watches `allocator` (the one installed as the global allocator) against `bound` bytes.
    pub fn new(allocator: &'static CountingAllocator, bound: usize) -> Self {
        Self { allocator, bound }
    }

    /// The highest number of bytes the process has had allocated at once so far.
    pub fn peak(&self) -> usize {
        self.allocator.max_allocated()
    }

    /// The bound.
    pub fn bound(&self) -> usize {
        self.bound
    }

    /// `Err` naming `what` when the peak so far is over the bound.
    pub fn check(&self, what: &str) -> Result<(), String> {
        let peak = self.peak();
        if peak > self.bound {
            return Err(format!(
                "{what}: peak allocation {peak} bytes ({:.1} MiB) is over the bound of {} bytes ({:.1} MiB)",
                mib(peak),
                self.bound,
                mib(self.bound)
            ));
        }
        Ok(())
    }
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
