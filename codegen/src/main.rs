//! `robolog-codegen`: regenerate (or check) robolog's generated sources. `cargo xtask gen-proto`
//! and `cargo xtask gen-ros2-interfaces` run it.

#![allow(clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use robolog_codegen::{proto, ros2_interfaces, workspace_root};

#[derive(Parser)]
#[command(about = "robolog's generated sources")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
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
}

fn main() -> ExitCode {
    let root = workspace_root();
    let result = match Cli::parse().task {
        Task::GenProto { check } => proto::run(&root, check),
        Task::GenRos2Interfaces {
            check,
            mirrors,
            repos,
        } => ros2_interfaces::run(
            &root,
            &ros2_interfaces::Options {
                check,
                mirrors,
                repos,
            },
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("robolog-codegen: {message}");
            ExitCode::FAILURE
        }
    }
}
