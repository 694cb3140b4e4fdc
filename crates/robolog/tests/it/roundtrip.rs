//! Round trips between formats keep every message byte, log time, topic, type and definition:
//! bag → MCAP → bag and MCAP → bag → MCAP on every suitable test file, and through BDDF.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::type_complexity
)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use robolog::{
    ConvertOptions, Filter, Format, Log, Message, Order, Output, WriterOptions, convert,
    create_writer, open, open_bytes,
};
use robolog_testkit::testdata;

/// Converts `log` (the messages `filter` selects) into `format`, in memory.
fn convert_to(log: &Log, format: Format, filter: Filter) -> Vec<u8> {
    let mut writer = create_writer(
        Output::memory(),
        WriterOptions::default_for(format).unwrap(),
    )
    .unwrap();
    convert(log, &mut *writer, ConvertOptions::new().filter(filter)).unwrap();
    writer.finish().unwrap().data.unwrap()
}

/// What a round trip must keep of a message: topic, type, definition, log time, bytes.
type Kept = (String, String, Vec<u8>, u64, Vec<u8>);

fn kept(log: &Log, filter: &Filter) -> Vec<Kept> {
    log.messages()
        .filter(filter.clone())
        .order(Order::LogTime)
        .iter()
        .unwrap()
        .map(|m| {
            let m: Message = m.unwrap();
            let schema = m.channel.schema.as_ref().unwrap();
            (
                m.channel.topic.clone(),
                schema.name.clone(),
                schema.data.to_vec(),
                m.log_time_ns,
                m.data.to_vec(),
            )
        })
        .collect()
}

/// md5sum, callerid and latching of each topic's channels.
fn ros1_metadata(log: &Log) -> BTreeMap<String, Vec<(Option<String>, Option<String>, bool)>> {
    let mut out: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for c in log.channels() {
        out.entry(c.topic.clone()).or_default().push((
            c.metadata.get("md5sum").cloned(),
            c.metadata.get("callerid").cloned(),
            matches!(
                c.metadata.get("latching").map(String::as_str),
                Some("1" | "true")
            ),
        ));
    }
    out
}

fn readable_bags() -> Vec<PathBuf> {
    testdata::files_with_extension("bags", ".bag")
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            // Not bags with messages: 0 bytes, and a lone header rosbag calls unindexed.
            name != "empty-file.bag" && name != "dummy.bag"
        })
        .collect()
}

#[test]
fn bag_to_mcap_to_bag() {
    let bags = readable_bags();
    assert!(bags.len() >= 40, "{} bags", bags.len());
    let mut total = 0;
    for path in bags {
        let name = path.display().to_string();
        let bag = open(&path).unwrap();
        let mcap = open_bytes(convert_to(&bag, Format::Mcap, Filter::new())).unwrap();
        assert_eq!(mcap.format(), Format::Mcap);
        // The ros1 profile (a bag is ROS 1 even without channels): channel ids are connection
        // ids, one schema per type and md5sum.
        assert_eq!(
            mcap.summary().unwrap().properties["profile"],
            "ros1",
            "{name}"
        );
        for (a, b) in bag.channels().iter().zip(mcap.channels()) {
            assert_eq!(a.id, b.id, "{name}");
            assert_eq!(b.message_encoding, "ros1");
            assert_eq!(b.schema.as_ref().unwrap().encoding, "ros1msg");
            assert_eq!(a.metadata, b.metadata, "{name}");
        }
        let back = open_bytes(convert_to(&mcap, Format::Bag, Filter::new())).unwrap();
        let original = kept(&bag, &Filter::new());
        total += original.len();
        assert_eq!(kept(&mcap, &Filter::new()), original, "{name}: bag -> mcap");
        assert_eq!(
            kept(&back, &Filter::new()),
            original,
            "{name}: bag -> mcap -> bag"
        );
        assert_eq!(ros1_metadata(&back), ros1_metadata(&bag), "{name}");
        assert!(back.problems().is_empty(), "{name}: {:?}", back.problems());
    }
    // 150 × 13 generated bags (76 of the killed one), the 8647 of example-bz2, and the others.
    assert!(total > 10_000, "{total}");
}

#[test]
fn mcap_to_bag_to_mcap() {
    let ros1_only = Filter::new().topics(["/chatter"]);
    let mut files: Vec<(PathBuf, Filter)> = testdata::files_with_extension("samples", ".mcap")
        .into_iter()
        .map(|p| (p, ros1_only.clone()))
        .collect();
    // MCAP files of our own converter hold only ros1 channels: every topic.
    let dir = tempfile::tempdir().unwrap();
    for bag in [
        "bags/upstream/rosbag.js/example-bz2.bag",
        "bags/generated/rosbags/rosbags_lz4.bag",
        "bags/upstream/swri-bag-reader-java/PointCloud2.bag",
    ] {
        let log = open(testdata::path(bag)).unwrap();
        let path = dir.path().join(format!("{}.mcap", files.len()));
        std::fs::write(&path, convert_to(&log, Format::Mcap, Filter::new())).unwrap();
        files.push((path, Filter::new()));
    }
    for (path, filter) in files {
        let name = path.display().to_string();
        let mcap = open(&path).unwrap();
        let bag = open_bytes(convert_to(&mcap, Format::Bag, filter.clone())).unwrap();
        let again = open_bytes(convert_to(&bag, Format::Mcap, Filter::new())).unwrap();
        let original = kept(&mcap, &filter);
        assert!(!original.is_empty(), "{name}");
        assert_eq!(kept(&bag, &Filter::new()), original, "{name}: mcap -> bag");
        assert_eq!(
            kept(&again, &Filter::new()),
            original,
            "{name}: mcap -> bag -> mcap"
        );
        // md5sum and callerid survive; latching becomes the bag's 0/1.
        for c in again.channels() {
            let source = mcap.channels().iter().find(|s| s.topic == c.topic).unwrap();
            assert_eq!(
                c.metadata.get("md5sum"),
                source.metadata.get("md5sum"),
                "{name}"
            );
            assert_eq!(
                c.metadata.get("callerid"),
                source.metadata.get("callerid"),
                "{name}"
            );
        }
    }
}

#[test]
fn mcap_with_other_encodings_is_refused_as_a_bag_listing_the_channels() {
    let mcap = open(testdata::path("samples/demo-zstd.mcap")).unwrap();
    let mut writer = create_writer(
        Output::memory(),
        WriterOptions::default_for(Format::Bag).unwrap(),
    )
    .unwrap();
    let err = convert(&mcap, &mut *writer, ConvertOptions::new()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("ROS bag cannot hold these channels: "),
        "{text}"
    );
    assert!(
        text.contains("/points (json: a bag holds only ROS 1 (ros1) messages)"),
        "{text}"
    );
    assert!(text.contains("/blob (application/octet-stream: "), "{text}");
    assert!(!text.contains("/chatter"), "{text}");
}

#[test]
fn mcap_channels_without_md5sum_get_one_computed() {
    // A ros1 MCAP channel without md5sum metadata: the bag connection gets genmsg's md5.
    let mcap = open(testdata::path("samples/demo-lz4.mcap")).unwrap();
    let mut channel = (**mcap
        .channels()
        .iter()
        .find(|c| c.topic == "/chatter")
        .unwrap())
    .clone();
    channel.metadata.remove("md5sum");
    let mut writer = create_writer(
        Output::memory(),
        WriterOptions::default_for(Format::Bag).unwrap(),
    )
    .unwrap();
    let id = writer.add_channel(&channel).unwrap();
    for m in mcap.messages().topics(["/chatter"]).iter().unwrap() {
        writer.write_message(id, &m.unwrap()).unwrap();
    }
    let bag = open_bytes(writer.finish().unwrap().data.unwrap()).unwrap();
    // std_msgs/String (testdata/msg/std_msgs_String.md5).
    let expected = std::fs::read_to_string(testdata::path("msg/std_msgs_String.md5")).unwrap();
    assert_eq!(bag.channels()[0].metadata["md5sum"], expected.trim());
    assert_eq!(bag.summary().unwrap().message_count, 100);
}

/// Channel descriptions that survive BDDF → MCAP → BDDF (additional index names are dropped
/// with their values, which the model does not carry).
fn bddf_channels(
    log: &Log,
) -> Vec<(
    u32,
    String,
    String,
    Option<(String, String)>,
    BTreeMap<String, String>,
)> {
    log.channels()
        .iter()
        .map(|c| {
            let mut metadata = c.metadata.clone();
            metadata.remove("bddf:additional_index_names");
            (
                c.id,
                c.topic.clone(),
                c.message_encoding.clone(),
                c.schema
                    .as_ref()
                    .map(|s| (s.name.clone(), s.encoding.clone())),
                metadata,
            )
        })
        .collect()
}

fn blocks(log: &Log) -> Vec<(u32, u64, Vec<u8>)> {
    log.messages()
        .order(Order::File)
        .iter()
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (m.channel.id, m.log_time_ns, m.data.to_vec())
        })
        .collect()
}

#[test]
fn bddf_to_mcap_to_bddf() {
    let bddf = open(testdata::path("bddf/sample.bddf")).unwrap();
    let mcap = open_bytes(convert_to(&bddf, Format::Mcap, Filter::new())).unwrap();
    let s = mcap.summary().unwrap();
    assert_eq!(s.message_count, 14);
    assert_eq!(s.properties["profile"], "");
    // File annotations became a metadata record.
    assert_eq!(s.metadata[0].name, "bddf:annotations");
    assert_eq!(
        s.metadata[0].entries["bosdyn:robot-serial-number"],
        "spot-BD-0001"
    );
    assert_eq!(bddf_channels(&mcap), bddf_channels(&bddf));
    let again = open_bytes(convert_to(&mcap, Format::Bddf, Filter::new())).unwrap();
    assert!(again.problems().is_empty(), "{:?}", again.problems());
    assert_eq!(bddf_channels(&again), bddf_channels(&bddf));
    assert_eq!(again.metadata().unwrap(), bddf.metadata().unwrap());
    // Every block, in log-time order (the conversion's order), with its bytes and time: POD
    // blocks keep their boundaries.
    let mut expected = blocks(&bddf);
    expected.sort_by_key(|b| b.1);
    let mut got = blocks(&again);
    got.sort_by_key(|b| b.1);
    assert_eq!(got, expected);
}

#[test]
fn mcap_and_bags_through_bddf_come_back() {
    for (file, filter) in [
        ("samples/demo-zstd.mcap", Filter::new()),
        ("bags/generated/ros_comm/ref_bz2.bag", Filter::new()),
    ] {
        let source = open(testdata::path(file)).unwrap();
        let bddf = open_bytes(convert_to(&source, Format::Bddf, filter.clone())).unwrap();
        assert_eq!(bddf.format(), Format::Bddf);
        // Channels come back with topic, encoding, schema and metadata.
        for (a, b) in source.channels().iter().zip(bddf.channels()) {
            assert_eq!(
                (&a.topic, &a.message_encoding, &a.metadata),
                (&b.topic, &b.message_encoding, &b.metadata),
                "{file}"
            );
            assert_eq!(
                a.schema.as_ref().map(|s| (&s.name, &s.encoding, &s.data)),
                b.schema.as_ref().map(|s| (&s.name, &s.encoding, &s.data)),
                "{file}"
            );
        }
        let all = |log: &Log| -> Vec<(String, u64, Option<u64>, Option<u32>, Vec<u8>)> {
            log.messages()
                .iter()
                .unwrap()
                .map(|m| {
                    let m = m.unwrap();
                    (
                        m.channel.topic.clone(),
                        m.log_time_ns,
                        m.publish_time_ns,
                        m.sequence,
                        m.data.to_vec(),
                    )
                })
                .collect()
        };
        assert_eq!(all(&bddf), all(&source), "{file}");
        let back_format = source.format();
        let back = open_bytes(convert_to(&bddf, back_format, Filter::new())).unwrap();
        assert_eq!(all(&back), all(&source), "{file}");
    }
}
