//! Decode buffers handed back by the merge for the workers to decode later chunks into.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use robolog_framing::{Bytes, keep_warm_buffer, take_warm_buffer};

/// Buffers a pool keeps, and the bytes they may hold together: enough for the chunks in flight,
/// little enough not to matter when idle.
const KEEP: usize = 8;
const KEEP_BYTES: usize = 32 << 20;

/// Chunk buffers for reuse, shared by a reader's queries and their workers. A fresh buffer costs
/// a zero-fill and a page fault per page, about as much as decoding an LZ4 chunk into it; a
/// recycled one costs nothing. A reader keeps one pool for all its queries, so that a query
/// reuses the buffers of the one before. When the last handle to a pool goes (the reader is
/// dropped), its buffers are kept warm for the next reader's pool while the worker threads
/// run, and freed with them ([`robolog_framing::keep_warm_buffer`]): a program that opens a
/// reader per query reuses them too.
///
/// ```
/// use robolog_query::{BufferPool, Bytes};
/// let pool = BufferPool::new();
/// let mut buffer = pool.take();
/// buffer.resize(1024, 0);
/// pool.give(Bytes::from(buffer));
/// assert!(pool.take().capacity() >= 1024);
/// ```
#[derive(Debug, Clone, Default)]
pub struct BufferPool(Arc<Buffers>);

#[derive(Debug, Default)]
struct Buffers(Mutex<Vec<Vec<u8>>>);

impl Buffers {
    fn lock(&self) -> MutexGuard<'_, Vec<Vec<u8>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        for buffer in std::mem::take(&mut *self.lock()) {
            keep_warm_buffer(buffer);
        }
    }
}

impl BufferPool {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// A buffer to decode into: a recycled one (keeping its length, which a decoder overwrites
    /// without zero-filling it again), one kept warm by a pool dropped before, or a new empty
    /// one.
    pub fn take(&self) -> Vec<u8> {
        let recycled = self.0.lock().pop();
        recycled.or_else(take_warm_buffer).unwrap_or_default()
    }

    /// Keeps the allocation of `buffer` when nobody else holds it (a slice of the input, or a
    /// buffer a message still points into, is left alone) and the pool has room.
    pub fn give(&self, buffer: Bytes) {
        let Ok(buffer) = buffer.try_into_mut() else {
            return;
        };
        if buffer.capacity() == 0 {
            return;
        }
        let buffer = Vec::from(buffer);
        let mut pool = self.0.lock();
        let held: usize = pool.iter().map(Vec::capacity).sum();
        if pool.len() < KEEP && held + buffer.capacity() <= KEEP_BYTES {
            pool.push(buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_and_oversized_buffers_are_not_kept() {
        // The pool's own buffers (other tests may keep process-wide ones warm meanwhile).
        let kept = |pool: &BufferPool| pool.0.lock().len();
        let pool = BufferPool::new();
        let shared = Bytes::from(vec![1u8; 100]);
        let _holder = shared.clone();
        pool.give(shared);
        pool.give(Bytes::from(vec![0u8; KEEP_BYTES + 1]));
        pool.give(Bytes::from_static(b"static"));
        assert_eq!(kept(&pool), 0);
        for _ in 0..KEEP + 2 {
            pool.give(Bytes::from(vec![0u8; 16]));
        }
        assert_eq!(kept(&pool), KEEP);
        let recycled = pool.take();
        assert_eq!((recycled.len(), kept(&pool)), (16, KEEP - 1));
    }
}
