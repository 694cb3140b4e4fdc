//! Full-read throughput of robolog-rosbag2 on synthetic bags written at start-up into
//! `target/bench-rosbag2/` (about 60 MB of CDR payload: IMU-sized, laser-scan-sized and small
//! image-sized messages on three topics, 67 500 messages): a lone `.db3`, a bag directory of
//! four split `.db3` files, and an MCAP-storage bag directory. `benches/rosbags_read.py` times
//! rosbags reading the same files, for the ratio.
//!
//! ```text
//! cargo bench -p robolog-rosbag2 --bench read
//! target/interop-venv/bin/python crates/robolog-rosbag2/benches/rosbags_read.py target/bench-rosbag2
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use robolog_rosbag2::{
    Definition, OpenOptions, Order, StorageId, TopicMetadata, WriteOptions, Writer,
};

fn topic(name: &str, type_name: &str) -> TopicMetadata {
    TopicMetadata {
        name: name.to_owned(),
        type_name: type_name.to_owned(),
        serialization_format: "cdr".to_owned(),
        ..TopicMetadata::default()
    }
}

/// Writes the synthetic bag at `path` (unless it is there) and returns its payload bytes.
fn synthetic(path: &Path, options: WriteOptions) -> u64 {
    let mut state = 0x9E37_79B9u32;
    let mut noise = |n: usize| -> Vec<u8> {
        let mut out = vec![0, 1, 0, 0];
        out.extend((0..n).map(|i| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            ((i as u32 / 7) % 128 + state % 16) as u8
        }));
        out
    };
    let mut total = 0;
    let mut writer = (!path.exists()).then(|| Writer::create(path, options).unwrap());
    let mut ids = [1, 2, 3];
    if let Some(w) = &mut writer {
        ids = [
            w.add_topic(topic("/imu", "sensor_msgs/msg/Imu"), Definition::NotStored)
                .unwrap(),
            w.add_topic(
                topic("/scan", "sensor_msgs/msg/LaserScan"),
                Definition::NotStored,
            )
            .unwrap(),
            w.add_topic(
                topic("/image", "sensor_msgs/msg/Image"),
                Definition::NotStored,
            )
            .unwrap(),
        ];
    }
    for i in 0..60_000u64 {
        let t = 1_700_000_000_000_000_000 + i * 10_000_000;
        let mut put = |id: u32, data: Vec<u8>| {
            total += data.len() as u64;
            if let Some(w) = &mut writer {
                w.write(id, t, &data).unwrap();
            }
        };
        put(ids[0], noise(296));
        if i % 10 == 0 {
            put(ids[1], noise(2_044));
        }
        if i % 40 == 0 {
            put(ids[2], noise(20_000));
        }
    }
    if let Some(w) = writer {
        w.finish().unwrap();
    }
    total
}

fn dir() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-rosbag2");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn read_all(path: &Path, options: &OpenOptions) -> u64 {
    let bag = options.open(path).unwrap();
    let mut bytes = 0u64;
    for m in bag.messages().order(Order::LogTime).iter().unwrap() {
        bytes += black_box(m.unwrap().data.len()) as u64;
    }
    bytes
}

fn bench(c: &mut Criterion) {
    let d = dir();
    let single = d.join("single");
    let payload = synthetic(&single, WriteOptions::new().storage(StorageId::Sqlite3));
    let split = d.join("split");
    synthetic(
        &split,
        WriteOptions::new()
            .storage(StorageId::Sqlite3)
            .max_file_size(16 << 20),
    );
    let mcap = d.join("mcap");
    synthetic(&mcap, WriteOptions::new().storage(StorageId::Mcap));
    let db3 = single.join("single_0.db3");
    let read = OpenOptions::new();
    // SAFETY: the bench's files are written above, before any is mapped, and not touched again.
    #[allow(unsafe_code)]
    let mapped = unsafe { OpenOptions::new().memory_map() };
    assert_eq!(read_all(&db3, &read), payload);
    assert_eq!(read_all(&db3, &mapped), payload);

    let mut group = c.benchmark_group("read_all");
    group.throughput(Throughput::Bytes(payload));
    group.measurement_time(Duration::from_secs(10));
    group.sample_size(20);
    for (name, path) in [("db3", &db3), ("split_dir", &split), ("mcap_dir", &mcap)] {
        group.bench_function(name, |b| b.iter(|| read_all(path, &read)));
        group.bench_function(format!("{name}_mapped"), |b| {
            b.iter(|| read_all(path, &mapped))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
