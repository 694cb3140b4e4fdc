//! Recovery: rewrite a cut or damaged file as a valid one with every complete block.

use std::collections::BTreeMap;
use std::io::{BufWriter, Read, Write};
use std::path::Path;

use robolog_framing::{AtomicFile, Problem, ProblemKind, StreamWindow};
use robolog_query::Input;
use sha1::{Digest, Sha1};

use crate::block::{HEADER_LEN, START_MAGIC};
use crate::block_writer::{BlockWriter, SeriesIndexBuilder};
use crate::error::Error;
use crate::file_descriptor::{Checksum, new_file_descriptor};
use crate::proto::descriptor_block::Descriptor;
use crate::proto::series_block_index::BlockEntry;
use crate::proto::{DataDescriptor, DescriptorBlock};
use crate::scan::{BlockSource, InMemory, MAX_STREAMED_BLOCK, SkipReason, Visit, walk};
use crate::time::timestamp_from_nanos;

/// What [`recover`] did.
#[derive(Debug, Clone)]
pub struct RecoverReport {
    /// Size of the input.
    pub input_len: u64,
    /// Size of the file written.
    pub output_len: u64,
    /// The input had a trailer: nothing was cut (its indexes were rebuilt all the same).
    pub input_complete: bool,
    /// For a complete input declaring SHA-1: whether its checksum matched.
    pub input_checksum_ok: Option<bool>,
    /// Series written.
    pub series_recovered: usize,
    /// Data blocks written.
    pub data_blocks_recovered: u64,
    /// Payload bytes of the data blocks written.
    pub payload_bytes_recovered: u64,
    /// Data blocks known to be lost: a block cut by the end of the input, blocks of undeclared
    /// series. Blocks beyond an unreadable block cannot be counted.
    pub data_blocks_lost: u64,
    /// Input bytes not carried over: everything from the first incomplete or unreadable block
    /// on, and skipped blocks other than indexes (which are rebuilt).
    pub bytes_dropped: u64,
    /// Why and where reading the input stopped before a trailer; `None` for complete inputs.
    pub stopped: Option<Error>,
    /// What was found, where: why reading stopped, a checksum mismatch, and each complete
    /// block that was not copied (its offset and length, and why).
    pub problems: Vec<Problem>,
    /// The input's file descriptor was cut, so a new one (without the file annotations) was
    /// written.
    pub file_descriptor_rebuilt: bool,
    /// Series were renumbered to close gaps in the series indexes.
    pub series_renumbered: bool,
}

/// Rescues the content of a BDDF file that was cut (download interrupted, recorder killed) or
/// damaged: writes to `out` a valid file with every complete block up to the first incomplete
/// or unreadable one, with rebuilt indexes and a fresh checksum.
///
/// Blocks are copied byte for byte. A complete file comes out with the same content (and the
/// same bytes, when its indexes were written canonically). Fails only when the input is not a
/// BDDF file or declares an unsupported version or checksum, or when writing fails.
///
/// ```
/// # fn main() -> Result<(), robolog_bddf::Error> {
/// use robolog_bddf::{BddfWriter, recover, series_identifier, proto::MessageTypeDescriptor};
/// let mut writer = BddfWriter::new(Vec::new())?;
/// let id = series_identifier("bosdyn:channel", [("bosdyn:channel", "log")]);
/// let text = MessageTypeDescriptor { content_type: "text/plain".into(), ..Default::default() };
/// let series = writer.add_message_series(id, text, Default::default())?;
/// writer.write_message(series, 1, b"one")?;
/// writer.write_message(series, 2, b"two")?;
/// let file = writer.finish()?;
///
/// // The recorder died 3 bytes into the index: both messages are rescued.
/// let cut = &file[..file.len() - 60];
/// let mut rescued = Vec::new();
/// let report = recover(cut, &mut rescued)?;
/// assert_eq!(report.data_blocks_recovered, 2);
/// assert_eq!(rescued, file);
/// # Ok(()) }
/// ```
pub fn recover<W: Write>(input: &[u8], out: W) -> Result<RecoverReport, Error> {
    recover_from(&mut InMemory(input), out)
}

/// [`recover`] of a file read by position that is not in memory (a remote object, a file
/// read with positional reads): read once, front to back, as it streams in, through a window
/// that holds the block being copied, never the whole file ([`recover_stream`]). An input in
/// memory is recovered in place.
pub fn recover_input<W: Write>(input: &Input, out: W) -> Result<RecoverReport, Error> {
    if let Some(bytes) = input.in_memory() {
        return recover(bytes, out);
    }
    let len = input.len();
    let mut window = StreamWindow::new(input.stream(0..len), Some(len), WINDOW_LIMIT);
    recover_from(&mut window, out)
}

/// [`recover`] of a file read front to back from `reader` (a pipe, standard input): memory
/// grows with the largest block, not with the file. The output is the one [`recover`] writes
/// of the same bytes, with one exception: a block larger than [`DEFAULT_MAX_BLOCK_SIZE`]
/// ends the walk where it starts (as damage would), where [`recover`] copies it.
///
/// [`DEFAULT_MAX_BLOCK_SIZE`]: crate::DEFAULT_MAX_BLOCK_SIZE
///
/// ```
/// # fn main() -> Result<(), robolog_bddf::Error> {
/// use robolog_bddf::{BddfWriter, recover_stream, series_identifier, proto::MessageTypeDescriptor};
/// let mut writer = BddfWriter::new(Vec::new())?;
/// let id = series_identifier("bosdyn:channel", [("bosdyn:channel", "log")]);
/// let text = MessageTypeDescriptor { content_type: "text/plain".into(), ..Default::default() };
/// let series = writer.add_message_series(id, text, Default::default())?;
/// writer.write_message(series, 1, b"one")?;
/// writer.write_message(series, 2, b"two")?;
/// let file = writer.finish()?;
///
/// // A download that stopped 3 bytes into the index, read from a pipe.
/// let mut rescued = Vec::new();
/// let report = recover_stream(&file[..file.len() - 60], &mut rescued)?;
/// assert_eq!(report.data_blocks_recovered, 2);
/// assert_eq!(rescued, file);
/// # Ok(()) }
/// ```
pub fn recover_stream<R: Read, W: Write>(reader: R, out: W) -> Result<RecoverReport, Error> {
    let mut window = StreamWindow::new(reader, None, WINDOW_LIMIT);
    recover_from(&mut window, out)
}

/// The most a window over a stream holds: the largest block, and some read ahead.
const WINDOW_LIMIT: u64 = MAX_STREAMED_BLOCK + (1 << 20);

/// What recovery writes as the walk reaches each block.
struct Rebuild<W: Write> {
    out: BlockWriter<W>,
    /// Series in the order their descriptors are written, which is their new index.
    index: Vec<SeriesIndexBuilder>,
    /// New series indexes by old.
    renumber: BTreeMap<u32, u32>,
    /// SHA-1 of the input up to the trailer's digest, for a file that declares SHA-1.
    input_sha: Option<Sha1>,
    payload_bytes: u64,
}

impl<W: Write> Rebuild<W> {
    fn hash(&mut self, bytes: &[u8]) {
        if let Some(sha) = &mut self.input_sha {
            sha.update(bytes);
        }
    }

    fn visit(&mut self, visit: Visit<'_>) -> Result<(), Error> {
        match visit {
            Visit::FileDescriptor(checksum, bytes) => {
                if checksum == Checksum::Sha1 {
                    self.input_sha = Some(Sha1::new_with_prefix(START_MAGIC));
                }
                self.hash(bytes);
                self.out.write_raw(bytes)?;
            }
            // Series indexes must run 0, 1, 2, … in the order their descriptors are written,
            // because the rebuilt index lists series by position. Writers register series in
            // that order, so indexes change only when descriptors were lost or damaged.
            Visit::Series(series, bytes) => {
                self.hash(bytes);
                let old_index = series.descriptor.series_index;
                let new_index = self.index.len() as u32;
                self.renumber.insert(old_index, new_index);
                let descriptor_offset = if new_index == old_index {
                    self.out.write_raw(bytes)?
                } else {
                    let mut descriptor = series.descriptor.clone();
                    descriptor.series_index = new_index;
                    self.out.write_descriptor(&DescriptorBlock {
                        descriptor: Some(Descriptor::SeriesDescriptor(descriptor)),
                    })?
                };
                self.index.push(SeriesIndexBuilder {
                    identifier: series
                        .descriptor
                        .series_identifier
                        .clone()
                        .unwrap_or_default(),
                    identifier_hash: series.descriptor.identifier_hash,
                    descriptor_offset,
                    entries: Vec::new(),
                    total_bytes: 0,
                });
            }
            Visit::Data {
                block,
                descriptor,
                payload,
                bytes,
            } => {
                self.hash(bytes);
                // The walk shows only blocks of declared series, which all have a new index.
                let Some(&new_index) = self.renumber.get(&block.series_index) else {
                    return Ok(());
                };
                let file_offset = if new_index == block.series_index {
                    self.out.write_raw(bytes)?
                } else {
                    let descriptor = DataDescriptor {
                        series_index: new_index,
                        ..descriptor.clone()
                    };
                    self.out.write_data(&descriptor, payload)?
                };
                if let Some(series) = self.index.get_mut(new_index as usize) {
                    series.entries.push(BlockEntry {
                        timestamp: Some(timestamp_from_nanos(block.timestamp_ns)),
                        file_offset,
                        additional_indexes: block.additional_indexes.clone(),
                    });
                    series.total_bytes += block.payload_len;
                }
                self.payload_bytes += block.payload_len;
            }
            Visit::Skipped(bytes) => self.hash(bytes),
            // The digest covers the trailer's header and index offset.
            Visit::End(bytes) => self.hash(&bytes[..bytes.len().min(HEADER_LEN as usize + 8)]),
        }
        Ok(())
    }
}

/// Recovers what `source` holds into `out`.
fn recover_from<S: BlockSource, W: Write>(source: &mut S, out: W) -> Result<RecoverReport, Error> {
    let magic = source.head(4)?;
    if magic != START_MAGIC {
        return Err(Error::NotBddf {
            found: magic.to_vec(),
        });
    }
    let mut rebuild = Rebuild {
        out: BlockWriter::new(out)?,
        index: Vec::new(),
        renumber: BTreeMap::new(),
        input_sha: None,
        payload_bytes: 0,
    };
    let scan = walk(source, |visit| rebuild.visit(visit))?;
    let input_len = source.len()?;
    let Rebuild {
        mut out,
        index,
        renumber,
        input_sha,
        payload_bytes,
    } = rebuild;
    let (checksum, file_descriptor_rebuilt) = match &scan.file_descriptor {
        Some((_, checksum, _)) => (*checksum, false),
        None => match &scan.stop {
            Some(e) if e.is_truncation() => {
                out.write_descriptor(&DescriptorBlock {
                    descriptor: Some(Descriptor::FileDescriptor(new_file_descriptor(
                        Default::default(),
                    ))),
                })?;
                (Checksum::Sha1, true)
            }
            Some(e) => return Err(e.clone()),
            None => {
                return Err(Error::NoTrailer {
                    file_len: input_len,
                });
            }
        },
    };
    let series_renumbered = renumber.iter().any(|(old, new)| old != new);

    let series_recovered = index.len();
    let (_, output_len) = out.finish(index, checksum)?;

    let orphans = scan
        .skipped
        .iter()
        .filter(|s| matches!(s.reason, SkipReason::UndeclaredSeries { .. }))
        .count() as u64;
    let cut_data_block = matches!(
        scan.stop,
        Some(Error::Truncated {
            what: "data block",
            ..
        })
    );
    let skipped_bytes: u64 = scan
        .skipped
        .iter()
        .filter(|s| s.reason != SkipReason::IndexBlock)
        .map(|s| s.len)
        .sum();
    let input_checksum_ok = match (&scan.trailer, input_sha) {
        (Some(trailer), Some(sha)) => Some(sha.finalize().as_slice() == trailer.digest.0),
        _ => None,
    };
    let mut problems = Vec::new();
    if let Some(stopped) = &scan.stop {
        problems.push(Problem::error(
            stopped.problem_kind(),
            stopped.offset(),
            format!("reading stopped: {stopped}"),
        ));
    }
    if input_checksum_ok == Some(false) {
        problems.push(Problem::error(
            ProblemKind::Checksum,
            None,
            "the input's SHA-1 checksum did not match",
        ));
    }
    problems.extend(scan.skipped.iter().map(|s| s.problem()));
    Ok(RecoverReport {
        input_len,
        output_len,
        input_complete: scan.trailer.is_some(),
        input_checksum_ok,
        series_recovered,
        data_blocks_recovered: scan.blocks.len() as u64,
        payload_bytes_recovered: payload_bytes,
        data_blocks_lost: orphans + u64::from(cut_data_block),
        bytes_dropped: input_len - scan.end + skipped_bytes,
        stopped: scan.stop,
        problems,
        file_descriptor_rebuilt,
        series_renumbered,
    })
}

/// [`recover`] from one file into another. The output appears only when complete (it is
/// written beside its destination and renamed into place); the input is read once, through a
/// window, as [`recover_input`] reads it.
pub fn recover_file(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
) -> Result<RecoverReport, Error> {
    let input = Input::open(input).map_err(|e| Error::io(0, e))?;
    let file = AtomicFile::create(output).map_err(|e| Error::io(0, e))?;
    let mut out = BufWriter::new(file);
    let report = recover_input(&input, &mut out)?;
    let file = out
        .into_inner()
        .map_err(|e| Error::io(report.output_len, e.into_error()))?;
    file.commit().map_err(|e| Error::io(report.output_len, e))?;
    Ok(report)
}
