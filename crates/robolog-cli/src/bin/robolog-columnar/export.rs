//! `robolog export`: one Parquet or Arrow IPC file per topic, through robolog-arrow.

use std::io::Write;
use std::path::Path;

use clap::error::ErrorKind;
use robolog::Log;
use robolog_arrow::{Error, ExportFormat, ExportOptions, ExportReport};

use robolog_cli::cli::{ExportArgs, ExportFormatArg};
use robolog_cli::failure::{Failure, Outcome, display_path};
use robolog_cli::progress::Bar;
use robolog_cli::report::{report_problems, warn, warn_unmatched};
use robolog_cli::size::human_bytes;
use robolog_cli::table::Table;

pub(crate) fn run(args: &ExportArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let Some((out_dir, inputs)) = args.paths.split_last() else {
        return Err(Failure::usage(
            ErrorKind::MissingRequiredArgument,
            "expected IN... OUT_DIR",
        ));
    };
    if inputs.is_empty() {
        return Err(Failure::usage(
            ErrorKind::MissingRequiredArgument,
            "expected at least one input before the output folder (IN... OUT_DIR)",
        ));
    }
    if out_dir.is_file() {
        return Err(Failure::about(
            "the output must be a folder (one file per topic goes into it)",
            out_dir,
            None,
        ));
    }
    let filter = args.selection.filter()?;
    let logs = inputs
        .iter()
        .map(|path| robolog_cli::open_log(path))
        .collect::<Result<Vec<Log>, _>>()?;
    let mut damaged = false;
    for (path, log) in inputs.iter().zip(&logs) {
        damaged |= report_problems(log.problems(), path);
    }
    let format = match args.format {
        ExportFormatArg::Parquet => ExportFormat::Parquet,
        ExportFormatArg::Arrow => ExportFormat::ArrowIpc,
    };
    let bar = Bar::messages("exporting", None);
    let mut options = ExportOptions::new()
        .format(format)
        .filter(filter)
        .raw_undecodable(args.raw)
        .progress(|p| {
            if let Some(total) = p.total_messages {
                bar.set_total(total);
            }
            bar.set(p.messages);
        });
    if let Some(size) = args.max_file_size {
        options = options.max_file_bytes(size);
    }
    let refs: Vec<&Log> = logs.iter().collect();
    let report = robolog_arrow::export(&refs, out_dir, options).map_err(|e| failure(e, inputs))?;
    bar.finish();
    write_report(&report, format, out_dir, out)?;
    warn_unmatched(&report.unmatched_topics, Path::new("any input"));
    if report.messages == 0 {
        warn("no message was exported");
    }
    // What opening found damaged (a cut chunk, say) is reported above: the files hold what
    // could be read, and the exit status says that some could not.
    Ok(if damaged {
        Outcome::Problems
    } else {
        Outcome::Ok
    })
}

fn failure(error: Error, inputs: &[std::path::PathBuf]) -> Failure {
    let hint = matches!(error, Error::NotDecodable { .. } | Error::Channels(_))
        .then_some("; --raw exports such topics as bytes, --topic picks the others")
        .unwrap_or("");
    match (error, inputs) {
        (Error::Log(e), [only]) => Failure::log(e, only),
        (Error::Log(e), _) => {
            let offset = e.offset();
            Failure::at(e, "one of the inputs", offset)
        }
        (Error::Io { path, source }, _) => Failure::msg(format!("{path}: {source}")),
        (other, _) => Failure::msg(format!("{other}{hint}")),
    }
}

fn write_report(
    report: &ExportReport,
    format: ExportFormat,
    out_dir: &Path,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let topics = report
        .files
        .iter()
        .map(|f| &f.topic)
        .collect::<std::collections::BTreeSet<_>>();
    let bytes: u64 = report.files.iter().map(|f| f.bytes).sum();
    writeln!(
        out,
        "wrote {} file{} to {} ({}, {}): {} messages on {} topic{}",
        report.files.len(),
        if report.files.len() == 1 { "" } else { "s" },
        display_path(out_dir),
        match format {
            ExportFormat::ArrowIpc => "Arrow IPC",
            _ => "Parquet",
        },
        human_bytes(bytes),
        report.messages,
        topics.len(),
        if topics.len() == 1 { "" } else { "s" },
    )?;
    let mut table = Table::new(["topic", "file", "rows", "size"]);
    table.align_right([2, 3]);
    for file in &report.files {
        let name = file.path.file_name().map_or_else(
            || file.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        table.row([
            file.topic.clone(),
            name,
            file.rows.to_string(),
            human_bytes(file.bytes),
        ]);
    }
    table.write(out, "  ")?;
    for topic in &report.raw_topics {
        writeln!(out, "exported as raw bytes (cannot be decoded): {topic}")?;
    }
    for topic in &report.empty_topics {
        writeln!(out, "no file for {topic}: no message in the selection")?;
    }
    out.flush()
}
