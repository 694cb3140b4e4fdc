//! Decoding chunks on worker threads, with one decompressor per thread.

use std::cell::RefCell;

use robolog_framing::{Bytes, Decompressor};

use crate::chunk::{chunk_bytes, verify_chunk_crc};
use crate::draft::Dialect;
use crate::error::{McapError, Result};
use crate::parse::RecordSplitter;
use crate::records::Chunk;

thread_local! {
    static DECOMPRESSOR: RefCell<Decompressor> = RefCell::new(Decompressor::new());
}

/// Parses the Chunk record at `offset` of `input`.
pub(crate) fn chunk_at(input: &[u8], offset: u64, dialect: Dialect) -> Result<Chunk<'_>> {
    let start = usize::try_from(offset).unwrap_or(usize::MAX);
    chunk_in(input.get(start..).unwrap_or(&[]), offset, dialect)
}

/// Parses the Chunk record that `record` starts with, which is at `offset` in the file.
pub(crate) fn chunk_in(record: &[u8], offset: u64, dialect: Dialect) -> Result<Chunk<'_>> {
    match RecordSplitter::new(record, offset).next() {
        Some(Ok(raw)) if raw.opcode == dialect.chunk_op() => {
            dialect.parse_chunk(raw.content, offset)
        }
        Some(Ok(raw)) => Err(McapError::invalid(
            offset,
            "Chunk",
            format!("expected a Chunk record, found opcode {:#04x}", raw.opcode),
        )),
        Some(Err(e)) => Err(e),
        None => Err(McapError::Truncated {
            offset,
            record: "Chunk",
            what: "record",
        }),
    }
}

/// Runs `work` with this thread's decompressor (a fresh one if it is in use further up the
/// stack).
pub(crate) fn with_decompressor<T>(work: impl FnOnce(&mut Decompressor) -> T) -> T {
    DECOMPRESSOR.with(|d| match d.try_borrow_mut() {
        Ok(mut d) => work(&mut d),
        Err(_) => work(&mut Decompressor::new()),
    })
}

/// How [`decode_chunk`] decodes a chunk.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DecodeRules {
    /// The largest uncompressed size accepted.
    pub(crate) limit: u64,
    /// Check the chunk CRC when the whole chunk is decoded.
    pub(crate) verify_crc: bool,
    /// Decode a large LZ4 chunk in two halves at once when the read has two or more workers
    /// ([`Decompressor::decompress_shared`]).
    pub(crate) in_halves: bool,
}

/// Decodes a chunk with this thread's decompressor: all of it, or with `prefix_to` only its
/// records up to the end of the record at that offset (see [`chunk_bytes`]); says whether that
/// is the whole chunk. The CRC is checked when it is.
pub(crate) fn decode_chunk(
    input: &Bytes,
    chunk: &Chunk<'_>,
    offset: u64,
    prefix_to: Option<u64>,
    rules: DecodeRules,
    recycled: Vec<u8>,
) -> Result<(Bytes, bool)> {
    let (data, whole) =
        with_decompressor(|d| chunk_bytes(input, chunk, offset, prefix_to, rules, d, recycled))?;
    if whole && rules.verify_crc {
        verify_chunk_crc(chunk, &data, offset)?;
    }
    Ok((data, whole))
}
