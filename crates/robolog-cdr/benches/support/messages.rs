//! The benchmark messages (`sensor_msgs/Imu`, `sensor_msgs/PointCloud2`) and their
//! definitions, shared by `benches/decode.rs` and `examples/decode_loop.rs`.

#![allow(dead_code)]

use robolog_cdr::{Plan, PrimitiveArray, Tree, Value, le_bytes};

const HEADER: &str = "
================================================================================
MSG: std_msgs/Header
builtin_interfaces/Time stamp
string frame_id
================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
";

pub(crate) fn imu_definition() -> String {
    format!(
        "std_msgs/Header header
geometry_msgs/Quaternion orientation
float64[9] orientation_covariance
geometry_msgs/Vector3 angular_velocity
float64[9] angular_velocity_covariance
geometry_msgs/Vector3 linear_acceleration
float64[9] linear_acceleration_covariance
================================================================================
MSG: geometry_msgs/Quaternion
float64 x 0
float64 y 0
float64 z 0
float64 w 1
================================================================================
MSG: geometry_msgs/Vector3
float64 x
float64 y
float64 z{HEADER}"
    )
}

pub(crate) fn cloud_definition() -> String {
    format!(
        "std_msgs/Header header
uint32 height
uint32 width
PointField[] fields
bool is_bigendian
uint32 point_step
uint32 row_step
uint8[] data
bool is_dense
================================================================================
MSG: sensor_msgs/PointField
uint8 INT8    = 1
uint8 FLOAT32 = 7
string name
uint32 offset
uint8 datatype
uint32 count{HEADER}"
    )
}

fn header<'a>(tree: &mut Tree<'a>, frame: &'a str) -> Value<'a> {
    let stamp = tree.push_message([Value::Int32(1_700_000_000), Value::UInt32(123_456_789)]);
    tree.push_message([stamp, Value::String(frame.as_bytes())])
}

pub(crate) fn imu_message(plan: &Plan) -> Vec<u8> {
    let covariance = le_bytes(&[0.01f64; 9]);
    let mut tree = Tree::new();
    let header = header(&mut tree, "imu_link");
    let orientation = tree.push_message([0.0, 0.0, 0.0, 1.0].map(Value::Float64));
    let angular = tree.push_message([0.1, -0.2, 0.3].map(Value::Float64));
    let linear = tree.push_message([0.0, 0.0, 9.81].map(Value::Float64));
    let covariance = Value::Array(PrimitiveArray::of::<f64>(&covariance).unwrap());
    tree.set_root_fields([
        header,
        orientation,
        covariance,
        angular,
        covariance,
        linear,
        covariance,
    ]);
    plan.encode(&tree).unwrap()
}

pub(crate) fn cloud_message(plan: &Plan, data: &[u8]) -> Vec<u8> {
    let mut tree = Tree::new();
    let header = header(&mut tree, "velodyne");
    let fields: Vec<Value<'_>> = ["x", "y", "z", "intensity"]
        .iter()
        .enumerate()
        .map(|(i, name)| {
            tree.push_message([
                Value::String(name.as_bytes()),
                Value::UInt32(4 * i as u32),
                Value::UInt8(7),
                Value::UInt32(1),
            ])
        })
        .collect();
    let fields = tree.push_messages(fields);
    let points = (data.len() / 16) as u32;
    tree.set_root_fields([
        header,
        Value::UInt32(1),
        Value::UInt32(points),
        fields,
        Value::Bool(false),
        Value::UInt32(16),
        Value::UInt32(16 * points),
        Value::Array(PrimitiveArray::of::<u8>(data).unwrap()),
        Value::Bool(true),
    ]);
    plan.encode(&tree).unwrap()
}
