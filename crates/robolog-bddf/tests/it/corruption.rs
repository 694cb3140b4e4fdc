//! Damaged files: flipped bits are caught (by the SHA-1 when nothing else notices), hostile
//! lengths allocate nothing, and arbitrary bytes never make a reader panic or hang.

use proptest::prelude::*;
use robolog_bddf::{
    BddfReader, Error, IndexSource, ReadOptions, StreamOptions, StreamReader, recover,
};
use robolog_testkit::testdata;
use sha1::{Digest, Sha1};

const SAMPLE_DIGEST: &str = "f5a0f012db95a93137bde3f0fa73991a9156ae31";

fn sha1_hex(bytes: &[u8]) -> String {
    Sha1::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Reads a whole stream; `Ok` only when it ended cleanly at a verified trailer.
fn stream_all(file: &[u8]) -> Result<usize, Error> {
    let mut count = 0;
    for block in StreamReader::new(file)? {
        block?;
        count += 1;
    }
    Ok(count)
}

/// Opens and reads every block through the index; `Ok` only when nothing was wrong.
fn indexed_all(file: &[u8]) -> Result<usize, Error> {
    let reader = BddfReader::open(file.to_vec().into())?;
    let mut count = 0;
    for block in reader.blocks() {
        block?;
        count += 1;
    }
    Ok(count)
}

#[test]
fn flipped_payload_byte_is_a_checksum_mismatch_naming_both_digests() {
    let mut file = testdata::read("bddf/sample.bddf");
    // A byte of the float64 payload of the data block at 1518 (payload at 1540..1580).
    file[1550] ^= 0x01;
    let actual = sha1_hex(&file[..file.len() - 24]);

    let mut reader = StreamReader::new(&file[..]).unwrap();
    let mut blocks = 0;
    let err = loop {
        match reader.next_block() {
            Ok(Some(_)) => blocks += 1,
            Ok(None) => panic!("the damaged file read as intact"),
            Err(e) => break e,
        }
    };
    assert_eq!(blocks, 14, "every block is read before the trailer");
    let Error::ChecksumMismatch {
        expected,
        actual: got,
    } = &err
    else {
        panic!("expected a checksum mismatch, got {err}")
    };
    assert_eq!(expected.to_string(), SAMPLE_DIGEST);
    assert_eq!(got.to_string(), actual);
    let message = err.to_string();
    assert!(
        message.contains(SAMPLE_DIGEST) && message.contains(&actual),
        "{message}"
    );

    // The indexed reader: the whole-file iteration ends with the same error.
    let reader = BddfReader::open(file.clone().into()).unwrap();
    let items: Vec<_> = reader.blocks().collect();
    assert_eq!(items.len(), 15);
    assert!(items[..14].iter().all(Result::is_ok));
    assert!(matches!(&items[14], Err(Error::ChecksumMismatch { .. })));
    let items: Vec<_> = reader.blocks_by_time().collect();
    assert!(matches!(
        items.last(),
        Some(Err(Error::ChecksumMismatch { .. }))
    ));
    assert!(matches!(
        reader.verify_checksum(),
        Err(Error::ChecksumMismatch { .. })
    ));
    // Reading one series does not hash the file; skipping verification is an option.
    assert!(reader.series_blocks(1, ..).unwrap().all(|b| b.is_ok()));
    let unchecked = BddfReader::open_with(
        file.clone().into(),
        ReadOptions::new().verify_checksum(false),
    )
    .unwrap();
    assert!(unchecked.blocks().all(|b| b.is_ok()));
    let unchecked = StreamOptions::new().verify_checksum(false);
    let read: Result<Vec<_>, _> = StreamReader::with_options(&file[..], unchecked)
        .unwrap()
        .collect();
    assert_eq!(read.unwrap().len(), 14);
}

#[test]
fn the_bitflip_test_file() {
    let file = testdata::read("bddf/sample-bitflip.bddf");
    let sample = testdata::read("bddf/sample.bddf");
    let flipped: Vec<usize> = (0..file.len()).filter(|&i| file[i] != sample[i]).collect();
    // The flip is in the header of the series descriptor at 1275: its size grows by 2^46.
    assert_eq!(flipped, [1280]);

    // The stream cannot get past the absurd block size (an error that is not a truncation), but
    // it hashes the rest of the file: a checksum mismatch naming both digests follows, and no
    // block after the damage is returned.
    let items: Vec<_> = StreamReader::new(&file[..]).unwrap().collect();
    assert_eq!(items.iter().filter(|i| i.is_ok()).count(), 11);
    let damage = items[11].as_ref().unwrap_err();
    assert!(!damage.is_truncation(), "{damage}");
    assert!(damage.to_string().contains("limit"), "{damage}");
    let Some(Err(Error::ChecksumMismatch { expected, actual })) = items.get(12) else {
        panic!("expected a checksum mismatch, got {:?}", items.get(12))
    };
    assert_eq!(expected.to_string(), SAMPLE_DIGEST);
    assert_eq!(actual.to_string(), sha1_hex(&file[..file.len() - 24]));
    assert_eq!(items.len(), 13);
    // Without checksum verification only the damage is reported.
    let unchecked = StreamOptions::new().verify_checksum(false);
    let err = StreamReader::with_options(&file[..], unchecked)
        .unwrap()
        .find_map(Result::err)
        .unwrap();
    assert!(err.to_string().contains("limit"), "{err}");

    // The trailer is intact, so the checksum names both digests.
    let reader = BddfReader::open(file.clone().into()).unwrap();
    let err = reader.verify_checksum().unwrap_err();
    let Error::ChecksumMismatch { expected, actual } = &err else {
        panic!("expected a checksum mismatch, got {err}")
    };
    assert_eq!(expected.to_string(), SAMPLE_DIGEST);
    assert_eq!(actual.to_string(), sha1_hex(&file[..file.len() - 24]));

    // The index points at the damaged descriptor, so the reader walks the file instead: the
    // blocks before the damage, then the checksum mismatch, then where the walk stopped.
    let IndexSource::Scan { stopped, .. } = reader.index_source() else {
        panic!("the damaged index must not be trusted")
    };
    assert_eq!(stopped.as_ref().and_then(Error::offset), Some(1275));
    let items: Vec<_> = reader.blocks().collect();
    let blocks = items.iter().filter(|i| i.is_ok()).count();
    assert_eq!(blocks, 11);
    assert!(matches!(items[11], Err(Error::ChecksumMismatch { .. })));
    assert_eq!(items[12].as_ref().unwrap_err().offset(), Some(1275));
    assert_eq!(items.len(), 13);

    // Recovery keeps everything before the damage.
    let mut out = Vec::new();
    let report = recover(&file, &mut out).unwrap();
    assert_eq!(report.data_blocks_recovered, 11);
    assert_eq!(report.series_recovered, 6);
    assert_eq!(report.stopped.as_ref().and_then(Error::offset), Some(1275));
}

#[test]
fn every_single_bit_flip_of_the_sample_is_noticed() {
    let sample = testdata::read("bddf/sample.bddf");
    for offset in 0..sample.len() {
        for bit in [0x01u8, 0x80] {
            let mut file = sample.clone();
            file[offset] ^= bit;
            assert!(
                stream_all(&file).is_err(),
                "stream: flip {bit:#04x} at {offset} went unnoticed"
            );
            assert!(
                indexed_all(&file).is_err(),
                "indexed: flip {bit:#04x} at {offset} went unnoticed"
            );
        }
    }
}

#[test]
fn hostile_sizes_allocate_nothing() {
    // Magic, then a descriptor block claiming 2^56 - 1 bytes, on a 12-byte input.
    let mut file = b"BDDF".to_vec();
    file.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    let err = StreamReader::new(&file[..]).unwrap_err();
    assert!(matches!(err, Error::Framing(_)), "{err}");
    // Under the limit, the stream simply ends early: a truncation, with no large buffer.
    file[4..12].copy_from_slice(&[0, 0, 0, 0x20, 0, 0, 0, 0x01]);
    let err = StreamReader::new(&file[..]).unwrap_err();
    assert!(err.is_truncation(), "{err}");
    assert!(matches!(
        BddfReader::open(file.clone().into()),
        Err(Error::Truncated { offset: 4, .. })
    ));
    // A data block whose descriptor is longer than the block is corrupt.
    let mut sample = testdata::read("bddf/sample.bddf");
    sample[636 + 8..636 + 12].copy_from_slice(&100u32.to_le_bytes());
    let err = stream_all(&sample).unwrap_err();
    assert!(
        matches!(
            err,
            Error::DescriptorTooLong {
                offset: 636,
                desc_len: 100,
                block_size: 28
            }
        ),
        "{err}"
    );
}

#[test]
fn reserved_block_types_are_refused() {
    let mut sample = testdata::read("bddf/sample.bddf");
    sample[636 + 7] = 0x03;
    let err = stream_all(&sample).unwrap_err();
    assert!(matches!(
        err,
        Error::ReservedBlockType {
            offset: 636,
            block_type: 3
        }
    ));
    // The index points at the block: reading it reports the same.
    let strict = ReadOptions::new().strict(true);
    let reader = BddfReader::open_with(sample.into(), strict).unwrap();
    assert!(matches!(
        reader.read_block(0, 0),
        Err(Error::ReservedBlockType { offset: 636, .. })
    ));
}

#[test]
fn unsupported_versions_and_checksums_are_refused() {
    let golden = testdata::read("bddf/golden_one_msg.bddf");
    // version.major_version 1 → 2 (byte 17 of the golden file).
    let mut v2 = golden.clone();
    assert_eq!(v2[17], 1);
    v2[17] = 2;
    assert!(matches!(
        BddfReader::open(v2.clone().into()),
        Err(Error::UnsupportedVersion { major: 2, .. })
    ));
    assert!(matches!(
        StreamReader::new(&v2[..]),
        Err(Error::UnsupportedVersion { major: 2, .. })
    ));
    assert!(matches!(
        recover(&v2, Vec::new()),
        Err(Error::UnsupportedVersion { .. })
    ));
    // checksum_type 2 → 3 (byte 29).
    let mut unknown = golden;
    assert_eq!(unknown[29], 2);
    unknown[29] = 3;
    assert!(matches!(
        BddfReader::open(unknown.into()),
        Err(Error::UnsupportedChecksum {
            checksum_type: 3,
            ..
        })
    ));
}

#[test]
fn no_checksum_files_are_not_checked() {
    // checksum_type 2 → 1 (none) with a zero digest: a valid file, which nothing hashes.
    let mut file = testdata::read("bddf/golden_one_msg.bddf");
    file[29] = 1;
    let len = file.len();
    file[len - 24..len - 4].fill(0);
    assert_eq!(stream_all(&file).unwrap(), 1);
    assert_eq!(indexed_all(&file).unwrap(), 1);
    // Recovery keeps the declared checksum kind.
    let mut out = Vec::new();
    recover(&file, &mut out).unwrap();
    assert_eq!(out, file);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..600)) {
        let mut file = b"BDDF".to_vec();
        file.extend_from_slice(&tail);
        let _ = stream_all(&file);
        let _ = indexed_all(&file);
        let _ = recover(&file, Vec::new());
    }

    #[test]
    fn mutated_samples_never_panic(
        edits in proptest::collection::vec((0usize..2561, any::<u8>()), 1..8)
    ) {
        let mut file = testdata::read("bddf/sample.bddf");
        for (offset, byte) in edits {
            file[offset] = byte;
        }
        let _ = stream_all(&file);
        let _ = indexed_all(&file);
        if let Ok(reader) = BddfReader::open(file.clone().into()) {
            for series in reader.series() {
                for block in reader.series_blocks(series.index(), ..).unwrap().flatten() {
                    let _ = series.decode_pod(&block);
                }
            }
            let _ = reader.blocks_by_time().count();
        }
        let mut out = Vec::new();
        if recover(&file, &mut out).is_ok() {
            // Whatever was rescued is a valid file.
            let strict = ReadOptions::new().strict(true);
            let rescued = BddfReader::open_with(out.clone().into(), strict).unwrap();
            prop_assert!(rescued.blocks().all(|b| b.is_ok()));
            prop_assert!(stream_all(&out).is_ok());
        }
    }
}

/// A descriptor whose series index was damaged (series 2 at byte 356 now claims index 6, ahead
/// of the real series 6): recovery must renumber the series in the order their descriptors
/// appear, or the rebuilt index would point series at each other's descriptors.
#[test]
fn recovery_renumbers_series_in_file_order() {
    let mut file = testdata::read("bddf/sample.bddf");
    file[360] = 4;
    let mut out = Vec::new();
    let report = recover(&file, &mut out).unwrap();
    let strict = ReadOptions::new().strict(true);
    let rescued = BddfReader::open_with(out.clone().into(), strict).unwrap();
    let indexes: Vec<u32> = rescued.series().iter().map(|s| s.index()).collect();
    assert_eq!(
        indexes,
        (0..report.series_recovered as u32).collect::<Vec<_>>()
    );
    assert!(rescued.blocks().all(|b| b.is_ok()));
    assert_eq!(
        stream_all(&out).unwrap() as u64,
        report.data_blocks_recovered
    );
}
