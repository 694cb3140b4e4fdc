//! Rescuing a cut or damaged log: one entry point, each format's own recovery, one report.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use robolog_framing::Bytes;
use robolog_query::Input;
use serde::Serialize;

use crate::error::Result;
use crate::format::Format;
use crate::problem::Problem;
use crate::sniff::{SNIFF_LEN, sniff};
use crate::writer::{Finished, Output};

/// What [`recover`] kept and lost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecoverReport {
    /// The format (of the input and of the output: recovery never changes formats; a bag 1.2
    /// comes out as 2.0, a draft MCAP as ratified MCAP).
    pub format: Format,
    /// Messages (BDDF: data blocks) in the output.
    pub messages_recovered: u64,
    /// Messages known to be lost: the exact number when `messages_lost_known`, otherwise a
    /// lower bound (messages in bytes that could not be read, such as the part of a chunk a
    /// cut file lacks, cannot be counted).
    pub messages_lost: u64,
    /// True when `messages_lost` is exact: every input byte that was dropped is accounted for.
    pub messages_lost_known: bool,
    /// Input bytes that ended up in no kept record.
    pub bytes_dropped: u64,
    /// True when nothing of the input was lost (the output may still differ: rebuilt indexes).
    pub lossless: bool,
    /// Other counts, by format: `attachments_recovered`, `chunks_partial`, `series_recovered`, …
    pub details: BTreeMap<String, u64>,
    /// What was damaged, and where.
    pub problems: Vec<Problem>,
    /// Size of the output.
    pub output_bytes: u64,
}

/// Recovers the log at `input` into a new file at `output` (written atomically; it may be the
/// input's own path). A ROS 2 bag (a directory or a `.db3`) is recovered into a new bag
/// directory at `output`: see [`robolog_rosbag2::recover`] (feature `rosbag2`). Another file
/// is read as [`recover_input`] reads it: once, front to back, through a window.
pub fn recover_file(input: impl AsRef<Path>, output: impl AsRef<Path>) -> Result<RecoverReport> {
    let input = input.as_ref();
    if crate::sniff::is_rosbag2_path(input)? {
        Format::Rosbag2.require_enabled()?;
        #[cfg(feature = "rosbag2")]
        return recover_rosbag2(input, output.as_ref());
    }
    let input = Input::open(input)?;
    let (report, _) = recover_input(&input, Output::file(output)?)?;
    Ok(report)
}

/// Writes to `output` a valid, indexed log with everything intact in `input`:
///
/// - **bags**: reindexed in salvage mode: every complete chunk, plus the complete messages of a
///   cut, unterminated or corrupt chunk (1.2 bags are converted to 2.0, as `rosbag reindex`
///   does); needs a seekable output;
/// - **MCAP**: every complete record, the complete messages of a cut chunk, what decodes of a
///   corrupt one; indexes, statistics and CRCs rebuilt (zstd chunks);
/// - **BDDF**: every complete block up to the first incomplete or unreadable one, indexes and
///   checksum rebuilt.
pub fn recover(input: &Bytes, output: Output) -> Result<(RecoverReport, Finished)> {
    let format = sniff(&input[..input.len().min(SNIFF_LEN)])?;
    format.require_enabled()?;
    match format {
        #[cfg(feature = "rosbag")]
        Format::Bag => recover_bag(output, |output, options| {
            robolog_rosbag::reindex(input, output, options)
        }),
        #[cfg(feature = "mcap")]
        Format::Mcap => recover_mcap(input, output),
        #[cfg(feature = "bddf")]
        Format::Bddf => recover_bddf(output, |output| robolog_bddf::recover(input, output)),
        Format::Rosbag2 => Err(crate::Error::Usage(
            "a ROS 2 bag is recovered from its path into a new bag directory (recover_file)".into(),
        )),
        #[allow(unreachable_patterns)]
        other => Err(crate::Error::FormatDisabled { format: other }),
    }
}

/// [`recover`] of an input read by position that is not in memory (a remote object, a file
/// read with positional reads): read once, front to back, as it streams in, through a window
/// that holds the record being recovered and what recovery looks ahead at, never the whole
/// file ([`robolog_mcap::recover_input`], [`robolog_rosbag::reindex_input`],
/// [`robolog_bddf::recover_input`]); the output is the one [`recover`] writes of the same
/// bytes. An MCAP file in the draft layout is read into memory whole first. An input in memory
/// is recovered in place.
pub fn recover_input(input: &Input, output: Output) -> Result<(RecoverReport, Finished)> {
    if let Some(bytes) = input.in_memory() {
        return recover(bytes, output);
    }
    let read = |offset| move |source| crate::Error::Read { offset, source };
    let head = input.read_up_to(0, SNIFF_LEN as u64).map_err(read(0))?;
    let format = sniff(&head)?;
    format.require_enabled()?;
    #[cfg(feature = "mcap")]
    if format == Format::Mcap {
        return mcap_report(|opts, limits| {
            robolog_mcap::recover_input(input, output, opts, limits)
        });
    }
    #[cfg(feature = "rosbag")]
    if format == Format::Bag {
        return recover_bag(output, |output, options| {
            robolog_rosbag::reindex_input(input, output, options)
        });
    }
    #[cfg(feature = "bddf")]
    if format == Format::Bddf {
        return recover_bddf(output, |output| robolog_bddf::recover_input(input, output));
    }
    recover(&input.read_all().map_err(read(0))?, output)
}

/// [`recover`] of a stream read front to back (standard input, a pipe), recovered as it
/// arrives through a window ([`robolog_mcap::recover_stream`],
/// [`robolog_rosbag::reindex_stream`], [`robolog_bddf::recover_stream`]): memory grows with
/// the largest record, not with the stream.
pub fn recover_reader(reader: impl Read, output: Output) -> Result<(RecoverReport, Finished)> {
    let mut reader = reader;
    let mut head = Vec::new();
    (&mut reader)
        .take(SNIFF_LEN as u64)
        .read_to_end(&mut head)
        .map_err(|source| crate::Error::Read { offset: 0, source })?;
    let format = sniff(&head)?;
    format.require_enabled()?;
    #[cfg(feature = "mcap")]
    if format == Format::Mcap {
        let stream = std::io::Cursor::new(head).chain(reader);
        return mcap_report(|opts, limits| {
            robolog_mcap::recover_stream(stream, output, opts, limits)
        });
    }
    #[cfg(feature = "rosbag")]
    if format == Format::Bag {
        let stream = std::io::Cursor::new(head).chain(reader);
        return recover_bag(output, |output, options| {
            robolog_rosbag::reindex_stream(stream, output, options)
        });
    }
    #[cfg(feature = "bddf")]
    if format == Format::Bddf {
        let stream = std::io::Cursor::new(head).chain(reader);
        return recover_bddf(output, |output| {
            robolog_bddf::recover_stream(stream, output)
        });
    }
    reader
        .read_to_end(&mut head)
        .map_err(|source| crate::Error::Read {
            offset: head.len() as u64,
            source,
        })?;
    recover(&Bytes::from(head), output)
}

#[cfg(feature = "rosbag")]
/// Runs a bag's reindex in salvage mode into `output`, and reports it.
fn recover_bag(
    mut output: Output,
    reindex: impl FnOnce(
        &mut Output,
        &robolog_rosbag::ReindexOptions,
    ) -> robolog_rosbag::Result<robolog_rosbag::ReindexReport>,
) -> Result<(RecoverReport, Finished)> {
    use robolog_rosbag::{ReindexMode, ReindexOptions};
    if !output.is_seekable() {
        return Err(crate::Error::Output(
            "a recovered bag cannot be written to a stream; write to a file".into(),
        ));
    }
    let r = reindex(
        &mut output,
        &ReindexOptions::new().mode(ReindexMode::Salvage),
    )?;
    let finished = output.finish()?;
    let details = BTreeMap::from([
        ("chunks".to_owned(), r.chunks),
        ("salvaged_messages".to_owned(), r.salvaged_messages),
        ("incomplete_records".to_owned(), r.incomplete_records),
    ]);
    Ok((
        RecoverReport {
            format: Format::Bag,
            messages_recovered: r.messages,
            messages_lost: r.dropped_messages,
            messages_lost_known: r.bytes_dropped == 0,
            bytes_dropped: r.bytes_dropped,
            lossless: !r.lost_data(),
            details,
            problems: r.problems.clone(),
            output_bytes: finished.bytes,
        },
        finished,
    ))
}

#[cfg(feature = "mcap")]
fn recover_mcap(input: &Bytes, output: Output) -> Result<(RecoverReport, Finished)> {
    mcap_report(|opts, limits| robolog_mcap::recover_with(input.clone(), output, opts, limits))
}

/// Runs an MCAP recovery with the facade's output settings, and reports it.
#[cfg(feature = "mcap")]
fn mcap_report(
    recover: impl FnOnce(
        robolog_mcap::WriteOptions,
        robolog_mcap::RecoverOptions,
    ) -> robolog_mcap::Result<(Output, robolog_mcap::Report)>,
) -> Result<(RecoverReport, Finished)> {
    let (output, r) = recover(
        crate::mcap_writer::default_options(),
        robolog_mcap::RecoverOptions::default(),
    )?;
    let finished = output.finish()?;
    let details = BTreeMap::from([
        ("messages_unverified".to_owned(), r.messages_unverified),
        ("attachments_recovered".to_owned(), r.attachments_recovered),
        ("attachments_lost".to_owned(), r.attachments_lost),
        ("metadata_recovered".to_owned(), r.metadata_recovered),
        ("chunks_recovered".to_owned(), r.chunks_recovered),
        ("chunks_copied".to_owned(), r.chunks_copied),
        ("chunks_partial".to_owned(), r.chunks_partial),
        ("chunks_unverified".to_owned(), r.chunks_unverified),
        ("chunks_lost".to_owned(), r.chunks_lost),
        ("truncated".to_owned(), u64::from(r.truncated)),
        ("draft".to_owned(), u64::from(r.draft)),
    ]);
    Ok((
        RecoverReport {
            format: Format::Mcap,
            messages_recovered: r.messages_recovered,
            messages_lost: r.messages_lost,
            messages_lost_known: r.bytes_dropped == 0 && !r.truncated,
            bytes_dropped: r.bytes_dropped,
            lossless: r.is_lossless(),
            details,
            problems: r.damage.clone(),
            output_bytes: finished.bytes,
        },
        finished,
    ))
}

#[cfg(feature = "bddf")]
/// Runs a BDDF recovery into `output`, and reports it.
fn recover_bddf(
    mut output: Output,
    recover: impl FnOnce(
        &mut Output,
    ) -> std::result::Result<robolog_bddf::RecoverReport, robolog_bddf::Error>,
) -> Result<(RecoverReport, Finished)> {
    let r = recover(&mut output)?;
    let finished = output.finish()?;
    let problems = r.problems.clone();
    let details = BTreeMap::from([
        ("series_recovered".to_owned(), r.series_recovered as u64),
        (
            "payload_bytes_recovered".to_owned(),
            r.payload_bytes_recovered,
        ),
        (
            "file_descriptor_rebuilt".to_owned(),
            u64::from(r.file_descriptor_rebuilt),
        ),
        (
            "series_renumbered".to_owned(),
            u64::from(r.series_renumbered),
        ),
    ]);
    let lossless = r.input_complete
        && r.input_checksum_ok != Some(false)
        && r.data_blocks_lost == 0
        && r.stopped.is_none();
    Ok((
        RecoverReport {
            format: Format::Bddf,
            messages_recovered: r.data_blocks_recovered,
            messages_lost: r.data_blocks_lost,
            messages_lost_known: r.input_complete && r.bytes_dropped == 0,
            bytes_dropped: r.bytes_dropped,
            lossless,
            details,
            problems,
            output_bytes: finished.bytes,
        },
        finished,
    ))
}

#[cfg(feature = "rosbag2")]
fn recover_rosbag2(input: &Path, output: &Path) -> Result<RecoverReport> {
    let r = robolog_rosbag2::recover(input, output)?;
    let output_bytes = r
        .metadata
        .relative_file_paths
        .iter()
        .filter_map(|p| std::fs::metadata(output.join(p)).ok())
        .map(|m| m.len())
        .sum();
    let mut details = BTreeMap::from([
        ("metadata_rebuilt".to_owned(), u64::from(r.metadata_rebuilt)),
        ("files".to_owned(), r.files.len() as u64),
    ]);
    for f in &r.files {
        let key = match f.method {
            robolog_rosbag2::Method::Sqlite => "files_read_by_sqlite",
            robolog_rosbag2::Method::Pages => "files_read_page_by_page",
            _ => "files_recovered_as_mcap",
        };
        *details.entry(key.to_owned()).or_insert(0) += 1;
    }
    Ok(RecoverReport {
        format: Format::Rosbag2,
        messages_recovered: r.messages_recovered,
        messages_lost: r.messages_lost,
        // A ROS 2 bag's storage counts what it could not read.
        messages_lost_known: true,
        bytes_dropped: 0,
        lossless: r.is_lossless(),
        details,
        problems: r.problems.clone(),
        output_bytes,
    })
}
