//! The linear scan of a 2.0 bag: walk the top-level records from the file header on, decode
//! every chunk and collect its connections and messages. Used when a bag has no index or a
//! damaged one, and by reindex. The rules (framing, zero runs, limits, damaged chunks,
//! problems) are those of [`crate::linear`], which the stream reader follows too. The scan
//! reads a bag held in memory, or a stream through a window that holds the record being read
//! (reindex of a pipe or a remote object); both give the same chunks.
//!
//! In salvage mode the scan also keeps the complete records of a chunk that is cut short,
//! unterminated or corrupt, skips runs of zero bytes between records, and goes on after a
//! corrupt chunk. In ROS mode it stops at the first chunk `rosbag reindex` would stop at.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::ops::Range;

use robolog_framing::{Bytes, Problem, ProblemKind, StreamWindow, WindowError};
use robolog_query::Input;

use crate::chunk::ChunkCompression;
use crate::connection::Connection;
use crate::error::{Error, RecordKind, Result};
use crate::format::time::RosTime;
use crate::linear::{Body, Frame, IndexEntry, Linear, Skip, Tally};

/// A chunk found by the scan.
#[derive(Debug, Clone)]
pub(crate) struct ScannedChunk {
    /// Offset of the CHUNK record.
    pub(crate) pos: u64,
    pub(crate) compression: ChunkCompression,
    /// The chunk's data bytes in the file (as much as exists).
    pub(crate) data: Range<u64>,
    /// The chunk record as it is in the file: its head and `data`.
    pub(crate) record: Bytes,
    /// Size of the usable uncompressed data.
    pub(crate) size: u32,
    /// For a salvaged chunk: its complete records, decoded.
    pub(crate) salvaged: Option<Bytes>,
    /// Messages in file order.
    pub(crate) entries: Vec<IndexEntry>,
    /// End of the chunk record and of the INDEX_DATA records that follow it.
    pub(crate) end: u64,
    /// The INDEX_DATA records after the chunk (`data.end..end`), when they agree with its
    /// messages.
    pub(crate) index: Option<Bytes>,
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

impl ScanResult {
    /// What a scan found, before its chunks are added.
    pub(crate) fn new(connections: BTreeMap<u32, Connection>, tally: Tally) -> Self {
        Self {
            connections,
            chunks: Vec::new(),
            problems: tally.problems,
            dropped_messages: tally.dropped_messages,
            incomplete_records: tally.incomplete_records,
            bytes_dropped: tally.bytes_dropped,
            salvaged_messages: tally.salvaged_messages,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct ScanOptions {
    pub(crate) salvage: bool,
    pub(crate) cap: usize,
}

/// What the scan reads: a whole bag in memory, or a window over a stream.
pub(crate) trait ScanInput {
    type Error;
    /// The bytes from `pos` on, at least `want` of them unless the input ends first, and
    /// whether the input ends after them. The bytes before `pos` are not asked for again.
    fn view(&mut self, pos: u64, want: u64) -> Result<(&[u8], bool), Self::Error>;
    /// Bytes `start..end` (`start` at or after the last view's `pos`), cut at the input's end.
    fn bytes(&mut self, start: u64, end: u64) -> Result<Bytes, Self::Error>;
    /// Passes over the bytes up to `end` without holding them; where the input ended, if
    /// before.
    fn skip_to(&mut self, end: u64) -> Result<u64, Self::Error>;
    /// The input's length (a stream of unknown length is read to its end).
    fn len(&mut self) -> Result<u64, Self::Error>;
}

/// A bag in memory: everything is there, nothing fails.
pub(crate) struct InMemory<'a>(pub(crate) &'a Bytes);

impl ScanInput for InMemory<'_> {
    type Error = Infallible;

    fn view(&mut self, pos: u64, _want: u64) -> Result<(&[u8], bool), Infallible> {
        let at = usize::try_from(pos).unwrap_or(usize::MAX).min(self.0.len());
        Ok((&self.0[at..], true))
    }

    fn bytes(&mut self, start: u64, end: u64) -> Result<Bytes, Infallible> {
        let len = self.0.len();
        let end = usize::try_from(end).unwrap_or(usize::MAX).min(len);
        let start = usize::try_from(start).unwrap_or(usize::MAX).min(end);
        Ok(self.0.slice(start..end))
    }

    fn skip_to(&mut self, end: u64) -> Result<u64, Infallible> {
        Ok(end.min(self.0.len() as u64))
    }

    fn len(&mut self) -> Result<u64, Infallible> {
        Ok(self.0.len() as u64)
    }
}

/// Bytes passed over at a time by [`ScanInput::skip_to`] on a stream.
const SKIP_STEP: u64 = 1 << 20;

impl ScanInput for StreamWindow<'_> {
    type Error = Error;

    fn view(&mut self, pos: u64, want: u64) -> Result<(&[u8], bool), Error> {
        self.release(pos);
        let asked = pos.saturating_add(want);
        let end = self.fill(asked).map_err(window_error)?;
        Ok((self.slice(pos, end), end < asked))
    }

    fn bytes(&mut self, start: u64, end: u64) -> Result<Bytes, Error> {
        let end = self.fill(end).map_err(window_error)?;
        Ok(Bytes::copy_from_slice(self.slice(start, end)))
    }

    fn skip_to(&mut self, end: u64) -> Result<u64, Error> {
        let mut at = self.start();
        while at < end {
            self.release(at);
            let step = end.min(at.saturating_add(SKIP_STEP));
            let reached = self.fill(step).map_err(window_error)?;
            if reached < step {
                return Ok(reached);
            }
            at = reached;
        }
        Ok(end)
    }

    fn len(&mut self) -> Result<u64, Error> {
        self.end().map_err(window_error)
    }
}

/// A window's error as this crate's.
pub(crate) fn window_error(e: WindowError) -> Error {
    match e {
        WindowError::Io { offset, source } => Error::Read { offset, source },
        WindowError::TooLarge {
            offset,
            length,
            limit,
        } => Error::framing(
            RecordKind::Record,
            robolog_framing::Error::new(
                offset,
                "record",
                robolog_framing::ErrorKind::LengthOverLimit { length, limit },
            ),
        ),
    }
}

/// Scans the top-level records of `file` from `start` (the first record after the file
/// header) to the end.
pub(crate) fn scan(file: &Bytes, start: usize, options: ScanOptions) -> ScanResult {
    let mut chunks = Vec::new();
    let collect = |chunk: ScannedChunk, _: &BTreeMap<u32, Connection>| {
        chunks.push(chunk);
        Ok::<(), Infallible>(())
    };
    let Ok((connections, tally)) = scan_with(&mut InMemory(file), start as u64, options, collect);
    let mut out = ScanResult::new(connections, tally);
    out.chunks = chunks;
    resolve_connections(&mut out);
    out
}

/// [`scan`] of an input read by position: one in memory is scanned in place, another (a file
/// read by position, a remote object) streams through a window once, front to back, and is
/// never held whole. The chunks' records are not kept: readers read them again by position.
pub(crate) fn scan_input(input: &Input, start: usize, options: ScanOptions) -> Result<ScanResult> {
    if let Some(file) = input.in_memory() {
        return Ok(scan(file, start, options));
    }
    let len = input.len();
    let mut window = StreamWindow::new(input.stream(0..len), Some(len), window_limit(options.cap));
    let mut chunks = Vec::new();
    let collect = |mut chunk: ScannedChunk, _: &BTreeMap<u32, Connection>| {
        chunk.record = Bytes::new();
        chunks.push(chunk);
        Ok::<(), Error>(())
    };
    let (connections, tally) = scan_with(&mut window, start as u64, options, collect)?;
    let mut out = ScanResult::new(connections, tally);
    out.chunks = chunks;
    resolve_connections(&mut out);
    Ok(out)
}

/// The most a window over a bag holds: a record's head and its data, each up to the largest
/// chunk accepted, and a little read ahead.
pub(crate) fn window_limit(cap: usize) -> u64 {
    (cap as u64).saturating_mul(2).saturating_add(1 << 20)
}

/// Bytes viewed at a time when framing records.
const FRAME_VIEW: u64 = 64 << 10;

/// A chunk read, and the INDEX_DATA records after it as far as they were seen.
struct Pending {
    chunk: ScannedChunk,
    /// `None` once they are more than a chunk may be.
    index: Option<Vec<u8>>,
}

/// Scans the top-level records of `input` from `start` (the first record after the file
/// header), handing each chunk kept to `sink` once its index records have been read (with the
/// connections defined so far). Returns the connections and what was found.
pub(crate) fn scan_with<I, E>(
    input: &mut I,
    start: u64,
    options: ScanOptions,
    mut sink: impl FnMut(ScannedChunk, &BTreeMap<u32, Connection>) -> Result<(), E>,
) -> Result<(BTreeMap<u32, Connection>, Tally), E>
where
    I: ScanInput,
    E: From<I::Error>,
{
    let mut linear = Linear::new(start, options.salvage, options.cap as u64);
    let mut pending: Option<Pending> = None;
    let mut want = FRAME_VIEW;
    loop {
        let frame = {
            let (view, eof) = input.view(linear.pos(), want)?;
            linear.frame(view, eof)
        };
        want = FRAME_VIEW;
        match frame {
            Frame::Need(n) => want = want.max(n as u64),
            Frame::Skip(_) => {}
            Frame::End => break,
            Frame::Stop(stop) => {
                let after = input.len()?.saturating_sub(linear.pos());
                linear.stopped(stop, after);
                break;
            }
            Frame::Indexed {
                chunk,
                end,
                consistent,
            } => {
                let Some(mut done) = pending.take_if(|p| p.chunk.pos == chunk) else {
                    continue;
                };
                if !consistent && !options.salvage {
                    // rosbag reindex drops a chunk whose index records end early.
                    linear.drop_messages(done.chunk.entries.len());
                    let stop = linear.stop_at(
                        chunk,
                        ProblemKind::Index,
                        "the chunk's index records are missing or incomplete".into(),
                        Error::IndexDamaged {
                            offset: chunk,
                            message: "the chunk's index records are missing or incomplete".into(),
                        },
                    );
                    let after = input.len()?.saturating_sub(linear.pos());
                    linear.stopped(stop, after);
                    break;
                }
                done.chunk.end = end;
                if consistent && done.chunk.salvaged.is_none() {
                    done.chunk.index = done
                        .index
                        .filter(|index| {
                            end.checked_sub(done.chunk.data.end) == Some(index.len() as u64)
                        })
                        .map(Bytes::from);
                }
                sink(done.chunk, linear.connections())?;
            }
            Frame::Record(head) => {
                let at = linear.pos();
                let data_end = at.saturating_add(u64::from(head.data_len));
                match &head.body {
                    Body::Chunk {
                        compression,
                        size,
                        to_end,
                    } => {
                        if let Some(done) = pending.take() {
                            sink(done.chunk, linear.connections())?;
                        }
                        let end = if *to_end {
                            at.saturating_add(options.cap as u64)
                        } else {
                            data_end
                        };
                        let record = input.bytes(head.offset, end)?;
                        let data = record.slice(head.head_len.min(record.len())..);
                        let data_range = at..at + data.len() as u64;
                        let (compression, size) = (*compression, *size);
                        if let Some(read) = linear.chunk(&head, &data) {
                            let salvaged = read.salvaged.then_some(read.content);
                            pending = Some(Pending {
                                chunk: ScannedChunk {
                                    pos: head.offset,
                                    compression,
                                    size: match &salvaged {
                                        Some(content) => content.len() as u32,
                                        None => size,
                                    },
                                    salvaged,
                                    entries: read.entries,
                                    end: data_range.end,
                                    data: data_range,
                                    record,
                                    index: None,
                                },
                                index: Some(Vec::new()),
                            });
                        }
                    }
                    Body::Connection { .. } => {
                        let data = input.bytes(at, data_end)?;
                        linear.connection(&head, &data);
                    }
                    Body::Skip(skip) => {
                        let index =
                            pending
                                .as_mut()
                                .and_then(|p| p.index.as_mut())
                                .filter(|index| {
                                    matches!(skip, Skip::Index(_))
                                        && (index.len() as u64)
                                            .saturating_add(data_end - head.offset)
                                            <= options.cap as u64
                                });
                        let got = match index {
                            Some(index) => {
                                let record = input.bytes(head.offset, data_end)?;
                                index.extend_from_slice(&record);
                                (record.len() as u64).saturating_sub(head.head_len as u64)
                            }
                            None => {
                                if let Some(p) = pending.as_mut() {
                                    p.index = None;
                                }
                                input.skip_to(data_end)?.saturating_sub(at)
                            }
                        };
                        linear.skipped(&head, got);
                    }
                }
            }
        }
    }
    if let Some(done) = pending.take() {
        sink(done.chunk, linear.connections())?;
    }
    Ok(linear.into_parts())
}

/// Drops the messages of connections that no CONNECTION record defines. A bag held in memory
/// may define a connection after its messages (the index section repeats the definitions), so
/// this waits for the end of the scan.
pub(crate) fn resolve_connections(out: &mut ScanResult) {
    let known = &out.connections;
    let mut unknown = 0u64;
    let mut problems = Vec::new();
    for chunk in &mut out.chunks {
        let before = chunk.entries.len();
        chunk.entries.retain(|e| known.contains_key(&e.conn));
        let dropped = before - chunk.entries.len();
        if dropped > 0 {
            unknown += dropped as u64;
            problems.push(crate::linear::undefined_connections(chunk.pos, dropped));
        }
    }
    out.dropped_messages += unknown;
    out.problems.extend(problems);
}
