//! Positional input: the bytes of a log, read by range.
//!
//! Indexed readers ask for the byte ranges they need (the footer, the summary, the chunks a
//! query plans to decode) instead of holding the whole file. A file is read with positional
//! reads (`pread`), so a file truncated by another process while it is read gives an I/O error,
//! never a fault. A buffer in memory is sliced without copying. A memory map is an explicit
//! `unsafe` opt-in ([`Input::map`]). Other sources (an HTTP server, an object store) implement
//! [`ReadAt`].

use std::fmt;
use std::fs::File;
use std::io;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use robolog_framing::Bytes;

/// Ranges closer than this are read as one by [`ReadAt::read_ranges`]'s default: reading the
/// gap costs less than another request.
pub const COALESCE_GAP: u64 = 64 << 10;

/// A source of bytes read by position. Implementations must allow reads from several threads
/// at once (a query's workers read their chunks concurrently).
///
/// ```
/// use std::ops::Range;
/// use robolog_query::{Bytes, Input, ReadAt};
///
/// /// A source that serves the same byte everywhere (a stand-in for a remote object).
/// #[derive(Debug)]
/// struct Filled(u64);
///
/// impl ReadAt for Filled {
///     fn len(&self) -> u64 {
///         self.0
///     }
///     fn read_at(&self, range: Range<u64>) -> std::io::Result<Bytes> {
///         Ok(Bytes::from(vec![7u8; (range.end - range.start) as usize]))
///     }
/// }
///
/// let input = Input::new(Filled(100));
/// assert_eq!(&input.read(10..13)?[..], [7, 7, 7]);
/// assert!(input.read(90..101).is_err()); // past the end
/// # Ok::<(), std::io::Error>(())
/// ```
pub trait ReadAt: Send + Sync + fmt::Debug {
    /// The length in bytes (fixed when the source was opened: a file that grows later is read
    /// as long as it was).
    fn len(&self) -> u64;

    /// True when the source holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reads exactly `range`, which lies within [`ReadAt::len`] (the caller checked).
    fn read_at(&self, range: Range<u64>) -> io::Result<Bytes>;

    /// Reads several ranges (each within [`ReadAt::len`]), in the order given. The default reads
    /// ranges that lie within [`COALESCE_GAP`] of each other with one [`ReadAt::read_at`] and
    /// slices the result; a remote source may also issue the reads concurrently.
    fn read_ranges(&self, ranges: &[Range<u64>]) -> io::Result<Vec<Bytes>> {
        read_coalesced(self, ranges)
    }

    /// The whole source, when it is in memory already (a buffer, a memory map): readers then
    /// slice it instead of reading.
    fn in_memory(&self) -> Option<&Bytes> {
        None
    }

    /// Says that `ranges` (each within [`ReadAt::len`]) are about to be read, roughly in the
    /// order given. A source whose reads are slow to start (a remote object) fetches them
    /// ahead, several at once and neighbours together, so that the reads find them there; the
    /// default does nothing. A hint only: a range read without it, or never read, is fine.
    fn prefetch(&self, ranges: &[Range<u64>]) {
        let _ = ranges;
    }
}

/// Reads `ranges` through `source.read_at`, one read per group of nearby ranges.
fn read_coalesced<S: ReadAt + ?Sized>(source: &S, ranges: &[Range<u64>]) -> io::Result<Vec<Bytes>> {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| ranges[i].start);
    let mut out = vec![Bytes::new(); ranges.len()];
    let mut group: Vec<usize> = Vec::new();
    let mut span: Range<u64> = 0..0;
    let flush = |group: &mut Vec<usize>, span: &Range<u64>, out: &mut [Bytes]| {
        if group.is_empty() {
            return Ok(());
        }
        let bytes = source.read_at(span.clone())?;
        for &i in group.iter() {
            let r = &ranges[i];
            out[i] = bytes.slice((r.start - span.start) as usize..(r.end - span.start) as usize);
        }
        group.clear();
        Ok::<(), io::Error>(())
    };
    for i in order {
        let r = &ranges[i];
        if !group.is_empty() && r.start > span.end.saturating_add(COALESCE_GAP) {
            flush(&mut group, &span, &mut out)?;
        }
        if group.is_empty() {
            span = r.clone();
        } else {
            span.end = span.end.max(r.end);
        }
        group.push(i);
    }
    flush(&mut group, &span, &mut out)?;
    Ok(out)
}

impl ReadAt for Bytes {
    fn len(&self) -> u64 {
        Bytes::len(self) as u64
    }

    fn read_at(&self, range: Range<u64>) -> io::Result<Bytes> {
        Ok(self.slice(range.start as usize..range.end as usize))
    }

    fn read_ranges(&self, ranges: &[Range<u64>]) -> io::Result<Vec<Bytes>> {
        ranges.iter().map(|r| self.read_at(r.clone())).collect()
    }

    fn in_memory(&self) -> Option<&Bytes> {
        Some(self)
    }
}

/// The input of a reader: a [`ReadAt`] source, cheap to clone and shared by a reader, its
/// queries and their worker threads.
///
/// ```
/// use robolog_query::{Bytes, Input};
///
/// let input = Input::from(Bytes::from_static(b"#ROSBAG V2.0\n"));
/// assert_eq!(input.len(), 13);
/// assert_eq!(&input.read(1..7)?[..], b"ROSBAG");
/// // In memory: reads are slices of the buffer, not copies.
/// assert!(input.in_memory().is_some());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone)]
pub struct Input {
    source: Arc<dyn ReadAt>,
    /// The whole input when it is in memory, to slice without a dynamic call per read.
    bytes: Option<Bytes>,
    len: u64,
}

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Input")
            .field("source", &self.source)
            .field("len", &self.len)
            .finish()
    }
}

impl Input {
    /// An input over any source.
    pub fn new(source: impl ReadAt + 'static) -> Self {
        let len = source.len();
        let bytes = source.in_memory().cloned();
        Self {
            source: Arc::new(source),
            bytes,
            len,
        }
    }

    /// The file at `path`, read with positional reads as readers ask for its parts. Its length
    /// is taken now: bytes appended later are not seen, and a file truncated later gives I/O
    /// errors for the parts that are gone.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        Self::from_file(File::open(path)?)
    }

    /// An open file, read with positional reads (see [`Input::open`]).
    pub fn from_file(file: File) -> io::Result<Self> {
        let len = file.metadata()?.len();
        Ok(Self::new(FileAt::new(file, len)))
    }

    /// The file at `path`, memory-mapped: readers slice the mapping instead of reading, which
    /// saves a copy of every chunk a query reads and lets the operating system share the pages
    /// with other readers.
    ///
    /// # Safety
    ///
    /// The file must not be truncated, or written where it is mapped, by this or another
    /// process while the input or any [`Bytes`] read from it is alive. A truncated file makes
    /// the system kill the process with `SIGBUS` when a reader touches a page that is gone; a
    /// file written meanwhile changes bytes under a reader that has checked them. Bytes
    /// appended after mapping are not seen (the mapping has the length the file had), so a
    /// file that is only appended to is fine. When that cannot be promised, use
    /// [`Input::open`].
    #[cfg(feature = "mmap")]
    #[allow(unsafe_code)]
    pub unsafe fn map(path: impl AsRef<Path>) -> io::Result<Self> {
        let file = File::open(path)?;
        if file.metadata()?.len() == 0 {
            return Ok(Self::from(Bytes::new()));
        }
        // SAFETY: the mapping is read-only and private; the caller promises that the file is
        // neither truncated nor written while it is mapped (see above).
        let map = unsafe { memmap2::Mmap::map(&file)? };
        Ok(Self::from(Bytes::from_owner(map)))
    }

    /// Length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when the input holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads `range`. A range that reaches past the end is an error of kind
    /// [`io::ErrorKind::UnexpectedEof`].
    #[inline]
    pub fn read(&self, range: Range<u64>) -> io::Result<Bytes> {
        self.check(&range)?;
        match &self.bytes {
            Some(bytes) => Ok(bytes.slice(range.start as usize..range.end as usize)),
            None => self.source.read_at(range),
        }
    }

    /// Reads several ranges at once (see [`ReadAt::read_ranges`]), each checked as
    /// [`Input::read`] checks one.
    pub fn read_ranges(&self, ranges: &[Range<u64>]) -> io::Result<Vec<Bytes>> {
        for range in ranges {
            self.check(range)?;
        }
        match &self.bytes {
            Some(bytes) => Ok(ranges
                .iter()
                .map(|r| bytes.slice(r.start as usize..r.end as usize))
                .collect()),
            None => self.source.read_ranges(ranges),
        }
    }

    /// Tells the source which ranges are about to be read, in about this order (see
    /// [`ReadAt::prefetch`]); nothing for an input in memory. Ranges past the end are left
    /// out: the reads will report them.
    pub fn prefetch(&self, ranges: &[Range<u64>]) {
        if self.bytes.is_some() || ranges.is_empty() {
            return;
        }
        let valid: Vec<Range<u64>> = ranges
            .iter()
            .filter(|r| r.start < r.end && r.end <= self.len)
            .cloned()
            .collect();
        if !valid.is_empty() {
            self.source.prefetch(&valid);
        }
    }

    /// Reads from `start` to the end of the input, or `len` bytes if there are that many.
    pub fn read_up_to(&self, start: u64, len: u64) -> io::Result<Bytes> {
        let start = start.min(self.len);
        self.read(start..start.saturating_add(len).min(self.len))
    }

    /// Reads `range` front to back as a [`std::io::Read`], a piece of [`STREAM_PIECE`] bytes
    /// at a time, every piece announced ahead ([`Input::prefetch`]): a remote object streams
    /// in while it is read, each byte fetched once, and memory holds a piece plus what the
    /// source fetches ahead, whatever the length. A range reaching past the end is cut at
    /// the end.
    ///
    /// ```
    /// use std::io::Read;
    /// use robolog_query::{Bytes, Input};
    ///
    /// let input = Input::from(Bytes::from_static(b"#ROSBAG V2.0\n"));
    /// let mut text = String::new();
    /// input.stream(1..7).read_to_string(&mut text)?;
    /// assert_eq!(text, "ROSBAG");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn stream(&self, range: Range<u64>) -> InputStream {
        let end = range.end.min(self.len);
        let start = range.start.min(end);
        let pieces: Vec<Range<u64>> = (start..end)
            .step_by(STREAM_PIECE as usize)
            .map(|s| s..s.saturating_add(STREAM_PIECE).min(end))
            .collect();
        self.prefetch(&pieces);
        InputStream {
            input: self.clone(),
            pos: start,
            end,
            piece: Bytes::new(),
        }
    }

    /// The whole input, when it is in memory (a buffer or a memory map).
    pub fn in_memory(&self) -> Option<&Bytes> {
        self.bytes.as_ref()
    }

    /// The whole input: the bytes themselves when in memory, otherwise read into memory (for the
    /// linear scans of files whose index is missing or damaged, which read everything anyway).
    pub fn read_all(&self) -> io::Result<Bytes> {
        self.read(0..self.len)
    }

    fn check(&self, range: &Range<u64>) -> io::Result<()> {
        if range.start > range.end || range.end > self.len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "bytes {}..{} asked of an input of {} bytes",
                    range.start, range.end, self.len
                ),
            ));
        }
        if usize::try_from(range.end - range.start).is_err() {
            return Err(io::Error::new(
                io::ErrorKind::OutOfMemory,
                "a range larger than the address space",
            ));
        }
        Ok(())
    }
}

impl From<Bytes> for Input {
    fn from(bytes: Bytes) -> Self {
        Self {
            len: bytes.len() as u64,
            bytes: Some(bytes.clone()),
            source: Arc::new(bytes),
        }
    }
}

impl From<Vec<u8>> for Input {
    fn from(bytes: Vec<u8>) -> Self {
        Self::from(Bytes::from(bytes))
    }
}

impl From<&'static [u8]> for Input {
    fn from(bytes: &'static [u8]) -> Self {
        Self::from(Bytes::from_static(bytes))
    }
}

/// The size of the pieces [`Input::stream`] reads: large enough that a remote object
/// streams at full speed, small enough that a few are fetched ahead at once.
pub const STREAM_PIECE: u64 = 4 << 20;

/// A range of an [`Input`] read front to back ([`Input::stream`]).
#[derive(Debug)]
pub struct InputStream {
    input: Input,
    /// The offset of the next byte handed out: the first of `piece`, or, with `piece`
    /// empty, the start of the next piece announced.
    pos: u64,
    end: u64,
    /// What is left of the piece being read.
    piece: Bytes,
}

impl InputStream {
    /// The offset in the input of the next byte to be read.
    pub fn position(&self) -> u64 {
        self.pos
    }
}

impl io::Read for InputStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.piece.is_empty() {
            if self.pos >= self.end || buf.is_empty() {
                return Ok(0);
            }
            // A piece is read whole, as announced, so that the read finds its fetch.
            let piece_end = self.pos.saturating_add(STREAM_PIECE).min(self.end);
            self.piece = self.input.read(self.pos..piece_end)?;
        }
        let n = buf.len().min(self.piece.len());
        buf[..n].copy_from_slice(&self.piece[..n]);
        self.piece = self.piece.slice(n..);
        self.pos += n as u64;
        Ok(n)
    }
}

/// A file read with positional reads.
#[derive(Debug)]
struct FileAt {
    #[cfg(any(unix, windows))]
    file: File,
    /// Without positional reads, a seek and a read under a lock.
    #[cfg(not(any(unix, windows)))]
    file: std::sync::Mutex<File>,
    len: u64,
}

impl FileAt {
    fn new(file: File, len: u64) -> Self {
        Self {
            #[cfg(any(unix, windows))]
            file,
            #[cfg(not(any(unix, windows)))]
            file: std::sync::Mutex::new(file),
            len,
        }
    }

    fn fill(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, offset)
        }
        #[cfg(windows)]
        {
            let (mut done, mut at) = (0, offset);
            while done < buf.len() {
                match std::os::windows::fs::FileExt::seek_read(&self.file, &mut buf[done..], at) {
                    Ok(0) => {
                        return Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "the file ended early",
                        ));
                    }
                    Ok(n) => {
                        done += n;
                        at += n as u64;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        }
        #[cfg(not(any(unix, windows)))]
        {
            use std::io::{Read, Seek, SeekFrom};
            let mut file = self
                .file
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            file.seek(SeekFrom::Start(offset))?;
            file.read_exact(buf)
        }
    }
}

impl ReadAt for FileAt {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, range: Range<u64>) -> io::Result<Bytes> {
        let len = usize::try_from(range.end - range.start)
            .map_err(|_| io::Error::new(io::ErrorKind::OutOfMemory, "range too large"))?;
        let mut buf = vec![0u8; len];
        self.fill(&mut buf, range.start).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "the file ends before byte {} (was it truncated while being read?)",
                        range.end
                    ),
                )
            } else {
                e
            }
        })?;
        Ok(Bytes::from(buf))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::sync::Mutex;

    /// Counts the reads it is asked for.
    #[derive(Debug)]
    struct Counted {
        data: Bytes,
        reads: Mutex<Vec<Range<u64>>>,
    }

    impl ReadAt for Counted {
        fn len(&self) -> u64 {
            self.data.len() as u64
        }
        fn read_at(&self, range: Range<u64>) -> io::Result<Bytes> {
            self.reads.lock().unwrap().push(range.clone());
            Ok(self.data.slice(range.start as usize..range.end as usize))
        }
    }

    #[test]
    fn nearby_ranges_are_read_once_and_handed_out_in_the_order_asked() {
        let data: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
        let source = Counted {
            data: Bytes::from(data.clone()),
            reads: Mutex::new(Vec::new()),
        };
        let far = 2 * COALESCE_GAP;
        let ranges = [far..far + 5, 10..20, 0..4, 30..40];
        let got = source.read_ranges(&ranges).unwrap();
        for (range, bytes) in ranges.iter().zip(&got) {
            assert_eq!(&bytes[..], &data[range.start as usize..range.end as usize]);
        }
        assert_eq!(*source.reads.lock().unwrap(), [0..40, far..far + 5]);
    }

    #[test]
    fn a_file_is_read_by_position_and_a_truncated_one_gives_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, b"0123456789").unwrap();
        let input = Input::open(&path).unwrap();
        assert!(input.in_memory().is_none());
        assert_eq!(input.len(), 10);
        assert_eq!(&input.read(2..5).unwrap()[..], b"234");
        assert_eq!(
            input.read(8..11).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
        let got = input.read_ranges(&[6..8, 0..2]).unwrap();
        assert_eq!((&got[0][..], &got[1][..]), (&b"67"[..], &b"01"[..]));
        // Another process cuts the file: the input still believes in 10 bytes, and says that
        // the rest is gone.
        std::fs::write(&path, b"01234").unwrap();
        let err = input.read(3..8).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert!(err.to_string().contains("truncated"), "{err}");
        assert_eq!(&input.read(0..3).unwrap()[..], b"012");
    }

    #[cfg(feature = "mmap")]
    #[test]
    #[allow(unsafe_code)]
    fn a_mapped_file_is_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, b"hello").unwrap();
        // SAFETY: nothing touches the temporary file while it is mapped.
        let input = unsafe { Input::map(&path) }.unwrap();
        assert_eq!(input.in_memory().map(|b| &b[..]), Some(&b"hello"[..]));
        assert_eq!(&input.read_all().unwrap()[..], b"hello");
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        // SAFETY: as above.
        assert!(unsafe { Input::map(&empty) }.unwrap().is_empty());
        // SAFETY: as above (the file does not exist).
        assert!(unsafe { Input::map(dir.path().join("missing")) }.is_err());
    }
}
