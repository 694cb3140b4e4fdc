//! `robolog recover`: a valid copy of a damaged log, and what could not be saved.

use std::io::Write;

use crate::cli::RecoverArgs;
use crate::failure::{Failure, Outcome, display_path};
use crate::progress::Bar;
use crate::size::human_bytes;

pub(crate) fn run(args: &RecoverArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let bar = Bar::spinner("recovering");
    let report = robolog::recover_file(&args.input, &args.output).map_err(|e| {
        // Reading the input is what fails, unless the output cannot be written.
        match e {
            e @ robolog::Error::Io(_) if args.input.exists() => Failure::create(e, &args.output),
            e => Failure::open(e, &args.input),
        }
    })?;
    bar.finish();
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &report).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "wrote {} ({}, {}): {} messages recovered, {} lost, {} of the input dropped",
            display_path(&args.output),
            report.format,
            human_bytes(report.output_bytes),
            report.messages_recovered,
            report.messages_lost,
            human_bytes(report.bytes_dropped),
        )?;
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
            if report.messages_lost > 0 {
                writeln!(
                    out,
                    "DATA LOST: {} messages ({bytes} of the input) could not be saved",
                    report.messages_lost
                )?;
            } else {
                writeln!(
                    out,
                    "DATA LOST: {bytes} of the input could not be read; any messages in it are gone"
                )?;
            }
        }
    }
    out.flush()?;
    Ok(if report.lossless {
        Outcome::Ok
    } else {
        Outcome::DataLost
    })
}
