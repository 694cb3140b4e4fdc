//! The generator of `testdata/bad/rosbag/` (shared by `tests/hostile/corpus.rs`, which checks
//! what the readers make of each file, and `tests/it/hostile_generated.rs`, which checks that the
//! committed files are what this writes).
//!
//! The bags are assembled record by record here, independently of our writer, so that a change
//! to the writer cannot silently change what these files test.

#![allow(dead_code)]

use robolog_framing::{Compression, compress};
use robolog_testkit::hostile::HostileFile;

// ---------------------------------------------------------------------------------------------
// Building bags byte by byte (spec §2–§3).

pub(crate) fn field(name: &str, value: &[u8]) -> Vec<u8> {
    let mut out = ((name.len() + 1 + value.len()) as u32)
        .to_le_bytes()
        .to_vec();
    out.extend_from_slice(name.as_bytes());
    out.push(b'=');
    out.extend_from_slice(value);
    out
}

pub(crate) fn header(fields: &[(&str, &[u8])]) -> Vec<u8> {
    fields.iter().flat_map(|(n, v)| field(n, v)).collect()
}

pub(crate) fn record(fields: &[(&str, &[u8])], data: &[u8]) -> Vec<u8> {
    let header = header(fields);
    let mut out = (header.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(&header);
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
    out
}

pub(crate) const VERSION: &[u8] = b"#ROSBAG V2.0\n";
/// Where the first chunk starts with ROS's padding convention A (spec §3.1).
pub(crate) const FIRST_CHUNK: u64 = 4117;

pub(crate) fn file_header(index_pos: u64, conn_count: u32, chunk_count: u32) -> Vec<u8> {
    let fields = header(&[
        ("index_pos", &index_pos.to_le_bytes()),
        ("conn_count", &conn_count.to_le_bytes()),
        ("chunk_count", &chunk_count.to_le_bytes()),
        ("op", &[0x03]),
    ]);
    let padding = vec![b' '; 4096 - fields.len()];
    let mut out = (fields.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(&fields);
    out.extend_from_slice(&(padding.len() as u32).to_le_bytes());
    out.extend_from_slice(&padding);
    out
}

pub(crate) fn connection(conn: u32, topic: &str, ty: &str, md5: &str, definition: &str) -> Vec<u8> {
    let data = header(&[
        ("topic", topic.as_bytes()),
        ("type", ty.as_bytes()),
        ("md5sum", md5.as_bytes()),
        ("message_definition", definition.as_bytes()),
    ]);
    record(
        &[
            ("topic", topic.as_bytes()),
            ("conn", &conn.to_le_bytes()),
            ("op", &[0x07]),
        ],
        &data,
    )
}

pub(crate) fn time(ns: u64) -> [u8; 8] {
    let mut out = [0; 8];
    out[..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
    out[4..].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
    out
}

pub(crate) fn message(conn: u32, time_ns: u64, data: &[u8]) -> Vec<u8> {
    record(
        &[
            ("op", &[0x02]),
            ("conn", &conn.to_le_bytes()),
            ("time", &time(time_ns)),
        ],
        data,
    )
}

pub(crate) fn chunk_record(compression: &str, size: u32, data: &[u8]) -> Vec<u8> {
    record(
        &[
            ("op", &[0x05]),
            ("compression", compression.as_bytes()),
            ("size", &size.to_le_bytes()),
        ],
        data,
    )
}

pub(crate) fn index_data(conn: u32, count: u32, entries: &[(u64, u32)]) -> Vec<u8> {
    let data: Vec<u8> = entries
        .iter()
        .flat_map(|(t, offset)| [&time(*t)[..], &offset.to_le_bytes()].concat())
        .collect();
    record(
        &[
            ("op", &[0x04]),
            ("ver", &1u32.to_le_bytes()),
            ("conn", &conn.to_le_bytes()),
            ("count", &count.to_le_bytes()),
        ],
        &data,
    )
}

pub(crate) fn chunk_info(chunk_pos: u64, start: u64, end: u64, counts: &[(u32, u32)]) -> Vec<u8> {
    let data: Vec<u8> = counts
        .iter()
        .flat_map(|(c, n)| [c.to_le_bytes(), n.to_le_bytes()].concat())
        .collect();
    record(
        &[
            ("op", &[0x06]),
            ("ver", &1u32.to_le_bytes()),
            ("chunk_pos", &chunk_pos.to_le_bytes()),
            ("start_time", &time(start)),
            ("end_time", &time(end)),
            ("count", &(counts.len() as u32).to_le_bytes()),
        ],
        &data,
    )
}

pub(crate) const STRING_MD5: &str = "992ce8a1687cec8c8bd883ec73ca41d1";

/// The messages of the model bag: /chatter (conn 0) at 1, 2 and 3 s.
pub(crate) const MESSAGES: [(u64, &[u8]); 3] = [
    (1_000_000_000, b"\x03\0\0\0one"),
    (2_000_000_000, b"\x03\0\0\0two"),
    (3_000_000_000, b"\x05\0\0\0three"),
];

/// A valid one-chunk bag and where its parts are.
pub(crate) struct Model {
    pub(crate) bytes: Vec<u8>,
    /// Offset of the CHUNK record.
    pub(crate) chunk_pos: u64,
    /// Offset of the chunk's data (the compressed bytes).
    pub(crate) chunk_data_pos: u64,
    /// Offsets, inside the uncompressed chunk, of the three MSG_DATA records.
    pub(crate) message_offsets: Vec<u32>,
    /// Offset of the INDEX_DATA record after the chunk.
    pub(crate) index_data_pos: u64,
    /// Offset of the index section.
    pub(crate) index_pos: u64,
    /// Offset of the CHUNK_INFO record.
    pub(crate) chunk_info_pos: u64,
}

/// Parameters of the model bag that the hostile variants change.
pub(crate) struct Spec<'a> {
    pub(crate) compression: &'a str,
    /// The chunk's uncompressed content; `None` builds connection + the three messages.
    pub(crate) content: Option<Vec<u8>>,
    /// Replaces the declared uncompressed size.
    pub(crate) declared_size: Option<u32>,
    /// Replaces the INDEX_DATA entries (and count).
    pub(crate) index_entries: Option<(u32, Vec<(u64, u32)>)>,
    /// Replaces the CHUNK_INFO chunk_pos.
    pub(crate) chunk_info_pos: Option<u64>,
    /// Replaces the file header's index_pos and counts.
    pub(crate) file_header: Option<(u64, u32, u32)>,
}

impl Default for Spec<'_> {
    fn default() -> Self {
        Self {
            compression: "none",
            content: None,
            declared_size: None,
            index_entries: None,
            chunk_info_pos: None,
            file_header: None,
        }
    }
}

pub(crate) fn chatter_connection() -> Vec<u8> {
    connection(
        0,
        "/chatter",
        "std_msgs/String",
        STRING_MD5,
        "string data\n",
    )
}

pub(crate) fn model(spec: Spec<'_>) -> Model {
    let mut content = chatter_connection();
    let mut message_offsets = Vec::new();
    for (t, data) in MESSAGES {
        message_offsets.push(content.len() as u32);
        content.extend(message(0, t, data));
    }
    let content = spec.content.unwrap_or(content);
    let stored = match spec.compression {
        "lz4" => {
            let mut out = Vec::new();
            compress(Compression::Lz4, &content, &mut out).unwrap();
            out
        }
        "bz2" => {
            let mut out = Vec::new();
            compress(Compression::Bz2, &content, &mut out).unwrap();
            out
        }
        _ => content.clone(),
    };
    let size = spec.declared_size.unwrap_or(content.len() as u32);
    let chunk = chunk_record(spec.compression, size, &stored);
    let chunk_pos = FIRST_CHUNK;
    let chunk_data_pos = chunk_pos + chunk.len() as u64 - stored.len() as u64;
    let index_data_pos = chunk_pos + chunk.len() as u64;
    let (count, entries) = spec.index_entries.unwrap_or_else(|| {
        let entries: Vec<(u64, u32)> = MESSAGES
            .iter()
            .zip(&message_offsets)
            .map(|((t, _), o)| (*t, *o))
            .collect();
        (entries.len() as u32, entries)
    });
    let index = index_data(0, count, &entries);
    let index_pos = index_data_pos + index.len() as u64;
    let index_conn = chatter_connection();
    let chunk_info_pos = index_pos + index_conn.len() as u64;
    let info = chunk_info(
        spec.chunk_info_pos.unwrap_or(chunk_pos),
        MESSAGES[0].0,
        MESSAGES[2].0,
        &[(0, 3)],
    );
    let (header_index_pos, conn_count, chunk_count) = spec.file_header.unwrap_or((index_pos, 1, 1));
    let bytes = [
        VERSION,
        &file_header(header_index_pos, conn_count, chunk_count),
        &chunk,
        &index,
        &index_conn,
        &info,
    ]
    .concat();
    assert_eq!(
        &bytes[chunk_pos as usize..chunk_pos as usize + 4],
        &(chunk.len() as u32 - 8 - stored.len() as u32).to_le_bytes()
    );
    Model {
        bytes,
        chunk_pos,
        chunk_data_pos,
        message_offsets,
        index_data_pos,
        index_pos,
        chunk_info_pos,
    }
}

/// The bags of `testdata/bad/rosbag/`, each with why it exists (also in the README there).
pub(crate) fn generate() -> Vec<HostileFile> {
    let plain = model(Spec::default());
    let mut files = Vec::new();
    let mut add = |name: &str, bytes: Vec<u8>| files.push(HostileFile::new(name, bytes));

    add("empty.bag", Vec::new());
    add("version-line-only.bag", VERSION.to_vec());
    // The file header's header_len claims 4 GiB − 1.
    add(
        "header-len-huge.bag",
        [VERSION, &u32::MAX.to_le_bytes(), &[0; 8]].concat(),
    );
    // A complete file header record whose data_len runs 2 GiB past the end.
    let mut data_len_huge = file_header(0, 0, 0);
    data_len_huge.truncate(4 + 69);
    data_len_huge.extend_from_slice(&0x7fff_ffffu32.to_le_bytes());
    add(
        "file-header-data-len-past-eof.bag",
        [VERSION, &data_len_huge].concat(),
    );
    // A header field whose field_len runs past the end of its header.
    let mut field_past = VERSION.to_vec();
    field_past.extend_from_slice(&69u32.to_le_bytes());
    let mut fields = header(&[
        ("index_pos", &0u64.to_le_bytes()),
        ("conn_count", &0u32.to_le_bytes()),
        ("chunk_count", &0u32.to_le_bytes()),
        ("op", &[0x03]),
    ]);
    fields[0..4].copy_from_slice(&1000u32.to_le_bytes());
    field_past.extend_from_slice(&fields);
    field_past.extend_from_slice(&0u32.to_le_bytes());
    add("field-len-past-header.bag", field_past);
    // A top-level record with header_len = 0 and data_len = 0: no op at all.
    add(
        "zero-length-record.bag",
        [VERSION, &file_header(0, 0, 0), &[0u8; 8][..]].concat(),
    );
    // Everything that can be empty is: an empty chunk, then a chunk whose connection has an empty
    // topic, type, md5 and definition and whose one message has 0 bytes.
    let empty_conn = connection(0, "", "", "", "");
    let empty_msg = message(0, 0, b"");
    let empty_content = [empty_conn.clone(), empty_msg.clone()].concat();
    let chunk0 = chunk_record("none", 0, b"");
    let chunk1 = chunk_record("none", empty_content.len() as u32, &empty_content);
    let chunk1_pos = FIRST_CHUNK + chunk0.len() as u64;
    let index1 = index_data(0, 1, &[(0, empty_conn.len() as u32)]);
    let index_pos = chunk1_pos + chunk1.len() as u64 + index1.len() as u64;
    add(
        "zero-lengths.bag",
        [
            VERSION,
            &file_header(index_pos, 1, 2),
            &chunk0,
            &chunk1,
            &index1,
            &empty_conn,
            &chunk_info(FIRST_CHUNK, 0, 0, &[]),
            &chunk_info(chunk1_pos, 0, 0, &[(0, 1)]),
        ]
        .concat(),
    );
    // Index section pointers that lie: past the end, into the middle of the chunk record.
    add(
        "index-pos-past-eof.bag",
        model(Spec {
            file_header: Some((1 << 40, 1, 1)),
            ..Spec::default()
        })
        .bytes,
    );
    add(
        "index-pos-mid-record.bag",
        model(Spec {
            file_header: Some((plain.chunk_pos + 3, 1, 1)),
            ..Spec::default()
        })
        .bytes,
    );
    // conn_count and chunk_count of 2^32 − 1: no reader may reserve for them.
    add(
        "counts-overflow.bag",
        model(Spec {
            file_header: Some((plain.index_pos, u32::MAX, u32::MAX)),
            ..Spec::default()
        })
        .bytes,
    );
    add(
        "chunk-info-pos-past-eof.bag",
        model(Spec {
            chunk_info_pos: Some(1 << 33),
            ..Spec::default()
        })
        .bytes,
    );
    add(
        "chunk-info-pos-mid-record.bag",
        model(Spec {
            chunk_info_pos: Some(plain.chunk_pos + 1),
            ..Spec::default()
        })
        .bytes,
    );
    // INDEX_DATA claiming 2^31 − 1 entries (24 GiB) with one entry's worth of data.
    add(
        "index-count-huge.bag",
        model(Spec {
            index_entries: Some((0x7fff_ffff, vec![(MESSAGES[0].0, plain.message_offsets[0])])),
            ..Spec::default()
        })
        .bytes,
    );
    // INDEX_DATA entries pointing into the middle of a MSG_DATA record and past the chunk.
    add(
        "index-offset-mid-record.bag",
        model(Spec {
            index_entries: Some((
                3,
                vec![
                    (MESSAGES[0].0, plain.message_offsets[0]),
                    (MESSAGES[1].0, plain.message_offsets[1] + 5),
                    (MESSAGES[2].0, plain.message_offsets[2]),
                ],
            )),
            ..Spec::default()
        })
        .bytes,
    );
    add(
        "index-offset-past-chunk.bag",
        model(Spec {
            index_entries: Some((
                3,
                vec![
                    (MESSAGES[0].0, plain.message_offsets[0]),
                    (MESSAGES[1].0, 0xffff_fff0),
                    (MESSAGES[2].0, plain.message_offsets[2]),
                ],
            )),
            ..Spec::default()
        })
        .bytes,
    );
    // Chunks whose declared uncompressed size lies.
    add(
        "lz4-size-lies-huge.bag",
        model(Spec {
            compression: "lz4",
            declared_size: Some(0x3fff_ffff),
            ..Spec::default()
        })
        .bytes,
    );
    add(
        "lz4-size-lies-small.bag",
        model(Spec {
            compression: "lz4",
            declared_size: Some(100),
            ..Spec::default()
        })
        .bytes,
    );
    add(
        "bz2-size-lies-huge.bag",
        model(Spec {
            compression: "bz2",
            declared_size: Some(u32::MAX),
            ..Spec::default()
        })
        .bytes,
    );
    add(
        "none-size-past-data.bag",
        model(Spec {
            declared_size: Some(1 << 20),
            ..Spec::default()
        })
        .bytes,
    );
    // Decompression bombs with honest sizes: a 64 MiB message of zeros in ~100 bytes of bzip2
    // (over the 16 MiB chunk limit), and an 8 MiB one in ~32 KiB of LZ4 (under it: must read).
    add("bz2-bomb.bag", bomb("bz2", 64 << 20).bytes);
    add("lz4-bomb.bag", bomb("lz4", 8 << 20).bytes);
    add(
        "unsupported-compression.bag",
        model(Spec {
            compression: "zstd",
            ..Spec::default()
        })
        .bytes,
    );
    // A connection without its `type` field, inside the chunk and in the index.
    let no_type = record(
        &[
            ("topic", b"/chatter"),
            ("conn", &0u32.to_le_bytes()),
            ("op", &[0x07]),
        ],
        &header(&[("topic", b"/chatter"), ("md5sum", STRING_MD5.as_bytes())]),
    );
    let mut content = no_type.clone();
    content.extend(message(0, MESSAGES[0].0, MESSAGES[0].1));
    add(
        "connection-without-type.bag",
        model(Spec {
            content: Some(content),
            index_entries: Some((1, vec![(MESSAGES[0].0, no_type.len() as u32)])),
            ..Spec::default()
        })
        .bytes,
    );
    // A message on connection 7, which is never declared.
    let mut content = chatter_connection();
    let offset = content.len() as u32;
    content.extend(message(7, MESSAGES[0].0, MESSAGES[0].1));
    add(
        "message-on-undeclared-connection.bag",
        model(Spec {
            content: Some(content),
            index_entries: Some((1, vec![(MESSAGES[0].0, offset)])),
            ..Spec::default()
        })
        .bytes,
    );
    let _ = (
        plain.chunk_data_pos,
        plain.index_data_pos,
        plain.chunk_info_pos,
    );
    files
}

/// A one-message bag whose message is `len` zero bytes, in a `compression` chunk with an
/// honest size.
pub(crate) fn bomb(compression: &str, len: usize) -> Model {
    let mut content = chatter_connection();
    let offset = content.len() as u32;
    content.extend(message(0, MESSAGES[0].0, &vec![0; len]));
    model(Spec {
        compression,
        content: Some(content),
        index_entries: Some((1, vec![(MESSAGES[0].0, offset)])),
        ..Spec::default()
    })
}
