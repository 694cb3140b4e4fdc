//! How the chunk size affects writing, reading and file size (zstd and lz4), to choose the
//! writer's default. The file sizes are printed once per setting.
//!
//! `cargo bench -p robolog-mcap --bench chunk_size`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    missing_docs
)]

#[path = "dataset.rs"]
mod dataset;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use dataset::{dataset, write_ours};
use robolog_mcap::{Bytes, Compression, McapReader, WriteOptions};

fn benches(c: &mut Criterion) {
    let d = dataset();
    let t0 = 1_700_000_000_000_000_000u64;
    for compression in [Compression::Zstd, Compression::Lz4] {
        let mut write = c.benchmark_group(format!("chunk_size_write_{compression}"));
        write.throughput(Throughput::Bytes(d.payload_bytes));
        let mut files = Vec::new();
        for kib in [256u64, 512, 1024, 4096] {
            let opts = WriteOptions::new()
                .compression(compression)
                .chunk_size(Some(kib * 1024));
            let file = write_ours(&d, opts.clone());
            eprintln!("{compression} chunk {kib} KiB: {} bytes", file.len());
            write.bench_function(format!("{kib}KiB"), |b| {
                b.iter(|| black_box(write_ours(&d, opts.clone())))
            });
            files.push((kib, Bytes::from(file)));
        }
        write.finish();
        let mut read = c.benchmark_group(format!("chunk_size_read_{compression}"));
        read.throughput(Throughput::Bytes(d.payload_bytes));
        for (kib, file) in &files {
            read.bench_function(format!("all/{kib}KiB"), |b| {
                b.iter(|| {
                    let reader = McapReader::open(file.clone()).unwrap();
                    black_box(reader.messages().iter().unwrap().count())
                })
            });
            read.bench_function(format!("imu-1s/{kib}KiB"), |b| {
                b.iter(|| {
                    let reader = McapReader::open(file.clone()).unwrap();
                    let query = reader
                        .messages()
                        .topics(["/imu"])
                        .time_range(t0 + 4_000_000_000..t0 + 5_000_000_000);
                    black_box(query.iter().unwrap().count())
                })
            });
        }
        read.finish();
    }
}

criterion_group! {
    name = chunk_size;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = benches
}
criterion_main!(chunk_size);
