//! Interop: MCAP files converted from bags by robolog, read by the official Python `mcap`
//! reader with its ROS 1 decoder (`mcap-ros1-support`), decode to the values `rosbags` gives
//! from the source bags (tests/it/interop/compare_ros1.py; venv from scripts/interop-venv.sh).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use robolog::{ConvertOptions, Format, Output, WriterOptions, convert, create_writer, open};
use robolog_testkit::{interop, testdata};

/// Bags rosbags reads (testdata/bags/README.md), and for each the bag rosbags compares with:
/// itself, or for the 1.2 bags (which rosbags cannot read) the same messages reindexed to 2.0.
fn pairs() -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for bag in testdata::files_with_extension("bags", ".bag") {
        let name = bag.file_name().unwrap().to_string_lossy().into_owned();
        let skip = [
            "empty-file.bag",
            "dummy.bag",
            "v20_killed.bag",
            "v20_unindexed.bag",
        ];
        if skip.contains(&name.as_str()) {
            continue;
        }
        let reference = if name.starts_with("v12_") && name != "v12_noheader_reindexed.bag" {
            testdata::path("bags/generated/ros_comm/v12_noheader_reindexed.bag")
        } else {
            bag.clone()
        };
        out.push((bag, reference));
    }
    out
}

#[test]
fn our_mcap_decodes_like_rosbags_reads_the_bag() {
    let Some(python) = interop::python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<OsString> = Vec::new();
    let pairs = pairs();
    assert!(pairs.len() >= 35, "{}", pairs.len());
    for (i, (bag, reference)) in pairs.iter().enumerate() {
        let log = open(bag).unwrap();
        let target = dir.path().join(format!("{i}.mcap"));
        let mut writer = create_writer(
            Output::file(&target).unwrap(),
            WriterOptions::default_for(Format::Mcap).unwrap(),
        )
        .unwrap();
        convert(&log, &mut *writer, ConvertOptions::new()).unwrap();
        writer.finish().unwrap();
        args.push(reference.clone().into_os_string());
        args.push(target.into_os_string());
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/interop/compare_ros1.py");
    let args: Vec<&std::ffi::OsStr> = args.iter().map(OsString::as_os_str).collect();
    let output = interop::run(&python, &script, &args).unwrap_or_else(|e| panic!("{e}"));
    let mut total = 0;
    for line in output.lines() {
        let result: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(result["mismatches"], serde_json::json!([]), "{line}");
        assert_eq!(result["messages"], result["mcap_messages"], "{line}");
        total += result["messages"].as_u64().unwrap();
    }
    assert_eq!(output.lines().count(), pairs.len());
    // Every message of every bag: example-bz2's 8647, 150 in each generated bag, …
    assert!(total > 10_000, "{total}");
}
