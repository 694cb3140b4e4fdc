//! `robolog info`: what a log holds, from its index.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use robolog::{
    AttachmentSummary, ChannelSummary, Format, IndexUse, Item, LogStream, Problem, Severity,
    Summary, SummaryDocument,
};

use crate::cli::InfoArgs;
use crate::failure::{Failure, Outcome, display_path};
use crate::input::{self, Input, Pipe};
use crate::size::human_bytes;
use crate::table::Table;
use crate::time::{format_duration, format_utc};

pub(crate) fn run(args: &InfoArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let file = &args.file;
    let (summary, problems) = match input::open(file)? {
        Input::Log(log) => (
            log.summary().map_err(|e| Failure::log(e, file))?,
            log.problems().to_vec(),
        ),
        Input::Stream(stream) => stream_summary(*stream),
    };
    // The document the README describes and the golden tests pin; the Python package's
    // `Log.summary()` is the same one.
    let info = SummaryDocument::new(&display_path(file), &summary, &problems);
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &info).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        write_text(&info, out)?;
    }
    out.flush()?;
    // The problems are in the output; damage also makes the exit status say so.
    let errors = problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .count();
    if errors > 0 {
        let _ = writeln!(
            std::io::stderr(),
            "error: the log is damaged: {errors} error{} among its problems ({})",
            if errors == 1 { "" } else { "s" },
            display_path(file)
        );
        return Ok(Outcome::Problems);
    }
    Ok(Outcome::Ok)
}

/// A summary of a log read from a pipe, front to back: counts, times, attachments and metadata
/// (no index, so no chunks).
fn stream_summary(mut stream: LogStream<Pipe>) -> (Summary, Vec<Problem>) {
    let mut counts: BTreeMap<u32, (Arc<robolog::Channel>, u64)> = BTreeMap::new();
    let (mut total, mut start, mut end) = (0u64, None::<u64>, None::<u64>);
    let mut attachments = Vec::new();
    let mut metadata = Vec::new();
    let mut problems = Vec::new();
    loop {
        let item = match stream.next_item() {
            Ok(Some(item)) => item,
            Ok(None) => break,
            Err(e) => {
                problems.push(problem_of(&e));
                // MCAP streams go on past a bad chunk; the others end at damage.
                if stream.format() == Format::Mcap && !e.is_truncation() && problems.len() < 1000 {
                    continue;
                }
                break;
            }
        };
        match item {
            Item::Message(m) => {
                total += 1;
                start = Some(start.map_or(m.log_time_ns, |s| s.min(m.log_time_ns)));
                end = Some(end.map_or(m.log_time_ns, |e| e.max(m.log_time_ns)));
                counts
                    .entry(m.channel.id)
                    .or_insert_with(|| (Arc::clone(&m.channel), 0))
                    .1 += 1;
            }
            Item::Attachment(a) => attachments.push(AttachmentSummary {
                name: a.name,
                media_type: a.media_type,
                log_time_ns: a.log_time_ns,
                create_time_ns: a.create_time_ns,
                size: a.data.len() as u64,
                offset: 0,
            }),
            Item::Metadata(m) => metadata.push(m),
        }
    }
    problems.extend(stream.problems());
    let mut properties = BTreeMap::new();
    if let Some(profile) = stream.profile().filter(|_| stream.format() == Format::Mcap) {
        properties.insert("profile".to_owned(), profile.to_owned());
    }
    let summary = Summary {
        format: stream.format(),
        version: stream.version(),
        properties,
        file_size: stream.bytes_read(),
        message_count: total,
        start_ns: start,
        end_ns: end,
        channels: counts
            .into_values()
            .map(|(channel, message_count)| ChannelSummary {
                channel,
                message_count,
            })
            .collect(),
        chunks: None,
        attachments,
        metadata,
        index: IndexUse::Scan {
            reason: "read from a stream".to_owned(),
        },
    };
    (summary, problems)
}

/// A read error as a problem of the log.
fn problem_of(error: &robolog::Error) -> Problem {
    error.to_problem()
}

fn write_text(info: &SummaryDocument, out: &mut dyn Write) -> std::io::Result<()> {
    let mut lines: Vec<(&str, String)> = vec![
        ("file", info.file.clone()),
        ("format", format!("{} {}", info.format, info.version)),
    ];
    for (key, value) in &info.properties {
        let value = if value.is_empty() { "\"\"" } else { value };
        lines.push((key, value.to_owned()));
    }
    lines.push((
        "size",
        format!("{} ({} bytes)", human_bytes(info.file_size), info.file_size),
    ));
    lines.push(("messages", info.message_count.to_string()));
    if let (Some(start), Some(end), Some(duration)) =
        (info.start_time, info.end_time, info.duration)
    {
        lines.push(("start", format!("{} ({start} ns)", format_utc(start))));
        lines.push(("end", format!("{} ({end} ns)", format_utc(end))));
        lines.push(("duration", format_duration(duration)));
    }
    if let Some(chunks) = &info.chunks {
        let kinds: Vec<String> = chunks
            .by_compression
            .iter()
            .map(|c| format!("{} {}", c.chunks, c.compression))
            .collect();
        let mut text = chunks.count.to_string();
        if chunks.count > 0 {
            text.push_str(&format!(" ({})", kinds.join(", ")));
            text.push_str(&format!(
                ", {} stored for {} of data",
                human_bytes(chunks.compressed_bytes),
                human_bytes(chunks.uncompressed_bytes),
            ));
            if let Some(ratio) = chunks.compression_ratio {
                text.push_str(&format!(", ratio {ratio:.2}"));
            }
        }
        lines.push(("chunks", text));
    }
    lines.push((
        "index",
        match &info.index {
            IndexUse::Index => "used".to_owned(),
            IndexUse::Scan { reason } => format!("none, read by a scan ({reason})"),
        },
    ));
    lines.push(("channels", info.channels.len().to_string()));
    // One column for every value: ten wide, wider when a key needs it (a ROS 2 bag's
    // `sqlite_schema_version`).
    let width = lines
        .iter()
        .map(|(key, _)| key.len() + 2)
        .max()
        .unwrap_or(0)
        .max(10);
    for (key, value) in &lines {
        writeln!(out, "{:<width$}{value}", format!("{key}: "))?;
    }
    if !info.channels.is_empty() {
        let mut table = Table::new(["id", "topic", "type", "encoding", "messages", "rate"]);
        table.align_right([0, 4, 5]);
        for c in &info.channels {
            table.row([
                c.id.to_string(),
                c.topic.to_owned(),
                c.schema_name.as_deref().unwrap_or("-").to_owned(),
                c.message_encoding.to_owned(),
                c.message_count.to_string(),
                c.rate_hz
                    .map_or_else(|| "-".to_owned(), |r| format!("{r:.2} Hz")),
            ]);
        }
        table.write(out, "  ")?;
    }
    if !info.attachments.is_empty() {
        writeln!(out, "attachments: {}", info.attachments.len())?;
        let mut table = Table::new(["name", "media type", "size", "log time"]);
        table.align_right([2]);
        for a in &info.attachments {
            table.row([
                a.name.to_owned(),
                a.media_type.to_owned(),
                human_bytes(a.size),
                format_utc(a.log_time),
            ]);
        }
        table.write(out, "  ")?;
    }
    if !info.metadata.is_empty() {
        writeln!(out, "metadata: {}", info.metadata.len())?;
        for m in &info.metadata {
            writeln!(out, "  {}:", m.name)?;
            crate::list::write_entries(out, &m.entries, "    ")?;
        }
    }
    if !info.problems.is_empty() {
        writeln!(out, "problems: {}", info.problems.len())?;
        for problem in &info.problems {
            writeln!(out, "  {problem}")?;
        }
    }
    Ok(())
}
