//! Recovery: rewrite a cut or damaged file as a valid one with every complete block.

use std::io::{BufWriter, Write};
use std::path::Path;

use robolog_framing::{AtomicFile, Problem, ProblemKind, read_file};
use sha1::{Digest, Sha1};

use crate::block::{HEADER_LEN, ParsedBlock, parse_block};
use crate::block_writer::{BlockWriter, SeriesIndexBuilder};
use crate::error::Error;
use crate::file_descriptor::{Checksum, FILE_DESCRIPTOR_OFFSET, new_file_descriptor};
use crate::proto::descriptor_block::Descriptor;
use crate::proto::series_block_index::BlockEntry;
use crate::proto::{DataDescriptor, DescriptorBlock};
use crate::scan::{SkipReason, scan};
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
    let scan = scan(input)?;
    let input_len = input.len() as u64;
    let mut out = BlockWriter::new(out)?;

    let (checksum, file_descriptor_rebuilt) = match &scan.file_descriptor {
        Some((_, checksum, end)) => {
            out.write_raw(&input[FILE_DESCRIPTOR_OFFSET as usize..*end as usize])?;
            (*checksum, false)
        }
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

    // Series indexes must run 0, 1, 2, … in the order their descriptors are written, because the
    // rebuilt index lists series by position. Writers register series in that order, so indexes
    // change only when descriptors were lost or damaged.
    let mut series_by_offset: Vec<_> = scan.series.values().collect();
    series_by_offset.sort_by_key(|s| s.offset);
    let renumber: std::collections::BTreeMap<u32, u32> = series_by_offset
        .iter()
        .map(|s| s.descriptor.series_index)
        .zip(0u32..)
        .collect();
    let series_renumbered = renumber.iter().any(|(old, new)| old != new);

    let mut index: Vec<SeriesIndexBuilder> = Vec::with_capacity(scan.series.len());
    let mut pending_series = series_by_offset.into_iter().peekable();
    let mut payload_bytes = 0u64;

    let mut write_series_before =
        |out: &mut BlockWriter<W>, offset: u64, index: &mut Vec<SeriesIndexBuilder>| {
            while let Some(s) = pending_series.next_if(|s| s.offset < offset) {
                let Some(&new_index) = renumber.get(&s.descriptor.series_index) else {
                    continue;
                };
                let descriptor_offset = if new_index == s.descriptor.series_index {
                    out.write_raw(&input[s.offset as usize..s.end as usize])?
                } else {
                    let mut descriptor = s.descriptor.clone();
                    descriptor.series_index = new_index;
                    out.write_descriptor(&DescriptorBlock {
                        descriptor: Some(Descriptor::SeriesDescriptor(descriptor)),
                    })?
                };
                index.push(SeriesIndexBuilder {
                    identifier: s.descriptor.series_identifier.clone().unwrap_or_default(),
                    identifier_hash: s.descriptor.identifier_hash,
                    descriptor_offset,
                    entries: Vec::new(),
                    total_bytes: 0,
                });
            }
            Ok::<(), Error>(())
        };

    for block in &scan.blocks {
        write_series_before(&mut out, block.offset, &mut index)?;
        // The scan keeps only blocks of declared series, which all have a new index.
        let Some(&new_index) = renumber.get(&block.series_index) else {
            continue;
        };
        let file_offset = if new_index == block.series_index {
            out.write_raw(&input[block.offset as usize..block.end as usize])?
        } else {
            let located = parse_block(input, block.offset, 0)?;
            let ParsedBlock::Data {
                descriptor,
                payload,
            } = located.block
            else {
                continue;
            };
            out.write_data(
                &DataDescriptor {
                    series_index: new_index,
                    ..descriptor
                },
                &input[payload],
            )?
        };
        // Series indexes are dense after renumbering, so the position is the new index.
        if let Some(series) = index.get_mut(new_index as usize) {
            series.entries.push(BlockEntry {
                timestamp: Some(timestamp_from_nanos(block.timestamp_ns)),
                file_offset,
                additional_indexes: block.additional_indexes.clone(),
            });
            series.total_bytes += block.payload_len;
        }
        payload_bytes += block.payload_len;
    }
    write_series_before(&mut out, u64::MAX, &mut index)?;

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
    let input_checksum_ok = match (&scan.trailer, checksum) {
        (Some(trailer), Checksum::Sha1) => {
            let covered = &input[..(trailer.offset + HEADER_LEN + 8) as usize];
            Some(Sha1::digest(covered).as_slice() == trailer.digest.0)
        }
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
/// written beside its destination and renamed into place); the input is read into memory.
pub fn recover_file(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
) -> Result<RecoverReport, Error> {
    let data = read_file(input).map_err(|e| Error::io(0, e))?;
    let file = AtomicFile::create(output).map_err(|e| Error::io(0, e))?;
    let mut out = BufWriter::new(file);
    let report = recover(&data, &mut out)?;
    let file = out
        .into_inner()
        .map_err(|e| Error::io(report.output_len, e.into_error()))?;
    file.commit().map_err(|e| Error::io(report.output_len, e))?;
    Ok(report)
}
