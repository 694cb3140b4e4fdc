//! The generated sample files (testdata/samples/README.md): exact counts, values and orders
//! from the generator script, through every reader.

use robolog_mcap::{Bytes, LinearReader, McapReader, Order, ReadOptions, Record, SummarySource};

const T0: u64 = 1_700_000_000_000_000_000;
const FULL: [&str; 5] = [
    "demo-zstd.mcap",
    "demo-lz4.mcap",
    "demo-uncompressed.mcap",
    "demo-unchunked.mcap",
    "demo-out-of-order-zstd.mcap",
];

fn load(name: &str) -> Bytes {
    Bytes::from(robolog_testkit::testdata::read(format!("samples/{name}")))
}

/// Message `i` of the generator: (channel id, sequence, log time, publish time).
fn expected_message(i: u64, out_of_order: bool) -> (u16, u32, u64, u64) {
    let mut t = T0 + i * 10_000_000;
    if out_of_order && i % 7 == 3 {
        t -= 35_000_000;
    }
    ((i % 3 + 1) as u16, (i / 3) as u32, t, t - 1000)
}

#[test]
fn linear_reads_every_sample_exactly() {
    for name in FULL {
        for threads in [0, 2] {
            let mut reader =
                LinearReader::with_options(load(name), ReadOptions::default().threads(threads));
            let (mut schemas, mut channels, mut attachments, mut metadata) = (0, 0, 0, 0);
            let mut messages = Vec::new();
            let mut footer = false;
            while let Some(record) = reader.next_record() {
                match record.unwrap_or_else(|e| panic!("{name}: {e}")) {
                    Record::Schema(_) => schemas += 1,
                    Record::Channel(_) => channels += 1,
                    Record::Attachment(a) => {
                        attachments += 1;
                        assert_eq!(a.name, "calibration.json");
                        assert_eq!(a.media_type, "application/json");
                        assert_eq!(a.create_time, T0);
                    }
                    Record::Metadata(m) => {
                        metadata += 1;
                        assert_eq!(m.name, "run_info");
                        assert_eq!(m.metadata["robot_id"], "r2");
                        assert_eq!(m.metadata["git_sha"], "0123abcd");
                        assert_eq!(m.metadata["site"], "lab");
                    }
                    Record::Message(m) => {
                        let i = messages.len() as u64;
                        let (channel, seq, log, publish) =
                            expected_message(i, name.contains("out-of-order"));
                        assert_eq!(
                            (m.channel_id, m.sequence, m.log_time, m.publish_time),
                            (channel, seq, log, publish),
                            "{name} message {i}"
                        );
                        if channel == 2 {
                            let text = format!("hello world {i}");
                            assert_eq!(&m.data[4..], text.as_bytes());
                        }
                        messages.push(m.log_time);
                    }
                    Record::Footer(_) => footer = true,
                    _ => {}
                }
            }
            assert_eq!(messages.len(), 300, "{name}");
            assert_eq!((attachments, metadata), (1, 1), "{name}");
            // Schemas and channels: once per chunk that uses them, plus the summary copies.
            assert!(
                schemas >= 4 && channels >= 6,
                "{name}: {schemas} schemas, {channels} channels"
            );
            assert!(footer, "{name}");
        }
    }
}

#[test]
fn indexed_reads_every_sample_in_log_time_order() {
    for name in FULL {
        let reader = McapReader::open(load(name)).unwrap();
        let summary = reader.summary();
        assert_eq!(summary.schemas.len(), 2, "{name}");
        assert_eq!(summary.channels.len(), 3, "{name}");
        assert_eq!(summary.channels[&2].topic, "/chatter");
        assert_eq!(
            summary.channels[&2].metadata["md5sum"],
            "992ce8a1687cec8c8bd883ec73ca41d1"
        );
        assert_eq!(summary.schema_of(2).unwrap().name, "std_msgs/String");
        assert!(summary.schema_of(3).is_none(), "/blob is schemaless");
        let stats = summary.statistics.as_ref().unwrap();
        assert_eq!(stats.message_count, 300);
        assert_eq!(stats.channel_message_counts.values().sum::<u64>(), 300);
        if name == "demo-unchunked.mcap" {
            assert_eq!(summary.source, SummarySource::Scan);
            assert_eq!(summary.loose_message_count(), 300);
        } else {
            assert_eq!(summary.source, SummarySource::SummarySection);
            assert_eq!(summary.chunk_indexes.len(), 10, "{name}");
        }
        let out_of_order = name.contains("out-of-order");
        let mut want: Vec<(u64, u16, u32)> = (0..300)
            .map(|i| {
                let (c, s, t, _) = expected_message(i, out_of_order);
                (t, c, s)
            })
            .collect();
        want.sort_by_key(|m| m.0);
        let got: Vec<(u64, u16, u32)> = reader
            .messages()
            .iter()
            .unwrap()
            .map(|m| m.map(|m| (m.log_time, m.channel_id, m.sequence)).unwrap())
            .collect();
        assert_eq!(got, want, "{name}");

        let mut reverse: Vec<(u64, u16, u32)> = reader
            .messages()
            .order(Order::ReverseLogTime)
            .iter()
            .unwrap()
            .map(|m| m.map(|m| (m.log_time, m.channel_id, m.sequence)).unwrap())
            .collect();
        reverse.reverse();
        assert_eq!(reverse, want, "{name} reverse");

        let file: Vec<u32> = reader
            .messages()
            .order(Order::File)
            .iter()
            .unwrap()
            .map(|m| m.unwrap().sequence)
            .collect();
        assert_eq!(
            file,
            (0..300u32).map(|i| i / 3).collect::<Vec<_>>(),
            "{name} file order"
        );

        // One topic, over a time range: the /chatter messages i = 1, 4, 7, ... with
        // T0 + 1 s <= t < T0 + 2 s, which are i in 100..200.
        let chatter: Vec<u32> = reader
            .messages()
            .topics(["/chatter"])
            .time_range(T0 + 1_000_000_000..T0 + 2_000_000_000)
            .iter()
            .unwrap()
            .map(|m| {
                let m = m.unwrap();
                assert_eq!(m.channel_id, 2);
                m.sequence
            })
            .collect();
        let want_chatter: Vec<u32> = want
            .iter()
            .filter(|(t, c, _)| *c == 2 && *t >= T0 + 1_000_000_000 && *t < T0 + 2_000_000_000)
            .map(|m| m.2)
            .collect();
        assert_eq!(chatter, want_chatter, "{name} /chatter");
        assert!(!chatter.is_empty());

        assert_eq!(reader.attachments().len(), 1);
        let attachment = reader.read_attachment(&reader.attachments()[0]).unwrap();
        assert_eq!(attachment.name, "calibration.json");
        let calib: &[u8] = &attachment.data;
        assert!(calib.starts_with(b"{\"fx\": 500.0"), "{name}");
        assert_eq!(reader.metadata_indexes().len(), 1);
        let metadata = reader.read_metadata(&reader.metadata_indexes()[0]).unwrap();
        assert_eq!(metadata.metadata["site"], "lab");
    }
}

#[test]
fn truncated_sample_streams_187_messages_then_reports_truncation() {
    let mut reader = LinearReader::new(load("demo-zstd-truncated.mcap"));
    let mut messages = 0;
    let error = loop {
        match reader.next_record() {
            Some(Ok(Record::Message(_))) => messages += 1,
            Some(Ok(_)) => {}
            Some(Err(e)) => break e,
            None => panic!("no truncation error"),
        }
    };
    assert_eq!(messages, 187);
    assert!(error.is_truncation(), "{error}");
    assert_eq!(error.offset(), Some(23287), "{error}");
    assert!(reader.next_record().is_none());

    // The indexed reader falls back to a scan and finds the complete chunks.
    let reader = McapReader::open(load("demo-zstd-truncated.mcap")).unwrap();
    assert_eq!(reader.summary().source, SummarySource::Scan);
    assert_eq!(reader.messages().iter().unwrap().count(), 187);
    assert_eq!(reader.attachments().len(), 1);
    assert_eq!(reader.metadata_indexes().len(), 1);
}

#[test]
fn streaming_reader_over_read_matches_the_linear_reader() {
    for name in FULL {
        let data = load(name);
        let mut stream = robolog_mcap::StreamReader::new(&data[..]);
        let mut linear =
            LinearReader::with_options(data.clone(), ReadOptions::default().threads(0));
        loop {
            match (stream.next_record(), linear.next_record()) {
                (None, None) => break,
                (Some(a), Some(b)) => assert_eq!(a.unwrap(), b.unwrap(), "{name}"),
                (a, b) => panic!("{name}: {:?} vs {:?}", a.is_some(), b.is_some()),
            }
        }
    }
    let data = load("demo-zstd-truncated.mcap");
    let mut stream = robolog_mcap::StreamReader::new(&data[..]);
    let mut messages = 0;
    let error = loop {
        match stream.next_record() {
            Some(Ok(Record::Message(_))) => messages += 1,
            Some(Ok(_)) => {}
            Some(Err(e)) => break e,
            None => panic!("no error"),
        }
    };
    assert_eq!(messages, 187);
    assert!(error.is_truncation());
    assert_eq!(error.offset(), Some(23287));
}

#[test]
fn a_damaged_attachment_is_reported_and_reading_goes_on() {
    let mut data = robolog_testkit::testdata::read("samples/demo-uncompressed.mcap");
    let reader = McapReader::open(Bytes::from(data.clone())).unwrap();
    let index = reader.attachments()[0].clone();
    // The last byte of the attachment's data (just before its CRC).
    data[(index.offset + index.length - 5) as usize] ^= 0x20;
    let bytes = Bytes::from(data.clone());

    let mut linear = LinearReader::with_options(bytes.clone(), ReadOptions::default().threads(0));
    let mut errors = Vec::new();
    let mut messages = 0;
    while let Some(r) = linear.next_record() {
        match r {
            Ok(Record::Message(_)) => messages += 1,
            Ok(_) => {}
            Err(e) => errors.push(e.to_string()),
        }
    }
    assert_eq!(messages, 300, "reading went on past the attachment");
    assert!(errors[0].contains("attachment CRC mismatch"), "{errors:?}");
    assert_eq!(
        errors[0]
            .split("at byte ")
            .nth(1)
            .unwrap()
            .split(':')
            .next()
            .unwrap(),
        index.offset.to_string()
    );

    let mut stream = robolog_mcap::StreamReader::new(&data[..]);
    let mut stream_errors = Vec::new();
    while let Some(r) = stream.next_record() {
        if let Err(e) = r {
            stream_errors.push(e.to_string());
        }
    }
    assert_eq!(stream_errors, errors);

    // The indexed reader checks it when the attachment is read; switched off, it hands it over.
    let reader = McapReader::open(bytes.clone()).unwrap();
    assert!(reader.read_attachment(&index).is_err());
    let lenient = McapReader::open_with(bytes, ReadOptions::default().crc_checks(false)).unwrap();
    assert_eq!(
        lenient.read_attachment(&index).unwrap().name,
        "calibration.json"
    );
}
