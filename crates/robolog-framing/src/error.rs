//! The error type of the byte-level primitives.

use std::fmt;

/// A failure while reading or writing bytes, with the absolute byte offset at which it happened
/// and a short description of what was being read (`"chunk header_len"`, `"schema name"`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} (reading {what} at byte {offset})")]
pub struct Error {
    /// Absolute byte offset (from the start of the file or stream) where the failed read began.
    pub offset: u64,
    /// What was being read or written.
    pub what: &'static str,
    /// What went wrong.
    pub kind: ErrorKind,
}

/// The ways a bounds-checked read or write can fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// A fixed-width value needed more bytes than remain: the input is truncated.
    UnexpectedEnd {
        /// Bytes the value needs.
        needed: u64,
        /// Bytes that were left.
        available: u64,
    },
    /// A length field claims more bytes than remain in the enclosing slice.
    LengthPastEnd {
        /// The declared length.
        length: u64,
        /// Bytes that were left.
        available: u64,
    },
    /// A length field is larger than the configured limit (streams, where the end is unknown).
    LengthOverLimit {
        /// The declared length.
        length: u64,
        /// The configured limit.
        limit: u64,
    },
    /// A string is not valid UTF-8.
    InvalidUtf8 {
        /// Offset of the first invalid byte, relative to the start of the string.
        valid_up_to: usize,
    },
    /// A value does not fit the length prefix it must be written with.
    TooLongToWrite {
        /// Length of the value.
        length: u64,
        /// The largest length the prefix can hold.
        max: u64,
    },
}

impl Error {
    /// Creates an error.
    pub fn new(offset: u64, what: &'static str, kind: ErrorKind) -> Self {
        Self { offset, what, kind }
    }

    /// True when the data simply ends too early (a cut file), as opposed to being malformed.
    ///
    /// A length that points past the end of a slice counts as truncation, because that is what a
    /// file cut in the middle of a record looks like.
    pub fn is_truncation(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::UnexpectedEnd { .. } | ErrorKind::LengthPastEnd { .. }
        )
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::UnexpectedEnd { needed, available } => write!(
                f,
                "unexpected end of data: needed {needed} bytes, {available} available"
            ),
            ErrorKind::LengthPastEnd { length, available } => write!(
                f,
                "length {length} exceeds the {available} bytes that remain"
            ),
            ErrorKind::LengthOverLimit { length, limit } => write!(
                f,
                "length {length} exceeds the configured limit of {limit} bytes"
            ),
            ErrorKind::InvalidUtf8 { valid_up_to } => {
                write!(f, "invalid UTF-8 after {valid_up_to} valid bytes")
            }
            ErrorKind::TooLongToWrite { length, max } => write!(
                f,
                "{length} bytes do not fit a length prefix whose maximum is {max}"
            ),
        }
    }
}
