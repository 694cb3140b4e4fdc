//! Turning a Chunk record into its uncompressed records: decompression and the chunk CRC.

use robolog_framing::{Bytes, Compression, Decompressor, crc32};

use crate::decode::DecodeRules;
use crate::error::{McapError, Result};
use crate::records::Chunk;

/// The largest chunk this crate decompresses unless told otherwise (4 GiB, as upstream).
pub(crate) const DEFAULT_CHUNK_LIMIT: u64 = 4 << 30;

/// The codec a chunk's `compression` string names, or `None` when it is not supported.
pub fn compression_from_name(name: &str) -> Option<Compression> {
    match name {
        "" => Some(Compression::None),
        "lz4" => Some(Compression::Lz4),
        "zstd" => Some(Compression::Zstd),
        _ => None,
    }
}

/// The `compression` string MCAP uses for a codec (`""`, `lz4`, `zstd`).
pub fn compression_name(compression: Compression) -> &'static str {
    match compression {
        Compression::None => "",
        Compression::Lz4 => "lz4",
        Compression::Zstd => "zstd",
        Compression::Bz2 => "bz2",
    }
}

fn size_of(chunk: &Chunk<'_>, offset: u64, limit: u64) -> Result<usize> {
    if chunk.uncompressed_size > limit {
        return Err(McapError::TooLarge {
            offset,
            record: "Chunk",
            length: chunk.uncompressed_size,
            limit,
        });
    }
    usize::try_from(chunk.uncompressed_size).map_err(|_| McapError::TooLarge {
        offset,
        record: "Chunk",
        length: chunk.uncompressed_size,
        limit: usize::MAX as u64,
    })
}

/// The largest output a codec can produce from `compressed` bytes: LZ4 expands at most 255
/// times (plus a block), zstd at most about 32 768 times (an RLE block costs 4 bytes per
/// 128 KiB). A declared size beyond it is a lie that must not size an allocation.
fn plausible_size(compression: Compression, compressed: usize) -> u64 {
    let compressed = compressed as u64;
    match compression {
        Compression::None => compressed,
        Compression::Lz4 => compressed.saturating_mul(255).saturating_add(64 << 10),
        Compression::Zstd | Compression::Bz2 => {
            compressed.saturating_mul(32 << 10).saturating_add(1 << 20)
        }
    }
}

/// Checks the chunk CRC (when stored) against the uncompressed records.
pub(crate) fn verify_chunk_crc(chunk: &Chunk<'_>, records: &[u8], offset: u64) -> Result<()> {
    if chunk.uncompressed_crc != 0 {
        let computed = crc32(records);
        if computed != chunk.uncompressed_crc {
            return Err(McapError::CrcMismatch {
                offset,
                what: "chunk",
                stored: chunk.uncompressed_crc,
                computed,
            });
        }
    }
    Ok(())
}

/// The codec and declared uncompressed size of `chunk`, checked against `limit` and against what
/// its compressed bytes can hold.
fn codec_and_size(chunk: &Chunk<'_>, offset: u64, limit: u64) -> Result<(Compression, usize)> {
    let compression = compression_from_name(chunk.compression).ok_or_else(|| {
        McapError::UnsupportedCompression {
            offset,
            compression: chunk.compression.to_owned(),
        }
    })?;
    let size = size_of(chunk, offset, limit)?;
    if size as u64 > plausible_size(compression, chunk.records.len()) {
        return Err(McapError::invalid(
            offset,
            "Chunk",
            format!(
                "uncompressed_size {size} cannot come from {} bytes of {}",
                chunk.records.len(),
                compression.name()
            ),
        ));
    }
    Ok((compression, size))
}

/// Decompresses `chunk` (whose record starts at `offset`) into `out`, which is resized to the
/// declared uncompressed size. Uncompressed chunks are copied.
pub(crate) fn decompress_into(
    chunk: &Chunk<'_>,
    offset: u64,
    limit: u64,
    decompressor: &mut Decompressor,
    out: &mut Vec<u8>,
) -> Result<()> {
    let (compression, size) = codec_and_size(chunk, offset, limit)?;
    decompressor
        .decompress(compression, chunk.records, size, size, out)
        .map_err(|source| McapError::Codec { offset, source })
}

/// The uncompressed records of `chunk` (whose record starts at `offset` in its file), its CRC
/// checked when it has one. Chunks of up to 4 GiB are decompressed, as upstream.
pub fn decompress_chunk(chunk: &Chunk<'_>, offset: u64) -> Result<Vec<u8>> {
    let mut records = Vec::new();
    decompress_into(
        chunk,
        offset,
        DEFAULT_CHUNK_LIMIT,
        &mut Decompressor::new(),
        &mut records,
    )?;
    verify_chunk_crc(chunk, &records, offset)?;
    Ok(records)
}

/// The records of an uncompressed chunk, as declared.
pub(crate) fn stored_records<'c>(chunk: &Chunk<'c>, offset: u64, limit: u64) -> Result<&'c [u8]> {
    let size = size_of(chunk, offset, limit)?;
    chunk.records.get(..size).ok_or(McapError::Codec {
        offset,
        source: robolog_framing::CodecError::SizeMismatch {
            codec: Compression::None,
            expected: size as u64,
            actual: chunk.records.len() as u64,
        },
    })
}

/// Where the record that starts at `at` in `records` ends (as its length field says), at most
/// `size`; `size` when its header is not there.
fn record_end(records: &[u8], at: usize, size: usize) -> usize {
    let len = at
        .checked_add(1)
        .and_then(|from| records.get(from..from.checked_add(8)?));
    match len.and_then(|b| <[u8; 8]>::try_from(b).ok()) {
        Some(len) => (at as u64)
            .saturating_add(9)
            .saturating_add(u64::from_le_bytes(len))
            .min(size as u64) as usize,
        None => size,
    }
}

/// The uncompressed records of `chunk` as `Bytes`: a zero-copy slice of `input` (which must
/// contain `chunk.records`; decoding in halves relies on that too) when the chunk is not
/// compressed, otherwise a buffer decompressed into `recycled` (whose allocation is reused).
///
/// With `prefix_to`, an offset in the uncompressed records (from a message index), only the
/// records up to the end of the record there: all a query needs when its wanted messages start
/// there or before. Only that part is decoded (or, uncompressed, touched). Also says whether
/// the records returned are the whole chunk: only then can the chunk CRC, which covers every
/// record, be checked.
pub(crate) fn chunk_bytes(
    input: &Bytes,
    chunk: &Chunk<'_>,
    offset: u64,
    prefix_to: Option<u64>,
    rules: DecodeRules,
    decompressor: &mut Decompressor,
    mut recycled: Vec<u8>,
) -> Result<(Bytes, bool)> {
    let limit = rules.limit;
    let at = prefix_to.map(|last| usize::try_from(last).unwrap_or(usize::MAX));
    let codec_error = |source| McapError::Codec { offset, source };
    if chunk.compression.is_empty() {
        let records = stored_records(chunk, offset, limit)?;
        let end = at.map_or(records.len(), |at| record_end(records, at, records.len()));
        return Ok((input.slice_ref(&records[..end]), end == records.len()));
    }
    let (compression, size) = codec_and_size(chunk, offset, limit)?;
    let Some(at) = at else {
        let decoded = if rules.in_halves {
            let records = input.slice_ref(chunk.records);
            decompressor.decompress_shared(compression, &records, size, size, &mut recycled)
        } else {
            decompressor.decompress(compression, chunk.records, size, size, &mut recycled)
        };
        decoded.map_err(codec_error)?;
        return Ok((Bytes::from(recycled), true));
    };
    let mut prefix = decompressor
        .prefix(compression, chunk.records, size, size, &mut recycled)
        .map_err(codec_error)?;
    // The record's header first, for its length; then the record.
    prefix.fill_to(at.saturating_add(9)).map_err(codec_error)?;
    let end = record_end(prefix.decoded(), at, size);
    let whole = prefix.decode_to(end).map_err(codec_error)?;
    Ok((Bytes::from(recycled), whole))
}
