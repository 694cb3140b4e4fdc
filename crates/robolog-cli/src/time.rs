//! Times on the command line (seconds, nanoseconds or RFC 3339) and times in output (UTC).

use jiff::Timestamp;

/// A bare integer below this is seconds since 1970; from it on, nanoseconds. 10^12 s is in the
/// year 33658 and 10^12 ns is 16 minutes after 1970: no real log time is ambiguous.
pub(crate) const SECONDS_BELOW: u64 = 1_000_000_000_000;

/// How `--start`/`--end` read a time, for `--help`.
pub(crate) const TIME_FORMS: &str = "seconds since 1970 with an optional fraction \
     (1396293900.5), nanoseconds (1396293900500000000: a bare integer from 10^12 on is \
     nanoseconds, below it seconds), a unit suffix to say which (1396293900s, 5ns, 250ms, 10us), \
     or RFC 3339 (2014-03-31T19:25:00.5Z, 2014-03-31T21:25:00+02:00)";

const UNITS: [(&str, u64); 6] = [
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("", 0),
];

/// Reads `--start`/`--end` (see [`TIME_FORMS`]) as nanoseconds since 1970.
pub(crate) fn parse_time(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if text.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c.is_alphabetic())
        && !text.contains(['T', 't', ':', '-'])
    {
        return parse_number(text);
    }
    let timestamp: Timestamp = text
        .parse()
        .map_err(|e| format!("expected {TIME_FORMS}; {text:?} is none of these ({e})"))?;
    u64::try_from(timestamp.as_nanosecond())
        .map_err(|_| format!("{text} is before 1970: log times start at 1970-01-01T00:00:00Z"))
}

/// A number with an optional fraction and unit suffix.
fn parse_number(text: &str) -> Result<u64, String> {
    let digits_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(digits_end);
    let Some(&(_, unit)) = UNITS.iter().find(|(name, _)| *name == suffix) else {
        return Err(format!(
            "unknown time unit {suffix:?} in {text:?}: use s, ms, us or ns (or none)"
        ));
    };
    let (whole, fraction) = match number.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (number, None),
    };
    if (whole.is_empty() && fraction.is_none_or(str::is_empty))
        || fraction.is_some_and(|f| f.contains('.'))
    {
        return Err(format!("{text:?} is not a number"));
    }
    let too_large = || format!("{text} is too large: log times end in 2554 (u64 nanoseconds)");
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| too_large())?
    };
    // A bare number: a fraction or a small value says seconds.
    let unit = match (unit, fraction) {
        (0, Some(_)) => 1_000_000_000,
        (0, None) if whole < SECONDS_BELOW => 1_000_000_000,
        (0, None) => 1,
        (unit, _) => unit,
    };
    let mut ns = whole.checked_mul(unit).ok_or_else(too_large)?;
    if let Some(fraction) = fraction.filter(|f| !f.is_empty()) {
        // Exact decimal arithmetic: a fraction finer than a nanosecond is refused, not rounded.
        let places = unit.ilog10() as usize;
        if fraction.len() > places {
            return Err(format!(
                "{text} is finer than a nanosecond: give at most {places} decimal places"
            ));
        }
        let scaled: u64 = format!("{fraction:0<places$}")
            .parse()
            .map_err(|_| too_large())?;
        ns = ns.checked_add(scaled).ok_or_else(too_large)?;
    }
    Ok(ns)
}

/// `ns` since 1970 as RFC 3339 in UTC with nine fractional digits: the facade's rule, shared
/// with `info --json`.
pub(crate) use robolog::format_utc;

/// A duration in seconds with nanosecond digits: `0.490000002 s`.
pub(crate) fn format_duration(ns: u64) -> String {
    format!("{}.{:09} s", ns / 1_000_000_000, ns % 1_000_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_numbers_below_10_12_are_seconds_above_nanoseconds() {
        assert_eq!(parse_time("0"), Ok(0));
        assert_eq!(parse_time("1396293900"), Ok(1_396_293_900_000_000_000));
        assert_eq!(parse_time("18446744073"), Ok(18_446_744_073_000_000_000));
        // Seconds, so beyond the last u64 nanosecond (2554).
        assert!(
            parse_time("999999999999")
                .unwrap_err()
                .contains("too large")
        );
        assert_eq!(parse_time("1000000000000"), Ok(1_000_000_000_000));
        assert_eq!(
            parse_time("1600000000000000000"),
            Ok(1_600_000_000_000_000_000)
        );
        assert_eq!(
            parse_time("18446744073709551615"),
            Ok(u64::MAX),
            "the last u64 nanosecond"
        );
    }

    #[test]
    fn fractions_are_seconds_and_exact() {
        assert_eq!(parse_time("1396293900.5"), Ok(1_396_293_900_500_000_000));
        assert_eq!(
            parse_time("1396293900.000000001"),
            Ok(1_396_293_900_000_000_001)
        );
        assert_eq!(parse_time("0.25"), Ok(250_000_000));
        assert_eq!(parse_time(".5"), Ok(500_000_000));
        assert_eq!(parse_time("7."), Ok(7_000_000_000));
        // A fraction always means seconds, however large the number.
        assert!(
            parse_time("1000000000000.5")
                .unwrap_err()
                .contains("too large")
        );
    }

    #[test]
    fn unit_suffixes_say_which() {
        assert_eq!(parse_time("5ns"), Ok(5));
        assert_eq!(parse_time("1396293900s"), Ok(1_396_293_900_000_000_000));
        assert_eq!(parse_time("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_time("250ms"), Ok(250_000_000));
        assert_eq!(parse_time("10us"), Ok(10_000));
        assert_eq!(parse_time("10µs"), Ok(10_000));
        assert_eq!(parse_time("2.5ms"), Ok(2_500_000));
        assert_eq!(
            parse_time("1600000000000000000ns"),
            Ok(1_600_000_000_000_000_000)
        );
    }

    #[test]
    fn rfc3339() {
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
        for large in [
            "18446744073709551616",
            "18446744074s",
            "18446744073709551615.5",
        ] {
            let error = parse_time(large).unwrap_err();
            assert!(error.contains("too large"), "{large}: {error}");
        }
        let fine = parse_time("1.0000000001").unwrap_err();
        assert!(fine.contains("finer than a nanosecond"), "{fine}");
        assert!(parse_time("1.5ns").unwrap_err().contains("finer"));
        assert!(parse_time("5h").unwrap_err().contains("unknown time unit"));
        for bad in ["", "-5", ".", "1.2.3", "yesterday"] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
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
