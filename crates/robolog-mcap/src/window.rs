//! What recovery reads: the whole file in memory, or a window over a stream (a pipe, a remote
//! object read front to back) that holds the record being recovered and what recovery looks
//! ahead at after it, never the whole file. Both frame records by the rule of
//! [`frame`](crate::linear::frame), so that a file recovered from a stream comes out as the
//! same file recovered from memory.

use std::io::Read;

use robolog_framing::Bytes;

use crate::error::{McapError, Result};
use crate::linear::frame;

/// Bytes asked of a stream at a time, at least: small records then cost one read per
/// megabyte, not one each.
const READ_AHEAD: u64 = 1 << 20;

/// The input of a recovery.
pub(crate) enum Source<'r> {
    /// The whole file, in memory.
    Slice(Bytes),
    /// A stream, read front to back.
    Stream(Window<'r>),
}

/// The bytes of a stream from a point on (the start of the record being recovered), read as
/// far as recovery has looked ahead, at most `limit` of them.
pub(crate) struct Window<'r> {
    reader: Box<dyn Read + 'r>,
    /// The stream's bytes from `base` on.
    buf: Vec<u8>,
    base: u64,
    /// Where the window starts: the bytes before it are forgotten (dropped from `buf` lazily).
    start: u64,
    /// The stream's length: told up front (a remote object), or found at its end.
    len: Option<u64>,
    /// True when `len` was told: a stream ending before it is an I/O error, not a cut file.
    told: bool,
    /// The most bytes held at once.
    limit: u64,
    /// The most bytes that were held at once.
    peak: u64,
}

impl<'r> Window<'r> {
    /// A window over `reader`, whose length is `len` when known, holding at most `limit` bytes.
    pub(crate) fn new(reader: impl Read + 'r, len: Option<u64>, limit: u64) -> Self {
        Self {
            reader: Box::new(reader),
            buf: Vec::new(),
            base: 0,
            start: 0,
            len,
            told: len.is_some(),
            limit,
            peak: 0,
        }
    }

    fn have(&self) -> u64 {
        self.base + self.buf.len() as u64
    }

    /// Reads on until the bytes up to `end` are held, or the stream ends; the end of what is
    /// held then. More than `limit` bytes from the window's start is an error.
    fn fill(&mut self, end: u64) -> Result<u64> {
        let end = self.len.map_or(end, |len| end.min(len));
        if end <= self.have() {
            return Ok(end);
        }
        if end.saturating_sub(self.start) > self.limit {
            return Err(McapError::TooLarge {
                offset: self.start,
                record: "record",
                length: end - self.start,
                limit: self.limit,
            });
        }
        while self.have() < end {
            let have = self.have();
            // Read ahead, but never past the limit or the told length.
            let mut stop = have.saturating_add(READ_AHEAD).max(end);
            stop = stop.min(self.start.saturating_add(self.limit));
            if let Some(len) = self.len {
                stop = stop.min(len);
            }
            let want = stop - have;
            let got = (&mut self.reader)
                .take(want)
                .read_to_end(&mut self.buf)
                .map_err(|source| McapError::Io {
                    offset: self.have(),
                    source,
                })? as u64;
            self.peak = self.peak.max(self.buf.capacity() as u64);
            if got < want {
                let ended = self.have();
                if self.told {
                    return Err(McapError::Io {
                        offset: ended,
                        source: std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            format!(
                                "the stream ended at byte {ended}, before its length of {}",
                                self.len.unwrap_or(ended)
                            ),
                        ),
                    });
                }
                self.len = Some(ended);
                break;
            }
        }
        Ok(end.min(self.have()))
    }

    /// Forgets the bytes before `offset` (recovery never reads them again).
    fn release(&mut self, offset: u64) {
        self.start = self.start.max(offset);
        let dead = usize::try_from(offset.saturating_sub(self.base))
            .unwrap_or(usize::MAX)
            .min(self.buf.len());
        // Dropped once they are half the buffer: each byte is moved at most once on average.
        if dead > 0 && dead >= self.buf.len() / 2 {
            self.buf.drain(..dead);
            self.base += dead as u64;
        }
    }

    /// Reads the rest of the stream: its length and its last `n` bytes (or fewer).
    fn tail(&mut self, n: u64) -> Result<(u64, Bytes)> {
        loop {
            let have = self.have();
            self.release(have.saturating_sub(n));
            let step = self
                .limit
                .saturating_sub(have.saturating_sub(self.start))
                .clamp(1, READ_AHEAD);
            if self.fill(have + step)? <= have {
                let start = have.saturating_sub(n).max(self.start);
                return Ok((have, Bytes::copy_from_slice(self.slice(start, have))));
            }
        }
    }

    fn slice(&self, start: u64, end: u64) -> &[u8] {
        let from = usize::try_from(start.saturating_sub(self.base)).unwrap_or(usize::MAX);
        let to = usize::try_from(end.saturating_sub(self.base)).unwrap_or(usize::MAX);
        let to = to.min(self.buf.len());
        &self.buf[from.min(to)..to]
    }
}

impl Source<'_> {
    /// The length of the input, when known (a stream's: when told, or once it ended).
    pub(crate) fn known_len(&self) -> Option<u64> {
        match self {
            Source::Slice(data) => Some(data.len() as u64),
            Source::Stream(window) => window.len,
        }
    }

    /// True when the input's length was known from the start (in memory, or told).
    pub(crate) fn length_told(&self) -> bool {
        match self {
            Source::Slice(_) => true,
            Source::Stream(window) => window.told,
        }
    }

    /// The most that was held at once: the whole input, or a stream's window at its widest.
    pub(crate) fn peak(&self) -> u64 {
        match self {
            Source::Slice(data) => data.len() as u64,
            Source::Stream(window) => window.peak,
        }
    }

    /// Bytes `start..end`, cut at the end of the input. Reading a stream on to `end` may fail
    /// ([`McapError::Io`]), or ask for more than the window holds ([`McapError::TooLarge`]).
    pub(crate) fn bytes(&mut self, start: u64, end: u64) -> Result<Bytes> {
        match self {
            Source::Slice(data) => {
                let len = data.len();
                let end = usize::try_from(end).unwrap_or(usize::MAX).min(len);
                let start = usize::try_from(start).unwrap_or(usize::MAX).min(end);
                Ok(data.slice(start..end))
            }
            Source::Stream(window) => {
                let end = window.fill(end)?;
                Ok(Bytes::copy_from_slice(window.slice(start, end)))
            }
        }
    }

    /// True when the bytes up to `end` can be held (always, for an input in memory).
    pub(crate) fn can_hold(&self, end: u64) -> bool {
        match self {
            Source::Slice(_) => true,
            Source::Stream(window) => end.saturating_sub(window.start) <= window.limit,
        }
    }

    /// The end of what a window may hold from where it starts now (no end in memory).
    pub(crate) fn hold_end(&self) -> u64 {
        match self {
            Source::Slice(_) => u64::MAX,
            Source::Stream(window) => window.start.saturating_add(window.limit),
        }
    }

    /// The record at `pos` framed as [`frame_at`](crate::linear::frame_at) frames it in a
    /// file: `(opcode, content start, content end)`, `None` at the end, or a truncation
    /// error (inner). Of a stream of unknown length, a record reaching past what the window
    /// can hold is framed as one reaching past the end. The outer error is a failed read.
    pub(crate) fn frame_at(&mut self, pos: u64) -> Result<Result<Option<(u8, u64, u64)>>> {
        let prefix = self.bytes(pos, pos.saturating_add(9))?;
        let file_len = match self.known_len() {
            // Fewer than 9 bytes: the input ends there (and its length is known now).
            _ if prefix.len() < 9 => pos + prefix.len() as u64,
            Some(len) => len,
            None => {
                let mut length = [0u8; 8];
                length.copy_from_slice(&prefix[1..9]);
                let need = pos
                    .saturating_add(9)
                    .saturating_add(u64::from_le_bytes(length));
                match self {
                    Source::Slice(data) => data.len() as u64,
                    Source::Stream(window) => {
                        let cap = window.start.saturating_add(window.limit);
                        window.fill(need.min(cap))?
                    }
                }
            }
        };
        Ok(frame(&prefix, pos, file_len).map(|f| f.map(|(opcode, end)| (opcode, pos + 9, end))))
    }

    /// Forgets the bytes before `offset`.
    pub(crate) fn release(&mut self, offset: u64) {
        if let Source::Stream(window) = self {
            window.release(offset);
        }
    }

    /// Reads a stream to its end: its length and its last `n` bytes (the whole of an input in
    /// memory is there already).
    pub(crate) fn tail(&mut self, n: u64) -> Result<(u64, Bytes)> {
        match self {
            Source::Slice(data) => {
                let len = data.len();
                Ok((len as u64, data.slice(len.saturating_sub(n as usize)..)))
            }
            Source::Stream(window) => window.tail(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_reads_ahead_forgets_behind_and_stops_at_its_limit() {
        let data: Vec<u8> = (0..5_000_000u32).map(|i| (i % 251) as u8).collect();
        let mut source = Source::Stream(Window::new(&data[..], None, 3 << 20));
        for start in (0..4_000_000u64).step_by(100_000) {
            source.release(start);
            let bytes = source.bytes(start, start + 200_000).unwrap();
            assert!(bytes[..] == data[start as usize..start as usize + 200_000]);
        }
        assert!(source.peak() <= 3 << 20, "{}", source.peak());
        // Past the limit from where the window starts.
        source.release(4_000_000);
        assert!(matches!(
            source.bytes(4_000_000, 8_000_000),
            Err(McapError::TooLarge { .. })
        ));
        let (len, tail) = source.tail(10).unwrap();
        assert_eq!(len, 5_000_000);
        assert_eq!(tail[..], data[4_999_990..]);
        assert_eq!(source.known_len(), Some(5_000_000));
    }

    #[test]
    fn a_stream_that_ends_before_its_told_length_is_an_io_error() {
        let data = [7u8; 100];
        let mut source = Source::Stream(Window::new(&data[..], Some(200), 1 << 20));
        match source.bytes(0, 150) {
            Err(McapError::Io { offset, .. }) => assert_eq!(offset, 100),
            other => panic!("{other:?}"),
        }
    }
}
