//! Interruption: on SIGINT, SIGTERM or SIGHUP the temporary files of unfinished outputs are
//! removed before the process exits, so that Ctrl-C leaves nothing behind.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Temporary files of the CLI's own (not the facade's atomic outputs, which the facade knows).
static TEMPORARY: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temporary() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
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
                    for path in temporary().drain(..) {
                        let _ = std::fs::remove_file(path);
                    }
                    // The shell's convention: 128 + the signal number.
                    std::process::exit(128 + signal);
                }
            });
    }
}

/// Remembers a temporary file to remove if a signal ends the process.
pub(crate) fn register(path: &Path) {
    temporary().push(path.to_owned());
}

/// Forgets a temporary file that was removed or kept.
pub(crate) fn forget(path: &Path) {
    let mut list = temporary();
    if let Some(i) = list.iter().position(|p| p == path) {
        list.swap_remove(i);
    }
}
