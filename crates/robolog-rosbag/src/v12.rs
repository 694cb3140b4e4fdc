//! Reading format 1.2: through its per-topic index (absolute offsets) when it has a valid one,
//! by a linear walk of the records otherwise (the 1.2 stream reader's walk, over the file's
//! bytes).

use std::collections::HashMap;
use std::ops::Range;

use robolog_framing::{Problem, ProblemKind};

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
    pub(crate) data: Range<usize>,
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

/// Where the records of a 1.2 bag start, and its index position (0 = none).
pub(crate) fn v12_layout(file: &[u8], start: usize) -> Result<(usize, u64, bool)> {
    if start >= file.len() {
        return Ok((start, 0, false));
    }
    let record = view_record(&file[start..], start as u64)?;
    match parse_v12_header(record.header, record.header_offset())? {
        V12Header::FileHeader { index_pos } => {
            if !record.is_complete() {
                return Err(record.truncated(RecordKind::FileHeader));
            }
            Ok((start + record.len(), index_pos, true))
        }
        _ => Ok((start, 0, false)),
    }
}

/// Reads a 1.2 bag whose version line ends at `start`.
pub(crate) fn read_v12(file: &[u8], start: usize, strict: bool) -> Result<V12Contents> {
    let (records_start, index_pos, has_header) = v12_layout(file, start)?;
    if index_pos == 0 {
        if has_header && strict {
            return Err(Error::Unindexed);
        }
        let mut contents = linear(file, strict)?;
        contents.status = Some(IndexStatus::Missing);
        return Ok(contents);
    }
    match indexed(file, records_start, index_pos) {
        Ok(contents) => Ok(contents),
        Err(e) if strict => Err(e),
        Err(e) => {
            let mut contents = linear(file, false)?;
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
/// The walk is the 1.2 stream reader's, over the file's bytes: one set of rules (zero runs,
/// record framing, definitions, damage and its wording) for both ways of reading a 1.2 bag. Each
/// message is kept as where its data lies in `file` (the stream reader hands over a copy, which
/// is dropped at once). Without `strict`, damage ends the walk and is reported instead of
/// returned.
pub(crate) fn linear(file: &[u8], strict: bool) -> Result<V12Contents> {
    // A record cannot be longer than the file: no other limit is needed in memory.
    let options = StreamOptions::new()
        .recover(!strict)
        .max_record_size(file.len() as u64);
    let mut reader = StreamReader::with_options(file, options)?;
    let mut contents = V12Contents::default();
    while let Some(message) = reader.next_message()? {
        let Position::File(offset) = message.position else {
            continue; // a 1.2 bag has no chunks
        };
        let data = data_range(file, offset, message.data.len()).ok_or_else(|| {
            Error::malformed(
                RecordKind::MessageData,
                offset,
                "the stream's message does not lie where its record is",
            )
        })?;
        contents.messages.push(V12Message {
            conn: message.conn,
            time: RosTime::from_ns(message.time_ns)?,
            data,
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

/// Where the data of the record at `offset` lies, if it is `len` bytes long there: after the
/// header length, the header and the data length.
fn data_range(file: &[u8], offset: u64, len: usize) -> Option<Range<usize>> {
    let at = usize::try_from(offset).ok()?;
    let header_len = file.get(at..at.checked_add(4)?)?;
    let header_len = u32::from_le_bytes(header_len.try_into().ok()?) as usize;
    let start = at.checked_add(8)?.checked_add(header_len)?;
    let end = start.checked_add(len)?;
    (end <= file.len()).then_some(start..end)
}

/// A topic and its index entries (time, absolute position).
type TopicIndex = (Vec<u8>, Vec<(RosTime, u64)>);

/// Reads through the per-topic index, checking every offset against the file.
fn indexed(file: &[u8], records_start: usize, index_pos: u64) -> Result<V12Contents> {
    let damaged = |offset: u64, message: String| Error::index_damaged(offset, message);
    let index_start = usize::try_from(index_pos)
        .ok()
        .filter(|&p| p >= records_start && p <= file.len())
        .ok_or_else(|| {
            damaged(
                index_pos,
                format!("index_pos {index_pos} is outside the file"),
            )
        })?;
    // (topic, entries of (time, pos))
    let mut topics: Vec<TopicIndex> = Vec::new();
    let mut pos = index_start;
    while pos < file.len() {
        let record = view_record(&file[pos..], pos as u64)
            .ok()
            .filter(|r| r.is_complete())
            .ok_or_else(|| damaged(pos as u64, "index record cut short".into()))?;
        let V12Header::IndexData { ver, topic, count } =
            parse_v12_header(record.header, record.header_offset())
                .map_err(|e| damaged(pos as u64, e.to_string()))?
        else {
            return Err(damaged(pos as u64, "expected a topic index record".into()));
        };
        if ver != 0 {
            return Err(damaged(
                pos as u64,
                format!("topic index version {ver}, expected 0"),
            ));
        }
        if (record.data.len() as u64) < 16 * u64::from(count) {
            return Err(damaged(
                pos as u64,
                format!(
                    "topic index holds {} bytes for {count} entries",
                    record.data.len()
                ),
            ));
        }
        let entries = record.data[..16 * count as usize]
            .chunks_exact(16)
            .map(|e| {
                let time = RosTime::from_le_bytes([e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]]);
                let at = u64::from_le_bytes([e[8], e[9], e[10], e[11], e[12], e[13], e[14], e[15]]);
                (time, at)
            })
            .collect();
        topics.push((topic.to_vec(), entries));
        pos += record.len();
    }
    let mut defs = V12Definitions::default();
    let mut contents = V12Contents::default();
    // Connections in file order of their definitions, like a linear read.
    topics.sort_by_key(|(_, entries)| entries.first().map_or(u64::MAX, |e| e.1));
    for (topic, entries) in &topics {
        let Some(&(_, def_pos)) = entries.first() else {
            continue;
        };
        let def_at = checked_pos(def_pos, records_start, index_start)
            .ok_or_else(|| damaged(def_pos, "index entry points outside the records".into()))?;
        let record = view_record(&file[def_at..index_start], def_at as u64)
            .ok()
            .filter(|r| r.is_complete())
            .ok_or_else(|| damaged(def_pos, "index entry points at a cut record".into()))?;
        match parse_v12_header(record.header, record.header_offset()) {
            Ok(V12Header::MessageDefinition {
                topic: def_topic,
                md5,
                message_type,
                definition,
            }) if def_topic == topic.as_slice() => {
                defs.define(topic, message_type, md5, definition)
            }
            _ => {
                return Err(damaged(
                    def_pos,
                    "the first index entry of a topic does not point at its message definition"
                        .into(),
                ));
            }
        }
        for &(time, at) in entries {
            let message = resolve(file, records_start, index_start, at, topic, &mut defs)
                .map_err(|why| damaged(at, why))?;
            if message.time != time {
                contents.problems.push(Problem::warning(
                    ProblemKind::Index,
                    at,
                    "index entry time differs from the message's own time; the message's is used",
                ));
            }
            contents.messages.push(message);
        }
    }
    contents.messages.sort_by_key(|m| m.offset);
    contents.connections = defs.connections;
    contents.status = Some(IndexStatus::Used);
    Ok(contents)
}

fn checked_pos(pos: u64, start: usize, end: usize) -> Option<usize> {
    usize::try_from(pos).ok().filter(|&p| p >= start && p < end)
}

/// Reads the message an index entry points at: skip MSG_DEF records, then a MSG_DATA on
/// `topic`.
fn resolve(
    file: &[u8],
    start: usize,
    end: usize,
    at: u64,
    topic: &[u8],
    defs: &mut V12Definitions,
) -> std::result::Result<V12Message, String> {
    let mut pos = checked_pos(at, start, end).ok_or("index entry points outside the records")?;
    loop {
        let record = view_record(&file[pos..end], pos as u64)
            .ok()
            .filter(|r| r.is_complete())
            .ok_or("index entry points at a cut record")?;
        match parse_v12_header(record.header, record.header_offset()).map_err(|e| e.to_string())? {
            V12Header::MessageDefinition { .. } => pos += record.len(),
            V12Header::MessageData {
                topic: t,
                message_type,
                time,
                ..
            } if t == topic => {
                let conn = defs
                    .connection_for(topic, message_type, pos as u64)
                    .map_err(|e| e.to_string())?;
                let data_start = record.data_offset() as usize;
                return Ok(V12Message {
                    conn,
                    time,
                    data: data_start..data_start + record.data.len(),
                    offset: pos as u64,
                });
            }
            _ => return Err("index entry does not point at a message of its topic".into()),
        }
    }
}
