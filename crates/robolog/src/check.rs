//! Structural validation of any log: one entry point, each format's own checks, problems with
//! byte offsets.

use std::path::Path;

use robolog_framing::Bytes;
use robolog_query::Input;
use serde::Serialize;

use crate::error::Result;
use crate::format::Format;
use crate::problem::{Problem, ProblemKind, Severity};
use crate::sniff::{SNIFF_LEN, sniff};

/// What [`check`] found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// The format.
    pub format: Format,
    /// Messages that could be read.
    pub messages: u64,
    /// Everything found, in file order where offsets are known.
    pub problems: Vec<Problem>,
}

impl CheckReport {
    /// True when no problem is an error (warnings and notes allowed).
    pub fn is_valid(&self) -> bool {
        self.problems.iter().all(|p| p.severity < Severity::Error)
    }

    /// The worst severity found, `None` for a clean file.
    pub fn worst(&self) -> Option<Severity> {
        self.problems.iter().map(|p| p.severity).max()
    }
}

/// Checks the log at `path`; see [`check_bytes`]. A ROS 2 bag (a directory or `.db3`) is
/// checked as a whole: what opening finds (a missing or stale metadata.yaml, an unreadable
/// `-wal`), every message read, each MCAP storage file through the MCAP checks, and (with the
/// `cdr` feature) each topic's recorded type hash against its definition. Another file is
/// read into memory whole (a caller that can promise the file stays as it is may pass
/// [`check_bytes`] a memory map instead: `robolog::Input::map`).
pub fn check(path: impl AsRef<Path>) -> Result<CheckReport> {
    let path = path.as_ref();
    if crate::sniff::is_rosbag2_path(path)? {
        Format::Rosbag2.require_enabled()?;
        #[cfg(feature = "rosbag2")]
        {
            let (messages, problems) = crate::rosbag2_log::check(path);
            return Ok(CheckReport {
                format: Format::Rosbag2,
                messages,
                problems,
            });
        }
    }
    check_bytes(robolog_framing::read_file(path)?)
}

/// Checks a log's structure and reads every message, reporting each problem with its offset:
///
/// - **bags**: version and file header, index against chunks (a missing or damaged index),
///   every chunk decompressed and walked, message counts against the index, and (with the
///   `ros1` feature) each connection's md5sum against its definition;
/// - **MCAP**: everything `mcap doctor` checks, plus every CRC (see `robolog_mcap::check`),
///   and (with the `cdr` feature) each ROS 2 channel's recorded type hash against its
///   definition (see [`crate::type_hash`]);
/// - **BDDF**: magic, trailer, file and series indexes, every block read, POD payloads whole
///   samples, identifier hashes, the SHA-1 checksum.
///
/// Only an unrecognised input or an I/O failure is an `Err`; a file that cannot even be
/// opened as its format gives a report with that error as a problem.
pub fn check_bytes(data: Bytes) -> Result<CheckReport> {
    check_input(Input::from(data))
}

/// Checks a log read by position: a buffer, a file ([`Input::open`]), a memory map, a remote
/// object (feature `remote`). The checks are those of [`check_bytes`]. A bag, a BDDF file and
/// an MCAP file are read in one pass, front to back, what comes next fetched ahead while a
/// remote object streams in, so that checking one needs neither a download first nor memory
/// for all of it (only an MCAP file in the pre-ratification draft layout is read whole).
pub fn check_input(input: Input) -> Result<CheckReport> {
    let head = input.read_up_to(0, SNIFF_LEN as u64)?;
    let format = sniff(&head)?;
    format.require_enabled()?;
    let (messages, mut problems): (u64, Vec<Problem>) = match format {
        #[cfg(feature = "rosbag")]
        Format::Bag => check_bag(input),
        #[cfg(feature = "mcap")]
        Format::Mcap => check_mcap(&input)?,
        #[cfg(feature = "bddf")]
        Format::Bddf => check_bddf(input),
        Format::Rosbag2 => {
            return Err(crate::Error::Usage(
                "a ROS 2 bag (sqlite3 storage) is checked from its path".into(),
            ));
        }
        #[allow(unreachable_patterns)]
        other => return Err(crate::Error::FormatDisabled { format: other }),
    };
    problems.sort_by_key(|p| (p.offset.is_none(), p.offset));
    Ok(CheckReport {
        format,
        messages,
        problems,
    })
}

#[cfg(any(feature = "rosbag", feature = "bddf"))]
fn fatal(kind: ProblemKind, offset: Option<u64>, error: impl std::fmt::Display) -> Problem {
    Problem::error(kind, offset, error.to_string())
}

#[cfg(feature = "rosbag")]
fn check_bag(input: Input) -> (u64, Vec<Problem>) {
    use crate::bag_log::open_bag;
    use robolog_rosbag::{IndexStatus, Order};

    let bag = match open_bag(input) {
        Ok(bag) => bag,
        Err(e) => return (0, vec![fatal(e.problem_kind(), e.offset(), &e)]),
    };
    let mut problems: Vec<Problem> = bag.problems().to_vec();
    match bag.index_status() {
        IndexStatus::Used => {}
        IndexStatus::Missing => problems.push(Problem::warning(
            ProblemKind::Index,
            None,
            "no index: the bag can only be read by a linear scan (`recover` rebuilds it)",
        )),
        IndexStatus::Damaged { offset, message } => problems.push(Problem::error(
            ProblemKind::Index,
            Some(*offset),
            format!("damaged index: {message}"),
        )),
    }
    let mut read = 0u64;
    if bag.version() == robolog_rosbag::Version::V1_2 {
        // Opening walked each record of a 1.2 bag and found every message whole: reading them
        // again would find nothing more (and, read by position, would hold them all at once).
        read = bag.summary().message_count;
    } else {
        for message in bag.messages().order(Order::File) {
            match message {
                Ok(_) => read += 1,
                Err(e) => {
                    problems.push(fatal(e.problem_kind(), e.offset(), &e));
                    break;
                }
            }
        }
    }
    let expected = bag.summary().message_count;
    if read != expected {
        problems.push(Problem::error(
            ProblemKind::Index,
            None,
            format!("the index lists {expected} messages, but {read} could be read"),
        ));
    }
    #[cfg(feature = "ros1")]
    for c in bag.connections() {
        problems.extend(check_md5(c));
    }
    (read, problems)
}

/// A connection's md5sum against the md5 of its definition.
#[cfg(all(feature = "rosbag", feature = "ros1"))]
fn check_md5(c: &robolog_rosbag::Connection) -> Option<Problem> {
    use robolog_msg::{Dialect, Registry, TypeName};

    let what = format!("connection {} ({}, {})", c.id, c.topic, c.message_type);
    if c.message_definition.is_empty() || c.md5sum == "*" {
        return None;
    }
    let computed = TypeName::parse(&c.message_type).and_then(|name| {
        Registry::from_bundle(&name, &c.message_definition, Dialect::Ros1)?.md5(&name)
    });
    match computed {
        Ok(md5) if md5 == c.md5sum => None,
        Ok(md5) => Some(Problem::warning(
            ProblemKind::Schema,
            None,
            format!(
                "{what}: md5sum {} does not match its definition, whose md5sum is {md5}",
                c.md5sum
            ),
        )),
        Err(e) => Some(Problem::warning(
            ProblemKind::Schema,
            None,
            format!("{what}: the definition cannot be parsed: {e}"),
        )),
    }
}

#[cfg(feature = "mcap")]
fn check_mcap(input: &Input) -> Result<(u64, Vec<Problem>)> {
    if robolog_mcap::draft::detect_input(input)? == Some(robolog_mcap::Layout::Draft) {
        return check_draft_mcap(input);
    }
    // The summary first: read from the tail, before the walk over the whole file.
    #[cfg(feature = "cdr")]
    let hashes = mcap_type_hashes(input);
    let checked = robolog_mcap::check_input(input, robolog_mcap::CheckOptions::new())?;
    #[allow(unused_mut)]
    let mut problems = checked.problems;
    #[cfg(feature = "cdr")]
    problems.extend(hashes);
    Ok((checked.messages, problems))
}

/// A file in the draft layout: the ratified checks (which flag what differs), and the messages
/// a reader reads from it, in a second pass as a stream (a remote file is never held whole).
#[cfg(feature = "mcap")]
fn check_draft_mcap(input: &Input) -> Result<(u64, Vec<Problem>)> {
    use robolog_mcap::{Layout, McapError, ReadOptions, Record, StreamReader};
    use std::collections::BTreeMap;

    let mut problems =
        robolog_mcap::check_input(input, robolog_mcap::CheckOptions::new())?.problems;
    problems.push(Problem::info(
        ProblemKind::Unsupported,
        None,
        "pre-ratification draft layout (`recover` converts it to ratified MCAP)",
    ));
    let options = ReadOptions::default().layout(Layout::Draft);
    let mut reader = StreamReader::with_options(input.stream(0..input.len()), options);
    let mut messages = 0u64;
    let mut builder = crate::mcap_log::ChannelBuilder::default();
    let mut channels = BTreeMap::new();
    while let Some(record) = reader.next_record() {
        match record {
            Ok(Record::Message(_)) => messages += 1,
            Ok(Record::Schema(schema)) => {
                builder.schema(&schema);
            }
            Ok(Record::Channel(channel)) => {
                channels
                    .entry(channel.id)
                    .or_insert_with(|| builder.channel(&channel));
            }
            Ok(_) => {}
            Err(e @ McapError::Io { .. }) => return Err(e.into()),
            // The checks above say what is wrong.
            Err(_) => {}
        }
    }
    #[cfg(feature = "cdr")]
    problems.extend(crate::type_hash::problems(
        &channels.into_values().collect::<Vec<_>>(),
    ));
    #[cfg(not(feature = "cdr"))]
    drop(channels);
    Ok((messages, problems))
}

/// The type-hash findings of an MCAP file's ROS 2 channels (none when its channels cannot be
/// read: the structural problems say why).
#[cfg(all(feature = "mcap", feature = "cdr"))]
fn mcap_type_hashes(input: &Input) -> Vec<Problem> {
    let Ok(reader) = robolog_mcap::McapReader::open(input.clone()) else {
        return Vec::new();
    };
    let summary = reader.summary();
    let mut builder = crate::mcap_log::ChannelBuilder::default();
    for schema in summary.schemas.values() {
        builder.schema(schema);
    }
    let channels: Vec<_> = summary
        .channels
        .values()
        .map(|c| builder.channel(c))
        .collect();
    crate::type_hash::problems(&channels)
}

#[cfg(feature = "bddf")]
fn check_bddf(input: Input) -> (u64, Vec<Problem>) {
    use robolog_bddf::{BddfReader, IndexSource, ReadOptions, SeriesKind, identifier_hash};

    let mut problems = Vec::new();
    let strict = ReadOptions::new().strict(true);
    if let Err(e) = BddfReader::open_input(input.clone(), strict) {
        // The index is found from the end of the file: that is where a missing one is missed.
        problems.push(Problem::error(
            ProblemKind::Index,
            e.offset().or(Some(input.len())),
            format!("the index cannot be used: {e}"),
        ));
    }
    let reader = match BddfReader::open_input(input, ReadOptions::new()) {
        Ok(reader) => reader,
        Err(e) => {
            problems.push(fatal(e.problem_kind(), e.offset(), &e));
            return (0, problems);
        }
    };
    let mut stop = None;
    if let IndexSource::Scan {
        stopped: Some(stopped),
        ..
    } = reader.index_source()
    {
        stop = Some(stopped.to_string());
        problems.push(Problem::error(
            stopped.problem_kind(),
            stopped.offset(),
            format!("the blocks end early: {stopped}"),
        ));
    }
    for s in reader.series() {
        let hash = identifier_hash(s.identifier());
        if hash != s.identifier_hash() {
            problems.push(Problem::warning(
                ProblemKind::Checksum,
                Some(s.descriptor_offset()),
                format!(
                    "series {}: stored identifier hash {:016x}, computed {hash:016x}",
                    s.index(),
                    s.identifier_hash()
                ),
            ));
        }
        if let Some((first, _)) = s.time_span()
            && first < 0
        {
            problems.push(Problem::warning(
                ProblemKind::Time,
                Some(s.descriptor_offset()),
                format!(
                    "series {}: blocks timestamped before 1970 (from {first} ns)",
                    s.index()
                ),
            ));
        }
    }
    let mut read = 0u64;
    for block in reader.blocks() {
        match block {
            Ok(block) => {
                read += 1;
                let Some(series) = reader.series_by_index(block.series_index) else {
                    continue;
                };
                if matches!(series.kind(), SeriesKind::Pod(_))
                    && let Err(e) = series.decode_pod(&block)
                {
                    problems.push(fatal(e.problem_kind(), Some(block.offset), &e));
                }
            }
            // The walk's stop is reported above.
            Err(e) if stop.as_deref() == Some(e.to_string().as_str()) => {}
            Err(e) => problems.push(fatal(e.problem_kind(), e.offset(), &e)),
        }
    }
    (read, problems)
}
