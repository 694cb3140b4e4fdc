//! Full-read throughput of robolog-rosbag against the `rosbag` crate (crates.io) on the same
//! files, in one run. The synthetic bags (about 6 MB of messages: IMU-sized, laser-scan-sized
//! and small image-sized messages on 3 connections) are written with our writer at start-up, one
//! per compression; testdata's real bz2 bag is read too.
//!
//! Throughput is in bytes of uncompressed chunk data per second.
//!
//! ```text
//! cargo bench -p robolog-rosbag --bench read
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::hint::black_box;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use robolog_rosbag::{Bag, ChunkCompression, Input, Order, WriteOptions, Writer};

fn synthetic(compression: ChunkCompression) -> Vec<u8> {
    let options = WriteOptions::new().compression(compression);
    let mut writer = Writer::with_options(Cursor::new(Vec::new()), options).unwrap();
    let imu = writer
        .add_connection(
            "/imu",
            "sensor_msgs/Imu",
            "6a62c6daae103f4ff57a132d6f95cec2",
            "",
        )
        .unwrap();
    let scan = writer
        .add_connection(
            "/scan",
            "sensor_msgs/LaserScan",
            "90c7ef2dc6895d81024acba2ac42f369",
            "",
        )
        .unwrap();
    let image = writer
        .add_connection(
            "/image",
            "sensor_msgs/Image",
            "060021388200f6f0f447d0fcd9c64743",
            "",
        )
        .unwrap();
    let mut state = 0x9E37_79B9u32;
    let mut noise = |n: usize, spread: u32| -> Vec<u8> {
        (0..n)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                // Smooth-ish sensor data: compressible, but not trivially.
                ((i as u32 / 7) % 128 + state % (spread * 8)) as u8
            })
            .collect()
    };
    let mut t = 1_600_000_000_000_000_000u64;
    for i in 0..4000u64 {
        writer.write(imu, t, &noise(320, 4)).unwrap();
        if i % 4 == 0 {
            writer.write(scan, t + 1, &noise(4400, 16)).unwrap();
        }
        if i % 40 == 0 {
            writer.write(image, t + 2, &noise(60_000, 8)).unwrap();
        }
        t += 2_500_000;
    }
    writer.finish().unwrap().into_inner()
}

fn uncompressed_size(bag: &Bag) -> u64 {
    bag.chunk_headers()
        .map(|h| h.map_or(0, |h| h.uncompressed_size))
        .sum()
}

/// The file at `path`, memory-mapped as the `rosbag` crate maps it.
fn mapped(path: &Path) -> Input {
    // SAFETY: the benchmark writes its files before it measures and never touches them while
    // they are read.
    #[allow(unsafe_code)]
    unsafe {
        Input::map(path).unwrap()
    }
}

fn robolog_read(path: &Path, order: Order, threads: Option<usize>) -> usize {
    robolog_read_bag(&Bag::open(mapped(path)).unwrap(), order, threads)
}

fn robolog_read_bag(bag: &Bag, order: Order, threads: Option<usize>) -> usize {
    let mut query = bag.messages().order(order);
    if let Some(threads) = threads {
        query = query.threads(threads);
    }
    let mut total = 0;
    for m in query {
        total += m.unwrap().data.len();
    }
    total
}

fn rosbag_crate_read(path: &Path) -> usize {
    rosbag_crate_messages(&rosbag::RosBag::new(path).unwrap())
}

fn rosbag_crate_messages(bag: &rosbag::RosBag) -> usize {
    let mut total = 0;
    for record in bag.chunk_records() {
        if let rosbag::ChunkRecord::Chunk(chunk) = record.unwrap() {
            for message in chunk.messages() {
                if let rosbag::MessageRecord::MessageData(m) = message.unwrap() {
                    total += m.data.len();
                }
            }
        }
    }
    total
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    // ROBOLOG_BENCH_DIR keeps the synthetic bags (for profiling them with examples/read_all.rs).
    let out_dir = std::env::var_os("ROBOLOG_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| dir.path().to_path_buf());
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for compression in [
        ChunkCompression::None,
        ChunkCompression::Lz4,
        ChunkCompression::Bz2,
    ] {
        let path = out_dir.join(format!("synthetic-{compression}.bag"));
        std::fs::write(&path, synthetic(compression)).unwrap();
        files.push((format!("synthetic-{compression}"), path));
    }
    files.push((
        "example-bz2".into(),
        robolog_testkit::testdata::path("bags/upstream/rosbag.js/example-bz2.bag"),
    ));

    let mut group = c.benchmark_group("full_read");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_secs(1));
    for (name, path) in &files {
        let bag = Bag::from_file(path).unwrap();
        group.throughput(Throughput::Bytes(uncompressed_size(&bag)));
        // Both readers must see the same bytes.
        assert_eq!(
            robolog_read(path, Order::File, None),
            rosbag_crate_read(path)
        );
        group.bench_with_input(BenchmarkId::new("rosbag-crate", name), path, |b, p| {
            b.iter(|| black_box(rosbag_crate_read(p)))
        });
        group.bench_with_input(
            BenchmarkId::new("robolog-time-order", name),
            path,
            |b, p| b.iter(|| black_box(robolog_read(p, Order::LogTime, None))),
        );
        group.bench_with_input(
            BenchmarkId::new("robolog-file-order", name),
            path,
            |b, p| b.iter(|| black_box(robolog_read(p, Order::File, None))),
        );
        // Read by position (`Bag::from_file`) instead of mapped: each chunk is copied out of
        // the page cache.
        group.bench_with_input(
            BenchmarkId::new("robolog-pread-time-order", name),
            path,
            |b, p| {
                b.iter(|| {
                    black_box(robolog_read_bag(
                        &Bag::from_file(p).unwrap(),
                        Order::LogTime,
                        None,
                    ))
                })
            },
        );
        if name.contains("bz2") || name.contains("lz4") {
            // Scaling of the parallel decoder: 0 = on the calling thread.
            for threads in [0, 1, 2] {
                group.bench_with_input(
                    BenchmarkId::new(format!("robolog-threads-{threads}"), name),
                    path,
                    |b, p| b.iter(|| black_box(robolog_read(p, Order::LogTime, Some(threads)))),
                );
            }
        }
    }
    group.finish();

    // The same reads over a bag opened (and memory-mapped) once: what is left when the page
    // faults of mapping the file afresh, which both crates pay alike, are taken out.
    let mut group = c.benchmark_group("read_opened");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_secs(1));
    for (name, path) in files.iter().filter(|(n, _)| !n.contains("bz2")) {
        let bag = Bag::open(mapped(path)).unwrap();
        let theirs = rosbag::RosBag::new(path).unwrap();
        group.throughput(Throughput::Bytes(uncompressed_size(&bag)));
        group.bench_function(BenchmarkId::new("rosbag-crate", name), |b| {
            b.iter(|| black_box(rosbag_crate_messages(&theirs)))
        });
        for (label, order) in [("time-order", Order::LogTime), ("file-order", Order::File)] {
            group.bench_function(BenchmarkId::new(format!("robolog-{label}"), name), |b| {
                b.iter(|| {
                    let mut total = 0;
                    for m in bag.messages().order(order) {
                        total += m.unwrap().data.len();
                    }
                    black_box(total)
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
