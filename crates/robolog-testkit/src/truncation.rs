//! The truncation sweep: cut a file at many offsets and check what a reader makes of each prefix.
//!
//! Every format's tests use it the same way: dense cuts at every byte of the start of the file
//! (headers, first records), strided cuts through the rest, and every byte of the last few
//! hundred (trailers and indexes).

use std::panic::{AssertUnwindSafe, catch_unwind};

/// Bytes at the end of a file that are always cut byte by byte (trailers, footers, indexes).
const DENSE_TAIL: usize = 256;

/// The offsets at which to cut a file of `len` bytes: `0..dense`, then every `stride` bytes,
/// then each of the last bytes before `len` (the full length itself is excluded). Sorted, unique.
pub fn cut_points(len: usize, dense: usize, stride: usize) -> Vec<usize> {
    let stride = stride.max(1);
    let mut cuts: Vec<usize> = (0..dense.min(len)).collect();
    cuts.extend((dense..len).step_by(stride));
    cuts.extend(len.saturating_sub(DENSE_TAIL)..len);
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

/// Calls `check(cut, &data[..cut])` for every cut point. A failure or panic is reported with the
/// offset of the cut, so the failing prefix can be reproduced.
pub fn sweep(
    data: &[u8],
    dense: usize,
    stride: usize,
    mut check: impl FnMut(usize, &[u8]) -> Result<(), String>,
) {
    for cut in cut_points(data.len(), dense, stride) {
        let prefix = &data[..cut];
        match catch_unwind(AssertUnwindSafe(|| check(cut, prefix))) {
            Ok(Ok(())) => {}
            Ok(Err(message)) => panic!("file cut at byte {cut} of {}: {message}", data.len()),
            Err(_) => panic!(
                "file cut at byte {cut} of {}: the reader panicked",
                data.len()
            ),
        }
    }
}
