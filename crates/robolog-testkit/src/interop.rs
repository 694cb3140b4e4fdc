//! Running the reference Python tools (`rosbags`, `mcap`, `mcap-ros1-support`) from tests.
//!
//! `scripts/interop-venv.sh` creates a venv under `target/interop-venv` with pinned versions.
//! Tests call [`python`] to find it: when it is missing, the test is skipped with a message,
//! unless `ROBOLOG_INTEROP=required` (as `.ci/run` sets), where a missing venv fails the test.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;

use crate::testdata::workspace_root;

/// The venv's Python interpreter, or `None` (after saying so on stderr) when interop tests
/// should be skipped. Panics when `ROBOLOG_INTEROP=required` and the venv is missing.
pub fn python() -> Option<PathBuf> {
    let python = match std::env::var_os("ROBOLOG_INTEROP_PYTHON") {
        Some(path) => PathBuf::from(path),
        None => workspace_root().join("target/interop-venv/bin/python"),
    };
    if python.exists() {
        return Some(python);
    }
    if std::env::var("ROBOLOG_INTEROP").as_deref() == Ok("required") {
        panic!(
            "ROBOLOG_INTEROP=required but {} does not exist: run scripts/interop-venv.sh",
            python.display()
        );
    }
    eprintln!(
        "skipping interop test: {} not found (run scripts/interop-venv.sh)",
        python.display()
    );
    None
}

/// Runs `python script args…` and returns its stdout, or stderr and the exit status as the
/// error.
pub fn run(
    python: &std::path::Path,
    script: &std::path::Path,
    args: &[&OsStr],
) -> Result<String, String> {
    let output = Command::new(python)
        .arg(script)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} {} failed ({}):\n{}",
            python.display(),
            script.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    String::from_utf8(output.stdout).map_err(|e| format!("non-UTF-8 output: {e}"))
}

/// Runs the venv's `rosbags-convert` (installed beside `python` by the `rosbags` package) with
/// `args` and returns its stdout, or stderr and the exit status as the error.
pub fn rosbags_convert(python: &std::path::Path, args: &[&OsStr]) -> Result<String, String> {
    let tool = python.with_file_name("rosbags-convert");
    let output = Command::new(&tool)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", tool.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed ({}):\n{}",
            tool.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    String::from_utf8(output.stdout).map_err(|e| format!("non-UTF-8 output: {e}"))
}
