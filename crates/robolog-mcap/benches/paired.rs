//! Paired runs against the `mcap` crate: each operation runs ours and theirs alternately, many
//! times, and reports the ratio of the median times. On a shared machine, whose load drifts
//! between criterion's benchmark functions, alternating keeps both sides under the same load.
//! The criterion numbers are in `compare.rs`.
//!
//! `cargo bench -p robolog-mcap --bench paired`

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

use dataset::{dataset, read_theirs_indexed, write_ours, write_theirs};
use mcap::sans_io::indexed_reader::{IndexedReaderOptions, ReadOrder};
use robolog_mcap::{Bytes, Compression, LinearReader, McapReader, WriteOptions};

const ROUNDS: usize = 15;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs both sides alternately and prints median times, throughput and the ratio.
fn pair(name: &str, bytes: u64, mut ours: impl FnMut(), mut theirs: impl FnMut()) {
    ours();
    theirs();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let t = Instant::now();
        ours();
        a.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        theirs();
        b.push(t.elapsed().as_secs_f64());
    }
    let (a, b) = (median(a), median(b));
    let mib = |s: f64| bytes as f64 / s / (1 << 20) as f64;
    println!(
        "{name:<24} robolog {:>8.2} ms {:>8.0} MiB/s | mcap {:>8.2} ms {:>8.0} MiB/s | ratio {:.2}x",
        a * 1e3,
        mib(a),
        b * 1e3,
        mib(b),
        b / a
    );
}

fn main() {
    // `cargo test --benches` runs bench binaries without `--bench`: nothing to measure then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let d = dataset();
    let t0 = 1_700_000_000_000_000_000u64;
    let opts = |c: Compression| WriteOptions::new().compression(c).chunk_size(Some(1 << 20));
    for (name, ours_c, theirs_c) in [
        ("zstd", Compression::Zstd, Some(mcap::Compression::Zstd)),
        ("lz4", Compression::Lz4, Some(mcap::Compression::Lz4)),
    ] {
        let file = write_ours(&d, opts(ours_c));
        let bytes = Bytes::from(file.clone());
        pair(
            &format!("read_linear/{name}"),
            d.payload_bytes,
            || {
                let n: usize = LinearReader::new(bytes.clone())
                    .into_messages()
                    .map(|m| m.unwrap().data.len())
                    .sum();
                black_box(n);
            },
            || {
                let n: usize = mcap::MessageStream::new(&file)
                    .unwrap()
                    .map(|m| m.unwrap().data.len())
                    .sum();
                black_box(n);
            },
        );
        pair(
            &format!("read_indexed/{name}"),
            d.payload_bytes,
            || {
                let r = McapReader::open(bytes.clone()).unwrap();
                let n: usize = r
                    .messages()
                    .iter()
                    .unwrap()
                    .map(|m| m.unwrap().data.len())
                    .sum();
                black_box(n);
            },
            || {
                black_box(read_theirs_indexed(
                    &file,
                    IndexedReaderOptions::new().with_order(ReadOrder::LogTime),
                ));
            },
        );
        let (start, end) = (t0 + 4_000_000_000, t0 + 5_000_000_000);
        let want: u64 = d
            .messages
            .iter()
            .filter(|(c, t, _)| *c == 0 && *t >= start && *t < end)
            .map(|(_, _, r)| r.len() as u64)
            .sum();
        pair(
            &format!("time_range/{name}"),
            want,
            || {
                let r = McapReader::open(bytes.clone()).unwrap();
                let q = r.messages().topics(["/imu"]).time_range(start..end);
                let n: usize = q.iter().unwrap().map(|m| m.unwrap().data.len()).sum();
                assert_eq!(n as u64, want);
            },
            || {
                let o = IndexedReaderOptions::new()
                    .include_topics(["/imu"])
                    .starting_at(start)
                    .ending_before(end);
                assert_eq!(read_theirs_indexed(&file, o), want);
            },
        );
        let _ = theirs_c;
    }
    for (name, ours_c, theirs_c) in [
        ("none", Compression::None, None),
        ("lz4", Compression::Lz4, Some(mcap::Compression::Lz4)),
        ("zstd", Compression::Zstd, Some(mcap::Compression::Zstd)),
    ] {
        pair(
            &format!("write/{name}"),
            d.payload_bytes,
            || {
                black_box(write_ours(&d, opts(ours_c)));
            },
            || {
                black_box(write_theirs(&d, theirs_c));
            },
        );
    }
}
