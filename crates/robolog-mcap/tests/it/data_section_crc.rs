//! The linear reader builds the data-section CRC as it goes: uncompressed chunk records join it
//! by their (checked) chunk CRC, compressed ones by a CRC their worker computes, everything
//! else is hashed at the DataEnd record. It must still catch a changed byte anywhere outside
//! the chunks' records, on one thread or several, whatever the compression.

use std::collections::BTreeMap;

use robolog_mcap::{
    Bytes, Compression, LinearReader, McapError, McapReader, Message, Metadata, ReadOptions,
    WriteOptions, Writer,
};

/// 300 messages in 2 KiB chunks, with a Metadata record (outside the chunks) in the middle.
fn file(compression: Compression) -> Vec<u8> {
    let opts = WriteOptions::new()
        .compression(compression)
        .chunk_size(Some(2048));
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let channel = w.register_channel("/a", "raw", 0, BTreeMap::new()).unwrap();
    for i in 0..300u64 {
        if i == 150 {
            w.write_metadata(&Metadata {
                name: "robot-config".into(),
                metadata: BTreeMap::from([("serial".into(), "R2-D2-0042".into())]),
            })
            .unwrap();
        }
        let data: Vec<u8> = (0..100).map(|j| (i * 7 + j) as u8).collect();
        w.write_message(&Message {
            channel_id: channel,
            sequence: i as u32,
            log_time: i,
            publish_time: i,
            data: &data,
        })
        .unwrap();
    }
    w.finish().unwrap()
}

/// Messages read, and the error that ended the read (if any) as (what, offset).
fn read(file: &[u8], opts: ReadOptions) -> (usize, Option<(String, u64)>) {
    let mut messages = LinearReader::with_options(Bytes::from(file.to_vec()), opts).into_messages();
    let mut n = 0;
    while let Some(m) = messages.next_ref() {
        match m {
            Ok(_) => n += 1,
            Err(McapError::CrcMismatch { what, offset, .. }) => {
                return (n, Some((format!("{what} CRC"), offset)));
            }
            Err(e) => return (n, Some((e.to_string(), 0))),
        }
    }
    (n, None)
}

fn compressions() -> Vec<Compression> {
    [Compression::None, Compression::Lz4, Compression::Zstd]
        .into_iter()
        .filter(|c| c.is_enabled())
        .collect()
}

fn options() -> [(&'static str, ReadOptions); 2] {
    [
        ("inline", ReadOptions::default().threads(0)),
        ("2 threads", ReadOptions::default().threads(2)),
    ]
}

/// Where the DataEnd record starts: right after the last chunk's message indexes, so found
/// from the end of the data section as the summary's first record follows it.
fn data_end(file: &[u8]) -> u64 {
    let reader = McapReader::open(Bytes::from(file.to_vec())).unwrap();
    let last = reader.summary().chunk_indexes.last().unwrap().clone();
    last.chunk_start_offset + last.chunk_length + last.message_index_length
}

#[test]
fn an_intact_file_reads_whole() {
    for compression in compressions() {
        let file = file(compression);
        for (name, opts) in options() {
            assert_eq!(read(&file, opts), (300, None), "{compression:?} {name}");
        }
    }
}

#[test]
fn a_changed_byte_outside_the_chunks_records_fails_the_data_section_crc() {
    for compression in compressions() {
        let clean = file(compression);
        let at_data_end = data_end(&clean);
        let first_chunk = McapReader::open(Bytes::from(clean.clone()))
            .unwrap()
            .summary()
            .chunk_indexes[0]
            .chunk_start_offset as usize;
        let serial = clean.windows(10).position(|w| w == b"R2-D2-0042").unwrap();
        // A byte of the Metadata record; the high byte of the first chunk's start time (after
        // the opcode and the length); a byte of the Header record.
        for (what, at) in [
            ("metadata", serial + 3),
            ("chunk head", first_chunk + 1 + 8 + 7),
            ("header", 8 + 1 + 8 + 2),
        ] {
            let mut file = clean.clone();
            file[at] ^= 0x20;
            for (name, opts) in options() {
                assert_eq!(
                    read(&file, opts),
                    (300, Some(("data section CRC".to_owned(), at_data_end))),
                    "{compression:?} {what} {name}"
                );
            }
        }
    }
}

#[test]
fn with_chunk_crcs_off_a_changed_record_byte_still_fails_the_data_section_crc() {
    let clean = file(Compression::None);
    let at_data_end = data_end(&clean);
    // A byte of some message's payload, inside an uncompressed chunk's records.
    let mut file = clean.clone();
    let payload = (0..100).map(|j| (120 * 7 + j) as u8).collect::<Vec<u8>>();
    let at = clean.windows(100).position(|w| w == payload).unwrap() + 50;
    file[at] ^= 0x01;
    for (name, opts) in options() {
        let unchecked = opts.clone().verify_chunk_crcs(false);
        assert_eq!(
            read(&file, unchecked),
            (300, Some(("data section CRC".to_owned(), at_data_end))),
            "{name}"
        );
        // With them on, the chunk's own CRC catches it first.
        let (_, error) = read(&file, opts);
        assert_eq!(
            error.map(|(what, _)| what),
            Some("chunk CRC".to_owned()),
            "{name}"
        );
    }
}
