//! Projections: chosen fields read straight from the bytes, in every encapsulation, the same
//! values the decoder gives.

use robolog_cdr::{Encapsulation, Error, Value};

use crate::support::{POSE_STAMPED, SEPARATOR, hex, plan};

const MIXED: &str = "\
string name
P[] points
wstring label
int32[<=4] ids
Q[2] pairs
uint8 last
================================================================================
MSG: p/P
uint8 tag
float64 x
string note
================================================================================
MSG: p/Q
float32 a
int64 b
";

fn mixed_bytes(encapsulation: Encapsulation) -> Vec<u8> {
    let plan = plan(MIXED);
    let le = hex("00010000 03000000 616200 00 | 02000000
         07 000000 000000000000f03f 02000000 7a00
         09 00 0000000000000040 01000000 00
         000000 02000000 68000000 69000000
         03000000 01000000 02000000 03000000
         0000c03f 0500000000000000 000020c0 00000000 faffffffffffffff 2a");
    let tree = plan.decode_strict(&le).unwrap().into_tree();
    plan.encode_as(&tree, encapsulation).unwrap()
}

#[test]
fn projections_read_what_decoding_reads_in_every_encapsulation() {
    let plan = plan(MIXED);
    let paths = [
        "name",
        "points[1].x",
        "points[0].note",
        "points[1].tag",
        "points[5].x",
        "label",
        "ids",
        "ids[2]",
        "ids[3]",
        "pairs[1].b",
        "pairs[0].a",
        "last",
    ];
    let projection = plan.projection(&paths).unwrap();
    assert_eq!(projection.len(), paths.len());
    assert_eq!(projection.paths().collect::<Vec<_>>(), paths);
    for encapsulation in [
        Encapsulation::CdrLe,
        Encapsulation::CdrBe,
        Encapsulation::PlainCdr2Le,
        Encapsulation::PlainCdr2Be,
    ] {
        let bytes = mixed_bytes(encapsulation);
        let decoded = plan.decode_strict(&bytes).unwrap();
        let values = projection.extract(&bytes).unwrap();
        for (path, value) in paths.iter().zip(&values) {
            match decoded.get(path) {
                Ok(expected) => assert_eq!(*value, Some(expected), "{encapsulation:?} {path}"),
                Err(Error::IndexOutOfRange { .. }) => {
                    assert_eq!(*value, None, "{encapsulation:?} {path}")
                }
                Err(e) => panic!("{path}: {e}"),
            }
        }
        assert_eq!(values[1], Some(Value::Float64(2.0)));
        assert_eq!(values[2], Some(Value::String(b"z")));
        assert_eq!(
            values[5].unwrap().as_wstring().unwrap().to_string_lossy(),
            "hi"
        );
        assert_eq!(values[9], Some(Value::Int64(-6)));
        assert_eq!(values[11], Some(Value::UInt8(42)));
    }
}

#[test]
fn a_message_cut_after_the_selected_fields_still_yields_them() {
    let plan = plan(MIXED);
    let bytes = mixed_bytes(Encapsulation::CdrLe);
    let projection = plan.projection(&["points[0].x", "name"]).unwrap();
    let cut = &bytes[..40];
    assert!(plan.decode(cut).is_err());
    assert_eq!(
        projection.extract(cut).unwrap(),
        [Some(Value::Float64(1.0)), Some(Value::String(b"ab"))]
    );
    // A cut before a selected field names it.
    let projection = plan.projection(&["last"]).unwrap();
    match projection.extract(cut).unwrap_err() {
        Error::Truncated { path, .. } => assert_eq!(path.to_string(), "last"),
        other => panic!("{other}"),
    }
}

#[test]
fn paths_must_end_at_values() {
    let plan = plan(MIXED);
    for (path, reason) in [
        (
            "points",
            "the path ends at a message array; select a field inside it",
        ),
        (
            "points[0]",
            "the path ends at a message; select a field inside it",
        ),
        (
            "pairs",
            "the path ends at a message array; select a field inside it",
        ),
        ("nope", "p/M has no field `nope`"),
        ("name.x", "`x` follows a value that has no fields"),
        ("last[0]", "[0] follows a value that is not an array"),
        ("pairs[2].a", "index 2 is past the end of an array of 2"),
    ] {
        match plan.projection(&[path]).unwrap_err() {
            Error::InvalidPath { reason: got, .. } => assert_eq!(got, reason, "{path}"),
            other => panic!("{path}: {other}"),
        }
    }
    let strings = crate::support::plan(&format!("string[] s\nE e\n{SEPARATOR}\nMSG: p/E\n"));
    assert!(strings.projection(&["s"]).is_err());
    assert!(strings.projection(&["e"]).is_err());
}

#[test]
fn the_header_fields_of_a_pose() {
    let plan = robolog_cdr::Plan::from_bundle("geometry_msgs/PoseStamped", POSE_STAMPED).unwrap();
    let projection = plan
        .projection(&["header.stamp.nanosec", "pose.orientation.w"])
        .unwrap();
    let bytes = hex(
        "00010000 00f15365 15cd5b07 05000000 6f646f6d00 00000000000000
         000000000000f03f 0000000000000040 0000000000000840
         0000000000000000 0000000000000000 0000000000000000 000000000000f03f",
    );
    let mut out = Vec::new();
    projection.extract_into(&bytes, &mut out).unwrap();
    assert_eq!(
        out,
        [Some(Value::UInt32(123_456_789)), Some(Value::Float64(1.0))]
    );
}
