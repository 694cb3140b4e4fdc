//! Running cargo and other programs from the developer tools: xtask, and the benchmark
//! (`bench/`, which includes this file), both of which `cargo run` starts.

use std::path::Path;
use std::process::Command;

/// A cargo command in the workspace `root`, without the variables `cargo run` set for this
/// program (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, ...): build scripts that rerun when those
/// change (ring's does) would otherwise rerun, and everything above them recompile, between a
/// build started here and one started from a shell.
pub(crate) fn cargo(root: &Path) -> Command {
    let mut command = Command::new(env!("CARGO"));
    command.current_dir(root);
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("CARGO_PKG_")
            || matches!(
                name,
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_MANIFEST_LINKS"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_BIN_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
            )
        {
            command.env_remove(name);
        }
    }
    command
}

pub(crate) fn run(command: &mut Command) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} failed: {status}"))
    }
}
