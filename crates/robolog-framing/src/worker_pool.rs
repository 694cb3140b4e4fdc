//! The process's worker threads, started on first use and shared by every [`ParallelMap`].
//!
//! A query over a few chunks is short, and starting threads for each one was a visible share of
//! it, spent before the first chunk could start decoding. So threads outlive the maps that use
//! them, as a pool: they wait on one task queue while work keeps coming, and a thread that has
//! had no task for `IDLE` ends, so that a program that has stopped reading holds no threads.
//!
//! Decode buffers outlive the reads that used them in the same way ([`keep_warm_buffer`]): a
//! buffer touched by a decoder before costs nothing, where a fresh one costs a page fault and a
//! zero-fill per page, about as much as decoding LZ4 into it, and a program that runs query
//! after query opens a reader for each. They are kept only while the pool has threads, and the
//! last thread to end frees them, so that idle threads and idle buffers go together.
//!
//! A task must not wait for another task: the pool may have fewer threads than a program has
//! tasks waiting. [`ParallelMap`] keeps to that; its consumer runs queued jobs itself while it
//! waits, so a map finishes even when every pool thread is busy elsewhere.
//!
//! [`ParallelMap`]: crate::ParallelMap

#[cfg(any(feature = "lz4", test))]
use std::sync::Condvar;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};

use crate::buffer_pool::BoundedBuffers;

/// A unit of work for a pool thread.
pub(crate) type Task = Box<dyn FnOnce() + Send + 'static>;

/// The most threads the pool starts, whatever a caller asks for: a thread count read from a
/// command line or a config file should not be able to exhaust the process's threads.
pub const MAX_POOL_THREADS: usize = 256;

/// How long a pool thread waits for a task before it ends: long enough to carry over between
/// the queries of a program that reads in a loop, short enough that a program done reading soon
/// holds no threads.
const IDLE: Duration = Duration::from_secs(2);

pub(crate) struct WorkerPool {
    tasks: Sender<Task>,
    state: Arc<State>,
}

/// What the pool's threads share with it.
struct State {
    queue: Receiver<Task>,
    /// Threads running now. Tasks are queued, and idle threads end, under this lock.
    threads: Mutex<usize>,
    idle: Duration,
    /// Buffers kept for the next read while threads run (see [`keep_warm_buffer`]). Changed
    /// under the `threads` lock, so that the last thread to end cannot miss one.
    warm: Mutex<BoundedBuffers>,
}

impl State {
    fn threads(&self) -> MutexGuard<'_, usize> {
        self.threads.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn warm(&self) -> MutexGuard<'_, BoundedBuffers> {
        self.warm.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Keeps `buffer` (its allocation, and its length) for [`take_warm_buffer`], while the
/// process's worker threads run; with none running, or the store full, it is dropped. The last
/// worker thread to end, after its idle time, frees what is kept: a program that has stopped
/// reading holds neither threads nor buffers. A dropped [`BufferPool`](crate::BufferPool) hands
/// its buffers here.
pub(crate) fn keep_warm_buffer(buffer: Vec<u8>) {
    pool().keep_warm(buffer);
}

/// A buffer kept by [`keep_warm_buffer`], if any.
pub(crate) fn take_warm_buffer() -> Option<Vec<u8>> {
    pool().take_warm()
}

/// The process's pool.
pub(crate) fn pool() -> &'static WorkerPool {
    static POOL: OnceLock<WorkerPool> = OnceLock::new();
    POOL.get_or_init(|| WorkerPool::new(IDLE))
}

impl WorkerPool {
    /// A pool without threads yet, whose threads end after `idle` without a task.
    fn new(idle: Duration) -> Self {
        let (tasks, queue) = crossbeam_channel::unbounded();
        Self {
            tasks,
            state: Arc::new(State {
                queue,
                threads: Mutex::new(0),
                idle,
                warm: Mutex::new(BoundedBuffers::default()),
            }),
        }
    }

    /// Starts threads until the pool has `wanted` (at most [`MAX_POOL_THREADS`]) and returns how
    /// many it has, which is fewer when the system refuses to start more.
    pub(crate) fn grow_to(&self, wanted: usize) -> usize {
        let wanted = wanted.min(MAX_POOL_THREADS);
        let mut threads = self.state.threads();
        while *threads < wanted && self.spawn(&mut threads) {}
        *threads
    }

    /// Starts one thread; false when the system refuses.
    fn spawn(&self, threads: &mut MutexGuard<'_, usize>) -> bool {
        let state = Arc::clone(&self.state);
        let spawned = thread::Builder::new()
            .name(format!("robolog-worker-{}", **threads))
            .spawn(move || work(&state));
        if spawned.is_ok() {
            **threads += 1;
        }
        spawned.is_ok()
    }

    /// Threads running now.
    // Only `join` (the LZ4 halves) needs it.
    #[cfg(any(feature = "lz4", test))]
    fn threads(&self) -> usize {
        *self.state.threads()
    }

    /// See [`keep_warm_buffer`].
    fn keep_warm(&self, buffer: Vec<u8>) {
        let threads = self.state.threads();
        if *threads > 0 {
            self.state.warm().keep(buffer);
        }
    }

    fn take_warm(&self) -> Option<Vec<u8>> {
        self.state.warm().take()
    }

    /// Queues `task` for the next free thread, starting one if every thread has ended.
    pub(crate) fn submit(&self, task: Task) {
        let mut threads = self.state.threads();
        if *threads == 0 {
            // Without a thread the task would wait for the next `grow_to`; callers that find
            // none run their work themselves, so a refusal is not an error.
            self.spawn(&mut threads);
        }
        // The pool holds a receiver itself, so the queue never disconnects.
        let _ = self.tasks.send(task);
    }
}

/// A pool thread: runs tasks until none has come for the pool's idle time.
fn work(state: &State) {
    loop {
        match state.queue.recv_timeout(state.idle) {
            Ok(task) => {
                // Tasks catch their own panics; this keeps the thread alive if one does not.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(task));
            }
            Err(_) => {
                let mut threads = state.threads();
                // Tasks are queued under the same lock: one queued before this check is run by
                // this thread, and one queued after it finds this thread gone from the count.
                if !state.queue.is_empty() {
                    continue;
                }
                *threads -= 1;
                let freed = if *threads == 0 {
                    state.warm().take_all()
                } else {
                    Vec::new()
                };
                drop(threads);
                drop(freed);
                return;
            }
        }
    }
}

/// Where a job offered by [`join`] is.
#[cfg(any(feature = "lz4", test))]
enum Offer<F, B> {
    /// Waiting for a pool thread.
    Waiting(F),
    /// Taken by a pool thread.
    Running,
    /// Done by the pool thread, with its panic if it had one.
    Done(thread::Result<B>),
    /// Taken back, or its result collected.
    Gone,
}

/// Runs `here` on this thread while offering `there` to the pool. A pool thread that is free
/// before `here` returns runs `there` meanwhile; otherwise this thread runs it afterwards. So a
/// caller never waits for a pool thread that has not started its part, and a busy pool costs it
/// one queued task. A panic in `there` is re-raised here.
#[cfg(any(feature = "lz4", test))]
pub(crate) fn join<A, B, F>(here: impl FnOnce() -> A, there: F) -> (A, B)
where
    F: FnOnce() -> B + Send + 'static,
    B: Send + 'static,
{
    let pool = pool();
    if pool.threads() == 0 {
        let a = here();
        return (a, there());
    }
    let offer = Arc::new((Mutex::new(Offer::Waiting(there)), Condvar::new()));
    let taken = Arc::clone(&offer);
    pool.submit(Box::new(move || {
        let (state, done) = &*taken;
        let job = {
            let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
            match std::mem::replace(&mut *state, Offer::Running) {
                Offer::Waiting(job) => job,
                other => {
                    *state = other;
                    return;
                }
            }
        };
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        *state.lock().unwrap_or_else(PoisonError::into_inner) = Offer::Done(result);
        done.notify_one();
    }));
    let a = here();
    let (state, done) = &*offer;
    let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        match std::mem::replace(&mut *state, Offer::Gone) {
            Offer::Waiting(job) => {
                drop(state);
                return (a, job());
            }
            Offer::Done(Ok(b)) => return (a, b),
            Offer::Done(Err(panic)) => std::panic::resume_unwind(panic),
            running => {
                *state = running;
                state = done.wait(state).unwrap_or_else(PoisonError::into_inner);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn a_free_pool_thread_runs_the_other_part_meanwhile() {
        pool().grow_to(1);
        let (started, wait) = mpsc::channel();
        let (here_saw, there_ran_on) = join(
            // Done only once the other part has started elsewhere.
            move || wait.recv_timeout(Duration::from_secs(60)).is_ok(),
            move || {
                let _ = started.send(());
                thread::current().name().map(str::to_owned)
            },
        );
        assert!(here_saw);
        assert!(there_ran_on.is_some_and(|name| name.starts_with("robolog-worker-")));
    }

    #[test]
    fn the_other_part_runs_here_while_every_pool_thread_is_busy() {
        // The unit tests ask for one pool thread at most: hold it.
        pool().grow_to(1);
        assert_eq!(pool().threads(), 1);
        let (held, wait_held) = mpsc::channel();
        let (release, wait_release) = mpsc::channel::<()>();
        pool().submit(Box::new(move || {
            let _ = held.send(());
            let _ = wait_release.recv_timeout(Duration::from_secs(60));
        }));
        assert!(wait_held.recv_timeout(Duration::from_secs(60)).is_ok());
        let caller = thread::current().id();
        let (a, ran_here) = join(|| 1, move || thread::current().id() == caller);
        let _ = release.send(());
        assert_eq!((a, ran_here), (1, true));
    }

    #[test]
    fn idle_threads_end_and_come_back_when_work_does() {
        // A pool of its own, so that the other tests' use of the process's pool cannot keep
        // its threads busy.
        let pool = WorkerPool::new(Duration::from_millis(50));
        assert_eq!(pool.grow_to(2), 2);
        let (done, finished) = mpsc::channel();
        let sender = done.clone();
        pool.submit(Box::new(move || {
            let _ = sender.send(thread::current().name().map(str::to_owned));
        }));
        let ran_on = finished.recv_timeout(Duration::from_secs(60)).unwrap();
        assert!(ran_on.is_some_and(|name| name.starts_with("robolog-worker-")));
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while pool.threads() > 0 && std::time::Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(pool.threads(), 0);
        // A task queued after every thread has ended starts one.
        pool.submit(Box::new(move || {
            let _ = done.send(thread::current().name().map(str::to_owned));
        }));
        assert_eq!(pool.threads(), 1);
        let ran_on = finished.recv_timeout(Duration::from_secs(60)).unwrap();
        assert!(ran_on.is_some_and(|name| name.starts_with("robolog-worker-")));
    }

    #[test]
    fn warm_buffers_are_kept_while_threads_run_and_freed_by_the_last() {
        let pool = WorkerPool::new(Duration::from_millis(50));
        pool.keep_warm(vec![7; 100]);
        assert!(
            pool.take_warm().is_none(),
            "kept without a thread to free it"
        );
        // A busy thread does not end, however short the idle time.
        assert_eq!(pool.grow_to(1), 1);
        let (release, wait_release) = mpsc::channel::<()>();
        pool.submit(Box::new(move || {
            let _ = wait_release.recv_timeout(Duration::from_secs(60));
        }));
        pool.keep_warm(vec![7; 100]);
        pool.keep_warm(Vec::new());
        assert_eq!(pool.take_warm(), Some(vec![7; 100]));
        assert!(
            pool.take_warm().is_none(),
            "an empty buffer is not worth keeping"
        );
        for _ in 0..BoundedBuffers::KEEP + 2 {
            pool.keep_warm(vec![0; 16]);
        }
        pool.keep_warm(vec![0; BoundedBuffers::KEEP_BYTES]);
        assert_eq!(pool.state.warm().len(), BoundedBuffers::KEEP);
        let _ = release.send(());
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while pool.threads() > 0 && std::time::Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(pool.threads(), 0);
        assert!(pool.take_warm().is_none(), "the last thread frees them");
    }

    #[test]
    #[should_panic(expected = "the other part failed")]
    fn a_panic_in_the_other_part_reaches_the_caller() {
        let fail = |part: u8| -> u8 {
            if part == 2 {
                panic!("the other part failed");
            }
            part
        };
        let _ = join(|| fail(1), move || fail(2));
    }
}
