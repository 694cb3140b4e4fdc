//! The single-pass writer: records go out as they come, chunks are flushed when full, and the
//! summary (indexes, statistics, offsets) is written at the end. No seeking, except that an
//! output which can seek ([`Writer::new_seekable`]) gets its uncompressed chunks written as they
//! fill, their headers patched when they close.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex, mpsc};

use robolog_framing::{Compression, Compressor, CountingWriter, Crc32, crc32};

use crate::chunk::compression_name;
use crate::error::{McapError, Result};
use crate::records::{
    Attachment, AttachmentIndex, Channel, ChunkIndex, DataEnd, Footer, Header, MAGIC, Message,
    MessageIndex, Metadata, MetadataIndex, RECORD_PREFIX, Record, Schema, Statistics, StringMap,
    SummaryOffset, op,
};
use crate::serialize::{write_message, write_message_head, write_record};

/// The default chunk size: chunks are closed once their uncompressed records reach it.
///
/// 512 KiB, half the upstream default, chosen with `benches/chunk_size.rs`: smaller chunks give
/// the compression and decoding threads finer-grained work and halve the peak memory of readers
/// and writers, for files only slightly larger; smaller still, the size cost grows faster than
/// the gain.
pub const DEFAULT_CHUNK_SIZE: u64 = 512 * 1024;

/// How the writer lays out the file: the header's profile and library, chunking and its
/// compression, and which indexes, summary records and CRCs are written. Everything the
/// specification makes optional is written by default.
///
/// ```
/// use robolog_mcap::{Compression, WriteOptions};
/// let options = WriteOptions::new()
///     .profile("ros1")
///     .compression(Compression::None)
///     .chunk_size(Some(1 << 20))
///     .threads(0)
///     .statistics(false);
/// assert_eq!(options.get_profile(), "ros1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOptions {
    pub(crate) profile: String,
    pub(crate) library: String,
    pub(crate) compression: Compression,
    pub(crate) compression_level: Option<i32>,
    pub(crate) threads: usize,
    pub(crate) chunk_size: Option<u64>,
    pub(crate) message_indexes: bool,
    pub(crate) chunk_indexes: bool,
    pub(crate) attachment_indexes: bool,
    pub(crate) metadata_indexes: bool,
    pub(crate) statistics: bool,
    pub(crate) summary_offsets: bool,
    pub(crate) repeat_schemas: bool,
    pub(crate) repeat_channels: bool,
    pub(crate) crcs: bool,
}

impl Default for WriteOptions {
    fn default() -> Self {
        Self {
            profile: String::new(),
            library: concat!("robolog-mcap/", env!("CARGO_PKG_VERSION")).to_owned(),
            compression: if Compression::Zstd.is_enabled() {
                Compression::Zstd
            } else if Compression::Lz4.is_enabled() {
                Compression::Lz4
            } else {
                Compression::None
            },
            compression_level: None,
            threads: robolog_framing::default_threads(),
            chunk_size: Some(DEFAULT_CHUNK_SIZE),
            message_indexes: true,
            chunk_indexes: true,
            attachment_indexes: true,
            metadata_indexes: true,
            statistics: true,
            summary_offsets: true,
            repeat_schemas: true,
            repeat_channels: true,
            crcs: true,
        }
    }
}

impl WriteOptions {
    /// The defaults: no profile, chunks of [`DEFAULT_CHUNK_SIZE`] compressed with zstd (lz4,
    /// then none, when the codec is not compiled in) on a thread per core, and every index,
    /// summary record and CRC written.
    pub fn new() -> Self {
        Self::default()
    }

    /// The header's profile (`""`, `ros1`, `ros2`; default `""`).
    pub fn profile(mut self, profile: impl Into<String>) -> Self {
        self.profile = profile.into();
        self
    }

    /// The header's library (default `robolog-mcap/<version>`).
    pub fn library(mut self, library: impl Into<String>) -> Self {
        self.library = library.into();
        self
    }

    /// The chunks' compression.
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// The compression level (zstd: 1..=22, negative = fast; `None`, the default: the codec's
    /// default).
    pub fn compression_level(mut self, level: Option<i32>) -> Self {
        self.compression_level = level;
        self
    }

    /// Worker threads compressing chunks while the next one fills (default: one per core; 0
    /// compresses on the writing thread). The output is the same either way.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Chunks are closed once their uncompressed records reach this many bytes (default
    /// [`DEFAULT_CHUNK_SIZE`]); `None` writes no chunks: records go straight into the data
    /// section, for small devices and files readable without decompression.
    pub fn chunk_size(mut self, bytes: Option<u64>) -> Self {
        self.chunk_size = bytes;
        self
    }

    /// Write MessageIndex records after each chunk (default on).
    pub fn message_indexes(mut self, on: bool) -> Self {
        self.message_indexes = on;
        self
    }

    /// Write ChunkIndex records in the summary (default on).
    pub fn chunk_indexes(mut self, on: bool) -> Self {
        self.chunk_indexes = on;
        self
    }

    /// Write AttachmentIndex records in the summary (default on).
    pub fn attachment_indexes(mut self, on: bool) -> Self {
        self.attachment_indexes = on;
        self
    }

    /// Write MetadataIndex records in the summary (default on).
    pub fn metadata_indexes(mut self, on: bool) -> Self {
        self.metadata_indexes = on;
        self
    }

    /// Write a Statistics record in the summary (default on).
    pub fn statistics(mut self, on: bool) -> Self {
        self.statistics = on;
        self
    }

    /// Write SummaryOffset records (default on).
    pub fn summary_offsets(mut self, on: bool) -> Self {
        self.summary_offsets = on;
        self
    }

    /// Repeat every Schema in the summary (default on).
    pub fn repeat_schemas(mut self, on: bool) -> Self {
        self.repeat_schemas = on;
        self
    }

    /// Repeat every Channel in the summary (default on).
    pub fn repeat_channels(mut self, on: bool) -> Self {
        self.repeat_channels = on;
        self
    }

    /// Compute the chunk, attachment, data-section and summary CRCs (default on; off, they are
    /// written as 0, which the specification reads as "not computed").
    pub fn crcs(mut self, on: bool) -> Self {
        self.crcs = on;
        self
    }

    /// The header's profile.
    pub fn get_profile(&self) -> &str {
        &self.profile
    }

    /// The chunks' compression.
    pub fn get_compression(&self) -> Compression {
        self.compression
    }

    /// The chunk size, `None` when no chunks are written.
    pub fn get_chunk_size(&self) -> Option<u64> {
        self.chunk_size
    }
}

/// What a chunk's records need besides their bytes to be written out.
#[derive(Debug)]
struct ChunkMeta {
    start: u64,
    end: u64,
    indexes: BTreeMap<u16, Vec<(u64, u64)>>,
}

/// A compressed chunk ready to be written: its meta, uncompressed size, CRC, compressed bytes,
/// and the uncompressed buffer (for reuse).
type Compressed = (ChunkMeta, u64, u32, Vec<u8>, Vec<u8>);

struct Job {
    seq: u64,
    records: Vec<u8>,
    out: Vec<u8>,
    crcs: bool,
}

struct Done {
    seq: u64,
    records: Vec<u8>,
    out: Vec<u8>,
    crc: u32,
    result: std::result::Result<(), robolog_framing::CodecError>,
}

/// Chunks compressed on worker threads, written back in submission order.
struct Pipeline {
    jobs: Option<mpsc::Sender<Job>>,
    results: mpsc::Receiver<Done>,
    workers: Vec<std::thread::JoinHandle<()>>,
    pending: VecDeque<ChunkMeta>,
    ready: BTreeMap<u64, Done>,
    next_submit: u64,
    next_write: u64,
    /// Chunks submitted and not yet written beyond which the writer waits for the oldest.
    max_in_flight: usize,
    /// Records buffers of written chunks, for the next chunks to fill.
    spare_records: Vec<Vec<u8>>,
    /// Compressed buffers of written chunks, for the next jobs' output. Kept apart from the
    /// records buffers: compressed chunks are smaller, and a records buffer reused for output
    /// would keep all its pages resident.
    spare_outputs: Vec<Vec<u8>>,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("workers", &self.workers.len())
            .field("in_flight", &self.pending.len())
            .finish_non_exhaustive()
    }
}

impl Pipeline {
    fn new(compression: Compression, level: Option<i32>, threads: usize) -> Self {
        let (job_tx, job_rx) = mpsc::channel::<Job>();
        let (done_tx, done_rx) = mpsc::channel::<Done>();
        let job_rx = Arc::new(Mutex::new(job_rx));
        let workers = (0..threads)
            .map(|_| {
                let jobs = Arc::clone(&job_rx);
                let done = done_tx.clone();
                std::thread::spawn(move || {
                    let mut compressor = Compressor::new(compression);
                    if let Some(level) = level {
                        compressor = compressor.with_level(level);
                    }
                    loop {
                        let job = match jobs.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => return,
                        };
                        let Ok(mut job) = job else { return };
                        job.out.clear();
                        let result = compressor.compress(&job.records, &mut job.out);
                        let crc = if job.crcs { crc32(&job.records) } else { 0 };
                        let sent = done.send(Done {
                            seq: job.seq,
                            records: job.records,
                            out: job.out,
                            crc,
                            result,
                        });
                        if sent.is_err() {
                            return;
                        }
                    }
                })
            })
            .collect();
        Self {
            jobs: Some(job_tx),
            results: done_rx,
            workers,
            pending: VecDeque::new(),
            ready: BTreeMap::new(),
            next_submit: 0,
            next_write: 0,
            // One chunk per worker plus the one that waits for a free worker keeps every worker
            // busy; more in flight would only hold more memory.
            max_in_flight: threads,
            spare_records: Vec::new(),
            spare_outputs: Vec::new(),
        }
    }

    /// A reusable buffer for the next chunk's records, if one came back.
    fn spare(&mut self) -> Option<Vec<u8>> {
        self.spare_records.pop()
    }

    /// Keeps the buffers of a written chunk for reuse: no more than the chunks in flight can
    /// use at once.
    fn recycle(&mut self, mut records: Vec<u8>, compressed: Vec<u8>) {
        let keep = self.max_in_flight + 1;
        records.clear();
        if self.spare_records.len() < keep {
            self.spare_records.push(records);
        }
        if self.spare_outputs.len() < keep {
            self.spare_outputs.push(compressed);
        }
    }

    fn submit(&mut self, records: Vec<u8>, meta: ChunkMeta, crcs: bool) -> Result<()> {
        let out = self.spare_outputs.pop().unwrap_or_default();
        let job = Job {
            seq: self.next_submit,
            records,
            out,
            crcs,
        };
        let sent = self
            .jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(job).is_ok());
        if !sent {
            return Err(McapError::Usage("the compression threads stopped".into()));
        }
        self.next_submit += 1;
        self.pending.push_back(meta);
        Ok(())
    }

    /// The next chunk in order if it is compressed (or, with `wait`, once it is; also when too
    /// many are in flight).
    fn next_done(&mut self, wait: bool) -> Result<Option<Compressed>> {
        if self.next_write == self.next_submit {
            return Ok(None);
        }
        let must_wait = wait || self.pending.len() > self.max_in_flight;
        while !self.ready.contains_key(&self.next_write) {
            let received = if must_wait {
                self.results.recv().ok()
            } else {
                match self.results.try_recv() {
                    Ok(done) => Some(done),
                    Err(mpsc::TryRecvError::Empty) => return Ok(None),
                    Err(mpsc::TryRecvError::Disconnected) => None,
                }
            };
            let Some(done) = received else {
                return Err(McapError::Usage("a compression thread died".into()));
            };
            self.ready.insert(done.seq, done);
        }
        let (Some(done), Some(meta)) = (
            self.ready.remove(&self.next_write),
            self.pending.pop_front(),
        ) else {
            return Ok(None);
        };
        self.next_write += 1;
        if let Err(source) = done.result {
            return Err(McapError::Codec { offset: 0, source });
        }
        Ok(Some((
            meta,
            done.records.len() as u64,
            done.crc,
            done.out,
            done.records,
        )))
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        self.jobs = None;
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

/// In a streamed chunk, records are gathered up to this many bytes before they are written out.
const STREAM_GATHER_BYTES: usize = 64 << 10;

/// In a streamed chunk, message data from this size on is written straight from the caller's
/// slice instead of being gathered first.
const STREAM_DIRECT_BYTES: usize = 4 << 10;

/// Moves a seekable output to an absolute position: [`Writer::new_seekable`] stores this for its
/// `W`, so that the writer itself needs no `Seek` bound.
type SeekFn<W> = fn(&mut W, u64) -> io::Result<u64>;

fn seek_to<W: Seek>(out: &mut W, at: u64) -> io::Result<u64> {
    out.seek(SeekFrom::Start(at))
}

/// A chunk whose records are going out as they come (uncompressed, seekable output).
#[derive(Debug)]
struct Streamed {
    /// Where its Chunk record starts (counted like [`Writer::position`]).
    head_at: u64,
    /// Record bytes written out so far, and their CRC.
    len: u64,
    crc: Crc32,
    /// The data-section CRC up to the chunk's head: the head is hashed when it is final.
    data_crc: Option<Crc32>,
}

/// The chunk being filled.
#[derive(Debug, Default)]
struct OpenChunk {
    /// Records not written out yet: all of them, unless the chunk is streamed.
    records: Vec<u8>,
    streamed: Option<Streamed>,
    start: u64,
    end: u64,
    messages: u64,
    indexes: BTreeMap<u16, Vec<(u64, u64)>>,
    schemas: BTreeSet<u16>,
    channels: BTreeSet<u16>,
}

impl OpenChunk {
    fn clear(&mut self) {
        self.records.clear();
        self.streamed = None;
        self.start = 0;
        self.end = 0;
        self.messages = 0;
        self.indexes.clear();
        self.schemas.clear();
        self.channels.clear();
    }

    /// The chunk's record bytes so far, written out or not.
    fn len(&self) -> u64 {
        self.streamed.as_ref().map_or(0, |s| s.len) + self.records.len() as u64
    }
}

/// Writes an MCAP file in one pass to any `Write`. Writing to a file, prefer
/// [`Writer::new_seekable`]: the same bytes, faster for uncompressed chunks.
///
/// ```
/// use std::borrow::Cow;
/// use robolog_mcap::{Channel, Message, Schema, Writer, WriteOptions};
/// let mut writer = Writer::new(Vec::new(), WriteOptions::default())?;
/// let schema = writer.register_schema("std_msgs/String", "ros1msg", b"string data\n")?;
/// let channel = writer.register_channel("/chatter", "ros1", schema, Default::default())?;
/// writer.write_message(&Message {
///     channel_id: channel,
///     sequence: 0,
///     log_time: 1_000,
///     publish_time: 1_000,
///     data: b"\x05\x00\x00\x00hello",
/// })?;
/// let bytes = writer.finish()?;
/// assert!(bytes.ends_with(b"\x89MCAP0\r\n"));
/// # Ok::<(), robolog_mcap::McapError>(())
/// ```
#[derive(Debug)]
pub struct Writer<W: Write> {
    out: CountingWriter<W>,
    opts: WriteOptions,
    compressor: Compressor,
    schemas: BTreeMap<u16, Schema<'static>>,
    channels: BTreeMap<u16, Channel<'static>>,
    chunk: OpenChunk,
    pipeline: Option<Pipeline>,
    compressed: Vec<u8>,
    scratch: Vec<u8>,
    stats: Statistics,
    chunk_indexes: Vec<ChunkIndex<'static>>,
    attachment_indexes: Vec<AttachmentIndex<'static>>,
    metadata_indexes: Vec<MetadataIndex<'static>>,
    /// Schemas and channels whose records are in the output (or in the open chunk, which goes
    /// out first): a copied chunk needs those of its messages before it.
    schemas_out: BTreeSet<u16>,
    channels_out: BTreeSet<u16>,
    /// Set by [`Writer::new_seekable`], with where the output stood when the writer started.
    seek: Option<SeekFn<W>>,
    base: u64,
}

impl<W: Write + Seek> Writer<W> {
    /// Like [`Writer::new`], for an output that can seek, such as a file. Uncompressed chunks
    /// are then written as they fill and their headers patched when they close, instead of
    /// being held in memory until then: each message is copied once less, and the writer holds
    /// 64 KiB of a chunk rather than all of it. The bytes written are the same as
    /// [`Writer::new`]'s. Compressed chunks are compressed whole, as there.
    ///
    /// The output may already hold data: the file starts where the output stands.
    pub fn new_seekable(mut out: W, opts: WriteOptions) -> Result<Self> {
        let base = out
            .stream_position()
            .map_err(|source| McapError::Io { offset: 0, source })?;
        let mut writer = Self::new(out, opts)?;
        writer.seek = Some(seek_to::<W>);
        writer.base = base;
        Ok(writer)
    }
}

impl<W: Write> Writer<W> {
    /// Starts a file: writes the magic and the Header.
    pub fn new(out: W, opts: WriteOptions) -> Result<Self> {
        let mut out = CountingWriter::new(out).with_crc();
        let mut scratch = Vec::with_capacity(64);
        scratch.extend_from_slice(&MAGIC);
        write_record(
            &Record::Header(Header {
                profile: Cow::Borrowed(&opts.profile),
                library: Cow::Borrowed(&opts.library),
            }),
            &mut scratch,
        )?;
        write_all(&mut out, &scratch)?;
        let mut compressor = Compressor::new(opts.compression);
        if let Some(level) = opts.compression_level {
            compressor = compressor.with_level(level);
        }
        let pipeline = (opts.compression != Compression::None
            && opts.threads > 0
            && opts.chunk_size.is_some())
        .then(|| Pipeline::new(opts.compression, opts.compression_level, opts.threads));
        Ok(Self {
            out,
            compressor,
            pipeline,
            opts,
            schemas: BTreeMap::new(),
            channels: BTreeMap::new(),
            chunk: OpenChunk::default(),
            compressed: Vec::new(),
            scratch,
            stats: Statistics::default(),
            chunk_indexes: Vec::new(),
            attachment_indexes: Vec::new(),
            metadata_indexes: Vec::new(),
            schemas_out: BTreeSet::new(),
            channels_out: BTreeSet::new(),
            seek: None,
            base: 0,
        })
    }

    /// Whether chunks go out as they fill (see [`Writer::new_seekable`]).
    fn streams(&self) -> bool {
        self.seek.is_some()
            && self.opts.chunk_size.is_some()
            && self.compressor.compression() == Compression::None
    }

    /// Bytes written so far.
    pub fn position(&self) -> u64 {
        self.out.position()
    }

    /// The schemas added so far.
    pub fn schemas(&self) -> &BTreeMap<u16, Schema<'static>> {
        &self.schemas
    }

    /// The channels added so far.
    pub fn channels(&self) -> &BTreeMap<u16, Channel<'static>> {
        &self.channels
    }

    /// Adds a schema with its own id (kept, so that converted files keep their ids). Adding the
    /// same schema again is a no-op; a different schema under a used id is an error.
    pub fn add_schema(&mut self, schema: &Schema<'_>) -> Result<()> {
        if schema.id == 0 {
            return Err(McapError::Usage("schema id 0 is reserved".into()));
        }
        if let Some(known) = self.schemas.get(&schema.id) {
            if known == schema {
                return Ok(());
            }
            return Err(McapError::Usage(format!(
                "schema id {} is already used by a different schema",
                schema.id
            )));
        }
        self.schemas.insert(schema.id, schema.clone().into_owned());
        self.stats.schema_count = self.stats.schema_count.saturating_add(1);
        self.emit_schema(schema.id)
    }

    /// Adds a schema under the next free id and returns the id; an identical schema added before
    /// is reused.
    pub fn register_schema(&mut self, name: &str, encoding: &str, data: &[u8]) -> Result<u16> {
        if let Some(known) = self
            .schemas
            .values()
            .find(|s| s.name == name && s.encoding == encoding && *s.data == *data)
        {
            return Ok(known.id);
        }
        let id = next_id(self.schemas.keys().next_back().copied(), 1)?;
        self.add_schema(&Schema {
            id,
            name: Cow::Borrowed(name),
            encoding: Cow::Borrowed(encoding),
            data: Cow::Borrowed(data),
        })?;
        Ok(id)
    }

    /// Adds a channel with its own id. Its schema (unless 0) must have been added.
    pub fn add_channel(&mut self, channel: &Channel<'_>) -> Result<()> {
        if channel.schema_id != 0 && !self.schemas.contains_key(&channel.schema_id) {
            return Err(McapError::Usage(format!(
                "channel {} refers to unknown schema {}",
                channel.id, channel.schema_id
            )));
        }
        if let Some(known) = self.channels.get(&channel.id) {
            if known == channel {
                return Ok(());
            }
            return Err(McapError::Usage(format!(
                "channel id {} is already used by a different channel",
                channel.id
            )));
        }
        self.channels
            .insert(channel.id, channel.clone().into_owned());
        self.stats.channel_count = self.stats.channel_count.saturating_add(1);
        self.emit_channel(channel.id)
    }

    /// Adds a channel under the next free id and returns the id; an identical channel added
    /// before is reused.
    pub fn register_channel(
        &mut self,
        topic: &str,
        message_encoding: &str,
        schema_id: u16,
        metadata: StringMap<'_>,
    ) -> Result<u16> {
        if let Some(known) = self.channels.values().find(|c| {
            c.topic == topic
                && c.message_encoding == message_encoding
                && c.schema_id == schema_id
                && c.metadata == metadata
        }) {
            return Ok(known.id);
        }
        let id = next_id(self.channels.keys().next_back().copied(), 1)?;
        self.add_channel(&Channel {
            id,
            schema_id,
            topic: Cow::Borrowed(topic),
            message_encoding: Cow::Borrowed(message_encoding),
            metadata,
        })?;
        Ok(id)
    }

    fn emit_schema(&mut self, id: u16) -> Result<()> {
        let Some(schema) = self.schemas.get(&id) else {
            return Ok(());
        };
        self.schemas_out.insert(id);
        if self.opts.chunk_size.is_some() {
            self.chunk.schemas.insert(id);
            write_record(&Record::Schema(schema.clone()), &mut self.chunk.records)
        } else {
            self.scratch.clear();
            write_record(&Record::Schema(schema.clone()), &mut self.scratch)?;
            write_all(&mut self.out, &self.scratch)
        }
    }

    fn emit_channel(&mut self, id: u16) -> Result<()> {
        let Some(channel) = self.channels.get(&id) else {
            return Ok(());
        };
        self.channels_out.insert(id);
        if self.opts.chunk_size.is_some() {
            self.chunk.channels.insert(id);
            write_record(&Record::Channel(channel.clone()), &mut self.chunk.records)
        } else {
            self.scratch.clear();
            write_record(&Record::Channel(channel.clone()), &mut self.scratch)?;
            write_all(&mut self.out, &self.scratch)
        }
    }

    /// Writes a message on a channel added before.
    pub fn write_message(&mut self, message: &Message<'_>) -> Result<()> {
        let Some(channel) = self.channels.get(&message.channel_id) else {
            return Err(McapError::Usage(format!(
                "message on unknown channel {}",
                message.channel_id
            )));
        };
        let schema_id = channel.schema_id;
        let s = &mut self.stats;
        if s.message_count == 0 {
            s.message_start_time = message.log_time;
            s.message_end_time = message.log_time;
        } else {
            s.message_start_time = s.message_start_time.min(message.log_time);
            s.message_end_time = s.message_end_time.max(message.log_time);
        }
        s.message_count += 1;
        *s.channel_message_counts
            .entry(message.channel_id)
            .or_insert(0) += 1;

        let Some(chunk_size) = self.opts.chunk_size else {
            self.scratch.clear();
            write_message(message, &mut self.scratch);
            return write_all(&mut self.out, &self.scratch);
        };
        // Each chunk carries the schema and channel of its messages, so that it can be read
        // (and recovered) on its own.
        if schema_id != 0 && !self.chunk.schemas.contains(&schema_id) {
            self.emit_schema(schema_id)?;
        }
        if !self.chunk.channels.contains(&message.channel_id) {
            self.emit_channel(message.channel_id)?;
        }
        let streams = self.streams();
        let offset = self.chunk.len();
        if streams && message.data.len() >= STREAM_DIRECT_BYTES {
            write_message_head(message, &mut self.chunk.records);
            self.spill()?;
            self.stream_out(message.data)?;
        } else {
            write_message(message, &mut self.chunk.records);
        }
        let c = &mut self.chunk;
        if c.messages == 0 {
            c.start = message.log_time;
            c.end = message.log_time;
        } else {
            c.start = c.start.min(message.log_time);
            c.end = c.end.max(message.log_time);
        }
        c.messages += 1;
        if self.opts.message_indexes {
            c.indexes
                .entry(message.channel_id)
                .or_default()
                .push((message.log_time, offset));
        }
        if c.len() >= chunk_size {
            self.flush_chunk()?;
        } else if streams && c.records.len() >= STREAM_GATHER_BYTES {
            self.spill()?;
        }
        Ok(())
    }

    /// Writes out the records gathered in a streamed chunk, starting the chunk with a
    /// placeholder head (patched when it closes) the first time.
    fn spill(&mut self) -> Result<()> {
        if self.chunk.streamed.is_none() {
            let head_at = self.out.position();
            // The head is hashed once it is final; the records are hashed as they go out, and
            // the two CRCs are joined then.
            let data_crc = self.out.suspend_crc();
            self.chunk.streamed = Some(Streamed {
                head_at,
                len: 0,
                crc: Crc32::new(),
                data_crc,
            });
            write_all(&mut self.out, &chunk_head(&ChunkHead::default()))?;
        }
        let records = std::mem::take(&mut self.chunk.records);
        let written = self.stream_out(&records);
        self.chunk.records = records;
        self.chunk.records.clear();
        written
    }

    /// Writes record bytes of a streamed chunk.
    fn stream_out(&mut self, bytes: &[u8]) -> Result<()> {
        write_all(&mut self.out, bytes)?;
        if let Some(s) = &mut self.chunk.streamed {
            s.len += bytes.len() as u64;
            if self.opts.crcs {
                s.crc.update(bytes);
            }
        }
        Ok(())
    }

    /// Closes a streamed chunk: the rest of its records, its real head over the placeholder,
    /// then its indexes.
    fn close_streamed(&mut self) -> Result<()> {
        self.spill()?;
        let (Some(s), Some(seek)) = (self.chunk.streamed.take(), self.seek) else {
            return Ok(());
        };
        let meta = ChunkMeta {
            start: self.chunk.start,
            end: self.chunk.end,
            indexes: std::mem::take(&mut self.chunk.indexes),
        };
        self.chunk.clear();
        let head = ChunkHead {
            start: meta.start,
            end: meta.end,
            uncompressed_size: s.len,
            crc: if self.opts.crcs { s.crc.value() } else { 0 },
            compression: Cow::Borrowed(""),
            records_len: s.len,
        };
        let bytes = chunk_head(&head);
        let end = self.out.position();
        let base = self.base;
        let out = self.out.get_mut();
        seek(out, base + s.head_at)
            .and_then(|_| out.write_all(&bytes))
            .and_then(|_| seek(out, base + end))
            .map_err(|source| McapError::Io {
                offset: s.head_at,
                source,
            })?;
        let mut data_crc = s.data_crc;
        if let Some(crc) = &mut data_crc {
            crc.update(&bytes);
            crc.combine(&s.crc);
        }
        self.out.resume_crc(data_crc);
        self.index_chunk(meta, s.head_at, &head)
    }

    /// Closes the current chunk (if it holds anything) and hands it to the compressors; it is
    /// written out, in order, as soon as it and every chunk before it are compressed.
    pub fn flush_chunk(&mut self) -> Result<()> {
        if self.chunk.streamed.is_some() {
            return self.close_streamed();
        }
        if self.chunk.records.is_empty() {
            return Ok(());
        }
        let recycled = self
            .pipeline
            .as_mut()
            .and_then(Pipeline::spare)
            .unwrap_or_default();
        let records = std::mem::replace(&mut self.chunk.records, recycled);
        let meta = ChunkMeta {
            start: self.chunk.start,
            end: self.chunk.end,
            indexes: std::mem::take(&mut self.chunk.indexes),
        };
        self.chunk.clear();
        let crcs = self.opts.crcs;
        match &mut self.pipeline {
            Some(pipeline) => {
                pipeline.submit(records, meta, crcs)?;
                self.write_compressed(false)
            }
            None => {
                let crc = if crcs { crc32(&records) } else { 0 };
                let compression = self.compressor.compression();
                if compression == Compression::None {
                    self.emit_chunk(meta, records.len() as u64, crc, &records)?;
                } else {
                    let mut compressed = std::mem::take(&mut self.compressed);
                    compressed.clear();
                    let result = self.compressor.compress(&records, &mut compressed);
                    let offset = self.out.position();
                    result.map_err(|source| McapError::Codec { offset, source })?;
                    self.emit_chunk(meta, records.len() as u64, crc, &compressed)?;
                    self.compressed = compressed;
                }
                self.chunk.records = records;
                self.chunk.records.clear();
                Ok(())
            }
        }
    }

    /// Writes the chunks the compressors have finished, in order; with `all`, waits for every
    /// chunk in flight (before records that must follow them, and at the end).
    fn write_compressed(&mut self, all: bool) -> Result<()> {
        loop {
            let Some(pipeline) = &mut self.pipeline else {
                return Ok(());
            };
            let Some(done) = pipeline.next_done(all)? else {
                return Ok(());
            };
            let (meta, uncompressed_len, crc, compressed, records) = done;
            let result = self.emit_chunk(meta, uncompressed_len, crc, &compressed);
            if let Some(pipeline) = &mut self.pipeline {
                pipeline.recycle(records, compressed);
            }
            result?;
        }
    }

    /// Writes a Chunk record, its MessageIndex records, and notes its ChunkIndex.
    fn emit_chunk(
        &mut self,
        meta: ChunkMeta,
        uncompressed_size: u64,
        crc: u32,
        records: &[u8],
    ) -> Result<()> {
        let chunk_start = self.out.position();
        let head = ChunkHead {
            start: meta.start,
            end: meta.end,
            uncompressed_size,
            crc,
            compression: Cow::Borrowed(compression_name(self.compressor.compression())),
            records_len: records.len() as u64,
        };
        write_all(&mut self.out, &chunk_head(&head))?;
        write_all(&mut self.out, records)?;
        self.index_chunk(meta, chunk_start, &head)
    }

    /// Writes the MessageIndex records of the chunk just written, and notes its ChunkIndex.
    fn index_chunk(&mut self, meta: ChunkMeta, chunk_start: u64, head: &ChunkHead) -> Result<()> {
        let index_start = self.out.position();
        let mut offsets = BTreeMap::new();
        if self.opts.message_indexes {
            self.scratch.clear();
            for (channel_id, entries) in meta.indexes {
                offsets.insert(channel_id, index_start + self.scratch.len() as u64);
                write_record(
                    &Record::MessageIndex(MessageIndex {
                        channel_id,
                        records: entries,
                    }),
                    &mut self.scratch,
                )?;
            }
            write_all(&mut self.out, &self.scratch)?;
        }
        let index_end = self.out.position();
        self.stats.chunk_count = self.stats.chunk_count.saturating_add(1);
        if self.opts.chunk_indexes {
            self.chunk_indexes.push(ChunkIndex {
                message_start_time: meta.start,
                message_end_time: meta.end,
                chunk_start_offset: chunk_start,
                chunk_length: RECORD_PREFIX + head.content_len(),
                message_index_offsets: offsets,
                message_index_length: index_end - index_start,
                compression: head.compression.clone(),
                compressed_size: head.records_len,
                uncompressed_size: head.uncompressed_size,
            });
        }
        Ok(())
    }

    /// Copies a whole Chunk record of another file into this one, its compressed bytes as they
    /// are: no decompression, no compression. `chunk` is the record from its opcode to its
    /// end; `message_indexes` the MessageIndex records that followed it there (they say which
    /// messages it holds). Returns the number of messages copied.
    ///
    /// The messages keep their channel ids, so the caller copies a chunk only when every
    /// channel (and schema) the chunk refers to has the same id and content here as in its
    /// file: each channel of `message_indexes` must have been added. The schemas and channels of
    /// its messages are written before it when no earlier record of this file holds them. The
    /// statistics count the messages from the message indexes, and the chunk's time span (in
    /// its header and its chunk index) is theirs; the chunk index points into this file. The
    /// chunk's CRC is copied, not checked: check it first (by decompressing)
    /// when the chunk may be damaged.
    ///
    /// The open chunk is closed first, so copying chunks between messages written one at a time
    /// keeps the file order. The output must be chunked ([`WriteOptions::chunk_size`]).
    pub fn copy_chunk(&mut self, chunk: &[u8], message_indexes: &[u8]) -> Result<u64> {
        if self.opts.chunk_size.is_none() {
            return Err(McapError::Usage(
                "a chunk cannot be copied into an unchunked file".into(),
            ));
        }
        let (mut head, indexes) = parse_copied_chunk(chunk, message_indexes)?;
        for &channel_id in indexes.keys() {
            if !self.channels.contains_key(&channel_id) {
                return Err(McapError::Usage(format!(
                    "the copied chunk holds messages on channel {channel_id}, which was not added"
                )));
            }
        }
        if self.chunk.messages == 0 && self.chunk.streamed.is_none() {
            // Only schema and channel records so far: they go into the data section as they
            // are, rather than into a chunk without messages.
            self.write_compressed(true)?;
            let records = std::mem::take(&mut self.chunk.records);
            let written = write_all(&mut self.out, &records);
            self.chunk.clear();
            self.chunk.records = records;
            self.chunk.records.clear();
            written?;
        } else {
            self.flush_chunk()?;
            self.write_compressed(true)?;
        }
        // Schemas and channels of the chunk's messages that no record holds yet go into the data
        // section, before the chunk, so that a reader meets them before their messages.
        for &channel_id in indexes.keys() {
            let schema_id = self.channels.get(&channel_id).map_or(0, |c| c.schema_id);
            if schema_id != 0 && !self.schemas_out.contains(&schema_id) {
                self.emit_unchunked(Some(schema_id), None)?;
            }
            if !self.channels_out.contains(&channel_id) {
                self.emit_unchunked(None, Some(channel_id))?;
            }
        }
        // The chunk's time span is that of its messages, as the statistics count them: a span
        // declared otherwise (by a damaged or careless writer) would make indexed readers skip
        // the chunk or read it for nothing. The header is outside the CRC, so it is corrected
        // in the copy.
        let mut span: Option<(u64, u64)> = None;
        let mut copied = 0u64;
        for (&channel_id, entries) in &indexes {
            for &(log_time, _) in entries {
                span = Some(span.map_or((log_time, log_time), |(start, end)| {
                    (start.min(log_time), end.max(log_time))
                }));
            }
            let count = entries.len() as u64;
            *self
                .stats
                .channel_message_counts
                .entry(channel_id)
                .or_insert(0) += count;
            copied += count;
        }
        if let Some((start, end)) = span {
            let s = &mut self.stats;
            if s.message_count == 0 {
                (s.message_start_time, s.message_end_time) = (start, end);
            } else {
                s.message_start_time = s.message_start_time.min(start);
                s.message_end_time = s.message_end_time.max(end);
            }
        }
        self.stats.message_count += copied;
        let chunk_start = self.out.position();
        match span {
            Some((start, end)) if (start, end) != (head.start, head.end) => {
                write_all(&mut self.out, &chunk[..RECORD_PREFIX as usize])?;
                write_all(&mut self.out, &start.to_le_bytes())?;
                write_all(&mut self.out, &end.to_le_bytes())?;
                write_all(&mut self.out, &chunk[RECORD_PREFIX as usize + 16..])?;
                (head.start, head.end) = (start, end);
            }
            _ => write_all(&mut self.out, chunk)?,
        }
        let meta = ChunkMeta {
            start: head.start,
            end: head.end,
            indexes,
        };
        self.index_chunk(meta, chunk_start, &head)?;
        Ok(copied)
    }

    /// Writes a schema or channel record straight into the data section.
    fn emit_unchunked(&mut self, schema: Option<u16>, channel: Option<u16>) -> Result<()> {
        self.scratch.clear();
        if let Some(schema) = schema.and_then(|id| self.schemas.get(&id)) {
            write_record(&Record::Schema(schema.clone()), &mut self.scratch)?;
            self.schemas_out.insert(schema.id);
        }
        if let Some(channel) = channel.and_then(|id| self.channels.get(&id)) {
            write_record(&Record::Channel(channel.clone()), &mut self.scratch)?;
            self.channels_out.insert(channel.id);
        }
        write_all(&mut self.out, &self.scratch)
    }

    /// Writes an attachment held in memory (closing the current chunk first: attachments never
    /// sit inside chunks). Its CRC is computed here.
    pub fn write_attachment(&mut self, attachment: &Attachment<'_>) -> Result<()> {
        let mut data = &attachment.data[..];
        self.write_attachment_from(
            attachment.log_time,
            attachment.create_time,
            &attachment.name,
            &attachment.media_type,
            attachment.data.len() as u64,
            &mut data,
        )
    }

    /// Writes an attachment of `size` bytes streamed from `data`, never holding it in memory.
    pub fn write_attachment_from(
        &mut self,
        log_time: u64,
        create_time: u64,
        name: &str,
        media_type: &str,
        size: u64,
        data: &mut dyn Read,
    ) -> Result<()> {
        self.flush_chunk()?;
        self.write_compressed(true)?;
        let offset = self.out.position();
        self.scratch.clear();
        self.scratch.push(op::ATTACHMENT);
        let content_len = (8 + 8 + 4 + name.len() as u64 + 4 + media_type.len() as u64 + 8 + 4)
            .checked_add(size)
            .ok_or_else(|| McapError::Usage("attachment too large".into()))?;
        self.scratch.extend_from_slice(&content_len.to_le_bytes());
        let fields_at = self.scratch.len();
        self.scratch.extend_from_slice(&log_time.to_le_bytes());
        self.scratch.extend_from_slice(&create_time.to_le_bytes());
        for s in [name, media_type] {
            let len = u32::try_from(s.len())
                .map_err(|_| McapError::Usage("attachment name too long".into()))?;
            self.scratch.extend_from_slice(&len.to_le_bytes());
            self.scratch.extend_from_slice(s.as_bytes());
        }
        self.scratch.extend_from_slice(&size.to_le_bytes());
        let mut crc = Crc32::new();
        crc.update(&self.scratch[fields_at..]);
        write_all(&mut self.out, &self.scratch)?;
        let mut sink = CrcSink {
            out: &mut self.out,
            crc: &mut crc,
        };
        let copied = io::copy(&mut data.take(size), &mut sink)
            .map_err(|source| McapError::Io { offset, source })?;
        if copied != size {
            return Err(McapError::Usage(format!(
                "attachment {name:?} promised {size} bytes but its reader gave {copied}"
            )));
        }
        let stored = if self.opts.crcs { crc.value() } else { 0 };
        write_all(&mut self.out, &stored.to_le_bytes())?;
        self.stats.attachment_count = self.stats.attachment_count.saturating_add(1);
        if self.opts.attachment_indexes {
            self.attachment_indexes.push(AttachmentIndex {
                offset,
                length: RECORD_PREFIX + content_len,
                log_time,
                create_time,
                data_size: size,
                name: Cow::Owned(name.to_owned()),
                media_type: Cow::Owned(media_type.to_owned()),
            });
        }
        Ok(())
    }

    /// Writes a Metadata record (closing the current chunk first).
    pub fn write_metadata(&mut self, metadata: &Metadata<'_>) -> Result<()> {
        self.flush_chunk()?;
        self.write_compressed(true)?;
        let offset = self.out.position();
        self.scratch.clear();
        write_record(&Record::Metadata(metadata.clone()), &mut self.scratch)?;
        write_all(&mut self.out, &self.scratch)?;
        self.stats.metadata_count = self.stats.metadata_count.saturating_add(1);
        if self.opts.metadata_indexes {
            self.metadata_indexes.push(MetadataIndex {
                offset,
                length: self.scratch.len() as u64,
                name: Cow::Owned(metadata.name.clone().into_owned()),
            });
        }
        Ok(())
    }

    /// Writes a private record (opcode 0x80–0xFF) into the data section.
    pub fn write_private_record(&mut self, opcode: u8, content: &[u8]) -> Result<()> {
        if opcode < 0x80 {
            return Err(McapError::Usage(format!(
                "opcode {opcode:#04x} is reserved for the format"
            )));
        }
        self.flush_chunk()?;
        self.write_compressed(true)?;
        self.scratch.clear();
        write_record(&Record::Unknown { opcode, content }, &mut self.scratch)?;
        write_all(&mut self.out, &self.scratch)
    }

    /// Writes the last chunk, DataEnd, the summary, the summary offsets and the Footer, and
    /// returns the output.
    pub fn finish(mut self) -> Result<W> {
        self.flush_chunk()?;
        self.write_compressed(true)?;
        self.pipeline = None;
        let data_section_crc = if self.opts.crcs {
            self.out.crc().unwrap_or(0)
        } else {
            0
        };
        self.scratch.clear();
        write_record(
            &Record::DataEnd(DataEnd { data_section_crc }),
            &mut self.scratch,
        )?;
        write_all(&mut self.out, &self.scratch)?;
        self.out.reset_crc();

        let summary_start = self.out.position();
        let mut summary = Vec::new();
        let mut groups: Vec<SummaryOffset> = Vec::new();
        let mut group = |opcode: u8, records: Vec<Record<'_>>, summary: &mut Vec<u8>| {
            if records.is_empty() {
                return Ok::<(), McapError>(());
            }
            let start = summary.len();
            for record in &records {
                write_record(record, summary)?;
            }
            groups.push(SummaryOffset {
                group_opcode: opcode,
                group_start: summary_start + start as u64,
                group_length: (summary.len() - start) as u64,
            });
            Ok(())
        };
        if self.opts.repeat_schemas {
            let records = self.schemas.values().cloned().map(Record::Schema).collect();
            group(op::SCHEMA, records, &mut summary)?;
        }
        if self.opts.repeat_channels {
            let records = self
                .channels
                .values()
                .cloned()
                .map(Record::Channel)
                .collect();
            group(op::CHANNEL, records, &mut summary)?;
        }
        if self.opts.statistics {
            group(
                op::STATISTICS,
                vec![Record::Statistics(self.stats.clone())],
                &mut summary,
            )?;
        }
        if self.opts.metadata_indexes {
            let records = self
                .metadata_indexes
                .iter()
                .cloned()
                .map(Record::MetadataIndex)
                .collect();
            group(op::METADATA_INDEX, records, &mut summary)?;
        }
        if self.opts.attachment_indexes {
            let records = self
                .attachment_indexes
                .iter()
                .cloned()
                .map(Record::AttachmentIndex)
                .collect();
            group(op::ATTACHMENT_INDEX, records, &mut summary)?;
        }
        if self.opts.chunk_indexes {
            let records = self
                .chunk_indexes
                .iter()
                .cloned()
                .map(Record::ChunkIndex)
                .collect();
            group(op::CHUNK_INDEX, records, &mut summary)?;
        }
        let summary_offset_start = if self.opts.summary_offsets && !groups.is_empty() {
            let at = summary_start + summary.len() as u64;
            for g in &groups {
                write_record(&Record::SummaryOffset(*g), &mut summary)?;
            }
            at
        } else {
            0
        };
        let footer = Footer {
            summary_start: if groups.is_empty() { 0 } else { summary_start },
            summary_offset_start,
            summary_crc: 0,
        };
        write_record(&Record::Footer(footer), &mut summary)?;
        // The summary CRC runs through the footer's summary_offset_start field.
        let crc_end = summary.len() - 4;
        write_all(&mut self.out, &summary[..crc_end])?;
        let summary_crc = if self.opts.crcs {
            self.out.crc().unwrap_or(0)
        } else {
            0
        };
        let mut tail = summary_crc.to_le_bytes().to_vec();
        tail.extend_from_slice(&MAGIC);
        write_all(&mut self.out, &tail)?;
        self.out.flush().map_err(|source| McapError::Io {
            offset: self.out.position(),
            source,
        })?;
        Ok(self.out.into_inner())
    }
}

/// The fields of a Chunk record before its records.
#[derive(Debug, Default)]
struct ChunkHead {
    start: u64,
    end: u64,
    uncompressed_size: u64,
    crc: u32,
    compression: Cow<'static, str>,
    records_len: u64,
}

impl ChunkHead {
    fn content_len(&self) -> u64 {
        8 + 8 + 8 + 4 + 4 + self.compression.len() as u64 + 8 + self.records_len
    }
}

/// A Chunk record's opcode, length and fields, up to its records.
fn chunk_head(head: &ChunkHead) -> Vec<u8> {
    let name = &head.compression;
    let mut out = Vec::with_capacity(64);
    out.push(op::CHUNK);
    out.extend_from_slice(&head.content_len().to_le_bytes());
    out.extend_from_slice(&head.start.to_le_bytes());
    out.extend_from_slice(&head.end.to_le_bytes());
    out.extend_from_slice(&head.uncompressed_size.to_le_bytes());
    out.extend_from_slice(&head.crc.to_le_bytes());
    out.extend_from_slice(&(name.len() as u32).to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&head.records_len.to_le_bytes());
    out
}

/// The head of a Chunk record given whole, and the message index entries (by channel) of the
/// MessageIndex records that follow it.
#[allow(clippy::type_complexity)]
fn parse_copied_chunk(
    chunk: &[u8],
    message_indexes: &[u8],
) -> Result<(ChunkHead, BTreeMap<u16, Vec<(u64, u64)>>)> {
    let mut records = crate::parse::RecordSplitter::new(chunk, 0);
    let raw = match records.next() {
        Some(Ok(raw)) if raw.opcode == op::CHUNK && raw.len() == chunk.len() as u64 => raw,
        Some(Err(e)) => return Err(e),
        _ => {
            return Err(McapError::Usage(
                "a copied chunk must be exactly one Chunk record".into(),
            ));
        }
    };
    let Record::Chunk(c) = raw.parse()? else {
        return Err(McapError::Usage("not a Chunk record".into()));
    };
    let head = ChunkHead {
        start: c.message_start_time,
        end: c.message_end_time,
        uncompressed_size: c.uncompressed_size,
        crc: c.uncompressed_crc,
        compression: Cow::Owned(c.compression.to_owned()),
        records_len: c.records.len() as u64,
    };
    let mut indexes: BTreeMap<u16, Vec<(u64, u64)>> = BTreeMap::new();
    for raw in crate::parse::RecordSplitter::new(message_indexes, 0) {
        let raw = raw?;
        let Record::MessageIndex(index) = raw.parse()? else {
            return Err(McapError::Usage(format!(
                "a copied chunk's indexes hold a {} record",
                crate::records::record_name(raw.opcode)
            )));
        };
        indexes
            .entry(index.channel_id)
            .or_default()
            .extend(index.records);
    }
    indexes.retain(|_, entries| !entries.is_empty());
    Ok((head, indexes))
}

fn next_id(last: Option<u16>, first: u16) -> Result<u16> {
    match last {
        None => Ok(first),
        Some(id) => id
            .checked_add(1)
            .ok_or_else(|| McapError::Usage("all 65535 ids are used".into())),
    }
}

fn write_all<W: Write>(out: &mut CountingWriter<W>, bytes: &[u8]) -> Result<()> {
    let offset = out.position();
    out.write_all(bytes)
        .map_err(|source| McapError::Io { offset, source })
}

/// Passes attachment bytes through to the output while hashing them.
struct CrcSink<'a, W: Write> {
    out: &'a mut CountingWriter<W>,
    crc: &'a mut Crc32,
}

impl<W: Write> Write for CrcSink<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
