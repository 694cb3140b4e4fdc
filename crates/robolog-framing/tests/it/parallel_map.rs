//! ParallelMap keeps order, bounds the work in flight, and re-raises panics.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use robolog_framing::ParallelMap;

#[test]
fn results_come_back_in_order_despite_uneven_work() {
    let out: Vec<u32> = ParallelMap::new(0..200u32, 4, 8, |i| {
        std::thread::sleep(Duration::from_micros(u64::from((i * 7919) % 13) * 50));
        i * 2
    })
    .collect();
    assert_eq!(out, (0..200).map(|i| i * 2).collect::<Vec<_>>());
}

#[test]
fn never_more_jobs_in_flight_than_allowed() {
    let started = Arc::new(AtomicUsize::new(0));
    let source_started = Arc::clone(&started);
    // Count jobs pulled from the source versus results consumed.
    let pulled = Arc::new(AtomicUsize::new(0));
    let pulled_in_source = Arc::clone(&pulled);
    let source = (0..100usize).inspect(move |_| {
        pulled_in_source.fetch_add(1, Ordering::SeqCst);
    });
    let map = ParallelMap::new(source, 3, 5, move |i| {
        source_started.fetch_add(1, Ordering::SeqCst);
        i
    });
    let mut consumed = 0;
    for i in map {
        assert_eq!(i, consumed);
        consumed += 1;
        let ahead = pulled.load(Ordering::SeqCst) - consumed;
        assert!(ahead <= 5, "{ahead} jobs ahead of the consumer");
    }
    assert_eq!(consumed, 100);
    assert_eq!(started.load(Ordering::SeqCst), 100);
}

#[test]
fn zero_threads_runs_inline() {
    let caller = std::thread::current().id();
    let out: Vec<bool> =
        ParallelMap::new(0..5, 0, 4, move |_| std::thread::current().id() == caller).collect();
    assert_eq!(out, vec![true; 5]);
}

#[test]
fn empty_source() {
    assert_eq!(
        ParallelMap::new(std::iter::empty::<u8>(), 2, 2, |x| x).count(),
        0
    );
}

#[test]
fn dropping_early_does_not_hang() {
    let mut map = ParallelMap::new(0..1_000_000u64, 2, 4, |x| x + 1);
    assert_eq!(map.next(), Some(1));
    drop(map);
}

#[test]
#[should_panic(expected = "job 3 failed")]
fn worker_panics_reach_the_consumer() {
    let map = ParallelMap::new(0..10, 2, 4, |i| {
        if i == 3 {
            panic!("job 3 failed");
        }
        i
    });
    for _ in map {}
}

#[test]
fn the_consumer_runs_queued_jobs_while_the_workers_are_busy() {
    // One worker, two jobs that can only finish together: job 0 waits for job 1 to start. The
    // worker is stuck in one of them, so the other must run on the consumer's thread, as it does
    // when a loaded machine keeps the workers off the CPU.
    let (started, wait) = std::sync::mpsc::sync_channel::<()>(1);
    let wait = std::sync::Mutex::new(wait);
    let results: Vec<bool> = ParallelMap::new(0..2u32, 1, 2, move |job| {
        if job == 1 {
            started.send(()).is_ok()
        } else {
            let wait = wait.lock().unwrap();
            wait.recv_timeout(Duration::from_secs(20)).is_ok()
        }
    })
    .collect();
    assert_eq!(results, [true, true]);
}

#[test]
fn maps_share_the_pool_threads_instead_of_starting_their_own() {
    let consumer = std::thread::current().id();
    let mut workers = std::collections::HashSet::new();
    for _ in 0..50 {
        let ran_on: Vec<(std::thread::ThreadId, Option<String>)> =
            ParallelMap::new(0..8, 2, 4, |_| {
                let me = std::thread::current();
                (me.id(), me.name().map(str::to_owned))
            })
            .collect();
        for (id, name) in ran_on.into_iter().filter(|(id, _)| *id != consumer) {
            assert!(
                name.as_deref()
                    .is_some_and(|n| n.starts_with("robolog-worker-")),
                "a job ran on {name:?}"
            );
            workers.insert(id);
        }
    }
    // A thread per map would make up to 100; the pool has at most as many as the largest map in
    // this file asks for.
    assert!(workers.len() <= 4, "{} worker threads", workers.len());
}
