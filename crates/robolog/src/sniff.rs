//! Recognising a format from the first bytes of its input.

use std::fmt::Write as _;

use crate::error::{Error, Result};
use crate::format::Format;

/// How many leading bytes [`sniff`] looks at (and error messages show).
pub const SNIFF_LEN: usize = 16;

/// The MCAP magic (ratified and draft layouts share it).
const MCAP_MAGIC: &[u8] = b"\x89MCAP0\r\n";
/// What every ROS bag version line starts with (`#ROSBAG V2.0`, `#ROSRECORD V1.2`).
const BAG_PREFIX: &[u8] = b"#ROS";
/// The BDDF start magic.
const BDDF_MAGIC: &[u8] = b"BDDF";
/// The SQLite magic: a rosbag2 sqlite3 storage file (`.db3`).
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// The format of a log whose first bytes are `head` (at least [`SNIFF_LEN`] bytes when the
/// input has them; more are ignored).
///
/// Only the magic is checked: a bag's version line is validated by the bag reader, which names
/// unsupported versions. Unknown inputs get an error showing their first bytes; an input that
/// ends inside a magic is reported as truncated.
///
/// ```
/// use robolog::{Format, sniff};
/// assert_eq!(sniff(b"#ROSBAG V2.0\n")?, Format::Bag);
/// assert_eq!(sniff(b"\x89MCAP0\r\n\x01")?, Format::Mcap);
/// assert!(sniff(b"GIF89a").unwrap_err().to_string().contains("47 49 46 38 39 61 (\"GIF89a\")"));
/// # Ok::<(), robolog::Error>(())
/// ```
pub fn sniff(head: &[u8]) -> Result<Format> {
    if head.is_empty() {
        return Err(Error::EmptyInput);
    }
    for (magic, format) in [
        (BAG_PREFIX, Format::Bag),
        (MCAP_MAGIC, Format::Mcap),
        (BDDF_MAGIC, Format::Bddf),
        (SQLITE_MAGIC, Format::Rosbag2),
    ] {
        if head.starts_with(magic) {
            return Ok(format);
        }
        if head.len() < magic.len() && magic.starts_with(head) {
            return Err(Error::TruncatedMagic {
                format,
                len: head.len(),
            });
        }
    }
    Err(Error::UnknownFormat {
        head: head[..head.len().min(SNIFF_LEN)].to_vec(),
    })
}

/// True when `path` is read as a ROS 2 bag: a directory, an SQLite file, or a zstd-compressed
/// storage file named `*.db3.zstd` / `*.mcap.zstd`. Such a path is opened by path
/// ([`crate::OpenOptions::open`]); any other file may also be opened from an
/// [`Input`](robolog_query::Input) ([`crate::OpenOptions::open_input`]).
pub fn is_rosbag2_path(path: &std::path::Path) -> Result<bool> {
    use std::io::Read;
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Ok(true);
    }
    let mut head = Vec::with_capacity(SNIFF_LEN);
    std::fs::File::open(path)?
        .take(SNIFF_LEN as u64)
        .read_to_end(&mut head)?;
    if head.starts_with(SQLITE_MAGIC) {
        return Ok(true);
    }
    let name = path.to_string_lossy();
    Ok(head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
        && (name.ends_with(".db3.zstd") || name.ends_with(".mcap.zstd")))
}

/// `23 52 4f 53 ("#ROS")`: the bytes in hex, then as printable ASCII with `.` for the rest.
pub(crate) fn describe_head(head: &[u8]) -> String {
    let mut out = String::new();
    for (i, b) in head.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let _ = write!(out, "{b:02x}");
    }
    out.push_str(" (\"");
    out.extend(head.iter().map(|&b| {
        if b.is_ascii_graphic() || b == b' ' {
            char::from(b)
        } else {
            '.'
        }
    }));
    out.push_str("\")");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_magic_and_its_prefixes() {
        assert_eq!(sniff(b"#ROSRECORD V1.2\n").unwrap(), Format::Bag);
        assert_eq!(sniff(b"#ROSBAG V2.0\nxx").unwrap(), Format::Bag);
        assert_eq!(sniff(b"\x89MCAP0\r\n").unwrap(), Format::Mcap);
        assert_eq!(sniff(b"BDDF\x00\x00").unwrap(), Format::Bddf);
        assert!(matches!(
            sniff(b"\x89MC"),
            Err(Error::TruncatedMagic {
                format: Format::Mcap,
                len: 3
            })
        ));
        assert!(matches!(
            sniff(b"#R"),
            Err(Error::TruncatedMagic {
                format: Format::Bag,
                len: 2
            })
        ));
        assert!(matches!(sniff(b""), Err(Error::EmptyInput)));
    }

    #[test]
    fn unknown_inputs_show_sixteen_bytes() {
        let err = sniff(b"\x89PNG\r\n\x1a\n0123456789abcdef").unwrap_err();
        assert_eq!(
            err.to_string().split(';').next().unwrap(),
            "unknown format: the input starts with 89 50 4e 47 0d 0a 1a 0a 30 31 32 33 34 35 36 37 (\".PNG....01234567\")"
        );
        // A draft-era or future MCAP version is not MCAP 0.
        assert!(matches!(
            sniff(b"\x89MCAP1\r\n"),
            Err(Error::UnknownFormat { .. })
        ));
    }
}
