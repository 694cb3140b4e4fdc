//! RIHS01 type hashes of ROS 2 channels: computed from the recordings' definitions (equal to
//! what rosbag2 recorded), completed from the bundled interfaces, and `check` warning about a
//! recorded hash that differs from the definition's.

use std::collections::BTreeMap;
use std::sync::Arc;

use robolog::msg::{Distro, Registry, TypeName};
use robolog::{
    Bytes, Channel, Format, Message, Output, Severity, WriterOptions, check, check_bytes,
    create_writer, open, type_hash,
};
use robolog_testkit::testdata;

fn channel(type_name: &str, encoding: &str, text: &str, hash: Option<&str>) -> Channel {
    let mut metadata = BTreeMap::new();
    if let Some(hash) = hash {
        metadata.insert("topic_type_hash".to_owned(), hash.to_owned());
    }
    Channel {
        id: 3,
        topic: "/pose".into(),
        message_encoding: "cdr".into(),
        schema: Some(Arc::new(robolog::Schema {
            id: 1,
            name: type_name.into(),
            encoding: encoding.into(),
            data: Bytes::copy_from_slice(text.as_bytes()),
        })),
        metadata,
    }
}

fn type_hash_problems(report: &robolog::CheckReport) -> Vec<String> {
    report
        .problems
        .iter()
        .filter(|p| p.message.contains("type hash"))
        .map(|p| p.to_string())
        .collect()
}

#[test]
fn every_channel_of_the_recordings_hashes_to_what_rosbag2_recorded() {
    let mut per_file = Vec::new();
    for path in [
        "rosbag2/files/only_services.mcap",
        "rosbag2/files/only_topics.mcap",
        "rosbag2/files/topics_and_services.mcap",
        "rosbag2/files/topics_and_services.db3",
        "rosbag2/mcap-service_events",
        "rosbag2/mcap-talker",
        "rosbag2/sqlite3-talker",
    ] {
        let path = testdata::path(path);
        let log = open(&path).unwrap();
        let mut compared = 0;
        for channel in log.channels() {
            let recorded = channel
                .metadata
                .get("topic_type_hash")
                .filter(|h| !h.is_empty());
            if let (Some(recorded), Some(computed)) = (recorded, type_hash(channel)) {
                assert_eq!(&computed.unwrap(), recorded, "{}", channel.topic);
                compared += 1;
            }
        }
        let report = check(&path).unwrap();
        assert_eq!(
            type_hash_problems(&report),
            Vec::<String>::new(),
            "{path:?}"
        );
        per_file.push(compared);
    }
    // Every channel with a recorded hash and a definition; the talker bags predate type hashes.
    assert_eq!(per_file, [1, 3, 5, 5, 5, 0, 0]);
}

#[test]
fn only_ros2_definitions_have_a_hash() {
    let ros1 = Channel {
        message_encoding: "ros1".into(),
        ..channel("std_msgs/String", "ros1msg", "string data\n", None)
    };
    assert!(type_hash(&ros1).is_none());
    // Recorded without a definition: nothing to compute from.
    assert!(type_hash(&channel("std_msgs/msg/String", "", "", Some("RIHS01_00"))).is_none());
    let bad = type_hash(&channel("my_pkg/msg/Bad", "ros2msg", "int32 x y z\n", None))
        .unwrap()
        .unwrap_err();
    assert!(bad.to_string().contains("my_pkg/msg/Bad"), "{bad}");
}

#[test]
fn a_definition_without_its_sections_is_completed_by_the_distro_that_gives_the_recorded_hash() {
    let name = TypeName::parse("geometry_msgs/PoseStamped").unwrap();
    let root = "std_msgs/Header header\nPose pose\n";
    let jazzy = Registry::standard(Distro::Jazzy).type_hash(&name).unwrap();
    let humble = Registry::standard(Distro::Humble).type_hash(&name).unwrap();
    let alone = channel("geometry_msgs/msg/PoseStamped", "ros2msg", root, None);
    let newest = Registry::standard(*Distro::ALL.last().unwrap())
        .type_hash(&name)
        .unwrap();
    assert_eq!(type_hash(&alone).unwrap().unwrap(), newest);
    for recorded in [&jazzy, &humble] {
        let with = channel(
            "geometry_msgs/msg/PoseStamped",
            "ros2msg",
            root,
            Some(recorded),
        );
        assert_eq!(&type_hash(&with).unwrap().unwrap(), recorded);
    }
}

/// The RIHS01 hash of `std_msgs/msg/String` (published by ROS 2), and one digit off it.
const STRING_HASH: &str = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";
const WRONG_HASH: &str = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a19";

/// An MCAP file with one ROS 2 channel whose recorded hash is `hash`.
fn mcap_with_hash(hash: &str) -> Bytes {
    let channel = channel(
        "std_msgs/msg/String",
        "ros2msg",
        "string data\n",
        Some(hash),
    );
    let mut writer = create_writer(
        Output::memory(),
        WriterOptions::default_for(Format::Mcap).unwrap(),
    )
    .unwrap();
    let id = writer.add_channel(&channel).unwrap();
    let message = Message {
        channel: Arc::new(channel),
        log_time_ns: 1,
        publish_time_ns: Some(1),
        sequence: Some(0),
        data: Bytes::from_static(b"\0\x01\0\0\x03\0\0\0hi\0"),
    };
    writer.write_message(id, &message).unwrap();
    Bytes::from(writer.finish().unwrap().data.unwrap())
}

#[test]
fn check_warns_about_a_recorded_hash_that_differs_from_the_definition() {
    let right = STRING_HASH;
    let report = check_bytes(mcap_with_hash(right)).unwrap();
    assert_eq!(type_hash_problems(&report), Vec::<String>::new());

    let wrong = WRONG_HASH;
    let report = check_bytes(mcap_with_hash(wrong)).unwrap();
    assert_eq!(
        type_hash_problems(&report),
        [format!(
            "warning: channel 3 (/pose, std_msgs/msg/String): the recorded type hash {wrong} \
             does not match its definition, whose hash is {right}"
        )]
    );
    assert_eq!(report.worst(), Some(Severity::Warning));
    assert!(report.is_valid());
}

#[test]
fn check_warns_about_a_rosbag2_bag_whose_recorded_hash_differs_from_the_definition() {
    let wrong = WRONG_HASH;
    let source = robolog::open_bytes(mcap_with_hash(wrong)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("bag");
    let mut writer = create_writer(
        Output::directory(&bag),
        WriterOptions::default_for(Format::Rosbag2).unwrap(),
    )
    .unwrap();
    robolog::convert(&source, &mut *writer, robolog::ConvertOptions::new()).unwrap();
    writer.finish().unwrap();
    assert_eq!(
        type_hash_problems(&check(&bag).unwrap()),
        [format!(
            "warning: channel 1 (/pose, std_msgs/msg/String): the recorded type hash {wrong} \
             does not match its definition, whose hash is {STRING_HASH}"
        )]
    );
}
