//! The rules for reading the top-level records of a 2.0 bag in file order, without I/O: record
//! framing, runs of zero bytes, length limits, chunks (decoded, salvaged or refused), the index
//! records after each chunk, and the problems and counts reported. Its two front ends hand it
//! bytes: the in-memory scan (`scan.rs`) the whole rest of the file, the stream reader
//! (`stream.rs`) what it has buffered. So both read a damaged bag alike.
//!
//! A front end asks [`Linear::frame`] what comes next at [`Linear::pos`], giving the bytes it
//! holds from there and whether they run to the end of the input, and does what the answer
//! says: read more ([`Frame::Need`]), consume a run of zeros ([`Frame::Skip`]), or consume a
//! record's head and hand its data to [`Linear::chunk`], [`Linear::connection`] or
//! [`Linear::skipped`] ([`Frame::Record`]).

use std::collections::BTreeMap;

use robolog_framing::{Bytes, LengthBound, Problem, ProblemKind, check_len};

use crate::chunk::{ChunkCompression, InnerRecord, InnerWalker, decode_chunk, salvage_chunk};
use crate::connection::Connection;
use crate::error::{Error, RecordKind};
use crate::format::framing::view_record;
use crate::format::records::{Header, IndexDataHeader, parse_header};
use crate::format::time::RosTime;

/// One message found in a chunk: where it is in the uncompressed chunk data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IndexEntry {
    pub(crate) conn: u32,
    pub(crate) time: RosTime,
    pub(crate) offset: u32,
}

/// Messages per connection, connections in order of their first message.
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

/// The problem for a run of `total` zero bytes from `start`, skipped between records or at the
/// end of the bag (where a recorder that was killed can leave preallocated space).
pub(crate) fn zero_run(start: u64, total: u64, at_end: bool) -> Problem {
    let what = if at_end {
        format!("the bag ends with {total} zero bytes")
    } else {
        format!("skipped {total} zero bytes between records")
    };
    Problem::warning(ProblemKind::Malformed, start, what)
}

/// The problem for `dropped` messages of the chunk at `chunk` whose connection no record defines.
pub(crate) fn undefined_connections(chunk: u64, dropped: usize) -> Problem {
    Problem::error(
        ProblemKind::Schema,
        chunk,
        format!("{dropped} messages on connections that no connection record defines were dropped"),
    )
}

/// What was found damaged or lost, the same for every front end.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Tally {
    pub(crate) problems: Vec<Problem>,
    /// Complete messages seen but not kept.
    pub(crate) dropped_messages: u64,
    /// Records cut off by the end of the data or by damage.
    pub(crate) incomplete_records: u64,
    /// Bytes (uncompressed chunk content, or top-level bytes) in no complete record; a lower
    /// bound when compressed data could not be decoded.
    pub(crate) bytes_dropped: u64,
    /// Messages recovered from damaged, cut or unterminated chunks.
    pub(crate) salvaged_messages: u64,
}

/// What a front end does next.
#[derive(Debug)]
pub(crate) enum Frame {
    /// Hold at least this many bytes from [`Linear::pos`] (or all there are) and ask again.
    Need(usize),
    /// Consume this many (zero) bytes and ask again.
    Skip(usize),
    /// Consume the record's head ([`Head::head_len`] bytes), then its data as its body says.
    Record(Head),
    /// The index records after a chunk ended at `end`: they agree with the chunk or not.
    Indexed {
        chunk: u64,
        end: u64,
        consistent: bool,
    },
    /// The input ended where a record could start.
    End,
    /// Reading ends here, because of damage: pass it to [`Linear::stopped`].
    Stop(Stop),
}

/// A record's head: its lengths and what its header says to do with its data.
#[derive(Debug)]
pub(crate) struct Head {
    /// Offset of the record.
    pub(crate) offset: u64,
    /// `header_len`, the header and `data_len`: the bytes before the data.
    pub(crate) head_len: usize,
    pub(crate) data_len: u32,
    pub(crate) body: Body,
}

impl Head {
    pub(crate) fn data_offset(&self) -> u64 {
        self.offset + self.head_len as u64
    }
}

/// What to do with a record's data.
#[derive(Debug)]
pub(crate) enum Body {
    /// Hold the data (`data_len` bytes, or when `to_end` all to the end of the input up to the
    /// limit) and pass it to [`Linear::chunk`].
    Chunk {
        compression: ChunkCompression,
        size: u32,
        to_end: bool,
    },
    /// Hold the data and pass it to [`Linear::connection`].
    Connection { conn: u32, topic: Vec<u8> },
    /// Skip the data (any length: nothing is held) and pass the count to [`Linear::skipped`].
    Skip(Skip),
}

/// Why a record's data is skipped.
#[derive(Debug)]
pub(crate) enum Skip {
    Index(IndexDataHeader),
    ChunkInfo,
    Unsupported(String),
    Unexpected(RecordKind),
}

/// Damage that ends the reading.
#[derive(Debug)]
pub(crate) struct Stop {
    /// The error a front end that does not recover returns.
    pub(crate) error: Error,
    /// Where the bytes that are not read start.
    at: u64,
    /// The problem to report; `None` when it is reported already.
    why: Option<(ProblemKind, String)>,
}

/// Where the index records after a chunk are checked against it.
#[derive(Debug)]
struct IndexCheck {
    chunk: u64,
    /// Where the chunk record ends, and where its last complete index record ends.
    from: u64,
    end: u64,
    expected: Vec<(u32, u64)>,
    indexed: Vec<(u32, u64)>,
    well_formed: bool,
    /// False for a salvaged chunk: its index records are skipped, not checked.
    report: bool,
}

impl IndexCheck {
    /// For a chunk whose messages were salvaged: its index records are skipped, not checked.
    fn unchecked(chunk: u64, end: u64) -> Self {
        Self {
            chunk,
            from: end,
            end,
            expected: Vec::new(),
            indexed: Vec::new(),
            well_formed: false,
            report: false,
        }
    }
}

/// A chunk read: its decoded records (the complete ones, when salvaged) and its messages.
#[derive(Debug)]
pub(crate) struct ChunkRead {
    pub(crate) content: Bytes,
    pub(crate) entries: Vec<IndexEntry>,
    /// Messages came from a damaged, cut or unterminated chunk.
    pub(crate) salvaged: bool,
}

/// The reading state of the top-level records.
#[derive(Debug)]
pub(crate) struct Linear {
    salvage: bool,
    limit: u64,
    pos: u64,
    /// A run of zero bytes in progress: where it started and its length so far.
    zeros: Option<(u64, u64)>,
    index: Option<IndexCheck>,
    /// Damage found while consuming a record's data, reported at the next frame.
    stop: Option<Stop>,
    connections: BTreeMap<u32, Connection>,
    tally: Tally,
}

/// What [`Linear::peek`] found, before any state changes.
enum Next {
    Need(usize),
    Zeros { n: usize, ends: bool, at_end: bool },
    Record(Head),
    End,
    Stop(Stop),
}

impl Linear {
    /// Reads from `pos` (the first record after the file header). With `salvage`, runs of zero
    /// bytes are skipped, damaged chunks give their complete records and reading goes on after
    /// them; without, the first damage stops it. `limit` bounds every record header and every
    /// record data held or decoded.
    pub(crate) fn new(pos: u64, salvage: bool, limit: u64) -> Self {
        Self {
            salvage,
            limit,
            pos,
            zeros: None,
            index: None,
            stop: None,
            connections: BTreeMap::new(),
            tally: Tally::default(),
        }
    }

    /// The offset of the next byte to hand over.
    pub(crate) fn pos(&self) -> u64 {
        self.pos
    }

    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// What was found since the last call.
    pub(crate) fn take_tally(&mut self) -> Tally {
        std::mem::take(&mut self.tally)
    }

    pub(crate) fn into_parts(self) -> (BTreeMap<u32, Connection>, Tally) {
        (self.connections, self.tally)
    }

    pub(crate) fn connections(&self) -> &BTreeMap<u32, Connection> {
        &self.connections
    }

    fn problem(&mut self, problem: Problem) {
        self.tally.problems.push(problem);
    }

    /// What comes next, given `buf`, the bytes from [`Linear::pos`] on (`eof`: all there are).
    pub(crate) fn frame(&mut self, buf: &[u8], eof: bool) -> Frame {
        loop {
            let next = match self.stop.take() {
                Some(stop) => Next::Stop(stop),
                None => self.peek(buf, eof),
            };
            let index_data = matches!(
                &next,
                Next::Record(Head {
                    body: Body::Skip(Skip::Index(_)),
                    ..
                })
            );
            // The index records after a chunk end where anything else starts.
            if !matches!(next, Next::Need(_))
                && !index_data
                && let Some(check) = self.index.take()
            {
                if let Next::Stop(stop) = next {
                    self.stop = Some(stop);
                }
                return self.verdict(check);
            }
            match next {
                Next::Need(n) => return Frame::Need(n),
                Next::Zeros { n, ends, at_end } => {
                    let (start, before) = self.zeros.unwrap_or((self.pos, 0));
                    let total = before + n as u64;
                    self.pos += n as u64;
                    if ends {
                        self.zeros = None;
                        self.problem(zero_run(start, total, at_end));
                    } else {
                        self.zeros = Some((start, total));
                    }
                    if n > 0 {
                        return Frame::Skip(n);
                    }
                }
                Next::Record(head) => {
                    self.pos += head.head_len as u64;
                    return Frame::Record(head);
                }
                Next::End => return Frame::End,
                Next::Stop(stop) => return Frame::Stop(stop),
            }
        }
    }

    fn verdict(&mut self, check: IndexCheck) -> Frame {
        let mut expected = check.expected;
        let mut indexed = check.indexed;
        expected.sort_unstable();
        indexed.sort_unstable();
        let consistent = check.well_formed && expected == indexed;
        if check.report && !consistent && self.salvage {
            self.problem(Problem::warning(
                ProblemKind::Index,
                check.from,
                "the index records after the chunk are missing or disagree with it",
            ));
        }
        Frame::Indexed {
            chunk: check.chunk,
            end: check.end,
            consistent,
        }
    }

    fn peek(&self, buf: &[u8], eof: bool) -> Next {
        let pos = self.pos;
        let in_run = self.zeros.is_some();
        if in_run || (self.salvage && buf.len() >= 4 && buf[..4] == [0; 4]) {
            let n = buf.iter().take_while(|&&b| b == 0).count();
            if n == buf.len() && !eof {
                return if n == 0 {
                    Next::Need(1)
                } else {
                    Next::Zeros {
                        n,
                        ends: false,
                        at_end: false,
                    }
                };
            }
            return Next::Zeros {
                n,
                ends: true,
                at_end: n == buf.len(),
            };
        }
        if buf.len() < 4 {
            if !eof {
                return Next::Need(4);
            }
            if buf.is_empty() {
                return Next::End;
            }
        } else {
            let header_len = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]);
            if let Err(e) = check_len(
                u64::from(header_len),
                LengthBound::Limit(self.limit),
                pos + 4,
                "record header",
            ) {
                let error = Error::framing(RecordKind::Record, e);
                return self.stop_here(ProblemKind::Malformed, format!("{error}"), error);
            }
            let need = 8 + header_len as usize;
            if buf.len() < need && !eof {
                return Next::Need(need);
            }
        }
        let record = match view_record(buf, pos) {
            Ok(record) => record,
            Err(e) => {
                return self.stop_here(
                    ProblemKind::Truncated,
                    format!("the bag ends inside a record header ({e})"),
                    e,
                );
            }
        };
        let header = match parse_header(record.header, record.header_offset()) {
            Ok(header) => header,
            Err(e) => {
                return self.stop_here(e.problem_kind(), format!("unreadable record: {e}"), e);
            }
        };
        let head_len = 8 + record.header.len();
        let data_len = record.data_len;
        let data_offset = record.data_offset();
        let body = match header {
            Header::Other(op) => {
                let why = format!("unknown record op {op:#04x}");
                let error = Error::malformed(RecordKind::Record, pos, why.clone());
                return self.stop_here(ProblemKind::Malformed, why, error);
            }
            Header::Chunk(chunk) => match ChunkCompression::from_name(chunk.compression) {
                Some(compression) => Body::Chunk {
                    compression,
                    size: chunk.size,
                    to_end: data_len == 0,
                },
                None => {
                    let name = String::from_utf8_lossy(chunk.compression).into_owned();
                    if !self.salvage {
                        let why = format!("chunk with unsupported compression {name:?}");
                        let error = Error::UnsupportedCompression { offset: pos, name };
                        return self.stop_here(ProblemKind::Unsupported, why, error);
                    }
                    Body::Skip(Skip::Unsupported(name))
                }
            },
            Header::Connection(c) => Body::Connection {
                conn: c.conn,
                topic: c.topic.to_vec(),
            },
            Header::IndexData(index) => Body::Skip(Skip::Index(index)),
            Header::ChunkInfo(_) => Body::Skip(Skip::ChunkInfo),
            other => Body::Skip(Skip::Unexpected(other.kind())),
        };
        if matches!(
            body,
            Body::Connection { .. } | Body::Chunk { to_end: false, .. }
        ) && let Err(e) = check_len(
            u64::from(data_len),
            LengthBound::Limit(self.limit),
            data_offset,
            "record data",
        ) {
            let error = Error::framing(RecordKind::Record, e);
            return self.stop_here(ProblemKind::Malformed, format!("{error}"), error);
        }
        Next::Record(Head {
            offset: pos,
            head_len,
            data_len,
            body,
        })
    }

    fn stop_here(&self, kind: ProblemKind, why: String, error: Error) -> Next {
        Next::Stop(Stop {
            error,
            at: self.pos,
            why: Some((kind, why)),
        })
    }

    /// Reports the damage that ends the reading; `after` is the count of bytes of the input
    /// after [`Linear::pos`]. Returns the error for a front end that does not recover.
    pub(crate) fn stopped(&mut self, stop: Stop, after: u64) -> Error {
        if let Some((kind, why)) = stop.why {
            let rest = self.pos.saturating_sub(stop.at) + after;
            if stop.error.is_truncation() {
                self.tally.incomplete_records += 1;
            }
            self.tally.bytes_dropped += rest;
            self.problem(Problem::error(
                kind,
                stop.at,
                format!("{why}; the remaining {rest} bytes were not read"),
            ));
        }
        stop.error
    }

    /// The damage that ends the reading at the record at `at`, found by a front end.
    pub(crate) fn stop_at(&self, at: u64, kind: ProblemKind, why: String, error: Error) -> Stop {
        Stop {
            error,
            at,
            why: Some((kind, why)),
        }
    }

    /// The error for a record whose data ends after `got` bytes.
    fn cut(&mut self, head: &Head, kind: RecordKind, got: u64) {
        let error = Error::framing(
            kind,
            robolog_framing::Error::new(
                head.data_offset(),
                "record data",
                robolog_framing::ErrorKind::LengthPastEnd {
                    length: u64::from(head.data_len),
                    available: got,
                },
            ),
        );
        self.stop = Some(Stop {
            at: head.offset,
            why: Some((
                ProblemKind::Truncated,
                format!("the bag ends inside a {kind}"),
            )),
            error,
        });
    }

    /// The data of a [`Body::Skip`] record was skipped: `got` bytes of it were there.
    pub(crate) fn skipped(&mut self, head: &Head, got: u64) {
        self.pos += got;
        let Body::Skip(why) = &head.body else {
            return;
        };
        let kind = match why {
            Skip::Index(_) => RecordKind::IndexData,
            Skip::ChunkInfo => RecordKind::ChunkInfo,
            Skip::Unsupported(_) => RecordKind::Chunk,
            Skip::Unexpected(kind) => *kind,
        };
        if got < u64::from(head.data_len) {
            self.cut(head, kind, got);
            return;
        }
        match why {
            Skip::Index(index) => {
                if let Some(check) = &mut self.index {
                    if index.ver != 1 || u64::from(head.data_len) < 12 * u64::from(index.count) {
                        check.well_formed = false;
                    }
                    match check.indexed.iter_mut().find(|(c, _)| *c == index.conn) {
                        Some((_, n)) => *n += u64::from(index.count),
                        None => check.indexed.push((index.conn, u64::from(index.count))),
                    }
                    check.end = self.pos;
                }
            }
            Skip::ChunkInfo => {}
            Skip::Unsupported(name) => {
                self.tally.bytes_dropped += head.head_len as u64 + got;
                self.problem(Problem::error(
                    ProblemKind::Unsupported,
                    head.offset,
                    format!("chunk with unsupported compression {name:?} skipped"),
                ));
            }
            Skip::Unexpected(kind) => self.problem(Problem::warning(
                ProblemKind::Malformed,
                head.offset,
                format!("unexpected {kind} between chunks, skipped"),
            )),
        }
    }

    /// The data of a [`Body::Connection`] record (shorter than declared if the input ended).
    pub(crate) fn connection(&mut self, head: &Head, data: &[u8]) {
        self.pos += data.len() as u64;
        let Body::Connection { conn, topic } = &head.body else {
            return;
        };
        if data.len() < head.data_len as usize {
            self.cut(head, RecordKind::Connection, data.len() as u64);
            return;
        }
        match Connection::parse(*conn, topic, data, head.data_offset()) {
            Ok(c) => {
                self.connections.entry(c.id).or_insert(c);
            }
            Err(e) => self.problem(Problem::warning(
                ProblemKind::Schema,
                head.offset,
                e.to_string(),
            )),
        }
    }

    fn add_connections(&mut self, connections: Vec<Connection>) {
        for c in connections {
            self.connections.entry(c.id).or_insert(c);
        }
    }

    /// Reports the messages of a chunk dropped because no connection record defines theirs.
    pub(crate) fn undefined_connections(&mut self, chunk: u64, dropped: usize) {
        if dropped > 0 {
            self.tally.dropped_messages += dropped as u64;
            self.problem(undefined_connections(chunk, dropped));
        }
    }

    /// Counts complete messages that are not kept.
    pub(crate) fn drop_messages(&mut self, dropped: usize) {
        self.tally.dropped_messages += dropped as u64;
    }

    /// The data of a [`Body::Chunk`] record: all of it, or as much as the input held (to its
    /// end, for an unterminated chunk). Returns its messages when the chunk is kept.
    pub(crate) fn chunk(&mut self, head: &Head, data: &Bytes) -> Option<ChunkRead> {
        self.pos += data.len() as u64;
        let Body::Chunk {
            compression,
            size,
            to_end,
        } = head.body
        else {
            return None;
        };
        let pos = head.offset;
        if to_end {
            // The placeholder header of the chunk a recorder was writing when it stopped: its
            // data runs to the end of the input.
            return self.partial_chunk(
                pos,
                compression,
                data,
                ProblemKind::Truncated,
                "unterminated chunk (size 0)",
            );
        }
        if data.len() < head.data_len as usize {
            return self.partial_chunk(
                pos,
                compression,
                data,
                ProblemKind::Truncated,
                "chunk cut short by the end of the bag",
            );
        }
        let cap = self.limit as usize;
        let content = match decode_chunk(compression, data, size, cap, pos, Vec::new()) {
            Ok(content) => content,
            Err(e) => {
                if !self.salvage {
                    let (content, _) = salvage_chunk(compression, data, cap);
                    let walked = walk(&content);
                    self.tally.dropped_messages += walked.entries.len() as u64;
                    if walked.complete_len < content.len() {
                        self.tally.incomplete_records += 1;
                    }
                    self.stop = Some(self.stop_at(pos, e.problem_kind(), format!("{e}"), e));
                    return None;
                }
                let kind = e.problem_kind();
                let read = self.salvaged(pos, compression, data, kind, &format!("{e}"));
                self.index = Some(IndexCheck::unchecked(pos, self.pos));
                return read;
            }
        };
        let walked = walk(&content);
        if let Some(e) = walked.error {
            if !self.salvage {
                self.tally.dropped_messages += walked.entries.len() as u64;
                let why = format!("damaged record inside the chunk: {e}");
                self.stop = Some(self.stop_at(pos, ProblemKind::Malformed, why, e));
                return None;
            }
            let lost = content.len() - walked.complete_len;
            self.tally.incomplete_records += 1;
            self.tally.bytes_dropped += lost as u64;
            self.tally.salvaged_messages += walked.entries.len() as u64;
            self.problem(Problem::error(
                ProblemKind::Malformed,
                pos,
                format!(
                    "damaged record at byte {} of the chunk ({e}); kept the {} messages before it, dropped {lost} bytes",
                    walked.complete_len,
                    walked.entries.len()
                ),
            ));
            self.add_connections(walked.connections);
            self.index = Some(IndexCheck::unchecked(pos, self.pos));
            return Some(ChunkRead {
                content: content.slice(..walked.complete_len),
                entries: walked.entries,
                salvaged: true,
            });
        }
        self.add_connections(walked.connections);
        self.index = Some(IndexCheck {
            chunk: pos,
            from: self.pos,
            end: self.pos,
            expected: counts_in_order(&walked.entries)
                .into_iter()
                .map(|(c, n)| (c, u64::from(n)))
                .collect(),
            indexed: Vec::new(),
            well_formed: true,
            report: true,
        });
        Some(ChunkRead {
            content,
            entries: walked.entries,
            salvaged: false,
        })
    }

    /// A chunk whose data the input cuts short: its complete records when salvaging, and the
    /// end of the reading either way.
    fn partial_chunk(
        &mut self,
        pos: u64,
        compression: ChunkCompression,
        data: &[u8],
        kind: ProblemKind,
        why: &str,
    ) -> Option<ChunkRead> {
        let read = self.salvaged(pos, compression, data, kind, why);
        self.stop = Some(Stop {
            error: Error::malformed(RecordKind::Chunk, pos, why.to_owned()),
            at: pos,
            why: None,
        });
        read
    }

    /// The complete records of a chunk that is cut short, unterminated or corrupt (when
    /// salvaging), or the count of what is dropped (otherwise).
    fn salvaged(
        &mut self,
        pos: u64,
        compression: ChunkCompression,
        data: &[u8],
        kind: ProblemKind,
        why: &str,
    ) -> Option<ChunkRead> {
        let (content, codec_error) = salvage_chunk(compression, data, self.limit as usize);
        let walked = walk(&content);
        let lost = content.len() - walked.complete_len;
        if lost > 0 || walked.error.is_some() {
            self.tally.incomplete_records += 1;
        }
        let undecoded = match (&codec_error, compression) {
            (Some(_), ChunkCompression::None) | (None, _) => 0,
            (Some(_), _) if content.is_empty() => data.len(),
            (Some(_), _) => 0,
        };
        self.tally.bytes_dropped += (lost + undecoded) as u64;
        let codec_note = codec_error.map(|e| format!(" ({e})")).unwrap_or_default();
        let n = walked.entries.len();
        if !self.salvage {
            self.tally.dropped_messages += n as u64;
            self.problem(Problem::error(
                kind,
                pos,
                format!("{why}{codec_note}: dropped with its {n} complete messages"),
            ));
            return None;
        }
        self.problem(Problem::error(
            kind,
            pos,
            format!(
                "{why}{codec_note}: recovered {n} complete messages, {lost} bytes of cut records lost"
            ),
        ));
        if walked.entries.is_empty() && walked.connections.is_empty() {
            return None;
        }
        self.tally.salvaged_messages += n as u64;
        self.add_connections(walked.connections);
        let mut content = content;
        content.truncate(walked.complete_len);
        Some(ChunkRead {
            content: Bytes::from(content),
            entries: walked.entries,
            salvaged: true,
        })
    }
}
