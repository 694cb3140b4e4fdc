//! LZ4 frames in every layout lz4_flex writes, for the tests that decode them all.

use std::io::Write;

use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};

/// `data` as one LZ4 frame laid out as `info` says.
pub(crate) fn frame(data: &[u8], info: FrameInfo) -> Vec<u8> {
    let mut enc = FrameEncoder::with_frame_info(info, Vec::new());
    enc.write_all(data).expect("writing to a Vec");
    enc.finish().expect("writing to a Vec")
}

/// `data` as a frame in each layout lz4_flex can write (linked or independent blocks of 64 KiB,
/// 256 KiB or 4 MiB, with or without block checksums, a content checksum and the content size),
/// each with a label that names its layout.
pub(crate) fn every_frame_layout(data: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut frames = Vec::new();
    for mode in [BlockMode::Independent, BlockMode::Linked] {
        for size in [BlockSize::Max64KB, BlockSize::Max256KB, BlockSize::Max4MB] {
            for block_checksums in [false, true] {
                for content_checksum in [false, true] {
                    for content_size in [None, Some(data.len() as u64)] {
                        let info = FrameInfo::new()
                            .block_mode(mode)
                            .block_size(size)
                            .block_checksums(block_checksums)
                            .content_checksum(content_checksum)
                            .content_size(content_size);
                        let label = format!(
                            "{mode:?} {size:?} bc={block_checksums} cc={content_checksum} \
                             cs={content_size:?}"
                        );
                        frames.push((label, frame(data, info)));
                    }
                }
            }
        }
    }
    frames
}
