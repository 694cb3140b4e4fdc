//! The indexed reader: opens a whole file (usually memory-mapped) through its index.

use std::collections::BTreeMap;
use std::ops::{Bound, RangeBounds};
use std::path::Path;

use robolog_framing::{Bytes, read_file};
use sha1::{Digest, Sha1};

use crate::block::{
    BlockType, DIGEST_LEN, DataBlock, END_MAGIC, HEADER_LEN, Located, ParsedBlock, START_MAGIC,
    TRAILER_LEN, descriptor_name, parse_block,
};
use crate::error::{Error, Sha1Digest};
use crate::file_descriptor::{Checksum, FILE_DESCRIPTOR_OFFSET, read_file_descriptor};
use crate::proto::descriptor_block::Descriptor;
use crate::proto::{FileFormatDescriptor, FileIndex, SeriesDescriptor};
use crate::scan::{Scan, Trailer, scan};
use crate::series::Series;
use crate::time::timestamp_to_nanos;

/// Options for [`BddfReader::open_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReaderOptions {
    /// Check the trailer's SHA-1 during whole-file iterations ([`BddfReader::blocks`],
    /// [`BddfReader::blocks_by_time`]); a mismatch is an `Err` item after the last block. On
    /// by default; files declaring no checksum are never checked.
    pub verify_checksum: bool,
    /// When the file has no trailer (cut, or still being written) or its index is damaged,
    /// build the index by walking the blocks instead of failing. On by default;
    /// [`BddfReader::index_source`] says which happened.
    pub scan_fallback: bool,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        Self {
            verify_checksum: true,
            scan_fallback: true,
        }
    }
}

/// Where the reader's index came from.
#[derive(Debug, Clone)]
pub enum IndexSource {
    /// The file's own index blocks.
    File,
    /// A walk over the blocks, because the file's index could not be used.
    Scan {
        /// Why the file's index could not be used.
        reason: Error,
        /// Why the walk stopped before the end of the file (a truncation, or the first
        /// unreadable block); `None` when it reached a trailer.
        stopped: Option<Error>,
    },
}

/// One data block in a series' index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// Block time in ns.
    pub timestamp_ns: i64,
    /// File offset of the block header.
    pub offset: u64,
    /// The block's additional index values.
    pub additional_indexes: Vec<i64>,
}

#[derive(Debug, Clone)]
struct SeriesEntries {
    entries: Vec<IndexEntry>,
    time_sorted: bool,
}

impl SeriesEntries {
    fn new(entries: Vec<IndexEntry>) -> Self {
        let time_sorted = entries
            .windows(2)
            .all(|w| w[0].timestamp_ns <= w[1].timestamp_ns);
        Self {
            entries,
            time_sorted,
        }
    }

    /// Positions of the entries whose time is in `range`.
    fn positions_in(&self, range: &(Bound<i64>, Bound<i64>)) -> Vec<usize> {
        if self.time_sorted {
            let start = self.entries.partition_point(|e| match range.0 {
                Bound::Included(t) => e.timestamp_ns < t,
                Bound::Excluded(t) => e.timestamp_ns <= t,
                Bound::Unbounded => false,
            });
            let end = self.entries.partition_point(|e| match range.1 {
                Bound::Included(t) => e.timestamp_ns <= t,
                Bound::Excluded(t) => e.timestamp_ns < t,
                Bound::Unbounded => true,
            });
            (start..end.max(start)).collect()
        } else {
            (0..self.entries.len())
                .filter(|&i| range.contains(&self.entries[i].timestamp_ns))
                .collect()
        }
    }
}

/// Reads a BDDF file held in memory (usually memory-mapped) through its index.
///
/// Opening reads the trailer, the file index and each series' block index and descriptor, so
/// [`BddfReader::series`] knows every series' counts and time span without touching the data.
/// Blocks of one series are then read by position or time range directly. Payloads are
/// zero-copy slices of the input.
///
/// A file without a usable index (cut, still being written, damaged) is walked instead, unless
/// [`ReaderOptions::scan_fallback`] is off; see [`BddfReader::index_source`].
#[derive(Debug, Clone)]
pub struct BddfReader {
    data: Bytes,
    file_descriptor: FileFormatDescriptor,
    checksum: Checksum,
    series: Vec<Series>,
    entries: Vec<SeriesEntries>,
    trailer: Option<Trailer>,
    source: IndexSource,
    options: ReaderOptions,
}

impl BddfReader {
    /// Opens a file given as bytes, with default options.
    pub fn open(data: Bytes) -> Result<Self, Error> {
        Self::open_with(data, ReaderOptions::default())
    }

    /// Reads a whole file into memory and opens it.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let data = read_file(path).map_err(|e| Error::io(0, e))?;
        Self::open(data)
    }

    /// Opens a file given as bytes.
    pub fn open_with(data: Bytes, options: ReaderOptions) -> Result<Self, Error> {
        if data.get(..4) != Some(&START_MAGIC[..]) {
            return Err(Error::NotBddf {
                found: data.iter().take(4).copied().collect(),
            });
        }
        match Self::open_indexed(&data, options) {
            Ok(reader) => Ok(reader),
            Err(reason) if options.scan_fallback && can_scan_instead(&reason) => {
                Self::open_scanned(data, reason, options)
            }
            Err(e) => Err(e),
        }
    }

    fn open_indexed(data: &Bytes, options: ReaderOptions) -> Result<Self, Error> {
        let file: &[u8] = data;
        let file_len = file.len() as u64;
        if file_len < 4 + TRAILER_LEN || file[file.len() - 4..] != END_MAGIC {
            return Err(Error::NoTrailer { file_len });
        }
        let trailer = read_trailer(file)?;
        let trailer_offset = trailer.offset;
        let index_offset = trailer.index_offset;
        if index_offset < FILE_DESCRIPTOR_OFFSET || index_offset >= trailer_offset {
            return Err(Error::BadIndexOffset {
                index_offset,
                file_len,
            });
        }
        // Everything the index points at lies before the file index block.
        let body = &file[..trailer_offset as usize];
        let file_index = read_file_index(body, index_offset)?;
        let (file_descriptor, checksum, _) = read_file_descriptor(body)?;

        let count = file_index.series_identifiers.len();
        if file_index.series_block_index_offsets.len() != count {
            return Err(Error::BadIndex {
                offset: index_offset,
                problem: format!(
                    "{count} series identifiers but {} block index offsets",
                    file_index.series_block_index_offsets.len()
                ),
            });
        }
        let mut series = Vec::with_capacity(count);
        let mut entries = Vec::with_capacity(count);
        for (series_index, &offset) in (0u32..).zip(&file_index.series_block_index_offsets) {
            let (s, e) = read_series(body, series_index, offset, index_offset)?;
            series.push(s);
            entries.push(e);
        }
        Ok(Self {
            data: data.clone(),
            file_descriptor,
            checksum,
            series,
            entries,
            trailer: Some(trailer),
            source: IndexSource::File,
            options,
        })
    }

    fn open_scanned(data: Bytes, reason: Error, options: ReaderOptions) -> Result<Self, Error> {
        let Scan {
            file_descriptor,
            series: scanned_series,
            blocks,
            trailer,
            stop,
            ..
        } = scan(&data)?;
        // A walk stopped by damage does not reach the trailer, but the trailer may be intact
        // and its checksum then tells whether the file was damaged after it was written.
        let ends_with_magic = data.len() as u64 >= 4 + TRAILER_LEN && data.ends_with(&END_MAGIC);
        let trailer =
            trailer.or_else(|| ends_with_magic.then(|| read_trailer(&data).ok()).flatten());
        let Some((file_descriptor, checksum, _)) = file_descriptor else {
            // Without a readable file descriptor there is nothing to read: report why.
            return Err(stop.unwrap_or(reason));
        };
        let mut positions = BTreeMap::new();
        let mut series = Vec::with_capacity(scanned_series.len());
        for (position, (index, s)) in scanned_series.into_iter().enumerate() {
            positions.insert(index, position);
            series.push(Series::new(s.descriptor, s.offset));
        }
        let mut entries = vec![Vec::new(); series.len()];
        for block in blocks {
            if let Some(&position) = positions.get(&block.series_index) {
                series[position]
                    .stats_mut()
                    .add(block.timestamp_ns, block.payload_len);
                entries[position].push(IndexEntry {
                    timestamp_ns: block.timestamp_ns,
                    offset: block.offset,
                    additional_indexes: block.additional_indexes,
                });
            }
        }
        Ok(Self {
            data,
            file_descriptor,
            checksum,
            series,
            entries: entries.into_iter().map(SeriesEntries::new).collect(),
            trailer,
            source: IndexSource::Scan {
                reason,
                stopped: stop,
            },
            options,
        })
    }

    /// The whole input.
    pub fn data(&self) -> &Bytes {
        &self.data
    }

    /// The file descriptor (version, checksum kind, annotations).
    pub fn file_descriptor(&self) -> &FileFormatDescriptor {
        &self.file_descriptor
    }

    /// File annotations.
    pub fn annotations(&self) -> &BTreeMap<String, String> {
        &self.file_descriptor.annotations
    }

    /// Whether the index came from the file or from a walk over its blocks.
    pub fn index_source(&self) -> &IndexSource {
        &self.source
    }

    /// The trailer, when the file has one.
    pub fn trailer(&self) -> Option<&Trailer> {
        self.trailer.as_ref()
    }

    /// Every series, by series index.
    pub fn series(&self) -> &[Series] {
        &self.series
    }

    /// The series with this index.
    pub fn series_by_index(&self, series_index: u32) -> Option<&Series> {
        self.position(series_index).map(|p| &self.series[p])
    }

    fn position(&self, series_index: u32) -> Option<usize> {
        self.series
            .binary_search_by_key(&series_index, Series::index)
            .ok()
    }

    fn entries_of(&self, series_index: u32) -> Result<&SeriesEntries, Error> {
        self.position(series_index)
            .map(|p| &self.entries[p])
            .ok_or(Error::NoSuchSeries(series_index))
    }

    /// The index entries (time, offset, additional indexes) of a series' data blocks, in the
    /// order they were written.
    pub fn block_entries(&self, series_index: u32) -> Result<&[IndexEntry], Error> {
        Ok(&self.entries_of(series_index)?.entries)
    }

    /// Reads data block `position` (0-based, in write order) of a series.
    pub fn read_block(&self, series_index: u32, position: usize) -> Result<DataBlock, Error> {
        let entries = self.entries_of(series_index)?;
        let entry = entries.entries.get(position).ok_or(Error::NoSuchBlock {
            series_index,
            position,
            block_count: entries.entries.len(),
        })?;
        self.read_block_at(entry.offset, series_index)
            .map(|(block, _)| block)
    }

    /// Reads the data block whose header is at `offset`, which the index says belongs to
    /// `series_index`; also returns the offset just past it.
    fn read_block_at(&self, offset: u64, series_index: u32) -> Result<(DataBlock, u64), Error> {
        let located = parse_block(&self.data, offset, 0)?;
        let ParsedBlock::Data {
            descriptor,
            payload,
        } = located.block
        else {
            return Err(Error::BadIndex {
                offset,
                problem: format!(
                    "the index of series {series_index} points at a {}, not a data block",
                    block_name(&located.block)
                ),
            });
        };
        if descriptor.series_index != series_index {
            return Err(Error::BadIndex {
                offset,
                problem: format!(
                    "the index of series {series_index} points at a block of series {}",
                    descriptor.series_index
                ),
            });
        }
        let block = DataBlock::new(descriptor, self.data.slice(payload), offset)?;
        Ok((block, located.end))
    }

    /// The data blocks of one series whose time is in `time_range` (ns; `..` for all), in the
    /// order they were written. Uses the index: blocks outside the range are never touched.
    ///
    /// For POD series the block time is that of its first sample, so a block that starts
    /// before the range but holds samples inside it is not included.
    pub fn series_blocks(
        &self,
        series_index: u32,
        time_range: impl RangeBounds<i64>,
    ) -> Result<Blocks<'_>, Error> {
        let entries = self.entries_of(series_index)?;
        let range = (
            time_range.start_bound().cloned(),
            time_range.end_bound().cloned(),
        );
        let order = entries
            .positions_in(&range)
            .into_iter()
            .map(|p| (entries.entries[p].offset, series_index))
            .collect();
        Ok(Blocks::new(self, order, Verify::No, false))
    }

    /// Every data block in file order.
    ///
    /// Unless [`ReaderOptions::verify_checksum`] is off, the file's SHA-1 is checked along the
    /// way (each block is hashed right after it is read) and a mismatch follows the last
    /// block. For a file read by a walk (see [`BddfReader::index_source`]), why the walk
    /// stopped comes last, so a cut file never reads as a complete one.
    pub fn blocks(&self) -> Blocks<'_> {
        let mut order: Vec<(u64, u32)> = self.all_entries().map(|(e, s)| (e.offset, s)).collect();
        order.sort_unstable();
        Blocks::new(self, order, self.whole_file_verification(true), true)
    }

    /// Every data block in time order (ties in file order), ending like [`BddfReader::blocks`].
    pub fn blocks_by_time(&self) -> Blocks<'_> {
        let mut order: Vec<(i64, u64, u32)> = self
            .all_entries()
            .map(|(e, s)| (e.timestamp_ns, e.offset, s))
            .collect();
        order.sort_unstable();
        let order = order.into_iter().map(|(_, o, s)| (o, s)).collect();
        Blocks::new(self, order, self.whole_file_verification(false), true)
    }

    fn all_entries(&self) -> impl Iterator<Item = (&IndexEntry, u32)> {
        self.series
            .iter()
            .zip(&self.entries)
            .flat_map(|(s, e)| e.entries.iter().map(move |entry| (entry, s.index())))
    }

    fn whole_file_verification(&self, in_file_order: bool) -> Verify {
        match (&self.trailer, self.checksum) {
            (Some(trailer), Checksum::Sha1) if self.options.verify_checksum => {
                if in_file_order {
                    Verify::AlongTheWay {
                        sha: Sha1::new(),
                        hashed_until: 0,
                        digest: trailer.digest,
                        until: trailer.offset + HEADER_LEN + 8,
                    }
                } else {
                    Verify::AtTheEnd
                }
            }
            _ => Verify::No,
        }
    }

    /// Checks the trailer's SHA-1 against the file content now. `Ok` for files that declare no
    /// checksum; [`Error::NoTrailer`] when there is no trailer to check against.
    pub fn verify_checksum(&self) -> Result<(), Error> {
        let Some(trailer) = &self.trailer else {
            return Err(Error::NoTrailer {
                file_len: self.data.len() as u64,
            });
        };
        if self.checksum == Checksum::None {
            return Ok(());
        }
        let covered = &self.data[..(trailer.offset + HEADER_LEN + 8) as usize];
        check_digest(Sha1::digest(covered).as_slice(), trailer.digest)
    }

    /// Why a walk over the blocks stopped early, for files read without their index.
    fn stop_error(&self) -> Option<Error> {
        match &self.source {
            IndexSource::Scan { stopped, .. } => stopped.clone(),
            IndexSource::File => None,
        }
    }
}

/// Reads the trailer at the end of a file that ends with the end magic.
fn read_trailer(file: &[u8]) -> Result<Trailer, Error> {
    let offset = (file.len() as u64).saturating_sub(TRAILER_LEN);
    match parse_block(file, offset, 0)? {
        Located {
            block:
                ParsedBlock::End {
                    index_offset,
                    digest,
                },
            ..
        } => Ok(Trailer {
            offset,
            index_offset,
            digest: Sha1Digest(digest),
        }),
        other => Err(Error::UnexpectedBlock {
            offset,
            expected: "end block",
            found: block_name(&other.block),
        }),
    }
}

/// Errors after which walking the blocks may still give a useful index: the trailer or index
/// is missing or damaged. Errors about the file as a whole (not BDDF, unsupported version or
/// checksum) stay errors.
fn can_scan_instead(error: &Error) -> bool {
    !matches!(
        error,
        Error::NotBddf { .. }
            | Error::UnsupportedVersion { .. }
            | Error::UnsupportedChecksum { .. }
    )
}

fn block_name(block: &ParsedBlock) -> &'static str {
    match block {
        ParsedBlock::Data { .. } => BlockType::Data.name(),
        ParsedBlock::Descriptor(d) => descriptor_name(d),
        ParsedBlock::End { .. } => BlockType::End.name(),
    }
}

fn check_digest(actual: &[u8], expected: Sha1Digest) -> Result<(), Error> {
    let mut digest = [0u8; DIGEST_LEN];
    digest.copy_from_slice(actual);
    if digest == expected.0 {
        Ok(())
    } else {
        Err(Error::ChecksumMismatch {
            expected,
            actual: Sha1Digest(digest),
        })
    }
}

/// Reads the file index block at `offset`; an empty descriptor block there is an empty index
/// (some writers produce one for files without series).
fn read_file_index(body: &[u8], offset: u64) -> Result<FileIndex, Error> {
    let located = parse_block(body, offset, 0).map_err(|e| as_index_error(e, offset))?;
    match located.block {
        ParsedBlock::Descriptor(block) => match block.descriptor {
            Some(Descriptor::FileIndex(index)) => Ok(index),
            None => Ok(FileIndex::default()),
            Some(other) => Err(Error::UnexpectedBlock {
                offset,
                expected: "file index",
                found: descriptor_name(&crate::proto::DescriptorBlock {
                    descriptor: Some(other),
                }),
            }),
        },
        other => Err(Error::UnexpectedBlock {
            offset,
            expected: "file index",
            found: block_name(&other),
        }),
    }
}

/// A block the index points to that runs past its bounds is a broken index, not a cut file.
fn as_index_error(error: Error, offset: u64) -> Error {
    match error {
        Error::Truncated { what, .. } => Error::BadIndex {
            offset,
            problem: format!("the {what} the index points to runs past the index"),
        },
        other => other,
    }
}

/// Reads the block index and the descriptor of series `series_index`.
fn read_series(
    body: &[u8],
    series_index: u32,
    offset: u64,
    index_offset: u64,
) -> Result<(Series, SeriesEntries), Error> {
    let bad = |problem: String| Error::BadIndex { offset, problem };
    if offset < FILE_DESCRIPTOR_OFFSET || offset >= index_offset {
        return Err(bad(format!(
            "the block index of series {series_index} is said to be at {offset}, outside the file"
        )));
    }
    let located = parse_block(body, offset, 0).map_err(|e| as_index_error(e, offset))?;
    let block_index = match located.block {
        ParsedBlock::Descriptor(crate::proto::DescriptorBlock {
            descriptor: Some(Descriptor::SeriesBlockIndex(index)),
        }) => index,
        other => {
            return Err(Error::UnexpectedBlock {
                offset,
                expected: "series block index",
                found: block_name(&other),
            });
        }
    };
    if block_index.series_index != series_index {
        return Err(bad(format!(
            "the block index of series {series_index} is for series {}",
            block_index.series_index
        )));
    }
    let descriptor_offset = block_index.descriptor_file_offset;
    let descriptor = read_series_descriptor(body, descriptor_offset, index_offset)?;
    if descriptor.series_index != series_index {
        return Err(bad(format!(
            "the descriptor of series {series_index} is for series {}",
            descriptor.series_index
        )));
    }
    let mut series = Series::new(descriptor, descriptor_offset).with_block_index_offset(offset);
    let mut entries = Vec::with_capacity(block_index.block_entries.len());
    for entry in block_index.block_entries {
        if entry.file_offset < FILE_DESCRIPTOR_OFFSET || entry.file_offset >= index_offset {
            return Err(bad(format!(
                "a block of series {series_index} is said to be at {}, outside the data",
                entry.file_offset
            )));
        }
        let timestamp_ns = match &entry.timestamp {
            None => 0,
            Some(t) => timestamp_to_nanos(t).ok_or(Error::TimestampOutOfRange {
                offset,
                seconds: t.seconds,
                nanos: t.nanos,
            })?,
        };
        series.stats_mut().add(timestamp_ns, 0);
        entries.push(IndexEntry {
            timestamp_ns,
            offset: entry.file_offset,
            additional_indexes: entry.additional_indexes,
        });
    }
    series.stats_mut().total_bytes = block_index.total_bytes;
    Ok((series, SeriesEntries::new(entries)))
}

fn read_series_descriptor(
    body: &[u8],
    offset: u64,
    index_offset: u64,
) -> Result<SeriesDescriptor, Error> {
    if offset < FILE_DESCRIPTOR_OFFSET || offset >= index_offset {
        return Err(Error::BadIndex {
            offset,
            problem: format!("a series descriptor is said to be at {offset}, outside the file"),
        });
    }
    let located = parse_block(body, offset, 0).map_err(|e| as_index_error(e, offset))?;
    match located.block {
        ParsedBlock::Descriptor(crate::proto::DescriptorBlock {
            descriptor: Some(Descriptor::SeriesDescriptor(descriptor)),
        }) => Ok(descriptor),
        other => Err(Error::UnexpectedBlock {
            offset,
            expected: "series descriptor",
            found: block_name(&other),
        }),
    }
}

#[derive(Debug)]
enum Verify {
    No,
    /// Hash the file in step with a file-order walk: each block is hashed right after it was
    /// read, while it is still in cache.
    AlongTheWay {
        sha: Sha1,
        hashed_until: u64,
        digest: Sha1Digest,
        /// End of the hashed range: the end header and index offset are covered.
        until: u64,
    },
    /// Hash the whole file once the walk is over.
    AtTheEnd,
}

/// An iterator over data blocks of a [`BddfReader`]. Items are independent: an unreadable
/// block is an `Err` item and the iteration goes on with the next one.
#[derive(Debug)]
pub struct Blocks<'r> {
    reader: &'r BddfReader,
    order: std::vec::IntoIter<(u64, u32)>,
    verify: Verify,
    finished: bool,
    report_stop: bool,
    final_errors: std::vec::IntoIter<Error>,
}

impl<'r> Blocks<'r> {
    fn new(
        reader: &'r BddfReader,
        order: Vec<(u64, u32)>,
        verify: Verify,
        whole_file: bool,
    ) -> Self {
        Self {
            reader,
            order: order.into_iter(),
            verify,
            finished: false,
            report_stop: whole_file && matches!(reader.source, IndexSource::Scan { .. }),
            final_errors: Vec::new().into_iter(),
        }
    }

    /// Blocks not yet returned (not counting final checksum or truncation errors).
    pub fn remaining(&self) -> usize {
        self.order.len()
    }

    /// The items after the last block: a checksum mismatch, then why a walk stopped early.
    fn final_errors(&mut self) -> Vec<Error> {
        let data = &self.reader.data;
        let checksum = match std::mem::replace(&mut self.verify, Verify::No) {
            Verify::No => Ok(()),
            Verify::AlongTheWay {
                mut sha,
                hashed_until,
                digest,
                until,
            } => {
                sha.update(&data[hashed_until as usize..until as usize]);
                check_digest(sha.finalize().as_slice(), digest)
            }
            Verify::AtTheEnd => self.reader.verify_checksum(),
        };
        let stop = if self.report_stop {
            self.reader.stop_error()
        } else {
            None
        };
        checksum.err().into_iter().chain(stop).collect()
    }
}

impl Iterator for Blocks<'_> {
    type Item = Result<DataBlock, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return self.final_errors.next().map(Err);
        }
        let Some((offset, series_index)) = self.order.next() else {
            self.finished = true;
            self.final_errors = self.final_errors().into_iter();
            return self.final_errors.next().map(Err);
        };
        let result = self.reader.read_block_at(offset, series_index);
        if let (
            Ok((_, end)),
            Verify::AlongTheWay {
                sha,
                hashed_until,
                until,
                ..
            },
        ) = (&result, &mut self.verify)
        {
            // Blocks come in file order, so this hashes the file front to back, each block
            // right after it was read. A damaged file can have a block that runs into the
            // trailer: the hash still covers exactly [0, until).
            let end = (*end).min(*until);
            if end > *hashed_until {
                sha.update(&self.reader.data[*hashed_until as usize..end as usize]);
                *hashed_until = end;
            }
        }
        Some(result.map(|(block, _)| block))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.order.len() + self.final_errors.len();
        (len, Some(len + 2))
    }
}
