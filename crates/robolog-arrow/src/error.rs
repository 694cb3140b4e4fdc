//! What can go wrong turning messages into columns, and writing or querying them.

/// An error of robolog-arrow. Errors about a channel or a message name its topic.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The channel's messages cannot become columns (no schema, or an encoding robolog cannot
    /// decode).
    #[error("{topic}: messages encoded as {encoding:?} cannot become columns: {reason}")]
    NotDecodable {
        /// The channel's topic.
        topic: String,
        /// The message encoding.
        encoding: String,
        /// Why.
        reason: String,
    },
    /// The channel's schema cannot be turned into columns (a broken or unsupported definition).
    #[error("{topic}: the schema {schema_name:?} cannot become columns: {reason}")]
    Schema {
        /// The channel's topic.
        topic: String,
        /// The schema name.
        schema_name: String,
        /// What is wrong.
        reason: String,
    },
    /// Two channels of one topic have different column layouts (different message types).
    #[error(
        "{topic}: channels of this topic carry different message types ({first} and {second}); export or query them separately"
    )]
    TopicConflict {
        /// The topic.
        topic: String,
        /// The first channel's type.
        first: String,
        /// The other channel's type.
        second: String,
    },
    /// The log has no channel of the topic asked for.
    #[error("no topic {topic:?} in the log (its topics: {})", .topics.join(", "))]
    UnknownTopic {
        /// The topic asked for.
        topic: String,
        /// The log's topics, sorted.
        topics: Vec<String>,
    },
    /// A column asked for is not one of the topic's.
    #[error("{topic}: no column {column:?} (its columns: {})", .columns.join(", "))]
    UnknownColumn {
        /// The topic.
        topic: String,
        /// The column asked for.
        column: String,
        /// The topic's columns, in order.
        columns: Vec<String>,
    },
    /// Several channels cannot become columns (each error names its topic).
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Channels(Vec<Error>),
    /// A message does not match its channel's schema.
    #[error("{topic}: the message at log time {log_time_ns} cannot be decoded: {reason}")]
    Message {
        /// The channel's topic.
        topic: String,
        /// The message's log time.
        log_time_ns: u64,
        /// What is wrong, with the field where known.
        reason: String,
    },
    /// A log time after 2262-04-11, which Arrow's nanosecond timestamps cannot hold.
    #[error("{topic}: log time {log_time_ns} ns is after 2262-04-11, the last Arrow timestamp")]
    TimeOutOfRange {
        /// The channel's topic.
        topic: String,
        /// The time.
        log_time_ns: u64,
    },
    /// One batch would hold more than 2 GiB of strings, bytes or list items in one column.
    #[error("a batch holds more than 2 GiB of variable-size data in one column")]
    BatchTooLarge,
    /// Reading the log failed.
    #[error(transparent)]
    Log(#[from] robolog::Error),
    /// Arrow refused the columns.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow::error::ArrowError),
    /// Writing Parquet failed.
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// DataFusion refused or failed a query.
    #[cfg(feature = "sql")]
    #[error("sql: {0}")]
    Sql(Box<datafusion::error::DataFusionError>),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What happened.
        #[source]
        source: std::io::Error,
    },
    /// A bug: the columns do not have the shape derived for them.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    pub(crate) fn internal(what: &str) -> Self {
        Error::Internal(what.to_owned())
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// A result of robolog-arrow.
pub type Result<T, E = Error> = std::result::Result<T, E>;
