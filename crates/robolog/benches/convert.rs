//! Throughput of bag → MCAP conversion through the facade, for each MCAP chunk compression.
//!
//! The input is an uncompressed bag held in memory: 4 s of an IMU at 2 kHz (200 B), a camera at
//! 40 Hz (64 KiB) and a lidar at 100 Hz (16 KiB), half-compressible bytes, about 19 MB of
//! payload. Throughput is payload bytes per second.
//!
//! The output goes to `io::sink()`, so that the numbers measure the conversion (reading the bag,
//! building and compressing chunks, indexes, CRCs) rather than the growth of a buffer;
//! `bag_to_mcap_in_memory` shows what writing into a `Vec` adds (reallocation and page faults).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Cursor;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use robolog::mcap::{Compression, WriteOptions};
use robolog::{ConvertOptions, Log, Output, WriterOptions, convert, create_writer, open_bytes};

fn recording() -> (Log, u64) {
    let mut writer = robolog::rosbag::Writer::new(Cursor::new(Vec::new())).unwrap();
    let md5 = "0123456789abcdef0123456789abcdef";
    let conns: Vec<u32> = [
        ("/imu", 500_000u64),
        ("/camera", 25_000_000),
        ("/lidar", 10_000_000),
    ]
    .iter()
    .map(|(topic, _)| {
        writer
            .add_connection(topic, "bench_msgs/Blob", md5, "uint8[] data\n")
            .unwrap()
    })
    .collect();
    let specs = [
        (0usize, 500_000u64, 200usize),
        (1, 25_000_000, 65_536),
        (2, 10_000_000, 16_384),
    ];
    let mut events = Vec::new();
    for (conn, period, size) in specs {
        let mut t = 0;
        while t < 4_000_000_000u64 {
            events.push((t, conn, size));
            t += period;
        }
    }
    events.sort_unstable();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut payload = 0u64;
    let mut data = Vec::new();
    for (t, conn, size) in events {
        data.clear();
        for i in 0..size {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            data.push(if i % 2 == 0 {
                state as u8 & 0x0F
            } else {
                (i / 64) as u8
            });
        }
        payload += size as u64;
        writer
            .write(conns[conn], 1_700_000_000_000_000_000 + t, &data)
            .unwrap();
    }
    let bag = writer.finish().unwrap().into_inner();
    (open_bytes(bag).unwrap(), payload)
}

fn bag_to_mcap(c: &mut Criterion) {
    let (bag, payload) = recording();
    let mut group = c.benchmark_group("bag_to_mcap");
    group.throughput(Throughput::Bytes(payload));
    group.sample_size(10);
    for (name, compression) in [
        ("none", Compression::None),
        ("lz4", Compression::Lz4),
        ("zstd", Compression::Zstd),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let options = WriteOptions::new().compression(compression);
                let output = Output::stream(std::io::sink());
                let mut writer = create_writer(output, WriterOptions::Mcap(options)).unwrap();
                let report = convert(&bag, &mut *writer, ConvertOptions::new()).unwrap();
                let finished = writer.finish().unwrap();
                (report.messages, finished.bytes)
            });
        });
    }
    group.finish();
    let mut group = c.benchmark_group("bag_to_mcap_in_memory");
    group.throughput(Throughput::Bytes(payload));
    group.sample_size(10);
    group.bench_function("none", |b| {
        b.iter(|| {
            let options = WriteOptions::new().compression(Compression::None);
            let mut writer = create_writer(Output::memory(), WriterOptions::Mcap(options)).unwrap();
            convert(&bag, &mut *writer, ConvertOptions::new()).unwrap();
            writer.finish().unwrap().bytes
        });
    });
    group.finish();
}

criterion_group!(benches, bag_to_mcap);
criterion_main!(benches);
