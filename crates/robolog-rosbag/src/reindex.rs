//! Reindex and recover: turn an unindexed, killed or cut 2.0 bag, or any 1.2 bag, into a valid
//! indexed 2.0 bag holding every intact message.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufWriter, Read, Seek, Write};
use std::path::Path;

use robolog_framing::{AtomicFile, Bytes, Problem, StreamWindow};
use robolog_query::Input;

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::format::framing::view_record;
use crate::format::time::RosTime;
use crate::format::version::{MAX_LINE, Version, parse_version_line};
use crate::open::read_file_header;
use crate::scan::{
    InMemory, ScanInput, ScanOptions, ScanResult, ScannedChunk, resolve_connections, scan_with,
    window_error, window_limit,
};
use crate::stream::{StreamOptions, StreamReader};
use crate::v12::linear;
use crate::writer::{WriteOptions, Writer};

/// What reindex keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReindexMode {
    /// Exactly what `rosbag reindex` keeps: the chunks before the first unterminated, cut or
    /// undecodable one. Its output matches ros_comm's byte for byte.
    #[default]
    RosCompatible,
    /// Also the complete messages of a cut, unterminated or corrupt chunk (rebuilt into a new,
    /// properly closed chunk), and whatever follows a corrupt chunk.
    Salvage,
}

/// How to reindex.
#[derive(Debug, Clone, Default)]
pub struct ReindexOptions {
    mode: ReindexMode,
    write: WriteOptions,
    max_chunk_size: Option<usize>,
}

impl ReindexOptions {
    /// ROS-compatible mode; 1.2 bags are converted to uncompressed 768 KiB chunks, as ROS does.
    pub fn new() -> Self {
        Self::default()
    }

    /// What to keep.
    pub fn mode(mut self, mode: ReindexMode) -> Self {
        self.mode = mode;
        self
    }

    /// Layout of the chunks reindex writes itself: all of them when converting a 1.2 bag,
    /// salvaged chunks otherwise (which keep their original compression; the options' bzip2
    /// level applies).
    pub fn write_options(mut self, options: WriteOptions) -> Self {
        self.write = options;
        self
    }

    /// The largest uncompressed chunk accepted (1 GiB by default).
    pub fn max_chunk_size(mut self, bytes: usize) -> Self {
        self.max_chunk_size = Some(bytes);
        self
    }
}

/// What reindex did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReindexReport {
    /// The input's format version.
    pub input_version: Version,
    /// Chunks in the output.
    pub chunks: u64,
    /// Messages in the output.
    pub messages: u64,
    /// Of those, messages recovered from cut, unterminated or corrupt chunks.
    pub salvaged_messages: u64,
    /// Complete messages found in the input but not written (ROS-compatible mode drops the
    /// messages of an unterminated chunk; messages on undefined connections are dropped).
    pub dropped_messages: u64,
    /// Records cut off by the end of the file or by damage (each lost at least one message or
    /// connection).
    pub incomplete_records: u64,
    /// Bytes that ended up in no complete record (a lower bound where compressed data could
    /// not be decoded).
    pub bytes_dropped: u64,
    /// What was found, where.
    pub problems: Vec<Problem>,
}

impl ReindexReport {
    /// True when anything of the input was lost.
    pub fn lost_data(&self) -> bool {
        self.dropped_messages > 0 || self.incomplete_records > 0 || self.bytes_dropped > 0
    }
}

/// Reindexes the bag in `input`, writing a valid indexed 2.0 bag to `output`.
///
/// ```
/// use std::io::Cursor;
/// use robolog_rosbag::{reindex, Bag, ReindexOptions, Writer};
///
/// let mut writer = Writer::new(Cursor::new(Vec::new()))?;
/// let conn = writer.add_connection("/a", "std_msgs/Empty", "d41d8cd98f00b204e9800998ecf8427e", "")?;
/// writer.write(conn, 1, b"")?;
/// writer.write(conn, 2, b"")?;
/// let bag = writer.finish()?.into_inner();
///
/// let mut out = Cursor::new(Vec::new());
/// let report = reindex(&bag.into(), &mut out, &ReindexOptions::new())?;
/// assert_eq!((report.messages, report.lost_data()), (2, false));
/// assert_eq!(Bag::open(out.into_inner())?.summary().message_count, 2);
/// # Ok::<(), robolog_rosbag::Error>(())
/// ```
pub fn reindex<W: Write + Seek>(
    input: &Bytes,
    output: W,
    options: &ReindexOptions,
) -> Result<ReindexReport> {
    let (version, line_len) = parse_version_line(input)?;
    match version {
        Version::V1_2 => convert_v12(input, output, options),
        Version::V2_0 => {
            let (_, start) = read_file_header(input, line_len)?;
            let copier = ChunkCopier::new(output, options)?;
            copy_chunks(&mut InMemory(input), start as u64, copier, options)
        }
    }
}

/// [`reindex`] of a bag read by position that is not in memory (a remote object, a file read
/// with positional reads): read once, front to back, as it streams in, through a window that
/// holds the record being read, never the whole bag ([`reindex_stream`]). An input in memory
/// is reindexed in place.
pub fn reindex_input<W: Write + Seek>(
    input: &Input,
    output: W,
    options: &ReindexOptions,
) -> Result<ReindexReport> {
    if let Some(bytes) = input.in_memory() {
        return reindex(bytes, output, options);
    }
    let len = input.len();
    stream_reindex(input.stream(0..len), Some(len), output, options)
}

/// [`reindex`] of a bag read front to back from `reader` (a pipe, standard input): memory
/// grows with the largest chunk, not with the bag (except in a bag that defines a connection
/// after messages on it, which recorders never write: its chunks from there on are held until
/// the end, when it is known whether the connection is defined). The output is the one
/// [`reindex`] writes of the same bytes, with one exception: in a 1.2 bag, a record that
/// claims more bytes than the file holds (and fewer than `max_chunk_size`) is reported as cut
/// by the end of the stream, where [`reindex`], which knows the file's length, reports it as
/// longer than the file.
///
/// ```
/// use robolog_rosbag::{reindex_stream, Bag, ReindexMode, ReindexOptions, Writer};
/// use std::io::Cursor;
///
/// let mut writer = Writer::new(Cursor::new(Vec::new()))?;
/// let conn = writer.add_connection("/a", "std_msgs/Empty", "d41d8cd98f00b204e9800998ecf8427e", "")?;
/// for t in 1..=3 {
///     writer.write(conn, t, b"")?;
/// }
/// let bag = writer.finish()?.into_inner();
///
/// // A bag cut short inside its index section (the last 200 bytes are lost): the messages
/// // are all there.
/// let cut = bag.len() - 200;
/// let options = ReindexOptions::new().mode(ReindexMode::Salvage);
/// let mut out = Cursor::new(Vec::new());
/// let report = reindex_stream(&bag[..cut], &mut out, &options)?;
/// assert_eq!(report.messages, 3);
/// assert_eq!(Bag::open(out.into_inner())?.summary().message_count, 3);
/// # Ok::<(), robolog_rosbag::Error>(())
/// ```
pub fn reindex_stream<R: Read, W: Write + Seek>(
    reader: R,
    output: W,
    options: &ReindexOptions,
) -> Result<ReindexReport> {
    stream_reindex(reader, None, output, options)
}

fn stream_reindex<R: Read, W: Write + Seek>(
    reader: R,
    len: Option<u64>,
    output: W,
    options: &ReindexOptions,
) -> Result<ReindexReport> {
    let cap = options.max_chunk_size.unwrap_or(DEFAULT_MAX_CHUNK) as u64;
    let mut window = StreamWindow::new(reader, len, window_limit(cap as usize));
    let head_end = window.fill(MAX_LINE as u64).map_err(window_error)?;
    let (version, line_len) = parse_version_line(window.slice(0, head_end))?;
    if version == Version::V1_2 {
        let head = window.slice(0, head_end).to_vec();
        let rest = StreamWindowReader {
            window,
            at: head_end,
        };
        return convert_v12_stream(std::io::Cursor::new(head).chain(rest), len, output, options);
    }
    // The file header: its head first, then the whole record.
    let mut end = window
        .fill(line_len as u64 + FILE_HEADER_VIEW)
        .map_err(window_error)?;
    if let Ok(record) = view_record(window.slice(line_len as u64, end), line_len as u64)
        && !record.is_complete()
    {
        // A longer one than a chunk may be is read up to that, and found cut.
        let whole = line_len as u64 + 8 + record.header.len() as u64 + u64::from(record.data_len);
        end = window.fill(whole.min(cap)).map_err(window_error)?;
    }
    let (_, start) = read_file_header(window.slice(0, end), line_len)?;
    let copier = ChunkCopier::new(output, options)?;
    copy_chunks(&mut window, start as u64, copier, options)
}

/// The largest uncompressed chunk accepted unless told otherwise.
const DEFAULT_MAX_CHUNK: usize = 1 << 30;

/// Bytes of a stream first read for its file header (which ROS pads to 4 KiB).
const FILE_HEADER_VIEW: u64 = 8 << 10;

/// The rest of a stream a window has started on, from `at`.
struct StreamWindowReader<'r> {
    window: StreamWindow<'r>,
    at: u64,
}

impl Read for StreamWindowReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let end = self
            .window
            .fill(self.at.saturating_add(buf.len() as u64))
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let held = self.window.slice(self.at, end);
        let n = held.len();
        buf[..n].copy_from_slice(held);
        self.at = end;
        self.window.release(end);
        Ok(n)
    }
}

/// Scans a 2.0 bag from `start` and copies its chunks.
fn copy_chunks<I, W>(
    input: &mut I,
    start: u64,
    mut copier: ChunkCopier<W>,
    options: &ReindexOptions,
) -> Result<ReindexReport>
where
    I: ScanInput,
    Error: From<I::Error>,
    W: Write + Seek,
{
    let scan_options = ScanOptions {
        salvage: options.mode == ReindexMode::Salvage,
        cap: options.max_chunk_size.unwrap_or(DEFAULT_MAX_CHUNK),
    };
    let (connections, tally) = scan_with(input, start, scan_options, |chunk, known| {
        copier.take(chunk, known)
    })?;
    copier.finish(ScanResult::new(connections, tally))
}

/// Writes the chunks a scan hands over, in file order: each as soon as its connections are
/// defined. A bag may define a connection after its messages (its index section repeats the
/// definitions), so from the first chunk with a message on a connection not defined yet, the
/// chunks are held until the scan ends; a connection never defined then drops its messages.
struct ChunkCopier<W: Write + Seek> {
    writer: Writer<W>,
    held: Vec<ScannedChunk>,
    chunks: u64,
    messages: u64,
}

impl<W: Write + Seek> ChunkCopier<W> {
    fn new(output: W, options: &ReindexOptions) -> Result<Self> {
        Ok(Self {
            writer: Writer::with_options(output, options.write.clone())?,
            held: Vec::new(),
            chunks: 0,
            messages: 0,
        })
    }

    fn take(&mut self, chunk: ScannedChunk, known: &BTreeMap<u32, Connection>) -> Result<()> {
        if self.held.is_empty() && chunk.entries.iter().all(|e| known.contains_key(&e.conn)) {
            self.write(&chunk)
        } else {
            self.held.push(chunk);
            Ok(())
        }
    }

    fn write(&mut self, chunk: &ScannedChunk) -> Result<()> {
        self.chunks += 1;
        self.messages += chunk.entries.len() as u64;
        match &chunk.salvaged {
            None => self
                .writer
                .copy_chunk(&chunk.record, chunk.index.as_deref(), &chunk.entries),
            Some(content) => self
                .writer
                .write_chunk(chunk.compression, content, &chunk.entries),
        }
    }

    /// Writes the held chunks and the index section.
    fn finish(mut self, mut scanned: ScanResult) -> Result<ReindexReport> {
        scanned.chunks = std::mem::take(&mut self.held);
        resolve_connections(&mut scanned);
        for chunk in &scanned.chunks {
            self.write(chunk)?;
        }
        for connection in scanned.connections.values() {
            self.writer.insert_connection(connection.clone())?;
            // Their records are inside the chunks that are copied.
            self.writer.mark_in_chunk(connection.id);
        }
        self.writer.finish()?;
        Ok(ReindexReport {
            input_version: Version::V2_0,
            chunks: self.chunks,
            messages: self.messages,
            salvaged_messages: scanned.salvaged_messages,
            dropped_messages: scanned.dropped_messages,
            incomplete_records: scanned.incomplete_records,
            bytes_dropped: scanned.bytes_dropped,
            problems: scanned.problems,
        })
    }
}

/// Converts a 1.2 bag to 2.0, as `rosbag reindex` does: every message in file order, one
/// connection per topic and definition.
fn convert_v12<W: Write + Seek>(
    input: &Bytes,
    output: W,
    options: &ReindexOptions,
) -> Result<ReindexReport> {
    // In memory, a record may be as long as the file.
    let contents = linear(&Input::from(input.clone()), false, input.len() as u64)?;
    let mut writer = Writer::with_options(output, options.write.clone())?;
    for connection in &contents.connections {
        writer.insert_connection(connection.clone())?;
    }
    for m in &contents.messages {
        // Where a message lies in memory fits in memory.
        let data = m.data.start as usize..m.data.end as usize;
        writer.write_at(m.conn, m.time, &input[data])?;
    }
    let (_, chunks) = writer.finish_with_count()?;
    Ok(ReindexReport {
        input_version: Version::V1_2,
        chunks,
        messages: contents.messages.len() as u64,
        salvaged_messages: 0,
        dropped_messages: contents.dropped_messages,
        incomplete_records: contents.incomplete_records,
        bytes_dropped: contents.bytes_dropped,
        problems: contents.problems,
    })
}

/// [`convert_v12`] of a stream: each message written as it is read. A record may be as long
/// as the stream's length, when told (as [`convert_v12`] allows in memory), or the largest
/// chunk accepted.
fn convert_v12_stream<R: Read, W: Write + Seek>(
    reader: R,
    len: Option<u64>,
    output: W,
    options: &ReindexOptions,
) -> Result<ReindexReport> {
    let limit = len.unwrap_or(options.max_chunk_size.unwrap_or(DEFAULT_MAX_CHUNK) as u64);
    let stream_options = StreamOptions::new().recover(true).max_record_size(limit);
    let mut reader = StreamReader::with_options(reader, stream_options)?;
    let mut writer = Writer::with_options(output, options.write.clone())?;
    let mut inserted = BTreeSet::new();
    let mut messages = 0u64;
    while let Some(message) = reader.next_message()? {
        if inserted.insert(message.conn)
            && let Some(connection) = reader.connection(message.conn)
        {
            writer.insert_connection(connection.clone())?;
        }
        writer.write_at(
            message.conn,
            RosTime::from_ns(message.time_ns)?,
            &message.data,
        )?;
        messages += 1;
    }
    for connection in reader.connections() {
        if inserted.insert(connection.id) {
            writer.insert_connection(connection.clone())?;
        }
    }
    let (_, chunks) = writer.finish_with_count()?;
    let report = reader.report();
    Ok(ReindexReport {
        input_version: Version::V1_2,
        chunks,
        messages,
        salvaged_messages: 0,
        dropped_messages: report.dropped_messages,
        incomplete_records: report.incomplete_records,
        bytes_dropped: report.bytes_dropped,
        problems: report.problems.clone(),
    })
}

/// Reindexes the bag at `input` into a new file at `output`, which appears only once it is
/// complete (it may be the input's own path). The input is read into memory whole.
pub fn reindex_file(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
    options: &ReindexOptions,
) -> Result<ReindexReport> {
    let data = robolog_framing::read_file(input)?;
    let file = AtomicFile::create(output)?;
    let mut out = BufWriter::new(file);
    let report = reindex(&data, &mut out, options)?;
    let file = out.into_inner().map_err(|e| Error::Io(e.into_error()))?;
    file.commit()?;
    Ok(report)
}
