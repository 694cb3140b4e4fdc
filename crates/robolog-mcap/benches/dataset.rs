//! The recording both benchmarks use.

#![allow(dead_code, clippy::unwrap_used)]

use std::collections::BTreeMap;

use std::io::Cursor;

use mcap::sans_io::indexed_reader::{IndexedReadEvent, IndexedReader, IndexedReaderOptions};
use robolog_mcap::{Message, WriteOptions, Writer};

/// A recording: (channel index, log time, payload range in `payloads`).
pub(crate) struct Dataset {
    pub(crate) topics: [&'static str; 3],
    pub(crate) messages: Vec<(usize, u64, std::ops::Range<usize>)>,
    pub(crate) payloads: Vec<u8>,
    pub(crate) payload_bytes: u64,
}

/// 10 s of an IMU at 2 kHz (200 B), a camera at 40 Hz (64 KiB) and a lidar at 100 Hz (16 KiB):
/// about 47 MB of payload, half-compressible bytes.
pub(crate) fn dataset() -> Dataset {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut payloads = Vec::new();
    let mut messages = Vec::new();
    let specs = [
        (0usize, 500_000u64, 200usize),
        (1, 25_000_000, 65_536),
        (2, 10_000_000, 16_384),
    ];
    let mut events = Vec::new();
    for (channel, period, size) in specs {
        let mut t = 0;
        while t < 10_000_000_000u64 {
            events.push((t, channel, size));
            t += period;
        }
    }
    events.sort();
    for (t, channel, size) in events {
        let start = payloads.len();
        for i in 0..size {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let b = state as u8;
            payloads.push(if i % 2 == 0 { b & 0x0F } else { (i / 64) as u8 });
        }
        messages.push((
            channel,
            1_700_000_000_000_000_000 + t,
            start..payloads.len(),
        ));
    }
    let payload_bytes = payloads.len() as u64;
    Dataset {
        topics: ["/imu", "/camera", "/lidar"],
        messages,
        payloads,
        payload_bytes,
    }
}

pub(crate) fn write_ours(d: &Dataset, opts: WriteOptions) -> Vec<u8> {
    let mut w = Writer::new(Vec::with_capacity(d.payloads.len() + (1 << 20)), opts).unwrap();
    let schema = w
        .register_schema("bench.Blob", "jsonschema", b"{}")
        .unwrap();
    let channels: Vec<u16> = d
        .topics
        .iter()
        .map(|t| {
            w.register_channel(t, "cdr", schema, BTreeMap::new())
                .unwrap()
        })
        .collect();
    for (i, (channel, t, range)) in d.messages.iter().enumerate() {
        w.write_message(&Message {
            channel_id: channels[*channel],
            sequence: i as u32,
            log_time: *t,
            publish_time: *t,
            data: &d.payloads[range.clone()],
        })
        .unwrap();
    }
    w.finish().unwrap()
}

/// The same recording through the `mcap` crate's writer (1 MiB chunks, its defaults otherwise).
pub(crate) fn write_theirs(d: &Dataset, compression: Option<mcap::Compression>) -> Vec<u8> {
    let mut w = mcap::WriteOptions::new()
        .compression(compression)
        .chunk_size(Some(1 << 20))
        .create(Cursor::new(Vec::with_capacity(
            d.payloads.len() + (1 << 20),
        )))
        .unwrap();
    let schema = w.add_schema("bench.Blob", "jsonschema", b"{}").unwrap();
    let channels: Vec<u16> = d
        .topics
        .iter()
        .map(|t| w.add_channel(schema, t, "cdr", &BTreeMap::new()).unwrap())
        .collect();
    for (i, (channel, t, range)) in d.messages.iter().enumerate() {
        w.write_to_known_channel(
            &mcap::records::MessageHeader {
                channel_id: channels[*channel],
                sequence: i as u32,
                log_time: *t,
                publish_time: *t,
            },
            &d.payloads[range.clone()],
        )
        .unwrap();
    }
    w.finish().unwrap();
    w.into_inner().into_inner()
}

/// All messages the `mcap` crate's indexed reader yields with `options`, as payload bytes.
pub(crate) fn read_theirs_indexed(file: &[u8], options: IndexedReaderOptions) -> u64 {
    let summary = mcap::Summary::read(file).unwrap().unwrap();
    let mut reader = IndexedReader::new_with_options(&summary, options).unwrap();
    let mut total = 0u64;
    while let Some(event) = reader.next_event() {
        let request = match event.unwrap() {
            IndexedReadEvent::ReadChunkRequest { offset, length } => Some((offset, length)),
            IndexedReadEvent::Message { data, .. } => {
                total += data.len() as u64;
                None
            }
        };
        if let Some((offset, length)) = request {
            let start = offset as usize;
            reader
                .insert_chunk_record_data(offset, &file[start..start + length])
                .unwrap();
        }
    }
    total
}
