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
