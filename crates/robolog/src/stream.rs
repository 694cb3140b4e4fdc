//! Reading a log from any `Read` (a pipe, stdin, a file still being written): messages in file
//! order, channels learned as they appear, without seeking and with bounded memory.

use std::collections::BTreeMap;
use std::io::{self, Chain, Cursor, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};
use crate::format::Format;
#[cfg(feature = "bddf")]
use crate::log::NegativeTimes;
use crate::log::OpenOptions;
use crate::model::{Attachment, Channel, Message, Metadata};
use crate::problem::Problem;
use crate::sniff::{SNIFF_LEN, sniff};

/// The input as the format readers see it: the sniffed bytes again, then the rest, counted.
type Input<R> = Counted<Chain<Cursor<Vec<u8>>, R>>;

/// Counts the bytes read, for [`LogStream::bytes_read`].
#[derive(Debug)]
pub(crate) struct Counted<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// One thing read from a stream, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A message.
    Message(Message),
    /// An attachment (MCAP).
    Attachment(Attachment),
    /// A metadata record (MCAP) or the file annotations (BDDF, first).
    Metadata(Metadata),
}

enum Inner<R: Read> {
    #[cfg(feature = "rosbag")]
    Bag {
        reader: Box<robolog_rosbag::StreamReader<Input<R>>>,
        builder: crate::bag_log::ChannelBuilder,
    },
    #[cfg(feature = "mcap")]
    Mcap {
        reader: Box<robolog_mcap::StreamReader<Input<R>>>,
        builder: crate::mcap_log::ChannelBuilder,
        /// The Header's profile, once read.
        profile: Option<String>,
    },
    #[cfg(feature = "bddf")]
    Bddf {
        reader: Box<robolog_bddf::StreamReader<Input<R>>>,
        series: BTreeMap<u32, crate::bddf_log::SeriesChannel>,
        annotations_sent: bool,
        policy: NegativeTimes,
    },
    /// Keeps `R` used when every format is compiled out.
    #[allow(dead_code)]
    None(std::marker::PhantomData<R>),
}

/// A log read from a stream. Iterating gives the messages; [`LogStream::next_item`] also gives
/// attachments and metadata.
///
/// ```
/// use std::io::Cursor;
/// // A bag in memory, read as if it came from a pipe.
/// let bag = std::fs::read(robolog_testkit::testdata::path("bags/generated/ros_comm/ref_none.bag"))?;
/// let stream = robolog::open_reader(Cursor::new(bag))?;
/// assert_eq!(stream.format(), robolog::Format::Bag);
/// assert_eq!(stream.count(), 150);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct LogStream<R: Read> {
    format: Format,
    inner: Inner<R>,
    channels: BTreeMap<u32, Arc<Channel>>,
    position: Arc<AtomicU64>,
    /// Set after an error that ends the stream (any error of a bag or BDDF stream; MCAP
    /// readers skip a bad chunk and go on).
    ended: bool,
}

impl<R: Read> std::fmt::Debug for LogStream<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogStream")
            .field("format", &self.format)
            .field("channels", &self.channels.len())
            .field("bytes_read", &self.bytes_read())
            .finish_non_exhaustive()
    }
}

/// Starts reading a log from `input`, detecting its format from the first bytes.
///
/// MCAP streams are read as ratified MCAP (a stream cannot look at the footer to detect the
/// draft layout; open draft files from a path or bytes instead, or say the layout with
/// [`OpenOptions::mcap_layout`]).
pub fn open_reader<R: Read>(input: R) -> Result<LogStream<R>> {
    OpenOptions::default().open_reader(input)
}

impl OpenOptions {
    /// Starts reading a log from `input` (see [`open_reader`]).
    pub fn open_reader<R: Read>(&self, mut input: R) -> Result<LogStream<R>> {
        let mut head = vec![0u8; SNIFF_LEN];
        let mut got = 0;
        while got < head.len() {
            match input.read(&mut head[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        head.truncate(got);
        let format = sniff(&head)?;
        format.require_enabled()?;
        let position = Arc::new(AtomicU64::new(0));
        let input = Counted {
            inner: Cursor::new(head).chain(input),
            count: Arc::clone(&position),
        };
        let inner = match format {
            #[cfg(feature = "rosbag")]
            Format::Bag => Inner::Bag {
                reader: Box::new(robolog_rosbag::StreamReader::new(input)?),
                builder: Default::default(),
            },
            #[cfg(feature = "mcap")]
            Format::Mcap => Inner::Mcap {
                reader: Box::new(robolog_mcap::StreamReader::with_options(
                    input,
                    robolog_mcap::ReadOptions::default().layout(self.mcap_layout),
                )),
                builder: Default::default(),
                profile: None,
            },
            #[cfg(feature = "bddf")]
            Format::Bddf => Inner::Bddf {
                reader: Box::new(robolog_bddf::StreamReader::new(input)?),
                series: BTreeMap::new(),
                annotations_sent: false,
                policy: self.negative_times,
            },
            Format::Rosbag2 => {
                return Err(Error::Usage(
                    "a ROS 2 bag cannot be read from a stream: open its directory or .db3 file"
                        .into(),
                ));
            }
            #[allow(unreachable_patterns)]
            other => return Err(Error::FormatDisabled { format: other }),
        };
        Ok(LogStream {
            format,
            inner,
            channels: BTreeMap::new(),
            position,
            ended: false,
        })
    }
}

impl<R: Read> LogStream<R> {
    /// The format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The channels seen so far, by id.
    pub fn channels(&self) -> impl Iterator<Item = &Arc<Channel>> {
        self.channels.values()
    }

    /// Bytes read from the input so far (for progress: the readers buffer ahead a little).
    pub fn bytes_read(&self) -> u64 {
        self.position.load(Ordering::Relaxed)
    }

    /// The format's version, as the summary of a [`crate::Log`] says it: a bag's "2.0" or
    /// "1.2", MCAP's "0"; empty for a BDDF stream.
    pub fn version(&self) -> String {
        match &self.inner {
            #[cfg(feature = "rosbag")]
            Inner::Bag { reader, .. } => reader.version().to_string(),
            #[cfg(feature = "mcap")]
            Inner::Mcap { .. } => "0".to_owned(),
            #[allow(unreachable_patterns)]
            _ => String::new(),
        }
    }

    /// The profile the header names, as [`crate::Log::profile`]; for MCAP, once the header
    /// has been read (before the first item).
    pub fn profile(&self) -> Option<&str> {
        match &self.inner {
            #[cfg(feature = "rosbag")]
            Inner::Bag { .. } => Some(crate::encodings::ROS1),
            #[cfg(feature = "mcap")]
            Inner::Mcap { profile, .. } => profile.as_deref(),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// Damage found so far. A bag stream that hits damage or a cut ends cleanly after the last
    /// complete message and reports it here; MCAP and BDDF streams return such damage as
    /// errors instead.
    pub fn problems(&self) -> Vec<Problem> {
        match &self.inner {
            #[cfg(feature = "rosbag")]
            Inner::Bag { reader, .. } => reader.report().problems.clone(),
            #[allow(unreachable_patterns)]
            _ => Vec::new(),
        }
    }

    /// The next message, attachment or metadata record; `Ok(None)` at the end.
    pub fn next_item(&mut self) -> Result<Option<Item>> {
        if self.ended {
            return Ok(None);
        }
        let item = self.read_item();
        if item.is_err() && self.format != Format::Mcap {
            self.ended = true;
        }
        item
    }

    fn read_item(&mut self) -> Result<Option<Item>> {
        match &mut self.inner {
            #[cfg(feature = "rosbag")]
            Inner::Bag { reader, builder } => {
                let Some(m) = reader.next_message()? else {
                    return Ok(None);
                };
                let channel = match self.channels.get(&m.conn) {
                    Some(c) => Arc::clone(c),
                    None => {
                        let connection =
                            reader.connection(m.conn).ok_or(Error::UndefinedChannel {
                                format: Format::Bag,
                                channel: u64::from(m.conn),
                                offset: None,
                            })?;
                        let channel = Arc::new(builder.channel(connection));
                        self.channels.insert(m.conn, Arc::clone(&channel));
                        channel
                    }
                };
                Ok(Some(Item::Message(Message {
                    channel,
                    log_time_ns: m.time_ns,
                    publish_time_ns: None,
                    sequence: None,
                    data: m.data,
                })))
            }
            #[cfg(feature = "mcap")]
            Inner::Mcap {
                reader,
                builder,
                profile,
            } => loop {
                use robolog_mcap::Record;
                let Some(record) = reader.next_record() else {
                    return Ok(None);
                };
                match record? {
                    Record::Header(h) => *profile = Some(h.profile.into_owned()),
                    Record::Schema(s) => {
                        builder.schema(&s);
                    }
                    Record::Channel(c) => {
                        let channel = builder.channel(&c);
                        let id = channel.id;
                        if self
                            .channels
                            .get(&id)
                            .is_none_or(|known| **known != channel)
                        {
                            self.channels.insert(id, Arc::new(channel));
                        }
                    }
                    Record::Message(m) => {
                        let channel = self.channels.get(&u32::from(m.channel_id)).ok_or(
                            Error::UndefinedChannel {
                                format: Format::Mcap,
                                channel: u64::from(m.channel_id),
                                offset: None,
                            },
                        )?;
                        return Ok(Some(Item::Message(Message {
                            channel: Arc::clone(channel),
                            log_time_ns: m.log_time,
                            publish_time_ns: Some(m.publish_time),
                            sequence: Some(m.sequence),
                            data: robolog_framing::Bytes::copy_from_slice(m.data),
                        })));
                    }
                    Record::Attachment(a) => {
                        return Ok(Some(Item::Attachment(Attachment {
                            name: a.name.into_owned(),
                            media_type: a.media_type.into_owned(),
                            log_time_ns: a.log_time,
                            create_time_ns: a.create_time,
                            data: robolog_framing::Bytes::from(a.data.into_owned()),
                        })));
                    }
                    Record::Metadata(m) => {
                        return Ok(Some(Item::Metadata(Metadata {
                            name: m.name.into_owned(),
                            entries: crate::mcap_log::string_map(&m.metadata),
                        })));
                    }
                    _ => {}
                }
            },
            #[cfg(feature = "bddf")]
            Inner::Bddf {
                reader,
                series,
                annotations_sent,
                policy,
            } => {
                if !std::mem::replace(annotations_sent, true) && !reader.annotations().is_empty() {
                    return Ok(Some(Item::Metadata(Metadata {
                        name: crate::encodings::BDDF_ANNOTATIONS.to_owned(),
                        entries: reader.annotations().clone(),
                    })));
                }
                let Some(block) = reader.next_block()? else {
                    return Ok(None);
                };
                let index = block.series_index;
                let channel = match series.entry(index) {
                    std::collections::btree_map::Entry::Occupied(known) => known.into_mut(),
                    std::collections::btree_map::Entry::Vacant(slot) => {
                        let described =
                            reader
                                .series_by_index(index)
                                .ok_or(Error::UndefinedChannel {
                                    format: Format::Bddf,
                                    channel: u64::from(index),
                                    offset: None,
                                })?;
                        let channel = crate::bddf_log::series_channel(described);
                        self.channels.insert(index, Arc::clone(&channel.channel));
                        slot.insert(channel)
                    }
                };
                Ok(Some(Item::Message(channel.message(block, *policy)?)))
            }
            Inner::None(_) => Ok(None),
        }
    }
}

impl<R: Read> Iterator for LogStream<R> {
    type Item = Result<Message>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.next_item() {
                Ok(Some(Item::Message(m))) => return Some(Ok(m)),
                Ok(Some(_)) => {}
                Ok(None) => return None,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}
