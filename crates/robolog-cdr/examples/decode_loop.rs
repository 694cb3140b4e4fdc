//! Decodes one message many times, for on-CPU measurements on a shared machine where
//! criterion's wall-clock numbers include time spent waiting for a core:
//!
//! ```text
//! cargo build --release -p robolog-cdr --example decode_loop
//! perf stat -e task-clock target/release/examples/decode_loop imu-decode 10000000
//! ```
//!
//! task-clock divided by the count is the CPU time of one decode (subtract `baseline`). Modes:
//! `imu-decode`, `imu-static`, `cloud-decode`, `cloud-static` (decode into a reused tree, or
//! with the hand-written decoder of `benches/support/fixed.rs`), `imu-json`, `tiny-decode` (a
//! one-byte message: the fixed cost of a decode), `baseline` (the loop alone); a `big-` prefix
//! (`big-cloud-decode`) takes a cloud of 16 MiB of points instead of 64 KiB; `write DIR` saves
//! the messages (`imu.cdr`, `cloud64k.cdr`; `big-write DIR`: `cloud16384k.cdr`) for a peer
//! measured in another process.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

use std::hint::black_box;

use robolog_cdr::{Plan, Tree};

#[path = "../benches/support/fixed.rs"]
mod fixed;
#[path = "../benches/support/messages.rs"]
mod messages;

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "imu-decode".to_owned());
    let count: u64 = args.next().map_or(10_000_000, |n| n.parse().unwrap_or(0));

    let imu_plan = Plan::from_bundle("sensor_msgs/msg/Imu", &messages::imu_definition()).unwrap();
    let imu = messages::imu_message(&imu_plan);
    let cloud_plan =
        Plan::from_bundle("sensor_msgs/msg/PointCloud2", &messages::cloud_definition()).unwrap();
    // `big-` modes decode a cloud of 16 MiB of points instead of 64 KiB.
    let (mode, size) = match mode.strip_prefix("big-") {
        Some(mode) => (mode.to_owned(), 16 << 20),
        None => (mode, 64 << 10),
    };
    let data: Vec<u8> = (0..size).map(|i| i as u8).collect();
    let cloud = messages::cloud_message(&cloud_plan, &data);
    if mode == "write" {
        // The messages, for a peer measured in another process (rosbags).
        let dir = std::path::PathBuf::from(std::env::args().nth(2).unwrap());
        std::fs::write(dir.join("imu.cdr"), &imu).unwrap();
        std::fs::write(dir.join(format!("cloud{}k.cdr", size >> 10)), &cloud).unwrap();
        return;
    }

    let tiny_plan = Plan::from_bundle("p/msg/Tiny", "uint8 x\n").unwrap();
    let tiny = [0u8, 1, 0, 0, 7];
    let mut tree = Tree::new();
    let mut sum = 0usize;
    for _ in 0..count {
        sum += match mode.as_str() {
            "imu-decode" => imu_plan
                .decode_into(black_box(&imu), &mut tree)
                .unwrap()
                .end(),
            "imu-static" => {
                let m = fixed::Reader::new(black_box(&imu)).unwrap().imu().unwrap();
                m.header.frame_id.len()
            }
            "cloud-decode" => cloud_plan
                .decode_into(black_box(&cloud), &mut tree)
                .unwrap()
                .end(),
            "cloud-static" => {
                let m = fixed::Reader::new(black_box(&cloud))
                    .unwrap()
                    .point_cloud2()
                    .unwrap();
                m.fields.len()
            }
            "imu-json" => imu_plan.decode(black_box(&imu)).unwrap().to_json().len(),
            "tiny-decode" => tiny_plan
                .decode_into(black_box(&tiny), &mut tree)
                .unwrap()
                .end(),
            "baseline" => black_box(imu.len()),
            other => panic!("unknown mode {other}"),
        };
    }
    println!("{mode}: {count} iterations ({sum})");
}
