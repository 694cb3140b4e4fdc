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
//!   `--columnar` measure message decoding and Parquet export/SQL against their own peers.
//!
//! The generators are the `robolog-codegen` package (`codegen/`, whose tests check the committed
//! files) and the benchmark is `robolog-bench` (`bench/`, run in release mode): xtask only starts
//! them. It has no dependencies, arguments parsed by hand included, because CI builds it before
//! anything else: its own dependency tree would be compiled once more with features of its own.

#![allow(clippy::print_stderr, clippy::print_stdout)]

mod commands;
mod test;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use commands::{cargo, run};

const USAGE: &str = "\
robolog developer tasks

Usage: cargo xtask <TASK> [ARGS...]

Tasks:
  test [CARGO TEST ARGS...]     set up the interop venv and Azurite, then run every test of the
                                workspace with interop tests required
  gen-proto [--check]           generate the Rust code for the protobuf schemas in proto/
  gen-ros2-interfaces [--check] [--mirrors DIR] [--repo OWNER/NAME=GIT_DIR]...
                                generate robolog-msg's bundled standard ROS 2 interfaces
  bench [ARGS...]               benchmark robolog against the mcap and rosbag crates
                                (`cargo xtask bench --help` for its options)";

fn workspace_root() -> PathBuf {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    xtask.parent().unwrap_or(xtask).to_path_buf()
}

/// `cargo run --release? --quiet --package PACKAGE -- ARGS...`.
fn run_package(package: &str, release: bool, args: &[String]) -> Result<(), String> {
    let mut command = cargo(&workspace_root());
    command.arg("run");
    if release {
        command.arg("--release");
    }
    run(command
        .args(["--quiet", "--package", package, "--"])
        .args(args))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((task, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::FAILURE;
    };
    let result = match task.as_str() {
        "test" => test::run_tests(&workspace_root(), rest),
        "gen-proto" | "gen-ros2-interfaces" => run_package("robolog-codegen", false, &args),
        "bench" => run_package("robolog-bench", true, &args),
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        other => Err(format!("unknown task `{other}`\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}
