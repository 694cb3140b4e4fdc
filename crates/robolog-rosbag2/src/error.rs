//! The crate's error type.

use std::path::{Path, PathBuf};

use robolog_framing::CodecError;

/// Why SQLite refused a storage file, as far as recovery cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SqliteFault {
    /// The file is damaged: "database disk image is malformed", a cut file, pages that
    /// contradict each other. `recover` walks its pages instead.
    Corrupt,
    /// The file is not an SQLite database at all.
    NotADatabase,
    /// Anything else (I/O, locking, permissions, a bad query).
    Other,
}

/// Everything that can go wrong reading, writing or recovering a rosbag2 bag.
///
/// Errors name the file they are about; SQLite and MCAP errors say where in it when they can.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a file failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system reported.
        source: std::io::Error,
    },
    /// The path is neither a bag directory nor a storage file.
    #[error("{}: not a ROS 2 bag: {reason}", .path.display())]
    NotABag {
        /// The path.
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },
    /// `metadata.yaml` names a storage file that does not exist.
    #[error(
        "{}: metadata.yaml lists the storage file {entry:?}, which does not exist (looked for {})",
        .bag.display(),
        .tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    MissingFile {
        /// The bag directory.
        bag: PathBuf,
        /// The entry of `relative_file_paths`.
        entry: String,
        /// Every place it was looked for.
        tried: Vec<PathBuf>,
    },
    /// `metadata.yaml` is not valid YAML.
    #[error("{}: line {line}, column {column}: {message}", .path.display())]
    Yaml {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser reported.
        message: String,
    },
    /// `metadata.yaml` is YAML but not rosbag2 metadata: a key has the wrong type or value.
    #[error("{}: {key}: {message}", .path.display())]
    Metadata {
        /// The file.
        path: PathBuf,
        /// The key, as a dotted path (`rosbag2_bagfile_information.topics_with_message_count[2].message_count`).
        key: String,
        /// What is wrong.
        message: String,
    },
    /// A storage identifier other than `sqlite3` and `mcap`.
    #[error("{}: unsupported storage {storage:?} (robolog reads sqlite3 and mcap)", .path.display())]
    UnsupportedStorage {
        /// The bag or file.
        path: PathBuf,
        /// The storage identifier.
        storage: String,
    },
    /// A compression format or mode rosbag2 does not define.
    #[error(
        "{}: unsupported compression {format:?} (mode {mode:?}): rosbag2 compresses with zstd, in FILE or MESSAGE mode",
        .path.display()
    )]
    UnsupportedCompression {
        /// The bag.
        path: PathBuf,
        /// `compression_format`.
        format: String,
        /// `compression_mode`.
        mode: String,
    },
    /// SQLite refused the storage file or a query on it.
    #[error("{}: SQLite: {message}", .path.display())]
    Sqlite {
        /// The storage file.
        path: PathBuf,
        /// What kind of refusal.
        fault: SqliteFault,
        /// What SQLite said.
        message: String,
    },
    /// An SQLite file that SQLite reads but that is not rosbag2 storage (a missing table, a
    /// column of the wrong type).
    #[error("{}: {message}", .path.display())]
    Db3 {
        /// The storage file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A message row whose timestamp is negative, which a `u64` receive time cannot hold.
    #[error("{}: message row {row} has the negative timestamp {timestamp}", .path.display())]
    NegativeTimestamp {
        /// The storage file.
        path: PathBuf,
        /// The message's row id.
        row: i64,
        /// The stored timestamp.
        timestamp: i64,
    },
    /// A message row names a topic id the topics table does not have.
    #[error("{}: message row {row} refers to topic id {topic_id}, which is not in the topics table", .path.display())]
    UnknownTopic {
        /// The storage file.
        path: PathBuf,
        /// The message's row id.
        row: i64,
        /// The topic id.
        topic_id: i64,
    },
    /// The MCAP storage file could not be read or written.
    #[error("{}: {source}", .path.display())]
    Mcap {
        /// The storage file.
        path: PathBuf,
        /// What robolog-mcap reported (with the byte offset).
        source: robolog_mcap::McapError,
    },
    /// A zstd-compressed file or message could not be decompressed.
    #[error("{}: {what}: {source}", .path.display())]
    Codec {
        /// The storage file.
        path: PathBuf,
        /// What was being decompressed (`the file`, `message row 12`).
        what: String,
        /// What the codec reported.
        source: CodecError,
    },
    /// The output exists already or cannot be created.
    #[error("{}: {message}", .path.display())]
    Output {
        /// The output path.
        path: PathBuf,
        /// Why it cannot be written.
        message: String,
    },
    /// The API was used wrongly (an unknown topic id, a second topic of the same name).
    #[error("{0}")]
    Usage(String),
}

impl Error {
    /// What a [`Problem`](robolog_framing::Problem) made of this error is about.
    pub fn problem_kind(&self) -> robolog_framing::ProblemKind {
        use robolog_framing::ProblemKind;
        match self {
            Error::Mcap { source, .. } => source.problem_kind(),
            Error::MissingFile { .. } | Error::Yaml { .. } | Error::Metadata { .. } => {
                ProblemKind::Metadata
            }
            Error::UnsupportedStorage { .. } | Error::UnsupportedCompression { .. } => {
                ProblemKind::Unsupported
            }
            Error::NotABag { .. } | Error::Db3 { .. } | Error::Codec { .. } => {
                ProblemKind::Malformed
            }
            Error::Sqlite { fault, .. } => match fault {
                SqliteFault::Corrupt | SqliteFault::NotADatabase => ProblemKind::Malformed,
                SqliteFault::Other => ProblemKind::Other,
            },
            Error::NegativeTimestamp { .. } => ProblemKind::Time,
            Error::UnknownTopic { .. } => ProblemKind::Schema,
            Error::Io { .. } | Error::Output { .. } | Error::Usage(_) => ProblemKind::Other,
        }
    }

    /// The byte offset in the file the error is about, when one is known.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::Mcap { source, .. } => source.offset(),
            _ => None,
        }
    }

    /// The file the error is about, when there is one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Error::Io { path, .. }
            | Error::NotABag { path, .. }
            | Error::Yaml { path, .. }
            | Error::Metadata { path, .. }
            | Error::UnsupportedStorage { path, .. }
            | Error::UnsupportedCompression { path, .. }
            | Error::Sqlite { path, .. }
            | Error::Db3 { path, .. }
            | Error::NegativeTimestamp { path, .. }
            | Error::UnknownTopic { path, .. }
            | Error::Mcap { path, .. }
            | Error::Codec { path, .. }
            | Error::Output { path, .. } => Some(path),
            Error::MissingFile { bag, .. } => Some(bag),
            Error::Usage(_) => None,
        }
    }

    /// True when the data ends too early (a cut storage file) or is damaged in a way that
    /// `recover` may repair, as opposed to a usage or I/O error.
    pub fn is_damage(&self) -> bool {
        match self {
            Error::Sqlite { fault, .. } => *fault == SqliteFault::Corrupt,
            Error::Mcap { source, .. } => !matches!(
                source,
                robolog_mcap::McapError::Io { .. } | robolog_mcap::McapError::Usage(_)
            ),
            Error::Codec { .. } => true,
            _ => false,
        }
    }

    /// True when a storage file simply ends too early.
    pub fn is_truncation(&self) -> bool {
        match self {
            Error::Mcap { source, .. } => source.is_truncation(),
            _ => false,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn sqlite(path: impl Into<PathBuf>, e: &rusqlite::Error) -> Self {
        use rusqlite::ffi::ErrorCode;
        let fault = match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseCorrupt) => SqliteFault::Corrupt,
            Some(ErrorCode::NotADatabase) => SqliteFault::NotADatabase,
            _ => SqliteFault::Other,
        };
        Error::Sqlite {
            path: path.into(),
            fault,
            message: e.to_string(),
        }
    }

    pub(crate) fn db3(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Error::Db3 {
            path: path.into(),
            message: message.into(),
        }
    }

    pub(crate) fn mcap(path: impl Into<PathBuf>, source: robolog_mcap::McapError) -> Self {
        Error::Mcap {
            path: path.into(),
            source,
        }
    }
}

/// A `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
