//! ROS 1 → ROS 2 migration in `convert`: ROS 1 bags written as ROS 2 bags (both storages) and
//! as ROS 2 MCAP files decode to the values of the source, `std_msgs/Header` without `seq` and
//! `time`/`duration` as `builtin_interfaces` messages; types without a ROS 2 counterpart are
//! refused by name before anything is written; the way back to ROS 1 gives the source again.

use robolog::migrate::{Distro, Migration, RosVersion};
use robolog::{
    ConvertOptions, Decoder, Error, Format, Log, Order, Output, WriterOptions, convert,
    create_writer, open,
};
use robolog_testkit::testdata;
use serde_json::{Map, Value};

/// (topic, log time, decoded message as JSON) of every message, in log-time order (ties by
/// topic, so that the order does not depend on how a format breaks them).
fn decoded(log: &Log) -> Vec<(String, u64, Value)> {
    let mut decoder = Decoder::new();
    let mut out: Vec<(String, u64, Value)> = log
        .messages()
        .order(Order::LogTime)
        .iter()
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            let json = decoder.decode(&m).unwrap().to_json();
            (
                m.channel.topic.clone(),
                m.log_time_ns,
                serde_json::from_str(&json).unwrap(),
            )
        })
        .collect();
    out.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    out
}

/// A ROS 1 value as ROS 2 has it: headers without `seq`, times with `nanosec`.
fn as_ros2(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let is_header = map.len() == 3
                && ["seq", "stamp", "frame_id"]
                    .iter()
                    .all(|k| map.contains_key(*k));
            let is_time = map.len() == 2 && map.contains_key("sec") && map.contains_key("nsec");
            let mut out = Map::new();
            for (key, value) in map {
                if is_header && key == "seq" {
                    continue;
                }
                let key = if is_time && key == "nsec" {
                    "nanosec".to_owned()
                } else {
                    key
                };
                out.insert(key, as_ros2(value));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(as_ros2).collect()),
        other => other,
    }
}

/// A ROS 1 value with every header's `seq` zero (what comes back from ROS 2).
fn seq_zeroed(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let is_header = map.len() == 3
                && ["seq", "stamp", "frame_id"]
                    .iter()
                    .all(|k| map.contains_key(*k));
            Value::Object(
                map.into_iter()
                    .map(|(k, v)| {
                        if is_header && k == "seq" {
                            (k, Value::from(0))
                        } else {
                            (k, seq_zeroed(v))
                        }
                    })
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(seq_zeroed).collect()),
        other => other,
    }
}

/// ROS 1 bags of the test data with only types ROS 2 has or that are the user's own.
const BAGS: [&str; 6] = [
    "bags/generated/ros_comm/ref_none.bag",
    "bags/generated/rosbags/rosbags_lz4.bag",
    "bags/upstream/embag/array_test.bag",
    "bags/upstream/rosbag.js/example-unsorted-chunks.bag",
    "bags/upstream/swri-bag-reader-java/Float64MultiArray.bag",
    "bags/upstream/swri-bag-reader-java/PointCloud2.bag",
];

fn rosbag2_options(storage: robolog::rosbag2::StorageId) -> WriterOptions {
    WriterOptions::Rosbag2(robolog::rosbag2::WriteOptions::new().storage(storage))
}

#[test]
fn ros1_bags_become_ros2_bags_with_the_values_they_hold() {
    let dir = tempfile::tempdir().unwrap();
    for (i, source) in BAGS.iter().enumerate() {
        let bag = open(testdata::path(source)).unwrap();
        let want: Vec<_> = decoded(&bag)
            .into_iter()
            .map(|(t, time, v)| (t, time, as_ros2(v)))
            .collect();
        assert!(!want.is_empty(), "{source}");
        for storage in [
            robolog::rosbag2::StorageId::Sqlite3,
            robolog::rosbag2::StorageId::Mcap,
        ] {
            let out = dir.path().join(format!("{i}-{storage}"));
            let mut writer =
                create_writer(Output::directory(&out), rosbag2_options(storage)).unwrap();
            let report = convert(&bag, &mut *writer, ConvertOptions::new()).unwrap();
            writer.finish().unwrap();
            assert_eq!(report.messages, want.len() as u64, "{source}");
            let ros2 = open(&out).unwrap();
            assert_eq!(ros2.format(), Format::Rosbag2);
            for channel in ros2.channels() {
                assert_eq!(channel.message_encoding, "cdr", "{source}");
                assert!(channel.type_name().contains("/msg/"), "{source}");
                let schema = channel.schema.as_ref().unwrap();
                assert_eq!(schema.encoding, "ros2msg", "{source}");
                assert!(
                    channel.metadata["topic_type_hash"].starts_with("RIHS01_"),
                    "{source}"
                );
            }
            assert_eq!(decoded(&ros2), want, "{source} {storage}");
        }
    }
}

#[test]
fn migrated_values_are_the_ros2_forms_of_the_ros1_ones() {
    let dir = tempfile::tempdir().unwrap();
    let bag = open(testdata::path("bags/generated/ros_comm/ref_none.bag")).unwrap();
    let out = dir.path().join("bag");
    let mut writer = create_writer(
        Output::directory(&out),
        rosbag2_options(robolog::rosbag2::StorageId::Sqlite3),
    )
    .unwrap();
    convert(&bag, &mut *writer, ConvertOptions::new()).unwrap();
    writer.finish().unwrap();
    let ros2 = open(&out).unwrap();
    let mut types: Vec<_> = ros2
        .channels()
        .iter()
        .map(|c| (c.topic.clone(), c.type_name().to_owned()))
        .collect();
    types.sort();
    assert_eq!(
        types,
        [
            ("/chatter".to_owned(), "std_msgs/msg/String".to_owned()),
            ("/custom".to_owned(), "test_msgs/msg/Custom".to_owned()),
            ("/imu".to_owned(), "sensor_msgs/msg/Imu".to_owned()),
        ]
    );
    // The standard type is the distro's own definition (its hash is rosidl's).
    let imu = ros2.channels().iter().find(|c| c.topic == "/imu").unwrap();
    let standard = robolog::msg::Registry::standard(Distro::Jazzy);
    let imu_type = robolog::msg::TypeName::parse("sensor_msgs/msg/Imu").unwrap();
    assert_eq!(
        imu.metadata["topic_type_hash"],
        standard.type_hash(&imu_type).unwrap()
    );
    // A user's type gets its ROS 1 definition with the builtin time types.
    let custom = ros2
        .channels()
        .iter()
        .find(|c| c.topic == "/custom")
        .unwrap();
    let text = String::from_utf8_lossy(&custom.schema.as_ref().unwrap().data).into_owned();
    assert!(text.contains("builtin_interfaces/Time"), "{text}");
    assert!(!text.contains("\ntime "), "{text}");

    let values = decoded(&ros2);
    let (_, time, first_imu) = values.iter().find(|(t, _, _)| t == "/imu").unwrap();
    assert_eq!(*time, 1_600_000_000_000_000_001);
    assert_eq!(
        first_imu["header"],
        serde_json::json!({"stamp": {"sec": 1_600_000_000, "nanosec": 0}, "frame_id": "imu_link"})
    );
    assert_eq!(first_imu["linear_acceleration"]["z"], 9.81);
    let (_, _, custom) = values
        .iter()
        .rev()
        .find(|(t, _, _)| t == "/custom")
        .unwrap();
    assert_eq!(
        custom["dur"],
        serde_json::json!({"sec": 49, "nanosec": 500})
    );
    assert_eq!(custom["stamp"]["sec"], 1_600_000_000);
    assert_eq!(custom["fixed"], serde_json::json!([1.0, 2.0, 49.0]));
    assert_eq!(custom["header"]["frame_id"], "base");
    assert!(custom["header"].get("seq").is_none());
    // metadata.yaml names the distro whose definitions the bag carries.
    let yaml = std::fs::read_to_string(out.join("metadata.yaml")).unwrap();
    assert!(yaml.contains("ros_distro: jazzy"), "{yaml}");
}

#[test]
fn a_ros1_bag_becomes_a_ros2_mcap_file() {
    let bag = open(testdata::path("bags/generated/ros_comm/ref_lz4.bag")).unwrap();
    let want: Vec<_> = decoded(&bag)
        .into_iter()
        .map(|(t, time, v)| (t, time, as_ros2(v)))
        .collect();
    let mut mcap = create_writer(
        Output::memory(),
        WriterOptions::default_for(Format::Mcap).unwrap(),
    )
    .unwrap();
    let options =
        ConvertOptions::new().migration(Migration::to(RosVersion::Ros2).distro(Distro::Humble));
    convert(&bag, &mut *mcap, options).unwrap();
    let bytes = mcap.finish().unwrap().data.unwrap();
    let reader = robolog::mcap::McapReader::open(bytes.clone()).unwrap();
    assert_eq!(reader.summary().header.as_ref().unwrap().profile, "ros2");
    let ros2 = robolog::open_bytes(bytes).unwrap();
    assert!(ros2.channels().iter().all(|c| c.message_encoding == "cdr"));
    assert_eq!(decoded(&ros2), want);
    // Without a migration the same conversion keeps the ROS 1 messages.
    let mut mcap = create_writer(
        Output::memory(),
        WriterOptions::default_for(Format::Mcap).unwrap(),
    )
    .unwrap();
    convert(&bag, &mut *mcap, ConvertOptions::new()).unwrap();
    let plain = robolog::open_bytes(mcap.finish().unwrap().data.unwrap()).unwrap();
    assert!(
        plain
            .channels()
            .iter()
            .all(|c| c.message_encoding == "ros1")
    );
}

#[test]
fn types_without_a_ros2_counterpart_are_refused_by_name_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let bag = open(testdata::path("bags/upstream/rosbag.js/example-bz2.bag")).unwrap();
    let out = dir.path().join("refused");
    let mut writer = create_writer(
        Output::directory(&out),
        rosbag2_options(robolog::rosbag2::StorageId::Sqlite3),
    )
    .unwrap();
    let err = convert(&bag, &mut *writer, ConvertOptions::new()).unwrap_err();
    let Error::Migration { refused, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(
        refused,
        &["/rosout: rosgraph_msgs/Log (ROS 2 jazzy has no rosgraph_msgs/msg/Log)".to_owned()],
        "{err}"
    );
    drop(writer);
    assert!(!out.exists());
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());

    // On request their own definitions are carried over (as rosbags-convert does); tf's
    // message becomes tf2's.
    let out = dir.path().join("copied");
    let mut writer = create_writer(
        Output::directory(&out),
        rosbag2_options(robolog::rosbag2::StorageId::Mcap),
    )
    .unwrap();
    let options = ConvertOptions::new().migration(Migration::auto().copy_unmatched_types(true));
    let report = convert(&bag, &mut *writer, options).unwrap();
    writer.finish().unwrap();
    assert_eq!(report.messages, 8647);
    let ros2 = open(&out).unwrap();
    let type_of = |topic: &str| {
        ros2.channels()
            .iter()
            .find(|c| c.topic == topic)
            .unwrap()
            .type_name()
            .to_owned()
    };
    assert_eq!(type_of("/tf"), "tf2_msgs/msg/TFMessage");
    assert_eq!(type_of("/tf_static"), "tf2_msgs/msg/TFMessage");
    assert_eq!(type_of("/rosout"), "rosgraph_msgs/msg/Log");
    assert_eq!(type_of("/turtle1/pose"), "turtlesim/msg/Pose");
    let want: Vec<_> = decoded(&bag)
        .into_iter()
        .map(|(t, time, v)| (t, time, as_ros2(v)))
        .collect();
    assert_eq!(decoded(&ros2), want);
}

#[test]
fn a_migrated_bag_comes_back_to_ros1_as_the_original_but_seq() {
    let dir = tempfile::tempdir().unwrap();
    for (i, source) in BAGS.iter().enumerate() {
        let bag = open(testdata::path(source)).unwrap();
        let want: Vec<_> = decoded(&bag)
            .into_iter()
            .map(|(t, time, v)| (t, time, seq_zeroed(v)))
            .collect();
        let out = dir.path().join(format!("{i}"));
        let mut writer = create_writer(
            Output::directory(&out),
            rosbag2_options(robolog::rosbag2::StorageId::Sqlite3),
        )
        .unwrap();
        convert(&bag, &mut *writer, ConvertOptions::new()).unwrap();
        writer.finish().unwrap();
        let ros2 = open(&out).unwrap();
        let mut back = create_writer(
            Output::memory(),
            WriterOptions::default_for(Format::Bag).unwrap(),
        )
        .unwrap();
        convert(&ros2, &mut *back, ConvertOptions::new()).unwrap();
        let ros1 = robolog::open_bytes(back.finish().unwrap().data.unwrap()).unwrap();
        for channel in ros1.channels() {
            let original = bag
                .channels()
                .iter()
                .find(|c| c.topic == channel.topic)
                .unwrap();
            assert_eq!(channel.type_name(), original.type_name(), "{source}");
            assert_eq!(
                channel.metadata["md5sum"], original.metadata["md5sum"],
                "{source}"
            );
        }
        assert_eq!(decoded(&ros1), want, "{source}");
    }
}

#[test]
fn migration_off_refuses_ros1_channels_in_a_ros2_bag() {
    let dir = tempfile::tempdir().unwrap();
    let bag = open(testdata::path("bags/generated/ros_comm/ref_none.bag")).unwrap();
    let out = dir.path().join("out");
    let mut writer = create_writer(
        Output::directory(&out),
        WriterOptions::default_for(Format::Rosbag2).unwrap(),
    )
    .unwrap();
    let options = ConvertOptions::new().migration(Migration::off());
    let err = convert(&bag, &mut *writer, options).unwrap_err();
    assert!(
        err.to_string()
            .contains("a ROS 2 bag holds CDR messages, not ros1"),
        "{err}"
    );
    drop(writer);
    assert!(!out.exists());
}

/// rosbags reads what robolog migrates as it reads what `rosbags-convert` migrates from the
/// same bag (with the destination typestore of the same distro): the same topics, types, log
/// times and values (tests/it/interop/compare_ros2_bags.py).
#[test]
fn migrated_bags_read_in_rosbags_as_rosbags_convert_output() {
    let Some(python) = robolog_testkit::interop::python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<std::ffi::OsString> = Vec::new();
    let sources = BAGS
        .iter()
        .copied()
        .chain(["bags/upstream/rosbag.js/example-bz2.bag"]);
    let mut pairs = 0;
    for (i, source) in sources.enumerate() {
        let bag = open(testdata::path(source)).unwrap();
        let reference = dir.path().join(format!("{i}-rosbags"));
        let src = testdata::path(source);
        robolog_testkit::interop::rosbags_convert(
            &python,
            &[
                "--src".as_ref(),
                src.as_os_str(),
                "--dst".as_ref(),
                reference.as_os_str(),
                "--dst-typestore".as_ref(),
                "ros2_jazzy".as_ref(),
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let migration = Migration::auto().copy_unmatched_types(true);
        for storage in [
            robolog::rosbag2::StorageId::Sqlite3,
            robolog::rosbag2::StorageId::Mcap,
        ] {
            let out = dir.path().join(format!("{i}-{storage}"));
            let mut writer =
                create_writer(Output::directory(&out), rosbag2_options(storage)).unwrap();
            let options = ConvertOptions::new().migration(migration.clone());
            convert(&bag, &mut *writer, options).unwrap();
            writer.finish().unwrap();
            args.push(reference.clone().into_os_string());
            args.push(out.into_os_string());
            pairs += 1;
        }
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/interop/compare_ros2_bags.py");
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let output =
        robolog_testkit::interop::run(&python, &script, &args).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(output.lines().count(), pairs);
    let mut total = 0;
    for line in output.lines() {
        let result: Value = serde_json::from_str(line).unwrap();
        assert_eq!(result["mismatches"], serde_json::json!([]), "{line}");
        assert_eq!(result["messages"], result["our_messages"], "{line}");
        assert_eq!(result["types"], result["our_types"], "{line}");
        total += result["messages"].as_u64().unwrap();
    }
    // 150 in each generated bag, 8647 in example-bz2, … (each counted once per storage).
    assert_eq!(total, 2 * (150 + 150 + 20 + 3 + 1 + 1 + 8647), "{output}");
}

/// ROS 2 messages in big-endian CDR or plain XCDR2 (which some middlewares write) migrate to
/// ROS 1 as their little-endian XCDR1 forms do.
#[test]
fn every_cdr_encapsulation_migrates_to_ros1_as_little_endian_does() {
    use robolog_cdr::{Encapsulation, Plan};

    let bag = open(testdata::path("bags/generated/ros_comm/ref_none.bag")).unwrap();
    let to_ros1 = |log: &Log| {
        let mut out = create_writer(
            Output::memory(),
            WriterOptions::default_for(Format::Bag).unwrap(),
        )
        .unwrap();
        convert(log, &mut *out, ConvertOptions::new()).unwrap();
        robolog::open_bytes(out.finish().unwrap().data.unwrap()).unwrap()
    };
    let mut mcap = create_writer(
        Output::memory(),
        WriterOptions::default_for(Format::Mcap).unwrap(),
    )
    .unwrap();
    let options = ConvertOptions::new().migration(Migration::to(RosVersion::Ros2));
    convert(&bag, &mut *mcap, options).unwrap();
    let ros2 = robolog::open_bytes(mcap.finish().unwrap().data.unwrap()).unwrap();
    let want = decoded(&to_ros1(&ros2));
    assert_eq!(want.len(), 150);
    for encapsulation in [
        Encapsulation::CdrBe,
        Encapsulation::PlainCdr2Le,
        Encapsulation::PlainCdr2Be,
    ] {
        let mut writer = create_writer(
            Output::memory(),
            WriterOptions::default_for(Format::Mcap).unwrap(),
        )
        .unwrap();
        let mut ids = std::collections::HashMap::new();
        for message in ros2.messages().iter().unwrap() {
            let message = message.unwrap();
            let channel = &message.channel;
            let (id, plan) = ids.entry(channel.id).or_insert_with(|| {
                let schema = channel.schema.as_deref().unwrap();
                let plan = Plan::from_schema(
                    &schema.name,
                    &schema.encoding,
                    std::str::from_utf8(&schema.data).unwrap(),
                )
                .unwrap();
                (writer.add_channel(channel).unwrap(), plan)
            });
            let tree = plan.decode(&message.data).unwrap().into_tree();
            let data = plan.encode_as(&tree, encapsulation).unwrap();
            assert_eq!(&data[..4], &encapsulation.header(), "{encapsulation:?}");
            let message = robolog::Message {
                data: robolog::Bytes::from(data),
                ..message.clone()
            };
            writer.write_message(*id, &message).unwrap();
        }
        let other = robolog::open_bytes(writer.finish().unwrap().data.unwrap()).unwrap();
        assert_eq!(decoded(&to_ros1(&other)), want, "{encapsulation:?}");
    }
}

/// A log of `format` in memory holding `data` as the one message of `channel`.
fn one_message_log(
    format: Format,
    channel: &robolog::Channel,
    template: &robolog::Message,
    data: Vec<u8>,
) -> Log {
    let mut writer = create_writer(
        Output::memory(),
        WriterOptions::default_for(format).unwrap(),
    )
    .unwrap();
    let id = writer.add_channel(channel).unwrap();
    let message = robolog::Message {
        data: robolog::Bytes::from(data),
        ..template.clone()
    };
    writer.write_message(id, &message).unwrap();
    robolog::open_bytes(writer.finish().unwrap().data.unwrap()).unwrap()
}

/// Every cut and every corrupted byte of a message of each type, both ways: an error or a
/// message, never a panic; a cut ROS 1 message is always an error.
#[test]
fn damaged_messages_are_errors_not_panics() {
    let bag = open(testdata::path("bags/generated/ros_comm/ref_none.bag")).unwrap();
    let mut mcap = create_writer(
        Output::memory(),
        WriterOptions::default_for(Format::Mcap).unwrap(),
    )
    .unwrap();
    let options = ConvertOptions::new().migration(Migration::to(RosVersion::Ros2));
    convert(&bag, &mut *mcap, options).unwrap();
    let ros2 = robolog::open_bytes(mcap.finish().unwrap().data.unwrap()).unwrap();
    let mut errors = 0;
    for (source, format, to) in [
        (&bag, Format::Bag, RosVersion::Ros2),
        (&ros2, Format::Mcap, RosVersion::Ros1),
    ] {
        for channel in source.channels() {
            let template = source
                .messages()
                .iter()
                .unwrap()
                .map(|m| m.unwrap())
                .filter(|m| m.channel.topic == channel.topic)
                .last()
                .unwrap();
            let data = template.data.to_vec();
            let mut cases: Vec<(bool, Vec<u8>)> = (0..data.len())
                .map(|n| (true, data[..n].to_vec()))
                .collect();
            for i in 0..data.len() {
                for flip in [0xff, 0x80] {
                    let mut bytes = data.clone();
                    bytes[i] ^= flip;
                    cases.push((false, bytes));
                }
            }
            for (cut, bytes) in cases {
                let log = one_message_log(format, channel, &template, bytes);
                let mut out = create_writer(
                    Output::memory(),
                    WriterOptions::default_for(Format::Mcap).unwrap(),
                )
                .unwrap();
                let result = convert(
                    &log,
                    &mut *out,
                    ConvertOptions::new().migration(Migration::to(to)),
                );
                if result.is_err() {
                    errors += 1;
                }
                if cut && to == RosVersion::Ros2 {
                    assert!(result.is_err(), "{} cut", channel.topic);
                }
            }
        }
    }
    assert!(errors > 1000, "{errors}");
}
