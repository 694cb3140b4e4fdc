//! Allocations handed back by the consumer of a parallel read for the workers to fill again.
//!
//! Readers that decode chunks on worker threads need a buffer and a message list per chunk. A
//! fresh one each time costs its growth and a page fault per page (the allocator gives large
//! blocks back to the system as soon as they are freed); recycled ones cost nothing.

use std::sync::{Arc, Mutex};

/// A bounded stack of reusable values shared by its clones (the consumer and the workers).
///
/// ```
/// use robolog_framing::RecyclePool;
/// let pool: RecyclePool<Vec<u32>> = RecyclePool::new(2);
/// let mut list = pool.take(); // empty: nothing to reuse yet
/// list.extend([1, 2, 3]);
/// pool.give_cleared(list);
/// let again = pool.take();
/// assert!(again.is_empty() && again.capacity() >= 3);
/// ```
#[derive(Debug)]
pub struct RecyclePool<T> {
    items: Arc<Mutex<Vec<T>>>,
    keep: usize,
}

impl<T> Clone for RecyclePool<T> {
    fn clone(&self) -> Self {
        Self {
            items: Arc::clone(&self.items),
            keep: self.keep,
        }
    }
}

impl<T: Default> RecyclePool<T> {
    /// A pool that holds at most `keep` idle values: more would only hold memory.
    pub fn new(keep: usize) -> Self {
        Self {
            items: Arc::new(Mutex::new(Vec::new())),
            keep,
        }
    }

    /// A value to reuse, or `T::default()` when none is idle.
    pub fn take(&self) -> T {
        self.items
            .lock()
            .ok()
            .and_then(|mut items| items.pop())
            .unwrap_or_default()
    }

    /// Keeps `item` for a later [`take`](Self::take), unless the pool is full (then it is
    /// dropped). The value is kept as it is: a decode buffer, for example, keeps its initialised
    /// length for a decoder that overwrites it.
    pub fn give(&self, item: T) {
        if let Ok(mut items) = self.items.lock()
            && items.len() < self.keep
        {
            items.push(item);
        }
    }
}

impl<E> RecyclePool<Vec<E>> {
    /// Empties `list` and keeps its allocation (lists that never allocated are not worth it).
    pub fn give_cleared(&self, mut list: Vec<E>) {
        list.clear();
        if list.capacity() > 0 {
            self.give(list);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_at_most_its_bound_and_hands_values_back_last_in_first_out() {
        let pool: RecyclePool<Vec<u8>> = RecyclePool::new(2);
        for fill in [1u8, 2, 3] {
            pool.give(vec![fill; 4]);
        }
        let clone = pool.clone();
        assert_eq!(clone.take(), vec![2; 4]);
        assert_eq!(pool.take(), vec![1; 4]);
        assert_eq!(pool.take(), Vec::<u8>::new());
    }

    #[test]
    fn cleared_lists_keep_their_allocation_and_empty_ones_are_dropped() {
        let pool: RecyclePool<Vec<u64>> = RecyclePool::new(4);
        pool.give_cleared(Vec::new());
        pool.give_cleared(Vec::with_capacity(16));
        let mut used = Vec::with_capacity(8);
        used.push(7u64);
        pool.give_cleared(used);
        let first = pool.take();
        assert!(first.is_empty());
        assert_eq!(first.capacity(), 8);
        assert_eq!(pool.take().capacity(), 16);
        assert_eq!(pool.take().capacity(), 0);
    }
}
