//! One writer interface for the three formats, and where their bytes go.

use std::io::{self, BufWriter, Cursor, Seek, SeekFrom, Write};
use std::path::Path;

use robolog_framing::AtomicFile;

use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{Attachment, Channel, Message, Metadata};

/// Writes a log in one format from the model. Implemented by [`crate::BagWriter`],
/// [`crate::McapWriter`] and [`crate::BddfWriter`]; [`create_writer`] picks one.
///
/// Declare each channel with [`LogWriter::add_channel`] and write its messages with the id it
/// returns; then [`LogWriter::finish`]. A writer dropped without `finish` leaves no file at a
/// path output ([`Output::file`] writes atomically).
pub trait LogWriter: std::fmt::Debug {
    /// The format written.
    fn format(&self) -> Format;

    /// `Ok` when the format can hold messages of `channel`, or why not.
    fn check_channel(&self, channel: &Channel) -> std::result::Result<(), String>;

    /// Declares a channel; returns the id to write its messages with (the channel's own id when
    /// the format and the ids already used allow it).
    fn add_channel(&mut self, channel: &Channel) -> Result<u32>;

    /// Writes a message on a channel declared before. Its bytes and log time are written
    /// unchanged; publish time and sequence where the format has them.
    fn write_message(&mut self, channel: u32, message: &Message) -> Result<()>;

    /// Writes an attachment; `Ok(false)` when the format cannot hold attachments (it is dropped).
    fn write_attachment(&mut self, attachment: &Attachment) -> Result<bool>;

    /// Writes a metadata record; `Ok(false)` when the format cannot hold it here (it is dropped).
    fn write_metadata(&mut self, metadata: &Metadata) -> Result<bool>;

    /// Completes the file (indexes, summary, trailer) and commits a path output.
    fn finish(&mut self) -> Result<Finished>;

    /// The header profile of the inputs (MCAP `ros1`, `ros2`), which [`crate::convert`] and
    /// [`crate::merge`] pass on when every input agrees, so that readers that check it accept
    /// the output. Formats without a profile ignore it; so does an MCAP writer whose options
    /// name one, or that has started writing.
    fn set_profile(&mut self, _profile: &str) {}

    /// This writer as an MCAP writer, which [`crate::convert`] can copy whole chunks of an MCAP
    /// input into; `None` for the other formats.
    #[cfg(feature = "mcap")]
    fn as_mcap(&mut self) -> Option<&mut crate::McapWriter> {
        None
    }
}

/// What [`LogWriter::finish`] produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// Bytes in the file.
    pub bytes: u64,
    /// The file itself, for [`Output::memory`] outputs.
    pub data: Option<Vec<u8>>,
    /// What the file holds that some readers of its format will not read (a zero-length BDDF
    /// message, which the Boston Dynamics reader refuses), one sentence each.
    pub warnings: Vec<String>,
}

/// Where a writer's bytes go: a file (written beside its path and renamed into place on
/// success), memory, a stream that can seek (a file the caller opened), or any stream (MCAP
/// and BDDF only: a bag needs to seek back once).
pub struct Output {
    kind: OutputKind,
    streamed: u64,
}

enum OutputKind {
    File(BufWriter<AtomicFile>),
    Memory(Cursor<Vec<u8>>),
    Seekable(SeekableStream),
    Stream(Box<dyn Write + Send>),
    /// A directory format (ROS 2 bags): its writer takes the path.
    Directory(std::path::PathBuf),
    Finished,
}

/// A caller's seekable stream, with how far the writer has gone in it.
struct SeekableStream {
    inner: Box<dyn WriteSeek + Send>,
    /// Where the output began in the stream.
    start: u64,
    /// The stream position now.
    position: u64,
    /// The furthest position written to: the end of the output, even after the writer seeks
    /// back to complete a header.
    end: u64,
}

/// What [`Output::seekable`] needs: both traits behind one box.
trait WriteSeek: Write + Seek {}

impl<T: Write + Seek> WriteSeek for T {}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match &self.kind {
            OutputKind::File(f) => format!("file {}", f.get_ref().target().display()),
            OutputKind::Memory(m) => format!("memory ({} bytes)", m.get_ref().len()),
            OutputKind::Seekable(s) => format!("seekable stream from byte {}", s.start),
            OutputKind::Stream(_) => "stream".to_owned(),
            OutputKind::Directory(p) => format!("directory {}", p.display()),
            OutputKind::Finished => "finished".to_owned(),
        };
        f.debug_struct("Output").field("kind", &kind).finish()
    }
}

impl Output {
    /// A file at `path`: written to a temporary file beside it, renamed into place by
    /// [`LogWriter::finish`] (so a failed conversion never leaves a partial file; `path` may
    /// even be the input's own path).
    pub fn file(path: impl AsRef<Path>) -> Result<Self> {
        let file = AtomicFile::create(path)?;
        Ok(Self::new(OutputKind::File(BufWriter::with_capacity(
            1 << 20,
            file,
        ))))
    }

    /// A buffer in memory, handed back in [`Finished::data`].
    pub fn memory() -> Self {
        Self::new(OutputKind::Memory(Cursor::new(Vec::new())))
    }

    /// A stream that can seek, from its current position: a `File` (or a `BufWriter` over one)
    /// that the caller opened, a `Cursor`. Every format can be written to it, and MCAP writes
    /// its uncompressed chunks as they fill instead of holding each in memory. Unlike
    /// [`Output::file`], nothing is renamed or synced: what the stream's owner does with the
    /// bytes, and with a writer that fails halfway, is up to them.
    pub fn seekable(mut writer: impl Write + Seek + Send + 'static) -> Result<Self> {
        let start = writer.stream_position()?;
        Ok(Self::new(OutputKind::Seekable(SeekableStream {
            inner: Box::new(writer),
            start,
            position: start,
            end: start,
        })))
    }

    /// A directory at `path`, for ROS 2 bags: the writer creates it (beside it first, renamed
    /// into place when finished). Other formats cannot be written to it.
    pub fn directory(path: impl AsRef<Path>) -> Self {
        Self::new(OutputKind::Directory(path.as_ref().to_path_buf()))
    }

    /// The path of a directory output, or of a file output (whose temporary file is removed):
    /// where a directory format writes.
    #[cfg_attr(not(feature = "rosbag2"), allow(dead_code))]
    pub(crate) fn into_directory(mut self) -> Option<std::path::PathBuf> {
        match std::mem::replace(&mut self.kind, OutputKind::Finished) {
            OutputKind::Directory(path) => Some(path),
            OutputKind::File(file) => Some(file.get_ref().target().to_path_buf()),
            _ => None,
        }
    }

    /// Any stream, such as stdout (not for bags).
    pub fn stream(writer: impl Write + Send + 'static) -> Self {
        Self::new(OutputKind::Stream(Box::new(writer)))
    }

    fn new(kind: OutputKind) -> Self {
        Self { kind, streamed: 0 }
    }

    /// True for files, memory and [`Output::seekable`] streams, false for other streams.
    pub fn is_seekable(&self) -> bool {
        matches!(
            self.kind,
            OutputKind::File(_) | OutputKind::Memory(_) | OutputKind::Seekable(_)
        )
    }

    /// Flushes, commits a file output, and says what was written.
    pub(crate) fn finish(mut self) -> Result<Finished> {
        match std::mem::replace(&mut self.kind, OutputKind::Finished) {
            OutputKind::File(mut out) => {
                let bytes = out.seek(SeekFrom::End(0))?;
                let file = out.into_inner().map_err(|e| Error::Io(e.into_error()))?;
                file.commit()?;
                Ok(Finished {
                    bytes,
                    data: None,
                    warnings: Vec::new(),
                })
            }
            OutputKind::Memory(cursor) => {
                let data = cursor.into_inner();
                Ok(Finished {
                    bytes: data.len() as u64,
                    data: Some(data),
                    warnings: Vec::new(),
                })
            }
            OutputKind::Seekable(mut out) => {
                // Left at the end of the output, as a caller appending after it would expect.
                if out.position != out.end {
                    out.inner.seek(SeekFrom::Start(out.end))?;
                }
                out.inner.flush()?;
                Ok(Finished {
                    bytes: out.end - out.start,
                    data: None,
                    warnings: Vec::new(),
                })
            }
            OutputKind::Stream(mut out) => {
                out.flush()?;
                Ok(Finished {
                    bytes: self.streamed,
                    data: None,
                    warnings: Vec::new(),
                })
            }
            OutputKind::Directory(_) => Err(Error::Output(
                "a directory output is written by a ROS 2 bag writer only".into(),
            )),
            OutputKind::Finished => Err(Error::Usage("the output was already finished".into())),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = match &mut self.kind {
            OutputKind::File(f) => f.write(buf)?,
            OutputKind::Memory(m) => m.write(buf)?,
            OutputKind::Seekable(s) => {
                let n = s.inner.write(buf)?;
                s.position += n as u64;
                s.end = s.end.max(s.position);
                n
            }
            OutputKind::Stream(s) => s.write(buf)?,
            OutputKind::Directory(_) => {
                return Err(io::Error::other("a directory output takes no bytes"));
            }
            OutputKind::Finished => return Err(io::Error::other("the output was finished")),
        };
        self.streamed += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.kind {
            OutputKind::File(f) => f.flush(),
            OutputKind::Memory(m) => m.flush(),
            OutputKind::Seekable(s) => s.inner.flush(),
            OutputKind::Stream(s) => s.flush(),
            OutputKind::Directory(_) | OutputKind::Finished => Ok(()),
        }
    }
}

impl Seek for Output {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match &mut self.kind {
            OutputKind::File(f) => f.seek(pos),
            OutputKind::Memory(m) => m.seek(pos),
            OutputKind::Seekable(s) => {
                s.position = s.inner.seek(pos)?;
                Ok(s.position)
            }
            OutputKind::Stream(_) | OutputKind::Directory(_) | OutputKind::Finished => Err(
                io::Error::new(io::ErrorKind::Unsupported, "this output cannot seek"),
            ),
        }
    }
}

/// Format-specific writer settings.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum WriterOptions {
    /// ROS bag 2.0 (chunk compression and size).
    #[cfg(feature = "rosbag")]
    Bag(robolog_rosbag::WriteOptions),
    /// MCAP (compression, chunk size, indexes). An empty profile becomes `ros1` when every
    /// channel written is a `ros1` channel.
    #[cfg(feature = "mcap")]
    Mcap(robolog_mcap::WriteOptions),
    /// BDDF (file annotations, POD block size).
    #[cfg(feature = "bddf")]
    Bddf(robolog_bddf::WriteOptions),
    /// ROS 2 bag directory (storage, compression, splitting, metadata version).
    #[cfg(feature = "rosbag2")]
    Rosbag2(robolog_rosbag2::WriteOptions),
    /// Keeps the matches exhaustive in a build without formats (it cannot be created).
    #[cfg(not(any(
        feature = "rosbag",
        feature = "mcap",
        feature = "bddf",
        feature = "rosbag2"
    )))]
    #[doc(hidden)]
    Unavailable(std::convert::Infallible),
}

impl WriterOptions {
    /// The defaults of `format`: uncompressed bags, zstd MCAP (lz4 without the `zstd`
    /// feature), plain BDDF.
    pub fn default_for(format: Format) -> Result<Self> {
        format.require_enabled()?;
        Ok(match format {
            #[cfg(feature = "rosbag")]
            Format::Bag => WriterOptions::Bag(robolog_rosbag::WriteOptions::default()),
            #[cfg(feature = "mcap")]
            Format::Mcap => WriterOptions::Mcap(crate::mcap_writer::default_options()),
            #[cfg(feature = "bddf")]
            Format::Bddf => WriterOptions::Bddf(robolog_bddf::WriteOptions::default()),
            #[cfg(feature = "rosbag2")]
            Format::Rosbag2 => WriterOptions::Rosbag2(robolog_rosbag2::WriteOptions::default()),
            #[allow(unreachable_patterns)]
            other => return Err(Error::FormatDisabled { format: other }),
        })
    }

    /// The format these options are for.
    pub fn format(&self) -> Format {
        match self {
            #[cfg(feature = "rosbag")]
            WriterOptions::Bag(_) => Format::Bag,
            #[cfg(feature = "mcap")]
            WriterOptions::Mcap(_) => Format::Mcap,
            #[cfg(feature = "bddf")]
            WriterOptions::Bddf(_) => Format::Bddf,
            #[cfg(feature = "rosbag2")]
            WriterOptions::Rosbag2(_) => Format::Rosbag2,
            #[cfg(not(any(
                feature = "rosbag",
                feature = "mcap",
                feature = "bddf",
                feature = "rosbag2"
            )))]
            WriterOptions::Unavailable(never) => match *never {},
        }
    }
}

/// A writer for the format of `options`, writing to `output`.
///
/// ```
/// use robolog::{Format, Output, WriterOptions, create_writer};
/// let mut writer = create_writer(Output::memory(), WriterOptions::default_for(Format::Mcap)?)?;
/// let file = writer.finish()?.data.unwrap();
/// assert!(file.starts_with(b"\x89MCAP0\r\n"));
/// # Ok::<(), robolog::Error>(())
/// ```
pub fn create_writer(output: Output, options: WriterOptions) -> Result<Box<dyn LogWriter + Send>> {
    Ok(match options {
        #[cfg(feature = "rosbag")]
        WriterOptions::Bag(o) => Box::new(crate::bag_writer::BagWriter::new(output, o)?),
        #[cfg(feature = "mcap")]
        WriterOptions::Mcap(o) => Box::new(crate::mcap_writer::McapWriter::new(output, o)),
        #[cfg(feature = "bddf")]
        WriterOptions::Bddf(o) => Box::new(crate::bddf_writer::BddfWriter::new(output, o)),
        #[cfg(feature = "rosbag2")]
        WriterOptions::Rosbag2(o) => {
            Box::new(crate::rosbag2_writer::Rosbag2Writer::new(output, o)?)
        }
        #[cfg(not(any(
            feature = "rosbag",
            feature = "mcap",
            feature = "bddf",
            feature = "rosbag2"
        )))]
        WriterOptions::Unavailable(never) => match never {},
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::io::{Cursor, Seek, SeekFrom, Write};
    use std::sync::{Arc, Mutex};

    use super::Output;

    /// A cursor whose bytes and position the test can still see after the output took it.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Cursor<Vec<u8>>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().write(buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Seek for Shared {
        fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
            self.0.lock().unwrap().seek(pos)
        }
    }

    #[test]
    fn a_seekable_output_ends_at_its_furthest_byte_even_when_left_behind_it() {
        let stream = Shared::default();
        stream.clone().write_all(b"old").unwrap();
        let mut out = Output::seekable(stream.clone()).unwrap();
        out.write_all(b"0123456789").unwrap();
        // A writer that completes a header last and stays there.
        out.seek(SeekFrom::Start(5)).unwrap();
        out.write_all(b"h").unwrap();
        let finished = out.finish().unwrap();
        assert_eq!(finished.bytes, 10);
        let cursor = stream.0.lock().unwrap();
        assert_eq!(cursor.position(), 13);
        assert_eq!(cursor.get_ref().as_slice(), b"old01h3456789");
    }
}
