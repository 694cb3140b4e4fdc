//! The crate's error type, and the field path that decode and encode errors carry.

use std::fmt;

use robolog_msg::TypeName;

/// Everything that can go wrong while compiling a plan, decoding, encoding or looking up a path.
///
/// Decode errors carry the field path (`transforms[2].header.frame_id`) and the byte offset at
/// which the failing read began, counted from the first byte of the message (the encapsulation
/// header is bytes 0–3, so the first field is at offset 4 or later).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The definition could not be resolved (missing, unparsable or recursive type).
    #[error(transparent)]
    Definition(#[from] robolog_msg::Error),
    /// The type was parsed with the ROS 1 rules; CDR messages need ROS 2 definitions.
    #[error("{type_name} is a ROS 1 definition; the CDR wire format needs a ROS 2 definition")]
    NotRos2 {
        /// The ROS 1 type.
        type_name: TypeName,
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
    /// The message is shorter than the 4-byte encapsulation header.
    #[error("message too short: {len} bytes, the CDR encapsulation header alone takes 4")]
    NoHeader {
        /// The message length.
        len: usize,
    },
    /// The encapsulation header names a representation this crate does not decode (parameter
    /// lists, delimited XCDR2), or is not a CDR header at all.
    #[error(
        "unsupported encapsulation {:02x} {:02x} ({name}): only CDR_LE, CDR_BE and PLAIN_CDR2 are decoded",
        .identifier[0], .identifier[1]
    )]
    UnsupportedEncapsulation {
        /// The first two bytes of the header.
        identifier: [u8; 2],
        /// The representation's name.
        name: &'static str,
    },
    /// The message ends before a value does.
    #[error("message too short: {path} needs {needed} bytes at offset {offset}, {available} left")]
    Truncated {
        /// The field being read.
        path: FieldPath,
        /// Offset of the value in the message.
        offset: usize,
        /// Bytes the value needs (padding before it included).
        needed: u64,
        /// Bytes that were left.
        available: usize,
    },
    /// A sequence count or string length claims more bytes than the message has left; checked
    /// before anything is allocated.
    #[error(
        "{path}: length {length} at offset {offset} needs {needed} bytes, only {available} left"
    )]
    LengthPastEnd {
        /// The sequence or string field.
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
    /// The message would decode to more values than [`crate::MAX_VALUES_PER_BYTE`] per byte
    /// (plus [`crate::VALUE_ALLOWANCE`]) allow: a definition that nests many tiny messages.
    #[error("{path}: the message needs more than {limit} values (at offset {offset})")]
    TooManyValues {
        /// The field being decoded.
        path: FieldPath,
        /// Where in the message.
        offset: usize,
        /// The limit for this message.
        limit: usize,
    },
    /// More than 3 bytes follow the last field (only an error in strict decoding; up to 3 are
    /// padding that some writers add).
    #[error("{count} trailing bytes after the message, from offset {offset}")]
    TrailingBytes {
        /// Where the message ended.
        offset: usize,
        /// How many bytes follow it.
        count: usize,
    },
    /// A `bool` byte other than 0 or 1 (only an error in strict decoding; decoding takes any
    /// non-zero byte as true).
    #[error("{path}: bool byte {value:#04x} at offset {offset} is neither 0 nor 1")]
    InvalidBool {
        /// The field.
        path: FieldPath,
        /// Offset of the byte.
        offset: usize,
        /// The byte.
        value: u8,
    },
    /// A string whose last byte is not the NUL terminator (only an error in strict decoding;
    /// decoding keeps every byte).
    #[error("{path}: the string of {length} bytes at offset {offset} does not end with a NUL")]
    MissingNul {
        /// The field.
        path: FieldPath,
        /// Offset of the string's length field.
        offset: usize,
        /// The length field (bytes, terminator included).
        length: u64,
    },
    /// A bounded string or sequence (`string<=N`, `T[<=N]`) holds more than its bound. Decoding
    /// accepts it (and [`crate::Decoded::warning`] reports it), strict decoding and encoding
    /// refuse it.
    #[error("{path}: {length} elements exceed the bound of {bound}{}", at(.offset))]
    BoundExceeded {
        /// The field.
        path: FieldPath,
        /// Offset of the length field in the message (decoding only).
        offset: Option<usize>,
        /// The number of elements (bytes of a string, code units of a wide string).
        length: u64,
        /// The bound.
        bound: u64,
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
    /// A string or sequence is longer than a `u32` count can say.
    #[error("{path}: {length} elements do not fit a u32 length")]
    TooLong {
        /// The field.
        path: FieldPath,
        /// Its length.
        length: u64,
    },
}

fn at(offset: &Option<usize>) -> String {
    offset.map_or_else(String::new, |o| format!(" (at offset {o})"))
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
            | Error::TooManyValues { offset, .. }
            | Error::TrailingBytes { offset, .. }
            | Error::InvalidBool { offset, .. }
            | Error::MissingNul { offset, .. } => Some(*offset),
            Error::BoundExceeded { offset, .. } => *offset,
            Error::NoHeader { .. } | Error::UnsupportedEncapsulation { .. } => Some(0),
            _ => None,
        }
    }

    /// The field path of a decode or encode error.
    pub fn path(&self) -> Option<&FieldPath> {
        match self {
            Error::Truncated { path, .. }
            | Error::LengthPastEnd { path, .. }
            | Error::TooManyValues { path, .. }
            | Error::InvalidBool { path, .. }
            | Error::MissingNul { path, .. }
            | Error::BoundExceeded { path, .. }
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
            | Error::TooManyValues { path, .. }
            | Error::InvalidBool { path, .. }
            | Error::MissingNul { path, .. }
            | Error::BoundExceeded { path, .. }
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
