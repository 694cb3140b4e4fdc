//! Opening a bag through its input, read by position: version, connections, chunks and
//! summary, from the index when it is valid and from a linear scan otherwise.

use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use robolog_framing::{Bytes, Problem, ProblemKind};
use robolog_query::{BufferPool, Input};

use crate::chunk::ChunkCompression;
use crate::connection::Connection;
use crate::error::{Error, RecordKind, Result};
use crate::format::framing::{read_record, view_record};
use crate::format::records::{CHUNK_INFO_HEADER_LEN, Header, parse_header};
use crate::format::version::{Version, parse_version_line};
use crate::linear::{IndexEntry, counts_in_order};
use crate::query::Query;
use crate::scan::{ScanOptions, scan_input};
use crate::summary::{ChunkHeader, ChunkInfo, CompressionStats, Summary, compression_stats};
use crate::v12::{V12Message, read_v12};

/// Whether the file's own index was used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexStatus {
    /// The index was read and used.
    Used,
    /// The file has no index (a recording that was never closed, or a 1.2 bag without one), so
    /// it was read by a linear scan.
    Missing,
    /// The index contradicts the file, so it was read by a linear scan.
    Damaged {
        /// Where the contradiction was found.
        offset: u64,
        /// What it is.
        message: String,
    },
}

/// How to open a bag.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    strict: bool,
    verify_chunks: bool,
    max_chunk_size: usize,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            strict: false,
            verify_chunks: false,
            max_chunk_size: 1 << 30,
        }
    }
}

impl OpenOptions {
    /// Lenient defaults: a missing or damaged index falls back to a linear scan that also
    /// recovers the complete messages of a cut or unterminated last chunk; chunks may hold up
    /// to 1 GiB uncompressed.
    pub fn new() -> Self {
        Self::default()
    }

    /// In strict mode, an unindexed bag is [`Error::Unindexed`] and a damaged index is
    /// [`Error::IndexDamaged`] instead of a scan.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// Whether opening reads and checks the header of every chunk the index lists (off by
    /// default).
    ///
    /// Off, opening reads only the file header and the index section at the end of the file,
    /// so it takes the same time for a bag of any size; a chunk's header is read, bounds-checked
    /// and parsed when a query (or [`Bag::chunk_headers`]) first needs it, and a chunk position
    /// that does not lead to a chunk record is reported there, as [`Error::IndexDamaged`] at
    /// that position (the query then goes on with the other chunks).
    ///
    /// On, opening visits every chunk header as ros_comm does, which costs a page of the file
    /// per chunk, and an index pointing anywhere but at a chunk is found at once: in lenient
    /// mode the bag is then read by a linear scan, in strict mode it is
    /// [`Error::IndexDamaged`]. Checkers and converters that must not miss a message of a
    /// damaged bag want this.
    pub fn verify_chunks(mut self, verify: bool) -> Self {
        self.verify_chunks = verify;
        self
    }

    /// The largest uncompressed chunk accepted (a guard against hostile size fields). At most
    /// `u32::MAX`, the largest size a CHUNK header can state; larger values mean that.
    pub fn max_chunk_size(mut self, bytes: usize) -> Self {
        self.max_chunk_size = bytes.min(u32::MAX as usize);
        self
    }
}

/// Where a chunk's index entries come from.
#[derive(Debug, Clone)]
pub(crate) enum ChunkIndex {
    /// `count` INDEX_DATA records in the file, right after the chunk record.
    Records { count: u32 },
    /// Entries found by scanning the chunk, in file order.
    Entries(Arc<[IndexEntry]>),
}

/// What the CHUNK record's header says, and where its parts are in the file.
#[derive(Debug, Clone)]
pub(crate) struct ChunkLayout {
    pub(crate) compression: ChunkCompression,
    /// Chunk data in the file (compressed, or the records themselves).
    pub(crate) data: Range<usize>,
    /// Declared uncompressed size.
    pub(crate) size: u32,
    /// Where the INDEX_DATA records after the chunk start.
    pub(crate) index_start: usize,
}

/// Why a chunk's layout could not be read: kept instead of an [`Error`], which is not `Clone`,
/// so that every query reaching the chunk reports the same error.
#[derive(Debug, Clone)]
pub(crate) enum LayoutFault {
    Damaged(&'static str),
    Unsupported(String),
    /// The input could not be read there.
    Unreadable(String),
}

/// A chunk and everything needed to read it.
#[derive(Debug, Clone)]
pub(crate) struct ChunkEntry {
    pub(crate) info: ChunkInfo,
    /// Read from the chunk header on first use (or set by the scan that found the chunk).
    layout: OnceLock<std::result::Result<ChunkLayout, LayoutFault>>,
    /// Decoded records of a salvaged chunk.
    pub(crate) salvaged: Option<Bytes>,
    pub(crate) index: ChunkIndex,
}

impl ChunkEntry {
    /// The chunk's header, read and checked the first time it is asked for. The CHUNK record
    /// must lie whole in `section` (the chunk section, before the index).
    pub(crate) fn layout(&self, input: &Input, section: &Range<usize>) -> Result<&ChunkLayout> {
        let position = self.info.position;
        self.layout
            .get_or_init(|| read_layout(input, section, position))
            .as_ref()
            .map_err(|fault| match fault {
                LayoutFault::Damaged(message) => Error::index_damaged(position, *message),
                LayoutFault::Unsupported(name) => Error::UnsupportedCompression {
                    offset: position,
                    name: name.clone(),
                },
                LayoutFault::Unreadable(message) => Error::Read {
                    offset: position,
                    source: std::io::Error::other(message.clone()),
                },
            })
    }

    /// The chunk's header, when it has been read (and was sound).
    pub(crate) fn known_layout(&self) -> Option<&ChunkLayout> {
        self.layout.get().and_then(|layout| layout.as_ref().ok())
    }
}

/// Bytes read to find a chunk's header: a CHUNK header is some 60 bytes (a longer one is read
/// again whole).
const CHUNK_HEAD_LEN: u64 = 512;

/// Announces the reads of the chunk headers not read yet: from a remote object they are then
/// fetched a few requests at once and neighbours together, not one after another.
fn prefetch_heads(input: &Input, chunks: &[ChunkEntry], section: &Range<usize>) {
    let end = section.end as u64;
    let heads: Vec<Range<u64>> = chunks
        .iter()
        .filter(|c| c.layout.get().is_none())
        .map(|c| c.info.position..end.min(c.info.position.saturating_add(CHUNK_HEAD_LEN)))
        .collect();
    input.prefetch(&heads);
}

fn read_layout(
    input: &Input,
    section: &Range<usize>,
    position: u64,
) -> std::result::Result<ChunkLayout, LayoutFault> {
    // Opening checked that the position is in the section; this keeps the function whole.
    if !usize::try_from(position).is_ok_and(|p| section.contains(&p)) {
        return Err(LayoutFault::Damaged(
            "chunk position outside the chunk section",
        ));
    }
    let incomplete = LayoutFault::Damaged("no complete chunk record at this position");
    let end = section.end as u64;
    let read = |len: u64| {
        input
            .read(position..end.min(position.saturating_add(len)))
            .map_err(|e| LayoutFault::Unreadable(e.to_string()))
    };
    let mut head = read(CHUNK_HEAD_LEN)?;
    let needed = head
        .get(..4)
        .map(|b| 8 + u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])));
    if needed.is_some_and(|n| n > head.len() as u64) {
        head = read(needed.unwrap_or(0))?;
    }
    let record = view_record(&head, position).map_err(|_| incomplete.clone())?;
    let data_start = record.data_offset();
    if data_start.saturating_add(u64::from(record.data_len)) > end {
        return Err(incomplete);
    }
    let Ok(Header::Chunk(chunk)) = parse_header(record.header, record.header_offset()) else {
        return Err(LayoutFault::Damaged("no chunk record at this position"));
    };
    let compression = ChunkCompression::from_name(chunk.compression).ok_or_else(|| {
        LayoutFault::Unsupported(String::from_utf8_lossy(chunk.compression).into_owned())
    })?;
    let data_start = data_start as usize;
    let data_end = data_start + record.data_len as usize;
    Ok(ChunkLayout {
        compression,
        data: data_start..data_end,
        size: chunk.size,
        index_start: data_end,
    })
}

#[derive(Debug)]
pub(crate) struct BagData {
    pub(crate) input: Input,
    pub(crate) version: Version,
    pub(crate) connections: Vec<Connection>,
    pub(crate) chunks: Vec<ChunkEntry>,
    /// Where chunk records may be: from the end of the file header to the index.
    pub(crate) chunk_section: Range<usize>,
    /// A 1.2 bag's messages (outside chunks), in file order.
    pub(crate) v12_messages: Vec<V12Message>,
    pub(crate) summary: Summary,
    pub(crate) index_status: IndexStatus,
    pub(crate) problems: Vec<Problem>,
    pub(crate) max_chunk_size: usize,
    /// The chunks' positions, sorted: where each chunk's INDEX_DATA records end at the latest.
    positions: Vec<u64>,
}

impl BagData {
    /// Where the chunk after the one at `position` starts (or the index section, after the
    /// last).
    pub(crate) fn next_chunk_after(&self, position: u64) -> u64 {
        let i = self.positions.partition_point(|&p| p <= position);
        self.positions
            .get(i)
            .copied()
            .unwrap_or(self.chunk_section.end as u64)
    }

    fn new(input: Input, version: Version, max_chunk_size: usize) -> Self {
        Self {
            input,
            version,
            connections: Vec::new(),
            chunks: Vec::new(),
            chunk_section: 0..0,
            v12_messages: Vec::new(),
            summary: Summary::default(),
            index_status: IndexStatus::Used,
            problems: Vec::new(),
            max_chunk_size,
            positions: Vec::new(),
        }
    }

    fn with_chunks(mut self, chunks: Vec<ChunkEntry>) -> Self {
        let mut positions: Vec<u64> = chunks.iter().map(|c| c.info.position).collect();
        positions.sort_unstable();
        self.positions = positions;
        self.chunks = chunks;
        self
    }
}

/// An open bag (format 2.0 or 1.2), read through its [`Input`]. Cheap to clone; queries share
/// it.
///
/// ```no_run
/// use robolog_rosbag::Bag;
/// let bag = Bag::from_file("recording.bag")?;
/// for c in bag.connections() {
///     println!("{} {} ({} messages)", c.topic, c.message_type, bag.summary().message_counts[&c.id]);
/// }
/// for message in bag.messages().topics(["/imu"]) {
///     let message = message?;
///     println!("{} {} bytes", message.time_ns, message.data.len());
/// }
/// # Ok::<(), robolog_rosbag::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Bag {
    pub(crate) inner: Arc<BagData>,
    /// Decode buffers, shared by the bag's queries.
    pub(crate) buffers: BufferPool,
}

impl Bag {
    /// Opens an input (a buffer, a file opened with [`Input::open`], ...) with the default,
    /// lenient [`OpenOptions`].
    pub fn open(input: impl Into<Input>) -> Result<Self> {
        Self::open_with(input, OpenOptions::default())
    }

    /// Opens the file at `path`, read by position as queries need its parts, with the default
    /// options.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        Self::open(Input::open(path)?)
    }

    /// Opens an input with `options`.
    pub fn open_with(input: impl Into<Input>, options: OpenOptions) -> Result<Self> {
        open(input.into(), &options)
    }

    /// The format version.
    pub fn version(&self) -> Version {
        self.inner.version
    }

    /// Every connection, ordered by id (including connections without messages).
    pub fn connections(&self) -> &[Connection] {
        &self.inner.connections
    }

    /// The connection with this id.
    pub fn connection(&self, id: u32) -> Option<&Connection> {
        let connections = &self.inner.connections;
        connections
            .binary_search_by_key(&id, |c| c.id)
            .ok()
            .map(|i| &connections[i])
    }

    /// Counts, time range and number of chunks, as the index holds them.
    pub fn summary(&self) -> &Summary {
        &self.inner.summary
    }

    /// The chunks in file order (empty for format 1.2), as the index describes them.
    pub fn chunks(&self) -> impl ExactSizeIterator<Item = &ChunkInfo> + '_ {
        self.inner.chunks.iter().map(|c| &c.info)
    }

    /// The header of each chunk, in the order of [`Bag::chunks`]: compression, sizes and where
    /// its data is. Each is read from the chunk record (once; later calls and queries reuse it),
    /// so this visits the whole file unless [`OpenOptions::verify_chunks`] did at open. A
    /// position that does not lead to a chunk record is [`Error::IndexDamaged`].
    pub fn chunk_headers(&self) -> impl ExactSizeIterator<Item = Result<ChunkHeader>> + '_ {
        let data = &self.inner;
        prefetch_heads(&data.input, &data.chunks, &data.chunk_section);
        data.chunks.iter().map(|c| {
            c.layout(&data.input, &data.chunk_section)
                .map(|layout| ChunkHeader {
                    compression: layout.compression,
                    compressed_size: layout.data.len() as u64,
                    uncompressed_size: u64::from(layout.size),
                    data_offset: layout.data.start as u64,
                })
        })
    }

    /// Chunk totals per compression, ordered by compression (`none`, `bz2`, `lz4`): the sum of
    /// [`Bag::chunk_headers`], and the first error among them.
    pub fn compression(&self) -> Result<Vec<CompressionStats>> {
        let headers: Vec<ChunkHeader> = self.chunk_headers().collect::<Result<_>>()?;
        Ok(compression_stats(headers.into_iter()))
    }

    /// Whether the file's index was used or the bag was scanned, and why.
    pub fn index_status(&self) -> &IndexStatus {
        &self.inner.index_status
    }

    /// Damage and oddities found while opening (empty for a healthy bag). When the index of a
    /// 2.0 bag was missing or damaged, or that of a 1.2 bag damaged, the first problem says so
    /// (the same fact as [`Bag::index_status`]). Chunk headers are not part of this unless
    /// [`OpenOptions::verify_chunks`] was on: otherwise a damaged one is an error of the query
    /// that reaches it.
    pub fn problems(&self) -> &[Problem] {
        &self.inner.problems
    }

    /// The input the bag is read from.
    pub fn input(&self) -> &Input {
        &self.inner.input
    }

    /// A query over the messages: every message in time order unless narrowed down.
    pub fn messages(&self) -> Query {
        Query::new(self.clone())
    }
}

/// Bytes read from the start of a bag for its version line and file header (which ROS pads to
/// 4 KiB; a longer one is read again whole).
const HEAD_LEN: u64 = 8 << 10;

fn open(input: Input, options: &OpenOptions) -> Result<Bag> {
    let io = |offset: u64| move |source| Error::Read { offset, source };
    let head = input.read_up_to(0, HEAD_LEN).map_err(io(0))?;
    let (version, line_len) = parse_version_line(&head)?;
    let head = with_file_header(&input, head, line_len)?;
    let data = match version {
        Version::V1_2 => open_v12(input, &head, line_len, options)?,
        Version::V2_0 => open_v20(input, head, line_len, options)?,
    };
    Ok(Bag {
        inner: Arc::new(data),
        buffers: BufferPool::new(),
    })
}

/// `head`, the first bytes of the bag, read again to hold all of the record after the version
/// line (the file header) when it is longer.
fn with_file_header(input: &Input, head: Bytes, line_len: usize) -> Result<Bytes> {
    if (head.len() as u64) < input.len()
        && let Ok(record) = view_record(head.get(line_len..).unwrap_or_default(), line_len as u64)
        && !record.is_complete()
    {
        let end = line_len as u64 + 8 + record.header.len() as u64 + u64::from(record.data_len);
        return input
            .read_up_to(0, end)
            .map_err(|source| Error::Read { offset: 0, source });
    }
    Ok(head)
}

fn open_v12(input: Input, head: &[u8], start: usize, options: &OpenOptions) -> Result<BagData> {
    // What is read by position is bounded by the largest record accepted, as a chunk is.
    let contents = read_v12(
        &input,
        head,
        start,
        options.strict,
        options.max_chunk_size as u64,
    )?;
    let mut summary = Summary {
        message_counts: contents.connections.iter().map(|c| (c.id, 0)).collect(),
        ..Summary::default()
    };
    for m in &contents.messages {
        *summary.message_counts.entry(m.conn).or_insert(0) += 1;
        summary.message_count += 1;
        let ns = m.time.to_ns();
        summary.start_ns = Some(summary.start_ns.map_or(ns, |s| s.min(ns)));
        summary.end_ns = Some(summary.end_ns.map_or(ns, |e| e.max(ns)));
    }
    Ok(BagData {
        connections: contents.connections,
        v12_messages: contents.messages,
        summary,
        index_status: contents.status.unwrap_or(IndexStatus::Missing),
        problems: contents.problems,
        ..BagData::new(input, Version::V1_2, options.max_chunk_size)
    })
}

/// The FILE_HEADER of a 2.0 bag, and where the first record after it starts.
pub(crate) fn read_file_header(
    file: &[u8],
    at: usize,
) -> Result<(crate::format::records::FileHeader, usize)> {
    let record = read_record(
        &file[at.min(file.len())..],
        at as u64,
        RecordKind::FileHeader,
    )?;
    match parse_header(record.header, record.header_offset())? {
        Header::FileHeader(header) => {
            if let Some(encryptor) = header.encryptor {
                return Err(Error::Encrypted { encryptor });
            }
            Ok((header, at + record.len()))
        }
        other => Err(Error::malformed(
            RecordKind::FileHeader,
            at as u64,
            format!("expected the file header, found a {}", other.kind()),
        )),
    }
}

fn open_v20(input: Input, head: Bytes, line_len: usize, options: &OpenOptions) -> Result<BagData> {
    let (header, chunks_start) = read_file_header(&head, line_len)?;
    let failure = if header.index_pos == 0 {
        if options.strict {
            return Err(Error::Unindexed);
        }
        IndexStatus::Missing
    } else {
        let index = read_index(&input, chunks_start, &header).and_then(|index| {
            if options.verify_chunks {
                prefetch_heads(&input, &index.chunks, &index.chunk_section);
                for chunk in &index.chunks {
                    chunk.layout(&input, &index.chunk_section)?;
                }
            }
            Ok(index)
        });
        match index {
            Ok(Index {
                connections,
                chunks,
                chunk_section,
            }) => {
                let summary = Summary::from_chunks(
                    connections.iter().map(|c| c.id),
                    chunks.iter().map(|c| &c.info),
                );
                return Ok(BagData {
                    connections,
                    chunk_section,
                    summary,
                    ..BagData::new(input, Version::V2_0, options.max_chunk_size)
                }
                .with_chunks(chunks));
            }
            Err(e) if options.strict => return Err(e),
            Err(Error::IndexDamaged { offset, message }) => {
                IndexStatus::Damaged { offset, message }
            }
            Err(e) => return Err(e),
        }
    };
    let mut problems = vec![match &failure {
        IndexStatus::Damaged { offset, message } => Problem::warning(
            ProblemKind::Index,
            *offset,
            format!("index damaged ({message}); read by a linear scan"),
        ),
        _ => Problem::warning(
            ProblemKind::Index,
            line_len as u64,
            "unindexed bag (index_pos = 0); read by a linear scan",
        ),
    }];
    let scanned = scan_input(
        &input,
        chunks_start,
        ScanOptions {
            salvage: true,
            cap: options.max_chunk_size,
        },
    )?;
    problems.extend(scanned.problems);
    let connections: Vec<Connection> = scanned.connections.into_values().collect();
    let chunks: Vec<ChunkEntry> = scanned
        .chunks
        .into_iter()
        .map(|c| {
            let (start, end) = c.time_range().unwrap_or_default();
            ChunkEntry {
                info: ChunkInfo {
                    position: c.pos,
                    start_ns: start.to_ns(),
                    end_ns: end.to_ns(),
                    message_counts: counts_in_order(&c.entries),
                },
                layout: OnceLock::from(Ok(ChunkLayout {
                    compression: c.compression,
                    index_start: c.data.end as usize,
                    data: c.data.start as usize..c.data.end as usize,
                    size: c.size,
                })),
                salvaged: c.salvaged,
                index: ChunkIndex::Entries(c.entries.into()),
            }
        })
        .collect();
    let summary = Summary::from_chunks(
        connections.iter().map(|c| c.id),
        chunks.iter().map(|c| &c.info),
    );
    let chunk_section = chunks_start..input.len() as usize;
    Ok(BagData {
        connections,
        chunk_section,
        summary,
        index_status: failure,
        problems,
        ..BagData::new(input, Version::V2_0, options.max_chunk_size)
    }
    .with_chunks(chunks))
}

/// What the index section holds.
struct Index {
    connections: Vec<Connection>,
    chunks: Vec<ChunkEntry>,
    chunk_section: Range<usize>,
}

/// Reads the index section and checks it against itself and the file header: every offset in
/// bounds, every count backed by bytes, every chunk's connections defined. Chunk headers are
/// not read here (see [`OpenOptions::verify_chunks`]).
fn read_index(
    input: &Input,
    chunks_start: usize,
    header: &crate::format::records::FileHeader,
) -> Result<Index> {
    let damaged = |offset: u64, message: String| Error::index_damaged(offset, message);
    let index_pos = header.index_pos;
    let file_len = input.len();
    let index_start = usize::try_from(index_pos)
        .ok()
        .filter(|&p| p >= chunks_start && p as u64 <= file_len)
        .ok_or_else(|| {
            damaged(
                index_pos,
                format!(
                    "index_pos {index_pos} is outside the chunk section ({chunks_start}..={file_len})"
                ),
            )
        })?;
    // The index section runs to the end of the file: one read.
    let section = input
        .read(index_pos..file_len)
        .map_err(|source| Error::Read {
            offset: index_pos,
            source,
        })?;
    let index = section.as_ref();
    let end = index.len();
    let mut connections: Vec<Connection> = Vec::new();
    // The header's count sizes the list only as far as the index section's bytes could hold
    // that many records (each at least its two length fields and the shortest header).
    let room = end / (8 + CHUNK_INFO_HEADER_LEN);
    let mut chunks: Vec<ChunkEntry> = Vec::with_capacity(room.min(header.chunk_count as usize));
    let mut rel = 0;
    while rel < end {
        let pos = index_start + rel;
        let record = view_record(&index[rel..], pos as u64)
            .map_err(|e| damaged(pos as u64, format!("index record cut short: {e}")))?;
        if !record.is_complete() {
            return Err(damaged(pos as u64, "index record cut short".into()));
        }
        match parse_header(record.header, record.header_offset())
            .map_err(|e| damaged(pos as u64, e.to_string()))?
        {
            Header::Connection(c) => {
                let connection =
                    Connection::parse(c.conn, c.topic, record.data, record.data_offset())
                        .map_err(|e| damaged(pos as u64, e.to_string()))?;
                connections.push(connection);
            }
            Header::ChunkInfo(info) => {
                if info.ver != 1 {
                    return Err(damaged(
                        pos as u64,
                        format!("chunk info version {}, expected 1", info.ver),
                    ));
                }
                let needed = 8 * u64::from(info.count);
                if (record.data.len() as u64) < needed {
                    return Err(damaged(
                        pos as u64,
                        format!(
                            "chunk info lists {} connections in {} bytes",
                            info.count,
                            record.data.len()
                        ),
                    ));
                }
                let message_counts = record.data[..needed as usize]
                    .chunks_exact(8)
                    .map(|e| {
                        (
                            u32::from_le_bytes([e[0], e[1], e[2], e[3]]),
                            u32::from_le_bytes([e[4], e[5], e[6], e[7]]),
                        )
                    })
                    .collect();
                chunks.push(ChunkEntry {
                    info: ChunkInfo {
                        position: info.chunk_pos,
                        start_ns: info.start_time.to_ns(),
                        end_ns: info.end_time.to_ns(),
                        message_counts,
                    },
                    layout: OnceLock::new(),
                    salvaged: None,
                    index: ChunkIndex::Records { count: info.count },
                });
            }
            other => {
                return Err(damaged(
                    pos as u64,
                    format!("unexpected {} in the index section", other.kind()),
                ));
            }
        }
        rel += record.len();
    }
    if connections.len() as u64 != u64::from(header.conn_count)
        || chunks.len() as u64 != u64::from(header.chunk_count)
    {
        return Err(damaged(
            index_pos,
            format!(
                "the file header announces {} connections and {} chunks, the index holds {} and {}",
                header.conn_count,
                header.chunk_count,
                connections.len(),
                chunks.len()
            ),
        ));
    }
    connections.sort_by_key(|c| c.id);
    if connections.windows(2).any(|w| w[0].id == w[1].id) {
        return Err(damaged(index_pos, "a connection id appears twice".into()));
    }
    for chunk in &chunks {
        let chunk_pos = chunk.info.position;
        usize::try_from(chunk_pos)
            .ok()
            .filter(|&p| p >= chunks_start && p < index_start)
            .ok_or_else(|| damaged(chunk_pos, "chunk position outside the chunk section".into()))?;
        if let Some((conn, _)) = chunk
            .info
            .message_counts
            .iter()
            .find(|(conn, _)| connections.binary_search_by_key(conn, |c| c.id).is_err())
        {
            return Err(damaged(
                chunk_pos,
                format!("chunk info refers to connection {conn}, which the index does not define"),
            ));
        }
    }
    Ok(Index {
        connections,
        chunks,
        chunk_section: chunks_start..index_start,
    })
}
