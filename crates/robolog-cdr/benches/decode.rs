//! Decode, projection, encode and JSON throughput for `sensor_msgs/Imu` (small, mostly fixed
//! layout) and `sensor_msgs/PointCloud2` (one large `uint8[]`, at two sizes: decoding must not
//! depend on the data size), each against a hand-written, statically typed decoder of the same
//! struct (the limit for a dynamic decoder).
//!
//! Run: `cargo bench -p robolog-cdr --bench decode`. The messages are also written to
//! `target/cdr-bench/*.cdr`, where `benches/rosbags_decode.py` times rosbags' deserializer on
//! the same bytes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use robolog_cdr::{Plan, Tree};

#[path = "support/fixed.rs"]
mod fixed;
#[path = "support/messages.rs"]
mod messages;

use messages::{cloud_definition, cloud_message, imu_definition, imu_message};

fn throughput(message: &[u8]) -> Throughput {
    Throughput::ElementsAndBytes {
        elements: 1,
        bytes: message.len() as u64,
    }
}

/// Writes the benchmark's messages for `benches/rosbags_decode.py`.
fn save(name: &str, message: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/cdr-bench");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.cdr")), message).unwrap();
}

fn imu(c: &mut Criterion) {
    let plan = Plan::from_bundle("sensor_msgs/msg/Imu", &imu_definition()).unwrap();
    let message = imu_message(&plan);
    assert_eq!(message.len(), 4 + 320);
    save("imu", &message);
    let static_imu = fixed::Reader::new(&message).unwrap().imu().unwrap();
    assert_eq!(static_imu.linear_acceleration.z, 9.81);
    assert_eq!(static_imu.header.frame_id, b"imu_link");

    let mut group = c.benchmark_group("cdr_imu");
    group.throughput(throughput(&message));
    let mut tree = Tree::new();
    group.bench_function("decode_into (reused tree)", |b| {
        b.iter(|| plan.decode_into(black_box(&message), &mut tree).unwrap())
    });
    group.bench_function("decode (new tree)", |b| {
        b.iter(|| {
            plan.decode(black_box(&message))
                .unwrap()
                .tree()
                .nodes()
                .len()
        })
    });
    group.bench_function("static decoder", |b| {
        b.iter(|| {
            fixed::Reader::new(black_box(&message))
                .unwrap()
                .imu()
                .unwrap()
        })
    });
    let one = plan.projection(&["linear_acceleration.z"]).unwrap();
    let mut values = Vec::new();
    group.bench_function("projection linear_acceleration.z", |b| {
        b.iter(|| one.extract_into(black_box(&message), &mut values).unwrap())
    });
    let decoded = plan.decode(&message).unwrap();
    let mut out = Vec::new();
    group.bench_function("encode", |b| {
        b.iter(|| {
            out.clear();
            plan.encode_into(
                black_box(decoded.tree()),
                robolog_cdr::Encapsulation::CdrLe,
                &mut out,
            )
            .unwrap()
        })
    });
    #[cfg(feature = "serde")]
    group.bench_function("to_json", |b| b.iter(|| black_box(&decoded).to_json()));
    group.finish();
}

fn point_cloud(c: &mut Criterion) {
    let plan = Plan::from_bundle("sensor_msgs/msg/PointCloud2", &cloud_definition()).unwrap();
    let mut group = c.benchmark_group("cdr_point_cloud2");
    for size in [64 << 10, 16 << 20] {
        let data: Vec<u8> = (0..size).map(|i| i as u8).collect();
        let message = cloud_message(&plan, &data);
        save(&format!("cloud{}k", size >> 10), &message);
        let static_cloud = fixed::Reader::new(&message)
            .unwrap()
            .point_cloud2()
            .unwrap();
        assert_eq!(static_cloud.data.len(), size);
        assert_eq!(static_cloud.fields[3].name, b"intensity");
        let mut tree = Tree::new();
        group.throughput(throughput(&message));
        group.bench_function(format!("decode_into {} KiB", size >> 10), |b| {
            b.iter(|| plan.decode_into(black_box(&message), &mut tree).unwrap())
        });
        group.bench_function(format!("decode (new tree) {} KiB", size >> 10), |b| {
            b.iter(|| {
                plan.decode(black_box(&message))
                    .unwrap()
                    .tree()
                    .nodes()
                    .len()
            })
        });
        group.bench_function(format!("static decoder {} KiB", size >> 10), |b| {
            b.iter(|| {
                fixed::Reader::new(black_box(&message))
                    .unwrap()
                    .point_cloud2()
                    .unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, imu, point_cloud);
criterion_main!(benches);
