//! Decoding chunks on worker threads: one decompressor per thread, buffers recycled through a
//! pool so that steady-state reading allocates nothing per chunk.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use robolog_framing::{Bytes, Decompressor};

use crate::chunk::{chunk_bytes, recycle, verify_chunk_crc};
use crate::error::{McapError, Result};
use crate::parse::RecordSplitter;
use crate::records::{Chunk, Record, op};

thread_local! {
    static DECOMPRESSOR: RefCell<Decompressor> = RefCell::new(Decompressor::new());
}

/// Buffers handed back by readers for workers to decompress into. Fresh buffers cost a
/// zero-fill and a page fault per page, which is as much as decoding an LZ4 chunk; recycled
/// ones cost nothing.
#[derive(Debug, Clone, Default)]
pub(crate) struct BufferPool(Arc<Mutex<Vec<Vec<u8>>>>);

/// Buffers a pool keeps for reuse, and the bytes they may hold together: enough for the chunks
/// in flight, little enough not to matter when idle.
const POOL_MAX: usize = 8;
const POOL_MAX_BYTES: usize = 32 << 20;

/// The pool shared by every reader in the process, so that one query reuses the buffers of the
/// previous one.
static SHARED: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// Frees the chunk buffers the readers keep for reuse between queries (at most 8 buffers and
/// 32 MiB). Long-running programs that are done reading can call it to give the memory back.
pub fn release_buffers() {
    if let Ok(mut shared) = SHARED.lock() {
        *shared = Vec::new();
    }
}

impl BufferPool {
    pub(crate) fn take(&self) -> Vec<u8> {
        self.0
            .lock()
            .ok()
            .and_then(|mut pool| pool.pop())
            .or_else(|| SHARED.lock().ok().and_then(|mut pool| pool.pop()))
            .unwrap_or_default()
    }

    /// Returns a chunk buffer to the pool if nobody else holds it.
    pub(crate) fn give(&self, buffer: Bytes) {
        if let Some(vec) = recycle(buffer)
            && vec.capacity() > 0
            && let Ok(mut pool) = self.0.lock()
        {
            let held: usize = pool.iter().map(Vec::capacity).sum();
            if pool.len() < POOL_MAX && held + vec.capacity() <= POOL_MAX_BYTES {
                pool.push(vec);
            }
        }
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        // The last handle hands its buffers to the process-wide pool.
        if Arc::strong_count(&self.0) == 1
            && let Ok(mut mine) = self.0.lock()
            && let Ok(mut shared) = SHARED.lock()
        {
            let mut held: usize = shared.iter().map(Vec::capacity).sum();
            for vec in mine.drain(..) {
                if shared.len() >= POOL_MAX || held + vec.capacity() > POOL_MAX_BYTES {
                    break;
                }
                held += vec.capacity();
                shared.push(vec);
            }
        }
    }
}

/// Parses the Chunk record at `offset` of `input`.
pub(crate) fn chunk_at(input: &[u8], offset: u64, draft: bool) -> Result<Chunk<'_>> {
    let start = usize::try_from(offset).unwrap_or(usize::MAX);
    let tail = input.get(start..).unwrap_or(&[]);
    match RecordSplitter::new(tail, offset).next() {
        Some(Ok(raw)) if draft && raw.opcode == crate::draft::op::CHUNK => {
            crate::draft::parse_chunk(raw.content, offset)
        }
        Some(Ok(raw)) if !draft && raw.opcode == op::CHUNK => match raw.parse()? {
            Record::Chunk(chunk) => Ok(chunk),
            _ => Err(McapError::invalid(offset, "Chunk", "not a chunk")),
        },
        Some(Ok(raw)) => Err(McapError::invalid(
            offset,
            "Chunk",
            format!("expected a Chunk record, found opcode {:#04x}", raw.opcode),
        )),
        Some(Err(e)) => Err(e),
        None => Err(McapError::Truncated {
            offset,
            record: "Chunk",
            what: "record",
        }),
    }
}

/// Runs `work` with this thread's decompressor (a fresh one if it is in use further up the
/// stack).
fn with_decompressor<T>(work: impl FnOnce(&mut Decompressor) -> T) -> T {
    DECOMPRESSOR.with(|d| match d.try_borrow_mut() {
        Ok(mut d) => work(&mut d),
        Err(_) => work(&mut Decompressor::new()),
    })
}

/// How [`decode_chunk`] decodes a chunk.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DecodeRules {
    /// The largest uncompressed size accepted.
    pub(crate) limit: u64,
    /// Check the chunk CRC when the whole chunk is decoded.
    pub(crate) verify_crc: bool,
    /// Decode a large LZ4 chunk in two halves at once when a worker is free
    /// ([`Decompressor::decompress_in_halves`]).
    pub(crate) in_halves: bool,
}

/// Decodes a chunk with this thread's decompressor: all of it, or with `prefix_to` only its
/// records up to the end of the record at that offset (see [`chunk_bytes`]). The CRC is checked
/// when what was decoded is the whole chunk.
pub(crate) fn decode_chunk(
    input: &Bytes,
    chunk: &Chunk<'_>,
    offset: u64,
    prefix_to: Option<u64>,
    rules: DecodeRules,
    recycled: Vec<u8>,
) -> Result<Bytes> {
    let (data, whole) =
        with_decompressor(|d| chunk_bytes(input, chunk, offset, prefix_to, rules, d, recycled))?;
    if whole && rules.verify_crc {
        verify_chunk_crc(chunk, &data, offset)?;
    }
    Ok(data)
}
