//! The measured operations, each implemented twice: with robolog and with the peer crate (`mcap`
//! for MCAP files, `rosbag` for bags; for bag → MCAP conversion, `rosbag` reading and `mcap`
//! writing).
//!
//! Every operation consumes each message the way a light consumer would: it counts it, adds its
//! length and reads its first byte. Both sides must report the same counts. Reads use each
//! crate's borrowing API (robolog's `next_ref`), since each message is looked at once.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::hint::black_box;
use std::io::{BufWriter, Write};
use std::path::Path;

use mcap::sans_io::indexed_reader::{
    IndexedReadEvent, IndexedReader, IndexedReaderOptions, ReadOrder,
};
use robolog_mcap::{LinearReader, McapReader, Message, Order as McapOrder};
use robolog_query::Input;
use robolog_rosbag::{Bag, Order as BagOrder};

use super::files::{
    DEFINITION, Totals, Variant, bag_connections, bag_options, mcap_channels, mcap_options,
};
use super::workload::{Workload, fill};

/// One measured operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Op {
    /// Every message in file order.
    ReadFile,
    /// Every message in log-time order.
    ReadTime,
    /// One topic over a time range holding about 1 % of the bytes.
    Query,
    /// Open the file and get its counts and time range from the index/summary.
    Info,
    /// Write the workload from memory into a new file with the same compression.
    Write,
    /// Convert a bag into MCAP (none → none, lz4 → lz4, bz2 → zstd).
    Convert,
}

impl Op {
    pub(crate) const ALL: [Op; 6] = [
        Op::ReadFile,
        Op::ReadTime,
        Op::Query,
        Op::Info,
        Op::Write,
        Op::Convert,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Op::ReadFile => "read, file order",
            Op::ReadTime => "read, log-time order",
            Op::Query => "topic + time range",
            Op::Info => "info/summary",
            Op::Write => "write",
            Op::Convert => "convert to mcap",
        }
    }

    pub(crate) fn arg(self) -> &'static str {
        match self {
            Op::ReadFile => "read-file",
            Op::ReadTime => "read-time",
            Op::Query => "query",
            Op::Info => "info",
            Op::Write => "write",
            Op::Convert => "convert",
        }
    }

    /// Whether the operation applies to files of `variant`.
    pub(crate) fn applies_to(self, variant: Variant) -> bool {
        self != Op::Convert || variant.is_bag()
    }

    /// Whether a peer implementation exists (the `rosbag` crate cannot write).
    pub(crate) fn has_peer(self, variant: Variant) -> bool {
        !(self == Op::Write && variant.is_bag())
    }
}

/// Which implementation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Side {
    Ours,
    Peer,
}

/// Counts a message the way every operation consumes it.
#[derive(Debug, Default)]
struct Consumer {
    totals: Totals,
    first_bytes: u64,
}

impl Consumer {
    fn take(&mut self, data: &[u8]) {
        self.totals.messages += 1;
        self.totals.bytes += data.len() as u64;
        self.first_bytes += u64::from(data.first().copied().unwrap_or(0));
    }

    fn finish(self) -> Totals {
        black_box(self.first_bytes);
        self.totals
    }
}

/// The whole file at `path`, memory-mapped: both sides read the files so (the `mcap` and
/// `rosbag` crates map them).
#[allow(unsafe_code)]
pub(crate) fn mapped(path: &Path) -> std::io::Result<robolog_framing::Bytes> {
    // SAFETY: the benchmark writes its files before it measures and never touches them while
    // they are read.
    let input = unsafe { Input::map(path) }?;
    input.read_all()
}

/// What an operation needs besides its file.
pub(crate) struct Context<'a> {
    pub(crate) workload: &'a Workload,
    pub(crate) variant: Variant,
    pub(crate) input: &'a Path,
    /// Where `write` and `convert` put their output (removed afterwards by the caller).
    pub(crate) output: &'a Path,
    /// The workload in memory, for `write`.
    pub(crate) recording: Option<&'a Recording>,
}

/// Runs `op` once; returns the messages and payload bytes it produced.
pub(crate) fn run(op: Op, side: Side, cx: &Context<'_>) -> Result<Totals, String> {
    let result = match (cx.variant, side) {
        (Variant::Mcap(_), Side::Ours) => ours_mcap(op, cx),
        (Variant::Mcap(_), Side::Peer) => peer_mcap(op, cx),
        (Variant::Bag(_), Side::Ours) => ours_bag(op, cx),
        (Variant::Bag(_), Side::Peer) => peer_bag(op, cx),
    };
    result.map_err(|e| format!("{} {side:?} on {}: {e}", op.arg(), cx.input.display()))
}

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

fn recording<'a>(cx: &Context<'a>) -> AnyResult<&'a Recording> {
    cx.recording.ok_or_else(|| "no recording in memory".into())
}

fn ours_mcap(op: Op, cx: &Context<'_>) -> AnyResult<Totals> {
    let mut c = Consumer::default();
    match op {
        Op::ReadFile => {
            // Borrowed, as the `mcap` crate lends its messages.
            let mut messages = LinearReader::new(mapped(cx.input)?).into_messages();
            while let Some(m) = messages.next_ref() {
                c.take(m?.data);
            }
        }
        Op::ReadTime | Op::Query => {
            let reader = McapReader::open(mapped(cx.input)?)?;
            let mut query = reader.messages().order(McapOrder::LogTime);
            if op == Op::Query {
                let (start, end) = cx.workload.query_range();
                query = query
                    .topics([cx.workload.query.topic])
                    .time_range(start..end);
            }
            let mut messages = query.iter()?;
            while let Some(m) = messages.next_ref() {
                c.take(m?.data);
            }
        }
        Op::Info => {
            let reader = McapReader::open(mapped(cx.input)?)?;
            let stats = reader
                .summary()
                .statistics
                .as_ref()
                .ok_or("no statistics")?;
            c.totals.messages = stats.message_count;
            black_box((stats.message_start_time, stats.message_end_time));
        }
        Op::Write => {
            let rec = recording(cx)?;
            let mut out = BufWriter::with_capacity(1 << 20, File::create(cx.output)?);
            let mut w =
                robolog_mcap::Writer::new_seekable(&mut out, mcap_options(cx.variant.codec()))?;
            let ids = mcap_channels(cx.workload, &mut w)?;
            for m in &rec.messages {
                let data = rec.payload(m);
                w.write_message(&Message {
                    channel_id: ids[m.channel],
                    sequence: m.seq,
                    log_time: m.time_ns,
                    publish_time: m.time_ns,
                    data,
                })?;
                c.take(data);
            }
            w.finish()?;
            out.flush()?;
        }
        Op::Convert => return Err("convert applies to bags".into()),
    }
    Ok(c.finish())
}

fn peer_mcap(op: Op, cx: &Context<'_>) -> AnyResult<Totals> {
    let mut c = Consumer::default();
    match op {
        Op::ReadFile => {
            let file = mapped(cx.input)?;
            for m in mcap::MessageStream::new(&file)? {
                c.take(&m?.data);
            }
        }
        Op::ReadTime | Op::Query => {
            let file = mapped(cx.input)?;
            let summary = mcap::Summary::read(&file)?.ok_or("no summary")?;
            let mut options = IndexedReaderOptions::new().with_order(ReadOrder::LogTime);
            if op == Op::Query {
                let (start, end) = cx.workload.query_range();
                options = options
                    .include_topics([cx.workload.query.topic])
                    .starting_at(start)
                    .ending_before(end);
            }
            let mut reader = IndexedReader::new_with_options(&summary, options)?;
            while let Some(event) = reader.next_event() {
                let request = match event? {
                    IndexedReadEvent::ReadChunkRequest { offset, length } => (offset, length),
                    IndexedReadEvent::Message { data, .. } => {
                        c.take(data);
                        continue;
                    }
                };
                let start = usize::try_from(request.0)?;
                let chunk = file
                    .get(start..start + request.1)
                    .ok_or("chunk out of bounds")?;
                reader.insert_chunk_record_data(request.0, chunk)?;
            }
        }
        Op::Info => {
            let file = mapped(cx.input)?;
            let summary = mcap::Summary::read(&file)?.ok_or("no summary")?;
            let stats = summary.stats.as_ref().ok_or("no statistics")?;
            c.totals.messages = stats.message_count;
            black_box((stats.message_start_time, stats.message_end_time));
        }
        Op::Write => {
            let rec = recording(cx)?;
            let mut w = peer_mcap_writer(cx.output, cx.variant.codec())?;
            let ids = peer_mcap_channels(cx.workload, &mut w)?;
            for m in &rec.messages {
                let data = rec.payload(m);
                w.write_to_known_channel(
                    &mcap::records::MessageHeader {
                        channel_id: ids[m.channel],
                        sequence: m.seq,
                        log_time: m.time_ns,
                        publish_time: m.time_ns,
                    },
                    data,
                )?;
                c.take(data);
            }
            w.finish()?;
            w.into_inner().flush()?;
        }
        Op::Convert => return Err("convert applies to bags".into()),
    }
    Ok(c.finish())
}

/// The `mcap` crate's writer as the peer side uses it: our chunk size, the same codec (none for
/// codecs MCAP lacks), profile `ros1`.
fn peer_mcap_writer(
    path: &Path,
    codec: robolog_mcap::Compression,
) -> AnyResult<mcap::Writer<BufWriter<File>>> {
    let out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let compression = match codec {
        robolog_mcap::Compression::Lz4 => Some(mcap::Compression::Lz4),
        robolog_mcap::Compression::Zstd => Some(mcap::Compression::Zstd),
        _ => None,
    };
    Ok(mcap::WriteOptions::new()
        .compression(compression)
        .chunk_size(Some(robolog_mcap::DEFAULT_CHUNK_SIZE))
        .profile("ros1")
        .create(out)?)
}

fn peer_mcap_channels<W: Write + std::io::Seek>(
    workload: &Workload,
    w: &mut mcap::Writer<W>,
) -> AnyResult<Vec<u16>> {
    let mut ids = Vec::new();
    for c in &workload.channels {
        let schema = w.add_schema(c.ros_type, "ros1msg", DEFINITION.as_bytes())?;
        let metadata = BTreeMap::from([("md5sum".to_owned(), c.md5.to_owned())]);
        ids.push(w.add_channel(schema, c.topic, "ros1", &metadata)?);
    }
    Ok(ids)
}

fn ours_bag(op: Op, cx: &Context<'_>) -> AnyResult<Totals> {
    let mut c = Consumer::default();
    match op {
        Op::ReadFile | Op::ReadTime | Op::Query => {
            let bag = Bag::open(Input::from(mapped(cx.input)?))?;
            let order = if op == Op::ReadFile {
                BagOrder::File
            } else {
                BagOrder::LogTime
            };
            let mut query = bag.messages().order(order);
            if op == Op::Query {
                let (start, end) = cx.workload.query_range();
                query = query
                    .topics([cx.workload.query.topic])
                    .time_range(start..end);
            }
            // Borrowed, as the `rosbag` crate hands out its messages.
            let mut messages = query.iter();
            while let Some(m) = messages.next_ref() {
                c.take(m?.data);
            }
        }
        Op::Info => {
            let bag = Bag::open(Input::from(mapped(cx.input)?))?;
            let summary = bag.summary();
            c.totals.messages = summary.message_count;
            black_box((summary.start_ns, summary.end_ns, bag.connections().len()));
        }
        Op::Write => {
            let rec = recording(cx)?;
            let mut out = BufWriter::with_capacity(1 << 20, File::create(cx.output)?);
            let options = bag_options(match cx.variant {
                Variant::Bag(compression) => compression,
                Variant::Mcap(_) => return Err("not a bag".into()),
            });
            let mut w = robolog_rosbag::Writer::with_options(&mut out, options)?;
            let ids = bag_connections(cx.workload, &mut w)?;
            for m in &rec.messages {
                let data = rec.payload(m);
                w.write(ids[m.channel], m.time_ns, data)?;
                c.take(data);
            }
            w.finish()?;
            out.flush()?;
        }
        Op::Convert => return super::convert::ours(cx),
    }
    Ok(c.finish())
}

/// The compression a converted bag gets in MCAP.
pub(crate) fn convert_compression(variant: Variant) -> robolog_mcap::Compression {
    match variant.codec() {
        robolog_mcap::Compression::Bz2 => robolog_mcap::Compression::Zstd,
        other => other,
    }
}

fn peer_bag(op: Op, cx: &Context<'_>) -> AnyResult<Totals> {
    let mut c = Consumer::default();
    let bag = rosbag::RosBag::new(cx.input)?;
    match op {
        Op::ReadFile => {
            for record in bag.chunk_records() {
                if let rosbag::ChunkRecord::Chunk(chunk) = record? {
                    for m in chunk.messages() {
                        if let rosbag::MessageRecord::MessageData(m) = m? {
                            c.take(m.data);
                        }
                    }
                }
            }
        }
        Op::ReadTime => {
            // The crate reads in file order only: keep every chunk, then sort by time (stable,
            // so equal times keep file order).
            let mut chunks = Vec::new();
            for record in bag.chunk_records() {
                if let rosbag::ChunkRecord::Chunk(chunk) = record? {
                    chunks.push(chunk);
                }
            }
            let mut messages = Vec::new();
            for chunk in &chunks {
                for m in chunk.messages() {
                    if let rosbag::MessageRecord::MessageData(m) = m? {
                        messages.push((m.time, m.data));
                    }
                }
            }
            messages.sort_by_key(|&(time, _)| time);
            for (_, data) in messages {
                c.take(data);
            }
        }
        Op::Query => {
            let (start, end) = cx.workload.query_range();
            let mut wanted = BTreeSet::new();
            let mut chunk_infos = Vec::new();
            for record in bag.index_records() {
                match record? {
                    rosbag::IndexRecord::Connection(conn)
                        if conn.topic == cx.workload.query.topic =>
                    {
                        wanted.insert(conn.id);
                    }
                    rosbag::IndexRecord::ChunkInfo(info)
                        if info.start_time < end && info.end_time >= start =>
                    {
                        let conns: Vec<u32> = info.entries().map(|e| e.conn_id).collect();
                        chunk_infos.push((info.chunk_pos, conns));
                    }
                    _ => {}
                }
            }
            for (pos, conns) in chunk_infos {
                if !conns.iter().any(|id| wanted.contains(id)) {
                    continue;
                }
                let mut records = bag.chunk_records();
                records.seek(pos)?;
                if let Some(rosbag::ChunkRecord::Chunk(chunk)) = records.next().transpose()? {
                    for m in chunk.messages() {
                        if let rosbag::MessageRecord::MessageData(m) = m?
                            && wanted.contains(&m.conn_id)
                            && (start..end).contains(&m.time)
                        {
                            c.take(m.data);
                        }
                    }
                }
            }
        }
        Op::Info => {
            let mut connections = 0;
            let (mut first, mut last) = (u64::MAX, 0);
            for record in bag.index_records() {
                match record? {
                    rosbag::IndexRecord::Connection(_) => connections += 1,
                    rosbag::IndexRecord::ChunkInfo(info) => {
                        first = first.min(info.start_time);
                        last = last.max(info.end_time);
                        c.totals.messages +=
                            info.entries().map(|e| u64::from(e.count)).sum::<u64>();
                    }
                    rosbag::IndexRecord::IndexData(_) => {}
                }
            }
            black_box((connections, first, last));
        }
        Op::Write => return Err("the rosbag crate cannot write".into()),
        Op::Convert => {
            let mut w = peer_mcap_writer(cx.output, convert_compression(cx.variant))?;
            let mut channels = BTreeMap::new();
            for record in bag.index_records() {
                if let rosbag::IndexRecord::Connection(conn) = record? {
                    let schema =
                        w.add_schema(conn.tp, "ros1msg", conn.message_definition.as_bytes())?;
                    let metadata = BTreeMap::from([
                        ("md5sum".to_owned(), hex::encode(conn.md5sum)),
                        ("callerid".to_owned(), conn.caller_id.to_owned()),
                    ]);
                    channels.insert(
                        conn.id,
                        w.add_channel(schema, conn.topic, "ros1", &metadata)?,
                    );
                }
            }
            let mut sequence = 0u32;
            for record in bag.chunk_records() {
                if let rosbag::ChunkRecord::Chunk(chunk) = record? {
                    for m in chunk.messages() {
                        if let rosbag::MessageRecord::MessageData(m) = m? {
                            let channel_id = *channels
                                .get(&m.conn_id)
                                .ok_or("message without connection")?;
                            w.write_to_known_channel(
                                &mcap::records::MessageHeader {
                                    channel_id,
                                    sequence,
                                    log_time: m.time,
                                    publish_time: m.time,
                                },
                                m.data,
                            )?;
                            sequence = sequence.wrapping_add(1);
                            c.take(m.data);
                        }
                    }
                }
            }
            w.finish()?;
            w.into_inner().flush()?;
        }
    }
    Ok(c.finish())
}

/// Messages and bytes the peer crate reads from a file, to check a freshly written one.
pub(crate) fn peer_count(variant: Variant, path: &Path) -> Result<Totals, String> {
    let fail = |e: Box<dyn std::error::Error>| format!("{}: {e}", path.display());
    let mut c = Consumer::default();
    if variant.is_bag() {
        let bag = rosbag::RosBag::new(path).map_err(|e| fail(e.into()))?;
        for record in bag.chunk_records() {
            if let rosbag::ChunkRecord::Chunk(chunk) = record.map_err(|e| fail(e.into()))? {
                for m in chunk.messages() {
                    if let rosbag::MessageRecord::MessageData(m) = m.map_err(|e| fail(e.into()))? {
                        c.take(m.data);
                    }
                }
            }
        }
    } else {
        let file = mapped(path).map_err(|e| fail(e.into()))?;
        for m in mcap::MessageStream::new(&file).map_err(|e| fail(e.into()))? {
            c.take(&m.map_err(|e| fail(e.into()))?.data);
        }
    }
    Ok(c.finish())
}

/// One message of a [`Recording`].
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    channel: usize,
    seq: u32,
    time_ns: u64,
    data: robolog_framing::Bytes,
}

/// A workload in memory before `write` is timed, so that producing the messages stays out of
/// the measurement.
#[derive(Debug, Default)]
pub(crate) struct Recording {
    messages: Vec<Recorded>,
}

impl Recording {
    /// Generates the workload (slow for the large workloads: seconds per child process).
    pub(crate) fn generate(workload: &Workload) -> Self {
        let mut payloads = Vec::new();
        let mut spans = Vec::new();
        let mut buf = Vec::new();
        for e in workload.events() {
            fill(workload, e, &mut buf);
            spans.push((e, payloads.len(), buf.len()));
            payloads.extend_from_slice(&buf);
        }
        let payloads = robolog_framing::Bytes::from(payloads);
        let messages = spans
            .into_iter()
            .map(|(e, start, len)| Recorded {
                channel: e.channel,
                seq: e.seq as u32,
                time_ns: e.time_ns,
                data: payloads.slice(start..start + len),
            })
            .collect();
        Recording { messages }
    }

    /// The same messages, taken zero-copy from the workload's uncompressed MCAP file (memory
    /// mapped; its pages are touched here, before the timing starts).
    pub(crate) fn load(workload: &Workload, path: &Path) -> AnyResult<Self> {
        let file = mapped(path)?;
        let reader = McapReader::open(file.clone())?;
        let mut index = BTreeMap::new();
        for (id, channel) in &reader.summary().channels {
            let at = workload
                .channels
                .iter()
                .position(|c| c.topic == channel.topic)
                .ok_or("a channel the workload does not have")?;
            index.insert(*id, at);
        }
        let mut messages = Vec::new();
        let mut touched = 0u64;
        for m in LinearReader::new(file).into_messages() {
            let m = m?;
            touched = touched.wrapping_add(m.data.iter().map(|&b| u64::from(b)).sum::<u64>());
            messages.push(Recorded {
                channel: *index.get(&m.channel_id).ok_or("unknown channel")?,
                seq: m.sequence,
                time_ns: m.log_time,
                data: m.data,
            });
        }
        black_box(touched);
        Ok(Recording { messages })
    }

    fn payload<'a>(&self, m: &'a Recorded) -> &'a [u8] {
        &m.data
    }
}
