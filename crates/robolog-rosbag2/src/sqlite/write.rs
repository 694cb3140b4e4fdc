//! Writing a `.db3` as rosbag2 (Iron and later) does: schema version 4 with its exact CREATE
//! texts, `message_definitions` and type hashes, a `metadata` row at open and at close.
//!
//! The file is written in WAL mode with `synchronous=NORMAL` (rosbag2's `resilient` preset),
//! messages committed in batches: a writer that is killed leaves the `.db3` and its `-wal`,
//! which SQLite reads back up to the last committed batch. Closing checkpoints the `-wal` into
//! the file and leaves it in rollback-journal mode, a single self-contained `.db3`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, params};

use crate::definition::{Definition, definition_key};
use crate::error::{Error, Result};
use crate::metadata::{BagMetadata, TopicMetadata};
use crate::qos::profiles_to_string;

/// The tables and index, as rosbag2's sqlite plugin creates them (readers test the CREATE
/// texts for column names).
const SCHEMA: &str = "\
CREATE TABLE schema(schema_version INTEGER PRIMARY KEY,ros_distro TEXT NOT NULL);
CREATE TABLE metadata(id INTEGER PRIMARY KEY,metadata_version INTEGER NOT NULL,metadata TEXT NOT NULL);
CREATE TABLE topics(id INTEGER PRIMARY KEY,name TEXT NOT NULL,type TEXT NOT NULL,serialization_format TEXT NOT NULL,offered_qos_profiles TEXT NOT NULL,type_description_hash TEXT NOT NULL);
CREATE TABLE message_definitions(id INTEGER PRIMARY KEY,topic_type TEXT NOT NULL,encoding TEXT NOT NULL,encoded_message_definition TEXT NOT NULL,type_description_hash TEXT NOT NULL);
CREATE TABLE messages(id INTEGER PRIMARY KEY,topic_id INTEGER NOT NULL,timestamp INTEGER NOT NULL, data BLOB NOT NULL);
CREATE INDEX timestamp_idx ON messages (timestamp ASC);";

/// Messages per transaction (or fewer, when their bytes reach [`COMMIT_BYTES`]).
const COMMIT_ROWS: usize = 4096;
const COMMIT_BYTES: usize = 4 << 20;

/// An open `.db3` being written.
#[derive(Debug)]
pub(crate) struct Db3Writer {
    conn: Connection,
    path: PathBuf,
    page_size: u64,
    /// Size of the database at the last commit.
    committed_bytes: u64,
    pending_rows: usize,
    pending_bytes: usize,
    topics: HashMap<u32, i64>,
    definitions: HashSet<String>,
}

impl Db3Writer {
    pub(crate) fn create(path: &Path, ros_distro: &str, metadata: &BagMetadata) -> Result<Self> {
        let sq = |e: rusqlite::Error| Error::sqlite(path, &e);
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sq)?;
        conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .map_err(sq)?;
        conn.execute_batch("PRAGMA synchronous=NORMAL;")
            .map_err(sq)?;
        conn.execute_batch(SCHEMA).map_err(sq)?;
        conn.execute(
            "INSERT INTO schema (schema_version, ros_distro) VALUES (4, ?1)",
            params![ros_distro],
        )
        .map_err(sq)?;
        let page_size: i64 = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .map_err(sq)?;
        let mut writer = Self {
            conn,
            path: path.to_path_buf(),
            page_size: u64::try_from(page_size).unwrap_or(4096),
            committed_bytes: 0,
            pending_rows: 0,
            pending_bytes: 0,
            topics: HashMap::new(),
            definitions: HashSet::new(),
        };
        writer.write_metadata(metadata)?;
        writer.update_size()?;
        writer.conn.execute_batch("BEGIN").map_err(sq)?;
        Ok(writer)
    }

    fn sq(&self, e: rusqlite::Error) -> Error {
        Error::sqlite(&self.path, &e)
    }

    pub(crate) fn write_metadata(&mut self, metadata: &BagMetadata) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO metadata (metadata_version, metadata) VALUES (?1, ?2)",
                params![metadata.version, metadata.to_serialized()],
            )
            .map_err(|e| self.sq(e))?;
        Ok(())
    }

    /// Registers bag topic `id` in this file (topics table, and its definition once per type).
    pub(crate) fn add_topic(
        &mut self,
        id: u32,
        topic: &TopicMetadata,
        definition: &Definition,
        qos_names: bool,
    ) -> Result<()> {
        if self.topics.contains_key(&id) {
            return Ok(());
        }
        self.conn
            .execute(
                "INSERT INTO topics (name, type, serialization_format, offered_qos_profiles, type_description_hash) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    topic.name,
                    topic.type_name,
                    topic.serialization_format,
                    profiles_to_string(&topic.offered_qos_profiles, qos_names),
                    topic.type_description_hash
                ],
            )
            .map_err(|e| self.sq(e))?;
        let local = self.conn.last_insert_rowid();
        self.topics.insert(id, local);
        let key = definition_key(&topic.type_name)
            .unwrap_or(&topic.type_name)
            .to_owned();
        // Only definitions that exist get a row: rosbag2 writes a row with encoding "" for a
        // definition it did not find, which rosbags cannot read; no row means the same to
        // both.
        if let Definition::Stored { encoding, text } = definition
            && self.definitions.insert(key.clone())
        {
            self.conn
                .execute(
                    "INSERT INTO message_definitions (topic_type, encoding, encoded_message_definition, type_description_hash) VALUES (?1, ?2, ?3, ?4)",
                    params![key, encoding, text, topic.type_description_hash],
                )
                .map_err(|e| self.sq(e))?;
        }
        Ok(())
    }

    pub(crate) fn write(&mut self, id: u32, log_time: u64, data: &[u8]) -> Result<()> {
        let Some(&local) = self.topics.get(&id) else {
            return Err(Error::Usage(format!(
                "topic {id} is not registered in {}",
                self.path.display()
            )));
        };
        let timestamp = i64::try_from(log_time).map_err(|_| {
            Error::Usage(format!(
                "receive time {log_time} ns does not fit sqlite's signed 64-bit timestamp"
            ))
        })?;
        let mut stmt = self
            .conn
            .prepare_cached("INSERT INTO messages (timestamp, topic_id, data) VALUES (?1, ?2, ?3)")
            .map_err(|e| Error::sqlite(&self.path, &e))?;
        stmt.execute(params![timestamp, local, data])
            .map_err(|e| Error::sqlite(&self.path, &e))?;
        drop(stmt);
        self.pending_rows += 1;
        self.pending_bytes += data.len();
        if self.pending_rows >= COMMIT_ROWS || self.pending_bytes >= COMMIT_BYTES {
            self.commit()?;
        }
        Ok(())
    }

    /// Commits the batch: everything written so far survives a kill from here on.
    pub(crate) fn commit(&mut self) -> Result<()> {
        self.conn.execute_batch("COMMIT").map_err(|e| self.sq(e))?;
        self.update_size()?;
        self.pending_rows = 0;
        self.pending_bytes = 0;
        self.conn.execute_batch("BEGIN").map_err(|e| self.sq(e))?;
        Ok(())
    }

    fn update_size(&mut self) -> Result<()> {
        let pages: i64 = self
            .conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .map_err(|e| self.sq(e))?;
        self.committed_bytes = u64::try_from(pages).unwrap_or(0) * self.page_size;
        Ok(())
    }

    /// The file's size, near enough for splitting (committed pages plus pending payload).
    pub(crate) fn size(&self) -> u64 {
        self.committed_bytes + self.pending_bytes as u64
    }

    /// Commits, records the file's final metadata, and leaves one self-contained `.db3`.
    pub(crate) fn close(mut self, metadata: &BagMetadata) -> Result<()> {
        self.conn.execute_batch("COMMIT").map_err(|e| self.sq(e))?;
        self.write_metadata(metadata)?;
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(|e| self.sq(e))?;
        self.conn
            .query_row("PRAGMA journal_mode=DELETE", [], |_| Ok(()))
            .map_err(|e| self.sq(e))?;
        let path = self.path.clone();
        self.conn
            .close()
            .map_err(|(_, e)| Error::sqlite(&path, &e))?;
        Ok(())
    }
}
