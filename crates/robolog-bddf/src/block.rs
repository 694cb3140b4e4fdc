//! Block framing, sans-io: headers, data and descriptor block bodies, the trailer.
//!
//! The indexed reader and the recovery scan parse blocks straight out of a byte slice with
//! [`parse_block`]; the streaming reader reads the same pieces from a stream and decodes them
//! with the same functions.

use std::ops::Range;

use prost::Message;
use robolog_framing::{ByteReader, Bytes};

use crate::error::Error;
use crate::proto::descriptor_block::Descriptor;
use crate::proto::{DataDescriptor, DescriptorBlock};
use crate::time::timestamp_to_nanos;

/// The magic at the start of every BDDF file.
pub const START_MAGIC: [u8; 4] = *b"BDDF";
/// The magic at the end of every complete BDDF file.
pub const END_MAGIC: [u8; 4] = *b"FDDB";

/// Length of a block header (type and size packed in a little-endian u64).
pub(crate) const HEADER_LEN: u64 = 8;
/// Length of a data block's descriptor-length field, which the block size does not count.
pub(crate) const DESC_LEN_LEN: u64 = 4;
/// End header, index offset, SHA-1 digest and end magic.
pub(crate) const TRAILER_LEN: u64 = 40;
/// The size field of the end block header as every writer puts it (readers ignore it).
pub(crate) const END_BLOCK_SIZE: u64 = 24;
/// Length of the SHA-1 digest in the trailer.
pub(crate) const DIGEST_LEN: usize = 20;
/// The largest block size the 56-bit size field holds.
pub(crate) const MAX_BLOCK_SIZE: u64 = 0x00FF_FFFF_FFFF_FFFF;

/// What a block holds, from the top byte of its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockType {
    /// A data descriptor and a payload.
    Data,
    /// A serialized `DescriptorBlock`.
    Descriptor,
    /// The trailer.
    End,
}

impl BlockType {
    fn code(self) -> u64 {
        match self {
            BlockType::Data => 0,
            BlockType::Descriptor => 1,
            BlockType::End => 2,
        }
    }

    /// Human-readable name, for errors.
    pub(crate) fn name(self) -> &'static str {
        match self {
            BlockType::Data => "data block",
            BlockType::Descriptor => "descriptor block",
            BlockType::End => "trailer",
        }
    }
}

/// A decoded block header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlockHeader {
    pub(crate) block_type: BlockType,
    /// For data blocks: descriptor plus payload, *without* the 4-byte descriptor length.
    pub(crate) size: u64,
}

impl BlockHeader {
    /// Decodes the 8 header bytes of the block at `offset`.
    pub(crate) fn decode(bytes: [u8; 8], offset: u64) -> Result<Self, Error> {
        let raw = u64::from_le_bytes(bytes);
        let block_type = match raw >> 56 {
            0 => BlockType::Data,
            1 => BlockType::Descriptor,
            2 => BlockType::End,
            other => {
                return Err(Error::ReservedBlockType {
                    offset,
                    block_type: u8::try_from(other).unwrap_or(u8::MAX),
                });
            }
        };
        Ok(Self {
            block_type,
            size: raw & MAX_BLOCK_SIZE,
        })
    }

    /// Encodes a header, refusing sizes the 56-bit field cannot hold.
    pub(crate) fn encode(block_type: BlockType, size: u64) -> Result<[u8; 8], Error> {
        if size > MAX_BLOCK_SIZE {
            return Err(Error::BlockTooLarge { size });
        }
        Ok(((block_type.code() << 56) | size).to_le_bytes())
    }
}

/// A data block as readers hand it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataBlock {
    /// The series the block belongs to.
    pub series_index: u32,
    /// Time of the block in nanoseconds since the epoch (negative before 1970). For POD series,
    /// the time of the block's first sample.
    pub timestamp_ns: i64,
    /// Values of the series' additional indexes, in the order of
    /// [`Series::additional_index_names`](crate::Series::additional_index_names).
    pub additional_indexes: Vec<i64>,
    /// The payload: a slice of the input (indexed reader) or of the block's own buffer (stream).
    pub data: Bytes,
    /// File offset of the block header.
    pub offset: u64,
}

impl DataBlock {
    /// Builds the block from its decoded descriptor.
    pub(crate) fn new(descriptor: DataDescriptor, data: Bytes, offset: u64) -> Result<Self, Error> {
        Ok(Self {
            series_index: descriptor.series_index,
            timestamp_ns: descriptor_nanos(&descriptor, offset)?,
            additional_indexes: descriptor.additional_indexes,
            data,
            offset,
        })
    }
}

/// The data descriptor's time in nanoseconds; a missing timestamp is time 0, as for any unset
/// protobuf field.
pub(crate) fn descriptor_nanos(descriptor: &DataDescriptor, offset: u64) -> Result<i64, Error> {
    match &descriptor.timestamp {
        None => Ok(0),
        Some(t) => timestamp_to_nanos(t).ok_or(Error::TimestampOutOfRange {
            offset,
            seconds: t.seconds,
            nanos: t.nanos,
        }),
    }
}

/// Decodes the `DescriptorBlock` body of the descriptor block at `offset`.
pub(crate) fn decode_descriptor_block(body: &[u8], offset: u64) -> Result<DescriptorBlock, Error> {
    DescriptorBlock::decode(body).map_err(|source| Error::Decode {
        offset,
        what: "descriptor block",
        source,
    })
}

/// Decodes the `DataDescriptor` of the data block at `offset`.
pub(crate) fn decode_data_descriptor(bytes: &[u8], offset: u64) -> Result<DataDescriptor, Error> {
    DataDescriptor::decode(bytes).map_err(|source| Error::Decode {
        offset,
        what: "data descriptor",
        source,
    })
}

/// Checks a data block's descriptor length against its size.
pub(crate) fn check_desc_len(desc_len: u32, block_size: u64, offset: u64) -> Result<(), Error> {
    if u64::from(desc_len) > block_size {
        return Err(Error::DescriptorTooLong {
            offset,
            desc_len,
            block_size,
        });
    }
    Ok(())
}

/// Name of the descriptor a `DescriptorBlock` carries, for errors and reports.
pub(crate) fn descriptor_name(block: &DescriptorBlock) -> &'static str {
    match &block.descriptor {
        Some(Descriptor::FileDescriptor(_)) => "file descriptor",
        Some(Descriptor::SeriesDescriptor(_)) => "series descriptor",
        Some(Descriptor::SeriesBlockIndex(_)) => "series block index",
        Some(Descriptor::FileIndex(_)) => "file index",
        None => "empty descriptor block",
    }
}

/// One block parsed out of a file slice.
#[derive(Debug)]
pub(crate) enum ParsedBlock {
    Data {
        descriptor: DataDescriptor,
        /// The payload, as a range of the file slice.
        payload: Range<usize>,
    },
    Descriptor(DescriptorBlock),
    /// The trailer: index offset and digest.
    End {
        index_offset: u64,
        digest: [u8; DIGEST_LEN],
    },
}

/// A parsed block and where it lies.
#[derive(Debug)]
pub(crate) struct Located {
    pub(crate) block: ParsedBlock,
    /// Offset just past the block (for the trailer: past the end magic).
    pub(crate) end: u64,
}

/// Parses the block whose header is at `offset` in `file`.
///
/// A block that does not fit in `file` is a [`Error::Truncated`] naming the block, with
/// `complete_data_blocks` passed through for the caller's count; it never yields a short block.
pub(crate) fn parse_block(
    file: &[u8],
    offset: u64,
    complete_data_blocks: u64,
) -> Result<Located, Error> {
    parse_block_in(file, 0, offset, complete_data_blocks)
}

/// Parses the block whose header is at file offset `offset`, out of `window`: the bytes of the
/// file from offset `base` on (a part read by position). Offsets in errors and `end` are file
/// offsets; a data block's payload range is one of `window`.
pub(crate) fn parse_block_in(
    window: &[u8],
    base: u64,
    offset: u64,
    complete_data_blocks: u64,
) -> Result<Located, Error> {
    let file = window;
    let start = offset
        .checked_sub(base)
        .and_then(|s| usize::try_from(s).ok())
        .filter(|&s| s <= file.len())
        .ok_or(Error::Truncated {
            offset,
            what: "block header",
            needed: HEADER_LEN,
            available: 0,
            complete_data_blocks,
        })?;
    let mut r = ByteReader::with_base(&file[start..], offset);
    let available = r.remaining() as u64;
    let truncated = |what: &'static str, needed: u64| Error::Truncated {
        offset,
        what,
        needed,
        available,
        complete_data_blocks,
    };
    let header_bytes = r
        .read_array::<8>("block header")
        .map_err(|_| truncated("block header", HEADER_LEN))?;
    let header = BlockHeader::decode(header_bytes, offset)?;
    match header.block_type {
        BlockType::Data => {
            let prefix = HEADER_LEN + DESC_LEN_LEN;
            let desc_len = r
                .read_u32("data descriptor length")
                .map_err(|_| truncated("data block", prefix))?;
            check_desc_len(desc_len, header.size, offset)?;
            // The size is at most 2^56, so the sum cannot overflow.
            let needed = prefix + header.size;
            let len = r
                .check_len(header.size, "data block")
                .map_err(|_| truncated("data block", needed))?;
            let desc_start = start + r.position();
            let body = r.read_bytes(len, "data block")?;
            let (desc, _) = body.split_at(desc_len as usize);
            let descriptor = decode_data_descriptor(desc, offset)?;
            let payload = desc_start + desc_len as usize..desc_start + len;
            Ok(Located {
                block: ParsedBlock::Data {
                    descriptor,
                    payload,
                },
                end: offset + needed,
            })
        }
        BlockType::Descriptor => {
            let needed = HEADER_LEN + header.size;
            let len = r
                .check_len(header.size, "descriptor block")
                .map_err(|_| truncated("descriptor block", needed))?;
            let body = r.read_bytes(len, "descriptor block")?;
            Ok(Located {
                block: ParsedBlock::Descriptor(decode_descriptor_block(body, offset)?),
                end: offset + needed,
            })
        }
        BlockType::End => {
            let rest = r
                .read_array::<32>("trailer")
                .map_err(|_| truncated("trailer", TRAILER_LEN))?;
            let (index_offset, rest) = rest.split_at(8);
            let (digest, magic) = rest.split_at(DIGEST_LEN);
            if magic != END_MAGIC {
                return Err(Error::UnexpectedBlock {
                    offset: offset + TRAILER_LEN - 4,
                    expected: "\"FDDB\" end magic",
                    found: "different bytes",
                });
            }
            let mut index = [0; 8];
            index.copy_from_slice(index_offset);
            let mut sha = [0; DIGEST_LEN];
            sha.copy_from_slice(digest);
            Ok(Located {
                block: ParsedBlock::End {
                    index_offset: u64::from_le_bytes(index),
                    digest: sha,
                },
                end: offset + TRAILER_LEN,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_examples_from_the_spec() {
        assert_eq!(
            BlockHeader::encode(BlockType::Descriptor, 88).unwrap(),
            [0x58, 0, 0, 0, 0, 0, 0, 0x01]
        );
        assert_eq!(
            BlockHeader::encode(BlockType::Data, 28).unwrap(),
            [0x1c, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            BlockHeader::encode(BlockType::End, 24).unwrap(),
            [0x18, 0, 0, 0, 0, 0, 0, 0x02]
        );
        let h = BlockHeader::decode([0x58, 0, 0, 0, 0, 0, 0, 0x01], 0).unwrap();
        assert_eq!((h.block_type, h.size), (BlockType::Descriptor, 88));
        // The size is the low 56 bits; the type is the whole top byte, not 4 bits.
        let h = BlockHeader::decode([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00], 0).unwrap();
        assert_eq!((h.block_type, h.size), (BlockType::Data, MAX_BLOCK_SIZE));
    }

    #[test]
    fn reserved_types_and_oversized_blocks_are_refused() {
        for block_type in [3u8, 0x10, 0xff] {
            let err = BlockHeader::decode([0, 0, 0, 0, 0, 0, 0, block_type], 44).unwrap_err();
            assert!(matches!(
                err,
                Error::ReservedBlockType { offset: 44, block_type: t } if t == block_type
            ));
        }
        assert!(matches!(
            BlockHeader::encode(BlockType::Data, MAX_BLOCK_SIZE + 1),
            Err(Error::BlockTooLarge { .. })
        ));
    }

    #[test]
    fn descriptor_longer_than_block_is_corrupt_not_truncated() {
        // Data block, size 2, desc_len 3.
        let mut file = vec![2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0];
        let err = parse_block(&file, 0, 0).unwrap_err();
        assert!(matches!(
            err,
            Error::DescriptorTooLong {
                desc_len: 3,
                block_size: 2,
                ..
            }
        ));
        assert!(!err.is_truncation());
        // The same block with a sane desc_len but cut short is a truncation.
        file[8] = 0;
        file.pop();
        let err = parse_block(&file, 0, 7).unwrap_err();
        assert!(matches!(
            err,
            Error::Truncated {
                what: "data block",
                needed: 14,
                available: 13,
                complete_data_blocks: 7,
                ..
            }
        ));
    }

    #[test]
    fn zero_length_payload_is_a_block() {
        let file = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let located = parse_block(&file, 0, 0).unwrap();
        assert_eq!(located.end, 12);
        match located.block {
            ParsedBlock::Data {
                descriptor,
                payload,
            } => {
                assert_eq!(descriptor, DataDescriptor::default());
                assert!(payload.is_empty());
            }
            other => panic!("{other:?}"),
        }
    }
}
