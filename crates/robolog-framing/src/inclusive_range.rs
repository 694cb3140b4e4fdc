//! Time ranges as the inclusive bounds readers filter by.

use std::ops::{Bound, RangeBounds};

/// A range of `u64` values (log times in nanoseconds) as inclusive `first..=last`, the form every
/// reader compares chunk and message times against. `Bound::Excluded` ends become inclusive ones,
/// and a range that can hold nothing (`..0`, `(Excluded(u64::MAX), Unbounded)`, `5..3`) is
/// marked `empty`.
///
/// ```
/// use robolog_framing::InclusiveRange;
/// let r = InclusiveRange::new(10..20);
/// assert_eq!((r.first, r.last, r.empty), (10, 19, false));
/// assert!(InclusiveRange::new(..0).empty);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InclusiveRange {
    /// The first value in the range (0 when unbounded).
    pub first: u64,
    /// The last value in the range (`u64::MAX` when unbounded).
    pub last: u64,
    /// True when no value is in the range.
    pub empty: bool,
}

impl InclusiveRange {
    /// The inclusive bounds of `range`.
    pub fn new(range: impl RangeBounds<u64>) -> Self {
        let (first, first_ok) = match range.start_bound() {
            Bound::Included(&s) => (s, true),
            Bound::Excluded(&s) => (s.saturating_add(1), s != u64::MAX),
            Bound::Unbounded => (0, true),
        };
        let (last, last_ok) = match range.end_bound() {
            Bound::Included(&e) => (e, true),
            Bound::Excluded(&e) => (e.saturating_sub(1), e != 0),
            Bound::Unbounded => (u64::MAX, true),
        };
        Self {
            first,
            last,
            empty: !first_ok || !last_ok || first > last,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_bound() {
        let r = |range| {
            let r = InclusiveRange::new(range);
            (r.first, r.last, r.empty)
        };
        assert_eq!(
            r((Bound::Unbounded, Bound::Unbounded)),
            (0, u64::MAX, false)
        );
        assert_eq!(r((Bound::Included(5), Bound::Included(5))), (5, 5, false));
        assert_eq!(r((Bound::Excluded(5), Bound::Excluded(7))), (6, 6, false));
        assert!(r((Bound::Excluded(5), Bound::Excluded(6))).2);
        assert!(r((Bound::Excluded(u64::MAX), Bound::Unbounded)).2);
        assert!(r((Bound::Unbounded, Bound::Excluded(0))).2);
        assert!(r((Bound::Included(7), Bound::Included(3))).2);
    }
}
