//! An indexed MCAP file read from a real nginx on the loopback through robolog-mcap's reader:
//! the requests and bytes counted from nginx's access log, the messages those of the file read
//! locally.

use std::collections::BTreeMap;

use robolog_mcap::{Compression, McapReader, Message, WriteOptions, Writer};
use robolog_remote::{Remote, RemoteOptions};
use robolog_testkit::nginx::Nginx;

/// 40 chunks of about 512 KiB: `/big` (8 KiB messages) and `/small`, one message of each per
/// millisecond of log time.
fn file() -> Vec<u8> {
    let opts = WriteOptions::new()
        .compression(Compression::None)
        .chunk_size(Some(512 << 10));
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let big = w
        .register_channel("/big", "raw", 0, BTreeMap::new())
        .unwrap();
    let small = w
        .register_channel("/small", "raw", 0, BTreeMap::new())
        .unwrap();
    let payload = vec![5u8; 8 << 10];
    for t in 0..2500u64 {
        for (channel_id, data) in [(big, &payload[..]), (small, &t.to_le_bytes()[..])] {
            w.write_message(&Message {
                channel_id,
                sequence: t as u32,
                log_time: t * 1_000_000,
                publish_time: t * 1_000_000,
                data,
            })
            .unwrap();
        }
    }
    w.finish().unwrap()
}

/// `(log_time, data)` of the query's messages.
fn read(reader: &McapReader, topic: &str, range: std::ops::Range<u64>) -> Vec<(u64, Vec<u8>)> {
    reader
        .messages()
        .topics([topic])
        .time_range(range)
        .iter()
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (m.log_time, m.data.to_vec())
        })
        .collect()
}

#[test]
fn summary_in_two_requests_and_a_query_fetches_only_its_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nginx) = Nginx::start(dir.path()) else {
        return;
    };
    let data = file();
    let size = data.len() as u64;
    std::fs::write(nginx.root().join("log.mcap"), &data).unwrap();
    let remote = Remote::open(&nginx.url("log.mcap"), &RemoteOptions::new()).unwrap();
    let reader = McapReader::open(remote.input()).unwrap();
    let local = McapReader::open(data).unwrap();
    assert!(local.summary().chunk_indexes.len() >= 30);
    assert_eq!(
        reader.summary().chunk_indexes,
        local.summary().chunk_indexes
    );
    let requests = nginx.requests();
    assert!(requests.len() <= 2, "{requests:#?}");
    assert!(requests.iter().all(|r| r.status == 206));
    assert_eq!(remote.fetched().requests, requests.len() as u64);

    // 50 ms of `/small`: its chunk or two, in one request.
    nginx.clear();
    let window = 1_200_000_000..1_250_000_000;
    assert_eq!(
        read(&reader, "/small", window.clone()),
        read(&local, "/small", window)
    );
    let requests = nginx.requests();
    let bytes: u64 = requests.iter().map(|r| r.bytes).sum();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    assert!(bytes < 3 * (600 << 10), "{bytes} of {size}");

    // Everything: each byte of the chunks about once, in requests of several chunks each.
    nginx.clear();
    let all = 0..u64::MAX;
    assert_eq!(
        read(&reader, "/big", all.clone()),
        read(&local, "/big", all)
    );
    let requests = nginx.requests();
    let bytes: u64 = requests.iter().map(|r| r.bytes).sum();
    assert!(bytes <= size, "{bytes} of {size}");
    assert!(bytes > size * 9 / 10, "{bytes} of {size}");
    assert!(
        requests.len() * 4 < local.summary().chunk_indexes.len(),
        "{}",
        requests.len()
    );
}
