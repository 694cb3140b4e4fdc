//! ROS 2 schemas as MCAP and rosbag2 store them (`ros2msg`): sections, service events,
//! built-in types (ros2-cdr.md §10.1–10.3, §14 item 15).

use robolog_msg::{
    ArrayKind, Dialect, ElementType, Error, PrimitiveType, Registry, SECTION_SEPARATOR, TypeName,
    Value, Warning,
};

fn name(text: &str) -> TypeName {
    text.parse().unwrap()
}

/// `pkg/Type name` of every field.
fn fields(registry: &Registry, type_name: &str) -> Vec<String> {
    registry
        .require(&name(type_name))
        .unwrap()
        .fields
        .iter()
        .map(|f| format!("{} {}", f.ty, f.name))
        .collect()
}

/// PoseStamped exactly as rosbag2 (Jazzy) writes it: sorted depth-first sections named
/// `pkg/Type`, a blank line before every separator, comments kept (shortened here).
fn pose_stamped_rosbag2() -> String {
    let sep = SECTION_SEPARATOR;
    format!(
        "# A Pose with reference coordinate frame and timestamp\n\nstd_msgs/Header header\nPose pose\n\n\
         {sep}\nMSG: geometry_msgs/Pose\n# A representation of pose in free space.\nPoint position\nQuaternion orientation\n\n\
         {sep}\nMSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z\n\n\
         {sep}\nMSG: geometry_msgs/Quaternion\nfloat64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n\n\
         {sep}\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n\n\
         {sep}\nMSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n"
    )
}

#[test]
fn rosbag2_pose_stamped_resolves_relative_names_per_section_and_hashes() {
    let registry =
        Registry::from_ros2msg("geometry_msgs/msg/PoseStamped", &pose_stamped_rosbag2()).unwrap();
    assert_eq!(
        fields(&registry, "geometry_msgs/PoseStamped"),
        ["std_msgs/Header header", "geometry_msgs/Pose pose"]
    );
    // `Point` inside the geometry_msgs/Pose section is geometry_msgs/Point, not a
    // std_msgs or root-package type.
    assert_eq!(
        fields(&registry, "geometry_msgs/Pose"),
        [
            "geometry_msgs/Point position",
            "geometry_msgs/Quaternion orientation"
        ]
    );
    let quaternion = registry.require(&name("geometry_msgs/Quaternion")).unwrap();
    assert_eq!(
        quaternion
            .field("w")
            .unwrap()
            .default
            .as_ref()
            .unwrap()
            .value,
        Value::Float(1.0)
    );
    assert_eq!(
        registry
            .type_hash(&name("geometry_msgs/msg/PoseStamped"))
            .unwrap(),
        "RIHS01_10f3786d7d40fd2b54367835614bff85d4ad3b5dab62bf8bca0cc232d73b4cd8"
    );
    assert!(registry.warnings().is_empty(), "{:?}", registry.warnings());
}

#[test]
fn section_layouts_of_every_producer_give_the_same_types() {
    let reference =
        Registry::from_ros2msg("geometry_msgs/msg/PoseStamped", &pose_stamped_rosbag2()).unwrap();
    let expected_hash = reference
        .type_hash(&name("geometry_msgs/PoseStamped"))
        .unwrap();
    let text = pose_stamped_rosbag2();
    let variants = [
        // `MSG: pkg/msg/Type` names (rosbag2's documentation example).
        text.replace("MSG: geometry_msgs/", "MSG: geometry_msgs/msg/")
            .replace("MSG: std_msgs/", "MSG: std_msgs/msg/"),
        // Sections in another order, no blank lines, shorter separators, no space after the
        // colon, trailing spaces and CR on separators.
        {
            let sections: Vec<&str> = text.split(&format!("\n\n{SECTION_SEPARATOR}\n")).collect();
            let mut out = sections[0].to_owned();
            for section in sections[1..].iter().rev() {
                out.push_str("\n=====  \r\n");
                out.push_str(&section.replacen("MSG: ", "MSG:\t", 1));
            }
            out
        },
        // CRLF line ends throughout.
        text.replace('\n', "\r\n"),
        // The root in a section of its own after a leading separator (an empty top).
        format!("{SECTION_SEPARATOR}\nMSG: geometry_msgs/msg/PoseStamped\n{text}"),
        // A duplicate section: the first wins.
        format!("{text}\n{SECTION_SEPARATOR}\nMSG: geometry_msgs/Point\nfloat32 x\n"),
    ];
    for (index, variant) in variants.iter().enumerate() {
        let registry = Registry::from_ros2msg("geometry_msgs/msg/PoseStamped", variant)
            .unwrap_or_else(|e| panic!("variant {index}: {e}"));
        assert_eq!(
            registry
                .type_hash(&name("geometry_msgs/PoseStamped"))
                .unwrap(),
            expected_hash,
            "variant {index}"
        );
        assert_eq!(
            fields(&registry, "geometry_msgs/Point"),
            ["float64 x", "float64 y", "float64 z"],
            "variant {index}"
        );
    }
    let duplicate = Registry::from_ros2msg("geometry_msgs/msg/PoseStamped", &variants[4]).unwrap();
    assert!(
        duplicate
            .warnings()
            .iter()
            .any(|w| matches!(w, Warning::DuplicateSection { name: n, .. } if *n == name("geometry_msgs/Point")))
    );
}

#[test]
fn empty_sections_are_tolerated_and_header_is_not_special() {
    let text = format!(
        "Header header\nstd_msgs/Empty nothing\n{SECTION_SEPARATOR}\nMSG: std_msgs/Empty\n\
         {SECTION_SEPARATOR}\nMSG: my_pkg/Header\nint8 level\n"
    );
    let registry = Registry::from_ros2msg("my_pkg/msg/Reading", &text).unwrap();
    // ROS 2 has no implicit Header: a bare `Header` is the package's own type.
    assert_eq!(
        fields(&registry, "my_pkg/Reading"),
        ["my_pkg/Header header", "std_msgs/Empty nothing"]
    );
    assert!(fields(&registry, "std_msgs/Empty").is_empty());
    assert_eq!(
        registry.type_hash(&name("std_msgs/msg/Empty")).unwrap(),
        "RIHS01_20b625256f32d5dbc0d04fee44f43c41e51c70d3502f84b4a08e7a9c26a96312"
    );
}

#[test]
fn time_and_duration_are_the_builtin_interfaces_messages() {
    let registry =
        Registry::from_ros2msg("my_pkg/msg/Span", "time start\nduration[2] lengths\n").unwrap();
    assert_eq!(
        fields(&registry, "my_pkg/Span"),
        [
            "builtin_interfaces/Time start",
            "builtin_interfaces/Duration[2] lengths"
        ]
    );
    // Neither section was in the schema: both are built in, with rcl_interfaces' text.
    assert_eq!(
        fields(&registry, "builtin_interfaces/Time"),
        ["int32 sec", "uint32 nanosec"]
    );
    assert_eq!(
        registry.dependencies(&name("my_pkg/Span")).unwrap(),
        [
            name("builtin_interfaces/Time"),
            name("builtin_interfaces/Duration")
        ]
    );
    // The spelling stays as written.
    let span = registry.require(&name("my_pkg/Span")).unwrap();
    assert_eq!(span.canonical_text(), "time start\nduration[2] lengths\n");
}

#[test]
fn a_service_event_schema_builds_the_event_type_as_rosidl_does() {
    // only_services.mcap: the schema of `/add_two_ints/_service_event`, a bare .srv text.
    let text = "int64 a\nint64 b\n---\nint64 sum\n\n";
    let registry = Registry::from_ros2msg("example_interfaces/srv/AddTwoInts_Event", text).unwrap();
    let event = registry
        .require(&name("example_interfaces/AddTwoInts_Event"))
        .unwrap();
    assert_eq!(event.dialect, Dialect::Ros2);
    let request = &event.fields[1];
    assert_eq!(request.ty.array, ArrayKind::Bounded(1));
    assert_eq!(
        request.ty.element,
        ElementType::Message(name("example_interfaces/AddTwoInts_Request"))
    );
    assert_eq!(
        fields(&registry, "example_interfaces/AddTwoInts_Response"),
        ["int64 sum"]
    );
    // ServiceEventInfo is not in the schema: it is built in, constants and all.
    let info = registry
        .require(&name("service_msgs/ServiceEventInfo"))
        .unwrap();
    assert_eq!(
        fields(&registry, "service_msgs/ServiceEventInfo"),
        [
            "uint8 event_type",
            "builtin_interfaces/Time stamp",
            "char[16] client_gid",
            "int64 sequence_number"
        ]
    );
    assert_eq!(
        info.constant("RESPONSE_RECEIVED").unwrap().value,
        Value::UInt(3)
    );
    assert!(
        registry
            .service(&name("example_interfaces/AddTwoInts"))
            .is_some()
    );
    // The hash rosbag2 recorded for this channel (topic_type_hash).
    assert_eq!(
        registry
            .type_hash(&name("example_interfaces/srv/AddTwoInts_Event"))
            .unwrap(),
        "RIHS01_32c1d140259c71e5c355115942bcb31df98b4330e4d906b1b75ccb1c9b3ce6c8"
    );
}

#[test]
fn a_jazzy_service_event_schema_has_an_srv_header_and_msg_dependencies() {
    // rosbag2 Jazzy+: the text starts with a separator and `SRV: pkg/srv/Foo`; dependencies
    // follow as MSG: sections, relative names resolved in the service's package.
    let text = format!(
        "{SECTION_SEPARATOR}\nSRV: my_pkg/srv/Locate\nstring name\n---\nPoint where\n\
         builtin_interfaces/Time at\n\n{SECTION_SEPARATOR}\nMSG: my_pkg/Point\nfloat64 x\n\
         float64 y\n"
    );
    let registry = Registry::from_ros2msg("my_pkg/srv/Locate_Event", &text).unwrap();
    assert_eq!(
        fields(&registry, "my_pkg/Locate_Response"),
        ["my_pkg/Point where", "builtin_interfaces/Time at"]
    );
    assert_eq!(
        fields(&registry, "my_pkg/Locate_Event"),
        [
            "service_msgs/ServiceEventInfo info",
            "my_pkg/Locate_Request[<=1] request",
            "my_pkg/Locate_Response[<=1] response"
        ]
    );
    assert_eq!(
        fields(&registry, "my_pkg/Point"),
        ["float64 x", "float64 y"]
    );
    // Every type the event needs is there (ServiceEventInfo and Time built in).
    assert_eq!(
        registry
            .dependencies(&name("my_pkg/Locate_Event"))
            .unwrap()
            .len(),
        5
    );
}

#[test]
fn srv_sections_as_dependencies_add_services_with_their_events() {
    let text = format!(
        "my_pkg/Ping_Request last\n{SECTION_SEPARATOR}\nSRV: my_pkg/Ping\nuint8 n\n---\nuint8 n\n"
    );
    let registry = Registry::from_ros2msg("my_pkg/msg/Log", &text).unwrap();
    assert_eq!(fields(&registry, "my_pkg/Ping_Request"), ["uint8 n"]);
    assert!(registry.contains(&name("my_pkg/Ping_Event")));
    assert!(registry.dependencies(&name("my_pkg/Log")).is_ok());
}

#[test]
fn action_schemas_derive_every_rosidl_type() {
    let text = "int32 order\n---\nint32[] sequence\n---\nint32[] partial_sequence\n";
    let registry = Registry::from_ros2msg("my_pkg/action/Fibonacci_FeedbackMessage", text).unwrap();
    for derived in [
        "Fibonacci_Goal",
        "Fibonacci_Result",
        "Fibonacci_Feedback",
        "Fibonacci_FeedbackMessage",
        "Fibonacci_SendGoal_Request",
        "Fibonacci_SendGoal_Response",
        "Fibonacci_SendGoal_Event",
        "Fibonacci_GetResult_Request",
        "Fibonacci_GetResult_Response",
        "Fibonacci_GetResult_Event",
    ] {
        assert!(
            registry.contains(&name(&format!("my_pkg/{derived}"))),
            "{derived}"
        );
    }
    assert_eq!(
        fields(&registry, "my_pkg/Fibonacci_FeedbackMessage"),
        [
            "unique_identifier_msgs/UUID goal_id",
            "my_pkg/Fibonacci_Feedback feedback"
        ]
    );
    assert!(registry.action(&name("my_pkg/Fibonacci")).is_some());
    // unique_identifier_msgs/UUID is not built in: reported by name.
    assert!(matches!(
        registry.dependencies(&name("my_pkg/Fibonacci_FeedbackMessage")),
        Err(Error::MissingType { missing, .. }) if missing == name("unique_identifier_msgs/UUID")
    ));
}

#[test]
fn broken_dependency_sections_are_reported_and_the_rest_works() {
    let text = format!(
        "Good good\nBad bad\n{SECTION_SEPARATOR}\nMSG: my_pkg/Good\nint8 x\n\
         {SECTION_SEPARATOR}\nMSG: my_pkg/Bad\nint8 x y z\n{SECTION_SEPARATOR}\nMSG: not a name\n"
    );
    let registry = Registry::from_ros2msg("my_pkg/msg/Top", &text).unwrap();
    assert!(registry.dependencies(&name("my_pkg/Good")).is_ok());
    match registry.require(&name("my_pkg/Bad")) {
        Err(Error::UnparsableType { error, .. }) => {
            // Lines count from the start of the whole schema.
            assert_eq!((error.line, error.column), (8, 8));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        registry
            .warnings()
            .iter()
            .any(|w| matches!(w, Warning::InvalidSectionName { line: 10, .. }))
    );

    // A broken root fails the whole schema, with its position.
    match Registry::from_ros2msg("my_pkg/msg/Top", "int8 x y z\n") {
        Err(Error::Syntax(error)) => assert_eq!((error.line, error.column), (1, 8)),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        Registry::from_ros2msg("not a type", "int8 x\n"),
        Err(Error::InvalidTypeName { .. })
    ));
    assert!(matches!(
        Registry::from_ros2_schema("my_pkg/msg/Top", "", ""),
        Err(Error::UnsupportedSchemaEncoding { encoding }) if encoding.is_empty()
    ));
}

#[test]
fn rosbag2_recorded_schemas_parse_completely() {
    // Every schema of the rosbag2 test bags, with the registry complete for its root.
    for file in [
        "rosbag2/files/only_services.mcap",
        "rosbag2/files/only_topics.mcap",
        "rosbag2/files/topics_and_services.mcap",
        "rosbag2/mcap-talker/talker.mcap",
        "rosbag2/mcap-convert_a/rewriter_a_0.mcap",
        "rosbag2/mcap-service_events/bag_with_topics_and_service_events.mcap",
    ] {
        let reader = robolog_mcap::McapReader::open(robolog_testkit::testdata::read(file)).unwrap();
        for schema in reader.summary().schemas.values() {
            assert_eq!(schema.encoding, "ros2msg");
            let text = std::str::from_utf8(&schema.data).unwrap();
            let registry = Registry::from_ros2msg(&schema.name, text)
                .unwrap_or_else(|e| panic!("{file} {}: {e}", schema.name));
            let root = name(&schema.name);
            registry
                .dependencies(&root)
                .unwrap_or_else(|e| panic!("{file} {}: {e}", schema.name));
            // talker.mcap comes from a writer without rosbag2's global de-duplication: its
            // ParameterEvent schema repeats the Parameter and ParameterValue sections.
            for warning in registry.warnings() {
                assert!(
                    matches!(warning, Warning::DuplicateSection { .. }),
                    "{file}: {warning}"
                );
            }
            if file.ends_with("talker.mcap") && schema.name == "rcl_interfaces/msg/ParameterEvent" {
                assert_eq!(registry.warnings().len(), 4);
            }
        }
    }
}

#[test]
fn char_and_byte_keep_their_spelling_and_their_rosidl_meaning() {
    let registry = Registry::from_ros2msg("my_pkg/msg/Raw", "char c\nbyte b\n").unwrap();
    let raw = registry.require(&name("my_pkg/Raw")).unwrap();
    assert_eq!(
        raw.fields[0].ty.element,
        ElementType::Primitive(PrimitiveType::Char)
    );
    assert_eq!(
        raw.fields[1].ty.element,
        ElementType::Primitive(PrimitiveType::Byte)
    );
    // rosidl's IDL: char is uint8 (3), byte is octet (16).
    let json = registry.type_description_json(&name("my_pkg/Raw")).unwrap();
    assert_eq!(
        json,
        "{\"type_description\": {\"type_name\": \"my_pkg/msg/Raw\", \"fields\": [{\"name\": \"c\", \
         \"type\": {\"type_id\": 3, \"capacity\": 0, \"string_capacity\": 0, \
         \"nested_type_name\": \"\"}}, {\"name\": \"b\", \"type\": {\"type_id\": 16, \"capacity\": \
         0, \"string_capacity\": 0, \"nested_type_name\": \"\"}}]}, \
         \"referenced_type_descriptions\": []}"
    );
}
