//! The files `robolog convert` writes, read by the reference tools (PyPI rosbags 0.11.9 for
//! bags, the official Python mcap 1.6.0 for MCAP), hold the same messages as the input read by
//! the reference tools: topic, log time and payload bytes (tests/it/interop/messages.py; venv from
//! scripts/interop-venv.sh).

use std::ffi::OsStr;
use std::path::Path;

use crate::support::robolog;
use robolog_testkit::{interop, testdata};

/// The messages of `file` as the reference reader sees them, sorted; `topic` keeps one.
fn reference_messages(python: &Path, file: &Path, topic: Option<&str>) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/interop/messages.py");
    let out = interop::run(python, &script, &[file.as_os_str()]).unwrap();
    out.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| topic.is_none_or(|t| l.split('\t').next() == Some(t)))
        .map(str::to_owned)
        .collect()
}

#[test]
fn converted_files_read_the_same_in_the_reference_tools() {
    let Some(python) = interop::python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();

    // A real bz2 bag to MCAP (zstd chunks by default).
    let bag = testdata::path("bags/upstream/rosbag.js/example-bz2.bag");
    let mcap = dir.path().join("turtles.mcap");
    robolog([OsStr::new("convert"), bag.as_os_str(), mcap.as_os_str()]).expect(0);
    let expected = reference_messages(&python, &bag, None);
    assert_eq!(expected.len(), 8647);
    assert_eq!(reference_messages(&python, &mcap, None), expected);

    // MCAP's ros1 channel to a bz2 bag, and the same to an lz4 MCAP.
    let source = testdata::path("samples/demo-zstd.mcap");
    let expected = reference_messages(&python, &source, Some("/chatter"));
    assert_eq!(expected.len(), 100);
    for (name, compression) in [("chatter.bag", "bz2"), ("chatter.mcap", "lz4")] {
        let out = dir.path().join(name);
        robolog([
            OsStr::new("convert"),
            source.as_os_str(),
            out.as_os_str(),
            OsStr::new("--topic"),
            OsStr::new("/chatter"),
            OsStr::new("--compression"),
            OsStr::new(compression),
        ])
        .expect(0);
        assert_eq!(reference_messages(&python, &out, None), expected, "{name}");
    }

    // A cut MCAP recovered: every message the reference reader gets from the intact file's
    // first six chunks.
    let cut = testdata::path("samples/demo-zstd-truncated.mcap");
    let rescued = dir.path().join("rescued.mcap");
    robolog([OsStr::new("recover"), cut.as_os_str(), rescued.as_os_str()]).expect(3);
    let recovered = reference_messages(&python, &rescued, None);
    assert_eq!(recovered.len(), 187);
    let whole = reference_messages(&python, &testdata::path("samples/demo-zstd.mcap"), None);
    assert!(recovered.iter().all(|m| whole.contains(m)));
}

/// The messages of a ROS 2 MCAP file as rosbags' rosbag2 reader sees them, sorted.
fn rosbag2_messages(python: &Path, file: &Path) -> Result<Vec<String>, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/interop/rosbag2_messages.py");
    let out = interop::run(python, &script, &[file.as_os_str()]).map_err(|e| e.to_string())?;
    Ok(out
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(str::to_owned)
        .collect())
}

#[test]
fn ros2_recordings_stay_readable_by_rosbags_after_convert_and_merge() {
    let Some(python) = interop::python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let talker = testdata::path("rosbag2/mcap-talker/talker.mcap");
    let other = testdata::path("rosbag2/mcap-convert_a/rewriter_a_0.mcap");
    let expected = rosbag2_messages(&python, &talker).unwrap();
    assert_eq!(expected.len(), 20);
    // Converted with other settings: rosbags needs the `ros2` profile to read it at all.
    let converted = dir.path().join("talker.mcap");
    robolog([
        OsStr::new("convert"),
        talker.as_os_str(),
        converted.as_os_str(),
        OsStr::new("--compression"),
        OsStr::new("lz4"),
    ])
    .expect(0);
    assert_eq!(rosbag2_messages(&python, &converted).unwrap(), expected);
    // Two ROS 2 recordings merged.
    let merged = dir.path().join("merged.mcap");
    robolog([
        OsStr::new("merge"),
        talker.as_os_str(),
        other.as_os_str(),
        OsStr::new("-o"),
        merged.as_os_str(),
    ])
    .expect(0);
    let mut both = expected.clone();
    both.extend(rosbag2_messages(&python, &other).unwrap());
    both.sort();
    assert_eq!(rosbag2_messages(&python, &merged).unwrap(), both);
}
