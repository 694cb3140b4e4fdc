//! The streaming reader over `std::io::Read` (pipes, stdin, files being written): every record
//! in order, chunks flattened, CRCs checked as the bytes go by, memory bounded by the largest
//! record and chunk (each checked against a configurable limit before anything is allocated).

use std::io::{self, Read};

use robolog_framing::{Crc32, Decompressor, StreamError, read_exact_bounded};

use crate::chunk::{decompress_into, stored_records, verify_chunk_crc};
use crate::draft::Dialect;
use crate::error::{McapError, Result};
use crate::linear::frame_at;
use crate::options::ReadOptions;
use crate::parse::verify_attachment_crc;
use crate::record_source::{RecordSource, Slot};
use crate::records::{MAGIC, Record, op, record_name};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Magic,
    Records,
    Done,
}

/// Reads MCAP records from a stream, in order.
///
/// Like [`crate::LinearReader`], [`StreamReader::next_record`] lends records that borrow from
/// the reader's buffers. A stream cannot look at its footer first, so the draft layout must be
/// selected explicitly ([`Layout::Draft`](crate::Layout::Draft));
/// [`Layout::Auto`](crate::Layout::Auto) reads ratified MCAP.
///
/// ```
/// use robolog_mcap::{Record, StreamReader, Writer, WriteOptions};
/// let file = Writer::new(Vec::new(), WriteOptions::default())?.finish()?;
/// let mut reader = StreamReader::new(&file[..]);
/// let mut kinds = Vec::new();
/// while let Some(record) = reader.next_record() {
///     kinds.push(record?.opcode());
/// }
/// assert_eq!(kinds.first(), Some(&0x01)); // Header
/// assert_eq!(kinds.last(), Some(&0x02)); // Footer
/// # Ok::<(), robolog_mcap::McapError>(())
/// ```
#[derive(Debug)]
pub struct StreamReader<R> {
    reader: R,
    opts: ReadOptions,
    dialect: Dialect,
    phase: Phase,
    /// Stream offset of the next unread byte.
    offset: u64,
    data_crc: Crc32,
    /// Running summary CRC, from the end of DataEnd on.
    summary_crc: Option<Crc32>,
    record: Vec<u8>,
    chunk: Vec<u8>,
    chunk_pos: usize,
    chunk_offset: u64,
    in_chunk: bool,
    decompressor: Decompressor,
    pending: Option<Slot>,
    /// The stream's length, when known (a file read by position): a record reaching past it is
    /// a truncation, as in a file in memory, whatever the record limit.
    len: Option<u64>,
}

impl<R: Read> StreamReader<R> {
    /// A reader with default options.
    pub fn new(reader: R) -> Self {
        Self::with_options(reader, ReadOptions::default())
    }

    /// A reader with `opts` (`max_record_size` bounds every record and chunk).
    pub fn with_options(reader: R, opts: ReadOptions) -> Self {
        Self {
            reader,
            dialect: Dialect::of_stream(opts.layout),
            opts,
            phase: Phase::Magic,
            offset: 0,
            data_crc: Crc32::new(),
            summary_crc: None,
            record: Vec::new(),
            chunk: Vec::new(),
            chunk_pos: 0,
            chunk_offset: 0,
            in_chunk: false,
            decompressor: Decompressor::new(),
            pending: None,
            len: None,
        }
    }

    /// Tells the reader that the stream is `len` bytes long.
    pub(crate) fn told_length(mut self, len: u64) -> Self {
        self.len = Some(len);
        self
    }

    /// Stream offset of the next unread byte.
    pub fn position(&self) -> u64 {
        self.offset
    }

    /// The underlying reader.
    pub fn into_inner(self) -> R {
        self.reader
    }

    /// The next record, `None` after the Footer and trailing magic, or an error. Errors inside
    /// a chunk (CRC, compression) skip that chunk; other errors end the stream.
    pub fn next_record(&mut self) -> Option<Result<Record<'_>>> {
        self.next_parsed()
    }

    fn fail(&mut self, e: McapError) -> Option<Result<Slot>> {
        self.phase = Phase::Done;
        Some(Err(e))
    }

    fn advance_frame(&mut self) -> Option<Result<Slot>> {
        loop {
            if self.in_chunk {
                match frame_at(&self.chunk, self.chunk_pos) {
                    Ok(Some((opcode, start, end))) => {
                        let offset = self.chunk_pos as u64;
                        self.chunk_pos = end;
                        return Some(Ok(Slot {
                            in_chunk: true,
                            part: 0,
                            opcode,
                            offset,
                            start,
                            end,
                        }));
                    }
                    Ok(None) => self.in_chunk = false,
                    Err(_) => {
                        self.in_chunk = false;
                        return Some(Err(McapError::invalid(
                            self.chunk_offset,
                            "Chunk",
                            format!(
                                "its records end inside a record at uncompressed byte {}",
                                self.chunk_pos
                            ),
                        )));
                    }
                }
            }
            match self.phase {
                Phase::Done => return None,
                Phase::Magic => {
                    let mut magic = [0u8; 8];
                    match read_full(&mut self.reader, &mut magic) {
                        Ok(8) if magic == MAGIC => {}
                        Ok(n) if MAGIC.starts_with(&magic[..n]) => {
                            return self.fail(McapError::Truncated {
                                offset: 0,
                                record: "magic",
                                what: "leading magic",
                            });
                        }
                        Ok(_) => return self.fail(McapError::BadMagic { offset: 0 }),
                        Err(source) => return self.fail(McapError::Io { offset: 0, source }),
                    }
                    self.data_crc.update(&magic);
                    self.offset = 8;
                    self.phase = Phase::Records;
                }
                Phase::Records => match self.read_record() {
                    Ok(Some(slot)) => return Some(Ok(slot)),
                    Ok(None) => continue,
                    Err(e) => {
                        if !matches!(
                            e,
                            McapError::CrcMismatch {
                                what: "chunk" | "attachment",
                                ..
                            } | McapError::Codec { .. }
                                | McapError::UnsupportedCompression { .. }
                        ) {
                            self.phase = Phase::Done;
                        }
                        return Some(Err(e));
                    }
                },
            }
        }
    }

    /// Reads one top-level record; `Ok(None)` when it was a chunk now being flattened.
    fn read_record(&mut self) -> Result<Option<Slot>> {
        let offset = self.offset;
        let mut prefix = [0u8; 9];
        match read_full(&mut self.reader, &mut prefix) {
            Ok(9) => {}
            Ok(0) => {
                return Err(McapError::Truncated {
                    offset,
                    record: "Footer",
                    what: "the stream ends without a Footer",
                });
            }
            Ok(_) => {
                return Err(McapError::Truncated {
                    offset,
                    record: "record",
                    what: "opcode and length",
                });
            }
            Err(source) => return Err(McapError::Io { offset, source }),
        }
        let opcode = prefix[0];
        let length = u64::from_le_bytes([
            prefix[1], prefix[2], prefix[3], prefix[4], prefix[5], prefix[6], prefix[7], prefix[8],
        ]);
        let name = record_name(opcode);
        if self
            .len
            .is_some_and(|len| length > len.saturating_sub(offset + 9))
        {
            return Err(McapError::Truncated {
                offset,
                record: name,
                what: "record content",
            });
        }
        if length > self.opts.max_record_size {
            return Err(McapError::TooLarge {
                offset,
                record: name,
                length,
                limit: self.opts.max_record_size,
            });
        }
        read_exact_bounded(
            &mut self.reader,
            length,
            self.opts.max_record_size,
            offset + 9,
            "record content",
            &mut self.record,
        )
        .map_err(|e| match e {
            StreamError::Framing(e) if e.is_truncation() => McapError::Truncated {
                offset,
                record: name,
                what: "record content",
            },
            StreamError::Framing(e) => McapError::malformed(offset, name, e),
            StreamError::Io { source, .. } => McapError::Io { offset, source },
        })?;
        self.offset = offset + 9 + length;
        let end = self.record.len();
        let is_data_end = self.dialect.is_data_end(opcode);
        let is_footer = opcode == op::FOOTER;
        let is_chunk = opcode == self.dialect.chunk_op();

        if is_data_end {
            self.check_data_end(offset)?;
            // The DataEnd record itself is covered by neither CRC.
            self.summary_crc = Some(Crc32::new());
        } else if is_footer {
            self.check_footer(offset, &prefix)?;
            self.phase = Phase::Done;
        } else {
            self.hash(&prefix);
            if opcode == op::ATTACHMENT
                && self.dialect.has_data_crcs()
                && self.opts.verify_attachment_crcs
            {
                verify_attachment_crc(&self.record, offset)?;
            }
        }
        if is_chunk {
            self.open_chunk(offset)?;
            return Ok(None);
        }
        Ok(Some(Slot {
            in_chunk: false,
            part: 0,
            opcode,
            offset,
            start: 0,
            end,
        }))
    }

    fn hash(&mut self, prefix: &[u8; 9]) {
        match &mut self.summary_crc {
            Some(crc) => {
                crc.update(prefix);
                crc.update(&self.record);
            }
            None => {
                self.data_crc.update(prefix);
                self.data_crc.update(&self.record);
            }
        }
    }

    fn check_data_end(&mut self, offset: u64) -> Result<()> {
        let stored = match self.record.get(..4) {
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
            let computed = self.data_crc.value();
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

    fn check_footer(&mut self, offset: u64, prefix: &[u8; 9]) -> Result<()> {
        if !self.dialect.is_draft() {
            let content = &self.record;
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
                && let Some(crc) = &mut self.summary_crc
            {
                crc.update(prefix);
                crc.update(&content[..16]);
                let computed = crc.value();
                if computed != stored {
                    return Err(McapError::CrcMismatch {
                        offset,
                        what: "summary",
                        stored,
                        computed,
                    });
                }
            }
        }
        let at = self.offset;
        let mut magic = [0u8; 8];
        match read_full(&mut self.reader, &mut magic) {
            Ok(8) if magic == MAGIC => {
                self.offset += 8;
                Ok(())
            }
            Ok(n) if MAGIC.starts_with(&magic[..n]) => Err(McapError::Truncated {
                offset: at,
                record: "magic",
                what: "trailing magic",
            }),
            Ok(_) => Err(McapError::BadMagic { offset: at }),
            Err(source) => Err(McapError::Io { offset: at, source }),
        }
    }

    fn open_chunk(&mut self, offset: u64) -> Result<()> {
        let chunk = self.dialect.parse_chunk(&self.record, offset)?;
        if chunk.compression.is_empty() {
            // As the readers of a file in memory take them, so that damage reads the same.
            let records = stored_records(&chunk, offset, self.opts.max_record_size)?;
            self.chunk.clear();
            self.chunk.extend_from_slice(records);
        } else {
            decompress_into(
                &chunk,
                offset,
                self.opts.max_record_size,
                &mut self.decompressor,
                &mut self.chunk,
            )?;
        }
        if self.opts.verify_chunk_crcs {
            verify_chunk_crc(&chunk, &self.chunk, offset)?;
        }
        self.in_chunk = true;
        self.chunk_pos = 0;
        self.chunk_offset = offset;
        Ok(())
    }
}

impl<R: Read> RecordSource for StreamReader<R> {
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
            &self.chunk[slot.start..slot.end]
        } else {
            &self.record[slot.start..slot.end]
        }
    }
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
fn read_full<R: Read>(reader: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}
