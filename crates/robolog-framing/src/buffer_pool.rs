//! Decode buffers kept for reuse: a reader's [`BufferPool`], and the bounded store it and the
//! worker pool's warm buffers share.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;

use crate::worker_pool::{keep_warm_buffer, take_warm_buffer};

/// Buffers kept for reuse, bounded in number and in the bytes they hold together: enough for the
/// chunks a read has in flight, little enough not to matter when idle. A buffer keeps its length,
/// which a decoder overwrites without zero-filling it again.
#[derive(Debug, Default)]
pub(crate) struct BoundedBuffers(Vec<Vec<u8>>);

impl BoundedBuffers {
    /// Buffers kept at most.
    pub(crate) const KEEP: usize = 8;
    /// Bytes (capacity) the kept buffers may hold together.
    pub(crate) const KEEP_BYTES: usize = 32 << 20;

    /// Keeps `buffer` when it has an allocation and the bounds leave room for it; otherwise it is
    /// dropped.
    pub(crate) fn keep(&mut self, buffer: Vec<u8>) {
        if buffer.capacity() == 0 {
            return;
        }
        let held: usize = self.0.iter().map(Vec::capacity).sum();
        if self.0.len() < Self::KEEP && held + buffer.capacity() <= Self::KEEP_BYTES {
            self.0.push(buffer);
        }
    }

    /// The buffer kept last, if any.
    pub(crate) fn take(&mut self) -> Option<Vec<u8>> {
        self.0.pop()
    }

    /// Every kept buffer, leaving none.
    pub(crate) fn take_all(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.0)
    }

    /// Buffers kept now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

/// Chunk buffers for reuse, shared by a reader's queries and their workers. A fresh buffer costs
/// a zero-fill and a page fault per page, about as much as decoding an LZ4 chunk into it; a
/// recycled one costs nothing. A reader keeps one pool for all its queries, so that a query
/// reuses the buffers of the one before. When the last handle to a pool goes (the reader is
/// dropped), its buffers are kept warm for the next reader's pool while the process's worker
/// threads run, and freed with them: a program that opens a reader per query reuses them too.
///
/// ```
/// use robolog_framing::{BufferPool, Bytes};
/// let pool = BufferPool::new();
/// let mut buffer = pool.take();
/// buffer.resize(1024, 0);
/// pool.give(Bytes::from(buffer));
/// assert!(pool.take().capacity() >= 1024);
/// ```
#[derive(Debug, Clone, Default)]
pub struct BufferPool(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared(Mutex<BoundedBuffers>);

impl Shared {
    fn lock(&self) -> MutexGuard<'_, BoundedBuffers> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        for buffer in self.lock().take_all() {
            keep_warm_buffer(buffer);
        }
    }
}

impl BufferPool {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// A buffer to decode into: a recycled one (keeping its length), one kept warm by a pool
    /// dropped before, or a new empty one.
    pub fn take(&self) -> Vec<u8> {
        let recycled = self.0.lock().take();
        recycled.or_else(take_warm_buffer).unwrap_or_default()
    }

    /// Keeps the allocation of `buffer` when nobody else holds it (a slice of the input, or a
    /// buffer a message still points into, is left alone) and the pool has room.
    pub fn give(&self, buffer: Bytes) {
        if let Ok(buffer) = buffer.try_into_mut() {
            self.0.lock().keep(Vec::from(buffer));
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
        pool.give(Bytes::from(vec![0u8; BoundedBuffers::KEEP_BYTES + 1]));
        pool.give(Bytes::from_static(b"static"));
        pool.give(Bytes::from(Vec::with_capacity(0)));
        assert_eq!(kept(&pool), 0);
        for _ in 0..BoundedBuffers::KEEP + 2 {
            pool.give(Bytes::from(vec![0u8; 16]));
        }
        assert_eq!(kept(&pool), BoundedBuffers::KEEP);
        let recycled = pool.take();
        assert_eq!(
            (recycled.len(), kept(&pool)),
            (16, BoundedBuffers::KEEP - 1)
        );
    }
}
