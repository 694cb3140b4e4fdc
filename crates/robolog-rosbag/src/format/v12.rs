//! The record headers of format 1.2: per-topic records, `md5`/`def`, and `sec`/`nsec` times.

use crate::error::{RecordKind, Result};
use crate::format::fields::{Field, for_each_field, required};
use crate::format::framing::{OP_FILE_HEADER, OP_INDEX_DATA, OP_MSG_DATA, OP_MSG_DEF};
use crate::format::time::RosTime;

/// A 1.2 record header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum V12Header<'a> {
    FileHeader {
        index_pos: u64,
    },
    MessageDefinition {
        topic: &'a [u8],
        md5: &'a [u8],
        message_type: &'a [u8],
        definition: &'a [u8],
    },
    MessageData {
        topic: &'a [u8],
        md5: Option<&'a [u8]>,
        message_type: Option<&'a [u8]>,
        time: RosTime,
    },
    IndexData {
        ver: u32,
        topic: &'a [u8],
        count: u32,
    },
    Other(u8),
}

#[derive(Default)]
struct Collected<'a> {
    op: Option<Field<'a>>,
    index_pos: Option<Field<'a>>,
    topic: Option<Field<'a>>,
    md5: Option<Field<'a>>,
    message_type: Option<Field<'a>>,
    def: Option<Field<'a>>,
    sec: Option<Field<'a>>,
    nsec: Option<Field<'a>>,
    ver: Option<Field<'a>>,
    count: Option<Field<'a>>,
}

/// Parses a 1.2 record header whose first byte is at absolute offset `base`.
pub(crate) fn parse_v12_header(header: &[u8], base: u64) -> Result<V12Header<'_>> {
    let mut c = Collected::default();
    for_each_field(header, base, RecordKind::Record, |f| {
        let slot = match f.name {
            b"op" => &mut c.op,
            b"index_pos" => &mut c.index_pos,
            b"topic" => &mut c.topic,
            b"md5" => &mut c.md5,
            b"type" => &mut c.message_type,
            b"def" => &mut c.def,
            b"sec" => &mut c.sec,
            b"nsec" => &mut c.nsec,
            b"ver" => &mut c.ver,
            b"count" => &mut c.count,
            _ => return Ok(()),
        };
        *slot = Some(f);
        Ok(())
    })?;
    let op = required(c.op, RecordKind::Record, base, "op")?.u8()?;
    Ok(match op {
        OP_FILE_HEADER => V12Header::FileHeader {
            index_pos: required(c.index_pos, RecordKind::FileHeader, base, "index_pos")?.u64()?,
        },
        OP_MSG_DEF => {
            let kind = RecordKind::MessageDefinition;
            V12Header::MessageDefinition {
                topic: required(c.topic, kind, base, "topic")?.value,
                md5: required(c.md5, kind, base, "md5")?.value,
                message_type: required(c.message_type, kind, base, "type")?.value,
                definition: required(c.def, kind, base, "def")?.value,
            }
        }
        OP_MSG_DATA => {
            let kind = RecordKind::MessageData;
            V12Header::MessageData {
                topic: required(c.topic, kind, base, "topic")?.value,
                md5: c.md5.map(|f| f.value),
                message_type: c.message_type.map(|f| f.value),
                time: RosTime {
                    sec: required(c.sec, kind, base, "sec")?.u32()?,
                    nsec: required(c.nsec, kind, base, "nsec")?.u32()?,
                },
            }
        }
        OP_INDEX_DATA => {
            let kind = RecordKind::IndexData;
            V12Header::IndexData {
                ver: required(c.ver, kind, base, "ver")?.u32()?,
                topic: required(c.topic, kind, base, "topic")?.value,
                count: required(c.count, kind, base, "count")?.u32()?,
            }
        }
        other => V12Header::Other(other),
    })
}
