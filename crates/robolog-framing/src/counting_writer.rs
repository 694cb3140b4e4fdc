//! A `Write` adapter that knows its position, for single-pass writers that record offsets.

use std::io::{self, Write};

use crate::crc::Crc32;

/// Passes writes through to `inner`, counting the bytes and, when enabled, keeping a running
/// CRC-32 of them.
///
/// Single-pass writers (no seeking) use the position to fill in index offsets, and the CRC to
/// checksum a whole section without reading it back.
///
/// ```
/// use std::io::Write;
/// use robolog_framing::CountingWriter;
/// let mut w = CountingWriter::new(Vec::new()).with_crc();
/// w.write_all(b"123456789").unwrap();
/// assert_eq!(w.position(), 9);
/// assert_eq!(w.crc(), Some(0xCBF4_3926));
/// ```
#[derive(Debug)]
pub struct CountingWriter<W> {
    inner: W,
    position: u64,
    crc: Option<Crc32>,
}

impl<W: Write> CountingWriter<W> {
    /// Wraps `inner`, starting at position 0.
    pub fn new(inner: W) -> Self {
        Self::starting_at(inner, 0)
    }

    /// Wraps `inner`, whose next byte is at `position` (appending to existing data).
    pub fn starting_at(inner: W, position: u64) -> Self {
        Self {
            inner,
            position,
            crc: None,
        }
    }

    /// Also keeps a running CRC-32 of everything written from now on.
    pub fn with_crc(mut self) -> Self {
        self.crc = Some(Crc32::new());
        self
    }

    /// Bytes written so far (plus the starting position).
    pub fn position(&self) -> u64 {
        self.position
    }

    /// The running CRC, when enabled.
    pub fn crc(&self) -> Option<u32> {
        self.crc.as_ref().map(Crc32::value)
    }

    /// Restarts the running CRC (enabling it if it was off).
    pub fn reset_crc(&mut self) {
        self.crc = Some(Crc32::new());
    }

    /// Stops hashing and hands over the CRC of what was written so far (`None` if this writer
    /// does not hash). Bytes written until [`CountingWriter::resume_crc`] are only counted.
    pub fn suspend_crc(&mut self) -> Option<Crc32> {
        self.crc.take()
    }

    /// Hashes again from `crc`, which the caller has brought up to the current position (with
    /// [`Crc32::combine`], say).
    pub fn resume_crc(&mut self, crc: Option<Crc32>) {
        self.crc = crc;
    }

    /// The wrapped writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The wrapped writer, mutably. Bytes written through it are not counted.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Unwraps the writer.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.position += n as u64;
        if let Some(crc) = &mut self.crc {
            crc.update(&buf[..n]);
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
