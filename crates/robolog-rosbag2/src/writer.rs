//! Writing a bag directory: metadata.yaml and its storage files, sqlite3 or MCAP, split by size
//! or duration, zstd-compressed per file or per message.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use robolog_framing::{Compression, Compressor};

use crate::compression::{FileCodecError, compress_file, compress_message, message_compressor};
use crate::definition::Definition;
use crate::error::{Error, Result};
use crate::layout::{METADATA_FILE, storage_file_name};
use crate::mcap_writer::McapFileWriter;
use crate::metadata::{
    BagMetadata, CompressionMode, FileInformation, LATEST_VERSION, NO_START, TopicInformation,
    TopicMetadata,
};
use crate::sqlite::write::Db3Writer;
use crate::storage::StorageId;

/// How a [`Writer`] lays out the bag.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WriteOptions {
    storage: StorageId,
    compression: CompressionMode,
    metadata_version: u32,
    max_file_size: Option<u64>,
    max_file_duration: Option<u64>,
    ros_distro: String,
    custom_data: BTreeMap<String, String>,
    mcap_compression: Compression,
    library: String,
}

impl Default for WriteOptions {
    fn default() -> Self {
        Self {
            storage: StorageId::Mcap,
            compression: CompressionMode::None,
            metadata_version: LATEST_VERSION,
            max_file_size: None,
            max_file_duration: None,
            ros_distro: String::new(),
            custom_data: BTreeMap::new(),
            mcap_compression: Compression::None,
            library: concat!("robolog-rosbag2/", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }
}

impl WriteOptions {
    /// MCAP storage (the default from Iron on), uncompressed, metadata version 9, one file.
    pub fn new() -> Self {
        Self::default()
    }

    /// The storage: [`StorageId::Mcap`] (default) or [`StorageId::Sqlite3`].
    pub fn storage(mut self, storage: StorageId) -> Self {
        self.storage = storage;
        self
    }

    /// rosbag2 compression: each closed file (FILE) or each message (MESSAGE), zstd.
    pub fn compression(mut self, mode: CompressionMode) -> Self {
        self.compression = mode;
        self
    }

    /// The metadata.yaml version, 5 to 9 (9 by default; 5 for Humble's readers).
    pub fn metadata_version(mut self, version: u32) -> Self {
        self.metadata_version = version;
        self
    }

    /// Starts a new storage file before a message that would find the current one at least
    /// this many bytes long (`--max-bag-size`).
    pub fn max_file_size(mut self, bytes: u64) -> Self {
        self.max_file_size = Some(bytes);
        self
    }

    /// Starts a new storage file before a message received this long (ns) or more after the
    /// current file's first message (`--max-bag-duration`).
    pub fn max_file_duration(mut self, ns: u64) -> Self {
        self.max_file_duration = Some(ns);
        self
    }

    /// The ROS distribution recorded in metadata.yaml (v8+) and the storage files (`""` by
    /// default).
    pub fn ros_distro(mut self, distro: impl Into<String>) -> Self {
        self.ros_distro = distro.into();
        self
    }

    /// User key-value pairs for metadata.yaml (v6+).
    pub fn custom_data(mut self, data: BTreeMap<String, String>) -> Self {
        self.custom_data = data;
        self
    }

    /// MCAP chunk compression (none by default, as rosbag2; this is MCAP's own compression,
    /// not rosbag2's).
    pub fn mcap_chunk_compression(mut self, compression: Compression) -> Self {
        self.mcap_compression = compression;
        self
    }
}

// One per bag: the size difference costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum FileWriter {
    Sqlite(Db3Writer),
    Mcap(McapFileWriter),
}

#[derive(Debug)]
struct CurrentFile {
    writer: FileWriter,
    name: String,
    info: FileInformation,
    end_ns: u64,
}

#[derive(Debug)]
struct WriterTopic {
    metadata: TopicMetadata,
    definition: Definition,
    count: u64,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// Writes a rosbag2 bag directory.
///
/// The bag is written into a temporary directory beside the destination
/// (`.<name>.<pid>-<n>.tmp`), which [`Writer::finish`] completes with metadata.yaml and renames
/// into place; a writer dropped without `finish` removes it. A writer that is killed leaves that
/// directory with every storage file as far as it was committed (sqlite: the last batch of
/// messages, in the `-wal`; MCAP: the last complete chunk), which [`crate::Bag::open`] reads
/// without metadata.yaml and `recover` turns into a complete bag.
///
/// ```
/// use robolog_rosbag2::{Bag, Definition, StorageId, TopicMetadata, WriteOptions, Writer};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("my_bag");
/// let mut writer = Writer::create(&path, WriteOptions::new().storage(StorageId::Sqlite3))?;
/// let topic = writer.add_topic(
///     TopicMetadata {
///         name: "/chatter".into(),
///         type_name: "std_msgs/msg/String".into(),
///         serialization_format: "cdr".into(),
///         ..Default::default()
///     },
///     Definition::Stored { encoding: "ros2msg".into(), text: "string data\n".into() },
/// )?;
/// writer.write(topic, 1_000, b"\0\x01\0\0\x03\0\0\0hi\0")?;
/// writer.finish()?;
///
/// let bag = Bag::open(&path)?;
/// assert_eq!(bag.message_count(), 1);
/// assert_eq!(bag.files()[0].path, path.join("my_bag_0.db3"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Writer {
    target: PathBuf,
    temp: PathBuf,
    options: WriteOptions,
    topics: Vec<WriterTopic>,
    current: Option<CurrentFile>,
    files: Vec<FileInformation>,
    relative_paths: Vec<String>,
    compressor: Option<Compressor>,
    compressed: Vec<u8>,
    done: bool,
}

impl Writer {
    /// Starts a bag at `path`, which must not exist (or be an empty directory).
    pub fn create(path: impl AsRef<Path>, options: WriteOptions) -> Result<Self> {
        let target = path.as_ref().to_path_buf();
        if !(5..=LATEST_VERSION).contains(&options.metadata_version) {
            return Err(Error::Usage(format!(
                "metadata version {} cannot be written: 5 to {LATEST_VERSION}",
                options.metadata_version
            )));
        }
        if options.compression != CompressionMode::None && !Compression::Zstd.is_enabled() {
            return Err(Error::Usage(
                "rosbag2 compression needs zstd: enable the `zstd` feature".to_owned(),
            ));
        }
        check_target(&target)?;
        let name = target
            .file_name()
            .ok_or_else(|| Error::Output {
                path: target.clone(),
                message: "the bag path has no directory name".to_owned(),
            })?
            .to_string_lossy()
            .into_owned();
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let temp = loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let temp = parent.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
            match std::fs::create_dir(&temp) {
                Ok(()) => break temp,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io(&temp, e)),
            }
        };
        let compressor = (options.compression == CompressionMode::Message).then(message_compressor);
        Ok(Self {
            target,
            temp,
            options,
            topics: Vec::new(),
            current: None,
            files: Vec::new(),
            relative_paths: Vec::new(),
            compressor,
            compressed: Vec::new(),
            done: false,
        })
    }

    /// The directory being written (renamed to the destination by [`Writer::finish`]).
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// Adds a topic and returns its id for [`Writer::write`]. Names must be unique.
    pub fn add_topic(&mut self, metadata: TopicMetadata, definition: Definition) -> Result<u32> {
        if self.topics.iter().any(|t| t.metadata.name == metadata.name) {
            return Err(Error::Usage(format!(
                "topic {} was added twice",
                metadata.name
            )));
        }
        self.topics.push(WriterTopic {
            metadata,
            definition,
            count: 0,
        });
        let id = self.topics.len() as u32;
        if let Some(current) = &mut self.current {
            let qos_names = self.options.metadata_version >= 9;
            let t = &self.topics[id as usize - 1];
            register(&mut current.writer, id, t, qos_names)?;
        }
        Ok(id)
    }

    /// Writes a message received at `log_time` (ns); MCAP stores it as the publish time too.
    pub fn write(&mut self, topic: u32, log_time: u64, data: &[u8]) -> Result<()> {
        self.write_published(topic, log_time, log_time, data)
    }

    /// Writes a message with its publish time (kept by MCAP storage, dropped by sqlite).
    pub fn write_published(
        &mut self,
        topic: u32,
        log_time: u64,
        publish_time: u64,
        data: &[u8],
    ) -> Result<()> {
        if topic == 0 || topic as usize > self.topics.len() {
            return Err(Error::Usage(format!("unknown topic id {topic}")));
        }
        self.split_if_due(log_time)?;
        if self.current.is_none() {
            self.open_file(log_time)?;
        }
        let payload: &[u8] = match &mut self.compressor {
            Some(c) => {
                compress_message(c, data, &mut self.compressed).map_err(|source| Error::Codec {
                    path: self.temp.clone(),
                    what: "a message".to_owned(),
                    source,
                })?;
                &self.compressed
            }
            None => data,
        };
        let Some(current) = &mut self.current else {
            return Err(Error::Usage("no open storage file".to_owned()));
        };
        match &mut current.writer {
            FileWriter::Sqlite(w) => w.write(topic, log_time, payload)?,
            FileWriter::Mcap(w) => w.write(topic, log_time, publish_time, payload)?,
        }
        let info = &mut current.info;
        if info.message_count == 0 || log_time < info.starting_time_ns {
            info.starting_time_ns = log_time;
        }
        if info.message_count == 0 || log_time > current.end_ns {
            current.end_ns = log_time;
        }
        info.message_count += 1;
        self.topics[topic as usize - 1].count += 1;
        Ok(())
    }

    fn split_if_due(&mut self, log_time: u64) -> Result<()> {
        let Some(current) = &self.current else {
            return Ok(());
        };
        if current.info.message_count == 0 {
            return Ok(());
        }
        let size = match &current.writer {
            FileWriter::Sqlite(w) => w.size(),
            FileWriter::Mcap(w) => w.size(),
        };
        let too_big = self.options.max_file_size.is_some_and(|max| size >= max);
        let too_long = self
            .options
            .max_file_duration
            .is_some_and(|max| log_time.saturating_sub(current.info.starting_time_ns) >= max);
        if too_big || too_long {
            self.close_file()?;
        }
        Ok(())
    }

    fn open_file(&mut self, _first_time: u64) -> Result<()> {
        let name = storage_file_name(
            &self.target,
            self.files.len(),
            self.options.storage.extension(),
        );
        let path = self.temp.join(&name);
        let mut writer = match self.options.storage {
            StorageId::Sqlite3 => FileWriter::Sqlite(Db3Writer::create(
                &path,
                &self.options.ros_distro,
                &self.metadata(None),
            )?),
            StorageId::Mcap => FileWriter::Mcap(McapFileWriter::create(
                &path,
                &self.options.library,
                self.options.mcap_compression,
            )?),
        };
        // Every file registers every topic, as rosbag2's splits do.
        let qos_names = self.options.metadata_version >= 9;
        for (i, t) in self.topics.iter().enumerate() {
            register(&mut writer, i as u32 + 1, t, qos_names)?;
        }
        self.current = Some(CurrentFile {
            writer,
            info: FileInformation {
                path: name.clone(),
                starting_time_ns: NO_START,
                duration_ns: 0,
                message_count: 0,
            },
            name,
            end_ns: 0,
        });
        Ok(())
    }

    fn close_file(&mut self) -> Result<()> {
        let Some(mut current) = self.current.take() else {
            return Ok(());
        };
        current.info.duration_ns = if current.info.message_count == 0 {
            0
        } else {
            current.end_ns - current.info.starting_time_ns
        };
        let compress = self.options.compression == CompressionMode::File;
        let stored_name = if compress {
            format!("{}.zstd", current.name)
        } else {
            current.name.clone()
        };
        self.files.push(current.info.clone());
        self.relative_paths.push(stored_name.clone());
        let metadata = self.metadata(None);
        match current.writer {
            FileWriter::Sqlite(w) => w.close(&metadata)?,
            FileWriter::Mcap(w) => w.close(&metadata)?,
        }
        if compress {
            let path = self.temp.join(&current.name);
            let zstd_path = self.temp.join(&stored_name);
            compress_file(&path, &zstd_path).map_err(|e| match e {
                FileCodecError::Io(e) => Error::io(&zstd_path, e),
                FileCodecError::Codec(source) => Error::Codec {
                    path: zstd_path.clone(),
                    what: "compressing the storage file".to_owned(),
                    source,
                },
            })?;
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
        }
        Ok(())
    }

    /// The bag's metadata as written so far (`extra` adds the file being written).
    fn metadata(&self, extra: Option<&FileInformation>) -> BagMetadata {
        let mut files = self.files.clone();
        files.extend(extra.cloned());
        let with_messages: Vec<&FileInformation> =
            files.iter().filter(|f| f.message_count > 0).collect();
        let start = with_messages.iter().map(|f| f.starting_time_ns).min();
        let end = with_messages
            .iter()
            .map(|f| f.starting_time_ns + f.duration_ns)
            .max();
        BagMetadata {
            version: self.options.metadata_version,
            storage_identifier: self.options.storage.name().to_owned(),
            relative_file_paths: self.relative_paths.clone(),
            duration_ns: match (start, end) {
                (Some(s), Some(e)) => e - s,
                _ => 0,
            },
            starting_time_ns: start.unwrap_or(NO_START),
            message_count: files.iter().map(|f| f.message_count).sum(),
            topics: self
                .topics
                .iter()
                .map(|t| TopicInformation {
                    topic: t.metadata.clone(),
                    message_count: t.count,
                })
                .collect(),
            compression_format: if self.options.compression == CompressionMode::None {
                String::new()
            } else {
                "zstd".to_owned()
            },
            compression_mode: self.options.compression.metadata_name().to_owned(),
            files,
            custom_data: self.options.custom_data.clone(),
            ros_distro: self.options.ros_distro.clone(),
        }
    }

    /// Closes the last storage file, writes metadata.yaml and moves the bag into place.
    /// Returns the metadata written.
    pub fn finish(mut self) -> Result<BagMetadata> {
        if self.current.is_none() && self.files.is_empty() {
            // A bag without messages still has its (empty) storage file, as rosbag2 leaves.
            self.open_file(0)?;
        }
        self.close_file()?;
        let metadata = self.metadata(None);
        let yaml_path = self.temp.join(METADATA_FILE);
        std::fs::write(&yaml_path, metadata.to_yaml()).map_err(|e| Error::io(&yaml_path, e))?;
        check_target(&self.target)?;
        if self.target.is_dir() {
            std::fs::remove_dir(&self.target).map_err(|e| Error::io(&self.target, e))?;
        }
        std::fs::rename(&self.temp, &self.target).map_err(|e| Error::io(&self.target, e))?;
        self.done = true;
        Ok(metadata)
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if !self.done {
            // Close the storage files before removing them (sqlite keeps its files open).
            self.current = None;
            let _ = std::fs::remove_dir_all(&self.temp);
        }
    }
}

fn register(writer: &mut FileWriter, id: u32, t: &WriterTopic, qos_names: bool) -> Result<()> {
    match writer {
        FileWriter::Sqlite(w) => w.add_topic(id, &t.metadata, &t.definition, qos_names),
        FileWriter::Mcap(w) => w.add_topic(id, &t.metadata, &t.definition, qos_names),
    }
}

/// The destination must not exist, or be an empty directory.
fn check_target(target: &Path) -> Result<()> {
    match std::fs::metadata(target) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(target, e)),
        Ok(m) if m.is_dir() => {
            let empty = std::fs::read_dir(target)
                .map_err(|e| Error::io(target, e))?
                .next()
                .is_none();
            if empty {
                Ok(())
            } else {
                Err(Error::Output {
                    path: target.to_path_buf(),
                    message: "exists and is not empty: a bag is written into a new directory"
                        .to_owned(),
                })
            }
        }
        Ok(_) => Err(Error::Output {
            path: target.to_path_buf(),
            message: "exists and is a file: a bag is a directory".to_owned(),
        }),
    }
}
