//! The version line that opens every bag.

use std::fmt;

use crate::error::{Error, Result};

/// The bag format versions this crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    /// `#ROSRECORD V1.2` (ROS 0.5 to 1.0): per-topic records, no chunks.
    V1_2,
    /// `#ROSBAG V2.0`: chunked, with connections (every ROS 1 tool since C Turtle).
    V2_0,
}

impl Version {
    /// The exact first line of a bag of this version, `\n` included.
    pub fn line(self) -> &'static [u8] {
        match self {
            Version::V1_2 => b"#ROSRECORD V1.2\n",
            Version::V2_0 => b"#ROSBAG V2.0\n",
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Version::V1_2 => "1.2",
            Version::V2_0 => "2.0",
        })
    }
}

/// The longest first line we look at; real version lines are 13 to 16 bytes.
pub(crate) const MAX_LINE: usize = 64;

/// Parses the version line at the start of `data` and returns the version and the length of
/// the line including its `\n`.
///
/// `data` may hold more than the line. When it ends before the `\n`, the error is a
/// truncation if what is there could still become a version line.
pub(crate) fn parse_version_line(data: &[u8]) -> Result<(Version, usize)> {
    if data.is_empty() {
        return Err(Error::EmptyFile);
    }
    let window = &data[..data.len().min(MAX_LINE)];
    let Some(newline) = window.iter().position(|&b| b == b'\n') else {
        if window.len() < MAX_LINE && (window.starts_with(b"#ROS") || b"#ROS".starts_with(window)) {
            return Err(Error::framing(
                crate::error::RecordKind::VersionLine,
                robolog_framing::Error::new(
                    0,
                    "version line",
                    robolog_framing::ErrorKind::UnexpectedEnd {
                        needed: window.len() as u64 + 1,
                        available: window.len() as u64,
                    },
                ),
            ));
        }
        return Err(not_a_bag(window));
    };
    let line = &window[..newline];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let (major, minor) = match_version(line).ok_or_else(|| not_a_bag(line))?;
    match major * 100 + minor {
        200 => Ok((Version::V2_0, newline + 1)),
        102 => Ok((Version::V1_2, newline + 1)),
        101 => Err(Error::UnsupportedVersion {
            version: format!("{major}.{minor}"),
            reason: "version 1.1 bags store no message definitions; convert them to 2.0 with a ROS release that still reads them",
        }),
        _ => Err(Error::UnsupportedVersion {
            version: format!("{major}.{minor}"),
            reason: "unknown bag version (only 2.0 and 1.2 exist besides the definition-less 1.1 and 1.0)",
        }),
    }
}

/// Matches `#ROS<anything> V<digit><any byte><digit>` like the reference readers' regular
/// expression (whose greedy `.*` picks the last ` V`).
fn match_version(line: &[u8]) -> Option<(u32, u32)> {
    let rest = line.strip_prefix(b"#ROS")?;
    (0..rest.len())
        .rev()
        .find_map(|i| match rest.get(i..i + 5)? {
            [b' ', b'V', major, _, minor] if major.is_ascii_digit() && minor.is_ascii_digit() => {
                Some((u32::from(major - b'0'), u32::from(minor - b'0')))
            }
            _ => None,
        })
}

fn not_a_bag(start: &[u8]) -> Error {
    let start = &start[..start.len().min(32)];
    Error::NotABag {
        found: String::from_utf8_lossy(start).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(
            parse_version_line(b"#ROSBAG V2.0\nrest").unwrap(),
            (Version::V2_0, 13)
        );
        assert_eq!(
            parse_version_line(b"#ROSRECORD V1.2\n").unwrap(),
            (Version::V1_2, 16)
        );
        let err = parse_version_line(b"#ROSRECORD V1.1\n").unwrap_err();
        assert!(err.to_string().contains("1.1"), "{err}");
        let err = parse_version_line(b"#ROSLOG V1.1\n").unwrap_err();
        assert!(matches!(err, Error::UnsupportedVersion { .. }), "{err}");
        let err = parse_version_line(b"#ROSBAG V2.1\n").unwrap_err();
        assert!(err.to_string().contains("2.1"), "{err}");
        assert!(matches!(parse_version_line(b""), Err(Error::EmptyFile)));
        assert!(matches!(
            parse_version_line(b"\x89PNG\r\n"),
            Err(Error::NotABag { .. })
        ));
        assert!(
            parse_version_line(b"#ROSBAG V2")
                .unwrap_err()
                .is_truncation()
        );
        assert!(parse_version_line(b"#RO").unwrap_err().is_truncation());
    }
}
