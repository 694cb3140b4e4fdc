//! The crate's error type, and the field path that decode and encode errors carry.

use std::fmt;

use robolog_msg::TypeName;

/// Everything that can go wrong while compiling a plan, decoding, encoding or looking up a path.
///
/// Decode errors carry the field path (`transforms[2].header.frame_id`) and the byte offset,
/// relative to the first byte of the message, at which the failing read began.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The definition could not be resolved (missing, unparsable or recursive type).
    #[error(transparent)]
    Definition(#[from] robolog_msg::Error),
    /// The type was parsed with the ROS 2 rules; this crate decodes the ROS 1 wire format.
    #[error("{type_name} is a ROS 2 definition; the ROS 1 wire format needs a ROS 1 definition")]
    NotRos1 {
        /// The ROS 2 type.
        type_name: TypeName,
    },
    /// A field has a type the ROS 1 wire format does not have (`wstring`, bounded types).
    #[error(
        "field {field} of {type_name} has type {ty}, which the ROS 1 wire format does not have"
    )]
    UnsupportedType {
        /// The message type.
        type_name: TypeName,
        /// The field.
        field: String,
        /// Its type as written.
        ty: String,
    },
    /// Messages nest deeper than [`crate::MAX_NESTING`] levels.
    #[error("{type_name} nests messages {depth} levels deep; at most {limit} are supported")]
    TooDeep {
        /// The top-level type.
        type_name: TypeName,
        /// Its nesting depth.
        depth: usize,
        /// The limit.
        limit: usize,
    },
    /// The message ends before a value does.
    #[error("message too short: {path} needs {needed} bytes at offset {offset}, {available} left")]
    Truncated {
        /// The field being read.
        path: FieldPath,
        /// Offset of the value in the message.
        offset: usize,
        /// Bytes the value needs.
        needed: u64,
        /// Bytes that were left.
        available: usize,
    },
    /// An array count or string length claims more bytes than the message has left; checked
    /// before anything is allocated.
    #[error(
        "{path}: length {length} at offset {offset} needs {needed} bytes, only {available} left"
    )]
    LengthPastEnd {
        /// The array or string field.
        path: FieldPath,
        /// Offset of the length field in the message.
        offset: usize,
        /// The declared element count or string length.
        length: u64,
        /// The minimum number of bytes that many elements take.
        needed: u64,
        /// Bytes that were left after the length field.
        available: usize,
    },
    /// Arrays of zero-size elements (empty messages) take no bytes, so their counts cannot be
    /// checked against the data; a message may hold at most [`crate::MAX_EMPTY_NODES`] such
    /// values in all.
    #[error("{path}: {count} zero-size elements at offset {offset} exceed the limit")]
    TooManyEmptyElements {
        /// The array field.
        path: FieldPath,
        /// Offset of the count in the message.
        offset: usize,
        /// The declared count.
        count: u64,
    },
    /// The message would decode to more values than [`crate::MAX_VALUES_PER_BYTE`] per byte
    /// (plus [`crate::MAX_EMPTY_NODES`]) allow: a definition that nests many empty messages.
    #[error("{path}: the message needs more than {limit} values (at offset {offset})")]
    TooManyValues {
        /// The field being decoded.
        path: FieldPath,
        /// Where in the message.
        offset: usize,
        /// The limit for this message.
        limit: usize,
    },
    /// Bytes follow the end of the message (only an error in strict decoding).
    #[error("{count} trailing bytes after the message, from offset {offset}")]
    TrailingBytes {
        /// Where the message ended.
        offset: usize,
        /// How many bytes follow it.
        count: usize,
    },
    /// A field path does not name a field of the type.
    #[error("path `{path}`: {reason}")]
    InvalidPath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An array index in a path is past the end of the decoded array.
    #[error("{path}: index {index} is past the end of an array of {len}")]
    IndexOutOfRange {
        /// The array.
        path: FieldPath,
        /// The index asked for.
        index: usize,
        /// The array length.
        len: usize,
    },
    /// A value in a tree given to the encoder does not have the field's type.
    #[error("{path}: expected {expected}, found {found}")]
    TypeMismatch {
        /// The field.
        path: FieldPath,
        /// The type the definition asks for.
        expected: String,
        /// What the tree holds.
        found: String,
    },
    /// A fixed-size array, or a message, has the wrong number of elements or fields.
    #[error("{path}: expected {expected} elements, found {found}")]
    WrongLength {
        /// The field.
        path: FieldPath,
        /// The count the definition asks for.
        expected: u64,
        /// The count in the tree.
        found: u64,
    },
    /// A string or variable array is longer than a `u32` count can say.
    #[error("{path}: {length} elements do not fit a u32 length")]
    TooLong {
        /// The field.
        path: FieldPath,
        /// Its length.
        length: u64,
    },
}

impl Error {
    /// True when the message bytes simply end too early (a cut message), as opposed to a
    /// malformed one or a usage error.
    pub fn is_truncation(&self) -> bool {
        matches!(self, Error::Truncated { .. } | Error::LengthPastEnd { .. })
    }

    /// The byte offset in the message (from its first byte) at which the failing read began,
    /// for decode errors.
    pub fn offset(&self) -> Option<usize> {
        match self {
            Error::Truncated { offset, .. }
            | Error::LengthPastEnd { offset, .. }
            | Error::TooManyEmptyElements { offset, .. }
            | Error::TooManyValues { offset, .. }
            | Error::TrailingBytes { offset, .. } => Some(*offset),
            _ => None,
        }
    }

    /// The field path of a decode or encode error.
    pub fn path(&self) -> Option<&FieldPath> {
        match self {
            Error::Truncated { path, .. }
            | Error::LengthPastEnd { path, .. }
            | Error::TooManyEmptyElements { path, .. }
            | Error::TooManyValues { path, .. }
            | Error::IndexOutOfRange { path, .. }
            | Error::TypeMismatch { path, .. }
            | Error::WrongLength { path, .. }
            | Error::TooLong { path, .. } => Some(path),
            _ => None,
        }
    }

    /// Prepends a path step while an error travels up from a nested field; only called on
    /// the error path, so successful decoding never builds paths.
    pub(crate) fn within(mut self, step: PathStep) -> Error {
        match &mut self {
            Error::Truncated { path, .. }
            | Error::LengthPastEnd { path, .. }
            | Error::TooManyEmptyElements { path, .. }
            | Error::TooManyValues { path, .. }
            | Error::IndexOutOfRange { path, .. }
            | Error::TypeMismatch { path, .. }
            | Error::WrongLength { path, .. }
            | Error::TooLong { path, .. } => path.reversed.push(step),
            _ => {}
        }
        self
    }
}

/// One step of a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathStep {
    /// A field by name.
    Field(String),
    /// An array element.
    Index(u64),
}

/// Where in a message an error happened: `header.stamp`, `transforms[2].child_frame_id`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldPath {
    /// Innermost step first: errors are built from the failing field outwards.
    reversed: Vec<PathStep>,
}

impl FieldPath {
    /// The path made of `steps`, outermost first.
    pub(crate) fn from_steps(mut steps: Vec<PathStep>) -> Self {
        steps.reverse();
        FieldPath { reversed: steps }
    }

    /// The empty path (the message itself).
    pub(crate) fn root() -> Self {
        FieldPath::default()
    }

    /// The steps from the outermost field inwards.
    pub fn steps(&self) -> impl Iterator<Item = &PathStep> {
        self.reversed.iter().rev()
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.reversed.is_empty() {
            return f.write_str("(message)");
        }
        for (i, step) in self.steps().enumerate() {
            match step {
                PathStep::Field(name) if i == 0 => f.write_str(name)?,
                PathStep::Field(name) => write!(f, ".{name}")?,
                PathStep::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}
