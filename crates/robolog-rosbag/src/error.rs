//! The crate's error type.

use std::fmt;

use robolog_framing::CodecError;

/// The kind of record an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RecordKind {
    /// The `#ROSBAG V2.0` / `#ROSRECORD V1.2` line.
    VersionLine,
    /// A record whose op code is not known yet (its framing is being read).
    Record,
    /// FILE_HEADER (op 0x03).
    FileHeader,
    /// CHUNK (op 0x05).
    Chunk,
    /// CONNECTION (op 0x07).
    Connection,
    /// MSG_DATA (op 0x02).
    MessageData,
    /// INDEX_DATA (op 0x04).
    IndexData,
    /// CHUNK_INFO (op 0x06).
    ChunkInfo,
    /// MSG_DEF (op 0x01, format 1.2).
    MessageDefinition,
}

impl RecordKind {
    /// The record kind of an op code, or `None` for an unknown op.
    pub fn from_op(op: u8) -> Option<Self> {
        Some(match op {
            0x01 => RecordKind::MessageDefinition,
            0x02 => RecordKind::MessageData,
            0x03 => RecordKind::FileHeader,
            0x04 => RecordKind::IndexData,
            0x05 => RecordKind::Chunk,
            0x06 => RecordKind::ChunkInfo,
            0x07 => RecordKind::Connection,
            _ => return None,
        })
    }
}

impl fmt::Display for RecordKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RecordKind::VersionLine => "version line",
            RecordKind::Record => "record",
            RecordKind::FileHeader => "file header record",
            RecordKind::Chunk => "chunk record",
            RecordKind::Connection => "connection record",
            RecordKind::MessageData => "message data record",
            RecordKind::IndexData => "index data record",
            RecordKind::ChunkInfo => "chunk info record",
            RecordKind::MessageDefinition => "message definition record",
        })
    }
}

/// Everything that can go wrong while reading, writing or reindexing a bag.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input has no bytes at all.
    #[error("empty file: a ROS bag starts with a version line such as \"#ROSBAG V2.0\"")]
    EmptyFile,
    /// The first line is not a `#ROS… V<major>.<minor>` version line.
    #[error("not a ROS bag: the file starts with {found:?} instead of a \"#ROSBAG V2.0\" line")]
    NotABag {
        /// The start of the first line (at most 32 bytes, lossily decoded).
        found: String,
    },
    /// A bag version other than 2.0 and 1.2.
    #[error("ROS bag version {version} is not supported: {reason}")]
    UnsupportedVersion {
        /// The version as written (`1.1`, `2.1`, …).
        version: String,
        /// Why, and what to do about it.
        reason: &'static str,
    },
    /// The bag was encrypted with `rosbag encrypt`.
    #[error("encrypted bag (encryptor {encryptor:?}): decrypting bags is not supported")]
    Encrypted {
        /// The `encryptor` field of the file header.
        encryptor: String,
    },
    /// A 2.0 bag whose file header says it has no index (`index_pos = 0`): the recording was
    /// never closed. Only returned in strict mode; otherwise the bag is scanned.
    #[error(
        "unindexed bag (index_pos = 0: the recording was never closed); open it without strict mode to scan it, or reindex it"
    )]
    Unindexed,
    /// The index section contradicts the file. Only returned in strict mode; otherwise the bag
    /// is scanned.
    #[error("bag index damaged at byte {offset}: {message}")]
    IndexDamaged {
        /// Where the inconsistency was found.
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// A record could not be framed: a length runs past the end of the data (a truncated file)
    /// or past a configured limit.
    #[error("{kind}: {source}")]
    Framing {
        /// The record being read.
        kind: RecordKind,
        /// The byte-level error, which carries the offset.
        #[source]
        source: robolog_framing::Error,
    },
    /// A record is well framed but its content is invalid.
    #[error("malformed {kind} at byte {offset}: {message}")]
    Malformed {
        /// The record.
        kind: RecordKind,
        /// Absolute offset of the record (or of the field), relative to the file or, inside a
        /// chunk, to the chunk's uncompressed data.
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// A chunk uses a compression other than `none`, `bz2` and `lz4`.
    #[error("unsupported chunk compression {name:?} in the chunk at byte {offset}")]
    UnsupportedCompression {
        /// Offset of the CHUNK record.
        offset: u64,
        /// The `compression` field.
        name: String,
    },
    /// A chunk failed to decompress, or decompressed to the wrong size.
    #[error("chunk at byte {offset}: {source}")]
    Codec {
        /// Offset of the CHUNK record.
        offset: u64,
        /// What the codec reported.
        #[source]
        source: CodecError,
    },
    /// Reading the input stream failed.
    #[error("I/O error while reading byte {offset}: {source}")]
    Read {
        /// Where the read began.
        offset: u64,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Writing or opening a file failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// A message was written on a connection id that [`crate::Writer::add_connection`] did
    /// not return.
    #[error("unknown connection id {conn}")]
    UnknownConnection {
        /// The id.
        conn: u32,
    },
    /// A time whose seconds do not fit the format's 32 bits (after 2106-02-07).
    #[error("time {time_ns} ns cannot be stored in a bag: its seconds do not fit in 32 bits")]
    TimeOutOfRange {
        /// The time.
        time_ns: u64,
    },
    /// A value is larger than a record's 32-bit length fields allow.
    #[error("{what} is too large for a bag record ({len} bytes; the limit is 4 GiB - 1)")]
    TooLarge {
        /// What was too large.
        what: &'static str,
        /// Its size.
        len: u64,
    },
    /// A connection header lacks a required field, or a writer argument is invalid.
    #[error("invalid input: {0}")]
    InvalidInput(String),
}

impl Error {
    /// What a [`Problem`](robolog_framing::Problem) made of this error is about.
    pub fn problem_kind(&self) -> robolog_framing::ProblemKind {
        use robolog_framing::ProblemKind;
        if self.is_truncation() {
            return ProblemKind::Truncated;
        }
        match self {
            Error::Unindexed | Error::IndexDamaged { .. } => ProblemKind::Index,
            Error::UnsupportedVersion { .. }
            | Error::Encrypted { .. }
            | Error::UnsupportedCompression { .. } => ProblemKind::Unsupported,
            Error::EmptyFile => ProblemKind::Empty,
            Error::NotABag { .. }
            | Error::Framing { .. }
            | Error::Malformed { .. }
            | Error::Codec { .. }
            | Error::TooLarge { .. } => ProblemKind::Malformed,
            Error::UnknownConnection { .. } => ProblemKind::Schema,
            Error::TimeOutOfRange { .. } => ProblemKind::Time,
            Error::Read { .. } | Error::Io(_) | Error::InvalidInput(_) => ProblemKind::Other,
        }
    }

    /// True when the data simply ends too early (a cut file), as opposed to being corrupt.
    pub fn is_truncation(&self) -> bool {
        match self {
            Error::Framing { source, .. } => source.is_truncation(),
            Error::Codec { source, .. } => {
                matches!(source, CodecError::SizeMismatch { .. })
            }
            _ => false,
        }
    }

    /// The byte offset the error is about, when known.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::IndexDamaged { offset, .. }
            | Error::Malformed { offset, .. }
            | Error::UnsupportedCompression { offset, .. }
            | Error::Codec { offset, .. }
            | Error::Read { offset, .. } => Some(*offset),
            Error::Framing { source, .. } => Some(source.offset),
            _ => None,
        }
    }

    pub(crate) fn framing(kind: RecordKind, source: robolog_framing::Error) -> Self {
        Error::Framing { kind, source }
    }

    pub(crate) fn malformed(kind: RecordKind, offset: u64, message: impl Into<String>) -> Self {
        Error::Malformed {
            kind,
            offset,
            message: message.into(),
        }
    }

    pub(crate) fn index_damaged(offset: u64, message: impl Into<String>) -> Self {
        Error::IndexDamaged {
            offset,
            message: message.into(),
        }
    }
}

/// A `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What cannot fail (a scan of a bag in memory) converts to any error.
impl From<std::convert::Infallible> for Error {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_each_record_kind_once() {
        assert_eq!(
            Error::malformed(RecordKind::Record, 12, "no op field").to_string(),
            "malformed record at byte 12: no op field"
        );
        assert_eq!(
            Error::malformed(RecordKind::Chunk, 4096, "size is not a number").to_string(),
            "malformed chunk record at byte 4096: size is not a number"
        );
        assert_eq!(RecordKind::VersionLine.to_string(), "version line");
    }
}
