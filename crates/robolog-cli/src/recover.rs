//! `robolog recover`: a valid copy of a damaged log, and what could not be saved. The output
//! may be in another format: the input is recovered in its own format first, beside the
//! output, then converted.

use std::io::{Read, Write};
use std::path::Path;

use robolog::{ConvertOptions, Format, RecoverReport};

use crate::cli::{RecoverArgs, WriteSettings};
use crate::convert::output_format;
use crate::failure::{Failure, Outcome};
use crate::input::{self, Recoverable};
use crate::output::Target;
use crate::progress::Bar;
use crate::report::report_problems;
use crate::signals;
use crate::size::human_bytes;

pub(crate) fn run(args: &RecoverArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let input = input::recoverable(&args.input)?;
    let input_format = format_of(&input, &args.input)?;
    let settings = WriteSettings {
        format: args.format,
        ..WriteSettings::default()
    };
    let format = output_format(&settings, &args.output, Some(input_format))?;
    let target = Target::check(&args.output, format)?;
    // A remote object streams in while it is recovered: a bar of the bytes fetched.
    let bar = match input.len() {
        Some(len) if args.input.to_str().is_some_and(robolog::is_url) => {
            Bar::fetching("recovering", len)
        }
        _ => Bar::spinner("recovering"),
    };
    let (report, converted) = if format == input_format {
        (recover_to(input, &target, format, &args.input)?, false)
    } else {
        (
            recover_converted(input, &target, format, &args.input)?,
            true,
        )
    };
    bar.finish();
    let mut stderr = std::io::stderr();
    let out: &mut dyn Write = if target.is_stdout() { &mut stderr } else { out };
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &report).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        write_text(&report, &target, format, converted, out)?;
    }
    out.flush()?;
    Ok(if report.lossless {
        Outcome::Ok
    } else {
        Outcome::DataLost
    })
}

/// The input's format, from its first bytes.
fn format_of(input: &Recoverable, path: &Path) -> Result<Format, Failure> {
    match input.head(path)? {
        Some(head) => robolog::sniff(&head).map_err(|e| Failure::open(e, path)),
        None => Ok(Format::Rosbag2),
    }
}

/// Recovers `input` (not a ROS 2 bag) into `output`: a file or a remote object read by
/// position, a pipe as it comes.
fn recover_into(
    input: Recoverable,
    output: robolog::Output,
) -> robolog::Result<(RecoverReport, robolog::Finished)> {
    match input {
        Recoverable::Input(input) => robolog::recover_input(&input, output),
        Recoverable::Pipe(head, rest) => {
            robolog::recover_reader(std::io::Cursor::new(head).chain(rest), output)
        }
        Recoverable::Rosbag2(_) => Err(robolog::Error::Usage(
            "a ROS 2 bag is recovered from its path into a new bag directory".into(),
        )),
    }
}

/// Recovers in the input's own format straight to the target.
fn recover_to(
    input: Recoverable,
    target: &Target,
    format: Format,
    path: &Path,
) -> Result<RecoverReport, Failure> {
    match input {
        Recoverable::Rosbag2(bag) if target.writes_path() => {
            return robolog::recover_file(&bag, target.path()).map_err(|e| match e {
                e @ robolog::Error::Io(_) if bag.exists() => Failure::create(e, target.path()),
                e => Failure::open(e, path),
            });
        }
        Recoverable::Rosbag2(_) => {
            return Err(Failure::about(
                "a ROS 2 bag is recovered into a directory: name one with -o",
                path,
                None,
            ));
        }
        // Reading the input fails as the format's own error (with its offset): a plain I/O
        // error is the output's.
        input if target.writes_path() => {
            return robolog::Output::file(target.path())
                .and_then(|output| recover_into(input, output))
                .map(|(report, _)| report)
                .map_err(|e| match e {
                    e @ robolog::Error::Io(_) => Failure::create(e, target.path()),
                    e => Failure::open(e, path),
                });
        }
        _ => {}
    }
    let (output, spool) = target.open(format)?.split();
    let (report, _) = recover_into(input, output).map_err(|e| Failure::open(e, path))?;
    target.complete(spool)?;
    Ok(report)
}

/// Recovers into a temporary file of the input's format beside the output, then converts that
/// into the output's format.
fn recover_converted(
    input: Recoverable,
    target: &Target,
    format: Format,
    path: &Path,
) -> Result<RecoverReport, Failure> {
    let folder = match target.path().parent() {
        _ if target.is_stdout() => std::env::temp_dir(),
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => std::path::PathBuf::from("."),
    };
    let temp = signals::temporary_file(&folder, ".robolog-recover-").map_err(|e| {
        Failure::about(format!("cannot write the output: {e}"), target.path(), None)
    })?;
    let result = (|| {
        let report = match input {
            Recoverable::Rosbag2(bag) => robolog::recover_file(&bag, &temp),
            input => robolog::Output::file(&temp)
                .and_then(|output| recover_into(input, output))
                .map(|(report, _)| report),
        }
        .map_err(|e| Failure::open(e, path))?;
        let log = robolog::open(&temp).map_err(|e| Failure::open(e, path))?;
        let options = crate::convert::writer_options(&WriteSettings::default(), format)?;
        let (output, spool) = target.open(format)?.split();
        let mut writer = robolog::create_writer(output, options)
            .map_err(|e| Failure::create(e, target.path()))?;
        let converted =
            robolog::convert(&log, &mut *writer, ConvertOptions::new().keep_going(true))
                .map_err(|e| Failure::create(e, target.path()))?;
        let finished = writer
            .finish()
            .map_err(|e| Failure::create(e, target.path()))?;
        target.complete(spool)?;
        report_problems(
            &converted
                .damage
                .iter()
                .map(|d| d.problem.clone())
                .collect::<Vec<_>>(),
            path,
        );
        let mut report = report;
        report.format = format;
        report.output_bytes = finished.bytes;
        Ok(report)
    })();
    signals::forget(&temp);
    let _ = temp.close();
    result
}

fn write_text(
    report: &RecoverReport,
    target: &Target,
    format: Format,
    converted: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let lost = if report.messages_lost_known {
        format!("{} lost", report.messages_lost)
    } else if report.messages_lost > 0 {
        format!("at least {} lost", report.messages_lost)
    } else {
        "an unknown number lost".to_owned()
    };
    writeln!(
        out,
        "wrote {} ({format}, {}): {} messages recovered, {lost}, {} of the input dropped",
        target.display(),
        human_bytes(report.output_bytes),
        report.messages_recovered,
        human_bytes(report.bytes_dropped),
    )?;
    if converted {
        writeln!(out, "converted to {format} after recovery")?;
    }
    let details: Vec<String> = report
        .details
        .iter()
        .filter(|(_, value)| **value > 0)
        .map(|(key, value)| format!("{key} {value}"))
        .collect();
    if !details.is_empty() {
        writeln!(out, "details: {}", details.join(", "))?;
    }
    for problem in &report.problems {
        writeln!(out, "{problem}")?;
    }
    if report.lossless {
        writeln!(out, "nothing was lost")?;
    } else {
        // Messages inside unreadable bytes cannot be counted, so say what is known.
        let bytes = human_bytes(report.bytes_dropped);
        match (report.messages_lost_known, report.messages_lost) {
            (true, 0) => writeln!(out, "DATA LOST: {bytes} of the input could not be saved")?,
            (true, n) => writeln!(
                out,
                "DATA LOST: {n} messages ({bytes} of the input) could not be saved"
            )?,
            (false, 0) => writeln!(
                out,
                "DATA LOST: {bytes} of the input could not be read; how many messages they held is unknown"
            )?,
            (false, n) => writeln!(
                out,
                "DATA LOST: at least {n} messages, and {bytes} of the input that could not be read"
            )?,
        }
    }
    Ok(())
}
