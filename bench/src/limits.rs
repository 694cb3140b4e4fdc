//! The machine's limits on the same data: memcpy bandwidth, and the reference C libraries
//! (liblz4, libzstd, libbz2) decompressing exactly the chunks of a workload file into buffers
//! that are allocated and touched beforehand: on one thread, and on every core at once (how much
//! a second core actually gives a decoder on this machine, which bounds what parallel decoding
//! can win against a peer that decodes on one thread).

use std::hint::black_box;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use robolog_framing::Compression;
use serde::{Deserialize, Serialize};

use super::files::Variant;

/// One limit measurement.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct Limit {
    /// Bytes produced per repetition (copied, or decompressed).
    pub(crate) bytes: u64,
    /// Median seconds per repetition: memcpy, or the reference C library (liblz4, libzstd,
    /// libbz2) decoding every chunk. This is the limit results are a fraction of.
    pub(crate) seconds: f64,
    /// Median seconds of a second decoder: lz4_flex (LZ4 blocks: robolog-framing's decoder
    /// without its `lz4-c` feature), the `bzip2` 0.6 crate robolog-framing calls (on the C
    /// libbz2 with `bz2-c`, which robolog-bench enables; on its pure-Rust port without).
    pub(crate) library_seconds: Option<f64>,
    /// The reference C library decoding the same chunks on every core (none on one core).
    pub(crate) parallel: Option<ParallelLimit>,
    /// Chunks in the file.
    pub(crate) chunks: u64,
    /// The largest chunk, uncompressed.
    pub(crate) largest_chunk: u64,
}

/// The reference decoder on several threads at once, each decoding whole chunks.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct ParallelLimit {
    pub(crate) threads: usize,
    /// Median seconds to decode every chunk once.
    pub(crate) seconds: f64,
}

impl Limit {
    pub(crate) fn bytes_per_second(&self) -> f64 {
        self.bytes as f64 / self.seconds
    }

    pub(crate) fn library_bytes_per_second(&self) -> Option<f64> {
        Some(self.bytes as f64 / self.library_seconds?)
    }

    /// How many times faster the reference decoder gets the file done on every core than on
    /// one: the most a reader that decodes in parallel can gain over one that does not, when
    /// both use that decoder.
    pub(crate) fn parallel_speedup(&self) -> Option<f64> {
        Some(self.seconds / self.parallel?.seconds)
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Times `f` at least once and up to `reps` times, while the total stays under `budget` seconds;
/// returns the median.
fn timed(
    reps: usize,
    budget: f64,
    mut f: impl FnMut() -> Result<(), String>,
) -> Result<f64, String> {
    let started = Instant::now();
    let mut times = Vec::new();
    while times.is_empty() || (times.len() < reps && started.elapsed().as_secs_f64() < budget) {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed().as_secs_f64());
    }
    Ok(median(times))
}

/// Times `first` and `second` in turn, at least once each and up to `reps` times each while the
/// total stays under `budget` seconds; returns their medians.
fn timed_pair(
    reps: usize,
    budget: f64,
    mut first: impl FnMut() -> Result<(), String>,
    mut second: impl FnMut() -> Result<(), String>,
) -> Result<(f64, f64), String> {
    let started = Instant::now();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    while a.is_empty() || (a.len() < reps && started.elapsed().as_secs_f64() < budget) {
        let t = Instant::now();
        first()?;
        a.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        second()?;
        b.push(t.elapsed().as_secs_f64());
    }
    Ok((median(a), median(b)))
}

/// Copies 256 MiB between two buffers that are already resident.
pub(crate) fn memcpy(reps: usize) -> Limit {
    const SIZE: usize = 256 << 20;
    let src: Vec<u8> = (0..SIZE).map(|i| (i % 251) as u8).collect();
    let mut dst = vec![1u8; SIZE];
    let mut times = Vec::new();
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        dst.copy_from_slice(black_box(&src));
        black_box(&mut dst);
        times.push(t.elapsed().as_secs_f64());
    }
    Limit {
        bytes: SIZE as u64,
        seconds: median(times),
        library_seconds: None,
        parallel: None,
        chunks: 0,
        largest_chunk: 0,
    }
}

/// A compressed chunk of a file and its declared uncompressed size.
struct RawChunk<'a> {
    data: &'a [u8],
    uncompressed: usize,
}

/// The chunks of a workload file, straight from its index.
fn chunks<'a>(
    variant: Variant,
    file: &'a [u8],
    bytes: &robolog_framing::Bytes,
) -> Result<Vec<RawChunk<'a>>, String> {
    let mut out = Vec::new();
    if variant.is_bag() {
        let bag = robolog_rosbag::Bag::open(bytes.clone()).map_err(|e| e.to_string())?;
        for header in bag.chunk_headers() {
            let header = header.map_err(|e| e.to_string())?;
            let start = usize::try_from(header.data_offset).map_err(|e| e.to_string())?;
            let len = usize::try_from(header.compressed_size).map_err(|e| e.to_string())?;
            out.push(RawChunk {
                data: file.get(start..start + len).ok_or("chunk out of bounds")?,
                uncompressed: usize::try_from(header.uncompressed_size)
                    .map_err(|e| e.to_string())?,
            });
        }
    } else {
        let reader = robolog_mcap::McapReader::open(bytes.clone()).map_err(|e| e.to_string())?;
        for index in &reader.summary().chunk_indexes {
            // The records are the last field of the Chunk record.
            let end = usize::try_from(index.chunk_start_offset + index.chunk_length)
                .map_err(|e| e.to_string())?;
            let start = end - usize::try_from(index.compressed_size).map_err(|e| e.to_string())?;
            out.push(RawChunk {
                data: file.get(start..end).ok_or("chunk out of bounds")?,
                uncompressed: usize::try_from(index.uncompressed_size)
                    .map_err(|e| e.to_string())?,
            });
        }
    }
    Ok(out)
}

/// Decompresses every chunk of the file with the C library of its codec on one thread and on
/// every core, and, for LZ4 and bzip2, with a second decoder on one thread (lz4_flex; the
/// `bzip2` 0.6 crate) (for uncompressed files: the bytes memcpy would move, timed by [`memcpy`]
/// instead). Each measurement runs up to `reps` times within `budget` seconds.
pub(crate) fn decompress(
    variant: Variant,
    path: &Path,
    reps: usize,
    budget: f64,
) -> Result<Limit, String> {
    let bytes = super::ops::mapped(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file: &[u8] = &bytes;
    let chunks = chunks(variant, file, &bytes)?;
    let total: usize = chunks.iter().map(|c| c.uncompressed).sum();
    let largest = chunks.iter().map(|c| c.uncompressed).max().unwrap_or(0);
    let mut limit = Limit {
        bytes: total as u64,
        seconds: 0.0,
        library_seconds: None,
        parallel: None,
        chunks: chunks.len() as u64,
        largest_chunk: largest as u64,
    };
    let codec = variant.codec();
    let (reference, library) = match codec {
        Compression::Lz4 => (Decoder::Liblz4, Some(Decoder::Lz4Flex)),
        Compression::Zstd => (Decoder::Libzstd, None),
        Compression::Bz2 => (Decoder::Libbz2, Some(Decoder::Bzip2Rs)),
        Compression::None => return Ok(limit),
    };
    let mut one = Worker::new(reference, largest)?;
    let threads = robolog_framing::default_threads();
    if threads > 1 {
        let mut workers = (0..threads)
            .map(|_| Worker::new(reference, largest))
            .collect::<Result<Vec<_>, _>>()?;
        // Alternated, so that both figures see the same machine (a load that comes and goes
        // would otherwise land on one of them and skew their ratio).
        let (seconds, parallel) = timed_pair(
            reps,
            2.0 * budget,
            || one.decode_all(&chunks),
            || decode_on_threads(&chunks, &mut workers),
        )?;
        limit.seconds = seconds;
        limit.parallel = Some(ParallelLimit {
            threads,
            seconds: parallel,
        });
    } else {
        limit.seconds = timed(reps, budget, || one.decode_all(&chunks))?;
    }
    if let Some(library) = library {
        let mut one = Worker::new(library, largest)?;
        limit.library_seconds = Some(timed(reps, budget, || one.decode_all(&chunks))?);
    }
    Ok(limit)
}

/// One decoder with its own output buffer, allocated and touched before any timing.
struct Worker {
    decoder: Decoder,
    zstd: zstd::bulk::Decompressor<'static>,
    out: Vec<u8>,
    /// Bytes decoded so far, over every call.
    produced: u64,
}

impl Worker {
    fn new(decoder: Decoder, largest: usize) -> Result<Self, String> {
        Ok(Self {
            decoder,
            zstd: zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?,
            out: vec![0u8; largest],
            produced: 0,
        })
    }

    /// Decodes every chunk, in order, on this thread.
    fn decode_all(&mut self, chunks: &[RawChunk<'_>]) -> Result<(), String> {
        chunks.iter().try_for_each(|chunk| self.decode(chunk))
    }

    /// Decodes `chunk`, which must come out at its declared size.
    fn decode(&mut self, chunk: &RawChunk<'_>) -> Result<(), String> {
        let target = self
            .out
            .get_mut(..chunk.uncompressed)
            .ok_or("chunk larger than the largest chunk")?;
        let produced = match self.decoder {
            Decoder::Liblz4 => lz4_frame(chunk.data, target, lz4_c_block)?,
            Decoder::Lz4Flex => lz4_frame(chunk.data, target, lz4_flex_block)?,
            Decoder::Libzstd => self
                .zstd
                .decompress_to_buffer(chunk.data, target)
                .map_err(|e| e.to_string())?,
            Decoder::Libbz2 => bz2_c(chunk.data, target)?,
            Decoder::Bzip2Rs => bz2_rs(chunk.data, target)?,
        };
        black_box(&mut self.out);
        self.produced += produced as u64;
        if produced != chunk.uncompressed {
            return Err(format!(
                "{:?} decoded a chunk to {produced} bytes, {} declared",
                self.decoder, chunk.uncompressed
            ));
        }
        Ok(())
    }
}

/// Decodes every chunk once, each worker on its own thread taking the next chunk nobody has
/// taken: the machine's ceiling for decoding the file in parallel, with no ordering, no
/// hand-over of results and no parsing.
fn decode_on_threads(chunks: &[RawChunk<'_>], workers: &mut [Worker]) -> Result<(), String> {
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let running: Vec<_> = workers
            .iter_mut()
            .map(|worker| {
                let next = &next;
                scope.spawn(move || {
                    while let Some(chunk) = chunks.get(next.fetch_add(1, Ordering::Relaxed)) {
                        worker.decode(chunk)?;
                    }
                    Ok::<(), String>(())
                })
            })
            .collect();
        running.into_iter().try_for_each(|thread| {
            thread
                .join()
                .map_err(|_| "a decoding thread panicked".to_owned())?
        })
    })
}

#[derive(Debug, Clone, Copy)]
enum Decoder {
    Liblz4,
    Lz4Flex,
    Libzstd,
    Libbz2,
    Bzip2Rs,
}

fn lz4_c_block(block: &[u8], out: &mut [u8]) -> Result<usize, String> {
    let room = i32::try_from(out.len()).map_err(|e| e.to_string())?;
    lz4::block::decompress_to_buffer(block, Some(room), out).map_err(|e| e.to_string())
}

fn lz4_flex_block(block: &[u8], out: &mut [u8]) -> Result<usize, String> {
    lz4_flex::block::decompress_into(block, out).map_err(|e| e.to_string())
}

/// Walks an LZ4 frame (independent blocks, as robolog writes them) and decodes each block with
/// `block`, skipping checksums (the limit is the block decoder's speed).
fn lz4_frame(
    frame: &[u8],
    out: &mut [u8],
    block: fn(&[u8], &mut [u8]) -> Result<usize, String>,
) -> Result<usize, String> {
    let bad = || "malformed LZ4 frame".to_owned();
    let flg = *frame.get(4).ok_or_else(bad)?;
    if flg & 0x20 == 0 {
        return Err("LZ4 frame with linked blocks: not supported by the limit measurement".into());
    }
    // Magic, FLG, BD, [content size], [dictionary id], HC.
    let mut pos = 7 + if flg & 0x08 != 0 { 8 } else { 0 } + if flg & 0x01 != 0 { 4 } else { 0 };
    let block_checksum = flg & 0x10 != 0;
    let mut written = 0;
    loop {
        let size = frame.get(pos..pos + 4).ok_or_else(bad)?;
        let size = u32::from_le_bytes([size[0], size[1], size[2], size[3]]);
        pos += 4;
        if size == 0 {
            return Ok(written);
        }
        let len = (size & 0x7FFF_FFFF) as usize;
        let data = frame.get(pos..pos + len).ok_or_else(bad)?;
        pos += len + if block_checksum { 4 } else { 0 };
        let target = out.get_mut(written..).ok_or_else(bad)?;
        if size & 0x8000_0000 != 0 {
            target.get_mut(..len).ok_or_else(bad)?.copy_from_slice(data);
            written += len;
        } else {
            written += block(data, target)?;
        }
    }
}

/// libbz2 (through the `bzip2` 0.4 crate, which links the C library).
fn bz2_c(data: &[u8], out: &mut [u8]) -> Result<usize, String> {
    let mut d = bzip2_c::Decompress::new(false);
    loop {
        let read = d.total_in() as usize;
        let written = d.total_out() as usize;
        let status = d
            .decompress(&data[read..], &mut out[written..])
            .map_err(|e| e.to_string())?;
        if matches!(status, bzip2_c::Status::StreamEnd) {
            return Ok(d.total_out() as usize);
        }
        if d.total_in() as usize == read && d.total_out() as usize == written {
            return Err("truncated bzip2 stream".into());
        }
    }
}

/// The `bzip2` 0.6 crate robolog-framing uses (its backend depends on the `bz2-c` feature).
fn bz2_rs(data: &[u8], out: &mut [u8]) -> Result<usize, String> {
    let mut d = bzip2::Decompress::new(false);
    loop {
        let read = d.total_in() as usize;
        let written = d.total_out() as usize;
        let status = d
            .decompress(&data[read..], &mut out[written..])
            .map_err(|e| e.to_string())?;
        if matches!(status, bzip2::Status::StreamEnd) {
            return Ok(d.total_out() as usize);
        }
        if d.total_in() as usize == read && d.total_out() as usize == written {
            return Err("truncated bzip2 stream".into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zstd_chunks(count: usize) -> Vec<(Vec<u8>, usize)> {
        (0..count)
            .map(|i| {
                let data: Vec<u8> = (0..10_000 + i * 100).map(|j| (j * i % 251) as u8).collect();
                (zstd::bulk::compress(&data, 3).unwrap(), data.len())
            })
            .collect()
    }

    fn raw(chunks: &[(Vec<u8>, usize)]) -> Vec<RawChunk<'_>> {
        chunks
            .iter()
            .map(|(data, uncompressed)| RawChunk {
                data,
                uncompressed: *uncompressed,
            })
            .collect()
    }

    fn workers(threads: usize, largest: usize) -> Vec<Worker> {
        (0..threads)
            .map(|_| Worker::new(Decoder::Libzstd, largest).unwrap())
            .collect()
    }

    #[test]
    fn threads_decode_every_chunk_at_its_declared_size() {
        let chunks = zstd_chunks(9);
        let total: u64 = chunks.iter().map(|c| c.1 as u64).sum();
        let mut w = workers(3, 20_000);
        decode_on_threads(&raw(&chunks), &mut w).unwrap();
        assert_eq!(w.iter().map(|w| w.produced).sum::<u64>(), total);
        // Again with the same workers, as the timing loop does: each chunk once more.
        decode_on_threads(&raw(&chunks), &mut w).unwrap();
        assert_eq!(w.iter().map(|w| w.produced).sum::<u64>(), 2 * total);
    }

    #[test]
    fn a_chunk_that_decodes_short_fails_the_measurement() {
        let mut chunks = zstd_chunks(5);
        chunks[3].1 += 1;
        let err = decode_on_threads(&raw(&chunks), &mut workers(2, 20_000)).unwrap_err();
        assert!(err.contains("declared"), "{err}");
    }

    #[test]
    fn a_corrupt_chunk_fails_the_measurement() {
        let mut chunks = zstd_chunks(5);
        chunks[1].0.truncate(10);
        assert!(decode_on_threads(&raw(&chunks), &mut workers(2, 20_000)).is_err());
    }
}
