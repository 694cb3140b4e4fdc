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
use crate::sections;

/// The separator line genmsg writes before each dependency: exactly 80 `=`.
pub const SECTION_SEPARATOR: &str =
    "================================================================================";

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
        let split = sections::split(text, &["MSG:"]);
        let mut bundle = Bundle {
            top: split.top,
            dependencies: Vec::new(),
            ros2_section_names: false,
            warnings: Vec::new(),
        };
        if split.escaped_newlines {
            bundle.warnings.push(Warning::EscapedNewlines);
        }
        let mut seen = HashSet::new();
        for section in split.sections {
            if section.name.split('/').count() == 3 {
                bundle.ros2_section_names = true;
            }
            let Some(name) = section_name(&section.name) else {
                bundle.warnings.push(Warning::InvalidSectionName {
                    line: section.header_line,
                    text: section.name,
                });
                continue;
            };
            if !seen.insert(name.clone()) {
                bundle.warnings.push(Warning::DuplicateSection {
                    name,
                    line: section.header_line,
                });
                continue;
            }
            bundle.dependencies.push(BundleSection {
                name,
                text: section.text,
                first_line: section.first_line,
            });
        }
        bundle
    }

    /// Every section's text, top first (for dialect detection).
    pub(crate) fn texts(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.top.as_str()).chain(self.dependencies.iter().map(|s| s.text.as_str()))
    }
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
