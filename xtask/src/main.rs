//! `cargo xtask <task>`: developer tasks that need more than cargo.
//!
//! - `test`: create the interop venv (`scripts/interop-venv.sh`) and run every test of the
//!   workspace with interop tests required.

#![forbid(unsafe_code)]
#![allow(clippy::print_stderr, clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(about = "robolog developer tasks")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Set up the Python interop venv and run every test in the workspace.
    Test {
        /// Extra arguments for `cargo test`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run(command: &mut Command) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} failed: {status}"))
    }
}

fn test(args: &[String]) -> Result<(), String> {
    let root = workspace_root();
    run(Command::new("bash").arg(root.join("scripts/interop-venv.sh")))?;
    run(Command::new(env!("CARGO"))
        .current_dir(&root)
        .env("ROBOLOG_INTEROP", "required")
        .args(["test", "--workspace"])
        .args(args))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.task {
        Task::Test { args } => test(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}
