//! Bags made for the tests: random-ish content, written by our writer.

use robolog_rosbag2::{
    Bag, CompressionMode, Definition, Order, QosProfile, Query, StorageId, TopicMetadata,
    WriteOptions, Writer,
};

/// A CDR `std_msgs/msg/String` holding `text`.
pub(crate) fn cdr_string(text: &str) -> Vec<u8> {
    let mut out = vec![0, 1, 0, 0];
    out.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    out.push(0);
    while out.len() % 4 != 0 {
        out.push(0);
    }
    out
}

pub(crate) fn string_topic(name: &str) -> TopicMetadata {
    TopicMetadata {
        name: name.to_owned(),
        type_name: "std_msgs/msg/String".to_owned(),
        serialization_format: "cdr".to_owned(),
        offered_qos_profiles: vec![QosProfile::latched()],
        type_description_hash:
            "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18".to_owned(),
    }
}

pub(crate) fn string_definition() -> Definition {
    Definition::Stored {
        encoding: "ros2msg".to_owned(),
        text: "string data\n".to_owned(),
    }
}

/// The messages of the test bags: (topic index 0/1, receive time, payload), times interleaved
/// and some equal.
pub(crate) fn sample_messages(n: usize) -> Vec<(usize, u64, Vec<u8>)> {
    (0..n)
        .map(|i| {
            let topic = i % 3 % 2;
            let time = 1_700_000_000_000_000_000 + (i as u64 / 2) * 1_000_000;
            let text = format!("message {i} {}", "x".repeat(i * 37 % 500));
            (topic, time, cdr_string(&text))
        })
        .collect()
}

/// Writes `messages` on two topics into a bag at `path`.
pub(crate) fn write_bag(
    path: &std::path::Path,
    options: WriteOptions,
    messages: &[(usize, u64, Vec<u8>)],
) -> robolog_rosbag2::BagMetadata {
    let mut writer = Writer::create(path, options).unwrap();
    let ids = [
        writer
            .add_topic(string_topic("/chatter"), string_definition())
            .unwrap(),
        writer
            .add_topic(string_topic("/other"), string_definition())
            .unwrap(),
    ];
    for (topic, time, data) in messages {
        writer.write(ids[*topic], *time, data).unwrap();
    }
    writer.finish().unwrap()
}

/// Every message of a bag in time order as (topic name, time, payload).
pub(crate) fn read_all(bag: &Bag) -> Vec<(String, u64, Vec<u8>)> {
    rows(bag, bag.messages().order(Order::LogTime))
}

/// The messages `query` of `bag` selects as (topic name, time, payload).
pub(crate) fn rows(bag: &Bag, query: Query<'_>) -> Vec<(String, u64, Vec<u8>)> {
    query
        .iter()
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (
                bag.topic(m.topic).unwrap().name().to_owned(),
                m.log_time,
                m.data.to_vec(),
            )
        })
        .collect()
}

pub(crate) fn all_layouts() -> Vec<(&'static str, WriteOptions)> {
    let mut out = Vec::new();
    for storage in [StorageId::Sqlite3, StorageId::Mcap] {
        for mode in [
            CompressionMode::None,
            CompressionMode::File,
            CompressionMode::Message,
        ] {
            let name = match (storage, mode) {
                (StorageId::Sqlite3, CompressionMode::None) => "sqlite3",
                (StorageId::Sqlite3, CompressionMode::File) => "sqlite3-file",
                (StorageId::Sqlite3, _) => "sqlite3-message",
                (_, CompressionMode::None) => "mcap",
                (_, CompressionMode::File) => "mcap-file",
                _ => "mcap-message",
            };
            out.push((name, WriteOptions::new().storage(storage).compression(mode)));
        }
    }
    out
}
