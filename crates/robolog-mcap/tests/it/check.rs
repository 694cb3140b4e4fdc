//! `check`: doctor-style problems, with offsets, on valid, damaged and inconsistent files.

use robolog_mcap::{
    Bytes, McapReader, ProblemKind, Severity, WriteOptions, check, check_with, recover,
};

fn sample(name: &str) -> Vec<u8> {
    robolog_testkit::testdata::read(format!("samples/{name}"))
}

fn errors(data: &[u8]) -> Vec<String> {
    check(data)
        .into_iter()
        .filter(|p| p.severity == Severity::Error)
        .map(|p| p.to_string())
        .collect()
}

#[test]
fn valid_samples_have_no_problems() {
    for name in [
        "demo-zstd.mcap",
        "demo-lz4.mcap",
        "demo-uncompressed.mcap",
        "demo-unchunked.mcap",
    ] {
        let problems = check(&sample(name));
        assert!(problems.is_empty(), "{name}: {problems:#?}");
    }
}

#[test]
fn fully_featured_conformance_files_have_no_errors() {
    for file in robolog_testkit::testdata::files_with_extension("mcap-conformance", ".mcap") {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let full = ["ch-", "chx", "mx", "rch", "rsh", "st"]
            .iter()
            .all(|f| name.contains(f));
        if full || !name.contains("-ch") {
            let data = std::fs::read(&file).unwrap();
            assert!(errors(&data).is_empty(), "{name}: {:#?}", errors(&data));
        }
    }
}

#[test]
fn out_of_order_log_times_warn_or_fail_when_strict() {
    let data = sample("demo-out-of-order-zstd.mcap");
    let problems = check(&data);
    assert!(!problems.is_empty());
    assert!(
        problems
            .iter()
            .all(|p| p.severity == Severity::Warning && p.kind == ProblemKind::Time),
        "{problems:#?}"
    );
    assert!(
        problems[0]
            .message
            .contains("is less than the latest log time"),
        "{}",
        problems[0]
    );
    let strict = check_with(
        &data,
        robolog_mcap::CheckOptions::new().strict_message_order(true),
    );
    assert!(
        strict
            .iter()
            .any(|p| p.severity == Severity::Error && p.kind == ProblemKind::Time)
    );
}

#[test]
fn truncated_file_reports_where_it_ends() {
    let e = errors(&sample("demo-zstd-truncated.mcap"));
    assert!(
        e.iter()
            .any(|m| m.contains("byte 23287") && m.contains("truncated")),
        "{e:#?}"
    );
    assert!(e.iter().any(|m| m.contains("no DataEnd")), "{e:#?}");
    assert!(e.iter().any(|m| m.contains("no Footer")), "{e:#?}");
    // Every error of a cut file is a truncation: the file ends where a record was expected.
    let problems = check(&sample("demo-zstd-truncated.mcap"));
    let cut = problems
        .iter()
        .find(|p| p.offset == Some(23287))
        .unwrap_or_else(|| panic!("{problems:#?}"));
    assert_eq!(
        (cut.severity, cut.kind),
        (Severity::Error, ProblemKind::Truncated)
    );
    assert!(
        problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .all(|p| p.kind == ProblemKind::Truncated),
        "{problems:#?}"
    );
}

#[test]
fn damage_is_reported_at_its_offset() {
    let original = sample("demo-uncompressed.mcap");
    let reader = McapReader::open(Bytes::from(original.clone())).unwrap();
    let chunk = reader.summary().chunk_indexes[2].chunk_start_offset;

    // A flipped byte inside an uncompressed chunk: chunk CRC, data-section CRC.
    let mut data = original.clone();
    data[chunk as usize + 300] ^= 1;
    let problems = check(&data);
    assert!(
        problems.iter().any(|p| p.offset == Some(chunk)
            && p.kind == ProblemKind::Checksum
            && p.message.contains("Chunk CRC mismatch")),
        "{problems:#?}"
    );
    assert!(problems.iter().any(
        |p| p.kind == ProblemKind::Checksum && p.message.contains("data section CRC mismatch")
    ));

    // A summary byte changed: summary CRC.
    let mut data = original.clone();
    let stats_at = reader
        .summary()
        .summary_offsets
        .iter()
        .find(|s| s.group_opcode == 0x0B)
        .unwrap()
        .group_start;
    data[stats_at as usize + 9] ^= 1; // message_count
    let e = errors(&data);
    assert!(
        e.iter().any(|m| m.contains("summary CRC mismatch")),
        "{e:#?}"
    );
    // Wrong statistics mislead a summary but lose no message: a warning.
    assert!(
        check(&data).iter().any(|p| p.severity == Severity::Warning
            && p.kind == ProblemKind::Index
            && p.message.contains("Statistics.message_count is 301")),
        "{e:#?}"
    );
}

#[test]
fn files_we_write_and_recover_are_clean() {
    for compression in [
        robolog_mcap::Compression::None,
        robolog_mcap::Compression::Lz4,
        robolog_mcap::Compression::Zstd,
    ] {
        let opts = WriteOptions::new()
            .compression(compression)
            .chunk_size(Some(2048));
        let (out, _) = recover(sample("demo-zstd.mcap"), Vec::new(), opts).unwrap();
        let problems = check(&out);
        assert!(problems.is_empty(), "{compression:?}: {problems:#?}");
    }
}

#[test]
fn a_chunk_over_the_limit_is_reported_without_decoding_it() {
    let bomb = robolog_testkit::testdata::read("bad/mcap/zstd-bomb.mcap");
    let limited = robolog_mcap::CheckOptions::new().max_chunk_size(16 << 20);
    let problems = check_with(&bomb, limited);
    let chunk = problems
        .iter()
        .find(|p| p.message.starts_with("Chunk does not decompress"))
        .unwrap_or_else(|| panic!("{problems:?}"));
    assert_eq!(
        (chunk.severity, chunk.kind, chunk.offset),
        (Severity::Error, ProblemKind::Malformed, Some(44))
    );
    // Under the default 4 GiB limit the honest 64 MiB chunk decodes.
    let unlimited = check_with(&bomb, robolog_mcap::CheckOptions::default());
    assert!(
        !unlimited
            .iter()
            .any(|p| p.message.starts_with("Chunk does not decompress")),
        "{unlimited:?}"
    );
}

/// Checks `data` streamed from an input read by position: the problems and the message count
/// of the check of the same bytes in memory, and the ranges read.
fn streamed(data: &[u8]) -> (robolog_mcap::Checked, Vec<std::ops::Range<u64>>) {
    let reads = std::sync::Arc::default();
    let input = robolog_query::Input::new(crate::support::ByPosition {
        data: Bytes::copy_from_slice(data),
        reads: std::sync::Arc::clone(&reads),
    });
    assert!(input.in_memory().is_none());
    let checked = robolog_mcap::check_input(&input, robolog_mcap::CheckOptions::new()).unwrap();
    let in_memory = robolog_mcap::check_input(
        &robolog_query::Input::from(data.to_vec()),
        robolog_mcap::CheckOptions::new(),
    )
    .unwrap();
    assert_eq!(checked, in_memory);
    assert_eq!(checked.problems, check(data));
    let reads = reads.lock().unwrap().clone();
    (checked, reads)
}

#[test]
fn a_file_read_by_position_is_checked_in_one_pass_with_the_same_findings() {
    let mut files: Vec<(String, Vec<u8>)> = [
        "demo-zstd.mcap",
        "demo-lz4.mcap",
        "demo-uncompressed.mcap",
        "demo-unchunked.mcap",
        "demo-out-of-order-zstd.mcap",
        "demo-zstd-truncated.mcap",
    ]
    .iter()
    .map(|name| (name.to_string(), sample(name)))
    .collect();
    for file in robolog_testkit::testdata::files_with_extension("mcap-conformance", ".mcap") {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        files.push((name, std::fs::read(&file).unwrap()));
    }
    for hostile in crate::bad_files::generate() {
        files.push((hostile.name, hostile.bytes));
    }
    // Each file is read once, front to back, in one piece (they are small); a valid one is
    // read that way and in no other.
    for (name, data) in &files {
        let (checked, reads) = streamed(data);
        let whole = 0..data.len() as u64;
        if !data.is_empty() {
            assert_eq!(reads.first(), Some(&whole), "{name}");
        }
        if checked.problems.is_empty() {
            assert_eq!(reads, [whole], "{name}");
        }
    }
    // On a valid file, every message a reader reads is counted.
    for name in ["demo-zstd.mcap", "demo-unchunked.mcap"] {
        let demo = sample(name);
        let read = robolog_mcap::LinearReader::new(Bytes::from(demo.clone()))
            .into_messages()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
            .len();
        assert_eq!(streamed(&demo).0.messages, read as u64, "{name}");
        assert!(read > 0);
    }
    // Damage anywhere (a cut, a flipped byte, bytes appended) is found as in memory.
    for (name, data) in files.iter().filter(|(n, _)| n.starts_with("demo-")) {
        let len = data.len();
        for at in (0..len)
            .step_by(len / 40 + 1)
            .chain([len - 1, len - 8, len - 30])
        {
            let _ = streamed(&data[..at]);
            let mut flipped = data.clone();
            flipped[at] ^= 0x20;
            let _ = streamed(&flipped);
        }
        let _ = streamed(&[data.as_slice(), b"more"].concat());
        let (checked, _) = streamed(&[data.as_slice(), b"\x89MCAP0\r\nmore"].concat());
        assert!(!checked.problems.is_empty(), "{name}");
    }
}
