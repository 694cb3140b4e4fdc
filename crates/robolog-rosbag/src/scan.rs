//! The linear scan of a 2.0 bag held in memory: walk the top-level records from the file
//! header on, decode every chunk and collect its connections and messages. Used when a bag has
//! no index or a damaged one, and by reindex. The rules (framing, zero runs, limits, damaged
//! chunks, problems) are those of [`crate::linear`], which the stream reader follows too.
//!
//! In salvage mode the scan also keeps the complete records of a chunk that is cut short,
//! unterminated or corrupt, skips runs of zero bytes between records, and goes on after a
//! corrupt chunk. In ROS mode it stops at the first chunk `rosbag reindex` would stop at.

use std::collections::BTreeMap;
use std::ops::Range;

use robolog_framing::{Bytes, Problem, ProblemKind};

use crate::chunk::ChunkCompression;
use crate::connection::Connection;
use crate::error::Error;
use crate::format::time::RosTime;
use crate::linear::{Body, Frame, IndexEntry, Linear};

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
    let mut linear = Linear::new(start as u64, options.salvage, options.cap as u64);
    let mut chunks: Vec<ScannedChunk> = Vec::new();
    let len = file.len();
    loop {
        // Offsets in `file` are file offsets: the core's position indexes it.
        let pos = (linear.pos() as usize).min(len);
        match linear.frame(&file[pos..], true) {
            Frame::Need(_) | Frame::Skip(_) => {}
            Frame::End => break,
            Frame::Stop(stop) => {
                let after = len - (linear.pos() as usize).min(len);
                linear.stopped(stop, after as u64);
                break;
            }
            Frame::Indexed {
                chunk,
                end,
                consistent,
            } => {
                let Some(last) = chunks.last_mut().filter(|c| c.pos as u64 == chunk) else {
                    continue;
                };
                last.end = end as usize;
                last.index_consistent = consistent && last.salvaged.is_none();
                if !consistent && !options.salvage {
                    // rosbag reindex drops a chunk whose index records end early.
                    if let Some(dropped) = chunks.pop() {
                        linear.drop_messages(dropped.entries.len());
                    }
                    let at = chunk;
                    let stop = linear.stop_at(
                        at,
                        ProblemKind::Index,
                        "the chunk's index records are missing or incomplete".into(),
                        Error::IndexDamaged {
                            offset: at,
                            message: "the chunk's index records are missing or incomplete".into(),
                        },
                    );
                    let after = len - (linear.pos() as usize).min(len);
                    linear.stopped(stop, after as u64);
                    break;
                }
            }
            Frame::Record(head) => {
                let at = (linear.pos() as usize).min(len);
                let available = len - at;
                match &head.body {
                    Body::Chunk {
                        compression,
                        to_end,
                        ..
                    } => {
                        let take = if *to_end {
                            available.min(options.cap)
                        } else {
                            available.min(head.data_len as usize)
                        };
                        let compression = *compression;
                        let region = at..at + take;
                        let data = file.slice(region.clone());
                        if let Some(read) = linear.chunk(&head, &data) {
                            let salvaged = read.salvaged.then_some(read.content);
                            chunks.push(ScannedChunk {
                                pos: head.offset as usize,
                                compression,
                                data: region.clone(),
                                size: match &salvaged {
                                    Some(content) => content.len() as u32,
                                    None => match head.body {
                                        Body::Chunk { size, .. } => size,
                                        _ => 0,
                                    },
                                },
                                salvaged,
                                entries: read.entries,
                                end: region.end,
                                index_consistent: false,
                            });
                        }
                    }
                    Body::Connection { .. } => {
                        let take = available.min(head.data_len as usize);
                        linear.connection(&head, &file[at..at + take]);
                    }
                    Body::Skip(_) => {
                        let take = available.min(head.data_len as usize);
                        linear.skipped(&head, take as u64);
                    }
                }
            }
        }
    }
    let (connections, tally) = linear.into_parts();
    let mut out = ScanResult {
        connections,
        chunks,
        problems: tally.problems,
        dropped_messages: tally.dropped_messages,
        incomplete_records: tally.incomplete_records,
        bytes_dropped: tally.bytes_dropped,
        salvaged_messages: tally.salvaged_messages,
    };
    resolve_connections(&mut out);
    out
}

/// Drops the messages of connections that no CONNECTION record defines. A bag held in memory
/// may define a connection after its messages (the index section repeats the definitions), so
/// this waits for the end of the scan.
fn resolve_connections(out: &mut ScanResult) {
    let known = &out.connections;
    let mut unknown = 0u64;
    let mut problems = Vec::new();
    for chunk in &mut out.chunks {
        let before = chunk.entries.len();
        chunk.entries.retain(|e| known.contains_key(&e.conn));
        let dropped = before - chunk.entries.len();
        if dropped > 0 {
            unknown += dropped as u64;
            problems.push(crate::linear::undefined_connections(
                chunk.pos as u64,
                dropped,
            ));
        }
    }
    out.dropped_messages += unknown;
    out.problems.extend(problems);
}
