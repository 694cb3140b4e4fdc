//! LZ4 frame format (<https://github.com/lz4/lz4/blob/dev/doc/lz4_Frame_format.md>).
//!
//! Compression goes through `lz4_flex`'s frame encoder. Decompression walks the frame itself and
//! decodes each block with `lz4_flex`'s block decoder straight into the caller's buffer: that
//! avoids the frame decoder's intermediate block buffer and copy, accepts every standard frame
//! (linked or independent blocks, block and content checksums, content size, concatenated and
//! skippable frames) and lets a truncated frame give up its complete blocks.

use std::hash::Hasher as _;
use std::io::Write as _;

use bytes::{Bytes, BytesMut};
use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};
use twox_hash::XxHash32;

use super::{CodecError, Compression, Lz4Frame};
use crate::worker_pool;

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
    let mut walk = Lz4Prefix::new(input.len(), expected);
    let result = walk.finish(input, out);
    out.truncate(walk.written());
    result
}

/// Decodes as many complete blocks as possible, up to `cap` output bytes.
pub(super) fn decompress_partial(
    input: &[u8],
    cap: usize,
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    // Every block is at most 4 MiB (block size id 7), and the input bounds the number of blocks,
    // so output beyond 255 times the input would be a lie; that keeps the buffer honest too.
    let full = cap.min(max_output(input.len()));
    // The buffer starts at what such data usually holds and grows (the frames are decoded
    // again) only when that runs out: zero-filling the 255:1 bound up front would cost the cut
    // chunk of a killed recorder, a few hundred kilobytes, a hundred megabytes.
    let mut bound = full.min(input.len().saturating_mul(8).max(PARTIAL_START));
    loop {
        out.clear();
        out.resize(bound, 0);
        let mut walker = FrameWalker {
            input,
            pos: 0,
            out: out.as_mut_slice(),
            written: 0,
            frames: 0,
            open: None,
        };
        let result = walker.run(false);
        let written = walker.written;
        if bound < full && matches!(result, Err(CodecError::Overflow { .. })) {
            bound = bound.saturating_mul(4).min(full);
            continue;
        }
        out.truncate(written);
        return result;
    }
}

/// The room [`decompress_partial`] starts with, at least: the largest block.
const PARTIAL_START: usize = 4 << 20;

/// The least output worth decoding in halves: below it, handing half to another thread costs
/// more than it saves.
const HALVES_MIN: usize = 256 * 1024;

/// Decodes like [`decompress_exact`], with the second half of the blocks offered to the worker
/// pool (see [`worker_pool::join`]), so that a few large chunks keep every core busy: seven
/// chunks on two cores otherwise take four chunks' time.
///
/// Where the second half's output starts must be known without decoding the first half: so
/// only one frame of independent blocks, whose blocks before the last are full (as every
/// encoder writes them), is split. Anything else, and any damage, goes through
/// [`decompress_exact`], which also gives the errors.
pub(super) fn decompress_exact_in_halves(
    input: &Bytes,
    expected: usize,
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    match decode_in_halves(input, expected, out) {
        Some(()) => Ok(()),
        None => decompress_exact(input, expected, out),
    }
}

/// `None` when the frame cannot be split, or either half does not decode as it should.
fn decode_in_halves(input: &Bytes, expected: usize, out: &mut Vec<u8>) -> Option<()> {
    if expected < HALVES_MIN {
        return None;
    }
    let frame = BlockMap::read(input)?;
    let (n, block_max) = (frame.blocks.len(), frame.descriptor.block_max);
    if n < 2 {
        return None;
    }
    let full_before_last =
        (n - 1).checked_mul(block_max)? < expected && n.checked_mul(block_max)? >= expected;
    if !frame.descriptor.independent
        || !full_before_last
        || frame
            .descriptor
            .content_size
            .is_some_and(|size| size != expected as u64)
    {
        return None;
    }
    let split = n / 2 * block_max;
    super::grow_initialised(out, expected, 0, max_output(input.len()));
    out.truncate(expected);
    // A buffer that holds its allocation alone converts without a copy, both ways.
    let mut head = Bytes::from(std::mem::take(out))
        .try_into_mut()
        .unwrap_or_else(|shared| BytesMut::from(&shared[..]));
    let mut tail = head.split_off(split);
    let checks = BlockChecks {
        checksums: frame.descriptor.block_checksum,
        block_max,
    };
    let mut blocks = frame.blocks;
    let tail_blocks = blocks.split_off(n / 2);
    let tail_input = input.clone();
    let (head_ok, (tail, tail_ok)) = worker_pool::join(
        || decode_blocks(input, &blocks, checks, &mut head) == Some(split),
        move || {
            let written = decode_blocks(&tail_input, &tail_blocks, checks, &mut tail);
            let ok = written == Some(tail.len());
            (tail, ok)
        },
    );
    head.unsplit(tail);
    *out = Vec::from(head);
    let content_ok = frame
        .content_checksum
        .is_none_or(|stored| XxHash32::oneshot(0, out) == stored);
    (head_ok && tail_ok && content_ok).then_some(())
}

/// What every block of a frame is held to.
#[derive(Debug, Clone, Copy)]
struct BlockChecks {
    /// Blocks carry checksums.
    checksums: bool,
    /// No block decodes to more, as [`FrameWalker::block`] also requires.
    block_max: usize,
}

/// Decodes `blocks` of `input` one after another into `target`; the bytes written, or `None`
/// when a block is damaged or does not fit.
fn decode_blocks(
    input: &[u8],
    blocks: &[Block],
    checks: BlockChecks,
    target: &mut [u8],
) -> Option<usize> {
    let mut written = 0usize;
    for block in blocks {
        let data = input.get(block.at..block.at.checked_add(block.len)?)?;
        if checks.checksums {
            let stored = input.get(block.at + block.len..block.at + block.len + 4)?;
            if XxHash32::oneshot(0, data).to_le_bytes() != stored {
                return None;
            }
        }
        let end = target.len().min(written.checked_add(checks.block_max)?);
        let room = target.get_mut(written..end)?;
        written += if block.stored {
            room.get_mut(..data.len())?.copy_from_slice(data);
            data.len()
        } else {
            decode_block(data, room).ok()?
        };
    }
    Some(written)
}

/// Where a block's compressed bytes are.
#[derive(Debug, Clone, Copy)]
struct Block {
    at: usize,
    len: usize,
    /// Stored uncompressed.
    stored: bool,
}

/// A frame's blocks, found from their headers alone.
struct BlockMap {
    descriptor: Descriptor,
    blocks: Vec<Block>,
    content_checksum: Option<u32>,
}

impl BlockMap {
    /// The blocks of `input` when it is exactly one frame, `None` otherwise or when its headers
    /// are damaged.
    fn read(input: &[u8]) -> Option<Self> {
        let mut walker = FrameWalker {
            input,
            pos: 0,
            out: &mut [],
            written: 0,
            frames: 0,
            open: None,
        };
        if walker.u32("frame magic").ok()? != MAGIC {
            return None;
        }
        let descriptor = walker.descriptor().ok()?;
        let mut blocks = Vec::new();
        loop {
            let size = walker.u32("block size").ok()?;
            if size == 0 {
                break;
            }
            let len = (size & !BLOCK_UNCOMPRESSED) as usize;
            if len > descriptor.block_max {
                return None;
            }
            blocks.push(Block {
                at: walker.pos,
                len,
                stored: size & BLOCK_UNCOMPRESSED != 0,
            });
            walker.take(len, "block").ok()?;
            if descriptor.block_checksum {
                walker.take(4, "block checksum").ok()?;
            }
        }
        let content_checksum = if descriptor.content_checksum {
            Some(walker.u32("content checksum").ok()?)
        } else {
            None
        };
        (walker.pos == input.len()).then_some(Self {
            descriptor,
            blocks,
            content_checksum,
        })
    }
}

/// A frame walk that stops and resumes, so that a reader can decode a chunk's first blocks
/// only: the LZ4 half of [`super::PrefixDecoder`].
///
/// The output goes to the start of a vector whose length only grows (initialised room for the
/// next block); the caller truncates it to [`Lz4Prefix::written`] at the end.
pub(super) struct Lz4Prefix {
    /// The most output the input can back.
    ceiling: usize,
    expected: usize,
    pos: usize,
    written: usize,
    frames: usize,
    open: Option<OpenFrame>,
}

impl Lz4Prefix {
    /// Starts a walk over `input_len` bytes of frames that hold `expected` bytes.
    pub(super) fn new(input_len: usize, expected: usize) -> Self {
        Self {
            ceiling: max_output(input_len),
            expected,
            pos: 0,
            written: 0,
            frames: 0,
            open: None,
        }
    }

    /// The declared size, as far as the input can back it.
    fn limit(&self) -> usize {
        self.expected.min(self.ceiling)
    }

    /// Bytes decoded so far (the start of the output).
    pub(super) fn written(&self) -> usize {
        self.written
    }

    /// Decodes whole blocks until at least `want` bytes are out; frames that end first are a
    /// [`CodecError::SizeMismatch`].
    pub(super) fn fill_to(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        want: usize,
    ) -> Result<(), CodecError> {
        let want = want.min(self.expected);
        while self.written < want {
            // Room for the next block only, so that a short prefix initialises little.
            let room = self.open.as_ref().map_or(0, |f| f.descriptor.block_max);
            super::grow_initialised(
                out,
                self.limit().min(self.written + room),
                self.written,
                self.ceiling,
            );
            if !self.resume(input, out, |walker| walker.step(false))? {
                return Err(CodecError::SizeMismatch {
                    codec: Compression::Lz4,
                    expected: self.expected as u64,
                    actual: self.written as u64,
                });
            }
        }
        Ok(())
    }

    /// Decodes the rest and checks that the frames hold exactly the declared size.
    pub(super) fn finish(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), CodecError> {
        super::grow_initialised(out, self.limit(), self.written, self.ceiling);
        let expected = self.expected;
        self.resume(input, out, |walker| walker.finish(expected))
    }

    /// Runs `work` on a walker over the output, which ends at the declared size (so that a
    /// block overflowing it is caught, however long a reused buffer is).
    fn resume<'i, T>(
        &mut self,
        input: &'i [u8],
        out: &mut [u8],
        work: impl FnOnce(&mut FrameWalker<'i, '_>) -> Result<T, CodecError>,
    ) -> Result<T, CodecError> {
        let end = out.len().min(self.limit());
        let mut walker = FrameWalker {
            input,
            pos: self.pos,
            out: &mut out[..end],
            written: self.written,
            frames: self.frames,
            open: self.open.take(),
        };
        let result = work(&mut walker);
        self.pos = walker.pos;
        self.written = walker.written;
        self.frames = walker.frames;
        self.open = walker.open.take();
        result
    }
}

/// Decodes one independent block into `target`, returning the bytes written.
///
/// With the `lz4-c` feature the C liblz4 decoder (`LZ4_decompress_safe`, bounds-checked) does the
/// work, faster than lz4_flex on literal-heavy sensor data; when it fails, lz4_flex
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
    /// Frames started so far.
    frames: usize,
    /// The frame whose blocks are being decoded.
    open: Option<OpenFrame>,
}

/// A frame whose descriptor has been read, and where its output started.
struct OpenFrame {
    descriptor: Descriptor,
    start: usize,
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
        while self.step(stop_when_full)? {}
        Ok(())
    }

    /// Decodes the rest, which must make exactly `expected` bytes in all.
    fn finish(&mut self, expected: usize) -> Result<(), CodecError> {
        self.run(true)?;
        if self.written != expected {
            return Err(CodecError::SizeMismatch {
                codec: Compression::Lz4,
                expected: expected as u64,
                actual: self.written as u64,
            });
        }
        Ok(())
    }

    /// One unit of work: a frame header, a block, or a frame's end. `false` when the frames are
    /// over.
    fn step(&mut self, stop_when_full: bool) -> Result<bool, CodecError> {
        if let Some(open) = self.open.take() {
            if self.block(&open)? {
                self.open = Some(open);
            }
            return Ok(true);
        }
        if self.pos >= self.input.len() {
            if self.frames == 0 {
                return Err(self.corrupt("no LZ4 frame"));
            }
            return Ok(false);
        }
        if stop_when_full && self.written == self.out.len() && self.frames > 0 {
            return Ok(false);
        }
        let magic = self.u32("frame magic")?;
        if magic & SKIPPABLE_MAGIC_MASK == SKIPPABLE_MAGIC {
            let len = self.u32("skippable frame size")? as usize;
            self.take(len, "skippable frame")?;
            return Ok(true);
        }
        if magic != MAGIC {
            if self.frames > 0 {
                // Trailing padding after the last frame.
                return Ok(false);
            }
            return Err(self.corrupt(format_args!("bad frame magic {magic:#010x}")));
        }
        let descriptor = self.descriptor()?;
        self.frames += 1;
        self.open = Some(OpenFrame {
            descriptor,
            start: self.written,
        });
        Ok(true)
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

    /// Decodes the open frame's next block; at the frame's end mark, checks the frame and
    /// returns `false`.
    fn block(&mut self, open: &OpenFrame) -> Result<bool, CodecError> {
        let d = &open.descriptor;
        let frame_start = open.start;
        let block_at = self.pos;
        let size = self.u32("block size")?;
        if size == 0 {
            self.end_frame(open)?;
            return Ok(false);
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
        Ok(true)
    }

    /// Checks a frame's declared content size and content checksum once its blocks are done.
    fn end_frame(&mut self, open: &OpenFrame) -> Result<(), CodecError> {
        let frame_start = open.start;
        let frame_len = (self.written - frame_start) as u64;
        if let Some(size) = open.descriptor.content_size
            && size != frame_len
        {
            return Err(self.corrupt(format_args!(
                "frame declares {size} bytes of content but holds {frame_len}"
            )));
        }
        if open.descriptor.content_checksum {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_decode_grows_its_buffer_only_as_the_blocks_need() {
        // Eight MiB of one byte, about 255:1, cut after three quarters of its frame: the
        // complete blocks hold more than the buffer starts with.
        let data = vec![7u8; 8 << 20];
        let framed = frame(&data, BlockMode::Independent);
        let cut = &framed[..framed.len() * 3 / 4];
        let mut out = Vec::new();
        assert!(decompress_partial(cut, usize::MAX, &mut out).is_err());
        assert!(out.len() > PARTIAL_START, "{} bytes", out.len());
        assert_eq!(out.len() % (64 << 10), 0);
        assert!(out.iter().all(|&b| b == 7));
        // `cap` still bounds the output: the blocks that fit in it, then the overflow.
        let mut small = Vec::new();
        assert!(decompress_partial(cut, 100_000, &mut small).is_err());
        assert_eq!(small.len(), 65_536);
    }

    fn frame(data: &[u8], mode: BlockMode) -> Bytes {
        let info = FrameInfo::new()
            .block_mode(mode)
            .block_size(BlockSize::Max64KB);
        let mut enc = FrameEncoder::with_frame_info(info, Vec::new());
        enc.write_all(data).unwrap_or_default();
        Bytes::from(enc.finish().unwrap_or_default())
    }

    fn data(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i / 7 % 251) as u8).collect()
    }

    /// The halves path is taken for the frames it is meant for, and not for the others (whose
    /// output `tests/it/lz4_halves.rs` checks through the fallback).
    #[test]
    fn only_large_frames_of_independent_blocks_are_split() {
        let big = data(700_000);
        let mut out = Vec::new();
        let independent = frame(&big, BlockMode::Independent);
        assert_eq!(
            decode_in_halves(&independent, big.len(), &mut out),
            Some(())
        );
        assert!(out == big);
        let linked = frame(&big, BlockMode::Linked);
        assert_eq!(decode_in_halves(&linked, big.len(), &mut out), None);
        let small = data(HALVES_MIN - 1);
        let small_frame = frame(&small, BlockMode::Independent);
        assert_eq!(decode_in_halves(&small_frame, small.len(), &mut out), None);
        // A frame with no blocks at all (magic, descriptor, end mark) declaring a large size.
        let empty = frame(&[], BlockMode::Independent);
        assert_eq!(decode_in_halves(&empty, big.len(), &mut out), None);
        let mut padded = independent.to_vec();
        padded.push(0);
        assert_eq!(
            decode_in_halves(&Bytes::from(padded), big.len(), &mut out),
            None
        );
    }

    /// A block that decodes to more than the frame's block size is an error on one thread, and
    /// so in halves, even when the half's total comes out right.
    #[test]
    fn an_oversized_block_is_refused_in_halves_too() {
        let mut input = MAGIC.to_le_bytes().to_vec();
        let descriptor = [FLG_VERSION_01 | FLG_INDEPENDENT, 4 << 4];
        input.extend_from_slice(&descriptor);
        input.push((XxHash32::oneshot(0, &descriptor) >> 8) as u8);
        // 100,000 + 31,072 bytes: two 64 KiB blocks' worth, in blocks of the wrong sizes.
        let sizes = [100_000, 31_072, 65_536, 65_536, 10_000];
        for size in sizes {
            let block = lz4_flex::block::compress(&data(size));
            let block = &block[..];
            input.extend_from_slice(&(block.len() as u32).to_le_bytes());
            input.extend_from_slice(block);
        }
        input.extend_from_slice(&0u32.to_le_bytes());
        let input = Bytes::from(input);
        let expected = sizes.iter().sum::<usize>();
        let (mut one, mut halves) = (Vec::new(), Vec::new());
        let one = decompress_exact(&input, expected, &mut one).map_err(|e| e.to_string());
        let halves =
            decompress_exact_in_halves(&input, expected, &mut halves).map_err(|e| e.to_string());
        assert!(one.is_err());
        assert_eq!(halves, one);
    }

    #[test]
    fn a_block_map_lists_every_block_from_the_headers() {
        let big = data(700_000);
        let input = frame(&big, BlockMode::Independent);
        let map = BlockMap::read(&input).map(|m| (m.blocks.len(), m.descriptor.block_max));
        assert_eq!(map, Some((11, 64 * 1024)));
        assert!(BlockMap::read(&input[..input.len() - 1]).is_none());
    }
}
