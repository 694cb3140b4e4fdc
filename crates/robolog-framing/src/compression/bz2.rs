//! bzip2, through the `bzip2` crate (pure-Rust libbz2 port by default).

use std::io::Write as _;

use bzip2::{Decompress, Status};

use super::{CodecError, Compression};

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

/// Decodes one stream into `out`, whose length is the declared size, which must come out
/// exactly full.
pub(super) fn decompress_exact(input: &[u8], out: &mut Vec<u8>) -> Result<(), CodecError> {
    let expected = out.len();
    let mut d = Decompress::new(false);
    let mut written = 0usize;
    let result = loop {
        let before = progress(&d);
        let read = d.total_in() as usize;
        let status = match d.decompress(&input[read..], &mut out[written..]) {
            Ok(status) => status,
            Err(e) => break Err(corrupt(e)),
        };
        written = d.total_out() as usize;
        if matches!(status, Status::StreamEnd) {
            break Ok(());
        }
        if written == expected {
            // Full but the stream has not ended: more output (an error) or only its trailer.
            let mut scratch = [0u8; 1];
            break loop {
                let before = progress(&d);
                let read = d.total_in() as usize;
                match d.decompress(&input[read..], &mut scratch) {
                    Err(e) => break Err(corrupt(e)),
                    Ok(_) if d.total_out() as usize > expected => {
                        break Err(CodecError::Overflow {
                            codec: Compression::Bz2,
                            expected: expected as u64,
                        });
                    }
                    Ok(Status::StreamEnd) => break Ok(()),
                    Ok(_) if progress(&d) == before => {
                        break Err(corrupt("the stream ends before its trailer"));
                    }
                    Ok(_) => {}
                }
            };
        }
        if progress(&d) == before {
            break Err(corrupt("truncated stream"));
        }
    };
    if written < expected {
        out.truncate(written);
        return Err(result.err().unwrap_or(CodecError::SizeMismatch {
            codec: Compression::Bz2,
            expected: expected as u64,
            actual: written as u64,
        }));
    }
    result
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
            if out.len() >= cap {
                return Err(CodecError::TooLarge {
                    expected: out.len() as u64 + 1,
                    cap: cap as u64,
                });
            }
            out.reserve_exact(SALVAGE_STEP.min(cap - out.len()));
        }
        let before = progress(&d);
        let read = d.total_in() as usize;
        match d.decompress_vec(&input[read..], out).map_err(corrupt)? {
            Status::StreamEnd => return Ok(()),
            _ if progress(&d) == before => return Err(corrupt("truncated stream")),
            _ => {}
        }
    }
}
