//! Reading a bag in file order without its index: the in-memory scan (opening an unindexed bag)
//! and the stream reader over `Read`, the two front ends of the record-stream rules. The bag
//! (about 6 MB of messages on 3 connections, one uncompressed and one LZ4) is written at
//! start-up and its `index_pos` zeroed, so that opening it scans every record.
//!
//! Throughput is in bytes of the bag file per second.
//!
//! ```text
//! cargo bench -p robolog-rosbag --bench linear
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::hint::black_box;
use std::io::Cursor;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use robolog_rosbag::{Bag, Bytes, ChunkCompression, Order, StreamReader, WriteOptions, Writer};

fn unindexed(compression: ChunkCompression) -> Vec<u8> {
    let options = WriteOptions::new().compression(compression);
    let mut writer = Writer::with_options(Cursor::new(Vec::new()), options).unwrap();
    let topics = [
        ("/imu", 320usize, 1u64),
        ("/scan", 4400, 4),
        ("/image", 60_000, 40),
    ];
    let conns: Vec<u32> = topics
        .iter()
        .map(|(topic, _, _)| {
            writer
                .add_connection(
                    topic,
                    "std_msgs/Bytes",
                    "0123456789abcdef0123456789abcdef",
                    "",
                )
                .unwrap()
        })
        .collect();
    let mut state = 0x9E37_79B9u32;
    let mut t = 1_600_000_000_000_000_000u64;
    for i in 0..4000u64 {
        for (conn, (_, len, every)) in conns.iter().zip(topics) {
            if i % every == 0 {
                let data: Vec<u8> = (0..len)
                    .map(|j| {
                        state ^= state << 13;
                        state ^= state >> 17;
                        state ^= state << 5;
                        ((j as u32 / 7) % 128 + state % 64) as u8
                    })
                    .collect();
                writer.write(*conn, t, &data).unwrap();
            }
        }
        t += 2_500_000;
    }
    let mut bag = writer.finish().unwrap().into_inner();
    // index_pos = 0: the bag reads as one whose recorder never wrote the index.
    let field = b"index_pos=";
    let at = bag.windows(field.len()).position(|w| w == field).unwrap() + field.len();
    bag[at..at + 8].fill(0);
    bag
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("linear");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for compression in [ChunkCompression::None, ChunkCompression::Lz4] {
        let bag = Bytes::from(unindexed(compression));
        let name = compression.name();
        group.throughput(Throughput::Bytes(bag.len() as u64));
        group.bench_with_input(BenchmarkId::new("scan", name), &bag, |b, bag| {
            b.iter(|| {
                let bag = Bag::open(bag.clone()).unwrap();
                let n = bag
                    .messages()
                    .order(Order::File)
                    .threads(0)
                    .into_iter()
                    .count();
                black_box(n)
            });
        });
        group.bench_with_input(BenchmarkId::new("stream", name), &bag, |b, bag| {
            b.iter(|| {
                let reader = StreamReader::new(&bag[..]).unwrap();
                let n = reader.map(|m| m.unwrap().data.len()).sum::<usize>();
                black_box(n)
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
