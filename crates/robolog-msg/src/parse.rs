//! The entry points that parse one `.msg`, `.srv` or `.action` text in the chosen dialect.

use crate::dialect;
use crate::error::Error;
use crate::model::{ActionDefinition, Dialect, MessageDefinition, ParseDialect, ServiceDefinition};
use crate::name::TypeName;
use crate::{ros1, ros2};

/// Parses a `.msg` text as the message `name` (whose package resolves relative type names).
///
/// ```
/// use robolog_msg::{Dialect, ElementType, PrimitiveType, TypeName, parse_message};
///
/// let name: TypeName = "my_pkg/Reading".parse()?;
/// let message = parse_message(&name, "Header header\nfloat64 value # [m]\n", Dialect::Ros1)?;
/// assert_eq!(message.fields[0].ty.message_type(), Some(&TypeName::std_msgs_header()));
/// assert_eq!(message.fields[1].ty.element, ElementType::Primitive(PrimitiveType::Float64));
/// # Ok::<(), robolog_msg::Error>(())
/// ```
pub fn parse_message(
    name: &TypeName,
    text: &str,
    dialect: impl Into<ParseDialect>,
) -> Result<MessageDefinition, Error> {
    parse_message_at(name, text, dialect::resolve(dialect.into(), text), 1)
}

/// [`parse_message`] with a known dialect and the line number of the text's first line.
pub(crate) fn parse_message_at(
    name: &TypeName,
    text: &str,
    dialect: Dialect,
    first_line: usize,
) -> Result<MessageDefinition, Error> {
    let parsed = match dialect {
        Dialect::Ros1 => ros1::parse_message(name, text, first_line),
        Dialect::Ros2 => ros2::parse_message(name, text, first_line),
    };
    Ok(parsed?)
}

/// Parses a `.srv` text as the service `name`.
///
/// ROS 1 (genmsg): the first line that *starts with* `---` splits request from response, which
/// are the messages `pkg/SrvRequest` and `pkg/SrvResponse`. ROS 2 (rosidl): exactly one line
/// *equal to* `---`; `pkg/Srv_Request` and `pkg/Srv_Response`.
pub fn parse_service(
    name: &TypeName,
    text: &str,
    dialect: impl Into<ParseDialect>,
) -> Result<ServiceDefinition, Error> {
    let parsed = match dialect::resolve(dialect.into(), text) {
        Dialect::Ros1 => ros1::parse_service(name, text, 1),
        Dialect::Ros2 => ros2::parse_service(name, text, 1),
    };
    Ok(parsed?)
}

/// Parses an `.action` text as the action `name`, including the types the generators derive
/// (see [`ActionDefinition`]).
pub fn parse_action(
    name: &TypeName,
    text: &str,
    dialect: impl Into<ParseDialect>,
) -> Result<ActionDefinition, Error> {
    let parsed = match dialect::resolve(dialect.into(), text) {
        Dialect::Ros1 => ros1::parse_action(name, text, 1),
        Dialect::Ros2 => ros2::parse_action(name, text, 1),
    };
    Ok(parsed?)
}
