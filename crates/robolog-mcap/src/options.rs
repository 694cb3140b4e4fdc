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

/// How a reader reads: which CRCs it checks, the largest record it accepts, its worker
/// threads and the layout.
///
/// ```
/// use robolog_mcap::{Layout, ReadOptions};
/// let options = ReadOptions::new()
///     .verify_uncompressed_chunks(true)
///     .max_record_size(1 << 30)
///     .threads(0)
///     .layout(Layout::Ratified);
/// # let _ = options;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOptions {
    pub(crate) verify_chunk_crcs: bool,
    pub(crate) verify_uncompressed_chunks: bool,
    /// Indexed queries decode every chunk they read whole (set by `crc_checks(true)`).
    pub(crate) decode_whole_chunks: bool,
    pub(crate) verify_data_section_crc: bool,
    pub(crate) verify_summary_crc: bool,
    pub(crate) verify_attachment_crcs: bool,
    pub(crate) max_record_size: u64,
    pub(crate) threads: usize,
    pub(crate) layout: Layout,
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
            max_record_size: DEFAULT_CHUNK_LIMIT,
            threads: robolog_framing::default_threads(),
            layout: Layout::Auto,
        }
    }
}

impl ReadOptions {
    /// The defaults: every CRC checked but those of uncompressed chunks in indexed reads, a
    /// 4 GiB record limit, a worker thread per core, the layout detected.
    pub fn new() -> Self {
        Self::default()
    }

    /// Turns every CRC check on or off. On, indexed queries also decode every chunk they read
    /// whole (a query filtered by topic otherwise decodes a chunk only up to its last wanted
    /// message, and a partly decoded chunk cannot be checked), so that every chunk read is
    /// checked; off, queries decode only what they need.
    pub fn crc_checks(mut self, on: bool) -> Self {
        self.verify_chunk_crcs = on;
        self.verify_uncompressed_chunks = on;
        self.decode_whole_chunks = on;
        self.verify_data_section_crc = on;
        self.verify_summary_crc = on;
        self.verify_attachment_crcs = on;
        self
    }

    /// Check chunk CRCs (default on): every chunk a linear reader reads, and every compressed
    /// chunk an indexed query decompresses whole. Uncompressed chunks in indexed reads are
    /// checked only with [`ReadOptions::verify_uncompressed_chunks`] as well.
    pub fn verify_chunk_crcs(mut self, on: bool) -> Self {
        self.verify_chunk_crcs = on;
        self
    }

    /// Indexed reads: check the CRCs of uncompressed chunks too (default off; needs
    /// [`ReadOptions::verify_chunk_crcs`]). The robolog facade has the same rule and default
    /// (`robolog::OpenOptions::check_uncompressed_chunks`); its command line and Python package
    /// turn it on.
    ///
    /// A query serves an uncompressed chunk's messages straight from the file's bytes, and
    /// touches only the messages it hands out. Checking the CRC reads every byte of the chunk
    /// instead, which is most of the cost of such a read from a memory map: every page of the
    /// chunk gets mapped, where the messages alone may touch a few. A compressed chunk is read
    /// whole to decompress it, and the check adds little to that, so those are checked by
    /// default. The official readers skip chunk CRCs in indexed reads (the `mcap` crate has no
    /// check there; the Python `mcap` package checks only with `validate_crcs=True`). Turn this
    /// on for files whose storage you do not trust, or run `check` over them, which reads every
    /// CRC.
    pub fn verify_uncompressed_chunks(mut self, on: bool) -> Self {
        self.verify_uncompressed_chunks = on;
        self
    }

    /// Check the DataEnd data-section CRC (default on; linear readers only, since it covers
    /// the whole data section).
    pub fn verify_data_section_crc(mut self, on: bool) -> Self {
        self.verify_data_section_crc = on;
        self
    }

    /// Check the Footer summary CRC (default on).
    pub fn verify_summary_crc(mut self, on: bool) -> Self {
        self.verify_summary_crc = on;
        self
    }

    /// Check attachment CRCs (default on).
    pub fn verify_attachment_crcs(mut self, on: bool) -> Self {
        self.verify_attachment_crcs = on;
        self
    }

    /// The largest record (streams) and uncompressed chunk (everywhere) accepted, in bytes
    /// (default 4 GiB).
    pub fn max_record_size(mut self, bytes: u64) -> Self {
        self.max_record_size = bytes;
        self
    }

    /// Worker threads decompressing upcoming chunks (default: one per core); 0 decodes on the
    /// reading thread.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Make indexed queries decode every chunk they read whole, never only the prefix that
    /// holds the wanted messages: for tests of the prefix reads ([`ReadOptions::crc_checks`]
    /// is how a user asks for it).
    #[doc(hidden)]
    pub fn decode_whole_chunks(mut self, on: bool) -> Self {
        self.decode_whole_chunks = on;
        self
    }

    /// Which layout to read (default [`Layout::Auto`]).
    pub fn layout(mut self, layout: Layout) -> Self {
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
        usize::try_from(self.max_record_size).map_or(128 << 20, |limit| limit.min(128 << 20))
    }
}
