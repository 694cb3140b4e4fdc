//! Interruption: on SIGINT, SIGTERM or SIGHUP the temporary files of unfinished outputs are
//! removed before the process exits, so that Ctrl-C leaves nothing behind.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tempfile::TempPath;

/// Temporary files of the CLI's own (not the facade's atomic outputs, which the facade knows),
/// and whether a signal came (then no more are created).
static TEMPORARY: Mutex<Temporary> = Mutex::new(Temporary {
    paths: Vec::new(),
    closed: false,
});

struct Temporary {
    paths: Vec<PathBuf>,
    closed: bool,
}

fn temporary() -> std::sync::MutexGuard<'static, Temporary> {
    TEMPORARY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Starts the thread that waits for the signals. Without it (it could not start), a signal
/// ends the process the default way.
pub(crate) fn install() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        let _ = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    robolog::remove_temporary_files();
                    let mut list = temporary();
                    list.closed = true;
                    for path in list.paths.drain(..) {
                        let _ = std::fs::remove_file(path);
                    }
                    // The shell's convention: 128 + the signal number.
                    std::process::exit(128 + signal);
                }
            });
    }
}

/// Creates a temporary file in `folder` (its name starting with `prefix`), to be removed if a
/// signal ends the process. The list stays locked from creating the file to recording it, so
/// that a signal in between cannot miss it.
pub(crate) fn temporary_file(folder: &Path, prefix: &str) -> std::io::Result<TempPath> {
    let mut list = temporary();
    if list.closed {
        return Err(std::io::Error::other(
            "the process is ending: no output file is created",
        ));
    }
    let temp = tempfile::Builder::new()
        .prefix(prefix)
        .tempfile_in(folder)?
        .into_temp_path();
    list.paths.push(temp.to_path_buf());
    Ok(temp)
}

/// Forgets a temporary file that was removed or kept.
pub(crate) fn forget(path: &Path) {
    let mut list = temporary();
    if let Some(i) = list.paths.iter().position(|p| p == path) {
        list.paths.swap_remove(i);
    }
}
