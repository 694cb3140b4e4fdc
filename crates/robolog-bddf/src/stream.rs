//! The streaming reader: every block in file order from any `Read`, no seeking.

use std::collections::BTreeMap;
use std::io::{self, BufReader, Read};

use robolog_framing::{Bytes, ErrorKind, StreamError, read_exact_bounded};
use sha1::{Digest, Sha1};

use crate::block::{
    BlockHeader, BlockType, DESC_LEN_LEN, DIGEST_LEN, DataBlock, END_MAGIC, HEADER_LEN,
    START_MAGIC, TRAILER_LEN, check_desc_len, decode_data_descriptor, decode_descriptor_block,
};
use crate::error::{Error, Sha1Digest};
use crate::file_descriptor::{Checksum, FILE_DESCRIPTOR_OFFSET, validate};
use crate::proto::FileFormatDescriptor;
use crate::proto::descriptor_block::Descriptor;
use crate::scan::Trailer;
use crate::series::Series;

/// The default largest block the streaming reader accepts: 1 GiB.
pub const DEFAULT_MAX_BLOCK_SIZE: u64 = 1 << 30;

/// How a [`StreamReader`] reads (see [`StreamReader::with_options`]).
///
/// ```
/// use robolog_bddf::StreamOptions;
/// let options = StreamOptions::new().max_block_size(64 << 20).verify_checksum(false);
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamOptions {
    max_block_size: u64,
    verify_checksum: bool,
}

impl StreamOptions {
    /// The defaults: blocks of up to [`DEFAULT_MAX_BLOCK_SIZE`], the checksum checked.
    pub const fn new() -> Self {
        Self {
            max_block_size: DEFAULT_MAX_BLOCK_SIZE,
            verify_checksum: true,
        }
    }

    /// The largest block accepted (default [`DEFAULT_MAX_BLOCK_SIZE`]). A stream's end is
    /// unknown, so a block size is checked against this before anything is read (and buffers
    /// grow only as bytes arrive).
    pub const fn max_block_size(mut self, bytes: u64) -> Self {
        self.max_block_size = bytes;
        self
    }

    /// Check the trailer's SHA-1 at the end of the stream (on by default; files declaring no
    /// checksum are never checked).
    pub const fn verify_checksum(mut self, on: bool) -> Self {
        self.verify_checksum = on;
        self
    }
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self::new()
    }
}

/// Counts and hashes the bytes read through it.
#[derive(Debug)]
struct HashingReader<R> {
    inner: R,
    position: u64,
    sha: Sha1,
    hashing: bool,
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if self.hashing {
            self.sha.update(&buf[..n]);
        }
        self.position += n as u64;
        Ok(n)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Reading,
    Done,
}

/// Reads the blocks of a BDDF file in order from a stream (pipe, socket, file still being
/// written).
///
/// Yields every data block; series are learned from their descriptors as they arrive
/// ([`StreamReader::series`]). At the trailer, the SHA-1 over everything read is compared with
/// the stored one. A stream that ends early gives [`Error::Truncated`] naming the incomplete
/// block; a partial block is never returned. After the first error the reader yields nothing.
///
/// Memory is bounded by the largest block: index blocks are read and dropped. The input is
/// buffered internally.
#[derive(Debug)]
pub struct StreamReader<R> {
    input: HashingReader<BufReader<R>>,
    options: StreamOptions,
    file_descriptor: FileFormatDescriptor,
    checksum: Checksum,
    series: BTreeMap<u32, Series>,
    complete_data_blocks: u64,
    trailer: Option<Trailer>,
    state: State,
    scratch: Vec<u8>,
    /// The checksum mismatch found after damage was reported, yielded next.
    pending: Option<Error>,
}

impl<R: Read> StreamReader<R> {
    /// Starts reading: checks the magic and the file descriptor.
    pub fn new(input: R) -> Result<Self, Error> {
        Self::with_options(input, StreamOptions::default())
    }

    /// Starts reading with options.
    pub fn with_options(input: R, options: StreamOptions) -> Result<Self, Error> {
        let mut reader = Self {
            input: HashingReader {
                // Headers are read a few bytes at a time; the buffer saves a call per read.
                inner: BufReader::with_capacity(64 * 1024, input),
                position: 0,
                sha: Sha1::new(),
                hashing: true,
            },
            options,
            file_descriptor: FileFormatDescriptor::default(),
            checksum: Checksum::Sha1,
            series: BTreeMap::new(),
            complete_data_blocks: 0,
            trailer: None,
            state: State::Reading,
            scratch: Vec::new(),
            pending: None,
        };
        let mut magic = [0u8; 4];
        let got = reader.read_up_to(&mut magic)?;
        if magic != START_MAGIC {
            if START_MAGIC.starts_with(&magic[..got]) {
                return Err(reader.truncated(0, "file magic", 4));
            }
            return Err(Error::NotBddf {
                found: magic[..got].to_vec(),
            });
        }
        let header = reader.read_header()?;
        if header.block_type != BlockType::Descriptor {
            return Err(Error::UnexpectedBlock {
                offset: FILE_DESCRIPTOR_OFFSET,
                expected: "file descriptor",
                found: header.block_type.name(),
            });
        }
        let block = reader.read_descriptor_body(FILE_DESCRIPTOR_OFFSET, header.size)?;
        let Some(Descriptor::FileDescriptor(file_descriptor)) = block.descriptor else {
            return Err(Error::UnexpectedBlock {
                offset: FILE_DESCRIPTOR_OFFSET,
                expected: "file descriptor",
                found: crate::block::descriptor_name(&block),
            });
        };
        reader.checksum = validate(&file_descriptor, FILE_DESCRIPTOR_OFFSET)?;
        reader.file_descriptor = file_descriptor;
        Ok(reader)
    }

    /// The file descriptor (version, checksum kind, annotations).
    pub fn file_descriptor(&self) -> &FileFormatDescriptor {
        &self.file_descriptor
    }

    /// File annotations.
    pub fn annotations(&self) -> &BTreeMap<String, String> {
        &self.file_descriptor.annotations
    }

    /// The series declared so far, by index, with counts of the blocks read so far.
    pub fn series(&self) -> impl Iterator<Item = &Series> {
        self.series.values()
    }

    /// The series with this index, once its descriptor has been read.
    pub fn series_by_index(&self, series_index: u32) -> Option<&Series> {
        self.series.get(&series_index)
    }

    /// Bytes read so far.
    pub fn position(&self) -> u64 {
        self.input.position
    }

    /// Data blocks read so far.
    pub fn complete_data_blocks(&self) -> u64 {
        self.complete_data_blocks
    }

    /// The trailer, once the end of the file has been read.
    pub fn trailer(&self) -> Option<&Trailer> {
        self.trailer.as_ref()
    }

    /// The next data block; `Ok(None)` after the trailer (checksum verified) or after an error.
    ///
    /// When damage stops the parse before the trailer (a corrupt block header, say), the rest of
    /// the stream is still hashed: if the trailer's SHA-1 then disagrees, an
    /// [`Error::ChecksumMismatch`] follows the damage, which tells a corrupted file from one
    /// whose writer produced bad blocks.
    pub fn next_block(&mut self) -> Result<Option<DataBlock>, Error> {
        if let Some(mismatch) = self.pending.take() {
            return Err(mismatch);
        }
        if self.state == State::Done {
            return Ok(None);
        }
        let result = self.read_next();
        if !matches!(result, Ok(Some(_))) {
            self.state = State::Done;
        }
        match result {
            Err(damage) if self.checks_rest_after(&damage) => match self.hash_rest_and_compare() {
                Some(mismatch) => {
                    self.pending = Some(mismatch);
                    Err(damage)
                }
                None => Err(damage),
            },
            other => other,
        }
    }

    fn checks_rest_after(&self, damage: &Error) -> bool {
        self.options.verify_checksum
            && self.checksum == Checksum::Sha1
            && self.input.hashing
            && !damage.is_truncation()
            && !matches!(damage, Error::Io { .. } | Error::ChecksumMismatch { .. })
    }

    /// Hashes everything up to the last 24 bytes of the stream and compares the result with
    /// the digest those bytes hold (digest + `FDDB`). `None` when they match or when the stream
    /// does not end like a BDDF file.
    fn hash_rest_and_compare(&mut self) -> Option<Error> {
        const TAIL: usize = DIGEST_LEN + 4;
        let mut tail = Vec::with_capacity(TAIL + 64 * 1024);
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match self.input.inner.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return None,
            };
            self.input.position += n as u64;
            tail.extend_from_slice(&buf[..n]);
            if tail.len() > TAIL {
                let hashed = tail.len() - TAIL;
                self.input.sha.update(&tail[..hashed]);
                tail.drain(..hashed);
            }
        }
        if tail.len() < TAIL || tail[DIGEST_LEN..] != END_MAGIC {
            return None;
        }
        let actual = self.input.sha.finalize_reset();
        self.input.hashing = false;
        let mut expected = [0u8; DIGEST_LEN];
        expected.copy_from_slice(&tail[..DIGEST_LEN]);
        let mut computed = [0u8; DIGEST_LEN];
        computed.copy_from_slice(&actual);
        (computed != expected).then_some(Error::ChecksumMismatch {
            expected: Sha1Digest(expected),
            actual: Sha1Digest(computed),
        })
    }

    fn read_next(&mut self) -> Result<Option<DataBlock>, Error> {
        loop {
            let offset = self.input.position;
            let header = self.read_header()?;
            match header.block_type {
                BlockType::Data => return self.read_data(offset, header.size).map(Some),
                BlockType::Descriptor => {
                    let block = self.read_descriptor_body(offset, header.size)?;
                    match block.descriptor {
                        Some(Descriptor::SeriesDescriptor(descriptor)) => {
                            // The first descriptor of an index wins, as in the recovery scan.
                            self.series
                                .entry(descriptor.series_index)
                                .or_insert_with(|| Series::new(descriptor, offset));
                        }
                        Some(Descriptor::FileDescriptor(_)) => {
                            return Err(Error::UnexpectedBlock {
                                offset,
                                expected: "series descriptor, index or data block",
                                found: "second file descriptor",
                            });
                        }
                        // The indexes repeat what the stream has shown.
                        Some(Descriptor::SeriesBlockIndex(_) | Descriptor::FileIndex(_)) | None => {
                        }
                    }
                }
                BlockType::End => {
                    self.read_trailer(offset)?;
                    return Ok(None);
                }
            }
        }
    }

    fn truncated(&self, offset: u64, what: &'static str, needed: u64) -> Error {
        Error::Truncated {
            offset,
            what,
            needed,
            available: self.input.position - offset,
            complete_data_blocks: self.complete_data_blocks,
        }
    }

    /// Fills `buf` as far as the stream allows; returns how many bytes it got (fewer than
    /// `buf.len()` only at the end of the stream).
    fn read_up_to(&mut self, buf: &mut [u8]) -> Result<usize, Error> {
        let mut got = 0;
        while got < buf.len() {
            match self.input.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(self.input.position, e)),
            }
        }
        Ok(got)
    }

    fn read_header(&mut self) -> Result<BlockHeader, Error> {
        let offset = self.input.position;
        let mut header = [0u8; HEADER_LEN as usize];
        if self.read_up_to(&mut header)? < header.len() {
            return Err(self.truncated(offset, "block header", HEADER_LEN));
        }
        BlockHeader::decode(header, offset)
    }

    /// Reads `len` bytes of the block at `block_offset` into `buf`, which needs `needed` bytes in
    /// all.
    fn read_body(
        &mut self,
        block_offset: u64,
        what: &'static str,
        len: u64,
        needed: u64,
        buf: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let at = self.input.position;
        let limit = self.options.max_block_size;
        match read_exact_bounded(&mut self.input, len, limit, at, what, buf) {
            Ok(()) => Ok(()),
            Err(StreamError::Framing(e)) if matches!(e.kind, ErrorKind::UnexpectedEnd { .. }) => {
                Err(self.truncated(block_offset, what, needed))
            }
            Err(StreamError::Framing(e)) => Err(Error::Framing(e)),
            Err(StreamError::Io { offset, source, .. }) => Err(Error::io(offset, source)),
        }
    }

    fn read_descriptor_body(
        &mut self,
        offset: u64,
        size: u64,
    ) -> Result<crate::proto::DescriptorBlock, Error> {
        let mut body = std::mem::take(&mut self.scratch);
        let result = self
            .read_body(
                offset,
                "descriptor block",
                size,
                HEADER_LEN + size,
                &mut body,
            )
            .and_then(|()| decode_descriptor_block(&body, offset));
        self.scratch = body;
        result
    }

    fn read_data(&mut self, offset: u64, size: u64) -> Result<DataBlock, Error> {
        let mut desc_len = [0u8; DESC_LEN_LEN as usize];
        if self.read_up_to(&mut desc_len)? < desc_len.len() {
            return Err(self.truncated(offset, "data block", HEADER_LEN + DESC_LEN_LEN));
        }
        let desc_len = u32::from_le_bytes(desc_len);
        check_desc_len(desc_len, size, offset)?;
        let mut body = Vec::new();
        let needed = HEADER_LEN + DESC_LEN_LEN + size;
        self.read_body(offset, "data block", size, needed, &mut body)?;
        let (desc, _) = body.split_at(desc_len as usize);
        let descriptor = decode_data_descriptor(desc, offset)?;
        let series_index = descriptor.series_index;
        let data = Bytes::from(body).slice(desc_len as usize..);
        let block = DataBlock::new(descriptor, data, offset)?;
        let series = self
            .series
            .get_mut(&series_index)
            .ok_or(Error::UnknownSeries {
                offset,
                series_index,
            })?;
        series
            .stats_mut()
            .add(block.timestamp_ns, block.data.len() as u64);
        self.complete_data_blocks += 1;
        Ok(block)
    }

    fn read_trailer(&mut self, offset: u64) -> Result<(), Error> {
        let mut index_offset = [0u8; 8];
        if self.read_up_to(&mut index_offset)? < index_offset.len() {
            return Err(self.truncated(offset, "trailer", TRAILER_LEN));
        }
        // The digest covers everything before it, including the end header and index offset.
        let actual = self.input.sha.finalize_reset();
        self.input.hashing = false;
        let mut rest = [0u8; DIGEST_LEN + 4];
        if self.read_up_to(&mut rest)? < rest.len() {
            return Err(self.truncated(offset, "trailer", TRAILER_LEN));
        }
        let (digest, magic) = rest.split_at(DIGEST_LEN);
        if magic != END_MAGIC {
            return Err(Error::UnexpectedBlock {
                offset: offset + TRAILER_LEN - 4,
                expected: "\"FDDB\" end magic",
                found: "different bytes",
            });
        }
        let mut expected = [0u8; DIGEST_LEN];
        expected.copy_from_slice(digest);
        let mut computed = [0u8; DIGEST_LEN];
        computed.copy_from_slice(&actual);
        self.trailer = Some(Trailer {
            offset,
            index_offset: u64::from_le_bytes(index_offset),
            digest: Sha1Digest(expected),
        });
        if self.options.verify_checksum && self.checksum == Checksum::Sha1 && computed != expected {
            return Err(Error::ChecksumMismatch {
                expected: Sha1Digest(expected),
                actual: Sha1Digest(computed),
            });
        }
        Ok(())
    }
}

impl<R: Read> Iterator for StreamReader<R> {
    type Item = Result<DataBlock, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_block().transpose()
    }
}
