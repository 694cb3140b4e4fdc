//! What a command tells on standard error besides its output: damage it read past, topic
//! patterns that matched nothing, other warnings.

use std::io::Write;
use std::path::Path;

use robolog::{Problem, Severity};

use crate::failure::display_path;

/// Tells which topic patterns matched nothing (a typo?).
pub fn warn_unmatched(patterns: &[String], file: &Path) {
    for pattern in patterns {
        warn(&format!(
            "topic pattern {pattern} matches no topic in {}",
            display_path(file)
        ));
    }
}

/// Tells the warnings and errors among `problems` (notes are for `check` and `info`), one line
/// each with the file and offset; returns true when one is an error: data that could not be
/// read.
pub fn report_problems(problems: &[Problem], file: &Path) -> bool {
    let mut damaged = false;
    for problem in problems.iter().filter(|p| p.severity >= Severity::Warning) {
        let place = match problem.offset {
            Some(offset) => format!("{} at byte {offset}", display_path(file)),
            None => display_path(file),
        };
        let level = if problem.severity == Severity::Error {
            damaged = true;
            "error"
        } else {
            "warning"
        };
        line(level, &format!("{} ({place})", problem.message));
    }
    damaged
}

/// Damage met while reading: one `error:` line with the file and offset, and the command
/// goes on.
pub(crate) fn report_error(error: &robolog::Error, file: &Path) {
    let place = match error.offset() {
        Some(offset) => format!("{} at byte {offset}", display_path(file)),
        None => display_path(file),
    };
    line("error", &format!("{error} ({place})"));
}

/// One `warning:` line on standard error.
pub fn warn(message: &str) {
    line("warning", message);
}

fn line(level: &str, message: &str) {
    // Nothing useful is left to do when standard error itself is gone.
    let _ = writeln!(std::io::stderr(), "{level}: {message}");
}
