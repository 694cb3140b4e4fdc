//! A file read by position (a file on disk, a remote object) reads as the same file in memory,
//! damaged or not, and opening it reads only the index parts, a few reads in all.

use std::ops::Range;
use std::sync::Mutex;

use robolog_bddf::proto::{MessageTypeDescriptor, PodType};
use robolog_bddf::{BddfReader, BddfWriter, Bytes, Input, ReadOptions, series_identifier};
use robolog_query::ReadAt;
use robolog_testkit::testdata;

/// The bytes of a file, read by position only (never sliced as a whole), each read recorded.
#[derive(Debug)]
struct Positional {
    bytes: Bytes,
    reads: Mutex<Vec<Range<u64>>>,
}

impl Positional {
    fn input(bytes: &[u8]) -> (Input, std::sync::Arc<Positional>) {
        let source = std::sync::Arc::new(Positional {
            bytes: Bytes::copy_from_slice(bytes),
            reads: Mutex::new(Vec::new()),
        });
        (Input::new(Shared(source.clone())), source)
    }

    fn take_reads(&self) -> Vec<Range<u64>> {
        std::mem::take(&mut self.reads.lock().unwrap())
    }
}

#[derive(Debug)]
struct Shared(std::sync::Arc<Positional>);

impl ReadAt for Shared {
    fn len(&self) -> u64 {
        self.0.bytes.len() as u64
    }

    fn read_at(&self, range: Range<u64>) -> std::io::Result<Bytes> {
        self.0.reads.lock().unwrap().push(range.clone());
        Ok(self.0.bytes.slice(range.start as usize..range.end as usize))
    }
}

/// Everything a reader tells about a file: its index and every block, or the first error.
fn everything(reader: Result<BddfReader, robolog_bddf::Error>) -> String {
    let reader = match reader {
        Ok(reader) => reader,
        Err(e) => return format!("open: {e:?}"),
    };
    let mut out = format!(
        "{:?}\n{:?}\n{:?}\n",
        reader.file_descriptor(),
        reader.index_source(),
        reader.trailer()
    );
    for series in reader.series() {
        out += &format!("{series:?}\n{:?}\n", reader.block_entries(series.index()));
        for position in 0..series.block_count() as usize {
            out += &format!("{:?}\n", reader.read_block(series.index(), position));
        }
    }
    for block in reader.blocks() {
        out += &format!("{block:?}\n");
    }
    out += &format!("{:?}\n", reader.verify_checksum());
    out
}

fn both(file: &[u8], options: ReadOptions) -> (String, String) {
    let in_memory = everything(BddfReader::open_with(Bytes::copy_from_slice(file), options));
    let (input, _) = Positional::input(file);
    let positional = everything(BddfReader::open_input(input, options));
    (in_memory, positional)
}

const STRICT: ReadOptions = ReadOptions::new().verify_checksum(true).strict(true);

#[test]
fn the_sample_reads_the_same_by_position_and_in_memory() {
    let file = testdata::read("bddf/sample.bddf");
    for options in [ReadOptions::default(), STRICT] {
        let (in_memory, positional) = both(&file, options);
        assert!(in_memory.contains("Ok(DataBlock"), "{in_memory}");
        assert_eq!(positional, in_memory);
    }
}

#[test]
fn every_truncation_and_flipped_byte_reads_the_same_by_position() {
    let file = testdata::read("bddf/sample.bddf");
    for options in [ReadOptions::default(), STRICT] {
        for len in 0..file.len() {
            let (in_memory, positional) = both(&file[..len], options);
            assert_eq!(positional, in_memory, "cut at {len}");
        }
        for at in 0..file.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut damaged = file.clone();
                damaged[at] ^= flip;
                let (in_memory, positional) = both(&damaged, options);
                assert_eq!(positional, in_memory, "byte {at} ^ {flip:#x}");
            }
        }
    }
}

#[test]
fn opening_by_position_reads_the_index_parts_only() {
    // Three series, the descriptors written first, then 3000 blocks of 1 KiB.
    let mut writer = BddfWriter::new(Vec::new()).unwrap();
    let ids: Vec<u32> = (0..3)
        .map(|i| {
            writer
                .add_message_series(
                    series_identifier("bosdyn:channel", [("bosdyn:channel", format!("c{i}"))]),
                    MessageTypeDescriptor {
                        content_type: "text/plain".into(),
                        ..Default::default()
                    },
                    Default::default(),
                )
                .unwrap()
        })
        .collect();
    let pod = writer
        .add_pod_series(
            series_identifier("bosdyn:signal", [("example:var", "x")]),
            PodType::Float64,
            &[],
            Default::default(),
        )
        .unwrap();
    for t in 0..3000i64 {
        writer
            .write_message(ids[t as usize % 3], t * 1000, &[t as u8; 1024])
            .unwrap();
        writer.write_pod(pod, t * 1000, &[t as f64]).unwrap();
    }
    let file = writer.finish().unwrap();
    let (input, source) = Positional::input(&file);
    let reader = BddfReader::open_input(input, ReadOptions::default()).unwrap();
    let reads = source.take_reads();
    // The magic, the trailer, the file index, the file descriptor, the block indexes (one
    // read: they lie together), the series descriptors (one read).
    assert!(reads.len() <= 6, "{reads:?}");
    let read: u64 = reads.iter().map(|r| r.end - r.start).sum();
    assert!(read < file.len() as u64 / 10, "{read} of {}", file.len());
    assert_eq!(reader.series().len(), 4);
    assert_eq!(reader.series_by_index(ids[1]).unwrap().block_count(), 1000);

    // A block is one read of about its own size.
    let block = reader.read_block(ids[2], 500).unwrap();
    assert_eq!(&block.data[..], &[(500 * 3 + 2) as u8; 1024][..]);
    let reads = source.take_reads();
    assert_eq!(reads.len(), 1, "{reads:?}");
    assert!(reads[0].end - reads[0].start < 1200, "{reads:?}");

    // The same blocks and checksum as in memory.
    let in_memory = BddfReader::open(file.clone().into()).unwrap();
    for (a, b) in reader.blocks().zip(in_memory.blocks()) {
        assert_eq!(a.unwrap(), b.unwrap());
    }
    reader.verify_checksum().unwrap();
}

/// Messages on two series, `/a`'s of each step a millisecond before `/b`'s, written in time
/// order or (`b_first`) `/b`'s block of each step first.
fn two_series(b_first: bool) -> (Vec<u8>, [u32; 2]) {
    let mut writer = BddfWriter::new(Vec::new()).unwrap();
    let mut series = |name: &str| {
        writer
            .add_message_series(
                series_identifier("bosdyn:channel", [("bosdyn:channel", name)]),
                MessageTypeDescriptor {
                    content_type: "text/plain".into(),
                    ..Default::default()
                },
                Default::default(),
            )
            .unwrap()
    };
    let (a, b) = (series("/a"), series("/b"));
    for t in 0..200i64 {
        let steps = [
            (a, t * 10_000_000, [!t as u8; 700]),
            (b, t * 10_000_000 + 1_000_000, [t as u8; 700]),
        ];
        for i in [usize::from(b_first), usize::from(!b_first)] {
            let (series, time, data) = &steps[i];
            writer.write_message(*series, *time, data).unwrap();
        }
    }
    (writer.finish().unwrap(), [a, b])
}

#[test]
fn reading_every_block_checks_the_checksum_in_the_same_pass() {
    let (file, _) = two_series(false);
    let (input, source) = Positional::input(&file);
    let reader = BddfReader::open_input(input, ReadOptions::default()).unwrap();
    source.take_reads();
    let blocks: Vec<_> = reader.blocks_by_time().collect::<Result<_, _>>().unwrap();
    assert_eq!(blocks.len(), 400);
    assert!(
        blocks
            .windows(2)
            .all(|w| w[0].timestamp_ns < w[1].timestamp_ns)
    );
    // Each block read once, and what lies between blocks (descriptors, the index, the
    // trailer) once for the hash.
    let reads = source.take_reads();
    let read: u64 = reads.iter().map(|r| r.end - r.start).sum();
    assert!(read <= file.len() as u64, "{read} of {}", file.len());
    let mut covered = vec![0u8; file.len()];
    for r in &reads {
        for c in &mut covered[r.start as usize..r.end as usize] {
            *c += 1;
        }
    }
    assert!(covered.iter().all(|&c| c <= 1), "a byte read twice");

    // Blocks read in any order (here each series backwards, in a file not in time order):
    // a byte flipped in the payload of `/b`'s first block, which the first read's catching
    // up hashes, is caught.
    let (file, [a, _]) = two_series(true);
    let in_payload = {
        let reader = BddfReader::open(file.clone().into()).unwrap();
        reader.block_entries(a).unwrap()[0].offset as usize - 10
    };
    for (damaged_at, ok) in [(None, true), (Some(in_payload), false)] {
        let mut damaged = file.clone();
        if let Some(at) = damaged_at {
            damaged[at] ^= 0x01;
        }
        let (input, _) = Positional::input(&damaged);
        let reader = BddfReader::open_input(input, ReadOptions::default()).unwrap();
        let mut check = reader.checksum_check().unwrap();
        for series in reader.series() {
            for position in (0..series.block_count() as usize).rev() {
                reader
                    .read_block_checked(series.index(), position, &mut check)
                    .unwrap();
            }
        }
        match check.finish(&reader) {
            Ok(()) => assert!(ok),
            Err(e) => assert!(
                !ok && matches!(e, robolog_bddf::Error::ChecksumMismatch { .. }),
                "{e}"
            ),
        }
    }
}
