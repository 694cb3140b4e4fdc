//! Chunk compression: compress one chunk, decompress one chunk into a reusable buffer.
//!
//! Each codec is a cargo feature (`lz4`, `zstd`, `bz2`). A codec that was compiled out is still
//! named by [`Compression`], and using it gives [`CodecError::Disabled`], which says which feature
//! to enable.
//!
//! Decompression is defensive: the caller states the size the container declares (`expected`)
//! and a hard `cap`; nothing larger than `min(expected, cap)` is ever allocated, output beyond
//! `expected` is an error (no decompression bombs), and output short of it is an error too.

#[cfg(feature = "bz2")]
mod bz2;
#[cfg(feature = "lz4")]
mod lz4;
mod prefix;
#[cfg(feature = "zstd")]
mod zstd;

pub use prefix::PrefixDecoder;

/// Makes `out` at least `len` initialised bytes long, keeping its first `keep` bytes (decoded
/// output), for decoders that write into a slice. A reused buffer keeps its length, so only the
/// part never initialised is zeroed; a buffer too small with nothing to keep is replaced by a
/// zeroed allocation (`calloc`: fresh pages come zeroed from the OS, so they are not memset).
///
/// The replacement has room for an eighth more than asked, up to `ceiling` (what the input can
/// back). The chunks of one file differ in size by a little (the message that closes each one),
/// so an exact fit would be replaced whenever a slightly larger chunk came, and the allocator
/// keeps each buffer it frees for a while, which adds up to the peak memory of a read.
#[cfg(any(feature = "lz4", feature = "zstd", feature = "bz2"))]
fn grow_initialised(out: &mut Vec<u8>, len: usize, keep: usize, ceiling: usize) {
    if out.len() >= len {
        return;
    }
    if keep == 0 && out.capacity() < len {
        *out = vec![0; len.saturating_add(len / 8).min(ceiling).max(len)];
        out.truncate(len);
    } else {
        out.resize(len, 0);
    }
}

/// A salvage reached its cap with more output to come: at least one byte more than `cap`.
#[cfg(any(feature = "zstd", feature = "bz2"))]
fn too_large(cap: usize) -> CodecError {
    CodecError::TooLarge {
        expected: cap as u64 + 1,
        cap: cap as u64,
    }
}

/// How much spare capacity to grant a streaming decoder that has produced `have` of the
/// `expected` bytes: the rest when it is small, else double what it has (at least 1 MiB, and at
/// first 8 times the input, a common ratio), so that the allocation follows the data.
#[cfg(any(feature = "zstd", feature = "bz2"))]
fn next_grant(have: usize, expected: usize, input_len: usize) -> usize {
    let step = if have == 0 {
        input_len.saturating_mul(8)
    } else {
        have
    };
    step.max(1 << 20).min(expected.saturating_sub(have))
}

/// Drives a streaming decoder through growing windows of `out` until `*written` reaches
/// `target` (of `expected` bytes): room is granted as the data arrives, as by
/// [`next_grant`], but never past the target, where the decoder stops. `run` decodes into the
/// window after `*written` and returns how far the output now reaches and whether to go on
/// (`false` once it makes no progress or its stream ends). Falling short of the target is a
/// [`CodecError::SizeMismatch`].
#[cfg(any(feature = "zstd", feature = "bz2"))]
fn fill_window(
    codec: Compression,
    out: &mut Vec<u8>,
    written: &mut usize,
    (target, expected, input_len): (usize, usize, usize),
    mut run: impl FnMut(&mut [u8], usize) -> Result<(usize, bool), CodecError>,
) -> Result<(), CodecError> {
    while *written < target {
        let grant = next_grant(*written, expected, input_len);
        let end = target.min(written.saturating_add(grant));
        // Room follows the data here: no more than the window.
        grow_initialised(out, end, *written, end);
        let (now, go_on) = run(&mut out[..end], *written)?;
        *written = now;
        if !go_on {
            break;
        }
    }
    if *written < target {
        return Err(CodecError::SizeMismatch {
            codec,
            expected: expected as u64,
            actual: *written as u64,
        });
    }
    Ok(())
}

use std::fmt;

use bytes::Bytes;

/// A chunk compression codec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Stored as is.
    None,
    /// The LZ4 frame format (not raw LZ4 blocks).
    Lz4,
    /// Zstandard frames.
    Zstd,
    /// A bzip2 stream.
    Bz2,
}

impl Compression {
    /// All codecs, compiled in or not.
    pub const ALL: [Compression; 4] = [
        Compression::None,
        Compression::Lz4,
        Compression::Zstd,
        Compression::Bz2,
    ];

    /// The codec's short name: `none`, `lz4`, `zstd` or `bz2`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
            Compression::Bz2 => "bz2",
        }
    }

    /// The cargo feature of `robolog-framing` that compiles this codec in (`None` needs none).
    pub fn feature(self) -> Option<&'static str> {
        match self {
            Compression::None => None,
            other => Some(other.name()),
        }
    }

    /// True when this build can compress and decompress with the codec.
    pub fn is_enabled(self) -> bool {
        match self {
            Compression::None => true,
            Compression::Lz4 => cfg!(feature = "lz4"),
            Compression::Zstd => cfg!(feature = "zstd"),
            Compression::Bz2 => cfg!(feature = "bz2"),
        }
    }

    fn ensure_enabled(self) -> Result<(), CodecError> {
        if self.is_enabled() {
            Ok(())
        } else {
            Err(CodecError::Disabled { codec: self })
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why compressing or decompressing a chunk failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// The codec was compiled out.
    #[error("compiled without {codec} support: enable the `{codec}` feature of robolog-framing")]
    Disabled {
        /// The codec that was asked for.
        codec: Compression,
    },
    /// The declared uncompressed size is larger than the caller's hard cap.
    #[error("declared uncompressed size {expected} exceeds the limit of {cap} bytes")]
    TooLarge {
        /// The declared size.
        expected: u64,
        /// The cap.
        cap: u64,
    },
    /// The data decompressed to fewer bytes than declared.
    #[error("{codec} data decompressed to {actual} bytes, but {expected} were declared")]
    SizeMismatch {
        /// The codec.
        codec: Compression,
        /// The declared size.
        expected: u64,
        /// What the data produced.
        actual: u64,
    },
    /// The data decompresses to more bytes than declared (decoding stopped at the declared size).
    #[error("{codec} data decompresses to more than the {expected} bytes declared")]
    Overflow {
        /// The codec.
        codec: Compression,
        /// The declared size.
        expected: u64,
    },
    /// The compressed data is malformed.
    #[error("corrupt {codec} data: {message}")]
    Corrupt {
        /// The codec.
        codec: Compression,
        /// What the decoder reported.
        message: String,
    },
    /// The data uses a feature of the format that we do not support (an LZ4 dictionary, say).
    #[error("unsupported {codec} data: {message}")]
    Unsupported {
        /// The codec.
        codec: Compression,
        /// The feature.
        message: String,
    },
}

impl CodecError {
    #[allow(dead_code)] // unused when every codec is compiled out
    fn corrupt(codec: Compression, message: impl fmt::Display) -> Self {
        CodecError::Corrupt {
            codec,
            message: message.to_string(),
        }
    }
}

/// How LZ4 frames are laid out by [`Compressor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lz4Frame {
    /// The profile ROS `roslz4` writes and insists on: FLG `0x64` (independent blocks, content
    /// checksum, no content size), BD `0x60` (1 MiB blocks). Required for ROS bags.
    RosCompatible,
    /// Independent 64 KiB blocks, with the content size in the header so that readers can size
    /// their buffers, and no checksums (the container has its own CRC).
    #[default]
    Standard,
}

/// Compresses whole chunks, keeping codec contexts between calls.
///
/// ```
/// use robolog_framing::{Compression, Compressor, Decompressor};
/// let data = b"hello hello hello hello".repeat(100);
/// let mut compressed = Vec::new();
/// match Compressor::new(Compression::Zstd).compress(&data, &mut compressed) {
///     Ok(()) => {
///         let mut out = Vec::new();
///         Decompressor::new()
///             .decompress(Compression::Zstd, &compressed, data.len(), 1 << 20, &mut out)
///             .unwrap();
///         assert_eq!(out, data);
///     }
///     // Built without the `zstd` feature.
///     Err(e) => assert!(e.to_string().starts_with("compiled without zstd")),
/// }
/// ```
pub struct Compressor {
    compression: Compression,
    level: Option<i32>,
    lz4_frame: Lz4Frame,
    #[cfg(feature = "zstd")]
    zstd: Option<::zstd::bulk::Compressor<'static>>,
}

impl fmt::Debug for Compressor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compressor")
            .field("compression", &self.compression)
            .field("level", &self.level)
            .field("lz4_frame", &self.lz4_frame)
            .finish_non_exhaustive()
    }
}

impl Compressor {
    /// A compressor for `compression` at the codec's default level (zstd 3, bzip2 9; LZ4 has one
    /// speed).
    pub fn new(compression: Compression) -> Self {
        Self {
            compression,
            level: None,
            lz4_frame: Lz4Frame::default(),
            #[cfg(feature = "zstd")]
            zstd: None,
        }
    }

    /// Sets the level: zstd 1..=22 (negative values are zstd's fast levels), bzip2 1..=9. Ignored
    /// by LZ4 and `None`.
    pub fn with_level(mut self, level: i32) -> Self {
        self.level = Some(level);
        #[cfg(feature = "zstd")]
        {
            self.zstd = None;
        }
        self
    }

    /// Chooses the LZ4 frame layout.
    pub fn with_lz4_frame(mut self, frame: Lz4Frame) -> Self {
        self.lz4_frame = frame;
        self
    }

    /// The codec.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Compresses `input` and appends the result to `out`.
    pub fn compress(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), CodecError> {
        self.compression.ensure_enabled()?;
        match self.compression {
            Compression::None => {
                out.extend_from_slice(input);
                Ok(())
            }
            #[cfg(feature = "lz4")]
            Compression::Lz4 => lz4::compress(input, self.lz4_frame, out),
            #[cfg(feature = "zstd")]
            Compression::Zstd => {
                let compressor = match &mut self.zstd {
                    Some(cached) => cached,
                    cached => cached.insert(zstd::new_compressor(self.level.unwrap_or(3))?),
                };
                zstd::compress(compressor, input, out)
            }
            #[cfg(feature = "bz2")]
            Compression::Bz2 => bz2::compress(input, self.level.unwrap_or(9), out),
            #[allow(unreachable_patterns)]
            other => Err(CodecError::Disabled { codec: other }),
        }
    }
}

/// What [`Decompressor::decompress_partial`] salvaged from damaged or truncated data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Salvage {
    /// Bytes decoded before the damage (they are in the output buffer).
    pub recovered: usize,
    /// Why decoding stopped early, or `None` when the data decoded completely.
    pub error: Option<CodecError>,
}

/// Decompresses whole chunks into a caller-provided, reusable buffer.
///
/// Keeps a zstd context between calls, which saves its set-up on every chunk.
#[derive(Default)]
pub struct Decompressor {
    #[cfg(feature = "zstd")]
    zstd: Option<::zstd::stream::raw::Decoder<'static>>,
}

impl fmt::Debug for Decompressor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Decompressor").finish_non_exhaustive()
    }
}

impl Decompressor {
    /// A decompressor with no contexts yet (they are created on first use).
    pub fn new() -> Self {
        Self::default()
    }

    /// Decompresses `input`, which must produce exactly `expected` bytes, into `out`.
    ///
    /// `out`'s previous content is discarded and its allocation reused. Fails without allocating
    /// when `expected > cap`. Data after the end of the last frame needed to produce `expected`
    /// bytes is ignored (containers pad chunks).
    pub fn decompress(
        &mut self,
        compression: Compression,
        input: &[u8],
        expected: usize,
        cap: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), CodecError> {
        compression.ensure_enabled()?;
        if expected > cap {
            return Err(CodecError::TooLarge {
                expected: expected as u64,
                cap: cap as u64,
            });
        }
        match compression {
            Compression::None => {
                out.clear();
                if input.len() < expected {
                    out.extend_from_slice(input);
                    return Err(CodecError::SizeMismatch {
                        codec: Compression::None,
                        expected: expected as u64,
                        actual: input.len() as u64,
                    });
                }
                out.extend_from_slice(&input[..expected]);
                Ok(())
            }
            #[cfg(feature = "lz4")]
            Compression::Lz4 => lz4::decompress_exact(input, expected, out),
            // zstd and bzip2 decode into the buffer's spare capacity, which grows as output
            // arrives: no zero-filling, and a lying declared size costs nothing until the data
            // proves it (bzip2 can expand more than a million to one, so no ratio bounds it).
            #[cfg(feature = "zstd")]
            Compression::Zstd => zstd::decompress_exact(self.zstd_decoder()?, input, expected, out),
            #[cfg(feature = "bz2")]
            Compression::Bz2 => bz2::decompress_exact(input, expected, out),
            #[allow(unreachable_patterns)]
            other => Err(CodecError::Disabled { codec: other }),
        }
    }

    /// Decompresses like [`decompress`](Self::decompress) input held in shared [`Bytes`]. When
    /// called from a job of a [`ParallelMap`](crate::ParallelMap) that has two or more threads
    /// working, an LZ4 frame of 256 KiB or more is decoded in two halves at once, as
    /// `decompress_in_halves` does: a read that asked for several
    /// cores keeps them busy to its end even when it has fewer chunks left than cores. The
    /// output and the errors are those of `decompress` either way.
    pub fn decompress_shared(
        &mut self,
        compression: Compression,
        input: &Bytes,
        expected: usize,
        cap: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), CodecError> {
        if crate::parallel_map::in_shared_work() {
            self.decompress_in_halves(compression, input, expected, cap, out)
        } else {
            self.decompress(compression, input, expected, cap, out)
        }
    }

    /// Decompresses like [`decompress`](Self::decompress), but decodes an LZ4 frame of 256 KiB
    /// or more in two halves at once when it can: the second half is offered to the threads of
    /// the [`ParallelMap`](crate::ParallelMap) pool, and decoded by one of them that is free
    /// before this thread is done with the first half (by this thread afterwards otherwise).
    /// The input is `Bytes` so that the other thread can hold it; the output and the errors
    /// are those of `decompress`. Readers call [`decompress_shared`](Self::decompress_shared),
    /// which decides; this is public for the tests that compare the two ways.
    #[doc(hidden)]
    pub fn decompress_in_halves(
        &mut self,
        compression: Compression,
        input: &Bytes,
        expected: usize,
        cap: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), CodecError> {
        #[cfg(feature = "lz4")]
        if compression == Compression::Lz4 && expected <= cap {
            return lz4::decompress_exact_in_halves(input, expected, out);
        }
        self.decompress(compression, input, expected, cap, out)
    }

    /// Decodes as much of possibly damaged or truncated `input` as possible, up to `cap` bytes,
    /// into `out` (previous content discarded). For salvaging the chunk a recorder was writing
    /// when it was killed, whose uncompressed size was never recorded.
    ///
    /// LZ4 yields every complete block, bzip2 every complete 900k block, zstd everything its
    /// streaming decoder could produce before the damage.
    pub fn decompress_partial(
        &mut self,
        compression: Compression,
        input: &[u8],
        cap: usize,
        out: &mut Vec<u8>,
    ) -> Salvage {
        out.clear();
        if let Err(error) = compression.ensure_enabled() {
            return Salvage {
                recovered: 0,
                error: Some(error),
            };
        }
        let error = match compression {
            Compression::None => {
                let n = input.len().min(cap);
                out.extend_from_slice(&input[..n]);
                (n < input.len()).then_some(CodecError::TooLarge {
                    expected: input.len() as u64,
                    cap: cap as u64,
                })
            }
            #[cfg(feature = "lz4")]
            Compression::Lz4 => lz4::decompress_partial(input, cap, out).err(),
            #[cfg(feature = "zstd")]
            Compression::Zstd => match self.zstd_decoder() {
                Ok(decoder) => zstd::decompress_partial(decoder, input, cap, out).err(),
                Err(e) => Some(e),
            },
            #[cfg(feature = "bz2")]
            Compression::Bz2 => bz2::decompress_partial(input, cap, out).err(),
            #[allow(unreachable_patterns)]
            other => Some(CodecError::Disabled { codec: other }),
        };
        Salvage {
            recovered: out.len(),
            error,
        }
    }

    #[cfg(feature = "zstd")]
    fn zstd_decoder(&mut self) -> Result<&mut ::zstd::stream::raw::Decoder<'static>, CodecError> {
        if self.zstd.is_none() {
            let decoder = ::zstd::stream::raw::Decoder::new()
                .map_err(|e| CodecError::corrupt(Compression::Zstd, e))?;
            self.zstd = Some(decoder);
        }
        match self.zstd.as_mut() {
            Some(decoder) => Ok(decoder),
            None => Err(CodecError::corrupt(Compression::Zstd, "no decoder context")),
        }
    }
}

/// Decompresses one chunk with a fresh [`Decompressor`]; see [`Decompressor::decompress`].
pub fn decompress(
    compression: Compression,
    input: &[u8],
    expected: usize,
    cap: usize,
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    Decompressor::new().decompress(compression, input, expected, cap, out)
}

/// Compresses one chunk with default settings; see [`Compressor::compress`].
pub fn compress(
    compression: Compression,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    Compressor::new(compression).compress(input, out)
}
