//! `cargo xtask bench --columnar`: Parquet export and SQL, the rows of issue 33. Whole
//! processes on the same files, the commands alternating round after round (see
//! [`super::process`]), the median round by wall time.
//!
//! - **export**: `robolog export FILE DIR` (Parquet) on an MCAP file of ROS 2
//!   `sensor_msgs/Imu` messages (the `--decoding` cat rows' CDR file), against
//!   - `transmcap convert --format parquet --parallel`, the mcap-to-Parquet converter of
//!     crates.io, on the same file (it decodes ROS 2 messages, not ROS 1 ones). It is not built
//!     here: give its path in `ROBOLOG_BENCH_TRANSMCAP` (`cargo install transmcap --version
//!     0.9.0`); without it that row says so. Target: export at least 2× as fast.
//!   - robolog decoding the same messages: `robolog-bench bench-decode FILE` reads every message with
//!     the facade and decodes it with its `Decoder` into a value tree, on one thread, as a
//!     program using the library would; nothing is rendered or written. That is the work an
//!     export cannot avoid (`cat --decode --json` is not: rendering JSON is most of its
//!     time). Target: export within 2× of it.
//! - **sql**: `robolog sql` counting the messages of a window of 1 % of the shorter log's
//!   duration in the middle of two zstd logs, one ten times as long as the other (the same
//!   window length, so the same number of messages). Target: the time does not grow with the
//!   log (the longer log within 1.25× of the shorter); the counts are checked.

use std::fs;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;

use robolog_mcap::Compression;

use super::decoding::{IMU_PERIOD_NS, IMU_START_NS, ImuEncoding, imu_count, imu_file};
use super::process::{Run, time_commands, time_commands_with};

/// The messages of the two SQL logs (the longer ten times the shorter).
fn sql_counts(quick: bool) -> (usize, usize) {
    if quick {
        (10_000, 100_000)
    } else {
        (100_000, 1_000_000)
    }
}

/// The longer log's SQL time over the shorter's that still counts as independent of the
/// log's length (start-up and the summary read differ a little).
const SQL_LENGTH_TOLERANCE: f64 = 1.25;

/// Decodes every message of the log at `path` with the facade on this thread and prints how
/// many there were: the baseline of the export rows (`robolog-bench bench-decode`, hidden).
pub(crate) fn decode_all(path: &Path) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let log = robolog::open(path).map_err(|e| err(&e))?;
    let mut decoder = robolog::Decoder::new();
    let mut count = 0u64;
    for message in log.messages().iter().map_err(|e| err(&e))? {
        let message = message.map_err(|e| err(&e))?;
        black_box(decoder.decode(&message).map_err(|e| err(&e))?);
        count += 1;
    }
    println!("{count}");
    Ok(())
}

/// `ns` since the Unix epoch as RFC 3339 (UTC, with nanoseconds), as SQL time literals.
fn rfc3339(ns: u64) -> String {
    let secs = ns / 1_000_000_000;
    let days = (secs / 86_400) as i64;
    let of_day = secs % 86_400;
    // Civil date from days since 1970-01-01 (proleptic Gregorian; Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:09}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
        ns % 1_000_000_000
    )
}

/// The count query over `window_ns` in the middle of a log of `count` Imu messages, and the
/// number of messages in that window.
fn window_query(count: usize, window_ns: u64) -> (String, u64) {
    let middle = IMU_START_NS + count as u64 * IMU_PERIOD_NS / 2;
    let (from, to) = (middle - window_ns / 2, middle + window_ns / 2);
    let query = format!(
        "SELECT count(*) AS n FROM \"/imu\" WHERE log_time >= '{}' AND log_time < '{}'",
        rfc3339(from),
        rfc3339(to)
    );
    // Messages fall on multiples of the period from the start, and `from` is one of them.
    (query, (to - from).div_ceil(IMU_PERIOD_NS))
}

/// Runs the query once and checks the count it prints (CSV: a header, then the number).
fn check_count(robolog: &Path, query: &str, log: &Path, expected: u64) -> Result<(), String> {
    let output = Command::new(robolog)
        .args(["sql", query])
        .arg(log)
        .arg("--csv")
        .output()
        .map_err(|e| format!("{}: {e}", robolog.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let counted = text
        .lines()
        .nth(1)
        .and_then(|n| n.trim().parse::<u64>().ok());
    if !output.status.success() || counted != Some(expected) {
        return Err(format!(
            "robolog sql on {} counted {text:?} (expected {expected}): {}",
            log.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

fn megabytes(path: &Path) -> f64 {
    fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1e6)
}

/// The bytes of the files under `path` (a file or a folder), in MB.
fn output_megabytes(path: &Path) -> f64 {
    match fs::read_dir(path) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| megabytes(&e.path()))
            .sum(),
        Err(_) => megabytes(path),
    }
}

fn remove(path: &Path) -> Result<(), String> {
    let removed = if path.is_dir() {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    };
    match removed {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("{}: {e}", path.display()))
        }
        _ => Ok(()),
    }
}

fn figures(run: Option<Run>) -> String {
    match run {
        Some(r) => format!(
            "{:.1} ms | {:.1} ms | {:.1} MB",
            r.wall * 1e3,
            r.cpu * 1e3,
            r.peak_mb
        ),
        None => "failed | — | —".to_owned(),
    }
}

fn check(met: bool) -> &'static str {
    if met { "✓" } else { "✗" }
}

/// Runs both parts and returns the report (markdown).
pub(crate) fn run(root: &Path, quick: bool) -> Result<String, String> {
    let robolog = crate::release_robolog(root)?;
    let bench = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = root.join("target/bench-data/decoding");
    let scratch = root.join("target/bench-data/scratch");
    fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let mut s = String::new();

    eprintln!("bench: export (robolog, transmcap, robolog decoding)");
    let count = imu_count(quick);
    let input = imu_file(&dir, count, ImuEncoding::Cdr, Compression::None)?;
    let ours_out = scratch.join("columnar-export");
    let theirs_out = scratch.join("columnar-transmcap.parquet");
    let mut commands = vec![
        vec![
            path(&robolog),
            "export".into(),
            path(&input),
            path(&ours_out),
            "--format".into(),
            "parquet".into(),
        ],
        vec![path(&bench), "bench-decode".into(), path(&input)],
    ];
    let transmcap = std::env::var_os("ROBOLOG_BENCH_TRANSMCAP").map(PathBuf::from);
    if let Some(transmcap) = &transmcap {
        commands.push(vec![
            path(transmcap),
            "convert".into(),
            "--format".into(),
            "parquet".into(),
            "--topic".into(),
            "/imu".into(),
            "--parallel".into(),
            "--output".into(),
            path(&theirs_out),
            path(&input),
        ]);
    }
    let outputs = [&ours_out, &theirs_out];
    let times = time_commands_with(&commands, if quick { 3 } else { 5 }, &mut |i| match i {
        0 => remove(&ours_out),
        2 => remove(&theirs_out),
        _ => Ok(()),
    });
    let sizes: Vec<f64> = outputs.iter().map(|p| output_megabytes(p)).collect();
    for p in outputs {
        remove(p)?;
    }
    s.push_str(&format!(
        "\n## `robolog export` to Parquet: {count} `sensor_msgs/Imu` messages (CDR, {:.0} MB)\n\n",
        megabytes(&input)
    ));
    s.push_str("| command | wall (median) | CPU | peak RSS | output |\n|---|---|---|---|---|\n");
    s.push_str(&format!(
        "| `robolog export FILE DIR` | {} | {:.1} MB |\n",
        figures(times[0]),
        sizes[0]
    ));
    s.push_str(&format!(
        "| robolog decoding every message (`robolog-bench bench-decode`) | {} | — |\n",
        figures(times[1])
    ));
    s.push_str(&match &transmcap {
        Some(_) => format!(
            "| `transmcap convert --format parquet --parallel` | {} | {:.1} MB |\n",
            figures(times.get(2).copied().flatten()),
            sizes[1]
        ),
        None => "| transmcap | not measured (ROBOLOG_BENCH_TRANSMCAP unset) | — | — | — |\n".into(),
    });
    let export = times[0];
    if let (Some(ours), Some(theirs)) = (export, times.get(2).copied().flatten()) {
        let ratio = theirs.wall / ours.wall;
        s.push_str(&format!(
            "\nExport against transmcap: {ratio:.2}× as fast in wall time, {:.2}× in CPU time ({} target ≥ 2× wall).\n",
            theirs.cpu / ours.cpu.max(1e-9),
            check(ratio >= 2.0)
        ));
    }
    if let (Some(ours), Some(decode)) = (export, times[1]) {
        let ratio = ours.wall / decode.wall;
        s.push_str(&format!(
            "\nExport against decoding: {ratio:.2}× its wall time, {:.2}× its CPU time ({} target ≤ 2× wall).\n",
            ours.cpu / decode.cpu.max(1e-9),
            check(ratio <= 2.0)
        ));
    }

    eprintln!("bench: sql over a 1 % time range of two logs");
    let (short, long) = sql_counts(quick);
    let window_ns = short as u64 * IMU_PERIOD_NS / 100;
    let mut rows = Vec::new();
    let mut commands = Vec::new();
    for n in [short, long] {
        let log = imu_file(&dir, n, ImuEncoding::Cdr, Compression::Zstd)?;
        let (query, expected) = window_query(n, window_ns);
        check_count(&robolog, &query, &log, expected)?;
        commands.push(vec![
            path(&robolog),
            "sql".into(),
            query.clone(),
            path(&log),
            "--csv".into(),
        ]);
        rows.push((n, log, query, expected));
    }
    let times = time_commands(&commands, if quick { 3 } else { 7 });
    s.push_str(&format!(
        "\n## `robolog sql`: count over a {:.1} s window (1 % of the shorter log)\n\n",
        window_ns as f64 * 1e-9
    ));
    s.push_str("| log | file | messages counted | wall (median) | CPU | peak RSS |\n");
    s.push_str("|---|---|---|---|---|---|\n");
    for ((n, log, _, expected), run) in rows.iter().zip(&times) {
        s.push_str(&format!(
            "| {n} messages, {:.0} s, zstd | {:.1} MB | {expected} | {} |\n",
            *n as f64 * IMU_PERIOD_NS as f64 * 1e-9,
            megabytes(log),
            figures(*run)
        ));
    }
    if let (Some(Some(a)), Some(Some(b))) = (times.first(), times.get(1)) {
        let ratio = b.wall / a.wall;
        s.push_str(&format!(
            "\nThe longer log takes {ratio:.2}× the shorter's wall time, {:.2}× its CPU time ({} target ≤ {SQL_LENGTH_TOLERANCE}× wall).\n",
            b.cpu / a.cpu.max(1e-9),
            check(ratio <= SQL_LENGTH_TOLERANCE)
        ));
    }
    if let Some((_, _, query, _)) = rows.first() {
        s.push_str(&format!("\nQuery (shorter log): `{query}`\n"));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_gives_the_civil_time() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000000000Z");
        assert_eq!(
            rfc3339(1_700_000_000_000_000_000),
            "2023-11-14T22:13:20.000000000Z"
        );
        assert_eq!(
            rfc3339(951_782_400_500_000_000),
            "2000-02-29T00:00:00.500000000Z"
        );
    }

    #[test]
    fn the_window_holds_one_percent_of_the_shorter_log() {
        let window = 100_000 * IMU_PERIOD_NS / 100;
        let (query, expected) = window_query(100_000, window);
        assert_eq!(expected, 1000);
        assert!(
            query.contains("'2023-11-14T22:17:27.500000000Z'"),
            "{query}"
        );
        assert_eq!(window_query(1_000_000, window).1, 1000);
    }
}
