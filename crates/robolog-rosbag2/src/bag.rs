//! Opening a bag: a directory with (or without) metadata.yaml, or a lone storage file; the
//! bag-wide topic list, counts and times built from its storage files.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use robolog_framing::{Problem, ProblemKind};
use robolog_mcap::ReadOptions;

use crate::compression::{FileCodecError, ZSTD_MAGIC, decompress_file};
use crate::definition::Definition;
use crate::error::{Error, Result};
use crate::layout::{METADATA_FILE, resolve, scan_directory};
use crate::mcap_storage::McapStorage;
use crate::metadata::{BagMetadata, CompressionMode, TopicMetadata};
use crate::query::Query;
use crate::sqlite::read::Db3;
use crate::storage::{FileCounts, FileView, StorageId};

/// The most bytes of metadata.yaml read (real ones are a few KiB; a long recording with
/// hundreds of topics, a few hundred KiB).
const METADATA_LIMIT: u64 = 64 << 20;

/// How to open a bag.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    mcap: ReadOptions,
    temp_dir: Option<PathBuf>,
    max_decompressed_file: u64,
    max_message_size: usize,
    mapped: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            mcap: ReadOptions::default(),
            temp_dir: None,
            max_decompressed_file: 1 << 40,
            max_message_size: 1 << 30,
            mapped: false,
        }
    }
}

impl OpenOptions {
    /// The defaults: MCAP storage read with robolog-mcap's defaults, FILE-compressed storage
    /// decompressed into the system's temporary directory.
    pub fn new() -> Self {
        Self::default()
    }

    /// How MCAP storage files are read (CRC checks, threads).
    pub fn mcap_options(mut self, options: ReadOptions) -> Self {
        self.mcap = options;
        self
    }

    /// Where FILE-compressed storage files are decompressed to (the system's temporary
    /// directory by default; rosbag2 uses the bag directory, which may be read-only).
    pub fn temp_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.temp_dir = Some(dir.into());
        self
    }

    /// Memory-maps the storage files robolog reads itself (MCAP storage, and `.db3` files read
    /// without SQLite: those without a `-wal` beside them), instead of reading them: messages
    /// share the mapped pages rather than being copied out of them, and the operating system
    /// shares the pages with other readers.
    ///
    /// # Safety
    ///
    /// The bag's storage files must be neither truncated nor written, by this or another
    /// process, while the bag or any message data read from it is alive (see
    /// `robolog_query::Input::map`): a truncated file makes the system kill the process with
    /// `SIGBUS` when a reader touches a page that is gone, and a file written meanwhile changes
    /// bytes under a reader that has checked them. A bag still being recorded does not keep
    /// that promise (rosbag2 writes `.db3` pages in place).
    #[cfg(feature = "mmap")]
    #[allow(unsafe_code)]
    pub unsafe fn memory_map(mut self) -> Self {
        self.mapped = true;
        self
    }

    /// Opens the bag at `path`: a bag directory, or a single `.db3`/`.mcap` storage file
    /// (zstd-compressed or not).
    pub fn open(&self, path: impl AsRef<Path>) -> Result<Bag> {
        open(path.as_ref(), self)
    }
}

/// What a bag is made of: a directory, or one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BagKind {
    /// A bag directory.
    Directory,
    /// A single storage file opened without a directory.
    File,
}

/// Where the bag's description comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetadataSource {
    /// The directory's metadata.yaml, which agrees with the storage files.
    File,
    /// Rebuilt from the storage files, because metadata.yaml is missing, unreadable or
    /// stale (the reason is in [`Bag::problems`]).
    Rebuilt,
    /// A lone storage file, which describes itself.
    Storage,
}

/// One storage file of a bag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageFile {
    /// The file (its `.zstd` name when FILE-compressed).
    pub path: PathBuf,
    /// Its storage.
    pub storage: StorageId,
    /// True when the file is FILE-compressed (read through a decompressed temporary copy).
    pub compressed: bool,
    /// sqlite schema version 1–4 (`None` for MCAP).
    pub sqlite_schema_version: Option<u32>,
    /// Messages in the file.
    pub message_count: u64,
    /// First receive time, ns.
    pub start_ns: Option<u64>,
    /// Last receive time, ns.
    pub end_ns: Option<u64>,
}

/// A topic of the bag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topic {
    /// Its id in this bag (1, 2, … in the order metadata.yaml or the storage lists them);
    /// messages refer to it.
    pub id: u32,
    /// Name, type, serialization format, QoS, type hash.
    pub metadata: TopicMetadata,
    /// Messages on the topic.
    pub message_count: u64,
    /// Its type's definition as the bag stores it.
    pub definition: Definition,
}

impl Topic {
    /// The topic name.
    pub fn name(&self) -> &str {
        &self.metadata.name
    }

    /// The message type (`pkg/msg/Type`).
    pub fn type_name(&self) -> &str {
        &self.metadata.type_name
    }

    /// True for a service event topic (`…/_service_event` of a `pkg/srv/Foo_Event` type, as
    /// rosbag2 decides).
    pub fn is_service_event(&self) -> bool {
        self.metadata.name.ends_with("/_service_event")
            && self.metadata.type_name.contains("/srv/")
            && self.metadata.type_name.ends_with("_Event")
    }
}

// One per storage file: the size difference costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Reader {
    Sqlite(Db3),
    Mcap(McapStorage),
}

impl Reader {
    pub(crate) fn view(&self) -> &FileView {
        match self {
            Reader::Sqlite(d) => &d.view,
            Reader::Mcap(m) => &m.view,
        }
    }
}

#[derive(Debug)]
pub(crate) struct OpenFile {
    pub(crate) info: StorageFile,
    pub(crate) reader: Reader,
    /// Local topic id → bag topic id.
    pub(crate) topic_map: HashMap<i64, u32>,
    /// Per bag topic id, messages in this file (when known).
    pub(crate) topic_counts: Option<HashMap<u32, u64>>,
    _temp: Option<tempfile::TempPath>,
}

#[derive(Debug)]
pub(crate) struct BagData {
    pub(crate) path: PathBuf,
    pub(crate) kind: BagKind,
    pub(crate) source: MetadataSource,
    pub(crate) metadata: Option<BagMetadata>,
    pub(crate) storage: StorageId,
    pub(crate) compression: Option<CompressionMode>,
    pub(crate) files: Vec<OpenFile>,
    pub(crate) topics: Vec<Topic>,
    pub(crate) message_count: u64,
    pub(crate) start_ns: Option<u64>,
    pub(crate) end_ns: Option<u64>,
    pub(crate) ros_distro: Option<String>,
    pub(crate) problems: Vec<Problem>,
    pub(crate) max_message_size: usize,
}

/// An open ROS 2 bag: a directory (metadata.yaml and its storage files, sqlite3 or MCAP) or a
/// single storage file. Cheap to clone; queries share it.
///
/// Counts, times and topics come from the storage files themselves (their indexes and
/// statistics); metadata.yaml says which files make the bag and how they are compressed. A
/// metadata.yaml that is missing or disagrees with the storage is reported in
/// [`Bag::problems`], and the bag is read from the storage files found.
#[derive(Debug, Clone)]
pub struct Bag {
    pub(crate) inner: Arc<BagData>,
}

impl Bag {
    /// Opens the bag at `path` with the default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        OpenOptions::default().open(path)
    }

    /// The path opened.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// A directory or a single file.
    pub fn kind(&self) -> BagKind {
        self.inner.kind
    }

    /// Where the bag's description comes from.
    pub fn metadata_source(&self) -> &MetadataSource {
        &self.inner.source
    }

    /// metadata.yaml as read (`None` when there is none, or it is unreadable).
    pub fn metadata(&self) -> Option<&BagMetadata> {
        self.inner.metadata.as_ref()
    }

    /// The storage of the bag's files.
    pub fn storage(&self) -> StorageId {
        self.inner.storage
    }

    /// rosbag2 compression (`None` when unknown: a lone file or a directory without
    /// metadata.yaml whose files do not say; MESSAGE-compressed payloads are then recognised by
    /// the zstd magic).
    pub fn compression(&self) -> Option<CompressionMode> {
        self.inner.compression
    }

    /// The storage files, in order.
    pub fn files(&self) -> Vec<&StorageFile> {
        self.inner.files.iter().map(|f| &f.info).collect()
    }

    /// Every topic, by id (also those without messages).
    pub fn topics(&self) -> &[Topic] {
        &self.inner.topics
    }

    /// The topic with this id.
    pub fn topic(&self, id: u32) -> Option<&Topic> {
        id.checked_sub(1)
            .and_then(|i| self.inner.topics.get(i as usize))
    }

    /// Messages in the bag, counted from the storage files.
    pub fn message_count(&self) -> u64 {
        self.inner.message_count
    }

    /// First receive time, ns (`None` without messages).
    pub fn start_ns(&self) -> Option<u64> {
        self.inner.start_ns
    }

    /// Last receive time, ns.
    pub fn end_ns(&self) -> Option<u64> {
        self.inner.end_ns
    }

    /// The ROS distribution the bag was recorded with, as the bag says (metadata.yaml v8+,
    /// the sqlite `schema` table, the MCAP `rosbag2` record); `None` when it does not say or
    /// says `""`.
    pub fn ros_distro(&self) -> Option<&str> {
        self.inner.ros_distro.as_deref()
    }

    /// What opening noticed: a missing or stale metadata.yaml, a `-wal` file that could not be
    /// read, an MCAP file without summary.
    pub fn problems(&self) -> &[Problem] {
        &self.inner.problems
    }

    /// A query over the messages: all of them in receive-time order unless narrowed down.
    pub fn messages(&self) -> Query<'_> {
        Query::new(self)
    }
}

fn open(path: &Path, options: &OpenOptions) -> Result<Bag> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    let mut problems = Vec::new();
    let (kind, metadata, mut source, paths) = if meta.is_dir() {
        let (metadata, source, paths) = directory_files(path, &mut problems)?;
        (BagKind::Directory, metadata, source, paths)
    } else {
        (
            BagKind::File,
            None,
            MetadataSource::Storage,
            vec![path.to_path_buf()],
        )
    };

    let metadata_compression = match &metadata {
        Some(m) => match m.compression() {
            Ok(c) => Some(c),
            Err(why) => {
                return Err(Error::UnsupportedCompression {
                    path: path.to_path_buf(),
                    format: m.compression_format.clone(),
                    mode: format!("{} ({why})", m.compression_mode),
                });
            }
        },
        None => None,
    };
    let declared_storage = match &metadata {
        Some(m) if !m.storage_identifier.is_empty() => {
            Some(StorageId::from_name(&m.storage_identifier).ok_or_else(|| {
                Error::UnsupportedStorage {
                    path: path.to_path_buf(),
                    storage: m.storage_identifier.clone(),
                }
            })?)
        }
        _ => None,
    };

    let temp_dir = options.temp_dir.clone().unwrap_or_else(std::env::temp_dir);
    let mut files = Vec::with_capacity(paths.len());
    for file in &paths {
        files.push(open_file(file, &temp_dir, options, kind)?);
    }
    let storage = match (declared_storage, files.first()) {
        (_, Some(f)) => f.info.storage,
        (Some(s), None) => s,
        (None, None) => StorageId::Sqlite3,
    };
    if let (Some(declared), Some(f)) = (declared_storage, files.first())
        && declared != f.info.storage
    {
        problems.push(
            Problem::warning(
                ProblemKind::Metadata,
                None,
                format!(
                    "metadata.yaml says storage {declared}, but the file is {}: read as {}",
                    f.info.storage, f.info.storage
                ),
            )
            .with_path(f.info.path.clone()),
        );
    }
    for f in &files {
        for note in &f.reader.view().notes {
            problems.push(note.clone().with_path(&f.info.path));
        }
    }

    // The stored metadata of a lone file, or of the files of a directory without metadata.yaml.
    let stored_compression = files
        .iter()
        .filter_map(|f| f.reader.view().stored_metadata.as_ref())
        .next_back()
        .and_then(|m| m.compression().ok());
    let any_compressed_file = files.iter().any(|f| f.info.compressed);
    let compression = metadata_compression
        .or(stored_compression)
        .or(any_compressed_file.then_some(CompressionMode::File));

    // Topics: metadata.yaml's order first, then what only the storage files know.
    let mut topics: Vec<Topic> = Vec::new();
    let mut by_name: HashMap<String, u32> = HashMap::new();
    if let Some(m) = &metadata {
        for t in &m.topics {
            if by_name.contains_key(&t.topic.name) {
                continue;
            }
            let id = topics.len() as u32 + 1;
            by_name.insert(t.topic.name.clone(), id);
            topics.push(Topic {
                id,
                metadata: t.topic.clone(),
                message_count: 0,
                definition: Definition::NotFound {
                    encoding: String::new(),
                },
            });
        }
    }
    let mut listed_in_metadata: Vec<bool> = vec![true; topics.len()];
    let mut seen_in_storage: Vec<bool> = vec![false; topics.len()];
    for f in &mut files {
        let view = f.reader.view().clone();
        for t in &view.topics {
            let id = match by_name.get(&t.metadata.name) {
                Some(&id) => id,
                None => {
                    let id = topics.len() as u32 + 1;
                    by_name.insert(t.metadata.name.clone(), id);
                    topics.push(Topic {
                        id,
                        metadata: t.metadata.clone(),
                        message_count: 0,
                        definition: t.definition.clone(),
                    });
                    listed_in_metadata.push(false);
                    seen_in_storage.push(false);
                    id
                }
            };
            let topic = &mut topics[id as usize - 1];
            let i = id as usize - 1;
            if !seen_in_storage[i] {
                seen_in_storage[i] = true;
                // The storage's own record is the reference for everything but the name.
                if listed_in_metadata[i] && topic.metadata.type_name != t.metadata.type_name {
                    problems.push(
                        Problem::warning(
                            ProblemKind::Metadata,
                            None,
                            format!(
                                "topic {}: metadata.yaml says type {}, the storage {}: read as {}",
                                t.metadata.name,
                                topic.metadata.type_name,
                                t.metadata.type_name,
                                t.metadata.type_name
                            ),
                        )
                        .with_path(f.info.path.clone()),
                    );
                }
                let qos = if t.metadata.offered_qos_profiles.is_empty() {
                    topic.metadata.offered_qos_profiles.clone()
                } else {
                    t.metadata.offered_qos_profiles.clone()
                };
                let hash = if t.metadata.type_description_hash.is_empty() {
                    topic.metadata.type_description_hash.clone()
                } else {
                    t.metadata.type_description_hash.clone()
                };
                topic.metadata = TopicMetadata {
                    offered_qos_profiles: qos,
                    type_description_hash: hash,
                    ..t.metadata.clone()
                };
            }
            if !matches!(topic.definition, Definition::Stored { .. }) {
                topic.definition = t.definition.clone();
            }
            f.topic_map.insert(t.local_id, id);
        }
    }

    // Counts and times from the data.
    let message_count: u64 = files.iter().map(|f| f.info.message_count).sum();
    let start_ns = files.iter().filter_map(|f| f.info.start_ns).min();
    let end_ns = files.iter().filter_map(|f| f.info.end_ns).max();
    let metadata_agrees = metadata.as_ref().is_some_and(|m| {
        m.message_count == message_count
            && m.topics.iter().map(|t| t.message_count).sum::<u64>() == message_count
            && (message_count == 0 || start_ns == Some(m.starting_time_ns))
    });
    if let Some(m) = &metadata
        && !metadata_agrees
    {
        problems.push(Problem::warning(ProblemKind::Metadata, None, format!(
                "metadata.yaml is stale: it says {} messages from {}, the storage files hold {message_count}{}; counts and times come from the storage files",
                m.message_count,
                m.starting_time_ns,
                match start_ns {
                    Some(s) => format!(" from {s}"),
                    None => String::new(),
                }
            )).with_path(path.join(METADATA_FILE)));
        source = MetadataSource::Rebuilt;
    }
    if metadata_agrees && let Some(m) = &metadata {
        for t in &m.topics {
            if let Some(&id) = by_name.get(&t.topic.name) {
                topics[id as usize - 1].message_count = t.message_count;
            }
        }
    } else {
        for f in &mut files {
            let counts = file_topic_counts(f)?;
            for (&id, &n) in &counts {
                if let Some(t) = topics.get_mut(id as usize - 1) {
                    t.message_count += n;
                }
            }
            f.topic_counts = Some(counts);
        }
    }

    let ros_distro = metadata
        .as_ref()
        .map(|m| m.ros_distro.clone())
        .filter(|d| !d.is_empty())
        .or_else(|| {
            files.iter().rev().find_map(|f| {
                let view = f.reader.view();
                view.stored_metadata
                    .as_ref()
                    .map(|m| m.ros_distro.clone())
                    .filter(|d| !d.is_empty())
                    .or_else(|| view.ros_distro.clone().filter(|d| !d.is_empty()))
            })
        });

    Ok(Bag {
        inner: Arc::new(BagData {
            path: path.to_path_buf(),
            kind,
            source,
            metadata,
            storage,
            compression,
            files,
            topics,
            message_count,
            start_ns,
            end_ns,
            ros_distro,
            problems,
            max_message_size: options.max_message_size,
        }),
    })
}

/// Messages per bag topic in one file: from the file's statistics or stored metadata when they
/// agree with its total, counted otherwise.
fn file_topic_counts(f: &mut OpenFile) -> Result<HashMap<u32, u64>> {
    let view = f.reader.view();
    let total = view.counts.message_count;
    let from_ids = |pairs: &[(i64, u64)], map: &HashMap<i64, u32>| {
        let mut out = HashMap::new();
        for &(local, n) in pairs {
            if let Some(&id) = map.get(&local) {
                *out.entry(id).or_insert(0) += n;
            }
        }
        out
    };
    if let Some(per) = &view.counts.per_topic {
        return Ok(from_ids(per, &f.topic_map));
    }
    if let Some(stored) = &view.stored_metadata
        && stored.message_count == total
        && stored.topics.iter().map(|t| t.message_count).sum::<u64>() == total
    {
        let by_name: HashMap<&str, i64> = view
            .topics
            .iter()
            .map(|t| (t.metadata.name.as_str(), t.local_id))
            .collect();
        let pairs: Vec<(i64, u64)> = stored
            .topics
            .iter()
            .filter_map(|t| Some((*by_name.get(t.topic.name.as_str())?, t.message_count)))
            .collect();
        if pairs.iter().map(|p| p.1).sum::<u64>() == total {
            return Ok(from_ids(&pairs, &f.topic_map));
        }
    }
    if let Reader::Sqlite(db) = &mut f.reader {
        db.count_topics()?;
    }
    let per = f.reader.view().counts.per_topic.clone().unwrap_or_default();
    Ok(from_ids(&per, &f.topic_map))
}

/// The metadata and storage files of a bag directory.
fn directory_files(
    dir: &Path,
    problems: &mut Vec<Problem>,
) -> Result<(Option<BagMetadata>, MetadataSource, Vec<PathBuf>)> {
    let yaml_path = dir.join(METADATA_FILE);
    let scanned = || scan_directory(dir).map_err(|e| Error::io(dir, e));
    if !yaml_path.exists() {
        let files = scanned()?;
        if files.is_empty() {
            return Err(Error::NotABag {
                path: dir.to_path_buf(),
                reason:
                    "a directory without metadata.yaml or storage files (<name>_<n>.db3 or .mcap)"
                        .to_owned(),
            });
        }
        problems.push(Problem::warning(ProblemKind::Metadata, None, format!(
                "no metadata.yaml (a recording that was not closed?): the bag was rebuilt from the {} storage file(s) in the directory; `recover` writes one",
                files.len()
            )).with_path(yaml_path));
        return Ok((None, MetadataSource::Rebuilt, files));
    }
    let text = read_limited(&yaml_path)?;
    let metadata = match BagMetadata::from_yaml(&text) {
        Ok(m) => m,
        Err(e) => {
            let files = scanned()?;
            if files.is_empty() {
                return Err(match e {
                    crate::metadata::MetadataError::Syntax {
                        line,
                        column,
                        message,
                    } => Error::Yaml {
                        path: yaml_path,
                        line,
                        column,
                        message,
                    },
                    crate::metadata::MetadataError::Key { key, message } => Error::Metadata {
                        path: yaml_path,
                        key,
                        message,
                    },
                });
            }
            problems.push(Problem::warning(ProblemKind::Metadata, None, format!(
                    "metadata.yaml is unreadable ({e}): the bag was rebuilt from the {} storage file(s) in the directory",
                    files.len()
                )).with_path(yaml_path));
            return Ok((None, MetadataSource::Rebuilt, files));
        }
    };
    if metadata.version > crate::metadata::LATEST_VERSION {
        problems.push(
            Problem::info(
                ProblemKind::Metadata,
                None,
                format!(
                    "metadata version {} is newer than {}, the newest known: read as {}",
                    metadata.version,
                    crate::metadata::LATEST_VERSION,
                    crate::metadata::LATEST_VERSION
                ),
            )
            .with_path(yaml_path.clone()),
        );
    }
    let mut files = Vec::new();
    let mut missing = None;
    for entry in &metadata.relative_file_paths {
        match resolve(dir, entry) {
            Ok(p) => files.push(p),
            Err(tried) => {
                missing = Some((entry.clone(), tried));
                break;
            }
        }
    }
    if let Some((entry, tried)) = missing {
        let found = scanned()?;
        if found.is_empty() {
            return Err(Error::MissingFile {
                bag: dir.to_path_buf(),
                entry,
                tried,
            });
        }
        problems.push(Problem::warning(ProblemKind::Metadata, None, format!(
                "metadata.yaml is stale: it lists {entry:?}, which does not exist; the bag was rebuilt from the {} storage file(s) in the directory",
                found.len()
            )).with_path(yaml_path));
        return Ok((Some(metadata), MetadataSource::Rebuilt, found));
    }
    if files.is_empty() && metadata.relative_file_paths.is_empty() {
        let found = scanned()?;
        if !found.is_empty() {
            problems.push(Problem::warning(ProblemKind::Metadata, None, format!(
                    "metadata.yaml lists no storage files, but the directory has {}: read those",
                    found.len()
                )).with_path(yaml_path));
            return Ok((Some(metadata), MetadataSource::Rebuilt, found));
        }
    }
    Ok((Some(metadata), MetadataSource::File, files))
}

fn read_limited(path: &Path) -> Result<String> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut bytes = Vec::new();
    file.take(METADATA_LIMIT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > METADATA_LIMIT {
        return Err(Error::Metadata {
            path: path.to_path_buf(),
            key: String::new(),
            message: format!("larger than {METADATA_LIMIT} bytes: not a metadata.yaml"),
        });
    }
    String::from_utf8(bytes).map_err(|e| Error::Metadata {
        path: path.to_path_buf(),
        key: String::new(),
        message: format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
    })
}

fn head(path: &Path) -> Result<Vec<u8>> {
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut head = Vec::with_capacity(16);
    (&mut file)
        .take(16)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(path, e))?;
    Ok(head)
}

fn open_file(
    path: &Path,
    temp_dir: &Path,
    options: &OpenOptions,
    kind: BagKind,
) -> Result<OpenFile> {
    let mut first = head(path)?;
    let mut temp = None;
    let mut readable = path.to_path_buf();
    let compressed = first.starts_with(&ZSTD_MAGIC);
    if compressed {
        let t = decompress_file(path, temp_dir, options.max_decompressed_file).map_err(
            |e| match e {
                FileCodecError::Io(e) => Error::io(path, e),
                FileCodecError::Codec(source) => Error::Codec {
                    path: path.to_path_buf(),
                    what: "the FILE-compressed storage file".to_owned(),
                    source,
                },
            },
        )?;
        readable = t.to_path_buf();
        first = head(&readable)?;
        temp = Some(t);
    }
    let storage = StorageId::sniff(&first).ok_or_else(|| Error::NotABag {
        path: path.to_path_buf(),
        reason: match kind {
            BagKind::File => format!(
                "neither an SQLite (.db3) nor an MCAP storage file{}",
                if compressed { " once decompressed" } else { "" }
            ),
            BagKind::Directory => "a storage file of the bag is neither SQLite nor MCAP".to_owned(),
        },
    })?;
    let reader = match storage {
        StorageId::Sqlite3 => Reader::Sqlite(Db3::open(path, &readable, options.mapped)?),
        StorageId::Mcap => Reader::Mcap(McapStorage::open(
            path,
            &readable,
            options.mcap.clone(),
            options.mapped,
        )?),
    };
    let counts: FileCounts = reader.view().counts.clone();
    Ok(OpenFile {
        info: StorageFile {
            path: path.to_path_buf(),
            storage,
            compressed,
            sqlite_schema_version: match &reader {
                Reader::Sqlite(d) => Some(d.schema_version),
                Reader::Mcap(_) => None,
            },
            message_count: counts.message_count,
            start_ns: counts.start_ns,
            end_ns: counts.end_ns,
        },
        reader,
        topic_map: HashMap::new(),
        topic_counts: None,
        _temp: temp,
    })
}
