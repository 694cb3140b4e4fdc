//! The engine over a small container whose chunks, indexes and faults a test describes.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex};

use crate::{
    Batch, Bytes, ChunkMeta, Compression, Container, Decoded, Entry, Hit, Hits, Order, Query, Want,
};

/// A record: channel (`u32`), time (`u64`), then one payload byte.
const RECORD: usize = 13;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rec {
    channel: u32,
    time: u64,
    offset: u64,
}

impl Entry for Rec {
    fn time(&self) -> u64 {
        self.time
    }
    fn channel(&self) -> u32 {
        self.channel
    }
    fn offset(&self) -> u64 {
        self.offset
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// The chunk cannot be read.
    Unreadable,
    /// The index's entries point one record too far.
    IndexOffByOne,
    /// The records are garbage after the first one.
    Garbage,
}

#[derive(Debug)]
struct Fake {
    file: Bytes,
    chunks: Vec<ChunkMeta>,
    faults: Vec<Fault>,
    indexed: bool,
    /// (chunk, prefix) of every read.
    reads: Mutex<Vec<(usize, Option<u64>)>>,
    walks: AtomicUsize,
    /// The chunks of every query's prefetch call.
    prefetched: Mutex<Vec<Vec<usize>>>,
    /// What [`Container::topic_order`] says.
    topic_order: Vec<u32>,
}

fn record(channel: u32, time: u64, payload: u8) -> Vec<u8> {
    let mut r = channel.to_le_bytes().to_vec();
    r.extend_from_slice(&time.to_le_bytes());
    r.push(payload);
    r
}

impl Fake {
    /// Chunks of `(channel, time)` records; payload bytes count up over the file.
    fn new(chunks: &[&[(u32, u64)]], indexed: bool) -> Self {
        let mut file = Vec::new();
        let mut metas = Vec::new();
        let mut payload = 0u8;
        for records in chunks {
            let position = file.len() as u64;
            for &(channel, time) in *records {
                file.extend_from_slice(&record(channel, time, payload));
                payload = payload.wrapping_add(1);
            }
            let mut channels: Vec<u32> = records.iter().map(|r| r.0).collect();
            channels.sort_unstable();
            channels.dedup();
            metas.push(ChunkMeta {
                position,
                start_ns: records.iter().map(|r| r.1).min().unwrap_or(0),
                end_ns: records.iter().map(|r| r.1).max().unwrap_or(0),
                channels: Some(channels),
                messages: Some(records.len() as u64),
                compression: Compression::Lz4,
                uncompressed_size: (records.len() * RECORD) as u64,
            });
        }
        Self {
            file: Bytes::from(file),
            faults: vec![Fault::None; metas.len()],
            chunks: metas,
            indexed,
            reads: Mutex::new(Vec::new()),
            walks: AtomicUsize::new(0),
            prefetched: Mutex::new(Vec::new()),
            topic_order: Vec::new(),
        }
    }

    fn content(&self, chunk: usize) -> &[u8] {
        let c = &self.chunks[chunk];
        &self.file[c.position as usize..(c.position + c.uncompressed_size) as usize]
    }
}

impl Container for Fake {
    type Entry = Rec;
    type Error = String;

    fn chunks(&self) -> &[ChunkMeta] {
        &self.chunks
    }

    fn index(&self, chunk: usize, want: &Want) -> Option<Hits> {
        if !self.indexed {
            return None;
        }
        let shift = if self.faults[chunk] == Fault::IndexOffByOne {
            RECORD as u64
        } else {
            0
        };
        let content = self.content(chunk);
        let mut hits = Hits::default();
        for offset in (0..content.len() as u64).step_by(RECORD) {
            let r = self.message_at(content, offset)?;
            hits.last_message = Some(offset + shift);
            if want.wants(r.channel, r.time) {
                hits.wanted.push(Hit {
                    offset: offset + shift,
                    channel: r.channel,
                    time: r.time,
                });
            }
        }
        Some(hits)
    }

    fn read(
        &self,
        chunk: usize,
        prefix_to: Option<u64>,
        mut buffer: Vec<u8>,
    ) -> Result<Decoded, String> {
        self.reads.lock().unwrap().push((chunk, prefix_to));
        if self.faults[chunk] == Fault::Unreadable {
            return Err(format!("chunk {chunk} is unreadable"));
        }
        let content = self.content(chunk);
        let end = prefix_to.map_or(content.len(), |at| {
            (at as usize + RECORD).min(content.len())
        });
        buffer.clear();
        buffer.extend_from_slice(&content[..end]);
        if self.faults[chunk] == Fault::Garbage {
            for b in &mut buffer[RECORD.min(end)..] {
                *b = 0xff;
            }
        }
        Ok(Decoded {
            whole: end == content.len(),
            content: Bytes::from(buffer),
            file_offset: None,
        })
    }

    fn prefetch(&self, chunks: &[usize], _want: &Want) {
        self.prefetched.lock().unwrap().push(chunks.to_vec());
    }

    fn topic_order(&self) -> Vec<u32> {
        self.topic_order.clone()
    }

    fn message_at(&self, content: &[u8], offset: u64) -> Option<Rec> {
        let at = usize::try_from(offset).ok()?;
        let r = content.get(at..at.checked_add(RECORD)?)?;
        let channel = u32::from_le_bytes(r[..4].try_into().ok()?);
        if channel == u32::from_le_bytes([0xff; 4]) {
            return None;
        }
        Some(Rec {
            channel,
            time: u64::from_le_bytes(r[4..12].try_into().ok()?),
            offset,
        })
    }

    fn walk(
        &self,
        _chunk: usize,
        content: &[u8],
        want: &Want,
        out: &mut Vec<Rec>,
    ) -> Result<bool, String> {
        self.walks.fetch_add(1, AtomicOrdering::Relaxed);
        for offset in (0..content.len() as u64).step_by(RECORD) {
            let r = self
                .message_at(content, offset)
                .ok_or_else(|| format!("garbage at {offset}"))?;
            if want.wants(r.channel, r.time) {
                out.push(r);
            }
        }
        Ok(true)
    }
}

/// (time, channel, payload byte) of every message, or the error in its place.
fn run(query: Query<Fake>) -> Vec<Result<(u64, u32, u8), String>> {
    let mut messages = query.run();
    let mut out = Vec::new();
    while let Some(m) = messages.next_entry() {
        out.push(m.map(|m| {
            let payload = m.content[m.entry.offset as usize + 12];
            (m.entry.time, m.entry.channel, payload)
        }));
    }
    out
}

fn times(results: &[Result<(u64, u32, u8), String>]) -> Vec<u64> {
    results.iter().map(|r| r.as_ref().unwrap().0).collect()
}

/// Three chunks: the first two overlap in time, the third follows.
fn overlapping(indexed: bool) -> Fake {
    Fake::new(
        &[
            &[(1, 10), (2, 20), (1, 30), (1, 30)],
            &[(1, 15), (2, 25), (1, 30)],
            &[(2, 40), (1, 50)],
        ],
        indexed,
    )
}

#[test]
fn every_order_merges_the_chunks_the_same_way_inline_on_workers_and_with_a_tiny_cache() {
    for indexed in [false, true] {
        for threads in [0, 2] {
            for cache in [usize::MAX, 1] {
                let query = |want: Want, order: Order| {
                    Query::new(Arc::new(overlapping(indexed)), want)
                        .order(order)
                        .threads(threads)
                        .tuned(0, cache)
                };
                let log = run(query(Want::everything(), Order::LogTime));
                // Equal times in file order: chunk by chunk, then record by record.
                assert_eq!(
                    log.iter().map(|r| r.clone().unwrap()).collect::<Vec<_>>(),
                    [
                        (10, 1, 0),
                        (15, 1, 4),
                        (20, 2, 1),
                        (25, 2, 5),
                        (30, 1, 2),
                        (30, 1, 3),
                        (30, 1, 6),
                        (40, 2, 7),
                        (50, 1, 8)
                    ]
                );
                let mut reverse = run(query(Want::everything(), Order::ReverseLogTime));
                reverse.reverse();
                assert_eq!(reverse, log);
                let file = run(query(Want::everything(), Order::File));
                let payloads: Vec<u8> = file.iter().map(|r| r.clone().unwrap().2).collect();
                assert_eq!(payloads, (0..9).collect::<Vec<u8>>());
                let one = run(query(Want::new(Some([1]), 15..=30), Order::LogTime));
                assert_eq!(times(&one), [15, 30, 30, 30]);
            }
        }
    }
}

#[test]
fn a_topic_query_reads_each_chunk_only_up_to_its_last_wanted_message() {
    let fake = Arc::new(overlapping(true));
    let got = run(Query::new(Arc::clone(&fake), Want::new(Some([2]), ..)).order(Order::File));
    assert_eq!(times(&got), [20, 25, 40]);
    let mut reads = fake.reads.lock().unwrap().clone();
    reads.sort_unstable();
    // The third chunk's channel-2 message is not its last: a prefix. The first two end
    // with channel 1 too.
    assert_eq!(reads, [(0, Some(13)), (1, Some(13)), (2, Some(0))]);
    assert_eq!(fake.walks.load(AtomicOrdering::Relaxed), 0);
    // Asked to decode whole chunks, it does.
    let fake = Arc::new(overlapping(true));
    run(Query::new(Arc::clone(&fake), Want::new(Some([2]), ..)).whole_chunks(true));
    assert!(
        fake.reads
            .lock()
            .unwrap()
            .iter()
            .all(|(_, prefix)| prefix.is_none())
    );
}

#[test]
fn a_query_announces_the_chunks_it_will_load_in_load_order() {
    let fake = Arc::new(overlapping(true));
    let query = |want: Want, order: Order| {
        Query::new(Arc::clone(&fake), want).order(order).run();
    };
    query(Want::everything(), Order::ReverseLogTime);
    query(Want::new(Some([2]), 35..), Order::LogTime);
    query(Want::new(Some([7]), ..), Order::File);
    assert_eq!(
        *fake.prefetched.lock().unwrap(),
        [vec![2, 1, 0], vec![2], vec![]]
    );
}

#[test]
fn chunks_the_index_rules_out_are_not_read() {
    let fake = Arc::new(overlapping(true));
    // Chunk 1 spans 15..=30 but holds channel 1 only at 15 and 30.
    let got = run(Query::new(Arc::clone(&fake), Want::new(Some([1]), 16..30)));
    assert!(got.is_empty());
    assert!(fake.reads.lock().unwrap().is_empty());
}

#[test]
fn an_index_that_contradicts_the_records_gives_way_to_a_walk() {
    let mut fake = overlapping(true);
    fake.faults[0] = Fault::IndexOffByOne;
    let fake = Arc::new(fake);
    let got = run(Query::new(Arc::clone(&fake), Want::new(Some([1]), ..)).order(Order::File));
    assert_eq!(times(&got), [10, 30, 30, 15, 30, 50]);
    // The prefix read, the whole chunk, then the walk over it.
    let reads: Vec<_> = fake
        .reads
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.0 == 0)
        .copied()
        .collect();
    assert_eq!(reads, [(0, None)]);
    assert_eq!(fake.walks.load(AtomicOrdering::Relaxed), 1);
}

#[test]
fn a_chunk_that_cannot_be_read_is_an_error_in_its_place_and_the_others_are_read() {
    for threads in [0, 2] {
        let mut fake = overlapping(true);
        fake.faults[1] = Fault::Unreadable;
        let got = run(Query::new(Arc::new(fake), Want::everything())
            .threads(threads)
            .tuned(0, usize::MAX));
        let errors: Vec<_> = got.iter().filter_map(|r| r.clone().err()).collect();
        assert_eq!(errors, ["chunk 1 is unreadable"]);
        let ok: Vec<u64> = got
            .iter()
            .filter_map(|r| r.clone().ok())
            .map(|r| r.0)
            .collect();
        assert_eq!(ok, [10, 20, 30, 30, 40, 50]);
    }
}

#[test]
fn malformed_records_without_an_index_are_an_error() {
    let mut fake = overlapping(false);
    fake.faults[2] = Fault::Garbage;
    let got = run(Query::new(Arc::new(fake), Want::everything()).order(Order::File));
    assert_eq!(got.iter().filter(|r| r.is_err()).count(), 1);
    assert_eq!(got.len(), 8);
    // With an index, the wanted message before the damage is still found.
    let mut fake = overlapping(true);
    fake.faults[2] = Fault::Garbage;
    let got = run(Query::new(Arc::new(fake), Want::new(Some([2]), 35..)).order(Order::File));
    assert_eq!(times(&got), [40]);
}

#[test]
fn messages_outside_chunks_are_merged_with_the_chunks() {
    let fake = overlapping(false);
    // Loose records after the chunks, in the file.
    let mut file = fake.file.to_vec();
    let loose_at = file.len() as u64;
    file.extend_from_slice(&record(1, 12, 100));
    file.extend_from_slice(&record(2, 45, 101));
    file.extend_from_slice(&record(1, 60, 102));
    let file = Bytes::from(file);
    let fake = Fake {
        file: file.clone(),
        ..fake
    };
    let loose: Vec<Rec> = (0..3)
        .map(|i| {
            fake.message_at(&file, loose_at + i * RECORD as u64)
                .unwrap()
        })
        .rev()
        .collect();
    let fake = Arc::new(fake);
    let query = |order| {
        Query::new(Arc::clone(&fake), Want::new(Some([1]), ..))
            .order(order)
            .flat(Batch::flat(file.clone(), loose.clone()))
    };
    assert_eq!(
        times(&run(query(Order::LogTime))),
        [10, 12, 15, 30, 30, 30, 50, 60]
    );
    assert_eq!(
        times(&run(query(Order::ReverseLogTime))),
        [60, 50, 30, 30, 30, 15, 12, 10]
    );
    let file_order: Vec<u8> = run(query(Order::File))
        .into_iter()
        .map(|r| r.unwrap().2)
        .collect();
    assert_eq!(file_order, [0, 2, 3, 4, 6, 8, 100, 102]);
}

#[test]
fn decode_buffers_come_back_for_later_chunks() {
    let fake = Arc::new(Fake::new(
        &[&[(1, 1)], &[(1, 2)], &[(1, 3)], &[(1, 4)]],
        false,
    ));
    let pool = crate::BufferPool::new();
    let mut messages = Query::new(fake, Want::everything())
        .buffers(pool.clone())
        .run();
    while let Some(m) = messages.next_entry() {
        m.unwrap();
    }
    drop(messages);
    // Each chunk was decoded into a buffer that came back.
    assert!(pool.take().capacity() > 0);
}

#[test]
fn topic_order_reads_channel_after_channel_each_in_log_time_and_only_its_chunks() {
    for threads in [0, 2] {
        let mut fake = overlapping(true);
        // Channel 2's topic sorts before channel 1's; channel 3 has no messages.
        fake.topic_order = vec![3, 2, 1];
        let fake = Arc::new(fake);
        let query = |want: Want| {
            Query::new(Arc::clone(&fake), want)
                .order(Order::Topic)
                .threads(threads)
                .tuned(0, usize::MAX)
        };
        let all = run(query(Want::everything()));
        let got: Vec<(u64, u32)> = all
            .iter()
            .map(|r| r.clone().map(|m| (m.0, m.1)).unwrap())
            .collect();
        assert_eq!(
            got,
            [
                (20, 2),
                (25, 2),
                (40, 2),
                (10, 1),
                (15, 1),
                (30, 1),
                (30, 1),
                (30, 1),
                (50, 1)
            ]
        );
        // Channel 1 from time 30 on: its chunks alone, in log-time order.
        fake.reads.lock().unwrap().clear();
        let one = run(query(Want::new(Some([1]), 30..)));
        assert_eq!(times(&one), [30, 30, 30, 50]);
        // The wanted channels only, still in topic order.
        let two = run(query(Want::new(Some([1, 2]), 25..=40)));
        let got: Vec<(u64, u32)> = two
            .iter()
            .map(|r| r.clone().map(|m| (m.0, m.1)).unwrap())
            .collect();
        assert_eq!(got, [(25, 2), (40, 2), (30, 1), (30, 1), (30, 1)]);
        // Nothing wanted: nothing read.
        assert!(run(query(Want::new(Some([4]), ..))).is_empty());
    }
    // A container that does not tell its topics: log-time order.
    let plain =
        run(Query::new(Arc::new(overlapping(true)), Want::everything()).order(Order::Topic));
    assert_eq!(times(&plain), [10, 15, 20, 25, 30, 30, 30, 40, 50]);
}

#[test]
fn topic_order_serves_messages_outside_chunks_per_channel() {
    let mut flat = Vec::new();
    let mut entries = Vec::new();
    for (i, (channel, time)) in [(1u32, 5u64), (2, 3), (1, 1), (2, 9)]
        .into_iter()
        .enumerate()
    {
        let offset = flat.len() as u64;
        flat.extend_from_slice(&record(channel, time, i as u8));
        entries.push(Rec {
            channel,
            time,
            offset,
        });
    }
    let mut with_topics = Fake::new(&[], false);
    with_topics.topic_order = vec![2, 1];
    let got = run(Query::new(Arc::new(with_topics), Want::everything())
        .order(Order::Topic)
        .flat(Batch::flat(Bytes::from(flat), entries)));
    let got: Vec<(u64, u32, u8)> = got.into_iter().map(Result::unwrap).collect();
    assert_eq!(got, [(3, 2, 1), (9, 2, 3), (1, 1, 2), (5, 1, 0)]);
}
