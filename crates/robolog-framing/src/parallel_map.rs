//! Ordered parallel work with a bounded number of jobs in flight.
//!
//! Compressed containers decode their upcoming chunks on background threads while the consumer
//! reads the current one. Results come back in submission order, and no more than `in_flight`
//! jobs are queued or running at once, so memory stays bounded by a few chunks.

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};
use std::thread;

use crossbeam_channel::{Receiver, Sender};

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
pub struct ParallelMap<I: Iterator, R> {
    source: I,
    mode: Mode<I::Item, R>,
}

enum Mode<J, R> {
    Inline(Arc<dyn Fn(J) -> R + Send + Sync>),
    Pool(Pool<J, R>),
}

struct Pool<J, R> {
    jobs: Option<Sender<(u64, J)>>,
    /// The consumer's own end of the job queue: while it waits for a result it runs queued jobs
    /// itself, so that workers that the scheduler keeps off the CPU (a loaded machine) never
    /// leave it idle with work pending.
    queued: Receiver<(u64, J)>,
    work: Arc<dyn Fn(J) -> R + Send + Sync>,
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
/// CPU quota files each time (about 20 system calls, 30 µs measured), and every reader's default
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
    /// Starts `threads` workers, keeping at most `in_flight` (at least 1) jobs ahead of the
    /// consumer.
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
        let (job_tx, job_rx) = crossbeam_channel::unbounded::<(u64, I::Item)>();
        let (result_tx, result_rx) = crossbeam_channel::unbounded();
        for _ in 0..threads {
            let jobs = job_rx.clone();
            let results = result_tx.clone();
            let work = Arc::clone(&work);
            thread::spawn(move || {
                for (seq, job) in jobs {
                    let outcome = run(&work, job);
                    if results.send((seq, outcome)).is_err() {
                        break;
                    }
                }
            });
        }
        let mut map = Self {
            source,
            mode: Mode::Pool(Pool {
                jobs: Some(job_tx),
                queued: job_rx,
                work,
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
    }
}

/// Runs one job, catching a panic so that it is re-raised on the consumer's thread in order.
fn run<J, R>(work: &Arc<dyn Fn(J) -> R + Send + Sync>, job: J) -> Outcome<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(job)))
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
                        Err(_) => match pool.queued.try_recv() {
                            Ok((seq, job)) => (seq, run(&pool.work, job)),
                            // Every worker exited without answering: only possible if they were
                            // killed.
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
