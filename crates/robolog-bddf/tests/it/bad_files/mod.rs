//! The generator of `testdata/bad/bddf/` (shared by `tests/hostile.rs`, which checks what the
//! readers make of each file, and `tests/it/hostile_generated.rs`, which checks that the
//! committed files are what this writes).
//!
//! Files are assembled block by block here (spec §2–§5), with the descriptors encoded by prost
//! from our schema, independently of `BddfWriter`.

#![allow(dead_code)]

use prost::Message;
use robolog_bddf::identifier_hash;
use robolog_bddf::proto::descriptor_block::Descriptor;
use robolog_bddf::proto::file_format_descriptor::ChecksumType;
use robolog_bddf::proto::series_block_index::BlockEntry;
use robolog_bddf::proto::series_descriptor::DataType;
use robolog_bddf::proto::{
    DataDescriptor, DescriptorBlock, FileFormatDescriptor, FileFormatVersion, FileIndex,
    MessageTypeDescriptor, PodType, PodTypeDescriptor, SeriesBlockIndex, SeriesDescriptor,
    SeriesIdentifier,
};
use robolog_testkit::hostile::HostileFile;
use sha1::{Digest, Sha1};

pub(crate) fn header(block_type: u8, size: u64) -> [u8; 8] {
    ((u64::from(block_type) << 56) | size).to_le_bytes()
}

pub(crate) fn descriptor_block(descriptor: Option<Descriptor>) -> Vec<u8> {
    let body = DescriptorBlock { descriptor }.encode_to_vec();
    [&header(1, body.len() as u64)[..], &body].concat()
}

pub(crate) fn timestamp(ns: i64) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: ns.div_euclid(1_000_000_000),
        nanos: ns.rem_euclid(1_000_000_000) as i32,
    }
}

pub(crate) fn data_block(series_index: u32, time_ns: i64, payload: &[u8]) -> Vec<u8> {
    let descriptor = DataDescriptor {
        series_index,
        timestamp: Some(timestamp(time_ns)),
        additional_indexes: Vec::new(),
    }
    .encode_to_vec();
    [
        &header(0, (descriptor.len() + payload.len()) as u64)[..],
        &(descriptor.len() as u32).to_le_bytes(),
        &descriptor,
        payload,
    ]
    .concat()
}

pub(crate) fn file_descriptor(major: u32, checksum_type: i32) -> Vec<u8> {
    descriptor_block(Some(Descriptor::FileDescriptor(FileFormatDescriptor {
        version: Some(FileFormatVersion {
            major_version: major,
            minor_version: 0,
            patch_level: 0,
        }),
        annotations: Default::default(),
        checksum_type,
        checksum_num_bytes: 20,
    })))
}

pub(crate) fn identifier(name: &str) -> SeriesIdentifier {
    SeriesIdentifier {
        series_type: "bosdyn:channel".into(),
        spec: [("bosdyn:channel".to_owned(), name.to_owned())].into(),
    }
}

pub(crate) fn series_descriptor(series_index: u32, name: &str, data_type: DataType) -> Vec<u8> {
    let id = identifier(name);
    descriptor_block(Some(Descriptor::SeriesDescriptor(SeriesDescriptor {
        series_index,
        identifier_hash: identifier_hash(&id),
        series_identifier: Some(id),
        data_type: Some(data_type),
        ..Default::default()
    })))
}

pub(crate) fn text_type() -> DataType {
    DataType::MessageType(MessageTypeDescriptor {
        content_type: "text/plain".into(),
        ..Default::default()
    })
}

pub(crate) fn pod_type(pod: PodType, dimension: Vec<u32>) -> DataType {
    DataType::PodType(PodTypeDescriptor {
        pod_type: pod as i32,
        dimension,
    })
}

/// "BDDF" + `body` + the trailer: end header, `index_offset`, SHA-1 over everything before the
/// digest, "FDDB".
pub(crate) fn finish(body: &[u8], index_offset: u64) -> Vec<u8> {
    let mut out = body.to_vec();
    out.extend_from_slice(&header(2, 24));
    out.extend_from_slice(&index_offset.to_le_bytes());
    let digest = Sha1::digest(&out);
    out.extend_from_slice(&digest);
    out.extend_from_slice(b"FDDB");
    out
}

/// One series of the model file.
pub(crate) struct SeriesSpec {
    pub(crate) name: &'static str,
    pub(crate) data_type: DataType,
    /// (time, payload) of each data block.
    pub(crate) blocks: Vec<(i64, Vec<u8>)>,
}

/// A complete, valid file and where its parts are.
pub(crate) struct Model {
    pub(crate) bytes: Vec<u8>,
    /// Offset of each series' descriptor block.
    pub(crate) descriptor_offsets: Vec<u64>,
    /// Offset of each data block, per series.
    pub(crate) block_offsets: Vec<Vec<u64>>,
    /// Offset of each SeriesBlockIndex block.
    pub(crate) block_index_offsets: Vec<u64>,
    /// Offset of the FileIndex block.
    pub(crate) index_offset: u64,
}

/// Changes the model makes on request.
#[derive(Default)]
pub(crate) struct Tweaks {
    /// Replaces the file descriptor block.
    pub(crate) file_descriptor: Option<Vec<u8>>,
    /// Replaces the trailer's index offset.
    pub(crate) index_offset: Option<u64>,
    /// Replaces a block entry's file offset: (series, block, offset).
    pub(crate) entry_offset: Option<(usize, usize, u64)>,
    /// Replaces a series' descriptor_file_offset in its block index: (series, offset).
    pub(crate) descriptor_offset: Option<(usize, u64)>,
}

/// Series 0 ("log", text) then its blocks, written series after series.
pub(crate) fn model(series: &[SeriesSpec], tweaks: Tweaks) -> Model {
    let mut body = b"BDDF".to_vec();
    body.extend(
        tweaks
            .file_descriptor
            .unwrap_or_else(|| file_descriptor(1, ChecksumType::Sha1 as i32)),
    );
    let mut descriptor_offsets = Vec::new();
    let mut block_offsets = Vec::new();
    for (i, s) in series.iter().enumerate() {
        descriptor_offsets.push(body.len() as u64);
        body.extend(series_descriptor(i as u32, s.name, s.data_type.clone()));
        let mut offsets = Vec::new();
        for (t, payload) in &s.blocks {
            offsets.push(body.len() as u64);
            body.extend(data_block(i as u32, *t, payload));
        }
        block_offsets.push(offsets);
    }
    let mut block_index_offsets = Vec::new();
    for (i, s) in series.iter().enumerate() {
        block_index_offsets.push(body.len() as u64);
        let entries = s
            .blocks
            .iter()
            .enumerate()
            .map(|(j, (t, _))| BlockEntry {
                timestamp: Some(timestamp(*t)),
                file_offset: match tweaks.entry_offset {
                    Some((si, bj, offset)) if si == i && bj == j => offset,
                    _ => block_offsets[i][j],
                },
                additional_indexes: Vec::new(),
            })
            .collect();
        body.extend(descriptor_block(Some(Descriptor::SeriesBlockIndex(
            SeriesBlockIndex {
                series_index: i as u32,
                descriptor_file_offset: match tweaks.descriptor_offset {
                    Some((si, offset)) if si == i => offset,
                    _ => descriptor_offsets[i],
                },
                block_entries: entries,
                total_bytes: s.blocks.iter().map(|(_, p)| p.len() as u64).sum(),
            },
        ))));
    }
    let index_offset = body.len() as u64;
    body.extend(descriptor_block(Some(Descriptor::FileIndex(FileIndex {
        series_identifiers: series.iter().map(|s| identifier(s.name)).collect(),
        series_block_index_offsets: block_index_offsets.clone(),
        series_identifier_hashes: series
            .iter()
            .map(|s| identifier_hash(&identifier(s.name)))
            .collect(),
    }))));
    let bytes = finish(&body, tweaks.index_offset.unwrap_or(index_offset));
    Model {
        bytes,
        descriptor_offsets,
        block_offsets,
        block_index_offsets,
        index_offset,
    }
}

/// The standard content: a text series with two blocks.
pub(crate) fn log_series() -> SeriesSpec {
    SeriesSpec {
        name: "log",
        data_type: text_type(),
        blocks: vec![(1_000, b"started".to_vec()), (2_000, b"stopped".to_vec())],
    }
}

/// A float64 POD series whose sample dimensions multiply past any address space.
pub(crate) fn pod_overflow_series() -> SeriesSpec {
    SeriesSpec {
        name: "huge",
        data_type: pod_type(PodType::Float64, vec![u32::MAX, u32::MAX, u32::MAX]),
        blocks: vec![(1_000, vec![0; 8])],
    }
}

/// A scalar float64 POD series with a 7-byte block.
pub(crate) fn pod_partial_series() -> SeriesSpec {
    SeriesSpec {
        name: "partial",
        data_type: pod_type(PodType::Float64, vec![]),
        blocks: vec![(1_000, vec![0; 7])],
    }
}

pub(crate) fn plain() -> Model {
    model(&[log_series()], Tweaks::default())
}

/// Recomputes the SHA-1 of a file whose bytes were patched (so that only the intended damage
/// is in it).
pub(crate) fn reseal(mut bytes: Vec<u8>) -> Vec<u8> {
    let end = bytes.len() - 24;
    let digest = Sha1::digest(&bytes[..end]);
    bytes[end..end + 20].copy_from_slice(&digest);
    bytes
}

/// The files of `testdata/bad/bddf/`, each with why it exists (also in the README there).
pub(crate) fn generate() -> Vec<HostileFile> {
    let plain = plain();
    let first_block = plain.block_offsets[0][0] as usize;
    let mut files = Vec::new();
    let mut add = |name: &str, bytes: Vec<u8>| files.push(HostileFile::new(name, bytes));

    add("empty.bddf", Vec::new());
    add("magic-only.bddf", b"BDDF".to_vec());
    // The file descriptor block claims 2^56 − 1 bytes.
    add(
        "block-size-huge.bddf",
        [&b"BDDF"[..], &header(1, (1 << 56) - 1), &[0x0a, 0x00]].concat(),
    );
    // Block type 0x07 where the first data block is.
    let mut reserved = plain.bytes.clone();
    reserved[first_block + 7] = 0x07;
    add("reserved-block-type.bddf", reserved.clone());
    // A data block whose desc_len (4 GiB − 1) exceeds its block size.
    let mut desc_len = plain.bytes.clone();
    desc_len[first_block + 8..first_block + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    add("desc-len-over-block-size.bddf", reseal(desc_len));
    // Trailer index offsets: past the end, 0, into the middle of a data block.
    for (name, offset) in [
        ("index-offset-past-eof.bddf", 1u64 << 50),
        ("index-offset-zero.bddf", 0),
        ("index-offset-mid-block.bddf", first_block as u64 + 3),
    ] {
        add(
            name,
            model(
                &[log_series()],
                Tweaks {
                    index_offset: Some(offset),
                    ..Tweaks::default()
                },
            )
            .bytes,
        );
    }
    // Block index entries pointing past the end and into the middle of a block.
    for (name, offset) in [
        ("entry-offset-past-eof.bddf", 1u64 << 40),
        ("entry-offset-mid-block.bddf", first_block as u64 + 5),
    ] {
        add(
            name,
            model(
                &[log_series()],
                Tweaks {
                    entry_offset: Some((0, 1, offset)),
                    ..Tweaks::default()
                },
            )
            .bytes,
        );
    }
    // The series' block index names a data block as its descriptor.
    add(
        "descriptor-offset-at-data-block.bddf",
        model(
            &[log_series()],
            Tweaks {
                descriptor_offset: Some((0, first_block as u64)),
                ..Tweaks::default()
            },
        )
        .bytes,
    );
    // One payload byte flipped after the digest was computed.
    let mut flipped = plain.bytes.clone();
    let at = plain
        .bytes
        .windows(7)
        .position(|w| w == b"stopped")
        .expect("the second payload");
    flipped[at] ^= 0x20;
    add("sha1-mismatch.bddf", flipped);
    add(
        "unsupported-version.bddf",
        model(
            &[log_series()],
            Tweaks {
                file_descriptor: Some(file_descriptor(2, ChecksumType::Sha1 as i32)),
                ..Tweaks::default()
            },
        )
        .bytes,
    );
    add(
        "unsupported-checksum.bddf",
        model(
            &[log_series()],
            Tweaks {
                file_descriptor: Some(file_descriptor(1, 7)),
                ..Tweaks::default()
            },
        )
        .bytes,
    );
    // POD series: dimensions whose product overflows, and a payload that is not a whole number
    // of float64 samples.
    add(
        "pod-dimensions-overflow.bddf",
        model(&[pod_overflow_series()], Tweaks::default()).bytes,
    );
    add(
        "pod-partial-sample.bddf",
        model(&[pod_partial_series()], Tweaks::default()).bytes,
    );
    // Everything that can be empty is: a series with an empty name, a data block with a 0-byte
    // descriptor (series 0, time 0) and a 0-byte payload, and a 0-byte index block.
    let mut body = b"BDDF".to_vec();
    body.extend(file_descriptor(1, ChecksumType::Sha1 as i32));
    body.extend(series_descriptor(0, "", text_type()));
    body.extend([&header(0, 0)[..], &0u32.to_le_bytes()].concat());
    let index_offset = body.len() as u64;
    body.extend(header(1, 0));
    add("zero-lengths.bddf", finish(&body, index_offset));
    // A data block of series 5, which is never declared (and no index).
    let mut body = b"BDDF".to_vec();
    body.extend(file_descriptor(1, ChecksumType::Sha1 as i32));
    body.extend(data_block(5, 1_000, b"orphan"));
    let index_offset = body.len() as u64;
    body.extend(header(1, 0));
    add("undeclared-series.bddf", finish(&body, index_offset));
    // Series index 2^32 − 1: nothing may be sized by it.
    let mut body = b"BDDF".to_vec();
    body.extend(file_descriptor(1, ChecksumType::Sha1 as i32));
    body.extend(series_descriptor(u32::MAX, "far", text_type()));
    body.extend(data_block(u32::MAX, 1_000, b"far away"));
    add("series-index-huge.bddf", body.clone());
    // Cut in the middle of the second data block (a recorder that died).
    let cut = plain.block_offsets[0][1] as usize + 10;
    add("cut-mid-block.bddf", plain.bytes[..cut].to_vec());
    // A descriptor block whose protobuf has a length-delimited field claiming 2^62 bytes.
    let mut body = b"BDDF".to_vec();
    let garbage = [0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40];
    body.extend(header(1, garbage.len() as u64));
    body.extend(garbage);
    add("protobuf-length-huge.bddf", finish(&body, 4));
    files
}
