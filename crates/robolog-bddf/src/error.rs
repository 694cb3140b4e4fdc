//! The one error type of the crate.

use std::fmt;
use std::sync::Arc;

use crate::proto::PodType;

/// A SHA-1 digest, displayed as lowercase hex.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sha1Digest(pub [u8; 20]);

impl fmt::Display for Sha1Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Sha1Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sha1Digest({self})")
    }
}

/// Why POD data cannot be decoded or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PodError {
    /// The POD type is unspecified or not one this crate knows.
    #[error("unsupported POD type {0}")]
    UnsupportedType(i32),
    /// A dimension is zero, so a sample has no size.
    #[error("POD dimensions {0:?} contain a zero")]
    ZeroDimension(Vec<u32>),
    /// The product of the dimensions does not fit in memory.
    #[error("POD dimensions {0:?} describe a sample too large to address")]
    SampleTooLarge(Vec<u32>),
    /// The payload is not a whole number of samples.
    #[error("{len} payload bytes are not a whole number of {bytes_per_sample}-byte samples")]
    PartialSample {
        /// Payload length.
        len: usize,
        /// Bytes in one sample.
        bytes_per_sample: usize,
    },
    /// Values handed to the writer are not a whole number of samples.
    #[error("{values} values are not a whole number of {values_per_sample}-value samples")]
    PartialValues {
        /// Number of values given.
        values: usize,
        /// Values in one sample.
        values_per_sample: usize,
    },
    /// POD series carry no additional indexes.
    #[error("POD series cannot have additional indexes")]
    AdditionalIndexes,
    /// The element type does not match the series.
    #[error("the series holds {expected:?} values, not {found:?}")]
    TypeMismatch {
        /// The series' element type.
        expected: PodType,
        /// The element type given.
        found: PodType,
    },
}

/// Everything that can go wrong reading, writing or recovering a BDDF file.
///
/// Variants carry the byte offset (from the start of the file) of the block involved where there
/// is one. [`Error::is_truncation`] tells a cut file from a corrupt one. Errors are cheap to
/// clone (I/O errors are shared), so a reader can report the same problem again.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input does not start with the `BDDF` magic.
    #[error("not a BDDF file: the first bytes are {found:02x?}, not \"BDDF\"")]
    NotBddf {
        /// The first (up to 4) bytes.
        found: Vec<u8>,
    },
    /// The input ends inside a block (or before a block that must follow).
    #[error(
        "truncated in {what} at byte {offset}: it needs {needed} bytes, {available} are left \
         ({complete_data_blocks} complete data blocks before it)"
    )]
    Truncated {
        /// Offset of the block (or trailer) that is incomplete.
        offset: u64,
        /// What is incomplete: `"data block"`, `"descriptor block"`, `"block header"`, …
        what: &'static str,
        /// Bytes it needs from `offset`.
        needed: u64,
        /// Bytes that exist from `offset`.
        available: u64,
        /// Data blocks read completely before the cut.
        complete_data_blocks: u64,
    },
    /// The file does not end with the `FDDB` magic, so it has no index: it was cut or is still
    /// being written. [`recover`](crate::recover()) rescues its content.
    #[error("no trailer: the file ({file_len} bytes) does not end with \"FDDB\"")]
    NoTrailer {
        /// Length of the input.
        file_len: u64,
    },
    /// The trailer's index offset does not point inside the file.
    #[error("the trailer's index offset {index_offset} is outside the file ({file_len} bytes)")]
    BadIndexOffset {
        /// The offset read at EOF−32.
        index_offset: u64,
        /// Length of the input.
        file_len: u64,
    },
    /// A block header has a type other than data (0), descriptor (1) or end (2).
    #[error("reserved block type {block_type:#04x} at byte {offset}")]
    ReservedBlockType {
        /// Offset of the block header.
        offset: u64,
        /// The type byte.
        block_type: u8,
    },
    /// A block is not the kind that must be at this place.
    #[error("expected a {expected} at byte {offset}, found a {found}")]
    UnexpectedBlock {
        /// Offset of the block header.
        offset: u64,
        /// What must be there.
        expected: &'static str,
        /// What is there.
        found: &'static str,
    },
    /// A data block's descriptor is longer than the whole block.
    #[error(
        "data block at byte {offset}: descriptor length {desc_len} exceeds block size {block_size}"
    )]
    DescriptorTooLong {
        /// Offset of the block header.
        offset: u64,
        /// The declared descriptor length.
        desc_len: u32,
        /// The declared block size.
        block_size: u64,
    },
    /// A protobuf message does not decode.
    #[error("cannot decode the {what} at byte {offset}: {source}")]
    Decode {
        /// Offset of the block holding the message.
        offset: u64,
        /// Which message.
        what: &'static str,
        /// The protobuf error.
        source: prost::DecodeError,
    },
    /// The file declares a format version other than 1.0.0.
    #[error(
        "unsupported BDDF version {major}.{minor}.{patch} at byte {offset} (1.0.0 is supported)"
    )]
    UnsupportedVersion {
        /// Offset of the file descriptor block.
        offset: u64,
        /// Major version.
        major: u32,
        /// Minor version.
        minor: u32,
        /// Patch level.
        patch: u32,
    },
    /// The file declares a checksum this crate cannot check.
    #[error(
        "unsupported checksum (type {checksum_type}, {num_bytes} bytes) in the file descriptor at \
         byte {offset}: SHA-1 (type 2, 20 bytes) or none (type 1) are supported"
    )]
    UnsupportedChecksum {
        /// Offset of the file descriptor block.
        offset: u64,
        /// The declared checksum type.
        checksum_type: i32,
        /// The declared digest size.
        num_bytes: u32,
    },
    /// The SHA-1 in the trailer does not match the file's content.
    #[error("checksum mismatch: the trailer says SHA-1 {expected}, the content hashes to {actual}")]
    ChecksumMismatch {
        /// The digest stored in the trailer.
        expected: Sha1Digest,
        /// The digest of the bytes read.
        actual: Sha1Digest,
    },
    /// The file index and the blocks it points to disagree.
    #[error("inconsistent index at byte {offset}: {problem}")]
    BadIndex {
        /// Offset of the index block (or of the block it points to).
        offset: u64,
        /// What disagrees.
        problem: String,
    },
    /// A data block names a series that has no descriptor (yet).
    #[error("data block at byte {offset} belongs to series {series_index}, which is not declared")]
    UnknownSeries {
        /// Offset of the data block.
        offset: u64,
        /// The series index it names.
        series_index: u32,
    },
    /// A timestamp does not fit in `i64` nanoseconds.
    #[error("timestamp {seconds} s + {nanos} ns at byte {offset} does not fit in i64 nanoseconds")]
    TimestampOutOfRange {
        /// Offset of the block holding it.
        offset: u64,
        /// Seconds.
        seconds: i64,
        /// Nanoseconds.
        nanos: i32,
    },
    /// POD data cannot be decoded or written.
    #[error("POD series {series_index}{}: {source}", at_offset(*.offset))]
    Pod {
        /// The series.
        series_index: u32,
        /// Offset of the data block, when reading.
        offset: Option<u64>,
        /// What is wrong.
        source: PodError,
    },
    /// A series index that the file or writer does not have.
    #[error("there is no series {0}")]
    NoSuchSeries(u32),
    /// A block position past the end of a series.
    #[error("series {series_index} has {block_count} data blocks, there is no block {position}")]
    NoSuchBlock {
        /// The series.
        series_index: u32,
        /// The position asked for.
        position: usize,
        /// Blocks in the series.
        block_count: usize,
    },
    /// A write does not fit the kind of series it names.
    #[error("series {series_index} is not a {expected} series")]
    WrongSeriesKind {
        /// The series.
        series_index: u32,
        /// What the write needs.
        expected: &'static str,
    },
    /// A data block has a different number of additional indexes than its series names.
    #[error("series {series_index} has {expected} additional indexes, {found} given")]
    AdditionalIndexCount {
        /// The series.
        series_index: u32,
        /// Names declared by the series.
        expected: usize,
        /// Values given.
        found: usize,
    },
    /// A series with the same spec was already added (readers of the format key series by spec).
    #[error("a series with spec {spec:?} already exists (as series {existing})")]
    DuplicateSpec {
        /// The spec.
        spec: std::collections::BTreeMap<String, String>,
        /// The series that has it.
        existing: u32,
    },
    /// A block is larger than the 56-bit size field can express.
    #[error("a block of {size} bytes exceeds the format's 56-bit size limit")]
    BlockTooLarge {
        /// The size.
        size: u64,
    },
    /// A bounds-checked read failed (stream limits, lengths past the end).
    #[error(transparent)]
    Framing(#[from] robolog_framing::Error),
    /// Reading or writing failed.
    #[error("I/O error at byte {offset}: {source}")]
    Io {
        /// Position in the file or stream.
        offset: u64,
        /// The underlying error.
        source: Arc<std::io::Error>,
    },
}

impl Error {
    pub(crate) fn io(offset: u64, source: std::io::Error) -> Self {
        Error::Io {
            offset,
            source: Arc::new(source),
        }
    }
}

fn at_offset(offset: Option<u64>) -> String {
    offset.map_or_else(String::new, |o| format!(" (data block at byte {o})"))
}

impl Error {
    /// True when the input simply ends too early (a cut or still-growing file), as opposed to
    /// being corrupt. Truncated files can be rescued with [`recover`](crate::recover()).
    pub fn is_truncation(&self) -> bool {
        match self {
            Error::Truncated { .. } | Error::NoTrailer { .. } => true,
            Error::Framing(e) => e.is_truncation(),
            _ => false,
        }
    }

    /// What a [`Problem`](robolog_framing::Problem) made of this error is about.
    pub fn problem_kind(&self) -> robolog_framing::ProblemKind {
        use robolog_framing::ProblemKind;
        if self.is_truncation() {
            return ProblemKind::Truncated;
        }
        match self {
            Error::ChecksumMismatch { .. } => ProblemKind::Checksum,
            Error::BadIndexOffset { .. } | Error::BadIndex { .. } => ProblemKind::Index,
            Error::UnsupportedVersion { .. } | Error::UnsupportedChecksum { .. } => {
                ProblemKind::Unsupported
            }
            Error::UnknownSeries { .. } | Error::DuplicateSpec { .. } => ProblemKind::Schema,
            Error::TimestampOutOfRange { .. } => ProblemKind::Time,
            Error::Io { .. } => ProblemKind::Other,
            _ => ProblemKind::Malformed,
        }
    }

    /// The byte offset the error refers to, when it has one.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::Truncated { offset, .. }
            | Error::ReservedBlockType { offset, .. }
            | Error::UnexpectedBlock { offset, .. }
            | Error::DescriptorTooLong { offset, .. }
            | Error::Decode { offset, .. }
            | Error::UnsupportedVersion { offset, .. }
            | Error::UnsupportedChecksum { offset, .. }
            | Error::BadIndex { offset, .. }
            | Error::UnknownSeries { offset, .. }
            | Error::TimestampOutOfRange { offset, .. }
            | Error::Io { offset, .. } => Some(*offset),
            Error::BadIndexOffset { index_offset, .. } => Some(*index_offset),
            Error::Pod { offset, .. } => *offset,
            Error::Framing(e) => Some(e.offset),
            Error::NotBddf { .. } => Some(0),
            _ => None,
        }
    }
}
