//! Decoding a chunk's first bytes only: a reader that wants the messages at the start of a large
//! chunk (one topic out of a chunk that also holds camera images, say) stops decoding once it
//! has them.

#[cfg(feature = "bz2")]
use super::bz2::Bz2Prefix;
#[cfg(feature = "lz4")]
use super::lz4::Lz4Prefix;
#[cfg(feature = "zstd")]
use super::zstd::ZstdPrefix;
use super::{CodecError, Compression, Decompressor};

/// Decodes a compressed chunk front to back, only as far as asked.
///
/// Made by [`Decompressor::prefix`]. [`fill_to`](Self::fill_to) decodes at least the first `n`
/// bytes (LZ4 a whole block at a time; zstd and bzip2 exactly, though bzip2 first reads and
/// sorts the whole 900k block that holds them); it can be called again with a larger `n` and
/// goes on from where it stopped. [`finish`](Self::finish) decodes the rest with every check of
/// [`Decompressor::decompress`]. When the decoder is dropped, the output vector holds exactly the
/// bytes decoded (its allocation is kept for reuse).
///
/// Nothing checks the bytes after the prefix, so a container checksum over the whole chunk
/// cannot be verified on a prefix.
///
/// ```
/// use robolog_framing::{Compression, Compressor, Decompressor};
/// let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
/// // (Built without the `lz4` feature, there is no LZ4 to show.)
/// if Compression::Lz4.is_enabled() {
///     let mut compressed = Vec::new();
///     Compressor::new(Compression::Lz4).compress(&data, &mut compressed)?;
///
///     let mut decompressor = Decompressor::new();
///     let mut out = Vec::new();
///     let mut prefix =
///         decompressor.prefix(Compression::Lz4, &compressed, data.len(), 1 << 20, &mut out)?;
///     prefix.fill_to(1000)?;
///     // The first 64 KiB block is decoded; the rest is not.
///     assert_eq!(prefix.decoded(), &data[..64 * 1024]);
///     drop(prefix);
///     assert_eq!(out.len(), 64 * 1024);
/// }
/// # Ok::<(), robolog_framing::CodecError>(())
/// ```
pub struct PrefixDecoder<'a> {
    /// Holds the zstd context the decode goes on with.
    #[cfg_attr(not(feature = "zstd"), allow(dead_code))]
    decompressor: &'a mut Decompressor,
    input: &'a [u8],
    expected: usize,
    out: &'a mut Vec<u8>,
    codec: Codec,
}

enum Codec {
    None {
        written: usize,
    },
    #[cfg(feature = "lz4")]
    Lz4(Lz4Prefix),
    #[cfg(feature = "zstd")]
    Zstd(ZstdPrefix),
    #[cfg(feature = "bz2")]
    Bz2(Bz2Prefix),
}

impl std::fmt::Debug for PrefixDecoder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrefixDecoder")
            .field("expected", &self.expected)
            .field("decoded", &self.written())
            .finish_non_exhaustive()
    }
}

impl Decompressor {
    /// Starts decoding `input`, which must decode to `expected` bytes, into `out` (previous
    /// content discarded, allocation reused), a prefix at a time. Fails without allocating when
    /// `expected > cap`.
    pub fn prefix<'a>(
        &'a mut self,
        compression: Compression,
        input: &'a [u8],
        expected: usize,
        cap: usize,
        out: &'a mut Vec<u8>,
    ) -> Result<PrefixDecoder<'a>, CodecError> {
        compression.ensure_enabled()?;
        if expected > cap {
            return Err(CodecError::TooLarge {
                expected: expected as u64,
                cap: cap as u64,
            });
        }
        let codec = match compression {
            Compression::None => {
                out.clear();
                Codec::None { written: 0 }
            }
            #[cfg(feature = "lz4")]
            Compression::Lz4 => Codec::Lz4(Lz4Prefix::new(input.len(), expected)),
            #[cfg(feature = "zstd")]
            Compression::Zstd => Codec::Zstd(ZstdPrefix::new(self.zstd_decoder()?)?),
            #[cfg(feature = "bz2")]
            Compression::Bz2 => Codec::Bz2(Bz2Prefix::new()),
            #[allow(unreachable_patterns)]
            other => return Err(CodecError::Disabled { codec: other }),
        };
        Ok(PrefixDecoder {
            decompressor: self,
            input,
            expected,
            out,
            codec,
        })
    }
}

impl PrefixDecoder<'_> {
    /// Decodes at least the first `want` bytes (all of them when `want` is the declared size or
    /// more). Fails when the data ends or breaks before.
    pub fn fill_to(&mut self, want: usize) -> Result<(), CodecError> {
        let want = want.min(self.expected);
        match &mut self.codec {
            Codec::None { written } => {
                if *written < want {
                    let bytes = self
                        .input
                        .get(*written..want)
                        .ok_or(CodecError::SizeMismatch {
                            codec: Compression::None,
                            expected: self.expected as u64,
                            actual: self.input.len() as u64,
                        })?;
                    self.out.extend_from_slice(bytes);
                    *written = want;
                }
                Ok(())
            }
            #[cfg(feature = "lz4")]
            Codec::Lz4(walk) => walk.fill_to(self.input, self.out, want),
            #[cfg(feature = "zstd")]
            Codec::Zstd(state) => {
                let decoder = self.decompressor.zstd_decoder()?;
                state.fill_to(decoder, self.input, self.expected, self.out, want)
            }
            #[cfg(feature = "bz2")]
            Codec::Bz2(state) => state.fill_to(self.input, self.expected, self.out, want),
        }
    }

    /// The bytes decoded so far.
    pub fn decoded(&self) -> &[u8] {
        &self.out[..self.written()]
    }

    /// Decodes the rest and checks that the data holds exactly the declared size, as
    /// [`Decompressor::decompress`] does.
    pub fn finish(mut self) -> Result<(), CodecError> {
        match &mut self.codec {
            Codec::None { .. } => self.fill_to(self.expected),
            #[cfg(feature = "lz4")]
            Codec::Lz4(walk) => walk.finish(self.input, self.out),
            #[cfg(feature = "zstd")]
            Codec::Zstd(state) => {
                let decoder = self.decompressor.zstd_decoder()?;
                state.finish(decoder, self.input, self.expected, self.out)
            }
            #[cfg(feature = "bz2")]
            Codec::Bz2(state) => state.finish(self.input, self.expected, self.out),
        }
    }

    /// Decodes up to byte `end` and stops there. When `end` is the declared size (or more), that
    /// is everything: it finishes with every check of [`finish`](Self::finish) and returns
    /// `true`.
    pub fn decode_to(mut self, end: usize) -> Result<bool, CodecError> {
        if end >= self.expected {
            self.finish()?;
            return Ok(true);
        }
        self.fill_to(end)?;
        Ok(false)
    }

    fn written(&self) -> usize {
        match &self.codec {
            Codec::None { written } => *written,
            #[cfg(feature = "lz4")]
            Codec::Lz4(walk) => walk.written(),
            #[cfg(feature = "zstd")]
            Codec::Zstd(state) => state.written,
            #[cfg(feature = "bz2")]
            Codec::Bz2(state) => state.written,
        }
    }
}

impl Drop for PrefixDecoder<'_> {
    fn drop(&mut self) {
        let written = self.written();
        self.out.truncate(written);
    }
}
