//! `cargo xtask <task>`: developer tasks that need more than cargo.
//!
//! - `test`: create the interop venv (`scripts/interop-venv.sh`), install Azurite
//!   (`scripts/azurite.sh`, npm) and run every test of the workspace with interop tests required.
//! - `gen-proto`: regenerate the committed Rust code for `proto/` (`--check`: fail when it is
//!   stale instead of writing it).
//! - `gen-ros2-interfaces`: regenerate the bundled standard ROS 2 interfaces of robolog-msg
//!   from git checkouts of the ROS 2 repositories (`--check`: fail when the committed bundles
//!   are inconsistent, or differ from the sources when those are given).
//! - `bench`: robolog against the `mcap` and `rosbag` crates on synthetic workloads, with the
//!   machine's limits, as one table (`--quick`: under 3 minutes on 2 cores); `--decoding` and
//!   `--columnar` measure message decoding and Parquet export/SQL against their own peers. The
//!   benchmark is the `robolog-bench` package (`bench/`), run here in release mode.

#![allow(clippy::print_stderr, clippy::print_stdout)]

mod commands;
mod gen_proto;
mod gen_ros2_interfaces;
mod test;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use commands::{cargo, run};

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
    /// Generate robolog-msg's bundled standard ROS 2 interfaces from git checkouts of the ROS 2
    /// repositories (see crates/robolog-msg/interfaces/README.md).
    GenRos2Interfaces {
        /// Do not write anything; fail when the committed bundles are inconsistent or (with
        /// sources) stale.
        #[arg(long)]
        check: bool,
        /// A folder of git checkouts laid out `<owner>+<name>/repo`.
        #[arg(long, value_name = "DIR")]
        mirrors: Option<PathBuf>,
        /// The git directory of one repository, `owner/name=GIT_DIR` (overrides --mirrors).
        #[arg(long = "repo", value_name = "OWNER/NAME=GIT_DIR")]
        repos: Vec<String>,
    },
    /// Benchmark robolog against the mcap and rosbag crates (release build of robolog-bench; see
    /// BENCHMARKS.md, and `cargo xtask bench --help` for the options).
    #[command(disable_help_flag = true)]
    Bench {
        /// The arguments of `robolog-bench bench`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

fn workspace_root() -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().unwrap_or(xtask).to_path_buf()
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.task {
        Task::Test { args } => test::run_tests(&workspace_root(), &args),
        Task::GenProto { check } => gen_proto::gen_proto(&workspace_root(), check),
        Task::GenRos2Interfaces {
            check,
            mirrors,
            repos,
        } => gen_ros2_interfaces::gen_ros2_interfaces(
            &workspace_root(),
            &gen_ros2_interfaces::Options {
                check,
                mirrors,
                repos,
            },
        ),
        Task::Bench { args } => run(cargo(&workspace_root())
            .args([
                "run",
                "--release",
                "--quiet",
                "--package",
                "robolog-bench",
                "--",
                "bench",
            ])
            .args(args)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}
