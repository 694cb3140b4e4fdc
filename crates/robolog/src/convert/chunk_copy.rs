//! MCAP to MCAP without decoding: the chunks an output keeps whole are copied as they are
//! (compressed bytes, CRC and all), the others decoded and written message by message.
//!
//! A chunk is kept whole when every message in it is selected (its channels and its time span),
//! the output compresses chunks the same way, its channels and schemas have the same ids and
//! content in the output, and the order allows it: file order, or log-time order when the
//! chunks do not overlap in time and the chunk's messages are in log-time order.

use std::sync::Arc;

use robolog_mcap::parse::RecordSplitter;
use robolog_mcap::records::op;
use robolog_mcap::{ChunkIndex, McapReader, Record};

use super::{ChannelTable, ConvertReport, Tracker, damaged};
use crate::error::{Error, Result};
use crate::log::{Log, channel_by_id};
use crate::model::{Channel, Message};
use crate::query::{Filter, Order, Selection};
use crate::writer::LogWriter;

/// Writes the messages `options` select from `inputs` into `writer` chunk by chunk, copying
/// whole chunks where it can. `Ok(false)` (nothing written) when an input, the output or the
/// order does not allow it: the caller then converts message by message. Several inputs are
/// merged in log-time order, which chunks allow when no two of them overlap in time (at equal
/// times, the earlier input's first).
pub(super) fn convert_by_chunks(
    inputs: &[&Log],
    writer: &mut dyn LogWriter,
    (filter, order, keep_going): (&Filter, Order, bool),
    table: &mut ChannelTable,
    tracker: &mut Tracker<'_, '_>,
    report: &mut ConvertReport,
) -> Result<bool> {
    let mut chunks: Vec<(usize, &ChunkIndex<'static>)> = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let Some(log) = input.mcap() else {
            return Ok(false);
        };
        let reader = log.reader();
        let summary = reader.summary();
        // A summary rebuilt by a scan (damage, no index) is not trusted to point at whole
        // chunks.
        if log.is_cut()
            || reader.is_draft()
            || summary.source != robolog_mcap::SummarySource::SummarySection
        {
            return Ok(false);
        }
        let mut own: Vec<&ChunkIndex<'static>> = summary.chunk_indexes.iter().collect();
        own.sort_by_key(|c| c.chunk_start_offset);
        chunks.extend(own.into_iter().map(|c| (i, c)));
    }
    if chunks.is_empty() {
        return Ok(false);
    }
    let sort = match order {
        Order::File if inputs.len() == 1 => false,
        // Chunks that follow each other in time: log-time order is their order, chunk by chunk.
        Order::LogTime if in_time_order(&mut chunks, inputs.len() > 1) => true,
        _ => return Ok(false),
    };
    let Some(mcap) = writer.as_mcap() else {
        return Ok(false);
    };
    let Some((out, _)) = mcap.chunk_target()? else {
        return Ok(false);
    };
    let mut selections = Vec::new();
    let mut everything = Vec::new();
    for input in inputs {
        let selection = filter.select(input.channels())?;
        let summary = input.mcap().map(|log| log.reader().summary());
        // Every channel the file declares is in the output under its own id: no chunk can hold
        // a record the output would not have.
        everything.push(summary.is_some_and(|summary| {
            summary.channels.values().all(|c| {
                selection.contains(u32::from(c.id))
                    && out.channels().get(&c.id) == Some(c)
                    && (c.schema_id == 0
                        || summary.schemas.get(&c.schema_id).map(|s| &**s)
                            == out.schemas().get(&c.schema_id))
            })
        }));
        selections.push(selection);
    }
    let mut plans = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let Some(log) = input.mcap() else {
            return Ok(false);
        };
        plans.push(Plan {
            reader: log.reader(),
            channels: input.channels(),
            selection: &selections[i],
            filter,
            sort,
            everything: everything[i],
        });
    }
    for (i, chunk) in chunks {
        let plan = &plans[i];
        let copied = match plan.copy(chunk, writer)? {
            Some(copied) => copied,
            None => {
                let written = plan.rewrite(i, chunk, writer, table, tracker, report);
                if let Err(e) = written {
                    let merging = inputs.len() > 1;
                    damaged(i, e, keep_going, report)
                        .map_err(|e| if merging { e.in_input(i) } else { e })?;
                }
                continue;
            }
        };
        report.messages += copied;
        report.chunks_copied += 1;
        tracker.copied(copied);
    }
    Ok(true)
}

/// Whether the chunks (each input's in file order) can be written one after the other in
/// log-time order; if so, puts them in that order. Several inputs: the earlier input's chunk
/// first at equal times, so chunks of different inputs must not meet at a time.
fn in_time_order(chunks: &mut [(usize, &ChunkIndex<'static>)], merging: bool) -> bool {
    if merging {
        // Stable: each input's chunks keep their file order at equal start times.
        chunks.sort_by_key(|(i, c)| (c.message_start_time, *i));
    }
    let mut last: Option<(usize, u64)> = None;
    for &(input, chunk) in chunks.iter() {
        if chunk.message_index_offsets.is_empty() {
            // Unknown content (no message index): it may hold messages of any time.
            return false;
        }
        if let Some((last_input, last_end)) = last {
            let apart = if last_input == input || !merging {
                chunk.message_start_time >= last_end
            } else {
                chunk.message_start_time > last_end
                    || (chunk.message_start_time == last_end && last_input < input)
            };
            if !apart {
                return false;
            }
        }
        last = Some((input, chunk.message_end_time));
    }
    true
}

struct Plan<'a> {
    reader: &'a McapReader,
    channels: &'a [Arc<Channel>],
    selection: &'a Selection,
    filter: &'a Filter,
    sort: bool,
    everything: bool,
}

impl Plan<'_> {
    fn read(&self, range: std::ops::Range<u64>) -> Result<robolog_mcap::Bytes> {
        self.reader
            .input()
            .read(range)
            .map_err(|e| Error::Io(std::io::Error::new(e.kind(), e.to_string())))
    }

    /// Copies `chunk` whole when the output keeps it whole: the number of messages copied, or
    /// `None` when it must be rewritten.
    fn copy(&self, chunk: &ChunkIndex<'_>, writer: &mut dyn LogWriter) -> Result<Option<u64>> {
        let Some(mcap) = writer.as_mcap() else {
            return Ok(None);
        };
        let Some((out, compression)) = mcap.chunk_target()? else {
            return Ok(None);
        };
        let filter = self.filter;
        let whole_time = filter.all_times()
            || (filter.contains_time(chunk.message_start_time)
                && filter.contains_time(chunk.message_end_time));
        if chunk.compression != compression || chunk.message_index_offsets.is_empty() || !whole_time
        {
            return Ok(None);
        }
        let summary = self.reader.summary();
        for &id in chunk.message_index_offsets.keys() {
            let Some(channel) = summary.channels.get(&id) else {
                return Ok(None);
            };
            let same_schema = channel.schema_id == 0
                || summary.schemas.get(&channel.schema_id).map(|s| &**s)
                    == out.schemas().get(&channel.schema_id);
            if !self.selection.contains(u32::from(id))
                || out.channels().get(&id) != Some(channel)
                || !same_schema
            {
                return Ok(None);
            }
        }
        let Some(index_start) = chunk.message_index_offsets.values().min().copied() else {
            return Ok(None);
        };
        let Some(index_end) = index_start.checked_add(chunk.message_index_length) else {
            return Ok(None);
        };
        let indexes = self.read(index_start..index_end)?;
        if self.sort && !sorted_by_time(&indexes)? {
            return Ok(None);
        }
        let Some(chunk_end) = chunk.chunk_start_offset.checked_add(chunk.chunk_length) else {
            return Ok(None);
        };
        let record = self.read(chunk.chunk_start_offset..chunk_end)?;
        if !self.everything && !defines_only_output_ids(&record, chunk, out, self.selection)? {
            return Ok(None);
        }
        Ok(Some(out.copy_chunk(&record, &indexes)?))
    }

    /// Decodes `chunk` and writes the messages selected, in the order asked for.
    fn rewrite(
        &self,
        input: usize,
        chunk: &ChunkIndex<'_>,
        writer: &mut dyn LogWriter,
        table: &mut ChannelTable,
        tracker: &mut Tracker<'_, '_>,
        report: &mut ConvertReport,
    ) -> Result<()> {
        let filter = self.filter;
        let end = chunk
            .chunk_start_offset
            .checked_add(chunk.chunk_length)
            .ok_or_else(|| Error::Usage("chunk index out of range".into()))?;
        let bytes = self.read(chunk.chunk_start_offset..end)?;
        let records = decompress(&bytes, chunk.chunk_start_offset)?;
        let records = robolog_mcap::Bytes::from(records);
        let mut messages = Vec::new();
        for raw in RecordSplitter::chunk_records(&records) {
            let raw = raw?;
            if raw.opcode != op::MESSAGE {
                continue;
            }
            let Record::Message(m) = raw.parse()? else {
                continue;
            };
            if !self.selection.contains(u32::from(m.channel_id))
                || !filter.contains_time(m.log_time)
            {
                continue;
            }
            let Some(channel) = channel_by_id(self.channels, u32::from(m.channel_id)) else {
                return Err(Error::UndefinedChannel {
                    format: crate::Format::Mcap,
                    channel: u64::from(m.channel_id),
                    offset: Some(chunk.chunk_start_offset),
                });
            };
            messages.push(Message {
                channel: Arc::clone(channel),
                log_time_ns: m.log_time,
                publish_time_ns: Some(m.publish_time),
                sequence: Some(m.sequence),
                data: records.slice_ref(m.data),
            });
        }
        if self.sort {
            // Stable: equal times stay in file order.
            messages.sort_by_key(|m| m.log_time_ns);
        }
        for message in messages {
            let id = table.declare(input, &message.channel, writer)?;
            writer.write_message(id, &message)?;
            report.messages += 1;
            report.bytes += message.data.len() as u64;
            tracker.message(message.data.len(), None);
        }
        Ok(())
    }
}

/// The uncompressed records of the Chunk record `bytes` (at `offset` in its file), CRC checked.
fn decompress(bytes: &[u8], offset: u64) -> Result<Vec<u8>> {
    let raw = RecordSplitter::new(bytes, offset)
        .next()
        .ok_or_else(|| Error::Usage("chunk index points past the file".into()))??;
    let Record::Chunk(chunk) = raw.parse()? else {
        return Err(Error::Usage(format!(
            "the chunk index points at a {} record at byte {offset}",
            robolog_mcap::records::record_name(raw.opcode)
        )));
    };
    Ok(robolog_mcap::decompress_chunk(&chunk, offset)?)
}

/// Whether the messages the MessageIndex records `indexes` list are in log-time order in their
/// chunk.
fn sorted_by_time(indexes: &[u8]) -> Result<bool> {
    let mut entries = Vec::new();
    for raw in RecordSplitter::new(indexes, 0) {
        if let Record::MessageIndex(index) = raw?.parse()? {
            entries.extend(index.records.iter().map(|&(time, offset)| (offset, time)));
        }
    }
    entries.sort_unstable();
    Ok(entries.windows(2).all(|w| w[0].1 <= w[1].1))
}

/// Whether every schema and channel record inside a chunk is one the output has under the same
/// id (and every channel one the filter selects): only then may a chunk of a filtered file be
/// copied. Decompresses the chunk, which also checks its CRC.
fn defines_only_output_ids(
    record: &[u8],
    chunk: &ChunkIndex<'_>,
    out: &robolog_mcap::Writer<crate::writer::Output>,
    selection: &Selection,
) -> Result<bool> {
    let records = decompress(record, chunk.chunk_start_offset)?;
    for raw in RecordSplitter::chunk_records(&records) {
        match raw?.parse()? {
            Record::Schema(schema) if out.schemas().get(&schema.id) != Some(&schema) => {
                return Ok(false);
            }
            Record::Channel(channel)
                if !selection.contains(u32::from(channel.id))
                    || out.channels().get(&channel.id) != Some(&channel) =>
            {
                return Ok(false);
            }
            _ => {}
        }
    }
    Ok(true)
}
