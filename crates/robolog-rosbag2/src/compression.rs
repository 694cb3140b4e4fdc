//! rosbag2's zstd compression: whole storage files (FILE mode) streamed to and from disk, and
//! one frame per message (MESSAGE mode).

#[cfg(feature = "zstd")]
use std::io::{Read, Write};
use std::path::Path;

use robolog_framing::{Bytes, CodecError, Compression, Compressor, Decompressor};

/// The zstd frame magic, `28 B5 2F FD`.
pub(crate) const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// The level rosbag2 compresses messages with.
const MESSAGE_LEVEL: i32 = 1;
/// The level rosbag2 compresses files with (the library default).
const FILE_LEVEL: i32 = 3;

#[cfg(not(feature = "zstd"))]
fn disabled() -> CodecError {
    CodecError::Disabled {
        codec: Compression::Zstd,
    }
}

/// Decompresses the zstd file `src` (one frame or several, with or without content sizes)
/// into a new temporary file in `dir`, refusing to write more than `limit` bytes.
pub(crate) fn decompress_file(
    src: &Path,
    dir: &Path,
    limit: u64,
) -> Result<tempfile::TempPath, FileCodecError> {
    #[cfg(feature = "zstd")]
    {
        let input = std::fs::File::open(src).map_err(FileCodecError::Io)?;
        let mut decoder = zstd::stream::read::Decoder::new(std::io::BufReader::new(input))
            .map_err(FileCodecError::Io)?;
        let mut out = tempfile::Builder::new()
            .prefix(".robolog-rosbag2-")
            .tempfile_in(dir)
            .map_err(FileCodecError::Io)?;
        let mut buf = vec![0u8; 1 << 20];
        let mut written = 0u64;
        loop {
            let n = match decoder.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(FileCodecError::Codec(CodecError::Corrupt {
                        codec: Compression::Zstd,
                        message: e.to_string(),
                    }));
                }
            };
            written += n as u64;
            if written > limit {
                return Err(FileCodecError::Codec(CodecError::TooLarge {
                    expected: written,
                    cap: limit,
                }));
            }
            out.write_all(&buf[..n]).map_err(FileCodecError::Io)?;
        }
        out.flush().map_err(FileCodecError::Io)?;
        Ok(out.into_temp_path())
    }
    #[cfg(not(feature = "zstd"))]
    {
        let _ = (src, dir, limit);
        Err(FileCodecError::Codec(disabled()))
    }
}

/// Compresses `src` into `dst` (FILE mode), streaming.
pub(crate) fn compress_file(src: &Path, dst: &Path) -> Result<(), FileCodecError> {
    #[cfg(feature = "zstd")]
    {
        let mut input = std::fs::File::open(src).map_err(FileCodecError::Io)?;
        let output = std::fs::File::create(dst).map_err(FileCodecError::Io)?;
        let mut encoder =
            zstd::stream::write::Encoder::new(std::io::BufWriter::new(output), FILE_LEVEL)
                .map_err(FileCodecError::Io)?;
        // The decompressed size goes into the frame header, as rosbag2's compressor writes it.
        let len = input.metadata().map_err(FileCodecError::Io)?.len();
        encoder
            .set_pledged_src_size(Some(len))
            .map_err(FileCodecError::Io)?;
        std::io::copy(&mut input, &mut encoder).map_err(FileCodecError::Io)?;
        let mut out = encoder.finish().map_err(FileCodecError::Io)?;
        out.flush().map_err(FileCodecError::Io)?;
        out.get_ref().sync_all().map_err(FileCodecError::Io)?;
        Ok(())
    }
    #[cfg(not(feature = "zstd"))]
    {
        let _ = (src, dst, FILE_LEVEL);
        Err(FileCodecError::Codec(disabled()))
    }
}

/// Why a file could not be (de)compressed.
#[derive(Debug)]
#[cfg_attr(not(feature = "zstd"), allow(dead_code))]
pub(crate) enum FileCodecError {
    Io(std::io::Error),
    Codec(CodecError),
}

/// Decompresses one message (MESSAGE mode): a zstd frame, with its content size (as rosbag2
/// and rosbags write it) or without, up to `limit` bytes.
pub(crate) fn decompress_message(
    decompressor: &mut Decompressor,
    data: &[u8],
    limit: usize,
) -> Result<Bytes, CodecError> {
    #[cfg(feature = "zstd")]
    {
        let mut out = Vec::new();
        match zstd::zstd_safe::get_frame_content_size(data) {
            Ok(Some(size)) => {
                let size = usize::try_from(size).unwrap_or(usize::MAX);
                decompressor.decompress(Compression::Zstd, data, size, limit, &mut out)?;
            }
            _ => {
                let salvage =
                    decompressor.decompress_partial(Compression::Zstd, data, limit, &mut out);
                if let Some(e) = salvage.error {
                    return Err(e);
                }
            }
        }
        Ok(Bytes::from(out))
    }
    #[cfg(not(feature = "zstd"))]
    {
        let _ = (decompressor, data, limit);
        Err(disabled())
    }
}

/// Compresses one message into a zstd frame (MESSAGE mode, level 1 as rosbag2).
pub(crate) fn compress_message(
    compressor: &mut Compressor,
    data: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    out.clear();
    compressor.compress(data, out)
}

/// The compressor MESSAGE mode uses.
pub(crate) fn message_compressor() -> Compressor {
    Compressor::new(Compression::Zstd).with_level(MESSAGE_LEVEL)
}
