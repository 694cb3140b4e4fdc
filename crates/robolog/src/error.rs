//! The facade's error type: one enum for opening, reading, decoding, writing and converting.

use crate::decode::DecodeError;
use crate::format::Format;
use crate::sniff::describe_head;

/// Everything that can go wrong in the facade. Errors of the format crates are wrapped
/// unchanged; [`Error::offset`] gives the byte offset where one is known, so that a tool can
/// print `error: <what> (<file> at byte <offset>)`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input has no bytes at all.
    #[error("empty input: there is nothing to read")]
    EmptyInput,
    /// The first bytes match no supported format.
    #[error(
        "unknown format: the input starts with {}; robolog reads ROS bags (\"#ROSBAG V2.0\", \"#ROSRECORD V1.2\"), MCAP (\"\\x89MCAP0\\r\\n\"), BDDF (\"BDDF\") and ROS 2 bags (a directory, or a .db3 file: \"SQLite format 3\")",
        describe_head(.head)
    )]
    UnknownFormat {
        /// The first bytes of the input (at most [`crate::SNIFF_LEN`]).
        head: Vec<u8>,
    },
    /// The input ends inside what could be the magic of a format.
    #[error("the input is only {len} bytes long: a truncated {format} file?")]
    TruncatedMagic {
        /// The format whose magic the bytes begin.
        format: Format,
        /// Bytes available.
        len: usize,
    },
    /// The input is in a format this build was compiled without.
    #[error(
        "the input is {format} (detected from its first bytes), but robolog was built without {format} support: enable the `{}` cargo feature",
        .format.feature()
    )]
    FormatDisabled {
        /// The detected format.
        format: Format,
    },
    /// The ROS bag reader or writer failed.
    #[cfg(feature = "rosbag")]
    #[error(transparent)]
    Bag(#[from] robolog_rosbag::Error),
    /// The MCAP reader or writer failed.
    #[cfg(feature = "mcap")]
    #[error(transparent)]
    Mcap(#[from] robolog_mcap::McapError),
    /// The BDDF reader or writer failed.
    #[cfg(feature = "bddf")]
    #[error(transparent)]
    Bddf(#[from] robolog_bddf::Error),
    /// The ROS 2 bag reader or writer failed.
    #[cfg(feature = "rosbag2")]
    #[error(transparent)]
    Rosbag2(#[from] robolog_rosbag2::Error),
    /// A BDDF block is timestamped before 1970, which the u64 time model cannot represent
    /// (see [`crate::NegativeTimes`]).
    #[error(
        "{topic}: timestamp {timestamp_ns} ns{} is before 1970 and cannot be a u64 log time; open with NegativeTimes::Clamp to read it as 0",
        at_offset(*.offset)
    )]
    NegativeTime {
        /// The channel's topic.
        topic: String,
        /// The signed timestamp.
        timestamp_ns: i64,
        /// Offset of the data block.
        offset: Option<u64>,
    },
    /// A time does not fit the target format.
    #[error("{topic}: time {time_ns} ns cannot be stored in {target}: {reason}")]
    TimeOutOfRange {
        /// The channel's topic.
        topic: String,
        /// The time.
        time_ns: u64,
        /// The output format.
        target: Format,
        /// The format's limit.
        reason: &'static str,
    },
    /// Channels whose messages the output format cannot hold (a bag holds only ROS 1 messages).
    #[error(
        "{target} cannot hold these channels: {}; select other topics or pick another output format",
        .channels.join(", ")
    )]
    UnsupportedChannels {
        /// The output format.
        target: Format,
        /// Each refused channel as `topic (encoding: why)`.
        channels: Vec<String>,
    },
    /// A topic pattern is not a valid glob.
    #[error("invalid topic pattern {pattern:?}: {source}")]
    TopicPattern {
        /// The pattern.
        pattern: String,
        /// What globset reported.
        #[source]
        source: globset::Error,
    },
    /// A topic regular expression does not compile.
    #[error("invalid topic regular expression {pattern:?}: {source}")]
    TopicRegex {
        /// The pattern.
        pattern: String,
        /// What the regex crate reported.
        #[source]
        source: Box<regex::Error>,
    },
    /// A ROS 1 definition could not be read (to compute its md5sum).
    #[cfg(feature = "ros1")]
    #[error("{topic}: cannot read the definition of {type_name}: {source}")]
    Definition {
        /// The channel's topic.
        topic: String,
        /// The message type.
        type_name: String,
        /// What robolog-msg reported.
        #[source]
        source: Box<robolog_msg::Error>,
    },
    /// A message could not be decoded.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// Channels that cannot be migrated between ROS 1 and ROS 2 (see [`crate::migrate`]):
    /// their types have no counterpart in the other version, or definitions that cannot be
    /// translated. Nothing was written.
    #[error(
        "cannot migrate to {target}: {}; leave these topics out, or carry their own definitions over (robolog convert --copy-unmatched-types, Migration::copy_unmatched_types)",
        .refused.join("; ")
    )]
    Migration {
        /// The ROS version (and distro) migrated to.
        target: String,
        /// Each refused type as `topic: type (why)`.
        refused: Vec<String>,
    },
    /// A message of the input names a channel (a bag's connection, an MCAP channel, a BDDF
    /// series, a ROS 2 bag's topic) that the input does not define where it must.
    #[error(
        "{format}: a message on {} {channel}, which the input does not define{}",
        format.channel_word(),
        offset.map(|o| format!(" (at byte {o})")).unwrap_or_default()
    )]
    UndefinedChannel {
        /// The input's format.
        format: Format,
        /// The id the message names.
        channel: u64,
        /// Where the message is, when known.
        offset: Option<u64>,
    },
    /// A writer was used wrongly (unknown channel id, use after finish, …). Damage in an input
    /// is never this error.
    #[error("{0}")]
    Usage(String),
    /// The output cannot be used for this format.
    #[error("{0}")]
    Output(String),
    /// Reading or writing a file failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// Reading the input failed (a remote object read as it streams in, say), at `offset`.
    #[error("cannot read the input at byte {offset}: {source}")]
    Read {
        /// Where the read began.
        offset: u64,
        /// The underlying error.
        source: std::io::Error,
    },
    /// An error of one input of a [`crate::merge`]: which one, and the error itself.
    #[error("{source}")]
    InInput {
        /// The input's index in the list given to the merge.
        input: usize,
        /// What went wrong there.
        source: Box<Error>,
    },
}

impl Error {
    /// The byte offset in the input the error is about, when known.
    pub fn offset(&self) -> Option<u64> {
        match self {
            #[cfg(feature = "rosbag")]
            Error::Bag(e) => e.offset(),
            #[cfg(feature = "mcap")]
            Error::Mcap(e) => e.offset(),
            #[cfg(feature = "bddf")]
            Error::Bddf(e) => e.offset(),
            #[cfg(feature = "rosbag2")]
            Error::Rosbag2(e) => e.offset(),
            Error::NegativeTime { offset, .. } | Error::UndefinedChannel { offset, .. } => *offset,
            Error::TruncatedMagic { len, .. } => Some(*len as u64),
            Error::InInput { source, .. } => source.offset(),
            Error::Read { offset, .. } => Some(*offset),
            _ => None,
        }
    }

    /// The index of the input of a merge the error comes from, when it comes from one.
    pub fn input(&self) -> Option<usize> {
        match self {
            Error::InInput { input, .. } => Some(*input),
            _ => None,
        }
    }

    /// This error, marked as coming from input `input` of a merge.
    pub(crate) fn in_input(self, input: usize) -> Self {
        match self {
            already @ Error::InInput { .. } => already,
            source => Error::InInput {
                input,
                source: Box::new(source),
            },
        }
    }

    /// True when the input simply ends too early (a cut file), as opposed to being corrupt.
    pub fn is_truncation(&self) -> bool {
        match self {
            #[cfg(feature = "rosbag")]
            Error::Bag(e) => e.is_truncation(),
            #[cfg(feature = "mcap")]
            Error::Mcap(e) => e.is_truncation(),
            #[cfg(feature = "bddf")]
            Error::Bddf(e) => e.is_truncation(),
            #[cfg(feature = "rosbag2")]
            Error::Rosbag2(e) => e.is_truncation(),
            Error::TruncatedMagic { .. } => true,
            Error::InInput { source, .. } => source.is_truncation(),
            _ => false,
        }
    }

    /// What a [`Problem`](crate::Problem) made of this error is about: the format crate's
    /// judgement for its errors, [`ProblemKind::Other`](crate::ProblemKind::Other) for errors
    /// that are not about the data (I/O, usage).
    pub fn problem_kind(&self) -> crate::ProblemKind {
        use crate::ProblemKind;
        match self {
            #[cfg(feature = "rosbag")]
            Error::Bag(e) => e.problem_kind(),
            #[cfg(feature = "mcap")]
            Error::Mcap(e) => e.problem_kind(),
            #[cfg(feature = "bddf")]
            Error::Bddf(e) => e.problem_kind(),
            #[cfg(feature = "rosbag2")]
            Error::Rosbag2(e) => e.problem_kind(),
            Error::EmptyInput => ProblemKind::Empty,
            Error::TruncatedMagic { .. } => ProblemKind::Truncated,
            Error::UnknownFormat { .. } => ProblemKind::Malformed,
            Error::FormatDisabled { .. } => ProblemKind::Unsupported,
            Error::NegativeTime { .. } => ProblemKind::Time,
            Error::UndefinedChannel { .. } => ProblemKind::Schema,
            #[cfg(feature = "ros1")]
            Error::Definition { .. } => ProblemKind::Schema,
            Error::Decode(_) => ProblemKind::Malformed,
            Error::InInput { source, .. } => source.problem_kind(),
            _ => ProblemKind::Other,
        }
    }

    /// This error as an error-severity [`Problem`](crate::Problem) at its offset.
    pub fn to_problem(&self) -> crate::Problem {
        crate::Problem::error(self.problem_kind(), self.offset(), self.to_string())
    }
}

fn at_offset(offset: Option<u64>) -> String {
    offset.map_or_else(String::new, |o| format!(" (block at byte {o})"))
}

/// A `Result` with the facade's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disabled_formats_name_their_feature() {
        let err = Error::FormatDisabled {
            format: Format::Mcap,
        };
        assert_eq!(
            err.to_string(),
            "the input is MCAP (detected from its first bytes), but robolog was built without MCAP support: enable the `mcap` cargo feature"
        );
        let err = Error::FormatDisabled {
            format: Format::Bag,
        };
        assert!(
            err.to_string()
                .ends_with("enable the `rosbag` cargo feature")
        );
    }
}
