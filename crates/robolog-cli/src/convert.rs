//! `robolog convert` and `robolog merge`: writing logs through the facade's writers.

use std::io::Write;
use std::path::Path;

use clap::error::ErrorKind;
use robolog::{ConvertOptions, ConvertReport, Finished, Format, Log, Output, WriterOptions};

use crate::cli::{
    CompressionArg, CompressionModeArg, ConvertArgs, FormatArg, MergeArgs, StorageArg,
    WriteSettings,
};
use crate::failure::{Failure, Outcome, display_path, is_stdin};
use crate::progress::Bar;
use crate::selection::{warn, warn_problems, warn_unmatched};
use crate::size::human_bytes;

pub(crate) fn run_convert(args: &ConvertArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let filter = args.selection.filter()?;
    let options = writer_options(&args.write, &args.output)?;
    let input = &args.input;
    // Open the input first: a missing input must not leave anything behind.
    let log = if is_stdin(input) {
        None
    } else {
        Some(robolog::open(input).map_err(|e| Failure::open(e, input))?)
    };
    let mut writer = create(&args.output, options)?;
    let bar = Bar::messages("converting", None);
    let progress = ConvertOptions::new().filter(filter).progress(|p| {
        if let Some(total) = p.total_messages {
            bar.set_total(total);
        }
        bar.set(p.messages);
    });
    let report = match &log {
        Some(log) => robolog::convert(log, &mut *writer, progress),
        None => robolog::open_reader(std::io::stdin().lock())
            .and_then(|mut stream| robolog::convert_stream(&mut stream, &mut *writer, progress)),
    }
    .map_err(|e| Failure::log(e, input))?;
    finish(writer, &bar, &report, &args.write, &args.output, out)?;
    warn_input(&report, input);
    Ok(Outcome::Ok)
}

pub(crate) fn run_merge(args: &MergeArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let filter = args.selection.filter()?;
    let options = writer_options(&args.write, &args.output)?;
    let logs = args
        .inputs
        .iter()
        .map(|path| robolog::open(path).map_err(|e| Failure::open(e, path)))
        .collect::<Result<Vec<Log>, _>>()?;
    let mut writer = create(&args.output, options)?;
    let bar = Bar::messages("merging", None);
    let progress = ConvertOptions::new().filter(filter).progress(|p| {
        if let Some(total) = p.total_messages {
            bar.set_total(total);
        }
        bar.set(p.messages);
    });
    let inputs: Vec<&Log> = logs.iter().collect();
    let report = robolog::merge(&inputs, &mut *writer, progress).map_err(|e| {
        match &args.inputs[..] {
            [only] => Failure::log(e, only),
            // The facade's error does not say which input it comes from.
            _ => {
                let offset = e.offset();
                Failure::at(e, "one of the inputs", offset)
            }
        }
    })?;
    finish(writer, &bar, &report, &args.write, &args.output, out)?;
    for (path, log) in args.inputs.iter().zip(&logs) {
        warn_problems(log.problems(), path);
    }
    warn_unmatched(&report.unmatched_topics, Path::new("any input"));
    Ok(Outcome::Ok)
}

/// Closes the output (renaming it into place) and prints what was written.
fn finish(
    mut writer: Box<dyn robolog::LogWriter + Send>,
    bar: &Bar,
    report: &ConvertReport,
    settings: &WriteSettings,
    output: &Path,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let finished = writer.finish().map_err(|e| Failure::create(e, output))?;
    bar.finish();
    write_report(report, &finished, format_of(settings, output), output, out)?;
    Ok(())
}

fn create(
    output: &Path,
    options: WriterOptions,
) -> Result<Box<dyn robolog::LogWriter + Send>, Failure> {
    // A ROS 2 bag is a directory, which its writer creates.
    let target = if options.format() == Format::Rosbag2 {
        Output::directory(output)
    } else {
        Output::file(output).map_err(|e| Failure::create(e, output))?
    };
    robolog::create_writer(target, options).map_err(|e| Failure::create(e, output))
}

fn format_of(settings: &WriteSettings, output: &Path) -> Option<Format> {
    match settings.format {
        Some(FormatArg::Mcap) => Some(Format::Mcap),
        Some(FormatArg::Bag) => Some(Format::Bag),
        Some(FormatArg::Bddf) => Some(Format::Bddf),
        Some(FormatArg::Rosbag2) => Some(Format::Rosbag2),
        None if output.is_dir() => Some(Format::Rosbag2),
        None => Format::from_path(output),
    }
}

/// The writer settings for the output: its format (from `--format` or the extension), then
/// `--compression` and `--chunk-size` where that format has them.
pub(crate) fn writer_options(
    settings: &WriteSettings,
    output: &Path,
) -> Result<WriterOptions, Failure> {
    let format = format_of(settings, output).ok_or_else(|| {
        Failure::usage(
            ErrorKind::ValueValidation,
            format!(
                "cannot tell the output format from {:?}: name it .mcap, .bag or .bddf, or pass --format",
                output.display().to_string()
            ),
        )
    })?;
    let options = WriterOptions::default_for(format).map_err(Failure::msg)?;
    let refuse = |what: String| Failure::usage(ErrorKind::ArgumentConflict, what);
    if format != Format::Rosbag2
        && (settings.storage.is_some() || settings.compression_mode.is_some())
    {
        return Err(refuse(
            "--storage and --compression-mode are for ROS 2 bags (--format rosbag2)".into(),
        ));
    }
    Ok(match options {
        WriterOptions::Rosbag2(mut o) => {
            use robolog::mcap::Compression;
            use robolog::rosbag2::{CompressionMode, StorageId};
            let storage = match settings.storage {
                Some(StorageArg::Sqlite3) => StorageId::Sqlite3,
                Some(StorageArg::Mcap) | None => StorageId::Mcap,
            };
            o = o.storage(storage);
            if let Some(mode) = settings.compression_mode {
                o = o.compression(match mode {
                    CompressionModeArg::File => CompressionMode::File,
                    CompressionModeArg::Message => CompressionMode::Message,
                });
            }
            if let Some(compression) = settings.compression {
                if storage != StorageId::Mcap {
                    return Err(refuse(
                        "--compression is MCAP chunk compression; sqlite3 bags use --compression-mode".into(),
                    ));
                }
                o = o.mcap_chunk_compression(match compression {
                    CompressionArg::None => Compression::None,
                    CompressionArg::Lz4 => Compression::Lz4,
                    CompressionArg::Zstd => Compression::Zstd,
                    CompressionArg::Bz2 => {
                        return Err(refuse(
                            "MCAP chunks are compressed with none, lz4 or zstd".into(),
                        ));
                    }
                });
            }
            if settings.chunk_size.is_some() {
                return Err(refuse("ROS 2 bags take no --chunk-size".into()));
            }
            WriterOptions::Rosbag2(o)
        }
        WriterOptions::Mcap(mut o) => {
            use robolog::mcap::Compression;
            if let Some(compression) = settings.compression {
                o.compression = match compression {
                    CompressionArg::None => Compression::None,
                    CompressionArg::Lz4 => Compression::Lz4,
                    CompressionArg::Zstd => Compression::Zstd,
                    CompressionArg::Bz2 => {
                        return Err(refuse(
                            "MCAP chunks are compressed with none, lz4 or zstd, not bz2".into(),
                        ));
                    }
                };
            }
            if let Some(size) = settings.chunk_size {
                o.chunk_size = (size > 0).then_some(size);
            }
            WriterOptions::Mcap(o)
        }
        WriterOptions::Bag(mut o) => {
            use robolog::rosbag::ChunkCompression;
            if let Some(compression) = settings.compression {
                o = o.compression(match compression {
                    CompressionArg::None => ChunkCompression::None,
                    CompressionArg::Lz4 => ChunkCompression::Lz4,
                    CompressionArg::Bz2 => ChunkCompression::Bz2,
                    CompressionArg::Zstd => {
                        return Err(refuse(
                            "bag chunks are compressed with none, lz4 or bz2, not zstd".into(),
                        ));
                    }
                });
            }
            if let Some(size) = settings.chunk_size {
                let size = usize::try_from(size)
                    .map_err(|_| refuse(format!("--chunk-size {size} is too large")))?;
                o = o.chunk_threshold(size);
            }
            WriterOptions::Bag(o)
        }
        WriterOptions::Bddf(o) => {
            if settings
                .compression
                .is_some_and(|c| c != CompressionArg::None)
            {
                return Err(refuse("BDDF files are not compressed".into()));
            }
            if settings.chunk_size.is_some() {
                return Err(refuse("BDDF files have no chunks (--chunk-size)".into()));
            }
            WriterOptions::Bddf(o)
        }
        other => other,
    })
}

fn write_report(
    report: &ConvertReport,
    finished: &Finished,
    format: Option<Format>,
    output: &Path,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let format = format.map_or_else(String::new, |f| format!("{f}, "));
    writeln!(
        out,
        "wrote {} ({}{}): {} messages ({} of payload) on {} channel{}",
        display_path(output),
        format,
        human_bytes(finished.bytes),
        report.messages,
        human_bytes(report.bytes),
        report.channels,
        if report.channels == 1 { "" } else { "s" },
    )?;
    for (what, written, dropped) in [
        (
            "attachments",
            report.attachments,
            report.attachments_dropped,
        ),
        ("metadata records", report.metadata, report.metadata_dropped),
    ] {
        if dropped > 0 {
            writeln!(
                out,
                "{what}: {written} written, {dropped} dropped (the output format cannot hold them)"
            )?;
        } else if written > 0 {
            writeln!(out, "{what}: {written} written")?;
        }
    }
    for channel in &report.skipped_channels {
        writeln!(out, "skipped channel without messages: {channel}")?;
    }
    out.flush()
}

fn warn_input(report: &ConvertReport, input: &Path) {
    warn_problems(&report.input_problems, input);
    warn_unmatched(&report.unmatched_topics, input);
    if report.messages == 0 {
        warn("no message was written");
    }
}
