//! Records to bytes: the inverse of [`crate::parse`].

use std::collections::BTreeMap;

use robolog_framing::{ByteWriter, Error as ByteError};

use crate::error::{McapError, Result};
use crate::records::{Record, StringMap, op};

fn string_map(w: &mut ByteWriter<'_>, map: &StringMap<'_>) -> Result<(), ByteError> {
    let len = w.begin_len_u32();
    for (k, v) in map {
        w.write_str_u32(k)?;
        w.write_str_u32(v)?;
    }
    w.end_len(len)?;
    Ok(())
}

fn u16_u64_map(w: &mut ByteWriter<'_>, map: &BTreeMap<u16, u64>) -> Result<(), ByteError> {
    let len = w.begin_len_u32();
    for (k, v) in map {
        w.write_u16(*k);
        w.write_u64(*v);
    }
    w.end_len(len)?;
    Ok(())
}

/// Appends `record` (opcode, length and content) to `out`.
///
/// Chunk records are written with their `records` field as given (already compressed). The
/// Attachment CRC is written as stored in the record; the writer computes it.
pub fn write_record(record: &Record<'_>, out: &mut Vec<u8>) -> Result<()> {
    let start = out.len();
    let mut w = ByteWriter::new(out);
    w.write_u8(record.opcode());
    let len = w.begin_len_u64();
    let body = (|| -> Result<(), ByteError> {
        match record {
            Record::Header(h) => {
                w.write_str_u32(&h.profile)?;
                w.write_str_u32(&h.library)?;
            }
            Record::Footer(f) => {
                w.write_u64(f.summary_start);
                w.write_u64(f.summary_offset_start);
                w.write_u32(f.summary_crc);
            }
            Record::Schema(s) => {
                w.write_u16(s.id);
                w.write_str_u32(&s.name)?;
                w.write_str_u32(&s.encoding)?;
                w.write_bytes_u32(&s.data)?;
            }
            Record::Channel(c) => {
                w.write_u16(c.id);
                w.write_u16(c.schema_id);
                w.write_str_u32(&c.topic)?;
                w.write_str_u32(&c.message_encoding)?;
                string_map(&mut w, &c.metadata)?;
            }
            Record::Message(m) => {
                w.write_u16(m.channel_id);
                w.write_u32(m.sequence);
                w.write_u64(m.log_time);
                w.write_u64(m.publish_time);
                w.write_bytes(m.data);
            }
            Record::Chunk(c) => {
                w.write_u64(c.message_start_time);
                w.write_u64(c.message_end_time);
                w.write_u64(c.uncompressed_size);
                w.write_u32(c.uncompressed_crc);
                w.write_str_u32(c.compression)?;
                w.write_bytes_u64(c.records);
            }
            Record::MessageIndex(m) => {
                w.write_u16(m.channel_id);
                let len = w.begin_len_u32();
                for (time, offset) in &m.records {
                    w.write_u64(*time);
                    w.write_u64(*offset);
                }
                w.end_len(len)?;
            }
            Record::ChunkIndex(c) => {
                w.write_u64(c.message_start_time);
                w.write_u64(c.message_end_time);
                w.write_u64(c.chunk_start_offset);
                w.write_u64(c.chunk_length);
                u16_u64_map(&mut w, &c.message_index_offsets)?;
                w.write_u64(c.message_index_length);
                w.write_str_u32(&c.compression)?;
                w.write_u64(c.compressed_size);
                w.write_u64(c.uncompressed_size);
            }
            Record::Attachment(a) => {
                w.write_u64(a.log_time);
                w.write_u64(a.create_time);
                w.write_str_u32(&a.name)?;
                w.write_str_u32(&a.media_type)?;
                w.write_bytes_u64(&a.data);
                w.write_u32(a.crc);
            }
            Record::AttachmentIndex(a) => {
                w.write_u64(a.offset);
                w.write_u64(a.length);
                w.write_u64(a.log_time);
                w.write_u64(a.create_time);
                w.write_u64(a.data_size);
                w.write_str_u32(&a.name)?;
                w.write_str_u32(&a.media_type)?;
            }
            Record::Statistics(s) => {
                w.write_u64(s.message_count);
                w.write_u16(s.schema_count);
                w.write_u32(s.channel_count);
                w.write_u32(s.attachment_count);
                w.write_u32(s.metadata_count);
                w.write_u32(s.chunk_count);
                w.write_u64(s.message_start_time);
                w.write_u64(s.message_end_time);
                u16_u64_map(&mut w, &s.channel_message_counts)?;
            }
            Record::Metadata(m) => {
                w.write_str_u32(&m.name)?;
                string_map(&mut w, &m.metadata)?;
            }
            Record::MetadataIndex(m) => {
                w.write_u64(m.offset);
                w.write_u64(m.length);
                w.write_str_u32(&m.name)?;
            }
            Record::SummaryOffset(s) => {
                w.write_u8(s.group_opcode);
                w.write_u64(s.group_start);
                w.write_u64(s.group_length);
            }
            Record::DataEnd(d) => w.write_u32(d.data_section_crc),
            Record::Unknown { content, .. } => w.write_bytes(content),
        }
        w.end_len(len)?;
        Ok(())
    })();
    body.map_err(|e| {
        McapError::Usage(format!(
            "cannot serialize {}: {e}",
            crate::records::record_name(record.opcode())
        ))
    })
    .inspect_err(|_| out.truncate(start))
}

/// Appends a Message record straight from its fields (the writer's hot path).
#[inline]
pub(crate) fn write_message(m: &crate::records::Message<'_>, out: &mut Vec<u8>) {
    out.reserve(9 + 22 + m.data.len());
    write_message_head(m, out);
    out.extend_from_slice(m.data);
}

/// A Message record up to its data, which the caller writes right after.
pub(crate) fn write_message_head(m: &crate::records::Message<'_>, out: &mut Vec<u8>) {
    out.push(op::MESSAGE);
    out.extend_from_slice(&(22 + m.data.len() as u64).to_le_bytes());
    out.extend_from_slice(&m.channel_id.to_le_bytes());
    out.extend_from_slice(&m.sequence.to_le_bytes());
    out.extend_from_slice(&m.log_time.to_le_bytes());
    out.extend_from_slice(&m.publish_time.to_le_bytes());
}
