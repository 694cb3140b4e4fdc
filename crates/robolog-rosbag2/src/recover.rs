//! Recovering a bag: every intact message of every storage file into a new, complete bag
//! directory with a metadata.yaml that agrees with it.
//!
//! - sqlite3 files SQLite reads are copied through SQLite (a `-wal` left by a killed recorder
//!   included). Files it refuses (a cut file, "database disk image is malformed") are read page
//!   by page instead ([`crate::sqlite`]'s page walker): every row whose leaf page and overflow
//!   pages are intact is kept, with the committed frames of a `-wal` laid over the file.
//! - MCAP files go through robolog-mcap's recovery (complete records, the complete messages of a
//!   cut chunk, what decodes of a damaged one).
//! - A missing or stale metadata.yaml is rebuilt from what the storage files hold.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use robolog_framing::{Decompressor, Problem, ProblemKind, Severity, read_file};

use crate::Order;
use crate::bag::{OpenOptions, Reader};
use crate::compression::{ZSTD_MAGIC, decompress_message};
use crate::definition::{Definition, definition_key};
use crate::error::{Error, Result};
use crate::mcap_storage::McapStorage;
use crate::metadata::{BagMetadata, CompressionMode, TopicMetadata};
use crate::qos::parse_profiles;
use crate::sqlite::pages::{Pages, Value, parse_record, schema};
use crate::sqlite::read::{Db3, wal_path};
use crate::storage::{FileQuery, StorageId};
use crate::writer::{WriteOptions, Writer};

/// How one storage file was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Method {
    /// Through SQLite: the file is readable.
    Sqlite,
    /// Page by page: SQLite refused the file.
    Pages,
    /// robolog-mcap's recovery.
    Mcap,
}

/// What recovery made of one storage file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    /// The file.
    pub path: PathBuf,
    /// How it was read.
    pub method: Method,
    /// Messages kept.
    pub messages_recovered: u64,
    /// Messages known lost (a lower bound).
    pub messages_lost: u64,
}

/// What [`recover`] kept and lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoverReport {
    /// Per input storage file.
    pub files: Vec<FileReport>,
    /// Messages in the output.
    pub messages_recovered: u64,
    /// Messages known lost (a lower bound: rows whose cells are damaged, rows missing from a
    /// table whose row ids should run without gaps, what metadata.yaml counted beyond).
    pub messages_lost: u64,
    /// True when metadata.yaml was missing, unreadable or disagreed with the storage.
    pub metadata_rebuilt: bool,
    /// What was found.
    pub problems: Vec<Problem>,
    /// The metadata written.
    pub metadata: BagMetadata,
}

impl RecoverReport {
    /// True when nothing was lost.
    pub fn is_lossless(&self) -> bool {
        self.messages_lost == 0 && self.problems.iter().all(|p| p.severity < Severity::Error)
    }
}

/// Writes to `output` (a new bag directory) every intact message of the bag at `input` (a bag
/// directory, with or without a usable metadata.yaml, or a single storage file), in the input's
/// storage, uncompressed.
pub fn recover(input: impl AsRef<Path>, output: impl AsRef<Path>) -> Result<RecoverReport> {
    let input = input.as_ref();
    let (files, metadata, mut problems) = input_files(input)?;
    let compression = metadata.as_ref().and_then(|m| m.compression().ok());
    let storage = match files.first() {
        Some(f) => sniff_storage(f)?,
        None => StorageId::Sqlite3,
    };
    let distro = metadata
        .as_ref()
        .map(|m| m.ros_distro.clone())
        .unwrap_or_default();
    let mut writer = Writer::create(
        output.as_ref(),
        WriteOptions::new().storage(storage).ros_distro(distro),
    )?;
    let mut topics: HashMap<String, u32> = HashMap::new();
    let mut reports = Vec::new();
    let mut decompressor = Decompressor::new();
    let unpack = |d: &mut Decompressor, data: &[u8]| -> Result<Vec<u8>> {
        let compressed = match compression {
            Some(CompressionMode::Message) => true,
            Some(_) => false,
            None => data.starts_with(&ZSTD_MAGIC),
        };
        if compressed {
            decompress_message(d, data, 1 << 30)
                .map(|b| b.to_vec())
                .map_err(|source| Error::Codec {
                    path: input.to_path_buf(),
                    what: "a message".to_owned(),
                    source,
                })
        } else {
            Ok(data.to_vec())
        }
    };
    for file in &files {
        let mut sink = |topic: &TopicMetadata,
                        definition: &Definition,
                        time: u64,
                        publish: Option<u64>,
                        data: &[u8]|
         -> Result<()> {
            let id = match topics.get(&topic.name) {
                Some(&id) => id,
                None => {
                    let id = writer.add_topic(topic.clone(), definition.clone())?;
                    topics.insert(topic.name.clone(), id);
                    id
                }
            };
            let data = unpack(&mut decompressor, data)?;
            writer.write_published(id, time, publish.unwrap_or(time), &data)
        };
        let report = match sniff_storage(file)? {
            StorageId::Sqlite3 => recover_db3(file, &mut sink, &mut problems)?,
            StorageId::Mcap => recover_mcap(file, &mut sink, &mut problems)?,
        };
        reports.push(report);
    }
    let written = writer.finish()?;
    let recovered: u64 = reports.iter().map(|r| r.messages_recovered).sum();
    let mut lost: u64 = reports.iter().map(|r| r.messages_lost).sum();
    if let Some(m) = &metadata {
        lost = lost.max(m.message_count.saturating_sub(recovered));
    }
    let metadata_rebuilt = input.is_dir()
        && (metadata.is_none()
            || metadata
                .as_ref()
                .is_some_and(|m| m.message_count != recovered));
    Ok(RecoverReport {
        files: reports,
        messages_recovered: recovered,
        messages_lost: lost,
        metadata_rebuilt,
        problems,
        metadata: written,
    })
}

/// The storage files of `input`, its metadata.yaml when readable, and what was noticed.
fn input_files(input: &Path) -> Result<(Vec<PathBuf>, Option<BagMetadata>, Vec<Problem>)> {
    if !input.is_dir() {
        return Ok((vec![input.to_path_buf()], None, Vec::new()));
    }
    let mut problems = Vec::new();
    let yaml = input.join(crate::METADATA_FILE);
    let metadata = std::fs::read_to_string(&yaml).ok().and_then(|text| {
        BagMetadata::from_yaml(&text)
            .map_err(|e| {
                problems.push(
                    Problem::warning(
                        ProblemKind::Metadata,
                        None,
                        format!("metadata.yaml is unreadable ({e}): rebuilt"),
                    )
                    .with_path(yaml.clone()),
                );
            })
            .ok()
    });
    let listed: Option<Vec<PathBuf>> = metadata.as_ref().and_then(|m| {
        m.relative_file_paths
            .iter()
            .map(|entry| crate::layout::resolve(input, entry).ok())
            .collect()
    });
    let files = match listed {
        Some(files) if !files.is_empty() => files,
        _ => {
            if metadata.is_none() && !yaml.exists() {
                problems.push(
                    Problem::warning(
                        ProblemKind::Metadata,
                        None,
                        "no metadata.yaml: rebuilt from the storage files",
                    )
                    .with_path(yaml.clone()),
                );
            }
            crate::layout::scan_directory(input).map_err(|e| Error::io(input, e))?
        }
    };
    if files.is_empty() {
        return Err(Error::NotABag {
            path: input.to_path_buf(),
            reason: "no storage files to recover".to_owned(),
        });
    }
    Ok((files, metadata, problems))
}

fn sniff_storage(path: &Path) -> Result<StorageId> {
    let name = path.to_string_lossy();
    let base = name.strip_suffix(".zstd").unwrap_or(&name);
    let mut head = [0u8; 16];
    let n = {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        f.read(&mut head).map_err(|e| Error::io(path, e))?
    };
    if let Some(s) = StorageId::sniff(&head[..n]) {
        return Ok(s);
    }
    // A file cut inside its header still names its storage by extension.
    if base.ends_with(".mcap") {
        Ok(StorageId::Mcap)
    } else if base.ends_with(".db3") {
        Ok(StorageId::Sqlite3)
    } else {
        Err(Error::NotABag {
            path: path.to_path_buf(),
            reason: "neither SQLite nor MCAP".to_owned(),
        })
    }
}

type Sink<'s> = dyn FnMut(&TopicMetadata, &Definition, u64, Option<u64>, &[u8]) -> Result<()> + 's;

/// A `.db3` through SQLite when it reads whole, page by page otherwise.
fn recover_db3(
    path: &Path,
    sink: &mut Sink<'_>,
    problems: &mut Vec<Problem>,
) -> Result<FileReport> {
    if let Some(report) = try_sqlite(path, sink)? {
        return Ok(report);
    }
    recover_pages(path, sink, problems)
}

/// Reads every message through SQLite first without keeping them, so that a file SQLite
/// refuses halfway is not half copied.
fn try_sqlite(path: &Path, sink: &mut Sink<'_>) -> Result<Option<FileReport>> {
    let Ok(bag) = OpenOptions::new().open(path) else {
        return Ok(None);
    };
    let readable = match bag.messages().order(Order::File).iter() {
        Ok(messages) => messages
            .map(|m| m.map(|_| ()))
            .collect::<Result<Vec<()>>>()
            .is_ok(),
        Err(_) => false,
    };
    let integrity = match &bag.inner.files[0].reader {
        Reader::Sqlite(db) => quick_check(db),
        Reader::Mcap(_) => false,
    };
    if !readable || !integrity {
        return Ok(None);
    }
    let mut count = 0;
    for m in bag.messages().order(Order::LogTime).iter()? {
        let m = m?;
        let topic = bag.topic(m.topic).ok_or_else(|| Error::UnknownTopic {
            path: path.to_path_buf(),
            row: -1,
            topic_id: i64::from(m.topic),
        })?;
        sink(
            &topic.metadata,
            &topic.definition,
            m.log_time,
            m.publish_time,
            &m.data,
        )?;
        count += 1;
    }
    Ok(Some(FileReport {
        path: path.to_path_buf(),
        method: Method::Sqlite,
        messages_recovered: count,
        messages_lost: 0,
    }))
}

fn quick_check(db: &Db3) -> bool {
    let Ok(conn) = crate::sqlite::connect(&db.db_path, db.immutable) else {
        return false;
    };
    conn.query_row("PRAGMA quick_check", [], |r| r.get::<_, String>(0))
        .is_ok_and(|s| s == "ok")
}

/// A message row found by the page walker: where to find it again.
struct Found {
    timestamp: i64,
    rowid: i64,
    topic: i64,
    page: u32,
}

fn recover_pages(
    path: &Path,
    sink: &mut Sink<'_>,
    problems: &mut Vec<Problem>,
) -> Result<FileReport> {
    let file = read_file(path).map_err(|e| Error::io(path, e))?;
    let wal = std::fs::read(wal_path(path)).ok();
    let pages = Pages::new(&file, wal.as_deref());
    let note = |problems: &mut Vec<Problem>, severity, kind, message: String| {
        problems.push(Problem::new(severity, kind, None, message).with_path(path));
    };
    note(
        problems,
        Severity::Error,
        ProblemKind::Malformed,
        "SQLite cannot read the file: its pages were read one by one".to_owned(),
    );
    for n in &pages.notes {
        note(
            problems,
            Severity::Warning,
            ProblemKind::Malformed,
            n.clone(),
        );
    }
    let (tables, missing_schema) = schema(&pages);
    if !missing_schema.is_empty() {
        note(
            problems,
            Severity::Error,
            ProblemKind::Malformed,
            format!("schema pages missing or damaged: {missing_schema:?}"),
        );
    }
    let root = |name: &str| tables.get(name).filter(|t| t.0 == "table").map(|t| t.1);
    let mut visited = HashSet::new();

    // Topics and definitions are small tables: read through their trees.
    let mut topic_rows: BTreeMap<i64, TopicMetadata> = BTreeMap::new();
    if let Some(r) = root("topics") {
        let (leaves, _) = pages.table_leaves(r, &mut visited);
        for leaf in leaves {
            for (rowid, payload) in pages.leaf_cells(leaf).0 {
                let Some(v) = parse_record(&payload) else {
                    continue;
                };
                let text = |i: usize| v.get(i).map(Value::text).unwrap_or_default();
                topic_rows.insert(
                    rowid,
                    TopicMetadata {
                        name: text(1),
                        type_name: text(2),
                        serialization_format: text(3),
                        offered_qos_profiles: parse_profiles(&text(4)).unwrap_or_default(),
                        type_description_hash: text(5),
                    },
                );
            }
        }
    }
    let mut definitions: HashMap<String, Definition> = HashMap::new();
    if let Some(r) = root("message_definitions") {
        let (leaves, _) = pages.table_leaves(r, &mut visited);
        for leaf in leaves {
            for (_, payload) in pages.leaf_cells(leaf).0 {
                let Some(v) = parse_record(&payload) else {
                    continue;
                };
                let text = |i: usize| v.get(i).map(Value::text).unwrap_or_default();
                definitions.insert(text(1), Definition::from_stored(&text(2), text(3)));
            }
        }
    }
    for other in ["schema", "metadata"] {
        if let Some(r) = root(other) {
            let _ = pages.table_leaves(r, &mut visited);
        }
    }

    // Messages: the tree, then every leaf no tree reaches that holds message-shaped rows.
    let mut found: Vec<Found> = Vec::new();
    let mut seen_rows: HashSet<i64> = HashSet::new();
    let mut broken = 0usize;
    let mut take_leaf =
        |leaf: u32, strict_shape: bool, found: &mut Vec<Found>, broken: &mut usize| {
            let (cells, bad) = pages.leaf_cells(leaf);
            let mut rows = Vec::new();
            for (rowid, payload) in &cells {
                let Some(v) = parse_record(payload) else {
                    continue;
                };
                match v.as_slice() {
                    [
                        Value::Null | Value::Int(_),
                        Value::Int(topic),
                        Value::Int(ts),
                        Value::Blob(_) | Value::Text(_),
                    ] => {
                        rows.push(Found {
                            timestamp: *ts,
                            rowid: *rowid,
                            topic: *topic,
                            page: leaf,
                        });
                    }
                    _ if strict_shape => return,
                    _ => {}
                }
            }
            if strict_shape && rows.is_empty() {
                return;
            }
            *broken += bad;
            for row in rows {
                if seen_rows.insert(row.rowid) {
                    found.push(row);
                }
            }
        };
    let mut missing_pages = Vec::new();
    let mut max_key = 0;
    if let Some(r) = root("messages") {
        let (leaves, missing, key) = pages.table_tree(r, &mut visited);
        missing_pages = missing;
        max_key = key;
        for leaf in leaves {
            take_leaf(leaf, false, &mut found, &mut broken);
        }
    } else {
        note(
            problems,
            Severity::Error,
            ProblemKind::Malformed,
            "the messages table is not in the schema: searching every page".to_owned(),
        );
    }
    let orphans = pages.unvisited_leaves(&visited);
    let before = found.len();
    for leaf in orphans {
        take_leaf(leaf, true, &mut found, &mut broken);
    }
    if found.len() > before {
        note(
            problems,
            Severity::Warning,
            ProblemKind::Malformed,
            format!(
                "{} message rows found on pages the table's tree no longer reaches",
                found.len() - before
            ),
        );
    }
    if !missing_pages.is_empty() {
        note(
            problems,
            Severity::Error,
            ProblemKind::Malformed,
            format!(
                "{} pages of the messages table are missing or damaged",
                missing_pages.len()
            ),
        );
    }

    found.sort_by_key(|f| (f.timestamp, f.rowid));
    let mut cache: Option<(u32, HashMap<i64, Vec<u8>>)> = None;
    let mut recovered = 0u64;
    let mut unknown_topic = 0u64;
    let mut lost_topics = HashSet::new();
    for f in &found {
        if cache.as_ref().is_none_or(|c| c.0 != f.page) {
            cache = Some((f.page, pages.leaf_cells(f.page).0.into_iter().collect()));
        }
        let Some(payload) = cache.as_ref().and_then(|c| c.1.get(&f.rowid)) else {
            continue;
        };
        let Some(values) = parse_record(payload) else {
            continue;
        };
        let data = match values.get(3) {
            Some(Value::Blob(d) | Value::Text(d)) => *d,
            _ => continue,
        };
        let Ok(time) = u64::try_from(f.timestamp) else {
            unknown_topic += 1;
            continue;
        };
        // A row whose topic row was lost is kept under a name that says so.
        let topic = topic_rows.entry(f.topic).or_insert_with(|| {
            lost_topics.insert(f.topic);
            TopicMetadata {
                name: format!("/robolog_recovered/topic_{}", f.topic),
                serialization_format: "cdr".to_owned(),
                ..TopicMetadata::default()
            }
        });
        let key = definition_key(&topic.type_name).unwrap_or(&topic.type_name);
        let definition = definitions
            .get(&topic.type_name)
            .or_else(|| definitions.get(key))
            .cloned()
            .unwrap_or(if root("message_definitions").is_some() {
                Definition::NotFound {
                    encoding: String::new(),
                }
            } else {
                Definition::NotStored
            });
        sink(topic, &definition, time, None, data)?;
        recovered += 1;
    }
    if unknown_topic > 0 {
        note(
            problems,
            Severity::Error,
            ProblemKind::Time,
            format!("{unknown_topic} message rows have a negative timestamp"),
        );
    }
    if !lost_topics.is_empty() {
        note(
            problems,
            Severity::Error,
            ProblemKind::Schema,
            format!(
                "the rows of topics {lost_topics:?} were lost: their messages are kept under /robolog_recovered/topic_<id>"
            ),
        );
    }
    // rosbag2 never deletes rows, so row ids run from 1 without gaps: every id up to the
    // largest one known (found, or named by an interior page) that was not found is lost.
    let known = found
        .iter()
        .map(|f| f.rowid)
        .max()
        .unwrap_or(0)
        .max(max_key);
    let found_below = found.iter().filter(|f| f.rowid <= known).count() as u64;
    let lost = (u64::try_from(known)
        .unwrap_or(0)
        .saturating_sub(found_below))
    .max(broken as u64)
        + unknown_topic;
    Ok(FileReport {
        path: path.to_path_buf(),
        method: Method::Pages,
        messages_recovered: recovered,
        messages_lost: lost,
    })
}

/// An MCAP storage file through robolog-mcap's recovery, then read in time order.
fn recover_mcap(
    path: &Path,
    sink: &mut Sink<'_>,
    problems: &mut Vec<Problem>,
) -> Result<FileReport> {
    let data = read_file(path).map_err(|e| Error::io(path, e))?;
    let options = robolog_mcap::WriteOptions::new()
        .profile("ros2")
        .compression(robolog_framing::Compression::None);
    let (bytes, report) =
        robolog_mcap::recover(data, Vec::new(), options).map_err(|e| Error::mcap(path, e))?;
    for d in &report.damage {
        problems.push(d.clone().with_path(path));
    }
    let temp = tempfile::NamedTempFile::new().map_err(|e| Error::io(path, e))?;
    std::fs::write(temp.path(), &bytes).map_err(|e| Error::io(temp.path(), e))?;
    drop(bytes);
    let storage = McapStorage::open(
        path,
        temp.path(),
        robolog_mcap::ReadOptions::default(),
        false,
    )?;
    let topics: HashMap<i64, (TopicMetadata, Definition)> = storage
        .view
        .topics
        .iter()
        .map(|t| (t.local_id, (t.metadata.clone(), t.definition.clone())))
        .collect();
    let mut count = 0;
    let query = FileQuery {
        topics: None,
        start: 0,
        end_inclusive: u64::MAX,
        order: Order::LogTime,
    };
    for m in storage.messages(&query)? {
        let m = m?;
        let Some((topic, definition)) = topics.get(&m.local_topic) else {
            continue;
        };
        sink(topic, definition, m.log_time, m.publish_time, &m.data)?;
        count += 1;
    }
    Ok(FileReport {
        path: path.to_path_buf(),
        method: Method::Mcap,
        messages_recovered: count,
        messages_lost: report.messages_lost,
    })
}
