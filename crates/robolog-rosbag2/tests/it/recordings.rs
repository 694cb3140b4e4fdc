//! The real recordings under testdata/rosbag2 (written by ROS 2's own rosbag2), read with the
//! counts, times and topics rosbags 0.11.9 reports for them.

use robolog_rosbag2::{Bag, BagKind, Definition, MetadataSource, Order, StorageId};
use robolog_testkit::testdata;

/// (path, storage, message count, first time, last time, [(topic, type, count)]).
type Expected = (
    &'static str,
    StorageId,
    u64,
    Option<u64>,
    Option<u64>,
    &'static [(&'static str, &'static str, u64)],
);

const RECORDINGS: &[Expected] = &[
    (
        "sqlite3-talker",
        StorageId::Sqlite3,
        20,
        Some(1_585_866_235_112_411_371),
        Some(1_585_866_239_643_508_139),
        &[
            ("/topic", "std_msgs/msg/String", 10),
            ("/rosout", "rcl_interfaces/msg/Log", 10),
            ("/parameter_events", "rcl_interfaces/msg/ParameterEvent", 0),
        ],
    ),
    (
        "mcap-talker",
        StorageId::Mcap,
        20,
        Some(1_585_866_235_112_411_371),
        Some(1_585_866_239_643_508_139),
        &[
            ("/topic", "std_msgs/msg/String", 10),
            ("/rosout", "rcl_interfaces/msg/Log", 10),
            ("/parameter_events", "rcl_interfaces/msg/ParameterEvent", 0),
        ],
    ),
    (
        "sqlite3-convert_b",
        StorageId::Sqlite3,
        75,
        Some(0),
        Some(222_000_000),
        &[
            ("c_strings", "test_msgs/msg/Strings", 50),
            ("a_empty", "test_msgs/msg/Empty", 25),
        ],
    ),
    (
        "mcap-convert_a",
        StorageId::Mcap,
        150,
        // rosbags says 1000000 (from the file's Statistics record), but the first message is
        // received at 0, as the chunk index says.
        Some(0),
        Some(100_000_000),
        &[
            ("a_empty", "test_msgs/msg/Empty", 100),
            ("b_basictypes", "test_msgs/msg/BasicTypes", 50),
        ],
    ),
    (
        "mcap-service_events",
        StorageId::Mcap,
        10,
        Some(1_699_345_836_270_074_454),
        Some(1_699_345_836_340_728_398),
        &[
            (
                "/events/write_split",
                "rosbag2_interfaces/msg/WriteSplitEvent",
                0,
            ),
            (
                "/test_service1/_service_event",
                "test_msgs/srv/BasicTypes_Event",
                4,
            ),
            (
                "/test_service2/_service_event",
                "test_msgs/srv/BasicTypes_Event",
                4,
            ),
            ("/test_topic1", "test_msgs/msg/Strings", 1),
            ("/test_topic2", "test_msgs/msg/Strings", 1),
        ],
    ),
    (
        "empty_bag",
        StorageId::Sqlite3,
        0,
        None,
        None,
        &[
            ("/parameter_events", "rcl_interfaces/msg/ParameterEvent", 0),
            ("/rosout", "rcl_interfaces/msg/Log", 0),
        ],
    ),
    (
        "files/only_topics.mcap",
        StorageId::Mcap,
        7,
        Some(1_697_521_620_031_724_098),
        Some(1_697_521_620_038_262_023),
        &[
            ("/rosout", "rcl_interfaces/msg/Log", 0),
            ("/parameter_events", "rcl_interfaces/msg/ParameterEvent", 7),
            (
                "/events/write_split",
                "rosbag2_interfaces/msg/WriteSplitEvent",
                0,
            ),
        ],
    ),
    (
        "files/only_services.mcap",
        StorageId::Mcap,
        12,
        Some(1_697_521_953_726_475_197),
        Some(1_697_521_956_226_579_212),
        &[(
            "/add_two_ints/_service_event",
            "example_interfaces/srv/AddTwoInts_Event",
            12,
        )],
    ),
    (
        "files/topics_and_services.db3",
        StorageId::Sqlite3,
        13,
        Some(1_697_522_387_465_250_790),
        Some(1_697_522_388_973_342_699),
        &[
            ("/parameter_events", "rcl_interfaces/msg/ParameterEvent", 7),
            (
                "/events/write_split",
                "rosbag2_interfaces/msg/WriteSplitEvent",
                0,
            ),
            (
                "/add_two_ints2/_service_event",
                "example_interfaces/srv/AddTwoInts_Event",
                0,
            ),
            (
                "/add_two_ints/_service_event",
                "example_interfaces/srv/AddTwoInts_Event",
                6,
            ),
            ("/rosout", "rcl_interfaces/msg/Log", 0),
        ],
    ),
    (
        "files/topics_and_services.mcap",
        StorageId::Mcap,
        13,
        Some(1_697_522_263_121_459_207),
        Some(1_697_522_264_629_347_866),
        &[
            ("/rosout", "rcl_interfaces/msg/Log", 0),
            ("/parameter_events", "rcl_interfaces/msg/ParameterEvent", 7),
            (
                "/events/write_split",
                "rosbag2_interfaces/msg/WriteSplitEvent",
                0,
            ),
            (
                "/add_two_ints2/_service_event",
                "example_interfaces/srv/AddTwoInts_Event",
                0,
            ),
            (
                "/add_two_ints/_service_event",
                "example_interfaces/srv/AddTwoInts_Event",
                6,
            ),
        ],
    ),
];

#[test]
fn every_recording_reads_with_its_counts_times_and_topics() {
    for &(path, storage, count, start, end, topics) in RECORDINGS {
        let bag = Bag::open(testdata::path("rosbag2").join(path))
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(bag.storage(), storage, "{path}");
        assert_eq!(bag.message_count(), count, "{path}");
        assert_eq!((bag.start_ns(), bag.end_ns()), (start, end), "{path}");
        let got: Vec<(&str, &str, u64)> = bag
            .topics()
            .iter()
            .map(|t| (t.name(), t.type_name(), t.message_count))
            .collect();
        assert_eq!(got, topics, "{path}");
        let warnings: Vec<String> = bag
            .problems()
            .iter()
            .filter(|p| p.severity >= robolog_rosbag2::Severity::Warning)
            .map(|p| p.message.clone())
            .collect();
        if path == "mcap-convert_a" {
            assert_eq!(warnings.len(), 1, "{warnings:?}");
            assert!(warnings[0].starts_with("the Statistics record says messages from 1000000 to 100000000 ns, the chunk indexes from 0 to 100000000 ns"), "{warnings:?}");
        } else {
            assert_eq!(warnings, Vec::<String>::new(), "{path}");
        }
        let lone = path.starts_with("files/");
        assert_eq!(
            bag.kind(),
            if lone {
                BagKind::File
            } else {
                BagKind::Directory
            },
            "{path}"
        );
        assert_eq!(
            *bag.metadata_source(),
            if lone {
                MetadataSource::Storage
            } else {
                MetadataSource::File
            },
            "{path}"
        );

        // Every message, in time order, each counted on its topic.
        let messages: Vec<_> = bag
            .messages()
            .iter()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(messages.len() as u64, count, "{path}");
        assert!(
            messages.windows(2).all(|w| w[0].log_time <= w[1].log_time),
            "{path}"
        );
        assert_eq!(messages.first().map(|m| m.log_time), start, "{path}");
        assert_eq!(messages.last().map(|m| m.log_time), end, "{path}");
        for t in bag.topics() {
            let n = messages.iter().filter(|m| m.topic == t.id).count() as u64;
            assert_eq!(n, t.message_count, "{path} {}", t.name());
        }
        // CDR: every payload starts with an encapsulation header.
        assert!(
            messages.iter().all(|m| m.data.len() >= 4 && m.data[0] == 0),
            "{path}"
        );
    }
}

#[test]
fn definitions_come_from_message_definitions_or_mcap_schemas() {
    let bag = Bag::open(testdata::path("rosbag2/files/topics_and_services.db3")).unwrap();
    assert_eq!(bag.files()[0].sqlite_schema_version, Some(4));
    assert_eq!(bag.ros_distro(), Some("rolling"));
    let service = bag
        .topics()
        .iter()
        .find(|t| t.name() == "/add_two_ints/_service_event")
        .unwrap();
    assert!(service.is_service_event());
    let (encoding, text) = service.definition.stored().unwrap();
    assert_eq!(encoding, "ros2msg");
    assert!(text.contains("int64 a"), "{text}");

    // Humble-era sqlite (schema 2): no place for definitions.
    let bag = Bag::open(testdata::path("rosbag2/sqlite3-convert_b")).unwrap();
    assert_eq!(bag.files()[0].sqlite_schema_version, Some(2));
    assert!(
        bag.topics()
            .iter()
            .all(|t| t.definition == Definition::NotStored)
    );

    let bag = Bag::open(testdata::path("rosbag2/mcap-talker")).unwrap();
    let topic = bag.topics().iter().find(|t| t.name() == "/topic").unwrap();
    let (encoding, text) = topic.definition.stored().unwrap();
    assert_eq!(encoding, "ros2msg");
    assert!(text.trim_end().ends_with("\nstring data"), "{text}");
}

#[test]
fn topic_and_time_queries() {
    for path in ["sqlite3-talker", "mcap-talker"] {
        let bag = Bag::open(testdata::path("rosbag2").join(path)).unwrap();
        let topic = bag
            .topics()
            .iter()
            .find(|t| t.name() == "/rosout")
            .unwrap()
            .id;
        let all: Vec<u64> = bag
            .messages()
            .topics(["/rosout"])
            .iter()
            .unwrap()
            .map(|m| m.unwrap().log_time)
            .collect();
        assert_eq!(all.len(), 10);
        let (from, to) = (all[2], all[6]);
        let some: Vec<_> = bag
            .messages()
            .topic_ids([topic])
            .time_range(from..to)
            .iter()
            .unwrap()
            .map(|m| m.unwrap())
            .collect();
        assert_eq!(
            some.iter().map(|m| m.log_time).collect::<Vec<_>>(),
            all[2..6],
            "{path}"
        );
        assert!(some.iter().all(|m| m.topic == topic));
        let file_order = bag.messages().order(Order::File).iter().unwrap().count();
        assert_eq!(file_order, 20);
        assert_eq!(
            bag.messages().topics(["/nothing"]).iter().unwrap().count(),
            0
        );
    }
}
