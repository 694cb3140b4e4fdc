//! `--topic`, `--start` and `--end` as a facade filter, and the warnings they can earn.

use std::io::Write;
use std::path::Path;

use clap::error::ErrorKind;
use robolog::{Filter, Problem, Severity};

use crate::cli::Selection;
use crate::failure::{Failure, display_path};

impl Selection {
    /// The filter: the topics given (all without any), log times in `[start, end)`.
    pub(crate) fn filter(&self) -> Result<Filter, Failure> {
        let mut filter = Filter::new();
        if !self.topics.is_empty() {
            filter = filter.topics(self.topics.iter().cloned());
            // Report a bad glob as a usage error now rather than as a read error later.
            filter
                .topic_matcher()
                .map_err(|e| Failure::usage(ErrorKind::ValueValidation, e))?;
        }
        if let (Some(start), Some(end)) = (self.start, self.end)
            && start >= end
        {
            return Err(Failure::usage(
                ErrorKind::ArgumentConflict,
                format!("--start ({start} ns) must be before --end ({end} ns)"),
            ));
        }
        filter = match (self.start, self.end) {
            (None, None) => filter,
            (start, Some(end)) => filter.time_range(start.unwrap_or(0)..end),
            (Some(start), None) => filter.time_range(start..),
        };
        Ok(filter)
    }
}

/// Tells on standard error which `--topic` patterns matched nothing (a typo?).
pub(crate) fn warn_unmatched(patterns: &[String], file: &Path) {
    for pattern in patterns {
        warn(&format!(
            "--topic {pattern} matches no topic in {}",
            display_path(file)
        ));
    }
}

/// Tells what opening a log noticed (damage, a missing index), warnings and errors only.
pub(crate) fn warn_problems(problems: &[Problem], file: &Path) {
    for problem in problems.iter().filter(|p| p.severity >= Severity::Warning) {
        let place = match problem.offset {
            Some(offset) => format!("{} at byte {offset}", display_path(file)),
            None => display_path(file),
        };
        warn(&format!("{} ({place})", problem.message));
    }
}

/// One `warning:` line on standard error.
pub(crate) fn warn(message: &str) {
    // Nothing useful is left to do when standard error itself is gone.
    let _ = writeln!(std::io::stderr(), "warning: {message}");
}
