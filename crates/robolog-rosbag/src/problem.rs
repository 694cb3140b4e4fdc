//! Damage and oddities found while reading or repairing a bag.

use std::fmt;

/// How bad a [`Problem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Unusual but harmless: nothing was lost.
    Warning,
    /// Data was lost or could not be read as the file claims.
    Error,
}

/// One thing found wrong with a bag, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Absolute byte offset in the file.
    pub offset: u64,
    /// How bad it is.
    pub severity: Severity,
    /// What was found, in words.
    pub message: String,
}

impl Problem {
    pub(crate) fn error(offset: u64, message: impl Into<String>) -> Self {
        Self {
            offset,
            severity: Severity::Error,
            message: message.into(),
        }
    }

    pub(crate) fn warning(offset: u64, message: impl Into<String>) -> Self {
        Self {
            offset,
            severity: Severity::Warning,
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(f, "{severity} at byte {}: {}", self.offset, self.message)
    }
}
