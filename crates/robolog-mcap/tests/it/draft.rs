//! The pre-ratification draft layout: files written by a helper that follows the spec's section
//! 13 are detected, read through every reader as ratified records, and converted.

use crate::support::draft_writer;

use draft_writer::{DraftChannel, DraftMessage, draft_file};
use robolog_mcap::{
    Bytes, Compression, Layout, LinearReader, McapError, McapReader, Order, ReadOptions, Record,
    StreamReader, WriteOptions, check, recover,
};

const CHANNELS: [DraftChannel<'static>; 2] = [
    DraftChannel {
        id: 0,
        topic: "/chatter",
        encoding: "ros1",
        schema_name: "std_msgs/String",
        schema: b"string data\n",
        user_data: &[("callerid", "/talker")],
    },
    DraftChannel {
        id: 7,
        topic: "/raw",
        encoding: "json",
        schema_name: "",
        schema: b"",
        user_data: &[],
    },
];

fn messages() -> Vec<DraftMessage> {
    (0..50u64)
        .map(|i| {
            let channel = if i % 2 == 0 { 0 } else { 7 };
            // record_time goes back every 4th message; publish_time differs from it.
            let record_time = 1000 + i * 10 - if i % 4 == 3 { 25 } else { 0 };
            (
                channel,
                i as u32,
                record_time + 3,
                record_time,
                format!("m{i}").into_bytes(),
            )
        })
        .collect()
}

fn variants() -> Vec<(&'static str, Vec<u8>)> {
    let m = messages();
    vec![
        ("unchunked", draft_file(&CHANNELS, &m, None, 0)),
        (
            "zstd",
            draft_file(&CHANNELS, &m, Some(Compression::Zstd), 16),
        ),
        ("lz4", draft_file(&CHANNELS, &m, Some(Compression::Lz4), 16)),
        (
            "uncompressed chunks",
            draft_file(&CHANNELS, &m, Some(Compression::None), 16),
        ),
    ]
}

/// Checks the ratified records a draft file maps to.
fn check_records(name: &str, records: Vec<Record<'_>>) {
    let header = records.iter().find_map(|r| match r {
        Record::Header(h) => Some(h.clone()),
        _ => None,
    });
    assert_eq!(header.unwrap().profile, "ros1", "{name}");
    let metadata: Vec<_> = records
        .iter()
        .filter_map(|r| match r {
            Record::Metadata(m) => Some(m.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        metadata.len(),
        1,
        "{name}: the header metadata becomes a Metadata record"
    );
    assert_eq!(metadata[0].metadata["robot"], "r2");
    let schema = records
        .iter()
        .find_map(|r| match r {
            Record::Schema(s) => Some(s.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (schema.id, &*schema.name, &*schema.encoding),
        (1, "std_msgs/String", "ros1msg")
    );
    assert_eq!(&*schema.data, b"string data\n");
    let channels: Vec<_> = records
        .iter()
        .filter_map(|r| match r {
            Record::Channel(c) => Some(c.clone()),
            _ => None,
        })
        .collect();
    let chatter = channels.iter().find(|c| c.id == 0).unwrap();
    assert_eq!(
        (
            chatter.schema_id,
            &*chatter.topic,
            &*chatter.message_encoding
        ),
        (1, "/chatter", "ros1")
    );
    assert_eq!(chatter.metadata["callerid"], "/talker");
    let raw = channels.iter().find(|c| c.id == 7).unwrap();
    assert_eq!(raw.schema_id, 0, "{name}: no schema → schemaless channel");
    let got: Vec<DraftMessage> = records
        .iter()
        .filter_map(|r| match r {
            Record::Message(m) => Some((
                m.channel_id,
                m.sequence,
                m.publish_time,
                m.log_time,
                m.data.to_vec(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        got,
        messages(),
        "{name}: record_time is the log time, publish_time kept"
    );
    let attachment = records
        .iter()
        .find_map(|r| match r {
            Record::Attachment(a) => Some(a.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (
            &*attachment.name,
            &*attachment.media_type,
            attachment.log_time
        ),
        ("notes.txt", "text/plain", 42)
    );
    assert_eq!(&*attachment.data, b"hello");
}

#[test]
fn draft_files_are_detected_and_read_linearly() {
    for (name, data) in variants() {
        assert_eq!(
            robolog_mcap::draft::detect(&data),
            Some(Layout::Draft),
            "{name}"
        );
        let mut reader = LinearReader::new(Bytes::from(data.clone()));
        assert!(reader.is_draft());
        let mut records = Vec::new();
        while let Some(r) = reader.next_record() {
            records.push(own(r.unwrap_or_else(|e| panic!("{name}: {e}"))));
        }
        check_records(name, records);
    }
}

/// Every field of a message, owned.
fn fields(m: &robolog_mcap::Message<'_>) -> (u16, u32, u64, u64, Vec<u8>) {
    (
        m.channel_id,
        m.sequence,
        m.log_time,
        m.publish_time,
        m.data.to_vec(),
    )
}

#[test]
fn draft_messages_are_lent_as_they_are_iterated() {
    for (name, data) in variants() {
        let data = Bytes::from(data);
        let iterated: Vec<_> = LinearReader::new(data.clone())
            .into_messages()
            .map(|m| fields(&m.unwrap_or_else(|e| panic!("{name}: {e}")).as_record()))
            .collect();
        assert_eq!(iterated.len(), 50, "{name}");
        let mut messages = LinearReader::new(data.clone()).into_messages();
        let mut lent = Vec::new();
        while let Some(m) = messages.next_ref() {
            lent.push(fields(&m.unwrap_or_else(|e| panic!("{name}: {e}"))));
        }
        assert_eq!(lent, iterated, "{name}: linear");
        let reader = McapReader::open(data).unwrap();
        for order in [Order::LogTime, Order::ReverseLogTime, Order::File] {
            let query = reader.messages().order(order);
            let iterated: Vec<_> = query
                .clone()
                .iter()
                .unwrap()
                .map(|m| fields(&m.unwrap().as_record()))
                .collect();
            assert_eq!(iterated.len(), 50, "{name} {order:?}");
            let mut messages = query.iter().unwrap();
            let mut lent = Vec::new();
            while let Some(m) = messages.next_ref() {
                lent.push(fields(&m.unwrap()));
            }
            assert_eq!(lent, iterated, "{name}: indexed {order:?}");
        }
    }
}

#[test]
fn streams_read_draft_files_when_told() {
    for (name, data) in variants() {
        let mut reader =
            StreamReader::with_options(&data[..], ReadOptions::default().layout(Layout::Draft));
        let mut records: Vec<Record<'static>> = Vec::new();
        while let Some(r) = reader.next_record() {
            let r = r.unwrap_or_else(|e| panic!("{name}: {e}"));
            records.push(own(r));
        }
        check_records(name, records);
    }
}

/// A `'static` copy of a record (test convenience).
fn own(r: Record<'_>) -> Record<'static> {
    match r {
        Record::Header(h) => Record::Header(h.into_owned()),
        Record::Schema(s) => Record::Schema(s.into_owned()),
        Record::Channel(c) => Record::Channel(c.into_owned()),
        Record::Attachment(a) => Record::Attachment(a.into_owned()),
        Record::Metadata(m) => Record::Metadata(m.into_owned()),
        Record::Message(m) => {
            let data: &'static [u8] = Box::leak(m.data.to_vec().into_boxed_slice());
            Record::Message(robolog_mcap::Message { data, ..m })
        }
        Record::Footer(f) => Record::Footer(f),
        _ => Record::DataEnd(Default::default()),
    }
}

#[test]
fn indexed_reader_opens_draft_files() {
    for (name, data) in variants() {
        let reader = McapReader::open(Bytes::from(data.clone())).unwrap();
        assert!(reader.is_draft());
        assert_eq!(reader.summary().channels.len(), 2, "{name}");
        let mut want = messages();
        want.sort_by_key(|m| m.3);
        let got: Vec<u64> = reader
            .messages()
            .iter()
            .unwrap()
            .map(|m| m.unwrap().log_time)
            .collect();
        assert_eq!(got, want.iter().map(|m| m.3).collect::<Vec<_>>(), "{name}");
        let chatter: Vec<u32> = reader
            .messages()
            .topics(["/chatter"])
            .order(Order::File)
            .iter()
            .unwrap()
            .map(|m| m.unwrap().sequence)
            .collect();
        assert_eq!(chatter, (0..50).step_by(2).collect::<Vec<u32>>());
        let attachment = reader.read_attachment(&reader.attachments()[0]).unwrap();
        assert_eq!(&*attachment.data, b"hello");
    }
}

#[test]
fn a_ratified_only_reader_rejects_draft_files_clearly() {
    let (_, data) = variants().remove(1);
    let opts = ReadOptions::default().layout(Layout::Ratified);
    let err = McapReader::open_with(Bytes::from(data), opts).unwrap_err();
    assert!(matches!(err, McapError::DraftLayout { .. }), "{err}");
    assert!(err.to_string().contains("draft"));
}

#[test]
fn draft_files_convert_to_valid_ratified_files() {
    for (name, data) in variants() {
        let (out, report) = recover(data.clone(), Vec::new(), WriteOptions::default()).unwrap();
        assert!(report.draft);
        assert_eq!(report.messages_recovered, 50, "{name}");
        assert!(report.damage.is_empty(), "{name}: {:?}", report.damage);
        assert_eq!(robolog_mcap::draft::detect(&out), Some(Layout::Ratified));
        // Valid; the only remarks are the deliberately out-of-order log times.
        let problems = check(&out);
        assert!(
            problems
                .iter()
                .all(|p| p.severity == robolog_mcap::Severity::Warning
                    && p.message.contains("is less than the latest log time")),
            "{name}: {problems:#?}"
        );
        let reader = McapReader::open(Bytes::from(out)).unwrap();
        assert!(!reader.is_draft());
        let mut records = Vec::new();
        let mut linear = LinearReader::new(reader.input().read_all().unwrap());
        while let Some(r) = linear.next_record() {
            records.push(own(r.unwrap()));
        }
        check_records(name, records);
    }
}

#[test]
fn draft_files_read_by_position_recover_as_they_stream_to_the_same_file() {
    for (name, data) in variants() {
        // Intact, and with one byte flipped, at 40 places in turn.
        let mut cases = vec![("intact".to_owned(), data.clone())];
        for i in 1..=40 {
            let at = data.len() * i / 41;
            let mut flipped = data.clone();
            flipped[at] ^= 0x40;
            cases.push((format!("byte {at} flipped"), flipped));
        }
        for (what, data) in cases {
            let expected = recover(data.clone(), Vec::new(), WriteOptions::default());
            let input = robolog_mcap::Input::new(crate::support::ByPosition {
                data: Bytes::from(data),
                reads: Default::default(),
            });
            let got = robolog_mcap::recover_input(
                &input,
                Vec::new(),
                WriteOptions::default(),
                robolog_mcap::RecoverOptions::new(),
            );
            match (got, expected) {
                (Ok((out, report)), Ok((expected_out, expected_report))) => {
                    assert!(report.draft, "{name}, {what}");
                    assert_eq!(report, expected_report, "{name}, {what}");
                    assert!(out == expected_out, "{name}, {what}: the same file");
                    if what == "intact" {
                        assert_eq!(report.messages_recovered, 50, "{name}");
                    }
                }
                (got, expected) => panic!(
                    "{name}, {what}: {:?} by position, {:?} in memory",
                    got.map(|r| r.1),
                    expected.map(|r| r.1)
                ),
            }
        }
    }
}

/// Everything the indexed reader tells of a draft file: its summary's records, and its messages
/// in each order and for a query by topic and time; or the error that opening it gave.
fn everything(reader: Result<McapReader, McapError>) -> String {
    let reader = match reader {
        Ok(reader) => reader,
        Err(e) => return format!("open: {e:?}"),
    };
    let s = reader.summary();
    let mut out = format!(
        "{}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n",
        reader.is_draft(),
        s.header,
        s.schemas,
        s.channels,
        s.statistics,
        s.attachment_indexes,
        s.footer
    );
    for order in [
        Order::File,
        Order::LogTime,
        Order::ReverseLogTime,
        Order::Topic,
    ] {
        match reader.messages().order(order).iter() {
            Ok(messages) => {
                for m in messages {
                    out += &format!("{order:?}: {m:?}\n");
                }
            }
            Err(e) => out += &format!("{order:?}: query: {e:?}\n"),
        }
    }
    if let Ok(messages) = reader
        .messages()
        .topics(["/raw"])
        .time_range(1100..1300)
        .iter()
    {
        for m in messages {
            out += &format!("query: {m:?}\n");
        }
    }
    out
}

#[test]
fn draft_files_opened_by_position_read_as_in_memory_damaged_or_not() {
    for (name, data) in variants() {
        let mut cases = vec![("intact".to_owned(), data.clone())];
        for i in 1..=60 {
            let at = data.len() * i / 61;
            let mut flipped = data.clone();
            flipped[at] ^= 0x40;
            cases.push((format!("byte {at} flipped"), flipped));
            cases.push((format!("cut at {at}"), data[..at].to_vec()));
        }
        for (what, data) in cases {
            let in_memory = everything(McapReader::open(Bytes::from(data.clone())));
            let input = robolog_mcap::Input::new(crate::support::ByPosition {
                data: Bytes::from(data),
                reads: Default::default(),
            });
            let by_position = everything(McapReader::open(input));
            assert_eq!(by_position, in_memory, "{name}, {what}");
            if what == "intact" {
                assert_eq!(in_memory.matches("File: Ok(").count(), 50, "{name}");
                assert_eq!(in_memory.matches("query: Ok(").count(), 10, "{name}");
            }
        }
    }
}

#[test]
fn a_draft_file_opened_by_position_is_streamed_not_read_whole() {
    // 400 messages of 64 KiB in zstd chunks: 26 MB.
    let payload = |i: u64| -> Vec<u8> {
        let mut state = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..64 << 10)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect()
    };
    let messages: Vec<DraftMessage> = (0..400u64)
        .map(|i| (7, i as u32, 1000 + i, 1000 + i, payload(i)))
        .collect();
    let data = draft_file(&CHANNELS, &messages, Some(Compression::Zstd), 8);
    let len = data.len() as u64;
    assert!(len > 25 << 20, "{len}");
    let reads = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let input = robolog_mcap::Input::new(crate::support::ByPosition {
        data: Bytes::from(data.clone()),
        reads: reads.clone(),
    });
    let reader = McapReader::open(input).unwrap();
    assert!(reader.is_draft());
    let taken = std::mem::take(&mut *reads.lock().unwrap());
    let largest = taken.iter().map(|r| r.end - r.start).max().unwrap();
    let total: u64 = taken.iter().map(|r| r.end - r.start).sum();
    assert!(largest <= robolog_query::STREAM_PIECE, "{largest}");
    assert!(total < len + len / 20, "{total} of {len}");
    // A query walks it again, as in memory, a piece at a time.
    let sequences: Vec<u32> = reader
        .messages()
        .time_range(1100..1110)
        .iter()
        .unwrap()
        .map(|m| m.unwrap().sequence)
        .collect();
    assert_eq!(sequences, (100..110).collect::<Vec<u32>>());
    let taken = std::mem::take(&mut *reads.lock().unwrap());
    assert!(
        taken
            .iter()
            .all(|r| r.end - r.start <= robolog_query::STREAM_PIECE)
    );
}
