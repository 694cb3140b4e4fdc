//! Write and read throughput (payload MB/s) for many small messages and for few large ones.
//!
//! `cargo bench -p robolog-bddf --bench throughput`

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use robolog_bddf::proto::{MessageTypeDescriptor, PodType};
use robolog_bddf::{
    BddfReader, BddfWriter, ReadOptions, SeriesOptions, StreamReader, series_identifier,
};

struct Workload {
    name: &'static str,
    series: u32,
    messages: usize,
    size: usize,
}

const WORKLOADS: &[Workload] = &[
    Workload {
        name: "100k x 64 B",
        series: 4,
        messages: 100_000,
        size: 64,
    },
    Workload {
        name: "32 x 1 MiB",
        series: 2,
        messages: 32,
        size: 1 << 20,
    },
];

fn write(workload: &Workload, payload: &[u8]) -> Vec<u8> {
    let out = Vec::with_capacity(workload.messages * (workload.size + 40) + 4096);
    let mut writer = BddfWriter::new(out).unwrap();
    for s in 0..workload.series {
        writer
            .add_message_series(
                series_identifier("bosdyn:channel", [("bosdyn:channel", format!("s{s}"))]),
                MessageTypeDescriptor {
                    content_type: "application/protobuf".into(),
                    type_name: "bench.Message".into(),
                    is_metadata: false,
                },
                SeriesOptions::default(),
            )
            .unwrap();
    }
    for i in 0..workload.messages {
        let series = i as u32 % workload.series;
        writer
            .write_message(
                series,
                1_700_000_000_000_000_000 + i as i64 * 1_000,
                payload,
            )
            .unwrap();
    }
    writer.finish().unwrap()
}

fn throughput(c: &mut Criterion) {
    for workload in WORKLOADS {
        let payload: Vec<u8> = (0..workload.size).map(|i| (i * 7) as u8).collect();
        let file = write(workload, &payload);
        let bytes = (workload.messages * workload.size) as u64;
        let mut group = c.benchmark_group(workload.name);
        group.throughput(Throughput::Bytes(bytes));
        group.sample_size(10);
        group.measurement_time(Duration::from_secs(3));
        group.warm_up_time(Duration::from_millis(500));

        group.bench_function("write", |b| {
            b.iter(|| black_box(write(workload, &payload)).len())
        });
        let data = robolog_bddf::Bytes::from(file.clone());
        group.bench_function("open + read all (indexed, SHA-1 checked)", |b| {
            b.iter(|| {
                let reader = BddfReader::open(data.clone()).unwrap();
                reader
                    .blocks()
                    .map(|block| block.unwrap().data.len())
                    .sum::<usize>()
            })
        });
        group.bench_function("open + read all (indexed, unchecked)", |b| {
            let options = ReadOptions::new().verify_checksum(false);
            b.iter(|| {
                let reader = BddfReader::open_with(data.clone(), options).unwrap();
                reader
                    .blocks()
                    .map(|block| block.unwrap().data.len())
                    .sum::<usize>()
            })
        });
        // One series holds 1/`series` of the payload.
        group.throughput(Throughput::Bytes(bytes / u64::from(workload.series)));
        group.bench_function("open + read one of the series by time range", |b| {
            b.iter(|| {
                let reader = BddfReader::open(data.clone()).unwrap();
                reader
                    .series_blocks(0, ..)
                    .unwrap()
                    .map(|block| block.unwrap().data.len())
                    .sum::<usize>()
            })
        });
        group.throughput(Throughput::Bytes(bytes));
        group.bench_function("read all (streaming, SHA-1 checked)", |b| {
            b.iter(|| {
                StreamReader::new(&file[..])
                    .unwrap()
                    .map(|block| block.unwrap().data.len())
                    .sum::<usize>()
            })
        });
        group.finish();
    }

    // POD: 1M float64 samples, batched into 2048-byte blocks.
    let mut group = c.benchmark_group("1M f64 POD samples");
    group.throughput(Throughput::Bytes(8 << 20));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("write", |b| {
        b.iter(|| {
            let mut writer = BddfWriter::new(Vec::with_capacity(9 << 20)).unwrap();
            let s = writer
                .add_pod_series(
                    series_identifier("bosdyn:signal", [("example:var", "x")]),
                    PodType::Float64,
                    &[],
                    SeriesOptions::default(),
                )
                .unwrap();
            for i in 0..(1 << 20) {
                writer.write_pod(s, i, &[i as f64]).unwrap();
            }
            writer.finish().unwrap().len()
        })
    });
    group.finish();
}

criterion_group!(benches, throughput);
criterion_main!(benches);
