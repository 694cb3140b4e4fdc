//! Recovery of damaged files beyond simple cuts: lost series descriptors, duplicate
//! descriptors, data of undeclared series.

use robolog_bddf::proto::MessageTypeDescriptor;
use robolog_bddf::{
    BddfReader, BddfWriter, Problem, ProblemKind, ReadOptions, SeriesOptions, Severity,
    StreamReader, recover, series_identifier,
};

/// The offsets and lengths of the blocks `report` says were not copied for `reason`, each
/// checked to be a warning of `kind`.
fn not_copied(problems: &[Problem], reason: &str, kind: ProblemKind) -> Vec<(u64, u64)> {
    problems
        .iter()
        .filter_map(|p| {
            let len = p
                .message
                .strip_prefix("block of ")?
                .strip_suffix(&format!(" bytes not copied: {reason}"))?;
            assert_eq!((p.severity, p.kind), (Severity::Warning, kind), "{p}");
            Some((p.offset.unwrap(), len.parse().unwrap()))
        })
        .collect()
}

/// Three series, two messages each, written in turns; returns the file and the offsets of the
/// three series descriptors.
fn three_series() -> (Vec<u8>, Vec<u64>) {
    let mut writer = BddfWriter::new(Vec::new()).unwrap();
    for name in ["a", "b", "c"] {
        writer
            .add_message_series(
                series_identifier("t", [("k", name)]),
                MessageTypeDescriptor::default(),
                SeriesOptions::default(),
            )
            .unwrap();
    }
    for round in 0..2 {
        for series in 0..3u32 {
            let text = format!("{series}:{round}");
            writer
                .write_message(series, i64::from(round), text.as_bytes())
                .unwrap();
        }
    }
    let file = writer.finish().unwrap();
    let reader = BddfReader::open(file.clone().into()).unwrap();
    let offsets = reader
        .series()
        .iter()
        .map(|s| s.descriptor_offset())
        .collect();
    (file, offsets)
}

fn payloads(file: &[u8]) -> Vec<(u32, String)> {
    StreamReader::new(file)
        .unwrap()
        .map(|b| {
            let b = b.unwrap();
            (b.series_index, String::from_utf8(b.data.to_vec()).unwrap())
        })
        .collect()
}

#[test]
fn lost_descriptor_drops_its_blocks_and_closes_the_gap() {
    let (file, offsets) = three_series();
    // Remove the descriptor of series 1 (it ends where series 2's begins).
    let mut damaged = file[..offsets[1] as usize].to_vec();
    damaged.extend_from_slice(&file[offsets[2] as usize..]);

    let mut out = Vec::new();
    let report = recover(&damaged, &mut out).unwrap();
    assert!(report.input_complete);
    assert_eq!(report.input_checksum_ok, Some(false));
    assert!(report.series_renumbered);
    assert_eq!(report.series_recovered, 2);
    assert_eq!(report.data_blocks_recovered, 4);
    assert_eq!(report.data_blocks_lost, 2);
    let undeclared = not_copied(
        &report.problems,
        "a data block of series 1, whose descriptor does not precede it",
        ProblemKind::Schema,
    );
    assert_eq!(undeclared.len(), 2);
    assert!(undeclared.iter().all(|&(offset, _)| offset > offsets[1]));
    assert_eq!(
        report.bytes_dropped,
        undeclared.iter().map(|&(_, len)| len).sum::<u64>()
    );
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.kind == ProblemKind::Checksum
                && p.severity == Severity::Error
                && p.message == "the input's SHA-1 checksum did not match")
    );

    // Series "c" is series 1 now, in its descriptor and its blocks.
    let strict = ReadOptions::new().strict(true);
    let reader = BddfReader::open_with(out.clone().into(), strict).unwrap();
    reader.verify_checksum().unwrap();
    let names: Vec<_> = reader
        .series()
        .iter()
        .map(|s| (s.index(), s.spec()["k"].clone()))
        .collect();
    assert_eq!(names, [(0, "a".to_owned()), (1, "c".to_owned())]);
    assert_eq!(
        payloads(&out),
        [
            (0, "0:0".to_owned()),
            (1, "2:0".to_owned()),
            (0, "0:1".to_owned()),
            (1, "2:1".to_owned()),
        ]
    );
}

#[test]
fn duplicate_descriptor_keeps_the_first() {
    let (file, offsets) = three_series();
    // Insert a second copy of series 0's descriptor before the first data block.
    let descriptor = &file[offsets[0] as usize..offsets[1] as usize];
    let end_of_descriptors = {
        let reader = BddfReader::open(file.clone().into()).unwrap();
        reader.block_entries(0).unwrap()[0].offset as usize
    };
    let mut damaged = file[..end_of_descriptors].to_vec();
    damaged.extend_from_slice(descriptor);
    damaged.extend_from_slice(&file[end_of_descriptors..]);

    let mut out = Vec::new();
    let report = recover(&damaged, &mut out).unwrap();
    assert_eq!(report.series_recovered, 3);
    assert_eq!(report.data_blocks_recovered, 6);
    assert_eq!(report.data_blocks_lost, 0);
    assert!(!report.series_renumbered);
    let duplicates = not_copied(
        &report.problems,
        "a second descriptor for series 0 (the first one is kept)",
        ProblemKind::Schema,
    );
    assert_eq!(
        duplicates,
        [(end_of_descriptors as u64, (offsets[1] - offsets[0]))]
    );
    // Without the stray copy, the file is the original one.
    assert!(out == file);
}
