//! Structural checks of a file, covering the checks of the official `mcap doctor` and the CRC,
//! magic and index rules, each problem with its byte offset.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;

use robolog_framing::{
    Crc32, Decompressor, Problem, ProblemKind, StreamError, crc32, read_exact_bounded,
};
use robolog_query::{Input, InputStream};

use crate::chunk::{DEFAULT_CHUNK_LIMIT, compression_from_name, decompress_into};
use crate::error::{McapError, Result};
use crate::linear::{frame, frame_at};
use crate::parse::{attachment_crc_span, parse_record};
use crate::records::{
    Channel, ChunkIndex, MAGIC, MessageIndex, RECORD_PREFIX, Record, Schema, Statistics, op,
    record_name,
};

/// Options of [`check_with`].
///
/// ```
/// use robolog_mcap::CheckOptions;
/// let options = CheckOptions::new().strict_message_order(true).max_chunk_size(256 << 20);
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CheckOptions {
    strict_message_order: bool,
    max_chunk_size: u64,
}

impl Default for CheckOptions {
    fn default() -> Self {
        Self {
            strict_message_order: false,
            max_chunk_size: DEFAULT_CHUNK_LIMIT,
        }
    }
}

impl CheckOptions {
    /// The defaults: log times going backwards are warnings; chunks of up to 4 GiB are
    /// decoded.
    pub fn new() -> Self {
        Self::default()
    }

    /// Report log times that go backwards as errors instead of warnings (default off).
    pub fn strict_message_order(mut self, on: bool) -> Self {
        self.strict_message_order = on;
        self
    }

    /// The largest uncompressed chunk decoded, in bytes (default 4 GiB, as
    /// [`ReadOptions::max_record_size`](crate::ReadOptions::max_record_size)). A chunk
    /// declaring more is reported and not decoded, so a decompression bomb costs no more than
    /// this.
    pub fn max_chunk_size(mut self, bytes: u64) -> Self {
        self.max_chunk_size = bytes;
        self
    }
}

/// Checks `data` with default options; see [`check_with`].
pub fn check(data: &[u8]) -> Vec<Problem> {
    check_with(data, CheckOptions::default())
}

/// Checks a whole file: framing, magic, every CRC, record contents, the rules tying chunks,
/// message indexes, chunk indexes, schemas, channels and statistics together. An empty list
/// means the file is valid.
pub fn check_with(data: &[u8], opts: CheckOptions) -> Vec<Problem> {
    check_slice(data, opts).problems
}

/// What [`check_input`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Checked {
    /// The problems, as [`check_with`] reports them.
    pub problems: Vec<Problem>,
    /// The messages the checks read: those outside chunks and those of every chunk that
    /// decompresses and matches its CRC.
    pub messages: u64,
}

/// Checks a file read by position ([`Input`]), as [`check_with`] does. An input in memory is
/// checked in place; any other (a file, a remote object) is read once, front to back, in
/// pieces fetched ahead ([`Input::stream`]), so that memory holds a few pieces and the largest
/// record, never the whole file. The records an index points at are remembered as they go by
/// (attachments, metadata, the summary section), so that valid files are not read twice; a
/// pointer elsewhere is followed by a positional read.
///
/// ```
/// use robolog_mcap::{CheckOptions, Input, WriteOptions, Writer, check_input};
/// let file = Writer::new(Vec::new(), WriteOptions::default())?.finish()?;
/// let checked = check_input(&Input::from(file), CheckOptions::new())?;
/// assert!(checked.problems.is_empty());
/// assert_eq!(checked.messages, 0);
/// # Ok::<(), robolog_mcap::McapError>(())
/// ```
///
/// # Errors
///
/// [`McapError::Io`] when the input cannot be read; problems of the file itself are
/// [`Checked::problems`].
pub fn check_input(input: &Input, opts: CheckOptions) -> Result<Checked> {
    if let Some(data) = input.in_memory() {
        return Ok(check_slice(data, opts));
    }
    let mut doctor = Doctor::new(
        opts,
        Frames::Input {
            input,
            stream: input.stream(0..input.len()),
            known: BTreeMap::new(),
            failure: None,
        },
    );
    let walked = doctor.walk_input();
    let failure = match &mut doctor.frames {
        Frames::Input { failure, .. } => failure.take(),
        Frames::Slice(_) => None,
    };
    if let Some((offset, source)) = failure {
        return Err(McapError::Io { offset, source });
    }
    walked?;
    Ok(doctor.finish())
}

fn check_slice(data: &[u8], opts: CheckOptions) -> Checked {
    let mut doctor = Doctor::new(opts, Frames::Slice(data));
    doctor.walk_slice(data);
    doctor.finish()
}

/// Where the checks find the records that index records point at, and the file's end.
enum Frames<'a> {
    /// The whole file, in memory.
    Slice(&'a [u8]),
    /// A file read by position, walked once front to back.
    Input {
        input: &'a Input,
        /// The walk's reader.
        stream: InputStream,
        /// Opcode and end of the records the walk passed that indexes point at, by offset.
        known: BTreeMap<u64, (u8, u64)>,
        /// The first read that failed (reported as an error of the whole check).
        failure: Option<(u64, std::io::Error)>,
    },
}

impl Frames<'_> {
    fn len(&self) -> u64 {
        match self {
            Frames::Slice(data) => data.len() as u64,
            Frames::Input { input, .. } => input.len(),
        }
    }

    /// The walk passed the record at `offset`: remembered when an index may point at it.
    fn passed(&mut self, offset: u64, opcode: u8, end: u64, in_summary: bool) {
        if let Frames::Input { known, .. } = self
            && (in_summary || matches!(opcode, op::ATTACHMENT | op::METADATA))
        {
            known.insert(offset, (opcode, end));
        }
    }

    /// The opcode and end of the record at `pos`, as [`frame_at`] frames it.
    fn frame_at(&mut self, pos: u64) -> Result<Option<(u8, u64)>> {
        match self {
            Frames::Slice(data) => {
                let at = usize::try_from(pos).unwrap_or(usize::MAX);
                Ok(frame_at(data, at)?.map(|(opcode, _, end)| (opcode, end as u64)))
            }
            Frames::Input {
                input,
                known,
                failure,
                ..
            } => {
                if let Some(&found) = known.get(&pos) {
                    return Ok(Some(found));
                }
                let prefix = match input.read_up_to(pos, RECORD_PREFIX) {
                    Ok(prefix) => prefix,
                    Err(e) => {
                        failure.get_or_insert((pos, e));
                        return Ok(None);
                    }
                };
                frame(&prefix, pos, input.len())
            }
        }
    }

    /// Up to `len` bytes from `pos` on (read on by the walk's reader when they come next).
    fn bytes_at(&mut self, pos: u64, len: u64) -> Vec<u8> {
        match self {
            Frames::Slice(data) => {
                let start = usize::try_from(pos).unwrap_or(usize::MAX).min(data.len());
                let end = start.saturating_add(len as usize).min(data.len());
                data[start..end].to_vec()
            }
            Frames::Input {
                stream, failure, ..
            } if stream.position() == pos => {
                let mut bytes = Vec::new();
                if let Err(e) = stream.by_ref().take(len).read_to_end(&mut bytes) {
                    failure.get_or_insert((pos, e));
                }
                bytes
            }
            Frames::Input { input, failure, .. } => match input.read_up_to(pos, len) {
                Ok(bytes) => bytes.to_vec(),
                Err(e) => {
                    failure.get_or_insert((pos, e));
                    Vec::new()
                }
            },
        }
    }
}

/// The facts of a chunk record that its ChunkIndex repeats.
struct ChunkFacts {
    length: u64,
    message_start_time: u64,
    message_end_time: u64,
    compressed_size: u64,
    uncompressed_size: u64,
    compression: String,
}

/// The state of the walk over the top-level records.
struct Walk<'a> {
    first: bool,
    data_end_end: Option<u64>,
    footer_seen: bool,
    loose_messages: bool,
    last_loose_time: u64,
    last_summary_opcode: Option<u8>,
    summary_groups: BTreeSet<u8>,
    /// The latest chunk, checked once the message indexes after it are read.
    pending_chunk: Option<(u64, Cow<'a, [u8]>)>,
    pending_indexes: BTreeMap<u16, MessageIndex>,
    last_name: &'static str,
    /// CRC of everything before the record being read.
    data_crc: Crc32,
    /// CRC from the end of the latest DataEnd on.
    summary_crc: Crc32,
}

struct Doctor<'a> {
    opts: CheckOptions,
    frames: Frames<'a>,
    walk: Walk<'a>,
    /// A buffer to read the next record into (records read from an input).
    spare: Vec<u8>,
    problems: Vec<Problem>,
    schemas: BTreeMap<u16, Schema<'static>>,
    channels: BTreeMap<u16, Channel<'static>>,
    summary_schemas: BTreeSet<u16>,
    summary_channels: BTreeSet<u16>,
    chunk_indexes: BTreeMap<u64, ChunkIndex<'static>>,
    /// Channels whose messages each chunk holds, by chunk offset.
    chunk_channels: BTreeMap<u64, BTreeSet<u16>>,
    /// Every chunk record, by offset.
    chunks: BTreeMap<u64, ChunkFacts>,
    in_summary: bool,
    message_count: u64,
    channel_counts: BTreeMap<u16, u64>,
    min_time: u64,
    max_time: u64,
    statistics: Option<Statistics>,
    decompressor: Decompressor,
    buffer: Vec<u8>,
}

impl<'a> Doctor<'a> {
    fn new(opts: CheckOptions, frames: Frames<'a>) -> Self {
        Self {
            opts,
            frames,
            walk: Walk {
                first: true,
                data_end_end: None,
                footer_seen: false,
                loose_messages: false,
                last_loose_time: 0,
                last_summary_opcode: None,
                summary_groups: BTreeSet::new(),
                pending_chunk: None,
                pending_indexes: BTreeMap::new(),
                last_name: "magic",
                data_crc: Crc32::new(),
                summary_crc: Crc32::new(),
            },
            spare: Vec::new(),
            problems: Vec::new(),
            schemas: BTreeMap::new(),
            channels: BTreeMap::new(),
            summary_schemas: BTreeSet::new(),
            summary_channels: BTreeSet::new(),
            chunk_indexes: BTreeMap::new(),
            chunk_channels: BTreeMap::new(),
            chunks: BTreeMap::new(),
            in_summary: false,
            message_count: 0,
            channel_counts: BTreeMap::new(),
            min_time: u64::MAX,
            max_time: 0,
            statistics: None,
            decompressor: Decompressor::new(),
            buffer: Vec::new(),
        }
    }

    fn finish(self) -> Checked {
        Checked {
            problems: self.problems,
            messages: self.message_count,
        }
    }

    fn error(&mut self, kind: ProblemKind, offset: u64, message: impl Into<String>) {
        self.problems.push(Problem::error(kind, offset, message));
    }

    fn warn(&mut self, kind: ProblemKind, offset: u64, message: impl Into<String>) {
        self.problems.push(Problem::warning(kind, offset, message));
    }

    fn note(&mut self, kind: ProblemKind, offset: u64, message: impl Into<String>) {
        self.problems.push(Problem::info(kind, offset, message));
    }

    /// Checks the leading magic (the first bytes of the file); false when the walk ends there.
    fn magic(&mut self, head: &[u8]) -> bool {
        if head != MAGIC {
            self.error(
                ProblemKind::Malformed,
                0,
                "the file does not start with the MCAP magic",
            );
            return false;
        }
        self.walk.data_crc.update(head);
        true
    }

    /// Walks the records of a file in memory.
    fn walk_slice(&mut self, data: &'a [u8]) {
        if !self.magic(&data[..data.len().min(MAGIC.len())]) {
            return;
        }
        let mut pos = MAGIC.len();
        loop {
            match frame_at(data, pos) {
                Ok(Some((opcode, start, end))) => {
                    let offset = pos as u64;
                    pos = end;
                    if self.record(offset, opcode, Cow::Borrowed(&data[start..end])) {
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    self.error(e.problem_kind(), pos as u64, format!("{e}"));
                    break;
                }
            }
        }
        self.end_walk(pos as u64);
    }

    /// Walks the records of a file read by position, once, front to back.
    fn walk_input(&mut self) -> Result<()> {
        let len = self.frames.len();
        let io = |offset: u64| move |source| McapError::Io { offset, source };
        let mut head = vec![0u8; len.min(MAGIC.len() as u64) as usize];
        self.stream()?.read_exact(&mut head).map_err(io(0))?;
        if !self.magic(&head) {
            return Ok(());
        }
        let mut pos = MAGIC.len() as u64;
        let mut prefix = [0u8; RECORD_PREFIX as usize];
        loop {
            let prefix = &mut prefix[..len.saturating_sub(pos).min(RECORD_PREFIX) as usize];
            self.stream()?.read_exact(prefix).map_err(io(pos))?;
            match frame(prefix, pos, len) {
                Ok(Some((opcode, end))) => {
                    let offset = pos;
                    let mut content = std::mem::take(&mut self.spare);
                    read_exact_bounded(
                        self.stream()?,
                        end - offset - RECORD_PREFIX,
                        u64::MAX,
                        offset + RECORD_PREFIX,
                        "record content",
                        &mut content,
                    )
                    .map_err(|e| match e {
                        StreamError::Io { source, .. } => McapError::Io { offset, source },
                        StreamError::Framing(e) => {
                            McapError::malformed(offset, record_name(opcode), e)
                        }
                    })?;
                    pos = end;
                    if self.record(offset, opcode, Cow::Owned(content)) {
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    self.error(e.problem_kind(), pos, format!("{e}"));
                    break;
                }
            }
        }
        self.end_walk(pos);
        Ok(())
    }

    /// The walk's reader over an input.
    fn stream(&mut self) -> Result<&mut InputStream> {
        match &mut self.frames {
            Frames::Input { stream, .. } => Ok(stream),
            Frames::Slice(_) => Err(McapError::Usage("a file in memory is not streamed".into())),
        }
    }

    /// Gives back a record's buffer once the checks are done with it.
    fn recycle(&mut self, content: Cow<'_, [u8]>) {
        if let Cow::Owned(buffer) = content
            && buffer.capacity() > self.spare.capacity()
        {
            self.spare = buffer;
        }
    }

    /// Checks the top-level record at `offset`; true after the Footer (the walk ends there).
    fn record(&mut self, offset: u64, opcode: u8, content: Cow<'a, [u8]>) -> bool {
        let end = offset + RECORD_PREFIX + content.len() as u64;
        let mut prefix = [0u8; RECORD_PREFIX as usize];
        prefix[0] = opcode;
        prefix[1..].copy_from_slice(&(content.len() as u64).to_le_bytes());
        self.walk.last_name = record_name(opcode);
        let last_name = self.walk.last_name;
        self.frames.passed(offset, opcode, end, self.in_summary);
        if opcode != op::MESSAGE_INDEX
            && let Some((chunk_at, chunk)) = self.walk.pending_chunk.take()
        {
            let indexes = std::mem::take(&mut self.walk.pending_indexes);
            self.chunk(chunk_at, &chunk, &indexes);
            self.recycle(chunk);
        }
        if self.walk.first && opcode != op::HEADER {
            self.error(
                ProblemKind::Malformed,
                offset,
                format!("the first record is a {last_name}, not a Header"),
            );
        }
        self.walk.first = false;
        if self.in_summary && !matches!(opcode, op::FOOTER | op::SUMMARY_OFFSET) {
            if self.walk.last_summary_opcode != Some(opcode)
                && !self.walk.summary_groups.insert(opcode)
            {
                // Readers that follow SummaryOffset records may miss the second run; the
                // records themselves are all there.
                self.warn(
                    ProblemKind::Index,
                    offset,
                    format!(
                        "summary records are not grouped: a second run of {last_name} records starts here"
                    ),
                );
            }
            self.walk.last_summary_opcode = Some(opcode);
        }
        // The data section CRC covers everything before the DataEnd record, the summary CRC
        // everything after it up to the Footer's own CRC field.
        let data_crc = self.walk.data_crc.value();
        let mut summary_crc = self.walk.summary_crc.clone();
        summary_crc.update(&prefix);
        summary_crc.update(&content[..content.len().min(16)]);
        let crcs = (data_crc, summary_crc.value());
        for crc in [&mut self.walk.data_crc, &mut self.walk.summary_crc] {
            crc.update(&prefix);
            crc.update(&content);
        }
        let (stop, keep) = self.parsed(offset, opcode, &content, end, crcs);
        if keep {
            self.walk.pending_chunk = Some((offset, content));
        } else {
            self.recycle(content);
        }
        stop
    }

    /// The checks of one parsed top-level record: (the walk ends, the content is a chunk to
    /// keep until its message indexes are read).
    fn parsed(
        &mut self,
        offset: u64,
        opcode: u8,
        content: &[u8],
        end: u64,
        (data_crc, summary_crc): (u32, u32),
    ) -> (bool, bool) {
        let record = match parse_record(opcode, content, offset) {
            Ok(r) => r,
            Err(e) => {
                self.error(e.problem_kind(), offset, format!("{e}"));
                return (false, false);
            }
        };
        match record {
            Record::Header(h) => {
                if h.library.is_empty() {
                    self.note(ProblemKind::Metadata,
                            offset,
                            "Header.library is empty: set it to identify the software that wrote the file",
                        );
                }
                if !matches!(&*h.profile, "" | "ros1" | "ros2") {
                    self.note(
                        ProblemKind::Metadata,
                        offset,
                        format!("Header.profile {:?} is not a well-known profile", h.profile),
                    );
                }
            }
            Record::Schema(s) => self.schema(offset, s),
            Record::Channel(c) => self.channel(offset, c),
            Record::Message(m) => {
                self.walk.loose_messages = true;
                let topic = self.topic(m.channel_id);
                if !self.channels.contains_key(&m.channel_id) {
                    self.error(
                        ProblemKind::Schema,
                        offset,
                        format!(
                            "Message on channel {} before any Channel record for it",
                            m.channel_id
                        ),
                    );
                }
                if m.log_time < self.walk.last_loose_time {
                    // Log times need not be monotonic (spec 4.9): a warning unless strict.
                    let message = format!(
                        "Message.log_time {} on {topic} is less than the previous message's {}",
                        m.log_time, self.walk.last_loose_time
                    );
                    if self.opts.strict_message_order {
                        self.error(ProblemKind::Time, offset, message);
                    } else {
                        self.warn(ProblemKind::Time, offset, message);
                    }
                }
                self.walk.last_loose_time = m.log_time;
                self.count_message(m.channel_id, m.log_time);
            }
            Record::Chunk(c) => {
                self.chunks.insert(
                    offset,
                    ChunkFacts {
                        length: end - offset,
                        message_start_time: c.message_start_time,
                        message_end_time: c.message_end_time,
                        compressed_size: c.records.len() as u64,
                        uncompressed_size: c.uncompressed_size,
                        compression: c.compression.to_string(),
                    },
                );
                return (false, true);
            }
            Record::MessageIndex(mi) => {
                if self.walk.pending_chunk.is_none() {
                    self.warn(
                        ProblemKind::Index,
                        offset,
                        "MessageIndex without a Chunk before it",
                    );
                } else {
                    let channel_id = mi.channel_id;
                    if let std::collections::btree_map::Entry::Vacant(slot) =
                        self.walk.pending_indexes.entry(channel_id)
                    {
                        slot.insert(mi);
                    } else {
                        self.warn(
                            ProblemKind::Index,
                            offset,
                            format!(
                                "second MessageIndex for channel {channel_id} after the same chunk"
                            ),
                        );
                    }
                }
                if self.walk.loose_messages {
                    self.warn(
                        ProblemKind::Index,
                        offset,
                        "the file has messages outside chunks: indexed readers will miss them",
                    );
                }
            }
            Record::ChunkIndex(ci) => {
                if self.walk.loose_messages {
                    self.warn(
                        ProblemKind::Index,
                        offset,
                        "the file has messages outside chunks: indexed readers will miss them",
                    );
                    self.walk.loose_messages = false;
                }
                if self
                    .chunk_indexes
                    .insert(ci.chunk_start_offset, ci.clone().into_owned())
                    .is_some()
                {
                    self.error(
                        ProblemKind::Index,
                        offset,
                        format!(
                            "more than one ChunkIndex for the chunk at byte {}",
                            ci.chunk_start_offset
                        ),
                    );
                }
            }
            Record::Attachment(a) if a.crc != 0 => {
                let computed = crc32(&content[..attachment_crc_span(&a)]);
                if computed != a.crc {
                    self.error(ProblemKind::Checksum,
                            offset,
                            format!(
                                "Attachment {:?} CRC mismatch: stored {:#010x}, computed {computed:#010x}",
                                a.name, a.crc
                            ),
                        );
                }
            }
            Record::AttachmentIndex(ai) => self.points_at(
                offset,
                "AttachmentIndex",
                ai.offset,
                ai.length,
                op::ATTACHMENT,
            ),
            Record::MetadataIndex(mi) => {
                self.points_at(offset, "MetadataIndex", mi.offset, mi.length, op::METADATA)
            }
            Record::Statistics(s) => {
                if self.statistics.is_some() {
                    self.warn(
                        ProblemKind::Index,
                        offset,
                        "more than one Statistics record",
                    );
                }
                if !s.channel_message_counts.is_empty() {
                    let missing: Vec<u16> = self
                        .channels
                        .keys()
                        .filter(|id| !self.summary_channels.contains(id))
                        .copied()
                        .collect();
                    // The spec requires them; the conformance generator itself omits them,
                    // so readers must cope: a warning.
                    if !missing.is_empty() {
                        self.warn(ProblemKind::Index,
                                offset,
                                format!(
                                    "Statistics has channel message counts, but channels {missing:?} are not in the summary before it"
                                ),
                            );
                    }
                }
                self.statistics = Some(s);
            }
            Record::SummaryOffset(so) => self.summary_offset(offset, so),
            Record::DataEnd(d) => {
                if content.len() != 4 {
                    self.warn(
                        ProblemKind::Malformed,
                        offset,
                        format!("DataEnd content is {} bytes, not 4", content.len()),
                    );
                }
                if d.data_section_crc != 0 {
                    let computed = data_crc;
                    if computed != d.data_section_crc {
                        self.error(ProblemKind::Checksum,
                                offset,
                                format!(
                                    "data section CRC mismatch: stored {:#010x}, computed {computed:#010x}",
                                    d.data_section_crc
                                ),
                            );
                    }
                }
                self.in_summary = true;
                self.walk.data_end_end = Some(end);
                self.walk.summary_crc = Crc32::new();
            }
            Record::Footer(f) => {
                self.walk.footer_seen = true;
                self.footer(offset, end, content.len(), f, summary_crc);
                return (true, false);
            }
            Record::Unknown { opcode, .. } => self.warn(
                ProblemKind::Unsupported,
                offset,
                format!("record with unknown opcode {opcode:#04x} (skipped by readers)"),
            ),
            _ => {}
        }
        (false, false)
    }

    /// The checks once the walk ended at `pos` (after the Footer, or where the framing broke).
    fn end_walk(&mut self, pos: u64) {
        if let Some((chunk_at, chunk)) = self.walk.pending_chunk.take() {
            let indexes = std::mem::take(&mut self.walk.pending_indexes);
            self.chunk(chunk_at, &chunk, &indexes);
        }
        let last_name = self.walk.last_name;
        if self.walk.data_end_end.is_none() {
            self.error(
                ProblemKind::Truncated,
                pos,
                format!("the file has no DataEnd record (the last record is a {last_name})"),
            );
        }
        if !self.walk.footer_seen {
            self.error(
                ProblemKind::Truncated,
                pos,
                format!("the file has no Footer record (the last record is a {last_name})"),
            );
        }
        self.cross_checks();
    }

    fn topic(&self, channel_id: u16) -> String {
        self.channels.get(&channel_id).map_or_else(
            || format!("channel {channel_id}"),
            |c| format!("{:?}", c.topic),
        )
    }

    fn count_message(&mut self, channel_id: u16, log_time: u64) {
        self.message_count += 1;
        *self.channel_counts.entry(channel_id).or_insert(0) += 1;
        self.min_time = self.min_time.min(log_time);
        self.max_time = self.max_time.max(log_time);
    }

    fn schema(&mut self, offset: u64, s: Schema<'_>) {
        if s.encoding.is_empty() {
            if s.data.is_empty() {
                self.warn(
                    ProblemKind::Schema,
                    offset,
                    format!(
                        "Schema {} ({:?}) has an empty encoding and no data",
                        s.id, s.name
                    ),
                );
            } else {
                self.error(
                    ProblemKind::Schema,
                    offset,
                    format!(
                        "Schema {} has an empty encoding but {} bytes of data",
                        s.id,
                        s.data.len()
                    ),
                );
            }
        }
        if s.id == 0 {
            self.error(
                ProblemKind::Schema,
                offset,
                "Schema id 0 is reserved; readers ignore this schema",
            );
            return;
        }
        let previous = self.schemas.get(&s.id).cloned();
        if let Some(p) = &previous {
            if p.name != s.name {
                self.error(
                    ProblemKind::Schema,
                    offset,
                    format!(
                        "Schema {} redefined with name {:?} (was {:?})",
                        s.id, s.name, p.name
                    ),
                );
            }
            if p.encoding != s.encoding {
                self.error(
                    ProblemKind::Schema,
                    offset,
                    format!(
                        "Schema {} redefined with encoding {:?} (was {:?})",
                        s.id, s.encoding, p.encoding
                    ),
                );
            }
            if p.data != s.data {
                self.error(
                    ProblemKind::Schema,
                    offset,
                    format!("Schema {} redefined with different data", s.id),
                );
            }
        }
        if self.in_summary {
            if previous.is_none() {
                // Loses nothing unless a channel of the data section uses it, and that channel
                // is reported as referring to an undefined schema.
                let used = self.channels.values().any(|c| c.schema_id == s.id);
                let message = format!(
                    "Schema {} ({:?}) appears only in the summary, not in the data section",
                    s.id, s.name
                );
                if used {
                    self.warn(ProblemKind::Schema, offset, message);
                } else {
                    self.note(
                        ProblemKind::Schema,
                        offset,
                        format!("{message}: no channel of the data section uses it"),
                    );
                }
            }
            self.summary_schemas.insert(s.id);
        } else {
            self.schemas.insert(s.id, s.into_owned());
        }
    }

    fn channel(&mut self, offset: u64, c: Channel<'_>) {
        let previous = self.channels.get(&c.id).cloned();
        if let Some(p) = &previous {
            if p.schema_id != c.schema_id {
                self.error(
                    ProblemKind::Schema,
                    offset,
                    format!(
                        "Channel {} redefined with schema {} (was {})",
                        c.id, c.schema_id, p.schema_id
                    ),
                );
            }
            if p.topic != c.topic {
                self.error(
                    ProblemKind::Schema,
                    offset,
                    format!(
                        "Channel {} redefined with topic {:?} (was {:?})",
                        c.id, c.topic, p.topic
                    ),
                );
            }
            if p.message_encoding != c.message_encoding {
                self.error(
                    ProblemKind::Schema,
                    offset,
                    format!(
                        "Channel {} redefined with message encoding {:?} (was {:?})",
                        c.id, c.message_encoding, p.message_encoding
                    ),
                );
            }
            if p.metadata != c.metadata {
                self.error(
                    ProblemKind::Schema,
                    offset,
                    format!("Channel {} redefined with different metadata", c.id),
                );
            }
        }
        let schema_known = self.schemas.contains_key(&c.schema_id)
            || (self.in_summary && self.summary_schemas.contains(&c.schema_id));
        if c.schema_id != 0 && !schema_known {
            self.error(
                ProblemKind::Schema,
                offset,
                format!(
                    "Channel {} refers to schema {}, which is not defined before it",
                    c.id, c.schema_id
                ),
            );
        }
        if self.in_summary {
            if previous.is_none() {
                // rosbag2 lists the topics it subscribed to this way: a channel without
                // messages costs nothing when only indexed readers see it. Messages on it were
                // reported (as coming before any Channel record) in the data section.
                let messages = self.channel_counts.get(&c.id).copied().unwrap_or(0);
                let message = format!(
                    "Channel {} ({:?}) appears only in the summary, not in the data section",
                    c.id, c.topic
                );
                if messages == 0 {
                    self.note(
                        ProblemKind::Empty,
                        offset,
                        format!("{message}: it has no messages"),
                    );
                } else {
                    self.error(
                        ProblemKind::Schema,
                        offset,
                        format!("{message}, but {messages} messages use it"),
                    );
                }
            }
            self.summary_channels.insert(c.id);
        } else {
            self.channels.insert(c.id, c.into_owned());
        }
    }

    fn chunk(&mut self, offset: u64, content: &[u8], indexes: &BTreeMap<u16, MessageIndex>) {
        let Ok(Record::Chunk(chunk)) = parse_record(op::CHUNK, content, offset) else {
            return;
        };
        if compression_from_name(chunk.compression).is_none() {
            self.error(
                ProblemKind::Unsupported,
                offset,
                format!("Chunk uses unsupported compression {:?}", chunk.compression),
            );
            return;
        }
        let mut buffer = std::mem::take(&mut self.buffer);
        if let Err(e) = decompress_into(
            &chunk,
            offset,
            self.opts.max_chunk_size,
            &mut self.decompressor,
            &mut buffer,
        ) {
            self.error(
                ProblemKind::Malformed,
                offset,
                format!("Chunk does not decompress to its uncompressed_size: {e}"),
            );
            self.buffer = buffer;
            return;
        }
        if chunk.uncompressed_crc != 0 {
            let computed = crc32(&buffer);
            if computed != chunk.uncompressed_crc {
                self.error(
                    ProblemKind::Checksum,
                    offset,
                    format!(
                        "Chunk CRC mismatch: stored {:#010x}, computed {computed:#010x}",
                        chunk.uncompressed_crc
                    ),
                );
                self.buffer = buffer;
                return;
            }
        }
        let mut pos = 0usize;
        let mut min = u64::MAX;
        let mut max = 0u64;
        let mut count = 0u64;
        let mut channels = BTreeSet::new();
        loop {
            let (opcode, s, e) = match frame_at(&buffer, pos) {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                Err(_) => {
                    self.error(
                        ProblemKind::Malformed,
                        offset,
                        format!("Chunk records end inside a record at uncompressed byte {pos}"),
                    );
                    break;
                }
            };
            let inner = pos as u64;
            pos = e;
            match parse_record(opcode, &buffer[s..e], inner) {
                Err(err) => self.error(
                    ProblemKind::Malformed,
                    offset,
                    format!("inside the chunk at uncompressed byte {inner}: {err}"),
                ),
                Ok(Record::Schema(schema)) => self.schema(offset, schema),
                Ok(Record::Channel(channel)) => self.channel(offset, channel),
                Ok(Record::Message(m)) => {
                    channels.insert(m.channel_id);
                    let topic = self.topic(m.channel_id);
                    if !self.channels.contains_key(&m.channel_id) {
                        self.error(ProblemKind::Schema, offset, format!("Message on channel {} at uncompressed byte {inner} of the chunk comes before any Channel record for it", m.channel_id));
                    }
                    if m.log_time < self.max_time {
                        let message = format!(
                            "Message.log_time {} on {topic} at uncompressed byte {inner} is less than the latest log time {}",
                            m.log_time, self.max_time
                        );
                        if self.opts.strict_message_order {
                            self.error(ProblemKind::Time, offset, message);
                        } else {
                            self.warn(ProblemKind::Time, offset, message);
                        }
                    }
                    min = min.min(m.log_time);
                    max = max.max(m.log_time);
                    count += 1;
                    self.count_message(m.channel_id, m.log_time);
                    match indexes.get(&m.channel_id) {
                        Some(index) => match index.records.iter().find(|(_, o)| *o == inner) {
                            Some((t, _)) if *t != m.log_time => self.error(ProblemKind::Index, offset, format!(
                                "MessageIndex of channel {} gives log time {t} for uncompressed byte {inner}, but the message has {}",
                                m.channel_id, m.log_time
                            )),
                            Some(_) => {}
                            None => self.warn(ProblemKind::Index, offset, format!(
                                "no MessageIndex entry for the message of channel {} (log time {}) at uncompressed byte {inner}",
                                m.channel_id, m.log_time
                            )),
                        },
                        None => self.warn(ProblemKind::Index, offset, format!("no MessageIndex record for channel {} after this chunk", m.channel_id)),
                    }
                }
                Ok(Record::Unknown { opcode, .. }) => self.warn(
                    ProblemKind::Unsupported,
                    offset,
                    format!(
                        "unknown opcode {opcode:#04x} at uncompressed byte {inner} of the chunk"
                    ),
                ),
                Ok(other) => self.error(
                    ProblemKind::Malformed,
                    offset,
                    format!(
                        "a {} record inside a chunk (uncompressed byte {inner})",
                        record_name(other.opcode())
                    ),
                ),
            }
        }
        if count > 0 {
            if min != chunk.message_start_time {
                self.error(
                    ProblemKind::Index,
                    offset,
                    format!(
                        "Chunk.message_start_time {} is not the earliest message log time {min}",
                        chunk.message_start_time
                    ),
                );
            }
            if max != chunk.message_end_time {
                self.error(
                    ProblemKind::Index,
                    offset,
                    format!(
                        "Chunk.message_end_time {} is not the latest message log time {max}",
                        chunk.message_end_time
                    ),
                );
            }
        }
        self.chunk_channels.insert(offset, channels);
        self.buffer = buffer;
    }

    fn points_at(&mut self, offset: u64, what: &str, target: u64, length: u64, expected: u8) {
        match self.frames.frame_at(target) {
            Ok(Some((opcode, end))) if opcode == expected => {
                if end - target != length {
                    self.error(ProblemKind::Index, offset, format!("{what} gives length {length}, but the record at byte {target} is {} bytes", end - target));
                }
            }
            Ok(Some((opcode, _))) => self.error(
                ProblemKind::Index,
                offset,
                format!(
                    "{what} points at byte {target}, which holds a {}",
                    record_name(opcode)
                ),
            ),
            _ => self.error(
                ProblemKind::Index,
                offset,
                format!("{what} points at byte {target}, where no complete record starts"),
            ),
        }
    }

    fn summary_offset(&mut self, offset: u64, so: crate::records::SummaryOffset) {
        let Some(end) = so.group_start.checked_add(so.group_length) else {
            self.error(
                ProblemKind::Index,
                offset,
                "SummaryOffset group runs past the end of the file",
            );
            return;
        };
        let mut pos = so.group_start;
        while pos < end {
            match self.frames.frame_at(pos) {
                Ok(Some((opcode, e))) if opcode == so.group_opcode => pos = e,
                Ok(Some((opcode, _))) => {
                    self.error(
                        ProblemKind::Index,
                        offset,
                        format!(
                            "SummaryOffset for {} records covers a {} at byte {pos}",
                            record_name(so.group_opcode),
                            record_name(opcode)
                        ),
                    );
                    return;
                }
                _ => {
                    self.error(
                        ProblemKind::Index,
                        offset,
                        format!(
                            "SummaryOffset group at byte {} does not hold whole records",
                            so.group_start
                        ),
                    );
                    return;
                }
            }
        }
        if pos != end {
            self.error(
                ProblemKind::Index,
                offset,
                format!(
                    "SummaryOffset group length {} does not end on a record boundary",
                    so.group_length
                ),
            );
        }
    }

    fn footer(
        &mut self,
        offset: u64,
        end: u64,
        content_len: usize,
        f: crate::records::Footer,
        computed: u32,
    ) {
        if content_len != 20 {
            self.error(
                ProblemKind::Malformed,
                offset,
                format!("Footer content is {content_len} bytes, not 20"),
            );
        }
        if let Some(from) = self.walk.data_end_end {
            if f.summary_crc != 0 && computed != f.summary_crc {
                self.error(
                    ProblemKind::Checksum,
                    offset,
                    format!(
                        "summary CRC mismatch: stored {:#010x}, computed {computed:#010x}",
                        f.summary_crc
                    ),
                );
            }
            let expected_start = if from == offset { 0 } else { from };
            if f.summary_start != expected_start {
                self.error(ProblemKind::Index, offset, format!("Footer.summary_start is {}, but the summary starts at byte {expected_start}", f.summary_start));
            }
        }
        if f.summary_offset_start != 0 {
            match self.frames.frame_at(f.summary_offset_start) {
                Ok(Some((op::SUMMARY_OFFSET, _))) => {}
                _ => self.error(
                    ProblemKind::Index,
                    offset,
                    format!(
                        "Footer.summary_offset_start {} does not point at a SummaryOffset record",
                        f.summary_offset_start
                    ),
                ),
            }
        }
        let rest = self.frames.len().saturating_sub(end);
        let magic = MAGIC.len() as u64;
        let starts_with_magic = rest >= magic && self.frames.bytes_at(end, magic) == MAGIC;
        match rest {
            _ if !starts_with_magic => self.error(
                if rest < magic {
                    ProblemKind::Truncated
                } else {
                    ProblemKind::Malformed
                },
                end,
                "the file does not end with the MCAP magic",
            ),
            r if r == magic => {}
            _ => self.warn(
                ProblemKind::Malformed,
                end,
                format!("{} bytes after the trailing magic", rest - magic),
            ),
        }
    }

    fn cross_checks(&mut self) {
        let indexes = std::mem::take(&mut self.chunk_indexes);
        for (at, ci) in &indexes {
            for id in self.chunk_channels.get(at).cloned().unwrap_or_default() {
                if !self.summary_channels.contains(&id) {
                    self.error(ProblemKind::Index, *at, format!("indexed chunk holds messages on channel {id}, which is not repeated in the summary"));
                }
                if let Some(channel) = self.channels.get(&id)
                    && channel.schema_id != 0
                    && !self.summary_schemas.contains(&channel.schema_id)
                {
                    let schema = channel.schema_id;
                    self.error(ProblemKind::Index, *at, format!("indexed chunk holds messages with schema {schema}, which is not repeated in the summary"));
                }
            }
            let Some(chunk) = self.chunks.remove(at) else {
                self.error(
                    ProblemKind::Index,
                    *at,
                    format!("a ChunkIndex points at byte {at}, where no chunk starts"),
                );
                continue;
            };
            if ci.chunk_length != chunk.length {
                let message = format!(
                    "ChunkIndex gives chunk_length {}, but the chunk is {} bytes",
                    ci.chunk_length, chunk.length
                );
                self.error(ProblemKind::Index, *at, message);
                continue;
            }
            let pairs = [
                (
                    "message start time",
                    chunk.message_start_time,
                    ci.message_start_time,
                ),
                (
                    "message end time",
                    chunk.message_end_time,
                    ci.message_end_time,
                ),
                ("compressed size", chunk.compressed_size, ci.compressed_size),
                (
                    "uncompressed size",
                    chunk.uncompressed_size,
                    ci.uncompressed_size,
                ),
            ];
            for (what, actual, indexed) in pairs {
                if actual != indexed {
                    self.error(
                        ProblemKind::Index,
                        *at,
                        format!("the chunk has {what} {actual}, but its ChunkIndex says {indexed}"),
                    );
                }
            }
            if chunk.compression != ci.compression {
                let message = format!(
                    "the chunk has compression {:?}, but its ChunkIndex says {:?}",
                    chunk.compression, ci.compression
                );
                self.error(ProblemKind::Index, *at, message);
            }
        }
        for at in self.chunks.keys().copied().collect::<Vec<_>>() {
            if !indexes.is_empty() && !indexes.contains_key(&at) {
                self.error(
                    ProblemKind::Index,
                    at,
                    "chunk without a ChunkIndex in the summary (indexed readers miss it)",
                );
            }
        }
        // Statistics only describe the data: wrong ones mislead a summary, but lose nothing.
        if let Some(stats) = self.statistics.clone() {
            if self.message_count > 0 {
                if stats.message_start_time != self.min_time {
                    self.warn(ProblemKind::Index, 0, format!("Statistics.message_start_time is {}, but the earliest message is at {}", stats.message_start_time, self.min_time));
                }
                if stats.message_end_time != self.max_time {
                    self.warn(
                        ProblemKind::Index,
                        0,
                        format!(
                            "Statistics.message_end_time is {}, but the latest message is at {}",
                            stats.message_end_time, self.max_time
                        ),
                    );
                }
            }
            if stats.message_count != self.message_count {
                self.warn(
                    ProblemKind::Index,
                    0,
                    format!(
                        "Statistics.message_count is {}, but the file holds {} messages",
                        stats.message_count, self.message_count
                    ),
                );
            }
            if !stats.channel_message_counts.is_empty() {
                for (id, count) in self.channel_counts.clone() {
                    let stated = stats.channel_message_counts.get(&id).copied().unwrap_or(0);
                    if stated != count {
                        self.warn(ProblemKind::Index, 0, format!("Statistics gives {stated} messages on channel {id}, but the file holds {count}"));
                    }
                }
            }
        }
    }
}
