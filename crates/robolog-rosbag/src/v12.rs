//! Reading format 1.2: through its per-topic index (absolute offsets) when it has a valid one,
//! by a linear walk of the records otherwise (the 1.2 stream reader's walk). Either way the
//! file is read once, front to back: sliced when it is in memory, streamed otherwise (a remote
//! object, say), and only where each message lies is kept.

use std::collections::HashMap;
use std::ops::Range;

use robolog_framing::{Bytes, Problem, ProblemKind};
use robolog_query::{Input, InputStream};

use crate::connection::Connection;
use crate::error::{Error, RecordKind, Result};
use crate::format::framing::view_record;
use crate::format::time::RosTime;
use crate::format::v12::{V12Header, parse_v12_header};
use crate::open::IndexStatus;
use crate::query::Position;
use crate::stream::{StreamOptions, StreamReader};

/// One 1.2 message: its connection, time, and where its data is in the file.
#[derive(Debug, Clone)]
pub(crate) struct V12Message {
    pub(crate) conn: u32,
    pub(crate) time: RosTime,
    pub(crate) data: Range<u64>,
    /// Offset of the MSG_DATA record.
    pub(crate) offset: u64,
}

/// A 1.2 bag's connections and messages (in file order).
#[derive(Debug, Default)]
pub(crate) struct V12Contents {
    pub(crate) connections: Vec<Connection>,
    pub(crate) messages: Vec<V12Message>,
    pub(crate) status: Option<IndexStatus>,
    pub(crate) problems: Vec<Problem>,
    /// What a linear read lost to damage (see [`crate::StreamReport`]).
    pub(crate) dropped_messages: u64,
    pub(crate) incomplete_records: u64,
    pub(crate) bytes_dropped: u64,
}

/// A message definition: (type, md5, definition text).
type Definition = (Vec<u8>, Vec<u8>, Vec<u8>);

/// Maps each distinct (topic, type, md5, definition) to a synthetic connection id, and keeps
/// the current definition of each topic, as a linear reader must.
#[derive(Debug, Default)]
pub(crate) struct V12Definitions {
    /// topic -> (type, md5, definition)
    current: HashMap<Vec<u8>, Definition>,
    ids: HashMap<(Vec<u8>, Definition), u32>,
    pub(crate) connections: Vec<Connection>,
}

impl V12Definitions {
    pub(crate) fn define(&mut self, topic: &[u8], message_type: &[u8], md5: &[u8], def: &[u8]) {
        self.current.insert(
            topic.to_vec(),
            (message_type.to_vec(), md5.to_vec(), def.to_vec()),
        );
    }

    /// The connection of a message on `topic`, creating it on first use. A topic without a
    /// definition borrows that of another topic with the same type, as ROS does.
    pub(crate) fn connection_for(
        &mut self,
        topic: &[u8],
        message_type: Option<&[u8]>,
        offset: u64,
    ) -> Result<u32> {
        let (ty, md5, def) = match self.current.get(topic) {
            Some(found) => found.clone(),
            None => {
                let borrowed = message_type.and_then(|ty| {
                    self.current
                        .values()
                        .find(|(t, _, _)| t.as_slice() == ty)
                        .cloned()
                });
                let Some(found) = borrowed else {
                    return Err(Error::malformed(
                        RecordKind::MessageData,
                        offset,
                        format!(
                            "topic {} of type {} is not preceded by a message definition",
                            String::from_utf8_lossy(topic),
                            String::from_utf8_lossy(message_type.unwrap_or_default())
                        ),
                    ));
                };
                self.current.insert(topic.to_vec(), found.clone());
                found
            }
        };
        let key = (topic.to_vec(), (ty, md5, def));
        if let Some(&id) = self.ids.get(&key) {
            return Ok(id);
        }
        let id = self.connections.len() as u32;
        let (topic_bytes, (ty, md5, def)) = &key;
        self.connections.push(Connection::new(
            id,
            &String::from_utf8_lossy(topic_bytes),
            &String::from_utf8_lossy(ty),
            &String::from_utf8_lossy(md5),
            &String::from_utf8_lossy(def),
        ));
        self.ids.insert(key, id);
        Ok(id)
    }
}

/// Where the records of a 1.2 bag whose version line ends at `start` begin (after its file
/// header, when it has one), its index position (0 = none), and whether it has a file header.
/// `head` is the start of the file, its file header whole when it has one.
pub(crate) fn v12_layout(head: &[u8], start: usize) -> Result<(u64, u64, bool)> {
    if start >= head.len() {
        return Ok((start as u64, 0, false));
    }
    let record = view_record(&head[start..], start as u64)?;
    match parse_v12_header(record.header, record.header_offset())? {
        V12Header::FileHeader { index_pos } => {
            if !record.is_complete() {
                return Err(record.truncated(RecordKind::FileHeader));
            }
            Ok(((start + record.len()) as u64, index_pos, true))
        }
        _ => Ok((start as u64, 0, false)),
    }
}

fn read(offset: u64) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Read { offset, source }
}

/// Reads a 1.2 bag whose version line ends at `start`; `head` is the start of the file (see
/// [`v12_layout`]). `record_limit` bounds the header of a record read by position and a
/// record walked by the linear read (a record in memory is bounded by the file alone).
pub(crate) fn read_v12(
    input: &Input,
    head: &[u8],
    start: usize,
    strict: bool,
    record_limit: u64,
) -> Result<V12Contents> {
    let (records_start, index_pos, has_header) = v12_layout(head, start)?;
    if index_pos == 0 {
        if has_header && strict {
            return Err(Error::Unindexed);
        }
        let mut contents = linear(input, strict, record_limit)?;
        contents.status = Some(IndexStatus::Missing);
        return Ok(contents);
    }
    match indexed(input, records_start, index_pos, record_limit) {
        Ok(contents) => Ok(contents),
        Err(e) if strict || matches!(e, Error::Read { .. }) => Err(e),
        Err(e) => {
            let mut contents = linear(input, false, record_limit)?;
            let (offset, message) = match e {
                Error::IndexDamaged { offset, message } => (offset, message),
                other => (other.offset().unwrap_or(index_pos), other.to_string()),
            };
            contents.problems.insert(
                0,
                Problem::warning(
                    ProblemKind::Index,
                    offset,
                    format!("index damaged ({message}); read by a linear scan"),
                ),
            );
            contents.status = Some(IndexStatus::Damaged { offset, message });
            Ok(contents)
        }
    }
}

/// Walks every record in file order, keeping the messages before the first damage.
///
/// The walk is the 1.2 stream reader's, over the input streamed front to back: one set of
/// rules (zero runs, record framing, definitions, damage and its wording) for both ways of
/// reading a 1.2 bag. Each message is kept as where its data lies in the file (the stream
/// reader hands over a copy, which is dropped at once). Without `strict`, damage ends the
/// walk and is reported instead of returned. A record may be as long as the file when it is
/// in memory, and `record_limit` bytes otherwise.
pub(crate) fn linear(input: &Input, strict: bool, record_limit: u64) -> Result<V12Contents> {
    let limit = match input.in_memory() {
        Some(_) => input.len(),
        None => record_limit.min(input.len()),
    };
    let options = StreamOptions::new().recover(!strict).max_record_size(limit);
    let mut reader = StreamReader::with_options(input.stream(0..input.len()), options)?;
    let mut contents = V12Contents::default();
    while let Some(message) = reader.next_message()? {
        let Position::File(offset) = message.position else {
            continue; // a 1.2 bag has no chunks
        };
        // The reader has just read the message's data, the end of its record.
        let end = reader.position();
        let start = end - message.data.len() as u64;
        contents.messages.push(V12Message {
            conn: message.conn,
            time: RosTime::from_ns(message.time_ns)?,
            data: start..end,
            offset,
        });
    }
    let report = reader.report();
    contents.problems = report.problems.clone();
    contents.dropped_messages = report.dropped_messages;
    contents.incomplete_records = report.incomplete_records;
    contents.bytes_dropped = report.bytes_dropped;
    contents.connections = reader.into_v12_connections();
    Ok(contents)
}

/// A topic and its index entries (time, absolute position).
type TopicIndex = (Vec<u8>, Vec<(RosTime, u64)>);

/// What the first record an index entry points at is.
enum FirstRecord {
    /// Cut short, or its head is not there.
    Cut,
    /// A message definition: (topic, type, md5, definition).
    Definition(Vec<u8>, Definition),
    Other,
}

/// The message an index entry leads to, past the definitions before it.
struct Found {
    /// The message's topic, as the index of that topic in the index (`None`: not indexed).
    topic: Option<usize>,
    time: RosTime,
    data: Range<u64>,
    offset: u64,
}

/// What was found where one or more index entries point.
struct Target {
    first: FirstRecord,
    message: std::result::Result<Found, &'static str>,
}

/// Reads through the per-topic index, checking every entry against the record it points at.
///
/// The records are read in one pass in file order (streamed when the input is not in memory),
/// then the entries are judged topic by topic, as a linear reader meets their definitions.
fn indexed(
    input: &Input,
    records_start: u64,
    index_pos: u64,
    header_limit: u64,
) -> Result<V12Contents> {
    let damaged = |offset: u64, message: &str| Error::index_damaged(offset, message.to_owned());
    if index_pos < records_start || index_pos > input.len() {
        return Err(damaged(
            index_pos,
            &format!("index_pos {index_pos} is outside the file"),
        ));
    }
    let index_start = index_pos;
    let mut topics = topic_indexes(input, index_start, header_limit)?;
    // Connections in file order of their definitions, like a linear read.
    topics.sort_by_key(|(_, entries)| entries.first().map_or(u64::MAX, |e| e.1));
    let in_records = |at: u64| at >= records_start && at < index_start;
    let mut positions: Vec<u64> = topics
        .iter()
        .flat_map(|(_, entries)| entries.iter().map(|&(_, at)| at))
        .filter(|&at| in_records(at))
        .collect();
    positions.sort_unstable();
    positions.dedup();
    let targets = visit(
        input,
        records_start..index_start,
        &positions,
        &topics,
        header_limit,
    )?;
    // Only positions within the records were visited.
    let target = |at: u64| positions.binary_search(&at).ok().map(|i| &targets[i]);

    let mut defs = V12Definitions::default();
    let mut contents = V12Contents::default();
    for (rank, (topic, entries)) in topics.iter().enumerate() {
        let Some(&(_, def_pos)) = entries.first() else {
            continue;
        };
        let first = target(def_pos)
            .ok_or_else(|| damaged(def_pos, "index entry points outside the records"))?;
        let (message_type, md5, definition) = match &first.first {
            FirstRecord::Cut => return Err(damaged(def_pos, "index entry points at a cut record")),
            FirstRecord::Definition(def_topic, def) if def_topic == topic => def,
            _ => {
                return Err(damaged(
                    def_pos,
                    "the first index entry of a topic does not point at its message definition",
                ));
            }
        };
        defs.define(topic, message_type, md5, definition);
        let conn = defs
            .connection_for(topic, None, def_pos)
            .map_err(|e| damaged(def_pos, &e.to_string()))?;
        for &(time, at) in entries {
            let found = match target(at).map(|t| &t.message) {
                None => return Err(damaged(at, "index entry points outside the records")),
                Some(Err(why)) => return Err(damaged(at, why)),
                Some(Ok(found)) if found.topic == Some(rank) => found,
                Some(Ok(_)) => {
                    return Err(damaged(
                        at,
                        "index entry does not point at a message of its topic",
                    ));
                }
            };
            if found.time != time {
                contents.problems.push(Problem::warning(
                    ProblemKind::Index,
                    at,
                    "index entry time differs from the message's own time; the message's is used",
                ));
            }
            contents.messages.push(V12Message {
                conn,
                time: found.time,
                data: found.data.clone(),
                offset: found.offset,
            });
        }
    }
    contents.messages.sort_by_key(|m| m.offset);
    contents.connections = defs.connections;
    contents.status = Some(IndexStatus::Used);
    Ok(contents)
}

/// The topic index records from `index_start` to the end of the file.
fn topic_indexes(input: &Input, index_start: u64, header_limit: u64) -> Result<Vec<TopicIndex>> {
    let damaged = |offset: u64, message: String| Error::index_damaged(offset, message);
    let end = input.len();
    let mut heads = RecordHeads::new(input, index_start, end, header_limit);
    let mut topics: Vec<TopicIndex> = Vec::new();
    let mut pos = index_start;
    while pos < end {
        let head = match heads.head(pos)? {
            Ok(head) if head.data.end <= end => head,
            _ => return Err(damaged(pos, "index record cut short".into())),
        };
        let data = head.data.clone();
        let V12Header::IndexData { ver, topic, count } =
            parse_v12_header(head.header, pos + 4).map_err(|e| damaged(pos, e.to_string()))?
        else {
            return Err(damaged(pos, "expected a topic index record".into()));
        };
        if ver != 0 {
            return Err(damaged(
                pos,
                format!("topic index version {ver}, expected 0"),
            ));
        }
        let topic = topic.to_vec();
        let entries_len = 16 * u64::from(count);
        if data.end - data.start < entries_len {
            return Err(damaged(
                pos,
                format!(
                    "topic index holds {} bytes for {count} entries",
                    data.end - data.start
                ),
            ));
        }
        let entries = heads
            .bytes(data.start, entries_len)
            .map_err(read(data.start))?
            .chunks_exact(16)
            .map(|e| {
                let time = RosTime::from_le_bytes([e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]]);
                let at = u64::from_le_bytes([e[8], e[9], e[10], e[11], e[12], e[13], e[14], e[15]]);
                (time, at)
            })
            .collect();
        topics.push((topic, entries));
        pos = data.end;
    }
    Ok(topics)
}

/// What is at each of `positions` (sorted, within `records`): the record there, and the
/// message it leads to past any message definitions, as a reader following the entry finds.
fn visit(
    input: &Input,
    records: Range<u64>,
    positions: &[u64],
    topics: &[TopicIndex],
    header_limit: u64,
) -> Result<Vec<Target>> {
    let ranks: HashMap<&[u8], usize> = topics
        .iter()
        .enumerate()
        .map(|(rank, (topic, _))| (topic.as_slice(), rank))
        .collect();
    let mut heads = RecordHeads::new(input, records.start, records.end, header_limit);
    let mut targets = Vec::with_capacity(positions.len());
    for &at in positions {
        let mut first = FirstRecord::Cut;
        let mut pos = at;
        let message = loop {
            let head = match heads.head(pos)? {
                Ok(head) if head.data.end <= records.end => head,
                Err(HeadFault::TooLarge) => {
                    break Err("index entry points at a record whose header exceeds the limit");
                }
                _ => break Err("index entry points at a cut record"),
            };
            let Ok(header) = parse_v12_header(head.header, pos + 4) else {
                if pos == at {
                    first = FirstRecord::Other;
                }
                break Err("index entry does not point at a message of its topic");
            };
            if pos == at {
                first = match &header {
                    V12Header::MessageDefinition {
                        topic,
                        md5,
                        message_type,
                        definition,
                    } => FirstRecord::Definition(
                        topic.to_vec(),
                        (message_type.to_vec(), md5.to_vec(), definition.to_vec()),
                    ),
                    _ => FirstRecord::Other,
                };
            }
            match header {
                V12Header::MessageDefinition { .. } => pos = head.data.end,
                V12Header::MessageData { topic, time, .. } => {
                    break Ok(Found {
                        topic: ranks.get(topic).copied(),
                        time,
                        data: head.data.clone(),
                        offset: pos,
                    });
                }
                _ => break Err("index entry does not point at a message of its topic"),
            }
        };
        targets.push(Target { first, message });
    }
    Ok(targets)
}

/// A record's header and where its data lies (which may reach past the end of what holds it).
struct Head<'a> {
    header: &'a [u8],
    data: Range<u64>,
}

/// Why a record's head could not be read.
enum HeadFault {
    /// The region ends within it.
    Cut,
    /// Its header is longer than the limit (a length read by position is checked before
    /// anything is allocated for it).
    TooLarge,
}

/// Reads the heads of records (length, header, data length) in a region of an input, at
/// increasing offsets: an input in memory is sliced; another is streamed front to back, each
/// byte fetched once, the data between heads passed over. An offset behind the stream is read
/// by position.
struct RecordHeads<'a> {
    input: &'a Input,
    end: u64,
    stream: Option<InputStream>,
    /// Where the stream is.
    next: u64,
    buf: Vec<u8>,
    /// A read behind the stream.
    behind: Bytes,
    header_limit: u64,
}

impl<'a> RecordHeads<'a> {
    fn new(input: &'a Input, start: u64, end: u64, header_limit: u64) -> Self {
        let stream = match input.in_memory() {
            Some(_) => None,
            None => Some(input.stream(start..end)),
        };
        Self {
            input,
            end,
            stream,
            next: start,
            buf: Vec::new(),
            behind: Bytes::new(),
            header_limit,
        }
    }

    /// The head of the record at `pos`.
    fn head(&mut self, pos: u64) -> Result<std::result::Result<Head<'_>, HeadFault>> {
        let Some(header_at) = pos.checked_add(4).filter(|&at| at <= self.end) else {
            return Ok(Err(HeadFault::Cut));
        };
        let len = self.bytes(pos, 4).map_err(read(pos))?;
        let header_len = u64::from(u32::from_le_bytes([len[0], len[1], len[2], len[3]]));
        if header_len > self.header_limit {
            return Ok(Err(HeadFault::TooLarge));
        }
        if header_at + header_len + 4 > self.end {
            return Ok(Err(HeadFault::Cut));
        }
        let head = self
            .bytes(header_at, header_len + 4)
            .map_err(read(header_at))?;
        let (header, data_len) = head.split_at(header_len as usize);
        let data_len = u64::from(u32::from_le_bytes([
            data_len[0],
            data_len[1],
            data_len[2],
            data_len[3],
        ]));
        let data_start = header_at + header_len + 4;
        Ok(Ok(Head {
            header,
            data: data_start..data_start + data_len,
        }))
    }

    /// The `len` bytes at `at`, which lie within the region.
    fn bytes(&mut self, at: u64, len: u64) -> std::io::Result<&[u8]> {
        if let Some(file) = self.input.in_memory() {
            return Ok(&file[at as usize..(at + len) as usize]);
        }
        let Some(stream) = self.stream.as_mut().filter(|_| at >= self.next) else {
            self.behind = self.input.read(at..at + len)?;
            return Ok(&self.behind);
        };
        std::io::copy(
            &mut std::io::Read::take(&mut *stream, at - self.next),
            &mut std::io::sink(),
        )?;
        self.buf.clear();
        self.buf.resize(len as usize, 0);
        std::io::Read::read_exact(stream, &mut self.buf)?;
        self.next = at + len;
        Ok(&self.buf)
    }
}
