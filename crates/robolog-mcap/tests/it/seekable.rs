//! `Writer::new_seekable` streams uncompressed chunks and patches their heads, and writes the
//! very bytes `Writer::new` writes, whatever the message sizes and options.

use std::collections::BTreeMap;
use std::io::{self, Cursor, Seek, SeekFrom, Write};

use robolog_mcap::{
    Attachment, Bytes, Compression, McapReader, Message, Metadata, Severity, WriteOptions, Writer,
};

/// A seekable in-memory output that counts its seeks.
struct Counting {
    inner: Cursor<Vec<u8>>,
    seeks: usize,
}

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for Counting {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.seeks += 1;
        self.inner.seek(pos)
    }
}

/// Message sizes around every threshold of the streamed path: tiny, either side of the 4 KiB
/// written-directly size, large, and larger than the chunk.
fn size(i: u64, chunk: u64) -> usize {
    match i % 11 {
        0..=3 => (i % 300) as usize,
        4 => 4095,
        5 => 4096,
        6 => 4097,
        7 => 20_000 + (i % 7) as usize * 10_000,
        8 => 70_000,
        9 => (chunk + 1) as usize,
        _ => 150_000,
    }
}

/// One step of a random writing session.
#[derive(Debug, Clone)]
enum Step {
    Message {
        channel: usize,
        size: usize,
        time: u64,
    },
    Attachment,
    Metadata,
    FlushChunk,
    NewChannel,
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        8 => (0usize..4, prop_oneof![0usize..300, 3_000usize..6_000, 20_000usize..300_000], 0u64..1_000)
            .prop_map(|(channel, size, time)| Step::Message { channel, size, time }),
        1 => Just(Step::Attachment),
        1 => Just(Step::Metadata),
        1 => Just(Step::FlushChunk),
        1 => Just(Step::NewChannel),
    ]
}

/// Plays `steps` on `w`.
fn play<W: Write>(w: &mut Writer<W>, steps: &[Step]) {
    let schema = w
        .register_schema("pkg/Msg", "ros1msg", b"int32 x\n")
        .unwrap();
    let mut channels = vec![
        w.register_channel("/c0", "ros1", schema, BTreeMap::new())
            .unwrap(),
    ];
    for (i, s) in steps.iter().enumerate() {
        match s {
            Step::Message {
                channel,
                size,
                time,
            } => {
                let data: Vec<u8> = (0..*size).map(|j| (i + j) as u8).collect();
                w.write_message(&Message {
                    channel_id: channels[channel % channels.len()],
                    sequence: i as u32,
                    log_time: *time,
                    publish_time: *time,
                    data: &data,
                })
                .unwrap();
            }
            Step::Attachment => w
                .write_attachment(&Attachment {
                    log_time: i as u64,
                    create_time: 0,
                    name: format!("a{i}").into(),
                    media_type: "application/octet-stream".into(),
                    data: vec![i as u8; i % 5_000].into(),
                    crc: 0,
                })
                .unwrap(),
            Step::Metadata => w
                .write_metadata(&Metadata {
                    name: format!("m{i}").into(),
                    metadata: BTreeMap::from([("step".into(), i.to_string().into())]),
                })
                .unwrap(),
            Step::FlushChunk => w.flush_chunk().unwrap(),
            Step::NewChannel => channels.push(
                w.register_channel(&format!("/c{i}"), "json", 0, BTreeMap::new())
                    .unwrap(),
            ),
        }
    }
}

/// The session every fixed test writes: 120 messages of the sizes above on a channel, a
/// second channel added at step 40 (every third message goes there from then on), an
/// attachment at step 60 and a metadata record at step 90, which close the open chunk; log
/// times now and then out of order.
fn session(chunk: u64) -> Vec<Step> {
    let mut steps = Vec::new();
    for i in 0..120u64 {
        match i {
            40 => steps.push(Step::NewChannel),
            60 => steps.push(Step::Attachment),
            90 => steps.push(Step::Metadata),
            _ => {}
        }
        steps.push(Step::Message {
            channel: usize::from(i % 3 == 0),
            size: size(i, chunk),
            time: 1_000 + i * 10 - if i % 7 == 3 { 25 } else { 0 },
        });
    }
    steps
}

/// Uncompressed chunks of `chunk` bytes (unchunked for `None`).
fn uncompressed(chunk: Option<u64>, crcs: bool, message_indexes: bool) -> WriteOptions {
    WriteOptions::new()
        .compression(Compression::None)
        .chunk_size(chunk)
        .crcs(crcs)
        .message_indexes(message_indexes)
}

/// The file `steps` make through `Writer::new`, and through `Writer::new_seekable` after
/// `prefix` bytes that were already in the output, with the number of seeks it made.
fn both(opts: &WriteOptions, prefix: usize, steps: &[Step]) -> (Vec<u8>, Vec<u8>, usize) {
    let mut plain = Writer::new(Vec::new(), opts.clone()).unwrap();
    play(&mut plain, steps);
    let plain = plain.finish().unwrap();

    let mut out = Counting {
        inner: Cursor::new(vec![0xAB; prefix]),
        seeks: 0,
    };
    out.inner.seek(SeekFrom::End(0)).unwrap();
    let mut seekable = Writer::new_seekable(out, opts.clone()).unwrap();
    play(&mut seekable, steps);
    let out = seekable.finish().unwrap();
    let bytes = out.inner.into_inner();
    assert_eq!(bytes[..prefix], vec![0xAB; prefix][..]);
    (plain, bytes[prefix..].to_vec(), out.seeks)
}

#[test]
fn streamed_chunks_are_byte_identical_to_buffered_ones() {
    for chunk in [
        Some(1024),
        Some(64 * 1024),
        Some(512 * 1024),
        Some(4 << 20),
        None,
    ] {
        for crcs in [true, false] {
            for message_indexes in [true, false] {
                let opts = uncompressed(chunk, crcs, message_indexes);
                let steps = session(chunk.unwrap_or(1 << 20));
                let (plain, seekable, seeks) = both(&opts, 0, &steps);
                let what =
                    format!("chunk {chunk:?}, crcs {crcs}, message indexes {message_indexes}");
                assert_eq!(plain.len(), seekable.len(), "{what}");
                assert!(plain == seekable, "{what}: the bytes differ");
                if chunk.is_some() {
                    // Each streamed chunk seeks back to its head and forth again.
                    assert!(
                        seeks >= 10,
                        "{what}: only {seeks} seeks, so nothing streamed"
                    );
                } else {
                    // Only the starting position was asked for: nothing to patch.
                    assert_eq!(seeks, 1, "{what}: an unchunked file has nothing to patch");
                }
            }
        }
    }
}

#[test]
fn an_output_that_already_holds_data_gets_the_same_file_after_it() {
    let opts = uncompressed(Some(64 * 1024), true, true);
    let (plain, seekable, _) = both(&opts, 1000, &session(64 * 1024));
    assert!(plain == seekable);
}

#[test]
fn compressed_chunks_are_not_streamed() {
    for compression in [Compression::Lz4, Compression::Zstd] {
        if !compression.is_enabled() {
            continue;
        }
        let opts = WriteOptions::new()
            .compression(compression)
            .chunk_size(Some(64 * 1024));
        let (plain, seekable, seeks) = both(&opts, 0, &session(64 * 1024));
        assert!(plain == seekable, "{compression:?}");
        assert_eq!(
            seeks, 1,
            "{compression:?}: only the starting position is asked for"
        );
    }
}

#[test]
fn a_streamed_file_reads_back_with_every_message_and_valid_crcs() {
    let steps = session(64 * 1024);
    let (_, file, _) = both(&uncompressed(Some(64 * 1024), true, true), 0, &steps);
    // Each message's sequence is its step's index.
    let written: Vec<(u32, usize)> = steps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s {
            Step::Message { size, .. } => Some((i as u32, *size)),
            _ => None,
        })
        .collect();
    assert_eq!(written.len(), 120);
    let reader = McapReader::open(Bytes::from(file.clone())).unwrap();
    let mut read: Vec<(u32, usize)> = reader
        .messages()
        .iter()
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (m.sequence, m.data.len())
        })
        .collect();
    read.sort_unstable();
    assert_eq!(read, written);
    // The doctor checks the chunk and data-section CRCs, which join the streamed parts. Its
    // warnings are the out-of-order log times written on purpose.
    let errors: Vec<_> = robolog_mcap::check(&file)
        .into_iter()
        .filter(|p| p.severity != Severity::Warning)
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

/// A seekable output whose bytes outlive the writer, as a file's do when its writer dies.
#[derive(Clone, Default)]
struct Shared(std::rc::Rc<std::cell::RefCell<Cursor<Vec<u8>>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for Shared {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.0.borrow_mut().seek(pos)
    }
}

/// Writes ten 200 KB messages (a 1 MiB chunk closes after six) and drops the writer without
/// finishing, then cuts `cut` bytes off the end. Returns the sequences recovered.
fn killed<W: Write + Seek>(
    mut w: Writer<W>,
    out: &Shared,
    opts: WriteOptions,
    cut: usize,
) -> Vec<u32> {
    let channel = w
        .register_channel("/camera", "raw", 0, BTreeMap::new())
        .unwrap();
    for i in 0..10u32 {
        w.write_message(&Message {
            channel_id: channel,
            sequence: i,
            log_time: u64::from(i),
            publish_time: u64::from(i),
            data: &vec![i as u8; 200_000],
        })
        .unwrap();
    }
    drop(w);
    let mut file = out.0.borrow().get_ref().clone();
    file.truncate(file.len() - cut);
    let (recovered, report) = robolog_mcap::recover(file.clone(), Vec::new(), opts).unwrap();
    let reader = McapReader::open(Bytes::from(recovered)).unwrap();
    let sequences: Vec<u32> = reader
        .messages()
        .iter()
        .unwrap()
        .map(|m| m.unwrap().sequence)
        .collect();
    assert_eq!(report.messages_recovered, sequences.len() as u64);
    sequences
}

#[test]
fn a_writer_killed_inside_a_streamed_chunk_leaves_its_messages_recoverable() {
    // The open chunk's head says it is empty until it closes, so the records already written
    // after it read as messages outside chunks. The robot lost power halfway through writing
    // message 9: half of it is on disk.
    let opts = WriteOptions::new()
        .compression(Compression::None)
        .chunk_size(Some(1 << 20));
    let out = Shared::default();
    let streamed = killed(
        Writer::new_seekable(out.clone(), opts.clone()).unwrap(),
        &out,
        opts.clone(),
        100_000,
    );
    assert_eq!(streamed, (0..9).collect::<Vec<_>>());
    // A buffered chunk dies with the writer: nothing after the first chunk reached the disk.
    let out = Shared::default();
    let buffered = killed(
        Writer::new(out.clone(), opts.clone()).unwrap(),
        &out,
        opts,
        0,
    );
    assert_eq!(buffered, (0..6).collect::<Vec<_>>());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

    #[test]
    fn any_session_writes_the_same_bytes_through_a_seekable_output(
        steps in proptest::collection::vec(step(), 0..60),
        chunk in proptest::prop_oneof![
            proptest::strategy::Just(None),
            proptest::strategy::Just(Some(100u64)),
            proptest::strategy::Just(Some(4096)),
            proptest::strategy::Just(Some(64 * 1024)),
            proptest::strategy::Just(Some(300_000)),
        ],
        crcs in proptest::bool::ANY,
        message_indexes in proptest::bool::ANY,
        prefix in 0usize..3,
    ) {
        let opts = uncompressed(chunk, crcs, message_indexes);
        let (plain, seekable, _) = both(&opts, prefix, &steps);
        proptest::prop_assert!(plain == seekable);
    }
}
