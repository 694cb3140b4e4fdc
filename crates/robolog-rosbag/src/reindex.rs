//! Reindex and recover: turn an unindexed, killed or cut 2.0 bag, or any 1.2 bag, into a valid
//! indexed 2.0 bag holding every intact message.

use std::io::{BufWriter, Seek, Write};
use std::path::Path;

use robolog_framing::{AtomicFile, Bytes, Problem};

use crate::error::{Error, Result};
use crate::format::version::{Version, parse_version_line};
use crate::open::read_file_header;
use crate::scan::{ScanOptions, scan};
use crate::v12::linear;
use crate::writer::{WriteOptions, Writer};

/// What reindex keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReindexMode {
    /// Exactly what `rosbag reindex` keeps: the chunks before the first unterminated, cut or
    /// undecodable one. Its output matches ros_comm's byte for byte.
    #[default]
    RosCompatible,
    /// Also the complete messages of a cut, unterminated or corrupt chunk (rebuilt into a new,
    /// properly closed chunk), and whatever follows a corrupt chunk.
    Salvage,
}

/// How to reindex.
#[derive(Debug, Clone, Default)]
pub struct ReindexOptions {
    mode: ReindexMode,
    write: WriteOptions,
    max_chunk_size: Option<usize>,
}

impl ReindexOptions {
    /// ROS-compatible mode; 1.2 bags are converted to uncompressed 768 KiB chunks, as ROS does.
    pub fn new() -> Self {
        Self::default()
    }

    /// What to keep.
    pub fn mode(mut self, mode: ReindexMode) -> Self {
        self.mode = mode;
        self
    }

    /// Layout of the chunks reindex writes itself: all of them when converting a 1.2 bag,
    /// salvaged chunks otherwise (which keep their original compression; the options' bzip2
    /// level applies).
    pub fn write_options(mut self, options: WriteOptions) -> Self {
        self.write = options;
        self
    }

    /// The largest uncompressed chunk accepted (1 GiB by default).
    pub fn max_chunk_size(mut self, bytes: usize) -> Self {
        self.max_chunk_size = Some(bytes);
        self
    }
}

/// What reindex did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReindexReport {
    /// The input's format version.
    pub input_version: Version,
    /// Chunks in the output.
    pub chunks: u64,
    /// Messages in the output.
    pub messages: u64,
    /// Of those, messages recovered from cut, unterminated or corrupt chunks.
    pub salvaged_messages: u64,
    /// Complete messages found in the input but not written (ROS-compatible mode drops the
    /// messages of an unterminated chunk; messages on undefined connections are dropped).
    pub dropped_messages: u64,
    /// Records cut off by the end of the file or by damage (each lost at least one message or
    /// connection).
    pub incomplete_records: u64,
    /// Bytes that ended up in no complete record (a lower bound where compressed data could
    /// not be decoded).
    pub bytes_dropped: u64,
    /// What was found, where.
    pub problems: Vec<Problem>,
}

impl ReindexReport {
    /// True when anything of the input was lost.
    pub fn lost_data(&self) -> bool {
        self.dropped_messages > 0 || self.incomplete_records > 0 || self.bytes_dropped > 0
    }
}

/// Reindexes the bag in `input`, writing a valid indexed 2.0 bag to `output`.
///
/// ```
/// use std::io::Cursor;
/// use robolog_rosbag::{reindex, Bag, ReindexOptions, Writer};
///
/// let mut writer = Writer::new(Cursor::new(Vec::new()))?;
/// let conn = writer.add_connection("/a", "std_msgs/Empty", "d41d8cd98f00b204e9800998ecf8427e", "")?;
/// writer.write(conn, 1, b"")?;
/// writer.write(conn, 2, b"")?;
/// let bag = writer.finish()?.into_inner();
///
/// let mut out = Cursor::new(Vec::new());
/// let report = reindex(&bag.into(), &mut out, &ReindexOptions::new())?;
/// assert_eq!((report.messages, report.lost_data()), (2, false));
/// assert_eq!(Bag::open(out.into_inner())?.summary().message_count, 2);
/// # Ok::<(), robolog_rosbag::Error>(())
/// ```
pub fn reindex<W: Write + Seek>(
    input: &Bytes,
    output: W,
    options: &ReindexOptions,
) -> Result<ReindexReport> {
    let (version, line_len) = parse_version_line(input)?;
    let cap = options.max_chunk_size.unwrap_or(1 << 30);
    match version {
        Version::V1_2 => convert_v12(input, output, options),
        Version::V2_0 => {
            let (_, start) = read_file_header(input, line_len)?;
            let scanned = scan(
                input,
                start,
                ScanOptions {
                    salvage: options.mode == ReindexMode::Salvage,
                    cap,
                },
            );
            let mut writer = Writer::with_options(output, options.write.clone())?;
            for connection in scanned.connections.values() {
                writer.insert_connection(connection.clone())?;
                // Their records are inside the chunks that are copied.
                writer.mark_in_chunk(connection.id);
            }
            let mut messages = 0u64;
            for chunk in &scanned.chunks {
                messages += chunk.entries.len() as u64;
                match &chunk.salvaged {
                    None => {
                        let record = &input[chunk.pos..chunk.data.end];
                        let index = chunk
                            .index_consistent
                            .then(|| &input[chunk.data.end..chunk.end]);
                        writer.copy_chunk(record, index, &chunk.entries)?;
                    }
                    Some(content) => {
                        writer.write_chunk(chunk.compression, content, &chunk.entries)?;
                    }
                }
            }
            writer.finish()?;
            Ok(ReindexReport {
                input_version: version,
                chunks: scanned.chunks.len() as u64,
                messages,
                salvaged_messages: scanned.salvaged_messages,
                dropped_messages: scanned.dropped_messages,
                incomplete_records: scanned.incomplete_records,
                bytes_dropped: scanned.bytes_dropped,
                problems: scanned.problems,
            })
        }
    }
}

/// Converts a 1.2 bag to 2.0, as `rosbag reindex` does: every message in file order, one
/// connection per topic and definition.
fn convert_v12<W: Write + Seek>(
    input: &Bytes,
    output: W,
    options: &ReindexOptions,
) -> Result<ReindexReport> {
    let contents = linear(input, false)?;
    let mut writer = Writer::with_options(output, options.write.clone())?;
    for connection in &contents.connections {
        writer.insert_connection(connection.clone())?;
    }
    for m in &contents.messages {
        writer.write_at(m.conn, m.time, &input[m.data.clone()])?;
    }
    let (_, chunks) = writer.finish_with_count()?;
    Ok(ReindexReport {
        input_version: Version::V1_2,
        chunks,
        messages: contents.messages.len() as u64,
        salvaged_messages: 0,
        dropped_messages: contents.dropped_messages,
        incomplete_records: contents.incomplete_records,
        bytes_dropped: contents.bytes_dropped,
        problems: contents.problems,
    })
}

/// Reindexes the bag at `input` into a new file at `output`, which appears only once it is
/// complete (it may be the input's own path). The input is read into memory whole.
pub fn reindex_file(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
    options: &ReindexOptions,
) -> Result<ReindexReport> {
    let data = robolog_framing::read_file(input)?;
    let file = AtomicFile::create(output)?;
    let mut out = BufWriter::new(file);
    let report = reindex(&data, &mut out, options)?;
    let file = out.into_inner().map_err(|e| Error::Io(e.into_error()))?;
    file.commit()?;
    Ok(report)
}
