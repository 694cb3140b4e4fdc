//! A bag 1.2 read by position (a file on disk, a remote object) reads as the same file in
//! memory, damaged or not: opening streams it in once, front to back, a piece at a time, and a
//! query reads the one span of the file that holds the messages it wants.

use std::io::Cursor;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use robolog_query::{ReadAt, STREAM_PIECE};
use robolog_rosbag::{Bag, Bytes, Input, OpenOptions, Order, V12Writer};
use robolog_testkit::testdata;

/// The bytes of a file, read by position only (never sliced as a whole), each read recorded.
#[derive(Debug)]
struct Positional {
    bytes: Bytes,
    reads: Mutex<Vec<Range<u64>>>,
}

impl Positional {
    fn input(bytes: &[u8]) -> (Input, Arc<Positional>) {
        let source = Arc::new(Positional {
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
struct Shared(Arc<Positional>);

impl ReadAt for Shared {
    fn len(&self) -> u64 {
        self.0.bytes.len() as u64
    }

    fn read_at(&self, range: Range<u64>) -> std::io::Result<Bytes> {
        self.0.reads.lock().unwrap().push(range.clone());
        Ok(self.0.bytes.slice(range.start as usize..range.end as usize))
    }
}

/// Everything a bag tells: its summary, connections, index, problems, every message in file
/// order and those of a query by topic and time; or the error that opening it gave.
fn everything(bag: robolog_rosbag::Result<Bag>) -> String {
    let bag = match bag {
        Ok(bag) => bag,
        Err(e) => return format!("open: {e:?}"),
    };
    let mut out = format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n",
        bag.version(),
        bag.summary(),
        bag.connections(),
        bag.index_status(),
        bag.problems()
    );
    for message in bag.messages().order(Order::File) {
        out += &format!("{message:?}\n");
    }
    let (Some(start), Some(end)) = (bag.summary().start_ns, bag.summary().end_ns) else {
        return out;
    };
    let first_topic = bag.connections().first().map(|c| c.topic.clone());
    let middle = start + (end - start) / 3..start + 2 * (end - start) / 3;
    for message in bag.messages().topics(first_topic).time_range(middle) {
        out += &format!("query: {message:?}\n");
    }
    out
}

/// `file` read in memory and by position, with `options`.
fn both(file: &[u8], options: &OpenOptions) -> (String, String) {
    let in_memory = everything(Bag::open_with(
        Bytes::copy_from_slice(file),
        options.clone(),
    ));
    let (input, _) = Positional::input(file);
    let positional = everything(Bag::open_with(input, options.clone()));
    (in_memory, positional)
}

const SAMPLES: [&str; 4] = [
    "bags/generated/ros_comm/v12_indexed.bag",
    "bags/generated/ros_comm/v12_unindexed.bag",
    "bags/generated/ros_comm/v12_noheader.bag",
    "bags/generated/ros_comm/v12_noheader_reindexed.bag",
];

#[test]
fn every_bag_1_2_sample_reads_alike_by_position_and_in_memory() {
    for path in SAMPLES {
        let file = testdata::read(path);
        for options in [OpenOptions::new(), OpenOptions::new().strict(true)] {
            let (in_memory, positional) = both(&file, &options);
            assert_eq!(positional, in_memory, "{path}, {options:?}");
        }
        let (in_memory, _) = both(&file, &OpenOptions::new());
        assert!(in_memory.matches("query: Ok(").count() > 0, "{path}");
    }
}

#[test]
fn a_damaged_bag_1_2_reads_alike_by_position_and_in_memory() {
    let path = "bags/generated/ros_comm/v12_indexed.bag";
    let file = testdata::read(path);
    let mut variants: Vec<(String, Vec<u8>)> = Vec::new();
    for cut in (0..file.len()).step_by(97) {
        variants.push((format!("cut at {cut}"), file[..cut].to_vec()));
    }
    // Every part of the file hit: the file header, definitions, messages, the index.
    for at in (0..file.len()).step_by(53) {
        for (what, value) in [("0xff", 0xff_u8), ("0x00", 0)] {
            let mut damaged = file.clone();
            let end = (at + 4).min(damaged.len());
            damaged[at..end].fill(value);
            variants.push((format!("{what} at {at}"), damaged));
        }
    }
    let mut differ = Vec::new();
    let mut index_damage = 0;
    for (what, bytes) in &variants {
        for options in [OpenOptions::new(), OpenOptions::new().strict(true)] {
            let (in_memory, positional) = both(bytes, &options);
            if in_memory.contains("Damaged {") {
                index_damage += 1;
            }
            if positional != in_memory {
                differ.push(format!(
                    "{what}, {options:?}:\n  in memory: {in_memory}\n  by position: {positional}"
                ));
            }
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    // The variants do reach the index checks and their fallback.
    assert!(index_damage > 20, "{index_damage}");
}

/// A bag 1.2 of about 20 MB: `/camera` with messages of 100 KB, `/imu` with small ones.
fn large_bag() -> Vec<u8> {
    let mut writer = V12Writer::new(Cursor::new(Vec::new())).unwrap();
    let camera = writer
        .add_topic(
            "/camera",
            "std_msgs/String",
            "992ce8a1687cec8c8bd883ec73ca41d1",
            "string data\n",
        )
        .unwrap();
    let imu = writer
        .add_topic(
            "/imu",
            "std_msgs/UInt64",
            "1b2a79973e8bf53d7b53acb71299cb57",
            "uint64 data\n",
        )
        .unwrap();
    let t0 = 1_700_000_000_000_000_000u64;
    for i in 0..200u64 {
        let mut image = vec![(i % 251) as u8; 100_000];
        image[..4].copy_from_slice(&(100_000u32 - 4).to_le_bytes());
        writer.write(camera, t0 + i * 50_000_000, &image).unwrap();
        for j in 0..5 {
            let time = t0 + i * 50_000_000 + j * 10_000_000;
            writer.write(imu, time, &time.to_le_bytes()).unwrap();
        }
    }
    writer.finish().unwrap().into_inner()
}

#[test]
fn a_bag_1_2_read_by_position_is_streamed_in_once_and_a_query_reads_its_span() {
    let file = large_bag();
    let len = file.len() as u64;
    assert!(len > 20_000_000, "{len}");
    let (input, source) = Positional::input(&file);
    let bag = Bag::open(input).unwrap();
    let opening = source.take_reads();
    let total: u64 = opening.iter().map(|r| r.end - r.start).sum();
    let largest = opening.iter().map(|r| r.end - r.start).max().unwrap();
    // The file header, then the index and the records, each streamed once.
    assert!(total >= len && total < len + len / 50, "{total} of {len}");
    assert!(largest <= STREAM_PIECE, "{largest}");
    assert_eq!(bag.summary().message_count, 1_200);
    assert_eq!(format!("{:?}", bag.index_status()), "Used");

    // Half a second of /imu: a few hundred kilobytes around it, read at once.
    let t0 = bag.summary().start_ns.unwrap();
    let wanted = t0 + 5_000_000_000..t0 + 5_500_000_000;
    let imu: Vec<u64> = bag
        .messages()
        .topics(["/imu"])
        .time_range(wanted.clone())
        .into_iter()
        .map(|m| u64::from_le_bytes(m.unwrap().data[..].try_into().unwrap()))
        .collect();
    let expected: Vec<u64> = (0..50).map(|k| wanted.start + k * 10_000_000).collect();
    assert_eq!(imu, expected);
    let reads = source.take_reads();
    assert_eq!(reads.len(), 1, "{reads:?}");
    assert!(reads[0].end - reads[0].start < 1_200_000, "{reads:?}");

    // Every message: as in memory.
    let in_memory = Bag::open(Bytes::from(file.clone())).unwrap();
    let all = |bag: &Bag| -> Vec<_> {
        bag.messages()
            .order(Order::File)
            .into_iter()
            .map(|m| m.unwrap())
            .collect()
    };
    assert!(all(&bag) == all(&in_memory));
}
