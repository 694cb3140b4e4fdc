//! `cargo xtask <task>`: developer tasks that need more than cargo.
//!
//! - `test`: create the interop venv (`scripts/interop-venv.sh`) and run every test of the
//!   workspace with interop tests required.
//! - `gen-proto`: regenerate the committed Rust code for `proto/` (`--check`: fail when it is
//!   stale instead of writing it).
//! - `bench`: robolog against the `mcap` and `rosbag` crates on synthetic workloads, with the
//!   machine's limits, as one table (`--quick`: under 3 minutes on 2 cores).

#![forbid(unsafe_code)]
#![allow(clippy::print_stderr, clippy::print_stdout)]

mod bench;
mod gen_proto;
mod test;

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
    /// Generate the Rust code for the protobuf schemas in proto/ (protox + prost-build, no protoc).
    GenProto {
        /// Do not write anything; fail when the committed code differs from what would be generated.
        #[arg(long)]
        check: bool,
    },
    /// Benchmark robolog against the mcap and rosbag crates (release build; see BENCHMARKS.md).
    Bench(bench::BenchArgs),
    /// One measured operation in a child process (used by `bench`).
    #[command(hide = true)]
    BenchRun(bench::RunArgs),
    /// One machine-limit measurement in a child process (used by `bench`).
    #[command(hide = true)]
    BenchLimit(bench::LimitArgs),
}

fn workspace_root() -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().unwrap_or(xtask).to_path_buf()
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.task {
        Task::Test { args } => test::run_tests(&workspace_root(), &args),
        Task::GenProto { check } => gen_proto::gen_proto(&workspace_root(), check),
        Task::Bench(args) => bench::bench(&workspace_root(), &args),
        Task::BenchRun(args) => bench::run_child(&args),
        Task::BenchLimit(args) => bench::limit_child(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}
