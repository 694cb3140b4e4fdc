//! Zstandard, through the `zstd` crate's streaming decoder so that padding after the last frame
//! can be ignored and a truncated frame still gives up what it decoded.

use zstd::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};

use super::{CodecError, Compression, too_large};

/// Output granted at a time while salvaging, so that a lying frame cannot make us allocate the
/// whole cap up front.
const SALVAGE_STEP: usize = 1 << 20;

fn corrupt(e: impl std::fmt::Display) -> CodecError {
    CodecError::corrupt(Compression::Zstd, e)
}

/// Appends one frame holding `input` to `out`, written straight into its spare capacity: a
/// separate buffer would cost each compressor one more chunk-sized allocation, and a copy.
pub(super) fn compress(
    compressor: &mut zstd::bulk::Compressor<'static>,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    let at = out.len();
    out.reserve(zstd::zstd_safe::compress_bound(input.len()));
    // zstd writes at the cursor and sets the length to the end of the frame.
    let mut tail = std::io::Cursor::new(out);
    tail.set_position(at as u64);
    compressor
        .compress_to_buffer(input, &mut tail)
        .map(|_| ())
        .map_err(corrupt)
}

pub(super) fn new_compressor(level: i32) -> Result<zstd::bulk::Compressor<'static>, CodecError> {
    zstd::bulk::Compressor::new(level).map_err(corrupt)
}

/// Decodes into `out` (previous content discarded), which must come out exactly `expected`
/// bytes long. Output goes into the vector's spare capacity, granted as the data arrives.
pub(super) fn decompress_exact(
    decoder: &mut Decoder<'static>,
    input: &[u8],
    expected: usize,
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    decoder.reinit().map_err(corrupt)?;
    out.clear();
    let mut src = InBuffer::around(input);
    loop {
        if out.len() == out.capacity() {
            if out.len() >= expected {
                // Exactly full but the frame has not ended: either more output follows (too
                // much), or only the frame's epilogue remains.
                return finish_frame(decoder, &mut src, expected);
            }
            out.reserve_exact(super::next_grant(out.len(), expected, input.len()));
        }
        let before = (src.pos(), out.len());
        let at = out.len();
        // The output buffer sets the vector's length to what was decoded.
        let hint = decoder
            .run(&mut src, &mut OutBuffer::around_pos(out, at))
            .map_err(corrupt)?;
        if out.len() > expected {
            // A reused buffer can have room past the declared size.
            out.truncate(expected);
            return Err(CodecError::Overflow {
                codec: Compression::Zstd,
                expected: expected as u64,
            });
        }
        if out.len() == expected && hint == 0 {
            // A frame ended exactly at the declared size; what follows is padding.
            return Ok(());
        }
        if (src.pos(), out.len()) == before {
            if out.len() < expected {
                return Err(CodecError::SizeMismatch {
                    codec: Compression::Zstd,
                    expected: expected as u64,
                    actual: out.len() as u64,
                });
            }
            return finish_frame(decoder, &mut src, expected);
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

/// A streaming decode that stops and resumes, so that a reader can decode a chunk's start only:
/// the zstd half of [`super::PrefixDecoder`]. Output goes to the start of a vector whose length
/// only grows; the caller truncates it to `written` at the end.
#[derive(Debug, Default)]
pub(super) struct ZstdPrefix {
    /// Input consumed.
    read: usize,
    pub(super) written: usize,
    /// Whether the last call ended a frame (the decoder's hint was 0).
    at_frame_end: bool,
}

impl ZstdPrefix {
    /// Starts a decode with `decoder`, reset.
    pub(super) fn new(decoder: &mut Decoder<'static>) -> Result<Self, CodecError> {
        decoder.reinit().map_err(corrupt)?;
        Ok(Self::default())
    }

    /// Decodes until at least `want` of the `expected` bytes are out.
    pub(super) fn fill_to(
        &mut self,
        decoder: &mut Decoder<'static>,
        input: &[u8],
        expected: usize,
        out: &mut Vec<u8>,
        want: usize,
    ) -> Result<(), CodecError> {
        let sizes = (want.min(expected), expected, input.len());
        let (read, at_frame_end) = (&mut self.read, &mut self.at_frame_end);
        super::fill_window(
            Compression::Zstd,
            out,
            &mut self.written,
            sizes,
            |window, at| {
                let mut src = InBuffer::around(input.get(*read..).unwrap_or(&[]));
                let mut dst = OutBuffer::around_pos(window, at);
                let hint = decoder.run(&mut src, &mut dst).map_err(corrupt)?;
                *read += src.pos();
                *at_frame_end = hint == 0;
                // A frame may end here and another follow: only a call that does nothing stops.
                Ok((dst.pos(), src.pos() > 0 || dst.pos() > at))
            },
        )
    }

    /// Decodes the rest and checks that the frames hold exactly `expected` bytes.
    pub(super) fn finish(
        &mut self,
        decoder: &mut Decoder<'static>,
        input: &[u8],
        expected: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), CodecError> {
        self.fill_to(decoder, input, expected, out, expected)?;
        if self.at_frame_end {
            // A frame ended exactly at the declared size; what follows is padding.
            return Ok(());
        }
        let mut src = InBuffer::around(input.get(self.read..).unwrap_or(&[]));
        finish_frame(decoder, &mut src, expected)
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
            out.reserve_exact(SALVAGE_STEP.min(cap - out.len()));
        }
        let before = (src.pos(), out.len());
        let at = out.len();
        // The output buffer sets the vector's length to what was decoded, into all of its
        // capacity: a reused buffer can hold more than `cap`, and what it held must not
        // change the outcome.
        let hint = decoder
            .run(&mut src, &mut OutBuffer::around_pos(out, at))
            .map_err(corrupt)?;
        if out.len() > cap {
            out.truncate(cap);
            return Err(too_large(cap));
        }
        if src.pos() == input.len() && hint == 0 {
            return Ok(());
        }
        if out.len() == cap {
            return Err(too_large(cap));
        }
        if src.pos() == input.len() && out.len() < out.capacity() {
            return Err(corrupt("truncated frame"));
        }
        if (src.pos(), out.len()) == before {
            return Err(corrupt("no progress"));
        }
    }
}
