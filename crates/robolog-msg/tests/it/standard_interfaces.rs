//! The bundled standard ROS 2 interfaces: complete, hashing to the values ROS recorded, and
//! equal to rosbags' typestores type by type.

use std::collections::BTreeMap;
use std::ffi::OsStr;

use robolog_msg::{Distro, Registry, TypeName, Value};
use robolog_testkit::interop;

fn name(text: &str) -> TypeName {
    text.parse().unwrap()
}

#[test]
fn every_definition_of_every_distro_parses_resolves_and_hashes() {
    for &distro in Distro::ALL {
        let registry = Registry::standard(distro);
        assert!(
            registry.warnings().is_empty(),
            "{distro}: {:?}",
            registry.warnings()
        );
        for message in registry.messages() {
            registry
                .dependencies(&message.name)
                .unwrap_or_else(|e| panic!("{distro} {}: {e}", message.name));
            let hash = registry.type_hash(&message.name).unwrap();
            assert_eq!(hash.len(), "RIHS01_".len() + 64);
        }
        for service in registry.services() {
            registry.service_type_hash(&service.name).unwrap();
        }
        for action in registry.actions() {
            registry.action_type_hash(&action.name).unwrap();
        }
    }
    let counts: Vec<(Distro, usize, usize, usize)> = Distro::ALL
        .iter()
        .map(|&d| {
            let r = Registry::standard(d);
            (d, r.len(), r.services().count(), r.actions().count())
        })
        .collect();
    // Messages (with the request, response and event of every service and the derived types
    // of every action), services (with the actions' SendGoal and GetResult) and actions.
    assert_eq!(
        counts,
        [
            (Distro::Humble, 360, 50, 4),
            (Distro::Iron, 386, 56, 4),
            (Distro::Jazzy, 388, 56, 4),
            (Distro::Kilted, 388, 56, 4),
        ]
    );
}

#[test]
fn the_bundled_definitions_hash_to_the_published_and_recorded_values() {
    // ros2-cdr.md §11, and the hashes rosbag2 recorded in testdata/rosbag2 (Jazzy-era files).
    let jazzy = Registry::standard(Distro::Jazzy);
    for (type_name, hash) in [
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
        (
            "service_msgs/msg/ServiceEventInfo",
            "41bcbbe07a75c9b52bc96bfd5c24d7f0fc0a08c0cb7921b3373c5732345a6f45",
        ),
        (
            "rcl_interfaces/msg/Log",
            "e28ce254ca8abc06abf92773b74602cdbf116ed34fbaf294fb9f81da9f318eac",
        ),
        (
            "rcl_interfaces/msg/ParameterEvent",
            "043e627780fcad87a22d225bc2a037361dba713fca6a6b9f4b869a5aa0393204",
        ),
        (
            "example_interfaces/srv/AddTwoInts_Event",
            "32c1d140259c71e5c355115942bcb31df98b4330e4d906b1b75ccb1c9b3ce6c8",
        ),
        (
            "test_msgs/msg/Strings",
            "eee55533636293ac7c94c62432eedb5777eb849847d2a17b4dcead8c4a20ab32",
        ),
        (
            "test_msgs/srv/BasicTypes_Event",
            "5b9988a4805a06ae22dff12903a774ccda710e9514926b826ffc884e3a9a982e",
        ),
    ] {
        assert_eq!(
            jazzy.type_hash(&name(type_name)).unwrap(),
            format!("RIHS01_{hash}"),
            "{type_name}"
        );
    }
    assert_eq!(
        jazzy
            .service_type_hash(&name("example_interfaces/srv/AddTwoInts"))
            .unwrap(),
        "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a"
    );
}

#[test]
fn every_hash_equals_what_rosidl_computes_for_the_same_files() {
    // testdata/ros2-hashes/<distro>.tsv: every message, service and action of the same
    // repository commits, hashed by rosidl's own Python code (scripts/rosidl-reference-hashes.py).
    for &distro in Distro::ALL {
        let registry = Registry::standard(distro);
        let reference = String::from_utf8(robolog_testkit::testdata::read(format!(
            "ros2-hashes/{distro}.tsv"
        )))
        .unwrap();
        let mut checked = 0;
        let mut wrong = Vec::new();
        for line in reference.lines() {
            let (full_name, expected) = line.split_once('\t').unwrap();
            let type_name = name(full_name);
            let ours = if full_name.contains("/action/") && registry.action(&type_name).is_some() {
                registry.action_type_hash(&type_name)
            } else if !full_name.contains("/msg/") && registry.service(&type_name).is_some() {
                // Services, also where a message has the same name (test_msgs/srv/Arrays).
                registry.service_type_hash(&type_name)
            } else {
                registry.type_hash(&type_name)
            };
            match ours {
                Ok(hash) if hash == expected => {}
                other => wrong.push(format!("{full_name}: {other:?}, rosidl {expected}")),
            }
            checked += 1;
        }
        assert_eq!(wrong, Vec::<String>::new(), "{distro}");
        // Every type of the store has its reference, except in Humble, which has no
        // service_msgs: rosidl cannot describe its service events, so the reference lacks the
        // services and their events (the store derives them for Iron's layout anyway).
        let ours = registry.len() + registry.services().count() + registry.actions().count();
        if distro == Distro::Humble {
            assert!(checked < ours, "{distro}");
        } else {
            assert_eq!(checked, ours, "{distro}");
        }
    }
}

#[test]
fn action_hashes_equal_the_values_rosidl_generated() {
    // Published by another implementation's tests, which check them against the JSON files
    // rosidl installs (not run here): the action, its goal, both services and the feedback
    // message.
    let jazzy = Registry::standard(Distro::Jazzy);
    let fibonacci = name("example_interfaces/action/Fibonacci");
    let sibling = |suffix: &str| name(&format!("example_interfaces/Fibonacci_{suffix}"));
    assert_eq!(
        [
            jazzy.action_type_hash(&fibonacci).unwrap(),
            jazzy.type_hash(&sibling("Goal")).unwrap(),
            jazzy.service_type_hash(&sibling("SendGoal")).unwrap(),
            jazzy.service_type_hash(&sibling("GetResult")).unwrap(),
            jazzy.type_hash(&sibling("FeedbackMessage")).unwrap(),
        ],
        [
            "RIHS01_9508051da1ea4658de144b09bd0690ff3de52104683d847aed764d2915906f51",
            "RIHS01_226cb437e4355dcd3e914f930382a3b0cc1da81545bd319ed554e95a03255f51",
            "RIHS01_d1a57fb2a4afe8c21e34fb10db206f16ce6729b28531141472df92277c55b557",
            "RIHS01_1b0de0d5d29dc955d92f546706568428632771db13ec84c15ec1c1a59f424a57",
            "RIHS01_c1de71afd52e49a89c53d8262366884185bc0a02f78ce051c4e46b0a7fe59bb2",
        ]
    );
}

#[test]
fn types_without_a_schema_resolve_from_the_store() {
    // rosbag2 writes no schema for action topics (`unknown`) and none when a definition was
    // not installed; the store has the types such topics carry.
    let jazzy = Registry::standard(Distro::Jazzy);
    for type_name in [
        "example_interfaces/action/Fibonacci_FeedbackMessage",
        "example_interfaces/action/Fibonacci_SendGoal_Event",
        "action_msgs/msg/GoalStatusArray",
        "action_msgs/srv/CancelGoal_Event",
        "tf2_msgs/msg/TFMessage",
        "std_srvs/srv/Trigger_Event",
        "test_msgs/msg/Arrays",
        "lifecycle_msgs/msg/TransitionEvent",
    ] {
        let mut registry = Registry::new();
        let root = name(type_name);
        registry.fill_missing_from(jazzy, &root);
        registry
            .dependencies(&root)
            .unwrap_or_else(|e| panic!("{type_name}: {e}"));
        assert_eq!(
            registry.type_hash(&root).unwrap(),
            jazzy.type_hash(&root).unwrap()
        );
    }
    // `test_msgs/msg/Arrays` and the service `test_msgs/srv/Arrays` both exist.
    assert!(jazzy.service(&name("test_msgs/srv/Arrays")).is_some());
    assert_eq!(
        jazzy.require(&name("test_msgs/msg/Arrays")).unwrap().fields[0].type_text,
        "bool[3]"
    );
}

#[test]
fn distros_differ_where_ros_changed() {
    // sensor_msgs/NavSatStatus gained STATUS_UNKNOWN (-2) in Jazzy; service_msgs arrived in Iron.
    let status = name("sensor_msgs/NavSatStatus");
    let has_unknown = |d: Distro| {
        Registry::standard(d)
            .require(&status)
            .unwrap()
            .constant("STATUS_UNKNOWN")
            .map(|c| c.value.clone())
    };
    assert_eq!(has_unknown(Distro::Iron), None);
    assert_eq!(has_unknown(Distro::Jazzy), Some(Value::Int(-2)));
    assert!(
        Registry::standard(Distro::Humble)
            .service(&name("type_description_interfaces/GetTypeDescription"))
            .is_none()
    );
    assert!(
        Registry::standard(Distro::Iron)
            .service(&name("type_description_interfaces/GetTypeDescription"))
            .is_some()
    );
    assert_eq!("Jazzy".parse::<Distro>().unwrap(), Distro::Jazzy);
    assert!("rolling".parse::<Distro>().is_err());
}

/// rosbags' typestores, parsed from tests/interop/rosbags_typestores.py: store → type →
/// (constants, fields) in `.msg` spelling.
type Stores = BTreeMap<String, BTreeMap<String, (Vec<String>, Vec<String>)>>;

fn rosbags_typestores(python: &std::path::Path, stores: &[&str]) -> Stores {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/interop/rosbags_typestores.py");
    let args: Vec<&OsStr> = stores.iter().map(OsStr::new).collect();
    let output = interop::run(python, &script, &args).unwrap();
    let mut out = Stores::new();
    let mut current: Option<(String, String)> = None;
    for line in output.lines() {
        let (tag, rest) = line.split_once(' ').unwrap();
        match tag {
            "T" => {
                let (store, type_name) = rest.split_once(' ').unwrap();
                out.entry(store.to_owned())
                    .or_default()
                    .insert(type_name.to_owned(), (Vec::new(), Vec::new()));
                current = Some((store.to_owned(), type_name.to_owned()));
            }
            _ => {
                let (store, type_name) = current.as_ref().unwrap();
                let entry = out.get_mut(store).unwrap().get_mut(type_name).unwrap();
                if tag == "C" {
                    entry.0.push(rest.to_owned());
                } else {
                    entry.1.push(rest.to_owned());
                }
            }
        }
    }
    out
}

/// A constant as the script prints it: `TYPE NAME VALUE`.
fn constant_line(constant: &robolog_msg::Constant) -> String {
    let ty = constant.ty.as_str();
    let value = match &constant.value {
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => format!("{f:?}"),
        Value::String(s) => format!("{s:?}"),
        Value::Array(_) => "array".to_owned(),
    };
    format!("{ty} {} {value}", constant.name)
}

#[test]
fn every_type_of_rosbags_typestores_has_the_same_fields_and_constants() {
    let Some(python) = interop::python() else {
        return;
    };
    let stores = rosbags_typestores(
        &python,
        &["ros2_humble", "ros2_iron", "ros2_jazzy", "ros2_kilted"],
    );
    let mut compared = 0;
    let mut missing = Vec::new();
    let mut differences = Vec::new();
    for (store, types) in &stores {
        let distro: Distro = store.trim_start_matches("ros2_").parse().unwrap();
        let registry = Registry::standard(distro);
        for (type_name, (constants, fields)) in types {
            let Some(ours) = registry.get(&name(type_name)) else {
                missing.push(format!("{distro} {type_name}"));
                continue;
            };
            let our_fields: Vec<String> = ours
                .fields
                .iter()
                .map(|f| format!("{} {}", f.ty, f.name))
                .collect();
            if &our_fields != fields {
                differences.push(format!(
                    "{distro} {type_name}: {our_fields:?} != {fields:?}"
                ));
            }
            let our_constants: Vec<String> = ours.constants.iter().map(constant_line).collect();
            // Floats print the same shortest round-trip digits in both languages, except for
            // the exponent style, which no standard constant uses.
            if &our_constants != constants {
                differences.push(format!(
                    "{distro} {type_name}: {our_constants:?} != {constants:?}"
                ));
            }
            compared += 1;
        }
    }
    assert_eq!(differences, Vec::<String>::new());
    // What rosbags has and the store does not: nav_msgs/Goals came to rolling after the
    // snapshot the kilted bundle was generated from (see interfaces/README.md).
    assert_eq!(missing, ["kilted nav_msgs/Goals"]);
    assert_eq!(compared, 633);
}
