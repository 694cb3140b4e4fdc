//! CRC-32 (IEEE 802.3, the zlib polynomial), as MCAP uses it.

/// CRC-32 of a whole buffer.
///
/// ```
/// assert_eq!(robolog_framing::crc32(b"123456789"), 0xCBF4_3926);
/// ```
#[inline]
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// An incremental CRC-32: feed it pieces, get the CRC of their concatenation.
///
/// ```
/// use robolog_framing::{Crc32, crc32};
/// let mut crc = Crc32::new();
/// crc.update(b"1234");
/// crc.update(b"56789");
/// assert_eq!(crc.value(), crc32(b"123456789"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Crc32 {
    hasher: crc32fast::Hasher,
}

impl Crc32 {
    /// A CRC over no bytes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds bytes.
    #[inline]
    pub fn update(&mut self, data: &[u8]) {
        self.hasher.update(data);
    }

    /// The CRC of everything added so far (more can still be added).
    pub fn value(&self) -> u32 {
        self.hasher.clone().finalize()
    }

    /// Forgets everything added so far.
    pub fn reset(&mut self) {
        self.hasher.reset();
    }

    /// The CRC of `len` bytes whose CRC-32 is `crc`, to be extended or combined as if it had
    /// hashed them.
    pub fn resume(crc: u32, len: u64) -> Self {
        Self {
            hasher: crc32fast::Hasher::new_with_initial_len(crc, len),
        }
    }

    /// Extends this CRC as if `other`'s bytes had followed its own: a CRC of a whole can be
    /// made from its parts, hashed at different times.
    pub fn combine(&mut self, other: &Crc32) {
        self.hasher.combine(&other.hasher);
    }
}
