//! The ROS 2 types that every ROS 2 system has and that schemas leave out: the two
//! `builtin_interfaces` messages (`time`/`duration` in a `.msg` mean them) and
//! `service_msgs/msg/ServiceEventInfo`, which every service event refers to but rosbag2 never
//! writes into a schema.

use std::sync::LazyLock;

use crate::model::{
    ArrayKind, Dialect, ElementType, Field, FieldType, MessageDefinition, ServiceDefinition,
};
use crate::name::TypeName;
use crate::registry::Registry;
use crate::ros2;

/// `builtin_interfaces/msg/Time.msg` of ros2/rcl_interfaces (the same in every distro).
const TIME: &str = "\
# This message communicates ROS Time defined here:
# https://design.ros2.org/articles/clock_and_time.html

# The seconds component, valid over all int32 values.
int32 sec

# The nanoseconds component, valid in the range [0, 1e9).
uint32 nanosec
";

/// `builtin_interfaces/msg/Duration.msg` of ros2/rcl_interfaces (the same in every distro).
const DURATION: &str = "\
# Duration defines a period between two time points.
# Messages of this datatype are of ROS Time following this design:
# https://design.ros2.org/articles/clock_and_time.html

# Seconds component, range is valid over any possible int32 value.
int32 sec

# Nanoseconds component in the range of [0, 1e9).
uint32 nanosec
";

/// `service_msgs/msg/ServiceEventInfo.msg` of ros2/rcl_interfaces (Iron and later).
const SERVICE_EVENT_INFO: &str = "\
uint8 REQUEST_SENT = 0
uint8 REQUEST_RECEIVED = 1
uint8 RESPONSE_SENT = 2
uint8 RESPONSE_RECEIVED = 3

# The type of event this message represents
uint8 event_type

# Timestamp for when the event occurred (sent or received time)
builtin_interfaces/Time stamp

# Unique identifier for the client that sent the service request
# Note, this is only unique for the current session.
# The size here has to match the size of rmw_dds_common/msg/Gid,
# but unfortunately we cannot use that message directly due to a
# circular dependency.
char[16] client_gid

# Sequence number for the request
# Combined with the client ID, this creates a unique ID for the service transaction
int64 sequence_number
";

/// The built-in types in dependency order: name and `.msg` text.
const BUILTINS: [(&str, &str, &str); 3] = [
    ("builtin_interfaces", "Time", TIME),
    ("builtin_interfaces", "Duration", DURATION),
    ("service_msgs", "ServiceEventInfo", SERVICE_EVENT_INFO),
];

/// The built-in definitions. The texts are fixed and valid, so parsing cannot fail; a failure
/// would be a bug caught by the unit test below, and the type is then left out.
fn builtin_definitions() -> impl Iterator<Item = MessageDefinition> {
    BUILTINS.into_iter().filter_map(|(package, name, text)| {
        ros2::parse_message(&TypeName::known(package, name), text, 1).ok()
    })
}

/// The built-in definition called `name`, if it is one.
pub(crate) fn builtin(name: &TypeName) -> Option<&'static MessageDefinition> {
    static DEFINITIONS: LazyLock<Vec<MessageDefinition>> =
        LazyLock::new(|| builtin_definitions().collect());
    DEFINITIONS
        .iter()
        .find(|definition| definition.name == *name)
}

impl Registry {
    /// Adds the ROS 2 types that schemas take for granted, where the registry has no definition
    /// of its own: `builtin_interfaces/msg/Time` and `Duration` (which a ROS 2 `.msg` may also
    /// spell `time` and `duration`) and `service_msgs/msg/ServiceEventInfo` (the `info` of every
    /// service event). Returns how many were added.
    ///
    /// The schema readers ([`Registry::from_ros2msg`] and the others) call this themselves.
    pub fn add_ros2_builtins(&mut self) -> usize {
        let mut added = 0;
        for definition in builtin_definitions() {
            if !self.contains(&definition.name) {
                self.insert_message(definition);
                added += 1;
            }
        }
        added
    }
}

impl ServiceDefinition {
    /// The service event message `pkg/Srv_Event` that rosidl derives from every service (Iron
    /// and later), and that service event topics (`…/_service_event`) carry:
    /// `service_msgs/ServiceEventInfo info`, `Srv_Request[<=1] request`,
    /// `Srv_Response[<=1] response`.
    pub fn event_message(&self) -> MessageDefinition {
        let field = |name: &str, ty: TypeName, array: ArrayKind| {
            let type_text = match array {
                ArrayKind::Bounded(n) => format!("{ty}[<={n}]"),
                _ => ty.to_string(),
            };
            Field {
                name: name.to_owned(),
                ty: FieldType {
                    element: ElementType::Message(ty),
                    array,
                },
                type_text,
                default: None,
            }
        };
        let info = TypeName::known("service_msgs", "ServiceEventInfo");
        let mut event = MessageDefinition {
            name: self.name.sibling(format!("{}_Event", self.name.name())),
            dialect: Dialect::Ros2,
            constants: Vec::new(),
            fields: vec![
                field("info", info, ArrayKind::Scalar),
                field("request", self.request.name.clone(), ArrayKind::Bounded(1)),
                field(
                    "response",
                    self.response.name.clone(),
                    ArrayKind::Bounded(1),
                ),
            ],
            source: String::new(),
            warnings: Vec::new(),
        };
        event.source = event.canonical_text();
        event
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses() {
        let names: Vec<String> = builtin_definitions().map(|d| d.name.ros2_name()).collect();
        assert_eq!(
            names,
            [
                "builtin_interfaces/msg/Time",
                "builtin_interfaces/msg/Duration",
                "service_msgs/msg/ServiceEventInfo"
            ]
        );
    }
}
