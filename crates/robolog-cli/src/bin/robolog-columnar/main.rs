//! `robolog-columnar`: the command line with `export` and `sql` (Arrow, Parquet, DataFusion
//! through robolog-arrow), which `robolog` runs for those two commands so that it need not
//! link them itself (see the `robolog_cli` library). It parses the same command line, so it
//! also runs the other commands, as `robolog` would.

#![forbid(unsafe_code)]

mod export;
mod sql;

use std::io::Write;
use std::process::ExitCode;

use robolog_cli::Columnar;
use robolog_cli::failure::{Failure, Outcome};

fn main() -> ExitCode {
    robolog_cli::main(run)
}

fn run(command: Columnar<'_>, out: &mut dyn Write) -> Result<Outcome, Failure> {
    match command {
        Columnar::Export(args) => export::run(args, out),
        Columnar::Sql(args) => sql::run(args, out),
    }
}
