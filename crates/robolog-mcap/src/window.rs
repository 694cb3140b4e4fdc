//! What recovery reads: the whole file in memory, or a window over a stream (a pipe, a remote
//! object read front to back) that holds the record being recovered and what recovery looks
//! ahead at after it, never the whole file. Both frame records by the rule of
//! [`frame`](crate::linear::frame), so that a file recovered from a stream comes out as the
//! same file recovered from memory.

use robolog_framing::{Bytes, StreamWindow, WindowError};

use crate::error::{McapError, Result};
use crate::linear::frame;

/// The input of a recovery.
pub(crate) enum Source<'r> {
    /// The whole file, in memory.
    Slice(Bytes),
    /// A stream, read front to back.
    Stream(Window<'r>),
}

/// The bytes of a stream from the start of the record being recovered on.
pub(crate) type Window<'r> = StreamWindow<'r>;

fn mcap_error(e: WindowError) -> McapError {
    match e {
        WindowError::Io { offset, source } => McapError::Io { offset, source },
        WindowError::TooLarge {
            offset,
            length,
            limit,
        } => McapError::TooLarge {
            offset,
            record: "record",
            length,
            limit,
        },
    }
}

impl Source<'_> {
    /// The length of the input, when known (a stream's: when told, or once it ended).
    pub(crate) fn known_len(&self) -> Option<u64> {
        match self {
            Source::Slice(data) => Some(data.len() as u64),
            Source::Stream(window) => window.stream_len(),
        }
    }

    /// True when the input's length was known from the start (in memory, or told).
    pub(crate) fn length_told(&self) -> bool {
        match self {
            Source::Slice(_) => true,
            Source::Stream(window) => window.length_told(),
        }
    }

    /// The most that was held at once: the whole input, or a stream's window at its widest.
    pub(crate) fn peak(&self) -> u64 {
        match self {
            Source::Slice(data) => data.len() as u64,
            Source::Stream(window) => window.peak(),
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
                let end = window.fill(end).map_err(mcap_error)?;
                Ok(Bytes::copy_from_slice(window.slice(start, end)))
            }
        }
    }

    /// True when the bytes up to `end` can be held (always, for an input in memory).
    pub(crate) fn can_hold(&self, end: u64) -> bool {
        match self {
            Source::Slice(_) => true,
            Source::Stream(window) => end.saturating_sub(window.start()) <= window.limit(),
        }
    }

    /// The end of what a window may hold from where it starts now (no end in memory).
    pub(crate) fn hold_end(&self) -> u64 {
        match self {
            Source::Slice(_) => u64::MAX,
            Source::Stream(window) => window.start().saturating_add(window.limit()),
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
                        let cap = window.start().saturating_add(window.limit());
                        window.fill(need.min(cap)).map_err(mcap_error)?
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
            Source::Stream(window) => window.tail(n).map_err(mcap_error),
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
