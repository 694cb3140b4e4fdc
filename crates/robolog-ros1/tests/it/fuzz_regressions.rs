//! Inputs found by the fuzz targets (`fuzz/`), reduced, that once hung or crashed.

use robolog_ros1::{Plan, Value};

const HOLLOW: &str = "\
Hollow[] items
Hollow[18446744073709551615] many
uint8 after
================================================================================
MSG: fuzz_pkg/Hollow
string[0] nothing
";

/// Found by `ros1_decode` (a mutated `rosgraph_msgs/Log` bundle with a `Point[0]`-like field):
/// a message type that is variable-size only through a zero-length array of strings takes no
/// bytes, so skipping 2^32 − 1 (or 2^64 − 1) of them to reach a later field made no progress
/// and ran for minutes (or forever).
#[test]
fn projecting_past_arrays_of_zero_byte_messages_is_immediate() {
    let plan = Plan::from_bundle("fuzz_pkg/Top", HOLLOW).unwrap();
    assert_eq!(plan.fixed_size(), None);
    let message = [0xff, 0xff, 0xff, 0xff, 7];
    let projection = plan.projection(&["after"]).unwrap();
    assert_eq!(
        projection.extract(&message).unwrap(),
        [Some(Value::UInt8(7))]
    );
}
