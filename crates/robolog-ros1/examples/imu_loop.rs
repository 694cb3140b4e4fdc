//! Decodes one `sensor_msgs/Imu` message many times, for on-CPU measurements on a shared
//! machine where criterion's wall-clock numbers include time spent waiting for a core:
//!
//! ```text
//! cargo build --release -p robolog-ros1 --example imu_loop
//! perf stat -e task-clock target/release/examples/imu_loop decode 20000000
//! ```
//!
//! task-clock divided by the count is the CPU time of one decode. Modes: `decode` (into a
//! reused tree), `project` (one field), `baseline` (the loop alone).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::hint::black_box;

use robolog_ros1::{Plan, PrimitiveArray, Time, Tree, Value, le_bytes};

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "decode".to_owned());
    let count: u64 = args.next().map_or(10_000_000, |n| n.parse().unwrap());

    let path = format!(
        "{}/../../testdata/msg/sensor_msgs_Imu.msgdef",
        env!("CARGO_MANIFEST_DIR")
    );
    let plan =
        Plan::from_bundle("sensor_msgs/Imu", &std::fs::read_to_string(path).unwrap()).unwrap();
    let covariance = le_bytes(&[0.01f64; 9]);
    let mut tree = Tree::new();
    let header = tree.push_message([
        Value::UInt32(42),
        Value::Time(Time {
            secs: 1_700_000_000,
            nsecs: 5,
        }),
        Value::String(b"imu_link"),
    ]);
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
    let message = plan.encode(&tree).unwrap();

    let mut decoded = Tree::new();
    let projection = plan.projection(&["linear_acceleration.z"]).unwrap();
    let mut values = Vec::new();
    let mut total = 0usize;
    for _ in 0..count {
        match mode.as_str() {
            "decode" => total += plan.decode_into(black_box(&message), &mut decoded).unwrap(),
            "project" => {
                projection
                    .extract_into(black_box(&message), &mut values)
                    .unwrap();
                total += values.len();
            }
            _ => total += black_box(&message).len(),
        }
    }
    println!("{mode}: {count} messages ({total})");
}
