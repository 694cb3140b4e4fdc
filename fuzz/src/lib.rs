//! What every fuzz target shares: an allocation cap and the size limits the readers are opened
//! with.
//!
//! A reader that sizes a buffer from a length field it did not check would, on a fuzz input of a
//! few kilobytes, ask for gigabytes. libFuzzer only notices that through its RSS limit, slowly and
//! not always. Here the global allocator refuses anything that would take the Rust heap past
//! [`HEAP_LIMIT`]: the allocation fails, the process aborts, and libFuzzer reports the input as a
//! crash. The readers are opened with [`CHUNK_LIMIT`] so that honest but huge content (a valid
//! zstd frame of a few kilobytes can expand 32768-fold) is refused by the reader's own limit
//! rather than tripping the cap.

use std::alloc::System;

use cap::Cap;

/// The most the Rust heap may hold at once while a target runs.
///
/// Inputs are at most a few hundred kilobytes (`-max_len`); a reader holds the input, one
/// decoded chunk (at most [`CHUNK_LIMIT`]), the chunk being decoded next, and small
/// bookkeeping. 4 × [`CHUNK_LIMIT`] leaves room for that and nothing that grows with a
/// lying length.
pub const HEAP_LIMIT: usize = 4 * CHUNK_LIMIT;

/// The chunk, record and block size limit the targets open readers with.
pub const CHUNK_LIMIT: usize = 64 << 20;

#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, HEAP_LIMIT);

/// Splits `data` at its first NUL byte: the part before (as text, lossily) and the part after.
/// Without a NUL, everything is text and the rest is empty.
pub fn split_at_nul(data: &[u8]) -> (String, &[u8]) {
    match data.iter().position(|&b| b == 0) {
        Some(at) => (
            String::from_utf8_lossy(&data[..at]).into_owned(),
            &data[at + 1..],
        ),
        None => (String::from_utf8_lossy(data).into_owned(), &[]),
    }
}

/// The fields of an MCAP message that the lending targets compare, owned.
pub type McapFields = (u16, u32, u64, Vec<u8>);

/// `m`'s channel, sequence, log time and data.
pub fn mcap_fields(m: &robolog_mcap::Message<'_>) -> McapFields {
    (m.channel_id, m.sequence, m.log_time, m.data.to_vec())
}

/// The items up to and including the first error, each error reduced to where it occurred: its
/// text can differ between two reads of the same input (a corrupt zstd frame fails differently
/// in a recycled, larger buffer).
pub fn up_to_first_error<T, E>(items: impl Iterator<Item = Result<T, E>>) -> Vec<Result<T, ()>> {
    let mut out = Vec::new();
    for item in items {
        let stop = item.is_err();
        out.push(item.map_err(|_| ()));
        if stop {
            break;
        }
    }
    out
}
