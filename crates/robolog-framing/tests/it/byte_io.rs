//! ByteReader / ByteWriter: every primitive, every truncation, round trips.

use proptest::prelude::*;
use robolog_framing::{ByteReader, ByteWriter, ErrorKind, LengthBound, check_len};

#[test]
fn reads_every_primitive_little_endian() {
    let data: Vec<u8> = vec![
        0xAB, // u8
        0x34, 0x12, // u16
        0x78, 0x56, 0x34, 0x12, // u32
        0xEF, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x01, // u64
        0xFE, // i8 = -2
        0xFE, 0xFF, // i16 = -2
        0xFE, 0xFF, 0xFF, 0xFF, // i32 = -2
        0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, // i64 = -2
        0x00, 0x00, 0xC0, 0x3F, // f32 = 1.5
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xD0, 0x3F, // f64 = 0.25
    ];
    let mut r = ByteReader::new(&data);
    assert_eq!(r.read_u8("a").unwrap(), 0xAB);
    assert_eq!(r.read_u16("a").unwrap(), 0x1234);
    assert_eq!(r.read_u32("a").unwrap(), 0x1234_5678);
    assert_eq!(r.read_u64("a").unwrap(), 0x0123_4567_89AB_CDEF);
    assert_eq!(r.read_i8("a").unwrap(), -2);
    assert_eq!(r.read_i16("a").unwrap(), -2);
    assert_eq!(r.read_i32("a").unwrap(), -2);
    assert_eq!(r.read_i64("a").unwrap(), -2);
    assert_eq!(r.read_f32("a").unwrap(), 1.5);
    assert_eq!(r.read_f64("a").unwrap(), 0.25);
    assert!(r.is_empty());
    assert_eq!(r.offset(), data.len() as u64);
}

#[test]
fn prefixed_strings_and_bytes_borrow_from_the_input() {
    let data = [3, 0, 0, 0, b'a', b'b', b'c', 2, 0, 0, 0, 0, 0, 0, 0, 9, 8];
    let mut r = ByteReader::new(&data);
    let s = r.read_str_u32("name").unwrap();
    assert_eq!(s, "abc");
    assert_eq!(
        s.as_ptr(),
        data[4..].as_ptr(),
        "string must borrow, not copy"
    );
    let b = r.read_bytes_u64("data").unwrap();
    assert_eq!(b, &[9, 8]);
    assert_eq!(b.as_ptr(), data[15..].as_ptr());
}

#[test]
fn errors_carry_absolute_offset_and_what() {
    let data = [0u8; 6];
    let mut r = ByteReader::with_base(&data, 1000);
    r.read_u32("first").unwrap();
    let err = r.read_u32("second field").unwrap_err();
    assert_eq!(err.offset, 1004);
    assert_eq!(err.what, "second field");
    assert_eq!(
        err.kind,
        ErrorKind::UnexpectedEnd {
            needed: 4,
            available: 2
        }
    );
    assert_eq!(
        err.to_string(),
        "unexpected end of data: needed 4 bytes, 2 available (reading second field at byte 1004)"
    );
    // A failed read consumes nothing.
    assert_eq!(r.read_u16("rest").unwrap(), 0);
}

#[test]
fn length_prefix_past_the_end_is_rejected_before_allocating() {
    let data = [0xFF, 0xFF, 0xFF, 0xFF, b'x'];
    let mut r = ByteReader::with_base(&data, 10);
    let err = r.read_bytes_u32("topic").unwrap_err();
    assert_eq!(err.offset, 10, "points at the length field");
    assert_eq!(
        err.kind,
        ErrorKind::LengthPastEnd {
            length: 0xFFFF_FFFF,
            available: 1
        }
    );
    let data = [0xFF; 8];
    let err = ByteReader::new(&data)
        .read_bytes_u64("records")
        .unwrap_err();
    assert!(matches!(
        err.kind,
        ErrorKind::LengthPastEnd {
            length: u64::MAX,
            ..
        }
    ));
}

#[test]
fn invalid_utf8_is_reported_at_the_string() {
    let data = [2, 0, 0, 0, b'a', 0xFF];
    let err = ByteReader::with_base(&data, 50)
        .read_str_u32("topic")
        .unwrap_err();
    assert_eq!(err.offset, 54);
    assert_eq!(err.kind, ErrorKind::InvalidUtf8 { valid_up_to: 1 });
}

#[test]
fn take_gives_a_sub_reader_with_absolute_offsets() {
    let data = [1, 2, 3, 4, 5, 6];
    let mut r = ByteReader::with_base(&data, 100);
    r.read_u8("op").unwrap();
    let mut sub = r.take(3, "record").unwrap();
    assert_eq!(sub.base(), 101);
    assert_eq!(sub.read_u16("x").unwrap(), 0x0302);
    let err = sub.read_u16("y").unwrap_err();
    assert_eq!(err.offset, 103);
    assert_eq!(r.read_u8("after").unwrap(), 5);
    assert!(r.take(5, "too long").is_err());
}

#[test]
fn set_position_is_bounded() {
    let data = [0u8; 4];
    let mut r = ByteReader::new(&data);
    r.set_position(4, "end").unwrap();
    assert!(r.is_empty());
    assert!(r.set_position(5, "past").is_err());
}

#[test]
fn check_len_against_remaining_and_limit() {
    assert_eq!(check_len(5, LengthBound::Remaining(5), 0, "x").unwrap(), 5);
    let err = check_len(6, LengthBound::Remaining(5), 7, "x").unwrap_err();
    assert_eq!((err.offset, err.is_truncation()), (7, true));
    let err = check_len(1 << 33, LengthBound::Limit(1 << 32), 0, "x").unwrap_err();
    assert_eq!(
        err.kind,
        ErrorKind::LengthOverLimit {
            length: 1 << 33,
            limit: 1 << 32
        }
    );
    assert!(!err.is_truncation());
}

/// A little record format exercising every reader method.
fn sample_record() -> Vec<u8> {
    let mut buf = Vec::new();
    let mut w = ByteWriter::new(&mut buf);
    w.write_u8(7);
    w.write_u16(0xBEEF);
    w.write_u32(123_456);
    w.write_u64(u64::MAX - 1);
    w.write_i32(-5);
    w.write_i64(i64::MIN);
    w.write_f32(-0.5);
    w.write_f64(1e300);
    w.write_str_u32("topic").unwrap();
    w.write_bytes_u64(b"payload");
    w.write_bytes(&[1, 2, 3]);
    buf
}

fn read_sample(data: &[u8]) -> Result<(), robolog_framing::Error> {
    let mut r = ByteReader::new(data);
    assert_eq!(r.read_u8("op")?, 7);
    assert_eq!(r.read_u16("u16")?, 0xBEEF);
    assert_eq!(r.read_u32("u32")?, 123_456);
    assert_eq!(r.read_u64("u64")?, u64::MAX - 1);
    assert_eq!(r.read_i32("i32")?, -5);
    assert_eq!(r.read_i64("i64")?, i64::MIN);
    assert_eq!(r.read_f32("f32")?, -0.5);
    assert_eq!(r.read_f64("f64")?, 1e300);
    assert_eq!(r.read_str_u32("topic")?, "topic");
    assert_eq!(r.read_bytes_u64("payload")?, b"payload");
    assert_eq!(r.read_array::<3>("tail")?, [1, 2, 3]);
    Ok(())
}

#[test]
fn every_truncation_is_an_error_at_the_right_offset() {
    let data = sample_record();
    read_sample(&data).unwrap();
    robolog_testkit::truncation::sweep(&data, usize::MAX, 1, |cut, prefix| {
        let err = read_sample(prefix)
            .err()
            .ok_or_else(|| "a truncated record was read completely".to_string())?;
        if !err.is_truncation() {
            return Err(format!("not reported as truncation: {err}"));
        }
        if err.offset > cut as u64 {
            return Err(format!("error offset {} beyond the cut", err.offset));
        }
        Ok(())
    });
}

#[test]
fn writer_patches_length_fields() {
    let mut buf = vec![0xAA];
    let mut w = ByteWriter::new(&mut buf);
    let outer = w.begin_len_u64();
    w.write_u8(1);
    let inner = w.begin_len_u32();
    w.write_bytes(b"abc");
    assert_eq!(w.end_len(inner).unwrap(), 3);
    assert_eq!(w.end_len(outer).unwrap(), 1 + 4 + 3);
    assert_eq!(
        buf,
        [
            0xAA, 8, 0, 0, 0, 0, 0, 0, 0, 1, 3, 0, 0, 0, b'a', b'b', b'c'
        ]
    );
    let mut w = ByteWriter::new(&mut buf);
    assert!(w.patch_u32(15, 0).is_err(), "patching past the end fails");
    w.patch_u32(1, 0xDEAD_BEEF).unwrap();
    assert_eq!(&buf[1..5], &[0xEF, 0xBE, 0xAD, 0xDE]);
}

#[derive(Debug, Clone)]
enum Value {
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
    Str(String),
    Bytes32(Vec<u8>),
    Bytes64(Vec<u8>),
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<u8>().prop_map(Value::U8),
        any::<u16>().prop_map(Value::U16),
        any::<u32>().prop_map(Value::U32),
        any::<u64>().prop_map(Value::U64),
        any::<i8>().prop_map(Value::I8),
        any::<i16>().prop_map(Value::I16),
        any::<i32>().prop_map(Value::I32),
        any::<i64>().prop_map(Value::I64),
        any::<f32>().prop_map(Value::F32),
        any::<f64>().prop_map(Value::F64),
        ".{0,20}".prop_map(Value::Str),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(Value::Bytes32),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(Value::Bytes64),
    ]
}

proptest! {
    #[test]
    fn write_then_read_round_trips(values in proptest::collection::vec(value(), 0..30)) {
        let mut buf = Vec::new();
        let mut w = ByteWriter::new(&mut buf);
        for v in &values {
            match v {
                Value::U8(x) => w.write_u8(*x),
                Value::U16(x) => w.write_u16(*x),
                Value::U32(x) => w.write_u32(*x),
                Value::U64(x) => w.write_u64(*x),
                Value::I8(x) => w.write_i8(*x),
                Value::I16(x) => w.write_i16(*x),
                Value::I32(x) => w.write_i32(*x),
                Value::I64(x) => w.write_i64(*x),
                Value::F32(x) => w.write_f32(*x),
                Value::F64(x) => w.write_f64(*x),
                Value::Str(x) => w.write_str_u32(x).unwrap(),
                Value::Bytes32(x) => w.write_bytes_u32(x).unwrap(),
                Value::Bytes64(x) => w.write_bytes_u64(x),
            }
        }
        let mut r = ByteReader::new(&buf);
        for v in &values {
            match v {
                Value::U8(x) => prop_assert_eq!(r.read_u8("v").unwrap(), *x),
                Value::U16(x) => prop_assert_eq!(r.read_u16("v").unwrap(), *x),
                Value::U32(x) => prop_assert_eq!(r.read_u32("v").unwrap(), *x),
                Value::U64(x) => prop_assert_eq!(r.read_u64("v").unwrap(), *x),
                Value::I8(x) => prop_assert_eq!(r.read_i8("v").unwrap(), *x),
                Value::I16(x) => prop_assert_eq!(r.read_i16("v").unwrap(), *x),
                Value::I32(x) => prop_assert_eq!(r.read_i32("v").unwrap(), *x),
                Value::I64(x) => prop_assert_eq!(r.read_i64("v").unwrap(), *x),
                Value::F32(x) => prop_assert_eq!(r.read_f32("v").unwrap().to_bits(), x.to_bits()),
                Value::F64(x) => prop_assert_eq!(r.read_f64("v").unwrap().to_bits(), x.to_bits()),
                Value::Str(x) => prop_assert_eq!(r.read_str_u32("v").unwrap(), x.as_str()),
                Value::Bytes32(x) => prop_assert_eq!(r.read_bytes_u32("v").unwrap(), x.as_slice()),
                Value::Bytes64(x) => prop_assert_eq!(r.read_bytes_u64("v").unwrap(), x.as_slice()),
            }
        }
        prop_assert!(r.is_empty());
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..64)) {
        let mut r = ByteReader::new(&data);
        while !r.is_empty() {
            let before = r.position();
            let _ = r.read_str_u32("s");
            let _ = r.read_bytes_u64("b");
            let _ = r.read_u8("u");
            if r.position() == before {
                break;
            }
        }
    }
}
