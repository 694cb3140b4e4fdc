//! `robolog sql`: a SQL query over logs, on DataFusion through robolog-arrow.

use std::io::Write;

use robolog_arrow::LogTables;
use robolog_arrow::arrow::csv::WriterBuilder;
use robolog_arrow::arrow::util::pretty::pretty_format_batches;

use robolog_cli::cli::SqlArgs;
use robolog_cli::failure::{Failure, Outcome};

pub(crate) fn run(args: &SqlArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    if args.json && args.csv {
        return Err(Failure::usage(
            clap::error::ErrorKind::ArgumentConflict,
            "--json and --csv cannot be used together",
        ));
    }
    let tables = LogTables::open(&args.inputs).map_err(|e| match e {
        robolog_arrow::Error::Log(e) => match &args.inputs[..] {
            [only] => Failure::open(e, only),
            _ => Failure::at(e, "one of the inputs", None),
        },
        other => Failure::msg(other),
    })?;
    let batches = tables
        .sql_blocking(&args.query)
        .map_err(|e| Failure::msg(one_line(&e.to_string())))?;
    if args.json {
        robolog_arrow::write_json_lines(&batches, &mut *out).map_err(Failure::msg)?;
    } else if args.csv {
        let mut writer = WriterBuilder::new().with_header(true).build(&mut *out);
        for batch in &batches {
            writer
                .write(batch)
                .map_err(|e| Failure::msg(format!("cannot write CSV: {e}")))?;
        }
    } else {
        let table = pretty_format_batches(&batches).map_err(Failure::msg)?;
        writeln!(out, "{table}")?;
    }
    Ok(Outcome::Ok)
}

/// DataFusion's messages may run over several lines (a list of valid fields, a hint); errors
/// of this tool are one line each.
fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
