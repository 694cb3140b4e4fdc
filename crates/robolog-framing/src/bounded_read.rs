//! Reading length-prefixed data from a stream without trusting the length.

use std::io::{self, Read};

use crate::error::{Error, ErrorKind};
use crate::length::{LengthBound, check_len};

/// Why [`read_exact_bounded`] failed.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// The length was over the limit, or the stream ended early (a truncation).
    #[error(transparent)]
    Framing(#[from] Error),
    /// The stream itself failed.
    #[error("I/O error while reading {what} at byte {offset}: {source}")]
    Io {
        /// Absolute offset where the read began.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// The underlying error.
        source: io::Error,
    },
}

/// The most a read reserves up front; beyond it the buffer grows only as bytes actually arrive.
const UPFRONT: usize = 1 << 20;

/// Reads exactly `len` bytes from `reader` into `buf` (replacing its content).
///
/// `len` is first checked against `limit`. The buffer then grows only as data arrives, so a
/// lying length on a short stream costs no more memory than the stream holds. A stream that ends
/// early gives an [`ErrorKind::UnexpectedEnd`] error at `offset` (where the read began).
///
/// ```
/// use robolog_framing::read_exact_bounded;
/// let mut buf = Vec::new();
/// let mut input: &[u8] = b"abcdef";
/// read_exact_bounded(&mut input, 4, 1024, 0, "record", &mut buf).unwrap();
/// assert_eq!(buf, b"abcd");
/// assert!(read_exact_bounded(&mut input, 1 << 40, 1024, 4, "record", &mut buf).is_err());
/// assert!(read_exact_bounded(&mut input, 5, 1024, 4, "record", &mut buf).is_err());
/// ```
pub fn read_exact_bounded<R: Read + ?Sized>(
    reader: &mut R,
    len: u64,
    limit: u64,
    offset: u64,
    what: &'static str,
    buf: &mut Vec<u8>,
) -> Result<(), StreamError> {
    let len = check_len(len, LengthBound::Limit(limit), offset, what)?;
    buf.clear();
    buf.reserve(len.min(UPFRONT));
    let got = reader
        .take(len as u64)
        .read_to_end(buf)
        .map_err(|source| StreamError::Io {
            offset,
            what,
            source,
        })?;
    if got < len {
        return Err(Error::new(
            offset,
            what,
            ErrorKind::UnexpectedEnd {
                needed: len as u64,
                available: got as u64,
            },
        )
        .into());
    }
    Ok(())
}
