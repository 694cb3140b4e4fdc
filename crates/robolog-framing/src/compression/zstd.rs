//! Zstandard, through the `zstd` crate's streaming decoder so that padding after the last frame
//! can be ignored and a truncated frame still gives up what it decoded.

use zstd::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};

use super::{CodecError, Compression};

/// Output granted at a time while salvaging, so that a lying frame cannot make us allocate the
/// whole cap up front.
const SALVAGE_STEP: usize = 1 << 20;

fn corrupt(e: impl std::fmt::Display) -> CodecError {
    CodecError::corrupt(Compression::Zstd, e)
}

pub(super) fn compress(
    compressor: &mut zstd::bulk::Compressor<'static>,
    input: &[u8],
    scratch: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    scratch.clear();
    scratch.reserve(zstd::zstd_safe::compress_bound(input.len()));
    compressor
        .compress_to_buffer(input, scratch)
        .map_err(corrupt)?;
    out.extend_from_slice(scratch);
    Ok(())
}

pub(super) fn new_compressor(level: i32) -> Result<zstd::bulk::Compressor<'static>, CodecError> {
    zstd::bulk::Compressor::new(level).map_err(corrupt)
}

/// Decodes into `out`, whose length is the declared size, which must come out exactly full.
pub(super) fn decompress_exact(
    decoder: &mut Decoder<'static>,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    decoder.reinit().map_err(corrupt)?;
    let expected = out.len();
    let mut src = InBuffer::around(input);
    let mut dst = OutBuffer::around(out.as_mut_slice());
    let outcome = fill(decoder, &mut src, &mut dst, expected);
    let written = dst.pos();
    match outcome {
        Err(e) => {
            out.truncate(written);
            Err(e)
        }
        Ok(true) => Ok(()),
        Ok(false) if written < expected => {
            out.truncate(written);
            Err(CodecError::SizeMismatch {
                codec: Compression::Zstd,
                expected: expected as u64,
                actual: written as u64,
            })
        }
        // The buffer is full but the frame has not ended: either more output follows (too much),
        // or the frame's end is missing.
        Ok(false) => finish_frame(decoder, &mut src, expected),
    }
}

/// Runs the decoder until the output buffer is full (returns whether a frame ended exactly
/// there), the input is used up, or no progress is possible.
fn fill(
    decoder: &mut Decoder<'static>,
    src: &mut InBuffer<'_>,
    dst: &mut OutBuffer<'_, [u8]>,
    capacity: usize,
) -> Result<bool, CodecError> {
    loop {
        let before = (src.pos(), dst.pos());
        let hint = decoder.run(src, dst).map_err(corrupt)?;
        if dst.pos() == capacity {
            return Ok(hint == 0);
        }
        if (src.pos(), dst.pos()) == before {
            return Ok(false);
        }
    }
}

/// The declared output is complete but the frame has not ended: decode on into a one-byte scratch
/// buffer to tell "more output" (an error) from "only the frame epilogue remains" (fine).
fn finish_frame(
    decoder: &mut Decoder<'static>,
    src: &mut InBuffer<'_>,
    expected: usize,
) -> Result<(), CodecError> {
    let mut scratch = [0u8; 1];
    loop {
        let mut dst = OutBuffer::around(&mut scratch[..]);
        let before = src.pos();
        let hint = decoder.run(src, &mut dst).map_err(corrupt)?;
        if dst.pos() > 0 {
            return Err(CodecError::Overflow {
                codec: Compression::Zstd,
                expected: expected as u64,
            });
        }
        if hint == 0 {
            return Ok(());
        }
        if src.pos() == before {
            return Err(corrupt("the frame ends before its epilogue"));
        }
    }
}

/// Decodes everything the (possibly truncated or damaged) input yields, up to `cap` bytes.
pub(super) fn decompress_partial(
    decoder: &mut Decoder<'static>,
    input: &[u8],
    cap: usize,
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    decoder.reinit().map_err(corrupt)?;
    let mut src = InBuffer::around(input);
    loop {
        if out.len() == out.capacity() {
            if out.len() >= cap {
                return Err(CodecError::TooLarge {
                    expected: out.len() as u64 + 1,
                    cap: cap as u64,
                });
            }
            out.reserve_exact(SALVAGE_STEP.min(cap - out.len()));
        }
        let before = (src.pos(), out.len());
        let at = out.len();
        // The output buffer sets the vector's length to what was decoded.
        let hint = decoder
            .run(&mut src, &mut OutBuffer::around_pos(out, at))
            .map_err(corrupt)?;
        if src.pos() == input.len() && out.len() < out.capacity() {
            return if hint == 0 {
                Ok(())
            } else {
                Err(corrupt("truncated frame"))
            };
        }
        if (src.pos(), out.len()) == before {
            return Err(corrupt("no progress"));
        }
    }
}
