//! The byte vectors of the CDR spec (`ros2-cdr.md` §5 and §9), decoded value by value and
//! encoded back byte for byte.

use robolog_cdr::{ByteOrder, Encapsulation, Plan, Value};

use crate::support::{POSE_STAMPED, hex, plan};

/// §9.1: PoseStamped, XCDR1 little endian, 84 bytes (rosbags 0.11.9 `serialize_cdr`).
const POSE_LE: &str = "00010000 00f15365 15cd5b07 05000000 6f646f6d00 00000000000000
    000000000000f03f 0000000000000040 0000000000000840
    0000000000000000 0000000000000000 0000000000000000 000000000000f03f";

/// §9.1, big endian.
const POSE_BE: &str = "00000000 6553f100 075bcd15 00000005 6f646f6d00 00000000000000
    3ff0000000000000 4000000000000000 4008000000000000
    0000000000000000 0000000000000000 0000000000000000 3ff0000000000000";

/// §9.1, PLAIN_CDR2 little endian: 8-byte values align to 4, so position.x is at payload 20.
const POSE_XCDR2: &str = "00070000 00f15365 15cd5b07 05000000 6f646f6d00 000000
    000000000000f03f 0000000000000040 0000000000000840
    0000000000000000 0000000000000000 0000000000000000 000000000000f03f";

fn check_pose(plan: &Plan, bytes: &[u8], encapsulation: Encapsulation) {
    let decoded = plan.decode_strict(bytes).unwrap();
    assert_eq!(decoded.encapsulation(), encapsulation);
    assert_eq!(decoded.decoding().end(), bytes.len());
    assert_eq!(
        decoded.get("header.stamp.sec").unwrap(),
        Value::Int32(1_700_000_000)
    );
    assert_eq!(
        decoded.get("header.stamp.nanosec").unwrap(),
        Value::UInt32(123_456_789)
    );
    assert_eq!(
        decoded.get("header.frame_id").unwrap().as_str(),
        Some("odom")
    );
    for (path, value) in [
        ("pose.position.x", 1.0),
        ("pose.position.y", 2.0),
        ("pose.position.z", 3.0),
        ("pose.orientation.x", 0.0),
        ("pose.orientation.y", 0.0),
        ("pose.orientation.z", 0.0),
        ("pose.orientation.w", 1.0),
    ] {
        assert_eq!(decoded.get(path).unwrap(), Value::Float64(value), "{path}");
    }
    assert_eq!(decoded.encode().unwrap(), bytes);
    // The projection reads the same values straight from the bytes.
    let projection = plan
        .projection(&["pose.position.x", "header.frame_id", "pose.orientation.w"])
        .unwrap();
    assert_eq!(
        projection.extract(bytes).unwrap(),
        [
            Some(Value::Float64(1.0)),
            Some(Value::String(b"odom")),
            Some(Value::Float64(1.0))
        ]
    );
}

#[test]
fn pose_stamped_in_every_encapsulation_the_spec_shows() {
    let plan = Plan::from_bundle("geometry_msgs/msg/PoseStamped", POSE_STAMPED).unwrap();
    let le = hex(POSE_LE);
    let be = hex(POSE_BE);
    let xcdr2 = hex(POSE_XCDR2);
    assert_eq!((le.len(), be.len(), xcdr2.len()), (84, 84, 80));
    check_pose(&plan, &le, Encapsulation::CdrLe);
    check_pose(&plan, &be, Encapsulation::CdrBe);
    check_pose(&plan, &xcdr2, Encapsulation::PlainCdr2Le);
    // position.x sits at payload 24 (after 7 bytes of padding), not 20: the alignment origin
    // is the byte after the header.
    assert_eq!(&le[28..36], &1.0f64.to_le_bytes());

    // Re-encoding one decoded tree in each encapsulation gives each vector.
    let tree = plan.decode(&le).unwrap().into_tree();
    assert_eq!(plan.encode(&tree).unwrap(), le);
    assert_eq!(plan.encode_as(&tree, Encapsulation::CdrBe).unwrap(), be);
    assert_eq!(
        plan.encode_as(&tree, Encapsulation::PlainCdr2Le).unwrap(),
        xcdr2
    );
    // PLAIN_CDR2 big endian: the big-endian values at the XCDR2 offsets.
    let xcdr2_be = plan.encode_as(&tree, Encapsulation::PlainCdr2Be).unwrap();
    assert_eq!(&xcdr2_be[..4], &[0, 6, 0, 0]);
    assert_eq!(&xcdr2_be[24..32], &1.0f64.to_be_bytes());
    check_pose(&plan, &xcdr2_be, Encapsulation::PlainCdr2Be);
}

/// §9.2: the REQUEST_SENT event of rosbag2's `bag_with_topics_and_service_events`
/// (`test_msgs/srv/BasicTypes_Event`, 112 bytes), with the event type written out as rosidl
/// builds it from the `.srv`.
const BASIC_TYPES_EVENT: &str = "\
service_msgs/ServiceEventInfo info
BasicTypes_Request[<=1] request
BasicTypes_Response[<=1] response
================================================================================
MSG: service_msgs/ServiceEventInfo
uint8 REQUEST_SENT = 0
uint8 REQUEST_RECEIVED = 1
uint8 RESPONSE_SENT = 2
uint8 RESPONSE_RECEIVED = 3
uint8 event_type
builtin_interfaces/Time stamp
char[16] client_gid
int64 sequence_number
================================================================================
MSG: test_msgs/BasicTypes_Request
bool bool_value
byte byte_value
char char_value
float32 float32_value
float64 float64_value
int8 int8_value
uint8 uint8_value
int16 int16_value
uint16 uint16_value
int32 int32_value
uint32 uint32_value
int64 int64_value
uint64 uint64_value
string string_value
================================================================================
MSG: test_msgs/BasicTypes_Response
bool bool_value
byte byte_value
char char_value
float32 float32_value
float64 float64_value
int8 int8_value
uint8 uint8_value
int16 int16_value
uint16 uint16_value
int32 int32_value
uint32 uint32_value
int64 int64_value
uint64 uint64_value
string string_value
";

const SERVICE_EVENT: &str = "00010000
    00 000000  acf54965 eaf01710
    010feb7dd37a3779 0000030000000903
    00000000  0100000000000000
    01000000  000000 00  00000000 00000000  0000000000000000
    00 00 0000 0000 0000  00000000 00000000  0000000000000000 0000000000000000
    0100000000 000000
    00000000";

#[test]
fn the_service_event_of_the_spec() {
    let plan = Plan::from_bundle("test_msgs/srv/BasicTypes_Event", BASIC_TYPES_EVENT).unwrap();
    let bytes = hex(SERVICE_EVENT);
    assert_eq!(bytes.len(), 112);
    let decoded = plan.decode_strict(&bytes).unwrap();
    assert_eq!(decoded.get("info.event_type").unwrap(), Value::UInt8(0));
    assert_eq!(
        decoded.get("info.stamp.sec").unwrap(),
        Value::Int32(0x6549_f5ac)
    );
    assert_eq!(
        decoded.get("info.stamp.nanosec").unwrap(),
        Value::UInt32(0x1017_f0ea)
    );
    let gid = decoded.get("info.client_gid").unwrap().as_array().unwrap();
    assert_eq!(gid.as_bytes(), hex("010feb7dd37a3779 0000030000000903"));
    assert_eq!(
        decoded.get("info.sequence_number").unwrap(),
        Value::Int64(1)
    );
    let request = decoded.root().field("request").unwrap();
    let requests: Vec<_> = request.messages().unwrap().collect();
    assert_eq!(requests.len(), 1);
    let fields: Vec<(&str, Value<'_>)> = requests[0]
        .fields()
        .map(|f| (f.name(), f.value()))
        .collect();
    assert_eq!(fields[0], ("bool_value", Value::Bool(false)));
    assert_eq!(fields[2], ("char_value", Value::UInt8(0)));
    assert_eq!(fields[4], ("float64_value", Value::Float64(0.0)));
    assert_eq!(fields[12], ("uint64_value", Value::UInt64(0)));
    assert_eq!(fields[13], ("string_value", Value::String(b"")));
    assert_eq!(
        decoded.get("request[0].string_value").unwrap(),
        Value::String(b"")
    );
    assert_eq!(
        decoded
            .root()
            .field("response")
            .unwrap()
            .messages()
            .unwrap()
            .len(),
        0
    );
    assert_eq!(decoded.encode().unwrap(), bytes);
    #[cfg(feature = "serde")]
    {
        let json = decoded.to_json();
        assert!(
            json.starts_with(
                r#"{"info":{"event_type":0,"stamp":{"sec":1699345836,"nanosec":270004458},"client_gid":"AQ/rfdN6N3kAAAMAAAAJAw==","sequence_number":1},"request":[{"bool_value":false,"byte_value":0,"char_value":0,"float32_value":0.0,"#
            ),
            "{json}"
        );
    }
}

#[test]
fn the_small_vectors_of_the_spec() {
    for (definition, bytes, json) in [
        (
            "string data\n",
            "00010000 03000000 686900",
            r#"{"data":"hi"}"#,
        ),
        ("string data\n", "00010000 01000000 00", r#"{"data":""}"#),
        ("", "00010000 00", "{}"),
        (
            "float64[] a\nuint8 b\nint64 c\n",
            "00010000 │ 00000000 │ 05 │ 000000 │ 0100000000000000",
            r#"{"a":[],"b":5,"c":1}"#,
        ),
        (
            "float64[] a\nuint8 b\nint64 c\n",
            "00010000 │ 01000000 │ 00000000 │ 000000000000f83f │ 05 │ 00000000000000 │ 0100000000000000",
            r#"{"a":[1.5],"b":5,"c":1}"#,
        ),
        (
            "std_msgs/Empty e\nuint8 x\n===\nMSG: std_msgs/Empty\n",
            "00010000 00 07",
            r#"{"e":{},"x":7}"#,
        ),
    ] {
        let plan = plan(definition);
        let bytes = hex(bytes);
        let decoded = plan.decode_strict(&bytes).unwrap();
        assert_eq!(decoded.encode().unwrap(), bytes, "{definition}");
        #[cfg(feature = "serde")]
        assert_eq!(decoded.to_json(), json, "{definition}");
        let _ = json;
        // Big endian: the same values from byte-swapped numbers.
        let be = plan
            .encode_as(decoded.tree(), Encapsulation::CdrBe)
            .unwrap();
        assert_eq!(be.len(), bytes.len(), "{definition}");
        assert_eq!(plan.decode_strict(&be).unwrap().tree(), decoded.tree());
    }
}

/// §5: `wstring w = "hé"`, `uint8 x = 7` in the 4-byte form every ROS 2 middleware writes on
/// Linux.
#[test]
fn wstring_in_the_four_byte_form() {
    let plan = plan("wstring w\nuint8 x\n");
    let bytes = hex("00010000 | 02000000 | 68000000 | e9000000 | 07");
    let decoded = plan.decode_strict(&bytes).unwrap();
    let wide = decoded.get("w").unwrap().as_wstring().unwrap();
    assert_eq!(wide.to_string_lossy(), "hé");
    assert_eq!(wide.units().collect::<Vec<_>>(), [0x68, 0xe9]);
    assert_eq!(decoded.get("x").unwrap(), Value::UInt8(7));
    assert_eq!(decoded.encode().unwrap(), bytes);
    #[cfg(feature = "serde")]
    assert_eq!(decoded.to_json(), r#"{"w":"hé","x":7}"#);

    // Big endian swaps each unit.
    let be = plan
        .encode_as(decoded.tree(), Encapsulation::CdrBe)
        .unwrap();
    assert_eq!(be, hex("00000000 | 00000002 | 00000068 | 000000e9 | 07"));
    let wide = plan
        .decode(&be)
        .unwrap()
        .get("w")
        .unwrap()
        .as_wstring()
        .unwrap();
    assert_eq!(wide.byte_order(), ByteOrder::BigEndian);
    assert_eq!(wide.to_string_lossy(), "hé");

    // Outside the BMP: two surrogate units (newer Fast-CDR) or one 32-bit unit (Humble's
    // wchar_t copy) both read as the character.
    for units in ["3dd80000 00de0000", "00f60100"] {
        let count = units.split_whitespace().count();
        let bytes = hex(&format!("00010000 0{count}000000 {units} 07"));
        let decoded = plan.decode_strict(&bytes).unwrap();
        assert_eq!(
            decoded
                .get("w")
                .unwrap()
                .as_wstring()
                .unwrap()
                .to_string_lossy(),
            "😀"
        );
    }
}
