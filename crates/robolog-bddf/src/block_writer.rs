//! Writing blocks in one pass: positions for the index, a running SHA-1 for the trailer, and the
//! index blocks and trailer at the end. Shared by the writer and recovery.

use std::io::Write;

use prost::Message;
use sha1::{Digest, Sha1};

use crate::block::{
    BlockHeader, BlockType, DIGEST_LEN, END_BLOCK_SIZE, END_MAGIC, HEADER_LEN, START_MAGIC,
};
use crate::error::Error;
use crate::file_descriptor::Checksum;
use crate::proto::descriptor_block::Descriptor;
use crate::proto::series_block_index::BlockEntry;
use crate::proto::{
    DataDescriptor, DescriptorBlock, FileIndex, SeriesBlockIndex, SeriesIdentifier,
};

/// Payloads up to this size are copied behind their headers and written with one call, which
/// is cheaper than a second write for small messages on unbuffered outputs.
const COALESCE_LIMIT: usize = 4096;

/// What the index needs to know about one series.
#[derive(Debug, Clone, Default)]
pub(crate) struct SeriesIndexBuilder {
    pub(crate) identifier: SeriesIdentifier,
    pub(crate) identifier_hash: u64,
    pub(crate) descriptor_offset: u64,
    pub(crate) entries: Vec<BlockEntry>,
    pub(crate) total_bytes: u64,
}

/// Writes the blocks of one file to `out`, hashing everything it writes.
#[derive(Debug)]
pub(crate) struct BlockWriter<W> {
    out: W,
    position: u64,
    sha: Sha1,
    scratch: Vec<u8>,
}

impl<W: Write> BlockWriter<W> {
    /// Writes the start magic.
    pub(crate) fn new(out: W) -> Result<Self, Error> {
        let mut writer = Self {
            out,
            position: 0,
            sha: Sha1::new(),
            scratch: Vec::new(),
        };
        writer.write_hashed(&START_MAGIC)?;
        Ok(writer)
    }

    /// Offset of the next block.
    pub(crate) fn position(&self) -> u64 {
        self.position
    }

    fn write_hashed(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.out
            .write_all(bytes)
            .map_err(|e| Error::io(self.position, e))?;
        self.sha.update(bytes);
        self.position += bytes.len() as u64;
        Ok(())
    }

    fn write_scratch(&mut self) -> Result<(), Error> {
        let scratch = std::mem::take(&mut self.scratch);
        let result = self.write_hashed(&scratch);
        self.scratch = scratch;
        result
    }

    /// Writes a descriptor block; returns its offset.
    pub(crate) fn write_descriptor(&mut self, block: &DescriptorBlock) -> Result<u64, Error> {
        let offset = self.position;
        let len = block.encoded_len();
        self.scratch.clear();
        self.scratch.reserve(HEADER_LEN as usize + len);
        self.scratch
            .extend_from_slice(&BlockHeader::encode(BlockType::Descriptor, len as u64)?);
        block
            .encode(&mut self.scratch)
            .map_err(|_| Error::BlockTooLarge { size: len as u64 })?;
        self.write_scratch()?;
        Ok(offset)
    }

    /// Writes a data block; returns its offset.
    pub(crate) fn write_data(
        &mut self,
        descriptor: &DataDescriptor,
        payload: &[u8],
    ) -> Result<u64, Error> {
        let offset = self.position;
        let desc_len = descriptor.encoded_len();
        let size = (desc_len as u64).saturating_add(payload.len() as u64);
        let header = BlockHeader::encode(BlockType::Data, size)?;
        let desc_len_field = u32::try_from(desc_len).map_err(|_| Error::BlockTooLarge { size })?;
        self.scratch.clear();
        self.scratch.extend_from_slice(&header);
        self.scratch
            .extend_from_slice(&desc_len_field.to_le_bytes());
        descriptor
            .encode(&mut self.scratch)
            .map_err(|_| Error::BlockTooLarge { size })?;
        if payload.len() <= COALESCE_LIMIT {
            self.scratch.extend_from_slice(payload);
            self.write_scratch()?;
        } else {
            self.write_scratch()?;
            self.write_hashed(payload)?;
        }
        Ok(offset)
    }

    /// Copies complete, already-encoded blocks; returns the offset they start at.
    pub(crate) fn write_raw(&mut self, blocks: &[u8]) -> Result<u64, Error> {
        let offset = self.position;
        self.write_hashed(blocks)?;
        Ok(offset)
    }

    /// Writes one series block index per series (in the order given, which must be by series
    /// index), the file index and the trailer, and flushes the output. Returns the output and
    /// the file's length.
    pub(crate) fn finish(
        mut self,
        series: Vec<SeriesIndexBuilder>,
        checksum: Checksum,
    ) -> Result<(W, u64), Error> {
        let mut file_index = FileIndex::default();
        for (series_index, s) in (0u32..).zip(series) {
            let offset = self.write_descriptor(&DescriptorBlock {
                descriptor: Some(Descriptor::SeriesBlockIndex(SeriesBlockIndex {
                    series_index,
                    descriptor_file_offset: s.descriptor_offset,
                    block_entries: s.entries,
                    total_bytes: s.total_bytes,
                })),
            })?;
            file_index.series_identifiers.push(s.identifier);
            file_index.series_block_index_offsets.push(offset);
            file_index.series_identifier_hashes.push(s.identifier_hash);
        }
        // Always marked as present, so that a file without series gets `22 00` rather than an
        // empty block, which other readers cannot handle.
        let index_offset = self.write_descriptor(&DescriptorBlock {
            descriptor: Some(Descriptor::FileIndex(file_index)),
        })?;
        self.write_hashed(&BlockHeader::encode(BlockType::End, END_BLOCK_SIZE)?)?;
        self.write_hashed(&index_offset.to_le_bytes())?;
        let mut digest = [0u8; DIGEST_LEN];
        if checksum == Checksum::Sha1 {
            digest.copy_from_slice(&self.sha.finalize_reset());
        }
        let at = self.position;
        self.out
            .write_all(&digest)
            .and_then(|()| self.out.write_all(&END_MAGIC))
            .and_then(|()| self.out.flush())
            .map_err(|e| Error::io(at, e))?;
        Ok((self.out, at + (DIGEST_LEN + END_MAGIC.len()) as u64))
    }
}
