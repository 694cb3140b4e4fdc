//! The byte-exact `my_pkg/Wire` vector of the spec (ros-msg.md §8), decoded field by field,
//! built by hand and encoded, cut at every byte, and rendered as JSON.

use robolog_ros1::{Duration, Error, Plan, PrimitiveArray, Time, Tree, Value, le_bytes};
use robolog_testkit::{testdata, truncation};

/// The 76 bytes of §8, written as the spec groups them.
const WIRE: &str = "01 fe c8 03000000 68c3a9 02000000 0102 070809 02000000 ffff 0001 \
                    00f15365 05000000 fdffffff 07000000 01000000 0000c03f 000000c0 \
                    02000000 01000000 61 00000000 000000000000d03f";

fn wire_bytes() -> Vec<u8> {
    let hex: String = WIRE.split_whitespace().collect();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn wire_plan() -> Plan {
    let text = String::from_utf8(testdata::read("msg/my_pkg_Wire.msgdef")).unwrap();
    Plan::from_bundle("my_pkg/Wire", &text).unwrap()
}

#[test]
fn decodes_every_field_of_the_spec_vector() {
    let bytes = wire_bytes();
    assert_eq!(bytes.len(), 76);
    let plan = wire_plan();
    let decoded = plan.decode_strict(&bytes).unwrap();
    assert_eq!(decoded.get("b").unwrap(), Value::Bool(true));
    // ROS 1 `byte` is signed, `char` unsigned (spec §9 item 12).
    assert_eq!(decoded.get("by").unwrap(), Value::Int8(-2));
    assert_eq!(decoded.get("ch").unwrap(), Value::UInt8(200));
    assert_eq!(decoded.get("s").unwrap().as_str(), Some("hé"));
    assert_eq!(decoded.get("u8v").unwrap().as_bytes(), Some(&[1u8, 2][..]));
    assert_eq!(
        decoded.get("u8f").unwrap().as_bytes(),
        Some(&[7u8, 8, 9][..])
    );
    let i16v = decoded.get("i16v").unwrap().as_array().unwrap();
    assert_eq!(i16v.to_vec::<i16>().unwrap(), [-1, 256]);
    assert_eq!(decoded.get("i16v[1]").unwrap(), Value::Int16(256));
    assert_eq!(
        decoded.get("t").unwrap(),
        Value::Time(Time {
            secs: 1_700_000_000,
            nsecs: 5
        })
    );
    assert_eq!(decoded.get("t.nsecs").unwrap(), Value::UInt32(5));
    assert_eq!(
        decoded.get("d").unwrap(),
        Value::Duration(Duration { secs: -3, nsecs: 7 })
    );
    assert_eq!(decoded.get("d.secs").unwrap(), Value::Int32(-3));
    assert_eq!(decoded.get("pts[0].x").unwrap(), Value::Float32(1.5));
    assert_eq!(decoded.get("pts[0].y").unwrap(), Value::Float32(-2.0));
    assert_eq!(decoded.get("ss[0]").unwrap().as_str(), Some("a"));
    assert_eq!(decoded.get("ss[1]").unwrap().as_str(), Some(""));
    assert_eq!(decoded.get("f").unwrap(), Value::Float64(0.25));

    // Zero-copy: strings and arrays point into the input.
    let s = decoded.get("s").unwrap().as_bytes().unwrap();
    assert!(std::ptr::eq(s.as_ptr(), bytes[7..].as_ptr()));
    let u8v = decoded.get("u8v").unwrap().as_bytes().unwrap();
    assert!(std::ptr::eq(u8v.as_ptr(), bytes[14..].as_ptr()));

    // The named views walk the same values.
    let root = decoded.root();
    let names: Vec<&str> = root.fields().map(|f| f.name()).collect();
    assert_eq!(
        names,
        [
            "b", "by", "ch", "s", "u8v", "u8f", "i16v", "t", "d", "pts", "ss", "f"
        ]
    );
    let pts: Vec<_> = root.field("pts").unwrap().messages().unwrap().collect();
    assert_eq!(pts.len(), 1);
    assert_eq!(pts[0].type_name().to_string(), "my_pkg/Point2");
    assert_eq!(pts[0].field("y").unwrap().value(), Value::Float32(-2.0));
    let ss: Vec<&[u8]> = root.field("ss").unwrap().strings().unwrap().collect();
    assert_eq!(ss, [&b"a"[..], &b""[..]]);

    assert_eq!(decoded.encode().unwrap(), bytes);
}

#[test]
fn a_hand_built_tree_encodes_to_the_spec_bytes() {
    let plan = wire_plan();
    let i16v = le_bytes(&[-1i16, 256]);
    let mut tree = Tree::new();
    let point = tree.push_message([Value::Float32(1.5), Value::Float32(-2.0)]);
    let pts = tree.push_messages([point]);
    let ss = tree.push_strings([&b"a"[..], &b""[..]]);
    tree.set_root_fields([
        Value::Bool(true),
        Value::Int8(-2),
        Value::UInt8(200),
        Value::String("hé".as_bytes()),
        Value::Array(PrimitiveArray::of::<u8>(&[1, 2]).unwrap()),
        Value::Array(PrimitiveArray::of::<u8>(&[7, 8, 9]).unwrap()),
        Value::Array(PrimitiveArray::of::<i16>(&i16v).unwrap()),
        Value::Time(Time {
            secs: 1_700_000_000,
            nsecs: 5,
        }),
        Value::Duration(Duration { secs: -3, nsecs: 7 }),
        pts,
        ss,
        Value::Float64(0.25),
    ]);
    assert_eq!(plan.encode(&tree).unwrap(), wire_bytes());
}

#[test]
fn encoder_rejects_trees_of_the_wrong_shape() {
    let plan = Plan::from_bundle("p/M", "uint8[3] fixed\nint32 x\n").unwrap();
    let mut tree = Tree::new();
    tree.set_root_fields([
        Value::Array(PrimitiveArray::of::<u8>(&[1, 2]).unwrap()),
        Value::Int32(1),
    ]);
    let error = plan.encode(&tree).unwrap_err();
    assert!(
        matches!(
            error,
            Error::WrongLength {
                expected: 3,
                found: 2,
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(error.path().unwrap().to_string(), "fixed");

    let mut tree = Tree::new();
    tree.set_root_fields([
        Value::Array(PrimitiveArray::of::<u8>(&[1, 2, 3]).unwrap()),
        Value::UInt32(1),
    ]);
    let error = plan.encode(&tree).unwrap_err();
    assert_eq!(error.to_string(), "x: expected int32, found uint32");

    let mut tree = Tree::new();
    tree.set_root_fields([Value::Int32(1)]);
    assert!(matches!(
        plan.encode(&tree).unwrap_err(),
        Error::WrongLength {
            expected: 2,
            found: 1,
            ..
        }
    ));
}

#[test]
fn trailing_bytes_are_reported_and_fatal_only_when_strict() {
    let plan = wire_plan();
    let mut bytes = wire_bytes();
    bytes.extend_from_slice(&[0xaa, 0xbb]);
    let decoded = plan.decode(&bytes).unwrap();
    assert_eq!(decoded.trailing_bytes(), 2);
    assert_eq!(decoded.encode().unwrap(), &bytes[..76]);
    match plan.decode_strict(&bytes).unwrap_err() {
        Error::TrailingBytes { offset, count } => assert_eq!((offset, count), (76, 2)),
        other => panic!("{other}"),
    }
    let mut tree = Tree::new();
    assert_eq!(plan.decode_into(&bytes, &mut tree).unwrap(), 76);
}

/// Where the spec layout says each cut lands.
#[test]
fn truncated_messages_name_the_field_and_offset() {
    let plan = wire_plan();
    let bytes = wire_bytes();
    let cases: [(usize, &str, usize, u64, usize); 6] = [
        // cut, path, offset, needed, available
        (0, "b", 0, 1, 0),
        (2, "ch", 2, 1, 0),
        (5, "s", 3, 4, 2),
        (19, "i16v", 19, 4, 0),
        (40, "d", 35, 8, 5),
        (72, "f", 68, 8, 4),
    ];
    for (cut, path, offset, needed, available) in cases {
        match plan.decode(&bytes[..cut]).unwrap_err() {
            Error::Truncated {
                path: p,
                offset: o,
                needed: n,
                available: a,
            } => {
                assert_eq!(
                    (p.to_string(), o, n, a),
                    (path.to_owned(), offset, needed, available),
                    "cut {cut}"
                );
            }
            other => panic!("cut {cut}: {other}"),
        }
    }
    // A length that points past the end: `s` says 3 bytes, 1 is left.
    match plan.decode(&bytes[..8]).unwrap_err() {
        Error::LengthPastEnd {
            path,
            offset,
            length,
            available,
            ..
        } => {
            assert_eq!(
                (path.to_string(), offset, length, available),
                ("s".to_owned(), 3, 3, 1)
            );
        }
        other => panic!("{other}"),
    }
    // The count of `pts` is checked against the bytes left before any element is looked at.
    match plan.decode(&bytes[..50]).unwrap_err() {
        Error::LengthPastEnd {
            path,
            offset,
            length,
            needed,
            available,
        } => {
            assert_eq!(
                (path.to_string(), offset, length, needed, available),
                ("pts".to_owned(), 43, 1, 8, 3)
            );
        }
        other => panic!("{other}"),
    }
    // Inside the string array: `ss[1]` is cut in its length.
    match plan.decode(&bytes[..67]).unwrap_err() {
        Error::Truncated {
            path,
            offset,
            needed,
            available,
        } => {
            assert_eq!(
                (path.to_string(), offset, needed, available),
                ("ss[1]".to_owned(), 64, 4, 3)
            );
        }
        other => panic!("{other}"),
    }
}

#[test]
fn cuts_inside_nested_fixed_size_messages_name_the_innermost_field() {
    let plan = Plan::from_bundle(
        "p/M",
        "uint32 a\nPoint2[2] q\nstring s\n====\nMSG: p/Point2\nfloat32 x\nfloat32 y\n",
    )
    .unwrap();
    let message = [0u8; 4 + 16 + 4];
    match plan.decode(&message[..17]).unwrap_err() {
        Error::Truncated {
            path,
            offset,
            needed,
            available,
        } => {
            assert_eq!(
                (path.to_string(), offset, needed, available),
                ("q[1].y".to_owned(), 16, 4, 1)
            );
        }
        other => panic!("{other}"),
    }
    assert_eq!(
        plan.decode_strict(&message).unwrap().encode().unwrap(),
        message
    );
}

#[test]
fn every_prefix_fails_as_truncation_without_panicking() {
    let plan = wire_plan();
    let bytes = wire_bytes();
    let projection = plan
        .projection(&["f", "ss[1]", "pts[0].y", "d.nsecs"])
        .unwrap();
    truncation::sweep(&bytes, 76, 1, |cut, prefix| {
        match plan.decode(prefix) {
            Err(error) if error.is_truncation() => {}
            Err(error) => return Err(format!("not a truncation: {error}")),
            Ok(_) => return Err("a cut message decoded".to_owned()),
        }
        // The projection needs everything up to `f`, the last field.
        match projection.extract(prefix) {
            Err(error) if error.is_truncation() => Ok(()),
            Err(error) => Err(format!("projection: not a truncation: {error}")),
            Ok(values) => Err(format!("projection of a message cut at {cut}: {values:?}")),
        }
    });
}

#[test]
fn projection_reads_the_same_values_as_the_tree() {
    let plan = wire_plan();
    let bytes = wire_bytes();
    let paths = [
        "b", "by", "ch", "s", "u8v", "u8f", "i16v", "i16v[0]", "t", "t.secs", "d.nsecs",
        "pts[0].x", "pts[0].y", "pts[1].x", "ss[0]", "ss[1]", "ss[2]", "f",
    ];
    let projection = plan.projection(&paths).unwrap();
    let values = projection.extract(&bytes).unwrap();
    let decoded = plan.decode(&bytes).unwrap();
    for (path, value) in paths.iter().zip(values) {
        match decoded.get(path) {
            Ok(expected) => assert_eq!(value, Some(expected), "{path}"),
            Err(Error::IndexOutOfRange { .. }) => assert_eq!(value, None, "{path}"),
            Err(other) => panic!("{path}: {other}"),
        }
    }
    assert!(matches!(
        plan.projection(&["pts"]),
        Err(Error::InvalidPath { .. })
    ));
    assert!(matches!(
        plan.projection(&["pts[0]"]),
        Err(Error::InvalidPath { .. })
    ));
    assert!(matches!(
        plan.projection(&["ss"]),
        Err(Error::InvalidPath { .. })
    ));
    assert!(matches!(
        plan.projection(&["nope"]),
        Err(Error::InvalidPath { .. })
    ));
    assert!(matches!(
        plan.projection(&["u8f[3]"]),
        Err(Error::InvalidPath { .. })
    ));
}

#[cfg(feature = "serde")]
#[test]
fn json_follows_the_documented_rules() {
    let plan = wire_plan();
    let bytes = wire_bytes();
    let json = plan.decode(&bytes).unwrap().to_json();
    assert_eq!(
        json,
        concat!(
            r#"{"b":true,"by":-2,"ch":200,"s":"hé","u8v":"AQI=","u8f":"BwgJ","i16v":[-1,256],"#,
            r#""t":{"sec":1700000000,"nsec":5},"d":{"sec":-3,"nsec":7},"#,
            r#""pts":[{"x":1.5,"y":-2.0}],"ss":["a",""],"f":0.25}"#
        )
    );
}

#[cfg(feature = "serde")]
#[test]
fn json_special_floats_and_wide_integers() {
    let plan = Plan::from_bundle(
        "p/M",
        "float64 nan\nfloat32 inf\nfloat64 ninf\nfloat32 tenth\nuint64 big\nint64 small\nbyte[] signed\nchar[2] chars\nbool[] flags\n",
    )
    .unwrap();
    let floats = le_bytes(&[f64::NAN]);
    let mut message = floats.clone();
    message.extend(le_bytes(&[f32::INFINITY]));
    message.extend(le_bytes(&[f64::NEG_INFINITY]));
    message.extend(le_bytes(&[0.1f32]));
    message.extend(le_bytes(&[u64::MAX]));
    message.extend(le_bytes(&[i64::MIN]));
    message.extend([2, 0, 0, 0, 0xff, 0x7f]);
    message.extend([b'h', b'i']);
    message.extend([2, 0, 0, 0, 1, 0]);
    let decoded = plan.decode_strict(&message).unwrap();
    assert_eq!(
        decoded.to_json(),
        r#"{"nan":"NaN","inf":"Infinity","ninf":"-Infinity","tenth":0.1,"big":18446744073709551615,"small":-9223372036854775808,"signed":[-1,127],"chars":"aGk=","flags":[true,false]}"#
    );
    assert_eq!(
        decoded.get("signed").unwrap().as_array().unwrap().kind(),
        robolog_ros1::PrimitiveKind::Int8
    );
    assert_eq!(decoded.encode().unwrap(), message);
}
