//! Findings about a log's structure: what `check` reports and what opening a damaged file
//! notices.

use std::fmt;

use serde::Serialize;

/// How bad a [`Problem`] is: an error is what loses or corrupts data, a warning an inconsistency
/// that costs no data, a note (`Info`) something worth knowing. Displayed as `error`, `warning`
/// and `note`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing, nothing wrong (for example: the file was read by a scan because it has
    /// no index, as unchunked MCAP files are meant to be).
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

/// One finding, and where in the file it is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Problem {
    /// Byte offset in the file, when the finding is about a place.
    pub offset: Option<u64>,
    /// How bad it is.
    pub severity: Severity,
    /// What was found.
    pub message: String,
}

impl Problem {
    pub(crate) fn new(severity: Severity, offset: Option<u64>, message: impl Into<String>) -> Self {
        Self {
            offset,
            severity,
            message: message.into(),
        }
    }

    pub(crate) fn error(offset: Option<u64>, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, offset, message)
    }

    pub(crate) fn warning(offset: Option<u64>, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, offset, message)
    }

    #[cfg(any(feature = "rosbag", feature = "mcap", feature = "rosbag2"))]
    pub(crate) fn info(offset: Option<u64>, message: impl Into<String>) -> Self {
        Self::new(Severity::Info, offset, message)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(offset) => write!(f, "{} at byte {offset}: {}", self.severity, self.message),
            None => write!(f, "{}: {}", self.severity, self.message),
        }
    }
}
