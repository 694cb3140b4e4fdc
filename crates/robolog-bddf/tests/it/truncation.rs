//! Cut files: the golden file at every byte (expected results from `specs/bddf.md` section 15)
//! and the reference sample at every byte, through the streaming reader, the indexed reader
//! (with and without its scan fallback) and recovery.

use robolog_bddf::{BddfReader, DataBlock, Error, IndexSource, ReadOptions, StreamReader, recover};
use robolog_testkit::{testdata, truncation};

const STRICT: ReadOptions = ReadOptions::new().verify_checksum(true).strict(true);

/// Reads a stream to its end: the blocks, and the error that ended it (if any).
fn stream(prefix: &[u8]) -> Result<(Vec<DataBlock>, Option<Error>), Error> {
    let mut reader = StreamReader::new(prefix)?;
    let mut blocks = Vec::new();
    loop {
        match reader.next_block() {
            Ok(Some(block)) => blocks.push(block),
            Ok(None) => return Ok((blocks, None)),
            Err(e) => {
                // The reader stops after an error.
                assert!(reader.next_block().unwrap().is_none());
                return Ok((blocks, Some(e)));
            }
        }
    }
}

/// Every item of a whole-file iteration: the blocks, then the error it ended with.
fn indexed(reader: &BddfReader) -> (Vec<DataBlock>, Option<Error>) {
    let mut blocks = Vec::new();
    let mut last = None;
    for item in reader.blocks() {
        assert!(last.is_none(), "an error must be the last item");
        match item {
            Ok(block) => blocks.push(block),
            Err(e) => last = Some(e),
        }
    }
    (blocks, last)
}

/// A recovered file must be complete and valid on its own: strict open, checksum, stream.
fn check_recovered(file: &[u8]) -> Vec<DataBlock> {
    let reader = BddfReader::open_with(file.to_vec().into(), STRICT)
        .map_err(|e| format!("recovered file does not open: {e}"))
        .unwrap();
    reader.verify_checksum().unwrap();
    let (blocks, error) = indexed(&reader);
    assert!(error.is_none(), "{error:?}");
    let (streamed, error) = stream(file).unwrap();
    assert!(error.is_none(), "{error:?}");
    assert_eq!(blocks, streamed);
    blocks
}

fn truncation_at(error: &Error) -> (u64, &'static str, u64) {
    match error {
        Error::Truncated {
            offset,
            what,
            complete_data_blocks,
            ..
        } => (*offset, *what, *complete_data_blocks),
        other => panic!("expected a truncation, got {other}"),
    }
}

#[test]
fn golden_file_cut_at_every_byte() {
    let golden = testdata::read("bddf/golden_one_msg.bddf");
    assert_eq!(golden.len(), 269);
    truncation::sweep(&golden, golden.len(), 1, |cut, prefix| {
        // Streaming reader.
        match cut {
            0..4 => {
                let err = StreamReader::new(prefix).unwrap_err();
                assert!(err.is_truncation(), "{err}");
            }
            4..32 => {
                let err = StreamReader::new(prefix).unwrap_err();
                assert_eq!(truncation_at(&err).0, 4);
            }
            _ => {
                let (blocks, error) = stream(prefix).map_err(|e| e.to_string())?;
                let error = error.ok_or("a cut stream must end with an error")?;
                let (offset, what, complete) = truncation_at(&error);
                let expected_blocks = usize::from(cut >= 136);
                assert_eq!(blocks.len(), expected_blocks);
                assert_eq!(complete, expected_blocks as u64);
                if let Some(block) = blocks.first() {
                    assert_eq!(&block.data[..], b"hello");
                }
                match cut {
                    32..109 => assert_eq!(offset, 32),
                    109 => assert_eq!((offset, what), (109, "block header")),
                    110..117 => assert_eq!((offset, what), (109, "block header")),
                    117..136 => assert_eq!((offset, what), (109, "data block")),
                    136..164 => assert_eq!(offset, 136),
                    164..229 => assert_eq!(offset, 164),
                    _ => assert_eq!(offset, 229),
                }
            }
        }

        // Indexed reader: without the scan fallback a cut file never opens.
        let err = BddfReader::open_with(prefix.to_vec().into(), STRICT).unwrap_err();
        assert!(err.is_truncation() || cut < 4, "cut {cut}: {err}");
        match BddfReader::open(prefix.to_vec().into()) {
            Err(Error::NotBddf { .. }) => assert!(cut < 4),
            Err(e) => {
                assert!(cut < 32, "cut {cut}: {e}");
                assert_eq!(truncation_at(&e).0, 4);
            }
            Ok(reader) => {
                assert!(cut >= 32);
                assert!(matches!(reader.index_source(), IndexSource::Scan { .. }));
                assert_eq!(reader.series().len(), usize::from(cut >= 109));
                let (blocks, error) = indexed(&reader);
                assert_eq!(blocks.len(), usize::from(cut >= 136));
                assert!(error.is_some_and(|e| e.is_truncation()));
            }
        }

        // Recovery.
        let mut out = Vec::new();
        match recover(prefix, &mut out) {
            Err(Error::NotBddf { .. }) => assert!(cut < 4),
            Err(e) => return Err(format!("recover failed: {e}")),
            Ok(report) => {
                let blocks = check_recovered(&out);
                assert_eq!(report.output_len, out.len() as u64);
                assert_eq!(report.file_descriptor_rebuilt, cut < 32);
                assert_eq!(report.series_recovered, usize::from(cut >= 109));
                assert_eq!(report.data_blocks_recovered, u64::from(cut >= 136));
                assert_eq!(blocks.len(), usize::from(cut >= 136));
                assert_eq!(
                    report.data_blocks_lost,
                    u64::from((117..136).contains(&cut))
                );
                assert!(!report.input_complete);
                assert!(report.stopped.as_ref().is_some_and(Error::is_truncation));
                if cut >= 136 {
                    // Everything the file holds survived: it comes back byte for byte.
                    assert!(
                        out == golden,
                        "cut {cut}: recovered file differs from the golden one"
                    );
                    // The incomplete index block is dropped (complete ones are rebuilt).
                    let last_complete_index_block_end = match cut {
                        229.. => 229,
                        164.. => 164,
                        _ => 136,
                    };
                    assert_eq!(
                        report.bytes_dropped,
                        (cut - last_complete_index_block_end) as u64
                    );
                }
            }
        }
        Ok(())
    });
}

/// Data blocks of `sample.bddf` from the reference tools' listing (sample.txt): offset and
/// end (header + size field + 4).
const SAMPLE_BLOCKS: &[(u64, u64)] = &[
    (636, 676),
    (676, 715),
    (715, 751),
    (751, 801),
    (801, 843),
    (843, 882),
    (882, 932),
    (932, 974),
    (974, 1013),
    (1013, 1051),
    (1233, 1275),
    (1460, 1518),
    (1518, 1580),
    (1580, 1611),
];

/// Series descriptor blocks of `sample.bddf` (sample.txt): offset and end.
const SAMPLE_SERIES: &[(u64, u64)] = &[
    (98, 261),
    (261, 349),
    (349, 434),
    (434, 548),
    (548, 636),
    (1051, 1233),
    (1275, 1460),
];

#[test]
fn sample_cut_at_every_byte() {
    let sample = testdata::read("bddf/sample.bddf");
    let full = BddfReader::open(sample.clone().into()).unwrap();
    let all: Vec<DataBlock> = full.blocks().collect::<Result<_, _>>().unwrap();
    assert_eq!(all.len(), SAMPLE_BLOCKS.len());
    let same_content = |a: &DataBlock, b: &DataBlock| {
        (
            a.series_index,
            a.timestamp_ns,
            &a.additional_indexes,
            &a.data,
        ) == (
            b.series_index,
            b.timestamp_ns,
            &b.additional_indexes,
            &b.data,
        )
    };

    truncation::sweep(&sample, sample.len(), 1, |cut, prefix| {
        let cut64 = cut as u64;
        let complete = SAMPLE_BLOCKS.iter().filter(|b| b.1 <= cut64).count();
        let series = SAMPLE_SERIES.iter().filter(|s| s.1 <= cut64).count();
        if cut < 4 {
            assert!(recover(prefix, Vec::new()).is_err());
            return Ok(());
        }

        if cut >= 98 {
            let (blocks, error) = stream(prefix).map_err(|e| e.to_string())?;
            assert_eq!(blocks.len(), complete);
            assert!(blocks.iter().zip(&all).all(|(a, b)| a == b));
            let (_, _, counted) = truncation_at(&error.ok_or("no truncation error")?);
            assert_eq!(counted, complete as u64);

            let reader = BddfReader::open(prefix.to_vec().into()).map_err(|e| e.to_string())?;
            let (blocks, error) = indexed(&reader);
            assert_eq!(blocks.len(), complete);
            assert!(blocks.iter().zip(&all).all(|(a, b)| a == b));
            assert!(error.is_some_and(|e| e.is_truncation()));
        } else {
            assert!(StreamReader::new(prefix).unwrap_err().is_truncation());
        }

        let mut out = Vec::new();
        let report = recover(prefix, &mut out).map_err(|e| e.to_string())?;
        assert_eq!(report.series_recovered, series);
        assert_eq!(report.data_blocks_recovered, complete as u64);
        let blocks = check_recovered(&out);
        assert_eq!(blocks.len(), complete);
        assert!(blocks.iter().zip(&all).all(|(a, b)| same_content(a, b)));
        let in_data_block = SAMPLE_BLOCKS
            .iter()
            .any(|&(start, end)| start + 8 <= cut64 && cut64 < end);
        assert_eq!(report.data_blocks_lost, u64::from(in_data_block));
        Ok(())
    });
}

#[test]
fn sample_cuts_from_the_reference_experiments() {
    // sample.txt: how many data blocks the reference streaming reader returned before failing.
    // At 700 it returned the cut block as a short one; we return only the complete one.
    let sample = testdata::read("bddf/sample.bddf");
    for (cut, blocks, stop_offset) in [
        (2521, 14, 2521),
        (1280, 11, 1275),
        (700, 1, 676),
        (303, 0, 261),
    ] {
        let (read, error) = stream(&sample[..cut]).unwrap();
        assert_eq!(read.len(), blocks, "cut {cut}");
        assert_eq!(truncation_at(&error.unwrap()).0, stop_offset, "cut {cut}");
    }
}

#[test]
fn sample_truncated_recovers_every_complete_block() {
    let cut = testdata::read("bddf/sample-truncated.bddf");
    let sample = testdata::read("bddf/sample.bddf");
    assert_eq!(cut.len(), 1536);
    assert_eq!(cut[..], sample[..1536]);

    let mut out = Vec::new();
    let report = recover(&cut, &mut out).unwrap();
    assert_eq!(report.series_recovered, 7);
    assert_eq!(report.data_blocks_recovered, 12);
    assert_eq!(report.data_blocks_lost, 1);
    assert_eq!(report.bytes_dropped, 1536 - 1518);
    assert_eq!(
        truncation_at(report.stopped.as_ref().unwrap()),
        (1518, "data block", 12)
    );
    let blocks = check_recovered(&out);
    let offsets_in_original: Vec<u64> = SAMPLE_BLOCKS[..12].iter().map(|b| b.0).collect();
    // Nothing before the cut moved: the blocks keep their offsets.
    assert_eq!(
        blocks.iter().map(|b| b.offset).collect::<Vec<_>>(),
        offsets_in_original
    );

    // The indexed reader reads the cut file by walking it, and says so.
    let reader = BddfReader::open(cut.into()).unwrap();
    let IndexSource::Scan { reason, stopped } = reader.index_source() else {
        panic!("expected a scan")
    };
    assert!(matches!(reason, Error::NoTrailer { file_len: 1536 }));
    assert_eq!(truncation_at(stopped.as_ref().unwrap()).0, 1518);
    assert_eq!(reader.series().len(), 7);
    assert_eq!(reader.series_by_index(1).unwrap().block_count(), 0);
    assert_eq!(reader.series_by_index(0).unwrap().block_count(), 3);
}

#[test]
fn recovering_a_complete_file_gives_it_back() {
    for name in ["bddf/golden_one_msg.bddf", "bddf/sample.bddf"] {
        let file = testdata::read(name);
        let mut out = Vec::new();
        let report = recover(&file, &mut out).unwrap();
        assert!(report.input_complete);
        assert_eq!(report.input_checksum_ok, Some(true));
        assert!(report.stopped.is_none());
        assert_eq!(report.bytes_dropped, 0);
        assert!(out == file, "{name}");
    }
}
