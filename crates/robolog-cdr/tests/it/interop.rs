//! Differential tests against the PyPI `rosbags` serializer and deserializer (pinned in
//! `scripts/interop-requirements.txt`).
//!
//! `tests/interop/rosbags_cdr.py` generates random values of every type of rosbags' ROS 2
//! typestores (humble and jazzy) and of custom types with every rare `.msg` feature, serializes
//! them with rosbags (little and big endian), and prints the schema text as rosbag2 would store
//! it, the bytes and rosbags' deserialized value. Each message is then decoded here and
//! compared field by field (names and order, integers exactly, floats bit-exact with NaN equal
//! to NaN, octet arrays byte for byte), encoded back to the same bytes in both byte orders,
//! projected, and rendered as JSON.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::path::Path;

use robolog_cdr::{Encapsulation, FieldRef, MessageRef, Plan, PrimitiveKind, Value};
use robolog_testkit::interop;
use serde_json::Value as Json;

use crate::support::hex;

fn script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/rosbags_cdr.py")
}

/// Compares a float with rosbags' double bits (float32 values arrive exactly widened).
fn same_float(ours: f64, expected: &Json, path: &str) -> Result<(), String> {
    let bits = expected
        .get("f")
        .and_then(Json::as_str)
        .ok_or_else(|| format!("{path}: rosbags has {expected}, we have a float"))?;
    let theirs = f64::from_le_bytes(hex(bits).try_into().unwrap());
    if ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()) {
        Ok(())
    } else {
        Err(format!("{path}: {ours:?} != rosbags {theirs:?}"))
    }
}

fn same_scalar(
    value: Value<'_>,
    type_text: &str,
    expected: &Json,
    path: &str,
) -> Result<(), String> {
    let mismatch = || Err(format!("{path}: {value:?} != rosbags {expected}"));
    match value {
        Value::Bool(v) => {
            if expected.as_bool() == Some(v) {
                Ok(())
            } else {
                mismatch()
            }
        }
        Value::Float32(v) => same_float(f64::from(v), expected, path),
        Value::Float64(v) => same_float(v, expected, path),
        Value::String(bytes) => {
            if expected.as_str().map(str::as_bytes) == Some(bytes) {
                Ok(())
            } else {
                mismatch()
            }
        }
        Value::UInt64(v) => {
            if expected.as_u64() == Some(v) {
                Ok(())
            } else {
                mismatch()
            }
        }
        // rosbags reads a scalar `byte` as int8; rosidl's octet is unsigned: same byte.
        Value::UInt8(v) if type_text == "byte" => {
            if expected.as_i64().map(|e| e as u8) == Some(v) {
                Ok(())
            } else {
                mismatch()
            }
        }
        other => match other.as_i64() {
            Some(v) if expected.as_i64() == Some(v) => Ok(()),
            _ => mismatch(),
        },
    }
}

fn same_field(field: FieldRef<'_, '_>, expected: &Json, path: &str) -> Result<(), String> {
    match field.value() {
        Value::Message(_) => same_message(field.as_message().unwrap(), expected, path),
        Value::Messages(_) => {
            let theirs = expected
                .as_array()
                .ok_or_else(|| format!("{path}: rosbags has {expected}"))?;
            let ours: Vec<MessageRef<'_, '_>> = field.messages().unwrap().collect();
            if ours.len() != theirs.len() {
                return Err(format!(
                    "{path}: {} elements != rosbags {}",
                    ours.len(),
                    theirs.len()
                ));
            }
            for (i, (message, expected)) in ours.into_iter().zip(theirs).enumerate() {
                same_message(message, expected, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        Value::Strings(_) => {
            let theirs: Vec<&[u8]> = expected
                .as_array()
                .ok_or_else(|| format!("{path}: rosbags has {expected}"))?
                .iter()
                .map(|s| s.as_str().unwrap_or("\u{0}not a string").as_bytes())
                .collect();
            let ours: Vec<&[u8]> = field.strings().unwrap().collect();
            if ours == theirs {
                Ok(())
            } else {
                Err(format!("{path}: strings differ: {ours:?} != {theirs:?}"))
            }
        }
        Value::Array(array) if array.kind() == PrimitiveKind::UInt8 => {
            let theirs = match expected.get("hex").and_then(Json::as_str) {
                Some(text) => Some(hex(text)),
                // rosbags reads `byte` arrays as int8 arrays: the same bytes.
                None if field.type_text().starts_with("byte") => expected.as_array().map(|items| {
                    items
                        .iter()
                        .map(|v| v.as_i64().unwrap_or(999) as u8)
                        .collect()
                }),
                None => None,
            };
            if theirs.as_deref() == Some(array.as_bytes()) {
                Ok(())
            } else {
                Err(format!(
                    "{path}: octet array differs from rosbags {expected}"
                ))
            }
        }
        Value::Array(array) => {
            let theirs = expected
                .as_array()
                .ok_or_else(|| format!("{path}: rosbags has {expected}"))?;
            if array.len() != theirs.len() {
                return Err(format!(
                    "{path}: {} elements != rosbags {}",
                    array.len(),
                    theirs.len()
                ));
            }
            for (i, (value, expected)) in array.iter().zip(theirs).enumerate() {
                same_scalar(value, "", expected, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        scalar => same_scalar(scalar, field.type_text(), expected, path),
    }
}

fn same_message(message: MessageRef<'_, '_>, expected: &Json, path: &str) -> Result<(), String> {
    let theirs: Vec<(&str, &Json)> = expected
        .get("m")
        .and_then(Json::as_array)
        .ok_or_else(|| format!("{path}: rosbags has {expected}, we have a message"))?
        .iter()
        .map(|pair| (pair[0].as_str().unwrap(), &pair[1]))
        .collect();
    let our_names: Vec<&str> = message.fields().map(|f| f.name()).collect();
    let their_names: Vec<&str> = theirs.iter().map(|(name, _)| *name).collect();
    if our_names != their_names {
        return Err(format!(
            "{path}: fields {our_names:?} != rosbags {their_names:?}"
        ));
    }
    for (field, (name, expected)) in message.fields().zip(theirs) {
        let inner = if path.is_empty() {
            name.to_owned()
        } else {
            format!("{path}.{name}")
        };
        same_field(field, expected, &inner)?;
    }
    Ok(())
}

/// Checks one generated message: decoded values, encoding in both byte orders, projections of
/// the top-level values, JSON. Returns the type name.
fn check_generated(record: &Json, plans: &mut HashMap<(String, String), Plan>) -> String {
    let text = |key: &str| record[key].as_str().unwrap().to_owned();
    let (source, type_name, definition) = (text("source"), text("type"), text("definition"));
    let data = hex(&text("data"));
    let data_be = hex(&text("data_be"));
    let plan = plans
        .entry((type_name.clone(), definition.clone()))
        .or_insert_with(|| {
            Plan::from_bundle(&type_name, &definition)
                .unwrap_or_else(|e| panic!("{source} {type_name}: {e}\n{definition}"))
        });
    let context = || format!("{source} {type_name} {}", text("data"));
    let decoded = plan
        .decode_strict(&data)
        .unwrap_or_else(|e| panic!("{}: {e}", context()));
    if let Err(difference) = same_message(decoded.root(), &record["value"], "") {
        panic!("{}: {difference}", context());
    }
    assert_eq!(decoded.encode().unwrap(), data, "{}: encode", context());

    let big = plan
        .decode_strict(&data_be)
        .unwrap_or_else(|e| panic!("{} (big endian): {e}", context()));
    assert_eq!(big.encapsulation(), Encapsulation::CdrBe);
    if let Err(difference) = same_message(big.root(), &record["value"], "") {
        panic!("{} (big endian): {difference}", context());
    }
    assert_eq!(big.encode().unwrap(), data_be, "{}: encode BE", context());
    assert_eq!(
        plan.encode_as(decoded.tree(), Encapsulation::CdrBe)
            .unwrap(),
        data_be,
        "{}: LE tree encoded BE",
        context()
    );

    // Every top-level value a projection can select gives the tree's value.
    let leaves: Vec<&str> = decoded
        .root()
        .fields()
        .filter(|f| {
            !matches!(
                f.value(),
                Value::Message(_) | Value::Messages(_) | Value::Strings(_)
            )
        })
        .map(|f| f.name())
        .collect();
    let projection = plan.projection(&leaves).unwrap();
    for (name, value) in leaves.iter().zip(projection.extract(&data).unwrap()) {
        let expected = decoded.get(name).unwrap();
        let same = match (value, expected) {
            (Some(Value::Float32(a)), Value::Float32(b)) => a.to_bits() == b.to_bits(),
            (Some(Value::Float64(a)), Value::Float64(b)) => a.to_bits() == b.to_bits(),
            (value, expected) => value == Some(expected),
        };
        assert!(same, "{}: projection of {name}", context());
    }

    #[cfg(feature = "serde")]
    {
        let json: Json = serde_json::from_str(&decoded.to_json()).unwrap();
        assert_eq!(
            json.as_object().unwrap().len(),
            decoded.root().fields().len()
        );
        assert_eq!(decoded.to_json(), big.to_json());
    }
    type_name
}

fn run(args: &[&str]) -> Option<String> {
    let python = interop::python()?;
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    Some(interop::run(&python, &script(), &args).unwrap())
}

#[test]
fn every_type_of_the_rosbags_typestores_round_trips() {
    let Some(output) = run(&["typestores", "3"]) else {
        return;
    };
    let mut plans = HashMap::new();
    let mut per_source: BTreeMap<String, usize> = BTreeMap::new();
    let mut types: BTreeMap<String, usize> = BTreeMap::new();
    for line in output.lines() {
        let record: Json = serde_json::from_str(line).unwrap();
        let type_name = check_generated(&record, &mut plans);
        *per_source
            .entry(record["source"].as_str().unwrap().to_owned())
            .or_default() += 1;
        *types.entry(type_name).or_default() += 1;
    }
    // Every type of both stores (rosbags 0.11.9: 150 in humble, 162 in jazzy), 3 values each.
    assert_eq!(per_source.get("humble"), Some(&450), "{per_source:?}");
    assert_eq!(per_source.get("jazzy"), Some(&486), "{per_source:?}");
    for required in [
        "sensor_msgs/msg/Imu",
        "sensor_msgs/msg/PointCloud2",
        "tf2_msgs/msg/TFMessage",
        "rcl_interfaces/msg/Log",
        "std_msgs/msg/Empty",
        "rcl_interfaces/msg/ParameterEvent",
        "visualization_msgs/msg/MarkerArray",
        "service_msgs/msg/ServiceEventInfo",
    ] {
        assert!(types.contains_key(required), "{required} not covered");
    }
}

#[test]
fn custom_types_with_every_rare_feature_round_trip() {
    let Some(output) = run(&["custom", "40"]) else {
        return;
    };
    let mut plans = HashMap::new();
    let mut count = 0;
    let mut empty_before_int64 = 0;
    for line in output.lines() {
        let record: Json = serde_json::from_str(line).unwrap();
        check_generated(&record, &mut plans);
        count += 1;
        // The interesting layout happened: an empty float64 sequence right before an int64.
        let plan = plans.values().next().unwrap();
        let data = hex(record["data"].as_str().unwrap());
        let decoded = plan.decode(&data).unwrap();
        if decoded
            .get("empty_first")
            .unwrap()
            .as_array()
            .unwrap()
            .is_empty()
        {
            empty_before_int64 += 1;
        }
    }
    assert_eq!(count, 40);
    assert!(empty_before_int64 > 10, "{empty_before_int64}");
}

/// Every MCAP file of `testdata/rosbag2/` (written by ROS 2's own rosbag2), with its message
/// count per type.
const ROSBAG2_FILES: [(&str, &[(&str, usize)]); 6] = [
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

/// Every message of every rosbag2 MCAP file decodes strictly from its own schema (service
/// events from the `.srv` text rosbag2 stores), with rosbags' values, and encodes to the bytes
/// rosbags writes for them (the recorded bytes, with zeros where the recorder left stale
/// padding).
#[test]
fn every_message_of_the_rosbag2_files_matches_rosbags() {
    let paths: Vec<String> = ROSBAG2_FILES
        .iter()
        .map(|(file, _)| {
            robolog_testkit::testdata::path(file)
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let mut args = vec!["mcap"];
    args.extend(paths.iter().map(String::as_str));
    let Some(output) = run(&args) else {
        return;
    };
    let mut plans: HashMap<(String, String), Plan> = HashMap::new();
    let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
    for line in output.lines() {
        let record: Json = serde_json::from_str(line).unwrap();
        let text = |key: &str| record[key].as_str().unwrap().to_owned();
        let (source, type_name) = (text("source"), text("type"));
        let (encoding, definition) = (text("encoding"), text("definition"));
        let data = hex(&text("data"));
        let plan = plans
            .entry((type_name.clone(), definition.clone()))
            .or_insert_with(|| {
                Plan::from_schema(&type_name, &encoding, &definition)
                    .unwrap_or_else(|e| panic!("{source} {type_name}: {e}"))
            });
        let decoded = plan
            .decode_strict(&data)
            .unwrap_or_else(|e| panic!("{source} {type_name}: {e}"));
        if let Err(difference) = same_message(decoded.root(), &record["value"], "") {
            panic!("{source} {type_name} {}: {difference}", text("data"));
        }
        // Recorders leave stale bytes in padding; encoders (rosbags and ours) write zeros.
        let encoded = decoded.encode().unwrap();
        assert_eq!(encoded, hex(&text("reencoded")), "{source} {type_name}");
        assert_eq!(encoded.len(), data.len(), "{source} {type_name}");
        #[cfg(feature = "serde")]
        let _: Json = serde_json::from_str(&decoded.to_json()).unwrap();
        let file = ROSBAG2_FILES[paths.iter().position(|p| *p == source).unwrap()].0;
        *counts.entry((file.to_owned(), type_name)).or_default() += 1;
    }
    let expected: BTreeMap<(String, String), usize> = ROSBAG2_FILES
        .iter()
        .flat_map(|(file, types)| {
            types
                .iter()
                .map(move |(ty, n)| (((*file).to_owned(), (*ty).to_owned()), *n))
        })
        .collect();
    assert_eq!(counts, expected);
}
