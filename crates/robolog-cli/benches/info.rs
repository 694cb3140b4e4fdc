//! `robolog info` on indexed files of two sizes, per format: the answer comes from the index,
//! so the time should not grow with the data (bags: it grows with the chunk count, one chunk
//! header read each; BDDF: with the block count, since its index lists every block).
//!
//! The inputs are made with the tool itself from the bundled turtlesim bag: once, and merged
//! `SCALE` times (uncompressed). Each sample runs the binary, as a user would.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};

/// Copies of example-bz2.bag (8647 messages, 726 KB uncompressed) in the large files.
const SCALE: usize = 100;

fn robolog(args: &[&std::ffi::OsStr]) {
    let status = Command::new(env!("CARGO_BIN_EXE_robolog"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "robolog {args:?}: {status}");
}

fn make_inputs(dir: &Path) -> Vec<(String, PathBuf)> {
    let bag = robolog_testkit::testdata::path("bags/upstream/rosbag.js/example-bz2.bag");
    let small = dir.join("small.mcap");
    let large = dir.join("large.mcap");
    robolog(&[
        "convert".as_ref(),
        bag.as_os_str(),
        small.as_os_str(),
        "--compression".as_ref(),
        "none".as_ref(),
    ]);
    let mut args: Vec<&std::ffi::OsStr> = vec!["merge".as_ref()];
    args.extend(std::iter::repeat_n(bag.as_os_str(), SCALE));
    args.extend([
        "-o".as_ref(),
        large.as_os_str(),
        "--compression".as_ref(),
        "none".as_ref(),
    ]);
    robolog(&args);
    let mut inputs = Vec::new();
    for (size, mcap) in [("small", &small), ("large", &large)] {
        for extension in ["mcap", "bag", "bddf"] {
            let path = dir.join(format!("{size}.{extension}"));
            if extension != "mcap" {
                robolog(&["convert".as_ref(), mcap.as_os_str(), path.as_os_str()]);
            }
            let bytes = std::fs::metadata(&path).unwrap().len();
            inputs.push((
                format!("{extension}/{size} ({:.1} MB)", bytes as f64 / 1e6),
                path,
            ));
        }
    }
    inputs
}

fn info(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let inputs = make_inputs(dir.path());
    let mut group = c.benchmark_group("info");
    group.sample_size(10);
    for (name, path) in &inputs {
        group.bench_function(name.as_str(), |b| {
            b.iter(|| robolog(&["info".as_ref(), path.as_os_str()]));
        });
    }
    group.finish();
}

criterion_group!(benches, info);
criterion_main!(benches);
