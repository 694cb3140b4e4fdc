//! A map finishes even while every pool thread is busy with another map's jobs. Alone in its own
//! test binary, so that the pool has exactly the threads this test asks for.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Duration;

use robolog_framing::ParallelMap;

#[test]
fn a_map_finishes_on_its_consumer_while_the_pool_is_busy_elsewhere() {
    let (started, wait_started) = mpsc::channel::<()>();
    let (release, wait_release) = mpsc::channel::<()>();
    let started = Mutex::new(started);
    let wait_release = Mutex::new(wait_release);
    // Two jobs that hold both pool threads until released. Nobody consumes this map yet, so only
    // pool threads run its jobs.
    let busy = ParallelMap::new(0..2u32, 2, 2, move |job| {
        started.lock().unwrap().send(()).unwrap();
        let released = wait_release
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(60));
        (job, released.is_ok())
    });
    for _ in 0..2 {
        wait_started
            .recv_timeout(Duration::from_secs(60))
            .expect("both pool threads took a job");
    }

    let consumer = std::thread::current().id();
    let second: Vec<(u32, bool)> = ParallelMap::new(0..10u32, 2, 4, move |i| {
        (i * 3, std::thread::current().id() == consumer)
    })
    .collect();
    assert_eq!(
        second,
        (0..10).map(|i| (i * 3, true)).collect::<Vec<_>>(),
        "every job of the second map ran on its consumer"
    );

    // The first job holds the receiver's lock while it waits, so each release frees one job.
    release.send(()).unwrap();
    release.send(()).unwrap();
    assert_eq!(busy.collect::<Vec<_>>(), [(0, true), (1, true)]);
}
