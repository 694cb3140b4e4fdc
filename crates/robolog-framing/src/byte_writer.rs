//! Little-endian writing into a growable buffer, with length fields patched after the fact.

use crate::error::{Error, ErrorKind};

/// Appends little-endian values to a borrowed `Vec<u8>`.
///
/// Length prefixes that are only known after the payload is written are reserved with
/// [`ByteWriter::begin_len_u32`] / [`ByteWriter::begin_len_u64`] and filled in by
/// [`ByteWriter::end_len`], which counts the bytes written in between.
///
/// ```
/// use robolog_framing::{ByteReader, ByteWriter};
/// let mut buf = Vec::new();
/// let mut w = ByteWriter::new(&mut buf);
/// w.write_u8(0x05);
/// let len = w.begin_len_u64();
/// w.write_str_u32("lz4").unwrap();
/// w.end_len(len).unwrap();
/// let mut r = ByteReader::new(&buf);
/// assert_eq!(r.read_u8("op").unwrap(), 5);
/// assert_eq!(r.read_u64("len").unwrap(), 7);
/// assert_eq!(r.read_str_u32("compression").unwrap(), "lz4");
/// ```
#[derive(Debug)]
pub struct ByteWriter<'a> {
    buf: &'a mut Vec<u8>,
}

/// A reserved length field, to be filled in by [`ByteWriter::end_len`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a reserved length must be filled in with end_len"]
pub struct LenSlot {
    at: usize,
    width: LenWidth,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LenWidth {
    U32,
    U64,
}

macro_rules! write_le {
    ($(#[$doc:meta] $name:ident($ty:ty);)*) => {$(
        #[$doc]
        #[inline]
        pub fn $name(&mut self, value: $ty) {
            self.buf.extend_from_slice(&value.to_le_bytes());
        }
    )*};
}

impl<'a> ByteWriter<'a> {
    /// A writer that appends to `buf` (existing content is kept).
    #[inline]
    pub fn new(buf: &'a mut Vec<u8>) -> Self {
        Self { buf }
    }

    /// Bytes in the buffer, including any that were there before this writer was created.
    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True when the buffer is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The buffer written so far.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        self.buf
    }

    write_le! {
        /// Writes a `u8`.
        write_u8(u8);
        /// Writes a little-endian `u16`.
        write_u16(u16);
        /// Writes a little-endian `u32`.
        write_u32(u32);
        /// Writes a little-endian `u64`.
        write_u64(u64);
        /// Writes an `i8`.
        write_i8(i8);
        /// Writes a little-endian `i16`.
        write_i16(i16);
        /// Writes a little-endian `i32`.
        write_i32(i32);
        /// Writes a little-endian `i64`.
        write_i64(i64);
        /// Writes a little-endian IEEE-754 `f32`.
        write_f32(f32);
        /// Writes a little-endian IEEE-754 `f64`.
        write_f64(f64);
    }

    /// Writes raw bytes without a prefix.
    #[inline]
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Writes a `u32` byte length and the bytes. Fails when the length does not fit a `u32`.
    #[inline]
    pub fn write_bytes_u32(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let len =
            u32::try_from(bytes.len()).map_err(|_| self.too_long(bytes.len(), u32::MAX.into()))?;
        self.write_u32(len);
        self.write_bytes(bytes);
        Ok(())
    }

    /// Writes a `u64` byte length and the bytes.
    #[inline]
    pub fn write_bytes_u64(&mut self, bytes: &[u8]) {
        self.write_u64(bytes.len() as u64);
        self.write_bytes(bytes);
    }

    /// Writes a `u32`-length-prefixed UTF-8 string.
    #[inline]
    pub fn write_str_u32(&mut self, s: &str) -> Result<(), Error> {
        self.write_bytes_u32(s.as_bytes())
    }

    /// Reserves a `u32` length field at the current position.
    #[inline]
    pub fn begin_len_u32(&mut self) -> LenSlot {
        let at = self.buf.len();
        self.write_u32(0);
        LenSlot {
            at,
            width: LenWidth::U32,
        }
    }

    /// Reserves a `u64` length field at the current position.
    #[inline]
    pub fn begin_len_u64(&mut self) -> LenSlot {
        let at = self.buf.len();
        self.write_u64(0);
        LenSlot {
            at,
            width: LenWidth::U64,
        }
    }

    /// Fills a reserved length field with the number of bytes written after it, and returns that
    /// number. Fails when it does not fit the field.
    pub fn end_len(&mut self, slot: LenSlot) -> Result<u64, Error> {
        let start = slot.at + slot.width.size();
        let len = (self.buf.len() - start) as u64;
        match slot.width {
            LenWidth::U32 => {
                let value =
                    u32::try_from(len).map_err(|_| self.too_long(len as usize, u32::MAX.into()))?;
                self.patch_u32(slot.at, value)?;
            }
            LenWidth::U64 => self.patch_u64(slot.at, len)?,
        }
        Ok(len)
    }

    /// Overwrites four bytes at `at` (an index into the buffer) with a little-endian `u32`.
    pub fn patch_u32(&mut self, at: usize, value: u32) -> Result<(), Error> {
        self.patch(at, &value.to_le_bytes())
    }

    /// Overwrites eight bytes at `at` (an index into the buffer) with a little-endian `u64`.
    pub fn patch_u64(&mut self, at: usize, value: u64) -> Result<(), Error> {
        self.patch(at, &value.to_le_bytes())
    }

    fn patch(&mut self, at: usize, bytes: &[u8]) -> Result<(), Error> {
        let available = self.buf.len() as u64;
        match self.buf.get_mut(at..at + bytes.len()) {
            Some(target) => {
                target.copy_from_slice(bytes);
                Ok(())
            }
            None => Err(Error::new(
                at as u64,
                "patched length field",
                ErrorKind::UnexpectedEnd {
                    needed: (at + bytes.len()) as u64,
                    available,
                },
            )),
        }
    }

    fn too_long(&self, length: usize, max: u64) -> Error {
        Error::new(
            self.buf.len() as u64,
            "length-prefixed value",
            ErrorKind::TooLongToWrite {
                length: length as u64,
                max,
            },
        )
    }
}

impl LenWidth {
    fn size(self) -> usize {
        match self {
            LenWidth::U32 => 4,
            LenWidth::U64 => 8,
        }
    }
}
