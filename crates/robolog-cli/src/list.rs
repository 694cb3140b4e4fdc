//! `robolog list channels|schemas|chunks|attachments|metadata` and `robolog du`: a log's parts
//! from its index, as tables or JSON.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use robolog::{Format, Log, Order};
use serde::Serialize;

use crate::cli::{ListArgs, ListCommand};
use crate::failure::{Failure, Outcome, display_path};
use crate::input;
use crate::progress::Bar;
use crate::report::report_problems;
use crate::size::human_bytes;
use crate::table::Table;
use crate::time::format_utc;

/// One listing: writes what it lists of a log.
type Lister = fn(&Log, &ListArgs, &mut dyn Write) -> Result<(), Failure>;

pub(crate) fn run(command: &ListCommand, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let (args, list): (&ListArgs, Lister) = match command {
        ListCommand::Channels(args) => (args, channels),
        ListCommand::Schemas(args) => (args, schemas),
        ListCommand::Chunks(args) => (args, chunks),
        ListCommand::Attachments(args) => (args, attachments),
        ListCommand::Metadata(args) => (args, metadata),
    };
    let log = input::open_log(&args.file)?;
    let damaged = report_problems(log.problems(), &args.file);
    list(&log, args, out)?;
    Ok(if damaged {
        Outcome::Problems
    } else {
        Outcome::Ok
    })
}

fn write_json(out: &mut dyn Write, value: &impl Serialize) -> Result<(), Failure> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(())
}

/// A format's name for a sentence ("a BDDF file", "a ROS 2 bag").
fn a_log_of(format: Format) -> &'static str {
    match format {
        Format::Mcap => "an MCAP file",
        Format::Bag => "a ROS bag",
        Format::Bddf => "a BDDF file",
        Format::Rosbag2 => "a ROS 2 bag",
    }
}

#[derive(Serialize)]
struct ChannelRow<'a> {
    id: u32,
    topic: &'a str,
    schema_id: Option<u32>,
    schema_name: Option<&'a str>,
    message_encoding: &'a str,
    message_count: u64,
    metadata: &'a BTreeMap<String, String>,
}

fn channels(log: &Log, args: &ListArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let summary = log.summary().map_err(|e| Failure::log(e, &args.file))?;
    let rows: Vec<ChannelRow<'_>> = summary
        .channels
        .iter()
        .map(|c| ChannelRow {
            id: c.channel.id,
            topic: &c.channel.topic,
            schema_id: c.channel.schema.as_ref().map(|s| s.id),
            schema_name: c.channel.schema.as_ref().map(|s| s.name.as_str()),
            message_encoding: &c.channel.message_encoding,
            message_count: c.message_count,
            metadata: &c.channel.metadata,
        })
        .collect();
    if args.json {
        return write_json(out, &rows);
    }
    let mut table = Table::new([
        "id", "topic", "schema", "type", "encoding", "messages", "metadata",
    ]);
    table.align_right([0, 2, 5]);
    for row in &rows {
        table.row([
            row.id.to_string(),
            row.topic.to_owned(),
            row.schema_id
                .map_or_else(|| "-".to_owned(), |id| id.to_string()),
            row.schema_name.unwrap_or("-").to_owned(),
            row.message_encoding.to_owned(),
            row.message_count.to_string(),
            row.metadata
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" "),
        ]);
    }
    table.write(out, "")?;
    Ok(())
}

#[derive(Serialize)]
struct SchemaRow<'a> {
    id: u32,
    name: &'a str,
    encoding: &'a str,
    size: u64,
    topics: Vec<&'a str>,
}

fn schemas(log: &Log, args: &ListArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let mut by_id: BTreeMap<u32, SchemaRow<'_>> = BTreeMap::new();
    for channel in log.channels() {
        let Some(schema) = &channel.schema else {
            continue;
        };
        by_id
            .entry(schema.id)
            .or_insert_with(|| SchemaRow {
                id: schema.id,
                name: &schema.name,
                encoding: &schema.encoding,
                size: schema.data.len() as u64,
                topics: Vec::new(),
            })
            .topics
            .push(&channel.topic);
    }
    let rows: Vec<SchemaRow<'_>> = by_id.into_values().collect();
    if args.json {
        return write_json(out, &rows);
    }
    let mut table = Table::new(["id", "name", "encoding", "size", "topics"]);
    table.align_right([0, 3]);
    for row in &rows {
        table.row([
            row.id.to_string(),
            row.name.to_owned(),
            row.encoding.to_owned(),
            human_bytes(row.size),
            row.topics.join(" "),
        ]);
    }
    table.write(out, "")?;
    Ok(())
}

fn chunks(log: &Log, args: &ListArgs, out: &mut dyn Write) -> Result<(), Failure> {
    let chunks = log.chunks().map_err(|e| Failure::log(e, &args.file))?;
    let chunked = match log.format() {
        Format::Mcap => true,
        Format::Bag => log.summary().is_ok_and(|s| s.chunks.is_some()),
        _ => false,
    };
    if !chunked {
        return Err(Failure::about(
            format!(
                "{} has no chunks (MCAP files and 2.0 bags have them)",
                a_log_of(log.format())
            ),
            &args.file,
            None,
        ));
    }
    if args.json {
        return write_json(out, &chunks);
    }
    let mut table = Table::new([
        "offset",
        "start",
        "end",
        "compression",
        "stored",
        "data",
        "messages",
    ]);
    table.align_right([0, 4, 5, 6]);
    for c in &chunks {
        table.row([
            c.offset.to_string(),
            format_utc(c.start_ns),
            format_utc(c.end_ns),
            c.compression.clone(),
            c.compressed_bytes.to_string(),
            c.uncompressed_bytes.to_string(),
            c.message_count
                .map_or_else(|| "-".to_owned(), |n| n.to_string()),
        ]);
    }
    table.write(out, "")?;
    Ok(())
}

fn attachments(log: &Log, args: &ListArgs, out: &mut dyn Write) -> Result<(), Failure> {
    if log.format() != Format::Mcap {
        return Err(Failure::about(
            format!(
                "{} holds no attachments (MCAP files do)",
                a_log_of(log.format())
            ),
            &args.file,
            None,
        ));
    }
    let summary = log.summary().map_err(|e| Failure::log(e, &args.file))?;
    if args.json {
        return write_json(out, &summary.attachments);
    }
    let mut table = Table::new([
        "name",
        "media type",
        "log time",
        "create time",
        "size",
        "offset",
    ]);
    table.align_right([4, 5]);
    for a in &summary.attachments {
        table.row([
            a.name.clone(),
            a.media_type.clone(),
            format_utc(a.log_time_ns),
            format_utc(a.create_time_ns),
            a.size.to_string(),
            a.offset.to_string(),
        ]);
    }
    table.write(out, "")?;
    Ok(())
}

fn metadata(log: &Log, args: &ListArgs, out: &mut dyn Write) -> Result<(), Failure> {
    if !matches!(log.format(), Format::Mcap | Format::Bddf) {
        return Err(Failure::about(
            format!(
                "{} holds no metadata records (MCAP files and BDDF annotations do)",
                a_log_of(log.format())
            ),
            &args.file,
            None,
        ));
    }
    let records = log.metadata().map_err(|e| Failure::log(e, &args.file))?;
    if args.json {
        return write_json(out, &records);
    }
    for record in &records {
        writeln!(out, "{}:", record.name)?;
        write_entries(out, &record.entries, "  ")?;
    }
    Ok(())
}

/// Writes `key = value` lines; a value of several lines (a YAML document) goes below its key,
/// indented.
pub(crate) fn write_entries(
    out: &mut dyn Write,
    entries: &BTreeMap<String, String>,
    indent: &str,
) -> std::io::Result<()> {
    for (key, value) in entries {
        if value.contains('\n') {
            writeln!(out, "{indent}{key} =")?;
            for line in value.lines() {
                writeln!(out, "{indent}    {line}")?;
            }
        } else {
            writeln!(out, "{indent}{key} = {value}")?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------- du

#[derive(Default, Serialize)]
struct Usage {
    file_size: u64,
    /// Top-level records by kind (MCAP).
    records: Vec<Kind>,
    /// Message payload by topic.
    topics: Vec<TopicUsage>,
    /// Chunks by compression.
    chunks: Vec<robolog::CompressionSummary>,
}

#[derive(Serialize)]
struct Kind {
    kind: &'static str,
    count: u64,
    bytes: u64,
}

#[derive(Serialize)]
struct TopicUsage {
    topic: String,
    messages: u64,
    bytes: u64,
}

pub(crate) fn run_du(args: &ListArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let file = &args.file;
    // A file is mapped, a URL read by position (the chunks as the messages need them), a pipe
    // read whole.
    let log = input::open_log(file)?;
    let _bar = if file.to_str().is_some_and(robolog::is_url) {
        Bar::fetching("reading", log.file_size())
    } else {
        Bar::hidden()
    };
    let mut damaged = report_problems(log.problems(), file);
    let summary = log.summary().map_err(|e| Failure::log(e, file))?;
    let mut usage = Usage {
        file_size: summary.file_size,
        chunks: summary
            .chunks
            .as_ref()
            .map(|c| c.compression.clone())
            .unwrap_or_default(),
        ..Usage::default()
    };
    if log.format() == Format::Mcap {
        usage.records = mcap_records(log.input()).map_err(|e| Failure::io(e, file))?;
    }
    let mut by_channel: BTreeMap<u32, (Arc<robolog::Channel>, u64, u64)> = BTreeMap::new();
    let messages = log
        .messages()
        .order(Order::File)
        .iter()
        .map_err(|e| Failure::log(e, file))?;
    for message in messages {
        match message {
            Ok(m) => {
                let entry = by_channel
                    .entry(m.channel.id)
                    .or_insert_with(|| (Arc::clone(&m.channel), 0, 0));
                entry.1 += 1;
                entry.2 += m.data.len() as u64;
            }
            Err(e) => {
                crate::report::report_error(&e, file);
                damaged = true;
            }
        }
    }
    let mut by_topic: BTreeMap<String, TopicUsage> = BTreeMap::new();
    for (channel, messages, bytes) in by_channel.into_values() {
        let entry = by_topic
            .entry(channel.topic.clone())
            .or_insert_with(|| TopicUsage {
                topic: channel.topic.clone(),
                messages: 0,
                bytes: 0,
            });
        entry.messages += messages;
        entry.bytes += bytes;
    }
    usage.topics = by_topic.into_values().collect();
    usage
        .topics
        .sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.topic.cmp(&b.topic)));
    if args.json {
        write_json(out, &usage)?;
    } else {
        write_usage(&usage, &display_path(file), out)?;
    }
    Ok(if damaged {
        Outcome::Problems
    } else {
        Outcome::Ok
    })
}

/// The share of `part` in `whole`, as a percentage with one decimal.
fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".to_owned();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

fn write_usage(usage: &Usage, file: &str, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{file}: {}", human_bytes(usage.file_size))?;
    if !usage.records.is_empty() {
        writeln!(out, "records:")?;
        let mut table = Table::new(["kind", "count", "bytes", "share"]);
        table.align_right([1, 2, 3]);
        for kind in &usage.records {
            table.row([
                kind.kind.to_owned(),
                kind.count.to_string(),
                kind.bytes.to_string(),
                percent(kind.bytes, usage.file_size),
            ]);
        }
        table.write(out, "  ")?;
    }
    if !usage.chunks.is_empty() {
        writeln!(out, "chunks:")?;
        let mut table = Table::new(["compression", "chunks", "stored", "data", "ratio"]);
        table.align_right([1, 2, 3, 4]);
        for c in &usage.chunks {
            table.row([
                c.compression.clone(),
                c.chunks.to_string(),
                c.compressed_bytes.to_string(),
                c.uncompressed_bytes.to_string(),
                if c.compressed_bytes == 0 {
                    "-".to_owned()
                } else {
                    format!(
                        "{:.2}",
                        c.uncompressed_bytes as f64 / c.compressed_bytes as f64
                    )
                },
            ]);
        }
        table.write(out, "  ")?;
    }
    let payload: u64 = usage.topics.iter().map(|t| t.bytes).sum();
    writeln!(out, "message data by topic: {}", human_bytes(payload))?;
    let mut table = Table::new(["topic", "messages", "bytes", "share"]);
    table.align_right([1, 2, 3]);
    for t in &usage.topics {
        table.row([
            t.topic.clone(),
            t.messages.to_string(),
            t.bytes.to_string(),
            percent(t.bytes, payload),
        ]);
    }
    table.write(out, "  ")
}

/// The top-level records of an MCAP file by kind, from their opcodes and lengths alone (no
/// record is read): the magic bytes at both ends, and whatever is left after a cut, count as
/// their own kinds.
fn mcap_records(input: &robolog::Input) -> std::io::Result<Vec<Kind>> {
    const MAGIC: u64 = 8;
    const PREFIX: u64 = 9;
    // Over a URL each read is a request: the record headers are read through a window, so
    // that the small records after a chunk (its message indexes) cost none of their own.
    const WINDOW: u64 = 16 << 10;
    let size = input.len();
    let mut kinds: BTreeMap<&'static str, (u64, u64)> = BTreeMap::new();
    let mut add = |kind: &'static str, bytes: u64| {
        let entry = kinds.entry(kind).or_default();
        entry.0 += 1;
        entry.1 += bytes;
    };
    add("magic", MAGIC.min(size));
    let mut pos = MAGIC;
    let (mut window_start, mut window) = (0, robolog::Bytes::new());
    while pos + PREFIX <= size {
        if pos < window_start || pos + PREFIX > window_start + window.len() as u64 {
            window_start = pos;
            window = input.read_up_to(pos, WINDOW)?;
        }
        let at = (pos - window_start) as usize;
        let Some(&[opcode, l0, l1, l2, l3, l4, l5, l6, l7]) = window.get(at..at + PREFIX as usize)
        else {
            break;
        };
        let len = u64::from_le_bytes([l0, l1, l2, l3, l4, l5, l6, l7]);
        let Some(end) = pos
            .checked_add(PREFIX)
            .and_then(|p| p.checked_add(len))
            .filter(|&end| end <= size)
        else {
            break;
        };
        add(robolog::mcap::records::record_name(opcode), end - pos);
        pos = end;
        if opcode == 0x02 {
            break;
        }
    }
    let rest = size.saturating_sub(pos);
    if rest == MAGIC {
        add("magic", rest);
    } else if rest > 0 {
        add("cut or unreadable", rest);
    }
    let mut kinds: Vec<Kind> = kinds
        .into_iter()
        .map(|(kind, (count, bytes))| Kind { kind, count, bytes })
        .collect();
    kinds.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.kind.cmp(b.kind)));
    Ok(kinds)
}
