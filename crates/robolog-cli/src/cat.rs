//! `robolog cat`: messages as lines of text or JSON, from a file or standard input. Damage is
//! reported and read past; a message that cannot be decoded is reported and skipped.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::{IsTerminal, Write};
use std::path::Path;

use robolog::{Decoded, Decoder, Filter, Log, LogStream, Message, TopicMatcher};

use crate::cli::{CatArgs, CatFormat};
use crate::failure::{Failure, Outcome, display_path};
use crate::input::{self, Input, Pipe};
use crate::progress::Bar;
use crate::report::{report_error, report_problems, warn, warn_unmatched};
use crate::time::format_utc;

/// Messages between progress updates.
const PROGRESS_EVERY: u64 = 1024;

pub(crate) fn run(args: &CatArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let filter = args.selection.filter()?;
    let format = if args.json {
        CatFormat::Json
    } else {
        args.format
    };
    let mut printer = Printer {
        out,
        json: format == CatFormat::Json,
        csv: (format == CatFormat::Csv).then(Csv::default),
        // CSV columns are the decoded fields.
        decoder: (args.decode || format == CatFormat::Csv).then(Decoder::new),
        topic_width: 0,
        type_width: 0,
        warned: HashSet::new(),
        undecodable: 0,
        refused: BTreeSet::new(),
        line: Vec::new(),
        parts: LineParts::default(),
    };
    let damaged = match input::open(&args.file)? {
        Input::Log(log) => cat_log(args, filter, &mut printer, &log)?,
        Input::Stream(stream) => cat_stream(args, &filter, &mut printer, *stream)?,
    };
    printer.out.flush()?;
    Ok(if damaged || printer.undecodable > 0 {
        Outcome::Problems
    } else {
        Outcome::Ok
    })
}

/// Read errors to go past before giving up on an input that keeps failing.
const MAX_READ_ERRORS: u64 = 1000;

/// Prints the messages of an indexed log; true when damage was read past.
fn cat_log(
    args: &CatArgs,
    filter: Filter,
    printer: &mut Printer<'_>,
    log: &Log,
) -> Result<bool, Failure> {
    let file = &args.file;
    let mut damaged = report_problems(log.problems(), file);
    let query = log.messages().filter(filter.clone());
    let selection = query.selection().map_err(|e| Failure::log(e, file))?;
    warn_unmatched(&selection.unmatched, file);
    // The counts only: a remote bag's chunk totals would cost a request per chunk.
    let summary = log
        .summary_without_chunks()
        .map_err(|e| Failure::log(e, file))?;
    let selected = summary
        .channels
        .iter()
        .filter(|c| selection.contains(c.channel.id));
    if printer.csv.is_some() {
        let topics: BTreeSet<&str> = selected
            .clone()
            .filter(|c| c.message_count > 0)
            .map(|c| c.channel.topic.as_str())
            .collect();
        if topics.len() > 1 {
            return Err(csv_topics(&topics.into_iter().collect::<Vec<_>>()));
        }
    }
    for entry in selected.clone() {
        printer.topic_width = printer.topic_width.max(entry.channel.topic.chars().count());
        printer.type_width = printer
            .type_width
            .max(type_label(&entry.channel).chars().count());
    }
    if let Some(decoder) = &mut printer.decoder
        && filter.all_times()
    {
        // Refuse at once rather than after printing part of the output.
        for entry in selected.filter(|c| c.message_count > 0) {
            decoder
                .check_channel(&entry.channel)
                .map_err(|e| Failure::about(not_decodable(e), file, None))?;
        }
    }
    // A bar would scribble over messages printed to the terminal.
    let bar = if std::io::stdout().is_terminal() {
        Bar::hidden()
    } else {
        let total = filter.is_everything().then_some(summary.message_count);
        Bar::messages("cat", total.map(|t| t.min(args.limit.unwrap_or(u64::MAX))))
    };
    let messages = query.iter().map_err(|e| Failure::log(e, file))?;
    if printer.decoder.is_some() && printer.csv.is_none() {
        return print_parallel(args, printer, messages, &bar).map(|read_past| damaged | read_past);
    }
    let mut printed = 0u64;
    let mut errors = 0u64;
    for message in messages {
        if args.limit.is_some_and(|limit| printed >= limit) {
            break;
        }
        let message = match message {
            Ok(message) => message,
            Err(e) => {
                // Report the damage and go on with what the reader can still give.
                damaged = true;
                errors += 1;
                report_error(&e, file);
                if errors >= MAX_READ_ERRORS {
                    return Err(Failure::about(
                        "too many read errors; giving up",
                        file,
                        None,
                    ));
                }
                continue;
            }
        };
        if printer.print(&message, file)? {
            printed += 1;
        }
        if printed.is_multiple_of(PROGRESS_EVERY) {
            bar.set(printed);
        }
    }
    Ok(damaged)
}

/// Messages decoded and rendered per job of [`print_parallel`], and the most bytes of them:
/// enough to make a job's hand-over cheap next to its work, few enough to keep a job's output
/// small.
const BATCH_MESSAGES: usize = 512;
const BATCH_BYTES: usize = 1 << 20;

/// A job of [`print_parallel`]: messages in file order, read errors in their place.
type Batch = Vec<robolog::Result<Message>>;

/// A job done: the printed lines one after the other, and for each item of the batch where
/// its line ends and what rendering said (nothing for a read error).
struct Lines {
    batch: Batch,
    text: Vec<u8>,
    ends: Vec<(usize, Option<Rendered>)>,
}

/// Prints decoded messages, decoding and rendering them on worker threads (the readers'
/// pool) while this thread reports, counts and writes them in order; true when damage was read
/// past. Decoding and number formatting are nearly all of the work of `cat --decode`.
fn print_parallel(
    args: &CatArgs,
    printer: &mut Printer<'_>,
    mut messages: impl Iterator<Item = robolog::Result<Message>>,
    bar: &Bar,
) -> Result<bool, Failure> {
    use robolog::framing::{ParallelMap, RecyclePool, default_threads};

    let file = &args.file;
    let threads = default_threads();
    let decoders: RecyclePool<Decoder> = RecyclePool::new(threads + 1);
    let texts: RecyclePool<Vec<u8>> = RecyclePool::new(2 * threads + 2);
    let batches = std::iter::from_fn(move || {
        let mut batch = Batch::new();
        let mut bytes = 0;
        while batch.len() < BATCH_MESSAGES && bytes < BATCH_BYTES {
            let Some(item) = messages.next() else {
                break;
            };
            bytes += item.as_ref().map_or(0, |m| m.data.len());
            batch.push(item);
        }
        (!batch.is_empty()).then_some(batch)
    });
    let layout = printer.layout();
    let work = {
        let texts = texts.clone();
        move |batch: Batch| {
            let mut decoder = decoders.take();
            let mut text = texts.take();
            let mut ends = Vec::with_capacity(batch.len());
            let mut parts = LineParts::default();
            for item in &batch {
                let rendered = item.as_ref().ok().map(|message| {
                    let start = text.len();
                    let rendered =
                        render(layout, &mut parts, Some(&mut decoder), message, &mut text);
                    if rendered.is_err() {
                        text.truncate(start);
                    }
                    rendered
                });
                ends.push((text.len(), rendered));
            }
            decoders.give(decoder);
            Lines { batch, text, ends }
        }
    };
    let mut printed = 0u64;
    let mut errors = 0u64;
    let mut damaged = false;
    'batches: for lines in ParallelMap::new(batches, threads, 2 * threads + 1, work) {
        // The lines of the messages accounted for so far, written together.
        let mut end = 0;
        for (item, (line_end, rendered)) in lines.batch.into_iter().zip(lines.ends) {
            if args.limit.is_some_and(|limit| printed >= limit) {
                break;
            }
            match (item, rendered) {
                (Ok(message), Some(rendered)) => {
                    if printer.account(&message, rendered, file) {
                        printed += 1;
                        end = line_end;
                    }
                }
                (Err(e), _) => {
                    damaged = true;
                    errors += 1;
                    report_error(&e, file);
                    if errors >= MAX_READ_ERRORS {
                        printer.out.write_all(&lines.text[..end])?;
                        return Err(Failure::about(
                            "too many read errors; giving up",
                            file,
                            None,
                        ));
                    }
                }
                (Ok(_), None) => {}
            }
        }
        printer.out.write_all(&lines.text[..end])?;
        texts.give_cleared(lines.text);
        bar.set(printed);
        if args.limit.is_some_and(|limit| printed >= limit) {
            break 'batches;
        }
    }
    Ok(damaged)
}

/// Prints the messages of a stream as they arrive; true when damage ended it early.
fn cat_stream(
    args: &CatArgs,
    filter: &Filter,
    printer: &mut Printer<'_>,
    mut stream: LogStream<Pipe>,
) -> Result<bool, Failure> {
    let file = &args.file;
    let matcher: Option<TopicMatcher> =
        filter.topic_matcher().map_err(|e| Failure::log(e, file))?;
    let mut printed = 0u64;
    let mut damaged = false;
    let mut errors = 0u64;
    if args.limit != Some(0) {
        for message in &mut stream {
            let message = match message {
                Ok(message) => message,
                Err(e) => {
                    damaged = true;
                    errors += 1;
                    report_error(&e, file);
                    if errors >= MAX_READ_ERRORS {
                        break;
                    }
                    continue;
                }
            };
            if !filter.contains_time(message.log_time_ns)
                || matcher
                    .as_ref()
                    .is_some_and(|m| !m.matches(&message.channel.topic))
            {
                continue;
            }
            if printer.print(&message, file)? {
                printed += 1;
            }
            if args.limit.is_some_and(|limit| printed >= limit) {
                break;
            }
        }
    }
    // A bag stream stops cleanly at damage and says so here.
    damaged |= report_problems(&stream.problems(), file);
    Ok(damaged)
}

/// The type column: the schema name, `-` for a channel without one.
fn type_label(channel: &robolog::Channel) -> &str {
    match channel.type_name() {
        "" => "-",
        name => name,
    }
}

fn not_decodable(error: robolog::DecodeError) -> String {
    format!("{error}; pick the topics to decode with --topic")
}

/// Refuses CSV of several topics: their columns differ.
fn csv_topics(topics: &[&str]) -> Failure {
    Failure::usage(
        clap::error::ErrorKind::ArgumentConflict,
        format!(
            "--format csv prints one topic (its fields are the columns), and {} are selected: \
             choose one with --topic",
            topics.join(", ")
        ),
    )
}

struct Printer<'o> {
    out: &'o mut dyn Write,
    json: bool,
    /// CSV output: the columns and the topic, fixed by the first message.
    csv: Option<Csv>,
    decoder: Option<Decoder>,
    /// Column widths for text output, from the channels known in advance.
    topic_width: usize,
    type_width: usize,
    /// Channels whose decoding was already warned about (once per channel is enough: a
    /// definition that does not match its data does so for every message).
    warned: HashSet<u32>,
    /// Messages that could not be decoded (each reported on standard error).
    undecodable: u64,
    /// Channels reported as not decodable at all.
    refused: BTreeSet<u32>,
    /// The line being rendered: a message is rendered in memory and written at once, since
    /// the many small writes of a rendering cost more through `out` than the rendering.
    line: Vec<u8>,
    /// What text lines repeat, rendered once.
    parts: LineParts,
}

impl Printer<'_> {
    fn layout(&self) -> Layout {
        Layout {
            json: self.json,
            topic_width: self.topic_width,
            type_width: self.type_width,
        }
    }

    /// Prints one message; false when it could not be decoded (that is reported instead).
    fn print(&mut self, message: &Message, file: &Path) -> Result<bool, Failure> {
        if self.csv.is_some() {
            return self.print_csv(message, file);
        }
        let channel = &message.channel;
        // A stream learns its channels as they come: columns widen when needed.
        if !self.parts.has_columns(channel.id) {
            self.topic_width = self.topic_width.max(channel.topic.chars().count());
            self.type_width = self.type_width.max(type_label(channel).chars().count());
        }
        self.line.clear();
        let rendered = render(
            self.layout(),
            &mut self.parts,
            self.decoder.as_mut(),
            message,
            &mut self.line,
        );
        if !self.account(message, rendered, file) {
            return Ok(false);
        }
        self.out.write_all(&self.line)?;
        Ok(true)
    }

    fn print_csv(&mut self, message: &Message, file: &Path) -> Result<bool, Failure> {
        let Some(decoder) = &mut self.decoder else {
            return Ok(false);
        };
        let decoded = match decoder.decode(message) {
            Ok(decoded) => decoded,
            Err(e) => {
                self.account(message, Err(e), file);
                return Ok(false);
            }
        };
        self.account(message, Ok(decoded.warning()), file);
        if let Some(csv) = &mut self.csv {
            csv.row(&mut *self.out, message, &decoded, file)?;
        }
        Ok(true)
    }

    /// Reports what rendering `message` said (a message that cannot be decoded, or a remark
    /// about one that was); true when the message is to be printed.
    fn account(&mut self, message: &Message, rendered: Rendered, file: &Path) -> bool {
        match rendered {
            Err(e) => {
                self.undecodable += 1;
                match e {
                    // A channel that cannot be decoded at all is said once.
                    e @ (robolog::DecodeError::NotDecodable { .. }
                    | robolog::DecodeError::Schema { .. }) => {
                        if self.refused.insert(message.channel.id) {
                            report_decode_error(&not_decodable(e), file);
                        }
                    }
                    e => report_decode_error(&e.to_string(), file),
                }
                false
            }
            Ok(remark) => {
                if let Some(remark) = remark
                    && self.warned.insert(message.channel.id)
                {
                    warn(&format!(
                        "{}: {}: the message at log time {} decoded, but {remark}; the \
                         definition may not match the data (the topic's other messages are not \
                         reported)",
                        display_path(file),
                        message.channel.topic,
                        message.log_time_ns
                    ));
                }
                true
            }
        }
    }
}

/// How lines look, fixed before the messages come (so that workers can render them).
#[derive(Debug, Clone, Copy)]
struct Layout {
    json: bool,
    /// Column widths of text lines.
    topic_width: usize,
    type_width: usize,
}

/// The parts of text lines that repeat from message to message, rendered once: the date and
/// time of the current second, and each channel's padded topic and type columns. Rendering
/// them for every message was most of the work of a plain `cat`.
#[derive(Debug, Default)]
struct LineParts {
    /// The second (since 1970) that `date_time` renders.
    second: Option<u64>,
    /// That second in RFC 3339, through the dot before the nanoseconds.
    date_time: Vec<u8>,
    /// By channel id: `  topic  type  `, padded to `widths`.
    columns: HashMap<u32, Vec<u8>>,
    /// The topic and type widths of `columns`.
    widths: (usize, usize),
}

const NANOS_PER_SECOND: u64 = 1_000_000_000;

impl LineParts {
    /// Appends `ns` as [`format_utc`] renders it.
    fn append_time(&mut self, ns: u64, line: &mut Vec<u8>) {
        let second = ns / NANOS_PER_SECOND;
        if self.second != Some(second) {
            let text = format_utc(second * NANOS_PER_SECOND);
            let Some(dot) = text.rfind('.') else {
                // Not a time format_utc gives for a u64; render the whole of it.
                line.extend_from_slice(format_utc(ns).as_bytes());
                return;
            };
            self.date_time.clear();
            self.date_time.extend_from_slice(&text.as_bytes()[..=dot]);
            self.second = Some(second);
        }
        line.extend_from_slice(&self.date_time);
        let mut digits = *b"000000000Z";
        let mut rest = ns % NANOS_PER_SECOND;
        for digit in digits[..9].iter_mut().rev() {
            *digit = b"0123456789"[(rest % 10) as usize];
            rest /= 10;
        }
        line.extend_from_slice(&digits);
    }

    /// Whether the columns of channel `id` are rendered already (at the current widths): a
    /// channel not seen before may need wider ones.
    fn has_columns(&self, id: u32) -> bool {
        self.columns.contains_key(&id)
    }

    /// The columns between the time and the size for `channel`, padded to `layout`'s widths.
    fn columns(&mut self, layout: Layout, channel: &robolog::Channel) -> &[u8] {
        let widths = (layout.topic_width, layout.type_width);
        if self.widths != widths {
            self.columns.clear();
            self.widths = widths;
        }
        self.columns.entry(channel.id).or_insert_with(|| {
            format!(
                "  {:<tw$}  {:<yw$}  ",
                channel.topic,
                type_label(channel),
                tw = widths.0,
                yw = widths.1,
            )
            .into_bytes()
        })
    }
}

/// What rendering a message gave: the remark about a message decoded only by tolerating
/// something (see [`Decoded::warning`]), or why it could not be decoded.
type Rendered = Result<Option<String>, robolog::DecodeError>;

/// Appends the line of `message` (JSON or text, with its newline) to `line`, decoding the
/// message first when there is a `decoder`. Nothing is appended for a message that cannot be
/// decoded.
fn render(
    layout: Layout,
    parts: &mut LineParts,
    decoder: Option<&mut Decoder>,
    message: &Message,
    line: &mut Vec<u8>,
) -> Rendered {
    let decoded = decoder.map(|d| d.decode(message)).transpose()?;
    let remark = decoded.as_ref().and_then(Decoded::warning);
    if layout.json {
        write_json_line(line, message, decoded.as_ref());
    } else {
        parts.append_time(message.log_time_ns, line);
        line.extend_from_slice(parts.columns(layout, &message.channel));
        line.extend_from_slice(itoa::Buffer::new().format(message.data.len()).as_bytes());
        line.extend_from_slice(b" B");
        if let Some(decoded) = &decoded {
            line.extend_from_slice(b"  ");
            decoded.append_json(line);
        }
        line.push(b'\n');
    }
    Ok(remark)
}

/// CSV rows of one topic's decoded messages.
#[derive(Default)]
struct Csv {
    /// The topic and the flattened field names, from the first message.
    columns: Option<(String, Vec<String>)>,
    /// Whether a message with fields outside the columns was reported.
    warned: bool,
}

impl Csv {
    fn row(
        &mut self,
        out: &mut dyn Write,
        message: &Message,
        decoded: &Decoded<'_>,
        file: &Path,
    ) -> Result<(), Failure> {
        let mut json = Vec::new();
        decoded.append_json(&mut json);
        let fields = flatten(&json).map_err(std::io::Error::from)?;
        let topic = &message.channel.topic;
        let mut writer = csv::Writer::from_writer(Vec::new());
        let failed = |e: csv::Error| Failure::msg(format!("cannot write CSV: {e}"));
        let (first_topic, columns) = match &self.columns {
            Some(columns) => columns,
            None => {
                let columns: Vec<String> = fields.iter().map(|(name, _)| name.clone()).collect();
                writer
                    .write_record(
                        ["log_time", "publish_time"]
                            .into_iter()
                            .chain(columns.iter().map(String::as_str)),
                    )
                    .map_err(failed)?;
                self.columns.insert((topic.clone(), columns))
            }
        };
        if first_topic != topic {
            return Err(csv_topics(&[first_topic.as_str(), topic.as_str()]));
        }
        let mut by_name: HashMap<&str, &str> = fields
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let mut cells: Vec<&str> = Vec::with_capacity(columns.len() + 2);
        let log_time = message.log_time_ns.to_string();
        let publish_time = message
            .publish_time_ns
            .map_or_else(String::new, |t| t.to_string());
        cells.push(&log_time);
        cells.push(&publish_time);
        for column in columns {
            cells.push(by_name.remove(column.as_str()).unwrap_or(""));
        }
        writer.write_record(&cells).map_err(failed)?;
        if !by_name.is_empty() && !self.warned {
            self.warned = true;
            warn(&format!(
                "{}: {topic}: the message at log time {} has fields the first message had not \
                 (a longer array?): the columns are the first message's, the rest is left out",
                display_path(file),
                message.log_time_ns
            ));
        }
        let line = writer
            .into_inner()
            .map_err(|e| Failure::msg(format!("cannot write CSV: {e}")))?;
        out.write_all(&line)?;
        Ok(())
    }
}

/// The scalar leaves of a decoded message's JSON as (dotted path, text), in the order of the
/// definition's fields: objects by field name, arrays by index; null is empty.
fn flatten(json: &[u8]) -> serde_json::Result<Vec<(String, String)>> {
    use serde::de::DeserializeSeed;
    let mut out = Vec::new();
    let mut path = String::new();
    let mut reader = serde_json::Deserializer::from_slice(json);
    Leaves {
        path: &mut path,
        out: &mut out,
    }
    .deserialize(&mut reader)?;
    reader.end()?;
    Ok(out)
}

/// Walks a JSON value as it is parsed, keeping the fields' order (a `serde_json::Value` would
/// sort them).
struct Leaves<'a> {
    path: &'a mut String,
    out: &'a mut Vec<(String, String)>,
}

impl Leaves<'_> {
    fn leaf(self, text: String) {
        self.out.push((self.path.clone(), text));
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Leaves<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Leaves<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a decoded message")
    }

    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.leaf(v.to_string());
        Ok(())
    }

    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.leaf(v.to_string());
        Ok(())
    }

    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.leaf(v.to_string());
        Ok(())
    }

    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        self.leaf(serde_json::Number::from_f64(v).map_or_else(String::new, |n| n.to_string()));
        Ok(())
    }

    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.leaf(v.to_owned());
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.leaf(String::new());
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        self.leaf(String::new());
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0usize;
        loop {
            let len = self.path.len();
            if !self.path.is_empty() {
                self.path.push('.');
            }
            self.path.push_str(&index.to_string());
            let more = seq.next_element_seed(Leaves {
                path: &mut *self.path,
                out: &mut *self.out,
            });
            self.path.truncate(len);
            if more?.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let len = self.path.len();
            if !self.path.is_empty() {
                self.path.push('.');
            }
            self.path.push_str(&key);
            let value = map.next_value_seed(Leaves {
                path: &mut *self.path,
                out: &mut *self.out,
            });
            self.path.truncate(len);
            value?;
        }
        Ok(())
    }
}

/// A message that could not be decoded: one error line, and `cat` goes on.
fn report_decode_error(what: &str, file: &Path) {
    let _ = writeln!(std::io::stderr(), "error: {what} ({})", display_path(file));
}

/// One JSON Lines record. Written field by field so that a decoded message is rendered into
/// the line as it is, without parsing it again.
fn write_json_line(out: &mut Vec<u8>, message: &Message, decoded: Option<&Decoded<'_>>) {
    use robolog::msg::json;

    let channel = &message.channel;
    out.extend_from_slice(b"{\"topic\":");
    json::push_str(out, &channel.topic);
    out.extend_from_slice(b",\"log_time\":");
    json::push_u64(out, message.log_time_ns);
    out.extend_from_slice(b",\"publish_time\":");
    match message.publish_time_ns {
        Some(time) => json::push_u64(out, time),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"sequence\":");
    match message.sequence {
        Some(sequence) => json::push_u64(out, sequence.into()),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"schema_name\":");
    match &channel.schema {
        Some(schema) => json::push_str(out, &schema.name),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"message_encoding\":");
    json::push_str(out, &channel.message_encoding);
    out.extend_from_slice(b",\"size\":");
    json::push_u64(out, message.data.len() as u64);
    match decoded {
        Some(decoded) => {
            out.extend_from_slice(b",\"message\":");
            decoded.append_json(out);
        }
        None => {
            out.extend_from_slice(b",\"data_base64\":");
            json::push_base64(out, &message.data);
        }
    }
    out.extend_from_slice(b"}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_times_are_format_utc_across_seconds() {
        let mut parts = LineParts::default();
        // Within one second, across a second, back to an earlier one, and the extremes.
        for ns in [
            1_700_000_000_000_000_000,
            1_700_000_000_000_000_007,
            1_700_000_000_999_999_999,
            1_700_000_001_000_000_000,
            1_600_000_000_490_000_002,
            0,
            u64::MAX,
        ] {
            let mut line = Vec::new();
            parts.append_time(ns, &mut line);
            assert_eq!(String::from_utf8(line).unwrap(), format_utc(ns), "{ns}");
        }
    }

    #[test]
    fn line_columns_follow_the_widths() {
        let channel = |id, topic: &str| robolog::Channel {
            id,
            topic: topic.to_owned(),
            message_encoding: "json".to_owned(),
            schema: None,
            metadata: Default::default(),
        };
        let mut parts = LineParts::default();
        let layout = |topic_width, type_width| Layout {
            json: false,
            topic_width,
            type_width,
        };
        let imu = channel(1, "/imu");
        assert_eq!(parts.columns(layout(6, 1), &imu), b"  /imu    -  ");
        // Wider columns render the channel again.
        assert_eq!(parts.columns(layout(8, 2), &imu), b"  /imu      -   ");
        assert_eq!(
            parts.columns(layout(8, 2), &channel(2, "/tf")),
            b"  /tf       -   "
        );
    }
}
