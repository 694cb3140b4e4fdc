//! A linear walk over the blocks of a file that may be cut or have a damaged index: everything
//! up to the first incomplete or unreadable block, which is what the indexed reader falls back
//! to and what recovery rebuilds a file from.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::fmt;

use robolog_framing::{Problem, ProblemKind};

use crate::block::{DataBlock, ParsedBlock, START_MAGIC, parse_block};
use crate::error::{Error, Sha1Digest};
use crate::file_descriptor::{Checksum, FILE_DESCRIPTOR_OFFSET, read_file_descriptor};
use crate::proto::descriptor_block::Descriptor;
use crate::proto::{FileFormatDescriptor, SeriesDescriptor};

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
    pub(crate) end: u64,
    pub(crate) payload_len: u64,
}

/// A series descriptor seen by the scan.
#[derive(Debug, Clone)]
pub(crate) struct ScannedSeries {
    pub(crate) descriptor: SeriesDescriptor,
    pub(crate) offset: u64,
    pub(crate) end: u64,
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
    if file.get(..4) != Some(&START_MAGIC[..]) {
        return Err(Error::NotBddf {
            found: file.iter().take(4).copied().collect(),
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
    match read_file_descriptor(file) {
        Ok((descriptor, checksum, located)) => {
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
        let located = match parse_block(file, offset, scan.blocks.len() as u64) {
            Ok(located) => located,
            Err(e) => {
                scan.stop = Some(e);
                return Ok(scan);
            }
        };
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
                } else {
                    // Only the time can be invalid; a block whose time cannot be represented
                    // ends the scan like any other unreadable block.
                    let block = match DataBlock::new(descriptor, Default::default(), offset) {
                        Ok(block) => block,
                        Err(e) => {
                            scan.stop = Some(e);
                            return Ok(scan);
                        }
                    };
                    scan.blocks.push(ScannedBlock {
                        series_index,
                        timestamp_ns: block.timestamp_ns,
                        additional_indexes: block.additional_indexes,
                        offset,
                        end: located.end,
                        payload_len: payload.len() as u64,
                    });
                }
            }
            ParsedBlock::Descriptor(block) => match block.descriptor {
                Some(Descriptor::SeriesDescriptor(descriptor)) => {
                    let series_index = descriptor.series_index;
                    match scan.series.entry(series_index) {
                        Entry::Occupied(_) => scan
                            .skipped
                            .push(skip(SkipReason::DuplicateSeries { series_index })),
                        Entry::Vacant(slot) => {
                            slot.insert(ScannedSeries {
                                descriptor,
                                offset,
                                end: located.end,
                            });
                        }
                    }
                }
                Some(Descriptor::SeriesBlockIndex(_) | Descriptor::FileIndex(_)) => {
                    scan.skipped.push(skip(SkipReason::IndexBlock));
                }
                Some(Descriptor::FileDescriptor(_)) | None => {
                    scan.skipped.push(skip(SkipReason::StrayDescriptor));
                }
            },
            ParsedBlock::End {
                index_offset,
                digest,
            } => {
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
