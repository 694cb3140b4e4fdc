//! bzip2, through the `bzip2` crate (pure-Rust libbz2 port by default).

use std::io::Write as _;

use bzip2::{Decompress, Status};

use super::{CodecError, Compression, too_large};

/// Output granted at a time while salvaging.
const SALVAGE_STEP: usize = 1 << 20;

fn corrupt(e: impl std::fmt::Display) -> CodecError {
    CodecError::corrupt(Compression::Bz2, e)
}

pub(super) fn compress(input: &[u8], level: i32, out: &mut Vec<u8>) -> Result<(), CodecError> {
    let level = u32::try_from(level.clamp(1, 9)).unwrap_or(9);
    let mut encoder = bzip2::write::BzEncoder::new(out, bzip2::Compression::new(level));
    encoder.write_all(input).map_err(corrupt)?;
    encoder.finish().map_err(corrupt)?;
    Ok(())
}

fn progress(d: &Decompress) -> (u64, u64) {
    (d.total_in(), d.total_out())
}

/// Decodes one stream into `out` (previous content discarded), which must come out exactly
/// `expected` bytes long. Output goes into the vector's spare capacity, granted as the data
/// arrives, so that a lying declared size allocates nothing the data does not back.
pub(super) fn decompress_exact(
    input: &[u8],
    expected: usize,
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    out.clear();
    let mut d = Decompress::new(false);
    let result = loop {
        if out.len() == out.capacity() {
            if out.len() >= expected {
                break finish_stream(&mut d, input, expected);
            }
            out.reserve_exact(super::next_grant(out.len(), expected, input.len()));
        }
        let before = progress(&d);
        let read = d.total_in() as usize;
        let status = match d.decompress_vec(&input[read..], out) {
            Ok(status) => status,
            Err(e) => break Err(corrupt(e)),
        };
        if out.len() > expected {
            // A reused buffer can have room past the declared size.
            out.truncate(expected);
            return Err(CodecError::Overflow {
                codec: Compression::Bz2,
                expected: expected as u64,
            });
        }
        if matches!(status, Status::StreamEnd) {
            break Ok(());
        }
        if progress(&d) == before {
            break Err(corrupt("truncated stream"));
        }
    };
    if out.len() < expected {
        return Err(result.err().unwrap_or(CodecError::SizeMismatch {
            codec: Compression::Bz2,
            expected: expected as u64,
            actual: out.len() as u64,
        }));
    }
    result
}

/// The output is exactly full but the stream has not ended: decode on into a one-byte scratch
/// buffer to tell more output (an error) from only the stream's trailer (fine).
fn finish_stream(d: &mut Decompress, input: &[u8], expected: usize) -> Result<(), CodecError> {
    let mut scratch = [0u8; 1];
    loop {
        let before = progress(d);
        let read = d.total_in() as usize;
        match d.decompress(&input[read..], &mut scratch) {
            Err(e) => return Err(corrupt(e)),
            Ok(_) if d.total_out() as usize > expected => {
                return Err(CodecError::Overflow {
                    codec: Compression::Bz2,
                    expected: expected as u64,
                });
            }
            Ok(Status::StreamEnd) => return Ok(()),
            Ok(_) if progress(d) == before => {
                return Err(corrupt("the stream ends before its trailer"));
            }
            Ok(_) => {}
        }
    }
}

/// A streaming decode that stops and resumes, so that a reader can decode a chunk's start only:
/// the bzip2 half of [`super::PrefixDecoder`]. Output goes to the start of a vector whose
/// length only grows; the caller truncates it to `written` at the end.
pub(super) struct Bz2Prefix {
    decoder: Decompress,
    pub(super) written: usize,
    ended: bool,
}

impl std::fmt::Debug for Bz2Prefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bz2Prefix")
            .field("written", &self.written)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl Bz2Prefix {
    pub(super) fn new() -> Self {
        Self {
            decoder: Decompress::new(false),
            written: 0,
            ended: false,
        }
    }

    /// Decodes until at least `want` of the `expected` bytes are out.
    pub(super) fn fill_to(
        &mut self,
        input: &[u8],
        expected: usize,
        out: &mut Vec<u8>,
        want: usize,
    ) -> Result<(), CodecError> {
        let sizes = (want.min(expected), expected, input.len());
        let (decoder, ended) = (&mut self.decoder, &mut self.ended);
        super::fill_window(
            Compression::Bz2,
            out,
            &mut self.written,
            sizes,
            |window, at| {
                if *ended {
                    // Nothing follows the stream's end.
                    return Ok((at, false));
                }
                let before = progress(decoder);
                let read = decoder.total_in() as usize;
                let status = decoder
                    .decompress(input.get(read..).unwrap_or(&[]), &mut window[at..])
                    .map_err(corrupt)?;
                *ended = matches!(status, Status::StreamEnd);
                let now = decoder.total_out() as usize;
                Ok((now, !*ended && progress(decoder) != before))
            },
        )
    }

    /// Decodes the rest and checks that the stream holds exactly `expected` bytes.
    pub(super) fn finish(
        &mut self,
        input: &[u8],
        expected: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), CodecError> {
        self.fill_to(input, expected, out, expected)?;
        if self.ended {
            return Ok(());
        }
        finish_stream(&mut self.decoder, input, expected)
    }
}

/// Decodes every complete block of a (possibly truncated or damaged) stream, up to `cap` bytes.
pub(super) fn decompress_partial(
    input: &[u8],
    cap: usize,
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    let mut d = Decompress::new(false);
    loop {
        if out.len() == out.capacity() {
            out.reserve_exact(SALVAGE_STEP.min(cap - out.len()));
        }
        let before = progress(&d);
        let read = d.total_in() as usize;
        // Decoding fills all of the vector's capacity: a reused buffer can hold more than
        // `cap`, and what it held must not change the outcome.
        let status = d.decompress_vec(&input[read..], out).map_err(corrupt)?;
        if out.len() > cap {
            out.truncate(cap);
            return Err(too_large(cap));
        }
        match status {
            Status::StreamEnd => return Ok(()),
            _ if out.len() == cap => return Err(too_large(cap)),
            _ if progress(&d) == before => return Err(corrupt("truncated stream")),
            _ => {}
        }
    }
}
