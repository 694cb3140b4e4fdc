//! The one place where an untrusted length field is turned into a size we may allocate or slice.
//!
//! Every container crate routes declared lengths through [`check_len`] before using them, so that
//! a corrupt or hostile length can never cause an allocation larger than the data that exists (for
//! slices) or than a limit the caller chose (for streams, whose end is unknown).

use crate::error::{Error, ErrorKind};

/// What a declared length is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthBound {
    /// The bytes that remain in the slice being parsed.
    Remaining(u64),
    /// A configured maximum, for streams where the remaining size is unknown.
    Limit(u64),
}

/// Checks a declared `length` against `bound` and converts it to `usize`.
///
/// `offset` and `what` describe the length field for the error message.
///
/// ```
/// use robolog_framing::{check_len, LengthBound};
/// assert_eq!(check_len(10, LengthBound::Remaining(12), 0, "data_len").unwrap(), 10);
/// let err = check_len(u64::MAX, LengthBound::Remaining(12), 40, "data_len").unwrap_err();
/// assert_eq!(err.offset, 40);
/// assert!(check_len(1 << 40, LengthBound::Limit(1 << 32), 0, "record").is_err());
/// ```
#[inline]
pub fn check_len(
    length: u64,
    bound: LengthBound,
    offset: u64,
    what: &'static str,
) -> Result<usize, Error> {
    let kind = match bound {
        LengthBound::Remaining(available) if length > available => {
            ErrorKind::LengthPastEnd { length, available }
        }
        LengthBound::Limit(limit) if length > limit => ErrorKind::LengthOverLimit { length, limit },
        _ => match usize::try_from(length) {
            Ok(len) => return Ok(len),
            Err(_) => ErrorKind::LengthOverLimit {
                length,
                limit: usize::MAX as u64,
            },
        },
    };
    Err(Error::new(offset, what, kind))
}
