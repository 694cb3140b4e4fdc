//! The indexed reader's three orders, message by message, against a sort of everything written:
//! log-time order is a stable sort by log time of the file order (equal times in file order),
//! reverse order its exact reverse. Files cover chunks that overlap in time, messages out of
//! order inside a chunk, equal times within and across chunks, and loose (unchunked) messages;
//! reads cover inline and parallel decoding and a cache too small for the overlapping chunks.

use std::collections::BTreeMap;

use robolog_mcap::{
    Bytes, Compression, McapReader, Message, Order, ReadOptions, WriteOptions, Writer,
};

const MESSAGES: u64 = 3000;
const TOPICS: [&str; 3] = ["/a", "/b", "/c"];

/// (log time, sequence, topic index) of every message, in file order.
type Written = Vec<(u64, u32, usize)>;

fn lcg(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *state >> 33
}

/// Log times by pattern: ties, jitter inside chunks, a sawtooth (chunks overlapping), noise,
/// and a staircase down: each block of 25 messages starts 10 before the one written before
/// it and spans 25, so a chunk often starts earlier than the chunk before it in the file and
/// holds a message at the very time that chunk starts (which must then come second).
fn log_time(pattern: usize, i: u64, rng: &mut u64) -> u64 {
    match pattern {
        0 => 1_000 + i / 7,
        1 => 1_000 + i * 10 + lcg(rng) % 60,
        2 => 1_000 + (i % 97) * 3 + i / 50,
        3 => 1_000 + lcg(rng) % 40,
        _ => 10_000 - (i / 25) * 10 + i % 25,
    }
}

fn write(pattern: usize, chunk_size: Option<u64>, compression: Compression) -> (Bytes, Written) {
    let opts = WriteOptions::new()
        .compression(compression)
        .chunk_size(chunk_size);
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let channels: Vec<u16> = TOPICS
        .iter()
        .map(|t| w.register_channel(t, "raw", 0, BTreeMap::new()).unwrap())
        .collect();
    let mut rng = 7 + pattern as u64;
    let mut written = Vec::new();
    for i in 0..MESSAGES {
        let t = log_time(pattern, i, &mut rng);
        let topic = (lcg(&mut rng) % 3) as usize;
        let mut data = (i as u32).to_le_bytes().to_vec();
        data.resize(4 + (lcg(&mut rng) % 60) as usize, 0xA5);
        w.write_message(&Message {
            channel_id: channels[topic],
            sequence: i as u32,
            log_time: t,
            publish_time: t,
            data: &data,
        })
        .unwrap();
        written.push((t, i as u32, topic));
    }
    (Bytes::from(w.finish().unwrap()), written)
}

fn expected(
    written: &Written,
    order: Order,
    topic: Option<usize>,
    range: Option<(u64, u64)>,
) -> Vec<(u64, u32)> {
    let mut out: Vec<(u64, u32)> = written
        .iter()
        .filter(|(t, _, c)| {
            topic.is_none_or(|want| *c == want)
                && range.is_none_or(|(start, end)| *t >= start && *t < end)
        })
        .map(|(t, s, _)| (*t, *s))
        .collect();
    if order != Order::File {
        // Stable: equal log times stay in file order.
        out.sort_by_key(|(t, _)| *t);
    }
    if order == Order::ReverseLogTime {
        out.reverse();
    }
    out
}

fn read(
    file: &Bytes,
    opts: ReadOptions,
    order: Order,
    topic: Option<usize>,
    range: Option<(u64, u64)>,
) -> Vec<(u64, u32)> {
    let reader = McapReader::open_with(file.clone(), opts).unwrap();
    let mut query = reader.messages().order(order);
    if let Some(topic) = topic {
        query = query.topics([TOPICS[topic]]);
    }
    if let Some((start, end)) = range {
        query = query.time_range(start..end);
    }
    let iterated: Vec<(u64, u32, Vec<u8>)> = query
        .clone()
        .iter()
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            assert_eq!(
                &m.data[..4],
                &m.sequence.to_le_bytes(),
                "payload of {}",
                m.sequence
            );
            (m.log_time, m.sequence, m.data.to_vec())
        })
        .collect();
    // Lending gives the same messages with the same payloads.
    let mut lent = Vec::new();
    let mut messages = query.iter().unwrap();
    while let Some(m) = messages.next_ref() {
        let m = m.unwrap();
        lent.push((m.log_time, m.sequence, m.data.to_vec()));
    }
    assert!(lent == iterated, "lent and iterated messages differ");
    iterated.into_iter().map(|(t, s, _)| (t, s)).collect()
}

#[test]
fn every_order_matches_a_sort_of_the_written_messages() {
    let mut compressions = vec![Compression::None];
    if Compression::Lz4.is_enabled() {
        compressions.push(Compression::Lz4);
    }
    let inline = ReadOptions::default().threads(0);
    let parallel = ReadOptions::default().threads(2);
    // The cache of decoded chunks is as large as the largest chunk accepted: smaller than the
    // chunks that overlap at once, so chunks are dropped and decoded again.
    let tiny_cache = parallel.clone().max_record_size(16 << 10);
    for pattern in 0..5 {
        for chunk_size in [Some(512), Some(4096), None] {
            for &compression in &compressions {
                if chunk_size.is_none() && compression != Compression::None {
                    continue;
                }
                let (file, written) = write(pattern, chunk_size, compression);
                let mid = written[written.len() / 2].0;
                for order in [Order::LogTime, Order::ReverseLogTime, Order::File] {
                    for (topic, range) in [
                        (None, None),
                        (Some(1), None),
                        (None, Some((mid - 20, mid + 20))),
                        (Some(2), Some((mid - 200, mid + 5))),
                    ] {
                        let want = expected(&written, order, topic, range);
                        assert!(!want.is_empty());
                        for (name, opts) in [
                            ("inline", &inline),
                            ("parallel", &parallel),
                            ("tiny cache", &tiny_cache),
                        ] {
                            let got = read(&file, opts.clone(), order, topic, range);
                            assert!(
                                got == want,
                                "pattern {pattern}, chunks {chunk_size:?}, {compression:?}, \
                                 {order:?}, topic {topic:?}, range {range:?}, {name}: first \
                                 difference at {:?}",
                                got.iter().zip(&want).position(|(a, b)| a != b)
                            );
                        }
                    }
                }
            }
        }
    }
}
