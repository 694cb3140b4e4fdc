//! A zero-copy, bounds-checked little-endian reader over a byte slice.

use crate::error::{Error, ErrorKind};
use crate::length::{LengthBound, check_len};

/// Reads little-endian values from a borrowed slice without copying.
///
/// Every read is bounds-checked and fails with an [`Error`] that carries the absolute byte offset
/// (the slice's `base` offset plus the position) and the name of what was being read. Byte runs
/// and strings borrow from the input.
///
/// ```
/// use robolog_framing::ByteReader;
/// let data = [3, 0, 0, 0, b'a', b'b', b'c', 7];
/// let mut r = ByteReader::with_base(&data, 100);
/// assert_eq!(r.read_str_u32("topic").unwrap(), "abc");
/// assert_eq!(r.read_u8("op").unwrap(), 7);
/// let err = r.read_u32("conn").unwrap_err();
/// assert_eq!(err.offset, 108);
/// assert!(err.is_truncation());
/// ```
#[derive(Debug, Clone)]
pub struct ByteReader<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
}

macro_rules! read_le {
    ($(#[$doc:meta] $name:ident -> $ty:ty;)*) => {$(
        #[$doc]
        #[inline]
        pub fn $name(&mut self, what: &'static str) -> Result<$ty, Error> {
            Ok(<$ty>::from_le_bytes(self.read_array(what)?))
        }
    )*};
}

impl<'a> ByteReader<'a> {
    /// A reader at the start of `data`, whose first byte is at absolute offset 0.
    #[inline]
    pub fn new(data: &'a [u8]) -> Self {
        Self::with_base(data, 0)
    }

    /// A reader at the start of `data`, whose first byte is at absolute offset `base`.
    #[inline]
    pub fn with_base(data: &'a [u8], base: u64) -> Self {
        Self { data, pos: 0, base }
    }

    /// Position relative to the start of the slice.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Absolute offset of the next byte to be read.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Absolute offset of the first byte of the slice.
    #[inline]
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Number of bytes not read yet.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// True when every byte has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The bytes not read yet, without consuming them.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    /// The whole underlying slice.
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Moves to `position` (relative to the start of the slice), which may equal the length.
    pub fn set_position(&mut self, position: usize, what: &'static str) -> Result<(), Error> {
        if position > self.data.len() {
            return Err(Error::new(
                self.base + position as u64,
                what,
                ErrorKind::UnexpectedEnd {
                    needed: position as u64,
                    available: self.data.len() as u64,
                },
            ));
        }
        self.pos = position;
        Ok(())
    }

    /// Checks a declared length against the bytes that remain.
    #[inline]
    pub fn check_len(&self, length: u64, what: &'static str) -> Result<usize, Error> {
        check_len(
            length,
            LengthBound::Remaining(self.remaining() as u64),
            self.offset(),
            what,
        )
    }

    #[inline]
    fn truncated(&self, needed: usize, what: &'static str) -> Error {
        Error::new(
            self.offset(),
            what,
            ErrorKind::UnexpectedEnd {
                needed: needed as u64,
                available: self.remaining() as u64,
            },
        )
    }

    /// Reads exactly `N` bytes into an array.
    #[inline]
    pub fn read_array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], Error> {
        match self.data.get(self.pos..self.pos + N) {
            Some(bytes) => {
                let mut out = [0u8; N];
                out.copy_from_slice(bytes);
                self.pos += N;
                Ok(out)
            }
            None => Err(self.truncated(N, what)),
        }
    }

    /// Reads a run of `len` bytes, borrowed from the input.
    #[inline]
    pub fn read_bytes(&mut self, len: usize, what: &'static str) -> Result<&'a [u8], Error> {
        if len > self.remaining() {
            return Err(self.truncated(len, what));
        }
        let bytes = &self.data[self.pos..self.pos + len];
        self.pos += len;
        Ok(bytes)
    }

    /// Skips `len` bytes.
    #[inline]
    pub fn skip(&mut self, len: usize, what: &'static str) -> Result<(), Error> {
        self.read_bytes(len, what).map(|_| ())
    }

    /// Splits off the next `len` bytes as a reader of their own (with the right absolute offsets),
    /// and advances past them.
    #[inline]
    pub fn take(&mut self, len: usize, what: &'static str) -> Result<ByteReader<'a>, Error> {
        let base = self.offset();
        let bytes = self.read_bytes(len, what)?;
        Ok(ByteReader::with_base(bytes, base))
    }

    /// Reads a `u32` length, checks it against the remaining bytes, and returns that many bytes.
    #[inline]
    pub fn read_bytes_u32(&mut self, what: &'static str) -> Result<&'a [u8], Error> {
        let at = self.offset();
        let declared = self.read_u32(what)?;
        self.read_prefixed(u64::from(declared), at, what)
    }

    /// Reads a `u64` length, checks it against the remaining bytes, and returns that many bytes.
    #[inline]
    pub fn read_bytes_u64(&mut self, what: &'static str) -> Result<&'a [u8], Error> {
        let at = self.offset();
        let declared = self.read_u64(what)?;
        self.read_prefixed(declared, at, what)
    }

    #[inline]
    fn read_prefixed(
        &mut self,
        declared: u64,
        at: u64,
        what: &'static str,
    ) -> Result<&'a [u8], Error> {
        let len = check_len(
            declared,
            LengthBound::Remaining(self.remaining() as u64),
            at,
            what,
        )?;
        self.read_bytes(len, what)
    }

    /// Reads a `u32`-length-prefixed UTF-8 string, borrowed from the input.
    #[inline]
    pub fn read_str_u32(&mut self, what: &'static str) -> Result<&'a str, Error> {
        let at = self.offset() + 4;
        let bytes = self.read_bytes_u32(what)?;
        utf8(bytes, at, what)
    }

    /// Reads a `u64`-length-prefixed UTF-8 string, borrowed from the input.
    #[inline]
    pub fn read_str_u64(&mut self, what: &'static str) -> Result<&'a str, Error> {
        let at = self.offset() + 8;
        let bytes = self.read_bytes_u64(what)?;
        utf8(bytes, at, what)
    }

    read_le! {
        /// Reads a `u8`.
        read_u8 -> u8;
        /// Reads a little-endian `u16`.
        read_u16 -> u16;
        /// Reads a little-endian `u32`.
        read_u32 -> u32;
        /// Reads a little-endian `u64`.
        read_u64 -> u64;
        /// Reads an `i8`.
        read_i8 -> i8;
        /// Reads a little-endian `i16`.
        read_i16 -> i16;
        /// Reads a little-endian `i32`.
        read_i32 -> i32;
        /// Reads a little-endian `i64`.
        read_i64 -> i64;
        /// Reads a little-endian IEEE-754 `f32`.
        read_f32 -> f32;
        /// Reads a little-endian IEEE-754 `f64`.
        read_f64 -> f64;
    }
}

/// Validates UTF-8, reporting the offset of the string's first byte on failure.
#[inline]
pub fn utf8<'a>(bytes: &'a [u8], offset: u64, what: &'static str) -> Result<&'a str, Error> {
    std::str::from_utf8(bytes).map_err(|e| {
        Error::new(
            offset,
            what,
            ErrorKind::InvalidUtf8 {
                valid_up_to: e.valid_up_to(),
            },
        )
    })
}
