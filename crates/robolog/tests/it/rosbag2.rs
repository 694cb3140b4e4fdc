//! ROS 2 bags through the facade: opened from a directory or a `.db3`, converted to and from
//! MCAP and back, checked and recovered.

use robolog::{
    ConvertOptions, Format, Order, Output, Severity, WriterOptions, check, convert, create_writer,
    open, recover_file,
};
use robolog_testkit::testdata;

/// (topic, log time, payload) of every message, in log-time order.
fn messages(log: &robolog::Log) -> Vec<(String, u64, Vec<u8>)> {
    log.messages()
        .order(Order::LogTime)
        .iter()
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (m.channel.topic.clone(), m.log_time_ns, m.data.to_vec())
        })
        .collect()
}

#[test]
fn a_bag_directory_and_a_lone_db3_open_as_rosbag2() {
    let log = open(testdata::path("rosbag2/sqlite3-talker")).unwrap();
    assert_eq!(log.format(), Format::Rosbag2);
    assert!(log.problems().is_empty(), "{:?}", log.problems());
    let summary = log.summary().unwrap();
    assert_eq!(summary.message_count, 20);
    assert_eq!(summary.start_ns, Some(1_585_866_235_112_411_371));
    assert_eq!(summary.properties["storage"], "sqlite3");
    assert_eq!(summary.properties["ros_distro"], "rolling");
    let topic = &log.channels()[0];
    assert_eq!(
        (topic.topic.as_str(), topic.type_name()),
        ("/topic", "std_msgs/msg/String")
    );
    assert_eq!(topic.message_encoding, "cdr");
    assert_eq!(topic.schema.as_ref().unwrap().encoding, "ros2msg");
    assert!(topic.metadata["offered_qos_profiles"].starts_with("- history: unknown\n"));

    let lone = open(testdata::path("rosbag2/files/topics_and_services.db3")).unwrap();
    assert_eq!(lone.format(), Format::Rosbag2);
    assert_eq!(lone.summary().unwrap().message_count, 13);
    let some: Vec<_> = lone
        .messages()
        .topics(["/add_two_ints/*"])
        .iter()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(some.len(), 6);
    assert!(
        robolog::open_bytes(
            std::fs::read(testdata::path("rosbag2/files/topics_and_services.db3")).unwrap()
        )
        .is_err()
    );
}

#[test]
fn rosbag2_to_mcap_to_rosbag2_keeps_every_message_and_topic() {
    let dir = tempfile::tempdir().unwrap();
    for source in [
        "rosbag2/sqlite3-talker",
        "rosbag2/mcap-service_events",
        "rosbag2/files/topics_and_services.db3",
    ] {
        let input = open(testdata::path(source)).unwrap();
        let want = messages(&input);

        let mut mcap = create_writer(
            Output::memory(),
            WriterOptions::default_for(Format::Mcap).unwrap(),
        )
        .unwrap();
        convert(&input, &mut *mcap, ConvertOptions::new()).unwrap();
        let bytes = mcap.finish().unwrap().data.unwrap();
        let via_mcap = robolog::open_bytes(bytes.clone()).unwrap();
        assert_eq!(messages(&via_mcap), want, "{source}");
        let mcap_file = dir.path().join("x.mcap");
        std::fs::write(&mcap_file, &bytes).unwrap();
        // rosbags reads an MCAP file only with profile ros2: the writer picks it for cdr.
        let header = robolog::mcap::McapReader::open(bytes).unwrap();
        assert_eq!(header.summary().header.as_ref().unwrap().profile, "ros2");

        for storage in [
            robolog::rosbag2::StorageId::Sqlite3,
            robolog::rosbag2::StorageId::Mcap,
        ] {
            let out = dir
                .path()
                .join(format!("{}-{storage}", source.replace('/', "_")));
            let options =
                WriterOptions::Rosbag2(robolog::rosbag2::WriteOptions::new().storage(storage));
            let mut writer = create_writer(Output::directory(&out), options).unwrap();
            convert(&via_mcap, &mut *writer, ConvertOptions::new()).unwrap();
            writer.finish().unwrap();
            let back = open(&out).unwrap();
            assert_eq!(messages(&back), want, "{source} {storage}");
            let names = |log: &robolog::Log| {
                let mut v: Vec<(String, String, String)> = log
                    .channels()
                    .iter()
                    .map(|c| {
                        (
                            c.topic.clone(),
                            c.type_name().to_owned(),
                            String::from_utf8_lossy(&c.schema.as_ref().unwrap().data).into_owned(),
                        )
                    })
                    .collect();
                v.sort();
                v
            };
            assert_eq!(names(&back), names(&input), "{source} {storage}");
            let qos = |log: &robolog::Log| {
                let mut v: Vec<String> = log
                    .channels()
                    .iter()
                    .map(|c| c.metadata["offered_qos_profiles"].clone())
                    .collect();
                v.sort();
                v
            };
            assert_eq!(qos(&back), qos(&input), "{source} {storage}");
        }
    }
}

#[test]
fn check_and_recover_a_bag_directory() {
    let report = check(testdata::path("rosbag2/mcap-talker")).unwrap();
    assert_eq!(report.format, Format::Rosbag2);
    assert_eq!(report.messages, 20);
    assert!(report.problems.is_empty(), "{:?}", report.problems);

    // A copy without metadata.yaml: read with a warning, recovered into a complete bag.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("talker");
    std::fs::create_dir(&copy).unwrap();
    std::fs::copy(
        testdata::path("rosbag2/sqlite3-talker/talker.db3"),
        copy.join("talker.db3"),
    )
    .unwrap();
    let report = check(&copy).unwrap();
    assert_eq!(report.messages, 20);
    assert_eq!(report.worst(), Some(Severity::Warning));
    assert!(
        report.problems[0].message.contains("no metadata.yaml"),
        "{:?}",
        report.problems
    );
    assert_eq!(report.problems[0].kind, robolog::ProblemKind::Metadata);
    assert_eq!(
        report.problems[0].path.as_deref(),
        Some(copy.join("metadata.yaml").as_path())
    );
    assert!(
        report.problems[0]
            .to_string()
            .starts_with("warning: metadata.yaml: no metadata.yaml"),
        "{}",
        report.problems[0]
    );
    let out = dir.path().join("fixed");
    let recovered = recover_file(&copy, &out).unwrap();
    assert_eq!(
        (recovered.messages_recovered, recovered.messages_lost),
        (20, 0)
    );
    assert_eq!(recovered.details["metadata_rebuilt"], 1);
    let fixed = open(&out).unwrap();
    assert!(fixed.problems().is_empty(), "{:?}", fixed.problems());
    assert_eq!(
        messages(&fixed),
        messages(&open(testdata::path("rosbag2/sqlite3-talker")).unwrap())
    );
}

#[test]
fn a_bag_without_definitions_takes_them_from_the_chosen_distro() {
    use robolog::msg::Distro;

    // sqlite schema without message_definitions, metadata.yaml v5 without a distro.
    let path = testdata::path("rosbag2/sqlite3-convert_b");
    let plain = open(&path).unwrap();
    let strings = |log: &robolog::Log| {
        let channel = log
            .channels()
            .iter()
            .find(|c| c.topic == "c_strings")
            .unwrap()
            .clone();
        channel.schema.clone().unwrap()
    };
    assert!(strings(&plain).data.is_empty());
    let log = robolog::OpenOptions::new()
        .distro(Distro::Humble)
        .open(&path)
        .unwrap();
    let schema = strings(&log);
    assert_eq!(schema.encoding, "ros2msg");
    let text = String::from_utf8(schema.data.to_vec()).unwrap();
    let standard = robolog::msg::Registry::standard(Distro::Humble);
    let name = robolog::msg::TypeName::parse("test_msgs/msg/Strings").unwrap();
    assert_eq!(text, standard.bundle_text(&name).unwrap());
    // Every message decodes with it, and a conversion carries the definition over.
    let mut decoder = robolog::Decoder::new();
    let mut decoded = 0;
    for message in log.messages().iter().unwrap() {
        let message = message.unwrap();
        let json = decoder.decode(&message).unwrap().to_json();
        if message.channel.topic == "c_strings" {
            let json: serde_json::Value = serde_json::from_str(&json).unwrap();
            assert!(json["string_value"].is_string(), "{json}");
            decoded += 1;
        }
    }
    assert_eq!(decoded, 50);
    let mut mcap = create_writer(
        Output::memory(),
        WriterOptions::default_for(Format::Mcap).unwrap(),
    )
    .unwrap();
    convert(&log, &mut *mcap, ConvertOptions::new()).unwrap();
    let copy = robolog::open_bytes(mcap.finish().unwrap().data.unwrap()).unwrap();
    assert_eq!(strings(&copy).data, schema.data);
}

#[test]
fn a_type_no_distro_defines_is_named_when_the_bag_has_no_definition() {
    use robolog::rosbag2::{Definition, StorageId, TopicMetadata, WriteOptions, Writer};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bag");
    let mut writer =
        Writer::create(&path, WriteOptions::new().storage(StorageId::Sqlite3)).unwrap();
    let topic = writer
        .add_topic(
            TopicMetadata {
                name: "/thing".into(),
                type_name: "my_pkg/msg/Thing".into(),
                serialization_format: "cdr".into(),
                ..Default::default()
            },
            Definition::NotFound {
                encoding: String::new(),
            },
        )
        .unwrap();
    writer.write(topic, 5, b"\0\x01\0\0\x01\0\0\0").unwrap();
    writer.finish().unwrap();
    let log = robolog::OpenOptions::new()
        .distro(robolog::msg::Distro::Jazzy)
        .open(&path)
        .unwrap();
    let problems: Vec<String> = log.problems().iter().map(|p| p.to_string()).collect();
    assert!(
        problems
            .iter()
            .any(|p| p.contains("my_pkg/msg/Thing")
                && p.contains("no bundled ROS 2 distro defines it")),
        "{problems:?}"
    );
    let message = log.messages().iter().unwrap().next().unwrap().unwrap();
    let err = robolog::Decoder::new().decode(&message).unwrap_err();
    assert!(err.to_string().contains("my_pkg/msg/Thing"), "{err}");
}
