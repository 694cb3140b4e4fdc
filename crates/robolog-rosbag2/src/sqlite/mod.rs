//! The sqlite3 storage (`.db3`): reading through SQLite (and whole-table reads of a file nobody
//! writes straight from its b-tree pages), writing the schema rosbag2 writes, and salvaging
//! files SQLite refuses by walking their pages.

pub(crate) mod pages;
pub(crate) mod read;
pub(crate) mod scan;
pub(crate) mod write;

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

/// A `file:` URI for `path`, read-only, `immutable=1` when asked (no locking and no `-wal`:
/// for files nobody writes, and read-only media).
pub(crate) fn uri(path: &Path, immutable: bool) -> String {
    let mut out = String::from("file:");
    for &b in path.as_os_str().as_encoded_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out.push_str("?mode=ro");
    if immutable {
        out.push_str("&immutable=1");
    }
    out
}

/// Opens `path` read-only.
pub(crate) fn connect(path: &Path, immutable: bool) -> rusqlite::Result<Connection> {
    Connection::open_with_flags(
        uri(path, immutable),
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
}
