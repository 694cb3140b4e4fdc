//! `robolog check`: structural validation with every problem and its offset.

use std::io::Write;

use robolog::{CheckReport, Severity};
use serde::Serialize;

use crate::cli::CheckArgs;
use crate::failure::{Failure, Outcome, display_path};
use crate::progress::Bar;

/// The `check --json` document.
#[derive(Debug, Serialize)]
struct CheckJson<'a> {
    file: String,
    /// False when a problem is an error (or, with `--strict`, a warning).
    valid: bool,
    #[serde(flatten)]
    report: &'a CheckReport,
}

pub(crate) fn run(args: &CheckArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let bar = Bar::spinner("checking");
    let report = robolog::check(&args.file).map_err(|e| Failure::log(e, &args.file))?;
    bar.finish();
    let failing = if args.strict {
        Severity::Warning
    } else {
        Severity::Error
    };
    let valid = report.problems.iter().all(|p| p.severity < failing);
    let file = display_path(&args.file);
    if args.json {
        let json = CheckJson {
            file,
            valid,
            report: &report,
        };
        serde_json::to_writer_pretty(&mut *out, &json).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        for problem in &report.problems {
            writeln!(out, "{problem}")?;
        }
        let count = |severity| {
            report
                .problems
                .iter()
                .filter(|p| p.severity == severity)
                .count()
        };
        writeln!(
            out,
            "{file}: {}, {} messages read, {} errors, {} warnings, {} notes: {}",
            report.format,
            report.messages,
            count(Severity::Error),
            count(Severity::Warning),
            count(Severity::Info),
            if valid { "ok" } else { "PROBLEMS FOUND" },
        )?;
    }
    out.flush()?;
    Ok(if valid {
        Outcome::Ok
    } else {
        Outcome::Problems
    })
}
