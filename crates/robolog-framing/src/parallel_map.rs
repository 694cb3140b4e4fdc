//! Ordered parallel work with a bounded number of jobs in flight.
//!
//! Compressed containers decode their upcoming chunks on background threads while the consumer
//! reads the current one. Results come back in submission order, and no more than `in_flight`
//! jobs are queued or running at once, so memory stays bounded by a few chunks.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread;

use crossbeam_channel::{Receiver, Sender};

use crate::worker_pool;

type Outcome<R> = thread::Result<R>;

/// An iterator that maps `work` over `source` on worker threads and yields the results in the
/// order of `source`.
///
/// ```
/// use robolog_framing::ParallelMap;
/// let squares: Vec<u64> = ParallelMap::new(0..100u64, 2, 4, |x| x * x).collect();
/// assert_eq!(squares, (0..100u64).map(|x| x * x).collect::<Vec<_>>());
/// ```
///
/// With `threads == 0` the work runs on the consumer's thread, one job at a time. A panic in
/// `work` is re-raised on the consumer's thread when its result is due.
///
/// The workers are threads of a process-wide pool, started when a map asks for them and kept
/// for the next map while work keeps coming (a thread without a task for two seconds ends; at
/// most [`MAX_POOL_THREADS`](crate::MAX_POOL_THREADS)); `threads` is how many of them work for
/// this map at once. `work` must not wait for another job of a
/// map to finish: the pool's threads are shared.
pub struct ParallelMap<I: Iterator, R> {
    source: I,
    mode: Mode<I::Item, R>,
}

enum Mode<J, R> {
    Inline(Arc<dyn Fn(J) -> R + Send + Sync>),
    Pool(Pool<J, R>),
}

/// What a map's pool tasks share with it.
struct Shared<J, R> {
    queued: Receiver<(u64, J)>,
    results: Sender<(u64, Outcome<R>)>,
    work: Arc<dyn Fn(J) -> R + Send + Sync>,
    /// Pool tasks working through `queued` now.
    runners: AtomicUsize,
    /// The most runners at once: the `threads` asked for, as far as the pool has them.
    max_runners: usize,
}

struct Pool<J, R> {
    jobs: Option<Sender<(u64, J)>>,
    shared: Arc<Shared<J, R>>,
    results: Receiver<(u64, Outcome<R>)>,
    /// Results that arrived ahead of their turn; slot 0 is sequence number `next_out`.
    pending: VecDeque<Option<Outcome<R>>>,
    next_out: u64,
    next_in: u64,
    in_flight: usize,
    source_done: bool,
}

impl<I: Iterator, R> std::fmt::Debug for ParallelMap<I, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = f.debug_struct("ParallelMap");
        if let Mode::Pool(pool) = &self.mode {
            s.field("in_flight", &pool.in_flight)
                .field("next_out", &pool.next_out);
        }
        s.finish_non_exhaustive()
    }
}

/// The number of worker threads worth using by default: the machine's available parallelism,
/// as it was the first time this was asked in the process.
///
/// Asked once because the answer is expensive: on Linux the standard library reads the cgroup
/// CPU quota files each time (some twenty system calls), and every reader's default
/// options ask. A program that changes its CPU affinity or quota later and wants the readers to
/// follow sets their thread counts itself.
pub fn default_threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| thread::available_parallelism().map_or(1, |n| n.get()))
}

impl<I, R> ParallelMap<I, R>
where
    I: Iterator,
    I::Item: Send + 'static,
    R: Send + 'static,
{
    /// Puts up to `threads` pool workers on `source`, keeping at most `in_flight` (at least 1)
    /// jobs ahead of the consumer.
    pub fn new<F>(source: I, threads: usize, in_flight: usize, work: F) -> Self
    where
        F: Fn(I::Item) -> R + Send + Sync + 'static,
    {
        let work: Arc<dyn Fn(I::Item) -> R + Send + Sync> = Arc::new(work);
        if threads == 0 {
            return Self {
                source,
                mode: Mode::Inline(work),
            };
        }
        // With no pool thread at all (the system refused), the consumer runs every job itself.
        let max_runners = worker_pool::pool().grow_to(threads).min(threads);
        let (job_tx, job_rx) = crossbeam_channel::unbounded::<(u64, I::Item)>();
        let (result_tx, result_rx) = crossbeam_channel::unbounded();
        let mut map = Self {
            source,
            mode: Mode::Pool(Pool {
                jobs: Some(job_tx),
                shared: Arc::new(Shared {
                    queued: job_rx,
                    results: result_tx,
                    work,
                    runners: AtomicUsize::new(0),
                    max_runners,
                }),
                results: result_rx,
                pending: VecDeque::new(),
                next_out: 0,
                next_in: 0,
                in_flight: in_flight.max(1),
                source_done: false,
            }),
        };
        map.refill();
        map
    }

    fn refill(&mut self) {
        let Mode::Pool(pool) = &mut self.mode else {
            return;
        };
        while !pool.source_done && pool.next_in - pool.next_out < pool.in_flight as u64 {
            match self.source.next() {
                Some(job) => {
                    let sent = pool
                        .jobs
                        .as_ref()
                        .is_some_and(|jobs| jobs.send((pool.next_in, job)).is_ok());
                    if !sent {
                        pool.source_done = true;
                        break;
                    }
                    pool.next_in += 1;
                    pool.pending.push_back(None);
                }
                None => {
                    pool.source_done = true;
                    pool.jobs = None;
                }
            }
        }
        // Every runner is busy with a job (an idle one leaves the pool), so a queued job gets
        // a new runner while the map has fewer than it may.
        while !pool.shared.queued.is_empty() && claim_runner(&pool.shared) {
            let shared = Arc::clone(&pool.shared);
            worker_pool::pool().submit(Box::new(move || drain(&shared)));
        }
    }
}

/// Counts one more runner for a map, unless it has as many as it may.
fn claim_runner<J, R>(shared: &Shared<J, R>) -> bool {
    shared
        .runners
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < shared.max_runners).then_some(n + 1)
        })
        .is_ok()
}

thread_local! {
    /// Set while this thread runs a job of a map that has two or more pool threads working.
    static SHARED_WORK: Cell<bool> = const { Cell::new(false) };
}

/// True while this thread runs a job of a [`ParallelMap`] that has two or more pool threads
/// working for it: a job may then hand part of its work to another pool thread (see
/// [`Decompressor::decompress_shared`](crate::Decompressor::decompress_shared)), since the map
/// asked for more than one core.
pub(crate) fn in_shared_work() -> bool {
    SHARED_WORK.with(Cell::get)
}

/// A pool task: runs a map's queued jobs until the queue is empty or the map is gone.
fn drain<J, R>(shared: &Shared<J, R>) {
    loop {
        while let Ok((seq, job)) = shared.queued.try_recv() {
            let outcome = run_shared(shared, job);
            if shared.results.send((seq, outcome)).is_err() {
                // The consumer dropped the map: the rest is not wanted.
                shared.runners.fetch_sub(1, Ordering::AcqRel);
                return;
            }
        }
        shared.runners.fetch_sub(1, Ordering::AcqRel);
        // A job queued between the empty queue and the line above found this runner still
        // counted, and no new one was started for it: take it after all.
        if shared.queued.is_empty() || !claim_runner(shared) {
            return;
        }
    }
}

/// Runs one job, catching a panic so that it is re-raised on the consumer's thread in order.
fn run<J, R>(work: &Arc<dyn Fn(J) -> R + Send + Sync>, job: J) -> Outcome<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(job)))
}

/// Runs one job of a map on pool threads (on one of them, or on the consumer's thread while it
/// waits), saying whether the map has two or more threads working.
fn run_shared<J, R>(shared: &Shared<J, R>, job: J) -> Outcome<R> {
    let before = SHARED_WORK.with(|flag| flag.replace(shared.max_runners >= 2));
    let outcome = run(&shared.work, job);
    SHARED_WORK.with(|flag| flag.set(before));
    outcome
}

impl<I, R> Iterator for ParallelMap<I, R>
where
    I: Iterator,
    I::Item: Send + 'static,
    R: Send + 'static,
{
    type Item = R;

    fn next(&mut self) -> Option<R> {
        let outcome = match &mut self.mode {
            Mode::Inline(work) => return self.source.next().map(|job| work(job)),
            Mode::Pool(pool) => {
                if pool.next_out == pool.next_in {
                    return None;
                }
                loop {
                    if let Some(slot) = pool.pending.front_mut()
                        && let Some(outcome) = slot.take()
                    {
                        pool.pending.pop_front();
                        pool.next_out += 1;
                        break outcome;
                    }
                    let (seq, outcome) = match pool.results.try_recv() {
                        Ok(answer) => answer,
                        Err(_) => match pool.shared.queued.try_recv() {
                            Ok((seq, job)) => (seq, run_shared(&pool.shared, job)),
                            // Every job due is with a runner: wait for an answer.
                            Err(_) => pool.results.recv().ok()?,
                        },
                    };
                    let index = usize::try_from(seq - pool.next_out).ok()?;
                    if let Some(slot) = pool.pending.get_mut(index) {
                        *slot = Some(outcome);
                    }
                }
            }
        };
        self.refill();
        match outcome {
            Ok(result) => Some(result),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_threads_is_the_available_parallelism() {
        let cores = thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(default_threads(), cores);
        assert_eq!(default_threads(), cores);
    }
}
