//! `robolog`: inspect, print, convert, check, recover and merge robot logs (ROS bag 2.0 and
//! 1.2, MCAP, BDDF), and work with ROS message definitions.
//!
//! ```text
//! robolog info FILE [--json]                       what a log holds, from its index
//! robolog cat FILE [--topic T]... [--start T] [--end T] [--json] [--decode] [--limit N]
//! robolog convert IN OUT [--format F] [--compression C] [--chunk-size BYTES] [selection]
//! robolog check FILE [--json] [--strict]           structural validation, problems with offsets
//! robolog recover IN OUT [--json]                  a valid copy of a damaged or cut log
//! robolog merge IN... -o OUT [selection]           several logs into one, in log-time order
//! robolog filter IN OUT [selection] [--order O]    a copy keeping some of a log (and the presets
//!                                                  sort, compress, decompress)
//! robolog list channels|schemas|chunks|attachments|metadata FILE; robolog du FILE
//! robolog get|add attachment|metadata FILE …       extra records read out or added
//! robolog completions SHELL                        a shell completion script
//! robolog export IN... OUT_DIR [--format parquet|arrow] [selection]  one file per topic
//! robolog sql "SELECT ..." IN... [--json|--csv]   SQL over logs (DataFusion)
//! robolog msg md5|hash|show|check PATH... [--type pkg/Type] [--ros2 [--distro DISTRO]]
//! ```
//!
//! The format is recognised from the file's first bytes. Times on the command line are seconds
//! since 1970 (with a fraction), nanoseconds or RFC 3339; `-` is standard input or output.
//!
//! This is a thin layer over the `robolog` facade: it parses arguments (clap), calls the
//! facade and formats the results, one module per command (`info`, `cat`, `convert` with
//! `merge`, `filter` with its presets, `list` with `du`, `records` for `get` and `add`, `check`,
//! `recover`, `msg`). Outputs go through the facade's atomic files: written beside the target
//! under a temporary name and renamed into place when complete.
//!
//! # Two programs, one command line
//!
//! `export` and `sql` (the cargo feature `columnar`, on by default) stand on robolog-arrow:
//! Arrow, Parquet and DataFusion, most of the tool's machine code. A program that links them
//! pays for it at every start (the loader relocates and pages in all of it), which a command
//! as short as `robolog info` would feel. So the package builds two binaries, installed side
//! by side by `cargo install robolog-cli`:
//!
//! - `robolog` runs every command but those two, and links no Arrow;
//! - `robolog-columnar` runs `export` and `sql` (and the rest too, from this same library).
//!
//! For `export` and `sql`, `robolog` runs `robolog-columnar` with its own arguments, the way
//! git runs its subcommands: found beside `robolog` (its [`std::env::current_exe`]) first,
//! then on `PATH`. On Unix it replaces the `robolog` process (exec), so standard streams,
//! exit codes and signals (Ctrl-C removing unfinished outputs) are the command's own; elsewhere
//! it waits for it and exits with its code. The command line is parsed by both, from the one
//! definition in this library: `robolog --help` and `robolog export --help` are answered by
//! `robolog` itself, and say what they always said.
//!
//! This library is that shared code: the command-line definition, every command but the
//! columnar two, and the pieces those two use ([`failure`], [`progress`], [`report`],
//! [`size`], [`table`], [`cli`]'s argument types). It is the CLI's inside, public only so that
//! the second binary can use it, not an API for other programs. A library target rather than
//! the modules compiled into both binaries (`#[path]`): each module is compiled once, and
//! neither binary carries code it never calls. It is `robolog_cli`, so its documentation does
//! not collide with the `robolog` library's (the `robolog` binary's own is not built).
//!
//! Exit codes: 0 ok, 1 error (or problems found by `check`), 2 usage, 3 data lost
//! (`recover`). Errors are one line on standard error:
//! `error: <what> (<file> at byte <offset>)`. A closed standard output (`robolog cat … |
//! head`) ends the command quietly with 0. Progress bars go to standard error, and only when
//! it is a terminal.

// Two `unsafe` blocks: input files are memory-mapped (`input::open_file` and `input::map`,
// which state their safety).
#![deny(unsafe_code)]

mod cat;
mod check;
pub mod cli;
mod convert;
pub mod failure;
mod filter;
mod info;
mod input;
mod list;
mod msg;
mod output;
pub mod progress;
mod records;
mod recover;
pub mod report;
mod selection;
mod signals;
pub mod size;
pub mod table;
mod time;

use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::failure::{Failure, Outcome};

/// `export` or `sql` as parsed: the commands of the `columnar` feature, which
/// `robolog-columnar` runs.
#[cfg(feature = "columnar")]
#[derive(Debug, Clone, Copy)]
pub enum Columnar<'a> {
    /// `robolog export`.
    Export(&'a cli::ExportArgs),
    /// `robolog sql`.
    Sql(&'a cli::SqlArgs),
}

/// How a binary runs `export` and `sql`, writing to standard output through `out`: in the
/// process (`robolog-columnar`) or by running `robolog-columnar` (`robolog`).
#[cfg(feature = "columnar")]
pub type RunColumnar = fn(Columnar<'_>, &mut dyn Write) -> Result<Outcome, Failure>;

/// Opens the log at `path` as every command of the command line opens its inputs: a file
/// memory-mapped with its index, a URL by ranged requests (`--allow-download` as given), a
/// pipe (`-`) read into memory; uncompressed MCAP chunks checked against their CRCs.
pub fn open_log(path: &std::path::Path) -> Result<robolog::Log, Failure> {
    input::open_log(path)
}

/// The whole command line: parses the arguments, runs the command, prints its error and gives
/// the exit status. `columnar` runs `export` and `sql`.
pub fn main(#[cfg(feature = "columnar")] columnar: RunColumnar) -> ExitCode {
    let cli = Cli::parse();
    input::allow_download(cli.allow_download);
    signals::install();
    let stdout = io::stdout();
    // A terminal gets each line as it is written; a pipe or file gets large writes. Standard
    // output stays unlocked between writes: a log written to it (`-`) goes there too.
    let mut out: Box<dyn Write> = if stdout.is_terminal() {
        Box::new(stdout)
    } else {
        Box::new(BufWriter::with_capacity(1 << 16, stdout))
    };
    let result = run(
        &cli.command,
        &mut *out,
        #[cfg(feature = "columnar")]
        columnar,
    )
    .and_then(|outcome| {
        out.flush()?;
        Ok(outcome)
    });
    match result {
        Ok(outcome) => outcome.exit_code(),
        Err(Failure::ClosedOutput) => ExitCode::SUCCESS,
        Err(Failure::Usage(error)) => {
            // Whatever was printed belongs before the usage message.
            let _ = out.flush();
            let _ = error.print();
            ExitCode::from(2)
        }
        Err(Failure::Error(line)) => {
            let _ = out.flush();
            let _ = writeln!(io::stderr(), "{line}");
            ExitCode::from(1)
        }
    }
}

fn run(
    command: &Command,
    out: &mut dyn Write,
    #[cfg(feature = "columnar")] columnar: RunColumnar,
) -> Result<Outcome, Failure> {
    let read = match command {
        Command::Info(args) => Some(&args.read),
        Command::Cat(args) => Some(&args.read),
        Command::Convert(args) => Some(&args.read),
        Command::Merge(args) => Some(&args.read),
        _ => None,
    };
    if let Some(distro) = read.and_then(|r| r.distro) {
        input::set_distro(distro);
    }
    match command {
        Command::Info(args) => info::run(args, out),
        Command::Cat(args) => cat::run(args, out),
        Command::Convert(args) => convert::run_convert(args, out),
        Command::Check(args) => check::run(args, out),
        Command::Recover(args) => recover::run(args, out),
        Command::Merge(args) => convert::run_merge(args, out),
        Command::Filter(args) => filter::run_filter(args, out),
        Command::Sort(args) => filter::run_preset(filter::Preset::Sort, args, out),
        Command::Compress(args) => filter::run_preset(filter::Preset::Compress, args, out),
        Command::Decompress(args) => filter::run_preset(filter::Preset::Decompress, args, out),
        Command::List(command) => list::run(command, out),
        Command::Du(args) => list::run_du(args, out),
        Command::Get(command) => records::run_get(command, out),
        Command::Add(command) => records::run_add(command, out),
        #[cfg(feature = "columnar")]
        Command::Export(args) => columnar(Columnar::Export(args), out),
        #[cfg(feature = "columnar")]
        Command::Sql(args) => columnar(Columnar::Sql(args), out),
        Command::Msg(command) => msg::run(command, out),
        Command::Completions(args) => {
            use clap::CommandFactory;
            clap_complete::generate(args.shell, &mut Cli::command(), "robolog", out);
            Ok(Outcome::Ok)
        }
    }
}
