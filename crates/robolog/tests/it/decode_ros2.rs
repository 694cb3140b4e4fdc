//! Decoding ROS 2 (CDR) messages through the facade: the rosbag2 recordings, channels without a
//! schema (the bundled standard interfaces, the distro picked by the recorded type hash),
//! schemas that lack a section, `ros2idl` schemas, and the reasons when nothing works.

use std::collections::BTreeMap;
use std::sync::Arc;

use robolog::cdr::Value;
use robolog::msg::{Distro, Registry, TypeName};
use robolog::{Bytes, Channel, DecodeError, Decoded, Decoder, Message, Schema, open};
use robolog_testkit::testdata;

fn cdr<'a>(decoded: &'a Decoded<'_>) -> &'a robolog::CdrMessage<'a> {
    match decoded {
        Decoded::Cdr(m) => m,
        other => panic!("not a ROS 2 message: {other:?}"),
    }
}

fn channel(type_name: &str, encoding: &str, data: &[u8], hash: Option<&str>) -> Arc<Channel> {
    let schema = Schema {
        id: 1,
        name: type_name.into(),
        encoding: encoding.into(),
        data: Bytes::copy_from_slice(data),
    };
    let mut metadata = BTreeMap::new();
    if let Some(hash) = hash {
        metadata.insert("topic_type_hash".to_owned(), hash.to_owned());
    }
    Arc::new(Channel {
        id: 0,
        topic: "/t".into(),
        message_encoding: "cdr".into(),
        schema: Some(Arc::new(schema)),
        metadata,
    })
}

fn message(channel: &Arc<Channel>, data: Vec<u8>) -> Message {
    Message {
        channel: Arc::clone(channel),
        log_time_ns: 7,
        publish_time_ns: None,
        sequence: None,
        data: Bytes::from(data),
    }
}

#[test]
fn every_message_of_the_rosbag2_recordings_decodes() {
    let files: [(&str, &[(&str, usize)]); 6] = [
        (
            "rosbag2/files/only_services.mcap",
            &[("example_interfaces/srv/AddTwoInts_Event", 12)],
        ),
        (
            "rosbag2/files/only_topics.mcap",
            &[("rcl_interfaces/msg/ParameterEvent", 7)],
        ),
        (
            "rosbag2/files/topics_and_services.mcap",
            &[
                ("example_interfaces/srv/AddTwoInts_Event", 6),
                ("rcl_interfaces/msg/ParameterEvent", 7),
            ],
        ),
        (
            "rosbag2/mcap-convert_a/rewriter_a_0.mcap",
            &[
                ("test_msgs/msg/BasicTypes", 50),
                ("test_msgs/msg/Empty", 100),
            ],
        ),
        (
            "rosbag2/mcap-service_events/bag_with_topics_and_service_events.mcap",
            &[
                ("test_msgs/msg/Strings", 2),
                ("test_msgs/srv/BasicTypes_Event", 8),
            ],
        ),
        (
            "rosbag2/mcap-talker/talker.mcap",
            &[("rcl_interfaces/msg/Log", 10), ("std_msgs/msg/String", 10)],
        ),
    ];
    let mut decoder = Decoder::new();
    for (file, expected) in files {
        let log = open(testdata::path(file)).unwrap();
        let mut counts = BTreeMap::<String, usize>::new();
        let mut strings = Vec::new();
        for message in log.messages().iter().unwrap() {
            let message = message.unwrap();
            let decoded = decoder
                .decode(&message)
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            let m = cdr(&decoded);
            assert!(m.warning().is_none(), "{file}: {:?}", m.warning());
            let json: serde_json::Value = serde_json::from_str(&decoded.to_json()).unwrap();
            assert!(json.is_object());
            if message.channel.topic == "/topic" {
                strings.push(m.get("data").unwrap().as_str().unwrap().to_owned());
            }
            *counts
                .entry(message.channel.type_name().to_owned())
                .or_default() += 1;
        }
        let expected: BTreeMap<String, usize> = expected
            .iter()
            .map(|(t, n)| ((*t).to_owned(), *n))
            .collect();
        assert_eq!(counts, expected, "{file}");
        if file.ends_with("talker.mcap") {
            let want: Vec<String> = (0..10).map(|i| format!("Hello, world! {i}")).collect();
            assert_eq!(strings, want);
        }
    }
}

#[test]
fn a_service_event_renders_with_the_json_rules() {
    let log = open(testdata::path("rosbag2/files/only_services.mcap")).unwrap();
    let first = log.messages().iter().unwrap().next().unwrap().unwrap();
    let mut decoder = Decoder::new();
    let decoded = decoder.decode(&first).unwrap();
    assert_eq!(
        decoded.to_json(),
        r#"{"info":{"event_type":1,"stamp":{"sec":1697521953,"nanosec":726063806},"client_gid":"AQ/rfWwqqdIAAAAAAAATBA==","sequence_number":1},"request":[{"a":1,"b":3}],"response":[]}"#
    );
    let m = cdr(&decoded);
    assert_eq!(m.get("request[0].b").unwrap(), Value::Int64(3));
    assert_eq!(
        m.plan().type_name().to_string(),
        "example_interfaces/AddTwoInts_Event"
    );
}

#[test]
fn channels_without_a_schema_use_the_standard_interfaces() {
    let mut decoder = Decoder::new();
    for encoding in ["", "unknown"] {
        let channel = channel("geometry_msgs/msg/Point", encoding, b"", None);
        let mut data = vec![0, 1, 0, 0];
        for v in [1.0f64, 2.0, 3.0] {
            data.extend_from_slice(&v.to_le_bytes());
        }
        let decoded_message = message(&channel, data);
        let decoded = decoder.decode(&decoded_message).unwrap();
        assert_eq!(decoded.to_json(), r#"{"x":1.0,"y":2.0,"z":3.0}"#);
    }
    // A type no bundled distro has.
    let channel = channel("my_pkg/msg/Unknown", "", b"", None);
    match decoder.check_channel(&channel).unwrap_err() {
        DecodeError::Schema {
            type_name, reason, ..
        } => {
            assert_eq!(type_name, "my_pkg/msg/Unknown");
            assert!(
                reason.contains("not one of the standard ROS 2 interfaces"),
                "{reason}"
            );
        }
        other => panic!("{other}"),
    }
}

/// `sensor_msgs/msg/Range` gained `variance` after humble: the recorded RIHS01 hash picks the
/// definition the recorder used.
#[test]
fn the_recorded_type_hash_picks_the_distro() {
    let name: TypeName = "sensor_msgs/msg/Range".parse().unwrap();
    let humble = Registry::standard(Distro::Humble);
    let humble_hash = humble.type_hash(&name).unwrap();
    assert_ne!(
        Registry::standard(Distro::LATEST).type_hash(&name).unwrap(),
        humble_hash
    );
    let mut decoder = Decoder::new();
    let fields = |decoder: &mut Decoder, channel: &Channel| -> Vec<String> {
        let plan = decoder.cdr_plan(channel).unwrap();
        plan.field_names().map(str::to_owned).collect()
    };
    let old = fields(
        &mut decoder,
        &channel("sensor_msgs/msg/Range", "", b"", Some(&humble_hash)),
    );
    assert_eq!(old.last().map(String::as_str), Some("range"));
    // A schema object of its own (the cache is by schema), without a hash: the newest distro.
    let mut decoder = Decoder::new();
    let new = fields(
        &mut decoder,
        &channel("sensor_msgs/msg/Range", "", b"", None),
    );
    assert_eq!(new.last().map(String::as_str), Some("variance"));
}

#[test]
fn a_schema_that_lacks_a_section_is_completed_from_the_standard_interfaces() {
    let channel = channel(
        "my_pkg/msg/Marker",
        "ros2msg",
        b"std_msgs/Header header\ngeometry_msgs/Point p\n",
        None,
    );
    let mut data = vec![
        0, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, b'm', 0, 0, 0,
    ];
    for v in [1.5f64, 2.5, 3.5] {
        data.extend_from_slice(&v.to_le_bytes());
    }
    let mut decoder = Decoder::new();
    let m = message(&channel, data);
    let decoded = decoder.decode(&m).unwrap();
    assert_eq!(
        decoded.to_json(),
        r#"{"header":{"stamp":{"sec":1,"nanosec":2},"frame_id":"m"},"p":{"x":1.5,"y":2.5,"z":3.5}}"#
    );
}

#[test]
fn ros2idl_schemas_decode() {
    let text = std::fs::read(testdata::path("msg/ros2_demo.ros2idl")).unwrap();
    let channel = channel("ros2_demo/msg/Demo", "ros2idl", &text, None);
    let mut decoder = Decoder::new();
    let plan = decoder.cdr_plan(&channel).unwrap();
    assert_eq!(
        plan.field_names().collect::<Vec<_>>(),
        ["name", "up_to_five", "triple", "header"]
    );
    // name "ab", up_to_five [7], triple [1, 2, 3], header {stamp {5, 6}, frame_id ""}.
    let mut data = vec![
        0, 1, 0, 0, 3, 0, 0, 0, b'a', b'b', 0, 0, 1, 0, 0, 0, 7, 0, 0, 0,
    ];
    for v in [1.0f64, 2.0, 3.0] {
        data.extend_from_slice(&v.to_le_bytes());
    }
    data.extend_from_slice(&[5, 0, 0, 0, 6, 0, 0, 0, 1, 0, 0, 0, 0]);
    let m = message(&channel, data);
    let decoded = decoder.decode(&m).unwrap();
    assert_eq!(
        decoded.to_json(),
        r#"{"name":"ab","up_to_five":[7],"triple":[1.0,2.0,3.0],"header":{"stamp":{"sec":5,"nanosec":6},"frame_id":""}}"#
    );
}

#[test]
fn undecodable_cdr_channels_say_why() {
    let mut decoder = Decoder::new();
    let no_schema = Arc::new(Channel {
        id: 0,
        topic: "/t".into(),
        message_encoding: "cdr".into(),
        schema: None,
        metadata: BTreeMap::new(),
    });
    match decoder.check_channel(&no_schema).unwrap_err() {
        DecodeError::NotDecodable { reason, .. } => {
            assert_eq!(
                reason,
                "the channel has no schema, so its message type is unknown"
            )
        }
        other => panic!("{other}"),
    }
    let omgidl = channel("a::b::T", "omgidl", b"struct T { long x; };", None);
    match decoder.check_channel(&omgidl).unwrap_err() {
        DecodeError::NotDecodable { reason, .. } => assert!(reason.contains("\"omgidl\"")),
        other => panic!("{other}"),
    }
    // A message that does not match its definition names the field and the offset.
    let point = channel("geometry_msgs/msg/Point", "", b"", None);
    let cut = message(&point, vec![0, 1, 0, 0, 1, 2, 3]);
    match decoder.decode(&cut).unwrap_err() {
        DecodeError::Message {
            reason,
            truncated,
            offset,
            ..
        } => {
            assert!(truncated);
            assert_eq!(offset, Some(4));
            assert_eq!(
                reason,
                "message too short: x needs 8 bytes at offset 4, 3 left"
            );
        }
        other => panic!("{other}"),
    }
}
