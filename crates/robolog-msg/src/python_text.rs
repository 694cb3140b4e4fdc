//! The Python string operations that genmsg and rosidl are written with.
//!
//! Both reference parsers are Python, and their edge cases (what counts as whitespace, where a
//! line ends) come from `str.strip()` and `str.splitlines()`, not from a grammar. Matching them
//! exactly is what makes our md5sums and errors agree with theirs.

/// Python `str.isspace()`: Unicode whitespace plus the four separators `\x1c`..`\x1f`, which
/// Rust's `char::is_whitespace` does not include.
pub(crate) fn is_python_whitespace(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Python `str.strip()`.
pub(crate) fn strip(text: &str) -> &str {
    text.trim_matches(is_python_whitespace)
}

/// Python `str.lstrip()`.
pub(crate) fn lstrip(text: &str) -> &str {
    text.trim_start_matches(is_python_whitespace)
}

/// Python `str.rstrip()`.
pub(crate) fn rstrip(text: &str) -> &str {
    text.trim_end_matches(is_python_whitespace)
}

/// The tokens of `[s for s in [x.strip() for x in text.split(" ")] if s]`, the idiom genmsg
/// uses to split declarations: only the ASCII space separates tokens, so a TAB between type and
/// name leaves them as one token.
pub(crate) fn genmsg_tokens(text: &str) -> Vec<&str> {
    text.split(' ')
        .map(strip)
        .filter(|t| !t.is_empty())
        .collect()
}

/// Python `str.splitlines()`: lines without their terminators, which are `\n`, `\r\n`, `\r`,
/// `\x0b`, `\x0c`, `\x1c`, `\x1d`, `\x1e`, `\x85`, `\u2028` and `\u2029`. A final terminator does
/// not start another line.
pub(crate) fn splitlines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((index, c)) = chars.next() {
        let is_break = matches!(
            c,
            '\n' | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'
                | '\x1d'
                | '\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}'
        );
        if !is_break {
            continue;
        }
        lines.push(&text[start..index]);
        let mut end = index + c.len_utf8();
        if c == '\r'
            && let Some(&(next_index, '\n')) = chars.peek()
        {
            chars.next();
            end = next_index + 1;
        }
        start = end;
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// Byte offset of `part` inside `whole`. `part` must be a subslice of `whole` (every caller
/// passes a slice it cut from `whole`); anything else yields 0 rather than a panic.
pub(crate) fn offset_in(whole: &str, part: &str) -> usize {
    let whole_start = whole.as_ptr() as usize;
    let part_start = part.as_ptr() as usize;
    if part_start >= whole_start && part_start + part.len() <= whole_start + whole.len() {
        part_start - whole_start
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_matches_python() {
        assert_eq!(strip("\x1c a \r"), "a");
        assert_eq!(lstrip(" a "), "a ");
        assert_eq!(rstrip(" a \u{3000}"), " a");
    }

    #[test]
    fn splitlines_matches_python() {
        assert_eq!(splitlines("a\nb\r\nc\rd\x0be"), ["a", "b", "c", "d", "e"]);
        assert_eq!(splitlines("a\n"), ["a"]);
        assert_eq!(splitlines("a\n\n"), ["a", ""]);
        assert!(splitlines("").is_empty());
    }

    #[test]
    fn genmsg_tokens_split_on_space_only() {
        assert_eq!(genmsg_tokens("  int32   x "), ["int32", "x"]);
        assert_eq!(genmsg_tokens("int32\tx"), ["int32\tx"]);
        assert_eq!(genmsg_tokens("int32 \tx"), ["int32", "x"]);
    }
}
