//! `robolog cat`: messages as lines of text or JSON, from a file or standard input. Damage is
//! reported and read past; a message that cannot be decoded is reported and skipped.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::{IsTerminal, Write};
use std::path::Path;

use base64::Engine as _;
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
    let summary = log.summary().map_err(|e| Failure::log(e, file))?;
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
    let mut printed = 0u64;
    let mut errors = 0u64;
    for message in query.iter().map_err(|e| Failure::log(e, file))? {
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
}

impl Printer<'_> {
    /// Prints one message; false when it could not be decoded (that is reported instead).
    fn print(&mut self, message: &Message, file: &Path) -> Result<bool, Failure> {
        let decoded = match &mut self.decoder {
            Some(decoder) => match decoder.decode(message) {
                Ok(decoded) => Some(decoded),
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
                    return Ok(false);
                }
            },
            None => None,
        };
        if let Some(remark) = decoded.as_ref().and_then(Decoded::warning)
            && self.warned.insert(message.channel.id)
        {
            warn(&format!(
                "{}: {}: the message at log time {} decoded, but {remark}; the definition may \
                 not match the data (the topic's other messages are not reported)",
                display_path(file),
                message.channel.topic,
                message.log_time_ns
            ));
        }
        if let Some(csv) = &mut self.csv {
            let Some(decoded) = &decoded else {
                return Ok(false);
            };
            csv.row(&mut *self.out, message, decoded, file)?;
        } else if self.json {
            self.line.clear();
            write_json_line(&mut self.line, message, decoded.as_ref())?;
            self.out.write_all(&self.line)?;
        } else {
            let channel = &message.channel;
            // A stream learns its channels as they come: columns widen when needed.
            self.topic_width = self.topic_width.max(channel.topic.chars().count());
            self.type_width = self.type_width.max(type_label(channel).chars().count());
            write!(
                self.out,
                "{}  {:<tw$}  {:<yw$}  {} B",
                format_utc(message.log_time_ns),
                channel.topic,
                type_label(channel),
                message.data.len(),
                tw = self.topic_width,
                yw = self.type_width,
            )?;
            if let Some(decoded) = &decoded {
                self.line.clear();
                self.line.extend_from_slice(b"  ");
                decoded.write_json(&mut self.line)?;
                self.out.write_all(&self.line)?;
            }
            self.out.write_all(b"\n")?;
        }
        Ok(true)
    }
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
        decoded.write_json(&mut json)?;
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

/// One JSON Lines record. Written field by field so that a decoded message is streamed into
/// the line as the decoder renders it, without parsing it again.
fn write_json_line(
    out: &mut Vec<u8>,
    message: &Message,
    decoded: Option<&Decoded<'_>>,
) -> std::io::Result<()> {
    let channel = &message.channel;
    out.extend_from_slice(b"{\"topic\":");
    serde_json::to_writer(&mut *out, &channel.topic)?;
    write!(out, ",\"log_time\":{}", message.log_time_ns)?;
    out.write_all(b",\"publish_time\":")?;
    serde_json::to_writer(&mut *out, &message.publish_time_ns)?;
    out.write_all(b",\"sequence\":")?;
    serde_json::to_writer(&mut *out, &message.sequence)?;
    out.write_all(b",\"schema_name\":")?;
    serde_json::to_writer(&mut *out, &channel.schema.as_deref().map(|s| &s.name))?;
    out.write_all(b",\"message_encoding\":")?;
    serde_json::to_writer(&mut *out, &channel.message_encoding)?;
    write!(out, ",\"size\":{}", message.data.len())?;
    match decoded {
        Some(decoded) => {
            out.write_all(b",\"message\":")?;
            decoded.write_json(&mut *out)?;
        }
        None => {
            out.write_all(b",\"data_base64\":\"")?;
            let encoded = base64::engine::general_purpose::STANDARD.encode(&message.data);
            out.write_all(encoded.as_bytes())?;
            out.write_all(b"\"")?;
        }
    }
    out.write_all(b"}\n")
}
