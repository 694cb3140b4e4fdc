//! Cut sample bags at every byte of their first 8 KiB and at strided offsets after that: opening
//! with recovery (and streaming) never panics and returns exactly the complete messages before
//! the cut.

use robolog_rosbag::{Bag, Error, Order, Position, StreamReader};
use robolog_testkit::{testdata, truncation};

type Seen = Vec<(u32, u64, Vec<u8>)>;
/// A message and the offset where its record ends.
type Located = ((u32, u64, Vec<u8>), usize);

/// Every message of the whole file with the offset where its record ends, computed from the
/// record's own length fields.
fn full(bytes: &[u8]) -> Vec<Located> {
    let bag = Bag::open(bytes.to_vec()).unwrap();
    bag.messages()
        .order(Order::File)
        .into_iter()
        .map(|m| {
            let m = m.unwrap();
            let Position::File(at) = m.position else {
                panic!("sample must be uncompressed");
            };
            let at = at as usize;
            let u32_at =
                |p: usize| u32::from_le_bytes(bytes[p..p + 4].try_into().unwrap()) as usize;
            let header_len = u32_at(at);
            let end = at + 8 + header_len + u32_at(at + 4 + header_len);
            ((m.conn, m.time_ns, m.data.to_vec()), end)
        })
        .collect()
}

fn from_bag(prefix: &[u8]) -> Result<Seen, String> {
    let bag = match Bag::open(prefix.to_vec()) {
        Ok(bag) => bag,
        Err(e) if e.is_truncation() || matches!(e, Error::EmptyFile) => return Ok(Vec::new()),
        Err(e) => return Err(format!("open: {e}")),
    };
    bag.messages()
        .order(Order::File)
        .into_iter()
        .map(|m| {
            m.map(|m| (m.conn, m.time_ns, m.data.to_vec()))
                .map_err(|e| e.to_string())
        })
        .collect()
}

fn from_stream(prefix: &[u8]) -> Result<Seen, String> {
    let reader = match StreamReader::new(prefix) {
        Ok(reader) => reader,
        Err(e) if e.is_truncation() || matches!(e, Error::EmptyFile) => return Ok(Vec::new()),
        Err(e) => return Err(format!("stream open: {e}")),
    };
    reader
        .map(|m| {
            m.map(|m| (m.conn, m.time_ns, m.data.to_vec()))
                .map_err(|e| e.to_string())
        })
        .collect()
}

fn sweep(path: &str, stride: usize) {
    let bytes = testdata::read(path);
    let all = full(&bytes);
    truncation::sweep(&bytes, 8192, stride, |cut, prefix| {
        let expected: Seen = all
            .iter()
            .filter(|(_, end)| *end <= cut)
            .map(|(m, _)| m.clone())
            .collect();
        let got = from_bag(prefix)?;
        if got != expected {
            return Err(format!(
                "Bag gave {} messages, expected {}",
                got.len(),
                expected.len()
            ));
        }
        let streamed = from_stream(prefix)?;
        if streamed != expected {
            return Err(format!(
                "StreamReader gave {} messages, expected {}",
                streamed.len(),
                expected.len()
            ));
        }
        Ok(())
    });
}

#[test]
fn truncated_v20_bag_gives_exactly_its_complete_messages() {
    sweep("bags/generated/ros_comm/ref_none.bag", 61);
}

#[test]
fn truncated_v12_bags_give_exactly_their_complete_messages() {
    sweep("bags/generated/ros_comm/v12_indexed.bag", 257);
    sweep("bags/generated/ros_comm/v12_noheader.bag", 257);
}

#[test]
fn truncated_compressed_bags_give_a_prefix_and_never_panic() {
    for path in [
        "bags/generated/ros_comm/ref_lz4.bag",
        "bags/generated/ros_comm/ref_bz2.bag",
    ] {
        let bytes = testdata::read(path);
        let bag = Bag::open(bytes.clone()).unwrap();
        let all: Seen = bag
            .messages()
            .order(Order::File)
            .into_iter()
            .map(|m| {
                let m = m.unwrap();
                (m.conn, m.time_ns, m.data.to_vec())
            })
            .collect();
        // Messages of chunks that end before the cut must all be there.
        let chunk_ends: Vec<(usize, usize)> = {
            let mut seen = 0;
            bag.chunks()
                .zip(bag.chunk_headers())
                .map(|(c, header)| {
                    seen += c
                        .message_counts
                        .iter()
                        .map(|&(_, n)| n as usize)
                        .sum::<usize>();
                    let compressed_size = header.unwrap().compressed_size as usize;
                    let end = c.position as usize + 4 + 40 + 4 + compressed_size;
                    (end, seen)
                })
                .collect()
        };
        truncation::sweep(&bytes, 4096 + 512, 37, |cut, prefix| {
            let at_least = chunk_ends
                .iter()
                .filter(|(end, _)| *end <= cut)
                .map(|&(_, n)| n)
                .max()
                .unwrap_or(0);
            for got in [from_bag(prefix)?, from_stream(prefix)?] {
                if got.len() < at_least || got[..] != all[..got.len()] {
                    return Err(format!(
                        "{} messages, not a prefix of at least {at_least}",
                        got.len()
                    ));
                }
            }
            Ok(())
        });
    }
}
