//! The indexed reader over an input read by position: which ranges opening and a query read, and
//! that a query announces the chunks it will read ([`ReadAt::prefetch`]) before reading them,
//! so that a remote input can fetch them ahead, neighbours together.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use robolog_mcap::{Bytes, Compression, McapReader, Message, WriteOptions, Writer};
use robolog_query::{Input, ReadAt};

/// A file in memory that records the reads and the prefetch hints it is given (and is not "in
/// memory" to the reader, so that every read goes through it).
#[derive(Debug, Default)]
struct Recorded {
    data: Bytes,
    reads: Mutex<Vec<Range<u64>>>,
    hints: Mutex<Vec<Vec<Range<u64>>>>,
}

/// The reader's handle on a [`Recorded`] file, which the test keeps too.
#[derive(Debug)]
struct Shared(Arc<Recorded>);

impl ReadAt for Shared {
    fn len(&self) -> u64 {
        self.0.data.len() as u64
    }
    fn read_at(&self, range: Range<u64>) -> std::io::Result<Bytes> {
        self.0.reads.lock().unwrap().push(range.clone());
        Ok(self.0.data.slice(range.start as usize..range.end as usize))
    }
    fn prefetch(&self, ranges: &[Range<u64>]) {
        self.0.hints.lock().unwrap().push(ranges.to_vec());
    }
}

/// Eight chunks of `/a` and `/b` messages at 10 ns steps, 100 messages a chunk.
fn file() -> Bytes {
    let opts = WriteOptions::new()
        .compression(Compression::None)
        .chunk_size(Some(1 << 20));
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let a = w.register_channel("/a", "raw", 0, BTreeMap::new()).unwrap();
    let b = w.register_channel("/b", "raw", 0, BTreeMap::new()).unwrap();
    for i in 0..800u64 {
        w.write_message(&Message {
            channel_id: if i % 2 == 0 { a } else { b },
            sequence: i as u32,
            log_time: i * 10,
            publish_time: i * 10,
            data: &[i as u8; 256],
        })
        .unwrap();
        if i % 100 == 99 {
            w.flush_chunk().unwrap();
        }
    }
    Bytes::from(w.finish().unwrap())
}

/// `/t0` .. `/t{n-1}`, one message each, in one chunk.
fn many_channels(n: u64) -> Bytes {
    let mut w = Writer::new(Vec::new(), WriteOptions::new()).unwrap();
    for i in 0..n {
        let topic = format!("/a/long/enough/topic/name/to/fill/the/summary/{i}");
        let ch = w
            .register_channel(&topic, "raw", 0, BTreeMap::new())
            .unwrap();
        w.write_message(&Message {
            channel_id: ch,
            sequence: 0,
            log_time: i,
            publish_time: i,
            data: b"x",
        })
        .unwrap();
    }
    Bytes::from(w.finish().unwrap())
}

fn opened(data: Bytes) -> (Arc<Recorded>, McapReader) {
    let source = Arc::new(Recorded {
        data,
        ..Recorded::default()
    });
    let reader = McapReader::open(Input::new(Shared(Arc::clone(&source)))).unwrap();
    (source, reader)
}

#[test]
fn opening_an_indexed_file_reads_its_tail_once_and_its_head() {
    let (source, reader) = opened(file());
    let len = source.data.len() as u64;
    assert!(len > 2 * (64 << 10), "{len}");
    assert_eq!(reader.summary().chunk_indexes.len(), 8);
    assert_eq!(
        reader.summary().statistics.as_ref().unwrap().message_count,
        800
    );
    assert!(reader.summary().header.is_some());
    let reads = source.reads.lock().unwrap().clone();
    // One read of the tail (footer and summary together), one of the head (the Header record).
    assert_eq!(reads.len(), 2, "{reads:?}");
    assert_eq!(reads[0].end, len);
    assert_eq!(reads[1].start, 0);
    assert!(reads[1].end <= 4096);

    // A summary larger than the tail read: one more read, of the summary section alone.
    let (source, reader) = opened(many_channels(3000));
    assert_eq!(reader.summary().channels.len(), 3000);
    let summary_start = reader.summary().footer.unwrap().summary_start;
    let len = source.data.len() as u64;
    assert!(len - summary_start > 64 << 10);
    let reads = source.reads.lock().unwrap().clone();
    assert_eq!(reads.len(), 3, "{reads:?}");
    assert_eq!(reads[2].start, summary_start);

    // A small file: everything from the one read of its tail.
    let (source, reader) = opened(many_channels(3));
    assert_eq!(reader.summary().channels.len(), 3);
    let whole = 0..source.data.len() as u64;
    assert_eq!(*source.reads.lock().unwrap(), [whole]);
}

fn within(range: &Range<u64>, ranges: &[Range<u64>]) -> bool {
    ranges
        .iter()
        .any(|r| r.start <= range.start && range.end <= r.end)
}

#[test]
fn a_query_announces_the_chunks_it_reads_before_reading_them() {
    let source = Arc::new(Recorded {
        data: file(),
        ..Recorded::default()
    });
    let reader = McapReader::open(Input::new(Shared(Arc::clone(&source)))).unwrap();
    let chunks = reader.summary().chunk_indexes.clone();
    assert_eq!(chunks.len(), 8);
    // (What opening reads: `opening_an_indexed_file_reads_its_tail_once_and_its_head`.)
    source.reads.lock().unwrap().clear();

    // `/a` in the time of chunks 2 and 3: those two chunks, each with its message indexes.
    let times: Vec<u64> = reader
        .messages()
        .topics(["/a"])
        .time_range(2500..3500)
        .iter()
        .unwrap()
        .map(|m| m.unwrap().log_time)
        .collect();
    assert_eq!(times, (2500..3500).step_by(20).collect::<Vec<u64>>());
    let hints = source.hints.lock().unwrap().clone();
    let expected: Vec<Range<u64>> = chunks[2..4]
        .iter()
        .map(|c| {
            c.chunk_start_offset..c.chunk_start_offset + c.chunk_length + c.message_index_length
        })
        .collect();
    assert_eq!(hints.len(), 1);
    assert_eq!(hints[0], expected);
    let reads = source.reads.lock().unwrap().clone();
    assert!(!reads.is_empty());
    for read in &reads {
        assert!(within(read, &expected), "{read:?} was not announced");
    }

    // Every message of the chunks it needs: the chunk records alone (no message index is read).
    source.hints.lock().unwrap().clear();
    source.reads.lock().unwrap().clear();
    let count = reader.messages().time_range(..2000).iter().unwrap().count();
    assert_eq!(count, 200);
    let expected: Vec<Range<u64>> = chunks[..2]
        .iter()
        .map(|c| c.chunk_start_offset..c.chunk_start_offset + c.chunk_length)
        .collect();
    let hints = source.hints.lock().unwrap().clone();
    assert_eq!(hints.len(), 1);
    assert_eq!(hints[0], expected);
    for read in source.reads.lock().unwrap().iter() {
        assert!(within(read, &expected), "{read:?} was not announced");
    }
}

/// A file without its summary and footer (a recorder that stopped): 12 chunks of about 1 MiB.
fn cut_recording() -> Bytes {
    let opts = WriteOptions::new()
        .compression(Compression::None)
        .chunk_size(Some(1 << 20));
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let a = w.register_channel("/a", "raw", 0, BTreeMap::new()).unwrap();
    for i in 0..192u64 {
        w.write_message(&Message {
            channel_id: a,
            sequence: i as u32,
            log_time: i * 10,
            publish_time: i * 10,
            data: &vec![i as u8; 64 << 10],
        })
        .unwrap();
    }
    let file = w.finish().unwrap();
    let reader = McapReader::open(Bytes::from(file.clone())).unwrap();
    let data_end = reader
        .summary()
        .chunk_indexes
        .last()
        .map(|c| c.chunk_start_offset + c.chunk_length + c.message_index_length)
        .unwrap();
    Bytes::from(file[..data_end as usize].to_vec())
}

#[test]
fn a_file_without_a_summary_is_scanned_as_it_streams_in_not_read_whole() {
    let data = cut_recording();
    let in_memory = McapReader::open(data.clone()).unwrap();
    assert!(in_memory.summary().chunk_indexes.len() >= 12);
    let (source, by_position) = opened(data.clone());
    // The scan read the file in pieces, never the whole of it at once.
    let reads = source.reads.lock().unwrap().clone();
    let largest = reads.iter().map(|r| r.end - r.start).max().unwrap();
    assert!(
        largest <= 4 << 20,
        "a read of {largest} bytes of {}",
        data.len()
    );
    assert_eq!(
        format!("{:?}", by_position.summary()),
        format!("{:?}", in_memory.summary())
    );
    let messages = |reader: &McapReader| -> Vec<(u64, Vec<u8>)> {
        reader
            .messages()
            .iter()
            .unwrap()
            .map(|m| {
                let m = m.unwrap();
                (m.log_time, m.data.to_vec())
            })
            .collect()
    };
    let all = messages(&in_memory);
    assert_eq!(all.len(), 192);
    assert!(messages(&by_position) == all);
}

#[test]
fn a_query_of_an_unchunked_file_reads_the_span_of_the_wanted_messages() {
    // 1,000 messages of 1 KiB outside chunks, /a and /b in turn, 10 ns apart.
    let mut w = Writer::new(Vec::new(), WriteOptions::new().chunk_size(None)).unwrap();
    let a = w.register_channel("/a", "raw", 0, BTreeMap::new()).unwrap();
    let b = w.register_channel("/b", "raw", 0, BTreeMap::new()).unwrap();
    for i in 0..1000u64 {
        w.write_message(&Message {
            channel_id: if i % 2 == 0 { a } else { b },
            sequence: i as u32,
            log_time: i * 10,
            publish_time: i * 10,
            data: &[i as u8; 1024],
        })
        .unwrap();
    }
    let data = Bytes::from(w.finish().unwrap());
    let in_memory = McapReader::open(data.clone()).unwrap();
    let (source, reader) = opened(data.clone());
    source.reads.lock().unwrap().clear();
    let read = |reader: &McapReader| -> Vec<(u64, u32, Vec<u8>)> {
        reader
            .messages()
            .topics(["/b"])
            .time_range(5000..6000)
            .iter()
            .unwrap()
            .map(|m| {
                let m = m.unwrap();
                (m.log_time, m.sequence, m.data.to_vec())
            })
            .collect()
    };
    let messages = read(&reader);
    assert_eq!(messages, read(&in_memory));
    assert_eq!(
        messages.iter().map(|m| m.0).collect::<Vec<_>>(),
        (5010..6000).step_by(20).collect::<Vec<u64>>()
    );
    assert!(messages.iter().all(|m| m.2 == [m.1 as u8; 1024]));
    // A tenth of the messages' time: about a tenth of the file, in one read.
    let reads = source.reads.lock().unwrap().clone();
    assert_eq!(reads.len(), 1, "{reads:?}");
    let bytes = reads[0].end - reads[0].start;
    assert!(bytes < data.len() as u64 / 9, "{bytes} of {}", data.len());
    // Nothing wanted: nothing read.
    source.reads.lock().unwrap().clear();
    let none = reader
        .messages()
        .time_range(20_000..)
        .iter()
        .unwrap()
        .count();
    assert_eq!(none, 0);
    assert!(source.reads.lock().unwrap().is_empty());
    // Everything, in time order and in file order, as in memory.
    for order in [robolog_mcap::Order::LogTime, robolog_mcap::Order::File] {
        let all = |r: &McapReader| -> Vec<(u64, u32)> {
            r.messages()
                .order(order)
                .iter()
                .unwrap()
                .map(|m| {
                    let m = m.unwrap();
                    (m.log_time, m.sequence)
                })
                .collect()
        };
        assert_eq!(all(&reader), all(&in_memory));
        assert_eq!(all(&reader).len(), 1000);
    }
}
