//! A query by topic decodes a chunk only up to the end of its last wanted message. Shown by
//! damaging a chunk after that point: the query still returns every wanted message, exactly,
//! while the readers that need the whole chunk report the damage (for uncompressed chunks, when
//! `ReadOptions::verify_uncompressed_chunks` asks them to).

use std::collections::BTreeMap;

use robolog_mcap::{
    Bytes, Compression, LinearReader, McapReader, Message, Order, ReadOptions, WriteOptions, Writer,
};

use crate::support::codecs;
use codecs::compressions;

/// Payload of a message: its time and topic number, then bytes that compress somewhat.
fn payload(topic: u8, t: u64, len: usize) -> Vec<u8> {
    let mut state = t ^ u64::from(topic) << 56 | 1;
    let mut data = t.to_le_bytes().to_vec();
    data.push(topic);
    data.extend((data.len()..len).map(|i| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        if i % 3 == 0 { state as u8 } else { topic }
    }));
    data
}

const IMU: u8 = 0;
const LIDAR: u8 = 1;
const CAMERA: u8 = 2;
const TOPICS: [&str; 3] = ["/imu", "/lidar", "/camera"];
const LIDAR_LEN: usize = 100_000;
const CAMERA_LEN: usize = 600_000;

/// Three chunks, each: imu messages, one lidar scan, more imu, then a camera image, in time
/// order. Returns the file and the offset of the first chunk's record.
fn file(compression: Compression) -> (Vec<u8>, u64) {
    let opts = WriteOptions::new()
        .compression(compression)
        .chunk_size(Some(16 << 20));
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let ids: Vec<u16> = TOPICS
        .iter()
        .map(|t| w.register_channel(t, "raw", 0, BTreeMap::new()).unwrap())
        .collect();
    for chunk in 0..3u64 {
        let base = chunk * 1000;
        let mut write = |topic: u8, t: u64, len: usize| {
            w.write_message(&Message {
                channel_id: ids[topic as usize],
                sequence: t as u32,
                log_time: t,
                publish_time: t,
                data: &payload(topic, t, len),
            })
            .unwrap();
        };
        for i in 0..5 {
            write(IMU, base + i, 300);
        }
        write(LIDAR, base + 10, LIDAR_LEN);
        for i in 0..5 {
            write(IMU, base + 20 + i, 300);
        }
        write(CAMERA, base + 30, CAMERA_LEN);
        w.flush_chunk().unwrap();
    }
    let bytes = w.finish().unwrap();
    let reader = McapReader::open(Bytes::from(bytes.clone())).unwrap();
    let chunks = &reader.summary().chunk_indexes;
    assert_eq!(chunks.len(), 3);
    (bytes, chunks[0].chunk_start_offset)
}

/// Flips bytes of the first chunk's stored records near their end: in the camera image.
fn damage(bytes: &mut [u8], chunk_at: u64) {
    let reader = McapReader::open(Bytes::from(bytes.to_vec())).unwrap();
    let index = &reader.summary().chunk_indexes[0];
    assert_eq!(index.chunk_start_offset, chunk_at);
    let end = (index.chunk_start_offset + index.chunk_length) as usize;
    for byte in &mut bytes[end - 3000..end - 2000] {
        *byte ^= 0x55;
    }
}

fn query(
    file: &Bytes,
    opts: ReadOptions,
    topic: &str,
    order: Order,
) -> robolog_mcap::Result<Vec<(u64, Bytes)>> {
    McapReader::open_with(file.clone(), opts)?
        .messages()
        .topics([topic])
        .order(order)
        .iter()?
        .map(|m| m.map(|m| (m.log_time, m.data)))
        .collect()
}

#[test]
fn damage_after_the_wanted_messages_does_not_stop_a_topic_query() {
    for compression in compressions() {
        let (mut bytes, chunk_at) = file(compression);
        damage(&mut bytes, chunk_at);
        let file = Bytes::from(bytes);
        for threads in [0, 2] {
            for order in [Order::File, Order::LogTime, Order::ReverseLogTime] {
                let case = format!("{compression:?}, {threads} threads, {order:?}");
                // Uncompressed chunks are checked only when asked; this test asks, so that
                // every compression shows what a prefix leaves unchecked.
                let opts = ReadOptions::default()
                    .verify_uncompressed_chunks(true)
                    .threads(threads);
                let got = query(&file, opts.clone(), "/lidar", order)
                    .unwrap_or_else(|e| panic!("{case}: {e}"));
                let mut times = vec![10, 1010, 2010];
                if order == Order::ReverseLogTime {
                    times.reverse();
                }
                assert_eq!(got.iter().map(|m| m.0).collect::<Vec<_>>(), times, "{case}");
                for (t, data) in &got {
                    assert!(
                        data[..] == payload(LIDAR, *t, LIDAR_LEN)[..],
                        "{case}: data at {t}"
                    );
                }
                // The imu messages before the damage too.
                let imu = query(&file, opts.clone(), "/imu", order).unwrap();
                assert_eq!(imu.len(), 30, "{case}");
                for (t, data) in &imu {
                    assert!(data[..] == payload(IMU, *t, 300)[..], "{case}: imu at {t}");
                }
                // The damaged image needs the whole chunk: an error.
                assert!(
                    query(&file, opts.clone(), "/camera", order).is_err(),
                    "{case}"
                );
                // By default an uncompressed chunk is served unchecked: the image comes out
                // with the flipped bytes.
                let default = ReadOptions::default().threads(threads);
                let camera = query(&file, default, "/camera", order);
                if compression == Compression::None {
                    let camera = camera.unwrap_or_else(|e| panic!("{case}: {e}"));
                    assert_eq!(camera.len(), 3, "{case}");
                    let damaged = camera
                        .iter()
                        .filter(|(t, data)| data[..] != payload(CAMERA, *t, CAMERA_LEN)[..]);
                    assert_eq!(damaged.map(|m| m.0).collect::<Vec<_>>(), [30], "{case}");
                } else {
                    assert!(camera.is_err(), "{case}");
                }
                // So does any query that decodes whole chunks, as when every CRC check is asked
                // for.
                let whole = opts.clone().decode_whole_chunks(true);
                assert!(query(&file, whole, "/lidar", order).is_err(), "{case}");
                let checked = opts.clone().crc_checks(true);
                assert!(query(&file, checked, "/lidar", order).is_err(), "{case}");
            }
        }
        // The linear reader reads every record: it finds the damage.
        let linear: Result<Vec<_>, _> = LinearReader::new(file.clone()).into_messages().collect();
        assert!(linear.is_err(), "{compression:?}: linear read");
    }
}

#[test]
fn undamaged_files_read_the_same_either_way() {
    for compression in compressions() {
        let file = Bytes::from(file(compression).0);
        for topic in TOPICS {
            for order in [Order::File, Order::LogTime, Order::ReverseLogTime] {
                let whole = ReadOptions::default().decode_whole_chunks(true);
                let a = query(&file, ReadOptions::default(), topic, order).unwrap();
                let b = query(&file, whole, topic, order).unwrap();
                assert_eq!(a, b, "{compression:?} {topic} {order:?}");
                assert_eq!(a.len(), if topic == "/imu" { 30 } else { 3 });
            }
        }
    }
}

/// Found by the `mcap_indexed` fuzz target: a message whose length reaches over the records after
/// it, up to past the last wanted message. Decoding only up to the last wanted message's end cut
/// that message short; the query must give what reading whole chunks gives.
#[test]
fn a_wanted_message_reaching_past_the_last_one_reads_as_with_whole_chunks() {
    let file = Bytes::from_static(include_bytes!("regressions/prefix-overrun.mcap"));
    let query = |whole: bool| {
        let options = ReadOptions::default().decode_whole_chunks(whole).threads(0);
        let reader = McapReader::open_with(file.clone(), options).unwrap();
        let topic = reader
            .summary()
            .channels
            .values()
            .next()
            .unwrap()
            .topic
            .to_string();
        reader
            .messages()
            .topics([topic.as_str()])
            .time_range(1..u64::MAX)
            .iter()
            .unwrap()
            .map(|m| {
                m.map(|m| (m.sequence, m.log_time, m.data.to_vec()))
                    .map_err(|e| e.to_string())
            })
            .collect::<Vec<_>>()
    };
    let whole = query(true);
    assert_eq!(whole.len(), 11);
    assert!(whole.iter().all(Result::is_ok));
    assert_eq!(query(false), whole);
}
