//! `robolog check`: structural validation with every problem and its offset.

use std::io::Write;

use robolog::{CheckReport, Severity};
use serde::Serialize;

use crate::cli::CheckArgs;
use crate::failure::{Failure, Outcome, display_path};
use crate::input::{self, Positional};
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
    let positional = input::positional(&args.file)?;
    let bar = match &positional {
        Positional::Input(input) if input.in_memory().is_none() => {
            Bar::fetching("checking", input.len())
        }
        _ => Bar::spinner("checking"),
    };
    let report = match positional {
        Positional::Rosbag2(path) => robolog::check(path),
        Positional::Input(input) => robolog::check_input(input),
    }
    .map_err(|e| Failure::open(e, &args.file))?;
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
            "{file}: {}, {} messages read, {}, {}, {}: {}",
            report.format,
            report.messages,
            counted(count(Severity::Error), "error"),
            counted(count(Severity::Warning), "warning"),
            counted(count(Severity::Info), "note"),
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

/// `1 error`, `2 errors`.
fn counted(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}
