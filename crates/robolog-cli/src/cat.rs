//! `robolog cat`: messages as lines of text or JSON, from a file or standard input. Damage is
//! reported and read past; a message that cannot be decoded is reported and skipped.

use std::collections::{BTreeSet, HashSet};
use std::io::{IsTerminal, Write};
use std::path::Path;

use base64::Engine as _;
use robolog::{Decoded, Decoder, Filter, Log, LogStream, Message, TopicMatcher};

use crate::cli::CatArgs;
use crate::failure::{Failure, Outcome, display_path};
use crate::input::{self, Input, Pipe};
use crate::progress::Bar;
use crate::report::{report_error, report_problems, warn, warn_unmatched};
use crate::time::format_utc;

/// Messages between progress updates.
const PROGRESS_EVERY: u64 = 1024;

pub(crate) fn run(args: &CatArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let filter = args.selection.filter()?;
    let mut printer = Printer {
        out,
        json: args.json,
        decoder: args.decode.then(Decoder::new),
        topic_width: 0,
        type_width: 0,
        warned: HashSet::new(),
        undecodable: 0,
        refused: BTreeSet::new(),
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

struct Printer<'o> {
    out: &'o mut dyn Write,
    json: bool,
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
        if self.json {
            write_json_line(self.out, message, decoded.as_ref())?;
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
                self.out.write_all(b"  ")?;
                decoded.write_json(&mut *self.out)?;
            }
            self.out.write_all(b"\n")?;
        }
        Ok(true)
    }
}

/// A message that could not be decoded: one error line, and `cat` goes on.
fn report_decode_error(what: &str, file: &Path) {
    let _ = writeln!(std::io::stderr(), "error: {what} ({})", display_path(file));
}

/// One JSON Lines record. Written field by field so that a decoded message is streamed into
/// the line as the decoder renders it, without parsing it again.
fn write_json_line(
    out: &mut dyn Write,
    message: &Message,
    decoded: Option<&Decoded<'_>>,
) -> std::io::Result<()> {
    let channel = &message.channel;
    out.write_all(b"{\"topic\":")?;
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
