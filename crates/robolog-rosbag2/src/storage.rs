//! What every storage file offers the bag, whatever its storage: its topics, counts and
//! times, and its messages for a query.

use std::io;
use std::path::Path;

use robolog_framing::{Bytes, Problem};
use robolog_query::Input;

use crate::definition::Definition;
use crate::metadata::{BagMetadata, TopicMetadata};

/// Which storage plugin wrote a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StorageId {
    /// SQLite 3 (`.db3`), the default up to Humble.
    Sqlite3,
    /// MCAP (`.mcap`), the default from Iron on.
    Mcap,
}

impl StorageId {
    /// The identifier metadata.yaml uses: `sqlite3`, `mcap`.
    pub fn name(self) -> &'static str {
        match self {
            StorageId::Sqlite3 => "sqlite3",
            StorageId::Mcap => "mcap",
        }
    }

    /// The file extension, without the dot: `db3`, `mcap`.
    pub fn extension(self) -> &'static str {
        match self {
            StorageId::Sqlite3 => "db3",
            StorageId::Mcap => "mcap",
        }
    }

    /// From a storage identifier (any case).
    pub fn from_name(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "sqlite3" => Some(StorageId::Sqlite3),
            "mcap" => Some(StorageId::Mcap),
            _ => None,
        }
    }

    /// From the first bytes of a file: the SQLite or MCAP magic.
    pub fn sniff(head: &[u8]) -> Option<Self> {
        if head.starts_with(b"SQLite format 3\0") {
            Some(StorageId::Sqlite3)
        } else if head.starts_with(b"\x89MCAP0\r\n") {
            Some(StorageId::Mcap)
        } else {
            None
        }
    }
}

impl std::fmt::Display for StorageId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The bytes of the storage file at `path` for robolog's own readers: memory-mapped when
/// `mapped` (the bag was opened with [`crate::OpenOptions::memory_map`]), else read by position.
pub(crate) fn storage_input(path: &Path, mapped: bool) -> io::Result<Input> {
    #[cfg(feature = "mmap")]
    if mapped {
        // SAFETY: `mapped` is only true when the caller of the `unsafe`
        // `OpenOptions::memory_map` promised that the bag's storage files are neither
        // truncated nor written while the bag, or anything read from it, is alive (a
        // FILE-compressed file is mapped in its decompressed copy, which robolog alone writes).
        #[allow(unsafe_code)]
        return unsafe { Input::map(path) };
    }
    #[cfg(not(feature = "mmap"))]
    let _ = mapped;
    Input::open(path)
}

/// A topic as one storage file registers it.
#[derive(Debug, Clone)]
pub(crate) struct FileTopic {
    /// The file's own id (sqlite `topics.id`, MCAP channel id).
    pub(crate) local_id: i64,
    pub(crate) metadata: TopicMetadata,
    pub(crate) definition: Definition,
}

/// Counts and times of one storage file, from its data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FileCounts {
    pub(crate) message_count: u64,
    pub(crate) start_ns: Option<u64>,
    pub(crate) end_ns: Option<u64>,
    /// Per local topic id, when counted (sqlite needs a scan for these).
    pub(crate) per_topic: Option<Vec<(i64, u64)>>,
}

/// What one storage file says about itself.
#[derive(Debug, Clone)]
pub(crate) struct FileView {
    pub(crate) topics: Vec<FileTopic>,
    pub(crate) ros_distro: Option<String>,
    /// The metadata the file keeps inside (sqlite `metadata` table, MCAP `rosbag2` record),
    /// the last one written.
    pub(crate) stored_metadata: Option<BagMetadata>,
    pub(crate) counts: FileCounts,
    /// What reading the file's own description noticed.
    pub(crate) notes: Vec<Problem>,
}

/// A message as a storage file holds it.
#[derive(Debug, Clone)]
pub(crate) struct RawMessage {
    pub(crate) local_topic: i64,
    pub(crate) log_time: u64,
    pub(crate) publish_time: Option<u64>,
    pub(crate) sequence: Option<u32>,
    pub(crate) data: Bytes,
    /// The sqlite row id (MCAP: -1), to name the message in errors.
    pub(crate) row: i64,
}

/// Which messages of one file to read.
#[derive(Debug, Clone)]
pub(crate) struct FileQuery {
    /// Local topic ids (`None`: all).
    pub(crate) topics: Option<Vec<i64>>,
    pub(crate) start: u64,
    pub(crate) end_inclusive: u64,
    pub(crate) order: crate::Order,
}

impl FileQuery {
    pub(crate) fn is_all_times(&self) -> bool {
        self.start == 0 && self.end_inclusive == u64::MAX
    }
}
