//! Decode, projection and encode throughput for three shapes of message:
//! `sensor_msgs/Imu` (small, mostly fixed layout), `sensor_msgs/PointCloud2` (one large
//! `uint8[]`, at two sizes: decoding must not depend on the data size), and
//! `tf2_msgs/TFMessage` (an array of nested messages).
//!
//! Run: `cargo bench -p robolog-ros1 --bench decode`. Each benchmark reports messages/s and
//! bytes/s.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use robolog_ros1::{Plan, PrimitiveArray, Time, Tree, Value, le_bytes};

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/../../testdata/msg/{name}.msgdef",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const TF_MESSAGE: &str = "\
geometry_msgs/TransformStamped[] transforms
================================================================================
MSG: geometry_msgs/TransformStamped
Header header
string child_frame_id
Transform transform
================================================================================
MSG: std_msgs/Header
uint32 seq
time stamp
string frame_id
================================================================================
MSG: geometry_msgs/Transform
Vector3 translation
Quaternion rotation
================================================================================
MSG: geometry_msgs/Vector3
float64 x
float64 y
float64 z
================================================================================
MSG: geometry_msgs/Quaternion
float64 x
float64 y
float64 z
float64 w
";

fn header<'a>(tree: &mut Tree<'a>, frame: &'a str) -> Value<'a> {
    tree.push_message([
        Value::UInt32(42),
        Value::Time(Time {
            secs: 1_700_000_000,
            nsecs: 123_456_789,
        }),
        Value::String(frame.as_bytes()),
    ])
}

fn imu_message(plan: &Plan) -> Vec<u8> {
    let covariance = le_bytes(&[0.01f64; 9]);
    let mut tree = Tree::new();
    let header = header(&mut tree, "imu_link");
    let orientation = tree.push_message([0.0, 0.0, 0.0, 1.0].map(Value::Float64));
    let angular = tree.push_message([0.1, -0.2, 0.3].map(Value::Float64));
    let linear = tree.push_message([0.0, 0.0, 9.81].map(Value::Float64));
    let covariance = Value::Array(PrimitiveArray::of::<f64>(&covariance).unwrap());
    tree.set_root_fields([
        header,
        orientation,
        covariance,
        angular,
        covariance,
        linear,
        covariance,
    ]);
    plan.encode(&tree).unwrap()
}

fn cloud_message(plan: &Plan, data: &[u8]) -> Vec<u8> {
    let mut tree = Tree::new();
    let header = header(&mut tree, "velodyne");
    let fields: Vec<Value<'_>> = ["x", "y", "z", "intensity"]
        .iter()
        .enumerate()
        .map(|(i, name)| {
            tree.push_message([
                Value::String(name.as_bytes()),
                Value::UInt32(4 * i as u32),
                Value::UInt8(7),
                Value::UInt32(1),
            ])
        })
        .collect();
    let fields = tree.push_messages(fields);
    let points = (data.len() / 16) as u32;
    tree.set_root_fields([
        header,
        Value::UInt32(1),
        Value::UInt32(points),
        fields,
        Value::Bool(false),
        Value::UInt32(16),
        Value::UInt32(16 * points),
        Value::Array(PrimitiveArray::of::<u8>(data).unwrap()),
        Value::Bool(true),
    ]);
    plan.encode(&tree).unwrap()
}

fn tf_message(plan: &Plan, transforms: usize) -> Vec<u8> {
    let names: Vec<String> = (0..transforms).map(|i| format!("link_{i}")).collect();
    let mut tree = Tree::new();
    let elements: Vec<Value<'_>> = names
        .iter()
        .map(|name| {
            let header = header(&mut tree, "base_link");
            let translation = tree.push_message([1.0, 2.0, 3.0].map(Value::Float64));
            let rotation = tree.push_message([0.0, 0.0, 0.0, 1.0].map(Value::Float64));
            let transform = tree.push_message([translation, rotation]);
            tree.push_message([header, Value::String(name.as_bytes()), transform])
        })
        .collect();
    let transforms = tree.push_messages(elements);
    tree.set_root_fields([transforms]);
    plan.encode(&tree).unwrap()
}

fn throughput(message: &[u8]) -> Throughput {
    Throughput::ElementsAndBytes {
        elements: 1,
        bytes: message.len() as u64,
    }
}

fn imu(c: &mut Criterion) {
    let plan = Plan::from_bundle("sensor_msgs/Imu", &fixture("sensor_msgs_Imu")).unwrap();
    let message = imu_message(&plan);
    assert_eq!(message.len(), 320);
    let mut group = c.benchmark_group("imu");
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
    let one = plan.projection(&["linear_acceleration.z"]).unwrap();
    let mut values = Vec::new();
    group.bench_function("projection linear_acceleration.z", |b| {
        b.iter(|| one.extract_into(black_box(&message), &mut values).unwrap())
    });
    let stamp = plan.projection(&["header.stamp"]).unwrap();
    group.bench_function("projection header.stamp", |b| {
        b.iter(|| {
            stamp
                .extract_into(black_box(&message), &mut values)
                .unwrap()
        })
    });
    let decoded = plan.decode(&message).unwrap();
    let mut out = Vec::new();
    group.bench_function("encode", |b| {
        b.iter(|| {
            out.clear();
            plan.encode_into(black_box(decoded.tree()), &mut out)
                .unwrap()
        })
    });
    #[cfg(feature = "serde")]
    group.bench_function("to_json", |b| b.iter(|| black_box(&decoded).to_json()));
    group.finish();
}

fn point_cloud(c: &mut Criterion) {
    let plan = Plan::from_bundle(
        "sensor_msgs/PointCloud2",
        &fixture("sensor_msgs_PointCloud2"),
    )
    .unwrap();
    let mut group = c.benchmark_group("point_cloud2");
    for size in [64 << 10, 16 << 20] {
        let data: Vec<u8> = (0..size).map(|i| i as u8).collect();
        let message = cloud_message(&plan, &data);
        let mut tree = Tree::new();
        group.throughput(throughput(&message));
        group.bench_function(format!("decode_into {} KiB", size >> 10), |b| {
            b.iter(|| plan.decode_into(black_box(&message), &mut tree).unwrap())
        });
    }
    group.finish();
}

fn tf(c: &mut Criterion) {
    let plan = Plan::from_bundle("tf2_msgs/TFMessage", TF_MESSAGE).unwrap();
    let mut group = c.benchmark_group("tf_message");
    for transforms in [1, 10, 100] {
        let message = tf_message(&plan, transforms);
        let mut tree = Tree::new();
        group.throughput(throughput(&message));
        group.bench_function(format!("decode_into {transforms} transforms"), |b| {
            b.iter(|| plan.decode_into(black_box(&message), &mut tree).unwrap())
        });
    }
    let message = tf_message(&plan, 10);
    let last = plan
        .projection(&["transforms[9].transform.translation.x"])
        .unwrap();
    let mut values = Vec::new();
    group.throughput(throughput(&message));
    group.bench_function("projection transforms[9].transform.translation.x", |b| {
        b.iter(|| last.extract_into(black_box(&message), &mut values).unwrap())
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! { name = benches; config = config(); targets = imu, point_cloud, tf }
criterion_main!(benches);
