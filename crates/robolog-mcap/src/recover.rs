//! Recovery: rewrite a truncated, corrupt or draft-layout file as a valid, fully indexed MCAP
//! file holding everything that is intact, and say exactly what was kept and what was lost.

use std::io::Write;
use std::path::Path;

use robolog_framing::{
    AtomicFile, ByteReader, Bytes, Compression, Decompressor, ParallelMap, Problem, ProblemKind,
    crc32, default_threads,
};
use robolog_query::BufferPool;

use crate::chunk::{
    DEFAULT_CHUNK_LIMIT, compression_from_name, compression_name, decompress_into, verify_chunk_crc,
};
use crate::decode::with_decompressor;
use crate::draft::{self, Dialect};
use crate::error::{McapError, Result};
use crate::linear::{ChunkScanner, LinearReader, frame_at};
use crate::options::{Layout, ReadOptions};
use crate::parse::{RecordSplitter, attachment_crc_span, parse_record};
use crate::records::{Chunk, MAGIC, MessageIndex, RECORD_PREFIX, Record, op, record_name};
use crate::serialize::write_record;
use crate::writer::{WriteOptions, Writer};

/// What [`recover`] kept, lost and found damaged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Messages written to the output.
    pub messages_recovered: u64,
    /// Messages known to be lost (counted from the message indexes of chunks that could not be
    /// decoded; the messages cut off by a truncation cannot be counted and are not included).
    pub messages_lost: u64,
    /// Messages kept from a chunk whose CRC did not match: they frame correctly, but one of them
    /// may hold a flipped byte.
    pub messages_unverified: u64,
    /// Attachments written to the output.
    pub attachments_recovered: u64,
    /// Attachments lost.
    pub attachments_lost: u64,
    /// Metadata records written to the output.
    pub metadata_recovered: u64,
    /// Chunks decoded completely.
    pub chunks_recovered: u64,
    /// Of `chunks_recovered`, those copied whole: decoded and CRC-checked, then written with
    /// their compressed bytes unchanged (the output compresses chunks the same way).
    pub chunks_copied: u64,
    /// Chunks that decoded but whose CRC did not match (their messages are kept, flagged in
    /// `messages_unverified`).
    pub chunks_unverified: u64,
    /// Chunks decoded partly (a cut or corrupt chunk whose first records were saved).
    pub chunks_partial: u64,
    /// Chunks from which nothing could be saved.
    pub chunks_lost: u64,
    /// Input bytes that ended up in no recovered record.
    pub bytes_dropped: u64,
    /// True when the input ended before its Footer.
    pub truncated: bool,
    /// True when the input was in the draft layout (recovery converted it).
    pub draft: bool,
    /// Each problem met, with its input offset (all of severity error): what was wrong and what
    /// was done about it.
    pub damage: Vec<Problem>,
}

impl Report {
    /// True when nothing was lost (damage that cost nothing, like a bad index, is allowed).
    pub fn is_lossless(&self) -> bool {
        self.messages_lost == 0
            && self.attachments_lost == 0
            && self.chunks_lost == 0
            && self.chunks_partial == 0
            && self.chunks_unverified == 0
            && self.messages_unverified == 0
            && !self.truncated
            && self.bytes_dropped == 0
    }

    fn damage(&mut self, kind: ProblemKind, offset: u64, message: impl Into<String>) {
        self.damage.push(Problem::error(kind, offset, message));
    }
}

/// Rewrites `input` into `out` as a valid indexed file; returns the output and the report.
///
/// Every complete record is kept: schemas, channels, messages (also those in the complete
/// records of a partly written chunk), attachments, metadata and private records. Indexes,
/// statistics and CRCs are rebuilt. `opts` chooses the output layout (compression, chunk size);
/// the input's profile is kept. Chunks are decoded up to 4 GiB each; [`recover_with`] sets a
/// lower bound for input that may be hostile.
///
/// The input is shared with worker threads, which decode and check the upcoming chunks while
/// this thread writes: pass it as [`Bytes`] (a memory map, or a `Vec` moved in) to spare a copy.
pub fn recover<W: Write>(
    input: impl Into<Bytes>,
    out: W,
    opts: WriteOptions,
) -> Result<(W, Report)> {
    recover_with(input, out, opts, RecoverOptions::default())
}

/// How much [`recover_with`] may decode.
///
/// ```
/// use robolog_mcap::RecoverOptions;
/// let limits = RecoverOptions::new().max_chunk_size(256 << 20);
/// # let _ = limits;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecoverOptions {
    max_chunk_size: u64,
}

impl Default for RecoverOptions {
    fn default() -> Self {
        Self {
            max_chunk_size: DEFAULT_CHUNK_LIMIT,
        }
    }
}

impl RecoverOptions {
    /// The defaults: chunks of up to 4 GiB are decoded.
    pub fn new() -> Self {
        Self::default()
    }

    /// The largest uncompressed chunk decoded in full, in bytes (default 4 GiB, as
    /// [`ReadOptions::max_record_size`]). A chunk declaring more keeps only the complete
    /// records that decode within 255 times its compressed size, and the rest of its messages
    /// count as lost: a decompression bomb costs no more than this.
    pub fn max_chunk_size(mut self, bytes: u64) -> Self {
        self.max_chunk_size = bytes;
        self
    }
}

/// [`recover`], with a bound on what it decodes.
pub fn recover_with<W: Write>(
    input: impl Into<Bytes>,
    out: W,
    opts: WriteOptions,
    limits: RecoverOptions,
) -> Result<(W, Report)> {
    recover_on(input.into(), out, opts, limits, default_threads())
}

/// [`recover_with`] with `threads` workers decoding chunks ahead (0: all on this thread; the
/// output is the same).
fn recover_on<W: Write>(
    data: Bytes,
    out: W,
    opts: WriteOptions,
    limits: RecoverOptions,
    threads: usize,
) -> Result<(W, Report)> {
    let input: &[u8] = &data;
    if input.len() < MAGIC.len() || input[..MAGIC.len()] != MAGIC {
        return Err(McapError::BadMagic { offset: 0 });
    }
    let mut report = Report::default();
    let mut opts = opts;
    if let Some((profile, _)) = header_of(input) {
        opts.profile = profile;
    }
    // Intact chunks compressed as the output's are copied whole.
    let copy_as = opts
        .chunk_size
        .is_some()
        .then(|| compression_name(opts.compression));
    let mut writer = Writer::new(out, opts)?;
    if draft::detect(input) == Some(Layout::Draft) {
        report.draft = true;
        recover_draft(&data, &mut writer, &mut report, limits.max_chunk_size)?;
    } else {
        Recovery {
            input,
            data: &data,
            writer: &mut writer,
            report: &mut report,
            chunk_limit: limits.max_chunk_size,
            copy_as,
            threads,
            prefetch: None,
            buffers: BufferPool::new(),
        }
        .run()?;
    }
    let out = writer.finish()?;
    Ok((out, report))
}

/// Recovers the file at `input` into `output` (written atomically: nothing appears under
/// `output` unless recovery finishes). The input is read into memory whole.
pub fn recover_file(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
    opts: WriteOptions,
) -> Result<Report> {
    let data =
        robolog_framing::read_file(input).map_err(|source| McapError::Io { offset: 0, source })?;
    let file = AtomicFile::create(output).map_err(|source| McapError::Io { offset: 0, source })?;
    let (file, report) = recover(data, std::io::BufWriter::new(file), opts)?;
    let file = file.into_inner().map_err(|e| McapError::Io {
        offset: 0,
        source: e.into_error(),
    })?;
    file.commit()
        .map_err(|source| McapError::Io { offset: 0, source })?;
    Ok(report)
}

fn header_of(input: &[u8]) -> Option<(String, String)> {
    let (opcode, start, end) = frame_at(input, MAGIC.len()).ok()??;
    let mut r = ByteReader::new(&input[start..end]);
    if opcode != op::HEADER {
        return None;
    }
    let profile = r.read_str_u32("profile").ok()?.to_owned();
    let library = r.read_str_u32("library").ok()?.to_owned();
    Some((profile, library))
}

fn recover_draft<W: Write>(
    input: &Bytes,
    writer: &mut Writer<W>,
    report: &mut Report,
    chunk_limit: u64,
) -> Result<()> {
    let mut opts = ReadOptions::default().layout(Layout::Draft).threads(0);
    opts.max_record_size = chunk_limit;
    let mut reader = LinearReader::with_options(input.clone(), opts);
    while let Some(record) = reader.next_record() {
        match record {
            Ok(record) => {
                let offset = 0;
                keep(writer, report, record, offset, false)?;
            }
            Err(e) => {
                let offset = e.offset().unwrap_or(0);
                if e.is_truncation() {
                    report.truncated = true;
                }
                report.damage(e.problem_kind(), offset, e.to_string());
                if !matches!(
                    e,
                    McapError::CrcMismatch { .. }
                        | McapError::Codec { .. }
                        | McapError::UnsupportedCompression { .. }
                ) {
                    break;
                }
            }
        }
    }
    Ok(())
}

/// Hands one intact record to the writer.
fn keep<W: Write>(
    writer: &mut Writer<W>,
    report: &mut Report,
    record: Record<'_>,
    offset: u64,
    unverified: bool,
) -> Result<()> {
    match record {
        Record::Schema(s) => {
            if s.id == 0 {
                report.damage(
                    ProblemKind::Schema,
                    offset,
                    "Schema with the reserved id 0 ignored",
                );
            } else if let Err(e) = writer.add_schema(&s) {
                report.damage(
                    ProblemKind::Schema,
                    offset,
                    format!("Schema {} dropped: {e}", s.id),
                );
            }
        }
        Record::Channel(c) => {
            if let Err(e) = writer.add_channel(&c) {
                report.damage(
                    ProblemKind::Schema,
                    offset,
                    format!("Channel {} dropped: {e}", c.id),
                );
            }
        }
        Record::Message(m) => {
            if !writer.channels().contains_key(&m.channel_id) {
                report.messages_lost += 1;
                report.damage(
                    ProblemKind::Schema,
                    offset,
                    format!(
                        "Message dropped: on channel {}, which no intact Channel record defines",
                        m.channel_id
                    ),
                );
                return Ok(());
            }
            writer.write_message(&m)?;
            report.messages_recovered += 1;
            if unverified {
                report.messages_unverified += 1;
            }
        }
        Record::Attachment(a) => {
            writer.write_attachment(&a)?;
            report.attachments_recovered += 1;
        }
        Record::Metadata(m) => {
            writer.write_metadata(&m)?;
            report.metadata_recovered += 1;
        }
        Record::Unknown { opcode, content } if opcode >= 0x80 => {
            writer.write_private_record(opcode, content)?;
        }
        _ => {}
    }
    Ok(())
}

/// Chunks decoded on workers ahead of the recovery, each with the offset of its record.
type Prefetch = ParallelMap<ChunkScanner, (u64, Option<Decoded>)>;

struct Recovery<'a, 'w, W: Write> {
    input: &'a [u8],
    /// The same bytes, shared with the workers.
    data: &'a Bytes,
    writer: &'w mut Writer<W>,
    report: &'w mut Report,
    chunk_limit: u64,
    /// The compression of the chunks copied whole (the output's), if any are.
    copy_as: Option<&'static str>,
    /// Workers decoding chunks ahead (0: each chunk is decoded when its turn comes).
    threads: usize,
    prefetch: Option<Prefetch>,
    /// Decoded records' buffers, reused.
    buffers: BufferPool,
}

/// A complete chunk's records as decoding left them: on a worker ahead of the recovery, or on
/// its own thread.
struct Decoded {
    /// Every record, or what decoded before the damage.
    records: Vec<u8>,
    /// Why the chunk did not decode whole.
    error: Option<McapError>,
    /// Why the records of a chunk that decoded whole do not match its CRC.
    crc: Option<McapError>,
}

impl Decoded {
    /// Decodes `chunk` (its record at `offset`, compressed by `compression`) into `records`,
    /// up to `limit` bytes; when it does not decode whole, keeps what decodes before the
    /// damage.
    fn of(
        chunk: &Chunk<'_>,
        compression: Compression,
        offset: u64,
        limit: u64,
        mut records: Vec<u8>,
    ) -> Self {
        with_decompressor(|decompressor| {
            match decompress_into(chunk, offset, limit, decompressor, &mut records) {
                Ok(()) => {
                    let crc = verify_chunk_crc(chunk, &records, offset).err();
                    Self {
                        records,
                        error: None,
                        crc,
                    }
                }
                Err(error) => {
                    let size =
                        usize::try_from(chunk.uncompressed_size.min(limit)).unwrap_or(usize::MAX);
                    let cap = size.min(
                        chunk
                            .records
                            .len()
                            .saturating_mul(255)
                            .saturating_add(1 << 16),
                    );
                    let _ = decompressor.decompress_partial(
                        compression,
                        chunk.records,
                        cap,
                        &mut records,
                    );
                    Self {
                        records,
                        error: Some(error),
                        crc: None,
                    }
                }
            }
        })
    }

    /// A worker's job: the Chunk record at `offset` of `input`, decoded into `recycled`, or
    /// `None` when its header does not parse or its compression is not supported (the
    /// recovery reports those itself).
    fn at(input: &[u8], offset: u64, limit: u64, recycled: Vec<u8>) -> Option<Self> {
        let (_, start, end) = frame_at(input, usize::try_from(offset).ok()?).ok()??;
        let Ok(Record::Chunk(chunk)) = parse_record(op::CHUNK, &input[start..end], offset) else {
            return None;
        };
        let compression = compression_from_name(chunk.compression)?;
        Some(Self::of(&chunk, compression, offset, limit, recycled))
    }
}

impl<W: Write> Recovery<'_, '_, W> {
    fn run(&mut self) -> Result<()> {
        let input = self.input;
        let mut pos = MAGIC.len();
        loop {
            match frame_at(input, pos) {
                Ok(None) => {
                    self.report.truncated = true;
                    self.report.damage(
                        ProblemKind::Truncated,
                        pos as u64,
                        "the file ends without DataEnd and Footer",
                    );
                    return Ok(());
                }
                Ok(Some((opcode, start, end))) => {
                    let offset = pos as u64;
                    pos = end;
                    match opcode {
                        op::DATA_END | op::FOOTER => return Ok(()),
                        op::CHUNK => self.chunk(offset, &input[start..end], end)?,
                        op::MESSAGE_INDEX => {}
                        _ => match parse_record(opcode, &input[start..end], offset) {
                            Ok(Record::Attachment(a)) => {
                                let covered = &input[start..start + attachment_crc_span(&a)];
                                if a.crc != 0 && crc32(covered) != a.crc {
                                    self.report.attachments_lost += 1;
                                    self.report.bytes_dropped += (end - offset as usize) as u64;
                                    self.report.damage(
                                        ProblemKind::Checksum,
                                        offset,
                                        format!("Attachment {:?} dropped: CRC mismatch", a.name),
                                    );
                                } else {
                                    keep(
                                        self.writer,
                                        self.report,
                                        Record::Attachment(a),
                                        offset,
                                        false,
                                    )?;
                                }
                            }
                            Ok(record) => keep(self.writer, self.report, record, offset, false)?,
                            Err(e) => {
                                self.report.bytes_dropped += (end - offset as usize) as u64;
                                self.report.damage(
                                    e.problem_kind(),
                                    offset,
                                    format!("{e}; record dropped"),
                                );
                            }
                        },
                    }
                }
                Err(e) => {
                    // A record runs past the end: the file was cut inside it (or its length is
                    // corrupt). Salvage a partial chunk, then look for intact records after it.
                    let offset = pos as u64;
                    let opcode = input[pos];
                    if opcode == op::CHUNK {
                        self.partial_chunk(offset, &input[(pos + 9).min(input.len())..]);
                    } else {
                        self.report.damage(e.problem_kind(), offset, e.to_string());
                    }
                    match resync(input, pos + 1) {
                        Some(next) => {
                            self.report.bytes_dropped += (next - pos) as u64;
                            self.report.damage(ProblemKind::Malformed,
                                offset,
                                format!(
                                    "{} with a length past the end of the file; reading resumed at byte {next}",
                                    record_name(opcode)
                                ),
                            );
                            pos = next;
                        }
                        None => {
                            self.report.truncated = true;
                            self.report.bytes_dropped += (input.len() - pos) as u64;
                            return Ok(());
                        }
                    }
                }
            }
        }
    }

    /// The chunk whose record is at `offset`, decoded by a worker, if one did. The workers walk
    /// the records as [`Recovery::run`] does and stop where it must resynchronise; at the next
    /// chunk after that they start again from it.
    fn prefetched(&mut self, offset: u64) -> Option<Decoded> {
        if self.threads == 0 {
            return None;
        }
        if let Some(prefetch) = &mut self.prefetch
            && let Some((at, decoded)) = prefetch.next()
            && at == offset
        {
            return decoded;
        }
        let data = self.data.clone();
        let limit = self.chunk_limit;
        let start = usize::try_from(offset).ok()?;
        let scanner =
            ChunkScanner::new(data.clone(), start, self.buffers.clone(), Dialect::Ratified);
        // Two chunks per worker in flight keep the workers busy while this thread writes.
        let in_flight = (self.threads * 2).max(2);
        let prefetch = self.prefetch.insert(ParallelMap::new(
            scanner,
            self.threads,
            in_flight,
            move |(at, recycled): (u64, Vec<u8>)| (at, Decoded::at(&data, at, limit, recycled)),
        ));
        match prefetch.next() {
            Some((at, decoded)) if at == offset => decoded,
            _ => None,
        }
    }

    /// A complete Chunk record.
    fn chunk(&mut self, offset: u64, content: &[u8], end: usize) -> Result<()> {
        let input = self.input;
        let prefetched = self.prefetched(offset);
        let chunk = match parse_record(op::CHUNK, content, offset) {
            Ok(Record::Chunk(chunk)) => chunk,
            Ok(_) | Err(_) => {
                self.lose_chunk(
                    ProblemKind::Malformed,
                    offset,
                    end,
                    content.len(),
                    "its header is malformed",
                );
                return Ok(());
            }
        };
        let Some(compression) = compression_from_name(chunk.compression) else {
            self.lose_chunk(
                ProblemKind::Unsupported,
                offset,
                end,
                content.len(),
                &format!("unsupported compression {:?}", chunk.compression),
            );
            return Ok(());
        };
        let decoded = match prefetched {
            Some(decoded) => decoded,
            None => Decoded::of(
                &chunk,
                compression,
                offset,
                self.chunk_limit,
                self.buffers.take(),
            ),
        };
        let partial = decoded.error.is_some();
        if let Some(e) = decoded.error {
            self.report.damage(
                ProblemKind::Malformed,
                offset,
                format!("chunk does not decompress: {e}"),
            );
        }
        let unverified = decoded.crc.is_some();
        if let Some(e) = decoded.crc {
            self.report.damage(
                e.problem_kind(),
                offset,
                format!("{e}; its messages are kept but may be damaged"),
            );
        }
        let buffer = decoded.records;
        if !partial
            && !unverified
            && self.copy_as == Some(chunk.compression)
            && let Some(copied) = self.copy_whole(
                &input[offset as usize..end],
                &buffer,
                (chunk.message_start_time, chunk.message_end_time),
            )?
        {
            self.buffers.give(Bytes::from(buffer));
            self.report.messages_recovered += copied;
            self.report.chunks_recovered += 1;
            self.report.chunks_copied += 1;
            return Ok(());
        }
        let (kept, complete) = self.inner_records(offset, &buffer, unverified)?;
        self.buffers.give(Bytes::from(buffer));
        if partial || !complete {
            self.report.chunks_partial += 1;
            let indexed = self.indexed_message_count(end);
            if indexed > kept {
                self.report.messages_lost += indexed - kept;
            }
        } else if unverified {
            self.report.chunks_unverified += 1;
        } else {
            self.report.chunks_recovered += 1;
        }
        Ok(())
    }

    /// Copies an intact chunk (`record`, whose uncompressed `records` were checked against its
    /// CRC) whole, with message indexes built from its records: the number of messages, or
    /// `None` when a record in it cannot be kept as it is (a schema or channel that conflicts
    /// with an earlier one, a message on an unknown channel, a record chunks may not hold);
    /// then it is written record by record, which reports why. So it is too when the chunk's
    /// declared time span (`declared`, start and end) is not its messages' (readers plan by
    /// those times and would pass over messages outside them).
    fn copy_whole(
        &mut self,
        record: &[u8],
        records: &[u8],
        declared: (u64, u64),
    ) -> Result<Option<u64>> {
        let mut schemas = Vec::new();
        let mut channels = Vec::new();
        let mut indexes: std::collections::BTreeMap<u16, Vec<(u64, u64)>> = Default::default();
        for raw in RecordSplitter::chunk_records(records) {
            let Ok(raw) = raw else { return Ok(None) };
            match raw.parse() {
                Ok(Record::Schema(s)) => {
                    let known = self.writer.schemas().get(&s.id);
                    if s.id == 0 || known.is_some_and(|k| *k != s) {
                        return Ok(None);
                    }
                    schemas.push(s);
                }
                Ok(Record::Channel(c)) => {
                    let known = self.writer.channels().get(&c.id);
                    let schema_known = c.schema_id == 0
                        || self.writer.schemas().contains_key(&c.schema_id)
                        || schemas.iter().any(|s| s.id == c.schema_id);
                    if known.is_some_and(|k| *k != c) || !schema_known {
                        return Ok(None);
                    }
                    channels.push(c);
                }
                Ok(Record::Message(m)) => {
                    let known = self.writer.channels().contains_key(&m.channel_id)
                        || channels.iter().any(|c| c.id == m.channel_id);
                    if !known {
                        return Ok(None);
                    }
                    indexes
                        .entry(m.channel_id)
                        .or_default()
                        .push((m.log_time, raw.offset));
                }
                _ => return Ok(None),
            }
        }
        let times = indexes.values().flatten().map(|&(time, _)| time);
        if let (Some(start), Some(end)) = (times.clone().min(), times.max())
            && (start, end) != declared
        {
            return Ok(None);
        }
        for s in schemas {
            self.writer.add_schema(&s)?;
        }
        for c in channels {
            self.writer.add_channel(&c)?;
        }
        let mut index_records = Vec::new();
        for (channel_id, records) in indexes {
            write_record(
                &Record::MessageIndex(MessageIndex {
                    channel_id,
                    records,
                }),
                &mut index_records,
            )?;
        }
        Ok(Some(self.writer.copy_chunk(record, &index_records)?))
    }

    /// Messages listed by the MessageIndex records right after a chunk ending at `end`.
    fn indexed_message_count(&self, end: usize) -> u64 {
        let mut count = 0;
        let mut pos = end;
        while let Ok(Some((op::MESSAGE_INDEX, start, next))) = frame_at(self.input, pos) {
            if let Ok(Record::MessageIndex(mi)) =
                parse_record(op::MESSAGE_INDEX, &self.input[start..next], pos as u64)
            {
                count += mi.records.len() as u64;
            }
            pos = next;
        }
        count
    }

    fn lose_chunk(
        &mut self,
        kind: ProblemKind,
        offset: u64,
        end: usize,
        content_len: usize,
        why: &str,
    ) {
        let lost = self.indexed_message_count(end);
        self.report.chunks_lost += 1;
        self.report.messages_lost += lost;
        self.report.bytes_dropped += RECORD_PREFIX + content_len as u64;
        self.report.damage(
            kind,
            offset,
            format!("chunk dropped ({why}); its message index lists {lost} messages"),
        );
    }

    /// Keeps every complete record of decompressed chunk records; returns the messages kept and
    /// whether the records ended cleanly.
    fn inner_records(
        &mut self,
        offset: u64,
        records: &[u8],
        unverified: bool,
    ) -> Result<(u64, bool)> {
        let before = self.report.messages_recovered;
        let mut complete = true;
        for raw in RecordSplitter::chunk_records(records) {
            let Ok(raw) = raw else {
                complete = false;
                break;
            };
            match raw.parse() {
                Ok(record) => keep(self.writer, self.report, record, offset, unverified)?,
                Err(e) => {
                    self.report.damage(
                        e.problem_kind(),
                        offset,
                        format!("inside the chunk: {e}; record dropped"),
                    );
                }
            }
        }
        Ok((self.report.messages_recovered - before, complete))
    }

    /// The chunk a recorder was writing when it stopped: its header, then as much of its
    /// compressed records as made it to disk.
    fn partial_chunk(&mut self, offset: u64, content: &[u8]) {
        let cut = match salvage_cut_chunk(content, self.chunk_limit) {
            Ok(cut) => cut,
            Err(why) => {
                self.report.chunks_lost += 1;
                self.report.damage(ProblemKind::Truncated, offset, why);
                return;
            }
        };
        let kept = match self.inner_records(offset, &cut.records, false) {
            Ok((kept, _)) => kept,
            Err(e) => {
                self.report.damage(e.problem_kind(), offset, e.to_string());
                0
            }
        };
        self.report.chunks_partial += 1;
        self.report.damage(ProblemKind::Truncated,
            offset,
            format!(
                "the file ends inside this chunk: {} of its {} uncompressed bytes decoded{}, {kept} messages saved",
                cut.records.len(),
                cut.uncompressed_size,
                cut.error.map(|e| format!(" ({e})")).unwrap_or_default()
            ),
        );
    }
}

/// What survives of a Chunk record that the file ends inside: the chunk a recorder was writing
/// when it stopped. See [`salvage_cut_chunk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutChunk {
    /// The chunk's declared uncompressed size.
    pub uncompressed_size: u64,
    /// The uncompressed records that could be decoded, the last one possibly incomplete (split
    /// them with [`RecordSplitter::chunk_records`](crate::parse::RecordSplitter::chunk_records),
    /// which stops at it).
    pub records: Vec<u8>,
    /// Why decoding stopped before `uncompressed_size` bytes, when a codec said so.
    pub error: Option<String>,
}

/// Decodes what survives of a Chunk record cut short by the end of the file: `content` is
/// everything after its opcode and length. At most `limit` uncompressed bytes are decoded.
/// Fails, saying why, when the cut is inside the chunk header or the compression is not
/// supported: then nothing can be saved.
pub fn salvage_cut_chunk(content: &[u8], limit: u64) -> std::result::Result<CutChunk, String> {
    let mut r = ByteReader::new(content);
    let header = (|| {
        r.read_u64("start")?;
        r.read_u64("end")?;
        let size = r.read_u64("uncompressed_size")?;
        r.read_u32("crc")?;
        let compression = r.read_str_u32("compression")?;
        r.read_u64("records length")?;
        Ok::<_, robolog_framing::Error>((size, compression))
    })();
    let Ok((size, compression_name)) = header else {
        return Err("cut inside the chunk header: nothing to salvage".to_owned());
    };
    let Some(compression) = compression_from_name(compression_name) else {
        return Err(format!(
            "cut chunk with an unsupported compression {compression_name:?}"
        ));
    };
    let cap = usize::try_from(size.min(limit)).unwrap_or(usize::MAX);
    let mut records = Vec::new();
    let salvage = Decompressor::new().decompress_partial(compression, r.rest(), cap, &mut records);
    Ok(CutChunk {
        uncompressed_size: size,
        records,
        error: salvage.error.map(|e| e.to_string()),
    })
}

/// The next position at or after `from` where reading can resume after a corrupt length: a
/// record that proves itself (a chunk that decompresses to its CRC, an attachment with a
/// matching CRC, DataEnd) and is followed by another complete record or the end of the file.
/// Weaker candidates (a schema, say) are not trusted: compressed bytes can look like anything.
fn resync(input: &[u8], from: usize) -> Option<usize> {
    let mut decompressor = Decompressor::new();
    let mut buffer = Vec::new();
    (from..input.len().saturating_sub(9)).find(|&pos| {
        let opcode = input[pos];
        if !matches!(opcode, op::CHUNK | op::ATTACHMENT | op::DATA_END) {
            return false;
        }
        let Ok(Some((_, start, end))) = frame_at(input, pos) else {
            return false;
        };
        if frame_at(input, end).is_err() {
            return false;
        }
        match parse_record(opcode, &input[start..end], pos as u64) {
            Ok(Record::DataEnd(_)) => end - start == 4,
            Ok(Record::Attachment(a)) => {
                a.crc != 0 && crc32(&input[start..start + attachment_crc_span(&a)]) == a.crc
            }
            Ok(Record::Chunk(chunk)) => {
                let Some(compression) = compression_from_name(chunk.compression) else {
                    return false;
                };
                let Ok(size) = usize::try_from(chunk.uncompressed_size) else {
                    return false;
                };
                chunk.uncompressed_crc != 0
                    && size
                        <= chunk
                            .records
                            .len()
                            .saturating_mul(255)
                            .saturating_add(1 << 16)
                    && decompressor
                        .decompress(compression, chunk.records, size, size, &mut buffer)
                        .is_ok()
                    && crc32(&buffer) == chunk.uncompressed_crc
            }
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::McapReader;

    /// Damaged copies of a sample: every chunk intact, one with flipped compressed bytes, one
    /// with a length past the end of the file (reading resynchronises after it), one cut inside
    /// a chunk, one cut between chunks.
    fn damaged(name: &str) -> Vec<(String, Vec<u8>)> {
        let data = robolog_testkit::testdata::read(format!("samples/{name}"));
        let chunks: Vec<usize> = McapReader::open(Bytes::from(data.clone()))
            .unwrap()
            .summary()
            .chunk_indexes
            .iter()
            .map(|c| c.chunk_start_offset as usize)
            .collect();
        assert!(chunks.len() >= 5, "{name}: {} chunks", chunks.len());
        let mut flipped = data.clone();
        for b in &mut flipped[chunks[2] + 200..chunks[2] + 216] {
            *b ^= 0x5A;
        }
        let mut long = data.clone();
        long[chunks[1] + 1..chunks[1] + 9].copy_from_slice(&(1u64 << 40).to_le_bytes());
        vec![
            (format!("{name} intact"), data.clone()),
            (format!("{name} flipped"), flipped),
            (format!("{name} long"), long),
            (
                format!("{name} cut in a chunk"),
                data[..chunks[4] + 300].to_vec(),
            ),
            (
                format!("{name} cut between chunks"),
                data[..chunks[3]].to_vec(),
            ),
        ]
    }

    #[test]
    fn chunks_decoded_on_workers_give_the_same_output_as_on_one_thread() {
        for name in ["demo-zstd.mcap", "demo-lz4.mcap"] {
            for (what, data) in damaged(name) {
                // Copied whole (the output compresses as the input) and written record by record.
                for compression in [Compression::Zstd, Compression::Lz4, Compression::None] {
                    let opts = WriteOptions::new().compression(compression);
                    let run = |threads| {
                        recover_on(
                            Bytes::from(data.clone()),
                            Vec::new(),
                            opts.clone(),
                            RecoverOptions::default(),
                            threads,
                        )
                        .unwrap()
                    };
                    let (alone, alone_report) = run(0);
                    for threads in [1, 2, 3] {
                        let (out, report) = run(threads);
                        assert_eq!(report, alone_report, "{what}, {compression:?}, {threads}");
                        assert!(out == alone, "{what}, {compression:?}, {threads} threads");
                    }
                    assert!(alone_report.messages_recovered > 0, "{what}");
                }
            }
        }
    }
}
