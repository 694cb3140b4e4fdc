//! Definition bundles: the full `message_definition` text stored in bag connection headers and
//! in MCAP `ros1msg`/`ros2msg` schemas (the top-level `.msg` text, then one section per
//! dependency: a line of 80 `=`, a line `MSG: pkg/Type`, the dependency's `.msg` text).
//!
//! Reading is lenient (producers differ: rospy, roscpp, rosbags, rosbag2, broken publishers);
//! writing follows genmsg's `compute_full_text` byte for byte, so ROS tools accept our files.

use std::collections::HashSet;

use crate::error::Warning;
use crate::model::MessageDefinition;
use crate::name::TypeName;

/// The separator line genmsg writes before each dependency: exactly 80 `=`.
pub const SECTION_SEPARATOR: &str =
    "================================================================================";

/// A separator is recognised from this many `=` on (writers use 80; some tools wrap or trim).
const MIN_SEPARATOR_LEN: usize = 3;

/// A bundle split into its sections.
#[derive(Debug, Clone, PartialEq)]
pub struct Bundle {
    /// The top-level type's text (its name comes from the connection or schema, not from the
    /// bundle).
    pub top: String,
    /// One section per dependency, in bundle order, duplicates and malformed headers removed.
    pub dependencies: Vec<BundleSection>,
    /// Whether a section header used the ROS 2 form `MSG: pkg/msg/Type`.
    pub ros2_section_names: bool,
    /// What was repaired or ignored while reading.
    pub warnings: Vec<Warning>,
}

/// One dependency section of a bundle.
#[derive(Debug, Clone, PartialEq)]
pub struct BundleSection {
    /// The type, from the `MSG:` line (`roslib/Header` is read as `std_msgs/Header`).
    pub name: TypeName,
    /// The section's `.msg` text, as the writer had it before joining (see [`Bundle::parse`]).
    pub text: String,
    /// 1-based line number of the section's first text line within the bundle.
    pub first_line: usize,
}

impl Bundle {
    /// Splits a bundle. Never fails: whatever cannot be understood is reported in
    /// [`Bundle::warnings`] and skipped.
    ///
    /// - CRLF line ends become LF; a text without any line break but with literal `\n`
    ///   sequences (a publisher bug) is unescaped first.
    /// - A separator is a line of at least 3 `=` (trailing whitespace ignored) followed, after
    ///   optional blank lines, by a line starting `MSG:`; an `=` line without `MSG:` is text.
    /// - Section names may be `pkg/Type` or `pkg/msg/Type`.
    /// - Writers put `text + "\n"` before each separator, so one `\n` before a separator is
    ///   removed from the section before it; the last section is kept as it is. This gives back
    ///   each `.msg` file exactly when the bundle was written by genmsg.
    /// - A repeated section is ignored (the first wins).
    pub fn parse(text: &str) -> Bundle {
        let mut warnings = Vec::new();
        let mut normalised = text.replace("\r\n", "\n");
        if !normalised.contains('\n') && normalised.contains("\\n") {
            normalised = normalised.replace("\\n", "\n");
            warnings.push(Warning::EscapedNewlines);
        }
        let lines = line_spans(&normalised);
        let mut bundle = Bundle {
            top: String::new(),
            dependencies: Vec::new(),
            ros2_section_names: false,
            warnings,
        };
        let mut seen = HashSet::new();
        let mut open = OpenSection {
            kind: SectionKind::Top,
            start: 0,
            first_line: 1,
        };
        let mut index = 0;
        while index < lines.len() {
            let (start, end) = lines[index];
            let line = normalised.get(start..end).unwrap_or("");
            let Some(header_index) = section_header_after(&normalised, &lines, index, line) else {
                index += 1;
                continue;
            };
            let body = normalised.get(open.start..start).unwrap_or("");
            // The writer's "\n" before the separator is not part of the section.
            bundle.close(open, body.strip_suffix('\n').unwrap_or(body), &mut seen);
            let (header_start, header_end) = lines[header_index];
            let header = normalised.get(header_start..header_end).unwrap_or("");
            let raw_name = header.get("MSG:".len()..).unwrap_or("").trim();
            if raw_name.split('/').count() == 3 {
                bundle.ros2_section_names = true;
            }
            let header_line = header_index + 1;
            let kind = match section_name(raw_name) {
                Some(name) => SectionKind::Dependency { name, header_line },
                None => {
                    bundle.warnings.push(Warning::InvalidSectionName {
                        line: header_line,
                        text: raw_name.to_owned(),
                    });
                    SectionKind::Ignored
                }
            };
            open = OpenSection {
                kind,
                start: lines
                    .get(header_index + 1)
                    .map_or(normalised.len(), |&(s, _)| s),
                first_line: header_line + 1,
            };
            index = header_index + 1;
        }
        let rest = normalised.get(open.start..).unwrap_or("");
        bundle.close(open, rest, &mut seen);
        bundle
    }

    fn close(&mut self, section: OpenSection, text: &str, seen: &mut HashSet<TypeName>) {
        match section.kind {
            SectionKind::Top => self.top = text.to_owned(),
            SectionKind::Ignored => {}
            SectionKind::Dependency { name, header_line } => {
                if !seen.insert(name.clone()) {
                    self.warnings.push(Warning::DuplicateSection {
                        name,
                        line: header_line,
                    });
                } else {
                    self.dependencies.push(BundleSection {
                        name,
                        text: text.to_owned(),
                        first_line: section.first_line,
                    });
                }
            }
        }
    }

    /// Every section's text, top first (for dialect detection).
    pub(crate) fn texts(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.top.as_str()).chain(self.dependencies.iter().map(|s| s.text.as_str()))
    }
}

/// The section being collected while scanning a bundle.
struct OpenSection {
    kind: SectionKind,
    /// Byte offset where its text starts.
    start: usize,
    /// Line number of its first text line.
    first_line: usize,
}

enum SectionKind {
    Top,
    Dependency {
        name: TypeName,
        header_line: usize,
    },
    /// A section with a malformed header (already reported); its text is dropped.
    Ignored,
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

/// If the line at `index` is a separator followed (after blank lines) by `MSG:`, the index of
/// the `MSG:` line.
fn section_header_after(
    text: &str,
    lines: &[(usize, usize)],
    index: usize,
    line: &str,
) -> Option<usize> {
    let trimmed = line.trim_end();
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
        return candidate.starts_with("MSG:").then_some(next);
    }
    None
}

/// A section name in either form; `roslib/Header` (before ROS Diamondback) is `std_msgs/Header`.
fn section_name(raw: &str) -> Option<TypeName> {
    let name = TypeName::parse(raw).ok()?;
    if name.package() == "roslib" && name.name() == "Header" {
        return Some(TypeName::std_msgs_header());
    }
    Some(name)
}

/// Writes a bundle in genmsg's layout: the top text, then for each dependency (in the order
/// given) the 80-`=` separator, `MSG: pkg/Type` and the dependency's text, each part followed
/// by `\n`, and the very last `\n` removed.
pub fn write_bundle<'a>(
    top: &MessageDefinition,
    dependencies: impl IntoIterator<Item = &'a MessageDefinition>,
) -> String {
    let mut out = String::with_capacity(top.source.len() + 1);
    out.push_str(&top.source);
    out.push('\n');
    for dependency in dependencies {
        out.push_str(SECTION_SEPARATOR);
        out.push('\n');
        out.push_str("MSG: ");
        out.push_str(&dependency.name.to_string());
        out.push('\n');
        out.push_str(&dependency.source);
        out.push('\n');
    }
    out.pop();
    out
}
