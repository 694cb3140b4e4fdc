//! Oddities and damage found while opening, checking or recovering a bag.

use std::fmt;
use std::path::PathBuf;

/// How bad a [`Problem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing; nothing is wrong with the data (a storage file read without its
    /// metadata.yaml, as ROS 2 itself allows).
    Info,
    /// Inconsistent or unusual, but nothing is lost (a stale metadata.yaml).
    Warning,
    /// Data is lost or cannot be read as the bag claims.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One finding, and the file it is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Problem {
    /// How bad it is.
    pub severity: Severity,
    /// The file (metadata.yaml or a storage file), when the finding is about one.
    pub path: Option<PathBuf>,
    /// Byte offset in that file, when known.
    pub offset: Option<u64>,
    /// What was found.
    pub message: String,
}

impl Problem {
    pub(crate) fn new(
        severity: Severity,
        path: Option<PathBuf>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            severity,
            path,
            offset: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.severity)?;
        if let Some(path) = &self.path {
            write!(f, " in {}", path.display())?;
        }
        if let Some(offset) = self.offset {
            write!(f, " at byte {offset}")?;
        }
        write!(f, ": {}", self.message)
    }
}
