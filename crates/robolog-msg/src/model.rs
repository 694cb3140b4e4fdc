//! The parsed, resolved type model: what a decoder walks.

use std::collections::HashSet;
use std::fmt;

use crate::error::Warning;
use crate::name::TypeName;

/// The two definition languages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// ROS 1, as genmsg parses it (and computes the md5sum).
    Ros1,
    /// ROS 2, as rosidl (`rosidl_adapter`) parses `.msg`/`.srv`/`.action` files.
    Ros2,
}

/// Which dialect to parse a text with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParseDialect {
    /// Always ROS 1.
    Ros1,
    /// Always ROS 2.
    Ros2,
    /// ROS 2 when the text uses syntax only ROS 2 has (see [`crate::detect_dialect`]),
    /// otherwise ROS 1.
    Auto,
}

impl From<Dialect> for ParseDialect {
    fn from(dialect: Dialect) -> Self {
        match dialect {
            Dialect::Ros1 => ParseDialect::Ros1,
            Dialect::Ros2 => ParseDialect::Ros2,
        }
    }
}

/// A built-in type.
///
/// `byte` and `char` are kept as written because the ROS 1 md5sum hashes them as written; their
/// wire meaning differs by dialect (see [`PrimitiveType::ros1_wire_type`] and
/// [`PrimitiveType::ros2_wire_type`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrimitiveType {
    /// `bool`: one byte, 0 or 1.
    Bool,
    /// `byte`: deprecated alias. ROS 1: signed 8-bit (`int8`). ROS 2: an opaque octet (`uint8`).
    Byte,
    /// `char`: deprecated alias, unsigned 8-bit (`uint8`) in both dialects.
    Char,
    /// `int8`.
    Int8,
    /// `uint8`.
    UInt8,
    /// `int16`.
    Int16,
    /// `uint16`.
    UInt16,
    /// `int32`.
    Int32,
    /// `uint32`.
    UInt32,
    /// `int64`.
    Int64,
    /// `uint64`.
    UInt64,
    /// `float32` (IEEE 754 single).
    Float32,
    /// `float64` (IEEE 754 double).
    Float64,
    /// `string`: ROS 1 `u32` byte length + bytes; ROS 2 CDR length includes a NUL.
    String,
    /// `wstring` (ROS 2 only).
    WString,
    /// `time`: ROS 1 `u32 secs, u32 nsecs`. (In ROS 2 `time` means the message
    /// `builtin_interfaces/Time`, and the ROS 2 parser resolves it to that.)
    Time,
    /// `duration`: ROS 1 `i32 secs, i32 nsecs`. (In ROS 2: the message
    /// `builtin_interfaces/Duration`.)
    Duration,
}

impl PrimitiveType {
    /// Every primitive, in the order of the table in the ROS documentation.
    pub const ALL: [PrimitiveType; 17] = [
        PrimitiveType::Bool,
        PrimitiveType::Byte,
        PrimitiveType::Char,
        PrimitiveType::Int8,
        PrimitiveType::UInt8,
        PrimitiveType::Int16,
        PrimitiveType::UInt16,
        PrimitiveType::Int32,
        PrimitiveType::UInt32,
        PrimitiveType::Int64,
        PrimitiveType::UInt64,
        PrimitiveType::Float32,
        PrimitiveType::Float64,
        PrimitiveType::String,
        PrimitiveType::WString,
        PrimitiveType::Time,
        PrimitiveType::Duration,
    ];

    /// The name as written in a `.msg` file.
    pub fn as_str(self) -> &'static str {
        match self {
            PrimitiveType::Bool => "bool",
            PrimitiveType::Byte => "byte",
            PrimitiveType::Char => "char",
            PrimitiveType::Int8 => "int8",
            PrimitiveType::UInt8 => "uint8",
            PrimitiveType::Int16 => "int16",
            PrimitiveType::UInt16 => "uint16",
            PrimitiveType::Int32 => "int32",
            PrimitiveType::UInt32 => "uint32",
            PrimitiveType::Int64 => "int64",
            PrimitiveType::UInt64 => "uint64",
            PrimitiveType::Float32 => "float32",
            PrimitiveType::Float64 => "float64",
            PrimitiveType::String => "string",
            PrimitiveType::WString => "wstring",
            PrimitiveType::Time => "time",
            PrimitiveType::Duration => "duration",
        }
    }

    /// The primitive written `name`, in either dialect (`wstring` included).
    pub fn from_name(name: &str) -> Option<PrimitiveType> {
        PrimitiveType::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// The type that `self` is on the ROS 1 wire: `byte` is `int8` and `char` is `uint8`;
    /// everything else is itself.
    pub fn ros1_wire_type(self) -> PrimitiveType {
        match self {
            PrimitiveType::Byte => PrimitiveType::Int8,
            PrimitiveType::Char => PrimitiveType::UInt8,
            other => other,
        }
    }

    /// The type that `self` is on the ROS 2 (CDR) wire: `byte` (an IDL octet) and `char` are
    /// `uint8`; everything else is itself.
    pub fn ros2_wire_type(self) -> PrimitiveType {
        match self {
            PrimitiveType::Byte | PrimitiveType::Char => PrimitiveType::UInt8,
            other => other,
        }
    }

    /// Size in bytes on the ROS 1 wire, or `None` for the length-prefixed strings.
    pub fn ros1_wire_size(self) -> Option<usize> {
        match self {
            PrimitiveType::Bool
            | PrimitiveType::Byte
            | PrimitiveType::Char
            | PrimitiveType::Int8
            | PrimitiveType::UInt8 => Some(1),
            PrimitiveType::Int16 | PrimitiveType::UInt16 => Some(2),
            PrimitiveType::Int32 | PrimitiveType::UInt32 | PrimitiveType::Float32 => Some(4),
            PrimitiveType::Int64
            | PrimitiveType::UInt64
            | PrimitiveType::Float64
            | PrimitiveType::Time
            | PrimitiveType::Duration => Some(8),
            PrimitiveType::String | PrimitiveType::WString => None,
        }
    }

    /// Whether the type is one of the integer types (`byte` and `char` included).
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            PrimitiveType::Byte
                | PrimitiveType::Char
                | PrimitiveType::Int8
                | PrimitiveType::UInt8
                | PrimitiveType::Int16
                | PrimitiveType::UInt16
                | PrimitiveType::Int32
                | PrimitiveType::UInt32
                | PrimitiveType::Int64
                | PrimitiveType::UInt64
        )
    }
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The type of one element of a field (the field itself when it is not an array).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// A built-in type (`string`/`wstring` here are unbounded).
    Primitive(PrimitiveType),
    /// ROS 2 `string<=N` / `wstring<=N`. Same wire format as the unbounded string; the bound
    /// is only something to validate.
    BoundedString {
        /// `wstring<=N` rather than `string<=N`.
        wide: bool,
        /// The maximum length `N` (characters).
        max_len: u64,
    },
    /// Another message, by resolved full name (look it up in the [`crate::Registry`]).
    Message(TypeName),
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElementType::Primitive(p) => f.write_str(p.as_str()),
            ElementType::BoundedString { wide, max_len } => {
                write!(f, "{}<={max_len}", if *wide { "wstring" } else { "string" })
            }
            ElementType::Message(name) => write!(f, "{name}"),
        }
    }
}

/// Whether a field is an array, and of which kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArrayKind {
    /// Not an array: `T`.
    Scalar,
    /// `T[N]`: exactly N elements, no count on the wire.
    Fixed(u64),
    /// `T[]`: a `u32` count, then the elements.
    Variable,
    /// ROS 2 `T[<=N]`: same wire format as `T[]`; at most N elements.
    Bounded(u64),
}

/// A field's full type: element type plus array kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldType {
    /// The type of each element.
    pub element: ElementType,
    /// Whether and how the field is an array.
    pub array: ArrayKind,
}

impl FieldType {
    /// The nested message type, if the element type is a message.
    pub fn message_type(&self) -> Option<&TypeName> {
        match &self.element {
            ElementType::Message(name) => Some(name),
            _ => None,
        }
    }

    /// Whether the field is an array of any kind.
    pub fn is_array(&self) -> bool {
        self.array != ArrayKind::Scalar
    }
}

impl fmt::Display for FieldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.element)?;
        match self.array {
            ArrayKind::Scalar => Ok(()),
            ArrayKind::Fixed(n) => write!(f, "[{n}]"),
            ArrayKind::Variable => f.write_str("[]"),
            ArrayKind::Bounded(n) => write!(f, "[<={n}]"),
        }
    }
}

/// A constant or default value.
///
/// Integers of signed types (ROS 1 `byte` included) are [`Value::Int`]; unsigned ones (`char`,
/// ROS 2 `byte`) are [`Value::UInt`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A `bool`.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A `float32` or `float64`.
    Float(f64),
    /// A `string` or `wstring`.
    String(String),
    /// An array default (ROS 2).
    Array(Vec<Value>),
}

impl Value {
    /// A range-checked integer: [`Value::Int`] for a signed type, [`Value::UInt`] otherwise.
    pub(crate) fn from_integer(signed: bool, number: i128) -> Value {
        if signed {
            Value::Int(i64::try_from(number).unwrap_or(if number < 0 {
                i64::MIN
            } else {
                i64::MAX
            }))
        } else {
            Value::UInt(u64::try_from(number).unwrap_or(if number < 0 { 0 } else { u64::MAX }))
        }
    }
}

/// A constant declaration (`TYPE NAME=value`). Constants are not serialized.
#[derive(Debug, Clone, PartialEq)]
pub struct Constant {
    /// The constant's type (never an array, never `time`/`duration`).
    pub ty: PrimitiveType,
    /// The name as the reference parser computes it.
    pub name: String,
    /// The converted value.
    pub value: Value,
    /// The value as written (trimmed). The ROS 1 md5sum hashes this text, never a re-printed
    /// value (`1e3`, `007` and `True` stay as they are).
    pub value_text: String,
}

/// A ROS 2 field default (`TYPE name default`). Defaults do not change the wire format.
#[derive(Debug, Clone, PartialEq)]
pub struct DefaultValue {
    /// The converted value.
    pub value: Value,
    /// The default as written.
    pub text: String,
}

/// A field declaration.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The field name.
    pub name: String,
    /// The resolved type.
    pub ty: FieldType,
    /// The type as written, with a package-relative message name qualified (`Point2[]` in
    /// package `my_pkg` is `my_pkg/Point2[]`, ROS 1 `Header` is `std_msgs/Header`). This is
    /// genmsg's own field type string, which the md5sum uses for built-in types.
    pub type_text: String,
    /// The ROS 2 default value, if one was given.
    pub default: Option<DefaultValue>,
}

/// One message type: its constants and fields, and the text it was parsed from.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageDefinition {
    /// The full type name.
    pub name: TypeName,
    /// The rules it was parsed with.
    pub dialect: Dialect,
    /// Constants in declaration order.
    pub constants: Vec<Constant>,
    /// Fields in declaration (= wire) order.
    pub fields: Vec<Field>,
    /// The definition text verbatim; bundles are written from it.
    pub source: String,
    /// Things accepted for compatibility that deserve a note.
    pub warnings: Vec<Warning>,
}

impl MessageDefinition {
    /// The message types this one refers to directly, in field order, each once.
    pub fn direct_dependencies(&self) -> Vec<&TypeName> {
        let mut seen = HashSet::new();
        self.fields
            .iter()
            .filter_map(|f| f.ty.message_type())
            .filter(|name| seen.insert(*name))
            .collect()
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The constant called `name` (the first one: ROS 1 allows duplicates).
    pub fn constant(&self, name: &str) -> Option<&Constant> {
        self.constants.iter().find(|c| c.name == name)
    }
}

/// A service: request and response messages.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceDefinition {
    /// The service type name (`pkg/Srv`).
    pub name: TypeName,
    /// The rules it was parsed with.
    pub dialect: Dialect,
    /// `pkg/SrvRequest` (ROS 1) or `pkg/Srv_Request` (ROS 2).
    pub request: MessageDefinition,
    /// `pkg/SrvResponse` (ROS 1) or `pkg/Srv_Response` (ROS 2).
    pub response: MessageDefinition,
    /// The `.srv` text verbatim.
    pub source: String,
}

/// An action: goal, result and feedback, plus the types the generators derive from them.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionDefinition {
    /// The action type name (`pkg/Action`).
    pub name: TypeName,
    /// The rules it was parsed with.
    pub dialect: Dialect,
    /// ROS 1 `pkg/AGoal`, ROS 2 `pkg/A_Goal`.
    pub goal: MessageDefinition,
    /// ROS 1 `pkg/AResult`, ROS 2 `pkg/A_Result`.
    pub result: MessageDefinition,
    /// ROS 1 `pkg/AFeedback`, ROS 2 `pkg/A_Feedback`.
    pub feedback: MessageDefinition,
    /// Messages the generator derives. ROS 1 (actionlib `genaction.py`, texts byte-exact):
    /// `AActionGoal`, `AActionResult`, `AActionFeedback`, `AAction`. ROS 2 (rosidl):
    /// `A_FeedbackMessage`.
    pub derived_messages: Vec<MessageDefinition>,
    /// Services the generator derives: ROS 2 `A_SendGoal` and `A_GetResult`; none in ROS 1.
    pub derived_services: Vec<ServiceDefinition>,
    /// The `.action` text verbatim.
    pub source: String,
}

impl ActionDefinition {
    /// Every message type the action defines: goal, result, feedback, the derived messages and
    /// the requests and responses of the derived services.
    pub fn all_messages(&self) -> Vec<&MessageDefinition> {
        let mut out = vec![&self.goal, &self.result, &self.feedback];
        out.extend(self.derived_messages.iter());
        for service in &self.derived_services {
            out.push(&service.request);
            out.push(&service.response);
        }
        out
    }
}
