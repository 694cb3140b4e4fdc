//! Chunks: their compression, decoding (exact or salvaging), and the records inside them.

use std::fmt;
use std::ops::Range;

use robolog_framing::{Bytes, CodecError, Compression, Decompressor};

use crate::error::{Error, Result};
use crate::format::framing::view_record;
use crate::format::records::{
    CANONICAL_MESSAGE_HEADER_LEN, InnerHeader, canonical_message_header, parse_inner_header,
};
use crate::format::time::RosTime;

/// How a chunk's data is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ChunkCompression {
    /// Stored as is.
    None,
    /// One bzip2 stream.
    Bz2,
    /// One LZ4 frame (written in the `roslz4` profile).
    Lz4,
}

impl ChunkCompression {
    /// The name in the CHUNK record: `none`, `bz2` or `lz4`.
    pub fn name(self) -> &'static str {
        match self {
            ChunkCompression::None => "none",
            ChunkCompression::Bz2 => "bz2",
            ChunkCompression::Lz4 => "lz4",
        }
    }

    pub(crate) fn from_name(name: &[u8]) -> Option<Self> {
        match name {
            b"none" => Some(ChunkCompression::None),
            b"bz2" => Some(ChunkCompression::Bz2),
            b"lz4" => Some(ChunkCompression::Lz4),
            _ => None,
        }
    }

    pub(crate) fn codec(self) -> Compression {
        match self {
            ChunkCompression::None => Compression::None,
            ChunkCompression::Bz2 => Compression::Bz2,
            ChunkCompression::Lz4 => Compression::Lz4,
        }
    }
}

impl fmt::Display for ChunkCompression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The most a chunk of `compressed` bytes can honestly decode to, for codecs whose expansion is
/// bounded (LZ4 cannot expand more than 255 to 1); bzip2 is only bounded by `cap`.
fn plausible_size(compression: ChunkCompression, compressed: usize, cap: usize) -> usize {
    match compression {
        ChunkCompression::Lz4 => cap.min(compressed.saturating_mul(255).saturating_add(1024)),
        _ => cap,
    }
}

/// Checks a compressed chunk's declared size against what its data can hold.
fn check_size(
    compression: ChunkCompression,
    data: &[u8],
    size: usize,
    cap: usize,
    chunk_pos: u64,
) -> Result<()> {
    let plausible = plausible_size(compression, data.len(), cap);
    if size > plausible {
        return Err(Error::Codec {
            offset: chunk_pos,
            source: CodecError::TooLarge {
                expected: size as u64,
                cap: plausible as u64,
            },
        });
    }
    Ok(())
}

/// Decodes a complete chunk whose data is `data` (a slice of the file) and whose declared
/// uncompressed size is `size`, into `recycled`'s allocation. Uncompressed chunks are not
/// copied.
pub(crate) fn decode_chunk(
    compression: ChunkCompression,
    data: &Bytes,
    size: u32,
    cap: usize,
    chunk_pos: u64,
    recycled: Vec<u8>,
) -> Result<Bytes> {
    let size = size as usize;
    if compression == ChunkCompression::None {
        if data.len() < size {
            return Err(Error::Codec {
                offset: chunk_pos,
                source: CodecError::SizeMismatch {
                    codec: Compression::None,
                    expected: size as u64,
                    actual: data.len() as u64,
                },
            });
        }
        return Ok(data.slice(..size));
    }
    check_size(compression, data, size, cap, chunk_pos)?;
    // A recycled buffer (of a chunk whose messages are all gone) saves allocating and
    // zero-filling a fresh one.
    let mut out = recycled;
    Decompressor::new()
        .decompress(compression.codec(), data, size, cap, &mut out)
        .map_err(|source| Error::Codec {
            offset: chunk_pos,
            source,
        })?;
    Ok(Bytes::from(out))
}

/// The little-endian `u32` at `at` in `bytes`, if it is there.
fn u32_at(bytes: &[u8], at: usize) -> Option<usize> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
}

/// Decodes the start of a chunk, up to the end of the record that starts at `last` (an offset
/// from its index): all a query needs when its wanted messages start there or before. Large
/// messages (camera images) usually close a chunk, so a query for the small topics around them
/// stops before them. Returns the bytes and whether they are the whole chunk; otherwise as
/// [`decode_chunk`]. (LZ4 stops at a block boundary, 1 MiB in `roslz4` frames; bzip2 reads
/// the whole 900k block that holds the record's end, but stops producing its output there.)
pub(crate) fn decode_chunk_prefix(
    compression: ChunkCompression,
    data: &Bytes,
    size: u32,
    cap: usize,
    chunk_pos: u64,
    last: usize,
    recycled: Vec<u8>,
) -> Result<(Bytes, bool)> {
    if compression == ChunkCompression::None {
        // Sliced, not decoded: nothing to save.
        return decode_chunk(compression, data, size, cap, chunk_pos, recycled).map(|b| (b, true));
    }
    let size = size as usize;
    check_size(compression, data, size, cap, chunk_pos)?;
    let codec_error = |source| Error::Codec {
        offset: chunk_pos,
        source,
    };
    let mut out = recycled;
    let mut decompressor = Decompressor::new();
    let mut prefix = decompressor
        .prefix(compression.codec(), data, size, cap, &mut out)
        .map_err(codec_error)?;
    // A record is its header's length, the header, its data's length and the data.
    prefix
        .fill_to(last.saturating_add(4))
        .map_err(codec_error)?;
    let data_len_at = u32_at(prefix.decoded(), last)
        .and_then(|header_len| last.checked_add(4)?.checked_add(header_len));
    let end = match data_len_at {
        Some(at) => {
            prefix.fill_to(at.saturating_add(4)).map_err(codec_error)?;
            u32_at(prefix.decoded(), at)
                .and_then(|data_len| at.checked_add(4)?.checked_add(data_len))
                .map_or(size, |end| end.min(size))
        }
        None => size,
    };
    let whole = prefix.decode_to(end).map_err(codec_error)?;
    Ok((Bytes::from(out), whole))
}

/// Decodes as much of a damaged, truncated or unterminated chunk as possible. Returns the
/// decoded bytes and why decoding stopped early, if it did.
pub(crate) fn salvage_chunk(
    compression: ChunkCompression,
    data: &[u8],
    cap: usize,
) -> (Vec<u8>, Option<CodecError>) {
    let mut out = Vec::new();
    let salvage = Decompressor::new().decompress_partial(compression.codec(), data, cap, &mut out);
    (out, salvage.error)
}

/// A record inside a chunk. Offsets are relative to the start of the uncompressed chunk data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InnerRecord<'a> {
    Connection {
        offset: usize,
        conn: u32,
        topic: &'a [u8],
        data: &'a [u8],
        data_offset: usize,
    },
    Message {
        offset: usize,
        conn: u32,
        time: RosTime,
        data: Range<usize>,
    },
    Other {
        offset: usize,
        op: u8,
    },
}

/// Walks the records of an uncompressed chunk in order. Stops at the first record that is cut
/// short or malformed, after yielding that error once; [`InnerWalker::complete_len`] then tells
/// how many bytes of whole records came before it.
#[derive(Debug)]
pub(crate) struct InnerWalker<'a> {
    buf: &'a [u8],
    pos: usize,
    done: bool,
}

impl<'a> InnerWalker<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self {
            buf,
            pos: 0,
            done: false,
        }
    }

    /// Bytes of complete records walked so far.
    pub(crate) fn complete_len(&self) -> usize {
        self.pos
    }

    /// The message data record at `offset` when its header has the usual layout (see
    /// [`canonical_message_header`]): connection, time, payload range and where the next record
    /// starts, as [`InnerWalker::record_at`] would give them. `None` for any other record,
    /// which `record_at` then parses (or reports).
    #[inline]
    pub(crate) fn message_at(
        buf: &'a [u8],
        offset: usize,
    ) -> Option<(u32, RosTime, Range<usize>, usize)> {
        let (len, rest) = buf.get(offset..)?.split_first_chunk::<4>()?;
        if u32::from_le_bytes(*len) as usize != CANONICAL_MESSAGE_HEADER_LEN {
            return None;
        }
        let (header, rest) = rest.split_first_chunk::<CANONICAL_MESSAGE_HEADER_LEN>()?;
        let m = canonical_message_header(header)?;
        let data_len = u32::from_le_bytes(*rest.first_chunk::<4>()?) as usize;
        let data_start = offset + 4 + CANONICAL_MESSAGE_HEADER_LEN + 4;
        let data_end = data_start.checked_add(data_len)?;
        (data_end <= buf.len()).then_some((m.conn, m.time, data_start..data_end, data_end))
    }

    /// Parses the record at `offset` (for index lookups). Returns the record and where the
    /// next one starts.
    #[inline]
    pub(crate) fn record_at(buf: &'a [u8], offset: usize) -> Result<(InnerRecord<'a>, usize)> {
        // The hot path of every read: plain slice arithmetic, the general framing code only
        // to describe a failure.
        let u32_at = |at: usize| -> Option<usize> {
            let b = buf.get(at..at.checked_add(4)?)?;
            Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        };
        let framed = (|| {
            let header_len = u32_at(offset)?;
            let header_start = offset + 4;
            let header_end = header_start.checked_add(header_len)?;
            let data_len = u32_at(header_end)?;
            let data_start = header_end + 4;
            let data_end = data_start.checked_add(data_len)?;
            (data_end <= buf.len()).then_some((header_start..header_end, data_start..data_end))
        })();
        let Some((header, data)) = framed else {
            let rest = buf.get(offset..).unwrap_or_default();
            let record = view_record(rest, offset as u64)?;
            return Err(record.truncated(crate::error::RecordKind::Record));
        };
        let end = data.end;
        let parsed = match parse_inner_header(&buf[header.clone()], header.start as u64)? {
            InnerHeader::Message(m) => InnerRecord::Message {
                offset,
                conn: m.conn,
                time: m.time,
                data,
            },
            InnerHeader::Connection(c) => InnerRecord::Connection {
                offset,
                conn: c.conn,
                topic: c.topic,
                data_offset: data.start,
                data: &buf[data],
            },
            InnerHeader::Other(op) => InnerRecord::Other { offset, op },
        };
        Ok((parsed, end))
    }
}

impl<'a> Iterator for InnerWalker<'a> {
    type Item = Result<InnerRecord<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos >= self.buf.len() {
            return None;
        }
        match Self::record_at(self.buf, self.pos) {
            Ok((record, end)) => {
                self.pos = end;
                Some(Ok(record))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::framing::{build_header, write_record};

    /// A chunk's worth of records: messages in the usual field order and in others, a
    /// connection record, and a last message whose payload is cut short.
    fn records() -> Vec<u8> {
        let (op, conn, time) = ([0x02u8], 7u32.to_le_bytes(), [1, 0, 0, 0, 5, 0, 0, 0]);
        let fields: [(&[u8], &[u8]); 3] = [(b"op", &op), (b"conn", &conn), (b"time", &time)];
        let mut out = Vec::new();
        for order in [[0, 1, 2], [1, 0, 2], [0, 1, 2], [2, 1, 0]] {
            let header = build_header(&order.map(|i| fields[i])).unwrap();
            write_record(&mut out, &header, b"payload").unwrap();
        }
        let connection =
            build_header(&[(b"op", &[0x07]), (b"conn", &conn), (b"topic", b"/a")]).unwrap();
        write_record(&mut out, &connection, b"type=x").unwrap();
        let header = build_header(&fields).unwrap();
        write_record(&mut out, &header, b"payload").unwrap();
        out.truncate(out.len() - 3);
        out
    }

    #[test]
    fn the_message_step_agrees_with_the_general_parser_wherever_it_answers() {
        let buf = records();
        let (mut offset, mut answered) = (0, 0);
        while offset < buf.len() {
            let general = InnerWalker::record_at(&buf, offset);
            match InnerWalker::message_at(&buf, offset) {
                Some((conn, time, data, next)) => {
                    answered += 1;
                    let (record, end) = general.unwrap();
                    assert_eq!(
                        record,
                        InnerRecord::Message {
                            offset,
                            conn,
                            time,
                            data
                        }
                    );
                    assert_eq!(end, next);
                }
                // Another layout or record (parsed by the general path), or the cut message
                // (an error there).
                None => {
                    if general.is_err() {
                        break;
                    }
                }
            }
            offset = match InnerWalker::record_at(&buf, offset) {
                Ok((_, end)) => end,
                Err(_) => break,
            };
        }
        // The two whole messages in the usual order; the last one is cut short, which only the
        // general parser reports.
        assert_eq!(answered, 2);
        assert!(InnerWalker::message_at(&buf, offset).is_none());
        assert!(InnerWalker::record_at(&buf, offset).is_err());
    }
}
