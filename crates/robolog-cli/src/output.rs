//! Outputs: a path, written under a temporary name beside it and renamed into place when
//! complete, or `-` for standard output. Checked before any work starts.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use robolog::{Format, Output};

use crate::failure::{Failure, display_path};

/// Where a log is written.
#[derive(Debug)]
pub(crate) struct Target {
    path: PathBuf,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A regular file (new or replaced), written atomically.
    File,
    /// Standard output (`-`).
    Stdout,
    /// Something that exists and is no regular file (`/dev/null`, a FIFO): written in place,
    /// never replaced.
    Device,
    /// A new folder (a ROS 2 bag), written beside it and renamed into place by its writer.
    Folder,
}

/// A writer's output, and what to do with it once the writer has finished.
pub(crate) struct Opened {
    /// For the writer.
    pub(crate) output: Output,
    /// A temporary file the log was written to, to be copied to its destination at the end
    /// (a bag needs to seek back; a pipe cannot).
    spool: Option<(File, Box<dyn Write>)>,
}

impl Target {
    /// Checks `path` for a log of `format` before any work: `-` is standard output; an existing
    /// folder (or, for a ROS 2 bag, anything existing but an empty folder), or a path whose
    /// folder does not exist, is refused now rather than after a long conversion.
    pub(crate) fn check(path: &Path, format: Format) -> Result<Self, Failure> {
        if format == Format::Rosbag2 {
            return Self::check_folder(path);
        }
        if path.as_os_str() == "-" {
            return Ok(Self {
                path: path.to_owned(),
                kind: Kind::Stdout,
            });
        }
        let kind = match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                return Err(Failure::about(
                    "the output is a folder: name a file in it",
                    path,
                    None,
                ));
            }
            Ok(m) if m.is_file() => Kind::File,
            Ok(_) => Kind::Device,
            Err(_) => Kind::File,
        };
        check_parent(path)?;
        Ok(Self {
            path: path.to_owned(),
            kind,
        })
    }

    fn check_folder(path: &Path) -> Result<Self, Failure> {
        if path.as_os_str() == "-" {
            return Err(Failure::about(
                "a ROS 2 bag is a folder: it cannot be written to standard output",
                path,
                None,
            ));
        }
        let empty_folder = std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none());
        if path.exists() && !empty_folder {
            return Err(Failure::about(
                "the output exists: a ROS 2 bag is written to a new (or empty) folder",
                path,
                None,
            ));
        }
        check_parent(path)?;
        Ok(Self {
            path: path.to_owned(),
            kind: Kind::Folder,
        })
    }

    /// The path as given.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// True for a path written atomically: a regular file, or a ROS 2 bag's folder.
    pub(crate) fn writes_path(&self) -> bool {
        matches!(self.kind, Kind::File | Kind::Folder)
    }

    /// True for standard output: reports then go to standard error.
    pub(crate) fn is_stdout(&self) -> bool {
        self.kind == Kind::Stdout
    }

    /// The output a writer of `format` writes to.
    pub(crate) fn open(&self, format: Format) -> Result<Opened, Failure> {
        let io_error = |e: io::Error| {
            Failure::about(format!("cannot write the output: {e}"), &self.path, None)
        };
        let stream: Box<dyn Write + Send> = match self.kind {
            Kind::File => {
                let output =
                    Output::file(&self.path).map_err(|e| Failure::create(e, &self.path))?;
                return Ok(Opened {
                    output,
                    spool: None,
                });
            }
            Kind::Folder => {
                return Ok(Opened {
                    output: Output::directory(&self.path),
                    spool: None,
                });
            }
            // Even when redirected to a file, standard output may be in append mode, where a
            // writer's seeks back would go wrong: written as a stream.
            Kind::Stdout => Box::new(io::stdout()),
            Kind::Device => Box::new(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&self.path)
                    .map_err(io_error)?,
            ),
        };
        if format == Format::Bag {
            // A bag's header is completed last: write it aside, copy it out at the end.
            let spool = tempfile::tempfile().map_err(io_error)?;
            let handle = spool.try_clone().map_err(io_error)?;
            let output = Output::seekable(BufWriter::with_capacity(1 << 20, spool))
                .map_err(|e| Failure::create(e, &self.path))?;
            return Ok(Opened {
                output,
                spool: Some((handle, stream)),
            });
        }
        Ok(Opened {
            output: Output::stream(BufWriter::with_capacity(1 << 20, stream)),
            spool: None,
        })
    }

    /// Completes an output whose writer has finished: copies a spooled log to its destination.
    pub(crate) fn complete(&self, opened_spool: Spool) -> Result<(), Failure> {
        let Some((mut file, mut out)) = opened_spool.0 else {
            return Ok(());
        };
        let copy = file
            .seek(SeekFrom::Start(0))
            .and_then(|_| io::copy(&mut file, &mut out))
            .and_then(|_| out.flush());
        copy.map_err(|e| match e.kind() {
            io::ErrorKind::BrokenPipe => Failure::ClosedOutput,
            _ => Failure::about(format!("cannot write the output: {e}"), &self.path, None),
        })
    }

    /// The path for messages.
    pub(crate) fn display(&self) -> String {
        match self.kind {
            Kind::Stdout => "standard output".to_owned(),
            _ => display_path(&self.path),
        }
    }
}

/// The folder `path` goes in must exist.
fn check_parent(path: &Path) -> Result<(), Failure> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if folder.is_dir() {
        return Ok(());
    }
    Err(Failure::about(
        format!(
            "cannot write the output: there is no folder {}",
            folder.display()
        ),
        path,
        None,
    ))
}

/// What remains of an [`Opened`] output once its writer took the [`Output`].
pub(crate) struct Spool(Option<(File, Box<dyn Write>)>);

impl Opened {
    /// Splits the output (for the writer) from what completes it.
    pub(crate) fn split(self) -> (Output, Spool) {
        (self.output, Spool(self.spool))
    }
}
