//! The sources robolog generates and commits, and the checks that they are current.
//!
//! - [`proto`]: the Rust code for the protobuf schemas in `proto/` (BDDF's descriptors), in
//!   `crates/robolog-bddf/src/proto/`.
//! - [`ros2_interfaces`]: robolog-msg's bundled standard ROS 2 interfaces, in
//!   `crates/robolog-msg/interfaces/`.
//!
//! `cargo xtask gen-proto` and `cargo xtask gen-ros2-interfaces` run the `robolog-codegen`
//! binary; this package's tests (part of `cargo xtask test`) fail when a committed file is not
//! what the generator makes. It is its own package so that xtask, which CI builds before
//! anything else, needs no dependencies.
//!
//! ```no_run
//! use std::path::Path;
//!
//! // Fails, naming the file, when the committed protobuf code is stale.
//! robolog_codegen::proto::run(Path::new("."), true)?;
//! # Ok::<(), String>(())
//! ```

#![allow(clippy::print_stdout)]

pub mod proto;
pub mod ros2_interfaces;

use std::path::{Path, PathBuf};

/// The workspace's root folder (this package's parent).
pub fn workspace_root() -> PathBuf {
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    package.parent().unwrap_or(package).to_path_buf()
}

/// The committed files are what the generators make now: CI runs these with `cargo xtask test`,
/// so a `.proto` change without `cargo xtask gen-proto` fails it.
#[cfg(test)]
mod committed_sources_are_current {
    use super::{proto, ros2_interfaces, workspace_root};

    #[test]
    fn protobuf_code() {
        if let Err(message) = proto::run(&workspace_root(), true) {
            panic!("{message}");
        }
    }

    /// The ROS 2 sources are git checkouts CI cannot reach: without them the check proves that
    /// every bundled definition parses, resolves and hashes, and that each bundle names its
    /// sources.
    #[test]
    fn bundled_ros2_interfaces() {
        let options = ros2_interfaces::Options {
            check: true,
            ..Default::default()
        };
        if let Err(message) = ros2_interfaces::run(&workspace_root(), &options) {
            panic!("{message}");
        }
    }
}
