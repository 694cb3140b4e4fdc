//! Output settings by name, as a command line or a script gives them, turned into the writer
//! options of the output's format: the one mapping that `robolog convert`/`merge` and the
//! Python package share.

use std::path::Path;

use crate::format::Format;
use crate::writer::{Output, WriterOptions};

/// Chunk compression, by the names users give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Compression {
    /// Uncompressed chunks.
    None,
    /// LZ4 (MCAP frames, `roslz4` bag chunks).
    Lz4,
    /// Zstandard (MCAP).
    Zstd,
    /// bzip2 (bags).
    Bz2,
}

/// Where a ROS 2 bag stores its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Storage {
    /// SQLite 3 (`.db3` files).
    Sqlite3,
    /// MCAP files (the default since ROS 2 Iron).
    Mcap,
}

/// What a ROS 2 bag compresses with zstd.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompressionMode {
    /// Each storage file as a whole.
    File,
    /// Each message.
    Message,
}

/// Why output settings cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// No format was named and the output's name does not tell it.
    #[error(
        "cannot tell the output format from {0:?}: name it .mcap, .bag or .bddf, or name the format (rosbag2 for a ROS 2 bag directory)"
    )]
    UnknownFormat(String),
    /// A setting does not apply to the output format, or two settings contradict each other.
    #[error("{0}")]
    Conflict(String),
    /// The format was compiled out of this build.
    #[error("{0}")]
    Disabled(String),
}

/// How to write an output log, by name: its format (from the output's extension unless named),
/// chunk compression and size, and for ROS 2 bags the storage and compression mode. Unset
/// settings take the format's defaults (see [`WriterOptions::default_for`]); a setting the
/// format does not have is an error rather than ignored.
///
/// ```
/// use robolog::{Compression, Format, OutputSettings, WriterOptions};
/// let settings = OutputSettings::new().compression(Compression::Lz4).chunk_size(1 << 20);
/// let options = settings.writer_options("out.mcap".as_ref())?;
/// assert!(matches!(options, WriterOptions::Mcap(o) if o.get_chunk_size() == Some(1 << 20)));
/// assert_eq!(settings.output_format("out.bag".as_ref()), Some(Format::Bag));
/// let bz2 = OutputSettings::new().compression(Compression::Bz2);
/// assert!(bz2.writer_options("out.mcap".as_ref()).is_err());
/// # Ok::<(), robolog::SettingsError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputSettings {
    format: Option<Format>,
    compression: Option<Compression>,
    chunk_size: Option<u64>,
    storage: Option<Storage>,
    compression_mode: Option<CompressionMode>,
}

impl OutputSettings {
    /// Everything by default.
    pub fn new() -> Self {
        Self::default()
    }

    /// The output format, instead of the one the output's extension names.
    pub fn format(mut self, format: Format) -> Self {
        self.format = Some(format);
        self
    }

    /// Chunk compression (default: zstd for MCAP, none for bags; BDDF has none).
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = Some(compression);
        self
    }

    /// Chunk size in uncompressed bytes (MCAP and bags); 0 writes an unchunked MCAP file.
    pub fn chunk_size(mut self, bytes: u64) -> Self {
        self.chunk_size = Some(bytes);
        self
    }

    /// ROS 2 bag storage (default: MCAP).
    pub fn storage(mut self, storage: Storage) -> Self {
        self.storage = Some(storage);
        self
    }

    /// ROS 2 bag zstd compression (default: none).
    pub fn compression_mode(mut self, mode: CompressionMode) -> Self {
        self.compression_mode = Some(mode);
        self
    }

    /// The format written to `output`: the one named, else a ROS 2 bag for an existing
    /// directory, else the one its extension names.
    pub fn output_format(&self, output: &Path) -> Option<Format> {
        match self.format {
            Some(format) => Some(format),
            None if output.is_dir() => Some(Format::Rosbag2),
            None => Format::from_path(output),
        }
    }

    /// The writer options for writing to `output`.
    pub fn writer_options(&self, output: &Path) -> Result<WriterOptions, SettingsError> {
        let format = self
            .output_format(output)
            .ok_or_else(|| SettingsError::UnknownFormat(output.display().to_string()))?;
        let options = WriterOptions::default_for(format)
            .map_err(|e| SettingsError::Disabled(e.to_string()))?;
        let refuse = |what: &str| Err(SettingsError::Conflict(what.to_owned()));
        if format != Format::Rosbag2 && (self.storage.is_some() || self.compression_mode.is_some())
        {
            return refuse(
                "the storage and the compression mode are settings of ROS 2 bags (format rosbag2)",
            );
        }
        Ok(match options {
            #[cfg(feature = "rosbag2")]
            WriterOptions::Rosbag2(mut o) => {
                use robolog_rosbag2::{CompressionMode as Mode, StorageId};
                let storage = match self.storage {
                    Some(Storage::Sqlite3) => StorageId::Sqlite3,
                    Some(Storage::Mcap) | None => StorageId::Mcap,
                };
                o = o.storage(storage);
                if let Some(mode) = self.compression_mode {
                    o = o.compression(match mode {
                        CompressionMode::File => Mode::File,
                        CompressionMode::Message => Mode::Message,
                    });
                }
                if let Some(compression) = self.compression {
                    if storage != StorageId::Mcap {
                        return refuse(
                            "the compression is MCAP chunk compression; sqlite3 bags are compressed by their compression mode",
                        );
                    }
                    o = o.mcap_chunk_compression(mcap_compression(compression)?);
                }
                if self.chunk_size.is_some() {
                    return refuse("ROS 2 bags take no chunk size");
                }
                WriterOptions::Rosbag2(o)
            }
            #[cfg(feature = "mcap")]
            WriterOptions::Mcap(mut o) => {
                if let Some(compression) = self.compression {
                    o = o.compression(mcap_compression(compression)?);
                }
                if let Some(size) = self.chunk_size {
                    o = o.chunk_size((size > 0).then_some(size));
                }
                WriterOptions::Mcap(o)
            }
            #[cfg(feature = "rosbag")]
            WriterOptions::Bag(mut o) => {
                use robolog_rosbag::ChunkCompression;
                if let Some(compression) = self.compression {
                    o = o.compression(match compression {
                        Compression::None => ChunkCompression::None,
                        Compression::Lz4 => ChunkCompression::Lz4,
                        Compression::Bz2 => ChunkCompression::Bz2,
                        Compression::Zstd => {
                            return refuse(
                                "bag chunks are compressed with none, lz4 or bz2, not zstd",
                            );
                        }
                    });
                }
                if let Some(size) = self.chunk_size {
                    let Ok(size) = usize::try_from(size) else {
                        return Err(SettingsError::Conflict(format!(
                            "a chunk size of {size} bytes is too large"
                        )));
                    };
                    o = o.chunk_threshold(size);
                }
                WriterOptions::Bag(o)
            }
            #[cfg(feature = "bddf")]
            WriterOptions::Bddf(o) => {
                if self.compression.is_some_and(|c| c != Compression::None) {
                    return refuse("BDDF files are not compressed");
                }
                if self.chunk_size.is_some() {
                    return refuse("BDDF files have no chunks (no chunk size)");
                }
                WriterOptions::Bddf(o)
            }
            #[allow(unreachable_patterns)]
            other => other,
        })
    }

    /// Where a writer of these settings writes `output`: the directory of a ROS 2 bag, or a
    /// file written atomically (see [`Output::file`]).
    pub fn output(&self, output: &Path) -> crate::Result<Output> {
        if self.output_format(output) == Some(Format::Rosbag2) {
            Ok(Output::directory(output))
        } else {
            Output::file(output)
        }
    }
}

#[cfg(feature = "mcap")]
fn mcap_compression(compression: Compression) -> Result<robolog_mcap::Compression, SettingsError> {
    Ok(match compression {
        Compression::None => robolog_mcap::Compression::None,
        Compression::Lz4 => robolog_mcap::Compression::Lz4,
        Compression::Zstd => robolog_mcap::Compression::Zstd,
        Compression::Bz2 => {
            return Err(SettingsError::Conflict(
                "MCAP chunks are compressed with none, lz4 or zstd, not bz2".into(),
            ));
        }
    })
}

impl std::str::FromStr for Compression {
    type Err = SettingsError;

    /// `none`, `lz4`, `zstd` or `bz2`.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Ok(match name {
            "none" => Compression::None,
            "lz4" => Compression::Lz4,
            "zstd" => Compression::Zstd,
            "bz2" => Compression::Bz2,
            other => {
                return Err(SettingsError::Conflict(format!(
                    "unknown compression {other:?}: none, lz4, zstd or bz2"
                )));
            }
        })
    }
}

impl std::str::FromStr for Storage {
    type Err = SettingsError;

    /// `sqlite3` or `mcap`.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "sqlite3" => Ok(Storage::Sqlite3),
            "mcap" => Ok(Storage::Mcap),
            other => Err(SettingsError::Conflict(format!(
                "unknown ROS 2 bag storage {other:?}: sqlite3 or mcap"
            ))),
        }
    }
}

impl std::str::FromStr for CompressionMode {
    type Err = SettingsError;

    /// `file` or `message`.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "file" => Ok(CompressionMode::File),
            "message" => Ok(CompressionMode::Message),
            other => Err(SettingsError::Conflict(format!(
                "unknown ROS 2 bag compression mode {other:?}: file or message"
            ))),
        }
    }
}
