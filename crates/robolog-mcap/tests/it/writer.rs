//! Writer options: every layout switch gives a valid file with the same messages, and the
//! compression threads do not change a byte of the output.

use std::collections::BTreeMap;

use robolog_mcap::{
    Bytes, Compression, LinearReader, McapReader, Message, Order, Record, Severity, WriteOptions,
    Writer, check,
};

fn write(opts: WriteOptions) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let schema = w
        .register_schema("pkg/Msg", "ros1msg", b"int32 x\n")
        .unwrap();
    let a = w
        .register_channel("/a", "ros1", schema, BTreeMap::new())
        .unwrap();
    let b = w
        .register_channel("/b", "json", 0, BTreeMap::new())
        .unwrap();
    for i in 0..3000u64 {
        let data: Vec<u8> = (0..(i % 300)).map(|j| (i + j) as u8).collect();
        w.write_message(&Message {
            channel_id: if i % 4 == 0 { b } else { a },
            sequence: i as u32,
            log_time: 10_000 + i * 7 - if i % 9 == 4 { 20 } else { 0 },
            publish_time: i,
            data: &data,
        })
        .unwrap();
    }
    w.finish().unwrap()
}

fn sequences(file: &[u8]) -> Vec<u32> {
    let mut linear = LinearReader::new(Bytes::from(file.to_vec()));
    let mut out = Vec::new();
    while let Some(r) = linear.next_record() {
        if let Record::Message(m) = r.unwrap() {
            out.push(m.sequence);
        }
    }
    out
}

#[test]
fn compression_threads_do_not_change_the_output() {
    for compression in [Compression::Zstd, Compression::Lz4] {
        let base = WriteOptions::new()
            .compression(compression)
            .chunk_size(Some(8 * 1024));
        let inline = write(base.clone().threads(0));
        let threaded = write(base.threads(3));
        assert_eq!(inline, threaded, "{compression:?}");
        assert!(
            McapReader::open(Bytes::from(inline))
                .unwrap()
                .summary()
                .chunk_indexes
                .len()
                > 10
        );
    }
}

#[test]
fn every_layout_switch_gives_a_valid_file() {
    let all: Vec<u32> = (0..3000).collect();
    let base = WriteOptions::new().chunk_size(Some(16 * 1024));
    let variants: Vec<(&str, WriteOptions)> = vec![
        ("default", base.clone()),
        ("unchunked", base.clone().chunk_size(None)),
        ("no message indexes", base.clone().message_indexes(false)),
        ("no chunk indexes", base.clone().chunk_indexes(false)),
        ("no statistics", base.clone().statistics(false)),
        ("no summary offsets", base.clone().summary_offsets(false)),
        ("no crcs", base.clone().crcs(false)),
        ("zstd level 19", base.clone().compression_level(Some(19))),
        ("lz4", base.clone().compression(Compression::Lz4)),
        ("none", base.clone().compression(Compression::None)),
    ];
    for (name, opts) in variants {
        let file = write(opts);
        assert_eq!(sequences(&file), all, "{name}");
        let errors: Vec<_> = check(&file)
            .into_iter()
            .filter(|p| p.severity == Severity::Error)
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}");
        let reader = McapReader::open(Bytes::from(file)).unwrap();
        let mut by_time: Vec<u32> = reader
            .messages()
            .order(Order::File)
            .iter()
            .unwrap()
            .map(|m| m.unwrap().sequence)
            .collect();
        if name != "no chunk indexes" {
            assert_eq!(by_time, all, "{name}: indexed file order");
        }
        by_time.sort_unstable();
        assert_eq!(by_time, all, "{name}");
    }
}

#[test]
fn summary_is_exactly_what_was_asked_for() {
    let file = write(
        WriteOptions::new()
            .repeat_schemas(false)
            .repeat_channels(false)
            .statistics(false)
            .chunk_indexes(false)
            .summary_offsets(false)
            .attachment_indexes(false)
            .metadata_indexes(false),
    );
    let reader = McapReader::open(Bytes::from(file)).unwrap();
    let footer = reader.summary().footer.unwrap();
    assert_eq!((footer.summary_start, footer.summary_offset_start), (0, 0));
    // Without a summary the reader scans, and still finds everything.
    assert_eq!(reader.messages().iter().unwrap().count(), 3000);
}

#[test]
fn misuse_is_an_error_not_a_panic() {
    let mut w = Writer::new(Vec::new(), WriteOptions::new()).unwrap();
    let err = w
        .write_message(&Message {
            channel_id: 9,
            sequence: 0,
            log_time: 0,
            publish_time: 0,
            data: b"",
        })
        .unwrap_err();
    assert!(err.to_string().contains("unknown channel 9"), "{err}");
    assert!(
        w.register_channel("/x", "json", 5, BTreeMap::new())
            .is_err()
    );
    assert!(w.write_private_record(0x20, b"").is_err());
    w.write_private_record(0x80, b"mine").unwrap();
    let file = w.finish().unwrap();
    assert!(check(&file).iter().all(|p| p.severity == Severity::Warning));
}

#[test]
fn parallel_and_inline_decoding_agree_on_a_large_file() {
    // Large enough (24 MB in 256 KiB chunks, overlapping in time) for queries to use threads.
    let opts = WriteOptions::new().chunk_size(Some(256 * 1024));
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let a = w.register_channel("/a", "raw", 0, BTreeMap::new()).unwrap();
    let b = w.register_channel("/b", "raw", 0, BTreeMap::new()).unwrap();
    let mut data = vec![0u8; 8 * 1024];
    for i in 0..3000u64 {
        data[..8].copy_from_slice(&i.to_le_bytes());
        w.write_message(&Message {
            channel_id: if i % 3 == 0 { b } else { a },
            sequence: i as u32,
            log_time: i * 100 - if i % 5 == 1 && i > 500 { 40_000 } else { 0 },
            publish_time: i,
            data: &data,
        })
        .unwrap();
    }
    let file = Bytes::from(w.finish().unwrap());
    let read = |threads: usize, order: Order, topic: Option<&str>| -> Vec<(u64, u32)> {
        let opts = robolog_mcap::ReadOptions::default().threads(threads);
        let reader = McapReader::open_with(file.clone(), opts).unwrap();
        let mut query = reader.messages().order(order);
        if let Some(topic) = topic {
            query = query.topics([topic]);
        }
        query
            .iter()
            .unwrap()
            .map(|m| {
                let m = m.unwrap();
                assert_eq!(&m.data[..8], &u64::from(m.sequence).to_le_bytes());
                (m.log_time, m.sequence)
            })
            .collect()
    };
    for order in [Order::LogTime, Order::ReverseLogTime, Order::File] {
        for topic in [None, Some("/b")] {
            let inline = read(0, order, topic);
            let parallel = read(2, order, topic);
            assert_eq!(inline, parallel, "{order:?} {topic:?}");
            let expected_len = if topic.is_some() { 1000 } else { 3000 };
            assert_eq!(inline.len(), expected_len);
            match order {
                Order::LogTime => assert!(inline.windows(2).all(|w| w[0] <= w[1])),
                Order::ReverseLogTime => assert!(inline.windows(2).all(|w| w[0] >= w[1])),
                Order::File => assert!(inline.windows(2).all(|w| w[0].1 < w[1].1)),
                Order::Topic => unreachable!("not among the orders tried"),
            }
        }
    }
}
