//! Recovery: rewrite a truncated, corrupt or draft-layout file as a valid, fully indexed MCAP
//! file holding everything that is intact, and say exactly what was kept and what was lost.

use std::io::{Read, Write};
use std::path::Path;

use robolog_framing::{
    AtomicFile, ByteReader, Bytes, Compression, Decompressor, ParallelMap, Problem, ProblemKind,
    crc32, default_threads,
};
use robolog_query::{BufferPool, Input};

use crate::chunk::{
    DEFAULT_CHUNK_LIMIT, compression_from_name, compression_name, decompress_into, verify_chunk_crc,
};
use crate::decode::with_decompressor;
use crate::draft::{self, Dialect};
use crate::error::{McapError, Result};
use crate::linear::{ChunkScanner, LinearReader, frame_at};
use crate::options::{Layout, ReadOptions};
use crate::parse::{RecordSplitter, attachment_crc_span, parse_record};
use crate::record_source::RecordSource;
use crate::records::{Chunk, MAGIC, MessageIndex, RECORD_PREFIX, Record, op, record_name};
use crate::serialize::write_record;
use crate::stream::StreamReader;
use crate::window::{Source, Window};
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

/// Recovers the MCAP file of `input`, an input read by position: in place when it is in
/// memory; otherwise read once, front to back ([`Input::stream`]), through a window that holds
/// the record being recovered and what recovery looks ahead at after it (the message indexes
/// of a chunk, the bytes it searches to resynchronise after a corrupt length), so that memory
/// grows with the largest record, never with the file. The output is the one [`recover_with`]
/// writes of the same bytes in memory, but for records larger than `limits` allows
/// ([`RecoverOptions::max_chunk_size`], at least 1 MiB here), which a window cannot hold: one
/// is an error ([`McapError::TooLarge`]), and one that resynchronising would have to read is
/// passed over. A file in the draft layout (told by its last bytes, read first) is converted
/// as it streams in too, its records read one at a time.
///
/// ```
/// use robolog_mcap::{Input, RecoverOptions, WriteOptions, recover_input};
/// # fn recording() -> robolog_mcap::Result<Vec<u8>> {
/// #     use robolog_mcap::{Compression, Message, Writer};
/// #     let options = WriteOptions::default().compression(Compression::None);
/// #     let mut writer = Writer::new(Vec::new(), options)?;
/// #     let channel = writer.register_channel("/scan", "raw", 0, Default::default())?;
/// #     for i in 0..20u64 {
/// #         let data = &[i as u8; 1000];
/// #         let message = Message { channel_id: channel, sequence: i as u32, log_time: i, publish_time: i, data };
/// #         writer.write_message(&message)?;
/// #     }
/// #     writer.finish()
/// # }
/// // Twenty messages of 1,000 bytes in one uncompressed chunk, cut in the middle of it.
/// let file = recording()?;
/// let cut = Input::from(file[..file.len() / 2].to_vec());
/// let (out, report) =
///     recover_input(&cut, Vec::new(), WriteOptions::default(), RecoverOptions::new())?;
/// assert!(report.truncated);
/// assert_eq!(report.chunks_partial, 1);
/// assert!((1..20).contains(&report.messages_recovered));
/// assert!(out.starts_with(b"\x89MCAP0\r\n"));
/// # Ok::<(), robolog_mcap::McapError>(())
/// ```
///
/// # Errors
///
/// [`McapError::BadMagic`] when the input is not MCAP, [`McapError::Io`] when a read fails
/// (with the offset it failed at), and the writer's errors.
pub fn recover_input<W: Write>(
    input: &Input,
    out: W,
    opts: WriteOptions,
    limits: RecoverOptions,
) -> Result<(W, Report)> {
    if let Some(data) = input.in_memory() {
        return recover_on(data.clone(), out, opts, limits, default_threads());
    }
    let len = input.len();
    let tail_len = (draft::FOOTER_RECORD_LEN + MAGIC.len()) as u64;
    let layout = draft::detect_input(input).map_err(|source| McapError::Io {
        offset: len.saturating_sub(tail_len),
        source,
    })?;
    if layout == Some(Layout::Draft) {
        let head = draft_head(input)?;
        let reader = StreamReader::with_options(input.stream(0..len), draft_options(limits))
            .told_length(len);
        // A stream passes the draft index before its footer says where it starts: the
        // footer's CRC is checked by position when the footer is reached.
        let footer = len.saturating_sub(tail_len);
        let verify_footer = || draft::verify_footer_input(input, footer);
        return recover_draft(reader, &head, out, opts, Some(&verify_footer));
    }
    let window = Window::new(input.stream(0..len), Some(len), window_limit(limits));
    recover_source(Source::Stream(window), out, opts, limits, 0)
        .map(|(out, report, _)| (out, report))
}

/// Recovers an MCAP file read from `reader` front to back (a pipe, standard input), through a
/// window as [`recover_input`] reads a remote object: memory grows with the largest record,
/// never with the stream. The output is the one [`recover_with`] writes of the same bytes in
/// memory, with the exception [`recover_input`] states. A stream cannot show its footer
/// first: a complete file in the draft layout is found at its end, and is an error
/// ([`McapError::DraftLayout`]: recover it from a file) rather than a wrong output.
///
/// ```
/// use robolog_mcap::{RecoverOptions, WriteOptions, recover_stream};
/// # fn recording() -> robolog_mcap::Result<Vec<u8>> {
/// #     use robolog_mcap::{Compression, Message, Writer};
/// #     let options = WriteOptions::default().compression(Compression::None);
/// #     let mut writer = Writer::new(Vec::new(), options)?;
/// #     let channel = writer.register_channel("/scan", "raw", 0, Default::default())?;
/// #     for i in 0..20u64 {
/// #         let data = &[i as u8; 1000];
/// #         let message = Message { channel_id: channel, sequence: i as u32, log_time: i, publish_time: i, data };
/// #         writer.write_message(&message)?;
/// #     }
/// #     writer.finish()
/// # }
/// // Twenty messages of 1,000 bytes in one uncompressed chunk, read from a stream (here a
/// // slice) that ends in the middle of that chunk.
/// let file = recording()?;
/// let stream = &file[..file.len() / 2];
/// let (out, report) =
///     recover_stream(stream, Vec::new(), WriteOptions::default(), RecoverOptions::new())?;
/// assert!(report.truncated);
/// assert_eq!(report.chunks_partial, 1);
/// assert!((1..20).contains(&report.messages_recovered));
/// assert!(out.starts_with(b"\x89MCAP0\r\n"));
/// # Ok::<(), robolog_mcap::McapError>(())
/// ```
///
/// # Errors
///
/// As [`recover_input`], and [`McapError::DraftLayout`].
pub fn recover_stream<R: Read, W: Write>(
    reader: R,
    out: W,
    opts: WriteOptions,
    limits: RecoverOptions,
) -> Result<(W, Report)> {
    let window = Window::new(reader, None, window_limit(limits));
    recover_source(Source::Stream(window), out, opts, limits, 0)
        .map(|(out, report, _)| (out, report))
}

/// The most a window over a stream holds: `max_chunk_size`, but at least 1 MiB (the search
/// for a place to resynchronise looks at 64 KiB at a time).
fn window_limit(limits: RecoverOptions) -> u64 {
    limits.max_chunk_size.max(1 << 20)
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
    recover_source(Source::Slice(data), out, opts, limits, threads)
        .map(|(out, report, _)| (out, report))
}

/// Recovers `source`; also says the most input bytes that were held at once.
fn recover_source<W: Write>(
    mut source: Source<'_>,
    out: W,
    opts: WriteOptions,
    limits: RecoverOptions,
    threads: usize,
) -> Result<(W, Report, u64)> {
    let magic = source.bytes(0, MAGIC.len() as u64)?;
    if magic[..] != MAGIC {
        return Err(McapError::BadMagic { offset: 0 });
    }
    if let Source::Slice(data) = &source
        && draft::detect(data) == Some(Layout::Draft)
    {
        let reader = LinearReader::with_options(data.clone(), draft_options(limits));
        let (out, report) = recover_draft(reader, data, out, opts, None)?;
        return Ok((out, report, data.len() as u64));
    }
    let mut report = Report::default();
    let mut opts = opts;
    if let Some((profile, _)) = header_of(&mut source)? {
        opts.profile = profile;
    }
    // Intact chunks compressed as the output's are copied whole.
    let copy_as = opts
        .chunk_size
        .is_some()
        .then(|| compression_name(opts.compression));
    let mut writer = Writer::new(out, opts)?;
    let peak = {
        let mut recovery = Recovery {
            source,
            writer: &mut writer,
            report: &mut report,
            chunk_limit: limits.max_chunk_size,
            copy_as,
            threads,
            prefetch: None,
            buffers: BufferPool::new(),
        };
        recovery.run()?;
        if !recovery.source.length_told() {
            // A stream's draft footer shows only at its end (a file shows it first).
            let tail_len = (draft::FOOTER_RECORD_LEN + MAGIC.len()) as u64;
            let (len, tail) = recovery.source.tail(tail_len)?;
            if draft::detect_tail(&tail, len) == Some(Layout::Draft) {
                return Err(McapError::DraftLayout {
                    offset: len.saturating_sub(tail_len),
                });
            }
        }
        recovery.source.peak()
    };
    let out = writer.finish()?;
    Ok((out, report, peak))
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

/// The profile and library of the Header record after the magic, if it is one and parses.
fn header_of(source: &mut Source<'_>) -> Result<Option<(String, String)>> {
    let Ok(Some((op::HEADER, start, end))) = source.frame_at(MAGIC.len() as u64)? else {
        return Ok(None);
    };
    if !source.can_hold(end) {
        return Ok(None);
    }
    let content = source.bytes(start, end)?;
    let mut r = ByteReader::new(&content);
    let header = (|| {
        let profile = r.read_str_u32("profile").ok()?.to_owned();
        let library = r.read_str_u32("library").ok()?.to_owned();
        Some((profile, library))
    })();
    Ok(header)
}

/// How a draft-layout file is read for recovery: records up to the chunk limit.
fn draft_options(limits: RecoverOptions) -> ReadOptions {
    let mut opts = ReadOptions::default().layout(Layout::Draft).threads(0);
    opts.max_record_size = limits.max_chunk_size;
    opts
}

/// The start of a draft-layout file read by position, up to the end of its Header record
/// (when that is not unreasonably long): what [`header_of`] reads the output's profile from.
fn draft_head(input: &Input) -> Result<Bytes> {
    const MOST: u64 = 1 << 20;
    let io = |source| McapError::Io { offset: 0, source };
    let prefix = input.read_up_to(0, MAGIC.len() as u64 + 9).map_err(io)?;
    let length = prefix
        .get(MAGIC.len() + 1..)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_le_bytes);
    input
        .read_up_to(0, (MAGIC.len() as u64 + 9).saturating_add(length.min(MOST)))
        .map_err(io)
}

/// Converts a file in the draft layout, read record by record by `reader` (the draft records
/// mapped onto ratified ones), into a ratified file whose Header takes the profile of the one
/// at the start of `head`. Damage inside a chunk loses that chunk; other damage ends the file.
/// `verify_footer` checks the footer's CRC when the reader does not.
fn recover_draft<S: RecordSource, W: Write>(
    mut reader: S,
    head: &Bytes,
    out: W,
    mut opts: WriteOptions,
    verify_footer: Option<&dyn Fn() -> Result<()>>,
) -> Result<(W, Report)> {
    if let Some((profile, _)) = header_of(&mut Source::Slice(head.clone()))? {
        opts.profile = profile;
    }
    let mut writer = Writer::new(out, opts)?;
    let mut report = Report {
        draft: true,
        ..Report::default()
    };
    while let Some(record) = reader.next_parsed() {
        let record = match (record, verify_footer) {
            (Ok(Record::Footer(footer)), Some(verify)) => verify().map(|()| Record::Footer(footer)),
            (record, _) => record,
        };
        match record {
            Ok(record) => {
                let offset = 0;
                keep(&mut writer, &mut report, record, offset, false)?;
            }
            Err(e) => {
                if let McapError::Io { .. } = e {
                    return Err(e);
                }
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
    Ok((writer.finish()?, report))
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

struct Recovery<'r, 'w, W: Write> {
    /// The input: in memory (shared with the workers), or a window over a stream.
    source: Source<'r>,
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
        let mut pos = MAGIC.len() as u64;
        loop {
            // Nothing before the record at `pos` is read again.
            self.source.release(pos);
            match self.source.frame_at(pos)? {
                Ok(None) => {
                    self.report.truncated = true;
                    self.report.damage(
                        ProblemKind::Truncated,
                        pos,
                        "the file ends without DataEnd and Footer",
                    );
                    return Ok(());
                }
                Ok(Some((opcode, start, end))) => {
                    let offset = pos;
                    pos = end;
                    match opcode {
                        op::DATA_END | op::FOOTER => return Ok(()),
                        op::CHUNK => {
                            let content = self.source.bytes(start, end)?;
                            self.chunk(offset, &content, end)?;
                        }
                        op::MESSAGE_INDEX => {}
                        _ => {
                            let content = self.source.bytes(start, end)?;
                            self.record(opcode, offset, &content, end)?;
                        }
                    }
                }
                Err(e) => {
                    // A record runs past the end: the file was cut inside it (or its length is
                    // corrupt). Salvage a partial chunk, then look for intact records after it.
                    let offset = pos;
                    let opcode = self.source.bytes(pos, pos + 1)?.first().copied();
                    if opcode == Some(op::CHUNK) {
                        let end = self.salvage_end(pos)?;
                        let content = self.source.bytes(pos + 9, end)?;
                        self.partial_chunk(offset, &content);
                    } else {
                        self.report.damage(e.problem_kind(), offset, e.to_string());
                    }
                    match self.resync(pos + 1)? {
                        Some(next) => {
                            self.report.bytes_dropped += next - pos;
                            self.report.damage(ProblemKind::Malformed,
                                offset,
                                format!(
                                    "{} with a length past the end of the file; reading resumed at byte {next}",
                                    record_name(opcode.unwrap_or(0))
                                ),
                            );
                            pos = next;
                        }
                        None => {
                            self.report.truncated = true;
                            let len = self.source.known_len().unwrap_or(pos);
                            self.report.bytes_dropped += len.saturating_sub(pos);
                            return Ok(());
                        }
                    }
                }
            }
        }
    }

    /// A complete top-level record other than a chunk or a message index.
    fn record(&mut self, opcode: u8, offset: u64, content: &[u8], end: u64) -> Result<()> {
        match parse_record(opcode, content, offset) {
            Ok(Record::Attachment(a)) => {
                let covered = &content[..attachment_crc_span(&a)];
                if a.crc != 0 && crc32(covered) != a.crc {
                    self.report.attachments_lost += 1;
                    self.report.bytes_dropped += end - offset;
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
                self.report.bytes_dropped += end - offset;
                self.report
                    .damage(e.problem_kind(), offset, format!("{e}; record dropped"));
            }
        }
        Ok(())
    }

    /// The end of the bytes handed to [`salvage_cut_chunk`] for the Chunk record at `pos` that
    /// runs past the end: the rest of a file in memory; of a stream, its
    /// [`cut_chunk_span`], within what the window holds.
    fn salvage_end(&mut self, pos: u64) -> Result<u64> {
        if let Source::Slice(data) = &self.source {
            return Ok(data.len() as u64);
        }
        let fixed = self.source.bytes(pos + 9, pos + 9 + 24)?;
        let span = cut_chunk_span(&fixed, self.chunk_limit).unwrap_or(0);
        Ok(pos
            .saturating_add(9)
            .saturating_add(span)
            .min(self.source.hold_end()))
    }

    /// The chunk whose record is at `offset`, decoded by a worker, if one did. The workers walk
    /// the records as [`Recovery::run`] does and stop where it must resynchronise; at the next
    /// chunk after that they start again from it. A stream has no workers: they would read
    /// ahead of the window.
    fn prefetched(&mut self, offset: u64) -> Option<Decoded> {
        let Source::Slice(data) = &self.source else {
            return None;
        };
        if self.threads == 0 {
            return None;
        }
        let data = data.clone();
        if let Some(prefetch) = &mut self.prefetch
            && let Some((at, decoded)) = prefetch.next()
            && at == offset
        {
            return decoded;
        }
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
    fn chunk(&mut self, offset: u64, content: &[u8], end: u64) -> Result<()> {
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
                )?;
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
            )?;
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
        if !partial && !unverified && self.copy_as == Some(chunk.compression) {
            let record = self.source.bytes(offset, end)?;
            if let Some(copied) = self.copy_whole(
                &record,
                &buffer,
                (chunk.message_start_time, chunk.message_end_time),
            )? {
                self.buffers.give(Bytes::from(buffer));
                self.report.messages_recovered += copied;
                self.report.chunks_recovered += 1;
                self.report.chunks_copied += 1;
                return Ok(());
            }
        }
        let (kept, complete) = self.inner_records(offset, &buffer, unverified)?;
        self.buffers.give(Bytes::from(buffer));
        if partial || !complete {
            self.report.chunks_partial += 1;
            let indexed = self.indexed_message_count(end)?;
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
    fn indexed_message_count(&mut self, end: u64) -> Result<u64> {
        let mut count = 0;
        let mut pos = end;
        while let Ok(Some((op::MESSAGE_INDEX, start, next))) = self.source.frame_at(pos)? {
            if !self.source.can_hold(next) {
                break;
            }
            let content = self.source.bytes(start, next)?;
            if let Ok(Record::MessageIndex(mi)) = parse_record(op::MESSAGE_INDEX, &content, pos) {
                count += mi.records.len() as u64;
            }
            pos = next;
        }
        Ok(count)
    }

    fn lose_chunk(
        &mut self,
        kind: ProblemKind,
        offset: u64,
        end: u64,
        content_len: usize,
        why: &str,
    ) -> Result<()> {
        let lost = self.indexed_message_count(end)?;
        self.report.chunks_lost += 1;
        self.report.messages_lost += lost;
        self.report.bytes_dropped += RECORD_PREFIX + content_len as u64;
        self.report.damage(
            kind,
            offset,
            format!("chunk dropped ({why}); its message index lists {lost} messages"),
        );
        Ok(())
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

/// How many bytes of a cut Chunk record's content (what follows its opcode and length)
/// [`salvage_cut_chunk`] can use with `limit`, from the first 24 of them (its times and its
/// declared uncompressed size): the header and the compressed bytes that size can be decoded
/// from. No codec here expands data by more than 1/64 plus its framing, so the decoder stops
/// before the end of those bytes as it would in the whole file: a reader of a stream or a
/// remote file reads no further. `None` when `fixed` is shorter than 24 bytes (the file is
/// cut inside the header).
///
/// ```
/// let mut fixed = [0u8; 24];
/// fixed[16..].copy_from_slice(&(1u64 << 20).to_le_bytes());
/// let span = robolog_mcap::cut_chunk_span(&fixed, u64::MAX).unwrap();
/// assert!(span > 1 << 20 && span < 2 << 20);
/// assert_eq!(robolog_mcap::cut_chunk_span(&fixed[..20], u64::MAX), None);
/// ```
pub fn cut_chunk_span(fixed: &[u8], limit: u64) -> Option<u64> {
    let size = u64::from_le_bytes(fixed.get(16..24)?.try_into().ok()?).min(limit);
    Some(size.saturating_add(size / 64).saturating_add(1 << 16))
}

/// Bytes the search for a place to resynchronise looks at a time.
const SCAN_BLOCK: u64 = 64 << 10;

impl<W: Write> Recovery<'_, '_, W> {
    /// The next position at or after `from` where reading can resume after a corrupt length:
    /// a record that proves itself (a chunk that decompresses to its CRC, an attachment with a
    /// matching CRC, DataEnd) and is followed by another complete record or the end of the
    /// file. Weaker candidates (a schema, say) are not trusted: compressed bytes can look like
    /// anything. Of a stream, the bytes searched are forgotten as the search goes on.
    fn resync(&mut self, from: u64) -> Result<Option<u64>> {
        let mut decompressor = Decompressor::new();
        let mut buffer = Vec::new();
        let mut pos = from;
        loop {
            self.source.release(pos);
            let end = pos.saturating_add(SCAN_BLOCK).min(self.source.hold_end());
            let block = self.source.bytes(pos, end)?;
            if block.is_empty() {
                return Ok(None);
            }
            for (i, &opcode) in block.iter().enumerate() {
                if !matches!(opcode, op::CHUNK | op::ATTACHMENT | op::DATA_END) {
                    continue;
                }
                let at = pos + i as u64;
                // A candidate needs its prefix and a byte more before the end of the file.
                if self.source.bytes(at, at + 10)?.len() < 10 {
                    return Ok(None);
                }
                if self.proves_itself(at, opcode, &mut decompressor, &mut buffer)? {
                    return Ok(Some(at));
                }
            }
            pos += block.len() as u64;
        }
    }

    /// Whether the record at `pos` (with `opcode`) is one reading can resume at (see
    /// [`Recovery::resync`]).
    fn proves_itself(
        &mut self,
        pos: u64,
        opcode: u8,
        decompressor: &mut Decompressor,
        buffer: &mut Vec<u8>,
    ) -> Result<bool> {
        let Ok(Some((_, start, end))) = self.source.frame_at(pos)? else {
            return Ok(false);
        };
        if !self.source.can_hold(end.saturating_add(9)) || self.source.frame_at(end)?.is_err() {
            return Ok(false);
        }
        let content = self.source.bytes(start, end)?;
        Ok(match parse_record(opcode, &content, pos) {
            Ok(Record::DataEnd(_)) => end - start == 4,
            Ok(Record::Attachment(a)) => {
                a.crc != 0 && crc32(&content[..attachment_crc_span(&a)]) == a.crc
            }
            Ok(Record::Chunk(chunk)) => {
                let Some(compression) = compression_from_name(chunk.compression) else {
                    return Ok(false);
                };
                let Ok(size) = usize::try_from(chunk.uncompressed_size) else {
                    return Ok(false);
                };
                chunk.uncompressed_crc != 0
                    && size
                        <= chunk
                            .records
                            .len()
                            .saturating_mul(255)
                            .saturating_add(1 << 16)
                    && decompressor
                        .decompress(compression, chunk.records, size, size, buffer)
                        .is_ok()
                    && crc32(buffer) == chunk.uncompressed_crc
            }
            _ => false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::McapReader;

    /// Where the chunks of an MCAP file start, from its index.
    fn chunk_offsets(data: &[u8]) -> Vec<usize> {
        McapReader::open(Bytes::copy_from_slice(data))
            .unwrap()
            .summary()
            .chunk_indexes
            .iter()
            .map(|c| c.chunk_start_offset as usize)
            .collect()
    }

    /// Damaged copies of a sample: every chunk intact, one with flipped compressed bytes, one
    /// with a length past the end of the file (reading resynchronises after it), one cut inside
    /// a chunk, one cut between chunks.
    fn damaged(name: &str) -> Vec<(String, Vec<u8>)> {
        let data = robolog_testkit::testdata::read(format!("samples/{name}"));
        let chunks = chunk_offsets(&data);
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

    /// An input read by position that is not in memory, as a remote object is.
    #[derive(Debug)]
    struct Remote(Bytes);

    impl robolog_query::ReadAt for Remote {
        fn len(&self) -> u64 {
            self.0.len() as u64
        }
        fn read_at(&self, range: std::ops::Range<u64>) -> std::io::Result<Bytes> {
            Ok(Bytes::copy_from_slice(
                &self.0[range.start as usize..range.end as usize],
            ))
        }
    }

    /// Damaged copies whose damage a stream reaches differently: a corrupt length near the
    /// end (resynchronising finds nothing), a cut right after a corrupt length, a file cut
    /// inside its first record.
    fn more_damaged(name: &str) -> Vec<(String, Vec<u8>)> {
        let data = robolog_testkit::testdata::read(format!("samples/{name}"));
        let chunks = chunk_offsets(&data);
        let last = *chunks.last().unwrap();
        let mut late = data.clone();
        late[last + 1..last + 9].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let mut cut = data[..chunks[3] + 100].to_vec();
        cut[chunks[2] + 1..chunks[2] + 9].copy_from_slice(&(1u64 << 20).to_le_bytes());
        vec![
            (format!("{name} long last chunk"), late),
            (format!("{name} long, then cut"), cut),
            (format!("{name} cut in the header"), data[..20].to_vec()),
        ]
    }

    #[test]
    fn a_stream_and_a_remote_input_give_the_same_output_as_memory() {
        for name in ["demo-zstd.mcap", "demo-lz4.mcap"] {
            for (what, data) in damaged(name).into_iter().chain(more_damaged(name)) {
                for compression in [Compression::Zstd, Compression::None] {
                    let opts = WriteOptions::new().compression(compression);
                    let limits = RecoverOptions::default();
                    let (expected, expected_report) = recover_on(
                        Bytes::from(data.clone()),
                        Vec::new(),
                        opts.clone(),
                        limits,
                        0,
                    )
                    .unwrap();
                    let (streamed, report) =
                        recover_stream(&data[..], Vec::new(), opts.clone(), limits).unwrap();
                    assert_eq!(report, expected_report, "{what}, {compression:?}, stream");
                    assert!(streamed == expected, "{what}, {compression:?}, stream");
                    let remote = Input::new(Remote(Bytes::from(data.clone())));
                    assert!(remote.in_memory().is_none());
                    let (fetched, report) =
                        recover_input(&remote, Vec::new(), opts.clone(), limits).unwrap();
                    assert_eq!(report, expected_report, "{what}, {compression:?}, remote");
                    assert!(fetched == expected, "{what}, {compression:?}, remote");
                }
            }
        }
    }

    #[test]
    fn a_stream_is_recovered_through_a_window_of_its_largest_records() {
        // 40 MB of messages in chunks of about 1 MiB, cut inside its last chunk, its third
        // chunk's length corrupt.
        let mut w = Writer::new(
            Vec::new(),
            WriteOptions::new()
                .compression(Compression::Zstd)
                .chunk_size(Some(1 << 20)),
        )
        .unwrap();
        let channel = w
            .register_channel("/noise", "raw", 0, Default::default())
            .unwrap();
        let mut payload = vec![0u8; 4000];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for i in 0..10_000u64 {
            for b in &mut payload {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *b = state as u8;
            }
            w.write_message(&crate::Message {
                channel_id: channel,
                sequence: i as u32,
                log_time: i,
                publish_time: i,
                data: &payload,
            })
            .unwrap();
        }
        let mut data = w.finish().unwrap();
        let chunks = chunk_offsets(&data);
        data[chunks[2] + 1..chunks[2] + 9].copy_from_slice(&(1u64 << 40).to_le_bytes());
        data.truncate(chunks[chunks.len() - 2] + 5000);
        let opts = WriteOptions::new();
        let limits = RecoverOptions::default();
        let (expected, expected_report) = recover_on(
            Bytes::from(data.clone()),
            Vec::new(),
            opts.clone(),
            limits,
            0,
        )
        .unwrap();
        // Of a stream whose length is told (a remote object), the corrupt length is seen to
        // run past the end at once, and the window holds about a chunk.
        let told = Window::new(&data[..], Some(data.len() as u64), limits.max_chunk_size);
        let (out, report, peak) =
            recover_source(Source::Stream(told), Vec::new(), opts.clone(), limits, 0).unwrap();
        assert!(out == expected);
        assert_eq!(report, expected_report);
        assert!(report.messages_recovered > 9_000, "{report:?}");
        // The chunk with a corrupt length (as far as it decodes) and the cut one.
        assert_eq!(report.chunks_partial, 2, "{report:?}");
        assert!(data.len() > 36 << 20, "{}", data.len());
        assert!(peak < 8 << 20, "held {peak} bytes at once");
        // Of a stream of unknown length, only its end shows that the length runs past it: the
        // window reads on to the end (within the limit), and the output is the same.
        let (out, report) = recover_stream(&data[..], Vec::new(), opts, limits).unwrap();
        assert!(out == expected);
        assert_eq!(report, expected_report);
        eprintln!(
            "recovered {} bytes through a window of at most {peak}",
            data.len()
        );
    }

    #[test]
    fn a_record_larger_than_the_window_over_a_remote_input_is_an_error() {
        let data = robolog_testkit::testdata::read("samples/demo-zstd.mcap");
        let len = data.len() as u64;
        let window = Window::new(&data[..], Some(len), 1000);
        let limits = RecoverOptions::new().max_chunk_size(1000);
        let result = recover_source(
            Source::Stream(window),
            Vec::new(),
            WriteOptions::new(),
            limits,
            0,
        );
        assert!(
            matches!(result, Err(McapError::TooLarge { limit: 1000, .. })),
            "{:?}",
            result.map(|(_, report, _)| report)
        );
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
