//! LZ4 frame format (<https://github.com/lz4/lz4/blob/dev/doc/lz4_Frame_format.md>).
//!
//! Compression goes through `lz4_flex`'s frame encoder. Decompression walks the frame itself and
//! decodes each block with `lz4_flex`'s block decoder straight into the caller's buffer: that
//! avoids the frame decoder's intermediate block buffer and copy, accepts every standard frame
//! (linked or independent blocks, block and content checksums, content size, concatenated and
//! skippable frames) and lets a truncated frame give up its complete blocks.

use std::hash::Hasher as _;
use std::io::Write as _;

use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};
use twox_hash::XxHash32;

use super::{CodecError, Compression, Lz4Frame};

const MAGIC: u32 = 0x184D_2204;
const SKIPPABLE_MAGIC_MASK: u32 = 0xFFFF_FFF0;
const SKIPPABLE_MAGIC: u32 = 0x184D_2A50;
/// Linked blocks may refer back this far into the output that precedes them.
const WINDOW: usize = 64 * 1024;

const FLG_VERSION_MASK: u8 = 0b1100_0000;
const FLG_VERSION_01: u8 = 0b0100_0000;
const FLG_INDEPENDENT: u8 = 0b0010_0000;
const FLG_BLOCK_CHECKSUM: u8 = 0b0001_0000;
const FLG_CONTENT_SIZE: u8 = 0b0000_1000;
const FLG_CONTENT_CHECKSUM: u8 = 0b0000_0100;
const FLG_RESERVED: u8 = 0b0000_0010;
const FLG_DICT_ID: u8 = 0b0000_0001;
const BLOCK_UNCOMPRESSED: u32 = 0x8000_0000;

pub(super) fn compress(input: &[u8], frame: Lz4Frame, out: &mut Vec<u8>) -> Result<(), CodecError> {
    let info = match frame {
        Lz4Frame::RosCompatible => FrameInfo::new()
            .block_size(BlockSize::Max1MB)
            .block_mode(BlockMode::Independent)
            .block_checksums(false)
            .content_checksum(true),
        Lz4Frame::Standard => FrameInfo::new()
            .block_size(BlockSize::Max64KB)
            .block_mode(BlockMode::Independent)
            .content_size(Some(input.len() as u64)),
    };
    let mut encoder = FrameEncoder::with_frame_info(info, out);
    encoder
        .write_all(input)
        .map_err(|e| CodecError::corrupt(Compression::Lz4, e))?;
    encoder
        .finish()
        .map_err(|e| CodecError::corrupt(Compression::Lz4, e))?;
    Ok(())
}

/// The most output `input_len` bytes of LZ4 frames can hold: a block expands at most 255:1, and
/// frame and block headers only shrink that, so a larger declared size is a lie.
fn max_output(input_len: usize) -> usize {
    input_len.saturating_mul(255).saturating_add(64)
}

/// Decodes frames into `out` until it holds exactly `expected` bytes. The block decoder writes
/// into an initialised slice, sized by what the input can hold rather than by the declared size,
/// so that a lying size allocates nothing the data does not back.
pub(super) fn decompress_exact(
    input: &[u8],
    expected: usize,
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    super::set_initialised_len(out, expected.min(max_output(input.len())));
    let mut decoder = FrameWalker {
        input,
        pos: 0,
        out: out.as_mut_slice(),
        written: 0,
    };
    let result = decoder.run(true);
    let written = decoder.written;
    match result {
        Ok(()) if written == expected => Ok(()),
        Ok(()) => {
            out.truncate(written);
            Err(CodecError::SizeMismatch {
                codec: Compression::Lz4,
                expected: expected as u64,
                actual: written as u64,
            })
        }
        Err(e) => {
            out.truncate(written);
            Err(e)
        }
    }
}

/// Decodes as many complete blocks as possible, up to `cap` output bytes.
pub(super) fn decompress_partial(
    input: &[u8],
    cap: usize,
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    // Every block is at most 4 MiB (block size id 7), and the input bounds the number of blocks,
    // so output beyond 255 times the input would be a lie; that keeps the buffer honest too.
    let bound = cap.min(max_output(input.len()));
    out.resize(bound, 0);
    let mut decoder = FrameWalker {
        input,
        pos: 0,
        out: out.as_mut_slice(),
        written: 0,
    };
    let result = decoder.run(false);
    let written = decoder.written;
    out.truncate(written);
    result
}

/// Decodes one independent block into `target`, returning the bytes written.
///
/// With the `lz4-c` feature the C liblz4 decoder (`LZ4_decompress_safe`, bounds-checked) does the
/// work, about twice as fast as lz4_flex on literal-heavy sensor data; when it fails, lz4_flex
/// decodes the block again to say why (output too small or corrupt input), so that errors do not
/// depend on the feature.
#[inline]
fn decode_block(
    block: &[u8],
    target: &mut [u8],
) -> Result<usize, lz4_flex::block::DecompressError> {
    #[cfg(feature = "lz4-c")]
    {
        // The target is at most one block (4 MiB), far below i32::MAX.
        if let Ok(room) = i32::try_from(target.len())
            && let Ok(n) = ::lz4::block::decompress_to_buffer(block, Some(room), target)
        {
            return Ok(n);
        }
    }
    lz4_flex::block::decompress_into(block, target)
}

struct FrameWalker<'i, 'o> {
    input: &'i [u8],
    pos: usize,
    out: &'o mut [u8],
    written: usize,
}

struct Descriptor {
    independent: bool,
    block_checksum: bool,
    content_size: Option<u64>,
    content_checksum: bool,
    block_max: usize,
}

impl<'i> FrameWalker<'i, '_> {
    fn corrupt(&self, message: impl std::fmt::Display) -> CodecError {
        CodecError::corrupt(
            Compression::Lz4,
            format_args!("{message} at compressed byte {}", self.pos),
        )
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'i [u8], CodecError> {
        let input: &'i [u8] = self.input;
        match input.get(self.pos..self.pos.saturating_add(n)) {
            Some(bytes) => {
                self.pos += n;
                Ok(bytes)
            }
            None => Err(self.corrupt(format_args!("truncated {what}"))),
        }
    }

    fn u32(&mut self, what: &str) -> Result<u32, CodecError> {
        let bytes = self.take(4, what)?;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    /// Decodes frames. With `stop_when_full`, stops as soon as the output is exactly full at a
    /// frame boundary and ignores what follows (containers pad their chunks); otherwise decodes
    /// until the input ends.
    fn run(&mut self, stop_when_full: bool) -> Result<(), CodecError> {
        let mut frames = 0usize;
        while self.pos < self.input.len() {
            if stop_when_full && self.written == self.out.len() && frames > 0 {
                return Ok(());
            }
            let magic = self.u32("frame magic")?;
            if magic & SKIPPABLE_MAGIC_MASK == SKIPPABLE_MAGIC {
                let len = self.u32("skippable frame size")? as usize;
                self.take(len, "skippable frame")?;
                continue;
            }
            if magic != MAGIC {
                if frames > 0 {
                    // Trailing padding after the last frame.
                    return Ok(());
                }
                return Err(self.corrupt(format_args!("bad frame magic {magic:#010x}")));
            }
            self.frame()?;
            frames += 1;
        }
        if frames == 0 {
            return Err(self.corrupt("no LZ4 frame"));
        }
        Ok(())
    }

    fn descriptor(&mut self) -> Result<Descriptor, CodecError> {
        let start = self.pos;
        let flg = self.take(1, "frame descriptor")?[0];
        let bd = self.take(1, "frame descriptor")?[0];
        if flg & FLG_VERSION_MASK != FLG_VERSION_01 {
            return Err(self.corrupt(format_args!("unknown frame version in FLG {flg:#04x}")));
        }
        if flg & FLG_RESERVED != 0 || bd & 0b1000_1111 != 0 {
            return Err(self.corrupt("reserved bits set in the frame descriptor"));
        }
        let block_max = match (bd >> 4) & 0b111 {
            4 => 64 * 1024,
            5 => 256 * 1024,
            6 => 1024 * 1024,
            7 => 4 * 1024 * 1024,
            id => return Err(self.corrupt(format_args!("invalid block size id {id}"))),
        };
        let content_size = if flg & FLG_CONTENT_SIZE != 0 {
            let b = self.take(8, "content size")?;
            Some(u64::from_le_bytes([
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
            ]))
        } else {
            None
        };
        if flg & FLG_DICT_ID != 0 {
            return Err(CodecError::Unsupported {
                codec: Compression::Lz4,
                message: "frames that need a dictionary".into(),
            });
        }
        let header_end = self.pos;
        let checksum = self.take(1, "header checksum")?[0];
        let computed = (XxHash32::oneshot(0, &self.input[start..header_end]) >> 8) as u8;
        if checksum != computed {
            return Err(self.corrupt(format_args!(
                "header checksum {checksum:#04x} does not match {computed:#04x}"
            )));
        }
        Ok(Descriptor {
            independent: flg & FLG_INDEPENDENT != 0,
            block_checksum: flg & FLG_BLOCK_CHECKSUM != 0,
            content_size,
            content_checksum: flg & FLG_CONTENT_CHECKSUM != 0,
            block_max,
        })
    }

    fn frame(&mut self) -> Result<(), CodecError> {
        let d = self.descriptor()?;
        let frame_start = self.written;
        loop {
            let block_at = self.pos;
            let size = self.u32("block size")?;
            if size == 0 {
                break;
            }
            let stored = size & BLOCK_UNCOMPRESSED != 0;
            let len = (size & !BLOCK_UNCOMPRESSED) as usize;
            if len > d.block_max {
                return Err(self.corrupt(format_args!(
                    "block of {len} bytes exceeds the frame's {} byte maximum",
                    d.block_max
                )));
            }
            let block = self.take(len, "block")?;
            if d.block_checksum {
                let stored_sum = self.u32("block checksum")?;
                if XxHash32::oneshot(0, block) != stored_sum {
                    self.pos = block_at;
                    return Err(self.corrupt("block checksum mismatch"));
                }
            }
            let room = (self.out.len() - self.written).min(d.block_max);
            let produced = if stored {
                if len > room {
                    return Err(self.overflow());
                }
                self.out[self.written..self.written + len].copy_from_slice(block);
                len
            } else {
                let (before, after) = self.out.split_at_mut(self.written);
                let target = &mut after[..room];
                let result = if d.independent || before.len() == frame_start {
                    decode_block(block, target)
                } else {
                    let dict_start = frame_start.max(before.len().saturating_sub(WINDOW));
                    lz4_flex::block::decompress_into_with_dict(block, target, &before[dict_start..])
                };
                match result {
                    Ok(n) => n,
                    Err(lz4_flex::block::DecompressError::OutputTooSmall { .. })
                        if room < d.block_max =>
                    {
                        return Err(self.overflow());
                    }
                    Err(e) => {
                        self.pos = block_at;
                        return Err(self.corrupt(e));
                    }
                }
            };
            self.written += produced;
        }
        let frame_len = (self.written - frame_start) as u64;
        if let Some(size) = d.content_size
            && size != frame_len
        {
            return Err(self.corrupt(format_args!(
                "frame declares {size} bytes of content but holds {frame_len}"
            )));
        }
        if d.content_checksum {
            let stored_sum = self.u32("content checksum")?;
            let mut hasher = XxHash32::with_seed(0);
            hasher.write(&self.out[frame_start..self.written]);
            if hasher.finish_32() != stored_sum {
                return Err(self.corrupt("content checksum mismatch"));
            }
        }
        Ok(())
    }

    fn overflow(&self) -> CodecError {
        CodecError::Overflow {
            codec: Compression::Lz4,
            expected: self.out.len() as u64,
        }
    }
}
