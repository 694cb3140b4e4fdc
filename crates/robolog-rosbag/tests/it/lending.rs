//! `Messages::next_ref` lends exactly the messages that iterating gives, in every order, with and
//! without worker threads: on every test bag, and on written bags whose chunks overlap in time
//! (so that time order merges chunks) against the order the messages were written in.

use std::io::Cursor;

use robolog_rosbag::{
    Bag, ChunkCompression, Message, MessageRef, Order, Position, Query, WriteOptions, Writer,
};
use robolog_testkit::testdata;

type Seen = Result<(u32, u64, Vec<u8>, Position), String>;

/// (connection, time, data) of a written message.
type Written = (u32, u64, Vec<u8>);

fn owned(m: robolog_rosbag::Result<Message>) -> Seen {
    m.map(|m| (m.conn, m.time_ns, m.data.to_vec(), m.position))
        .map_err(|e| e.to_string())
}

fn lent(m: robolog_rosbag::Result<MessageRef<'_>>) -> Seen {
    m.map(|m| (m.conn, m.time_ns, m.data.to_vec(), m.position))
        .map_err(|e| e.to_string())
}

fn iterated(query: Query) -> Vec<Seen> {
    query.into_iter().map(owned).collect()
}

fn borrowed(query: Query) -> Vec<Seen> {
    let mut messages = query.iter();
    let mut seen = Vec::new();
    while let Some(m) = messages.next_ref() {
        seen.push(lent(m));
    }
    // Exhausted stays exhausted.
    assert!(messages.next_ref().is_none());
    seen
}

/// The queries every bag is read with: everything, and one topic over the middle half.
fn queries(bag: &Bag) -> Vec<(String, Query)> {
    let mut queries = Vec::new();
    for order in [Order::LogTime, Order::ReverseLogTime, Order::File] {
        for threads in [None, Some(0), Some(2)] {
            let mut all = bag.messages().order(order);
            if let Some(threads) = threads {
                all = all.threads(threads);
            }
            queries.push((format!("all {order:?} {threads:?}"), all.clone()));
            let summary = bag.summary();
            if let (Some(first), Some(start), Some(end)) =
                (bag.connections().first(), summary.start_ns, summary.end_ns)
            {
                let quarter = (end - start) / 4;
                let some = all
                    .topics([first.topic.clone()])
                    .time_range(start + quarter..=end - quarter);
                queries.push((format!("some {order:?} {threads:?}"), some));
            }
        }
    }
    queries
}

#[test]
fn lending_gives_what_iterating_gives_on_every_test_bag() {
    let files = testdata::files_with_extension("bags", ".bag");
    let mut compared = 0;
    for path in files {
        let Ok(bag) = Bag::from_file(&path) else {
            continue;
        };
        for (name, query) in queries(&bag) {
            let want = iterated(query.clone());
            let got = borrowed(query);
            assert_eq!(got, want, "{} {name}", path.display());
            compared += want.len();
        }
    }
    assert!(compared > 10_000, "{compared}");
}

#[test]
fn reverse_log_time_is_log_time_backwards_on_every_test_bag() {
    let mut compared = 0;
    let mut versions = std::collections::BTreeSet::new();
    for path in testdata::files_with_extension("bags", ".bag") {
        let Ok(bag) = Bag::from_file(&path) else {
            continue;
        };
        for threads in [0, 2] {
            let forward = iterated(bag.messages().order(Order::LogTime).threads(threads));
            let mut backward =
                iterated(bag.messages().order(Order::ReverseLogTime).threads(threads));
            backward.reverse();
            assert_eq!(backward, forward, "{} {threads}", path.display());
            compared += forward.len();
        }
        versions.insert(bag.version());
    }
    // Format 1.2 (messages outside chunks) and 2.0 alike.
    assert_eq!(versions.len(), 2, "{versions:?}");
    assert!(compared > 10_000, "{compared}");
}

/// Times that jitter by up to 50 ns around 10 ns steps: neighbouring chunks overlap in time and
/// equal times occur.
fn jittered(i: u64) -> u64 {
    1_000_000 + i * 10 + (i * 7919) % 50
}

/// Times in a staircase down: each block of 25 messages starts 100 ns before the block written
/// before it and spans 240 ns in 10 ns steps. So a chunk often starts earlier than the chunk
/// before it in the file, and holds a message at the very time that chunk starts (which must
/// come second: equal times keep the file's order).
fn staircase(i: u64) -> u64 {
    1_000_000 + 30_000 - (i / 25) * 100 + (i % 25) * 10
}

/// Writes `n` messages on three connections in chunks of about 2 KiB, message `i` at
/// `time(i)`. Returns the bag and what was written, in writing order.
fn small_chunk_bag(
    compression: ChunkCompression,
    n: u64,
    time: fn(u64) -> u64,
) -> (Vec<u8>, Vec<Written>) {
    let options = WriteOptions::new()
        .compression(compression)
        .chunk_threshold(2048);
    let mut writer = Writer::with_options(Cursor::new(Vec::new()), options).unwrap();
    let md5 = "992ce8a1687cec8c8bd883ec73ca41d1";
    let conns: Vec<u32> = ["/a", "/b", "/c"]
        .iter()
        .map(|topic| {
            writer
                .add_connection(topic, "std_msgs/String", md5, "string data\n")
                .unwrap()
        })
        .collect();
    let mut written = Vec::new();
    for i in 0..n {
        let conn = conns[(i % 3) as usize];
        let time = time(i);
        let text = format!("message {i}");
        let mut data = (text.len() as u32).to_le_bytes().to_vec();
        data.extend_from_slice(text.as_bytes());
        writer.write(conn, time, &data).unwrap();
        written.push((conn, time, data));
    }
    (writer.finish().unwrap().into_inner(), written)
}

fn without_positions(seen: Vec<Seen>) -> Vec<Written> {
    seen.into_iter()
        .map(|m| {
            let (conn, time, data, _) = m.unwrap();
            (conn, time, data)
        })
        .collect()
}

#[test]
fn lending_merges_overlapping_chunks_in_time_order() {
    for compression in [
        ChunkCompression::None,
        ChunkCompression::Lz4,
        ChunkCompression::Bz2,
    ] {
        let (bytes, written) = small_chunk_bag(compression, 3000, jittered);
        let bag = Bag::open(bytes).unwrap();
        // Many chunks, so that the queries with threads load several at once.
        assert!(bag.chunks().count() > 40, "{compression:?}");
        let mut by_time = written.clone();
        by_time.sort_by_key(|&(_, time, _)| time);
        for threads in [None, Some(0), Some(1), Some(3)] {
            let backwards: Vec<Written> = by_time.iter().rev().cloned().collect();
            for (order, want) in [
                (Order::LogTime, &by_time),
                (Order::ReverseLogTime, &backwards),
                (Order::File, &written),
            ] {
                let mut query = bag.messages().order(order);
                if let Some(threads) = threads {
                    query = query.threads(threads);
                }
                let got = borrowed(query.clone());
                assert_eq!(
                    got,
                    iterated(query),
                    "{compression:?} {order:?} {threads:?}"
                );
                assert_eq!(
                    &without_positions(got),
                    want,
                    "{compression:?} {order:?} {threads:?}"
                );
            }
        }
        // A filtered query, lent and iterated alike.
        let query = bag
            .messages()
            .topics(["/b"])
            .time_range(1_005_000..1_020_000);
        let b = bag
            .connections()
            .iter()
            .find(|c| c.topic == "/b")
            .unwrap()
            .id;
        let want: Vec<_> = by_time
            .iter()
            .filter(|&&(conn, time, _)| conn == b && (1_005_000..1_020_000).contains(&time))
            .cloned()
            .collect();
        assert!(want.len() > 100);
        assert_eq!(without_positions(borrowed(query)), want, "{compression:?}");
    }
}

#[test]
fn equal_times_across_chunks_keep_the_file_order() {
    for compression in [ChunkCompression::None, ChunkCompression::Lz4] {
        let (bytes, written) = small_chunk_bag(compression, 3000, staircase);
        let bag = Bag::open(bytes).unwrap();
        assert!(bag.chunks().count() > 40, "{compression:?}");
        let mut by_time = written.clone();
        by_time.sort_by_key(|&(_, time, _)| time);
        for threads in [0, 2] {
            let query = bag.messages().order(Order::LogTime).threads(threads);
            let got = borrowed(query.clone());
            assert_eq!(got, iterated(query), "{compression:?} {threads}");
            assert_eq!(without_positions(got), by_time, "{compression:?} {threads}");
        }
    }
}
