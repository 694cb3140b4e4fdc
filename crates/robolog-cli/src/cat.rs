//! `robolog cat`: messages as lines of text or JSON, from a file or standard input.

use std::collections::HashSet;
use std::io::{IsTerminal, Read, Write};
use std::path::Path;

use base64::Engine as _;
use robolog::{Decoded, Decoder, Filter, Message, Severity, TopicMatcher};

use crate::cli::CatArgs;
use crate::failure::{Failure, Outcome, is_stdin};
use crate::progress::Bar;
use crate::selection::{warn, warn_problems, warn_unmatched};
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
    };
    let outcome = if is_stdin(&args.file) {
        cat_stream(args, &filter, &mut printer, std::io::stdin().lock())?
    } else {
        cat_file(args, filter, &mut printer)?
    };
    printer.out.flush()?;
    Ok(outcome)
}

fn cat_file(args: &CatArgs, filter: Filter, printer: &mut Printer<'_>) -> Result<Outcome, Failure> {
    let file = &args.file;
    let log = robolog::open(file).map_err(|e| Failure::open(e, file))?;
    warn_problems(log.problems(), file);
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
    for message in query.iter().map_err(|e| Failure::log(e, file))? {
        if args.limit.is_some_and(|limit| printed >= limit) {
            break;
        }
        let message = message.map_err(|e| Failure::log(e, file))?;
        printer.print(&message, file)?;
        printed += 1;
        if printed.is_multiple_of(PROGRESS_EVERY) {
            bar.set(printed);
        }
    }
    Ok(Outcome::Ok)
}

fn cat_stream(
    args: &CatArgs,
    filter: &Filter,
    printer: &mut Printer<'_>,
    input: impl Read,
) -> Result<Outcome, Failure> {
    let file = &args.file;
    let matcher: Option<TopicMatcher> =
        filter.topic_matcher().map_err(|e| Failure::log(e, file))?;
    let mut stream = robolog::open_reader(input).map_err(|e| Failure::log(e, file))?;
    let mut printed = 0u64;
    if args.limit != Some(0) {
        for message in &mut stream {
            let message = message.map_err(|e| Failure::log(e, file))?;
            if !filter.contains_time(message.log_time_ns)
                || matcher
                    .as_ref()
                    .is_some_and(|m| !m.matches(&message.channel.topic))
            {
                continue;
            }
            printer.print(&message, file)?;
            printed += 1;
            if args.limit.is_some_and(|limit| printed >= limit) {
                break;
            }
        }
    }
    // A bag stream stops cleanly at damage and says so here.
    let problems = stream.problems();
    warn_problems(&problems, file);
    match problems.iter().find(|p| p.severity == Severity::Error) {
        Some(problem) => Err(Failure::about(
            format!("the input is damaged: {}", problem.message),
            file,
            problem.offset,
        )),
        None => Ok(Outcome::Ok),
    }
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
}

impl Printer<'_> {
    fn print(&mut self, message: &Message, file: &Path) -> Result<(), Failure> {
        let decoded = match &mut self.decoder {
            Some(decoder) => Some(decoder.decode(message).map_err(|e| {
                let what = match e {
                    e @ robolog::DecodeError::NotDecodable { .. } => not_decodable(e),
                    e => e.to_string(),
                };
                Failure::about(what, file, None)
            })?),
            None => None,
        };
        if let Some(remark) = decoded.as_ref().and_then(Decoded::warning)
            && self.warned.insert(message.channel.id)
        {
            warn(&format!(
                "{}: {}: the message at log time {} decoded, but {remark}; the definition may \
                 not match the data (the topic's other messages are not reported)",
                crate::failure::display_path(file),
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
        Ok(())
    }
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
