//! Recovery of truncated and corrupt files, and the truncation sweep of every reader.

use robolog_mcap::{
    Bytes, LinearReader, McapReader, ReadOptions, Record, StreamReader, SummarySource,
    WriteOptions, recover,
};

const T0: u64 = 1_700_000_000_000_000_000;

fn sample(name: &str) -> Vec<u8> {
    robolog_testkit::testdata::read(format!("samples/{name}"))
}

/// Reads a recovered file through its index and checks that it is complete and valid.
fn read_back(out: Vec<u8>) -> McapReader {
    // The output streams cleanly with every CRC checked...
    let mut linear = LinearReader::new(Bytes::from(out.clone()));
    while let Some(record) = linear.next_record() {
        record.unwrap();
    }
    // ...and has a full summary.
    let reader = McapReader::open(Bytes::from(out)).unwrap();
    assert_eq!(reader.summary().source, SummarySource::SummarySection);
    reader
}

#[test]
fn truncated_sample_recovers_every_complete_message_attachment_and_metadata() {
    let (out, report) = recover(
        sample("demo-zstd-truncated.mcap"),
        Vec::new(),
        WriteOptions::default(),
    )
    .unwrap();
    assert!(report.messages_recovered >= 187, "{report:?}");
    assert_eq!(report.attachments_recovered, 1);
    assert_eq!(report.metadata_recovered, 1);
    assert!(report.truncated);
    assert!(!report.is_lossless());
    assert_eq!(report.chunks_recovered, 6);
    assert_eq!(report.chunks_partial, 1);
    assert!(
        report
            .damage
            .iter()
            .any(|d| d.offset == Some(23287) && d.kind == robolog_mcap::ProblemKind::Truncated),
        "{:?}",
        report.damage
    );

    let reader = read_back(out);
    let stats = reader.summary().statistics.clone().unwrap();
    assert_eq!(stats.message_count, report.messages_recovered);
    assert_eq!(stats.attachment_count, 1);
    assert_eq!(stats.metadata_count, 1);
    // The recovered messages are exactly the first ones the generator wrote, unchanged.
    for (i, m) in reader.messages().iter().unwrap().enumerate() {
        let m = m.unwrap();
        let i = i as u64;
        assert_eq!(m.log_time, T0 + i * 10_000_000);
        assert_eq!(m.publish_time, m.log_time - 1000);
        assert_eq!(m.channel_id, (i % 3 + 1) as u16);
        assert_eq!(u64::from(m.sequence), i / 3);
        if m.channel_id == 2 {
            assert_eq!(&m.data[4..], format!("hello world {i}").as_bytes());
        }
    }
    let attachment = reader.read_attachment(&reader.attachments()[0]).unwrap();
    assert_eq!(attachment.name, "calibration.json");
    let metadata = reader.read_metadata(&reader.metadata_indexes()[0]).unwrap();
    assert_eq!(metadata.metadata["robot_id"], "r2");
}

#[test]
fn intact_files_recover_losslessly() {
    for name in ["demo-zstd.mcap", "demo-lz4.mcap", "demo-unchunked.mcap"] {
        let (out, report) = recover(sample(name), Vec::new(), WriteOptions::default()).unwrap();
        assert!(report.is_lossless(), "{name}: {report:?}");
        assert_eq!(report.messages_recovered, 300);
        let reader = read_back(out);
        assert_eq!(reader.messages().iter().unwrap().count(), 300);
    }
}

/// Offsets of the top-level chunks of a file.
fn chunk_offsets(data: &[u8]) -> Vec<u64> {
    let reader = McapReader::open(Bytes::from(data.to_vec())).unwrap();
    reader
        .summary()
        .chunk_indexes
        .iter()
        .map(|c| c.chunk_start_offset)
        .collect()
}

#[test]
fn a_corrupt_chunk_loses_only_its_own_messages() {
    let mut data = sample("demo-zstd.mcap");
    let chunks = chunk_offsets(&data);
    // Messages of the fourth chunk: those read while the reader stands at the chunk's end.
    let index = McapReader::open(Bytes::from(data.clone()))
        .unwrap()
        .summary()
        .chunk_indexes[3]
        .clone();
    let chunk_end = index.chunk_start_offset + index.chunk_length;
    let mut linear = LinearReader::new(Bytes::from(data.clone()));
    let mut in_fourth = 0u64;
    while let Some(r) = linear.next_record() {
        if matches!(r.unwrap(), Record::Message(_)) && linear.position() == chunk_end {
            in_fourth += 1;
        }
    }
    assert!(in_fourth > 0);
    // Damage the compressed bytes in the middle of the fourth chunk.
    let at = chunks[3] as usize + 200;
    for b in &mut data[at..at + 16] {
        *b ^= 0x5A;
    }
    let (out, report) = recover(data.clone(), Vec::new(), WriteOptions::default()).unwrap();
    assert!(!report.is_lossless());
    assert!(
        report.damage.iter().any(|d| d.offset == Some(chunks[3])),
        "{:?}",
        report.damage
    );
    // Nine chunks are intact; what the fourth still yields may be kept (flagged), the rest of
    // its messages are counted from its message index.
    assert_eq!(report.chunks_recovered, 9, "{report:?}");
    assert_eq!(
        report.chunks_unverified + report.chunks_partial + report.chunks_lost,
        1
    );
    assert_eq!(
        report.messages_recovered + report.messages_lost,
        300,
        "{report:?}"
    );
    assert!(report.messages_unverified <= in_fourth, "{report:?}");
    assert!(report.messages_recovered >= 300 - in_fourth, "{report:?}");
    let reader = read_back(out);
    assert_eq!(
        reader.messages().iter().unwrap().count() as u64,
        report.messages_recovered
    );
}

#[test]
fn a_corrupt_chunk_length_is_skipped_and_reading_resumes() {
    let mut data = sample("demo-lz4.mcap");
    let chunks = chunk_offsets(&data);
    // The length of the second chunk now points far past the end of the file.
    let at = chunks[1] as usize + 1;
    data[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let (out, report) = recover(data.clone(), Vec::new(), WriteOptions::default()).unwrap();
    assert_eq!(report.chunks_recovered, 9, "{report:?}");
    assert!(report.messages_recovered >= 270, "{report:?}");
    assert_eq!(report.attachments_recovered, 1);
    assert_eq!(report.metadata_recovered, 1);
    let reader = read_back(out);
    assert_eq!(
        reader.messages().iter().unwrap().count() as u64,
        report.messages_recovered
    );
}

/// The number of messages a streaming read returns before its first error.
fn streamed_messages(prefix: &[u8]) -> (u64, Option<robolog_mcap::McapError>) {
    let mut reader = StreamReader::new(prefix);
    let mut n = 0;
    while let Some(record) = reader.next_record() {
        match record {
            Ok(Record::Message(_)) => n += 1,
            Ok(_) => {}
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}

#[test]
fn truncation_sweep() {
    for name in ["demo-zstd.mcap", "demo-lz4.mcap", "demo-unchunked.mcap"] {
        let data = sample(name);
        robolog_testkit::truncation::sweep(&data, 48, 211, |cut, prefix| {
            // Every cut is a truncation, reported as such, after every complete message.
            let (streamed, error) = streamed_messages(prefix);
            let error = error.ok_or("a cut file streamed without error")?;
            if !error.is_truncation() {
                return Err(format!("stream: not a truncation error: {error}"));
            }
            let mut linear = LinearReader::with_options(
                Bytes::copy_from_slice(prefix),
                ReadOptions::default().threads(0),
            );
            let mut linear_messages = 0;
            while let Some(r) = linear.next_record() {
                match r {
                    Ok(Record::Message(_)) => linear_messages += 1,
                    Ok(_) => {}
                    Err(e) if e.is_truncation() => break,
                    Err(e) => return Err(format!("linear: {e}")),
                }
            }
            if linear_messages != streamed {
                return Err(format!("linear read {linear_messages}, stream {streamed}"));
            }
            // The indexed reader opens what it can and never panics.
            if let Ok(reader) = McapReader::open(Bytes::copy_from_slice(prefix))
                && let Ok(iter) = reader.messages().iter()
            {
                let _ = iter.count();
            }
            // Recovery keeps at least what streaming saw, into a valid file.
            if cut >= 8 {
                let (out, report) = recover(
                    Bytes::copy_from_slice(prefix),
                    Vec::new(),
                    WriteOptions::default(),
                )
                .map_err(|e| format!("recover: {e}"))?;
                if report.messages_recovered < streamed {
                    return Err(format!(
                        "recovered {} < streamed {streamed}",
                        report.messages_recovered
                    ));
                }
                let reader = McapReader::open(Bytes::from(out)).map_err(|e| e.to_string())?;
                let n = reader.messages().iter().map_err(|e| e.to_string())?.count() as u64;
                if n != report.messages_recovered {
                    return Err(format!("output has {n} of {}", report.messages_recovered));
                }
            }
            Ok(())
        });
    }
}

#[test]
fn complete_messages_of_a_partly_written_chunk_are_saved() {
    // An uncompressed chunk cut in the middle: its first records are complete on disk.
    let full = sample("demo-uncompressed.mcap");
    let reader = McapReader::open(Bytes::from(full.clone())).unwrap();
    let chunk = reader.summary().chunk_indexes[6].clone();
    let cut = (chunk.chunk_start_offset + chunk.chunk_length / 2) as usize;
    let prefix = &full[..cut];
    let (streamed, error) = streamed_messages(prefix);
    assert!(error.unwrap().is_truncation());

    let (out, report) = recover(
        Bytes::copy_from_slice(prefix),
        Vec::new(),
        WriteOptions::default(),
    )
    .unwrap();
    assert!(report.truncated);
    assert_eq!(report.chunks_partial, 1, "{report:?}");
    assert!(
        report.messages_recovered > streamed,
        "the cut chunk gave nothing: {} <= {streamed}",
        report.messages_recovered
    );
    // What was saved is exactly the beginning of the original, message for message.
    let original: Vec<_> = reader
        .messages()
        .order(robolog_mcap::Order::File)
        .iter()
        .unwrap()
        .map(|m| m.unwrap())
        .collect();
    let recovered: Vec<_> = read_back(out)
        .messages()
        .order(robolog_mcap::Order::File)
        .iter()
        .unwrap()
        .map(|m| m.unwrap())
        .collect();
    assert_eq!(recovered.len() as u64, report.messages_recovered);
    assert_eq!(recovered[..], original[..recovered.len()]);
}

/// A file the `mcap_recover` fuzz target found (CI, 2026-11-26): what recovery writes, the
/// indexed reader reads whole, with the message count the report gives.
#[test]
fn fuzz_found_recovery_is_read_back_whole() {
    let data = Bytes::from_static(include_bytes!("regressions/recover-fuzz-crash.mcap"));
    for _ in 0..20 {
        let write = WriteOptions::new().threads(0);
        let Ok((out, report)) = recover(data.clone(), Vec::new(), write) else {
            panic!("recover refused the file");
        };
        let reader = McapReader::open_with(Bytes::from(out), ReadOptions::default().threads(0))
            .expect("the indexed reader opens the output");
        if report.messages_recovered > 0 {
            assert_eq!(reader.summary().source, SummarySource::SummarySection);
        }
        let count = reader
            .messages()
            .order(robolog_mcap::Order::File)
            .iter()
            .expect("the output can be queried")
            .inspect(|m| assert!(m.is_ok(), "every message of the output reads"))
            .count() as u64;
        assert_eq!(count, report.messages_recovered);
    }
}
