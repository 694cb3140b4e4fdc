//! The log formats the facade knows, whether this build reads them, and which cargo feature
//! enables each.

use std::fmt;
use std::path::Path;

use serde::Serialize;

/// A log file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// ROS bag, format 2.0 or 1.2.
    Bag,
    /// MCAP (ratified, or the pre-ratification draft layout when read from bytes).
    Mcap,
    /// Boston Dynamics Data Format 1.0.0.
    Bddf,
    /// ROS 2 bag: a rosbag2 directory (sqlite3 or MCAP storage) or a lone `.db3` file.
    Rosbag2,
}

impl Format {
    /// Every format, in a stable order.
    pub const ALL: [Format; 4] = [Format::Bag, Format::Mcap, Format::Bddf, Format::Rosbag2];

    /// A human name: `ROS bag`, `MCAP`, `BDDF`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Bag => "ROS bag",
            Format::Mcap => "MCAP",
            Format::Bddf => "BDDF",
            Format::Rosbag2 => "ROS 2 bag",
        }
    }

    /// The cargo feature of this crate that enables the format.
    pub fn feature(self) -> &'static str {
        match self {
            Format::Bag => "rosbag",
            Format::Mcap => "mcap",
            Format::Bddf => "bddf",
            Format::Rosbag2 => "rosbag2",
        }
    }

    /// True when this build reads and writes the format.
    pub fn is_enabled(self) -> bool {
        match self {
            Format::Bag => cfg!(feature = "rosbag"),
            Format::Mcap => cfg!(feature = "mcap"),
            Format::Bddf => cfg!(feature = "bddf"),
            Format::Rosbag2 => cfg!(feature = "rosbag2"),
        }
    }

    /// The usual file extension, without the dot (`db3` for a ROS 2 bag's sqlite3 storage
    /// file; a bag itself is a directory).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Bag => "bag",
            Format::Mcap => "mcap",
            Format::Bddf => "bddf",
            Format::Rosbag2 => "db3",
        }
    }

    /// The format a path's extension names (`.bag`, `.mcap`, `.bddf`, any case), for choosing
    /// an output format; inputs are always recognised by their first bytes instead.
    pub fn from_path(path: impl AsRef<Path>) -> Option<Format> {
        let ext = path.as_ref().extension()?.to_str()?.to_ascii_lowercase();
        Format::ALL.into_iter().find(|f| f.extension() == ext)
    }

    /// `Ok` when enabled, the error naming the feature otherwise.
    pub(crate) fn require_enabled(self) -> crate::Result<()> {
        if self.is_enabled() {
            Ok(())
        } else {
            Err(crate::Error::FormatDisabled { format: self })
        }
    }
}

impl Format {
    /// What the format calls the channels its messages are on.
    pub(crate) fn channel_word(self) -> &'static str {
        match self {
            Format::Bag => "connection",
            Format::Mcap => "channel",
            Format::Bddf => "series",
            Format::Rosbag2 => "topic id",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = crate::SettingsError;

    /// `bag`, `mcap`, `bddf` or `rosbag2` (the names `--format` takes).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "bag" => Ok(Format::Bag),
            "mcap" => Ok(Format::Mcap),
            "bddf" => Ok(Format::Bddf),
            "rosbag2" => Ok(Format::Rosbag2),
            other => Err(crate::SettingsError::Conflict(format!(
                "unknown format {other:?}: bag, mcap, bddf or rosbag2"
            ))),
        }
    }
}
