//! Conversions with filters, progress, attachments and metadata; merges; streams; outputs;
//! the mapping of BDDF times before 1970.

use std::io::Cursor;
use std::sync::Arc;

use robolog::bddf::proto::MessageTypeDescriptor;
use robolog::bddf::{BddfWriter as RawBddfWriter, series_identifier};
use robolog::{
    Bytes, Channel, ConvertOptions, Error, Filter, Format, Log, Message, NegativeTimes,
    OpenOptions, Order, Output, Progress, Severity, WriterOptions, convert, convert_stream,
    create_writer, merge, open, open_bytes, open_reader,
};
use robolog_testkit::testdata;

const BAG_T0: u64 = 1_600_000_000_000_000_000;

fn writer(format: Format) -> Box<dyn robolog::LogWriter + Send> {
    create_writer(
        Output::memory(),
        WriterOptions::default_for(format).unwrap(),
    )
    .unwrap()
}

fn messages(log: &Log) -> Vec<(String, u64, Vec<u8>)> {
    log.messages()
        .iter()
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (m.channel.topic.clone(), m.log_time_ns, m.data.to_vec())
        })
        .collect()
}

#[test]
fn filters_select_topics_and_times_and_report_unmatched_patterns() {
    let bag = open(testdata::path("bags/generated/ros_comm/ref_none.bag")).unwrap();
    let mut out = writer(Format::Mcap);
    let filter = Filter::new()
        .topics(["/imu", "/cust*", "/nothing/here"])
        .time_range(BAG_T0 + 100_000_000..BAG_T0 + 200_000_000);
    let report = convert(&bag, &mut *out, ConvertOptions::new().filter(filter)).unwrap();
    let mcap = open_bytes(out.finish().unwrap().data.unwrap()).unwrap();
    // Messages 10..19 of /imu (t + 1 ns) and /custom (t + 2 ns).
    assert_eq!(report.messages, 20);
    assert_eq!(report.channels, 2);
    assert_eq!(report.unmatched_topics, ["/nothing/here"]);
    let got = messages(&mcap);
    let mut expected: Vec<(String, u64)> = (10..20u64)
        .flat_map(|i| {
            let t = BAG_T0 + i * 10_000_000;
            [("/imu".to_owned(), t + 1), ("/custom".to_owned(), t + 2)]
        })
        .collect();
    expected.sort_by_key(|e| e.1);
    assert_eq!(
        got.iter()
            .map(|(t, n, _)| (t.clone(), *n))
            .collect::<Vec<_>>(),
        expected
    );
    assert_eq!(
        report.bytes,
        got.iter().map(|m| m.2.len() as u64).sum::<u64>()
    );
}

#[test]
fn progress_is_reported_with_the_total() {
    let bag = open(testdata::path("bags/upstream/rosbag.js/example-bz2.bag")).unwrap();
    let mut calls: Vec<Progress> = Vec::new();
    let mut out = writer(Format::Mcap);
    convert(
        &bag,
        &mut *out,
        ConvertOptions::new().progress(|p| calls.push(*p)),
    )
    .unwrap();
    assert!(calls.len() >= 3, "{calls:?}");
    assert!(calls.windows(2).all(|w| w[0].messages <= w[1].messages));
    let last = calls.last().unwrap();
    assert_eq!((last.messages, last.total_messages), (8647, Some(8647)));
    // A stream reports how far into the input it is.
    let bytes = testdata::read("bags/upstream/rosbag.js/example-bz2.bag");
    let len = bytes.len() as u64;
    let mut stream = open_reader(Cursor::new(bytes)).unwrap();
    let mut last = Progress::default();
    let mut out = writer(Format::Mcap);
    convert_stream(
        &mut stream,
        &mut *out,
        ConvertOptions::new().progress(|p| last = *p),
    )
    .unwrap();
    assert_eq!((last.messages, last.input_position), (8647, Some(len)));
}

#[test]
fn attachments_and_metadata_go_where_the_format_holds_them() {
    let mcap = open(testdata::path("samples/demo-zstd.mcap")).unwrap();
    // MCAP → MCAP: both kept, byte for byte.
    let mut out = writer(Format::Mcap);
    let report = convert(&mcap, &mut *out, ConvertOptions::new()).unwrap();
    assert_eq!((report.attachments, report.metadata), (1, 1));
    let copy = open_bytes(out.finish().unwrap().data.unwrap()).unwrap();
    assert_eq!(copy.attachments().unwrap(), mcap.attachments().unwrap());
    assert_eq!(copy.metadata().unwrap(), mcap.metadata().unwrap());
    assert_eq!(messages(&copy), messages(&mcap));
    // MCAP → bag (the ros1 channel): both dropped, and said so.
    let mut out = writer(Format::Bag);
    let report = convert(
        &mcap,
        &mut *out,
        ConvertOptions::new().filter(Filter::new().topics(["/chatter"])),
    )
    .unwrap();
    assert_eq!(
        (report.attachments_dropped, report.metadata_dropped),
        (1, 1)
    );
    // MCAP → BDDF: metadata becomes file annotations, the attachment is dropped.
    let mut out = writer(Format::Bddf);
    let report = convert(&mcap, &mut *out, ConvertOptions::new()).unwrap();
    assert_eq!((report.metadata, report.attachments_dropped), (1, 1));
    let bddf = open_bytes(out.finish().unwrap().data.unwrap()).unwrap();
    let annotations = &bddf.metadata().unwrap()[0].entries;
    assert_eq!(annotations["run_info:robot_id"], "r2");
    assert_eq!(annotations["run_info:site"], "lab");
    // Attachments outside the time range are left out.
    let mut out = writer(Format::Mcap);
    let late = Filter::new().time_range(1_700_000_002_000_000_000..);
    let report = convert(&mcap, &mut *out, ConvertOptions::new().filter(late)).unwrap();
    assert_eq!((report.attachments, report.attachments_dropped), (0, 0));
}

#[test]
fn merging_split_files_gives_the_original_back() {
    let bag = open(testdata::path("bags/generated/ros_comm/ref_lz4.bag")).unwrap();
    let split = BAG_T0 + 250_000_000;
    let part = |filter: Filter, format: Format| {
        let mut out = writer(format);
        convert(&bag, &mut *out, ConvertOptions::new().filter(filter)).unwrap();
        open_bytes(out.finish().unwrap().data.unwrap()).unwrap()
    };
    // The later half as MCAP, the earlier as a bag: inputs of different formats.
    let late = part(Filter::new().time_range(split..), Format::Mcap);
    let early = part(Filter::new().time_range(..split), Format::Bag);
    let mut out = writer(Format::Bag);
    let report = merge(&[&late, &early], &mut *out, ConvertOptions::new()).unwrap();
    assert_eq!(report.messages, 150);
    // Same channels in both parts merge into one each.
    assert_eq!(report.channels, 3);
    let merged = open_bytes(out.finish().unwrap().data.unwrap()).unwrap();
    assert_eq!(messages(&merged), messages(&bag));
    assert_eq!(merged.channels().len(), 3);
}

#[test]
fn merge_interleaves_by_log_time() {
    let bag = open(testdata::path("bags/generated/ros_comm/ref_none.bag")).unwrap();
    let mcap = open(testdata::path("samples/demo-out-of-order-zstd.mcap")).unwrap();
    let mut out = writer(Format::Mcap);
    let report = merge(&[&bag, &mcap], &mut *out, ConvertOptions::new()).unwrap();
    assert_eq!(report.messages, 450);
    assert_eq!((report.attachments, report.metadata), (1, 1));
    let merged = open_bytes(out.finish().unwrap().data.unwrap()).unwrap();
    let file_order: Vec<u64> = merged
        .messages()
        .order(Order::File)
        .iter()
        .unwrap()
        .map(|m| m.unwrap().log_time_ns)
        .collect();
    assert_eq!(file_order.len(), 450);
    assert!(file_order.windows(2).all(|w| w[0] <= w[1]));
    // Two /chatter channels (bag and MCAP metadata differ): both kept.
    let chatters = merged
        .channels()
        .iter()
        .filter(|c| c.topic == "/chatter")
        .count();
    assert_eq!(chatters, 2);
}

#[test]
fn streams_convert_like_files() {
    let bytes = testdata::read("samples/demo-lz4.mcap");
    let log = open_bytes(bytes.clone()).unwrap();
    let mut from_file = writer(Format::Mcap);
    convert(
        &log,
        &mut *from_file,
        ConvertOptions::new().order(Order::File),
    )
    .unwrap();
    let from_file = open_bytes(from_file.finish().unwrap().data.unwrap()).unwrap();
    let mut stream = open_reader(Cursor::new(bytes)).unwrap();
    let mut from_stream = writer(Format::Mcap);
    let report = convert_stream(&mut stream, &mut *from_stream, ConvertOptions::new()).unwrap();
    assert_eq!(
        (report.messages, report.attachments, report.metadata),
        (300, 1, 1)
    );
    let from_stream = open_bytes(from_stream.finish().unwrap().data.unwrap()).unwrap();
    assert_eq!(messages(&from_stream), messages(&from_file));
    assert_eq!(
        from_stream.attachments().unwrap(),
        log.attachments().unwrap()
    );
    // A stream with a channel a bag cannot hold fails on its first message.
    let mut stream = open_reader(Cursor::new(testdata::read("samples/demo-lz4.mcap"))).unwrap();
    let mut bag = writer(Format::Bag);
    let err = convert_stream(&mut stream, &mut *bag, ConvertOptions::new()).unwrap_err();
    assert!(matches!(err, Error::UnsupportedChannels { .. }), "{err}");
}

#[test]
fn outputs_by_path_appear_only_when_finished() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.mcap");
    assert_eq!(Format::from_path(&target), Some(Format::Mcap));
    let bag = open(testdata::path("bags/generated/ros_comm/ref_none.bag")).unwrap();
    {
        let mut out = create_writer(
            Output::file(&target).unwrap(),
            WriterOptions::default_for(Format::Mcap).unwrap(),
        )
        .unwrap();
        convert(&bag, &mut *out, ConvertOptions::new()).unwrap();
        assert!(!target.exists());
        // Dropped without finish: nothing is left behind.
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    let mut out = create_writer(
        Output::file(&target).unwrap(),
        WriterOptions::default_for(Format::Mcap).unwrap(),
    )
    .unwrap();
    convert(&bag, &mut *out, ConvertOptions::new()).unwrap();
    let finished = out.finish().unwrap();
    assert_eq!(finished.bytes, std::fs::metadata(&target).unwrap().len());
    assert_eq!(messages(&open(&target).unwrap()), messages(&bag));
    // Bags cannot go to a stream.
    let err = create_writer(
        Output::stream(std::io::sink()),
        WriterOptions::default_for(Format::Bag).unwrap(),
    )
    .unwrap_err();
    assert!(matches!(err, Error::Output(_)), "{err}");
}

#[test]
fn seekable_streams_take_every_format_from_where_they_stand() {
    use std::io::{Read, Seek, SeekFrom, Write};
    let bag = open(testdata::path("bags/generated/ros_comm/ref_none.bag")).unwrap();
    for format in [Format::Bag, Format::Mcap, Format::Bddf] {
        let mut in_memory = writer(format);
        convert(&bag, &mut *in_memory, ConvertOptions::new()).unwrap();
        let expected = in_memory.finish().unwrap().data.unwrap();

        // A file the caller opened and already wrote a prefix to; the output starts after it.
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(b"prefix").unwrap();
        let output = Output::seekable(file.try_clone().unwrap()).unwrap();
        assert!(output.is_seekable());
        let mut out = create_writer(output, WriterOptions::default_for(format).unwrap()).unwrap();
        convert(&bag, &mut *out, ConvertOptions::new()).unwrap();
        let finished = out.finish().unwrap();
        assert_eq!(finished.bytes, expected.len() as u64, "{format:?}");
        assert_eq!(finished.data, None);
        // The stream is left at the end of the output (the bag writer seeks back to its header).
        assert_eq!(file.stream_position().unwrap(), 6 + expected.len() as u64);
        let mut written = Vec::new();
        file.seek(SeekFrom::Start(0)).unwrap();
        file.read_to_end(&mut written).unwrap();
        assert_eq!(&written[..6], b"prefix");
        assert!(written[6..] == expected[..], "{format:?}: bytes differ");
    }
}

fn message_on(channel: &Arc<Channel>, log_time_ns: u64) -> Message {
    Message {
        channel: Arc::clone(channel),
        log_time_ns,
        publish_time_ns: None,
        sequence: None,
        data: Bytes::from_static(b"\x02\0\0\0hi"),
    }
}

#[test]
fn times_a_format_cannot_hold_are_errors() {
    let bag = open(testdata::path("bags/generated/ros_comm/ref_none.bag")).unwrap();
    let chatter = Arc::clone(
        bag.channels()
            .iter()
            .find(|c| c.topic == "/chatter")
            .unwrap(),
    );
    let mut out = writer(Format::Bag);
    let id = out.add_channel(&chatter).unwrap();
    // 2^32 s is past a bag's 32-bit seconds.
    let err = out
        .write_message(id, &message_on(&chatter, 1 << 32 << 30))
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::TimeOutOfRange {
                target: Format::Bag,
                ..
            }
        ),
        "{err}"
    );
    let mut out = writer(Format::Bddf);
    let id = out.add_channel(&chatter).unwrap();
    let err = out
        .write_message(id, &message_on(&chatter, u64::MAX))
        .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::TimeOutOfRange {
                target: Format::Bddf,
                ..
            }
        ),
        "{err}"
    );
}

/// A BDDF file with blocks at -2 s, -1 ns, 0 and 5 ns.
fn bddf_before_1970() -> Vec<u8> {
    let mut w = RawBddfWriter::new(Vec::new()).unwrap();
    let text = MessageTypeDescriptor {
        content_type: "text/plain".into(),
        ..Default::default()
    };
    let s = w
        .add_message_series(
            series_identifier("bosdyn:channel", [("bosdyn:channel", "clock")]),
            text,
            Default::default(),
        )
        .unwrap();
    for (t, data) in [(-2_000_000_000i64, "a"), (-1, "b"), (0, "c"), (5, "d")] {
        w.write_message(s, t, data.as_bytes()).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn bddf_times_before_1970_are_refused_by_default() {
    let file = bddf_before_1970();
    let log = open_bytes(file.clone()).unwrap();
    let problem = &log.problems()[0];
    assert_eq!(problem.severity, Severity::Error);
    assert!(
        problem
            .message
            .contains("2 blocks are timestamped before 1970 (first: -2000000000 ns)"),
        "{problem}"
    );
    let results: Vec<_> = log.messages().order(Order::File).iter().unwrap().collect();
    assert_eq!(results.len(), 4);
    match results[0].as_ref().unwrap_err() {
        Error::NegativeTime {
            timestamp_ns,
            offset,
            topic,
        } => {
            assert_eq!(*timestamp_ns, -2_000_000_000);
            assert!(offset.is_some());
            assert_eq!(topic, "bosdyn:channel:bosdyn:channel=clock");
        }
        other => panic!("{other}"),
    }
    assert!(results[1].is_err());
    assert_eq!(results[2].as_ref().unwrap().log_time_ns, 0);
    assert_eq!(results[3].as_ref().unwrap().log_time_ns, 5);
    // A range that starts after 1970 simply leaves them out.
    let later: Vec<_> = log.messages().time_range(1..).iter().unwrap().collect();
    assert_eq!(later.len(), 1);
    assert!(later[0].is_ok());
    // The stream says the same.
    let streamed: Vec<_> = open_reader(Cursor::new(file)).unwrap().collect();
    assert!(matches!(streamed[0], Err(Error::NegativeTime { .. })));
}

#[test]
fn bddf_times_before_1970_can_be_clamped() {
    let file = bddf_before_1970();
    let options = OpenOptions::new().negative_times(NegativeTimes::Clamp);
    let log = options.open_bytes(file.clone().into()).unwrap();
    assert_eq!(log.problems()[0].severity, Severity::Warning);
    let got: Vec<(u64, Vec<u8>)> = log
        .messages()
        .iter()
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (m.log_time_ns, m.data.to_vec())
        })
        .collect();
    // Clamped times tie at 0 and keep their file order.
    assert_eq!(
        got,
        [
            (0, b"a".to_vec()),
            (0, b"b".to_vec()),
            (0, b"c".to_vec()),
            (5, b"d".to_vec())
        ]
    );
    assert_eq!(log.summary().unwrap().start_ns, Some(0));
    let streamed: Vec<u64> = options
        .open_reader(Cursor::new(file))
        .unwrap()
        .map(|m| m.unwrap().log_time_ns)
        .collect();
    assert_eq!(streamed, [0, 0, 0, 5]);
    // A range from 0 includes the clamped blocks.
    assert_eq!(log.messages().time_range(0..1).iter().unwrap().count(), 3);
}

#[test]
fn channels_sharing_a_topic_stay_apart_in_bddf() {
    let bag = open(testdata::path("bags/upstream/embag/test_2.bag")).unwrap();
    assert_eq!(bag.channels().len(), 2);
    let mut out = writer(Format::Bddf);
    convert(&bag, &mut *out, ConvertOptions::new()).unwrap();
    let bddf = open_bytes(out.finish().unwrap().data.unwrap()).unwrap();
    let topics: Vec<&str> = bddf.channels().iter().map(|c| c.topic.as_str()).collect();
    assert_eq!(topics, ["chatter", "chatter"]);
    assert_eq!(messages(&bddf), messages(&bag));
}

#[test]
fn merge_goes_past_a_damaged_chunk_when_asked() {
    let healthy = testdata::read("samples/demo-zstd.mcap");
    // A byte inside the compressed data of the second chunk (at 3733, covering log times
    // 20.32 s to 20.65 s after 1700000000 s).
    let mut damaged_bytes = healthy.to_vec();
    damaged_bytes[3733 + 1500] ^= 0xff;
    let damaged = open_bytes(damaged_bytes).unwrap();
    let bag = open(testdata::path("bags/generated/ros_comm/ref_none.bag")).unwrap();
    let lost = 1_700_000_000_320_000_000..=1_700_000_000_650_000_000;
    let kept = messages(&open_bytes(healthy).unwrap())
        .into_iter()
        .filter(|(_, time, _)| !lost.contains(time))
        .count() as u64;
    assert!(kept < 300);

    let mut out = writer(Format::Mcap);
    let report = merge(
        &[&damaged, &bag],
        &mut *out,
        ConvertOptions::new().keep_going(true),
    )
    .unwrap();
    assert_eq!(report.messages, kept + 150);
    assert_eq!(report.damage.len(), 1);
    assert_eq!(report.damage[0].input, 0);

    let mut out = writer(Format::Mcap);
    let error = merge(&[&damaged, &bag], &mut *out, ConvertOptions::new()).unwrap_err();
    assert!(
        matches!(error, Error::InInput { input: 0, .. }),
        "{error:?}"
    );
}
