//! Options shared by the readers.

use crate::chunk::DEFAULT_CHUNK_LIMIT;

/// Which layout a file is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// Ratified MCAP, unless the footer says the file is a pre-ratification draft file (seekable
    /// inputs only; streams cannot look at the footer and read ratified).
    #[default]
    Auto,
    /// Ratified MCAP only; a draft file is an error.
    Ratified,
    /// The pre-ratification draft layout, mapped to ratified records.
    Draft,
}

/// How a reader reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    /// Check chunk CRCs (default on): every chunk a linear reader reads, and every compressed
    /// chunk an indexed query decompresses whole (see `decode_whole_chunks`). Uncompressed chunks
    /// in indexed reads are checked only with `verify_uncompressed_chunks` as well.
    pub verify_chunk_crcs: bool,
    /// Indexed reads: check the CRCs of uncompressed chunks too (default off; needs
    /// `verify_chunk_crcs`).
    ///
    /// A query serves an uncompressed chunk's messages straight from the file's bytes, and
    /// touches only the messages it hands out. Checking the CRC reads every byte of the chunk
    /// instead, which is most of the cost of such a read from a memory map: every page of the
    /// chunk gets mapped, where the messages alone may touch a few (`benches/read_order.rs`
    /// measures the difference). A compressed chunk is read whole to decompress it, and the
    /// check adds little to that, so those are checked by default.
    ///
    /// The official readers skip chunk CRCs in indexed reads (the `mcap` crate has no check
    /// there; the Python `mcap` package checks only with `validate_crcs=True`). Turn this on for
    /// files whose storage you do not trust, or run `check` over them, which reads every CRC.
    pub verify_uncompressed_chunks: bool,
    /// Make indexed queries decode every chunk they read whole (default off). Off, a query
    /// filtered by topic or channel decodes a chunk only up to the end of its last wanted
    /// message (known from the message indexes): one topic out of chunks that also hold camera
    /// images costs a fraction of the chunks. (A chunk whose last message is wanted, or a zstd
    /// chunk whose last wanted message starts in its final eighth, is decoded whole anyway,
    /// which costs no more.) The chunk CRC covers the whole chunk, so a partly decoded chunk is
    /// not checked; turn this on (or call `with_crc_checks(true)`) to decode and check every
    /// chunk.
    pub decode_whole_chunks: bool,
    /// Check the DataEnd data-section CRC (default on; linear readers only, since it covers the
    /// whole data section).
    pub verify_data_section_crc: bool,
    /// Check the Footer summary CRC (default on).
    pub verify_summary_crc: bool,
    /// Check attachment CRCs (default on).
    pub verify_attachment_crcs: bool,
    /// The largest record (streams) and uncompressed chunk (everywhere) accepted, in bytes.
    pub record_limit: u64,
    /// Worker threads decompressing upcoming chunks; 0 decodes on the reading thread.
    pub threads: usize,
    /// Which layout to read.
    pub layout: Layout,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            verify_chunk_crcs: true,
            verify_uncompressed_chunks: false,
            decode_whole_chunks: false,
            verify_data_section_crc: true,
            verify_summary_crc: true,
            verify_attachment_crcs: true,
            record_limit: DEFAULT_CHUNK_LIMIT,
            threads: robolog_framing::default_threads(),
            layout: Layout::Auto,
        }
    }
}

impl ReadOptions {
    /// Turns every CRC check on or off. On, that includes the chunks a query needs only part of
    /// (`decode_whole_chunks`), so that every chunk read is checked; off, queries decode only
    /// what they need.
    pub fn with_crc_checks(mut self, on: bool) -> Self {
        self.verify_chunk_crcs = on;
        self.verify_uncompressed_chunks = on;
        self.decode_whole_chunks = on;
        self.verify_data_section_crc = on;
        self.verify_summary_crc = on;
        self.verify_attachment_crcs = on;
        self
    }

    /// Sets the number of decoding threads (0 = decode on the reading thread).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Sets the layout.
    pub fn with_layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }

    /// Chunks decoded ahead of the consumer: enough to keep every worker busy, few enough that
    /// memory stays a small multiple of the chunk size.
    pub(crate) fn in_flight(&self) -> usize {
        (self.threads * 2).max(2)
    }

    /// The decoded chunks an indexed time-ordered read keeps at once when chunks overlap in
    /// time: as many bytes as the largest chunk accepted, at most 128 MiB.
    pub(crate) fn cache_limit(&self) -> usize {
        usize::try_from(self.record_limit).map_or(128 << 20, |limit| limit.min(128 << 20))
    }
}
