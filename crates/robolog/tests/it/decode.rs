//! Decoding through the facade: ROS 1 messages of bags and MCAP into values and JSON, JSON
//! passed through, everything else refused with the reason. Expected values are those the
//! generators wrote (testdata/bags/generated/rosbags/make_bags.py,
//! testdata/samples/generate_samples.py).

use std::collections::BTreeMap;
use std::sync::Arc;

use robolog::ros1::Value;
use robolog::{Bytes, Channel, DecodeError, Decoded, Decoder, Message, Schema, open};
use robolog_testkit::testdata;

fn ros1<'a>(decoded: &'a Decoded<'_>) -> &'a robolog::Ros1Message<'a> {
    match decoded {
        Decoded::Ros1(m) => m,
        other => panic!("not a ROS 1 message: {other:?}"),
    }
}

fn f64_of(v: Value<'_>) -> f64 {
    match v {
        Value::Float64(x) => x,
        other => panic!("not a float64: {other:?}"),
    }
}

#[test]
fn bag_messages_decode_to_the_generated_values() {
    for file in [
        "bags/generated/ros_comm/ref_lz4.bag",
        "bags/generated/rosbags/rosbags_bz2.bag",
        "bags/generated/ros_comm/v12_indexed.bag",
    ] {
        let log = open(testdata::path(file)).unwrap();
        let mut decoder = Decoder::new();
        let mut seen = BTreeMap::<String, u64>::new();
        for message in log.messages().iter().unwrap() {
            let message = message.unwrap();
            let topic = message.channel.topic.clone();
            let i = *seen
                .entry(topic.clone())
                .and_modify(|n| *n += 1)
                .or_insert(0);
            let decoded = decoder.decode(&message).unwrap();
            let m = ros1(&decoded);
            assert_eq!(m.trailing_bytes(), 0);
            match topic.as_str() {
                "/chatter" => {
                    assert_eq!(decoded.to_json(), format!(r#"{{"data":"hello {i}"}}"#));
                }
                "/imu" => {
                    assert_eq!(m.get("header.seq").unwrap(), Value::UInt32(i as u32));
                    assert_eq!(m.get("header.frame_id").unwrap().as_str(), Some("imu_link"));
                    assert_eq!(f64_of(m.get("angular_velocity.x").unwrap()), 0.1 * i as f64);
                    assert_eq!(f64_of(m.get("angular_velocity.z").unwrap()), -0.1);
                    assert_eq!(f64_of(m.get("linear_acceleration.z").unwrap()), 9.81);
                    assert_eq!(f64_of(m.get("orientation.w").unwrap()), 1.0);
                    let cov = m.get("orientation_covariance").unwrap();
                    let cov: Vec<f64> = cov.as_array().unwrap().iter_as::<f64>().unwrap().collect();
                    assert_eq!(cov, (0..9).map(f64::from).collect::<Vec<_>>());
                    let stamp = (message.log_time_ns - 1) / 1_000_000_000;
                    assert_eq!(
                        m.get("header.stamp.secs").unwrap(),
                        Value::UInt32(stamp as u32)
                    );
                }
                "/custom" => {
                    let json: serde_json::Value = serde_json::from_str(&decoded.to_json()).unwrap();
                    assert_eq!(json["mode"], i % 2);
                    assert_eq!(json["flag"], i.is_multiple_of(3));
                    let values: Vec<i64> = (0..(i % 7) as i64).map(|v| v - 3).collect();
                    assert_eq!(json["values"], serde_json::json!(values));
                    assert_eq!(json["fixed"], serde_json::json!([1.0, 2.0, i as f64]));
                    let names: Vec<String> = (0..i % 4).map(|j| format!("n{j}")).collect();
                    assert_eq!(json["names"], serde_json::json!(names));
                    let blob: Vec<u8> = (0..(i % 16) as u8).collect();
                    use base64::Engine as _;
                    assert_eq!(
                        json["blob"],
                        base64::engine::general_purpose::STANDARD.encode(blob)
                    );
                    assert_eq!(json["points"].as_array().unwrap().len(), (i % 3) as usize);
                    assert_eq!(
                        json["offset"],
                        serde_json::json!({"x": 1.0, "y": 2.0, "z": 3.0})
                    );
                    assert_eq!(json["dur"], serde_json::json!({"sec": i, "nsec": 500}));
                }
                other => panic!("unexpected topic {other}"),
            }
        }
        assert_eq!(seen.values().sum::<u64>(), 147, "{file}: counted from 0");
    }
}

#[test]
fn mcap_ros1_and_json_decode_and_the_rest_is_refused() {
    let log = open(testdata::path("samples/demo-zstd.mcap")).unwrap();
    let mut decoder = Decoder::new();
    let (mut chatter, mut points, mut blobs) = (0, 0, 0);
    for (i, message) in log.messages().iter().unwrap().enumerate() {
        let message = message.unwrap();
        match message.channel.topic.as_str() {
            "/chatter" => {
                let decoded = decoder.decode(&message).unwrap();
                assert_eq!(
                    ros1(&decoded).get("data").unwrap().as_str(),
                    Some(format!("hello world {i}").as_str())
                );
                chatter += 1;
            }
            "/points" => {
                let decoded = decoder.decode(&message).unwrap();
                // Passed through exactly as stored.
                assert_eq!(decoded.to_json().as_bytes(), &message.data[..]);
                let json: serde_json::Value = serde_json::from_slice(&message.data).unwrap();
                assert_eq!(json["seq"], i);
                assert_eq!(json["label"], format!("p{i}"));
                points += 1;
            }
            "/blob" => {
                match decoder.decode(&message).unwrap_err() {
                    DecodeError::NotDecodable {
                        topic,
                        encoding,
                        reason,
                    } => {
                        assert_eq!(topic, "/blob");
                        assert_eq!(encoding, "application/octet-stream");
                        assert!(
                            reason.contains("not an encoding robolog decodes"),
                            "{reason}"
                        );
                    }
                    other => panic!("{other}"),
                }
                blobs += 1;
            }
            other => panic!("unexpected topic {other}"),
        }
    }
    assert_eq!((chatter, points, blobs), (100, 100, 100));
}

#[test]
fn bddf_protobuf_and_pod_are_not_decodable_with_reasons() {
    let log = open(testdata::path("bddf/sample.bddf")).unwrap();
    let mut decoder = Decoder::new();
    let protobuf = decoder.check_channel(log.channel(0).unwrap()).unwrap_err();
    assert!(
        protobuf
            .to_string()
            .contains("protobuf decoding is not supported"),
        "{protobuf}"
    );
    let pod = decoder.check_channel(log.channel(4).unwrap()).unwrap_err();
    assert!(pod.to_string().contains("bddf-pod"), "{pod}");
}

fn channel(topic: &str, type_name: &str, definition: &'static [u8]) -> Arc<Channel> {
    Arc::new(Channel {
        id: 0,
        topic: topic.into(),
        message_encoding: "ros1".into(),
        schema: Some(Arc::new(Schema {
            id: 1,
            name: type_name.into(),
            encoding: "ros1msg".into(),
            data: Bytes::from_static(definition),
        })),
        metadata: BTreeMap::new(),
    })
}

fn message(channel: &Arc<Channel>, data: &'static [u8]) -> Message {
    Message {
        channel: Arc::clone(channel),
        log_time_ns: 7,
        publish_time_ns: None,
        sequence: None,
        data: Bytes::from_static(data),
    }
}

#[test]
fn plans_are_shared_by_schema_content() {
    let bag = open(testdata::path("bags/generated/ros_comm/ref_none.bag")).unwrap();
    let mcap = open(testdata::path("samples/demo-lz4.mcap")).unwrap();
    let from_bag = bag
        .messages()
        .topics(["/chatter"])
        .iter()
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let from_mcap = mcap
        .messages()
        .topics(["/chatter"])
        .iter()
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    // Different schema records, same type and definition: one compiled plan.
    assert!(!Arc::ptr_eq(
        from_bag.channel.schema.as_ref().unwrap(),
        from_mcap.channel.schema.as_ref().unwrap()
    ));
    let mut decoder = Decoder::new();
    let a = decoder.ros1_plan(&from_bag.channel).unwrap();
    let b = decoder.ros1_plan(&from_mcap.channel).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    // Another definition of the same name is another plan.
    let other = channel("/x", "std_msgs/String", b"string data\nint32 extra\n");
    assert!(!Arc::ptr_eq(&a, &decoder.ros1_plan(&other).unwrap()));
}

#[test]
fn broken_definitions_and_messages() {
    let mut decoder = Decoder::new();
    let broken = channel(
        "/broken",
        "pkg/Broken",
        b"int32 x\nnot a field line at all ((\n",
    );
    for _ in 0..2 {
        match decoder.decode(&message(&broken, b"\0\0\0\0")).unwrap_err() {
            DecodeError::Schema {
                topic, type_name, ..
            } => assert_eq!(
                (topic.as_str(), type_name.as_str()),
                ("/broken", "pkg/Broken")
            ),
            other => panic!("{other}"),
        }
    }
    let string = channel("/s", "std_msgs/String", b"string data\n");
    match decoder
        .decode(&message(&string, b"\x09\0\0\0abc"))
        .unwrap_err()
    {
        DecodeError::Message {
            truncated,
            log_time_ns,
            offset,
            ..
        } => assert!(truncated && log_time_ns == 7 && offset == Some(0)),
        other => panic!("{other}"),
    }
    // Bytes after the message are reported, not refused.
    let trailing = message(&string, b"\x01\0\0\0a!!");
    let decoded = decoder.decode(&trailing).unwrap();
    assert_eq!(ros1(&decoded).trailing_bytes(), 2);
    // A ros1 channel without a ros1msg schema cannot be decoded.
    let mut no_schema = (*string).clone();
    no_schema.schema = None;
    let err = decoder.check_channel(&no_schema).unwrap_err();
    assert!(err.to_string().contains("no schema"), "{err}");
    // Invalid JSON is an error, not a pass-through.
    let mut json = (*string).clone();
    json.message_encoding = "json".into();
    let err = decoder
        .decode(&message(&Arc::new(json), b"{\"a\": "))
        .unwrap_err();
    assert!(matches!(err, DecodeError::Json { .. }), "{err}");
}
