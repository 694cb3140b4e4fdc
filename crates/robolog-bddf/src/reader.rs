//! The indexed reader: opens a file through its index, read by position (a file, a buffer, a
//! memory map, a remote object) so that only the index and the blocks asked for are read.

use std::collections::{BTreeMap, HashMap};
use std::ops::{Bound, Range, RangeBounds};
use std::path::Path;

use robolog_framing::{Bytes, read_file};
use robolog_query::Input;
use sha1::{Digest, Sha1};

use crate::block::{
    BlockType, DESC_LEN_LEN, DIGEST_LEN, DataBlock, END_MAGIC, HEADER_LEN, Located, ParsedBlock,
    START_MAGIC, TRAILER_LEN, descriptor_name, parse_block, parse_block_in,
};
use crate::error::{Error, Sha1Digest};
use crate::file_descriptor::{Checksum, FILE_DESCRIPTOR_OFFSET, file_descriptor_of};
use crate::proto::descriptor_block::Descriptor;
use crate::proto::{FileFormatDescriptor, FileIndex, SeriesBlockIndex, SeriesDescriptor};
use crate::scan::{Scan, Trailer, scan};
use crate::series::Series;
use crate::time::timestamp_to_nanos;

/// How [`BddfReader::open_with`] and [`BddfReader::open_input`] read a file.
///
/// ```
/// use robolog_bddf::ReadOptions;
/// let options = ReadOptions::new().strict(true).verify_checksum(false);
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOptions {
    verify_checksum: bool,
    strict: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl ReadOptions {
    /// The defaults: the checksum is checked, and a file whose index cannot be used is read
    /// by walking its blocks.
    pub const fn new() -> Self {
        Self {
            verify_checksum: true,
            strict: false,
        }
    }

    /// Check the trailer's SHA-1 during whole-file iterations ([`BddfReader::blocks`],
    /// [`BddfReader::blocks_by_time`]); a mismatch is an `Err` item after the last block. On
    /// by default; files declaring no checksum are never checked.
    pub const fn verify_checksum(mut self, on: bool) -> Self {
        self.verify_checksum = on;
        self
    }

    /// In strict mode, a file without a trailer (cut, or still being written) or with a
    /// damaged index is an error. Off by default: the index is then built by walking the
    /// blocks, and [`BddfReader::index_source`] says so.
    pub const fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
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

/// Reads a BDDF file through its index.
///
/// Opening reads the trailer, the file index and each series' block index and descriptor, so
/// [`BddfReader::series`] knows every series' counts and time span without touching the data.
/// Blocks of one series are then read by position or time range directly. From an input in
/// memory, payloads are zero-copy slices of it; from one read by position
/// ([`BddfReader::open_input`]: a file, a remote object), opening reads only those index parts
/// (the neighbouring ones together) and each block is one read.
///
/// A file without a usable index (cut, still being written, damaged) is walked instead, unless
/// [`ReadOptions::strict`] is on; see [`BddfReader::index_source`].
#[derive(Debug, Clone)]
pub struct BddfReader {
    input: Input,
    /// For an input read by position: the sorted offsets of every block the index names. A
    /// block ends by the next one, which bounds the read of a block to one request.
    known: Vec<u64>,
    file_descriptor: FileFormatDescriptor,
    checksum: Checksum,
    series: Vec<Series>,
    entries: Vec<SeriesEntries>,
    trailer: Option<Trailer>,
    source: IndexSource,
    options: ReadOptions,
}

impl BddfReader {
    /// Opens a file given as bytes, with default options.
    pub fn open(data: Bytes) -> Result<Self, Error> {
        Self::open_with(data, ReadOptions::default())
    }

    /// Reads a whole file into memory and opens it.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let data = read_file(path).map_err(|e| Error::io(0, e))?;
        Self::open(data)
    }

    /// Opens a file given as bytes.
    pub fn open_with(data: Bytes, options: ReadOptions) -> Result<Self, Error> {
        Self::open_input(Input::from(data), options)
    }

    /// Opens a file read by position: a file ([`Input::open`]), a buffer, a memory map, a
    /// remote object. Opening reads the trailer, the file index and the parts it points at;
    /// blocks are read when asked for. A file without a usable index is read whole and walked
    /// (see [`ReadOptions::strict`]).
    ///
    /// ```
    /// use robolog_bddf::{BddfReader, BddfWriter, Input, ReadOptions, series_identifier};
    ///
    /// let mut writer = BddfWriter::new(Vec::new())?;
    /// let log = writer.add_message_series(
    ///     series_identifier("bosdyn:channel", [("bosdyn:channel", "log")]),
    ///     Default::default(),
    ///     Default::default(),
    /// )?;
    /// writer.write_message(log, 1_000, b"started")?;
    /// let file = tempfile::NamedTempFile::new()?;
    /// std::fs::write(file.path(), writer.finish()?)?;
    ///
    /// let reader = BddfReader::open_input(Input::open(file.path())?, ReadOptions::default())?;
    /// assert_eq!(&reader.read_block(log, 0)?.data[..], b"started");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_input(input: Input, options: ReadOptions) -> Result<Self, Error> {
        let magic = read(&input, 0..input.len().min(4))?;
        if magic[..] != START_MAGIC[..] {
            return Err(Error::NotBddf {
                found: magic.to_vec(),
            });
        }
        match Self::open_indexed(&input, options) {
            Ok(reader) => Ok(reader),
            Err(reason) if !options.strict && can_scan_instead(&reason) => {
                // A walk reads every block: the whole file, read once.
                let data = match input.in_memory() {
                    Some(data) => data.clone(),
                    None => read(&input, 0..input.len())?,
                };
                Self::open_scanned(data, reason, options)
            }
            Err(e) => Err(e),
        }
    }

    fn open_indexed(input: &Input, options: ReadOptions) -> Result<Self, Error> {
        let file_len = input.len();
        if file_len < 4 + TRAILER_LEN {
            return Err(Error::NoTrailer { file_len });
        }
        let tail = read(input, file_len - TRAILER_LEN..file_len)?;
        if !tail.ends_with(&END_MAGIC) {
            return Err(Error::NoTrailer { file_len });
        }
        let trailer = read_trailer(&tail, file_len - TRAILER_LEN)?;
        let trailer_offset = trailer.offset;
        let index_offset = trailer.index_offset;
        if index_offset < FILE_DESCRIPTOR_OFFSET || index_offset >= trailer_offset {
            return Err(Error::BadIndexOffset {
                index_offset,
                file_len,
            });
        }
        // Everything the index points at lies before the trailer.
        let limit = trailer_offset;
        let file_index = read_file_index(input, index_offset, limit)?;
        let (file_descriptor, checksum, _) = file_descriptor_of(
            parse_at(
                input,
                FILE_DESCRIPTOR_OFFSET,
                FILE_DESCRIPTOR_OFFSET + FIRST_READ,
                limit,
                None,
            )?
            .1,
        )?;

        let count = file_index.series_identifiers.len();
        let offsets = &file_index.series_block_index_offsets;
        if offsets.len() != count {
            return Err(Error::BadIndex {
                offset: index_offset,
                problem: format!(
                    "{count} series identifiers but {} block index offsets",
                    offsets.len()
                ),
            });
        }
        let positional = input.in_memory().is_none();
        let in_body = |offset: &u64| (FILE_DESCRIPTOR_OFFSET..index_offset).contains(offset);
        // Read by position, the block indexes (written together before the file index) are
        // read together, then the series descriptors (written where each series began).
        let mut known: Vec<u64> = Vec::new();
        if positional {
            known.extend(offsets.iter().copied().filter(in_body));
            known.extend([index_offset, trailer_offset]);
            known.sort_unstable();
            known.dedup();
        }
        let ahead = read_ahead(
            input,
            offsets.iter().copied().filter(in_body),
            &known,
            limit,
        )?;
        let parts = IndexParts {
            input,
            ahead: &ahead,
            known: &known,
            limit,
        };
        let block_indexes: Vec<Result<SeriesBlockIndex, Error>> = (0u32..)
            .zip(offsets)
            .map(|(series_index, &offset)| {
                read_block_index(&parts, series_index, offset, index_offset)
            })
            .collect();
        let descriptor_offsets = block_indexes
            .iter()
            .flatten()
            .map(|b| b.descriptor_file_offset)
            .filter(in_body);
        if positional {
            known.extend(descriptor_offsets.clone());
            known.extend(
                block_indexes
                    .iter()
                    .flatten()
                    .flat_map(|b| b.block_entries.iter().map(|e| e.file_offset))
                    .filter(in_body),
            );
            known.sort_unstable();
            known.dedup();
        }
        let ahead = read_ahead(input, descriptor_offsets, &known, limit)?;
        let parts = IndexParts {
            input,
            ahead: &ahead,
            known: &known,
            limit,
        };

        let mut series = Vec::with_capacity(count);
        let mut entries = Vec::with_capacity(count);
        for ((series_index, &offset), block_index) in (0u32..).zip(offsets).zip(block_indexes) {
            let descriptor = block_index.and_then(|block_index| {
                let descriptor_offset = block_index.descriptor_file_offset;
                let descriptor = read_series_descriptor(&parts, descriptor_offset, index_offset)?;
                Ok((block_index, descriptor))
            });
            let (block_index, descriptor) = descriptor?;
            let (s, e) = series_of(series_index, offset, index_offset, block_index, descriptor)?;
            series.push(s);
            entries.push(e);
        }
        Ok(Self {
            input: input.clone(),
            known,
            file_descriptor,
            checksum,
            series,
            entries,
            trailer: Some(trailer),
            source: IndexSource::File,
            options,
        })
    }

    fn open_scanned(data: Bytes, reason: Error, options: ReadOptions) -> Result<Self, Error> {
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
        let trailer = trailer.or_else(|| {
            ends_with_magic
                .then(|| read_trailer(&data, 0).ok())
                .flatten()
        });
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
            input: Input::from(data),
            known: Vec::new(),
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

    /// The input the reader reads from (for a file read by a walk over its blocks, the whole
    /// file in memory).
    pub fn input(&self) -> &Input {
        &self.input
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
    /// `series_index`; also returns its bytes, header included (a slice of what was read).
    fn read_block_at(&self, offset: u64, series_index: u32) -> Result<(DataBlock, Bytes), Error> {
        let limit = self.input.len();
        // Where the window starts: the whole input in memory, else the block.
        let base = if self.input.in_memory().is_some() {
            0
        } else {
            offset
        };
        let (window, located) = parse_at(
            &self.input,
            offset,
            bound(&self.known, offset, limit),
            limit,
            None,
        )?;
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
        let block = DataBlock::new(descriptor, window.slice(payload), offset)?;
        let raw = window.slice((offset - base) as usize..(located.end - base) as usize);
        Ok((block, raw))
    }

    /// Says that these data blocks (series index, position in the series) are about to be
    /// read, in this order: an input read from a remote object fetches them ahead, neighbours
    /// by one request (see [`Input::prefetch`]). Nothing for an input in memory; a hint only.
    pub fn prefetch_blocks(&self, blocks: impl IntoIterator<Item = (u32, usize)>) {
        if self.input.in_memory().is_some() {
            return;
        }
        let offsets: Vec<u64> = blocks
            .into_iter()
            .filter_map(|(series_index, position)| {
                Some(
                    self.entries_of(series_index)
                        .ok()?
                        .entries
                        .get(position)?
                        .offset,
                )
            })
            .collect();
        self.prefetch_offsets(offsets);
    }

    /// Announces the reads of the blocks at `offsets`, in this order (nothing for an input in
    /// memory).
    fn prefetch_offsets(&self, offsets: impl IntoIterator<Item = u64>) {
        if self.input.in_memory().is_some() {
            return;
        }
        let limit = self.input.len();
        let ranges: Vec<Range<u64>> = offsets
            .into_iter()
            .map(|offset| offset..read_end(offset, bound(&self.known, offset, limit), limit))
            .collect();
        self.input.prefetch(&ranges);
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
    /// Unless [`ReadOptions::verify_checksum`] is off, the file's SHA-1 is checked along the
    /// way (each block is hashed right after it is read) and a mismatch follows the last
    /// block. For a file read by a walk (see [`BddfReader::index_source`]), why the walk
    /// stopped comes last, so a cut file never reads as a complete one.
    pub fn blocks(&self) -> Blocks<'_> {
        let mut order: Vec<(u64, u32)> = self.all_entries().map(|(e, s)| (e.offset, s)).collect();
        order.sort_unstable();
        // Read by position (a remote object), the file streams in, fetched ahead in pieces.
        self.prefetch_offsets(order.iter().map(|&(offset, _)| offset));
        Blocks::new(self, order, self.whole_file_verification(), true)
    }

    /// Every data block in time order (ties in file order), ending like [`BddfReader::blocks`].
    pub fn blocks_by_time(&self) -> Blocks<'_> {
        let mut order: Vec<(i64, u64, u32)> = self
            .all_entries()
            .map(|(e, s)| (e.timestamp_ns, e.offset, s))
            .collect();
        order.sort_unstable();
        let order = order.into_iter().map(|(_, o, s)| (o, s)).collect();
        Blocks::new(self, order, self.whole_file_verification(), true)
    }

    fn all_entries(&self) -> impl Iterator<Item = (&IndexEntry, u32)> {
        self.series
            .iter()
            .zip(&self.entries)
            .flat_map(|(s, e)| e.entries.iter().map(move |entry| (entry, s.index())))
    }

    fn whole_file_verification(&self) -> Verify {
        match self.checksum_check() {
            Some(check) => Verify::AlongTheWay(check),
            None => Verify::No,
        }
    }

    /// A check of the file's SHA-1 fed by the blocks as they are read
    /// ([`BddfReader::read_block_checked`]), so that reading every block checks the file in
    /// the same pass: one read of each byte when the blocks come in file order or close to
    /// it (blocks in time order usually are). `None` when the file declares no checksum, has no
    /// trailer, or [`ReadOptions::verify_checksum`] is off.
    ///
    /// ```
    /// use robolog_bddf::{BddfReader, BddfWriter, series_identifier};
    ///
    /// let mut writer = BddfWriter::new(Vec::new())?;
    /// let log = writer.add_message_series(
    ///     series_identifier("bosdyn:channel", [("bosdyn:channel", "log")]),
    ///     Default::default(),
    ///     Default::default(),
    /// )?;
    /// writer.write_message(log, 1_000, b"started")?;
    /// writer.write_message(log, 2_000, b"stopped")?;
    /// let reader = BddfReader::open(writer.finish()?.into())?;
    ///
    /// let mut check = reader.checksum_check().expect("a checksum");
    /// // Any order: what the blocks read leave out is hashed when the check finishes.
    /// assert_eq!(&reader.read_block_checked(log, 1, &mut check)?.data[..], b"stopped");
    /// assert_eq!(&reader.read_block_checked(log, 0, &mut check)?.data[..], b"started");
    /// check.finish(&reader)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn checksum_check(&self) -> Option<ChecksumCheck> {
        match (&self.trailer, self.checksum) {
            (Some(trailer), Checksum::Sha1) if self.options.verify_checksum => {
                Some(ChecksumCheck {
                    sha: Sha1::new(),
                    hashed_until: 0,
                    digest: trailer.digest,
                    until: trailer.offset + HEADER_LEN + 8,
                    failed: None,
                })
            }
            _ => None,
        }
    }

    /// Reads data block `position` of a series, as [`BddfReader::read_block`] does, and feeds
    /// `check` the file up to the block's end.
    pub fn read_block_checked(
        &self,
        series_index: u32,
        position: usize,
        check: &mut ChecksumCheck,
    ) -> Result<DataBlock, Error> {
        let entries = self.entries_of(series_index)?;
        let entry = entries.entries.get(position).ok_or(Error::NoSuchBlock {
            series_index,
            position,
            block_count: entries.entries.len(),
        })?;
        let (block, raw) = self.read_block_at(entry.offset, series_index)?;
        check.read(&self.input, entry.offset, &raw);
        Ok(block)
    }

    /// Checks the trailer's SHA-1 against the file content now. `Ok` for files that declare no
    /// checksum; [`Error::NoTrailer`] when there is no trailer to check against.
    pub fn verify_checksum(&self) -> Result<(), Error> {
        let Some(trailer) = &self.trailer else {
            return Err(Error::NoTrailer {
                file_len: self.input.len(),
            });
        };
        if self.checksum == Checksum::None {
            return Ok(());
        }
        let covered = 0..trailer.offset + HEADER_LEN + 8;
        // Read by position, the file is hashed as it streams in, fetched ahead in pieces.
        self.input
            .prefetch(&pieces(covered.clone()).collect::<Vec<_>>());
        let mut sha = Sha1::new();
        hash_range(&mut sha, &self.input, covered)?;
        check_digest(sha.finalize().as_slice(), trailer.digest)
    }

    /// Why a walk over the blocks stopped early, for files read without their index.
    fn stop_error(&self) -> Option<Error> {
        match &self.source {
            IndexSource::Scan { stopped, .. } => stopped.clone(),
            IndexSource::File => None,
        }
    }
}

/// Reads the trailer at the end of `tail`, the bytes of a file that ends with the end magic
/// from offset `base` on.
fn read_trailer(tail: &[u8], base: u64) -> Result<Trailer, Error> {
    let offset = base + (tail.len() as u64).saturating_sub(TRAILER_LEN);
    match parse_block_in(tail, base, offset, 0)? {
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
    // An input that cannot be read (a file gone, a server failing) cannot be walked either.
    !matches!(
        error,
        Error::NotBddf { .. }
            | Error::UnsupportedVersion { .. }
            | Error::UnsupportedChecksum { .. }
            | Error::Io { .. }
    )
}

/// Bytes read at once when the end of a block is not known: about what a small descriptor
/// takes, and no more than a small read costs.
const FIRST_READ: u64 = 4 << 10;

/// Pieces in which a file is hashed when it is read by position.
const HASH_PIECE: u64 = 8 << 20;

/// Reads `range` of `input`.
fn read(input: &Input, range: Range<u64>) -> Result<Bytes, Error> {
    let start = range.start;
    input.read(range).map_err(|e| Error::io(start, e))
}

/// The next offset after `offset` in `known` (sorted), or `limit`: where the block at `offset`
/// ends at the latest when the index is right.
fn bound(known: &[u64], offset: u64, limit: u64) -> u64 {
    let next = known.partition_point(|&k| k <= offset);
    known.get(next).map_or(limit, |&k| k.min(limit))
}

/// The end of the first read of the block at `offset`: its bound, but at least its header and
/// a data block's descriptor length (which tell its length), never past `limit`.
fn read_end(offset: u64, bound: u64, limit: u64) -> u64 {
    bound
        .max(offset.saturating_add(HEADER_LEN + DESC_LEN_LEN))
        .min(limit)
}

/// Parses the block at `offset`, which ends by `limit` (else it is truncated), and returns it
/// with the bytes its payload range refers to. An input in memory is sliced; one read by
/// position is read up to `bound` (or `window`, read ahead from `offset`), then by the block's
/// own length when it is longer.
fn parse_at(
    input: &Input,
    offset: u64,
    bound: u64,
    limit: u64,
    window: Option<Bytes>,
) -> Result<(Bytes, Located), Error> {
    if let Some(data) = input.in_memory() {
        let body = data.slice(..usize::try_from(limit).unwrap_or(usize::MAX).min(data.len()));
        let located = parse_block(&body, offset, 0)?;
        return Ok((body, located));
    }
    let window = match window {
        Some(window) => window,
        None if offset >= limit => Bytes::new(),
        None => read(input, offset..read_end(offset, bound, limit))?,
    };
    match parse_block_in(&window, offset, offset, 0) {
        Err(Error::Truncated {
            offset: at,
            what,
            needed,
            complete_data_blocks,
            ..
        }) if at == offset && offset + (window.len() as u64) < limit => {
            let available = limit - offset;
            if needed > available {
                return Err(Error::Truncated {
                    offset,
                    what,
                    needed,
                    available,
                    complete_data_blocks,
                });
            }
            let window = read(input, offset..offset + needed)?;
            let located = parse_block_in(&window, offset, offset, 0)?;
            Ok((window, located))
        }
        other => other.map(|located| (window, located)),
    }
}

/// For an input read by position, the first read of each block at `offsets`, all at once (the
/// input joins neighbours); nothing for one in memory.
fn read_ahead(
    input: &Input,
    offsets: impl Iterator<Item = u64>,
    known: &[u64],
    limit: u64,
) -> Result<HashMap<u64, Bytes>, Error> {
    if input.in_memory().is_some() {
        return Ok(HashMap::new());
    }
    let mut offsets: Vec<u64> = offsets.filter(|&o| o < limit).collect();
    offsets.sort_unstable();
    offsets.dedup();
    let ranges: Vec<Range<u64>> = offsets
        .iter()
        .map(|&o| o..read_end(o, bound(known, o, limit), limit))
        .collect();
    let start = offsets.first().copied().unwrap_or(0);
    let windows = input
        .read_ranges(&ranges)
        .map_err(|e| Error::io(start, e))?;
    Ok(offsets.into_iter().zip(windows).collect())
}

/// `range` in pieces of [`HASH_PIECE`] bytes.
fn pieces(range: Range<u64>) -> impl Iterator<Item = Range<u64>> {
    (range.start..range.end)
        .step_by(HASH_PIECE as usize)
        .map(move |start| start..start.saturating_add(HASH_PIECE).min(range.end))
}

/// Hashes `range` of `input`, a piece at a time.
fn hash_range(sha: &mut Sha1, input: &Input, range: Range<u64>) -> Result<(), Error> {
    for piece in pieces(range) {
        sha.update(&read(input, piece)?);
    }
    Ok(())
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

/// Reads the file index block at `offset`, which ends by `limit`; an empty descriptor block
/// there is an empty index (some writers produce one for files without series).
fn read_file_index(input: &Input, offset: u64, limit: u64) -> Result<FileIndex, Error> {
    let (_, located) =
        parse_at(input, offset, limit, limit, None).map_err(|e| as_index_error(e, offset))?;
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

/// Where the parts the index points at are read from: the input, what was read ahead of
/// them, the offsets that bound each read, and the end they must not run past (the trailer).
struct IndexParts<'a> {
    input: &'a Input,
    ahead: &'a HashMap<u64, Bytes>,
    known: &'a [u64],
    limit: u64,
}

impl IndexParts<'_> {
    fn parse(&self, offset: u64) -> Result<Located, Error> {
        parse_at(
            self.input,
            offset,
            bound(self.known, offset, self.limit),
            self.limit,
            self.ahead.get(&offset).cloned(),
        )
        .map(|(_, located)| located)
        .map_err(|e| as_index_error(e, offset))
    }
}

/// Reads the block index of series `series_index`.
fn read_block_index(
    parts: &IndexParts<'_>,
    series_index: u32,
    offset: u64,
    index_offset: u64,
) -> Result<SeriesBlockIndex, Error> {
    let bad = |problem: String| Error::BadIndex { offset, problem };
    if offset < FILE_DESCRIPTOR_OFFSET || offset >= index_offset {
        return Err(bad(format!(
            "the block index of series {series_index} is said to be at {offset}, outside the file"
        )));
    }
    let block_index = match parts.parse(offset)?.block {
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
    Ok(block_index)
}

/// Series `series_index` from its block index (at `offset`) and descriptor.
fn series_of(
    series_index: u32,
    offset: u64,
    index_offset: u64,
    block_index: SeriesBlockIndex,
    descriptor: SeriesDescriptor,
) -> Result<(Series, SeriesEntries), Error> {
    let bad = |problem: String| Error::BadIndex { offset, problem };
    if descriptor.series_index != series_index {
        return Err(bad(format!(
            "the descriptor of series {series_index} is for series {}",
            descriptor.series_index
        )));
    }
    let descriptor_offset = block_index.descriptor_file_offset;
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
    parts: &IndexParts<'_>,
    offset: u64,
    index_offset: u64,
) -> Result<SeriesDescriptor, Error> {
    if offset < FILE_DESCRIPTOR_OFFSET || offset >= index_offset {
        return Err(Error::BadIndex {
            offset,
            problem: format!("a series descriptor is said to be at {offset}, outside the file"),
        });
    }
    match parts.parse(offset)?.block {
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
    /// Hash the file as the blocks are read.
    AlongTheWay(ChecksumCheck),
}

/// The file's SHA-1, hashed front to back as its blocks are read: see
/// [`BddfReader::checksum_check`].
#[derive(Debug)]
pub struct ChecksumCheck {
    sha: Sha1,
    /// Everything before this has been hashed.
    hashed_until: u64,
    digest: Sha1Digest,
    /// End of the hashed range: the end header and index offset are covered.
    until: u64,
    /// Reading what was to be hashed failed: reported by [`ChecksumCheck::finish`].
    failed: Option<Error>,
}

impl ChecksumCheck {
    /// The block at `offset`, whose bytes are `raw`, was just read: hashes the file up to its
    /// end. A block hashed already costs nothing; one further on has what lies before it read
    /// and hashed first. A damaged file can have a block that runs into the trailer: the hash
    /// still covers exactly `[0, until)`.
    fn read(&mut self, input: &Input, offset: u64, raw: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        let end = offset.saturating_add(raw.len() as u64).min(self.until);
        if end <= self.hashed_until {
            return;
        }
        let gap_end = offset.min(end);
        if gap_end > self.hashed_until
            && let Err(e) = hash_range(&mut self.sha, input, self.hashed_until..gap_end)
        {
            self.failed = Some(e);
            return;
        }
        if end > offset {
            let from = self.hashed_until.max(offset) - offset;
            self.sha
                .update(&raw[from as usize..(end - offset) as usize]);
        }
        self.hashed_until = end;
    }

    /// Hashes what the blocks read left out and compares the digest with the trailer's: a
    /// mismatch is [`Error::ChecksumMismatch`].
    pub fn finish(mut self, reader: &BddfReader) -> Result<(), Error> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        hash_range(&mut self.sha, &reader.input, self.hashed_until..self.until)?;
        check_digest(self.sha.finalize().as_slice(), self.digest)
    }
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
        let checksum = match std::mem::replace(&mut self.verify, Verify::No) {
            Verify::No => Ok(()),
            Verify::AlongTheWay(check) => check.finish(self.reader),
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
        if let (Ok((_, raw)), Verify::AlongTheWay(check)) = (&result, &mut self.verify) {
            check.read(&self.reader.input, offset, raw);
        }
        Some(result.map(|(block, _)| block))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.order.len() + self.final_errors.len();
        (len, Some(len + 2))
    }
}
