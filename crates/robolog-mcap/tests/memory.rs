//! Peak heap use is bounded by the chunk size, not the file size: writing, linear, streaming and
//! indexed reading of a 48 MB file each stay under a few chunks' worth of memory.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

use std::collections::BTreeMap;

use robolog_mcap::{
    Bytes, Compression, LinearReader, McapReader, Message, Order, StreamReader, WriteOptions,
    Writer,
};

// A test binary of its own rather than a module of `it/`: dhat's heap profile covers the whole
// process, so only the tests of this file may allocate while it runs.
#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// The heap profile is process-wide: the tests of this file take turns.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

const CHUNK: u64 = 1 << 20;
const MESSAGES: u64 = 3000;
const SIZE: usize = 16 * 1024;

fn write_to<W: std::io::Write>(out: W, compression: Compression) -> W {
    let opts = WriteOptions::new()
        .compression(compression)
        .chunk_size(Some(CHUNK));
    let mut w = Writer::new(out, opts).unwrap();
    let channels: Vec<u16> = ["/a", "/b", "/c"]
        .iter()
        .map(|t| w.register_channel(t, "raw", 0, BTreeMap::new()).unwrap())
        .collect();
    let mut data = vec![0u8; SIZE];
    for i in 0..MESSAGES {
        data[..8].copy_from_slice(&i.to_le_bytes());
        data[8] = i as u8;
        // Overlapping time ranges between chunks: every 3rd message goes 40 ms back.
        let t = i * 1_000_000 - if i % 3 == 1 && i > 100 { 40_000_000 } else { 0 };
        w.write_message(&Message {
            channel_id: channels[(i % 3) as usize],
            sequence: i as u32,
            log_time: t,
            publish_time: t,
            data: &data,
        })
        .unwrap();
    }
    w.finish().unwrap()
}

/// Runs `f` under a fresh heap profiler and returns the peak bytes it had allocated at once.
fn peak(f: impl FnOnce()) -> usize {
    // Each read opens its own reader: no buffers kept from earlier reads hide its allocations.
    let _profiler = dhat::Profiler::builder().testing().build();
    f();
    dhat::HeapStats::get().max_bytes
}

/// A file read by position (its reads slice the buffer, so that they allocate nothing).
#[derive(Debug)]
struct NotInMemory(Bytes);

impl robolog_query::ReadAt for NotInMemory {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_at(&self, range: std::ops::Range<u64>) -> std::io::Result<Bytes> {
        Ok(self.0.slice(range.start as usize..range.end as usize))
    }
}

#[test]
fn peak_memory_is_bounded_by_the_chunk_size() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bound = 16 * CHUNK as usize;
    for compression in [Compression::Zstd, Compression::Lz4] {
        let file = Bytes::from(write_to(Vec::new(), compression));
        let total = MESSAGES as usize * SIZE;
        assert!(total > 2 * bound, "the file must be larger than the bound");

        let writing = peak(|| {
            write_to(std::io::sink(), compression);
        });
        let linear = peak(|| {
            let n = LinearReader::new(file.clone())
                .into_messages()
                .fold(0, |n, m| {
                    m.unwrap();
                    n + 1
                });
            assert_eq!(n as u64, MESSAGES);
        });
        let streaming = peak(|| {
            let mut reader = StreamReader::new(&file[..]);
            let mut n = 0;
            while let Some(r) = reader.next_record() {
                if matches!(r.unwrap(), robolog_mcap::Record::Message(_)) {
                    n += 1;
                }
            }
            assert_eq!(n, MESSAGES);
        });
        let indexed = peak(|| {
            let reader = McapReader::open(file.clone()).unwrap();
            for order in [Order::LogTime, Order::ReverseLogTime, Order::File] {
                let n = reader
                    .messages()
                    .order(order)
                    .iter()
                    .unwrap()
                    .fold(0, |n, m| {
                        m.unwrap();
                        n + 1
                    });
                assert_eq!(n as u64, MESSAGES);
            }
        });
        // Checked by position (as a file or a remote object is), a piece at a time.
        let checking = peak(|| {
            let input = robolog_query::Input::new(NotInMemory(file.clone()));
            let checked =
                robolog_mcap::check_input(&input, robolog_mcap::CheckOptions::new()).unwrap();
            assert_eq!(checked.messages, MESSAGES);
        });
        for (what, bytes) in [
            ("check", checking),
            ("write", writing),
            ("linear", linear),
            ("stream", streaming),
            ("indexed", indexed),
        ] {
            eprintln!("{compression:?} {what}: peak heap {bytes} bytes for a {total}-byte file");
            assert!(
                bytes < bound,
                "{compression:?} {what}: peak {bytes} bytes for a {total}-byte file (bound {bound})"
            );
        }
    }
}

#[test]
fn chunks_overlapping_in_time_stay_within_the_cache() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Every chunk spans the whole recording: a time-ordered read needs all of them at once,
    // which the cache refuses; evicted chunks are decoded again when due.
    let opts = WriteOptions::new().chunk_size(Some(256 * 1024));
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let channel = w.register_channel("/a", "raw", 0, BTreeMap::new()).unwrap();
    let mut data = vec![7u8; SIZE];
    let n = 2000u64;
    for i in 0..n {
        let t = (i * 7919) % n;
        data[..8].copy_from_slice(&t.to_le_bytes());
        w.write_message(&Message {
            channel_id: channel,
            sequence: i as u32,
            log_time: t,
            publish_time: t,
            data: &data,
        })
        .unwrap();
    }
    let file = Bytes::from(w.finish().unwrap());
    let total = n as usize * SIZE;
    for order in [Order::LogTime, Order::ReverseLogTime] {
        let bytes = peak(|| {
            // The cache of decoded chunks is as large as the largest chunk accepted.
            let opts = robolog_mcap::ReadOptions::default().max_record_size(2 << 20);
            let reader = McapReader::open_with(file.clone(), opts).unwrap();
            let mut times = Vec::new();
            for m in reader.messages().order(order).iter().unwrap() {
                let m = m.unwrap();
                assert_eq!(&m.data[..8], &m.log_time.to_le_bytes());
                times.push(m.log_time);
            }
            let mut want: Vec<u64> = (0..n).collect();
            if order == Order::ReverseLogTime {
                want.reverse();
            }
            assert_eq!(times, want);
        });
        eprintln!(
            "{order:?} over overlapping chunks: peak heap {bytes} bytes for a {total}-byte file"
        );
        assert!(
            bytes < 8 << 20,
            "{order:?}: peak {bytes} bytes for a {total}-byte file"
        );
    }
}
