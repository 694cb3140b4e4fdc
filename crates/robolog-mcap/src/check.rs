//! Structural checks of a file, covering the checks of the official `mcap doctor` and the CRC,
//! magic and index rules, each problem with its byte offset.

use std::collections::{BTreeMap, BTreeSet};

use robolog_framing::{Decompressor, Problem, ProblemKind, crc32};

use crate::chunk::{DEFAULT_CHUNK_LIMIT, compression_from_name, decompress_into};
use crate::linear::frame_at;
use crate::parse::{attachment_crc_span, parse_record};
use crate::records::{
    Channel, ChunkIndex, FOOTER_RECORD_LEN, MAGIC, MessageIndex, RECORD_PREFIX, Record, Schema,
    Statistics, op, record_name,
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
    let mut doctor = Doctor {
        opts,
        data,
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
    };
    doctor.run();
    doctor.problems
}

struct Doctor<'a> {
    opts: CheckOptions,
    data: &'a [u8],
    problems: Vec<Problem>,
    schemas: BTreeMap<u16, Schema<'static>>,
    channels: BTreeMap<u16, Channel<'static>>,
    summary_schemas: BTreeSet<u16>,
    summary_channels: BTreeSet<u16>,
    chunk_indexes: BTreeMap<u64, ChunkIndex<'static>>,
    /// Channels whose messages each chunk holds, by chunk offset.
    chunk_channels: BTreeMap<u64, BTreeSet<u16>>,
    /// Offset → length of every chunk record.
    chunks: BTreeMap<u64, u64>,
    in_summary: bool,
    message_count: u64,
    channel_counts: BTreeMap<u16, u64>,
    min_time: u64,
    max_time: u64,
    statistics: Option<Statistics>,
    decompressor: Decompressor,
    buffer: Vec<u8>,
}

impl Doctor<'_> {
    fn error(&mut self, kind: ProblemKind, offset: u64, message: impl Into<String>) {
        self.problems.push(Problem::error(kind, offset, message));
    }

    fn warn(&mut self, kind: ProblemKind, offset: u64, message: impl Into<String>) {
        self.problems.push(Problem::warning(kind, offset, message));
    }

    fn note(&mut self, kind: ProblemKind, offset: u64, message: impl Into<String>) {
        self.problems.push(Problem::info(kind, offset, message));
    }

    fn run(&mut self) {
        let data = self.data;
        if data.len() < MAGIC.len() || data[..MAGIC.len()] != MAGIC {
            self.error(
                ProblemKind::Malformed,
                0,
                "the file does not start with the MCAP magic",
            );
            return;
        }
        let mut pos = MAGIC.len();
        let mut first = true;
        let mut data_end_end: Option<usize> = None;
        let mut footer_seen = false;
        let mut loose_messages = false;
        let mut last_loose_time = 0u64;
        let mut last_summary_opcode: Option<u8> = None;
        let mut summary_groups: BTreeSet<u8> = BTreeSet::new();
        let mut pending_chunk: Option<(u64, usize, usize)> = None;
        let mut pending_indexes: BTreeMap<u16, MessageIndex> = BTreeMap::new();
        let mut last_name = "magic";
        loop {
            let (opcode, start, end) = match frame_at(data, pos) {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                Err(e) => {
                    self.error(e.problem_kind(), pos as u64, format!("{e}"));
                    break;
                }
            };
            let offset = pos as u64;
            pos = end;
            last_name = record_name(opcode);
            if opcode != op::MESSAGE_INDEX
                && let Some((chunk_at, s, e)) = pending_chunk.take()
            {
                self.chunk(chunk_at, s, e, &std::mem::take(&mut pending_indexes));
            }
            if first && opcode != op::HEADER {
                self.error(
                    ProblemKind::Malformed,
                    offset,
                    format!("the first record is a {last_name}, not a Header"),
                );
            }
            first = false;
            if self.in_summary && !matches!(opcode, op::FOOTER | op::SUMMARY_OFFSET) {
                if last_summary_opcode != Some(opcode) && !summary_groups.insert(opcode) {
                    // Readers that follow SummaryOffset records may miss the second run; the
                    // records themselves are all there.
                    self.warn(ProblemKind::Index,
                        offset,
                        format!(
                            "summary records are not grouped: a second run of {last_name} records starts here"
                        ),
                    );
                }
                last_summary_opcode = Some(opcode);
            }
            let content = &data[start..end];
            let record = match parse_record(opcode, content, offset) {
                Ok(r) => r,
                Err(e) => {
                    self.error(e.problem_kind(), offset, format!("{e}"));
                    continue;
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
                    loose_messages = true;
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
                    if m.log_time < last_loose_time {
                        // Log times need not be monotonic (spec 4.9): a warning unless strict.
                        let message = format!(
                            "Message.log_time {} on {topic} is less than the previous message's {last_loose_time}",
                            m.log_time
                        );
                        if self.opts.strict_message_order {
                            self.error(ProblemKind::Time, offset, message);
                        } else {
                            self.warn(ProblemKind::Time, offset, message);
                        }
                    }
                    last_loose_time = m.log_time;
                    self.count_message(m.channel_id, m.log_time);
                }
                Record::Chunk(_) => {
                    self.chunks.insert(offset, end as u64 - offset);
                    pending_chunk = Some((offset, start, end));
                }
                Record::MessageIndex(mi) => {
                    if pending_chunk.is_none() {
                        self.warn(
                            ProblemKind::Index,
                            offset,
                            "MessageIndex without a Chunk before it",
                        );
                    } else {
                        let channel_id = mi.channel_id;
                        if let std::collections::btree_map::Entry::Vacant(slot) =
                            pending_indexes.entry(channel_id)
                        {
                            slot.insert(mi);
                        } else {
                            self.warn(ProblemKind::Index,
                                offset,
                                format!(
                                    "second MessageIndex for channel {channel_id} after the same chunk"
                                ),
                            );
                        }
                    }
                    if loose_messages {
                        self.warn(
                            ProblemKind::Index,
                            offset,
                            "the file has messages outside chunks: indexed readers will miss them",
                        );
                    }
                }
                Record::ChunkIndex(ci) => {
                    if loose_messages {
                        self.warn(
                            ProblemKind::Index,
                            offset,
                            "the file has messages outside chunks: indexed readers will miss them",
                        );
                        loose_messages = false;
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
                        let computed = crc32(&data[..offset as usize]);
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
                    data_end_end = Some(end);
                }
                Record::Footer(f) => {
                    footer_seen = true;
                    self.footer(offset, end, content.len(), f, data_end_end);
                    break;
                }
                Record::Unknown { opcode, .. } => self.warn(
                    ProblemKind::Unsupported,
                    offset,
                    format!("record with unknown opcode {opcode:#04x} (skipped by readers)"),
                ),
                _ => {}
            }
        }
        if let Some((chunk_at, s, e)) = pending_chunk.take() {
            self.chunk(chunk_at, s, e, &pending_indexes);
        }
        if data_end_end.is_none() {
            self.error(
                ProblemKind::Truncated,
                pos as u64,
                format!("the file has no DataEnd record (the last record is a {last_name})"),
            );
        }
        if !footer_seen {
            self.error(
                ProblemKind::Truncated,
                pos as u64,
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

    fn chunk(
        &mut self,
        offset: u64,
        start: usize,
        end: usize,
        indexes: &BTreeMap<u16, MessageIndex>,
    ) {
        let Ok(Record::Chunk(chunk)) = parse_record(op::CHUNK, &self.data[start..end], offset)
        else {
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
        let at = usize::try_from(target).unwrap_or(usize::MAX);
        match frame_at(self.data, at) {
            Ok(Some((opcode, _, end))) if opcode == expected => {
                if (end - at) as u64 != length {
                    self.error(ProblemKind::Index, offset, format!("{what} gives length {length}, but the record at byte {target} is {} bytes", end - at));
                }
            }
            Ok(Some((opcode, _, _))) => self.error(
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
        let start = usize::try_from(so.group_start).unwrap_or(usize::MAX);
        let Some(end) = so.group_start.checked_add(so.group_length) else {
            self.error(
                ProblemKind::Index,
                offset,
                "SummaryOffset group runs past the end of the file",
            );
            return;
        };
        let mut pos = start;
        while (pos as u64) < end {
            match frame_at(self.data, pos) {
                Ok(Some((opcode, _, e))) if opcode == so.group_opcode => pos = e,
                Ok(Some((opcode, _, _))) => {
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
        if pos as u64 != end {
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
        end: usize,
        content_len: usize,
        f: crate::records::Footer,
        data_end_end: Option<usize>,
    ) {
        if content_len != 20 {
            self.error(
                ProblemKind::Malformed,
                offset,
                format!("Footer content is {content_len} bytes, not 20"),
            );
        }
        if let Some(from) = data_end_end {
            if f.summary_crc != 0 {
                let computed =
                    crc32(&self.data[from..offset as usize + FOOTER_RECORD_LEN as usize - 4]);
                if computed != f.summary_crc {
                    self.error(
                        ProblemKind::Checksum,
                        offset,
                        format!(
                            "summary CRC mismatch: stored {:#010x}, computed {computed:#010x}",
                            f.summary_crc
                        ),
                    );
                }
            }
            let expected_start = if from as u64 == offset {
                0
            } else {
                from as u64
            };
            if f.summary_start != expected_start {
                self.error(ProblemKind::Index, offset, format!("Footer.summary_start is {}, but the summary starts at byte {expected_start}", f.summary_start));
            }
        }
        if f.summary_offset_start != 0 {
            match frame_at(
                self.data,
                usize::try_from(f.summary_offset_start).unwrap_or(usize::MAX),
            ) {
                Ok(Some((op::SUMMARY_OFFSET, _, _))) => {}
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
        match self.data.get(end..) {
            Some(rest) if rest == MAGIC => {}
            Some(rest) if rest.len() > MAGIC.len() && rest[..MAGIC.len()] == MAGIC => {
                self.warn(
                    ProblemKind::Malformed,
                    end as u64,
                    format!(
                        "{} bytes after the trailing magic",
                        rest.len() - MAGIC.len()
                    ),
                );
            }
            _ => self.error(
                if self.data.len() < end + MAGIC.len() {
                    ProblemKind::Truncated
                } else {
                    ProblemKind::Malformed
                },
                end as u64,
                "the file does not end with the MCAP magic",
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
            let Some(&length) = self.chunks.get(at) else {
                self.error(
                    ProblemKind::Index,
                    *at,
                    format!("a ChunkIndex points at byte {at}, where no chunk starts"),
                );
                continue;
            };
            if ci.chunk_length != length {
                self.error(
                    ProblemKind::Index,
                    *at,
                    format!(
                        "ChunkIndex gives chunk_length {}, but the chunk is {length} bytes",
                        ci.chunk_length
                    ),
                );
                continue;
            }
            let start = *at as usize + RECORD_PREFIX as usize;
            let Ok(Record::Chunk(chunk)) =
                parse_record(op::CHUNK, &self.data[start..(*at + length) as usize], *at)
            else {
                continue;
            };
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
                (
                    "compressed size",
                    chunk.records.len() as u64,
                    ci.compressed_size,
                ),
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
                self.error(
                    ProblemKind::Index,
                    *at,
                    format!(
                        "the chunk has compression {:?}, but its ChunkIndex says {:?}",
                        chunk.compression, ci.compression
                    ),
                );
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
