//! The linear reader over a whole file in memory (`Bytes`, usually memory-mapped): every record
//! in file order, chunks flattened, CRCs checked, upcoming chunks decompressed in parallel.

use robolog_framing::{Bytes, Crc32, ParallelMap, crc32};

use crate::OwnedMessage;
use robolog_query::BufferPool;

use crate::decode::{DecodeRules, chunk_at, decode_chunk};
use crate::draft::{self, Dialect};
use crate::error::{McapError, Result};
use crate::options::ReadOptions;
use crate::parse::verify_attachment_crc;
use crate::record_source::{RecordSource, Slot};
use crate::records::{Chunk, FOOTER_RECORD_LEN, MAGIC, Message, Record, op, record_name};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Magic,
    Records,
    Done,
}

struct ChunkCursor {
    data: Bytes,
    pos: usize,
    /// File offset of the Chunk record.
    offset: u64,
}

/// A decoded chunk: where it starts, its records, and their part of the data-section CRC.
type Prefetch = ParallelMap<ChunkScanner, (u64, (Result<Bytes>, Option<RecordsCrc>))>;

/// How the chunks of a file are decoded, on a worker or on the reading thread alike.
#[derive(Debug, Clone, Copy)]
struct ChunkDecoding {
    dialect: Dialect,
    max_record_size: u64,
    verify_chunk_crc: bool,
    /// Whether the data-section CRC is checked (never in the draft layout, which has none).
    data_crc: bool,
}

impl ChunkDecoding {
    fn of(opts: &ReadOptions, dialect: Dialect) -> Self {
        Self {
            dialect,
            max_record_size: opts.max_record_size,
            verify_chunk_crc: opts.verify_chunk_crcs,
            data_crc: opts.verify_data_section_crc && dialect.has_data_crcs(),
        }
    }

    /// Decodes the Chunk record at `at` of `data` into `recycled`'s allocation, with what its
    /// records add to the data-section CRC.
    fn decode(
        self,
        data: &Bytes,
        at: u64,
        recycled: Vec<u8>,
    ) -> (Result<Bytes>, Option<RecordsCrc>) {
        match chunk_at(data, at, self.dialect) {
            Ok(c) => (
                decode_chunk(
                    data,
                    &c,
                    at,
                    None,
                    DecodeRules {
                        limit: self.max_record_size,
                        verify_crc: self.verify_chunk_crc,
                        in_halves: false,
                    },
                    recycled,
                )
                .map(|(records, _)| records),
                RecordsCrc::of(data, &c, self.data_crc, self.verify_chunk_crc),
            ),
            Err(e) => (Err(e), None),
        }
    }
}

/// A chunk's records as the data-section CRC sees them: where they lie in the file, and their
/// CRC-32, had without hashing them on the reading thread.
#[derive(Debug, Clone, Copy)]
struct RecordsCrc {
    start: usize,
    len: usize,
    crc: u32,
}

impl RecordsCrc {
    /// For the chunk `chunk` of `data`, when the data-section CRC is checked (`wanted`):
    /// uncompressed records by the chunk's CRC, which decoding checks (`chunk_crc_checked`);
    /// compressed ones hashed here, on the thread that decodes them.
    fn of(data: &[u8], chunk: &Chunk<'_>, wanted: bool, chunk_crc_checked: bool) -> Option<Self> {
        if !wanted {
            return None;
        }
        let crc = if !chunk.compression.is_empty() {
            crc32(chunk.records)
        } else if chunk_crc_checked && chunk.uncompressed_crc != 0 {
            chunk.uncompressed_crc
        } else {
            return None;
        };
        // Where the records lie in the file (the parser lends them from it).
        let start = (chunk.records.as_ptr() as usize).checked_sub(data.as_ptr() as usize)?;
        Some(Self {
            start,
            len: chunk.records.len(),
            crc,
        })
    }
}

/// Reads every record of an MCAP file in file order.
///
/// Chunks are decompressed (on worker threads, a few ahead of the reader) and their records
/// returned in place of the Chunk; MessageIndex records are returned as they come. Records
/// borrow from the input or from the current chunk buffer, so [`LinearReader::next_record`] is a
/// lending method rather than an `Iterator`; [`LinearReader::into_messages`] gives an iterator of
/// messages whose data are `Bytes`.
///
/// An error inside one chunk (a CRC mismatch, corrupt compressed data, an unknown compression)
/// is returned once and reading continues after that chunk. Framing errors and truncation end the
/// reading.
pub struct LinearReader {
    data: Bytes,
    opts: ReadOptions,
    pos: usize,
    phase: Phase,
    chunk: Option<ChunkCursor>,
    flatten: bool,
    /// End of the DataEnd record: where the summary CRC starts.
    data_end_end: Option<usize>,
    prefetch: Option<Prefetch>,
    pool: BufferPool,
    dialect: Dialect,
    /// The second ratified record of a draft record (Channel Info, Header).
    pending: Option<Slot>,
    /// The data-section CRC of the bytes before `.1`, built as the records go by.
    data_crc: (Crc32, usize),
}

impl std::fmt::Debug for LinearReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LinearReader")
            .field("len", &self.data.len())
            .field("pos", &self.pos)
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

impl LinearReader {
    /// A reader over `data` with default options (all CRCs checked, one decoding thread per core).
    pub fn new(data: Bytes) -> Self {
        Self::with_options(data, ReadOptions::default())
    }

    /// A reader over `data` with `opts`. With [`Layout::Auto`](crate::Layout::Auto) a file
    /// whose footer is in the draft layout is read as a draft file.
    pub fn with_options(data: Bytes, opts: ReadOptions) -> Self {
        Self {
            dialect: Dialect::choose(opts.layout, || draft::detect(&data)),
            pending: None,
            data,
            opts,
            pos: 0,
            phase: Phase::Magic,
            chunk: None,
            flatten: true,
            data_end_end: None,
            prefetch: None,
            pool: BufferPool::new(),
            data_crc: (Crc32::new(), 0),
        }
    }

    /// Returns Chunk records as they are instead of their records (default: flatten).
    pub fn flatten_chunks(mut self, flatten: bool) -> Self {
        self.flatten = flatten;
        self
    }

    /// True when the file is read in the pre-ratification draft layout.
    pub fn is_draft(&self) -> bool {
        self.dialect.is_draft()
    }

    /// Absolute offset of the next top-level record.
    pub fn position(&self) -> u64 {
        self.pos as u64
    }

    /// The next record, `None` after the Footer (and the trailing magic), or an error.
    pub fn next_record(&mut self) -> Option<Result<Record<'_>>> {
        self.next_parsed()
    }

    /// Turns the reader into an iterator of messages (other records are checked and skipped).
    pub fn into_messages(self) -> LinearMessages {
        LinearMessages { reader: self }
    }

    fn fail(&mut self, e: McapError) -> Option<Result<Slot>> {
        self.phase = Phase::Done;
        Some(Err(e))
    }

    fn advance_frame(&mut self) -> Option<Result<Slot>> {
        let dialect = self.dialect;
        loop {
            if let Some(cursor) = &mut self.chunk {
                match next_in_chunk(cursor) {
                    Some(result) => return Some(result),
                    None => {
                        if let Some(done) = self.chunk.take() {
                            self.pool.give(done.data);
                        }
                    }
                }
            }
            match self.phase {
                Phase::Done => return None,
                Phase::Magic => {
                    if self.data.len() < MAGIC.len() {
                        let e = if MAGIC.starts_with(&self.data) {
                            McapError::Truncated {
                                offset: 0,
                                record: "magic",
                                what: "leading magic",
                            }
                        } else {
                            McapError::BadMagic { offset: 0 }
                        };
                        return self.fail(e);
                    }
                    if self.data[..MAGIC.len()] != MAGIC {
                        return self.fail(McapError::BadMagic { offset: 0 });
                    }
                    self.pos = MAGIC.len();
                    self.phase = Phase::Records;
                }
                Phase::Records => {
                    let (opcode, start, end) = match frame_at(&self.data, self.pos) {
                        Ok(Some(frame)) => frame,
                        Ok(None) => {
                            return self.fail(McapError::Truncated {
                                offset: self.pos as u64,
                                record: "Footer",
                                what: "the file ends without a Footer",
                            });
                        }
                        Err(e) => return self.fail(e),
                    };
                    let offset = self.pos as u64;
                    self.pos = end;
                    match opcode {
                        o if o == dialect.chunk_op() && self.flatten => {
                            if let Err(e) = self.open_chunk(offset) {
                                return Some(Err(e));
                            }
                            continue;
                        }
                        op::ATTACHMENT
                            if dialect.has_data_crcs() && self.opts.verify_attachment_crcs =>
                        {
                            if let Err(e) = verify_attachment_crc(&self.data[start..end], offset) {
                                return Some(Err(e));
                            }
                        }
                        o if dialect.is_data_end(o) => {
                            self.data_end_end = Some(end);
                            if let Err(e) = self.verify_data_section(offset, start, end) {
                                return Some(Err(e));
                            }
                        }
                        op::FOOTER => {
                            self.phase = Phase::Done;
                            if let Err(e) = self.verify_footer(offset, start, end) {
                                return Some(Err(e));
                            }
                        }
                        _ => {}
                    }
                    return Some(Ok(Slot {
                        in_chunk: false,
                        part: 0,
                        opcode,
                        offset,
                        start,
                        end,
                    }));
                }
            }
        }
    }

    fn open_chunk(&mut self, offset: u64) -> Result<()> {
        let how = ChunkDecoding::of(&self.opts, self.dialect);
        let prefetched = if self.opts.threads > 0 {
            let data = self.data.clone();
            let pool = self.pool.clone();
            let prefetch = self.prefetch.get_or_insert_with(|| {
                let scanner = ChunkScanner::new(data.clone(), offset as usize, pool, how.dialect);
                ParallelMap::new(
                    scanner,
                    self.opts.threads,
                    self.opts.in_flight(),
                    move |(at, recycled): (u64, Vec<u8>)| (at, how.decode(&data, at, recycled)),
                )
            });
            match prefetch.next() {
                Some((at, found)) if at == offset => Some(found),
                _ => None,
            }
        } else {
            None
        };
        let (decoded, records) = match prefetched {
            Some(found) => found,
            None => how.decode(&self.data, offset, self.pool.take()),
        };
        let decoded = decoded?;
        if let Some(records) = records {
            self.join_chunk_records(records);
        }
        self.chunk = Some(ChunkCursor {
            data: decoded,
            pos: 0,
            offset,
        });
        Ok(())
    }

    /// Joins a decoded chunk's records to the data-section CRC by their CRC instead of hashing
    /// them here. Everything else is hashed when the DataEnd record is reached.
    fn join_chunk_records(&mut self, records: RecordsCrc) {
        let (crc, hashed) = &mut self.data_crc;
        let end = records.start + records.len;
        if records.start < *hashed || end > self.data.len() {
            return;
        }
        crc.update(&self.data[*hashed..records.start]);
        crc.combine(&Crc32::resume(records.crc, records.len as u64));
        *hashed = end;
    }

    fn verify_data_section(&self, offset: u64, start: usize, end: usize) -> Result<()> {
        let stored = match self.data[start..end].get(..4) {
            Some(b) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            None => {
                return Err(McapError::invalid(
                    offset,
                    "DataEnd",
                    "content shorter than 4 bytes",
                ));
            }
        };
        if self.opts.verify_data_section_crc && stored != 0 {
            let (mut crc, hashed) = self.data_crc.clone();
            crc.update(self.data.get(hashed..offset as usize).unwrap_or_default());
            let computed = crc.value();
            if computed != stored {
                return Err(McapError::CrcMismatch {
                    offset,
                    what: "data section",
                    stored,
                    computed,
                });
            }
        }
        Ok(())
    }

    fn verify_footer(&self, offset: u64, start: usize, end: usize) -> Result<()> {
        if self.dialect.is_draft() {
            if self.opts.verify_summary_crc {
                draft::verify_footer(&self.data, offset as usize)?;
            }
            return self.verify_trailing_magic(end);
        }
        let content = &self.data[start..end];
        if content.len() < 20 {
            return Err(McapError::invalid(
                offset,
                "Footer",
                format!("content is {} bytes, not 20", content.len()),
            ));
        }
        let stored = u32::from_le_bytes([content[16], content[17], content[18], content[19]]);
        if self.opts.verify_summary_crc
            && stored != 0
            && let Some(from) = self.data_end_end
        {
            let to = offset as usize + FOOTER_RECORD_LEN as usize - 4;
            let computed = crc32(&self.data[from..to]);
            if computed != stored {
                return Err(McapError::CrcMismatch {
                    offset,
                    what: "summary",
                    stored,
                    computed,
                });
            }
        }
        self.verify_trailing_magic(end)
    }

    fn verify_trailing_magic(&self, end: usize) -> Result<()> {
        match self.data.get(end..end + MAGIC.len()) {
            Some(magic) if magic == MAGIC => Ok(()),
            Some(_) => Err(McapError::BadMagic { offset: end as u64 }),
            None if MAGIC.starts_with(&self.data[end..]) => Err(McapError::Truncated {
                offset: end as u64,
                record: "magic",
                what: "trailing magic",
            }),
            None => Err(McapError::BadMagic { offset: end as u64 }),
        }
    }
}

impl RecordSource for LinearReader {
    fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn pending(&mut self) -> &mut Option<Slot> {
        &mut self.pending
    }

    #[inline]
    fn next_frame(&mut self) -> Option<Result<Slot>> {
        self.advance_frame()
    }

    fn content(&self, slot: &Slot) -> &[u8] {
        if slot.in_chunk {
            match &self.chunk {
                Some(c) => &c.data[slot.start..slot.end],
                None => &[],
            }
        } else {
            &self.data[slot.start..slot.end]
        }
    }
}

/// The next record inside a flattened chunk.
fn next_in_chunk(cursor: &mut ChunkCursor) -> Option<Result<Slot>> {
    if cursor.pos >= cursor.data.len() {
        return None;
    }
    match frame_at(&cursor.data, cursor.pos) {
        Ok(Some((opcode, start, end))) => {
            let offset = cursor.pos as u64;
            cursor.pos = end;
            Some(Ok(Slot {
                in_chunk: true,
                part: 0,
                opcode,
                offset,
                start,
                end,
            }))
        }
        Ok(None) => None,
        Err(McapError::Truncated { record, what, .. }) => {
            let at = cursor.pos;
            cursor.pos = cursor.data.len();
            Some(Err(McapError::invalid(
                cursor.offset,
                "Chunk",
                format!("its records end inside a {record} ({what}) at uncompressed byte {at}"),
            )))
        }
        Err(e) => {
            cursor.pos = cursor.data.len();
            Some(Err(e))
        }
    }
}

/// The framing of the record at `pos`: `(opcode, content start, content end)`, `None` at the
/// end of `data`, or a truncation error.
pub(crate) fn frame_at(data: &[u8], pos: usize) -> Result<Option<(u8, usize, usize)>> {
    let prefix = data
        .get(pos..data.len().min(pos.saturating_add(9)))
        .unwrap_or(&[]);
    Ok(frame(prefix, pos as u64, data.len() as u64)?
        .map(|(opcode, end)| (opcode, pos + 9, end as usize)))
}

/// The framing rule of [`frame_at`] for a file of `file_len` bytes read by position or as a
/// stream: `prefix` holds the (up to 9) bytes at `pos`; `(opcode, record end)`, `None` at the
/// end of the file, or a truncation error.
pub(crate) fn frame(prefix: &[u8], pos: u64, file_len: u64) -> Result<Option<(u8, u64)>> {
    if pos >= file_len {
        return Ok(None);
    }
    let [opcode, l0, l1, l2, l3, l4, l5, l6, l7] = prefix.get(..9).unwrap_or(&[]) else {
        return Err(McapError::Truncated {
            offset: pos,
            record: "record",
            what: "opcode and length",
        });
    };
    let length = u64::from_le_bytes([*l0, *l1, *l2, *l3, *l4, *l5, *l6, *l7]);
    let available = file_len.saturating_sub(pos + 9);
    if length > available {
        return Err(McapError::Truncated {
            offset: pos,
            record: record_name(*opcode),
            what: "record content",
        });
    }
    Ok(Some((*opcode, pos + 9 + length)))
}

/// Walks the top-level records ahead of the reader and hands out the chunks to decode, each with
/// a buffer to decode it into. It stops at the end of the data section and where the framing
/// breaks.
pub(crate) struct ChunkScanner {
    data: Bytes,
    pos: usize,
    pool: BufferPool,
    dialect: Dialect,
}

impl ChunkScanner {
    /// Starts at the record at `pos` of `data`.
    pub(crate) fn new(data: Bytes, pos: usize, pool: BufferPool, dialect: Dialect) -> Self {
        Self {
            data,
            pos,
            pool,
            dialect,
        }
    }
}

impl Iterator for ChunkScanner {
    type Item = (u64, Vec<u8>);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (opcode, _, end) = frame_at(&self.data, self.pos).ok()??;
            let at = self.pos as u64;
            self.pos = end;
            if opcode == self.dialect.chunk_op() {
                return Some((at, self.pool.take()));
            }
            if opcode == op::FOOTER || self.dialect.is_data_end(opcode) {
                return None;
            }
        }
    }
}

/// Messages of a [`LinearReader`], with `Bytes` payloads (zero-copy into the input or into the
/// decompressed chunk).
#[derive(Debug)]
pub struct LinearMessages {
    reader: LinearReader,
}

impl LinearReader {
    /// Moves to the next Message record, checking and skipping the records before it.
    fn advance_to_message(&mut self) -> Option<Result<Slot>> {
        loop {
            let slot = match self.advance()? {
                Ok(slot) => slot,
                Err(e) => return Some(Err(e)),
            };
            match self.dialect.is_message(self, &slot) {
                Ok(true) => return Some(Ok(slot)),
                Ok(false) => {}
                Err(e) => return Some(Err(e)),
            }
        }
    }

    /// The message [`LinearReader::advance_to_message`] found, and the buffer it lies in.
    fn message_at(&self, slot: &Slot) -> Result<(&Bytes, Message<'_>)> {
        let source = if slot.in_chunk {
            match &self.chunk {
                Some(c) => &c.data,
                None => return Err(McapError::invalid(slot.offset, "Chunk", "no chunk is open")),
            }
        } else {
            &self.data
        };
        let content = &source[slot.start..slot.end];
        match self
            .dialect
            .message(slot.opcode, content, slot.offset, slot.part)?
        {
            Some(m) => Ok((source, m)),
            None => Err(McapError::invalid(
                slot.offset,
                "Message",
                "not a message record",
            )),
        }
    }
}

impl LinearMessages {
    /// Lends the next message: like [`Iterator::next`], but the message's data is borrowed
    /// until the next call, which saves a reference count per message when each one is only
    /// looked at once.
    ///
    /// ```no_run
    /// use robolog_mcap::{Bytes, LinearReader};
    /// let file = Bytes::from(std::fs::read("recording.mcap")?);
    /// let mut messages = LinearReader::new(file).into_messages();
    /// let mut bytes = 0;
    /// while let Some(message) = messages.next_ref() {
    ///     bytes += message?.data.len();
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn next_ref(&mut self) -> Option<Result<Message<'_>>> {
        let slot = match self.reader.advance_to_message()? {
            Ok(slot) => slot,
            Err(e) => return Some(Err(e)),
        };
        Some(self.reader.message_at(&slot).map(|(_, m)| m))
    }
}

impl Iterator for LinearMessages {
    type Item = Result<OwnedMessage>;

    fn next(&mut self) -> Option<Self::Item> {
        let slot = match self.reader.advance_to_message()? {
            Ok(slot) => slot,
            Err(e) => return Some(Err(e)),
        };
        Some(
            self.reader
                .message_at(&slot)
                .map(|(source, m)| OwnedMessage::sliced(source, &m)),
        )
    }
}
