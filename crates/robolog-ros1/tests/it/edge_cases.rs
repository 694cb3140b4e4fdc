//! Hostile and unusual input: lengths that point past the end, huge fixed arrays, arrays of
//! empty messages, deep nesting, empty messages, and the fixture definitions of the spec.

use robolog_msg::{Dialect, Registry, TypeName};
use robolog_ros1::{Error, MAX_EMPTY_NODES, MAX_NESTING, Plan, Tree, Value};
use robolog_testkit::testdata;

fn plan(text: &str) -> Plan {
    Plan::from_bundle("p/M", text).unwrap()
}

#[test]
fn counts_larger_than_the_message_are_rejected_before_allocating() {
    let huge = [0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4];
    for (definition, needed) in [
        ("uint8[] d\n", 0xffff_ffffu64),
        ("float64[] d\n", 0xffff_ffff * 8),
        ("string[] d\n", 0xffff_ffff * 4),
        ("string d\n", 0xffff_ffff),
        (
            "P[] d\n===\nMSG: p/P\nfloat32 x\nfloat32 y\n",
            0xffff_ffff * 8,
        ),
        // Variable-size elements count at their smallest (a string length each).
        ("Q[] d\n===\nMSG: p/Q\nstring s\n", 0xffff_ffff * 4),
    ] {
        match plan(definition).decode(&huge).unwrap_err() {
            Error::LengthPastEnd {
                path,
                offset,
                length,
                needed: n,
                available,
            } => {
                assert_eq!(
                    (path.to_string(), offset, length, n, available),
                    ("d".to_owned(), 0, 0xffff_ffff, needed, 4),
                    "{definition}"
                );
            }
            other => panic!("{definition}: {other}"),
        }
    }
}

#[test]
fn huge_fixed_arrays_in_the_definition_are_truncations() {
    for definition in [
        "float64[4000000000] x\n",
        "uint8[18446744073709551615] x\n",
        // 8 × (2⁶⁴ − 1) overflows: the size saturates instead of wrapping.
        "float64[18446744073709551615] x\n",
        "P[18446744073709551615] x\n===\nMSG: p/P\nfloat64 a\n",
        "string[4000000000] x\n",
    ] {
        let plan = plan(definition);
        let error = plan.decode(&[0u8; 64]).unwrap_err();
        assert!(error.is_truncation(), "{definition}: {error}");
        assert_eq!(error.path().unwrap().to_string(), "x", "{definition}");
        assert!(
            plan.projection(&["x"])
                .map(|p| p.extract(&[0u8; 64]).is_err())
                .unwrap_or(true)
        );
    }
}

#[test]
fn arrays_of_empty_messages_are_bounded() {
    let plan = plan("E[] e\nuint8 after\n===\nMSG: p/E\n");
    let decoded = plan.decode_strict(&[5, 0, 0, 0, 9]).unwrap();
    assert_eq!(
        decoded.root().field("e").unwrap().messages().unwrap().len(),
        5
    );
    assert_eq!(decoded.get("after").unwrap(), Value::UInt8(9));
    assert_eq!(decoded.encode().unwrap(), [5, 0, 0, 0, 9]);
    assert_eq!(
        plan.projection(&["after"])
            .unwrap()
            .extract(&[5, 0, 0, 0, 9])
            .unwrap(),
        [Some(Value::UInt8(9))]
    );

    match plan.decode(&[0xff, 0xff, 0xff, 0xff, 9]).unwrap_err() {
        Error::TooManyEmptyElements {
            path,
            offset,
            count,
        } => {
            assert_eq!(
                (path.to_string(), offset, count),
                ("e".to_owned(), 0, 0xffff_ffff)
            );
        }
        other => panic!("{other}"),
    }
    // The budget is per message: many arrays just under it add up and are refused too.
    let nested = Plan::from_bundle("p/M", "A[] a\n===\nMSG: p/A\nE[] e\n===\nMSG: p/E\n").unwrap();
    let per_array = (MAX_EMPTY_NODES / 4 + 1) as u32;
    let mut message = 8u32.to_le_bytes().to_vec();
    for _ in 0..8 {
        message.extend(per_array.to_le_bytes());
    }
    assert!(matches!(
        nested.decode(&message).unwrap_err(),
        Error::TooManyEmptyElements { .. }
    ));
}

#[test]
fn empty_message_is_zero_bytes() {
    let plan = Plan::from_bundle("std_msgs/Empty", "").unwrap();
    let decoded = plan.decode_strict(&[]).unwrap();
    assert_eq!(decoded.root().fields().len(), 0);
    assert_eq!(decoded.encode().unwrap(), Vec::<u8>::new());
    assert_eq!(plan.fixed_size(), Some(0));
    #[cfg(feature = "serde")]
    assert_eq!(decoded.to_json(), "{}");
}

#[test]
fn nesting_is_limited() {
    fn chain(depth: usize) -> Registry {
        let mut registry = Registry::new();
        for i in 0..depth {
            let name = TypeName::new("p", &format!("T{i}")).unwrap();
            let text = if i + 1 == depth {
                "uint8 leaf\n".to_owned()
            } else {
                format!("T{} next\n", i + 1)
            };
            registry
                .add_message_text(&name, &text, Dialect::Ros1)
                .unwrap();
        }
        registry
    }
    let top = TypeName::new("p", "T0").unwrap();
    let plan = Plan::compile(&chain(MAX_NESTING), &top).unwrap();
    let decoded = plan.decode_strict(&[42]).unwrap();
    assert_eq!(decoded.encode().unwrap(), [42]);
    match Plan::compile(&chain(MAX_NESTING + 1), &top).unwrap_err() {
        Error::TooDeep { depth, limit, .. } => {
            assert_eq!((depth, limit), (MAX_NESTING + 1, MAX_NESTING))
        }
        other => panic!("{other}"),
    }
    // Variable-size nesting (no templates) decodes recursively within the limit too.
    let mut registry = Registry::new();
    for i in 0..MAX_NESTING {
        let name = TypeName::new("p", &format!("T{i}")).unwrap();
        let text = if i + 1 == MAX_NESTING {
            "string leaf\n".to_owned()
        } else {
            format!("T{} next\n", i + 1)
        };
        registry
            .add_message_text(&name, &text, Dialect::Ros1)
            .unwrap();
    }
    let plan = Plan::compile(&registry, &top).unwrap();
    let decoded = plan.decode_strict(&[1, 0, 0, 0, b'x']).unwrap();
    let path = vec!["next"; MAX_NESTING - 1].join(".") + ".leaf";
    assert_eq!(decoded.get(&path).unwrap().as_str(), Some("x"));
    let error = plan.decode(&[1, 0, 0, 0]).unwrap_err();
    assert_eq!(error.path().unwrap().to_string(), path);
}

#[test]
fn large_fixed_arrays_of_messages_decode_outside_templates() {
    // 5000 elements exceed a run template; they are decoded one element at a time.
    let plan = plan("uint8 a\nP[5000] p\nuint8 z\n===\nMSG: p/P\nfloat32 x\nfloat32 y\n");
    assert_eq!(plan.fixed_size(), Some(1 + 40_000 + 1));
    let mut message = vec![7u8];
    for i in 0..5000u32 {
        message.extend((i as f32).to_le_bytes());
        message.extend((-(i as f32)).to_le_bytes());
    }
    message.push(9);
    let decoded = plan.decode_strict(&message).unwrap();
    assert_eq!(decoded.get("p[4999].y").unwrap(), Value::Float32(-4999.0));
    assert_eq!(decoded.get("z").unwrap(), Value::UInt8(9));
    assert_eq!(decoded.encode().unwrap(), message);
    // The element count is checked against the bytes left before the elements are decoded.
    match plan.decode(&message[..20_001]).unwrap_err() {
        Error::LengthPastEnd {
            path,
            offset,
            length,
            needed,
            available,
        } => {
            assert_eq!(
                (path.to_string(), offset, length, needed, available),
                ("p".to_owned(), 1, 5000, 40_000, 20_000)
            );
        }
        other => panic!("{other}"),
    }
    let projection = plan.projection(&["p[4999].x", "z"]).unwrap();
    assert_eq!(
        projection.extract(&message).unwrap(),
        [Some(Value::Float32(4999.0)), Some(Value::UInt8(9))]
    );
}

#[test]
fn scalar_bools_decode_non_zero_as_true_and_encode_as_one() {
    let plan = plan("bool b\nbool[2] flags\n");
    let decoded = plan.decode_strict(&[2, 2, 0]).unwrap();
    assert_eq!(decoded.get("b").unwrap(), Value::Bool(true));
    // The scalar is normalised, the array keeps its bytes.
    assert_eq!(decoded.encode().unwrap(), [1, 2, 0]);
}

#[test]
fn definition_problems_are_errors() {
    let missing = Plan::from_bundle("p/M", "Missing m\n").unwrap_err();
    assert!(
        matches!(
            missing,
            Error::Definition(robolog_msg::Error::MissingType { .. })
        ),
        "{missing}"
    );
    let mut registry = Registry::new();
    let name = TypeName::new("p", "R").unwrap();
    registry
        .add_message_text(&name, "string<=5 s\n", Dialect::Ros2)
        .unwrap();
    assert!(matches!(
        Plan::compile(&registry, &name).unwrap_err(),
        Error::NotRos1 { .. }
    ));
}

#[test]
fn paths_are_checked_against_the_type() {
    let plan = plan(
        "Header header\nfloat32[] ranges\nP[2] pair\n===\nMSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n===\nMSG: p/P\nduration d\n",
    );
    for good in [
        "header",
        "header.stamp",
        "header.stamp.secs",
        "header.stamp.nsec",
        "ranges",
        "ranges[3]",
        "pair[1].d.secs",
    ] {
        assert!(plan.path(good).is_ok(), "{good}");
    }
    for bad in [
        "",
        ".header",
        "header.",
        "header..seq",
        "header.nope",
        "ranges[x]",
        "ranges[]",
        "ranges[1",
        "[0]",
        "pair[2]",
        "header[0]",
        "header.seq.secs",
        "ranges[0][0]",
        "header.stamp.minutes",
    ] {
        assert!(
            matches!(plan.path(bad), Err(Error::InvalidPath { .. })),
            "{bad}"
        );
    }
    // header (seq, stamp, empty frame_id), no ranges, two durations.
    let mut message = vec![1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0];
    message.extend([0u8; 4 + 16]);
    let decoded = plan.decode_strict(&message).unwrap();
    match decoded.get("ranges[0]").unwrap_err() {
        Error::IndexOutOfRange { path, index, len } => assert_eq!(
            (path.to_string(), index, len),
            ("ranges[0]".to_owned(), 0, 0)
        ),
        other => panic!("{other}"),
    }
    assert_eq!(
        plan.projection(&["ranges[0]"])
            .unwrap()
            .extract(&message)
            .unwrap(),
        [None]
    );
}

#[test]
fn decode_into_reuses_the_tree() {
    let plan = plan("string s\nint32[] v\n");
    let mut tree = Tree::new();
    let first = [1, 0, 0, 0, b'a', 1, 0, 0, 0, 5, 0, 0, 0];
    plan.decode_into(&first, &mut tree).unwrap();
    assert_eq!(tree.root_fields()[0].as_str(), Some("a"));
    let second = [0, 0, 0, 0, 0, 0, 0, 0];
    let mut tree2 = tree.clone();
    plan.decode_into(&second, &mut tree2).unwrap();
    assert_eq!(tree2.root_fields().len(), 2);
    assert_eq!(tree2.root_fields()[0].as_str(), Some(""));
    assert!(plan.decode_into(&[9], &mut tree2).is_err());
    assert!(tree2.root_fields().is_empty());
}

/// The spec fixtures: every definition compiles, and the sizes follow from the wire rules.
#[test]
fn fixture_definitions_compile_with_their_wire_sizes() {
    let cases: [(&str, Option<u64>, u64); 9] = [
        ("std_msgs/String", None, 4),
        ("std_msgs/Header", None, 4 + 8 + 4),
        // Header (16) + Quaternion (32) + 3 × float64[9] (216) + 2 × Vector3 (48).
        ("sensor_msgs/Imu", None, 312),
        ("geometry_msgs/PoseStamped", None, 16 + 56),
        (
            "geometry_msgs/TwistWithCovarianceStamped",
            None,
            16 + 48 + 288,
        ),
        ("sensor_msgs/PointCloud2", None, 16 + 8 + 4 + 1 + 8 + 4 + 1),
        (
            "sensor_msgs/CameraInfo",
            None,
            16 + 8 + 4 + 4 + 72 + 72 + 96 + 8 + 17,
        ),
        // header, byte level, 4 strings, uint32 line, string[] topics.
        ("rosgraph_msgs/Log", None, 16 + 1 + 4 * 4 + 4 + 4),
        ("my_pkg/Wire", None, 3 + 4 + 4 + 3 + 4 + 16 + 4 + 4 + 8),
    ];
    for (name, fixed, min) in cases {
        let file = format!("msg/{}.msgdef", name.replace('/', "_"));
        let text = String::from_utf8(testdata::read(&file)).unwrap();
        let plan = Plan::from_bundle(name, &text).unwrap();
        assert_eq!((plan.fixed_size(), plan.min_size()), (fixed, min), "{name}");
    }
}

#[test]
fn nested_empty_messages_cannot_blow_up_the_tree() {
    // Each level holds 8 copies of the next, 12 levels deep: 8^12 empty messages in 0 bytes.
    let mut bundle = String::new();
    for level in 0..12 {
        if level > 0 {
            bundle.push_str(&format!("===\nMSG: p/L{level}\n"));
        }
        for name in ["a", "b", "c", "d", "e", "f", "g", "h"] {
            bundle.push_str(&format!("L{} {name}\n", level + 1));
        }
    }
    bundle.push_str("===\nMSG: p/L12\n");
    let plan = Plan::from_bundle("p/L0", &bundle).unwrap();
    assert_eq!(plan.fixed_size(), Some(0));
    match plan.decode(&[]).unwrap_err() {
        Error::TooManyValues { limit, .. } => assert_eq!(limit, MAX_EMPTY_NODES),
        other => panic!("{other}"),
    }
    // Projections never build values, so they still work.
    let deep = plan.projection(&["a.b.c"]);
    assert!(deep.is_err(), "a message is not a leaf");
}

#[test]
fn plans_and_projections_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync + Clone>() {}
    shareable::<Plan>();
    shareable::<robolog_ros1::Projection>();
}
