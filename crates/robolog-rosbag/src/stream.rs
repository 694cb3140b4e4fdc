//! Reading a bag from a stream (a pipe, stdin, a file still being written) without seeking:
//! every message in file order, including those of an unindexed, unterminated or cut bag, with
//! a report of what was damaged.

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Read};

use robolog_framing::{Bytes, Problem, ProblemKind, StreamError, read_exact_bounded};

use crate::chunk::{ChunkCompression, InnerRecord, InnerWalker, decode_chunk, salvage_chunk};
use crate::connection::Connection;
use crate::error::{Error, RecordKind, Result};
use crate::format::records::{Header, parse_header};
use crate::format::v12::{V12Header, parse_v12_header};
use crate::format::version::{MAX_LINE, Version, parse_version_line};
use crate::query::{Message, Position};
use crate::scan::walk;
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

    /// With recovery on (the default), damage ends the stream and is described in
    /// [`StreamReader::report`]; the complete messages before it, including those of a cut or
    /// unterminated chunk, are returned. With it off, damage is an error.
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

/// Counts the bytes read.
#[derive(Debug)]
struct Source<R> {
    inner: R,
    pos: u64,
}

impl<R: Read> Read for Source<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: Read> Source<R> {
    /// Reads up to `buf.len()` bytes, stopping early only at the end of the stream.
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut got = 0;
        while got < buf.len() {
            match self.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(Error::Read {
                        offset: self.pos,
                        source,
                    });
                }
            }
        }
        Ok(got)
    }

    fn read_exact(
        &mut self,
        len: u64,
        limit: u64,
        what: &'static str,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        let offset = self.pos;
        read_exact_bounded(self, len, limit, offset, what, buf).map_err(|e| match e {
            StreamError::Framing(source) => Error::framing(RecordKind::Record, source),
            StreamError::Io { offset, source, .. } => Error::Read { offset, source },
        })
    }
}

/// One record read from the stream.
struct RawRecord {
    offset: u64,
    header: Vec<u8>,
    data_len: u32,
}

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
    connections: BTreeMap<u32, Connection>,
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
        let mut source = Source {
            inner: input,
            pos: 0,
        };
        let mut line = Vec::with_capacity(MAX_LINE);
        let mut byte = [0u8; 1];
        while line.len() < MAX_LINE && source.fill(&mut byte)? == 1 {
            line.push(byte[0]);
            if byte[0] == b'\n' {
                break;
            }
        }
        let (version, _) = parse_version_line(&line)?;
        let mut reader = Self {
            source,
            version,
            options,
            connections: BTreeMap::new(),
            v12: V12Definitions::default(),
            pending: VecDeque::new(),
            report: StreamReport::default(),
            done: false,
        };
        if version == Version::V2_0 {
            let record = reader
                .read_record()?
                .ok_or_else(|| cut(13, "file header", 4, 0))?;
            match parse_header(&record.header, record.offset + 4)? {
                Header::FileHeader(h) => {
                    if let Some(encryptor) = h.encryptor {
                        return Err(Error::Encrypted { encryptor });
                    }
                }
                other => {
                    return Err(Error::malformed(
                        RecordKind::FileHeader,
                        record.offset,
                        format!("expected the file header, found a {}", other.kind()),
                    ));
                }
            }
            reader.skip_data(u64::from(record.data_len))?;
        }
        Ok(reader)
    }

    /// The format version.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The connections seen so far, by id.
    pub fn connections(&self) -> impl Iterator<Item = &Connection> {
        self.connections.values().chain(self.v12.connections.iter())
    }

    /// The connection with this id, if it has been seen.
    pub fn connection(&self, id: u32) -> Option<&Connection> {
        match self.version {
            Version::V2_0 => self.connections.get(&id),
            Version::V1_2 => self.v12.connections.get(id as usize),
        }
    }

    /// What was read and what was damaged so far.
    pub fn report(&self) -> &StreamReport {
        &self.report
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
            if let Err(e) = self.step() {
                self.done = true;
                return Err(e);
            }
        }
    }

    /// Reads `header_len`, header and `data_len` of the next record. `None` at a clean end.
    fn read_record(&mut self) -> Result<Option<RawRecord>> {
        let offset = self.source.pos;
        let mut len = [0u8; 4];
        match self.source.fill(&mut len)? {
            0 => return Ok(None),
            4 => {}
            n => return Err(cut(offset, "record header length", 4, n as u64)),
        }
        let mut header_len = u32::from_le_bytes(len);
        if header_len == 0 && self.options.recover && offset > 13 {
            // A run of zero bytes between records (the hole an old `rosbag reindex` left):
            // skip to the next non-zero byte, which starts the next record.
            let mut zeros = 4u64;
            let mut byte = [0u8; 1];
            loop {
                if self.source.fill(&mut byte)? == 0 {
                    self.report.problems.push(Problem::warning(
                        ProblemKind::Malformed,
                        offset,
                        format!("the stream ends with {zeros} zero bytes"),
                    ));
                    return Ok(None);
                }
                if byte[0] != 0 {
                    break;
                }
                zeros += 1;
            }
            self.report.problems.push(Problem::warning(
                ProblemKind::Malformed,
                offset,
                format!("skipped {zeros} zero bytes between records"),
            ));
            len[0] = byte[0];
            let got = self.source.fill(&mut len[1..])?;
            if got < 3 {
                return Err(cut(
                    offset + zeros,
                    "record header length",
                    4,
                    got as u64 + 1,
                ));
            }
            header_len = u32::from_le_bytes(len);
            let record_at = offset + zeros;
            return self.finish_record(record_at, header_len).map(Some);
        }
        self.finish_record(offset, header_len).map(Some)
    }

    fn finish_record(&mut self, offset: u64, header_len: u32) -> Result<RawRecord> {
        let mut len = [0u8; 4];
        let mut header = Vec::new();
        self.source.read_exact(
            u64::from(header_len),
            self.options.max_record_size,
            "record header",
            &mut header,
        )?;
        let at = self.source.pos;
        match self.source.fill(&mut len)? {
            4 => {}
            n => return Err(cut(at, "record data length", 4, n as u64)),
        }
        Ok(RawRecord {
            offset,
            header,
            data_len: u32::from_le_bytes(len),
        })
    }

    fn skip_data(&mut self, len: u64) -> Result<()> {
        let at = self.source.pos;
        let copied = io::copy(&mut (&mut self.source).take(len), &mut io::sink())
            .map_err(|source| Error::Read { offset: at, source })?;
        if copied < len {
            return Err(cut(at, "record data", len, copied));
        }
        Ok(())
    }

    /// Ends the stream because of damage: an error without recovery, a report entry with it.
    fn damage(&mut self, offset: u64, error: Error) -> Result<()> {
        self.done = true;
        if !self.options.recover {
            return Err(error);
        }
        if error.is_truncation() {
            self.report.incomplete_records += 1;
        }
        self.report.problems.push(Problem::error(
            error.problem_kind(),
            offset,
            format!("{error}; reading stopped here"),
        ));
        Ok(())
    }

    /// Reads one top-level record and queues its messages.
    fn step(&mut self) -> Result<()> {
        let record = match self.read_record() {
            Ok(Some(record)) => record,
            Ok(None) => {
                self.done = true;
                self.report.clean_end = true;
                return Ok(());
            }
            Err(e @ (Error::Framing { .. } | Error::Malformed { .. })) => {
                let at = e.offset().unwrap_or(self.source.pos);
                return self.damage(at, e);
            }
            Err(e) => return Err(e),
        };
        match self.version {
            Version::V2_0 => self.step_v20(record),
            Version::V1_2 => self.step_v12(record),
        }
    }

    fn read_data(&mut self, len: u32, buf: &mut Vec<u8>) -> Result<()> {
        self.source.read_exact(
            u64::from(len),
            self.options.max_record_size,
            "record data",
            buf,
        )
    }

    fn step_v20(&mut self, record: RawRecord) -> Result<()> {
        let header = match parse_header(&record.header, record.offset + 4) {
            Ok(header) => header,
            Err(e) => return self.damage(record.offset, e),
        };
        let data_at = self.source.pos;
        match header {
            Header::Chunk(chunk) => {
                let Some(compression) = ChunkCompression::from_name(chunk.compression) else {
                    let name = String::from_utf8_lossy(chunk.compression).into_owned();
                    let e = Error::UnsupportedCompression {
                        offset: record.offset,
                        name,
                    };
                    if !self.options.recover {
                        return Err(e);
                    }
                    self.report.bytes_dropped += u64::from(record.data_len);
                    self.report.problems.push(Problem::error(
                        ProblemKind::Unsupported,
                        record.offset,
                        format!("{e}; chunk skipped"),
                    ));
                    return self.skip_data(u64::from(record.data_len));
                };
                let mut data = Vec::new();
                if record.data_len == 0 {
                    // An unterminated chunk: its data runs to the end of the stream.
                    let mut limited = (&mut self.source).take(self.options.max_record_size);
                    limited
                        .read_to_end(&mut data)
                        .map_err(|source| Error::Read {
                            offset: data_at,
                            source,
                        })?;
                    return self.partial_chunk(
                        record.offset,
                        data_at,
                        compression,
                        &data,
                        "unterminated chunk (size 0)",
                    );
                }
                match self.read_data(record.data_len, &mut data) {
                    Ok(()) => {}
                    Err(e) if e.is_truncation() => {
                        return self.partial_chunk(
                            record.offset,
                            data_at,
                            compression,
                            &data,
                            "chunk cut short by the end of the stream",
                        );
                    }
                    Err(e) => return self.damage(record.offset, e),
                }
                let data = Bytes::from(data);
                match decode_chunk(
                    compression,
                    &data,
                    chunk.size,
                    self.options.max_record_size as usize,
                    record.offset,
                    Vec::new(),
                ) {
                    Ok(content) => {
                        let base = (compression == ChunkCompression::None).then_some(data_at);
                        // A damaged record inside is reported; the next chunk is still read.
                        self.queue_chunk(record.offset, base, &content)?;
                        Ok(())
                    }
                    Err(e) => {
                        if !self.options.recover {
                            return Err(e);
                        }
                        let (content, _) = salvage_chunk(
                            compression,
                            &data,
                            self.options.max_record_size as usize,
                        );
                        self.report.problems.push(Problem::error(
                            e.problem_kind(),
                            record.offset,
                            format!("{e}; complete records salvaged"),
                        ));
                        let before = self.pending.len();
                        let base = (compression == ChunkCompression::None).then_some(data_at);
                        self.queue_chunk(record.offset, base, &Bytes::from(content))?;
                        self.report.salvaged_messages += (self.pending.len() - before) as u64;
                        Ok(())
                    }
                }
            }
            Header::Connection(c) => {
                let mut data = Vec::new();
                if let Err(e) = self.read_data(record.data_len, &mut data) {
                    return self.damage(record.offset, e);
                }
                match Connection::parse(c.conn, c.topic, &data, data_at) {
                    Ok(connection) => {
                        self.connections.entry(connection.id).or_insert(connection);
                    }
                    Err(e) => self.report.problems.push(Problem::warning(
                        ProblemKind::Schema,
                        record.offset,
                        e.to_string(),
                    )),
                }
                Ok(())
            }
            Header::Other(op) => self.damage(
                record.offset,
                Error::malformed(
                    RecordKind::Record,
                    record.offset,
                    format!("unknown record op {op:#04x}"),
                ),
            ),
            _ => match self.skip_data(u64::from(record.data_len)) {
                Ok(()) => Ok(()),
                Err(e) if e.is_truncation() => self.damage(record.offset, e),
                Err(e) => Err(e),
            },
        }
    }

    /// Queues the messages of decoded chunk content. Returns false when the content ended in
    /// a damaged record (reported; the messages before it are queued).
    fn queue_chunk(
        &mut self,
        chunk_pos: u64,
        file_base: Option<u64>,
        content: &Bytes,
    ) -> Result<bool> {
        let walked = walk(content);
        for connection in walked.connections {
            self.connections.entry(connection.id).or_insert(connection);
        }
        for entry in &walked.entries {
            if !self.connections.contains_key(&entry.conn) {
                self.report.dropped_messages += 1;
                self.report.problems.push(Problem::error(
                    ProblemKind::Schema,
                    chunk_pos,
                    format!(
                        "message on connection {} that no connection record defined; dropped",
                        entry.conn
                    ),
                ));
                continue;
            }
            let Ok((InnerRecord::Message { data, .. }, _)) =
                InnerWalker::record_at(content, entry.offset as usize)
            else {
                continue;
            };
            self.pending.push_back(Message {
                conn: entry.conn,
                time_ns: entry.time.to_ns(),
                data: content.slice(data),
                position: match file_base {
                    Some(base) => Position::File(base + u64::from(entry.offset)),
                    None => Position::Chunk {
                        chunk: chunk_pos,
                        offset: entry.offset,
                    },
                },
            });
        }
        if let Some(e) = walked.error {
            if !self.options.recover {
                return Err(e);
            }
            let lost = content.len() - walked.complete_len;
            self.report.incomplete_records += 1;
            self.report.bytes_dropped += lost as u64;
            self.report.problems.push(Problem::error(
                ProblemKind::Malformed,
                chunk_pos,
                format!(
                    "damaged record at byte {} of the chunk ({e}); {lost} bytes dropped",
                    walked.complete_len
                ),
            ));
            return Ok(false);
        }
        Ok(true)
    }

    fn partial_chunk(
        &mut self,
        chunk_pos: u64,
        data_at: u64,
        compression: ChunkCompression,
        data: &[u8],
        why: &str,
    ) -> Result<()> {
        self.done = true;
        if !self.options.recover {
            return Err(Error::malformed(
                RecordKind::Chunk,
                chunk_pos,
                why.to_owned(),
            ));
        }
        let (content, codec_error) =
            salvage_chunk(compression, data, self.options.max_record_size as usize);
        let content = Bytes::from(content);
        let before = self.pending.len();
        let base = (compression == ChunkCompression::None).then_some(data_at);
        let complete = self.queue_chunk(chunk_pos, base, &content)?;
        let salvaged = (self.pending.len() - before) as u64;
        self.report.salvaged_messages += salvaged;
        if complete {
            // The content ended exactly at a record boundary, or a record was cut: count the
            // cut one (queue_chunk counted damaged ones already).
            let walked_len = walk(&content).complete_len;
            if walked_len < content.len() {
                self.report.incomplete_records += 1;
                self.report.bytes_dropped += (content.len() - walked_len) as u64;
            }
        }
        let codec_note = codec_error.map(|e| format!(" ({e})")).unwrap_or_default();
        self.report.problems.push(Problem::error(
            ProblemKind::Truncated,
            chunk_pos,
            format!("{why}{codec_note}: recovered {salvaged} complete messages"),
        ));
        Ok(())
    }

    fn step_v12(&mut self, record: RawRecord) -> Result<()> {
        let header = match parse_v12_header(&record.header, record.offset + 4) {
            Ok(header) => header,
            Err(e) => return self.damage(record.offset, e),
        };
        match header {
            V12Header::MessageDefinition {
                topic,
                md5,
                message_type,
                definition,
            } => {
                self.v12.define(topic, message_type, md5, definition);
                self.skip_data(u64::from(record.data_len))
                    .or_else(|e| self.damage(record.offset, e))
            }
            V12Header::MessageData {
                topic,
                message_type,
                time,
                ..
            } => {
                let conn = match self.v12.connection_for(topic, message_type, record.offset) {
                    Ok(conn) => Some(conn),
                    Err(e) => {
                        if !self.options.recover {
                            return Err(e);
                        }
                        self.report.dropped_messages += 1;
                        self.report.problems.push(Problem::error(
                            e.problem_kind(),
                            record.offset,
                            format!("{e}; message skipped"),
                        ));
                        None
                    }
                };
                let mut data = Vec::new();
                if let Err(e) = self.read_data(record.data_len, &mut data) {
                    return self.damage(record.offset, e);
                }
                if let Some(conn) = conn {
                    self.pending.push_back(Message {
                        conn,
                        time_ns: time.to_ns(),
                        data: Bytes::from(data),
                        position: Position::File(record.offset),
                    });
                }
                Ok(())
            }
            V12Header::Other(op) => self.damage(
                record.offset,
                Error::malformed(
                    RecordKind::Record,
                    record.offset,
                    format!("unknown record op {op:#04x}"),
                ),
            ),
            _ => self
                .skip_data(u64::from(record.data_len))
                .or_else(|e| self.damage(record.offset, e)),
        }
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
