//! Column layouts derived from definitions, and the channels that cannot have one.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Fields};
use robolog::{Bytes, Channel, Schema};
use robolog_arrow::{Error, TopicLayout, time_type};
use robolog_testkit::testdata;

fn channel(topic: &str, encoding: &str, schema: Option<(&str, &str, &[u8])>) -> Channel {
    Channel {
        id: 1,
        topic: topic.into(),
        message_encoding: encoding.into(),
        schema: schema.map(|(name, schema_encoding, data)| {
            Arc::new(Schema {
                id: 1,
                name: name.into(),
                encoding: schema_encoding.into(),
                data: Bytes::copy_from_slice(data),
            })
        }),
        metadata: BTreeMap::new(),
    }
}

fn req(name: &str, data_type: DataType) -> Field {
    Field::new(name, data_type, false)
}

fn structure(fields: Vec<Field>) -> DataType {
    DataType::Struct(Fields::from(fields))
}

fn list(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", item, false)))
}

#[test]
fn ros1_types_become_the_documented_columns() {
    let log = robolog::open(testdata::path("bags/generated/ros_comm/ref_none.bag")).unwrap();
    let custom = log
        .channels()
        .iter()
        .find(|c| c.topic == "/custom")
        .unwrap();
    let layout = TopicLayout::new(custom).unwrap();
    let time = structure(vec![
        req("sec", DataType::UInt32),
        req("nsec", DataType::UInt32),
    ]);
    let duration = structure(vec![
        req("sec", DataType::Int32),
        req("nsec", DataType::Int32),
    ]);
    let point = structure(vec![
        req("x", DataType::Float64),
        req("y", DataType::Float64),
        req("z", DataType::Float64),
    ]);
    let expected = vec![
        req("log_time", time_type()),
        Field::new("publish_time", time_type(), true),
        req(
            "header",
            structure(vec![
                req("seq", DataType::UInt32),
                req("stamp", time.clone()),
                req("frame_id", DataType::Utf8),
            ]),
        ),
        req("mode", DataType::UInt8),
        req("flag", DataType::Boolean),
        req("values", list(DataType::Int32)),
        req(
            "fixed",
            DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float32, false)), 3),
        ),
        req("names", list(DataType::Utf8)),
        req("blob", DataType::Binary),
        req("points", list(point.clone())),
        req("offset", point),
        req("stamp", time),
        req("dur", duration),
    ];
    let got: Vec<Field> = layout
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    assert_eq!(got, expected);
    assert_eq!(layout.metadata()["robolog:topic"], "/custom");
    assert_eq!(layout.metadata()["robolog:schema_name"], "test_msgs/Custom");
    assert_eq!(layout.metadata()["robolog:schema_encoding"], "ros1msg");
    assert!(layout.metadata()["robolog:schema"].starts_with("# A custom message"));
}

#[test]
fn byte_arrays_are_binary_and_empty_messages_are_left_out() {
    let definition = "byte[] signed\nchar[4] tag\nuint8[2] pair\nint8[] numbers\nstd_msgs/Empty nothing\nstd_msgs/Empty[] nothings\nint32 log_time\n\
        ================================================================================\nMSG: std_msgs/Empty\n";
    let layout = TopicLayout::new(&channel(
        "/t",
        "ros1",
        Some(("p/M", "ros1msg", definition.as_bytes())),
    ))
    .unwrap();
    let fields: Vec<(String, DataType)> = layout
        .schema()
        .fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect();
    assert_eq!(
        fields,
        [
            ("_log_time".to_owned(), time_type()),
            ("publish_time".to_owned(), time_type()),
            ("signed".to_owned(), DataType::Binary),
            ("tag".to_owned(), DataType::FixedSizeBinary(4)),
            ("pair".to_owned(), DataType::FixedSizeBinary(2)),
            ("numbers".to_owned(), list(DataType::Int8)),
            ("log_time".to_owned(), DataType::Int32),
        ]
    );
}

#[test]
fn json_schema_properties_become_nullable_columns_in_schema_order() {
    let schema =
        br##"{"type":"object","$defs":{"v":{"type":"object","properties":{"x":{"type":"number"}}}},
        "properties":{"z":{"type":"integer"},"a":{"type":["string","null"]},"ok":{"type":"boolean"},
        "raw":{"type":"string","contentEncoding":"base64"},"v":{"$ref":"#/$defs/v"},
        "list":{"type":"array","items":{"type":"number"}},"any":{}}}"##;
    let layout =
        TopicLayout::new(&channel("/j", "json", Some(("J", "jsonschema", schema)))).unwrap();
    let fields: Vec<(String, DataType, bool)> = layout
        .schema()
        .fields()
        .iter()
        .skip(2)
        .map(|f| (f.name().clone(), f.data_type().clone(), f.is_nullable()))
        .collect();
    let v = DataType::Struct(Fields::from(vec![Field::new("x", DataType::Float64, true)]));
    let numbers = DataType::List(Arc::new(Field::new("item", DataType::Float64, true)));
    assert_eq!(
        fields,
        [
            ("z".to_owned(), DataType::Int64, true),
            ("a".to_owned(), DataType::Utf8, true),
            ("ok".to_owned(), DataType::Boolean, true),
            ("raw".to_owned(), DataType::Binary, true),
            ("v".to_owned(), v, true),
            ("list".to_owned(), numbers, true),
            ("any".to_owned(), DataType::Utf8, true),
        ]
    );
}

#[test]
fn channels_without_a_usable_schema_are_refused_naming_the_topic() {
    let cases = [
        channel("/blob", "application/octet-stream", None),
        channel("/nojson", "json", None),
        channel("/proto", "protobuf", Some(("a.B", "protobuf", b""))),
    ];
    for c in &cases {
        let error = TopicLayout::new(c).unwrap_err();
        assert!(matches!(error, Error::NotDecodable { .. }), "{error}");
        assert!(
            error.to_string().starts_with(&format!("{}: ", c.topic)),
            "{error}"
        );
        let raw = TopicLayout::for_channel(c, true).unwrap();
        assert!(raw.is_raw());
        let names: Vec<&str> = raw
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        assert_eq!(names, ["log_time", "publish_time", "data"]);
    }
    let broken = channel("/bad", "ros1", Some(("p/M", "ros1msg", b"NoSuchType x\n")));
    let error = TopicLayout::new(&broken).unwrap_err();
    assert!(matches!(error, Error::Schema { .. }), "{error}");
    assert!(
        error.to_string().starts_with("/bad: the schema \"p/M\""),
        "{error}"
    );
    let not_object = channel(
        "/arr",
        "json",
        Some(("J", "jsonschema", br#"{"type":"array"}"#)),
    );
    assert!(matches!(
        TopicLayout::new(&not_object).unwrap_err(),
        Error::Schema { .. }
    ));
}

/// ROS 2 times are the messages they are (`{sec: int32, nanosec: uint32}`), strings UTF-8, and
/// the file metadata names the ROS 2 encodings.
#[test]
fn ros2_layouts_follow_the_ros2_definitions() {
    let log = robolog::open(testdata::path("rosbag2/mcap-talker")).unwrap();
    let rosout = log
        .channels()
        .iter()
        .find(|c| c.topic == "/rosout")
        .unwrap();
    let layout = TopicLayout::new(rosout).unwrap();
    let names: Vec<&str> = layout
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect();
    assert_eq!(
        names,
        [
            "log_time",
            "publish_time",
            "stamp",
            "level",
            "name",
            "msg",
            "file",
            "function",
            "line"
        ]
    );
    assert_eq!(
        layout.schema().field(2).data_type(),
        &structure(vec![
            req("sec", DataType::Int32),
            req("nanosec", DataType::UInt32)
        ])
    );
    assert_eq!(layout.schema().field(3).data_type(), &DataType::UInt8);
    assert_eq!(layout.schema().field(8).data_type(), &DataType::UInt32);
    assert_eq!(layout.metadata()["robolog:message_encoding"], "cdr");
    assert_eq!(layout.metadata()["robolog:schema_encoding"], "ros2msg");

    // Recorded without a definition: the bundled standard one, as the decoder uses.
    let bare = channel("/chatter", "cdr", Some(("std_msgs/msg/String", "", b"")));
    let names: Vec<String> = TopicLayout::new(&bare)
        .unwrap()
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["log_time", "publish_time", "data"]);
    let unknown = channel("/x", "cdr", Some(("no_pkg/msg/Nope", "", b"")));
    let error = TopicLayout::new(&unknown).unwrap_err();
    assert!(matches!(error, Error::Schema { .. }), "{error}");
}
