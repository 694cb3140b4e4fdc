//! Findings about a log's structure: what a check reports and what opening or repairing a
//! damaged log notices. One type for every container crate and the facade, so a program
//! filters the problems of any format by the same [`ProblemKind`] and [`Severity`].

use std::fmt;
use std::path::PathBuf;

/// How bad a [`Problem`] is: an error is what loses or corrupts data (a reader fails, misses
/// messages or reads wrong ones), a warning an inconsistency that costs no data, a note
/// ([`Severity::Info`]) something worth knowing. Ordered from `Info` to `Error`; displayed as
/// `note`, `warning` and `error` (serialized as `info`, `warning` and `error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Severity {
    /// Worth knowing, nothing is wrong (a file read by a scan because it has no index, as
    /// unchunked MCAP files are meant to be).
    Info,
    /// Unusual or inconsistent, but no data is lost.
    Warning,
    /// Data is lost, unreadable or contradicts the format.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// What a [`Problem`] is about, for filtering (the message says the details). New kinds may
/// be added; match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum ProblemKind {
    /// The file ends inside a record or before its end (a cut file, or one still being
    /// written): what follows is lost.
    Truncated,
    /// A stored CRC or hash does not match the bytes.
    Checksum,
    /// A record or field cannot be parsed, or breaks the format's rules (bad magic, a length
    /// past its record, a record where none of its kind may be, compressed data that does not
    /// decompress).
    Malformed,
    /// An index or summary (bag index, MCAP summary, chunk and message indexes, statistics,
    /// BDDF index) is missing, damaged or disagrees with the data; or the log was read by a
    /// scan instead.
    Index,
    /// Log times that go backwards or cannot be represented (a BDDF time before 1970).
    Time,
    /// A schema, channel or connection definition: missing, unparseable, redefined
    /// differently, referred to before it is defined, or its MD5/type hash disagrees with its
    /// text.
    Schema,
    /// Metadata about the log: a ROS 2 bag's metadata.yaml (missing, stale, disagreeing with
    /// its storage), header properties.
    Metadata,
    /// Something this reader skips or does not read: an unknown record, a compression or
    /// version it was built without.
    Unsupported,
    /// Something present but empty (a channel without messages, a file without any).
    Empty,
    /// None of the above.
    Other,
}

impl ProblemKind {
    /// The kind's name in snake case, as serialized: `truncated`, `checksum`, `malformed`,
    /// `index`, `time`, `schema`, `metadata`, `unsupported`, `empty`, `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProblemKind::Truncated => "truncated",
            ProblemKind::Checksum => "checksum",
            ProblemKind::Malformed => "malformed",
            ProblemKind::Index => "index",
            ProblemKind::Time => "time",
            ProblemKind::Schema => "schema",
            ProblemKind::Metadata => "metadata",
            ProblemKind::Unsupported => "unsupported",
            ProblemKind::Empty => "empty",
            ProblemKind::Other => "other",
        }
    }
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding, and where it is: the byte offset in the file and, for a log made of several
/// files (a ROS 2 bag directory), the file.
///
/// Displayed as `error at byte 1234: what was found`, `warning: metadata.yaml: what was
/// found` (the file's name before the message) or `note: ...`.
///
/// ```
/// use robolog_framing::{Problem, ProblemKind, Severity};
///
/// let p = Problem::error(ProblemKind::Checksum, 4096, "Chunk CRC mismatch");
/// assert_eq!((p.severity, p.kind, p.offset), (Severity::Error, ProblemKind::Checksum, Some(4096)));
/// assert_eq!(p.to_string(), "error at byte 4096: Chunk CRC mismatch");
/// let p = Problem::warning(ProblemKind::Metadata, None, "stale").with_path("bag/metadata.yaml");
/// assert_eq!(p.to_string(), "warning: metadata.yaml: stale");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Problem {
    /// Byte offset in the file, when the finding is about a place. For records inside a
    /// compressed chunk: the chunk's offset (the message says where inside).
    pub offset: Option<u64>,
    /// How bad it is.
    pub severity: Severity,
    /// What it is about.
    pub kind: ProblemKind,
    /// The file concerned, for a log made of several files (a ROS 2 bag's metadata.yaml or
    /// one of its storage files); `None` for a single-file log. Not serialized when `None`.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub path: Option<PathBuf>,
    /// What was found, in words.
    pub message: String,
}

impl Problem {
    /// A problem of the given severity and kind, at `offset` (a `u64`, `Some(u64)` or `None`).
    pub fn new(
        severity: Severity,
        kind: ProblemKind,
        offset: impl Into<Option<u64>>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            offset: offset.into(),
            severity,
            kind,
            path: None,
            message: message.into(),
        }
    }

    /// An error: data is lost, unreadable or contradicts the format.
    pub fn error(
        kind: ProblemKind,
        offset: impl Into<Option<u64>>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Error, kind, offset, message)
    }

    /// A warning: an inconsistency that costs no data.
    pub fn warning(
        kind: ProblemKind,
        offset: impl Into<Option<u64>>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Warning, kind, offset, message)
    }

    /// A note: worth knowing, nothing is wrong.
    pub fn info(
        kind: ProblemKind,
        offset: impl Into<Option<u64>>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Info, kind, offset, message)
    }

    /// The same problem, about the file at `path` (a file inside a log directory).
    #[must_use]
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// The same problem with another severity (a warning that a strict check counts as an
    /// error).
    #[must_use]
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.severity)?;
        if let Some(offset) = self.offset {
            write!(f, " at byte {offset}")?;
        }
        f.write_str(": ")?;
        if let Some(path) = &self.path {
            match path.file_name() {
                Some(name) => write!(f, "{}: ", name.to_string_lossy())?,
                None => write!(f, "{}: ", path.display())?,
            }
        }
        f.write_str(&self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_matches_the_cli_lines() {
        let p = Problem::info(ProblemKind::Index, None, "read by a scan");
        assert_eq!(p.to_string(), "note: read by a scan");
        let p = Problem::error(ProblemKind::Truncated, Some(23287), "cut");
        assert_eq!(p.to_string(), "error at byte 23287: cut");
        let p = Problem::warning(ProblemKind::Malformed, 7, "x").with_path("/a/b/bag_0.db3");
        assert_eq!(p.to_string(), "warning at byte 7: bag_0.db3: x");
    }

    #[test]
    fn severities_order_from_note_to_error() {
        assert!(Severity::Info < Severity::Warning && Severity::Warning < Severity::Error);
        let p = Problem::warning(ProblemKind::Time, 1, "backwards").with_severity(Severity::Error);
        assert_eq!(p.severity, Severity::Error);
    }
}
