//! The typed record headers of format 2.0.

use crate::error::{Error, RecordKind, Result};
use crate::format::fields::{Field, for_each_field, required};
use crate::format::framing::{
    OP_CHUNK, OP_CHUNK_INFO, OP_CONNECTION, OP_FILE_HEADER, OP_INDEX_DATA, OP_MSG_DATA,
};
use crate::format::time::RosTime;

/// FILE_HEADER (op 0x03).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileHeader {
    pub(crate) index_pos: u64,
    pub(crate) conn_count: u32,
    pub(crate) chunk_count: u32,
    pub(crate) encryptor: Option<String>,
}

/// CHUNK (op 0x05) header; the record data is the compressed chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChunkHeader<'a> {
    pub(crate) compression: &'a [u8],
    pub(crate) size: u32,
}

/// CONNECTION (op 0x07) header; the record data is the connection header block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnectionHeader<'a> {
    pub(crate) conn: u32,
    pub(crate) topic: &'a [u8],
}

/// MSG_DATA (op 0x02) header; the record data is the serialized message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MessageHeader {
    pub(crate) conn: u32,
    pub(crate) time: RosTime,
}

/// INDEX_DATA (op 0x04) header, version 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IndexDataHeader {
    pub(crate) ver: u32,
    pub(crate) conn: u32,
    pub(crate) count: u32,
}

/// CHUNK_INFO (op 0x06) header, version 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChunkInfoHeader {
    pub(crate) ver: u32,
    pub(crate) chunk_pos: u64,
    pub(crate) start_time: RosTime,
    pub(crate) end_time: RosTime,
    pub(crate) count: u32,
}

/// Any top-level or chunk-level record header of format 2.0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Header<'a> {
    FileHeader(FileHeader),
    Chunk(ChunkHeader<'a>),
    Connection(ConnectionHeader<'a>),
    MessageData(MessageHeader),
    IndexData(IndexDataHeader),
    ChunkInfo(ChunkInfoHeader),
    /// A known op that has no meaning in format 2.0 (MSG_DEF), or an unknown one.
    Other(u8),
}

impl Header<'_> {
    pub(crate) fn kind(&self) -> RecordKind {
        match self {
            Header::FileHeader(_) => RecordKind::FileHeader,
            Header::Chunk(_) => RecordKind::Chunk,
            Header::Connection(_) => RecordKind::Connection,
            Header::MessageData(_) => RecordKind::MessageData,
            Header::IndexData(_) => RecordKind::IndexData,
            Header::ChunkInfo(_) => RecordKind::ChunkInfo,
            Header::Other(op) => RecordKind::from_op(*op).unwrap_or(RecordKind::Record),
        }
    }
}

#[derive(Default)]
struct Collected<'a> {
    op: Option<Field<'a>>,
    index_pos: Option<Field<'a>>,
    conn_count: Option<Field<'a>>,
    chunk_count: Option<Field<'a>>,
    encryptor: Option<Field<'a>>,
    compression: Option<Field<'a>>,
    size: Option<Field<'a>>,
    conn: Option<Field<'a>>,
    topic: Option<Field<'a>>,
    time: Option<Field<'a>>,
    ver: Option<Field<'a>>,
    count: Option<Field<'a>>,
    chunk_pos: Option<Field<'a>>,
    start_time: Option<Field<'a>>,
    end_time: Option<Field<'a>>,
}

/// Parses a 2.0 record header (whose first byte is at absolute offset `base`). Fields may come
/// in any order; unknown fields are ignored; a repeated field keeps its last value.
pub(crate) fn parse_header(header: &[u8], base: u64) -> Result<Header<'_>> {
    match fixed_layout_header(header) {
        Some(fixed) => Ok(fixed),
        None => parse_any_header(header, base),
    }
}

/// [`parse_header`] for any layout of the fields.
fn parse_any_header(header: &[u8], base: u64) -> Result<Header<'_>> {
    let mut c = Collected::default();
    for_each_field(header, base, RecordKind::Record, |f| {
        let slot = match f.name {
            b"op" => &mut c.op,
            b"index_pos" => &mut c.index_pos,
            b"conn_count" => &mut c.conn_count,
            b"chunk_count" => &mut c.chunk_count,
            b"encryptor" => &mut c.encryptor,
            b"compression" => &mut c.compression,
            b"size" => &mut c.size,
            b"conn" => &mut c.conn,
            b"topic" => &mut c.topic,
            b"time" => &mut c.time,
            b"ver" => &mut c.ver,
            b"count" => &mut c.count,
            b"chunk_pos" => &mut c.chunk_pos,
            b"start_time" => &mut c.start_time,
            b"end_time" => &mut c.end_time,
            _ => return Ok(()),
        };
        *slot = Some(f);
        Ok(())
    })?;
    let op = required(c.op, RecordKind::Record, base, "op")?.u8()?;
    let kind = RecordKind::from_op(op).unwrap_or(RecordKind::Record);
    fn need<'f>(
        field: Option<Field<'f>>,
        kind: RecordKind,
        base: u64,
        name: &str,
    ) -> Result<Field<'f>> {
        required(field, kind, base, name)
    }
    let retag = |e: Error| match e {
        Error::Malformed {
            offset, message, ..
        } => Error::Malformed {
            kind,
            offset,
            message,
        },
        other => other,
    };
    let parsed = (|| {
        Ok(match op {
            OP_FILE_HEADER => Header::FileHeader(FileHeader {
                index_pos: need(c.index_pos, kind, base, "index_pos")?.u64()?,
                conn_count: need(c.conn_count, kind, base, "conn_count")?.u32()?,
                chunk_count: need(c.chunk_count, kind, base, "chunk_count")?.u32()?,
                encryptor: c.encryptor.map(|f| f.string()),
            }),
            OP_CHUNK => Header::Chunk(ChunkHeader {
                compression: need(c.compression, kind, base, "compression")?.value,
                size: need(c.size, kind, base, "size")?.u32()?,
            }),
            OP_CONNECTION => Header::Connection(ConnectionHeader {
                conn: need(c.conn, kind, base, "conn")?.u32()?,
                topic: need(c.topic, kind, base, "topic")?.value,
            }),
            OP_MSG_DATA => Header::MessageData(MessageHeader {
                conn: need(c.conn, kind, base, "conn")?.u32()?,
                time: need(c.time, kind, base, "time")?.time()?,
            }),
            OP_INDEX_DATA => Header::IndexData(IndexDataHeader {
                ver: need(c.ver, kind, base, "ver")?.u32()?,
                conn: need(c.conn, kind, base, "conn")?.u32()?,
                count: need(c.count, kind, base, "count")?.u32()?,
            }),
            OP_CHUNK_INFO => Header::ChunkInfo(ChunkInfoHeader {
                ver: need(c.ver, kind, base, "ver")?.u32()?,
                chunk_pos: need(c.chunk_pos, kind, base, "chunk_pos")?.u64()?,
                start_time: need(c.start_time, kind, base, "start_time")?.time()?,
                end_time: need(c.end_time, kind, base, "end_time")?.time()?,
                count: need(c.count, kind, base, "count")?.u32()?,
            }),
            other => Header::Other(other),
        })
    })();
    parsed.map_err(retag)
}

/// The header of a record inside a chunk, parsed on the hot path without the general
/// machinery: only `op`, `conn`, `time` and `topic` are looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InnerHeader<'a> {
    Message(MessageHeader),
    Connection(ConnectionHeader<'a>),
    Other(u8),
}

const OP: &[u8; 8] = b"\x04\x00\x00\x00op=\x02";
const CONN: &[u8; 9] = b"\x09\x00\x00\x00conn=";
const TIME: &[u8; 9] = b"\x0d\x00\x00\x00time=";

/// The length of a message data header in the layout ros_comm and our writer use.
pub(crate) const CANONICAL_MESSAGE_HEADER_LEN: usize = OP.len() + CONN.len() + 4 + TIME.len() + 8;

/// A message data header in the layout ros_comm and our writer use (op, conn, time), checked
/// as three fixed-size compares; `None` for any other header.
#[inline]
pub(crate) fn canonical_message_header(
    header: &[u8; CANONICAL_MESSAGE_HEADER_LEN],
) -> Option<MessageHeader> {
    let (op, rest) = header.split_first_chunk::<8>()?;
    let (conn_tag, rest) = rest.split_first_chunk::<9>()?;
    let (conn, rest) = rest.split_first_chunk::<4>()?;
    let (time_tag, time) = rest.split_first_chunk::<9>()?;
    let time = time.first_chunk::<8>()?;
    (op == OP && conn_tag == CONN && time_tag == TIME).then(|| MessageHeader {
        conn: u32::from_le_bytes(*conn),
        time: RosTime::from_le_bytes(*time),
    })
}

/// The header every writer gives a message record: exactly the fields `op` (= 2), `conn` and
/// `time`, once each, in any order (Python writes op, conn, time; C++ sorts them). Recognised
/// byte for byte, since it precedes every message; anything else (other widths, extra or
/// repeated fields) goes through the general parser.
#[inline]
fn message_header_fast(header: &[u8]) -> Option<MessageHeader> {
    if header.len() != CANONICAL_MESSAGE_HEADER_LEN {
        return None;
    }
    if let Some(header) = header.first_chunk::<CANONICAL_MESSAGE_HEADER_LEN>()
        && let Some(message) = canonical_message_header(header)
    {
        return Some(message);
    }
    let [op, conn, time] = fixed_fields(header, &MESSAGE_FIELDS)?;
    (op == [OP_MSG_DATA]).then_some(MessageHeader {
        conn: u32::from_le_bytes(conn.try_into().ok()?),
        time: RosTime::from_le_bytes(time.try_into().ok()?),
    })
}

/// A header field as every writer lays it out: its 4-byte length, `name=`, then a value of a
/// fixed width (`tag` holds the length and the name, so one compare recognises both).
struct FixedField {
    tag: &'static [u8],
    width: usize,
}

const fn fixed(tag: &'static [u8], width: usize) -> FixedField {
    FixedField { tag, width }
}

/// Bytes of a header made of exactly `fields`, once each.
const fn fixed_len(fields: &[FixedField]) -> usize {
    let (mut i, mut len) = (0, 0);
    while i < fields.len() {
        len += fields[i].tag.len() + fields[i].width;
        i += 1;
    }
    len
}

const OP_FIELD: FixedField = fixed(b"\x04\x00\x00\x00op=", 1);
const VER_FIELD: FixedField = fixed(b"\x08\x00\x00\x00ver=", 4);
const CONN_FIELD: FixedField = fixed(CONN, 4);
const COUNT_FIELD: FixedField = fixed(b"\x0a\x00\x00\x00count=", 4);

const MESSAGE_FIELDS: [FixedField; 3] = [OP_FIELD, CONN_FIELD, fixed(TIME, 8)];

const INDEX_DATA_FIELDS: [FixedField; 4] = [OP_FIELD, VER_FIELD, CONN_FIELD, COUNT_FIELD];

/// The shortest CHUNK_INFO header: its required fields, at their widths, once each.
pub(crate) const CHUNK_INFO_HEADER_LEN: usize = fixed_len(&CHUNK_INFO_FIELDS);

const CHUNK_INFO_FIELDS: [FixedField; 6] = [
    OP_FIELD,
    VER_FIELD,
    fixed(b"\x12\x00\x00\x00chunk_pos=", 8),
    fixed(b"\x13\x00\x00\x00start_time=", 8),
    fixed(b"\x11\x00\x00\x00end_time=", 8),
    COUNT_FIELD,
];

/// The values of `fields` when `header` holds exactly those fields, once each, in any order;
/// `None` for anything else (an unknown or repeated field, another width), which the general
/// parser then reads. Whenever this succeeds, the general parser gives the same values.
#[inline]
fn fixed_fields<'a, const N: usize>(
    header: &'a [u8],
    fields: &[FixedField; N],
) -> Option<[&'a [u8]; N]> {
    let mut values: [Option<&[u8]>; N] = [None; N];
    let mut rest = header;
    while !rest.is_empty() {
        let i = fields.iter().position(|f| rest.starts_with(f.tag))?;
        let slot = values.get_mut(i)?;
        let field = fields.get(i)?;
        let (value, after) = rest.get(field.tag.len()..)?.split_at_checked(field.width)?;
        if slot.replace(value).is_some() {
            return None;
        }
        rest = after;
    }
    let mut out: [&[u8]; N] = [&[]; N];
    for (slot, value) in out.iter_mut().zip(values) {
        *slot = value?;
    }
    Some(out)
}

/// The index headers a bag holds one of per chunk and connection (CHUNK_INFO, INDEX_DATA), read
/// without the general parser when they are laid out as writers lay them out.
fn fixed_layout_header(header: &[u8]) -> Option<Header<'static>> {
    const INDEX_DATA_LEN: usize = fixed_len(&INDEX_DATA_FIELDS);
    let u32_of = |v: &[u8]| v.try_into().ok().map(u32::from_le_bytes);
    let u64_of = |v: &[u8]| v.try_into().ok().map(u64::from_le_bytes);
    let time_of = |v: &[u8]| v.try_into().ok().map(RosTime::from_le_bytes);
    match header.len() {
        CHUNK_INFO_HEADER_LEN => {
            let [op, ver, chunk_pos, start_time, end_time, count] =
                fixed_fields(header, &CHUNK_INFO_FIELDS)?;
            (op == [OP_CHUNK_INFO]).then_some(())?;
            Some(Header::ChunkInfo(ChunkInfoHeader {
                ver: u32_of(ver)?,
                chunk_pos: u64_of(chunk_pos)?,
                start_time: time_of(start_time)?,
                end_time: time_of(end_time)?,
                count: u32_of(count)?,
            }))
        }
        INDEX_DATA_LEN => {
            let [op, ver, conn, count] = fixed_fields(header, &INDEX_DATA_FIELDS)?;
            (op == [OP_INDEX_DATA]).then_some(())?;
            Some(Header::IndexData(IndexDataHeader {
                ver: u32_of(ver)?,
                conn: u32_of(conn)?,
                count: u32_of(count)?,
            }))
        }
        _ => None,
    }
}

#[inline]
pub(crate) fn parse_inner_header(header: &[u8], base: u64) -> Result<InnerHeader<'_>> {
    if let Some(message) = message_header_fast(header) {
        return Ok(InnerHeader::Message(message));
    }
    let (mut op, mut conn, mut time, mut topic) = (None, None, None, None);
    for_each_field(header, base, RecordKind::Record, |f| {
        match f.name {
            b"op" => op = Some(f),
            b"conn" => conn = Some(f),
            b"time" => time = Some(f),
            b"topic" => topic = Some(f),
            _ => {}
        }
        Ok(())
    })?;
    let op = required(op, RecordKind::Record, base, "op")?.u8()?;
    Ok(match op {
        OP_MSG_DATA => {
            let kind = RecordKind::MessageData;
            InnerHeader::Message(MessageHeader {
                conn: required(conn, kind, base, "conn")?.u32()?,
                time: required(time, kind, base, "time")?.time()?,
            })
        }
        OP_CONNECTION => {
            let kind = RecordKind::Connection;
            InnerHeader::Connection(ConnectionHeader {
                conn: required(conn, kind, base, "conn")?.u32()?,
                topic: required(topic, kind, base, "topic")?.value,
            })
        }
        other => InnerHeader::Other(other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::framing::build_header;

    #[test]
    fn message_headers_parse_alike_on_the_fast_and_the_general_path() {
        let conn = 7u32.to_le_bytes();
        let time = [1, 0, 0, 0, 5, 0, 0, 0];
        let op = [OP_MSG_DATA];
        let expected = InnerHeader::Message(MessageHeader {
            conn: 7,
            time: RosTime { sec: 1, nsec: 5 },
        });
        let fields: [(&[u8], &[u8]); 3] = [(b"op", &op), (b"conn", &conn), (b"time", &time)];
        for order in [[0, 1, 2], [1, 0, 2], [2, 1, 0], [1, 2, 0]] {
            let h = build_header(&order.map(|i| fields[i])).unwrap();
            assert!(message_header_fast(&h).is_some(), "{order:?}");
            assert_eq!(parse_inner_header(&h, 0).unwrap(), expected, "{order:?}");
        }
        // A repeated field is left to the general parser (the last value wins there).
        let h = build_header(&[(b"op", &op), (b"conn", &conn), (b"conn", &[9, 0, 0, 0])]).unwrap();
        assert!(message_header_fast(&h).is_none());
        // Other op codes and widths too.
        let h = build_header(&[
            (b"op", &[OP_CONNECTION]),
            (b"conn", &conn),
            (b"time", &time),
        ])
        .unwrap();
        assert!(message_header_fast(&h).is_none());
    }

    /// Every order of `fields` (Heap's algorithm).
    fn orders<T: Clone>(fields: &[T]) -> Vec<Vec<T>> {
        fn heap<T: Clone>(k: usize, items: &mut Vec<T>, out: &mut Vec<Vec<T>>) {
            if k <= 1 {
                out.push(items.clone());
                return;
            }
            for i in 0..k {
                heap(k - 1, items, out);
                items.swap(if k.is_multiple_of(2) { i } else { 0 }, k - 1);
            }
        }
        let mut out = Vec::new();
        heap(fields.len(), &mut fields.to_vec(), &mut out);
        out
    }

    #[test]
    fn fixed_field_tags_hold_their_field_lengths() {
        let all = [&MESSAGE_FIELDS[..], &INDEX_DATA_FIELDS, &CHUNK_INFO_FIELDS];
        for field in all.into_iter().flatten() {
            let (len, name) = field.tag.split_at(4);
            let len = u32::from_le_bytes(len.try_into().unwrap()) as usize;
            assert_eq!(name.last(), Some(&b'='));
            assert_eq!(len, name.len() + field.width, "{name:?}");
        }
        // op, ver, chunk_pos, start_time, end_time, count: 6 length fields, 43 bytes of
        // `name=` and 33 of values.
        assert_eq!(CHUNK_INFO_HEADER_LEN, 6 * 4 + 43 + 33);
    }

    #[test]
    fn index_headers_parse_alike_on_the_fixed_and_the_general_path() {
        let chunk_info: [(&[u8], Vec<u8>); 6] = [
            (b"op", vec![OP_CHUNK_INFO]),
            (b"ver", 1u32.to_le_bytes().to_vec()),
            (b"chunk_pos", 4117u64.to_le_bytes().to_vec()),
            (b"start_time", vec![1, 0, 0, 0, 5, 0, 0, 0]),
            (b"end_time", vec![2, 0, 0, 0, 7, 0, 0, 0]),
            (b"count", 3u32.to_le_bytes().to_vec()),
        ];
        let index_data: [(&[u8], Vec<u8>); 4] = [
            (b"op", vec![OP_INDEX_DATA]),
            (b"ver", 1u32.to_le_bytes().to_vec()),
            (b"conn", 9u32.to_le_bytes().to_vec()),
            (b"count", 12u32.to_le_bytes().to_vec()),
        ];
        let build = |fields: &[(&[u8], Vec<u8>)]| {
            let fields: Vec<(&[u8], &[u8])> = fields.iter().map(|(n, v)| (*n, &v[..])).collect();
            build_header(&fields).unwrap()
        };
        for fields in [&chunk_info[..], &index_data] {
            let canonical = build(fields);
            let expected = parse_any_header(&canonical, 0).unwrap();
            assert!(matches!(
                expected,
                Header::ChunkInfo(ChunkInfoHeader { count: 3, .. })
                    | Header::IndexData(IndexDataHeader { count: 12, .. })
            ));
            // Python writes one order and C++ another (sorted names); any order is taken.
            for order in orders(fields) {
                let h = build(&order);
                assert_eq!(fixed_layout_header(&h), Some(expected.clone()), "{order:?}");
                assert_eq!(parse_header(&h, 0).unwrap(), expected);
            }
            // Anything else goes to the general parser, which reads it as before.
            let mut repeated = fields.to_vec();
            repeated[1] = repeated[2].clone();
            let mut unknown = fields.to_vec();
            unknown[1] = (b"xyz", vec![1, 0, 0, 0]);
            let mut wider = fields.to_vec();
            wider[0].1.push(0);
            let mut other_op = fields.to_vec();
            other_op[0].1 = vec![OP_MSG_DATA];
            let mut extra = fields.to_vec();
            extra.push((b"x", vec![]));
            // With every field present, a repeated one makes the header longer than the fixed
            // layout, which `fixed_layout_header` sees first; `fixed_fields` itself refuses it too.
            let mut again = fields.to_vec();
            again.push(fields[1].clone());
            let h = build(&again);
            assert!(fixed_fields(&h, &INDEX_DATA_FIELDS).is_none());
            assert!(fixed_fields(&h, &CHUNK_INFO_FIELDS).is_none());
            for changed in [repeated, unknown, wider, other_op, extra] {
                let h = build(&changed);
                assert_eq!(fixed_layout_header(&h), None, "{changed:?}");
                assert_eq!(
                    parse_header(&h, 0).map_err(|e| e.to_string()),
                    parse_any_header(&h, 0).map_err(|e| e.to_string())
                );
            }
        }
    }

    #[test]
    fn parses_fields_in_any_order() {
        // C++ order: sorted names.
        let h = build_header(&[
            (b"chunk_pos", &9u64.to_le_bytes()),
            (b"count", &2u32.to_le_bytes()),
            (b"end_time", &[2, 0, 0, 0, 0, 0, 0, 0]),
            (b"op", &[OP_CHUNK_INFO]),
            (b"start_time", &[1, 0, 0, 0, 5, 0, 0, 0]),
            (b"ver", &1u32.to_le_bytes()),
        ])
        .unwrap();
        assert_eq!(
            parse_header(&h, 0).unwrap(),
            Header::ChunkInfo(ChunkInfoHeader {
                ver: 1,
                chunk_pos: 9,
                start_time: RosTime { sec: 1, nsec: 5 },
                end_time: RosTime { sec: 2, nsec: 0 },
                count: 2
            })
        );
        let h = build_header(&[(b"op", &[OP_CHUNK]), (b"compression", b"lz4")]).unwrap();
        let err = parse_header(&h, 40).unwrap_err();
        assert!(err.to_string().contains("missing field size"), "{err}");
        assert!(err.to_string().contains("chunk"), "{err}");
        let h = build_header(&[(b"op", &[9])]).unwrap();
        assert_eq!(parse_header(&h, 0).unwrap(), Header::Other(9));
        let h = build_header(&[
            (b"conn", &3u32.to_le_bytes()),
            (b"op", &[OP_MSG_DATA]),
            (b"time", &[1, 0, 0, 0, 2, 0, 0, 0]),
        ])
        .unwrap();
        assert_eq!(
            parse_inner_header(&h, 0).unwrap(),
            InnerHeader::Message(MessageHeader {
                conn: 3,
                time: RosTime { sec: 1, nsec: 2 }
            })
        );
    }
}
