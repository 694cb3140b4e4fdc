//! The crate's error type.

use robolog_framing::CodecError;

/// Everything that can go wrong reading or writing MCAP.
///
/// Variants carry the absolute byte offset (of the record, or of the field inside it) and the
/// record kind where known. [`McapError::is_truncation`] tells a cut file from a corrupt one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McapError {
    /// The file does not start (or end) with the MCAP magic.
    #[error("not an MCAP file: no magic at byte {offset}")]
    BadMagic {
        /// Where the magic was expected.
        offset: u64,
    },
    /// The data ends in the middle of a record: the file was cut.
    #[error("truncated at byte {offset}: the data ends inside {record} ({what})")]
    Truncated {
        /// Where the incomplete read began.
        offset: u64,
        /// The record being read.
        record: &'static str,
        /// The field being read.
        what: &'static str,
    },
    /// A record's fields do not fit together (a length past the record's end, bad UTF-8).
    #[error("malformed {record} record at byte {offset}: {source}")]
    Malformed {
        /// Offset of the record.
        offset: u64,
        /// The record kind.
        record: &'static str,
        /// What the byte reader found.
        source: robolog_framing::Error,
    },
    /// A record is well-formed but breaks a rule of the format.
    #[error("invalid {record} at byte {offset}: {message}")]
    Invalid {
        /// Offset of the record.
        offset: u64,
        /// The record kind.
        record: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A stored CRC does not match the data.
    #[error(
        "{what} CRC mismatch at byte {offset}: stored {stored:#010x}, computed {computed:#010x}"
    )]
    CrcMismatch {
        /// Offset of the record holding the CRC.
        offset: u64,
        /// Which CRC (`chunk`, `data section`, `summary`, `attachment`).
        what: &'static str,
        /// The stored value.
        stored: u32,
        /// The value computed from the data.
        computed: u32,
    },
    /// A chunk's records could not be decompressed.
    #[error("chunk at byte {offset}: {source}")]
    Codec {
        /// Offset of the Chunk record.
        offset: u64,
        /// The codec's error.
        source: CodecError,
    },
    /// A chunk uses a compression this crate does not know.
    #[error("chunk at byte {offset} uses unsupported compression {compression:?}")]
    UnsupportedCompression {
        /// Offset of the Chunk record.
        offset: u64,
        /// The compression named in the chunk.
        compression: String,
    },
    /// A record is larger than the configured limit.
    #[error("{record} at byte {offset} declares {length} bytes, over the limit of {limit}")]
    TooLarge {
        /// Offset of the record.
        offset: u64,
        /// The record kind.
        record: &'static str,
        /// The declared length.
        length: u64,
        /// The limit.
        limit: u64,
    },
    /// The file is in the pre-ratification draft layout and the reader was not asked to read it.
    #[error(
        "the file uses the pre-ratification draft MCAP layout (footer at byte {offset}); open it with the draft layout to read or convert it"
    )]
    DraftLayout {
        /// Offset of the draft Footer.
        offset: u64,
    },
    /// Reading or writing failed.
    #[error("I/O error at byte {offset}: {source}")]
    Io {
        /// Offset in the file or stream.
        offset: u64,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The writer was used wrongly (an unknown channel id, a conflicting schema).
    #[error("writer: {0}")]
    Usage(String),
}

impl McapError {
    /// What a [`Problem`](robolog_framing::Problem) made of this error is about.
    pub fn problem_kind(&self) -> robolog_framing::ProblemKind {
        use robolog_framing::ProblemKind;
        match self {
            McapError::Truncated { .. } => ProblemKind::Truncated,
            McapError::CrcMismatch { .. } => ProblemKind::Checksum,
            McapError::UnsupportedCompression { .. } | McapError::DraftLayout { .. } => {
                ProblemKind::Unsupported
            }
            McapError::BadMagic { .. }
            | McapError::Malformed { .. }
            | McapError::Invalid { .. }
            | McapError::Codec { .. }
            | McapError::TooLarge { .. } => ProblemKind::Malformed,
            McapError::Io { .. } | McapError::Usage(_) => ProblemKind::Other,
        }
    }

    /// True when the input simply ends too early (a cut file), as opposed to being corrupt.
    pub fn is_truncation(&self) -> bool {
        matches!(self, McapError::Truncated { .. })
    }

    /// The byte offset the error refers to, when there is one.
    pub fn offset(&self) -> Option<u64> {
        match self {
            McapError::BadMagic { offset }
            | McapError::Truncated { offset, .. }
            | McapError::Malformed { offset, .. }
            | McapError::Invalid { offset, .. }
            | McapError::CrcMismatch { offset, .. }
            | McapError::Codec { offset, .. }
            | McapError::UnsupportedCompression { offset, .. }
            | McapError::TooLarge { offset, .. }
            | McapError::DraftLayout { offset }
            | McapError::Io { offset, .. } => Some(*offset),
            McapError::Usage(_) => None,
        }
    }

    /// Wraps a byte-reader error inside record `record` at `offset`.
    pub(crate) fn malformed(offset: u64, record: &'static str, e: robolog_framing::Error) -> Self {
        McapError::Malformed {
            offset,
            record,
            source: e,
        }
    }

    pub(crate) fn invalid(offset: u64, record: &'static str, message: impl Into<String>) -> Self {
        McapError::Invalid {
            offset,
            record,
            message: message.into(),
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = McapError> = std::result::Result<T, E>;
