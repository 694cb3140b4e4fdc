//! The fast walk of little-endian messages (strings, short runs of numbers and the nested
//! messages made of them read in one pass; sequences of such messages element by element)
//! against the field-by-field walk that big-endian messages take: the same values in the same
//! tree, the same errors at the same offsets.

use robolog_cdr::{Encapsulation, Error, Plan, PrimitiveArray, Tree, Value};

use crate::support::{SEPARATOR, plan};

fn point_cloud2() -> String {
    format!(
        "std_msgs/Header header\nuint32 height\nuint32 width\nPointField[] fields\n\
         bool is_bigendian\nuint32 point_step\nuint32 row_step\nuint8[] data\nbool is_dense\n\
         {SEPARATOR}\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n\
         {SEPARATOR}\nMSG: sensor_msgs/PointField\nuint8 INT8 = 1\nstring name\nuint32 offset\n\
         uint8 datatype\nuint32 count\n"
    )
}

/// A cloud of three points whose field names (1 to 9 bytes) leave every alignment phase
/// before the numbers that follow them.
fn cloud_tree<'a>(data: &'a [u8]) -> Tree<'a> {
    let mut tree = Tree::new();
    let stamp = tree.push_message([Value::Int32(-5), Value::UInt32(999_999_999)]);
    let header = tree.push_message([stamp, Value::String(b"lidar")]);
    let fields: Vec<Value<'_>> = ["x", "yy", "zzz", "intensity", "ring"]
        .iter()
        .enumerate()
        .map(|(i, name)| {
            tree.push_message([
                Value::String(name.as_bytes()),
                Value::UInt32(4 * i as u32),
                Value::UInt8(7 - i as u8),
                Value::UInt32(1 + i as u32),
            ])
        })
        .collect();
    let fields = tree.push_messages(fields);
    tree.set_root_fields([
        header,
        Value::UInt32(1),
        Value::UInt32(3),
        fields,
        Value::Bool(false),
        Value::UInt32(16),
        Value::UInt32(48),
        Value::Array(PrimitiveArray::of::<u8>(data).unwrap()),
        Value::Bool(true),
    ]);
    tree
}

/// The offset of a truncation error.
fn offset(error: &Error) -> usize {
    match *error {
        Error::Truncated { offset, .. } | Error::LengthPastEnd { offset, .. } => offset,
        ref other => panic!("{other}"),
    }
}

#[test]
fn point_clouds_decode_alike_in_both_byte_orders() {
    let plan = Plan::from_bundle("sensor_msgs/msg/PointCloud2", &point_cloud2()).unwrap();
    let data: Vec<u8> = (0..48).collect();
    let tree = cloud_tree(&data);
    let le = plan.encode(&tree).unwrap();
    let be = plan.encode_as(&tree, Encapsulation::CdrBe).unwrap();
    let fast = plan.decode_strict(&le).unwrap();
    let slow = plan.decode_strict(&be).unwrap();
    // The same nodes in the same places (arrays compare by element, whatever the byte order).
    assert_eq!(fast.tree(), slow.tree());
    for (path, value) in [
        ("header.stamp.sec", Value::Int32(-5)),
        ("header.stamp.nanosec", Value::UInt32(999_999_999)),
        ("header.frame_id", Value::String(b"lidar")),
        ("width", Value::UInt32(3)),
        ("fields[0].name", Value::String(b"x")),
        ("fields[2].offset", Value::UInt32(8)),
        ("fields[3].name", Value::String(b"intensity")),
        ("fields[3].datatype", Value::UInt8(4)),
        ("fields[4].count", Value::UInt32(5)),
        ("row_step", Value::UInt32(48)),
        ("is_dense", Value::Bool(true)),
    ] {
        assert_eq!(fast.get(path).unwrap(), value, "{path}");
    }
    assert_eq!(fast.get("data").unwrap().as_bytes().unwrap(), &data[..]);
    assert_eq!(fast.encode().unwrap(), le);
    // A reused tree gives the same values again.
    let mut reused = Tree::new();
    for _ in 0..2 {
        plan.decode_into(&le, &mut reused).unwrap();
        assert_eq!(&reused, fast.tree());
    }
}

#[test]
fn every_kind_of_value_after_a_string_aligns_from_every_phase() {
    let plan = plan(&format!(
        "E[] items\nuint8 last\n{SEPARATOR}\nMSG: p/E\nstring s\nfloat64 f\nbool b\nint16 i\n\
         uint64[2] a\nint8 c\nbool[] flags\nint32[1] one\nfloat32 g\nint64 l\nuint16 u\n"
    ));
    let names = [
        "", "a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdefg", "abcdefgh",
    ];
    let wide = [3u64, u64::MAX];
    let wide = robolog_cdr::le_bytes(&wide);
    let flags = [true, false, true];
    let flags = robolog_cdr::le_bytes(&flags);
    let one = robolog_cdr::le_bytes(&[-7i32]);
    let mut tree = Tree::new();
    let items: Vec<Value<'_>> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            tree.push_message([
                Value::String(name.as_bytes()),
                Value::Float64(i as f64 + 0.5),
                Value::Bool(i % 2 == 1),
                Value::Int16(-(i as i16)),
                Value::Array(PrimitiveArray::of::<u64>(&wide).unwrap()),
                Value::Int8(i as i8),
                Value::Array(PrimitiveArray::of::<bool>(&flags[..i % 4]).unwrap()),
                Value::Array(PrimitiveArray::of::<i32>(&one).unwrap()),
                Value::Float32(-(i as f32)),
                Value::Int64(i64::MIN + i as i64),
                Value::UInt16(i as u16),
            ])
        })
        .collect();
    let items = tree.push_messages(items);
    tree.set_root_fields([items, Value::UInt8(9)]);
    let le = plan.encode(&tree).unwrap();
    let be = plan.encode_as(&tree, Encapsulation::CdrBe).unwrap();
    let fast = plan.decode_strict(&le).unwrap();
    let slow = plan.decode_strict(&be).unwrap();
    assert_eq!(fast.tree(), slow.tree());
    for (i, name) in names.iter().enumerate() {
        let get = |field: &str| fast.get(&format!("items[{i}].{field}")).unwrap();
        assert_eq!(get("s"), Value::String(name.as_bytes()));
        assert_eq!(get("f"), Value::Float64(i as f64 + 0.5));
        assert_eq!(
            get("a").as_array().unwrap().to_vec::<u64>().unwrap(),
            [3, u64::MAX]
        );
        assert_eq!(get("flags").as_array().unwrap().len(), i % 4);
        assert_eq!(get("l"), Value::Int64(i64::MIN + i as i64));
        assert_eq!(get("u"), Value::UInt16(i as u16));
    }
    assert_eq!(fast.get("last").unwrap(), Value::UInt8(9));
    assert_eq!(fast.encode().unwrap(), le);
}

/// Every cut of a little-endian cloud fails as the big-endian one does: a truncation naming
/// the same field at the same offset (where the field's read began, padding included).
#[test]
fn every_cut_of_a_point_cloud_names_the_field_and_offset() {
    let plan = Plan::from_bundle("sensor_msgs/msg/PointCloud2", &point_cloud2()).unwrap();
    let data: Vec<u8> = (0..48).collect();
    let tree = cloud_tree(&data);
    let le = plan.encode(&tree).unwrap();
    let be = plan.encode_as(&tree, Encapsulation::CdrBe).unwrap();
    for cut in 4..le.len() {
        let fast = plan.decode(&le[..cut]).unwrap_err();
        let slow = plan.decode(&be[..cut]).unwrap_err();
        assert!(fast.is_truncation(), "cut {cut}: {fast}");
        assert_eq!(fast.path(), slow.path(), "cut {cut}");
        assert_eq!(offset(&fast), offset(&slow), "cut {cut}");
    }
    // Spelled out (offsets in the message, header included): `fields[3].name` has its length
    // at 96 ("intensity" and its NUL follow), its `count` is read from 117 (3 bytes of padding,
    // then 4 bytes); `fields[4].count` from 141; `data` has its length at 160. (Cuts before
    // 101 leave too few bytes for the 5 fields and fail at `fields` itself.)
    for (cut, path, at) in [
        (105, "fields[3].name", 96),
        (118, "fields[3].count", 117),
        (122, "fields[3].count", 117),
        (146, "fields[4].count", 141),
        (150, "point_step", 149),
        (200, "data", 160),
    ] {
        let error = plan.decode(&le[..cut]).unwrap_err();
        assert_eq!(
            error.path().unwrap().to_string(),
            path,
            "cut {cut}: {error}"
        );
        assert_eq!(offset(&error), at, "cut {cut}: {error}");
    }
}
