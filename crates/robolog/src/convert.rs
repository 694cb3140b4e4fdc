//! Converting a log into another format, and merging several logs into one, through the model.

use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::log::Log;
use crate::merged::MergedMessages;
#[cfg(feature = "migrate")]
use crate::migrate::{Migration, Migrator};
#[cfg(not(feature = "migrate"))]
use crate::migrate_off::Migrator;
use crate::model::Channel;
use crate::problem::Problem;
use crate::query::{Filter, Order};
use crate::stream::{Item, LogStream};
use crate::writer::LogWriter;

#[cfg(feature = "mcap")]
mod chunk_copy;

/// How far a long operation has got, for progress bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Progress {
    /// Messages processed so far.
    pub messages: u64,
    /// Payload bytes of those messages.
    pub bytes: u64,
    /// Messages to process in all, when known in advance (from the inputs' summaries, without
    /// a time range).
    pub total_messages: Option<u64>,
    /// For stream inputs: bytes read from the input so far.
    pub input_position: Option<u64>,
}

/// A progress callback. It is called every few thousand messages (and once at the end), so it
/// may do real work such as redrawing a bar.
pub type ProgressFn<'a> = dyn FnMut(&Progress) + 'a;

/// What to convert or merge: everything, in log-time order, by default.
///
/// ```
/// use robolog::{ConvertOptions, Filter, Order};
/// let options = ConvertOptions::new()
///     .filter(Filter::new().topics(["/imu"]).time_range(1_000..2_000))
///     .order(Order::File)
///     .drop_attachments(true)
///     .keep_going(true);
/// # let _ = options;
/// ```
#[derive(Default)]
#[non_exhaustive]
pub struct ConvertOptions<'a> {
    filter: Filter,
    order: Order,
    progress: Option<Box<ProgressFn<'a>>>,
    drop_attachments: bool,
    drop_metadata: bool,
    keep_going: bool,
    #[cfg(feature = "migrate")]
    migration: Migration,
}

impl std::fmt::Debug for ConvertOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConvertOptions")
            .field("filter", &self.filter)
            .field("order", &self.order)
            .field("progress", &self.progress.is_some())
            .field("drop_attachments", &self.drop_attachments)
            .field("drop_metadata", &self.drop_metadata)
            .field("keep_going", &self.keep_going)
            .finish_non_exhaustive()
    }
}

impl<'a> ConvertOptions<'a> {
    /// Everything, in log-time order.
    pub fn new() -> Self {
        Self::default()
    }

    /// Topics and time range (everything by default). Attachments are kept when their log
    /// time is in the range; metadata always.
    pub fn filter(mut self, filter: Filter) -> Self {
        self.filter = filter;
        self
    }

    /// The order messages are written in (log time by default; file order is faster on files
    /// whose chunks overlap). Streams are always read in file order, merges in log-time order.
    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// Called as messages are written.
    pub fn progress(mut self, progress: impl FnMut(&Progress) + 'a) -> Self {
        self.progress = Some(Box::new(progress));
        self
    }

    /// Leave the attachments out (default off).
    pub fn drop_attachments(mut self, on: bool) -> Self {
        self.drop_attachments = on;
        self
    }

    /// Leave the metadata records out (default off).
    pub fn drop_metadata(mut self, on: bool) -> Self {
        self.drop_metadata = on;
        self
    }

    /// Go on past damage the input can be read beyond (a corrupt MCAP chunk), recording it in
    /// [`ConvertReport::damage`], instead of failing at it (the default).
    pub fn keep_going(mut self, on: bool) -> Self {
        self.keep_going = on;
        self
    }

    /// ROS 1 ↔ ROS 2 migration ([`Migration::auto`] by default: only what the output format
    /// needs; see [`crate::migrate`]).
    #[cfg(feature = "migrate")]
    pub fn migration(mut self, migration: Migration) -> Self {
        self.migration = migration;
        self
    }

    /// The order messages are written in.
    pub fn get_order(&self) -> Order {
        self.order
    }

    /// The migration of a conversion into `writer`.
    fn migrator(&self, writer: &dyn LogWriter) -> Migrator {
        #[cfg(feature = "migrate")]
        return Migrator::new(&self.migration, writer.format());
        #[cfg(not(feature = "migrate"))]
        return Migrator::new(writer.format());
    }
}

/// What to do with a read error of input `input`: fail, or record it and go on.
fn damaged(input: usize, error: Error, keep_going: bool, report: &mut ConvertReport) -> Result<()> {
    if !keep_going {
        return Err(error);
    }
    report.damage.push(InputProblem {
        input,
        problem: error.to_problem(),
    });
    // An iterator that keeps failing is not going anywhere.
    if report.damage.len() > MAX_DAMAGE {
        return Err(error);
    }
    Ok(())
}

/// Read errors [`ConvertOptions::keep_going`] goes past before giving up.
const MAX_DAMAGE: usize = 10_000;

/// What a conversion or merge wrote and left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ConvertReport {
    /// Messages written.
    pub messages: u64,
    /// Their payload bytes.
    pub bytes: u64,
    /// Channels written.
    pub channels: u64,
    /// Attachments written.
    pub attachments: u64,
    /// Attachments the output format cannot hold.
    pub attachments_dropped: u64,
    /// Metadata records written.
    pub metadata: u64,
    /// Metadata records the output format cannot hold.
    pub metadata_dropped: u64,
    /// Channels without messages left out because the output format cannot hold them.
    pub skipped_channels: Vec<String>,
    /// Topic patterns that matched no channel.
    pub unmatched_topics: Vec<String>,
    /// What opening the inputs noticed (damage, missing indexes).
    pub input_problems: Vec<Problem>,
    /// Read errors gone past with [`ConvertOptions::keep_going`], each with its input and its
    /// offset there.
    pub damage: Vec<InputProblem>,
    /// MCAP chunks copied whole, without decoding them (see [`convert`]). Their messages are
    /// counted in `messages`, their payload bytes not in `bytes`.
    pub chunks_copied: u64,
}

/// A problem of one of the inputs of a conversion or merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputProblem {
    /// Which input (its index in the list given to [`merge`]; 0 for [`convert`]).
    pub input: usize,
    /// The problem, with its offset in that input.
    pub problem: Problem,
}

struct Tracker<'o, 'a> {
    progress: Option<&'o mut Box<ProgressFn<'a>>>,
    state: Progress,
    next_report: u64,
}

/// Messages between progress reports.
const PROGRESS_EVERY: u64 = 4096;

impl<'o, 'a> Tracker<'o, 'a> {
    fn new(progress: Option<&'o mut Box<ProgressFn<'a>>>, total: Option<u64>) -> Self {
        Self {
            progress,
            state: Progress {
                total_messages: total,
                ..Progress::default()
            },
            next_report: PROGRESS_EVERY,
        }
    }

    fn message(&mut self, bytes: usize, input_position: Option<u64>) {
        self.state.messages += 1;
        self.state.bytes += bytes as u64;
        if self.state.messages >= self.next_report {
            self.next_report = self.state.messages + PROGRESS_EVERY;
            self.state.input_position = input_position;
            if let Some(f) = self.progress.as_mut() {
                f(&self.state);
            }
        }
    }

    /// Messages copied without being decoded (their sizes unknown): whole MCAP chunks.
    #[cfg(feature = "mcap")]
    fn copied(&mut self, messages: u64) {
        self.state.messages += messages;
        if self.state.messages >= self.next_report {
            self.next_report = self.state.messages + PROGRESS_EVERY;
            if let Some(f) = self.progress.as_mut() {
                f(&self.state);
            }
        }
    }

    fn done(&mut self, input_position: Option<u64>) {
        self.state.input_position = input_position;
        if let Some(f) = self.progress.as_mut() {
            f(&self.state);
        }
    }
}

/// Output channel ids. Channels of different inputs with the same content share one; the
/// channels of one input stay apart (a bag may have several identical connections).
#[derive(Default)]
struct ChannelTable {
    /// (input, input channel id) → output id.
    ids: HashMap<(usize, u32), u32>,
    declared: Vec<(usize, Arc<Channel>, u32)>,
}

impl ChannelTable {
    fn declare(
        &mut self,
        input: usize,
        channel: &Arc<Channel>,
        writer: &mut dyn LogWriter,
    ) -> Result<u32> {
        if let Some(&id) = self.ids.get(&(input, channel.id)) {
            return Ok(id);
        }
        let shared = self
            .declared
            .iter()
            .find(|(i, c, _)| *i != input && c.same_content(channel));
        let id = match shared {
            Some((_, _, id)) => *id,
            None => {
                let id = writer.add_channel(channel)?;
                self.declared.push((input, Arc::clone(channel), id));
                id
            }
        };
        self.ids.insert((input, channel.id), id);
        Ok(id)
    }

    fn output_channels(&self) -> u64 {
        let mut ids: Vec<u32> = self.declared.iter().map(|(_, _, id)| *id).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len() as u64
    }
}

/// The channels to copy: each input's selected channels, migrated where the conversion
/// migrates them and checked against the writer. Channels the output format cannot hold (or
/// that cannot be migrated) are an error when they have messages, skipped when they have none.
/// Also the expected message total, when known.
#[allow(clippy::type_complexity)]
fn prepare(
    inputs: &[&Log],
    writer: &dyn LogWriter,
    migrator: &mut Migrator,
    filter: &Filter,
    report: &mut ConvertReport,
) -> Result<(Vec<(usize, Arc<Channel>)>, Option<u64>)> {
    let mut refused = Vec::new();
    let mut refused_in = std::collections::BTreeSet::new();
    let mut not_migrated = Vec::new();
    let mut total = Some(0u64);
    let mut unmatched: Option<Vec<String>> = None;
    let mut wanted = Vec::new();
    for (i, log) in inputs.iter().enumerate() {
        report.input_problems.extend(log.problems().iter().cloned());
        let selection = filter.select(log.channels())?;
        unmatched = Some(match unmatched {
            None => selection.unmatched.clone(),
            Some(u) => u
                .into_iter()
                .filter(|p| selection.unmatched.contains(p))
                .collect(),
        });
        let summary = log.summary().map_err(|e| e.in_input(i))?;
        for entry in &summary.channels {
            let channel = &entry.channel;
            if !selection.contains(channel.id) {
                continue;
            }
            total = total.map(|t| t + entry.message_count);
            let channel = match migrator.channel(i, channel) {
                Ok(migrated) => migrated,
                Err(why) if entry.message_count == 0 => {
                    report
                        .skipped_channels
                        .push(format!("{} ({})", channel.topic, why.join("; ")));
                    continue;
                }
                Err(why) => {
                    not_migrated.extend(why.into_iter().map(|w| format!("{}: {w}", channel.topic)));
                    continue;
                }
            };
            let channel = &channel;
            match writer.check_channel(channel) {
                Ok(()) => wanted.push((i, Arc::clone(channel))),
                Err(why) if entry.message_count == 0 => report
                    .skipped_channels
                    .push(format!("{} ({why})", channel.topic)),
                Err(why) => {
                    // The same channel in several inputs is named once.
                    let what = format!("{} ({}: {why})", channel.topic, channel.message_encoding);
                    if !refused.contains(&what) {
                        refused.push(what);
                    }
                    refused_in.insert(i);
                }
            }
        }
    }
    if !not_migrated.is_empty() {
        return Err(migrator.errors(not_migrated));
    }
    if !refused.is_empty() {
        let error = Error::UnsupportedChannels {
            target: writer.format(),
            channels: refused,
        };
        // Which input, when only one holds them.
        return Err(match refused_in.into_iter().collect::<Vec<_>>()[..] {
            [only] if inputs.len() > 1 => error.in_input(only),
            _ => error,
        });
    }
    report.unmatched_topics = unmatched.unwrap_or_default();
    Ok((wanted, total.filter(|_| filter.all_times())))
}

/// Gives the writer the header profile (MCAP `ros1`, `ros2`) every input agrees on.
fn inherit_profile(inputs: &[&Log], writer: &mut dyn LogWriter) -> Result<()> {
    let mut common: Option<String> = None;
    for (i, log) in inputs.iter().enumerate() {
        let Some(profile) = log.profile().map_err(|e| e.in_input(i))? else {
            return Ok(());
        };
        match &common {
            Some(c) if *c != profile => return Ok(()),
            _ => common = Some(profile),
        }
    }
    if let Some(profile) = common.filter(|p| !p.is_empty()) {
        writer.set_profile(&profile);
    }
    Ok(())
}

/// Declares the channels (after metadata, which a BDDF output needs before its first series),
/// after the record naming the distro of migrated definitions.
fn declare_all(
    wanted: &[(usize, Arc<Channel>)],
    writer: &mut dyn LogWriter,
    migrator: &Migrator,
    report: &mut ConvertReport,
) -> Result<ChannelTable> {
    if let Some(record) = migrator.distro_record() {
        writer.write_metadata(&record)?;
    }
    let mut table = ChannelTable::default();
    for (i, channel) in wanted {
        table.declare(*i, channel, writer)?;
    }
    report.channels = table.output_channels();
    Ok(table)
}

/// Attachments and metadata of the inputs, unless the options leave them out.
fn copy_extras(
    inputs: &[&Log],
    writer: &mut dyn LogWriter,
    options: &ConvertOptions<'_>,
    report: &mut ConvertReport,
) -> Result<()> {
    let filter = &options.filter;
    for (i, log) in inputs.iter().enumerate() {
        let metadata = match options.drop_metadata {
            true => Vec::new(),
            false => log.metadata().map_err(|e| e.in_input(i))?,
        };
        for metadata in metadata {
            if writer.write_metadata(&metadata)? {
                report.metadata += 1;
            } else {
                report.metadata_dropped += 1;
            }
        }
        let attachments = match options.drop_attachments {
            true => Vec::new(),
            false => log.attachments().map_err(|e| e.in_input(i))?,
        };
        for attachment in attachments {
            if !filter.all_times() && !filter.contains_time(attachment.log_time_ns) {
                continue;
            }
            if writer.write_attachment(&attachment)? {
                report.attachments += 1;
            } else {
                report.attachments_dropped += 1;
            }
        }
    }
    Ok(())
}

/// Converts `input` into `writer`: the channels, metadata, attachments and messages the
/// options select. Message bytes and log times are copied exactly; see each writer for what
/// its format keeps of the rest. The writer is not finished, so that more can be added.
///
/// Channels the output format cannot hold are an error listing them all (before anything is
/// written), unless they have no messages.
///
/// From an indexed MCAP file into an MCAP writer, a chunk the output keeps whole is copied as it
/// is, without decompressing it ([`ConvertReport::chunks_copied`]): every message in it selected,
/// the output's chunk compression, its channels and schemas under the same ids in the output,
/// and [`Order::File`] (or [`Order::LogTime`] when the chunks do not overlap in time). Its CRC is
/// the input's, not checked. The other chunks are decoded and their messages written.
///
/// ```
/// use robolog::{ConvertOptions, Format, Output, WriterOptions, convert, create_writer};
/// let bag = robolog::open(robolog_testkit::testdata::path("bags/generated/ros_comm/ref_lz4.bag"))?;
/// let mut mcap = create_writer(Output::memory(), WriterOptions::default_for(Format::Mcap)?)?;
/// let report = convert(&bag, &mut *mcap, ConvertOptions::new())?;
/// let file = mcap.finish()?.data.unwrap();
/// let copy = robolog::open_bytes(file)?;
/// assert_eq!(report.messages, 150);
/// assert_eq!(copy.summary()?.message_count, 150);
/// assert_eq!(copy.channels()[0].message_encoding, "ros1");
/// # Ok::<(), robolog::Error>(())
/// ```
pub fn convert(
    input: &Log,
    writer: &mut dyn LogWriter,
    mut options: ConvertOptions<'_>,
) -> Result<ConvertReport> {
    let mut report = ConvertReport::default();
    let mut migrator = options.migrator(writer);
    let (wanted, total) = prepare(
        &[input],
        writer,
        &mut migrator,
        &options.filter,
        &mut report,
    )?;
    if !migrator.may_migrate() {
        inherit_profile(&[input], writer)?;
    }
    copy_extras(&[input], writer, &options, &mut report)?;
    let mut table = declare_all(&wanted, writer, &migrator, &mut report)?;
    let mut tracker = Tracker::new(options.progress.as_mut(), total);
    #[cfg(feature = "mcap")]
    if !migrator.may_migrate()
        && chunk_copy::convert_by_chunks(
            &[input],
            writer,
            (&options.filter, options.order, options.keep_going),
            &mut table,
            &mut tracker,
            &mut report,
        )?
    {
        tracker.done(None);
        return Ok(report);
    }
    let messages = input
        .messages()
        .filter(options.filter.clone())
        .order(options.order)
        .iter()?;
    for message in messages {
        let message = match message {
            Ok(message) => message,
            Err(e) => {
                damaged(0, e, options.keep_going, &mut report)?;
                continue;
            }
        };
        let message = migrator.message(0, message)?;
        let id = table.declare(0, &message.channel, writer)?;
        writer.write_message(id, &message)?;
        report.messages += 1;
        report.bytes += message.data.len() as u64;
        tracker.message(message.data.len(), None);
    }
    tracker.done(None);
    Ok(report)
}

/// Converts a log read from a stream (see [`crate::open_reader`]) into `writer`, in file
/// order. Channels are declared as they appear; one the output format cannot hold is an error
/// when its first selected message arrives. Attachments and metadata are copied where they
/// come (a BDDF output keeps only metadata seen before the first message).
pub fn convert_stream<R: Read>(
    input: &mut LogStream<R>,
    writer: &mut dyn LogWriter,
    mut options: ConvertOptions<'_>,
) -> Result<ConvertReport> {
    let mut report = ConvertReport::default();
    let matcher = options.filter.topic_matcher()?;
    let mut migrator = options.migrator(writer);
    let mut table = ChannelTable::default();
    let mut tracker = Tracker::new(options.progress.as_mut(), None);
    let mut profile_given = false;
    loop {
        let item = match input.next_item() {
            Ok(Some(item)) => item,
            Ok(None) => break,
            Err(e) => {
                damaged(0, e, options.keep_going, &mut report)?;
                continue;
            }
        };
        // The header comes first: its profile is known before anything is written.
        if !std::mem::replace(&mut profile_given, true)
            && !migrator.may_migrate()
            && let Some(profile) = input.profile().filter(|p| !p.is_empty())
        {
            writer.set_profile(profile);
        }
        match item {
            Item::Message(message) => {
                let channel = &message.channel;
                if !options.filter.contains_time(message.log_time_ns)
                    || matcher.as_ref().is_some_and(|m| !m.matches(&channel.topic))
                {
                    continue;
                }
                let had_distro = migrator.distro_record().is_some();
                let channel = &migrator
                    .channel(0, channel)
                    .map_err(|refused| migrator.error(channel, refused))?;
                if !had_distro && let Some(record) = migrator.distro_record() {
                    writer.write_metadata(&record)?;
                }
                if let Err(why) = writer.check_channel(channel) {
                    return Err(Error::UnsupportedChannels {
                        target: writer.format(),
                        channels: vec![format!(
                            "{} ({}: {why})",
                            channel.topic, channel.message_encoding
                        )],
                    });
                }
                let id = table.declare(0, channel, writer)?;
                let message = migrator.message(0, message)?;
                writer.write_message(id, &message)?;
                report.messages += 1;
                report.bytes += message.data.len() as u64;
                tracker.message(message.data.len(), Some(input.bytes_read()));
            }
            Item::Attachment(_) if options.drop_attachments => {}
            Item::Metadata(_) if options.drop_metadata => {}
            Item::Attachment(attachment) => {
                if !options.filter.all_times()
                    && !options.filter.contains_time(attachment.log_time_ns)
                {
                    continue;
                }
                if writer.write_attachment(&attachment)? {
                    report.attachments += 1;
                } else {
                    report.attachments_dropped += 1;
                }
            }
            Item::Metadata(metadata) => {
                if writer.write_metadata(&metadata)? {
                    report.metadata += 1;
                } else {
                    report.metadata_dropped += 1;
                }
            }
        }
    }
    report.channels = table.output_channels();
    report.input_problems = input.problems();
    tracker.done(Some(input.bytes_read()));
    Ok(report)
}

/// Merges several logs into `writer`, every message in log-time order (equal times: earlier
/// input first, then file order). Channels with the same topic, encoding, schema and metadata
/// in several inputs become one channel; others keep their own. Metadata and attachments of
/// every input are copied. `options.order` is ignored: a merge is always in log-time order.
///
/// MCAP files merged into an MCAP writer copy their chunks whole as [`convert`] does, when no
/// two chunks of the inputs overlap in time (one input after the other, say).
pub fn merge(
    inputs: &[&Log],
    writer: &mut dyn LogWriter,
    mut options: ConvertOptions<'_>,
) -> Result<ConvertReport> {
    let mut report = ConvertReport::default();
    let mut migrator = options.migrator(writer);
    let (wanted, total) = prepare(inputs, writer, &mut migrator, &options.filter, &mut report)?;
    if !migrator.may_migrate() {
        inherit_profile(inputs, writer)?;
    }
    copy_extras(inputs, writer, &options, &mut report)?;
    let mut table = declare_all(&wanted, writer, &migrator, &mut report)?;
    let mut tracker = Tracker::new(options.progress.as_mut(), total);
    #[cfg(feature = "mcap")]
    if !migrator.may_migrate()
        && chunk_copy::convert_by_chunks(
            inputs,
            writer,
            (&options.filter, Order::LogTime, options.keep_going),
            &mut table,
            &mut tracker,
            &mut report,
        )?
    {
        tracker.done(None);
        return Ok(report);
    }
    let mut merged = MergedMessages::new(inputs, &options.filter)?;
    while let Some(item) = merged.next_or_damage() {
        let (i, message) = match item {
            Ok(found) => found,
            Err((i, e)) => {
                damaged(i, e, options.keep_going, &mut report).map_err(|e| e.in_input(i))?;
                continue;
            }
        };
        let message = migrator.message(i, message)?;
        let id = table.declare(i, &message.channel, writer)?;
        writer.write_message(id, &message)?;
        report.messages += 1;
        report.bytes += message.data.len() as u64;
        tracker.message(message.data.len(), None);
    }
    tracker.done(None);
    Ok(report)
}
