//! Full type names (`pkg/Type`) and the naming rules of both dialects.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// A full message type name: a package and a type, written `pkg/Type`.
///
/// ROS 2 names carry an interface namespace (`pkg/msg/Type`, `pkg/srv/Type_Request`,
/// `pkg/action/Type_Goal`); [`TypeName::parse`] accepts them and drops the namespace, because
/// `.msg` texts and bundle section headers refer to the same type as `pkg/Type`. One form keeps
/// registry lookups unambiguous.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeName {
    package: String,
    name: String,
}

impl TypeName {
    /// A name from its two parts. Both must start with an ASCII letter and continue with
    /// letters, digits or `_` (the ROS 1 resource-name rule, which every ROS 2 name also meets).
    pub fn new(package: &str, name: &str) -> Result<Self, Error> {
        let text = || format!("{package}/{name}");
        if !is_resource_base_name(package) {
            return Err(Error::InvalidTypeName {
                text: text(),
                reason: "the package must start with a letter and contain only letters, digits and `_`",
            });
        }
        if !is_resource_base_name(name) {
            return Err(Error::InvalidTypeName {
                text: text(),
                reason: "the type must start with a letter and contain only letters, digits and `_`",
            });
        }
        Ok(TypeName {
            package: package.to_owned(),
            name: name.to_owned(),
        })
    }

    /// Parses `pkg/Type`, or the ROS 2 forms `pkg/msg/Type`, `pkg/srv/Type` and
    /// `pkg/action/Type` (surrounding whitespace is ignored).
    pub fn parse(text: &str) -> Result<Self, Error> {
        let trimmed = text.trim();
        let parts: Vec<&str> = trimmed.split('/').collect();
        match parts.as_slice() {
            [package, name] => TypeName::new(package, name),
            [package, "msg" | "srv" | "action", name] => TypeName::new(package, name),
            [_, _, _] => Err(Error::InvalidTypeName {
                text: trimmed.to_owned(),
                reason: "the middle part of a three-part name must be `msg`, `srv` or `action`",
            }),
            _ => Err(Error::InvalidTypeName {
                text: trimmed.to_owned(),
                reason: "expected `pkg/Type`",
            }),
        }
    }

    /// The package, e.g. `std_msgs`.
    pub fn package(&self) -> &str {
        &self.package
    }

    /// The type within the package, e.g. `Header`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `std_msgs/Header`, which a bare `Header` means in ROS 1.
    pub fn std_msgs_header() -> Self {
        TypeName {
            package: "std_msgs".to_owned(),
            name: "Header".to_owned(),
        }
    }

    /// A name known to be valid (a literal in this crate), without the checks of
    /// [`TypeName::new`].
    pub(crate) fn known(package: &str, name: &str) -> Self {
        TypeName {
            package: package.to_owned(),
            name: name.to_owned(),
        }
    }

    /// A type in the same package with a different name (used for the types generated from
    /// services and actions, e.g. `AddTwoIntsRequest`).
    pub(crate) fn sibling(&self, name: String) -> Self {
        TypeName {
            package: self.package.clone(),
            name,
        }
    }
}

impl TypeName {
    /// The ROS 2 interface namespace this message type lives in, from the suffixes rosidl gives
    /// the types it derives: `_Request`, `_Response` and `_Event` are services' (`srv`);
    /// `_Goal`, `_Result`, `_Feedback`, `_FeedbackMessage` and the messages of the
    /// `_SendGoal` and `_GetResult` services are actions' (`action`); every other name is a
    /// message (`msg`). rosidl message names cannot contain `_`, so the rule is exact for
    /// every type a `.msg`, `.srv` or `.action` file defines.
    pub fn ros2_interface_kind(&self) -> InterfaceKind {
        let name = self.name.as_str();
        for suffix in ["_Request", "_Response", "_Event"] {
            if let Some(service) = name.strip_suffix(suffix) {
                return if service.ends_with("_SendGoal") || service.ends_with("_GetResult") {
                    InterfaceKind::Action
                } else {
                    InterfaceKind::Service
                };
            }
        }
        let action_suffixes = [
            "_Goal",
            "_Result",
            "_Feedback",
            "_FeedbackMessage",
            "_SendGoal",
            "_GetResult",
        ];
        if action_suffixes.iter().any(|suffix| name.ends_with(suffix)) {
            InterfaceKind::Action
        } else {
            InterfaceKind::Message
        }
    }

    /// The full ROS 2 name of this message type, `pkg/msg/Type` (or `pkg/srv/…`,
    /// `pkg/action/…`, see [`TypeName::ros2_interface_kind`]): the form of MCAP schema names,
    /// rosbag2 topic types and type hashes.
    pub fn ros2_name(&self) -> String {
        self.ros2_name_in(self.ros2_interface_kind())
    }

    /// `pkg/<namespace>/Type` for the given interface kind (a service `pkg/srv/Foo` is named
    /// with [`InterfaceKind::Service`]).
    pub fn ros2_name_in(&self, kind: InterfaceKind) -> String {
        format!("{}/{}/{}", self.package, kind.namespace(), self.name)
    }
}

/// The three kinds of ROS 2 interface files, which are also the middle part of full ROS 2 type
/// names (`pkg/msg/Type`, `pkg/srv/Type`, `pkg/action/Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InterfaceKind {
    /// A `.msg` file: `msg`.
    Message,
    /// A `.srv` file and the types derived from it: `srv`.
    Service,
    /// An `.action` file and the types derived from it: `action`.
    Action,
}

impl InterfaceKind {
    /// `msg`, `srv` or `action`.
    pub fn namespace(self) -> &'static str {
        match self {
            InterfaceKind::Message => "msg",
            InterfaceKind::Service => "srv",
            InterfaceKind::Action => "action",
        }
    }
}

impl fmt::Display for TypeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.package, self.name)
    }
}

impl FromStr for TypeName {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        TypeName::parse(text)
    }
}

/// Python's `\w` (`str.isalnum()` or `_`), which genmsg's regular expressions use.
pub(crate) fn is_python_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// genmsg `is_legal_resource_base_name`: `^[A-Za-z][\w_]*$`. Used for ROS 1 field names.
pub(crate) fn is_resource_base_name(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic()) && chars.all(is_python_word_char)
}

/// genmsg `is_legal_resource_name`: `^[A-Za-z][\w_/]*$` without `//`. Used for ROS 1 types.
pub(crate) fn is_resource_name(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && chars.all(|c| is_python_word_char(c) || c == '/')
        && !text.contains("//")
}

/// rosidl package and field names: `^(?!.*__)(?!.*_$)[a-z][a-z0-9_]*$`.
pub(crate) fn is_ros2_snake_name(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !text.contains("__")
        && !text.ends_with('_')
}

/// rosidl message names: `^[A-Z][A-Za-z0-9]*$`, after removing the `Sample_` prefix and the
/// suffixes of generated service and action types (as rosidl's `is_valid_message_name` does).
pub(crate) fn is_ros2_message_name(text: &str) -> bool {
    let mut name = text.strip_prefix("Sample_").unwrap_or(text);
    for suffix in ["_Request", "_Response", "_Goal", "_Result", "_Feedback"] {
        if let Some(stripped) = name.strip_suffix(suffix) {
            name = stripped;
        }
    }
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_alphanumeric())
}

/// rosidl constant names: `^[A-Z]([A-Z0-9_]?[A-Z0-9]+)*$`, i.e. upper case, digits and single
/// underscores, not ending with `_`.
pub(crate) fn is_ros2_constant_name(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && !text.contains("__")
        && !text.ends_with('_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_name_forms() {
        let short = TypeName::parse("std_msgs/Header").unwrap();
        let long = TypeName::parse("std_msgs/msg/Header").unwrap();
        assert_eq!(short, long);
        assert_eq!(short.to_string(), "std_msgs/Header");
        assert_eq!(short.package(), "std_msgs");
        assert_eq!(short.name(), "Header");
        assert!(TypeName::parse("Header").is_err());
        assert!(TypeName::parse("a/b/c").is_err());
        assert!(TypeName::parse("a//c").is_err());
        assert!(TypeName::parse("pkg/").is_err());
        assert!(TypeName::parse("1pkg/Type").is_err());
    }

    #[test]
    fn ros2_namespaces_come_from_rosidl_suffixes() {
        let full = |text: &str| TypeName::parse(text).unwrap().ros2_name();
        assert_eq!(full("std_msgs/Header"), "std_msgs/msg/Header");
        assert_eq!(full("pkg/srv/Add_Request"), "pkg/srv/Add_Request");
        assert_eq!(full("pkg/Add_Event"), "pkg/srv/Add_Event");
        assert_eq!(full("pkg/F_Goal"), "pkg/action/F_Goal");
        assert_eq!(
            full("pkg/F_FeedbackMessage"),
            "pkg/action/F_FeedbackMessage"
        );
        assert_eq!(
            full("pkg/F_SendGoal_Request"),
            "pkg/action/F_SendGoal_Request"
        );
        assert_eq!(
            full("pkg/F_GetResult_Event"),
            "pkg/action/F_GetResult_Event"
        );
        let service = TypeName::parse("pkg/srv/Add").unwrap();
        assert_eq!(service.ros2_name_in(InterfaceKind::Service), "pkg/srv/Add");
    }

    #[test]
    fn ros2_name_rules() {
        assert!(is_ros2_snake_name("std_msgs"));
        assert!(!is_ros2_snake_name("std__msgs"));
        assert!(!is_ros2_snake_name("std_msgs_"));
        assert!(!is_ros2_snake_name("Std"));
        assert!(is_ros2_message_name("Fibonacci_Goal"));
        assert!(!is_ros2_message_name("fibonacci"));
        assert!(!is_ros2_message_name("Foo_Bar"));
        assert!(is_ros2_constant_name("A1_B2"));
        assert!(!is_ros2_constant_name("A__B"));
        assert!(!is_ros2_constant_name("A_"));
        assert!(!is_ros2_constant_name("a"));
    }
}
