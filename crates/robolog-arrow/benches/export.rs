//! Export and SQL costs against decoding alone, on generated MCAP files.
//!
//! The files are written once under `target/bench-data/robolog-arrow/` (the paths are printed,
//! so that other tools can be timed on the same bytes; BENCHMARKS.md has the commands):
//!
//! - `imu-ros1.mcap`: 200 000 `sensor_msgs/Imu` (ROS 1) messages at 1 kHz, zstd chunks;
//! - `imu-protobuf.mcap`: the same values as a protobuf `bench.Imu` with its descriptor set;
//! - `samples-short.mcap` / `samples-long.mcap`: a 12-byte message at 100 Hz for 1 000 s and
//!   for 100 000 s, small zstd chunks.
//!
//! Benchmarks: `decode/*` reads and decodes every message through the facade (the work any
//! export must do), `export/*` writes the Parquet files, and `sql_window/*` counts the rows of
//! the same 10-second window (1% of the short log) in both sample logs, which must take the same
//! time whatever the log's length.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    missing_docs
)]

use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, Value};
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FieldDescriptorProto, FileDescriptorProto, FileDescriptorSet};
use robolog::mcap::{Compression, Message, WriteOptions, Writer};
use robolog::{Decoder, Filter, MergedMessages};
use robolog_arrow::{ExportOptions, LogTables};

const START: u64 = 1_700_000_000_000_000_000;
const IMU_COUNT: u64 = 200_000;

fn data_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-data/robolog-arrow");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn writer(chunk_size: u64) -> Writer<Vec<u8>> {
    let options = WriteOptions::new()
        .compression(Compression::Zstd)
        .chunk_size(Some(chunk_size));
    Writer::new(Vec::new(), options).unwrap()
}

/// Deterministic pseudo-random doubles.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
}

const IMU_DEFINITION: &str = include_str!("../../../testdata/msg/sensor_msgs_Imu.msgdef");

fn imu_ros1(path: &Path) {
    let mut w = writer(1 << 20);
    let schema = w
        .register_schema("sensor_msgs/Imu", "ros1msg", IMU_DEFINITION.as_bytes())
        .unwrap();
    let channel = w
        .register_channel("/imu", "ros1", schema, Default::default())
        .unwrap();
    let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
    let mut data = Vec::new();
    for i in 0..IMU_COUNT {
        let t = START + i * 1_000_000;
        data.clear();
        data.extend_from_slice(&(i as u32).to_le_bytes());
        data.extend_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
        data.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
        data.extend_from_slice(&8u32.to_le_bytes());
        data.extend_from_slice(b"imu_link");
        for _ in 0..4 + 9 + 3 + 9 + 3 + 9 {
            data.extend_from_slice(&noise.next().to_le_bytes());
        }
        w.write_message(&Message {
            channel_id: channel,
            sequence: i as u32,
            log_time: t,
            publish_time: t,
            data: &data,
        })
        .unwrap();
    }
    std::fs::write(path, w.finish().unwrap()).unwrap();
}

fn field(
    name: &str,
    number: i32,
    ty: Type,
    label: Label,
    type_name: Option<&str>,
) -> FieldDescriptorProto {
    FieldDescriptorProto {
        name: Some(name.into()),
        number: Some(number),
        label: Some(label as i32),
        r#type: Some(ty as i32),
        type_name: type_name.map(Into::into),
        ..Default::default()
    }
}

fn imu_descriptor_set() -> Vec<u8> {
    let double = |name: &str, n| field(name, n, Type::Double, Label::Optional, None);
    let repeated = |name: &str, n| field(name, n, Type::Double, Label::Repeated, None);
    let message =
        |name: &str, n, ty: &str| field(name, n, Type::Message, Label::Optional, Some(ty));
    let file = FileDescriptorProto {
        name: Some("bench/imu.proto".into()),
        package: Some("bench".into()),
        syntax: Some("proto3".into()),
        message_type: vec![
            DescriptorProto {
                name: Some("Vector3".into()),
                field: vec![double("x", 1), double("y", 2), double("z", 3)],
                ..Default::default()
            },
            DescriptorProto {
                name: Some("Quaternion".into()),
                field: vec![
                    double("x", 1),
                    double("y", 2),
                    double("z", 3),
                    double("w", 4),
                ],
                ..Default::default()
            },
            DescriptorProto {
                name: Some("Imu".into()),
                field: vec![
                    field("seq", 1, Type::Uint32, Label::Optional, None),
                    field("stamp_ns", 2, Type::Uint64, Label::Optional, None),
                    field("frame_id", 3, Type::String, Label::Optional, None),
                    message("orientation", 4, ".bench.Quaternion"),
                    repeated("orientation_covariance", 5),
                    message("angular_velocity", 6, ".bench.Vector3"),
                    repeated("angular_velocity_covariance", 7),
                    message("linear_acceleration", 8, ".bench.Vector3"),
                    repeated("linear_acceleration_covariance", 9),
                ],
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    FileDescriptorSet { file: vec![file] }.encode_to_vec()
}

fn imu_protobuf(path: &Path) {
    let set = imu_descriptor_set();
    let pool = DescriptorPool::decode(set.as_slice()).unwrap();
    let imu = pool.get_message_by_name("bench.Imu").unwrap();
    let vector = pool.get_message_by_name("bench.Vector3").unwrap();
    let quaternion = pool.get_message_by_name("bench.Quaternion").unwrap();
    let mut w = writer(1 << 20);
    let schema = w.register_schema("bench.Imu", "protobuf", &set).unwrap();
    let channel = w
        .register_channel("/imu", "protobuf", schema, Default::default())
        .unwrap();
    let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
    for i in 0..IMU_COUNT {
        let t = START + i * 1_000_000;
        let mut m = DynamicMessage::new(imu.clone());
        m.set_field_by_name("seq", Value::U32(i as u32));
        m.set_field_by_name("stamp_ns", Value::U64(t));
        m.set_field_by_name("frame_id", Value::String("imu_link".into()));
        let mut q = DynamicMessage::new(quaternion.clone());
        for name in ["x", "y", "z", "w"] {
            q.set_field_by_name(name, Value::F64(noise.next()));
        }
        m.set_field_by_name("orientation", Value::Message(q));
        let mut vectors = Vec::new();
        for _ in 0..2 {
            let mut v = DynamicMessage::new(vector.clone());
            for name in ["x", "y", "z"] {
                v.set_field_by_name(name, Value::F64(noise.next()));
            }
            vectors.push(v);
        }
        let covariance =
            |noise: &mut Noise| Value::List((0..9).map(|_| Value::F64(noise.next())).collect());
        m.set_field_by_name("orientation_covariance", covariance(&mut noise));
        m.set_field_by_name("angular_velocity", Value::Message(vectors.remove(0)));
        m.set_field_by_name("angular_velocity_covariance", covariance(&mut noise));
        m.set_field_by_name("linear_acceleration", Value::Message(vectors.remove(0)));
        m.set_field_by_name("linear_acceleration_covariance", covariance(&mut noise));
        let data = m.encode_to_vec();
        w.write_message(&Message {
            channel_id: channel,
            sequence: i as u32,
            log_time: t,
            publish_time: t,
            data: &data,
        })
        .unwrap();
    }
    std::fs::write(path, w.finish().unwrap()).unwrap();
}

fn samples(path: &Path, seconds: u64) {
    let mut w = writer(4096);
    let schema = w
        .register_schema("bench/Sample", "ros1msg", b"float64 x\nuint32 i\n")
        .unwrap();
    let channel = w
        .register_channel("/sample", "ros1", schema, Default::default())
        .unwrap();
    let mut data = Vec::new();
    for i in 0..seconds * 100 {
        let t = START + i * 10_000_000;
        data.clear();
        data.extend_from_slice(&(i as f64).to_le_bytes());
        data.extend_from_slice(&(i as u32).to_le_bytes());
        w.write_message(&Message {
            channel_id: channel,
            sequence: i as u32,
            log_time: t,
            publish_time: t,
            data: &data,
        })
        .unwrap();
    }
    std::fs::write(path, w.finish().unwrap()).unwrap();
}

fn ensure(name: &str, make: impl FnOnce(&Path)) -> PathBuf {
    let path = data_dir().join(name);
    if !path.exists() {
        let temp = path.with_extension("partial");
        make(&temp);
        std::fs::rename(&temp, &path).unwrap();
    }
    eprintln!("bench file: {}", path.display());
    path
}

fn decode_all(path: &Path) -> u64 {
    let log = robolog::open(path).unwrap();
    let mut decoder = Decoder::new();
    let mut count = 0;
    for item in MergedMessages::new(&[&log], &Filter::new()).unwrap() {
        let (_, message) = item.unwrap();
        match message.channel.message_encoding.as_str() {
            "protobuf" => {
                // The facade's Decoder does not decode protobuf: decode with prost-reflect, as
                // robolog-arrow does.
                let schema = message.channel.schema.as_ref().unwrap();
                let pool = DescriptorPool::decode(schema.data.as_ref()).unwrap();
                let descriptor = pool.get_message_by_name(&schema.name).unwrap();
                std::hint::black_box(
                    DynamicMessage::decode(descriptor, message.data.as_ref()).unwrap(),
                );
            }
            _ => {
                std::hint::black_box(decoder.decode(&message).unwrap());
            }
        }
        count += 1;
    }
    count
}

fn bench(c: &mut Criterion) {
    let ros1 = ensure("imu-ros1.mcap", imu_ros1);
    let protobuf = ensure("imu-protobuf.mcap", imu_protobuf);
    let short = ensure("samples-short.mcap", |p| samples(p, 1_000));
    let long = ensure("samples-long.mcap", |p| samples(p, 100_000));

    let mut group = c.benchmark_group("imu");
    group.sample_size(10);
    group.bench_function("decode/ros1", |b| {
        b.iter(|| assert_eq!(decode_all(&ros1), IMU_COUNT))
    });
    group.bench_function("export/ros1", |b| {
        b.iter(|| {
            let log = robolog::open(&ros1).unwrap();
            let out = tempfile::tempdir().unwrap();
            let report = robolog_arrow::export(&[&log], out.path(), ExportOptions::new()).unwrap();
            assert_eq!(report.messages, IMU_COUNT);
        })
    });
    group.bench_function("export/protobuf", |b| {
        b.iter(|| {
            let log = robolog::open(&protobuf).unwrap();
            let out = tempfile::tempdir().unwrap();
            let report = robolog_arrow::export(&[&log], out.path(), ExportOptions::new()).unwrap();
            assert_eq!(report.messages, IMU_COUNT);
        })
    });
    group.finish();

    let mut group = c.benchmark_group("sql_window");
    group.sample_size(20);
    // The 10 s from 500 s on: 1% of the short log, 0.01% of the long one.
    let (lo, hi) = (START + 500_000_000_000, START + 510_000_000_000);
    let sql = format!(
        r#"SELECT count(*) AS n FROM "/sample" WHERE log_time >= to_timestamp_nanos({lo}) AND log_time < to_timestamp_nanos({hi})"#
    );
    for (name, path) in [("short", &short), ("long", &long)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let tables = LogTables::open([path]).unwrap();
                let batches = tables.sql_blocking(&sql).unwrap();
                assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
