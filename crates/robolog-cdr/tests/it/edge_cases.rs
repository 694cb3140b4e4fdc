//! The edge cases of the CDR spec (`ros2-cdr.md` §14) that are not plain byte vectors:
//! headers, padding, strings, empty messages, bools, bounds, arrays of structs, hostile counts,
//! and where each error points.

use robolog_cdr::{Encapsulation, Error, MAX_NESTING, Plan, Tree, Value, WideString};

use crate::support::{POSE_STAMPED, SEPARATOR, hex, plan};

fn pose_bytes() -> Vec<u8> {
    hex(
        "00010000 00f15365 15cd5b07 05000000 6f646f6d00 00000000000000
         000000000000f03f 0000000000000040 0000000000000840
         0000000000000000 0000000000000000 0000000000000000 000000000000f03f",
    )
}

#[test]
fn unsupported_encapsulations_are_refused_with_their_name() {
    let plan = plan("uint8 x\n");
    for (header, name) in [
        ([0, 0x02], "PL_CDR_BE"),
        ([0, 0x03], "PL_CDR_LE"),
        ([0, 0x08], "DELIMITED_CDR2_BE"),
        ([0, 0x09], "DELIMITED_CDR2_LE"),
        ([0, 0x0a], "PL_CDR2_BE"),
        ([0, 0x0b], "PL_CDR2_LE"),
        ([0, 0x10], "an XTypes ENC_HEADER"),
        ([0, 0x15], "an XTypes ENC_HEADER"),
        ([0, 0x04], "an unknown CDR kind"),
        (
            [1, 0x01],
            "not a CDR encapsulation (the first byte is not 0)",
        ),
    ] {
        let bytes = [header[0], header[1], 0, 0, 7];
        match plan.decode(&bytes).unwrap_err() {
            Error::UnsupportedEncapsulation {
                identifier,
                name: got,
            } => assert_eq!((identifier, got), (header, name)),
            other => panic!("{header:?}: {other}"),
        }
        assert!(plan.projection(&["x"]).unwrap().extract(&bytes).is_err());
    }
    for short in [&[][..], &[0], &[0, 1, 0]] {
        assert!(matches!(
            plan.decode(short).unwrap_err(),
            Error::NoHeader { len } if len == short.len()
        ));
    }
}

#[test]
fn option_bytes_and_up_to_three_padding_bytes_are_accepted() {
    let plan = plan("uint8 x\n");
    for options in [[0, 0], [0, 3], [0xff, 0xff]] {
        let bytes = [0, 1, options[0], options[1], 7];
        let decoded = plan.decode_strict(&bytes).unwrap();
        assert_eq!(decoded.get("x").unwrap(), Value::UInt8(7));
        // We write zero options.
        assert_eq!(decoded.encode().unwrap(), [0, 1, 0, 0, 7]);
    }
    for padding in 1..=3 {
        let mut bytes = vec![0, 1, 0, 0, 7];
        bytes.resize(5 + padding, 0);
        let decoded = plan.decode_strict(&bytes).unwrap();
        assert_eq!(decoded.trailing_bytes(), 0);
        assert_eq!(decoded.decoding().end(), 5);
        assert!(decoded.warning().is_none());
    }
    // Four or more bytes are not padding.
    let bytes = [0, 1, 0, 0, 7, 0, 0, 0, 0];
    let decoded = plan.decode(&bytes).unwrap();
    assert_eq!(decoded.trailing_bytes(), 4);
    assert!(matches!(
        decoded.warning(),
        Some(Error::TrailingBytes {
            offset: 5,
            count: 4
        })
    ));
    assert!(matches!(
        plan.decode_strict(&bytes).unwrap_err(),
        Error::TrailingBytes {
            offset: 5,
            count: 4
        }
    ));
}

/// Every cut of the PoseStamped vector fails with a truncation that names the field the cut
/// falls in and where that field's read began (padding before it included).
#[test]
fn every_cut_names_the_field_and_offset() {
    let plan = Plan::from_bundle("geometry_msgs/msg/PoseStamped", POSE_STAMPED).unwrap();
    let bytes = pose_bytes();
    // (first byte, field, offset of its read)
    let fields = [
        (4, "header.stamp.sec", 4),
        (8, "header.stamp.nanosec", 8),
        (12, "header.frame_id", 12),
        (21, "pose.position.x", 21),
        (36, "pose.position.y", 36),
        (44, "pose.position.z", 44),
        (52, "pose.orientation.x", 52),
        (60, "pose.orientation.y", 60),
        (68, "pose.orientation.z", 68),
        (76, "pose.orientation.w", 76),
    ];
    for cut in 4..bytes.len() {
        let (_, path, offset) = fields
            .iter()
            .rev()
            .find(|(start, ..)| *start <= cut)
            .unwrap();
        let error = plan.decode(&bytes[..cut]).unwrap_err();
        assert!(error.is_truncation(), "cut {cut}: {error}");
        assert_eq!(
            error.path().unwrap().to_string(),
            *path,
            "cut {cut}: {error}"
        );
        match error {
            Error::Truncated { offset: at, .. } | Error::LengthPastEnd { offset: at, .. } => {
                assert_eq!(at, *offset, "cut {cut}")
            }
            other => panic!("cut {cut}: {other}"),
        }
        // Big endian and XCDR2 walk the fields one by one and agree on the field.
        let tree = plan.decode(&bytes).unwrap().into_tree();
        let be = plan.encode_as(&tree, Encapsulation::CdrBe).unwrap();
        let error = plan.decode(&be[..cut]).unwrap_err();
        assert_eq!(error.path().unwrap().to_string(), *path, "BE cut {cut}");
    }
    for cut in 0..4 {
        assert!(matches!(
            plan.decode(&bytes[..cut]).unwrap_err(),
            Error::NoHeader { .. }
        ));
    }
}

#[test]
fn strings_empty_zero_length_unterminated_and_not_utf8() {
    let plan = plan("string s\nuint8 x\n");
    // L = 1: the empty string.
    let bytes = hex("00010000 01000000 00 07");
    let decoded = plan.decode_strict(&bytes).unwrap();
    assert_eq!(decoded.get("s").unwrap(), Value::String(b""));
    assert_eq!(decoded.get("x").unwrap(), Value::UInt8(7));
    // L = 0: also the empty string (as Fast-CDR reads it), re-encoded with its NUL.
    let bytes = hex("00010000 00000000 07");
    let decoded = plan.decode_strict(&bytes).unwrap();
    assert_eq!(decoded.get("s").unwrap(), Value::String(b""));
    assert_eq!(decoded.get("x").unwrap(), Value::UInt8(7));
    assert_eq!(decoded.encode().unwrap(), hex("00010000 01000000 00 07"));
    // No NUL: lenient decoding keeps every byte, strict decoding names the string.
    let bytes = hex("00010000 03000000 616263 07");
    let decoded = plan.decode(&bytes).unwrap();
    assert_eq!(decoded.get("s").unwrap(), Value::String(b"abc"));
    assert_eq!(decoded.get("x").unwrap(), Value::UInt8(7));
    let warning = decoded.warning().unwrap();
    assert!(matches!(
        &warning,
        Error::MissingNul { path, offset: 4, length: 3 } if path.to_string() == "s"
    ));
    assert_eq!(
        warning.to_string(),
        "s: the string of 3 bytes at offset 4 does not end with a NUL"
    );
    assert!(matches!(
        plan.decode_strict(&bytes).unwrap_err(),
        Error::MissingNul { .. }
    ));
    // Not UTF-8: the bytes as they are.
    let bytes = hex("00010000 03000000 ff fe 00 07");
    let decoded = plan.decode_strict(&bytes).unwrap();
    assert_eq!(
        decoded.get("s").unwrap().as_bytes(),
        Some(&[0xff, 0xfe][..])
    );
    assert_eq!(decoded.get("s").unwrap().as_str(), None);
    assert_eq!(decoded.encode().unwrap(), bytes);
    #[cfg(feature = "serde")]
    assert_eq!(decoded.to_json(), "{\"s\":\"\u{fffd}\u{fffd}\",\"x\":7}");
}

#[test]
fn bounded_strings_over_their_bound_decode_with_a_warning_and_never_encode() {
    let plan = plan("string<=2 s\nwstring<=1 w\n");
    let bytes = hex("00010000 04000000 616263 00 02000000 61000000 62000000");
    let decoded = plan.decode(&bytes).unwrap();
    assert_eq!(decoded.get("s").unwrap(), Value::String(b"abc"));
    match decoded.warning().unwrap() {
        Error::BoundExceeded {
            path,
            offset,
            length,
            bound,
        } => assert_eq!(
            (path.to_string(), offset, length, bound),
            ("s".to_owned(), Some(4), 3, 2)
        ),
        other => panic!("{other}"),
    }
    assert!(plan.decode_strict(&bytes).is_err());
    match decoded.encode().unwrap_err() {
        Error::BoundExceeded {
            path,
            offset,
            length,
            bound,
        } => assert_eq!(
            (path.to_string(), offset, length, bound),
            ("s".to_owned(), None, 3, 2)
        ),
        other => panic!("{other}"),
    }
    // The wide string's bound counts code units.
    let mut tree = Tree::new();
    let units = robolog_cdr::wstring_bytes("ab");
    let wide = WideString::new(&units, Default::default()).unwrap();
    tree.set_root_fields([Value::String(b"ab"), Value::WString(wide)]);
    match plan.encode(&tree).unwrap_err() {
        Error::BoundExceeded {
            path,
            length: 2,
            bound: 1,
            ..
        } => assert_eq!(path.to_string(), "w"),
        other => panic!("{other}"),
    }
}

#[test]
fn bounded_sequences_check_their_bound() {
    let plan = plan("int16[<=2] v\nuint8 x\n");
    let within = hex("00010000 02000000 0100 0200 07");
    let decoded = plan.decode_strict(&within).unwrap();
    assert_eq!(decoded.encode().unwrap(), within);
    let over = hex("00010000 03000000 0100 0200 0300 07");
    let decoded = plan.decode(&over).unwrap();
    assert_eq!(
        decoded
            .get("v")
            .unwrap()
            .as_array()
            .unwrap()
            .to_vec::<i16>(),
        Some(vec![1, 2, 3])
    );
    assert_eq!(decoded.get("x").unwrap(), Value::UInt8(7));
    assert!(matches!(
        decoded.warning(),
        Some(Error::BoundExceeded {
            offset: Some(4),
            length: 3,
            bound: 2,
            ..
        })
    ));
    assert!(matches!(
        plan.decode_strict(&over).unwrap_err(),
        Error::BoundExceeded { .. }
    ));
    assert!(matches!(
        decoded.encode().unwrap_err(),
        Error::BoundExceeded {
            offset: None,
            length: 3,
            bound: 2,
            ..
        }
    ));
}

#[test]
fn fixed_arrays_of_the_wrong_length_do_not_encode() {
    let plan = plan("float32[3] v\nstring[2] s\n");
    let floats = robolog_cdr::le_bytes(&[1.0f32, 2.0]);
    let mut tree = Tree::new();
    let strings = tree.push_strings([&b"a"[..], b"b"]);
    tree.set_root_fields([
        Value::Array(robolog_cdr::PrimitiveArray::of::<f32>(&floats).unwrap()),
        strings,
    ]);
    match plan.encode(&tree).unwrap_err() {
        Error::WrongLength {
            path,
            expected: 3,
            found: 2,
        } => assert_eq!(path.to_string(), "v"),
        other => panic!("{other}"),
    }
}

#[test]
fn empty_messages_take_one_byte() {
    // At top level: 5 bytes, whatever the byte holds.
    let empty = plan("");
    for byte in [0u8, 0x5a] {
        let bytes = [0, 1, 0, 0, byte];
        let decoded = empty.decode_strict(&bytes).unwrap();
        assert_eq!(decoded.root().fields().len(), 0);
        assert_eq!(decoded.encode().unwrap(), [0, 1, 0, 0, 0]);
    }
    // A writer that leaves the byte out: lenient decoding accepts it, strict does not.
    let decoded = empty.decode(&[0, 1, 0, 0]).unwrap();
    assert!(matches!(
        decoded.warning(),
        Some(Error::Truncated {
            offset: 4,
            needed: 1,
            ..
        })
    ));
    assert!(empty.decode_strict(&[0, 1, 0, 0]).is_err());

    // Nested: one byte each, in arrays too, and before an aligned value.
    let plan = plan(&format!(
        "E e\nE[2] pair\nE[] list\nint64 after\n{SEPARATOR}\nMSG: p/E\n"
    ));
    let bytes = hex("00010000 00 0000 00 02000000 0000 000000000000 0100000000000000");
    let decoded = plan.decode_strict(&bytes).unwrap();
    assert_eq!(decoded.get("after").unwrap(), Value::Int64(1));
    assert_eq!(
        decoded
            .root()
            .field("list")
            .unwrap()
            .messages()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(decoded.encode().unwrap(), bytes);
    let cut = plan.decode(&bytes[..5]).unwrap_err();
    assert!(matches!(
        cut,
        Error::LengthPastEnd { offset: 5, length: 2, .. } if cut.path().unwrap().to_string() == "pair"
    ));
}

#[test]
fn byte_and_char_arrays_are_raw_octets() {
    let plan = plan("byte[3] b\nchar[] c\nuint8[<=4] u\nbyte s\nchar t\n");
    let bytes = hex("00010000 80fffe 00 02000000 c37f 0000 01000000 ff 90 a0");
    let decoded = plan.decode_strict(&bytes).unwrap();
    assert_eq!(
        decoded.get("b").unwrap().as_bytes(),
        Some(&[0x80, 0xff, 0xfe][..])
    );
    assert_eq!(
        decoded.get("c").unwrap().as_bytes(),
        Some(&[0xc3, 0x7f][..])
    );
    assert_eq!(decoded.get("u").unwrap().as_bytes(), Some(&[0xff][..]));
    assert_eq!(decoded.get("s").unwrap(), Value::UInt8(0x90));
    assert_eq!(decoded.get("t").unwrap(), Value::UInt8(0xa0));
    assert_eq!(decoded.encode().unwrap(), bytes);
    #[cfg(feature = "serde")]
    assert_eq!(
        decoded.to_json(),
        r#"{"b":"gP/+","c":"w38=","u":"/w==","s":144,"t":160}"#
    );
}

#[test]
fn bools_other_than_0_and_1() {
    // In a run of fixed fields (the template path), after a string (the field-by-field path),
    // and in an array.
    for (definition, bytes, path, offset) in [
        ("uint8 a\nbool b\n", "00010000 01 02", "b", 5),
        ("string s\nbool b\n", "00010000 01000000 00 02", "b", 9),
        ("bool[3] b\n", "00010000 00 01 02", "b[2]", 6),
        (
            "string s\nbool[] b\n",
            "00010000 01000000 00 000000 02000000 01 ff",
            "b[1]",
            17,
        ),
        (
            "P p\n===\nMSG: p/P\nbool a\nbool b\n",
            "00010000 00 02",
            "p.b",
            5,
        ),
    ] {
        let plan = plan(definition);
        let bytes = hex(bytes);
        let decoded = plan.decode(&bytes).unwrap();
        assert!(
            matches!(decoded.get(path).unwrap(), Value::Bool(true)),
            "{definition}"
        );
        match plan.decode_strict(&bytes).unwrap_err() {
            Error::InvalidBool {
                path: at,
                offset: o,
                value,
            } => {
                assert_eq!(
                    (at.to_string(), o),
                    (path.to_owned(), offset),
                    "{definition}"
                );
                assert!(value > 1);
            }
            other => panic!("{definition}: {other}"),
        }
    }
}

#[test]
fn wide_strings_that_claim_too_much() {
    let plan = plan("wstring w\n");
    // 2 units announced, 4 bytes present.
    match plan.decode(&hex("00010000 02000000 68000000")).unwrap_err() {
        Error::LengthPastEnd {
            path,
            offset: 4,
            length: 2,
            needed: 8,
            available: 4,
        } => assert_eq!(path.to_string(), "w"),
        other => panic!("{other}"),
    }
}

#[test]
fn arrays_of_structs_align_each_element() {
    // A fixed array of structs, then a sequence of structs whose first field is 8 bytes: every
    // element aligns its first field on its own.
    let plan = plan(&format!(
        "S[2] fixed\nT[] seq\n{SEPARATOR}\nMSG: p/S\nuint8 a\nuint16 b\n\
         {SEPARATOR}\nMSG: p/T\nfloat64 x\nuint8 y\n"
    ));
    let bytes = hex(
        "00010000 01 00 0200 03 00 0400 | 02000000 00000000 000000000000f03f 05
         00000000000000 0000000000000040 06",
    );
    let decoded = plan.decode_strict(&bytes).unwrap();
    assert_eq!(decoded.get("fixed[1].b").unwrap(), Value::UInt16(4));
    assert_eq!(decoded.get("seq[0].x").unwrap(), Value::Float64(1.0));
    assert_eq!(decoded.get("seq[1].x").unwrap(), Value::Float64(2.0));
    assert_eq!(decoded.get("seq[1].y").unwrap(), Value::UInt8(6));
    assert_eq!(decoded.encode().unwrap(), bytes);
    let projection = plan.projection(&["seq[1].y", "fixed[1].a"]).unwrap();
    assert_eq!(
        projection.extract(&bytes).unwrap(),
        [Some(Value::UInt8(6)), Some(Value::UInt8(3))]
    );
}

#[test]
fn hostile_counts_fail_before_anything_is_sized_from_them() {
    let huge = hex("00010000 ffffffff 01020304");
    for (definition, needed) in [
        ("uint8[] d\n", 0xffff_ffffu64),
        ("float64[] d\n", 0xffff_ffff * 8),
        ("string[] d\n", 0xffff_ffff * 4),
        ("wstring[] d\n", 0xffff_ffff * 4),
        ("string d\n", 0xffff_ffff),
        ("wstring d\n", 0xffff_ffff * 4),
        (
            "P[] d\n===\nMSG: p/P\nfloat32 x\nfloat32 y\n",
            0xffff_ffff * 8,
        ),
        // Every element takes at least a byte, even a message without fields.
        ("E[] d\n===\nMSG: p/E\n", 0xffff_ffff),
        ("Q[] d\n===\nMSG: p/Q\nstring s\n", 0xffff_ffff * 4),
    ] {
        match plan(definition).decode(&huge).unwrap_err() {
            Error::LengthPastEnd {
                path,
                offset,
                length,
                needed: n,
                available,
            } => assert_eq!(
                (path.to_string(), offset, length, n, available),
                ("d".to_owned(), 4, 0xffff_ffff, needed, 4),
                "{definition}"
            ),
            other => panic!("{definition}: {other}"),
        }
    }
    for definition in [
        "float64[4000000000] x\n",
        "uint8[18446744073709551615] x\n",
        "float64[18446744073709551615] x\n",
        "P[18446744073709551615] x\n===\nMSG: p/P\nfloat64 a\n",
        "string[4000000000] x\n",
    ] {
        let plan = plan(definition);
        let mut bytes = vec![0u8; 64];
        bytes[1] = 1;
        let error = plan.decode(&bytes).unwrap_err();
        assert!(error.is_truncation(), "{definition}: {error}");
        if let Ok(projection) = plan.projection(&["x"]) {
            assert!(projection.extract(&bytes).unwrap_err().is_truncation());
        }
    }
}

#[test]
fn nesting_is_limited() {
    let chain = |depth: usize| {
        let mut text = String::from("L1 next\n");
        for level in 1..=depth {
            let body = if level == depth {
                "uint8 leaf\n".to_owned()
            } else {
                format!("L{} next\n", level + 1)
            };
            text.push_str(&format!("{SEPARATOR}\nMSG: p/L{level}\n{body}"));
        }
        text
    };
    let ok = plan(&chain(MAX_NESTING - 1));
    let mut path = vec!["next"; MAX_NESTING - 1].join(".");
    path.push_str(".leaf");
    assert_eq!(
        ok.decode(&[0, 1, 0, 0, 9]).unwrap().get(&path).unwrap(),
        Value::UInt8(9)
    );
    match Plan::from_bundle("p/M", &chain(MAX_NESTING)).unwrap_err() {
        Error::TooDeep { depth, limit, .. } => assert_eq!((depth, limit), (101, 100)),
        other => panic!("{other}"),
    }
}

#[test]
fn time_and_duration_are_builtin_interfaces_messages() {
    // The compatibility spellings, and the message names without their definitions.
    for definition in [
        "time t\nduration d\n",
        "builtin_interfaces/Time t\nbuiltin_interfaces/Duration d\n",
    ] {
        let plan = plan(definition);
        let bytes = hex("00010000 01000000 02000000 feffffff ff000000");
        let decoded = plan.decode_strict(&bytes).unwrap();
        assert_eq!(decoded.get("t.sec").unwrap(), Value::Int32(1));
        assert_eq!(decoded.get("t.nanosec").unwrap(), Value::UInt32(2));
        // A negative duration (mcap-ros2-support reads `sec` as unsigned).
        assert_eq!(decoded.get("d.sec").unwrap(), Value::Int32(-2));
        assert_eq!(
            decoded
                .root()
                .field("d")
                .unwrap()
                .as_message()
                .unwrap()
                .type_name()
                .to_string(),
            "builtin_interfaces/Duration"
        );
        #[cfg(feature = "serde")]
        assert_eq!(
            decoded.to_json(),
            r#"{"t":{"sec":1,"nanosec":2},"d":{"sec":-2,"nanosec":255}}"#
        );
    }
}

#[test]
fn ros1_definitions_are_refused() {
    let mut registry = robolog_msg::Registry::new();
    let name = robolog_msg::TypeName::new("p", "M").unwrap();
    registry
        .add_message_text(&name, "int32 a\n", robolog_msg::Dialect::Ros1)
        .unwrap();
    assert!(matches!(
        Plan::compile(&registry, &name).unwrap_err(),
        Error::NotRos2 { .. }
    ));
}

#[test]
fn encoding_checks_types_and_shapes() {
    let plan = plan("int32 a\nP p\n===\nMSG: p/P\nfloat64 x\n");
    let mut tree = Tree::new();
    let p = tree.push_message([Value::Float32(1.0)]);
    tree.set_root_fields([Value::Int32(1), p]);
    match plan.encode(&tree).unwrap_err() {
        Error::TypeMismatch {
            path,
            expected,
            found,
        } => assert_eq!(
            (path.to_string().as_str(), expected.as_str(), found.as_str()),
            ("p.x", "float64", "float32")
        ),
        other => panic!("{other}"),
    }
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
