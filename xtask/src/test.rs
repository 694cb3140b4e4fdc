//! `cargo xtask test`: the README's test command.

use std::path::Path;
use std::process::Command;

use crate::{cargo, run};

/// Creates the interop venv and installs Azurite (the az:// tests' emulator, from npm), then runs
/// every test of the workspace with interop tests required.
pub(crate) fn run_tests(root: &Path, args: &[String]) -> Result<(), String> {
    run(Command::new("bash").arg(root.join("scripts/interop-venv.sh")))?;
    run(Command::new("bash").arg(root.join("scripts/azurite.sh")))?;
    run(cargo(root)
        .env("ROBOLOG_INTEROP", "required")
        .args(["test", "--workspace"])
        .args(args))
}
