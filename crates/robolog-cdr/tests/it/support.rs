//! Helpers shared by the test modules.

use robolog_cdr::Plan;

pub(crate) const SEPARATOR: &str =
    "================================================================================";

/// Bytes from hex text; spaces, `│` and `|` are ignored.
pub(crate) fn hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(|b| b.is_ascii_hexdigit()).collect();
    assert!(digits.len().is_multiple_of(2), "odd hex: {text}");
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
        .collect()
}

/// A plan for `p/M` from a bundle.
pub(crate) fn plan(text: &str) -> Plan {
    Plan::from_bundle("p/M", text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// `geometry_msgs/PoseStamped` as rosbag2 stores its schema.
pub(crate) const POSE_STAMPED: &str = "\
std_msgs/Header header
Pose pose

================================================================================
MSG: geometry_msgs/Pose
Point position
Quaternion orientation

================================================================================
MSG: geometry_msgs/Point
float64 x
float64 y
float64 z

================================================================================
MSG: geometry_msgs/Quaternion
float64 x 0
float64 y 0
float64 z 0
float64 w 1

================================================================================
MSG: std_msgs/Header
builtin_interfaces/Time stamp
string frame_id

================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
";
