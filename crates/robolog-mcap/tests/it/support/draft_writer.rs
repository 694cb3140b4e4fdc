//! Writes files in the pre-ratification draft layout, field by field from the spec's section 13
//! (no draft files exist in the wild to test with).

#![allow(dead_code)]

use robolog_framing::{Compression, Compressor, crc32};

pub(crate) const MAGIC: [u8; 8] = [0x89, b'M', b'C', b'A', b'P', b'0', b'\r', b'\n'];

fn string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// KeyValues with a byte-length prefix (as our draft writer does).
fn key_values(out: &mut Vec<u8>, entries: &[(&str, &str)]) {
    let mut body = Vec::new();
    for (k, v) in entries {
        string(&mut body, k);
        string(&mut body, v);
    }
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
}

fn record(out: &mut Vec<u8>, opcode: u8, content: &[u8]) {
    out.push(opcode);
    out.extend_from_slice(&(content.len() as u64).to_le_bytes());
    out.extend_from_slice(content);
}

pub(crate) struct DraftChannel<'a> {
    pub(crate) id: u16,
    pub(crate) topic: &'a str,
    pub(crate) encoding: &'a str,
    pub(crate) schema_name: &'a str,
    pub(crate) schema: &'a [u8],
    pub(crate) user_data: &'a [(&'a str, &'a str)],
}

fn channel_info(c: &DraftChannel<'_>) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&c.id.to_le_bytes());
    string(&mut b, c.topic);
    string(&mut b, c.encoding);
    string(&mut b, c.schema_name);
    b.extend_from_slice(&(c.schema.len() as u32).to_le_bytes());
    b.extend_from_slice(c.schema);
    key_values(&mut b, c.user_data);
    b
}

/// (channel, sequence, publish_time, record_time, data)
pub(crate) type DraftMessage = (u16, u32, u64, u64, Vec<u8>);

fn message(m: &DraftMessage) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&m.0.to_le_bytes());
    b.extend_from_slice(&m.1.to_le_bytes());
    b.extend_from_slice(&m.2.to_le_bytes());
    b.extend_from_slice(&m.3.to_le_bytes());
    b.extend_from_slice(&m.4);
    b
}

/// A draft file: Header (with metadata), then either one chunk per `per_chunk` messages (with
/// channel infos inside the first chunk, message indexes after each chunk) or unchunked records,
/// an attachment, then the index section (chunk indexes, attachment index, statistics) and the
/// footer with its CRC.
pub(crate) fn draft_file(
    channels: &[DraftChannel<'_>],
    messages: &[DraftMessage],
    compression: Option<Compression>,
    per_chunk: usize,
) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    let mut header = Vec::new();
    string(&mut header, "ros1");
    string(&mut header, "draft-writer");
    key_values(&mut header, &[("robot", "r2"), ("site", "lab")]);
    record(&mut out, 0x01, &header);
    let mut chunk_indexes = Vec::new();
    match compression {
        None => {
            for c in channels {
                record(&mut out, 0x03, &channel_info(c));
            }
            for m in messages {
                record(&mut out, 0x04, &message(m));
            }
        }
        Some(codec) => {
            for (n, group) in messages.chunks(per_chunk).enumerate() {
                let mut records = Vec::new();
                if n == 0 {
                    for c in channels {
                        record(&mut records, 0x03, &channel_info(c));
                    }
                }
                let mut index: std::collections::BTreeMap<u16, Vec<(u64, u64)>> =
                    Default::default();
                for m in group {
                    index
                        .entry(m.0)
                        .or_default()
                        .push((m.3, records.len() as u64));
                    record(&mut records, 0x04, &message(m));
                }
                let mut compressed = Vec::new();
                Compressor::new(codec)
                    .compress(&records, &mut compressed)
                    .unwrap();
                let name = match codec {
                    Compression::None => "",
                    Compression::Lz4 => "lz4",
                    Compression::Zstd => "zstd",
                    Compression::Bz2 => "bz2",
                };
                let chunk_at = out.len() as u64;
                let mut c = Vec::new();
                c.extend_from_slice(&(records.len() as u64).to_le_bytes());
                c.extend_from_slice(&crc32(&records).to_le_bytes());
                string(&mut c, name);
                c.extend_from_slice(&compressed);
                record(&mut out, 0x05, &c);
                let index_at = out.len() as u64;
                let mut offsets = Vec::new();
                for (channel, entries) in &index {
                    offsets.push((*channel, out.len() as u64));
                    let mut mi = Vec::new();
                    mi.extend_from_slice(&channel.to_le_bytes());
                    mi.extend_from_slice(&((entries.len() * 16) as u32).to_le_bytes());
                    for (t, o) in entries {
                        mi.extend_from_slice(&t.to_le_bytes());
                        mi.extend_from_slice(&o.to_le_bytes());
                    }
                    record(&mut out, 0x06, &mi);
                }
                let mut ci = Vec::new();
                ci.extend_from_slice(&group.iter().map(|m| m.3).min().unwrap().to_le_bytes());
                ci.extend_from_slice(&group.iter().map(|m| m.3).max().unwrap().to_le_bytes());
                ci.extend_from_slice(&chunk_at.to_le_bytes());
                ci.extend_from_slice(&((offsets.len() * 10) as u32).to_le_bytes());
                for (ch, o) in &offsets {
                    ci.extend_from_slice(&ch.to_le_bytes());
                    ci.extend_from_slice(&o.to_le_bytes());
                }
                ci.extend_from_slice(&(out.len() as u64 - index_at).to_le_bytes());
                string(&mut ci, name);
                ci.extend_from_slice(&(compressed.len() as u64).to_le_bytes());
                ci.extend_from_slice(&(records.len() as u64).to_le_bytes());
                chunk_indexes.push(ci);
            }
        }
    }
    // Attachment: name, record_time, content_type, data, crc.
    let attachment_at = out.len() as u64;
    let mut a = Vec::new();
    string(&mut a, "notes.txt");
    a.extend_from_slice(&42u64.to_le_bytes());
    string(&mut a, "text/plain");
    a.extend_from_slice(&5u64.to_le_bytes());
    a.extend_from_slice(b"hello");
    let crc = crc32(&a);
    a.extend_from_slice(&crc.to_le_bytes());
    record(&mut out, 0x08, &a);

    let index_offset = out.len() as u64;
    for c in channels {
        record(&mut out, 0x03, &channel_info(c));
    }
    for ci in &chunk_indexes {
        record(&mut out, 0x07, ci);
    }
    let mut ai = Vec::new();
    ai.extend_from_slice(&42u64.to_le_bytes());
    ai.extend_from_slice(&5u64.to_le_bytes());
    string(&mut ai, "notes.txt");
    string(&mut ai, "text/plain");
    ai.extend_from_slice(&attachment_at.to_le_bytes());
    record(&mut out, 0x09, &ai);
    let mut st = Vec::new();
    st.extend_from_slice(&(messages.len() as u64).to_le_bytes());
    st.extend_from_slice(&(channels.len() as u32).to_le_bytes());
    st.extend_from_slice(&1u32.to_le_bytes());
    st.extend_from_slice(&(chunk_indexes.len() as u32).to_le_bytes());
    let mut counts: std::collections::BTreeMap<u16, u64> = Default::default();
    for m in messages {
        *counts.entry(m.0).or_default() += 1;
    }
    st.extend_from_slice(&((counts.len() * 10) as u32).to_le_bytes());
    for (ch, n) in &counts {
        st.extend_from_slice(&ch.to_le_bytes());
        st.extend_from_slice(&n.to_le_bytes());
    }
    record(&mut out, 0x0A, &st);
    // Footer: index_offset, index_crc over [index_offset, the byte before the CRC).
    out.push(0x02);
    out.extend_from_slice(&12u64.to_le_bytes());
    out.extend_from_slice(&index_offset.to_le_bytes());
    let crc = crc32(&out[index_offset as usize..]);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&MAGIC);
    out
}
