//! `robolog convert` and `robolog merge` (and `filter`, which shares their [`Job`]): writing
//! logs through the facade's writers.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::error::ErrorKind;
use robolog::migrate::{Migration, RosVersion};
use robolog::{
    Compression, CompressionMode, ConvertOptions, ConvertReport, Finished, Format, OutputSettings,
    SettingsError, Storage, WriterOptions,
};

use crate::cli::{
    CompressionArg, CompressionModeArg, ConvertArgs, FormatArg, MergeArgs, MigrateArg,
    ReadSettings, StorageArg, WriteSettings,
};
use crate::failure::{Failure, Outcome, display_path};
use crate::input::{self, Input};
use crate::output::Target;
use crate::progress::Bar;
use crate::report::{report_problems, warn, warn_unmatched};
use crate::size::human_bytes;

pub(crate) fn run_convert(args: &ConvertArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let filter = args.selection.filter()?;
    let format = output_format(&args.write, &args.output, None)?;
    let target = Target::check(&args.output, format)?;
    let options = writer_options(&args.write, format)?;
    // Open the input first: a missing input must not leave anything behind.
    let input = input::open(&args.input)?;
    let job = Job {
        inputs: vec![(args.input.clone(), input)],
        target,
        format,
        options,
        convert: ConvertOptions::new()
            .filter(filter)
            .migration(migration(&args.read, &args.write)),
        verb: "converting",
        extras: Vec::new(),
    };
    job.run(out)
}

pub(crate) fn run_merge(args: &MergeArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let filter = args.selection.filter()?;
    let format = output_format(&args.write, &args.output, None)?;
    let target = Target::check(&args.output, format)?;
    let options = writer_options(&args.write, format)?;
    let inputs = args
        .inputs
        .iter()
        .map(|path| Ok((path.clone(), Input::Log(input::open_log(path)?))))
        .collect::<Result<Vec<_>, Failure>>()?;
    let job = Job {
        inputs,
        target,
        format,
        options,
        convert: ConvertOptions::new()
            .filter(filter)
            .migration(migration(&args.read, &args.write)),
        verb: "merging",
        extras: Vec::new(),
    };
    job.run(out)
}

/// The ROS 1 <-> ROS 2 migration `--migrate`, `--distro` and `--copy-unmatched-types` ask for.
fn migration(read: &ReadSettings, write: &WriteSettings) -> Migration {
    let migration = match write.migrate {
        None => Migration::auto(),
        Some(MigrateArg::Ros2) => Migration::to(RosVersion::Ros2),
        Some(MigrateArg::Ros1) => Migration::to(RosVersion::Ros1),
        Some(MigrateArg::Off) => Migration::off(),
    };
    let migration = match read.distro {
        Some(distro) => migration.distro(distro),
        None => migration,
    };
    migration.copy_unmatched_types(write.copy_unmatched_types)
}

/// One output written from one or more inputs: convert, merge, filter and its presets.
pub(crate) struct Job<'a> {
    /// Each input with the path it was given as.
    pub(crate) inputs: Vec<(PathBuf, Input)>,
    pub(crate) target: Target,
    pub(crate) format: Format,
    pub(crate) options: WriterOptions,
    pub(crate) convert: ConvertOptions<'a>,
    /// For the progress bar: `converting`, `merging`, `filtering`.
    pub(crate) verb: &'static str,
    /// Written after what the inputs hold (`add`).
    pub(crate) extras: Vec<Extra>,
}

/// An attachment or a metadata record to add to an output.
pub(crate) enum Extra {
    Attachment(robolog::Attachment),
    Metadata(robolog::Metadata),
}

impl Job<'_> {
    /// Writes the output, reports what was written (on standard error when the output is
    /// standard output) and what damage was read past (exit 1).
    pub(crate) fn run(self, out: &mut dyn Write) -> Result<Outcome, Failure> {
        let Job {
            inputs,
            target,
            format,
            options,
            convert,
            verb,
            extras,
        } = self;
        let (output, spool) = target.open(format)?.split();
        let mut writer = robolog::create_writer(output, options)
            .map_err(|e| Failure::create(e, target.path()))?;
        // A BDDF file's annotations come before its first message.
        if format == Format::Bddf {
            write_extras(&extras, &mut *writer, format, &target)?;
        }
        let bar = Bar::messages(verb, None);
        let progress = convert.keep_going(true).progress(|p| {
            if let Some(total) = p.total_messages {
                bar.set_total(total);
            }
            bar.set(p.messages);
        });
        let paths: Vec<PathBuf> = inputs.iter().map(|(p, _)| p.clone()).collect();
        // A merge says each input's own problems by name; one input's are in the report.
        let opening_problems: Vec<(PathBuf, Vec<robolog::Problem>)> = match &inputs[..] {
            [_] => Vec::new(),
            many => many
                .iter()
                .filter_map(|(path, input)| match input {
                    Input::Log(log) => Some((path.clone(), log.problems().to_vec())),
                    Input::Stream(_) => None,
                })
                .collect(),
        };
        let mut inputs = inputs;
        let report = if let [(path, Input::Stream(_))] = &inputs[..] {
            let path = path.clone();
            let Some((_, Input::Stream(mut stream))) = inputs.pop() else {
                return Err(Failure::msg("internal: the stream input went missing"));
            };
            robolog::convert_stream(&mut *stream, &mut *writer, progress)
                .map_err(|e| Failure::log(e, &path))?
        } else if let [(path, Input::Log(log))] = &inputs[..] {
            robolog::convert(log, &mut *writer, progress).map_err(|e| Failure::log(e, path))?
        } else {
            let mut logs = Vec::new();
            for (path, input) in &inputs {
                match input {
                    Input::Log(log) => logs.push(log),
                    Input::Stream(_) => {
                        return Err(Failure::about(
                            "a merge reads its inputs with their indexes, not as streams",
                            path,
                            None,
                        ));
                    }
                }
            }
            robolog::merge(&logs, &mut *writer, progress).map_err(|e| input_error(e, &paths))?
        };
        if format != Format::Bddf {
            write_extras(&extras, &mut *writer, format, &target)?;
        }
        let finished = writer
            .finish()
            .map_err(|e| Failure::create(e, target.path()))?;
        target.complete(spool)?;
        bar.finish();
        let mut stderr = std::io::stderr();
        let report_to: &mut dyn Write = if target.is_stdout() { &mut stderr } else { out };
        write_report(&report, &finished, format, &target, report_to)?;
        for warning in &finished.warnings {
            warn(warning);
        }
        for extra in &extras {
            match extra {
                Extra::Attachment(a) => writeln!(report_to, "added attachment {:?}", a.name)?,
                Extra::Metadata(m) => writeln!(report_to, "added metadata record {:?}", m.name)?,
            }
        }
        let mut damaged = false;
        if let [only] = &paths[..] {
            damaged |= report_problems(&report.input_problems, only);
        }
        for (path, problems) in &opening_problems {
            damaged |= report_problems(problems, path);
        }
        for problem in &report.damage {
            let path = paths
                .get(problem.input)
                .map_or(Path::new("-"), PathBuf::as_path);
            damaged |= report_problems(std::slice::from_ref(&problem.problem), path);
        }
        let unmatched_in = match &paths[..] {
            [only] => only.as_path(),
            _ => Path::new("any input"),
        };
        warn_unmatched(&report.unmatched_topics, unmatched_in);
        if report.messages == 0 {
            warn("no message was written");
        }
        Ok(if damaged {
            Outcome::Problems
        } else {
            Outcome::Ok
        })
    }
}

/// Writes what `add` adds; an error when the writer cannot hold it.
fn write_extras(
    extras: &[Extra],
    writer: &mut dyn robolog::LogWriter,
    format: Format,
    target: &Target,
) -> Result<(), Failure> {
    for extra in extras {
        let (written, what) = match extra {
            Extra::Attachment(a) => (writer.write_attachment(a), "an attachment"),
            Extra::Metadata(m) => (writer.write_metadata(m), "a metadata record"),
        };
        if !written.map_err(|e| Failure::create(e, target.path()))? {
            return Err(Failure::about(
                format!("{format} cannot hold {what}"),
                target.path(),
                None,
            ));
        }
    }
    Ok(())
}

/// The output format: `--format`, else the output's extension, else `default` (the input's,
/// for commands that rewrite one log); a usage error when none says.
pub(crate) fn output_format(
    settings: &WriteSettings,
    output: &Path,
    default: Option<Format>,
) -> Result<Format, Failure> {
    let named = match settings.format {
        Some(FormatArg::Mcap) => Some(Format::Mcap),
        Some(FormatArg::Bag) => Some(Format::Bag),
        Some(FormatArg::Bddf) => Some(Format::Bddf),
        Some(FormatArg::Rosbag2) => Some(Format::Rosbag2),
        None if output.is_dir() => Some(Format::Rosbag2),
        None => Format::from_path(output),
    };
    named.or(default).ok_or_else(|| {
        Failure::usage(
            ErrorKind::ValueValidation,
            format!(
                "cannot tell the output format from {:?}: name it .mcap, .bag or .bddf, or pass --format",
                output.display().to_string()
            ),
        )
    })
}

/// The writer settings for `format`: `--compression` and `--chunk-size` where that format has
/// them, `--storage` and `--compression-mode` for ROS 2 bags; the facade's rules
/// ([`OutputSettings`]), so that the Python package refuses what the CLI refuses.
pub(crate) fn writer_options(
    settings: &WriteSettings,
    format: Format,
) -> Result<WriterOptions, Failure> {
    let mut output = OutputSettings::new().format(format);
    if let Some(compression) = settings.compression {
        output = output.compression(match compression {
            CompressionArg::None => Compression::None,
            CompressionArg::Lz4 => Compression::Lz4,
            CompressionArg::Zstd => Compression::Zstd,
            CompressionArg::Bz2 => Compression::Bz2,
        });
    }
    if let Some(size) = settings.chunk_size {
        output = output.chunk_size(size);
    }
    if let Some(storage) = settings.storage {
        output = output.storage(match storage {
            StorageArg::Sqlite3 => Storage::Sqlite3,
            StorageArg::Mcap => Storage::Mcap,
        });
    }
    if let Some(mode) = settings.compression_mode {
        output = output.compression_mode(match mode {
            CompressionModeArg::File => CompressionMode::File,
            CompressionModeArg::Message => CompressionMode::Message,
        });
    }
    // The format is named, so the path plays no part.
    output.writer_options(Path::new("")).map_err(|e| match e {
        SettingsError::Conflict(what) => Failure::usage(ErrorKind::ArgumentConflict, what),
        other => Failure::msg(other),
    })
}

fn write_report(
    report: &ConvertReport,
    finished: &Finished,
    format: Format,
    target: &Target,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    // Copied chunks are not decoded: the payload of their messages is not counted.
    let payload = match report.chunks_copied {
        0 => format!("{} of payload", human_bytes(report.bytes)),
        1 => "1 chunk copied whole".to_owned(),
        n => format!("{n} chunks copied whole"),
    };
    writeln!(
        out,
        "wrote {} ({format}, {}): {} messages ({payload}) on {} channel{}",
        target.display(),
        human_bytes(finished.bytes),
        report.messages,
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
        } else if written > 0 && what == "metadata records" && format == Format::Bddf {
            // BDDF has one set of file annotations; each record's pairs go into it.
            writeln!(out, "{what}: {written} written, as the file's annotations")?;
        } else if written > 0 {
            writeln!(out, "{what}: {written} written")?;
        }
    }
    for channel in &report.skipped_channels {
        writeln!(out, "skipped channel without messages: {channel}")?;
    }
    out.flush()
}

/// A merge error, with the input it comes from.
fn input_error(error: robolog::Error, paths: &[PathBuf]) -> Failure {
    match error.input().and_then(|i| paths.get(i)) {
        Some(path) => Failure::log(error, path),
        None => match paths {
            [only] => Failure::log(error, only),
            many => {
                // An error of the merge as a whole: every input is named.
                let offset = error.offset();
                let names: Vec<String> = many.iter().map(|p| display_path(p)).collect();
                Failure::at(error, &names.join(", "), offset)
            }
        },
    }
}
