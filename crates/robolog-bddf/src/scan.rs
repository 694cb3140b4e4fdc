//! A linear walk over the blocks of a file that may be cut or have a damaged index: everything
//! up to the first incomplete or unreadable block, which is what the indexed reader falls back
//! to and what recovery rebuilds a file from.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::fmt;

use robolog_framing::{Problem, ProblemKind, StreamWindow, WindowError};

use crate::block::{
    BlockHeader, BlockType, DESC_LEN_LEN, DataBlock, HEADER_LEN, Located, ParsedBlock, START_MAGIC,
    TRAILER_LEN, parse_block, parse_block_in,
};
use crate::error::{Error, Sha1Digest};
use crate::file_descriptor::{Checksum, FILE_DESCRIPTOR_OFFSET, file_descriptor_of};
use crate::proto::descriptor_block::Descriptor;
use crate::proto::{DataDescriptor, FileFormatDescriptor, SeriesDescriptor};
use crate::stream::DEFAULT_MAX_BLOCK_SIZE;

/// The trailer of a complete file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trailer {
    /// Offset of the end block header.
    pub offset: u64,
    /// Offset of the file index block, as the trailer states it.
    pub index_offset: u64,
    /// The SHA-1 digest stored in the trailer.
    pub digest: Sha1Digest,
}

/// A data block seen by the scan.
#[derive(Debug, Clone)]
pub(crate) struct ScannedBlock {
    pub(crate) series_index: u32,
    pub(crate) timestamp_ns: i64,
    pub(crate) additional_indexes: Vec<i64>,
    pub(crate) offset: u64,
    pub(crate) payload_len: u64,
}

/// A series descriptor seen by the scan.
#[derive(Debug, Clone)]
pub(crate) struct ScannedSeries {
    pub(crate) descriptor: SeriesDescriptor,
    pub(crate) offset: u64,
}

/// Why the scan passed over a complete block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SkipReason {
    /// A data block of a series whose descriptor does not precede it.
    UndeclaredSeries {
        /// The series it names.
        series_index: u32,
    },
    /// A second descriptor for a series index (the first one is kept).
    DuplicateSeries {
        /// The series index.
        series_index: u32,
    },
    /// A series block index or file index: rebuilt rather than copied.
    IndexBlock,
    /// A second file descriptor, or an empty descriptor block.
    StrayDescriptor,
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::UndeclaredSeries { series_index } => write!(
                f,
                "a data block of series {series_index}, whose descriptor does not precede it"
            ),
            SkipReason::DuplicateSeries { series_index } => write!(
                f,
                "a second descriptor for series {series_index} (the first one is kept)"
            ),
            SkipReason::IndexBlock => f.write_str("an index block (indexes are rebuilt)"),
            SkipReason::StrayDescriptor => {
                f.write_str("a second file descriptor, or an empty descriptor block")
            }
        }
    }
}

/// A complete block the scan did not keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Skipped {
    /// Offset of the block header.
    pub(crate) offset: u64,
    /// Length of the block in bytes.
    pub(crate) len: u64,
    /// Why it was not kept.
    pub(crate) reason: SkipReason,
}

impl Skipped {
    /// The block as recovery reports it: a warning at its offset, of the kind of what it
    /// holds.
    pub(crate) fn problem(&self) -> Problem {
        let kind = match self.reason {
            SkipReason::UndeclaredSeries { .. } | SkipReason::DuplicateSeries { .. } => {
                ProblemKind::Schema
            }
            SkipReason::IndexBlock => ProblemKind::Index,
            SkipReason::StrayDescriptor => ProblemKind::Malformed,
        };
        Problem::warning(
            kind,
            self.offset,
            format!("block of {} bytes not copied: {}", self.len, self.reason),
        )
    }
}

/// What a scan found.
#[derive(Debug, Clone)]
pub(crate) struct Scan {
    /// The file descriptor, when the first block is complete and valid.
    pub(crate) file_descriptor: Option<(FileFormatDescriptor, Checksum, u64)>,
    pub(crate) series: BTreeMap<u32, ScannedSeries>,
    /// Data blocks of declared series, in file order.
    pub(crate) blocks: Vec<ScannedBlock>,
    pub(crate) skipped: Vec<Skipped>,
    /// The trailer, when the walk reached one.
    pub(crate) trailer: Option<Trailer>,
    /// Why the walk stopped before a trailer.
    pub(crate) stop: Option<Error>,
    /// Offset just past the last complete block (or the trailer).
    pub(crate) end: u64,
}

/// Walks the blocks of `file` from the start. Fails only when `file` is not BDDF at all.
pub(crate) fn scan(file: &[u8]) -> Result<Scan, Error> {
    walk(&mut InMemory(file), |_| Ok(()))
}

/// A block the walk reached, with its bytes (from its header to its end), in file order.
pub(crate) enum Visit<'a> {
    /// The file descriptor, and the checksum it declares.
    FileDescriptor(Checksum, &'a [u8]),
    /// The first descriptor of a series index.
    Series(&'a ScannedSeries, &'a [u8]),
    /// A data block of a declared series, its descriptor and its payload.
    Data {
        block: &'a ScannedBlock,
        descriptor: &'a DataDescriptor,
        payload: &'a [u8],
        bytes: &'a [u8],
    },
    /// A complete block that is not kept ([`Scan::skipped`] says why).
    Skipped(&'a [u8]),
    /// The trailer.
    End(&'a [u8]),
}

/// A block as a [`BlockSource`] read it.
pub(crate) struct SourcedBlock<'a> {
    /// The block as [`parse_block`] parses it in the whole file (`Err`: it cannot be read,
    /// which ends the walk).
    pub(crate) parsed: Result<Located, Error>,
    /// The bytes from `base` on that hold it (its payload range indexes them).
    pub(crate) bytes: &'a [u8],
    pub(crate) base: u64,
}

/// Where the walk reads blocks: a file in memory, or a window over a stream.
pub(crate) trait BlockSource {
    /// The first `n` bytes (fewer if the input is shorter).
    fn head(&mut self, n: u64) -> Result<&[u8], Error>;
    /// The block at `offset`; `Err` when reading failed.
    fn block(&mut self, offset: u64, complete_data_blocks: u64) -> Result<SourcedBlock<'_>, Error>;
    /// The input's length (a stream of unknown length is read to its end).
    fn len(&mut self) -> Result<u64, Error>;
}

/// A whole file in memory.
pub(crate) struct InMemory<'a>(pub(crate) &'a [u8]);

impl BlockSource for InMemory<'_> {
    fn head(&mut self, n: u64) -> Result<&[u8], Error> {
        Ok(&self.0[..self.0.len().min(usize::try_from(n).unwrap_or(usize::MAX))])
    }

    fn block(&mut self, offset: u64, complete_data_blocks: u64) -> Result<SourcedBlock<'_>, Error> {
        Ok(SourcedBlock {
            parsed: parse_block(self.0, offset, complete_data_blocks),
            bytes: self.0,
            base: 0,
        })
    }

    fn len(&mut self) -> Result<u64, Error> {
        Ok(self.0.len() as u64)
    }
}

/// The largest block a window over a stream holds, besides its header.
pub(crate) const MAX_STREAMED_BLOCK: u64 = DEFAULT_MAX_BLOCK_SIZE;

impl BlockSource for StreamWindow<'_> {
    fn head(&mut self, n: u64) -> Result<&[u8], Error> {
        let end = self.fill(n).map_err(window_error)?;
        Ok(self.slice(0, end))
    }

    fn block(&mut self, offset: u64, complete_data_blocks: u64) -> Result<SourcedBlock<'_>, Error> {
        self.release(offset);
        let prefix = HEADER_LEN + DESC_LEN_LEN;
        let held = self.fill(offset + prefix).map_err(window_error)?;
        let head = self.slice(offset, held);
        // The block's length, from its header: what the parse needs to be held.
        let wanted = match head.get(..HEADER_LEN as usize).map(|h| {
            let mut bytes = [0u8; HEADER_LEN as usize];
            bytes.copy_from_slice(h);
            BlockHeader::decode(bytes, offset)
        }) {
            Some(Ok(header)) => match header.block_type {
                BlockType::Data => Some((prefix + header.size, "data block")),
                BlockType::Descriptor => Some((HEADER_LEN + header.size, "descriptor block")),
                BlockType::End => Some((TRAILER_LEN, "trailer")),
            },
            // A header that is cut or does not decode: the parse of what is held says so.
            _ => None,
        };
        if let Some((needed, what)) = wanted
            && needed > MAX_STREAMED_BLOCK + prefix
        {
            let error = match self.stream_len() {
                Some(len) if offset + needed > len => Error::Truncated {
                    offset,
                    what,
                    needed,
                    available: len - offset,
                    complete_data_blocks,
                },
                _ => Error::Framing(robolog_framing::Error::new(
                    offset,
                    what,
                    robolog_framing::ErrorKind::LengthOverLimit {
                        length: needed,
                        limit: MAX_STREAMED_BLOCK + prefix,
                    },
                )),
            };
            return Ok(SourcedBlock {
                parsed: Err(error),
                bytes: &[],
                base: offset,
            });
        }
        let end = match wanted {
            Some((needed, _)) => self.fill(offset + needed).map_err(window_error)?,
            None => held,
        };
        let bytes = self.slice(offset, end);
        Ok(SourcedBlock {
            parsed: parse_block_in(bytes, offset, offset, complete_data_blocks),
            bytes,
            base: offset,
        })
    }

    fn len(&mut self) -> Result<u64, Error> {
        self.end().map_err(window_error)
    }
}

fn window_error(e: WindowError) -> Error {
    match e {
        WindowError::Io { offset, source } => Error::io(offset, source),
        WindowError::TooLarge {
            offset,
            length,
            limit,
        } => Error::Framing(robolog_framing::Error::new(
            offset,
            "block",
            robolog_framing::ErrorKind::LengthOverLimit { length, limit },
        )),
    }
}

/// Walks the blocks of `source` from the start, showing each to `visit` as it is read. Fails
/// when the input is not BDDF at all, when a read fails, or when `visit` does.
pub(crate) fn walk<S: BlockSource>(
    source: &mut S,
    mut visit: impl FnMut(Visit<'_>) -> Result<(), Error>,
) -> Result<Scan, Error> {
    let head = source.head(4)?;
    if head != START_MAGIC {
        return Err(Error::NotBddf {
            found: head.to_vec(),
        });
    }
    let mut scan = Scan {
        file_descriptor: None,
        series: BTreeMap::new(),
        blocks: Vec::new(),
        skipped: Vec::new(),
        trailer: None,
        stop: None,
        end: FILE_DESCRIPTOR_OFFSET,
    };
    let SourcedBlock {
        parsed,
        bytes,
        base,
    } = source.block(FILE_DESCRIPTOR_OFFSET, 0)?;
    match parsed.and_then(file_descriptor_of) {
        Ok((descriptor, checksum, located)) => {
            let bytes = within(bytes, base, FILE_DESCRIPTOR_OFFSET, located.end);
            visit(Visit::FileDescriptor(checksum, bytes))?;
            scan.file_descriptor = Some((descriptor, checksum, located.end));
            scan.end = located.end;
        }
        Err(e) => {
            scan.stop = Some(e);
            return Ok(scan);
        }
    }
    loop {
        let offset = scan.end;
        let SourcedBlock {
            parsed,
            bytes,
            base,
        } = source.block(offset, scan.blocks.len() as u64)?;
        let located = match parsed {
            Ok(located) => located,
            Err(e) => {
                scan.stop = Some(e);
                return Ok(scan);
            }
        };
        let block_bytes = within(bytes, base, offset, located.end);
        let len = located.end - offset;
        let skip = |reason| Skipped {
            offset,
            len,
            reason,
        };
        match located.block {
            ParsedBlock::Data {
                descriptor,
                payload,
            } => {
                let series_index = descriptor.series_index;
                if !scan.series.contains_key(&series_index) {
                    scan.skipped
                        .push(skip(SkipReason::UndeclaredSeries { series_index }));
                    visit(Visit::Skipped(block_bytes))?;
                } else {
                    // Only the time can be invalid; a block whose time cannot be represented
                    // ends the scan like any other unreadable block.
                    let block = match DataBlock::new(descriptor.clone(), Default::default(), offset)
                    {
                        Ok(block) => block,
                        Err(e) => {
                            scan.stop = Some(e);
                            return Ok(scan);
                        }
                    };
                    let scanned = ScannedBlock {
                        series_index,
                        timestamp_ns: block.timestamp_ns,
                        additional_indexes: block.additional_indexes,
                        offset,
                        payload_len: payload.len() as u64,
                    };
                    visit(Visit::Data {
                        block: &scanned,
                        descriptor: &descriptor,
                        payload: &bytes[payload],
                        bytes: block_bytes,
                    })?;
                    scan.blocks.push(scanned);
                }
            }
            ParsedBlock::Descriptor(block) => match block.descriptor {
                Some(Descriptor::SeriesDescriptor(descriptor)) => {
                    let series_index = descriptor.series_index;
                    match scan.series.entry(series_index) {
                        Entry::Occupied(_) => {
                            scan.skipped
                                .push(skip(SkipReason::DuplicateSeries { series_index }));
                            visit(Visit::Skipped(block_bytes))?;
                        }
                        Entry::Vacant(slot) => {
                            let series = slot.insert(ScannedSeries { descriptor, offset });
                            visit(Visit::Series(series, block_bytes))?;
                        }
                    }
                }
                Some(Descriptor::SeriesBlockIndex(_) | Descriptor::FileIndex(_)) => {
                    scan.skipped.push(skip(SkipReason::IndexBlock));
                    visit(Visit::Skipped(block_bytes))?;
                }
                Some(Descriptor::FileDescriptor(_)) | None => {
                    scan.skipped.push(skip(SkipReason::StrayDescriptor));
                    visit(Visit::Skipped(block_bytes))?;
                }
            },
            ParsedBlock::End {
                index_offset,
                digest,
            } => {
                visit(Visit::End(block_bytes))?;
                scan.trailer = Some(Trailer {
                    offset,
                    index_offset,
                    digest: Sha1Digest(digest),
                });
                scan.end = located.end;
                return Ok(scan);
            }
        }
        scan.end = located.end;
    }
}

/// The bytes `start..end` of a file, out of `bytes`, which hold it from `base` on.
fn within(bytes: &[u8], base: u64, start: u64, end: u64) -> &[u8] {
    let from = usize::try_from(start - base)
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    let to = usize::try_from(end - base)
        .unwrap_or(usize::MAX)
        .clamp(from, bytes.len());
    &bytes[from..to]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_bddf() {
        assert!(matches!(scan(b"BDD"), Err(Error::NotBddf { .. })));
        assert!(matches!(scan(b"XDDF...."), Err(Error::NotBddf { .. })));
    }

    #[test]
    fn magic_only_stops_at_the_file_descriptor() {
        let scan = scan(b"BDDF").unwrap();
        assert!(scan.file_descriptor.is_none());
        assert!(matches!(
            scan.stop,
            Some(Error::Truncated {
                offset: 4,
                what: "block header",
                ..
            })
        ));
    }
}
