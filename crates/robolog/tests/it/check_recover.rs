//! `check` and `recover` through one entry point each, on healthy and damaged files of every
//! format.

use robolog::{
    Bytes, Format, Input, Output, ProblemKind, Severity, check, check_bytes, open, open_bytes,
    recover, recover_file, recover_input, recover_reader,
};
use robolog_testkit::testdata;

#[test]
fn healthy_files_check_clean() {
    let mut files = testdata::files_with_extension("bags/generated", ".bag");
    files.retain(|p| {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        !name.contains("killed") && !name.contains("unindexed") && !name.starts_with("v12_")
    });
    files.extend(testdata::files_with_extension(
        "bags/upstream/swri-bag-reader-java",
        ".bag",
    ));
    files.push(testdata::path("bags/upstream/rosbag.js/example-bz2.bag"));
    files.push(testdata::path("samples/demo-zstd.mcap"));
    files.push(testdata::path("samples/demo-lz4.mcap"));
    files.push(testdata::path("bddf/sample.bddf"));
    files.push(testdata::path("bddf/golden_one_msg.bddf"));
    for path in files {
        let report = check(&path).unwrap();
        assert!(
            report.problems.is_empty(),
            "{}: {:?}",
            path.display(),
            report.problems
        );
        assert!(report.is_valid() && report.worst().is_none());
        assert!(report.messages > 0, "{}", path.display());
    }
    assert_eq!(
        check(testdata::path("bags/generated/ros_comm/ref_none.bag"))
            .unwrap()
            .messages,
        150
    );
    assert_eq!(
        check(testdata::path("samples/demo-zstd.mcap"))
            .unwrap()
            .messages,
        300
    );
    assert_eq!(
        check(testdata::path("bddf/sample.bddf")).unwrap().messages,
        14
    );
}

#[test]
fn damaged_files_are_reported_with_offsets() {
    // A killed recording: no index.
    let killed = check(testdata::path("bags/generated/ros_comm/v20_killed.bag")).unwrap();
    assert_eq!(killed.format, Format::Bag);
    assert!(
        killed.worst() >= Some(Severity::Warning),
        "{:?}",
        killed.problems
    );
    assert!(
        killed
            .problems
            .iter()
            .any(|p| p.kind == ProblemKind::Index && p.message.contains("no index"))
    );
    // The unterminated chunk of the killed recorder is a truncation.
    assert!(
        killed
            .problems
            .iter()
            .any(|p| p.kind == ProblemKind::Truncated
                && p.severity == Severity::Error
                && p.offset == Some(22805)),
        "{:?}",
        killed.problems
    );
    // A cut MCAP file: the cut chunk at 23287 and the missing summary.
    let cut = check(testdata::path("samples/demo-zstd-truncated.mcap")).unwrap();
    assert!(!cut.is_valid());
    assert!(
        cut.problems.iter().any(|p| p.severity == Severity::Error
            && p.kind == ProblemKind::Truncated
            && p.offset == Some(23287)),
        "{:?}",
        cut.problems
    );
    assert_eq!(cut.messages, 187);
    // BDDF: a flipped bit, a cut file.
    let flipped = check(testdata::path("bddf/sample-bitflip.bddf")).unwrap();
    assert!(!flipped.is_valid());
    assert!(
        flipped
            .problems
            .iter()
            .any(|p| p.kind == ProblemKind::Checksum && p.message.contains("checksum mismatch")),
        "{:?}",
        flipped.problems
    );
    let cut = check(testdata::path("bddf/sample-truncated.bddf")).unwrap();
    assert!(!cut.is_valid());
    assert_eq!(cut.messages, 12);
    assert!(
        cut.problems.iter().all(|p| p.offset.is_some()),
        "{:?}",
        cut.problems
    );
    assert!(
        cut.problems
            .iter()
            .any(|p| p.severity == Severity::Error && p.kind == ProblemKind::Truncated),
        "{:?}",
        cut.problems
    );
    // Problems come sorted by offset.
    let offsets: Vec<u64> = cut.problems.iter().filter_map(|p| p.offset).collect();
    assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn md5sums_that_do_not_match_their_definitions_are_warnings() {
    let bag = testdata::read("bags/generated/ros_comm/ref_none.bag");
    let (right, wrong) = (
        b"992ce8a1687cec8c8bd883ec73ca41d1",
        b"00000000000000000000000000000000",
    );
    let mut patched = bag.clone();
    let mut replaced = 0;
    for i in 0..patched.len() - right.len() {
        if &patched[i..i + right.len()] == right {
            patched[i..i + right.len()].copy_from_slice(wrong);
            replaced += 1;
        }
    }
    assert!(replaced >= 2);
    let report = check_bytes(Bytes::from(patched)).unwrap();
    assert!(report.is_valid());
    let warning = &report.problems[0];
    assert_eq!(
        (warning.severity, warning.kind),
        (Severity::Warning, ProblemKind::Schema)
    );
    assert!(
        warning.message.contains("md5sum 00000000000000000000000000000000 does not match its definition, whose md5sum is 992ce8a1687cec8c8bd883ec73ca41d1"),
        "{warning}"
    );
}

#[test]
fn recovery_of_every_format() {
    // The killed bag: 4 complete chunks (65 messages) and 11 messages of the cut one.
    let data = robolog_framing::read_file(testdata::path("bags/generated/ros_comm/v20_killed.bag"))
        .unwrap();
    let (report, finished) = recover(&data, Output::memory()).unwrap();
    assert_eq!(report.format, Format::Bag);
    assert_eq!(report.messages_recovered, 76);
    assert!(!report.lossless);
    assert_eq!(report.details["salvaged_messages"], 11);
    let bag = open_bytes(finished.data.unwrap()).unwrap();
    assert!(bag.problems().is_empty());
    assert_eq!(bag.summary().unwrap().message_count, 76);

    // The cut MCAP: at least the 187 streamable messages, the attachment and the metadata.
    let data =
        robolog_framing::read_file(testdata::path("samples/demo-zstd-truncated.mcap")).unwrap();
    let (report, finished) = recover(&data, Output::memory()).unwrap();
    assert!(report.messages_recovered >= 187, "{report:?}");
    assert_eq!(report.details["attachments_recovered"], 1);
    assert_eq!(report.details["metadata_recovered"], 1);
    assert!(!report.lossless);
    let mcap = open_bytes(finished.data.unwrap()).unwrap();
    assert!(mcap.problems().is_empty(), "{:?}", mcap.problems());
    assert_eq!(
        mcap.summary().unwrap().message_count,
        report.messages_recovered
    );

    // The cut BDDF: 12 complete blocks, the cut one lost.
    let data = robolog_framing::read_file(testdata::path("bddf/sample-truncated.bddf")).unwrap();
    let (report, finished) = recover(&data, Output::memory()).unwrap();
    assert_eq!((report.messages_recovered, report.messages_lost), (12, 1));
    assert!(!report.lossless);
    assert!(report.problems[0].offset.is_some());
    let bddf = open_bytes(finished.data.unwrap()).unwrap();
    assert!(bddf.problems().is_empty());
    assert!(
        check_bytes(Bytes::from(bddf.input().read_all().unwrap().to_vec()))
            .unwrap()
            .problems
            .is_empty()
    );

    // Intact files lose nothing.
    for file in [
        "bags/generated/ros_comm/ref_lz4.bag",
        "samples/demo-lz4.mcap",
        "bddf/sample.bddf",
    ] {
        let data = robolog_framing::read_file(testdata::path(file)).unwrap();
        let (report, _) = recover(&data, Output::memory()).unwrap();
        assert!(report.lossless, "{file}: {report:?}");
        assert_eq!(report.messages_lost, 0);
    }
    // A bag needs a seekable output.
    let data =
        robolog_framing::read_file(testdata::path("bags/generated/ros_comm/ref_lz4.bag")).unwrap();
    assert!(recover(&data, Output::stream(std::io::sink())).is_err());
}

#[test]
fn recovery_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.bag");
    std::fs::copy(
        testdata::path("bags/generated/ros_comm/v20_killed.bag"),
        &path,
    )
    .unwrap();
    let report = recover_file(&path, &path).unwrap();
    assert_eq!(report.messages_recovered, 76);
    assert_eq!(report.output_bytes, std::fs::metadata(&path).unwrap().len());
    assert_eq!(open(&path).unwrap().summary().unwrap().message_count, 76);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// What a recovery gave: its report and output, or its error.
fn outcome(
    result: robolog::Result<(robolog::RecoverReport, robolog::Finished)>,
) -> Result<robolog::RecoverReport, String> {
    result.map(|(report, _)| report).map_err(|e| e.to_string())
}

#[test]
fn a_log_recovers_alike_from_memory_by_position_and_from_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let mut logs: Vec<String> = ["bad/rosbag", "bad/bddf", "bad/mcap"]
        .iter()
        .flat_map(|folder| {
            std::fs::read_dir(testdata::path(folder))
                .unwrap()
                .map(move |entry| {
                    format!("{folder}/{}", entry.unwrap().file_name().to_str().unwrap())
                })
        })
        .filter(|name| !name.ends_with(".md"))
        .collect();
    for name in [
        "bags/generated/ros_comm/v20_killed.bag",
        "bags/generated/ros_comm/v20_unindexed.bag",
        "bags/generated/ros_comm/v12_unindexed.bag",
        "bags/generated/ros_comm/v12_noheader.bag",
        "bags/generated/ros_comm/ref_bz2.bag",
        "bddf/sample.bddf",
        "bddf/sample-truncated.bddf",
        "bddf/sample-bitflip.bddf",
        "samples/demo-zstd-truncated.mcap",
        "samples/demo-unchunked.mcap",
    ] {
        logs.push(name.to_owned());
    }
    logs.sort();
    let mut recovered = 0;
    for name in &logs {
        let path = testdata::path(name);
        let data = robolog_framing::read_file(&path).unwrap();
        let memory = recover(&data, Output::memory());
        let expected = memory
            .as_ref()
            .ok()
            .and_then(|(_, finished)| finished.data.clone());
        let memory = outcome(memory);

        let out = dir.path().join("by-position");
        let input = Input::open(&path).unwrap();
        assert!(input.in_memory().is_none());
        let by_position = outcome(recover_input(&input, Output::file(&out).unwrap()));
        assert_eq!(by_position, memory, "{name}: read by position");
        if let Some(expected) = &expected {
            assert!(
                std::fs::read(&out).unwrap() == *expected,
                "{name}: read by position"
            );
            recovered += 1;
        }

        let out = dir.path().join("piped");
        let file = std::fs::File::open(&path).unwrap();
        let piped = outcome(recover_reader(file, Output::file(&out).unwrap()));
        assert_eq!(piped, memory, "{name}: piped");
        if let Some(expected) = &expected {
            assert!(std::fs::read(&out).unwrap() == *expected, "{name}: piped");
        }
    }
    assert!(
        recovered >= 49,
        "{recovered} of {} logs recovered",
        logs.len()
    );
}
