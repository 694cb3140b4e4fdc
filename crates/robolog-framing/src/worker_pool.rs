//! The process's worker threads, started on first use and shared by every [`ParallelMap`].
//!
//! A query over a few chunks takes about a millisecond; starting two threads for it took 50 µs
//! of that before the first chunk could start decoding (the benchmark's W2 LZ4 query, measured
//! by timing each step), and stopping them again unmapped their stacks. So threads outlive the
//! maps that use them, as a pool: they wait on one task queue and cost nothing while idle.
//!
//! A task must not wait for another task: the pool may have fewer threads than a program has
//! tasks waiting. [`ParallelMap`] keeps to that; its consumer runs queued jobs itself while it
//! waits, so a map finishes even when every pool thread is busy elsewhere.
//!
//! [`ParallelMap`]: crate::ParallelMap

use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread;

use crossbeam_channel::{Receiver, Sender};

/// A unit of work for a pool thread.
pub(crate) type Task = Box<dyn FnOnce() + Send + 'static>;

/// The most threads the pool starts, whatever a caller asks for: a thread count read from a
/// command line or a config file should not be able to exhaust the process's threads.
pub const MAX_POOL_THREADS: usize = 256;

pub(crate) struct WorkerPool {
    tasks: Sender<Task>,
    queue: Receiver<Task>,
    /// Threads started so far; only grows.
    started: Mutex<usize>,
}

/// The process's pool.
pub(crate) fn pool() -> &'static WorkerPool {
    static POOL: OnceLock<WorkerPool> = OnceLock::new();
    POOL.get_or_init(|| {
        let (tasks, queue) = crossbeam_channel::unbounded();
        WorkerPool {
            tasks,
            queue,
            started: Mutex::new(0),
        }
    })
}

impl WorkerPool {
    /// Starts threads until the pool has `wanted` (at most [`MAX_POOL_THREADS`]) and returns how
    /// many it has, which is fewer when the system refuses to start more.
    pub(crate) fn grow_to(&self, wanted: usize) -> usize {
        let wanted = wanted.min(MAX_POOL_THREADS);
        let mut started = self.started.lock().unwrap_or_else(PoisonError::into_inner);
        while *started < wanted {
            let queue = self.queue.clone();
            let spawned = thread::Builder::new()
                .name(format!("robolog-worker-{}", *started))
                .spawn(move || {
                    for task in queue {
                        // Tasks catch their own panics; this keeps the thread alive if one
                        // does not.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(task));
                    }
                });
            if spawned.is_err() {
                break;
            }
            *started += 1;
        }
        *started
    }

    /// Queues `task` for the next free thread.
    pub(crate) fn submit(&self, task: Task) {
        // The pool holds a receiver itself, so the queue never disconnects.
        let _ = self.tasks.send(task);
    }
}
