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
    /// chunk gets mapped, where the messages alone may touch a few. Measured on a 410 MB file of
    /// 200 KiB messages: a query for 20 of them took 0.4 ms with the check and 0.2 ms without;
    /// a log-time read of the whole file 31 ms and 8.4 ms (`benches/read_order.rs`). A
    /// compressed chunk is read whole to decompress it, and the check adds little to that, so
    /// those are checked by default.
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
    /// Queries with less decoding work than this decode on the reading thread, since starting
    /// workers costs more than they save on a chunk or two (default 1 MiB). The work is counted
    /// in bytes of LZ4 chunks: a zstd chunk counts 8 times its size, since zstd decodes about 8
    /// times slower, and an uncompressed chunk a sixteenth (listing its messages, and its CRC
    /// check when that is on).
    /// Measured on two cores: LZ4 topic queries over 4 MiB of chunks take 0.8-1.0 ms on the
    /// workers against 1.2-1.5 ms on the reading thread, while uncompressed ones of that size are
    /// faster inline (0.25-0.40 ms against 0.26-0.56 ms).
    pub parallel_min_bytes: u64,
    /// Whether an indexed read that decodes on two or more worker threads may decode a large
    /// LZ4 chunk (256 KiB or more, one frame of independent blocks) in two halves at once, the
    /// second on a worker that is free (default on). A query over a few large chunks then keeps
    /// every core busy to its end: seven chunks on two cores take three and a half chunks' time
    /// instead of four. The results and errors are the same either way.
    pub split_lz4_chunks: bool,
    /// The most bytes of decoded chunks an indexed time-ordered read keeps at once (default
    /// 128 MiB). Files whose chunks overlap in time need several at once; beyond this, chunks are
    /// dropped and decoded again when due (slower, but memory stays bounded).
    pub cache_bytes: usize,
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
            cache_bytes: 128 << 20,
            parallel_min_bytes: 1 << 20,
            split_lz4_chunks: true,
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
}
