//! Inputs: a path, a URL, or `-` for standard input. A file (standard input redirected from one
//! included) or a URL is opened with its index; a pipe, a FIFO or a device is read as it
//! arrives, or read whole into memory by the commands that need to see all of it at once.
//!
//! Files are memory-mapped ([`map`]): reading a chunk is then slicing the mapping, without a
//! copy, and the pages stay shared with the page cache. The price, which the command line
//! accepts, is stated at [`map`].

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use robolog::{Bytes, Log, LogStream};

use crate::failure::{Failure, is_stdin};

/// The bytes of an input that cannot seek, read as they come.
pub(crate) type Pipe = BufReader<Box<dyn Read + Send>>;

/// An opened input.
pub(crate) enum Input {
    /// A file, with its index.
    Log(Log),
    /// A pipe, read in file order.
    Stream(Box<LogStream<Pipe>>),
}

/// Whether URLs whose server ignores range requests are downloaded whole (`--allow-download`).
static ALLOW_DOWNLOAD: AtomicBool = AtomicBool::new(false);

/// Sets `--allow-download` for the inputs opened from now on.
pub(crate) fn allow_download(on: bool) {
    ALLOW_DOWNLOAD.store(on, Ordering::Relaxed);
}

/// Where an input's bytes come from.
enum Source {
    /// A path that can be mapped or read at any offset, or a URL.
    File(PathBuf),
    /// A stream that can only be read once, front to back.
    Pipe(Pipe),
}

/// Large reads: the format readers ask for a record at a time.
const PIPE_BUFFER: usize = 1 << 20;

fn pipe(reader: impl Read + Send + 'static) -> Pipe {
    BufReader::with_capacity(PIPE_BUFFER, Box::new(reader))
}

fn source(path: &Path) -> Result<Source, Failure> {
    if is_stdin(path) {
        return stdin_source();
    }
    if path.to_str().is_some_and(robolog::is_url) {
        return Ok(Source::File(path.to_owned()));
    }
    let metadata = std::fs::metadata(path).map_err(|e| cannot_open(&e, path))?;
    let file_type = metadata.file_type();
    // A directory is for the facade to judge (a ROS 2 bag is one).
    if file_type.is_file() || file_type.is_dir() {
        return Ok(Source::File(path.to_owned()));
    }
    let file = File::open(path).map_err(|e| cannot_open(&e, path))?;
    Ok(Source::Pipe(pipe(file)))
}

/// Standard input: a redirected file is mapped like any file, anything else is a pipe.
fn stdin_source() -> Result<Source, Failure> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let fd = io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| cannot_open(&e, Path::new("-")))?;
        let file = File::from(fd);
        if file.metadata().is_ok_and(|m| m.is_file()) {
            return Ok(Source::File(PathBuf::from("/dev/stdin")));
        }
        Ok(Source::Pipe(pipe(file)))
    }
    #[cfg(not(unix))]
    {
        Ok(Source::Pipe(pipe(io::stdin())))
    }
}

fn cannot_open(error: &io::Error, path: &Path) -> Failure {
    Failure::about(format!("cannot open: {error}"), path, None)
}

/// The distro `--distro` chose (see [`set_distro`]).
static DISTRO: std::sync::OnceLock<robolog::msg::Distro> = std::sync::OnceLock::new();

/// Makes every log opened from now on take the definitions a ROS 2 bag lacks from `distro`
/// (`--distro`; set once, before the command opens anything).
pub(crate) fn set_distro(distro: robolog::msg::Distro) {
    let _ = DISTRO.set(distro);
}

/// The options of the command line's logs.
fn open_options() -> robolog::OpenOptions {
    // A damaged uncompressed MCAP chunk must not go unnoticed (into a converted file, say).
    let options = robolog::OpenOptions::new()
        .allow_download(ALLOW_DOWNLOAD.load(Ordering::Relaxed))
        .check_uncompressed_chunks(true);
    match DISTRO.get() {
        Some(distro) => options.distro(*distro),
        None => options,
    }
}

/// Opens the log file or URL at `path` with the options of the command line: a file, or the
/// storage files of a ROS 2 bag, memory-mapped.
fn open_file(path: &Path) -> robolog::Result<Log> {
    let options = open_options();
    if path.to_str().is_some_and(robolog::is_url) {
        return options.open(path);
    }
    // SAFETY: `memory_map` asks that the files be neither truncated nor overwritten while they
    // are mapped. The command line reads files its user names, for the length of one command;
    // a log still being recorded as MCAP or a ROS 1 bag is only appended to, which a mapping
    // tolerates (it covers the length the file had when it was mapped), and a `.db3` being
    // recorded has a `-wal` beside it, which makes robolog read it through SQLite, unmapped. A
    // file truncated by another process meanwhile would end the command with SIGBUS instead
    // of an error: the command line accepts that, as other tools that map their input do, for
    // reading chunks without copying them.
    #[allow(unsafe_code)]
    let options = unsafe { options.memory_map() };
    options.open(path)
}

/// The file at `path`, memory-mapped.
#[allow(unsafe_code)]
pub(crate) fn map(path: &Path) -> io::Result<robolog::Input> {
    // SAFETY: as in `open_file`: the command line accepts ending with SIGBUS if another
    // process truncates a file it reads.
    unsafe { robolog::Input::map(path) }
}

/// Opens `path` to read it front to back: a file with its index, a pipe as a stream (and a
/// URL as [`open_url_once`] says).
pub(crate) fn open(path: &Path) -> Result<Input, Failure> {
    if let Some(url) = path.to_str().filter(|p| robolog::is_url(p)) {
        return open_url_once(url);
    }
    match source(path)? {
        Source::File(file) => Ok(Input::Log(
            open_file(&file).map_err(|e| Failure::open(e, path))?,
        )),
        Source::Pipe(pipe) => Ok(Input::Stream(Box::new(
            robolog::open_reader(pipe).map_err(|e| Failure::open(e, path))?,
        ))),
    }
}

/// Opens `path` with its index; a pipe is read into memory first.
pub(crate) fn open_log(path: &Path) -> Result<Log, Failure> {
    match source(path)? {
        Source::File(file) => open_file(&file).map_err(|e| Failure::open(e, path)),
        Source::Pipe(pipe) => {
            robolog::open_bytes(read_all(pipe, path)?).map_err(|e| Failure::open(e, path))
        }
    }
}

/// The input as one buffer (mapped when it is a file), or a ROS 2 bag by path.
enum Whole {
    /// A ROS 2 bag (a directory of storage files, or an SQLite file), by path.
    Rosbag2(PathBuf),
    /// A file's bytes (mapped) or a pipe's.
    Bytes(Bytes),
}

/// `path` (not a URL) as a ROS 2 bag, a mapped file, or the bytes of a pipe.
fn whole(path: &Path) -> Result<Whole, Failure> {
    match source(path)? {
        Source::File(file) => {
            if robolog::is_rosbag2_path(&file).map_err(|e| Failure::open(e, path))? {
                return Ok(Whole::Rosbag2(file));
            }
            let input = map(&file).map_err(|e| cannot_open(&e, path))?;
            let bytes = input
                .read_all()
                .map_err(|e| Failure::about(format!("cannot read: {e}"), path, None))?;
            Ok(Whole::Bytes(bytes))
        }
        Source::Pipe(pipe) => Ok(Whole::Bytes(read_all(pipe, path)?)),
    }
}

/// The object behind `url`, read by position (opening it fetches its tail).
fn remote(url: &str) -> Result<robolog::Input, Failure> {
    remote_object(url).map(|remote| remote.input())
}

fn remote_object(url: &str) -> Result<robolog::remote::Remote, Failure> {
    let options = robolog::remote::RemoteOptions::new()
        .allow_download(ALLOW_DOWNLOAD.load(Ordering::Relaxed));
    robolog::remote::Remote::open(url, &options)
        .map_err(|e| Failure::about(format!("cannot read: {e}"), Path::new(url), None))
}

/// A URL's log read front to back once: with its index, or, when opening it with its index
/// takes a pass over the whole object before a query reads it again and holds the messages it
/// selects at once (a bag 1.2, whose index is checked against every record; an MCAP file in
/// the draft layout, which has no index to trust), as a stream, as it comes in.
fn open_url_once(url: &str) -> Result<Input, Failure> {
    let path = Path::new(url);
    let remote = remote_object(url)?;
    let input = remote.input();
    let read = |e: io::Error| Failure::about(format!("cannot read: {e}"), path, None);
    let head = input.read_up_to(0, 16).map_err(read)?;
    let draft = robolog::mcap::draft::detect_input(&input).map_err(read)?
        == Some(robolog::mcap::Layout::Draft);
    if head.starts_with(b"#ROSRECORD V1.2") || draft {
        let options = open_options().mcap_layout(if draft {
            robolog::mcap::Layout::Draft
        } else {
            robolog::mcap::Layout::Auto
        });
        let stream = options
            .open_reader(pipe(input.stream(0..input.len())))
            .map_err(|e| Failure::open(e, path))?;
        return Ok(Input::Stream(Box::new(stream)));
    }
    let log = open_options()
        .open_remote(&remote)
        .map_err(|e| Failure::open(e, path))?;
    Ok(Input::Log(log))
}

/// The input as [`whole`] opens it, or a URL's object read by position (it streams in as it is
/// read front to back).
pub(crate) enum Positional {
    /// A ROS 2 bag (a directory of storage files, or an SQLite file), by path.
    Rosbag2(PathBuf),
    /// A file (mapped), a pipe's bytes, or a remote object.
    Input(robolog::Input),
}

/// `path` as a ROS 2 bag, a mapped file, the bytes of a pipe, or a URL's object read by
/// position.
pub(crate) fn positional(path: &Path) -> Result<Positional, Failure> {
    if let Some(url) = path.to_str().filter(|p| robolog::is_url(p)) {
        return remote(url).map(Positional::Input);
    }
    Ok(match whole(path)? {
        Whole::Rosbag2(path) => Positional::Rosbag2(path),
        Whole::Bytes(bytes) => Positional::Input(robolog::Input::from(bytes)),
    })
}

/// The input of `recover`: as [`positional`] opens it, except that a pipe is read as it comes
/// rather than into memory first.
pub(crate) enum Recoverable {
    /// A ROS 2 bag (a directory of storage files, or an SQLite file), by path.
    Rosbag2(PathBuf),
    /// A file (mapped) or a remote object read by position.
    Input(robolog::Input),
    /// A pipe: its first bytes (read to tell its format), then the rest of it.
    Pipe(Vec<u8>, Pipe),
}

impl Recoverable {
    /// The length in bytes, when known before reading (not a pipe's, nor a ROS 2 bag's).
    pub(crate) fn len(&self) -> Option<u64> {
        match self {
            Recoverable::Input(input) => Some(input.len()),
            Recoverable::Rosbag2(_) | Recoverable::Pipe(..) => None,
        }
    }

    /// The bytes the format is told by.
    pub(crate) fn head(&self, path: &Path) -> Result<Option<Bytes>, Failure> {
        match self {
            Recoverable::Rosbag2(_) => Ok(None),
            Recoverable::Input(input) => input
                .read_up_to(0, robolog::SNIFF_LEN as u64)
                .map(Some)
                .map_err(|e| Failure::about(format!("cannot read: {e}"), path, None)),
            Recoverable::Pipe(head, _) => Ok(Some(Bytes::copy_from_slice(head))),
        }
    }
}

/// `path` to recover: a ROS 2 bag, a mapped file, a URL's object read by position, or a pipe
/// read as it comes.
pub(crate) fn recoverable(path: &Path) -> Result<Recoverable, Failure> {
    if let Some(url) = path.to_str().filter(|p| robolog::is_url(p)) {
        return remote(url).map(Recoverable::Input);
    }
    match source(path)? {
        Source::File(_) => Ok(match whole(path)? {
            Whole::Rosbag2(path) => Recoverable::Rosbag2(path),
            Whole::Bytes(bytes) => Recoverable::Input(robolog::Input::from(bytes)),
        }),
        Source::Pipe(mut pipe) => {
            let mut head = Vec::new();
            (&mut pipe)
                .take(robolog::SNIFF_LEN as u64)
                .read_to_end(&mut head)
                .map_err(|e| Failure::about(format!("cannot read: {e}"), path, None))?;
            Ok(Recoverable::Pipe(head, pipe))
        }
    }
}

fn read_all(mut pipe: Pipe, path: &Path) -> Result<Bytes, Failure> {
    let mut data = Vec::new();
    pipe.read_to_end(&mut data)
        .map_err(|e| Failure::about(format!("cannot read: {e}"), path, None))?;
    Ok(Bytes::from(data))
}
