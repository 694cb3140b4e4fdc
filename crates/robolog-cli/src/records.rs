//! `robolog get attachment|metadata` and `robolog add attachment|metadata`: a log's extra
//! records, read out or added (by rewriting the log through a [`Job`] into its own path).

use std::io::Write;
use std::path::Path;
use std::time::SystemTime;

use robolog::{Attachment, ConvertOptions, Format, Metadata, Order};

use crate::cli::{
    AddAttachmentArgs, AddCommand, AddMetadataArgs, CompressionArg, GetAttachmentArgs, GetCommand,
    GetMetadataArgs, WriteSettings,
};
use crate::convert::{Extra, Job, writer_options};
use crate::failure::{Failure, Outcome, is_stdin};
use crate::input::{self, Input};
use crate::output::Target;

pub(crate) fn run_get(command: &GetCommand, out: &mut dyn Write) -> Result<Outcome, Failure> {
    match command {
        GetCommand::Attachment(args) => get_attachment(args, out),
        GetCommand::Metadata(args) => get_metadata(args, out),
    }
}

pub(crate) fn run_add(command: &AddCommand, out: &mut dyn Write) -> Result<Outcome, Failure> {
    match command {
        AddCommand::Attachment(args) => add_attachment(args, out),
        AddCommand::Metadata(args) => add_metadata(args, out),
    }
}

fn get_attachment(args: &GetAttachmentArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let file = &args.file;
    let log = input::open_log(file)?;
    let summary = log.summary().map_err(|e| Failure::log(e, file))?;
    let attachments = log.attachments().map_err(|e| Failure::log(e, file))?;
    // The summary lists the same attachments in the same order, with their offsets.
    let offsets: Vec<Option<u64>> = if summary.attachments.len() == attachments.len() {
        summary.attachments.iter().map(|a| Some(a.offset)).collect()
    } else {
        vec![None; attachments.len()]
    };
    let found: Vec<(&Attachment, Option<u64>)> = attachments
        .iter()
        .zip(offsets)
        .filter(|(a, offset)| {
            a.name == args.name && args.offset.is_none_or(|want| *offset == Some(want))
        })
        .collect();
    let attachment = match &found[..] {
        [(one, _)] => *one,
        [] => {
            return Err(Failure::about(
                match args.offset {
                    Some(offset) => {
                        format!("no attachment named {:?} at offset {offset}", args.name)
                    }
                    None => format!("no attachment named {:?}", args.name),
                },
                file,
                None,
            ));
        }
        several => {
            let offsets: Vec<String> = several
                .iter()
                .map(|(_, o)| o.map_or_else(|| "?".to_owned(), |o| o.to_string()))
                .collect();
            return Err(Failure::about(
                format!(
                    "{} attachments are named {:?}: pick one with --offset ({})",
                    several.len(),
                    args.name,
                    offsets.join(", ")
                ),
                file,
                None,
            ));
        }
    };
    match &args.output {
        Some(path) if !is_stdin(path) => write_file(path, &attachment.data)?,
        _ => out.write_all(&attachment.data)?,
    }
    Ok(Outcome::Ok)
}

/// Writes `data` to `path` under a temporary name beside it, renamed into place when complete.
fn write_file(path: &Path, data: &[u8]) -> Result<(), Failure> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut temporary = tempfile::Builder::new()
        .prefix(".robolog-")
        .suffix(".tmp")
        .tempfile_in(folder)
        .map_err(|e| Failure::io(e, path))?;
    temporary
        .write_all(data)
        .and_then(|()| temporary.as_file().sync_all())
        .map_err(|e| Failure::io(e, path))?;
    temporary
        .persist(path)
        .map_err(|e| Failure::io(e.error, path))?;
    Ok(())
}

fn get_metadata(args: &GetMetadataArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let file = &args.file;
    let log = input::open_log(file)?;
    let records = log.metadata().map_err(|e| Failure::log(e, file))?;
    let mut found = 0;
    for record in records.iter().filter(|m| m.name == args.name) {
        serde_json::to_writer(&mut *out, &record.entries).map_err(std::io::Error::from)?;
        writeln!(out)?;
        found += 1;
    }
    if found == 0 {
        return Err(Failure::about(
            format!("no metadata record named {:?}", args.name),
            file,
            None,
        ));
    }
    Ok(Outcome::Ok)
}

fn add_attachment(args: &AddAttachmentArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let source = &args.file_to_attach;
    let data = std::fs::read(source).map_err(|e| Failure::io(e, source))?;
    let name = match &args.name {
        Some(name) => name.clone(),
        None => source
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| Failure::about("name the attachment with --name", source, None))?,
    };
    let create_time_ns = match args.create_time {
        Some(t) => t,
        None => std::fs::metadata(source)
            .and_then(|m| m.modified())
            .map_or(0, ns_since_epoch),
    };
    let attachment = Attachment {
        name,
        media_type: args.media_type.clone(),
        log_time_ns: args
            .log_time
            .unwrap_or_else(|| ns_since_epoch(SystemTime::now())),
        create_time_ns,
        data: data.into(),
    };
    add(
        &args.file,
        &[Format::Mcap],
        "attachments (MCAP files do)",
        Extra::Attachment(attachment),
        out,
    )
}

fn add_metadata(args: &AddMetadataArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let metadata = Metadata {
        name: args.name.clone(),
        entries: args.key.iter().cloned().collect(),
    };
    add(
        &args.file,
        &[Format::Mcap, Format::Bddf],
        "metadata records (MCAP files and BDDF annotations do)",
        Extra::Metadata(metadata),
        out,
    )
}

fn ns_since_epoch(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Rewrites `file` into its own path with `extra` added, when its format can hold it.
fn add(
    file: &Path,
    formats: &[Format],
    what: &str,
    extra: Extra,
    out: &mut dyn Write,
) -> Result<Outcome, Failure> {
    if is_stdin(file) {
        return Err(Failure::about(
            "add rewrites a file in place: name the file",
            file,
            None,
        ));
    }
    let log = input::open_log(file)?;
    let format = log.format();
    if !formats.contains(&format) {
        return Err(Failure::about(
            format!("{format} holds no {what}"),
            file,
            None,
        ));
    }
    let target = Target::check(file, format)?;
    // The log keeps its chunk compression when all its chunks share one.
    let mut settings = WriteSettings::default();
    if let Ok(summary) = log.summary()
        && let Some(chunks) = summary.chunks
        && let [only] = &chunks.compression[..]
    {
        settings.compression = match only.compression.as_str() {
            "none" => Some(CompressionArg::None),
            "lz4" => Some(CompressionArg::Lz4),
            "zstd" => Some(CompressionArg::Zstd),
            "bz2" => Some(CompressionArg::Bz2),
            _ => None,
        };
    }
    let options = writer_options(&settings, format)?;
    Job {
        inputs: vec![(file.to_owned(), Input::Log(log))],
        target,
        format,
        options,
        convert: ConvertOptions::new().order(Order::File),
        verb: "adding",
        extras: vec![extra],
    }
    .run(out)
}
