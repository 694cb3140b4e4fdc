//! Block timestamps: `google.protobuf.Timestamp` on disk, signed nanoseconds in the API.

use prost_types::Timestamp;

const NANOS_PER_SECOND: i64 = 1_000_000_000;

/// The timestamp for `nanos` nanoseconds since the epoch, split with floor division so that
/// `nanos` is always in `[0, 1e9)`, as files written by other tools have it (−1 ns is −1 s +
/// 999 999 999 ns).
///
/// ```
/// let t = robolog_bddf::timestamp_from_nanos(-1);
/// assert_eq!((t.seconds, t.nanos), (-1, 999_999_999));
/// ```
pub fn timestamp_from_nanos(nanos: i64) -> Timestamp {
    Timestamp {
        seconds: nanos.div_euclid(NANOS_PER_SECOND),
        // The remainder is in [0, 1e9), which always fits an i32.
        nanos: i32::try_from(nanos.rem_euclid(NANOS_PER_SECOND)).unwrap_or_default(),
    }
}

/// Nanoseconds since the epoch, or `None` when the timestamp does not fit in an `i64`.
///
/// Any `nanos` value is accepted (even outside `[0, 1e9)`), since only the sum matters.
///
/// ```
/// use prost_types::Timestamp;
/// let t = Timestamp { seconds: 1, nanos: 500_000_000 };
/// assert_eq!(robolog_bddf::timestamp_to_nanos(&t), Some(1_500_000_000));
/// ```
pub fn timestamp_to_nanos(timestamp: &Timestamp) -> Option<i64> {
    let nanos =
        i128::from(timestamp.seconds) * i128::from(NANOS_PER_SECOND) + i128::from(timestamp.nanos);
    i64::try_from(nanos).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_division_and_back() {
        for (ns, seconds, nanos) in [
            (0, 0, 0),
            (1_500_000_000, 1, 500_000_000),
            (-1, -1, 999_999_999),
            (-1_000_000_000, -1, 0),
            (-1_000_000_001, -2, 999_999_999),
            (i64::MAX, 9_223_372_036, 854_775_807),
            (i64::MIN, -9_223_372_037, 145_224_192),
        ] {
            let t = timestamp_from_nanos(ns);
            assert_eq!((t.seconds, t.nanos), (seconds, nanos), "{ns}");
            assert_eq!(timestamp_to_nanos(&t), Some(ns));
        }
    }

    #[test]
    fn out_of_range_is_none() {
        let t = Timestamp {
            seconds: i64::MAX,
            nanos: 0,
        };
        assert_eq!(timestamp_to_nanos(&t), None);
        let t = Timestamp {
            seconds: 9_223_372_036,
            nanos: 854_775_808,
        };
        assert_eq!(timestamp_to_nanos(&t), None);
    }
}
