//! Times on the command line: integer nanoseconds since 1970 or RFC 3339, and UTC output.

use jiff::Timestamp;

/// Reads `--start`/`--end`: integer nanoseconds since 1970, or an RFC 3339 time with an
/// offset (`2020-09-13T12:26:40Z`, `2020-09-13T14:26:40.25+02:00`).
pub(crate) fn parse_time(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse::<u64>()
            .map_err(|_| format!("{text} ns is too large: times end in 2554 (u64 nanoseconds)"));
    }
    let timestamp: Timestamp = text.parse().map_err(|e| {
        format!(
            "expected integer nanoseconds since 1970 or an RFC 3339 time such as \
             2020-09-13T12:26:40Z ({e})"
        )
    })?;
    u64::try_from(timestamp.as_nanosecond())
        .map_err(|_| format!("{text} is before 1970: log times start at 1970-01-01T00:00:00Z"))
}

/// `ns` since 1970 as RFC 3339 in UTC with all nine fractional digits, so that times line up
/// in columns and read back exactly.
pub(crate) fn format_utc(ns: u64) -> String {
    match Timestamp::from_nanosecond(i128::from(ns)) {
        Ok(timestamp) => format!("{timestamp:.9}"),
        // Unreachable for u64 (which ends in 2554), but a number beats a panic.
        Err(_) => format!("{ns} ns"),
    }
}

/// A duration in seconds with nanosecond digits: `0.490000002 s`.
pub(crate) fn format_duration(ns: u64) -> String {
    format!("{}.{:09} s", ns / 1_000_000_000, ns % 1_000_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_and_rfc3339() {
        assert_eq!(parse_time("0"), Ok(0));
        assert_eq!(
            parse_time("1600000000000000000"),
            Ok(1_600_000_000_000_000_000)
        );
        // 1600000000 s is 2020-09-13T12:26:40Z (the Unix "billennium" date).
        assert_eq!(
            parse_time("2020-09-13T12:26:40Z"),
            Ok(1_600_000_000_000_000_000)
        );
        assert_eq!(
            parse_time("2020-09-13T14:26:40.000000002+02:00"),
            Ok(1_600_000_000_000_000_002)
        );
        assert_eq!(parse_time("1970-01-01T00:00:00.5Z"), Ok(500_000_000));
        assert_eq!(
            parse_time("2554-07-21T23:34:33.709551615Z"),
            Ok(u64::MAX),
            "the last u64 nanosecond"
        );
    }

    #[test]
    fn rejected_times_say_why() {
        let before = parse_time("1969-12-31T23:59:59Z").unwrap_err();
        assert!(before.contains("before 1970"), "{before}");
        let local = parse_time("2020-09-13T12:26:40").unwrap_err();
        assert!(local.contains("RFC 3339"), "{local}");
        assert!(
            parse_time("18446744073709551616")
                .unwrap_err()
                .contains("too large")
        );
        assert!(parse_time("").is_err());
        assert!(parse_time("-5").is_err());
    }

    #[test]
    fn utc_output_reads_back() {
        assert_eq!(format_utc(0), "1970-01-01T00:00:00.000000000Z");
        assert_eq!(
            format_utc(1_600_000_000_490_000_002),
            "2020-09-13T12:26:40.490000002Z"
        );
        assert_eq!(format_utc(u64::MAX), "2554-07-21T23:34:33.709551615Z");
        for ns in [0, 1, 999_999_999, 1_700_000_002_990_000_000, u64::MAX] {
            assert_eq!(parse_time(&format_utc(ns)), Ok(ns));
        }
        assert_eq!(format_duration(490_000_002), "0.490000002 s");
        assert_eq!(format_duration(2_990_000_000), "2.990000000 s");
    }
}
