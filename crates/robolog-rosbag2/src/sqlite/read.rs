//! Reading a `.db3`: schema version, topics, definitions, stored metadata, counts, and
//! messages streamed from a worker thread in batches.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, OnceLock};

use robolog_framing::{Bytes, Problem, ProblemKind};
use robolog_query::BufferPool;
use rusqlite::Connection;
use rusqlite::types::ValueRef;

use crate::Order;
use crate::definition::{Definition, definition_key};
use crate::error::{Error, Result};
use crate::metadata::{BagMetadata, TopicMetadata};
use crate::qos::parse_profiles;
use crate::storage::{FileCounts, FileQuery, FileTopic, FileView, RawMessage, storage_input};

use super::connect;
use super::scan::Direct;

/// Rows per batch sent from the query thread (or fewer, when their data reaches
/// [`BATCH_BYTES`]).
const BATCH_ROWS: usize = 1024;
/// Payload bytes per batch.
const BATCH_BYTES: usize = 4 << 20;
/// Batches in flight between the query thread and the reader.
const BATCHES_IN_FLIGHT: usize = 2;

/// An open `.db3`.
#[derive(Debug)]
pub(crate) struct Db3 {
    /// The file as reported (the original, `.zstd` included).
    pub(crate) path: PathBuf,
    /// The file SQLite opens.
    pub(crate) db_path: PathBuf,
    pub(crate) immutable: bool,
    pub(crate) schema_version: u32,
    pub(crate) view: FileView,
    /// The messages table read without SQLite, for a file opened `immutable` whose table is
    /// laid out as rosbag2 creates it.
    direct: Option<Direct>,
    /// Whether row-id order is log-time order, once a time-ordered query asked.
    rowid_is_time_order: Arc<OnceLock<bool>>,
    /// The file memory-mapped, when the bag was opened so and the file is read without SQLite.
    mapped: Option<Bytes>,
    /// Batch buffers, reused by this file's queries.
    buffers: BufferPool,
}

/// A value read leniently as text (NULL is "", numbers are written out, blobs decoded lossily):
/// hostile or hand-made files put anything anywhere.
fn text(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Null => String::new(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
    }
}

impl Db3 {
    /// Opens `db_path` (reported as `path`). A `-wal` file beside it is read through SQLite;
    /// without one, the file is opened `immutable`, which needs no lock and works on read-only
    /// media.
    /// With `mapped`, a file read without SQLite is memory-mapped.
    pub(crate) fn open(path: &Path, db_path: &Path, mapped: bool) -> Result<Self> {
        let mut notes = Vec::new();
        let wal = wal_path(db_path);
        let has_wal = std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0);
        let (conn, immutable) = if has_wal {
            match connect(db_path, false).and_then(|c| {
                c.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))?;
                Ok(c)
            }) {
                Ok(c) => (c, false),
                Err(e) => {
                    notes.push(Problem::warning(ProblemKind::Malformed, None, format!(
                        "the -wal file beside it cannot be read ({e}): opened without it, so messages only in the -wal are missing"
                    )));
                    (
                        connect(db_path, true).map_err(|e| Error::sqlite(path, &e))?,
                        true,
                    )
                }
            }
        } else {
            (
                connect(db_path, true).map_err(|e| Error::sqlite(path, &e))?,
                true,
            )
        };
        let sq = |e: rusqlite::Error| Error::sqlite(path, &e);

        let mut tables: HashMap<String, String> = HashMap::new();
        let mut has_timestamp_index = false;
        let mut messages_root = 0;
        let mut timestamp_index = None;
        {
            let mut stmt = conn
                .prepare("SELECT type, name, tbl_name, sql, rootpage FROM sqlite_master")
                .map_err(sq)?;
            let mut rows = stmt.query([]).map_err(sq)?;
            while let Some(row) = rows.next().map_err(sq)? {
                let kind = text(row.get_ref(0).map_err(sq)?);
                let name = text(row.get_ref(1).map_err(sq)?);
                let table = text(row.get_ref(2).map_err(sq)?);
                let sql = text(row.get_ref(3).map_err(sq)?);
                let root = row.get_ref(4).map_err(sq)?.as_i64().ok();
                let root = root.and_then(|r| u32::try_from(r).ok()).unwrap_or(0);
                match kind.as_str() {
                    "table" => {
                        if name == "messages" {
                            messages_root = root;
                        }
                        tables.insert(name, sql);
                    }
                    "index" if table == "messages" && sql.contains("timestamp") => {
                        has_timestamp_index = true;
                        timestamp_index = Some((root, sql));
                    }
                    _ => {}
                }
            }
        }
        for required in ["messages", "topics"] {
            if !tables.contains_key(required) {
                return Err(Error::db3(
                    path,
                    format!("no {required} table: an SQLite file, but not rosbag2 storage"),
                ));
            }
        }
        let topics_sql = tables.get("topics").cloned().unwrap_or_default();
        let (schema_version, distro) = if tables.contains_key("schema") {
            conn.query_row(
                "SELECT schema_version, ros_distro FROM schema ORDER BY schema_version DESC LIMIT 1",
                [],
                |row| Ok((row.get_ref(0)?.as_i64().ok(), text(row.get_ref(1)?))),
            )
            .map(|(v, d)| (v.and_then(|v| u32::try_from(v).ok()).unwrap_or(3), Some(d)))
            .unwrap_or((3, None))
        } else if topics_sql.contains("offered_qos_profiles") {
            (2, None)
        } else {
            (1, None)
        };
        if !has_timestamp_index {
            notes.push(Problem::warning(ProblemKind::Index, None,
                "no timestamp index (Crystal and early Dashing bags): time-ordered reads sort the messages"
                    .to_owned(),
            ));
        }

        let definitions = if tables.contains_key("message_definitions") {
            read_definitions(&conn).map_err(sq)?
        } else {
            HashMap::new()
        };
        let topics = read_topics(&conn, &topics_sql, schema_version, &definitions, &mut notes)
            .map_err(sq)?;
        let stored_metadata = if tables.contains_key("metadata") {
            read_stored_metadata(&conn, &mut notes).map_err(sq)?
        } else {
            None
        };
        let counts = totals(&conn).map_err(sq)?;
        let direct = if immutable {
            tables.get("messages").and_then(|sql| {
                let index = timestamp_index.as_ref().map(|(r, s)| (*r, s.as_str()));
                Direct::new(messages_root, sql, index)
            })
        } else {
            None
        };
        let mapped = match &direct {
            Some(_) if mapped => storage_input(db_path, true)
                .map_err(|e| Error::io(path, e))?
                .in_memory()
                .cloned(),
            _ => None,
        };
        Ok(Db3 {
            mapped,
            buffers: BufferPool::new(),
            path: path.to_path_buf(),
            db_path: db_path.to_path_buf(),
            immutable,
            schema_version,
            view: FileView {
                topics,
                ros_distro: distro,
                stored_metadata,
                counts,
                notes,
            },
            direct,
            rowid_is_time_order: Arc::default(),
        })
    }

    /// Counts each topic's messages (a scan of the messages table).
    pub(crate) fn count_topics(&mut self) -> Result<()> {
        if self.view.counts.per_topic.is_some() {
            return Ok(());
        }
        let conn =
            connect(&self.db_path, self.immutable).map_err(|e| Error::sqlite(&self.path, &e))?;
        let sq = |e: rusqlite::Error| Error::sqlite(&self.path, &e);
        let mut stmt = conn
            .prepare("SELECT topic_id, COUNT(*) FROM messages GROUP BY topic_id")
            .map_err(sq)?;
        let mut rows = stmt.query([]).map_err(sq)?;
        let mut per_topic = Vec::new();
        while let Some(row) = rows.next().map_err(sq)? {
            let id = row.get_ref(0).map_err(sq)?.as_i64().unwrap_or(-1);
            let n = row.get_ref(1).map_err(sq)?.as_i64().unwrap_or(0);
            per_topic.push((id, u64::try_from(n).unwrap_or(0)));
        }
        self.view.counts.per_topic = Some(per_topic);
        Ok(())
    }

    /// The SQL of a query: time bounds through the timestamp index, topics by id.
    pub(crate) fn sql(query: &FileQuery) -> (String, Vec<i64>) {
        let mut sql = String::from("SELECT id, topic_id, timestamp, data FROM messages");
        let mut conditions = Vec::new();
        let mut params = Vec::new();
        if !query.is_all_times() {
            conditions.push("timestamp >= ?1 AND timestamp <= ?2".to_owned());
            params.push(i64::try_from(query.start).unwrap_or(i64::MAX));
            params.push(i64::try_from(query.end_inclusive).unwrap_or(i64::MAX));
        }
        if let Some(ids) = &query.topics {
            let list: Vec<String> = ids.iter().map(i64::to_string).collect();
            conditions.push(format!("topic_id IN ({})", list.join(",")));
        }
        if !conditions.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(&conditions.join(" AND "));
        }
        sql.push_str(match query.order {
            // Topic order reaches a file as one query per topic, each in log-time order.
            Order::LogTime | Order::Topic => " ORDER BY timestamp, id",
            Order::ReverseLogTime => " ORDER BY timestamp DESC, id DESC",
            Order::File => " ORDER BY id",
        });
        (sql, params)
    }

    /// How `query` is answered: by the direct reading of the messages table when it can
    /// (every time, in row-id order, or in log-time order where that is row-id order, which
    /// the worker learns from the index the first time it is asked), else by SQLite.
    fn plan(&self, query: &FileQuery) -> Plan {
        let Some(direct) = self.direct.clone() else {
            return Plan::Sql;
        };
        if !query.is_all_times() {
            return Plan::Sql;
        }
        match query.order {
            Order::File => Plan::Direct(direct),
            Order::LogTime | Order::Topic => match self.rowid_is_time_order.get() {
                Some(true) => Plan::Direct(direct),
                Some(false) => Plan::Sql,
                None => Plan::DirectIfTimeOrder(direct, Arc::clone(&self.rowid_is_time_order)),
            },
            Order::ReverseLogTime => Plan::Sql,
        }
    }

    /// Streams the messages of `query` from a worker thread.
    pub(crate) fn messages(&self, query: &FileQuery) -> Result<Db3Messages> {
        let (tx, rx) = sync_channel(BATCHES_IN_FLIGHT);
        let db_path = self.db_path.clone();
        let path = self.path.clone();
        let plan = self.plan(query);
        let (sql, params) = Self::sql(query);
        let query = query.clone();
        let immutable = self.immutable;
        let mapped = self.mapped.clone();
        let buffers = self.buffers.clone();
        // The worker, not the caller, walks the index: the caller may be reading another
        // file's messages meanwhile.
        let work = move || {
            let direct = match plan {
                Plan::Direct(direct) => Some(direct),
                Plan::DirectIfTimeOrder(direct, known) => {
                    // A damaged index leaves the order to SQLite, which reports the damage.
                    let in_order = *known.get_or_init(|| {
                        direct
                            .in_time_order(&path, &db_path, mapped.clone())
                            .unwrap_or(false)
                    });
                    in_order.then_some(direct)
                }
                Plan::Sql => None,
            };
            let Some(direct) = direct else {
                return run_query(&path, &db_path, immutable, &sql, &params, &tx, buffers);
            };
            let mut batcher = Batcher::new(&tx, buffers, mapped.clone());
            match direct.run(&path, &db_path, mapped, &query, &mut batcher) {
                Ok(()) => batcher.finish(),
                Err(e) => {
                    let _ = tx.send(Err(e));
                }
            }
        };
        std::thread::Builder::new()
            .name("robolog-db3".to_owned())
            .spawn(work)
            .map_err(|e| Error::io(&self.path, e))?;
        Ok(Db3Messages {
            rx,
            batch: None,
            next: 0,
            buffers: self.buffers.clone(),
            path: self.path.clone(),
        })
    }
}

/// How a query of a `.db3` is answered.
enum Plan {
    /// By reading the messages table's pages.
    Direct(Direct),
    /// By reading the pages if row-id order is log-time order, which the index tells (once).
    DirectIfTimeOrder(Direct, Arc<OnceLock<bool>>),
    /// By SQLite.
    Sql,
}

pub(crate) fn wal_path(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push("-wal");
    PathBuf::from(s)
}

fn read_definitions(conn: &Connection) -> rusqlite::Result<HashMap<String, Definition>> {
    let mut out = HashMap::new();
    let mut stmt = conn.prepare(
        "SELECT topic_type, encoding, encoded_message_definition FROM message_definitions ORDER BY id",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let type_name = text(row.get_ref(0)?);
        let encoding = text(row.get_ref(1)?);
        let definition = text(row.get_ref(2)?);
        out.entry(type_name)
            .or_insert_with(|| Definition::from_stored(&encoding, definition));
    }
    Ok(out)
}

fn read_topics(
    conn: &Connection,
    topics_sql: &str,
    schema_version: u32,
    definitions: &HashMap<String, Definition>,
    notes: &mut Vec<Problem>,
) -> rusqlite::Result<Vec<FileTopic>> {
    let has_qos = topics_sql.contains("offered_qos_profiles");
    let has_hash = topics_sql.contains("type_description_hash");
    let sql = format!(
        "SELECT id, name, type, serialization_format, {}, {} FROM topics ORDER BY id",
        if has_qos {
            "offered_qos_profiles"
        } else {
            "''"
        },
        if has_hash {
            "type_description_hash"
        } else {
            "''"
        },
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut topics = Vec::new();
    while let Some(row) = rows.next()? {
        let Some(local_id) = row.get_ref(0)?.as_i64().ok() else {
            continue;
        };
        let name = text(row.get_ref(1)?);
        let type_name = text(row.get_ref(2)?);
        let qos_text = text(row.get_ref(4)?);
        let offered_qos_profiles = match parse_profiles(&qos_text) {
            Ok(p) => p,
            Err(e) => {
                notes.push(Problem::warning(
                    ProblemKind::Metadata,
                    None,
                    format!("topic {name}: offered_qos_profiles unreadable ({e}); read as none"),
                ));
                Vec::new()
            }
        };
        let definition = if schema_version < 4 && definitions.is_empty() {
            Definition::NotStored
        } else {
            definitions
                .get(&type_name)
                .or_else(|| definition_key(&type_name).and_then(|k| definitions.get(k)))
                .cloned()
                .unwrap_or(Definition::NotFound {
                    encoding: String::new(),
                })
        };
        topics.push(FileTopic {
            local_id,
            metadata: TopicMetadata {
                name,
                type_name,
                serialization_format: text(row.get_ref(3)?),
                offered_qos_profiles,
                type_description_hash: text(row.get_ref(5)?),
            },
            definition,
        });
    }
    Ok(topics)
}

fn read_stored_metadata(
    conn: &Connection,
    notes: &mut Vec<Problem>,
) -> rusqlite::Result<Option<BagMetadata>> {
    let row: Option<String> = conn
        .query_row(
            "SELECT metadata FROM metadata ORDER BY id DESC LIMIT 1",
            [],
            |row| Ok(text(row.get_ref(0)?)),
        )
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })?;
    Ok(
        row.and_then(|text| match BagMetadata::from_serialized(&text) {
            Ok(m) => Some(m),
            Err(e) => {
                notes.push(Problem::warning(
                    ProblemKind::Metadata,
                    None,
                    format!("the metadata table's last row is unreadable: {e}"),
                ));
                None
            }
        }),
    )
}

/// Message count and time range, from the timestamp index when there is one.
fn totals(conn: &Connection) -> rusqlite::Result<FileCounts> {
    let count: i64 = conn.query_row("SELECT COUNT(*) FROM messages", [], |r| r.get(0))?;
    let bound = |sql: &str| -> rusqlite::Result<Option<u64>> {
        conn.query_row(sql, [], |r| Ok(r.get_ref(0)?.as_i64().ok()))
            .map(|v| v.map(|v| u64::try_from(v).unwrap_or(0)))
    };
    Ok(FileCounts {
        message_count: u64::try_from(count).unwrap_or(0),
        start_ns: bound("SELECT MIN(timestamp) FROM messages")?,
        end_ns: bound("SELECT MAX(timestamp) FROM messages")?,
        per_topic: None,
    })
}

/// A batch of rows and their data, which the messages share.
pub(crate) struct Batch {
    rows: Vec<BatchRow>,
    data: Bytes,
    /// The file in memory, which rows may point into instead of `data`.
    mapped: Option<Bytes>,
}

/// A row of a batch: id, topic id, timestamp, and where its data lies: in the batch's `data`,
/// or in the file in memory (`mapped`). The messages share the batch's copy of the mapping,
/// so that its count is changed by the reader's thread alone.
struct BatchRow {
    id: i64,
    topic: i64,
    timestamp: i64,
    data: Range<usize>,
    mapped: bool,
}

/// Rows gathered into batches and sent to the reader as each fills.
pub(crate) struct Batcher<'t> {
    tx: &'t SyncSender<Result<Batch>>,
    rows: Vec<BatchRow>,
    data: Vec<u8>,
    /// Bytes of the rows gathered, those in the mapping included.
    payload: usize,
    /// The file in memory, for rows that point into it.
    mapped: Option<Bytes>,
    /// Where batch buffers come from, and go back to once the reader is done with them.
    buffers: BufferPool,
}

/// A buffer for a batch's bytes, reserved whole: growing it by doubling would copy each
/// message again, and a recycled one saves the page faults of fresh memory.
fn batch_buffer(buffers: &BufferPool) -> Vec<u8> {
    let mut buffer = buffers.take();
    buffer.clear();
    buffer.reserve(BATCH_BYTES);
    buffer
}

impl<'t> Batcher<'t> {
    /// Batches sent to `tx`, their buffers from `buffers`; rows may point into the file in
    /// memory, `mapped`.
    pub(crate) fn new(
        tx: &'t SyncSender<Result<Batch>>,
        buffers: BufferPool,
        mapped: Option<Bytes>,
    ) -> Self {
        Batcher {
            tx,
            rows: Vec::with_capacity(BATCH_ROWS),
            payload: 0,
            mapped,
            data: batch_buffer(&buffers),
            buffers,
        }
    }

    /// Adds a row (its data copied); `false` when the reader hung up.
    pub(crate) fn push(&mut self, id: i64, topic: i64, timestamp: i64, bytes: &[u8]) -> bool {
        let at = self.data.len();
        self.data.extend_from_slice(bytes);
        self.add(id, topic, timestamp, at..self.data.len(), false)
    }

    fn add(
        &mut self,
        id: i64,
        topic: i64,
        timestamp: i64,
        data: Range<usize>,
        mapped: bool,
    ) -> bool {
        self.payload += data.len();
        self.rows.push(BatchRow {
            id,
            topic,
            timestamp,
            data,
            mapped,
        });
        if self.rows.len() < BATCH_ROWS && self.payload < BATCH_BYTES {
            return true;
        }
        self.payload = 0;
        let batch = Batch {
            rows: std::mem::replace(&mut self.rows, Vec::with_capacity(BATCH_ROWS)),
            data: Bytes::from(std::mem::replace(
                &mut self.data,
                batch_buffer(&self.buffers),
            )),
            mapped: self.mapped.clone(),
        };
        self.tx.send(Ok(batch)).is_ok()
    }

    /// The bytes of the batch being gathered, to append a row's data to in place (then
    /// [`Batcher::push_at`]).
    pub(crate) fn bytes_mut(&mut self) -> &mut Vec<u8> {
        &mut self.data
    }

    /// The bytes of the batch being gathered.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.data
    }

    /// Adds a row whose data is at `range` of the file in memory (`mapped`), or of
    /// [`Batcher::bytes`], where what follows it is dropped. `false` when the reader hung up.
    pub(crate) fn push_at(
        &mut self,
        id: i64,
        topic: i64,
        timestamp: i64,
        range: Range<usize>,
        mapped: bool,
    ) -> bool {
        if !mapped {
            self.data.truncate(range.end);
        }
        self.add(id, topic, timestamp, range, mapped)
    }

    /// Sends the last rows.
    pub(crate) fn finish(self) {
        if !self.rows.is_empty() {
            let _ = self.tx.send(Ok(Batch {
                rows: self.rows,
                data: Bytes::from(self.data),
                mapped: self.mapped,
            }));
        }
    }
}

fn run_query(
    path: &Path,
    db_path: &Path,
    immutable: bool,
    sql: &str,
    params: &[i64],
    tx: &SyncSender<Result<Batch>>,
    buffers: BufferPool,
) {
    let result = (|| -> Result<()> {
        let sq = |e: rusqlite::Error| Error::sqlite(path, &e);
        let conn = connect(db_path, immutable).map_err(sq)?;
        let mut stmt = conn.prepare(sql).map_err(sq)?;
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params.iter()))
            .map_err(sq)?;
        let mut batcher = Batcher::new(tx, buffers, None);
        while let Some(row) = rows.next().map_err(sq)? {
            let id = row.get_ref(0).map_err(sq)?.as_i64().unwrap_or(-1);
            let topic = row.get_ref(1).map_err(sq)?.as_i64().map_err(|_| {
                Error::db3(
                    path,
                    format!("message row {id}: topic_id is not an integer"),
                )
            })?;
            let timestamp = row.get_ref(2).map_err(sq)?.as_i64().map_err(|_| {
                Error::db3(
                    path,
                    format!("message row {id}: timestamp is not an integer"),
                )
            })?;
            let bytes = match row.get_ref(3).map_err(sq)? {
                ValueRef::Blob(b) | ValueRef::Text(b) => b,
                ValueRef::Null => &[][..],
                _ => {
                    return Err(Error::db3(
                        path,
                        format!("message row {id}: data is not a blob"),
                    ));
                }
            };
            if !batcher.push(id, topic, timestamp, bytes) {
                // The reader was dropped.
                return Ok(());
            }
        }
        batcher.finish();
        Ok(())
    })();
    if let Err(e) = result {
        let _ = tx.send(Err(e));
    }
}

/// The messages of one `.db3` query, in the query's order.
pub(crate) struct Db3Messages {
    rx: Receiver<Result<Batch>>,
    batch: Option<Batch>,
    next: usize,
    /// Where a batch's buffer goes when its messages are all read (and dropped).
    buffers: BufferPool,
    path: PathBuf,
}

impl std::fmt::Debug for Db3Messages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db3Messages")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Iterator for Db3Messages {
    type Item = Result<RawMessage>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(batch) = &self.batch
                && let Some(row) = batch.rows.get(self.next)
            {
                self.next += 1;
                let Ok(log_time) = u64::try_from(row.timestamp) else {
                    return Some(Err(Error::NegativeTimestamp {
                        path: self.path.clone(),
                        row: row.id,
                        timestamp: row.timestamp,
                    }));
                };
                let data = match (&batch.mapped, row.mapped) {
                    (Some(mapped), true) => mapped.slice(row.data.clone()),
                    _ => batch.data.slice(row.data.clone()),
                };
                return Some(Ok(RawMessage {
                    local_topic: row.topic,
                    log_time,
                    publish_time: None,
                    sequence: None,
                    data,
                    row: row.id,
                }));
            }
            match self.rx.recv() {
                Ok(Ok(batch)) => {
                    if let Some(done) = self.batch.replace(batch) {
                        self.buffers.give(done.data);
                    }
                    self.next = 0;
                }
                Ok(Err(e)) => {
                    self.batch = None;
                    return Some(Err(e));
                }
                Err(_) => {
                    self.batch = None;
                    return None;
                }
            }
        }
    }
}
