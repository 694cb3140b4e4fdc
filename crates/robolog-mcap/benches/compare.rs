//! robolog-mcap against the `mcap` crate (crates.io), on the same files in the same run:
//! linear read, indexed read in log-time order, a time-range query on one topic, and writing
//! with each compression. Throughput is counted in message payload bytes.
//!
//! `cargo bench -p robolog-mcap --bench compare`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcap::sans_io::indexed_reader::{IndexedReaderOptions, ReadOrder};
use robolog_mcap::{Bytes, Compression, LinearReader, McapReader, ReadOptions, WriteOptions};

/// Our reader's configurations: the default (CRCs checked, one decoding thread per core), on the
/// reading thread only, and without chunk CRC checks (what the `mcap` crate's indexed reader
/// does).
fn configurations() -> [(&'static str, ReadOptions); 3] {
    [
        ("robolog", ReadOptions::default()),
        ("robolog-1thread", ReadOptions::default().threads(0)),
        ("robolog-nocrc", ReadOptions::default().crc_checks(false)),
    ]
}

#[path = "dataset.rs"]
mod dataset;

use dataset::{dataset, read_theirs_indexed, write_ours, write_theirs};

/// Our writer with the `mcap` crate's chunk size (1 MiB), so that both write the same layout.
fn same_chunks(compression: Compression) -> WriteOptions {
    WriteOptions::new()
        .compression(compression)
        .chunk_size(Some(1 << 20))
}

fn benches(c: &mut Criterion) {
    let d = dataset();
    let files: Vec<(&str, Vec<u8>)> = [("zstd", Compression::Zstd), ("lz4", Compression::Lz4)]
        .into_iter()
        .map(|(name, compression)| (name, write_ours(&d, same_chunks(compression))))
        .collect();
    let t0 = 1_700_000_000_000_000_000u64;

    let mut g = c.benchmark_group("read_linear");
    g.throughput(Throughput::Bytes(d.payload_bytes));
    for (name, file) in &files {
        let bytes = Bytes::from(file.clone());
        g.bench_function(format!("robolog/{name}"), |b| {
            b.iter(|| {
                let total: u64 = LinearReader::new(bytes.clone())
                    .into_messages()
                    .map(|m| m.unwrap().data.len() as u64)
                    .sum();
                assert_eq!(total, d.payload_bytes);
            })
        });
        g.bench_function(format!("mcap/{name}"), |b| {
            b.iter(|| {
                let total: u64 = mcap::MessageStream::new(file)
                    .unwrap()
                    .map(|m| m.unwrap().data.len() as u64)
                    .sum();
                assert_eq!(total, d.payload_bytes);
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("read_indexed");
    g.throughput(Throughput::Bytes(d.payload_bytes));
    for (name, file) in &files {
        let bytes = Bytes::from(file.clone());
        for (label, opts) in configurations() {
            g.bench_function(format!("{label}/{name}"), |b| {
                b.iter(|| {
                    let reader = McapReader::open_with(bytes.clone(), opts.clone()).unwrap();
                    let total: u64 = reader
                        .messages()
                        .iter()
                        .unwrap()
                        .map(|m| m.unwrap().data.len() as u64)
                        .sum();
                    assert_eq!(total, d.payload_bytes);
                })
            });
        }
        g.bench_function(format!("mcap/{name}"), |b| {
            b.iter(|| {
                let total = read_theirs_indexed(
                    file,
                    IndexedReaderOptions::new().with_order(ReadOrder::LogTime),
                );
                assert_eq!(total, d.payload_bytes);
            })
        });
    }
    g.finish();

    // One topic over one second of the ten.
    let (start, end) = (t0 + 4_000_000_000, t0 + 5_000_000_000);
    let want: u64 = d
        .messages
        .iter()
        .filter(|(c, t, _)| *c == 0 && *t >= start && *t < end)
        .map(|(_, _, r)| r.len() as u64)
        .sum();
    let mut g = c.benchmark_group("time_range");
    g.throughput(Throughput::Bytes(want));
    for (name, file) in &files {
        let bytes = Bytes::from(file.clone());
        for (label, opts) in configurations() {
            g.bench_function(format!("{label}/{name}"), |b| {
                b.iter(|| {
                    let reader = McapReader::open_with(bytes.clone(), opts.clone()).unwrap();
                    let total: u64 = reader
                        .messages()
                        .topics(["/imu"])
                        .time_range(start..end)
                        .iter()
                        .unwrap()
                        .map(|m| m.unwrap().data.len() as u64)
                        .sum();
                    assert_eq!(total, want);
                })
            });
        }
        g.bench_function(format!("mcap/{name}"), |b| {
            b.iter(|| {
                let options = IndexedReaderOptions::new()
                    .include_topics(["/imu"])
                    .starting_at(start)
                    .ending_before(end);
                assert_eq!(read_theirs_indexed(file, options), want);
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("write");
    g.throughput(Throughput::Bytes(d.payload_bytes));
    for (name, ours, theirs) in [
        ("none", Compression::None, None),
        ("lz4", Compression::Lz4, Some(mcap::Compression::Lz4)),
        ("zstd", Compression::Zstd, Some(mcap::Compression::Zstd)),
    ] {
        g.bench_function(format!("robolog/{name}"), |b| {
            b.iter(|| black_box(write_ours(&d, same_chunks(ours))))
        });
        g.bench_function(format!("mcap/{name}"), |b| {
            b.iter(|| black_box(write_theirs(&d, theirs)))
        });
    }
    g.finish();
}

criterion_group! {
    name = compare;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    targets = benches
}
criterion_main!(compare);
