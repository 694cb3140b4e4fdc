//! Hostile input: corrupted files never panic, hang or allocate from lying lengths, in any reader,
//! in `check` or in `recover`.

use proptest::prelude::*;
use robolog_mcap::{
    Bytes, LinearReader, McapError, McapReader, ReadOptions, Record, StreamReader, WriteOptions,
    check, parse::parse_record, recover,
};

fn sample() -> Vec<u8> {
    robolog_testkit::testdata::read("samples/demo-lz4.mcap")
}

/// Runs every entry point over `data`; they may fail, never panic.
fn exercise(data: &[u8]) {
    let mut linear = LinearReader::with_options(
        Bytes::copy_from_slice(data),
        ReadOptions::default().threads(0),
    );
    let mut n = 0;
    while let Some(r) = linear.next_record() {
        let _ = r;
        n += 1;
        assert!(n < 100_000, "the linear reader does not terminate");
    }
    let mut stream =
        StreamReader::with_options(data, ReadOptions::default().max_record_size(1 << 20));
    let mut n = 0;
    while let Some(r) = stream.next_record() {
        let _ = r;
        n += 1;
        assert!(n < 100_000, "the stream reader does not terminate");
    }
    if let Ok(reader) = McapReader::open_with(
        Bytes::copy_from_slice(data),
        ReadOptions::default().threads(0),
    ) && let Ok(iter) = reader.messages().iter()
    {
        let _ = iter.take(100_000).count();
        for index in reader.attachments() {
            let _ = reader.read_attachment(index);
        }
    }
    let _ = check(data);
    let _ = recover(
        Bytes::copy_from_slice(data),
        Vec::new(),
        WriteOptions::default(),
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn corrupted_bytes_never_panic(flips in proptest::collection::vec((0usize..42427, any::<u8>()), 1..8)) {
        let mut data = sample();
        for (at, value) in flips {
            let at = at % data.len();
            data[at] = value;
        }
        exercise(&data);
    }

    #[test]
    fn random_records_never_panic(opcode in any::<u8>(), content in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = parse_record(opcode, &content, 8);
        let mut file = b"\x89MCAP0\r\n".to_vec();
        file.push(opcode);
        file.extend_from_slice(&(content.len() as u64).to_le_bytes());
        file.extend_from_slice(&content);
        exercise(&file);
    }
}

#[test]
fn a_lying_length_is_rejected_without_allocating() {
    let mut file = b"\x89MCAP0\r\n".to_vec();
    file.push(0x06); // a Chunk...
    file.extend_from_slice(&u64::MAX.to_le_bytes()); // ...claiming 16 EiB
    file.extend_from_slice(&[0u8; 64]);
    let mut stream = StreamReader::new(&file[..]);
    match stream.next_record() {
        Some(Err(McapError::TooLarge { length, .. })) => assert_eq!(length, u64::MAX),
        other => panic!("{other:?}"),
    }
    let mut linear = LinearReader::new(Bytes::from(file.clone()));
    let err = linear.next_record().unwrap().unwrap_err();
    assert!(err.is_truncation(), "{err}");

    // A chunk whose uncompressed size lies is refused before decompression: over the limit...
    let mut chunk = Vec::new();
    chunk.extend_from_slice(&0u64.to_le_bytes());
    chunk.extend_from_slice(&0u64.to_le_bytes());
    chunk.extend_from_slice(&(1u64 << 50).to_le_bytes());
    chunk.extend_from_slice(&0u32.to_le_bytes());
    chunk.extend_from_slice(&4u32.to_le_bytes());
    chunk.extend_from_slice(b"zstd");
    chunk.extend_from_slice(&4u64.to_le_bytes());
    chunk.extend_from_slice(&[0x28, 0xB5, 0x2F, 0xFD]);
    let mut file = b"\x89MCAP0\r\n".to_vec();
    file.push(0x06);
    file.extend_from_slice(&(chunk.len() as u64).to_le_bytes());
    file.extend_from_slice(&chunk);
    let mut linear = LinearReader::new(Bytes::from(file));
    match linear.next_record() {
        Some(Err(McapError::TooLarge { .. })) => {}
        other => panic!("{:?}", other.map(|r| r.map(|r| r.opcode()))),
    }
    // ...or under it but impossible for its few compressed bytes.
    let mut linear = LinearReader::new(Bytes::from(lying_chunk(1 << 31)));
    match linear.next_record() {
        Some(Err(McapError::Invalid { message, .. })) => {
            assert!(
                message.contains("cannot come from 4 bytes of zstd"),
                "{message}"
            )
        }
        other => panic!("{:?}", other.map(|r| r.map(|r| r.opcode()))),
    }
    // Every other entry point refuses it too (instantly: nothing is allocated for it).
    exercise(&lying_chunk(1 << 31));
    let _ = Record::DataEnd(Default::default());
}

fn lying_chunk(size: u64) -> Vec<u8> {
    let mut chunk = Vec::new();
    chunk.extend_from_slice(&0u64.to_le_bytes());
    chunk.extend_from_slice(&0u64.to_le_bytes());
    chunk.extend_from_slice(&size.to_le_bytes());
    chunk.extend_from_slice(&0u32.to_le_bytes());
    chunk.extend_from_slice(&4u32.to_le_bytes());
    chunk.extend_from_slice(b"zstd");
    chunk.extend_from_slice(&4u64.to_le_bytes());
    chunk.extend_from_slice(&[0x28, 0xB5, 0x2F, 0xFD]);
    let mut file = b"\x89MCAP0\r\n".to_vec();
    file.push(0x06);
    file.extend_from_slice(&(chunk.len() as u64).to_le_bytes());
    file.extend_from_slice(&chunk);
    file
}
