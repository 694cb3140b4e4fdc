//! A window over a stream read front to back: the bytes from one point on (the record being
//! worked on), read as far as the caller has looked ahead, never more than a limit. Recovery of
//! a file that arrives as a stream (a pipe, a remote object) reads through it, so that memory
//! grows with the largest record, not with the file.

use std::io::{self, Read};

use bytes::Bytes;

/// Bytes asked of the stream at a time, at least: small records then cost one read per
/// megabyte, not one each.
const READ_AHEAD: u64 = 1 << 20;

/// Why a [`StreamWindow`] could not give the bytes asked for.
#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    /// The stream failed, or ended before the length it was said to have.
    #[error("I/O error at byte {offset}: {source}")]
    Io {
        /// Where the read failed.
        offset: u64,
        /// The underlying error.
        source: io::Error,
    },
    /// The bytes asked for reach further from the window's start than its limit.
    #[error("{length} bytes from byte {offset} on are over the limit of {limit}")]
    TooLarge {
        /// The window's start.
        offset: u64,
        /// Bytes from there to the end asked for.
        length: u64,
        /// The most the window holds.
        limit: u64,
    },
}

/// The bytes of a stream from a point on, read as far as asked, at most `limit` of them.
///
/// Offsets are positions in the stream. [`release`](Self::release) moves the window's start
/// forward (the bytes before it are forgotten); [`fill`](Self::fill) reads on.
///
/// ```
/// use robolog_framing::StreamWindow;
///
/// let data: Vec<u8> = (0..=255).collect();
/// let mut window = StreamWindow::new(&data[..], None, 100);
/// assert_eq!(window.fill(10)?, 10);
/// assert_eq!(window.slice(5, 10), &[5, 6, 7, 8, 9]);
/// window.release(200);
/// assert_eq!(window.fill(300)?, 256); // the stream ends at 256
/// assert_eq!(window.stream_len(), Some(256));
/// # Ok::<(), robolog_framing::WindowError>(())
/// ```
pub struct StreamWindow<'r> {
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
    limit: u64,
    peak: u64,
}

impl std::fmt::Debug for StreamWindow<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamWindow")
            .field("start", &self.start)
            .field("held", &self.buf.len())
            .field("len", &self.len)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl<'r> StreamWindow<'r> {
    /// A window over `reader`, whose length is `len` when known, holding at most `limit` bytes.
    pub fn new(reader: impl Read + 'r, len: Option<u64>, limit: u64) -> Self {
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

    /// The stream's length: the one told, or the one found once it ended.
    pub fn stream_len(&self) -> Option<u64> {
        self.len
    }

    /// True when the length was told up front.
    pub fn length_told(&self) -> bool {
        self.told
    }

    /// Where the window starts.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// The most bytes the window holds.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The most bytes that were held at once.
    pub fn peak(&self) -> u64 {
        self.peak
    }

    /// Reads on until the bytes up to `end` are held, or the stream ends; the end of what is
    /// held then. More than `limit` bytes from the window's start is an error; so is a stream
    /// ending before the length it was told to have.
    pub fn fill(&mut self, end: u64) -> Result<u64, WindowError> {
        let end = self.len.map_or(end, |len| end.min(len));
        if end <= self.have() {
            return Ok(end);
        }
        if end.saturating_sub(self.start) > self.limit {
            return Err(WindowError::TooLarge {
                offset: self.start,
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
                .map_err(|source| WindowError::Io {
                    offset: self.have(),
                    source,
                })? as u64;
            self.peak = self.peak.max(self.buf.capacity() as u64);
            if got < want {
                let ended = self.have();
                if self.told {
                    return Err(WindowError::Io {
                        offset: ended,
                        source: io::Error::new(
                            io::ErrorKind::UnexpectedEof,
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

    /// Forgets the bytes before `offset` (the caller never reads them again).
    pub fn release(&mut self, offset: u64) {
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

    /// The stream's length: the one told, or found by reading to its end (what is read on the
    /// way is not held).
    pub fn end(&mut self) -> Result<u64, WindowError> {
        match self.len {
            Some(len) => Ok(len),
            None => self.tail(0).map(|(len, _)| len),
        }
    }

    /// Reads the rest of the stream: its length and its last `n` bytes (or fewer).
    pub fn tail(&mut self, n: u64) -> Result<(u64, Bytes), WindowError> {
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

    /// The bytes `start..end` that are held (cut to what is held: [`fill`](Self::fill) first).
    pub fn slice(&self, start: u64, end: u64) -> &[u8] {
        let from = usize::try_from(start.saturating_sub(self.base)).unwrap_or(usize::MAX);
        let to = usize::try_from(end.saturating_sub(self.base)).unwrap_or(usize::MAX);
        let to = to.min(self.buf.len());
        &self.buf[from.min(to)..to]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_reads_ahead_forgets_behind_and_stops_at_its_limit() {
        let data: Vec<u8> = (0..5_000_000u32).map(|i| (i % 251) as u8).collect();
        let mut window = StreamWindow::new(&data[..], None, 3 << 20);
        for start in (0..4_000_000u64).step_by(100_000) {
            window.release(start);
            let end = window.fill(start + 200_000).unwrap();
            assert_eq!(end, start + 200_000);
            assert!(window.slice(start, end) == &data[start as usize..end as usize]);
        }
        assert!(window.peak() <= 3 << 20, "{}", window.peak());
        // Past the limit from where the window starts.
        window.release(4_000_000);
        assert!(matches!(
            window.fill(8_000_000),
            Err(WindowError::TooLarge {
                offset: 4_000_000,
                ..
            })
        ));
        let (len, tail) = window.tail(10).unwrap();
        assert_eq!(window.end().unwrap(), 5_000_000);
        assert_eq!(len, 5_000_000);
        assert_eq!(tail[..], data[4_999_990..]);
        assert_eq!(window.stream_len(), Some(5_000_000));
    }

    #[test]
    fn a_stream_that_ends_before_its_told_length_is_an_io_error() {
        let data = [7u8; 100];
        let mut window = StreamWindow::new(&data[..], Some(200), 1 << 20);
        match window.fill(150) {
            Err(WindowError::Io { offset, .. }) => assert_eq!(offset, 100),
            other => panic!("{other:?}"),
        }
    }
}
