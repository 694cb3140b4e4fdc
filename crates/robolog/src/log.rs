//! Opening a log (a file read by position, a buffer, a memory map the caller opted into),
//! whatever its format, and querying its messages through the one model.

use std::path::Path;
use std::sync::Arc;

use robolog_framing::Bytes;
use robolog_query::Input;

use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{Attachment, Channel, Message, Metadata};
use crate::problem::Problem;
use crate::query::{Filter, Order, Selection};
use crate::sniff::{SNIFF_LEN, sniff};
use crate::summary::{ChunkInfo, Summary};

/// What to do with BDDF timestamps before 1970, which the model's `u64` log times cannot hold.
///
/// BDDF stores signed nanoseconds; bags and MCAP cannot represent earlier times at all, so a
/// negative BDDF time is almost always a clock that was not set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NegativeTimes {
    /// Reading such a block is an error ([`Error::NegativeTime`]), and opening the file
    /// reports how many blocks are affected as a [`Problem`] of severity error. The default:
    /// no time is silently changed.
    #[default]
    Refuse,
    /// Such blocks are read with log time 0; opening the file reports how many as a warning.
    /// Their order among themselves is file order.
    Clamp,
}

/// How to open a log.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    pub(crate) negative_times: NegativeTimes,
    pub(crate) check_uncompressed_chunks: bool,
    #[cfg(all(feature = "rosbag2", feature = "cdr"))]
    pub(crate) distro: Option<robolog_msg::Distro>,
    #[cfg(feature = "remote")]
    pub(crate) allow_download: bool,
    #[cfg(feature = "mcap")]
    pub(crate) mcap_layout: robolog_mcap::Layout,
    #[cfg(feature = "mmap")]
    pub(crate) memory_map: bool,
}

impl OpenOptions {
    /// The defaults: BDDF times before 1970 are refused; MCAP chunks are checked against their
    /// CRCs by the rule of `robolog_mcap::ReadOptions` (see
    /// [`OpenOptions::check_uncompressed_chunks`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether queries check the CRCs of uncompressed MCAP chunks too (default off).
    ///
    /// The rule, the same as robolog-mcap's (`ReadOptions::verify_uncompressed_chunks`): a
    /// query checks the CRC of every compressed chunk it decompresses whole, where the check
    /// adds little to the decompression; an uncompressed chunk is served straight from the
    /// file's bytes and checked only when this is on, since the check reads every byte of the
    /// chunk where the query's messages may touch a few (the official readers do not check
    /// either). Chunks a query needs only the start of are not checked either way. `check`
    /// reads every CRC. Turn this on when a damaged chunk must not go unnoticed into a new
    /// file: the `robolog` command line and the Python package do, for every log they open.
    pub fn check_uncompressed_chunks(mut self, on: bool) -> Self {
        self.check_uncompressed_chunks = on;
        self
    }

    /// The ROS 2 distro whose bundled standard interfaces define the types of a ROS 2 bag
    /// that stores no definitions (a `.db3` written before Iron), in place of the distro its
    /// metadata.yaml names (by default that one; a type neither defines is taken from the
    /// newest distro that has it, as the decoder does for channels without a schema).
    #[cfg(all(feature = "rosbag2", feature = "cdr"))]
    pub fn distro(mut self, distro: robolog_msg::Distro) -> Self {
        self.distro = Some(distro);
        self
    }

    /// What to do with BDDF times before 1970.
    pub fn negative_times(mut self, policy: NegativeTimes) -> Self {
        self.negative_times = policy;
        self
    }

    /// Whether a log behind a URL whose server ignores range requests is downloaded whole
    /// (default off: opening it is an error that says so, since reading any part of it would
    /// mean fetching all of it).
    #[cfg(feature = "remote")]
    pub fn allow_download(mut self, on: bool) -> Self {
        self.allow_download = on;
        self
    }

    /// The layout an MCAP stream is read in ([`OpenOptions::open_reader`]; default
    /// `Layout::Auto`, which reads a stream as ratified MCAP: a stream cannot show the footer
    /// that tells the pre-ratification draft layout). `Layout::Draft` reads a stream known to
    /// be in that layout (from its footer, read first by position, say).
    #[cfg(feature = "mcap")]
    pub fn mcap_layout(mut self, layout: robolog_mcap::Layout) -> Self {
        self.mcap_layout = layout;
        self
    }

    /// Memory-maps the files [`OpenOptions::open`] reads from a path (a log file, or a ROS 2
    /// bag's storage files: see `robolog_rosbag2::OpenOptions::memory_map`) instead of reading
    /// them by position: queries slice the mapping instead of copying out of the page cache.
    ///
    /// # Safety
    ///
    /// As for [`Input::map`]: the files must be neither truncated nor written, by this or
    /// another process, while the log or anything read from it is alive. A truncated file
    /// makes the system kill the process with `SIGBUS` when a reader touches a page that is
    /// gone.
    #[cfg(feature = "mmap")]
    #[allow(unsafe_code)]
    pub unsafe fn memory_map(mut self) -> Self {
        self.memory_map = true;
        self
    }

    /// Opens the log at `path`. A directory, or an SQLite (`.db3`) or zstd-compressed
    /// `.db3.zstd`/`.mcap.zstd` file, is a ROS 2 bag. Other files are read as
    /// [`OpenOptions::open_input`] reads an [`Input::open`] (by position).
    ///
    /// With the `remote` feature, `path` may be a URL ([`is_url`]: `http://`, `https://`,
    /// `s3://`): the log is then read by ranged requests (see [`OpenOptions::open_input`]).
    pub fn open(&self, path: impl AsRef<Path>) -> Result<Log> {
        let path = path.as_ref();
        if let Some(url) = path.to_str().filter(|p| is_url(p)) {
            return self.open_url(url);
        }
        if crate::sniff::is_rosbag2_path(path)? {
            Format::Rosbag2.require_enabled()?;
            #[cfg(feature = "rosbag2")]
            {
                #[cfg(feature = "cdr")]
                let distro = self.distro;
                #[cfg(not(feature = "cdr"))]
                let distro = None;
                let (b, channels, problems) =
                    crate::rosbag2_log::Rosbag2Log::open(path, distro, self.rosbag2_options())?;
                let file_size = b.file_size();
                return Ok(Log {
                    format: Format::Rosbag2,
                    backend: Backend::Rosbag2(Box::new(b)),
                    channels,
                    problems,
                    file_size,
                    input: Input::from(Bytes::new()),
                });
            }
        }
        self.open_input(self.path_input(path)?)
    }

    /// The file at `path` for [`OpenOptions::open`]: mapped when asked, else read by position.
    fn path_input(&self, path: &Path) -> std::io::Result<Input> {
        #[cfg(feature = "mmap")]
        if self.memory_map {
            // SAFETY: `memory_map` is set only by the `unsafe` `OpenOptions::memory_map`, whose
            // caller promised that the file is neither truncated nor written while it is read.
            #[allow(unsafe_code)]
            return unsafe { Input::map(path) };
        }
        Input::open(path)
    }

    /// How a ROS 2 bag's storage files are opened.
    #[cfg(feature = "rosbag2")]
    fn rosbag2_options(&self) -> robolog_rosbag2::OpenOptions {
        let options = robolog_rosbag2::OpenOptions::new();
        #[cfg(feature = "mmap")]
        if self.memory_map {
            // SAFETY: as in `path_input`: the caller of `memory_map` promised that the bag's
            // files are neither truncated nor written while it is read.
            #[allow(unsafe_code)]
            return unsafe { options.memory_map() };
        }
        options
    }

    #[cfg(feature = "remote")]
    fn open_url(&self, url: &str) -> Result<Log> {
        let options = robolog_remote::RemoteOptions::new().allow_download(self.allow_download);
        let remote = robolog_remote::Remote::open(url, &options).map_err(std::io::Error::from)?;
        self.open_remote(&remote)
    }

    /// Opens the log of an object opened with `robolog_remote::Remote::open` (whose tail that
    /// fetched), as [`OpenOptions::open`] opens a URL: what a query needs is fetched by ranged
    /// requests, and a bag's chunk headers are read as a query or `info` needs them rather
    /// than each by a request of its own at opening.
    #[cfg(feature = "remote")]
    pub fn open_remote(&self, remote: &robolog_remote::Remote) -> Result<Log> {
        self.open_input_from(remote.input(), true)
    }

    #[cfg(not(feature = "remote"))]
    fn open_url(&self, url: &str) -> Result<Log> {
        Err(Error::Usage(format!(
            "{url}: this build of robolog reads no URLs (it lacks the `remote` feature)"
        )))
    }

    /// Opens a log held in memory. (A ROS 2 bag is a directory or an SQLite file: open it by
    /// path with [`OpenOptions::open`].)
    pub fn open_bytes(&self, data: Bytes) -> Result<Log> {
        self.open_input(Input::from(data))
    }

    /// Opens the log read through `input`: a file read by position ([`Input::open`]), a
    /// buffer, a memory map ([`Input::map`], an `unsafe` opt-in), any other [`ReadAt`] source.
    /// Bags, MCAP and BDDF files are read by position, through their index when they have one
    /// (a query reads the chunks or blocks it needs); a file without a usable index is scanned
    /// front to back, a window at a time, as are a bag 1.2, whose index is checked against
    /// every record (a query then reads the span of the file that holds the messages it
    /// wants), and an MCAP file in the draft layout (each query walks it again). (A ROS 2 bag
    /// is a directory or an SQLite file: open it by path with [`OpenOptions::open`].)
    ///
    /// ```
    /// use robolog::{Input, OpenOptions};
    ///
    /// let path = robolog_testkit::testdata::path("samples/demo-zstd.mcap");
    /// // Read by position, as readers ask for its parts.
    /// let log = OpenOptions::new().open_input(Input::open(path)?)?;
    /// assert_eq!(log.format(), robolog::Format::Mcap);
    /// assert!(log.summary()?.message_count > 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// [`ReadAt`]: robolog_query::ReadAt
    /// [`Input::map`]: robolog_query::Input::map
    pub fn open_input(&self, input: Input) -> Result<Log> {
        self.open_input_from(input, false)
    }

    /// Opens the log read through `input`, a `remote` one (where each read is a request)
    /// read with fewer reads at open.
    #[cfg_attr(not(feature = "rosbag"), allow(unused_variables))]
    fn open_input_from(&self, input: Input, remote: bool) -> Result<Log> {
        let format = sniff(&input.read_up_to(0, SNIFF_LEN as u64)?)?;
        format.require_enabled()?;
        if format == Format::Rosbag2 {
            return Err(Error::Usage(
                "a ROS 2 bag (sqlite3 storage) is read from its path, not from bytes in memory"
                    .into(),
            ));
        }
        let file_size = input.len();
        let (backend, channels, problems) = match format {
            #[cfg(feature = "rosbag")]
            Format::Bag => {
                let (b, c, p) = crate::bag_log::BagLog::open(input.clone(), !remote)?;
                (Backend::Bag(b), c, p)
            }
            #[cfg(feature = "mcap")]
            Format::Mcap => {
                let (b, c, p) =
                    crate::mcap_log::McapLog::open(input.clone(), self.check_uncompressed_chunks)?;
                (Backend::Mcap(Box::new(b)), c, p)
            }
            #[cfg(feature = "bddf")]
            Format::Bddf => {
                let (b, c, p) = crate::bddf_log::BddfLog::open(input.clone(), self.negative_times)?;
                (Backend::Bddf(b), c, p)
            }
            #[allow(unreachable_patterns)]
            other => return Err(Error::FormatDisabled { format: other }),
        };
        Ok(Log {
            format,
            backend,
            channels,
            problems,
            file_size,
            input,
        })
    }
}

/// Opens the log at `path`, detecting its format from its first bytes.
///
/// ```no_run
/// let log = robolog::open("recording.mcap")?;
/// println!("{} with {} channels", log.format(), log.channels().len());
/// # Ok::<(), robolog::Error>(())
/// ```
pub fn open(path: impl AsRef<Path>) -> Result<Log> {
    OpenOptions::default().open(path)
}

/// True when `path` names a log behind a URL (`http://`, `https://`, `s3://`, `gs://`, `az://`) rather than a
/// local file: [`open`] reads those (with the `remote` feature; without it, opening one is an
/// error that says so).
///
/// ```
/// assert!(robolog::is_url("https://example.com/drive.mcap"));
/// assert!(robolog::is_url("s3://fleet/2026/drive.mcap"));
/// assert!(robolog::is_url("gs://fleet/2026/drive.mcap"));
/// assert!(robolog::is_url("az://fleet/2026/drive.mcap"));
/// assert!(!robolog::is_url("drive.mcap"));
/// ```
pub fn is_url(path: &str) -> bool {
    path.split_once("://").is_some_and(|(scheme, _)| {
        matches!(
            scheme.to_ascii_lowercase().as_str(),
            "http" | "https" | "s3" | "s3a" | "gs" | "az" | "abfs" | "abfss"
        )
    })
}

/// Opens a log held in memory, detecting its format from its first bytes.
pub fn open_bytes(data: impl Into<Bytes>) -> Result<Log> {
    OpenOptions::default().open_bytes(data.into())
}

#[derive(Debug)]
pub(crate) enum Backend {
    #[cfg(feature = "rosbag")]
    Bag(crate::bag_log::BagLog),
    #[cfg(feature = "mcap")]
    Mcap(Box<crate::mcap_log::McapLog>),
    #[cfg(feature = "bddf")]
    Bddf(crate::bddf_log::BddfLog),
    #[cfg(feature = "rosbag2")]
    Rosbag2(Box<crate::rosbag2_log::Rosbag2Log>),
    /// Keeps the matches exhaustive in a build without formats (where no log can be opened).
    #[cfg(not(any(
        feature = "rosbag",
        feature = "mcap",
        feature = "bddf",
        feature = "rosbag2"
    )))]
    #[allow(dead_code)]
    Unavailable(std::convert::Infallible),
}

/// An open log: its channels, summary and messages, the same way for every format.
///
/// Queries read through the format's index when it has a usable one (bag chunk infos and
/// index records, MCAP chunk and message indexes, BDDF series block indexes), so reading one
/// topic of a large file touches only the chunks holding it.
#[derive(Debug)]
pub struct Log {
    format: Format,
    backend: Backend,
    channels: Vec<Arc<Channel>>,
    problems: Vec<Problem>,
    file_size: u64,
    input: Input,
}

impl Log {
    /// The MCAP reader behind this log, when it is an MCAP file.
    #[cfg(feature = "mcap")]
    pub(crate) fn mcap(&self) -> Option<&crate::mcap_log::McapLog> {
        #[allow(irrefutable_let_patterns)]
        if let Backend::Mcap(b) = &self.backend {
            Some(b)
        } else {
            None
        }
    }

    /// The format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Every channel, by id (including channels without messages).
    pub fn channels(&self) -> &[Arc<Channel>] {
        &self.channels
    }

    /// The channel with this id.
    pub fn channel(&self, id: u32) -> Option<&Arc<Channel>> {
        self.channels
            .binary_search_by_key(&id, |c| c.id)
            .ok()
            .map(|i| &self.channels[i])
    }

    /// What opening the file noticed: a missing or damaged index (read by a scan instead), a
    /// cut file, BDDF times before 1970. Empty for a healthy file. For a full structural check
    /// use [`crate::check`].
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// Size of the input in bytes.
    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    /// The summary but for a bag's chunk totals (`chunks` is `None` for a bag): those need
    /// every chunk header, which costs a request per chunk for a remote bag. For what needs
    /// only the channels and counts (`cat`).
    pub fn summary_without_chunks(&self) -> Result<Summary> {
        match &self.backend {
            #[cfg(feature = "rosbag")]
            Backend::Bag(b) => b.summary(&self.channels, self.file_size, false),
            #[allow(unreachable_patterns)]
            _ => self.summary(),
        }
    }

    /// Counts per channel, times, chunks, attachments and metadata. Taken from the file's
    /// index and statistics; an MCAP file without statistics is counted by reading its
    /// message indexes or, without those, its messages.
    pub fn summary(&self) -> Result<Summary> {
        match &self.backend {
            #[cfg(feature = "rosbag")]
            Backend::Bag(b) => b.summary(&self.channels, self.file_size, true),
            #[cfg(feature = "mcap")]
            Backend::Mcap(b) => b.summary(&self.channels, self.file_size),
            #[cfg(feature = "bddf")]
            Backend::Bddf(b) => Ok(b.summary(&self.channels, self.file_size)),
            #[cfg(feature = "rosbag2")]
            Backend::Rosbag2(b) => Ok(b.summary(&self.channels, self.file_size)),
            #[cfg(not(any(
                feature = "rosbag",
                feature = "mcap",
                feature = "bddf",
                feature = "rosbag2"
            )))]
            Backend::Unavailable(never) => match *never {},
        }
    }

    /// The chunks, from the index, in file order: those of an MCAP file and of a 2.0 bag (the
    /// other formats have none: empty). Reads no chunk.
    pub fn chunks(&self) -> Result<Vec<ChunkInfo>> {
        match &self.backend {
            #[cfg(feature = "rosbag")]
            Backend::Bag(b) => b.chunks(),
            #[cfg(feature = "mcap")]
            Backend::Mcap(b) => Ok(b.chunks()),
            #[allow(unreachable_patterns)]
            _ => Ok(Vec::new()),
        }
    }

    /// The profile the file's header names: an MCAP header's (`ros1`, `ros2`, or empty), `ros1`
    /// for a bag (it holds ROS 1 messages only), `None` for a format without one (BDDF) or an
    /// MCAP file without a readable header.
    pub fn profile(&self) -> Result<Option<String>> {
        match &self.backend {
            #[cfg(feature = "rosbag")]
            Backend::Bag(_) => Ok(Some(crate::encodings::ROS1.to_owned())),
            #[cfg(feature = "mcap")]
            Backend::Mcap(b) => Ok(b.profile()),
            #[allow(unreachable_patterns)]
            _ => Ok(None),
        }
    }

    /// The attachments with their content (MCAP; empty for the other formats).
    pub fn attachments(&self) -> Result<Vec<Attachment>> {
        match &self.backend {
            #[cfg(feature = "mcap")]
            Backend::Mcap(b) => b.attachments(),
            #[allow(unreachable_patterns)]
            _ => Ok(Vec::new()),
        }
    }

    /// The metadata records (MCAP) or file annotations (BDDF, as one [`Metadata`] named
    /// [`crate::encodings::BDDF_ANNOTATIONS`]).
    pub fn metadata(&self) -> Result<Vec<Metadata>> {
        match &self.backend {
            #[cfg(feature = "mcap")]
            Backend::Mcap(b) => b.metadata(),
            #[cfg(feature = "bddf")]
            Backend::Bddf(b) => Ok(b.metadata()),
            #[allow(unreachable_patterns)]
            _ => Ok(Vec::new()),
        }
    }

    /// A query over the messages: every message in log-time order unless narrowed down.
    pub fn messages(&self) -> Query<'_> {
        Query {
            log: self,
            filter: Filter::default(),
            order: Order::default(),
        }
    }

    /// The input the log is read from (empty for a ROS 2 bag, which is a directory of storage
    /// files).
    pub fn input(&self) -> &Input {
        &self.input
    }

    /// The ROS 2 bag behind this log, for what the model does not show (its files, metadata).
    #[cfg(feature = "rosbag2")]
    pub fn rosbag2(&self) -> Option<&robolog_rosbag2::Bag> {
        match &self.backend {
            Backend::Rosbag2(b) => Some(b.bag()),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    pub(crate) fn read(&self, filter: &Filter, order: Order) -> Result<Messages> {
        let selection = filter.select(&self.channels)?;
        if filter.is_empty_range() || selection.channels.as_ref().is_some_and(Vec::is_empty) {
            return Ok(Messages::empty());
        }
        if order == Order::Topic {
            // One query per channel, in topic order: each reads only its channel's chunks.
            let mut channels: Vec<&Arc<Channel>> = self
                .channels
                .iter()
                .filter(|c| selection.contains(c.id))
                .collect();
            channels.sort_by(|a, b| (&a.topic, a.id).cmp(&(&b.topic, b.id)));
            let queries = channels
                .into_iter()
                .map(|c| {
                    let one = Selection {
                        channels: Some(vec![c.id]),
                        unmatched: Vec::new(),
                    };
                    self.read_selected(&one, filter, Order::LogTime)
                })
                .collect::<Result<Vec<_>>>()?;
            return Ok(Messages {
                inner: MessagesInner::Chain(queries.into_iter()),
            });
        }
        self.read_selected(&selection, filter, order)
    }

    fn read_selected(
        &self,
        selection: &Selection,
        filter: &Filter,
        order: Order,
    ) -> Result<Messages> {
        let inner = match &self.backend {
            #[cfg(feature = "rosbag")]
            Backend::Bag(b) => b.messages(&self.channels, selection, filter, order)?,
            #[cfg(feature = "mcap")]
            Backend::Mcap(b) => b.messages(&self.channels, selection, filter, order)?,
            #[cfg(feature = "bddf")]
            Backend::Bddf(b) => b.messages(&self.channels, selection, filter, order)?,
            #[cfg(feature = "rosbag2")]
            Backend::Rosbag2(b) => b.messages(&self.channels, selection, filter, order)?,
            #[cfg(not(any(
                feature = "rosbag",
                feature = "mcap",
                feature = "bddf",
                feature = "rosbag2"
            )))]
            Backend::Unavailable(never) => match *never {},
        };
        Ok(Messages { inner })
    }
}

/// Which messages of a [`Log`] to read, and in which order; run it with [`Query::iter`].
///
/// ```no_run
/// use robolog::Order;
/// let log = robolog::open("recording.bag")?;
/// for message in log.messages().topics(["/imu", "/camera/*"]).time_range(..1_700_000_000_000_000_000).order(Order::File).iter()? {
///     let message = message?;
///     println!("{} {} {} bytes", message.log_time_ns, message.channel.topic, message.data.len());
/// }
/// # Ok::<(), robolog::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Query<'l> {
    log: &'l Log,
    filter: Filter,
    order: Order,
}

impl Query<'_> {
    /// Only topics matching these names or globs (see [`Filter`]).
    pub fn topics<S: Into<String>>(mut self, patterns: impl IntoIterator<Item = S>) -> Self {
        self.filter = self.filter.topics(patterns);
        self
    }

    /// Only log times (ns) in `range`.
    pub fn time_range(mut self, range: impl std::ops::RangeBounds<u64>) -> Self {
        self.filter = self.filter.time_range(range);
        self
    }

    /// Replaces topics and time range by `filter`'s.
    pub fn filter(mut self, filter: Filter) -> Self {
        self.filter = filter;
        self
    }

    /// The order (log time by default).
    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// The channels the topic patterns select, and the patterns that match none.
    pub fn selection(&self) -> Result<Selection> {
        self.filter.select(self.log.channels())
    }

    /// Runs the query. Fails on an invalid topic pattern; read errors come with the messages.
    pub fn iter(self) -> Result<Messages> {
        self.log.read(&self.filter, self.order)
    }
}

pub(crate) enum MessagesInner {
    Empty,
    /// One query after the other ([`Order::Topic`]).
    Chain(std::vec::IntoIter<Messages>),
    #[cfg(feature = "rosbag")]
    Bag(crate::bag_log::BagMessages),
    #[cfg(feature = "mcap")]
    Mcap(Box<crate::mcap_log::McapMessages>),
    #[cfg(feature = "bddf")]
    Bddf(crate::bddf_log::BddfMessages),
    #[cfg(feature = "rosbag2")]
    Rosbag2(crate::rosbag2_log::Rosbag2Messages),
}

/// The messages of a [`Query`], in the order asked for. An error ends the iteration unless
/// the format can go on after it (a corrupt MCAP chunk is skipped, for example).
pub struct Messages {
    inner: MessagesInner,
}

impl std::fmt::Debug for Messages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Messages").finish_non_exhaustive()
    }
}

impl Messages {
    fn empty() -> Self {
        Self {
            inner: MessagesInner::Empty,
        }
    }
}

impl Iterator for Messages {
    type Item = Result<Message>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            MessagesInner::Empty => None,
            MessagesInner::Chain(queries) => loop {
                match queries.as_mut_slice().first_mut()?.next() {
                    Some(item) => return Some(item),
                    None => {
                        queries.next();
                    }
                }
            },
            #[cfg(feature = "rosbag")]
            MessagesInner::Bag(m) => m.next(),
            #[cfg(feature = "mcap")]
            MessagesInner::Mcap(m) => m.next(),
            #[cfg(feature = "bddf")]
            MessagesInner::Bddf(m) => m.next(),
            #[cfg(feature = "rosbag2")]
            MessagesInner::Rosbag2(m) => m.next(),
        }
    }
}

/// Looks channels up by id in a sorted slice (the [`Log::channels`] order).
#[cfg(any(feature = "rosbag", feature = "mcap", feature = "rosbag2"))]
pub(crate) fn channel_by_id(channels: &[Arc<Channel>], id: u32) -> Option<&Arc<Channel>> {
    channels
        .binary_search_by_key(&id, |c| c.id)
        .ok()
        .map(|i| &channels[i])
}
