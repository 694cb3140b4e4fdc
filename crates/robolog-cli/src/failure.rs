//! How a command ends: its exit status, and the one line an error is printed as.

use std::fmt;
use std::io;
use std::path::Path;
use std::process::ExitCode;

/// A command that ran to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Ok,
    /// Exit 1: the command worked and found problems (`check`), or read past damage (every
    /// reading command).
    Problems,
    /// Exit 3: the command worked but data was lost (`recover`).
    DataLost,
}

impl Outcome {
    pub(crate) fn exit_code(self) -> ExitCode {
        match self {
            Outcome::Ok => ExitCode::SUCCESS,
            Outcome::Problems => ExitCode::from(1),
            Outcome::DataLost => ExitCode::from(3),
        }
    }
}

/// A command that could not finish.
#[derive(Debug)]
pub enum Failure {
    /// The arguments make no sense together (exit 2, printed the way clap prints usage errors).
    Usage(Box<clap::Error>),
    /// Anything else (exit 1), printed as `error: <what> (<file> at byte <offset>)`.
    Error(ErrorLine),
    /// Standard output was closed by the reader (`robolog cat … | head`): not an error.
    ClosedOutput,
}

/// An error with the file and offset it is about, when known.
#[derive(Debug)]
pub struct ErrorLine {
    what: String,
    file: Option<String>,
    offset: Option<u64>,
}

impl fmt::Display for ErrorLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}", self.what)?;
        match (&self.file, self.offset) {
            (Some(file), Some(offset)) => write!(f, " ({file} at byte {offset})"),
            (Some(file), None) => write!(f, " ({file})"),
            (None, Some(offset)) => write!(f, " (at byte {offset})"),
            (None, None) => Ok(()),
        }
    }
}

impl Failure {
    /// An error about nothing in particular.
    pub fn msg(what: impl fmt::Display) -> Self {
        Failure::Error(ErrorLine {
            what: what.to_string(),
            file: None,
            offset: None,
        })
    }

    /// An error about `file`, at `offset` when known.
    pub fn about(what: impl fmt::Display, file: &Path, offset: Option<u64>) -> Self {
        Failure::Error(ErrorLine {
            what: what.to_string(),
            file: Some(display_path(file)),
            offset,
        })
    }

    /// An error about a place described in words (`one of the inputs`).
    pub fn at(what: impl fmt::Display, place: &str, offset: Option<u64>) -> Self {
        Failure::Error(ErrorLine {
            what: what.to_string(),
            file: Some(place.to_owned()),
            offset,
        })
    }

    /// A facade error about `file`, with the offset the error carries.
    pub fn log(error: robolog::Error, file: &Path) -> Self {
        match error {
            robolog::Error::Io(e) => Failure::io(e, file),
            error => {
                let offset = error.offset();
                Failure::about(error, file, offset)
            }
        }
    }

    /// A facade error from opening `file` to read it: an I/O error says so.
    pub fn open(error: robolog::Error, file: &Path) -> Self {
        match error {
            robolog::Error::Io(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                Failure::about(format!("cannot open: {e}"), file, None)
            }
            error => Failure::log(error, file),
        }
    }

    /// A facade error from creating or writing the output `file`: an I/O error says so.
    pub(crate) fn create(error: robolog::Error, file: &Path) -> Self {
        match error {
            robolog::Error::Io(e) => {
                Failure::about(format!("cannot write the output: {e}"), file, None)
            }
            error => Failure::log(error, file),
        }
    }

    /// An I/O error on `file`; a closed standard output is [`Failure::ClosedOutput`].
    pub(crate) fn io(error: io::Error, file: &Path) -> Self {
        if is_broken_pipe(&error) {
            Failure::ClosedOutput
        } else {
            Failure::about(error, file, None)
        }
    }

    /// A usage error found after parsing, shown with the usage of the command it is about.
    pub fn usage(kind: clap::error::ErrorKind, message: impl fmt::Display) -> Self {
        use clap::CommandFactory;
        let mut command = crate::cli::Cli::command();
        // Gives each subcommand its full name (`robolog filter`) for its usage line.
        command.build();
        let mut current = &command;
        for arg in std::env::args().skip(1) {
            if !current.has_subcommands() {
                break;
            }
            if let Some(sub) = current.find_subcommand(&arg) {
                current = sub;
            }
        }
        Failure::Usage(Box::new(current.clone().error(kind, message)))
    }
}

/// Writing to standard output: a closed pipe ends the command quietly, anything else is an
/// error.
impl From<io::Error> for Failure {
    fn from(error: io::Error) -> Self {
        if is_broken_pipe(&error) {
            Failure::ClosedOutput
        } else {
            Failure::msg(format!("cannot write the output: {error}"))
        }
    }
}

/// A closed pipe, also when a serializer wrapped the error it met.
fn is_broken_pipe(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::BrokenPipe
        || error
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<io::Error>())
            .is_some_and(|inner| inner.kind() == io::ErrorKind::BrokenPipe)
}

/// How a path is shown in messages: as given, `-` as standard input.
pub fn display_path(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "standard input".to_owned()
    } else {
        path.display().to_string()
    }
}

/// True when `path` means standard input.
pub(crate) fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}
