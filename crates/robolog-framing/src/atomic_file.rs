//! Output files that appear under their final name only when complete.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

/// A file written under a temporary name beside its destination and renamed into place by
/// [`AtomicFile::commit`].
///
/// If the work fails or the value is dropped without committing, the temporary file is removed
/// and whatever was at the destination is untouched: our tools never leave a half-written output
/// under the user's name, and never clobber an existing file with one.
///
/// ```
/// use std::io::Write;
/// let dir = tempfile::tempdir().unwrap();
/// let target = dir.path().join("out.mcap");
/// let mut file = robolog_framing::AtomicFile::create(&target).unwrap();
/// file.write_all(b"data").unwrap();
/// assert!(!target.exists());
/// file.commit().unwrap();
/// assert_eq!(std::fs::read(&target).unwrap(), b"data");
/// ```
#[derive(Debug)]
pub struct AtomicFile {
    file: Option<File>,
    temp: PathBuf,
    target: PathBuf,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// The temporary paths of the atomic files being written in this process, for
/// [`remove_temporary_files`], which also closes the list: no atomic file is created after it.
static PENDING: Mutex<Pending> = Mutex::new(Pending {
    paths: Vec::new(),
    closed: false,
});

#[derive(Debug)]
struct Pending {
    paths: Vec<PathBuf>,
    closed: bool,
}

fn pending() -> std::sync::MutexGuard<'static, Pending> {
    // A panic while holding the lock leaves a list that is still right.
    PENDING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn forget(temp: &Path) {
    let mut pending = pending();
    if let Some(i) = pending.paths.iter().position(|p| p == temp) {
        pending.paths.swap_remove(i);
    }
}

/// Removes the temporary file of every [`AtomicFile`] of this process that is neither committed
/// nor dropped yet, and returns how many it removed. For a program about to exit on a signal
/// (SIGINT, SIGTERM), whose destructors will not run: call it from the thread that handles the
/// signal, then exit. Whatever is still being written to such a file goes nowhere.
///
/// Creating an [`AtomicFile`] fails from then on, so that a file created by another thread while
/// the process is ending cannot outlive it.
pub fn remove_temporary_files() -> usize {
    let mut pending = pending();
    pending.closed = true;
    let mut removed = 0;
    for temp in pending.paths.drain(..) {
        if fs::remove_file(&temp).is_ok() {
            removed += 1;
        }
    }
    removed
}

impl AtomicFile {
    /// Creates a new temporary file in the destination's directory.
    pub fn create(target: impl AsRef<Path>) -> io::Result<Self> {
        let target = target.as_ref().to_path_buf();
        let name = target
            .file_name()
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name")
            })?
            .to_string_lossy()
            .into_owned();
        let dir = match target.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        // The list stays locked from creating the file to recording it: a signal handler
        // calling `remove_temporary_files` in between would miss it.
        let mut pending = pending();
        if pending.closed {
            return Err(io::Error::other(
                "the process is ending: no output file is created",
            ));
        }
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let temp = dir.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&temp)
            {
                Ok(file) => {
                    pending.paths.push(temp.clone());
                    return Ok(Self {
                        file: Some(file),
                        temp,
                        target,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Where the file will end up.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The temporary path being written.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    fn file_mut(&mut self) -> io::Result<&mut File> {
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("atomic file already committed"))
    }

    /// Flushes the data to disk and renames the file to its destination, replacing any file
    /// there.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file_mut()?;
        file.flush()?;
        file.sync_all()?;
        self.file = None;
        let renamed = fs::rename(&self.temp, &self.target);
        forget(&self.temp);
        if let Err(e) = renamed {
            let _ = fs::remove_file(&self.temp);
            return Err(e);
        }
        // Persist the rename itself; not every platform can open a directory, so this is best effort.
        let dir = match self.target.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        if let Ok(dir) = File::open(dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file_mut()?.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file_mut()?.flush()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.file_mut()?.seek(pos)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = fs::remove_file(&self.temp);
            forget(&self.temp);
        }
    }
}
