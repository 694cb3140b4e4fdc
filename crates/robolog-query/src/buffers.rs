//! Decode buffers handed back by the merge for the workers to decode later chunks into.

use std::sync::{Arc, Mutex, PoisonError};

use robolog_framing::Bytes;

/// Buffers a pool keeps, and the bytes they may hold together: enough for the chunks in flight,
/// little enough not to matter when idle.
const KEEP: usize = 8;
const KEEP_BYTES: usize = 32 << 20;

/// Chunk buffers for reuse, shared by a reader's queries and their workers. A fresh buffer costs
/// a zero-fill and a page fault per page, about as much as decoding an LZ4 chunk into it; a
/// recycled one costs nothing. A reader keeps one pool for all its queries, so that a query
/// reuses the buffers of the one before; dropping the reader frees them.
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
pub struct BufferPool(Arc<Mutex<Vec<Vec<u8>>>>);

impl BufferPool {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// A buffer to decode into: a recycled one (keeping its length, which a decoder overwrites
    /// without zero-filling it again), or a new empty one.
    pub fn take(&self) -> Vec<u8> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
            .unwrap_or_default()
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
        let mut pool = self.0.lock().unwrap_or_else(PoisonError::into_inner);
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
        let pool = BufferPool::new();
        let shared = Bytes::from(vec![1u8; 100]);
        let _holder = shared.clone();
        pool.give(shared);
        pool.give(Bytes::from(vec![0u8; KEEP_BYTES + 1]));
        pool.give(Bytes::from_static(b"static"));
        assert_eq!(pool.take().capacity(), 0);
        for _ in 0..KEEP + 2 {
            pool.give(Bytes::from(vec![0u8; 16]));
        }
        let kept = std::iter::from_fn(|| Some(pool.take()))
            .take_while(|b| b.capacity() > 0)
            .count();
        assert_eq!(kept, KEEP);
    }
}
