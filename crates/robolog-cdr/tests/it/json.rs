//! The JSON rules (the same for every encoding robolog decodes): definition order, times as
//! ordinary messages, octet arrays as base64, non-finite floats as strings, exact 64-bit
//! integers, invalid text replaced.

#![cfg(feature = "serde")]

use robolog_cdr::{ByteOrder, Encapsulation, Plan, PrimitiveArray, Tree, Value, WideString};

use crate::support::plan;

#[test]
fn every_rule_in_one_message() {
    let plan = plan(
        "float64 z_first\nfloat32 nan\nfloat64 inf\nfloat64 ninf\nfloat32[3] f\nuint64 big\n\
         int64 small\nbyte[] bytes\nchar[2] chars\nint8[] signed\nstring text\nwstring wide\n\
         string[] names\nbuiltin_interfaces/Time stamp\nE empty\n===\nMSG: p/E\n",
    );
    let floats = robolog_cdr::le_bytes(&[1.5f32, f32::NAN, f32::NEG_INFINITY]);
    let signed = robolog_cdr::le_bytes(&[-1i8, 2]);
    let wide_units = [0x68, 0, 0, 0, 0x00, 0xd8, 0, 0];
    let mut tree = Tree::new();
    let names = tree.push_strings([&b"a"[..], b"\"q\"\n"]);
    let stamp = tree.push_message([Value::Int32(-1), Value::UInt32(999_999_999)]);
    let empty = tree.push_message([]);
    tree.set_root_fields([
        Value::Float64(0.1),
        Value::Float32(f32::NAN),
        Value::Float64(f64::INFINITY),
        Value::Float64(f64::NEG_INFINITY),
        Value::Array(PrimitiveArray::of::<f32>(&floats).unwrap()),
        Value::UInt64(u64::MAX),
        Value::Int64(i64::MIN),
        Value::Array(PrimitiveArray::of::<u8>(&[0, 255, 128]).unwrap()),
        Value::Array(PrimitiveArray::of::<u8>(b"hi").unwrap()),
        Value::Array(PrimitiveArray::of::<i8>(&signed).unwrap()),
        Value::String(b"caf\xc3\xa9 \xff"),
        // An unpaired surrogate.
        Value::WString(WideString::new(&wide_units, ByteOrder::LittleEndian).unwrap()),
        names,
        stamp,
        empty,
    ]);
    let expected = concat!(
        r#"{"z_first":0.1,"nan":"NaN","inf":"Infinity","ninf":"-Infinity","#,
        r#""f":[1.5,"NaN","-Infinity"],"big":18446744073709551615,"small":-9223372036854775808,"#,
        r#""bytes":"AP+A","chars":"aGk=","signed":[-1,2],"text":"café �","wide":"h�","#,
        r#""names":["a","\"q\"\n"],"stamp":{"sec":-1,"nanosec":999999999},"empty":{}}"#
    );
    assert_eq!(plan.tree_to_json(&tree).unwrap(), expected);
    // Decoded from either byte order, the same text; and serde sees the same document.
    for encapsulation in [Encapsulation::CdrLe, Encapsulation::CdrBe] {
        let bytes = plan.encode_as(&tree, encapsulation).unwrap();
        let decoded = plan.decode(&bytes).unwrap();
        assert_eq!(decoded.to_json(), expected);
        let mut written = Vec::new();
        decoded.write_json(&mut written).unwrap();
        assert_eq!(written, expected.as_bytes());
        assert_eq!(serde_json::to_string(&decoded).unwrap(), expected);
        assert_eq!(serde_json::to_string(&decoded.root()).unwrap(), expected);
    }
}

#[test]
fn a_tree_of_the_wrong_shape_is_not_rendered() {
    let plan: Plan = plan("int32 a\n");
    let mut tree = Tree::new();
    tree.set_root_fields([Value::Float32(1.0)]);
    assert!(plan.tree_to_json(&tree).is_err());
}
