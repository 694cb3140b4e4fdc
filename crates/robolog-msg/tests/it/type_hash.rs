//! RIHS01 type hashes against every published and recorded reference value (ros2-cdr.md §11,
//! §14 item 18; the hashes rosbag2 recorded in the MCAP files and metadata.yaml of
//! testdata/rosbag2/).

use std::collections::BTreeMap;

use robolog_msg::{Dialect, Error, Registry, TypeName};

fn name(text: &str) -> TypeName {
    text.parse().unwrap()
}

/// The definitions the reference table needs, comment-free, as in the ros2 repositories.
const DEFINITIONS: &[(&str, &str)] = &[
    ("std_msgs/String", "string data\n"),
    ("std_msgs/Empty", ""),
    (
        "std_msgs/Header",
        "builtin_interfaces/Time stamp\nstring frame_id\n",
    ),
    (
        "geometry_msgs/PoseStamped",
        "std_msgs/Header header\nPose pose\n",
    ),
    (
        "geometry_msgs/Pose",
        "Point position\nQuaternion orientation\n",
    ),
    ("geometry_msgs/Point", "float64 x\nfloat64 y\nfloat64 z\n"),
    ("geometry_msgs/Vector3", "float64 x\nfloat64 y\nfloat64 z\n"),
    (
        "geometry_msgs/Quaternion",
        "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n",
    ),
    (
        "sensor_msgs/Imu",
        "std_msgs/Header header\ngeometry_msgs/Quaternion orientation\n\
         float64[9] orientation_covariance # Row major about x, y, z axes\n\
         geometry_msgs/Vector3 angular_velocity\nfloat64[9] angular_velocity_covariance\n\
         geometry_msgs/Vector3 linear_acceleration\nfloat64[9] linear_acceleration_covariance\n",
    ),
    (
        "sensor_msgs/PointCloud2",
        "std_msgs/Header header\nuint32 height\nuint32 width\nPointField[] fields\n\
         bool    is_bigendian # Is this data bigendian?\nuint32  point_step\nuint32  row_step\n\
         uint8[] data\nbool is_dense\n",
    ),
    (
        "sensor_msgs/PointField",
        "uint8 INT8    = 1\nuint8 UINT8   = 2\nuint8 INT16   = 3\nuint8 UINT16  = 4\n\
         uint8 INT32   = 5\nuint8 UINT32  = 6\nuint8 FLOAT32 = 7\nuint8 FLOAT64 = 8\n\
         string name\nuint32 offset\nuint8  datatype\nuint32 count\n",
    ),
];

fn reference_registry() -> Registry {
    let mut registry = Registry::new();
    for (type_name, text) in DEFINITIONS {
        registry
            .add_message_text(&name(type_name), text, Dialect::Ros2)
            .unwrap();
    }
    registry
        .add_service_text(
            &name("example_interfaces/srv/AddTwoInts"),
            "int64 a\nint64 b\n---\nint64 sum\n",
            Dialect::Ros2,
        )
        .unwrap();
    registry
}

#[test]
fn the_hashed_text_of_string_is_byte_exact() {
    let registry = reference_registry();
    assert_eq!(
        registry
            .type_description_json(&name("std_msgs/msg/String"))
            .unwrap(),
        "{\"type_description\": {\"type_name\": \"std_msgs/msg/String\", \"fields\": \
         [{\"name\": \"data\", \"type\": {\"type_id\": 17, \"capacity\": 0, \"string_capacity\": \
         0, \"nested_type_name\": \"\"}}]}, \"referenced_type_descriptions\": []}"
    );
}

#[test]
fn every_value_of_the_spec_table() {
    let registry = reference_registry();
    let table = [
        (
            "std_msgs/msg/String",
            "df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18",
        ),
        (
            "std_msgs/msg/Empty",
            "20b625256f32d5dbc0d04fee44f43c41e51c70d3502f84b4a08e7a9c26a96312",
        ),
        (
            "builtin_interfaces/msg/Time",
            "b106235e25a4c5ed35098aa0a61a3ee9c9b18d197f398b0e4206cea9acf9c197",
        ),
        (
            "builtin_interfaces/msg/Duration",
            "e8d009f659816f758b75334ee1a9ca5b5c0b859843261f14c7f937349599d93b",
        ),
        (
            "std_msgs/msg/Header",
            "f49fb3ae2cf070f793645ff749683ac6b06203e41c891e17701b1cb597ce6a01",
        ),
        (
            "geometry_msgs/msg/PoseStamped",
            "10f3786d7d40fd2b54367835614bff85d4ad3b5dab62bf8bca0cc232d73b4cd8",
        ),
        (
            "sensor_msgs/msg/Imu",
            "7d9a00ff131080897a5ec7e26e315954b8eae3353c3f995c55faf71574000b5b",
        ),
        (
            "sensor_msgs/msg/PointCloud2",
            "9198cabf7da3796ae6fe19c4cb3bdd3525492988c70522628af5daa124bae2b5",
        ),
        // char[16] client_gid hashes as uint8[16] (type id 51), not char (61) as rosbags has it.
        (
            "service_msgs/msg/ServiceEventInfo",
            "41bcbbe07a75c9b52bc96bfd5c24d7f0fc0a08c0cb7921b3373c5732345a6f45",
        ),
    ];
    for (type_name, hash) in table {
        assert_eq!(
            registry.type_hash(&name(type_name)).unwrap(),
            format!("RIHS01_{hash}"),
            "{type_name}"
        );
    }
    // A service: request, response and event as fields.
    assert_eq!(
        registry
            .service_type_hash(&name("example_interfaces/srv/AddTwoInts"))
            .unwrap(),
        "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a"
    );
}

#[test]
fn header_refers_to_time_by_its_full_name() {
    let registry = reference_registry();
    let json = registry
        .type_description_json(&name("std_msgs/Header"))
        .unwrap();
    assert_eq!(
        json,
        "{\"type_description\": {\"type_name\": \"std_msgs/msg/Header\", \"fields\": [{\"name\": \
         \"stamp\", \"type\": {\"type_id\": 1, \"capacity\": 0, \"string_capacity\": 0, \
         \"nested_type_name\": \"builtin_interfaces/msg/Time\"}}, {\"name\": \"frame_id\", \
         \"type\": {\"type_id\": 17, \"capacity\": 0, \"string_capacity\": 0, \
         \"nested_type_name\": \"\"}}]}, \"referenced_type_descriptions\": [{\"type_name\": \
         \"builtin_interfaces/msg/Time\", \"fields\": [{\"name\": \"sec\", \"type\": \
         {\"type_id\": 6, \"capacity\": 0, \"string_capacity\": 0, \"nested_type_name\": \"\"}}, \
         {\"name\": \"nanosec\", \"type\": {\"type_id\": 7, \"capacity\": 0, \"string_capacity\": \
         0, \"nested_type_name\": \"\"}}]}]}"
    );
}

/// `(type, topic_type_hash)` of every channel of an MCAP file, and its schemas by name.
fn recorded(file: &str) -> (Vec<(String, String)>, BTreeMap<String, String>) {
    let reader = robolog_mcap::McapReader::open(robolog_testkit::testdata::read(file)).unwrap();
    let summary = reader.summary();
    let mut channels = Vec::new();
    for (id, channel) in &summary.channels {
        let schema = summary.schema_of(*id).unwrap();
        if let Some(hash) = channel.metadata.get("topic_type_hash") {
            channels.push((schema.name.to_string(), hash.to_string()));
        }
    }
    let schemas = summary
        .schemas
        .values()
        .map(|s| {
            (
                s.name.to_string(),
                String::from_utf8(s.data.to_vec()).unwrap(),
            )
        })
        .collect();
    (channels, schemas)
}

#[test]
fn every_hash_rosbag2_recorded_in_the_mcap_files() {
    let mut checked = BTreeMap::new();
    for file in [
        "rosbag2/files/only_services.mcap",
        "rosbag2/files/only_topics.mcap",
        "rosbag2/files/topics_and_services.mcap",
        "rosbag2/mcap-service_events/bag_with_topics_and_service_events.mcap",
    ] {
        let (channels, schemas) = recorded(file);
        assert!(!channels.is_empty(), "{file}");
        for (type_name, hash) in channels {
            let registry = Registry::from_ros2msg(&type_name, &schemas[&type_name]).unwrap();
            assert_eq!(
                registry.type_hash(&name(&type_name)).unwrap(),
                hash,
                "{file}: {type_name}"
            );
            checked.insert(type_name, hash);
        }
    }
    // Log (constants and comments), ParameterEvent (nested arrays, byte[]), WriteSplitEvent,
    // two service events (one with char and byte), Strings (defaults and bounded strings).
    assert_eq!(
        checked.keys().collect::<Vec<_>>(),
        [
            "example_interfaces/srv/AddTwoInts_Event",
            "rcl_interfaces/msg/Log",
            "rcl_interfaces/msg/ParameterEvent",
            "rosbag2_interfaces/msg/WriteSplitEvent",
            "test_msgs/msg/Strings",
            "test_msgs/srv/BasicTypes_Event",
        ]
    );
}

#[test]
fn every_hash_of_the_metadata_yaml_files() {
    // metadata.yaml version 8 records `type_description_hash` next to each topic's type.
    let yaml = String::from_utf8(robolog_testkit::testdata::read(
        "rosbag2/mcap-service_events/metadata.yaml",
    ))
    .unwrap();
    let (_, schemas) =
        recorded("rosbag2/mcap-service_events/bag_with_topics_and_service_events.mcap");
    let mut current_type = None;
    let mut checked = 0;
    for line in yaml.lines() {
        let line = line.trim();
        if let Some(type_name) = line.strip_prefix("type: ") {
            current_type = Some(type_name.to_owned());
        } else if let Some(hash) = line.strip_prefix("type_description_hash: ") {
            let type_name = current_type.take().unwrap();
            let registry = Registry::from_ros2msg(&type_name, &schemas[&type_name]).unwrap();
            assert_eq!(
                registry.type_hash(&name(&type_name)).unwrap(),
                hash,
                "{type_name}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 5);
}

#[test]
fn ros1_definitions_have_no_type_hash() {
    let mut registry = Registry::new();
    registry
        .add_message_text(&name("std_msgs/String"), "string data\n", Dialect::Ros1)
        .unwrap();
    assert!(matches!(
        registry.type_hash(&name("std_msgs/String")),
        Err(Error::NotRos2 { .. })
    ));
    assert!(matches!(
        registry.type_hash(&name("std_msgs/Missing")),
        Err(Error::MissingType { .. })
    ));
}

#[test]
fn an_action_hash_covers_its_services_and_their_events() {
    let mut registry = Registry::new();
    registry
        .add_action_text(
            &name("example_interfaces/action/Fibonacci"),
            "int32 order\n---\nint32[] sequence\n---\nint32[] sequence\n",
            Dialect::Ros2,
        )
        .unwrap();
    registry
        .add_message_text(
            &name("unique_identifier_msgs/UUID"),
            "uint8[16] uuid\n",
            Dialect::Ros2,
        )
        .unwrap();
    let json = registry
        .action_type_description_json(&name("example_interfaces/Fibonacci"))
        .unwrap();
    let referenced: Vec<&str> = json
        .split("{\"type_name\": \"")
        .skip(1)
        .map(|part| part.split('"').next().unwrap())
        .collect();
    assert_eq!(
        referenced,
        [
            "example_interfaces/action/Fibonacci",
            "builtin_interfaces/msg/Time",
            "example_interfaces/action/Fibonacci_Feedback",
            "example_interfaces/action/Fibonacci_FeedbackMessage",
            "example_interfaces/action/Fibonacci_GetResult",
            "example_interfaces/action/Fibonacci_GetResult_Event",
            "example_interfaces/action/Fibonacci_GetResult_Request",
            "example_interfaces/action/Fibonacci_GetResult_Response",
            "example_interfaces/action/Fibonacci_Goal",
            "example_interfaces/action/Fibonacci_Result",
            "example_interfaces/action/Fibonacci_SendGoal",
            "example_interfaces/action/Fibonacci_SendGoal_Event",
            "example_interfaces/action/Fibonacci_SendGoal_Request",
            "example_interfaces/action/Fibonacci_SendGoal_Response",
            "service_msgs/msg/ServiceEventInfo",
            "unique_identifier_msgs/msg/UUID",
        ]
    );
    assert!(
        registry
            .action_type_hash(&name("example_interfaces/Fibonacci"))
            .unwrap()
            .starts_with("RIHS01_")
    );
}
