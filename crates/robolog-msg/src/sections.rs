//! Splitting a definition bundle into its sections: the one scanner behind ROS 1 bundles
//! ([`crate::Bundle`]), ROS 2 `ros2msg`/`ros2idl` schemas and the bundled standard interfaces.
//!
//! A section starts at a separator line (at least 3 `=`, trailing whitespace allowed) followed,
//! after optional blank lines, by a header line `KIND: name` for one of the kinds the caller
//! accepts. Anything else, `=` lines included, is text.

/// A separator is recognised from this many `=` on (writers use 80; some tools wrap or trim).
const MIN_SEPARATOR_LEN: usize = 3;

/// A bundle cut into its leading text and its sections, before any name is interpreted.
#[derive(Debug)]
pub(crate) struct Split {
    /// The text before the first section (the top-level type's text in a ROS 1 bundle).
    pub(crate) top: String,
    /// The sections in bundle order.
    pub(crate) sections: Vec<RawSection>,
    /// The input had no line break but literal `\n` sequences, which were unescaped.
    pub(crate) escaped_newlines: bool,
}

/// One section as written.
#[derive(Debug)]
pub(crate) struct RawSection {
    /// Index of the header kind in the list the caller passed.
    pub(crate) kind: usize,
    /// The name after the header's colon, trimmed.
    pub(crate) name: String,
    /// The text up to the next section (the writer's `\n` before the next separator removed).
    pub(crate) text: String,
    /// 1-based line number of the header line.
    pub(crate) header_line: usize,
    /// 1-based line number of the section's first text line.
    pub(crate) first_line: usize,
}

/// Splits `text` at separators followed by one of `headers` (each written with its colon, e.g.
/// `"MSG:"`).
///
/// - CRLF line ends become LF; a text without any line break but with literal `\n` sequences
///   (a publisher bug) is unescaped first.
/// - Writers put `text + "\n"` before each separator, so one `\n` before a separator is removed
///   from the section before it; the last section is kept as it is.
pub(crate) fn split(text: &str, headers: &[&str]) -> Split {
    let mut normalised = text.replace("\r\n", "\n");
    let escaped_newlines = !normalised.contains('\n') && normalised.contains("\\n");
    if escaped_newlines {
        normalised = normalised.replace("\\n", "\n");
    }
    let lines = line_spans(&normalised);
    let mut split = Split {
        top: String::new(),
        sections: Vec::new(),
        escaped_newlines,
    };
    // (kind and name, header line) of the section being collected; `None` for the top text.
    let mut open: Option<(usize, String, usize)> = None;
    let mut open_start = 0;
    let mut index = 0;
    while index < lines.len() {
        let (start, _) = lines[index];
        let Some((header_index, kind)) = section_header_after(&normalised, &lines, index, headers)
        else {
            index += 1;
            continue;
        };
        let body = normalised.get(open_start..start).unwrap_or("");
        // The writer's "\n" before the separator is not part of the section.
        close(
            &mut split,
            open.take(),
            body.strip_suffix('\n').unwrap_or(body),
        );
        let (header_start, header_end) = lines[header_index];
        let header = normalised.get(header_start..header_end).unwrap_or("");
        let name = header
            .get(headers[kind].len()..)
            .unwrap_or("")
            .trim()
            .to_owned();
        open = Some((kind, name, header_index + 1));
        open_start = lines
            .get(header_index + 1)
            .map_or(normalised.len(), |&(s, _)| s);
        index = header_index + 1;
    }
    let rest = normalised.get(open_start..).unwrap_or("");
    close(&mut split, open, rest);
    split
}

fn close(split: &mut Split, section: Option<(usize, String, usize)>, text: &str) {
    match section {
        None => split.top = text.to_owned(),
        Some((kind, name, header_line)) => split.sections.push(RawSection {
            kind,
            name,
            text: text.to_owned(),
            header_line,
            first_line: header_line + 1,
        }),
    }
}

/// Byte ranges of the lines of `text` (split at `\n`, terminators excluded).
fn line_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (index, byte) in text.bytes().enumerate() {
        if byte == b'\n' {
            spans.push((start, index));
            start = index + 1;
        }
    }
    spans.push((start, text.len()));
    spans
}

/// If the line at `index` is a separator followed (after blank lines) by one of `headers`, the
/// index of the header line and which header it is.
fn section_header_after(
    text: &str,
    lines: &[(usize, usize)],
    index: usize,
    headers: &[&str],
) -> Option<(usize, usize)> {
    let (start, end) = lines[index];
    let trimmed = text.get(start..end).unwrap_or("").trim_end();
    if trimmed.len() < MIN_SEPARATOR_LEN || !trimmed.bytes().all(|b| b == b'=') {
        return None;
    }
    let mut next = index + 1;
    while let Some(&(start, end)) = lines.get(next) {
        let candidate = text.get(start..end).unwrap_or("");
        if candidate.trim().is_empty() {
            next += 1;
            continue;
        }
        return headers
            .iter()
            .position(|header| candidate.starts_with(header))
            .map(|kind| (next, kind));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_accepted_headers_start_sections() {
        let text = "top\n===\nSRV: a/B\nx\n=====  \r\n\r\nMSG:c/D\ny\n";
        let msg_only = split(text, &["MSG:"]);
        assert_eq!(msg_only.top, "top\n===\nSRV: a/B\nx");
        assert_eq!(msg_only.sections.len(), 1);
        assert_eq!(msg_only.sections[0].name, "c/D");
        assert_eq!(msg_only.sections[0].text, "y\n");
        assert_eq!(msg_only.sections[0].header_line, 7);

        let both = split(text, &["MSG:", "SRV:"]);
        assert_eq!(both.top, "top");
        let kinds: Vec<(usize, &str, &str)> = both
            .sections
            .iter()
            .map(|s| (s.kind, s.name.as_str(), s.text.as_str()))
            .collect();
        assert_eq!(kinds, [(1, "a/B", "x"), (0, "c/D", "y\n")]);
    }
}
