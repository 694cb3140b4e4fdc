//! One indexed read of an existing MCAP file, repeated, for profilers (perf, callgrind) that
//! need a plain process: ours or the `mcap` crate's, in log-time, reverse or file order.
//!
//! `cargo bench -p robolog-mcap --bench read_order -- --bench FILE [ours|peer]
//! [time|reverse|file] [THREADS] [REPS] [TOPIC FROM TO]`: with a topic, a query for it between
//! the fractions FROM and TO of the file's time span (`/odom 0.5 0.525`, say). `CHUNK_CRCS=all`
//! or `=off` changes which chunk CRCs our side checks.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    missing_docs
)]

#[path = "dataset.rs"]
mod dataset;

use std::hint::black_box;
use std::time::Instant;

use dataset::read_theirs_indexed;
use mcap::sans_io::indexed_reader::{IndexedReaderOptions, ReadOrder};
use robolog_mcap::{McapReader, Order, ReadOptions};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    // `cargo test --benches` runs bench binaries without arguments: nothing to measure then.
    let Some(path) = args.first() else { return };
    let side = args.get(1).map_or("ours", String::as_str);
    let order = args.get(2).map_or("time", String::as_str);
    let threads: usize = args.get(3).map_or(2, |t| t.parse().unwrap());
    let reps: usize = args.get(4).map_or(5, |r| r.parse().unwrap());
    let topic = args.get(5).cloned();
    let fraction = |i: usize| args.get(i).map_or(0.0, |f| f.parse::<f64>().unwrap());
    let (from, to) = (fraction(6), fraction(7));
    for _ in 0..reps {
        let t = Instant::now();
        // Mapped afresh each time, as a program opening the file would.
        // SAFETY: nothing writes the benchmark's file while it is read.
        #[allow(unsafe_code)]
        let file = unsafe { robolog_mcap::Input::map(path) }
            .unwrap()
            .read_all()
            .unwrap();
        // The query's time range, from the statistics (read outside the timing would be
        // fairer, but both sides pay the same for it).
        let range = topic.as_ref().map(|_| {
            let r = McapReader::open(file.clone()).unwrap();
            let stats = r.summary().statistics.clone().unwrap();
            let span = (stats.message_end_time - stats.message_start_time) as f64;
            let at = |f: f64| stats.message_start_time + (span * f) as u64;
            (at(from), at(to))
        });
        let (n, bytes) = if side == "peer" {
            let o = match order {
                "time" => ReadOrder::LogTime,
                "reverse" => ReadOrder::ReverseLogTime,
                _ => ReadOrder::File,
            };
            let mut options = IndexedReaderOptions::new().with_order(o);
            if let (Some(topic), Some((start, end))) = (&topic, range) {
                options = options
                    .include_topics([topic.clone()])
                    .starting_at(start)
                    .ending_before(end);
            }
            (0, read_theirs_indexed(&file, options))
        } else {
            let o = match order {
                "time" => Order::LogTime,
                "reverse" => Order::ReverseLogTime,
                _ => Order::File,
            };
            let opts = ReadOptions::default().threads(threads);
            // What the chunk CRCs cost: CHUNK_CRCS=all checks uncompressed chunks too, =off
            // checks none; unset, the defaults.
            let opts = match std::env::var("CHUNK_CRCS").as_deref() {
                Ok("all") => opts.verify_uncompressed_chunks(true),
                Ok("off") => opts.verify_chunk_crcs(false),
                _ => opts,
            };
            let r = McapReader::open_with(file.clone(), opts).unwrap();
            let (mut n, mut bytes) = (0u64, 0u64);
            let mut query = r.messages().order(o);
            if let (Some(topic), Some((start, end))) = (&topic, range) {
                query = query.topics([topic.as_str()]).time_range(start..end);
            }
            let mut messages = query.iter().unwrap();
            while let Some(m) = messages.next_ref() {
                let m = m.unwrap();
                n += 1;
                bytes += m.data.len() as u64;
            }
            (n, bytes)
        };
        black_box((n, bytes));
        println!(
            "{side} {order}: {n} messages, {bytes} bytes, {:.1} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
    }
}
