//! The linear scan of a 2.0 bag held in memory: walk the top-level records from the file
//! header on, decode every chunk and collect its connections and messages. Used when a bag has
//! no index or a damaged one, and by reindex.
//!
//! In salvage mode the scan also keeps the complete records of a chunk that is cut short,
//! unterminated or corrupt, skips runs of zero bytes between records, and goes on after a
//! corrupt chunk. In ROS mode it stops at the first chunk `rosbag reindex` would stop at.

use std::collections::BTreeMap;
use std::ops::Range;

use robolog_framing::{Bytes, Problem, ProblemKind};

use crate::chunk::{ChunkCompression, InnerRecord, InnerWalker, decode_chunk, salvage_chunk};
use crate::connection::Connection;
use crate::error::{Error, RecordKind};
use crate::format::framing::{RecordView, view_record};
use crate::format::records::{Header, parse_header};
use crate::format::time::RosTime;

/// One message found in a chunk: where it is in the uncompressed chunk data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IndexEntry {
    pub(crate) conn: u32,
    pub(crate) time: RosTime,
    pub(crate) offset: u32,
}

/// A chunk found by the scan.
#[derive(Debug, Clone)]
pub(crate) struct ScannedChunk {
    /// Offset of the CHUNK record.
    pub(crate) pos: usize,
    pub(crate) compression: ChunkCompression,
    /// The chunk's data bytes in the file (as much as exists).
    pub(crate) data: Range<usize>,
    /// Size of the usable uncompressed data.
    pub(crate) size: u32,
    /// For a salvaged chunk: its complete records, decoded.
    pub(crate) salvaged: Option<Bytes>,
    /// Messages in file order.
    pub(crate) entries: Vec<IndexEntry>,
    /// End of the chunk record and of the INDEX_DATA records that follow it.
    pub(crate) end: usize,
    /// True when the INDEX_DATA records after the chunk agree with its messages.
    pub(crate) index_consistent: bool,
}

impl ScannedChunk {
    pub(crate) fn time_range(&self) -> Option<(RosTime, RosTime)> {
        let mut it = self.entries.iter().map(|e| e.time);
        let first = it.next()?;
        Some(it.fold((first, first), |(lo, hi), t| (lo.min(t), hi.max(t))))
    }
}

pub(crate) fn counts_in_order(entries: &[IndexEntry]) -> Vec<(u32, u32)> {
    let mut counts: Vec<(u32, u32)> = Vec::new();
    for e in entries {
        match counts.iter_mut().find(|(c, _)| *c == e.conn) {
            Some((_, n)) => *n += 1,
            None => counts.push((e.conn, 1)),
        }
    }
    counts
}

/// What the scan found.
#[derive(Debug, Default)]
pub(crate) struct ScanResult {
    pub(crate) connections: BTreeMap<u32, Connection>,
    pub(crate) chunks: Vec<ScannedChunk>,
    pub(crate) problems: Vec<Problem>,
    /// Complete messages seen but not kept (in ROS mode, those of the chunks it drops).
    pub(crate) dropped_messages: u64,
    /// Records cut off by the end of the data or by damage.
    pub(crate) incomplete_records: u64,
    /// Bytes of data (uncompressed chunk content, or top-level file bytes) that ended up in no
    /// complete record. A lower bound when compressed data could not be decoded.
    pub(crate) bytes_dropped: u64,
    /// Messages recovered from damaged or unterminated chunks.
    pub(crate) salvaged_messages: u64,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct ScanOptions {
    pub(crate) salvage: bool,
    pub(crate) cap: usize,
}

/// Scans the top-level records of `file` from `start` (the first record after the file
/// header) to the end.
pub(crate) fn scan(file: &Bytes, start: usize, options: ScanOptions) -> ScanResult {
    let mut scanner = Scanner {
        file,
        options,
        out: ScanResult::default(),
    };
    scanner.run(start);
    scanner.resolve_connections();
    scanner.out
}

struct Scanner<'f> {
    file: &'f Bytes,
    options: ScanOptions,
    out: ScanResult,
}

/// The records of decoded chunk content, up to the first incomplete or malformed one.
pub(crate) struct Walked {
    pub(crate) entries: Vec<IndexEntry>,
    pub(crate) connections: Vec<Connection>,
    pub(crate) complete_len: usize,
    pub(crate) error: Option<Error>,
}

pub(crate) fn walk(content: &[u8]) -> Walked {
    let mut walked = Walked {
        entries: Vec::new(),
        connections: Vec::new(),
        complete_len: 0,
        error: None,
    };
    let mut walker = InnerWalker::new(content);
    loop {
        // Where the record about to be read starts: the end of the trusted prefix if it fails.
        let before = walker.complete_len();
        let Some(record) = walker.next() else {
            walked.complete_len = walker.complete_len();
            return walked;
        };
        let failure = match record {
            Ok(InnerRecord::Message {
                offset, conn, time, ..
            }) => match u32::try_from(offset) {
                Ok(offset) => {
                    walked.entries.push(IndexEntry { conn, time, offset });
                    None
                }
                Err(_) => Some(Error::malformed(
                    RecordKind::MessageData,
                    offset as u64,
                    "message beyond 4 GiB into a chunk",
                )),
            },
            Ok(InnerRecord::Connection {
                conn,
                topic,
                data,
                data_offset,
                ..
            }) => match Connection::parse(conn, topic, data, data_offset as u64) {
                Ok(c) => {
                    walked.connections.push(c);
                    None
                }
                Err(e) => Some(e),
            },
            Ok(InnerRecord::Other { .. }) => None,
            Err(e) => Some(e),
        };
        if let Some(e) = failure {
            walked.error = Some(e);
            walked.complete_len = before;
            return walked;
        }
    }
}

impl Scanner<'_> {
    fn problem(&mut self, problem: Problem) {
        self.out.problems.push(problem);
    }

    fn add_connections(&mut self, connections: Vec<Connection>) {
        for c in connections {
            self.out.connections.entry(c.id).or_insert(c);
        }
    }

    fn run(&mut self, start: usize) {
        let data = self.file.as_ref();
        let mut pos = start;
        while pos < data.len() {
            if self.options.salvage && data[pos..].starts_with(&[0, 0, 0, 0]) {
                let zeros = data[pos..].iter().take_while(|&&b| b == 0).count();
                self.problem(Problem::warning(
                    ProblemKind::Malformed,
                    pos as u64,
                    format!("skipped {zeros} zero bytes between records"),
                ));
                pos += zeros;
                continue;
            }
            let record = match view_record(&data[pos..], pos as u64) {
                Ok(record) => record,
                Err(e) => {
                    self.stop_at(
                        ProblemKind::Truncated,
                        pos,
                        format!("the file ends inside a record header ({e})"),
                    );
                    self.out.incomplete_records += 1;
                    return;
                }
            };
            let header = match parse_header(record.header, record.header_offset()) {
                Ok(header) => header,
                Err(e) => {
                    self.stop_at(e.problem_kind(), pos, format!("unreadable record: {e}"));
                    return;
                }
            };
            match header {
                Header::Chunk(chunk) => {
                    match self.chunk(pos, &record, chunk.compression, chunk.size) {
                        Some(next) => pos = next,
                        None => return,
                    }
                }
                Header::Other(op) => {
                    self.stop_at(
                        ProblemKind::Malformed,
                        pos,
                        format!("unknown record op {op:#04x}"),
                    );
                    return;
                }
                other => {
                    if !record.is_complete() {
                        self.stop_at(
                            ProblemKind::Truncated,
                            pos,
                            format!("the file ends inside a {}", other.kind()),
                        );
                        self.out.incomplete_records += 1;
                        return;
                    }
                    match other {
                        Header::Connection(c) => {
                            match Connection::parse(
                                c.conn,
                                c.topic,
                                record.data,
                                record.data_offset(),
                            ) {
                                Ok(conn) => self.add_connections(vec![conn]),
                                Err(e) => self.problem(Problem::warning(
                                    ProblemKind::Schema,
                                    pos as u64,
                                    e.to_string(),
                                )),
                            }
                        }
                        Header::IndexData(_) | Header::ChunkInfo(_) => {}
                        other => self.problem(Problem::warning(
                            ProblemKind::Malformed,
                            pos as u64,
                            format!("unexpected {} between chunks, skipped", other.kind()),
                        )),
                    }
                    pos += record.len();
                }
            }
        }
    }

    /// Reports that the scan stops at `pos`, dropping the rest of the file.
    fn stop_at(&mut self, kind: ProblemKind, pos: usize, why: String) {
        let rest = self.file.len() - pos;
        self.out.bytes_dropped += rest as u64;
        self.problem(Problem::error(
            kind,
            pos as u64,
            format!("{why}; the remaining {rest} bytes were not read"),
        ));
    }

    /// Handles a CHUNK record at `pos`; returns where to continue, or `None` to stop.
    fn chunk(
        &mut self,
        pos: usize,
        record: &RecordView<'_>,
        compression: &[u8],
        size: u32,
    ) -> Option<usize> {
        let Some(compression) = ChunkCompression::from_name(compression) else {
            let name = String::from_utf8_lossy(compression).into_owned();
            if record.is_complete() && self.options.salvage {
                self.out.bytes_dropped += record.len() as u64;
                self.problem(Problem::error(
                    ProblemKind::Unsupported,
                    pos as u64,
                    format!("chunk with unsupported compression {name:?} skipped"),
                ));
                return Some(pos + record.len());
            }
            self.stop_at(
                ProblemKind::Unsupported,
                pos,
                format!("chunk with unsupported compression {name:?}"),
            );
            return None;
        };
        let data_start = record.data_offset() as usize;
        if record.data_len == 0 {
            // The placeholder header of the chunk a recorder was writing when it stopped: its
            // data runs to the end of the file.
            let region = data_start..self.file.len();
            self.partial_chunk(
                pos,
                compression,
                region,
                ProblemKind::Truncated,
                "unterminated chunk (size 0)",
            );
            return None;
        }
        if !record.is_complete() {
            let region = data_start..data_start + record.data.len();
            self.partial_chunk(
                pos,
                compression,
                region,
                ProblemKind::Truncated,
                "chunk cut short by the end of the file",
            );
            return None;
        }
        let region = data_start..data_start + record.data.len();
        let chunk_end = pos + record.len();
        let content = match decode_chunk(
            compression,
            &self.file.slice(region.clone()),
            size,
            self.options.cap,
            pos as u64,
            Vec::new(),
        ) {
            Ok(content) => content,
            Err(e) => {
                if !self.options.salvage {
                    self.count_dropped(compression, region);
                    self.stop_at(e.problem_kind(), pos, format!("{e}"));
                    return None;
                }
                self.partial_chunk(pos, compression, region, e.problem_kind(), &format!("{e}"));
                return Some(chunk_end);
            }
        };
        let walked = walk(&content);
        if let Some(e) = &walked.error {
            if !self.options.salvage {
                self.out.dropped_messages += walked.entries.len() as u64;
                self.stop_at(
                    ProblemKind::Malformed,
                    pos,
                    format!("damaged record inside the chunk: {e}"),
                );
                return None;
            }
            let lost = content.len() - walked.complete_len;
            self.out.incomplete_records += 1;
            self.out.bytes_dropped += lost as u64;
            self.out.salvaged_messages += walked.entries.len() as u64;
            self.problem(Problem::error(ProblemKind::Malformed,
                pos as u64,
                format!(
                    "damaged record at byte {} of the chunk ({e}); kept the {} messages before it, dropped {lost} bytes",
                    walked.complete_len,
                    walked.entries.len()
                ),
            ));
            let kept = content.slice(..walked.complete_len);
            let (end, _) = self.index_records(chunk_end, &walked.entries);
            self.add_connections(walked.connections);
            self.out.chunks.push(ScannedChunk {
                pos,
                compression,
                data: region,
                size: kept.len() as u32,
                salvaged: Some(kept),
                entries: walked.entries,
                end,
                index_consistent: false,
            });
            return Some(end);
        }
        let (end, consistent) = self.index_records(chunk_end, &walked.entries);
        if !consistent {
            if !self.options.salvage {
                // rosbag reindex drops a chunk whose index records end early.
                self.out.dropped_messages += walked.entries.len() as u64;
                self.stop_at(
                    ProblemKind::Index,
                    pos,
                    "the chunk's index records are missing or incomplete".into(),
                );
                return None;
            }
            self.problem(Problem::warning(
                ProblemKind::Index,
                chunk_end as u64,
                "the index records after the chunk are missing or disagree with it",
            ));
        }
        self.add_connections(walked.connections);
        self.out.chunks.push(ScannedChunk {
            pos,
            compression,
            data: region,
            size,
            salvaged: None,
            entries: walked.entries,
            end,
            index_consistent: consistent,
        });
        Some(end)
    }

    /// Counts the complete messages of a chunk that is being dropped, for the report.
    fn count_dropped(&mut self, compression: ChunkCompression, region: Range<usize>) {
        let (content, _) = salvage_chunk(compression, &self.file[region], self.options.cap);
        let walked = walk(&content);
        self.out.dropped_messages += walked.entries.len() as u64;
        if walked.complete_len < content.len() {
            self.out.incomplete_records += 1;
        }
    }

    /// Salvages the complete records of a chunk whose data is cut short, unterminated or
    /// corrupt (salvage mode), or counts what is dropped (ROS mode).
    fn partial_chunk(
        &mut self,
        pos: usize,
        compression: ChunkCompression,
        region: Range<usize>,
        kind: ProblemKind,
        why: &str,
    ) {
        let (content, codec_error) =
            salvage_chunk(compression, &self.file[region.clone()], self.options.cap);
        let walked = walk(&content);
        let lost = content.len() - walked.complete_len;
        if lost > 0 || walked.error.is_some() {
            self.out.incomplete_records += 1;
        }
        let undecoded = match (&codec_error, compression) {
            (Some(_), ChunkCompression::None) | (None, _) => 0,
            (Some(_), _) if content.is_empty() => region.len(),
            (Some(_), _) => 0,
        };
        self.out.bytes_dropped += (lost + undecoded) as u64;
        let codec_note = codec_error.map(|e| format!(" ({e})")).unwrap_or_default();
        if !self.options.salvage {
            self.out.dropped_messages += walked.entries.len() as u64;
            self.problem(Problem::error(
                kind,
                pos as u64,
                format!(
                    "{why}{codec_note}: dropped with its {} complete messages",
                    walked.entries.len()
                ),
            ));
            return;
        }
        self.problem(Problem::error(kind,
            pos as u64,
            format!(
                "{why}{codec_note}: recovered {} complete messages, {lost} bytes of cut records lost",
                walked.entries.len()
            ),
        ));
        if walked.entries.is_empty() && walked.connections.is_empty() {
            return;
        }
        self.out.salvaged_messages += walked.entries.len() as u64;
        self.add_connections(walked.connections);
        let mut content = content;
        content.truncate(walked.complete_len);
        let size = content.len() as u32;
        self.out.chunks.push(ScannedChunk {
            pos,
            compression,
            data: region.clone(),
            size,
            salvaged: Some(Bytes::from(content)),
            entries: walked.entries,
            end: region.end,
            index_consistent: false,
        });
    }

    /// Skips the INDEX_DATA records that follow a chunk ending at `from`, and tells whether
    /// they agree with the chunk's messages. Returns where they end.
    fn index_records(&mut self, from: usize, entries: &[IndexEntry]) -> (usize, bool) {
        let data = self.file.as_ref();
        let mut pos = from;
        let mut indexed: Vec<(u32, u64)> = Vec::new();
        let mut well_formed = true;
        while pos < data.len() {
            let Ok(record) = view_record(&data[pos..], pos as u64) else {
                break;
            };
            let Ok(Header::IndexData(index)) = parse_header(record.header, record.header_offset())
            else {
                break;
            };
            if !record.is_complete() {
                break;
            }
            if index.ver != 1 || (record.data.len() as u64) < 12 * u64::from(index.count) {
                well_formed = false;
            }
            match indexed.iter_mut().find(|(c, _)| *c == index.conn) {
                Some((_, n)) => *n += u64::from(index.count),
                None => indexed.push((index.conn, u64::from(index.count))),
            }
            pos += record.len();
        }
        let mut expected: Vec<(u32, u64)> = counts_in_order(entries)
            .into_iter()
            .map(|(c, n)| (c, u64::from(n)))
            .collect();
        expected.sort_unstable();
        indexed.sort_unstable();
        (pos, well_formed && expected == indexed)
    }

    /// Drops the messages of connections that no CONNECTION record defines.
    fn resolve_connections(&mut self) {
        let known = &self.out.connections;
        let mut unknown = 0u64;
        let mut problems = Vec::new();
        for chunk in &mut self.out.chunks {
            let before = chunk.entries.len();
            chunk.entries.retain(|e| known.contains_key(&e.conn));
            let dropped = before - chunk.entries.len();
            if dropped > 0 {
                unknown += dropped as u64;
                problems.push(Problem::error(ProblemKind::Schema,
                    chunk.pos as u64,
                    format!("{dropped} messages on connections that no connection record defines were dropped"),
                ));
            }
        }
        self.out.dropped_messages += unknown;
        self.out.problems.extend(problems);
    }
}
