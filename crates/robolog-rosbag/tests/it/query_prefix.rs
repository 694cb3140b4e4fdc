//! A topic query decodes a compressed chunk only up to the end of its last wanted message.
//! Shown by damaging a chunk after that point, inside the large image that closes it: the query
//! for the small topics before the image still returns each of their messages exactly, while
//! the readers that need the whole chunk report the damage.

use std::io::Cursor;

use robolog_rosbag::{Bag, ChunkCompression, Order, WriteOptions, Writer};

/// Payload of a message: its time and connection, then bytes that compress somewhat.
fn payload(conn: u32, t: u64, len: usize) -> Vec<u8> {
    let mut state = t ^ (u64::from(conn) << 56) | 1;
    let mut data = t.to_le_bytes().to_vec();
    data.extend(conn.to_le_bytes());
    data.extend((data.len()..len).map(|i| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        if i % 3 == 0 { state as u8 } else { conn as u8 }
    }));
    data
}

const IMU_LEN: usize = 300;
/// Large enough to span several LZ4 blocks (1 MiB) and bzip2 blocks (900k).
const IMAGE_LEN: usize = 3 << 20;
const SEC: u64 = 1_000_000_000;

/// Three chunks, each: ten imu messages, then a camera image that closes the chunk.
fn bag(compression: ChunkCompression) -> Vec<u8> {
    let options = WriteOptions::new()
        .compression(compression)
        .chunk_threshold(1 << 20);
    let mut w = Writer::with_options(Cursor::new(Vec::new()), options).unwrap();
    let md5 = "992ce8a1687cec8c8bd883ec73ca41d1";
    let imu = w
        .add_connection("/imu", "raw/Imu", md5, "uint8[] data\n")
        .unwrap();
    let camera = w
        .add_connection("/camera", "raw/Image", md5, "uint8[] data\n")
        .unwrap();
    for chunk in 0..3 {
        let base = SEC + chunk * SEC;
        for i in 0..10 {
            w.write(imu, base + i, &payload(imu, base + i, IMU_LEN))
                .unwrap();
        }
        w.write(camera, base + 100, &payload(camera, base + 100, IMAGE_LEN))
            .unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// Flips bytes near the end of the first chunk's stored data: inside the image's last part.
fn damage(bytes: &mut [u8]) {
    let bag = Bag::open(bytes.to_vec()).unwrap();
    let header = bag.chunk_headers().next().unwrap().unwrap();
    let end = (header.data_offset + header.compressed_size) as usize;
    for byte in &mut bytes[end - 3000..end - 2000] {
        *byte ^= 0x55;
    }
}

type Got = Result<Vec<(u64, Vec<u8>)>, String>;

fn query(bag: &Bag, topic: &str, order: Order, threads: usize) -> Got {
    bag.messages()
        .topics([topic])
        .order(order)
        .threads(threads)
        .into_iter()
        .map(|m| {
            m.map(|m| (m.time_ns, m.data.to_vec()))
                .map_err(|e| e.to_string())
        })
        .collect()
}

#[test]
fn damage_after_the_wanted_messages_does_not_stop_a_topic_query() {
    for compression in [ChunkCompression::Lz4, ChunkCompression::Bz2] {
        let mut bytes = bag(compression);
        damage(&mut bytes);
        let bag = Bag::open(bytes).unwrap();
        let imu = bag.connections()[0].id;
        for order in [Order::LogTime, Order::File] {
            for threads in [0, 2] {
                let case = format!("{compression:?} {order:?} {threads} threads");
                let got =
                    query(&bag, "/imu", order, threads).unwrap_or_else(|e| panic!("{case}: {e}"));
                assert_eq!(got.len(), 30, "{case}");
                for (t, data) in &got {
                    assert!(*data == payload(imu, *t, IMU_LEN), "{case}: imu at {t}");
                }
                // The damaged image needs the whole chunk: an error.
                assert!(query(&bag, "/camera", order, threads).is_err(), "{case}");
                // So does reading everything.
                let all: Result<Vec<_>, _> = bag
                    .messages()
                    .order(order)
                    .threads(threads)
                    .into_iter()
                    .collect();
                assert!(all.is_err(), "{case}: everything");
            }
        }
    }
}

#[test]
fn undamaged_bags_read_the_same_by_topic_as_in_full() {
    for compression in [
        ChunkCompression::None,
        ChunkCompression::Lz4,
        ChunkCompression::Bz2,
    ] {
        let bag = Bag::open(bag(compression)).unwrap();
        let all = query(&bag, "/imu", Order::LogTime, 0).unwrap();
        let mut from_full: Vec<(u64, Vec<u8>)> = bag
            .messages()
            .into_iter()
            .map(|m| m.unwrap())
            .filter(|m| m.conn == bag.connections()[0].id)
            .map(|m| (m.time_ns, m.data.to_vec()))
            .collect();
        from_full.sort_by_key(|m| m.0);
        assert_eq!(all, from_full, "{compression:?}");
        assert_eq!(query(&bag, "/camera", Order::File, 2).unwrap().len(), 3);
    }
}
