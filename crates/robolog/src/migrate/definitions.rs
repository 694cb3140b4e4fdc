//! The definitions of a migrated type: for ROS 1 → ROS 2, the bundled standard interfaces of
//! the chosen distro for the types ROS 2 has, the ROS 1 definition translated for the others;
//! for ROS 2 → ROS 1, the ROS 2 definition translated (`std_msgs/Header` gets its `seq`
//! back, `builtin_interfaces/Time` and `Duration` become `time` and `duration`). A type that
//! belongs to the other ROS version's standard packages but that version lacks has no
//! counterpart and is refused by name, unless the caller asks for its own definition to be
//! carried over.

use std::collections::BTreeSet;

use robolog_msg::{
    ArrayKind, Dialect, Distro, ElementType, Field, InterfaceKind, MessageDefinition,
    PrimitiveType, Registry, TypeName,
};

/// ROS 1 types ROS 2 renamed (rosbags-convert's `STATIC_MSGTYPE_RENAMES`).
const RENAMES: [(&str, &str, &str, &str); 1] = [("tf", "tfMessage", "tf2_msgs", "TFMessage")];

/// ROS 1 packages that have no ROS 2 counterpart at all: what their types carry is ROS 1
/// machinery (actionlib's generated goals, roscpp's logger services, dynamic_reconfigure, bond).
const ROS1_ONLY_PACKAGES: [&str; 6] = [
    "roscpp",
    "rosgraph_msgs",
    "dynamic_reconfigure",
    "bond",
    "actionlib",
    "tf",
];

/// ROS 1's standard message packages that ROS 2 has too.
const SHARED_PACKAGES: [&str; 13] = [
    "std_msgs",
    "std_srvs",
    "geometry_msgs",
    "sensor_msgs",
    "nav_msgs",
    "shape_msgs",
    "stereo_msgs",
    "trajectory_msgs",
    "visualization_msgs",
    "diagnostic_msgs",
    "actionlib_msgs",
    "rosgraph_msgs",
    "tf2_msgs",
];

/// ROS 2 packages that have no ROS 1 counterpart.
const ROS2_ONLY_PACKAGES: [&str; 11] = [
    "builtin_interfaces",
    "rcl_interfaces",
    "action_msgs",
    "unique_identifier_msgs",
    "service_msgs",
    "type_description_interfaces",
    "lifecycle_msgs",
    "statistics_msgs",
    "rosbag2_interfaces",
    "rmw_dds_common",
    "composition_interfaces",
];

/// ROS 2 message types of packages both versions have that ROS 1 (Noetic) lacks.
const ROS2_ONLY_TYPES: [&str; 5] = [
    "geometry_msgs/PolygonInstance",
    "geometry_msgs/PolygonInstanceStamped",
    "geometry_msgs/VelocityStamped",
    "visualization_msgs/MeshFile",
    "visualization_msgs/UVCoordinate",
];

/// The ROS 1 definition of `std_msgs/Header`.
const ROS1_HEADER: &str = "uint32 seq\ntime stamp\nstring frame_id\n";

/// What ROS 1 `time` and `duration` are to the transcoder: messages of two 32-bit fields,
/// laid out as `builtin_interfaces/Time` and `Duration` are.
const TIME_FIELDS: &str = "int32 sec\nuint32 nanosec\n";

fn builtin(name: &str) -> TypeName {
    TypeName::new("builtin_interfaces", name).unwrap_or_else(|_| TypeName::std_msgs_header())
}

/// The ROS 2 name of a ROS 1 type.
pub(crate) fn ros2_name_of(name: &TypeName) -> TypeName {
    for (package, type_name, new_package, new_name) in RENAMES {
        if name.package() == package && name.name() == type_name {
            return TypeName::new(new_package, new_name).unwrap_or_else(|_| name.clone());
        }
    }
    name.clone()
}

/// Both sides of a migrated type: the source's definitions as the transcoder reads them, and
/// the destination's as they are written (and as the transcoder reads them).
#[derive(Debug)]
pub(crate) struct Migrated {
    /// The source, `time`/`duration` rewritten as messages (ROS 1) or as read (ROS 2).
    pub(crate) src: Registry,
    pub(crate) src_top: TypeName,
    /// The destination's definitions as they go into the output.
    pub(crate) dst: Registry,
    /// The same for the transcoder (ROS 1: `time`/`duration` as messages).
    pub(crate) dst_wire: Registry,
    pub(crate) dst_top: TypeName,
}

/// Why a type cannot be migrated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    /// The type (the source's name).
    pub(crate) type_name: String,
    /// Why.
    pub(crate) reason: String,
}

/// The types `top` needs (itself first), or why they cannot be listed.
fn reachable(registry: &Registry, top: &TypeName) -> Result<Vec<TypeName>, Refused> {
    let dependencies = registry.dependencies(top).map_err(|e| Refused {
        type_name: top.to_string(),
        reason: format!("its definition cannot be used: {e}"),
    })?;
    let mut all = vec![top.clone()];
    all.extend(dependencies);
    Ok(all)
}

/// A definition with `time`/`duration` as the builtin messages and message names mapped.
fn normalized(
    definition: &MessageDefinition,
    rename: impl Fn(&TypeName) -> TypeName,
) -> MessageDefinition {
    let mut out = definition.clone();
    out.name = rename(&definition.name);
    for field in &mut out.fields {
        field.ty.element = match &field.ty.element {
            ElementType::Primitive(PrimitiveType::Time) => ElementType::Message(builtin("Time")),
            ElementType::Primitive(PrimitiveType::Duration) => {
                ElementType::Message(builtin("Duration"))
            }
            ElementType::Message(name) => ElementType::Message(rename(name)),
            other => other.clone(),
        };
    }
    out
}

/// A ROS 1 registry as the transcoder reads it: every type of `types` normalized, and the
/// builtin time messages added.
fn wire_registry(
    registry: &Registry,
    types: &[TypeName],
    rename: impl Fn(&TypeName) -> TypeName,
) -> Result<Registry, Refused> {
    let mut out = Registry::new();
    for name in types {
        let definition = registry.require(name).map_err(|e| Refused {
            type_name: name.to_string(),
            reason: e.to_string(),
        })?;
        out.insert_message(normalized(definition, &rename));
    }
    for name in ["Time", "Duration"] {
        out.add_message_text(&builtin(name), TIME_FIELDS, Dialect::Ros1)
            .map_err(|e| Refused {
                type_name: format!("builtin_interfaces/{name}"),
                reason: e.to_string(),
            })?;
    }
    Ok(out)
}

/// The type of a field as a `.msg` text writes it, through `element`.
fn field_line(field: &Field, element: &str, array: ArrayKind) -> String {
    let suffix = match array {
        ArrayKind::Scalar => String::new(),
        ArrayKind::Fixed(n) => format!("[{n}]"),
        ArrayKind::Variable => "[]".to_owned(),
        ArrayKind::Bounded(n) => format!("[<={n}]"),
    };
    format!("{element}{suffix} {}\n", field.name)
}

/// A ROS 1 definition as a ROS 2 `.msg` text: `time`/`duration` become the builtin
/// messages, message names their ROS 2 names, constants and comments-free fields otherwise as
/// written.
fn ros2_text(definition: &MessageDefinition) -> String {
    let mut out = String::new();
    for constant in &definition.constants {
        out.push_str(&format!(
            "{} {}={}\n",
            constant.ty, constant.name, constant.value_text
        ));
    }
    for field in &definition.fields {
        let element = match &field.ty.element {
            ElementType::Primitive(PrimitiveType::Time) => "builtin_interfaces/Time".to_owned(),
            ElementType::Primitive(PrimitiveType::Duration) => {
                "builtin_interfaces/Duration".to_owned()
            }
            ElementType::Primitive(p) => p.as_str().to_owned(),
            ElementType::BoundedString { .. } => "string".to_owned(),
            ElementType::Message(name) => ros2_name_of(name).to_string(),
        };
        out.push_str(&field_line(field, &element, field.ty.array));
    }
    out
}

/// Whether ROS 2 lacks a counterpart of the ROS 1 type `name` (already renamed): its package
/// is one of ROS 1's standard packages that ROS 2 has too (which does not have it), or one
/// that ROS 2 dropped. Packages of other names are the user's own (ROS 2's `test_msgs` or
/// `example_interfaces` are not what a ROS 1 bag's package of that name holds).
fn ros2_lacks(name: &TypeName, standard: &Registry) -> bool {
    let package = name.package();
    !standard.contains(name)
        && (SHARED_PACKAGES.contains(&package) || ROS1_ONLY_PACKAGES.contains(&package))
}

/// The ROS 2 side of the ROS 1 type `top` whose definition bundle is `bundle`.
pub(crate) fn to_ros2(
    top: &TypeName,
    bundle: &str,
    distro: Distro,
    copy_unmatched: bool,
) -> Result<Migrated, Vec<Refused>> {
    let source = Registry::from_bundle(top, bundle, Dialect::Ros1).map_err(|e| {
        vec![Refused {
            type_name: top.to_string(),
            reason: format!("its ROS 1 definition cannot be read: {e}"),
        }]
    })?;
    let types = reachable(&source, top).map_err(|r| vec![r])?;
    let standard = Registry::standard(distro);
    let mut refused = Vec::new();
    let mut dst = Registry::new();
    // The types the destination defines itself: the top one and, below a translated type,
    // what it uses (a standard type brings its own dependencies).
    let mut pending = vec![top.clone()];
    let mut seen = BTreeSet::new();
    while let Some(name) = pending.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let target = ros2_name_of(&name);
        if standard.contains(&target) {
            continue;
        }
        if !copy_unmatched && ros2_lacks(&target, standard) {
            refused.push(Refused {
                type_name: name.to_string(),
                reason: format!("ROS 2 {distro} has no {}", target.ros2_name()),
            });
            continue;
        }
        let Some(definition) = source.get(&name) else {
            continue;
        };
        pending.extend(definition.direct_dependencies().into_iter().rev().cloned());
        if let Err(e) = dst.add_message_text(&target, &ros2_text(definition), Dialect::Ros2) {
            refused.push(Refused {
                type_name: name.to_string(),
                reason: format!("its definition is not a valid ROS 2 definition: {e}"),
            });
        }
    }
    if !refused.is_empty() {
        return Err(refused);
    }
    let dst_top = ros2_name_of(top);
    dst.fill_missing_from(standard, &dst_top);
    dst.add_ros2_builtins();
    reachable(&dst, &dst_top).map_err(|r| vec![r])?;
    let src = wire_registry(&source, &types, ros2_name_of).map_err(|r| vec![r])?;
    Ok(Migrated {
        src,
        src_top: dst_top.clone(),
        dst_wire: dst.clone(),
        dst,
        dst_top,
    })
}

/// Whether ROS 1 lacks a counterpart of the ROS 2 type `name`.
fn ros1_lacks(name: &TypeName) -> bool {
    ROS2_ONLY_PACKAGES.contains(&name.package())
        || name.ros2_interface_kind() != InterfaceKind::Message
        || ROS2_ONLY_TYPES.contains(&name.to_string().as_str())
}

/// A ROS 2 definition as a ROS 1 `.msg` text, or why it has none.
fn ros1_text(definition: &MessageDefinition) -> Result<String, String> {
    if definition.name == TypeName::std_msgs_header() {
        return Ok(ROS1_HEADER.to_owned());
    }
    let mut out = String::new();
    for constant in &definition.constants {
        if constant.ty == PrimitiveType::WString {
            return Err(format!(
                "constant {} is a wstring, which ROS 1 does not have",
                constant.name
            ));
        }
        out.push_str(&format!(
            "{} {}={}\n",
            constant.ty, constant.name, constant.value_text
        ));
    }
    for field in &definition.fields {
        let element = match &field.ty.element {
            ElementType::Primitive(PrimitiveType::WString)
            | ElementType::BoundedString { wide: true, .. } => {
                return Err(format!(
                    "field {} is a wstring, which ROS 1 does not have",
                    field.name
                ));
            }
            ElementType::Primitive(p) => p.as_str().to_owned(),
            ElementType::BoundedString { .. } => "string".to_owned(),
            ElementType::Message(name) if *name == builtin("Time") => "time".to_owned(),
            ElementType::Message(name) if *name == builtin("Duration") => "duration".to_owned(),
            ElementType::Message(name) => name.to_string(),
        };
        let array = match field.ty.array {
            ArrayKind::Bounded(_) => ArrayKind::Variable,
            other => other,
        };
        out.push_str(&field_line(field, &element, array));
    }
    Ok(out)
}

/// The ROS 1 side of the ROS 2 type `top` (from `source`, its ROS 2 definitions).
pub(crate) fn to_ros1(
    top: &TypeName,
    source: Registry,
    copy_unmatched: bool,
) -> Result<Migrated, Vec<Refused>> {
    let types = reachable(&source, top).map_err(|r| vec![r])?;
    let time_types = [builtin("Time"), builtin("Duration")];
    let mut refused = Vec::new();
    let mut dst = Registry::new();
    for name in &types {
        // Fields of these types become ROS 1 `time` and `duration`.
        if time_types.contains(name) && name != top {
            continue;
        }
        if !copy_unmatched && ros1_lacks(name) {
            refused.push(Refused {
                type_name: name.ros2_name(),
                reason: format!("ROS 1 has no {name}"),
            });
            continue;
        }
        let Some(definition) = source.get(name) else {
            continue;
        };
        let text = match ros1_text(definition) {
            Ok(text) => text,
            Err(reason) => {
                refused.push(Refused {
                    type_name: name.ros2_name(),
                    reason,
                });
                continue;
            }
        };
        if let Err(e) = dst.add_message_text(name, &text, Dialect::Ros1) {
            refused.push(Refused {
                type_name: name.ros2_name(),
                reason: format!("its definition is not a valid ROS 1 definition: {e}"),
            });
        }
    }
    if !refused.is_empty() {
        return Err(refused);
    }
    let dst_types = reachable(&dst, top).map_err(|r| vec![r])?;
    let dst_wire = wire_registry(&dst, &dst_types, TypeName::clone).map_err(|r| vec![r])?;
    Ok(Migrated {
        src: source,
        src_top: top.clone(),
        dst,
        dst_wire,
        dst_top: top.clone(),
    })
}
