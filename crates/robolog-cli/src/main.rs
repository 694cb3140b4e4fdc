//! `robolog`: the command line (see the `robolog_cli` library), without Arrow. `export` and
//! `sql` are run by `robolog-columnar`, the package's second binary, found beside this one or
//! on `PATH`: on Unix it replaces this process, elsewhere this one waits for it.

#![forbid(unsafe_code)]

use std::process::ExitCode;

fn main() -> ExitCode {
    robolog_cli::main(
        #[cfg(feature = "columnar")]
        columnar::run,
    )
}

#[cfg(feature = "columnar")]
mod columnar {
    use std::ffi::OsStr;
    use std::io::Write;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use clap::error::ErrorKind;
    use robolog_cli::Columnar;
    use robolog_cli::failure::{Failure, Outcome};

    /// The program that runs `export` and `sql`.
    const PROGRAM: &str = "robolog-columnar";

    /// Runs `robolog-columnar` with this process's arguments, which it parses as this one did.
    /// Returns only when it could not be started (or, off Unix, never: the exit code is its).
    pub(super) fn run(command: Columnar<'_>, _out: &mut dyn Write) -> Result<Outcome, Failure> {
        let name = match command {
            Columnar::Export(_) => "export",
            Columnar::Sql(_) => "sql",
        };
        let beside = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(Path::to_path_buf));
        let path = std::env::var_os("PATH");
        let Some(program) = find(beside.as_deref(), path.as_deref()) else {
            return Err(Failure::usage(
                ErrorKind::InvalidSubcommand,
                format!(
                    "`robolog {name}` is run by the program {PROGRAM}, which is neither beside \
                     robolog{} nor on PATH: `cargo install robolog-cli` installs the two together",
                    beside.map_or_else(String::new, |dir| format!(" (in {})", dir.display())),
                ),
            ));
        };
        let mut child = Command::new(&program);
        child.args(std::env::args_os().skip(1));
        Err(Failure::usage(
            ErrorKind::InvalidSubcommand,
            format!(
                "cannot run {} for `robolog {name}`: {}",
                program.display(),
                start(&mut child)
            ),
        ))
    }

    /// Where `robolog-columnar` is: in `beside` (this program's folder), else in the first
    /// folder of `path` (`PATH`) that holds it. Empty `PATH` entries, which some shells read as
    /// the current folder, are skipped.
    fn find(beside: Option<&Path>, path: Option<&OsStr>) -> Option<PathBuf> {
        let file = format!("{PROGRAM}{}", std::env::consts::EXE_SUFFIX);
        let folders = path.map(std::env::split_paths).into_iter().flatten();
        beside
            .map(Path::to_path_buf)
            .into_iter()
            .chain(folders.filter(|dir| !dir.as_os_str().is_empty()))
            .map(|dir| dir.join(&file))
            .find(|candidate| candidate.is_file())
    }

    /// Becomes the program: returns only the error that kept it from starting.
    #[cfg(unix)]
    fn start(command: &mut Command) -> std::io::Error {
        use std::os::unix::process::CommandExt;
        command.exec()
    }

    /// Runs the program to its end and exits with its code (1 if it has none).
    #[cfg(not(unix))]
    fn start(command: &mut Command) -> std::io::Error {
        match command.status() {
            Ok(status) => std::process::exit(status.code().unwrap_or(1)),
            Err(error) => error,
        }
    }
}
