//! What a bag holds, at a glance: counts, time range and chunks from the index, and the
//! compression totals that need every chunk's header.

use std::collections::BTreeMap;

use crate::chunk::ChunkCompression;

/// One chunk of a 2.0 bag, as its CHUNK_INFO record in the index (or a scan) describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkInfo {
    /// Offset of the CHUNK record in the file.
    pub position: u64,
    /// Earliest message time in the chunk, in nanoseconds.
    pub start_ns: u64,
    /// Latest message time in the chunk, in nanoseconds.
    pub end_ns: u64,
    /// `(connection id, message count)` for each connection with messages in the chunk, in the
    /// file's order.
    pub message_counts: Vec<(u32, u32)>,
}

/// What the header of a CHUNK record says (see [`Bag::chunk_headers`]).
///
/// [`Bag::chunk_headers`]: crate::Bag::chunk_headers
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkHeader {
    /// How the chunk data is compressed.
    pub compression: ChunkCompression,
    /// Bytes of chunk data in the file.
    pub compressed_size: u64,
    /// Bytes of chunk data once decompressed.
    pub uncompressed_size: u64,
    /// File offset of the chunk data (the stored bytes, compressed or not): with
    /// `compressed_size`, the slice of the file to hand to a decoder of one's own.
    pub data_offset: u64,
}

/// Totals for the chunks of one compression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressionStats {
    /// The compression.
    pub compression: ChunkCompression,
    /// Number of chunks.
    pub chunks: u64,
    /// Bytes of chunk data in the file.
    pub compressed_bytes: u64,
    /// Bytes of chunk data once decompressed.
    pub uncompressed_bytes: u64,
}

/// Counts and times of a bag: everything its index holds, so getting it reads no chunk.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Summary {
    /// Messages in the bag.
    pub message_count: u64,
    /// Messages per connection id (every connection is listed, with 0 when it has none).
    pub message_counts: BTreeMap<u32, u64>,
    /// Earliest message time in nanoseconds, `None` for a bag without messages.
    pub start_ns: Option<u64>,
    /// Latest message time in nanoseconds.
    pub end_ns: Option<u64>,
    /// Number of chunks (0 in format 1.2).
    pub chunk_count: u64,
}

impl Summary {
    pub(crate) fn from_chunks<'a>(
        connections: impl Iterator<Item = u32>,
        chunks: impl Iterator<Item = &'a ChunkInfo>,
    ) -> Self {
        let mut summary = Summary {
            message_counts: connections.map(|id| (id, 0)).collect(),
            ..Summary::default()
        };
        for chunk in chunks {
            summary.chunk_count += 1;
            let mut any = false;
            for &(conn, count) in &chunk.message_counts {
                *summary.message_counts.entry(conn).or_insert(0) += u64::from(count);
                summary.message_count += u64::from(count);
                any |= count > 0;
            }
            if any {
                summary.start_ns = Some(
                    summary
                        .start_ns
                        .map_or(chunk.start_ns, |s| s.min(chunk.start_ns)),
                );
                summary.end_ns = Some(summary.end_ns.map_or(chunk.end_ns, |e| e.max(chunk.end_ns)));
            }
        }
        summary
    }
}

/// Chunk totals per compression, ordered by compression (`none`, `bz2`, `lz4`).
pub(crate) fn compression_stats(
    headers: impl Iterator<Item = ChunkHeader>,
) -> Vec<CompressionStats> {
    let mut stats: BTreeMap<ChunkCompression, CompressionStats> = BTreeMap::new();
    for header in headers {
        let s = stats
            .entry(header.compression)
            .or_insert_with(|| CompressionStats {
                compression: header.compression,
                chunks: 0,
                compressed_bytes: 0,
                uncompressed_bytes: 0,
            });
        s.chunks += 1;
        s.compressed_bytes = s.compressed_bytes.saturating_add(header.compressed_size);
        s.uncompressed_bytes = s
            .uncompressed_bytes
            .saturating_add(header.uncompressed_size);
    }
    stats.into_values().collect()
}
