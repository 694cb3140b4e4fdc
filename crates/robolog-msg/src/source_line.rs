//! Numbered lines of a definition text, and syntax errors that point into them.

use crate::error::SyntaxError;
use crate::python_text::offset_in;

/// One line of a definition, with its 1-based number in the text the user gave us (a bundle's
/// line numbers count from the start of the whole bundle).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SourceLine<'a> {
    pub(crate) number: usize,
    pub(crate) text: &'a str,
}

impl SourceLine<'_> {
    /// An error about `at`, which must be a slice of this line's text (its position gives the
    /// column).
    pub(crate) fn error(
        &self,
        type_name: &str,
        at: &str,
        expected: impl Into<String>,
    ) -> SyntaxError {
        let offset = offset_in(self.text, at);
        let column = self.text.get(..offset).map_or(0, |s| s.chars().count()) + 1;
        SyntaxError {
            type_name: type_name.to_owned(),
            line: self.number,
            column,
            expected: expected.into(),
            found: at.to_owned(),
            line_text: self.text.to_owned(),
        }
    }

    /// An error about something missing at the end of the line.
    pub(crate) fn error_at_end(&self, type_name: &str, expected: impl Into<String>) -> SyntaxError {
        self.error(
            type_name,
            self.text.get(self.text.len()..).unwrap_or(""),
            expected,
        )
    }
}

/// The lines of `text` split at `\n` only (as genmsg splits), numbered from `first_line`.
pub(crate) fn split_at_newlines(text: &str, first_line: usize) -> Vec<SourceLine<'_>> {
    text.split('\n')
        .enumerate()
        .map(|(index, line)| SourceLine {
            number: first_line + index,
            text: line,
        })
        .collect()
}
