//! ROS times (`sec:u32, nsec:u32`) and their conversion to the nanoseconds of the public API.

use std::cmp::Ordering;

use crate::error::{Error, Result};

const NANOS: u64 = 1_000_000_000;

/// A time as stored in a bag. `nsec` is not normalised (writers never produce `nsec >= 1e9`,
/// but readers accept it), so the pair is kept as found and only compared by its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) struct RosTime {
    pub(crate) sec: u32,
    pub(crate) nsec: u32,
}

impl RosTime {
    pub(crate) fn from_le_bytes(b: [u8; 8]) -> Self {
        Self {
            sec: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            nsec: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        }
    }

    pub(crate) fn to_le_bytes(self) -> [u8; 8] {
        let mut out = [0u8; 8];
        out[..4].copy_from_slice(&self.sec.to_le_bytes());
        out[4..].copy_from_slice(&self.nsec.to_le_bytes());
        out
    }

    /// Nanoseconds since the epoch. Cannot overflow: (2^32 - 1) * 1e9 + 2^32 - 1 < 2^64.
    pub(crate) fn to_ns(self) -> u64 {
        u64::from(self.sec) * NANOS + u64::from(self.nsec)
    }

    /// The normalised time of `ns`, failing when its seconds do not fit 32 bits.
    pub(crate) fn from_ns(ns: u64) -> Result<Self> {
        let sec = u32::try_from(ns / NANOS).map_err(|_| Error::TimeOutOfRange { time_ns: ns })?;
        Ok(Self {
            sec,
            nsec: (ns % NANOS) as u32,
        })
    }
}

impl Ord for RosTime {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.to_ns(), self.sec).cmp(&(other.to_ns(), other.sec))
    }
}

impl PartialOrd for RosTime {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        let t = RosTime::from_ns(1_600_000_000_010_000_002).unwrap();
        assert_eq!((t.sec, t.nsec), (1_600_000_000, 10_000_002));
        assert_eq!(RosTime::from_le_bytes(t.to_le_bytes()), t);
        let max = RosTime {
            sec: u32::MAX,
            nsec: u32::MAX,
        };
        assert_eq!(max.to_ns(), 4_294_967_295_000_000_000 + 4_294_967_295);
        assert!(RosTime::from_ns(u64::MAX).is_err());
        // Unnormalised nanoseconds compare by value.
        let odd = RosTime {
            sec: 1,
            nsec: 1_500_000_000,
        };
        assert!(odd > RosTime { sec: 2, nsec: 0 });
    }
}
