//! Exporting logs to one Parquet (or Arrow IPC) file per topic.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use arrow::array::RecordBatch;
use arrow::ipc::writer::FileWriter;
use parquet::arrow::{ArrowSchemaConverter, ArrowWriter};
use parquet::basic::{Compression, Type as PhysicalType, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use robolog::{Channel, Filter, Log, MergedMessages};
use robolog_framing::AtomicFile;

use crate::error::{Error, Result};
use crate::layout::{BatchBuilder, TopicLayout};

/// The file format of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ExportFormat {
    /// Parquet: zstd pages, row groups of up to a million rows, the topic's metadata as
    /// key-value metadata. Extension `.parquet`.
    #[default]
    Parquet,
    /// The Arrow IPC file format (Feather v2), uncompressed, with the topic's metadata in the
    /// schema. Extension `.arrow`.
    ArrowIpc,
}

impl ExportFormat {
    /// The file name extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Parquet => "parquet",
            ExportFormat::ArrowIpc => "arrow",
        }
    }
}

/// How far an export has got, for progress bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ExportProgress {
    /// Messages exported so far.
    pub messages: u64,
    /// Messages to export in all, when known in advance (no time range).
    pub total_messages: Option<u64>,
}

/// What [`ExportOptions::progress`] calls.
type ProgressCallback<'a> = Box<dyn FnMut(&ExportProgress) + 'a>;

/// What to export and how.
///
/// ```
/// use robolog_arrow::{ExportFormat, ExportOptions};
/// let options = ExportOptions::new()
///     .format(ExportFormat::Parquet)
///     .topics(["/imu", "/camera/*"])
///     .time_range(1_700_000_000_000_000_000..)
///     .max_file_bytes(512 << 20);
/// # let _ = options;
/// ```
#[non_exhaustive]
pub struct ExportOptions<'a> {
    format: ExportFormat,
    filter: Filter,
    raw_undecodable: bool,
    max_file_bytes: u64,
    batch_rows: usize,
    batch_bytes: usize,
    row_group_rows: usize,
    progress: Option<ProgressCallback<'a>>,
}

impl std::fmt::Debug for ExportOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExportOptions")
            .field("format", &self.format)
            .field("filter", &self.filter)
            .field("raw_undecodable", &self.raw_undecodable)
            .field("max_file_bytes", &self.max_file_bytes)
            .finish_non_exhaustive()
    }
}

impl Default for ExportOptions<'_> {
    fn default() -> Self {
        ExportOptions {
            format: ExportFormat::Parquet,
            filter: Filter::new(),
            raw_undecodable: false,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            batch_rows: EXPORT_BATCH_ROWS,
            batch_bytes: EXPORT_BATCH_BYTES,
            row_group_rows: DEFAULT_ROW_GROUP_ROWS,
            progress: None,
        }
    }
}

/// Files grow to about this size before the next part of the topic starts.
const DEFAULT_MAX_FILE_BYTES: u64 = 1 << 30;
/// A batch of [`crate::TopicBatches`] closes at this many rows…
pub(crate) const DEFAULT_BATCH_ROWS: usize = 64 * 1024;
/// …or this many bytes of message data, whichever comes first: the memory a reader holds per
/// topic, whatever the topic's length.
pub(crate) const DEFAULT_BATCH_BYTES: usize = 32 << 20;
/// An export's batches are smaller: the writing thread encodes them while they are still in
/// the cache, and the few in flight (`QUEUE`) reuse the same memory from the allocator
/// instead of fresh pages for every batch. Row groups are made of many batches.
const EXPORT_BATCH_ROWS: usize = 8 * 1024;
const EXPORT_BATCH_BYTES: usize = 4 << 20;
/// Row groups of up to a million rows (and at most `ROW_GROUP_BYTES`): large enough for
/// column statistics and readers' parallelism, small enough to read one at a time.
const DEFAULT_ROW_GROUP_ROWS: usize = 1 << 20;
const ROW_GROUP_BYTES: usize = 128 << 20;
/// Batches in flight between the decoding thread and the writing thread.
const QUEUE: usize = 4;
/// Messages between progress reports.
const PROGRESS_EVERY: u64 = 4096;

impl<'a> ExportOptions<'a> {
    /// Parquet, every topic, every time, an error for channels that cannot be decoded.
    pub fn new() -> Self {
        Self::default()
    }

    /// The output format.
    pub fn format(mut self, format: ExportFormat) -> Self {
        self.format = format;
        self
    }

    /// Only topics matching these names or globs (see [`robolog::Filter`]).
    pub fn topics<S: Into<String>>(mut self, patterns: impl IntoIterator<Item = S>) -> Self {
        self.filter = self.filter.topics(patterns);
        self
    }

    /// Only messages whose log time (ns) is in `range`.
    pub fn time_range(mut self, range: impl std::ops::RangeBounds<u64>) -> Self {
        self.filter = self.filter.time_range(range);
        self
    }

    /// Replaces topics and time range by `filter`'s.
    pub fn filter(mut self, filter: Filter) -> Self {
        self.filter = filter;
        self
    }

    /// Export channels that cannot be decoded as raw bytes ([`TopicLayout::raw`]) instead of
    /// failing.
    pub fn raw_undecodable(mut self, raw: bool) -> Self {
        self.raw_undecodable = raw;
        self
    }

    /// A topic's file is closed once it holds about this many bytes, and the topic goes on in
    /// a new part (`name.part-00001.parquet`, …). At least one batch goes in each part.
    pub fn max_file_bytes(mut self, bytes: u64) -> Self {
        self.max_file_bytes = bytes.max(1);
        self
    }

    /// Called every few thousand messages and once at the end.
    pub fn progress(mut self, progress: impl FnMut(&ExportProgress) + 'a) -> Self {
        self.progress = Some(Box::new(progress));
        self
    }

    #[cfg(test)]
    pub(crate) fn batch_rows(mut self, rows: usize) -> Self {
        self.batch_rows = rows.max(1);
        self
    }
}

/// One file written by an export.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportedFile {
    /// The topic.
    pub topic: String,
    /// Where it is.
    pub path: PathBuf,
    /// Rows (messages) in it.
    pub rows: u64,
    /// Its size.
    pub bytes: u64,
}

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportReport {
    /// The files, by topic, parts in order.
    pub files: Vec<ExportedFile>,
    /// Messages exported.
    pub messages: u64,
    /// Topics exported as raw bytes (see [`ExportOptions::raw_undecodable`]).
    pub raw_topics: Vec<String>,
    /// Selected topics without a message in the time range (no file is written for them).
    pub empty_topics: Vec<String>,
    /// Topic patterns that matched no topic of any input.
    pub unmatched_topics: Vec<String>,
}

/// The file name of a topic: the topic without its leading `/`, each further `/` as `.`,
/// letters, digits, `_` and `-` as they are and every other byte as `~XX` (hex), so that
/// names are unambiguous and safe for every file system and for Hadoop paths
/// (`/camera/image_raw` → `camera.image_raw`, `/a.b` → `a~2Eb`).
pub fn topic_file_stem(topic: &str) -> String {
    let trimmed = topic.strip_prefix('/').unwrap_or(topic);
    if trimmed.is_empty() {
        return "~".to_owned();
    }
    let mut out = String::with_capacity(trimmed.len());
    for byte in trimmed.bytes() {
        match byte {
            b'/' => out.push('.'),
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' => out.push(byte as char),
            other => out.push_str(&format!("~{other:02X}")),
        }
    }
    out
}

/// One topic of an export: its layout and the channels that feed it.
struct Topic {
    layout: TopicLayout,
    builder: BatchBuilder,
}

/// Exports the messages of `logs` (merged by topic, each topic's rows in log-time order) to
/// one file per topic in `out_dir` (created if missing), named by [`topic_file_stem`].
///
/// Every selected channel is checked before anything is written: a channel that cannot be
/// decoded fails the export (unless [`ExportOptions::raw_undecodable`]), and so does a topic
/// whose channels carry different types. Files are written under temporary names and renamed
/// into place when the whole export succeeds. Memory is bounded by the batch size per topic
/// and the row group being encoded, not by the length of a topic.
///
/// ```
/// let log = robolog::open(robolog_testkit::testdata::path("bags/generated/ros_comm/ref_lz4.bag"))?;
/// let out = tempfile::tempdir()?;
/// let report = robolog_arrow::export(&[&log], out.path(), robolog_arrow::ExportOptions::new())?;
/// assert_eq!(report.messages, 150);
/// assert!(out.path().join("imu.parquet").exists());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export(
    logs: &[&Log],
    out_dir: &Path,
    mut options: ExportOptions<'_>,
) -> Result<ExportReport> {
    let mut report = ExportReport::default();
    // Channels by topic, in the order topics first appear.
    let mut topics: Vec<Topic> = Vec::new();
    let mut by_topic: HashMap<String, usize> = HashMap::new();
    let mut by_channel: HashMap<usize, usize> = HashMap::new();
    let mut failures = Vec::new();
    let mut matched = vec![false; options.filter.topic_patterns().map_or(0, <[String]>::len)];
    for log in logs {
        let selection = options.filter.select(log.channels())?;
        if let Some(patterns) = options.filter.topic_patterns() {
            for (i, pattern) in patterns.iter().enumerate() {
                if !selection.unmatched.contains(pattern) {
                    matched[i] = true;
                }
            }
        }
        for channel in log.channels().iter().filter(|c| selection.contains(c.id)) {
            match add_channel(channel, &mut topics, &mut by_topic, options.raw_undecodable) {
                Ok(index) => {
                    by_channel.insert(Arc::as_ptr(channel) as usize, index);
                }
                Err(error) => failures.push(error),
            }
        }
    }
    if let Some(patterns) = options.filter.topic_patterns() {
        report.unmatched_topics = patterns
            .iter()
            .zip(&matched)
            .filter(|(_, m)| !**m)
            .map(|(p, _)| p.clone())
            .collect();
    }
    match failures.len() {
        0 => {}
        1 => return Err(failures.remove(0)),
        _ => return Err(Error::Channels(failures)),
    }
    report.raw_topics = topics
        .iter()
        .filter(|t| t.layout.is_raw())
        .map(|t| t.layout.topic().to_owned())
        .collect();
    let out_dir_guard = NewDirectories::create(out_dir)?;

    let total = options
        .filter
        .is_everything()
        .then(|| {
            logs.iter()
                .map(|l| l.summary().map(|s| s.message_count))
                .sum::<robolog::Result<u64>>()
        })
        .transpose()?;
    let settings = Settings {
        format: options.format,
        out_dir: out_dir.to_path_buf(),
        max_file_bytes: options.max_file_bytes,
        row_group_rows: options.row_group_rows,
    };
    let layouts: Vec<TopicLayout> = topics.iter().map(|t| t.layout.clone()).collect();
    let (sender, receiver) = sync_channel::<(usize, RecordBatch)>(QUEUE);
    let mut progress = ExportProgress {
        messages: 0,
        total_messages: total,
    };
    let (decoded, written) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| write_all(receiver, &layouts, &settings));
        let decoded = decode_all(
            logs,
            &options.filter,
            &mut topics,
            &by_channel,
            &sender,
            options.batch_rows,
            options.batch_bytes,
            &mut progress,
            &mut options.progress,
        );
        drop(sender);
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(Error::internal("the writing thread panicked")));
        (decoded, written)
    });
    // A failed write stops the decoding (the channel closes): report the write error first.
    // On either failure the written parts are dropped uncommitted, which removes them.
    let parts = match (decoded, written) {
        (_, Err(e)) => return Err(e),
        (Err(e), Ok(_)) => return Err(e),
        (Ok(()), Ok(parts)) => parts,
    };
    let files = commit_all(parts, &layouts, &settings)?;
    out_dir_guard.keep();
    report.messages = progress.messages;
    if let Some(callback) = &mut options.progress {
        callback(&progress);
    }
    let mut with_rows = vec![false; topics.len()];
    for (topic, parts) in files.into_iter().enumerate() {
        with_rows[topic] = !parts.is_empty();
        report.files.extend(parts);
    }
    report.empty_topics = topics
        .iter()
        .zip(&with_rows)
        .filter(|(_, w)| !**w)
        .map(|(t, _)| t.layout.topic().to_owned())
        .collect();
    Ok(report)
}

/// The folders an export created for its output, removed again (when still empty) unless the
/// export succeeds: a failed export leaves the file system as it found it.
struct NewDirectories {
    /// From the output folder up to the outermost folder that did not exist.
    created: Vec<PathBuf>,
}

impl NewDirectories {
    fn create(out_dir: &Path) -> Result<Self> {
        let created: Vec<PathBuf> = out_dir
            .ancestors()
            .take_while(|dir| !dir.as_os_str().is_empty() && !dir.exists())
            .map(Path::to_path_buf)
            .collect();
        std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
        Ok(NewDirectories { created })
    }

    fn keep(mut self) {
        self.created.clear();
    }
}

impl Drop for NewDirectories {
    fn drop(&mut self) {
        for dir in &self.created {
            // Fails, as wanted, on a folder something else has put files in meanwhile.
            if std::fs::remove_dir(dir).is_err() {
                break;
            }
        }
    }
}

fn add_channel(
    channel: &Arc<Channel>,
    topics: &mut Vec<Topic>,
    by_topic: &mut HashMap<String, usize>,
    raw: bool,
) -> Result<usize> {
    if let Some(&index) = by_topic.get(&channel.topic) {
        topics[index].layout.check_channel(channel)?;
        return Ok(index);
    }
    let layout = TopicLayout::for_channel(channel, raw)?;
    let builder = layout.batch_builder(None)?;
    topics.push(Topic { layout, builder });
    by_topic.insert(channel.topic.clone(), topics.len() - 1);
    Ok(topics.len() - 1)
}

#[allow(clippy::too_many_arguments)]
fn decode_all(
    logs: &[&Log],
    filter: &Filter,
    topics: &mut [Topic],
    by_channel: &HashMap<usize, usize>,
    sender: &SyncSender<(usize, RecordBatch)>,
    batch_rows: usize,
    batch_bytes: usize,
    progress: &mut ExportProgress,
    callback: &mut Option<ProgressCallback<'_>>,
) -> Result<()> {
    let closed = || Error::internal("the writing thread stopped");
    // The last channel looked up: runs of one channel's messages skip the hash map.
    let mut last: Option<(usize, Option<usize>)> = None;
    for item in MergedMessages::new(logs, filter)? {
        let (_, message) = item?;
        let key = Arc::as_ptr(&message.channel) as usize;
        let found = match last {
            Some((k, found)) if k == key => found,
            _ => {
                let found = by_channel.get(&key).copied();
                last = Some((key, found));
                found
            }
        };
        let Some(index) = found else {
            continue;
        };
        let builder = &mut topics[index].builder;
        builder.push(&message)?;
        if builder.len() >= batch_rows || builder.data_bytes() >= batch_bytes {
            sender
                .send((index, builder.finish()?))
                .map_err(|_| closed())?;
        }
        progress.messages += 1;
        if progress.messages.is_multiple_of(PROGRESS_EVERY)
            && let Some(callback) = callback
        {
            callback(progress);
        }
    }
    for (index, topic) in topics.iter_mut().enumerate() {
        if !topic.builder.is_empty() {
            sender
                .send((index, topic.builder.finish()?))
                .map_err(|_| closed())?;
        }
    }
    Ok(())
}

struct Settings {
    format: ExportFormat,
    out_dir: PathBuf,
    max_file_bytes: u64,
    row_group_rows: usize,
}

/// The open part of one topic's output.
enum PartWriter {
    Parquet(ArrowWriter<AtomicFile>),
    Ipc(FileWriter<AtomicFile>),
}

struct Part {
    writer: PartWriter,
    rows: u64,
}

impl Part {
    fn bytes(&self) -> u64 {
        match &self.writer {
            PartWriter::Parquet(w) => (w.bytes_written() + w.in_progress_size()) as u64,
            PartWriter::Ipc(w) => w.get_ref().stream_position_hint(),
        }
    }
}

/// Bytes written so far to an IPC file (its writer does not count them).
trait PositionHint {
    fn stream_position_hint(&self) -> u64;
}

impl PositionHint for AtomicFile {
    fn stream_position_hint(&self) -> u64 {
        std::fs::metadata(self.temp_path()).map_or(0, |m| m.len())
    }
}

/// Each topic's finished parts, not committed yet, with their row counts.
type Parts = Vec<Vec<(AtomicFile, u64)>>;

/// Receives batches and writes them, topic by topic; returns each topic's finished parts,
/// which [`commit_all`] gives their names once the whole export has succeeded.
fn write_all(
    receiver: Receiver<(usize, RecordBatch)>,
    layouts: &[TopicLayout],
    settings: &Settings,
) -> Result<Parts> {
    let mut open: Vec<Option<Part>> = layouts.iter().map(|_| None).collect();
    let mut done: Vec<Vec<(AtomicFile, u64)>> = layouts.iter().map(|_| Vec::new()).collect();
    for (topic, batch) in receiver {
        let layout = &layouts[topic];
        let part = match &mut open[topic] {
            Some(part) => part,
            slot => slot.insert(open_part(layout, settings, done[topic].len())?),
        };
        match &mut part.writer {
            PartWriter::Parquet(w) => {
                w.write(&batch)?;
                if w.in_progress_size() >= ROW_GROUP_BYTES {
                    w.flush()?;
                }
            }
            PartWriter::Ipc(w) => w.write(&batch)?,
        }
        part.rows += batch.num_rows() as u64;
        if part.bytes() >= settings.max_file_bytes
            && let Some(part) = open[topic].take()
        {
            done[topic].push(close_part(part)?);
        }
    }
    for (topic, part) in open.into_iter().enumerate() {
        if let Some(part) = part {
            done[topic].push(close_part(part)?);
        }
    }
    Ok(done)
}

/// Gives every written part its final name (which depends on the number of parts of its
/// topic); returns each topic's files.
fn commit_all(
    done: Parts,
    layouts: &[TopicLayout],
    settings: &Settings,
) -> Result<Vec<Vec<ExportedFile>>> {
    let mut files = Vec::with_capacity(layouts.len());
    for (layout, parts) in layouts.iter().zip(done) {
        let count = parts.len();
        let mut topic_files = Vec::with_capacity(count);
        for (number, (file, rows)) in parts.into_iter().enumerate() {
            let path =
                settings
                    .out_dir
                    .join(final_name(layout.topic(), settings.format, number, count));
            let committed = file.target().to_path_buf();
            file.commit().map_err(|e| Error::io(&committed, e))?;
            std::fs::rename(&committed, &path).map_err(|e| Error::io(&path, e))?;
            let bytes = std::fs::metadata(&path)
                .map_err(|e| Error::io(&path, e))?
                .len();
            topic_files.push(ExportedFile {
                topic: layout.topic().to_owned(),
                path,
                rows,
                bytes,
            });
        }
        files.push(topic_files);
    }
    Ok(files)
}

/// Where a part is committed first: a hidden name, renamed to its final name once the number
/// of parts is known.
fn temp_target(
    out_dir: &Path,
    layout: &TopicLayout,
    format: ExportFormat,
    number: usize,
) -> PathBuf {
    out_dir.join(format!(
        ".{}.part-{number:05}.{}.partial",
        topic_file_stem(layout.topic()),
        format.extension()
    ))
}

fn final_name(topic: &str, format: ExportFormat, number: usize, count: usize) -> String {
    let stem = topic_file_stem(topic);
    if count == 1 {
        format!("{stem}.{}", format.extension())
    } else {
        format!("{stem}.part-{number:05}.{}", format.extension())
    }
}

fn open_part(layout: &TopicLayout, settings: &Settings, number: usize) -> Result<Part> {
    let target = temp_target(&settings.out_dir, layout, settings.format, number);
    let file = AtomicFile::create(&target).map_err(|e| Error::io(&target, e))?;
    // The topic's metadata goes into the schema both formats store (pyarrow's `schema.metadata`
    // comes from it) and, for Parquet, also into the file's key-value metadata, where readers
    // that ignore the stored Arrow schema (DuckDB, Spark) look.
    let schema = Arc::new(
        layout
            .schema()
            .as_ref()
            .clone()
            .with_metadata(layout.metadata().clone()),
    );
    let writer = match settings.format {
        ExportFormat::Parquet => {
            let metadata = layout
                .metadata()
                .iter()
                .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
                .collect::<Vec<_>>();
            // Only byte arrays (strings, blobs) get a dictionary: frame ids and names repeat,
            // whereas sensor readings, stamps and counters rarely do, and their dictionary is
            // built, hashed into and then abandoned for plain encoding (zstd still packs the
            // values that do repeat).
            let mut properties = WriterProperties::builder()
                .set_compression(Compression::ZSTD(ZstdLevel::default()))
                .set_dictionary_enabled(false);
            let descriptor = ArrowSchemaConverter::new().convert(&schema)?;
            for column in descriptor.columns() {
                if column.physical_type() == PhysicalType::BYTE_ARRAY {
                    properties =
                        properties.set_column_dictionary_enabled(column.path().clone(), true);
                }
            }
            let properties = properties
                .set_max_row_group_row_count(Some(settings.row_group_rows))
                .set_statistics_enabled(EnabledStatistics::Page)
                .set_key_value_metadata(Some(sorted(metadata)))
                .build();
            PartWriter::Parquet(ArrowWriter::try_new(file, schema, Some(properties))?)
        }
        ExportFormat::ArrowIpc => PartWriter::Ipc(FileWriter::try_new(file, &schema)?),
    };
    Ok(Part { writer, rows: 0 })
}

fn sorted(mut metadata: Vec<KeyValue>) -> Vec<KeyValue> {
    metadata.sort_by(|a, b| a.key.cmp(&b.key));
    metadata
}

fn close_part(part: Part) -> Result<(AtomicFile, u64)> {
    let file = match part.writer {
        PartWriter::Parquet(w) => w.into_inner()?,
        PartWriter::Ipc(mut w) => {
            w.finish()?;
            w.into_inner()?
        }
    };
    Ok((file, part.rows))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn topic_file_stems_are_unambiguous_and_portable() {
        assert_eq!(topic_file_stem("/camera/image_raw"), "camera.image_raw");
        assert_eq!(topic_file_stem("/a.b"), "a~2Eb");
        assert_eq!(topic_file_stem("a/b"), "a.b");
        assert_eq!(topic_file_stem("/"), "~");
        assert_eq!(topic_file_stem("/bosdyn:k=v"), "bosdyn~3Ak~3Dv");
        assert_eq!(topic_file_stem("/é"), "~C3~A9");
    }

    /// Each file's bytes and its rows read back as one batch.
    fn exported(log: &Log, batch_rows: usize) -> Vec<(String, Vec<u8>, RecordBatch)> {
        let dir = tempfile::tempdir().unwrap();
        let options = ExportOptions::new().batch_rows(batch_rows);
        let report = export(&[log], dir.path(), options).unwrap();
        assert!(!report.files.is_empty());
        report
            .files
            .iter()
            .map(|file| {
                let bytes = std::fs::read(&file.path).unwrap();
                let reader =
                    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                        std::fs::File::open(&file.path).unwrap(),
                    )
                    .unwrap()
                    .build()
                    .unwrap();
                let schema = arrow::array::RecordBatchReader::schema(&reader);
                let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
                let rows = arrow::compute::concat_batches(&schema, &batches).unwrap();
                assert_eq!(rows.num_rows() as u64, file.rows);
                (file.topic.clone(), bytes, rows)
            })
            .collect()
    }

    #[test]
    fn exports_are_deterministic_and_the_batch_size_changes_no_row() {
        let path = robolog_testkit::testdata::path("bags/upstream/rosbag.js/example-bz2.bag");
        let log = robolog::open(path).unwrap();
        // Many small batches through the writing thread, twice: the same bytes.
        let small = exported(&log, 7);
        let again = exported(&log, 7);
        assert_eq!(small.len(), again.len());
        for (a, b) in small.iter().zip(&again) {
            assert_eq!(a.0, b.0);
            assert!(a.1 == b.1, "{}: the bytes differ between two runs", a.0);
        }
        // One batch per topic: the same rows and values.
        let whole = exported(&log, usize::MAX);
        assert_eq!(small.len(), whole.len());
        assert!(small.iter().any(|(_, _, rows)| rows.num_rows() > 1000));
        for (a, b) in small.iter().zip(&whole) {
            assert_eq!(a.0, b.0);
            assert_eq!(a.2, b.2, "{}", a.0);
        }
    }

    #[test]
    fn large_topics_are_split_into_parts_in_order() {
        let path = robolog_testkit::testdata::path("bags/upstream/rosbag.js/example-bz2.bag");
        let log = robolog::open(path).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let options = ExportOptions::new()
            .topics(["/tf"])
            .max_file_bytes(1)
            .batch_rows(500);
        let report = export(&[&log], dir.path(), options).unwrap();
        // 2688 messages in batches of 500: one batch per part.
        let names: Vec<String> = report
            .files
            .iter()
            .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            (0..6)
                .map(|i| format!("tf.part-{i:05}.parquet"))
                .collect::<Vec<_>>()
        );
        let rows: Vec<u64> = report.files.iter().map(|f| f.rows).collect();
        assert_eq!(rows, [500, 500, 500, 500, 500, 188]);
        let mut last = 0;
        for file in &report.files {
            let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                std::fs::File::open(&file.path).unwrap(),
            )
            .unwrap()
            .build()
            .unwrap();
            for batch in reader {
                let batch = batch.unwrap();
                let times = batch
                    .column(0)
                    .as_any()
                    .downcast_ref::<arrow::array::TimestampNanosecondArray>()
                    .unwrap();
                for t in times.values() {
                    assert!(*t >= last);
                    last = *t;
                }
            }
        }
        let mut on_disk: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        assert_eq!(on_disk, names);
    }
}
