//! Differential test against the PyPI `rosbags` deserializer (pinned in
//! `scripts/interop-requirements.txt`).
//!
//! `tests/it/interop/rosbags_dump.py` reads the project's ROS 1 bags with rosbags and prints, for
//! every message, the connection's type and definition, the raw message bytes and rosbags'
//! deserialized value. Until the bag reader crate exists, that script is also where the raw
//! bytes come from. Each message is then decoded here and compared field by field (field names
//! and order, integers exactly, floats bit-exact with NaN equal to NaN, `uint8[]` byte for
//! byte), encoded back to the same bytes, projected, and rendered as JSON.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;

use robolog_ros1::{FieldRef, MessageRef, Plan, PrimitiveKind, Value};
use robolog_testkit::{interop, testdata};
use serde_json::Value as Json;

/// Every ROS 1 bag that rosbags reads, with the message count the bag README gives.
const BAGS: [(&str, usize); 25] = [
    ("bags/generated/ros_comm/ref_none.bag", 150),
    ("bags/generated/rosbags/rosbags_none.bag", 150),
    ("bags/upstream/embag/array_test.bag", 20),
    ("bags/upstream/embag/test_2.bag", 2),
    ("bags/upstream/rosbag.js/example-bz2.bag", 8647),
    ("bags/upstream/rosbag.js/example-unsorted-chunks.bag", 3),
    ("bags/upstream/swri-bag-reader-java/Bool.bag", 2),
    ("bags/upstream/swri-bag-reader-java/Float32.bag", 1),
    (
        "bags/upstream/swri-bag-reader-java/Float32MultiArray.bag",
        1,
    ),
    ("bags/upstream/swri-bag-reader-java/Float64.bag", 1),
    (
        "bags/upstream/swri-bag-reader-java/Float64MultiArray.bag",
        1,
    ),
    ("bags/upstream/swri-bag-reader-java/Int16.bag", 1),
    ("bags/upstream/swri-bag-reader-java/Int16MultiArray.bag", 1),
    ("bags/upstream/swri-bag-reader-java/Int32.bag", 1),
    ("bags/upstream/swri-bag-reader-java/Int32MultiArray.bag", 1),
    ("bags/upstream/swri-bag-reader-java/Int64.bag", 1),
    ("bags/upstream/swri-bag-reader-java/Int64MultiArray.bag", 1),
    ("bags/upstream/swri-bag-reader-java/Int8.bag", 1),
    ("bags/upstream/swri-bag-reader-java/Int8MultiArray.bag", 1),
    ("bags/upstream/swri-bag-reader-java/PointCloud2.bag", 1),
    ("bags/upstream/swri-bag-reader-java/UInt16.bag", 1),
    ("bags/upstream/swri-bag-reader-java/UInt16MultiArray.bag", 1),
    ("bags/upstream/swri-bag-reader-java/UInt32MultiArray.bag", 1),
    ("bags/upstream/swri-bag-reader-java/UInt64MultiArray.bag", 1),
    ("bags/upstream/swri-bag-reader-java/UInt8MultiArray.bag", 1),
];

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
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

fn same_time(secs: i64, nsecs: i64, expected: &Json, path: &str) -> Result<(), String> {
    // rosbags gives ROS 1 times as builtin_interfaces Time/Duration messages (sec, nanosec).
    let part = |i: usize, name: &str| {
        let pair = expected.get("m")?.get(i)?;
        (pair.get(0)?.as_str()? == name).then(|| pair.get(1)?.as_i64())?
    };
    let theirs = (part(0, "sec"), part(1, "nanosec"));
    if theirs == (Some(secs), Some(nsecs)) {
        Ok(())
    } else {
        Err(format!("{path}: ({secs}, {nsecs}) != rosbags {expected}"))
    }
}

fn same_scalar(value: Value<'_>, expected: &Json, path: &str) -> Result<(), String> {
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
        Value::Time(t) => same_time(i64::from(t.secs), i64::from(t.nsecs), expected, path),
        Value::Duration(d) => same_time(i64::from(d.secs), i64::from(d.nsecs), expected, path),
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
                Err(format!("{path}: strings differ"))
            }
        }
        Value::Array(array) if array.kind() == PrimitiveKind::UInt8 => {
            let theirs = expected.get("hex").and_then(Json::as_str).map(hex);
            if theirs.as_deref() == Some(array.as_bytes()) {
                Ok(())
            } else {
                Err(format!("{path}: uint8 array differs from rosbags"))
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
                same_scalar(value, expected, &format!("{path}[{i}]"))?;
            }
            Ok(())
        }
        scalar => same_scalar(scalar, expected, path),
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

#[test]
fn every_bag_message_matches_rosbags() {
    let Some(python) = interop::python() else {
        return;
    };
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/interop/rosbags_dump.py");
    let bags: Vec<_> = BAGS.iter().map(|(bag, _)| testdata::path(bag)).collect();
    let args: Vec<&OsStr> = bags.iter().map(|p| p.as_os_str()).collect();
    let output = interop::run(&python, &script, &args).unwrap();

    let mut plans: HashMap<(String, String), Plan> = HashMap::new();
    let mut per_bag: BTreeMap<String, usize> = BTreeMap::new();
    let mut per_type: BTreeMap<String, usize> = BTreeMap::new();
    for line in output.lines() {
        let record: Json = serde_json::from_str(line).unwrap();
        let text = |key: &str| record[key].as_str().unwrap().to_owned();
        let (bag, type_name, definition) = (text("bag"), text("type"), text("definition"));
        let data = hex(&text("data"));
        let plan = plans
            .entry((type_name.clone(), definition.clone()))
            .or_insert_with(|| Plan::from_bundle(&type_name, &definition).unwrap());
        let decoded = plan
            .decode_strict(&data)
            .unwrap_or_else(|e| panic!("{bag} {type_name}: {e}"));
        if let Err(difference) = same_message(decoded.root(), &record["value"], "") {
            panic!("{bag} {type_name}: {difference}");
        }
        assert_eq!(
            decoded.encode().unwrap(),
            data,
            "{bag} {type_name}: encode differs"
        );

        // Every top-level scalar through the projection gives the tree's value.
        let scalars: Vec<&str> = decoded
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
        let projection = plan.projection(&scalars).unwrap();
        for (name, value) in scalars.iter().zip(projection.extract(&data).unwrap()) {
            assert_eq!(
                value,
                Some(decoded.get(name).unwrap()),
                "{bag} {type_name} {name}"
            );
        }

        #[cfg(feature = "serde")]
        {
            let json: Json = serde_json::from_str(&decoded.to_json()).unwrap();
            let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
            assert_eq!(keys.len(), decoded.root().fields().len());
        }
        *per_bag.entry(bag).or_default() += 1;
        *per_type.entry(type_name).or_default() += 1;
    }
    for ((bag, count), path) in BAGS.iter().zip(&bags) {
        assert_eq!(per_bag.get(path.to_str().unwrap()), Some(count), "{bag}");
    }
    // The types the acceptance criteria name are all covered.
    for required in [
        "sensor_msgs/msg/Imu",
        "sensor_msgs/msg/PointCloud2",
        "tf2_msgs/msg/TFMessage",
        "rosgraph_msgs/msg/Log",
    ] {
        assert!(
            per_type.contains_key(required),
            "{required} not covered: {per_type:?}"
        );
    }
}
