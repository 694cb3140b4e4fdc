//! Reading a bag from a stream (a pipe, stdin, a file still being written) without seeking:
//! every message in file order, including those of an unindexed, unterminated or cut bag, with
//! a report of what was damaged. A 2.0 bag is read by the rules of [`crate::linear`], which
//! the in-memory scan follows too, fed from a read-ahead buffer.

use std::collections::VecDeque;
use std::io::{self, Read};

use robolog_framing::{Bytes, LengthBound, Problem, check_len};

use crate::chunk::{ChunkCompression, InnerRecord, InnerWalker};
use crate::connection::Connection;
use crate::error::{Error, RecordKind, Result};
use crate::format::records::{Header, parse_header};
use crate::format::v12::{V12Header, parse_v12_header};
use crate::format::version::{MAX_LINE, Version, parse_version_line};
use crate::linear::{Body, ChunkRead, Frame, Head, Linear, Tally, zero_run};
use crate::query::{Message, Position};
use crate::v12::V12Definitions;

/// How a [`StreamReader`] treats its input.
#[derive(Debug, Clone)]
pub struct StreamOptions {
    max_record_size: u64,
    recover: bool,
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self {
            max_record_size: 1 << 30,
            recover: true,
        }
    }
}

impl StreamOptions {
    /// Records up to 1 GiB; damage is reported, not returned as an error.
    pub fn new() -> Self {
        Self::default()
    }

    /// The largest record (header or data, compressed or not) accepted. A stream has no known
    /// end to check lengths against, so this bounds what a corrupt length can make us buffer.
    pub fn max_record_size(mut self, bytes: u64) -> Self {
        self.max_record_size = bytes;
        self
    }

    /// With recovery on (the default), damage is described in [`StreamReader::report`], by
    /// the rules the in-memory scan of an unindexed bag ([`Bag::open`](crate::Bag::open),
    /// [`reindex`](crate::reindex) in salvage mode) follows, so both report the same problems at
    /// the same offsets: runs of zero bytes between records are skipped; a corrupt chunk gives
    /// its complete records and reading goes on after it; a chunk with an unknown compression
    /// is skipped; a cut or unterminated chunk gives its complete records and ends the stream;
    /// other damage ends it, and the rest of the input is then read (not kept) to count the
    /// bytes lost. With recovery off, the first damage is an error.
    pub fn recover(mut self, recover: bool) -> Self {
        self.recover = recover;
        self
    }
}

/// What a [`StreamReader`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamReport {
    /// Messages returned so far.
    pub messages: u64,
    /// Of those, messages from cut, unterminated or corrupt chunks.
    pub salvaged_messages: u64,
    /// Complete messages that could not be returned (on connections never defined).
    pub dropped_messages: u64,
    /// Records cut off by the end of the stream or by damage.
    pub incomplete_records: u64,
    /// Bytes that ended up in no complete record (a lower bound for compressed data).
    pub bytes_dropped: u64,
    /// Damage and oddities, with their offsets.
    pub problems: Vec<Problem>,
    /// True once the stream was read to its end without damage.
    pub clean_end: bool,
}

/// The input, with the bytes read ahead of the reader.
#[derive(Debug)]
struct Source<R> {
    inner: R,
    buf: Vec<u8>,
    /// The first byte of `buf` not yet consumed.
    start: usize,
    /// Offset of the byte after the last one read from `inner`.
    read: u64,
    eof: bool,
}

/// How much is read at a time ahead of a record head.
const READ_AHEAD: usize = 64 << 10;

impl<R: Read> Source<R> {
    fn new(inner: R) -> Self {
        Self {
            inner,
            buf: Vec::new(),
            start: 0,
            read: 0,
            eof: false,
        }
    }

    /// The bytes held, from [`Source::pos`] on.
    fn held(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// Offset of the first byte held.
    fn pos(&self) -> u64 {
        self.read - (self.buf.len() - self.start) as u64
    }

    fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.buf.len());
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
    }

    fn io_error(&self, source: io::Error) -> Error {
        Error::Read {
            offset: self.read,
            source,
        }
    }

    /// Holds at least `n` bytes, unless the input ends first. Memory grows with the bytes that
    /// arrive, not with `n`.
    fn fill(&mut self, n: usize) -> Result<()> {
        while self.buf.len() - self.start < n && !self.eof {
            if self.start > 0 {
                self.buf.drain(..self.start);
                self.start = 0;
            }
            let have = self.buf.len();
            self.buf.resize(have + READ_AHEAD, 0);
            let got = loop {
                match self.inner.read(&mut self.buf[have..]) {
                    Ok(got) => break got,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        self.buf.truncate(have);
                        return Err(self.io_error(e));
                    }
                }
            };
            self.buf.truncate(have + got);
            self.read += got as u64;
            self.eof = got == 0;
        }
        Ok(())
    }

    /// Up to `len` bytes: fewer only if the input ends first.
    fn take(&mut self, len: u64) -> Result<Vec<u8>> {
        let held = self
            .held()
            .len()
            .min(usize::try_from(len).unwrap_or(usize::MAX));
        let mut data = Vec::with_capacity(held.max(usize::try_from(len).unwrap_or(0).min(UPFRONT)));
        data.extend_from_slice(&self.held()[..held]);
        self.consume(held);
        let rest = len - held as u64;
        if rest > 0 && !self.eof {
            let got = (&mut self.inner)
                .take(rest)
                .read_to_end(&mut data)
                .map_err(|e| self.io_error(e))?;
            self.read += got as u64;
            self.eof = (got as u64) < rest;
        }
        Ok(data)
    }

    /// Skips up to `len` bytes without holding them; returns how many there were.
    fn skip(&mut self, len: u64) -> Result<u64> {
        let held = self
            .held()
            .len()
            .min(usize::try_from(len).unwrap_or(usize::MAX));
        self.consume(held);
        let rest = len - held as u64;
        let mut skipped = held as u64;
        if rest > 0 && !self.eof {
            let got = io::copy(&mut (&mut self.inner).take(rest), &mut io::sink())
                .map_err(|e| self.io_error(e))?;
            self.read += got;
            self.eof = got < rest;
            skipped += got;
        }
        Ok(skipped)
    }

    /// Reads to the end of the input; returns the count of bytes there were.
    fn drain(&mut self) -> Result<u64> {
        self.skip(u64::MAX)
    }
}

/// What a bounded read reserves before the bytes arrive.
const UPFRONT: usize = 1 << 20;

/// Reads a bag (2.0 or 1.2) from any `Read`, in file order.
///
/// ```
/// use std::io::Cursor;
/// use robolog_rosbag::{StreamReader, Writer};
///
/// let mut writer = Writer::new(Cursor::new(Vec::new()))?;
/// let conn = writer.add_connection("/a", "std_msgs/Empty", "d41d8cd98f00b204e9800998ecf8427e", "")?;
/// writer.write(conn, 5, b"")?;
/// let bag = writer.finish()?.into_inner();
///
/// let mut reader = StreamReader::new(&bag[..])?;
/// let message = reader.next().unwrap()?;
/// assert_eq!((message.time_ns, reader.connection(message.conn).unwrap().topic.as_str()), (5, "/a"));
/// assert!(reader.next().is_none() && reader.report().clean_end);
/// # Ok::<(), robolog_rosbag::Error>(())
/// ```
#[derive(Debug)]
pub struct StreamReader<R: Read> {
    source: Source<R>,
    version: Version,
    options: StreamOptions,
    /// The rules of a 2.0 bag's records, with its connections.
    linear: Linear,
    v12: V12Definitions,
    pending: VecDeque<Message>,
    report: StreamReport,
    done: bool,
}

impl<R: Read> StreamReader<R> {
    /// Starts reading with the default options: reads the version line (and the 2.0 file
    /// header).
    pub fn new(input: R) -> Result<Self> {
        Self::with_options(input, StreamOptions::default())
    }

    /// Starts reading with `options`.
    pub fn with_options(input: R, options: StreamOptions) -> Result<Self> {
        let mut source = Source::new(input);
        source.fill(MAX_LINE)?;
        let (version, line_len) = parse_version_line(source.held())?;
        source.consume(line_len);
        let mut reader = Self {
            source,
            version,
            linear: Linear::new(0, options.recover, options.max_record_size),
            options,
            v12: V12Definitions::default(),
            pending: VecDeque::new(),
            report: StreamReport::default(),
            done: false,
        };
        if version == Version::V2_0 {
            let (offset, header, data_len) = reader
                .read_head()?
                .ok_or_else(|| cut(line_len as u64, "file header", 4, 0))?;
            match parse_header(&header, offset + 4)? {
                Header::FileHeader(h) => {
                    if let Some(encryptor) = h.encryptor {
                        return Err(Error::Encrypted { encryptor });
                    }
                }
                other => {
                    return Err(Error::malformed(
                        RecordKind::FileHeader,
                        offset,
                        format!("expected the file header, found a {}", other.kind()),
                    ));
                }
            }
            let at = reader.source.pos();
            let skipped = reader.source.skip(u64::from(data_len))?;
            if skipped < u64::from(data_len) {
                return Err(cut(at, "record data", u64::from(data_len), skipped));
            }
            reader.linear = Linear::new(
                reader.source.pos(),
                reader.options.recover,
                reader.options.max_record_size,
            );
        }
        Ok(reader)
    }

    /// The format version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The connections seen so far, by id.
    pub fn connections(&self) -> impl Iterator<Item = &Connection> {
        self.linear
            .connections()
            .values()
            .chain(self.v12.connections.iter())
    }

    /// The connection with this id, if it has been seen.
    pub fn connection(&self, id: u32) -> Option<&Connection> {
        match self.version {
            Version::V2_0 => self.linear.connections().get(&id),
            Version::V1_2 => self.v12.connections.get(id as usize),
        }
    }

    /// What was read and what was damaged so far.
    pub fn report(&self) -> &StreamReport {
        &self.report
    }

    /// The connections of a 1.2 bag, by id (their index), for the in-memory reader that walks
    /// a 1.2 bag with this reader.
    pub(crate) fn into_v12_connections(self) -> Vec<Connection> {
        self.v12.connections
    }

    /// The offset of the next byte to read: after a 1.2 bag's message, the end of its record
    /// (each of its records holds one message, handed out as soon as it is read).
    pub(crate) fn position(&self) -> u64 {
        self.source.pos()
    }

    /// The next message, `Ok(None)` at the end.
    pub fn next_message(&mut self) -> Result<Option<Message>> {
        loop {
            if let Some(m) = self.pending.pop_front() {
                self.report.messages += 1;
                return Ok(Some(m));
            }
            if self.done {
                return Ok(None);
            }
            let stepped = match self.version {
                Version::V2_0 => self.step_v20(),
                Version::V1_2 => self.step_v12(),
            };
            self.add_tally();
            if let Err(e) = stepped {
                self.done = true;
                return Err(e);
            }
        }
    }

    /// Moves what the 2.0 rules found into the report.
    fn add_tally(&mut self) {
        let Tally {
            mut problems,
            dropped_messages,
            incomplete_records,
            bytes_dropped,
            salvaged_messages,
        } = self.linear.take_tally();
        let report = &mut self.report;
        report.problems.append(&mut problems);
        report.dropped_messages += dropped_messages;
        report.incomplete_records += incomplete_records;
        report.bytes_dropped += bytes_dropped;
        report.salvaged_messages += salvaged_messages;
    }

    /// Reads the top-level records of a 2.0 bag up to the next chunk or the end.
    fn step_v20(&mut self) -> Result<()> {
        loop {
            match self.linear.frame(self.source.held(), self.source.eof) {
                Frame::Need(n) => self.source.fill(n)?,
                Frame::Skip(n) => self.source.consume(n),
                Frame::Indexed { .. } => {}
                Frame::End => {
                    self.done = true;
                    self.report.clean_end = true;
                    return Ok(());
                }
                Frame::Stop(stop) => {
                    self.done = true;
                    if !self.options.recover {
                        return Err(stop.error);
                    }
                    let after = self.source.drain()?;
                    self.linear.stopped(stop, after);
                    return Ok(());
                }
                Frame::Record(head) => {
                    self.source.consume(head.head_len);
                    match &head.body {
                        Body::Chunk {
                            compression,
                            to_end,
                            ..
                        } => {
                            let len = if *to_end {
                                self.linear.limit()
                            } else {
                                u64::from(head.data_len)
                            };
                            let compression = *compression;
                            let data = Bytes::from(self.source.take(len)?);
                            if let Some(read) = self.linear.chunk(&head, &data) {
                                self.queue_chunk(&head, compression, read);
                            }
                            return Ok(());
                        }
                        Body::Connection { .. } => {
                            let data = self.source.take(u64::from(head.data_len))?;
                            self.linear.connection(&head, &data);
                        }
                        Body::Skip(_) => {
                            let got = self.source.skip(u64::from(head.data_len))?;
                            self.linear.skipped(&head, got);
                        }
                    }
                }
            }
        }
    }

    /// Queues the messages of a chunk whose connection has been defined.
    fn queue_chunk(&mut self, head: &Head, compression: ChunkCompression, read: ChunkRead) {
        // Uncompressed chunks hold their records as they are in the file.
        let base = (compression == ChunkCompression::None).then_some(head.data_offset());
        let mut undefined = 0;
        for entry in &read.entries {
            if !self.linear.connections().contains_key(&entry.conn) {
                undefined += 1;
                continue;
            }
            let Ok((InnerRecord::Message { data, .. }, _)) =
                InnerWalker::record_at(&read.content, entry.offset as usize)
            else {
                continue;
            };
            self.pending.push_back(Message {
                conn: entry.conn,
                time_ns: entry.time.to_ns(),
                data: read.content.slice(data),
                position: match base {
                    Some(base) => Position::File(base + u64::from(entry.offset)),
                    None => Position::Chunk {
                        chunk: head.offset,
                        offset: entry.offset,
                    },
                },
            });
        }
        self.linear.undefined_connections(head.offset, undefined);
    }

    /// Reads a record's `header_len`, header and `data_len` (the 2.0 file header, 1.2
    /// records): its offset, header and data length. `None` at the end of the input.
    fn read_head(&mut self) -> Result<Option<(u64, Vec<u8>, u32)>> {
        let offset = self.source.pos();
        self.source.fill(4)?;
        let held = self.source.held();
        let [a, b, c, d, ..] = *held else {
            return match held.len() {
                0 => Ok(None),
                n => Err(cut(offset, "record header length", 4, n as u64)),
            };
        };
        let header_len = check_len(
            u64::from(u32::from_le_bytes([a, b, c, d])),
            LengthBound::Limit(self.options.max_record_size),
            offset + 4,
            "record header",
        )
        .map_err(|e| Error::framing(RecordKind::Record, e))?;
        self.source.fill(8 + header_len)?;
        let held = self.source.held();
        if held.len() < 4 + header_len {
            let got = held.len() - 4;
            return Err(cut(
                offset + 4,
                "record header",
                header_len as u64,
                got as u64,
            ));
        }
        let Some(&[a, b, c, d]) = held.get(4 + header_len..8 + header_len) else {
            let got = held.len() - 4 - header_len;
            return Err(cut(
                offset + 4 + header_len as u64,
                "record data length",
                4,
                got as u64,
            ));
        };
        let header = held[4..4 + header_len].to_vec();
        self.source.consume(8 + header_len);
        Ok(Some((offset, header, u32::from_le_bytes([a, b, c, d]))))
    }

    /// Skips a run of zero bytes between 1.2 records, as the 2.0 rules do.
    fn skip_zeros(&mut self) -> Result<()> {
        self.source.fill(4)?;
        if !self.options.recover || !self.source.held().starts_with(&[0; 4]) {
            return Ok(());
        }
        let start = self.source.pos();
        let mut total = 0u64;
        loop {
            let held = self.source.held();
            let n = held.iter().take_while(|&&b| b == 0).count();
            let more = n == held.len();
            self.source.consume(n);
            total += n as u64;
            if !more {
                break;
            }
            self.source.fill(1)?;
            if self.source.held().is_empty() {
                break;
            }
        }
        let at_end = self.source.held().is_empty();
        self.report.problems.push(zero_run(start, total, at_end));
        Ok(())
    }

    /// Ends the stream because of damage at `offset`: an error without recovery, a report
    /// entry with it.
    fn damage(&mut self, offset: u64, error: Error) -> Result<()> {
        self.done = true;
        if !self.options.recover {
            return Err(error);
        }
        if error.is_truncation() {
            self.report.incomplete_records += 1;
        }
        let rest = self.source.pos().saturating_sub(offset) + self.source.drain()?;
        self.report.bytes_dropped += rest;
        self.report.problems.push(Problem::error(
            error.problem_kind(),
            offset,
            format!("{error}; the remaining {rest} bytes were not read"),
        ));
        Ok(())
    }

    /// Reads one 1.2 record and queues its message.
    fn step_v12(&mut self) -> Result<()> {
        self.skip_zeros()?;
        let offset = self.source.pos();
        let (offset, header, data_len) = match self.read_head() {
            Ok(Some(head)) => head,
            Ok(None) => {
                self.done = true;
                self.report.clean_end = true;
                return Ok(());
            }
            Err(e @ (Error::Framing { .. } | Error::Malformed { .. })) => {
                return self.damage(offset, e);
            }
            Err(e) => return Err(e),
        };
        let header = match parse_v12_header(&header, offset + 4) {
            Ok(header) => header,
            Err(e) => return self.damage(offset, e),
        };
        let data_at = self.source.pos();
        let data_len = u64::from(data_len);
        match header {
            V12Header::MessageDefinition {
                topic,
                md5,
                message_type,
                definition,
            } => {
                self.v12.define(topic, message_type, md5, definition);
                self.skip_v12(offset, data_at, data_len)
            }
            V12Header::MessageData {
                topic,
                message_type,
                time,
                ..
            } => {
                let conn = match self.v12.connection_for(topic, message_type, offset) {
                    Ok(conn) => Some(conn),
                    Err(e) => {
                        if !self.options.recover {
                            return Err(e);
                        }
                        self.report.dropped_messages += 1;
                        self.report.problems.push(Problem::error(
                            e.problem_kind(),
                            offset,
                            format!("{e}; message skipped"),
                        ));
                        None
                    }
                };
                let e = match check_len(
                    data_len,
                    LengthBound::Limit(self.options.max_record_size),
                    data_at,
                    "record data",
                ) {
                    Ok(_) => {
                        let data = self.source.take(data_len)?;
                        if (data.len() as u64) == data_len {
                            if let Some(conn) = conn {
                                self.pending.push_back(Message {
                                    conn,
                                    time_ns: time.to_ns(),
                                    data: Bytes::from(data),
                                    position: Position::File(offset),
                                });
                            }
                            return Ok(());
                        }
                        cut(data_at, "record data", data_len, data.len() as u64)
                    }
                    Err(e) => Error::framing(RecordKind::Record, e),
                };
                self.damage(offset, e)
            }
            V12Header::Other(op) => self.damage(
                offset,
                Error::malformed(
                    RecordKind::Record,
                    offset,
                    format!("unknown record op {op:#04x}"),
                ),
            ),
            _ => self.skip_v12(offset, data_at, data_len),
        }
    }

    /// Skips a 1.2 record's data; a cut one is damage.
    fn skip_v12(&mut self, offset: u64, data_at: u64, len: u64) -> Result<()> {
        let skipped = self.source.skip(len)?;
        if skipped < len {
            return self.damage(offset, cut(data_at, "record data", len, skipped));
        }
        Ok(())
    }
}

impl<R: Read> Iterator for StreamReader<R> {
    type Item = Result<Message>;

    fn next(&mut self) -> Option<Result<Message>> {
        self.next_message().transpose()
    }
}

fn cut(offset: u64, what: &'static str, needed: u64, available: u64) -> Error {
    Error::framing(
        RecordKind::Record,
        robolog_framing::Error::new(
            offset,
            what,
            robolog_framing::ErrorKind::UnexpectedEnd { needed, available },
        ),
    )
}
