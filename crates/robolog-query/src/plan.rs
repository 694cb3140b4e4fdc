//! Planning a query: which chunks it needs, in which order they are loaded, and whether
//! decoding them is work enough for worker threads.

use std::cmp::Reverse;

use robolog_framing::Compression;

use crate::container::{ChunkMeta, Want};
use crate::order::Order;

/// Queries with less decoding work than this decode on the reading thread: handing a chunk or
/// two to workers costs more than it saves.
pub(crate) const PARALLEL_MIN_WORK: u64 = 1 << 20;

/// The chunks a query loads, in load order, with the bound before which (in the query's order)
/// each can hold no message, and the worker threads worth using.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub(crate) chunks: Vec<usize>,
    pub(crate) bounds: Vec<u64>,
    pub(crate) threads: usize,
}

/// Plans a query over `chunks` (in file order) for `want`, with up to `threads` workers.
pub(crate) fn plan(
    chunks: &[ChunkMeta],
    want: &Want,
    order: Order,
    threads: usize,
    min_work: u64,
) -> Plan {
    let mut picked: Vec<usize> = (0..chunks.len())
        .filter(|&i| want.may_need(&chunks[i]))
        .collect();
    match order {
        Order::File => picked.sort_by_key(|&i| chunks[i].position),
        Order::LogTime | Order::Topic => {
            picked.sort_by_key(|&i| (chunks[i].start_ns, chunks[i].position))
        }
        Order::ReverseLogTime => {
            picked.sort_by_key(|&i| Reverse((chunks[i].end_ns, chunks[i].position)));
        }
    }
    let bounds = picked.iter().map(|&i| bound(&chunks[i], order)).collect();
    let work = picked
        .iter()
        .map(|&i| decoding_work(&chunks[i]))
        .fold(0, u64::saturating_add);
    let threads = if picked.len() < 2 || work < min_work {
        0
    } else {
        threads
    };
    Plan {
        chunks: picked,
        bounds,
        threads,
    }
}

/// The key before which, in the query's order, a chunk can hold no message.
fn bound(chunk: &ChunkMeta, order: Order) -> u64 {
    match order {
        Order::LogTime | Order::Topic => chunk.start_ns,
        Order::ReverseLogTime => chunk.end_ns,
        Order::File => chunk.position,
    }
}

/// What loading a chunk costs, in bytes of LZ4 chunk decoded on one core. zstd decodes about 8
/// times slower than LZ4, bzip2 some 60 times. An uncompressed chunk is not decoded, but
/// listing its messages reads every record's header: it counts a sixteenth of its size, or 16
/// bytes per message when that is more (chunks of small messages).
fn decoding_work(chunk: &ChunkMeta) -> u64 {
    let size = chunk.uncompressed_size;
    match chunk.compression {
        Compression::None => (size / 16).max(chunk.messages.unwrap_or(0).saturating_mul(16)),
        Compression::Lz4 => size,
        Compression::Zstd => size.saturating_mul(8),
        Compression::Bz2 => size.saturating_mul(64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(position: u64, start_ns: u64, end_ns: u64, compression: Compression) -> ChunkMeta {
        ChunkMeta {
            position,
            start_ns,
            end_ns,
            channels: Some(vec![1]),
            messages: Some(10),
            compression,
            uncompressed_size: 1 << 20,
        }
    }

    #[test]
    fn chunks_come_in_the_order_of_their_first_possible_message() {
        let chunks = [
            chunk(100, 50, 60, Compression::Lz4),
            chunk(200, 10, 70, Compression::Lz4),
            chunk(300, 10, 20, Compression::Lz4),
            chunk(400, 80, 90, Compression::Lz4),
        ];
        let want = Want::new(None::<[u32; 0]>, ..80);
        let log = plan(&chunks, &want, Order::LogTime, 2, PARALLEL_MIN_WORK);
        assert_eq!(log.chunks, [1, 2, 0]);
        assert_eq!(log.bounds, [10, 10, 50]);
        assert_eq!(log.threads, 2);
        let reverse = plan(&chunks, &want, Order::ReverseLogTime, 2, PARALLEL_MIN_WORK);
        assert_eq!(
            (reverse.chunks, reverse.bounds),
            (vec![1, 0, 2], vec![70, 60, 20])
        );
        let file = plan(&chunks, &want, Order::File, 2, PARALLEL_MIN_WORK);
        assert_eq!(
            (file.chunks, file.bounds),
            (vec![0, 1, 2], vec![100, 200, 300])
        );
    }

    #[test]
    fn little_work_stays_on_the_reading_thread() {
        let want = Want::everything();
        let one = [chunk(0, 0, 1, Compression::Zstd)];
        assert_eq!(
            plan(&one, &want, Order::File, 4, PARALLEL_MIN_WORK).threads,
            0
        );
        let small = [
            chunk(0, 0, 1, Compression::None),
            chunk(9, 2, 3, Compression::None),
        ];
        assert_eq!(
            plan(&small, &want, Order::File, 4, PARALLEL_MIN_WORK).threads,
            0
        );
        let mut many = small.clone();
        for c in &mut many {
            c.messages = Some(1 << 16);
        }
        assert_eq!(
            plan(&many, &want, Order::File, 4, PARALLEL_MIN_WORK).threads,
            4
        );
        let lz4 = [
            chunk(0, 0, 1, Compression::Lz4),
            chunk(9, 2, 3, Compression::Lz4),
        ];
        assert_eq!(
            plan(&lz4, &want, Order::File, 4, PARALLEL_MIN_WORK).threads,
            4
        );
        assert_eq!(
            plan(&lz4, &want, Order::File, 0, PARALLEL_MIN_WORK).threads,
            0
        );
    }
}
