//! The upstream MCAP conformance suite (testdata/mcap-conformance): the streamed-reader,
//! indexed-reader and byte-exact writer protocols, each over every applicable file.

use crate::support::conformance;

use std::path::{Path, PathBuf};

use robolog_mcap::{Bytes, LinearReader, ReadOptions, Record};
use serde_json::Value;

fn cases() -> Vec<PathBuf> {
    let files = robolog_testkit::testdata::files_with_extension("mcap-conformance", ".mcap");
    assert_eq!(files.len(), 416, "the suite has 416 files");
    files
}

fn expected(mcap: &Path) -> Value {
    let text = std::fs::read_to_string(mcap.with_extension("json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Streamed-reader protocol: every record in file order, chunks flattened, MessageIndex omitted.
fn stream_json(data: Vec<u8>) -> Result<Value, String> {
    let opts = ReadOptions::default().threads(0);
    let mut reader = LinearReader::with_options(Bytes::from(data), opts);
    let mut records = Vec::new();
    while let Some(record) = reader.next_record() {
        let record = record.map_err(|e| e.to_string())?;
        if let Some(json) = conformance::record_json(&record) {
            records.push(json);
        }
    }
    Ok(serde_json::json!({ "records": records }))
}

/// The same protocol through the streaming reader over `Read`.
fn read_stream_json(data: Vec<u8>) -> Result<Value, String> {
    let mut reader = robolog_mcap::StreamReader::new(&data[..]);
    let mut records = Vec::new();
    while let Some(record) = reader.next_record() {
        let record = record.map_err(|e| e.to_string())?;
        if let Some(json) = conformance::record_json(&record) {
            records.push(json);
        }
    }
    Ok(serde_json::json!({ "records": records }))
}

#[test]
fn streamed_reader_passes_every_case() {
    check_streamed(stream_json);
}

#[test]
fn streaming_reader_over_read_passes_every_case() {
    check_streamed(read_stream_json);
}

fn check_streamed(run: fn(Vec<u8>) -> Result<Value, String>) {
    let mut failures = Vec::new();
    let files = cases();
    for path in &files {
        let want = expected(path);
        match run(std::fs::read(path).unwrap()) {
            Ok(got) if got["records"] == want["records"] => {}
            Ok(got) => failures.push(format!(
                "{}: got {}",
                path.display(),
                serde_json::to_string(&got).unwrap()
            )),
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        files.len(),
        failures[..failures.len().min(5)].join("\n")
    );
}

#[test]
fn writer_is_byte_exact_on_every_non_pad_case() {
    let mut failures = Vec::new();
    let mut count = 0;
    for path in cases() {
        let want = expected(&path);
        if conformance::features(&want).iter().any(|f| f == "pad") {
            continue;
        }
        count += 1;
        let got = conformance::write_from_json(&want);
        let expected_bytes = std::fs::read(&path).unwrap();
        if got != expected_bytes {
            let first = got
                .iter()
                .zip(&expected_bytes)
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(expected_bytes.len()));
            failures.push(format!(
                "{}: differs at byte {first} (ours {} bytes, expected {})",
                path.display(),
                got.len(),
                expected_bytes.len()
            ));
        }
    }
    assert_eq!(count, 208, "the suite has 208 writer cases");
    assert!(
        failures.is_empty(),
        "{} of {count} failed:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}

#[test]
fn our_output_streams_back_identically() {
    // The writer's output, read by our own streamed reader, lists the expected records.
    let path = robolog_testkit::testdata::path(
        "mcap-conformance/TenMessages/TenMessages-ch-chx-mx-rch-rsh-st-sum.mcap",
    );
    let want = expected(&path);
    let got = stream_json(conformance::write_from_json(&want)).unwrap();
    assert_eq!(got["records"], want["records"]);
    let _ = Record::DataEnd(Default::default());
}

/// Indexed-reader protocol: schemas, channels, messages in log-time order, statistics, read
/// through the footer, summary and chunk indexes.
fn indexed_json(data: Vec<u8>) -> Result<Value, String> {
    let opts = ReadOptions::default().threads(0);
    let reader =
        robolog_mcap::McapReader::open_with(Bytes::from(data), opts).map_err(|e| e.to_string())?;
    let summary = reader.summary();
    assert_eq!(summary.source, robolog_mcap::SummarySource::SummarySection);
    let schemas: Vec<Value> = summary
        .schemas
        .values()
        .map(|s| conformance::schema_json(s))
        .collect();
    let channels: Vec<Value> = summary
        .channels
        .values()
        .map(|c| conformance::channel_json(c))
        .collect();
    let mut messages = Vec::new();
    for m in reader.messages().iter().map_err(|e| e.to_string())? {
        let m = m.map_err(|e| e.to_string())?;
        messages.push(conformance::message_json(&m.as_record()));
    }
    let statistics: Vec<Value> = summary
        .statistics
        .iter()
        .map(conformance::statistics_json)
        .collect();
    Ok(serde_json::json!({
        "schemas": schemas, "channels": channels, "messages": messages, "statistics": statistics,
    }))
}

/// The indexed expectation derived from the streamed JSON (spec section 11).
fn indexed_expected(want: &Value) -> Value {
    let records = want["records"].as_array().unwrap();
    let first_by_id = |kind: &str| {
        let mut seen = std::collections::BTreeMap::new();
        for r in records.iter().filter(|r| r["type"] == kind) {
            let id: u64 = r["fields"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f[0] == "id")
                .unwrap()[1]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
            seen.entry(id).or_insert_with(|| r.clone());
        }
        seen.into_values().collect::<Vec<_>>()
    };
    let log_time = |r: &Value| -> u64 {
        r["fields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f[0] == "log_time")
            .unwrap()[1]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    let mut messages: Vec<Value> = records
        .iter()
        .filter(|r| r["type"] == "Message")
        .cloned()
        .collect();
    messages.sort_by_key(|m| log_time(m));
    let statistics: Vec<Value> = records
        .iter()
        .filter(|r| r["type"] == "Statistics")
        .cloned()
        .collect();
    serde_json::json!({
        "schemas": first_by_id("Schema"), "channels": first_by_id("Channel"),
        "messages": messages, "statistics": statistics,
    })
}

/// Reads every case whose features `select` accepts (the case has messages, `ch` and `chx`)
/// with the indexed reader; returns how many were read and what failed.
fn indexed_cases(select: impl Fn(&dyn Fn(&str) -> bool) -> bool) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let mut count = 0;
    for path in cases() {
        let want = expected(&path);
        let features = conformance::features(&want);
        let has = |f: &str| features.iter().any(|x| x == f);
        let has_message = want["records"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["type"] == "Message");
        if !(has_message && has("ch") && has("chx") && select(&has)) {
            continue;
        }
        count += 1;
        let expected_json = indexed_expected(&want);
        match indexed_json(std::fs::read(&path).unwrap()) {
            Ok(got) if got == expected_json => {}
            Ok(got) => failures.push(format!("{}: got {got}", path.display())),
            Err(e) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    (count, failures)
}

#[test]
fn indexed_reader_passes_every_applicable_case() {
    let (count, failures) = indexed_cases(|has| has("rch") && has("rsh"));
    assert_eq!(count, 32, "the suite has 32 indexed-reader cases");
    assert!(
        failures.is_empty(),
        "{} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Files whose summary does not repeat the channels or schemas (no `rch` or no `rsh`) still
/// read through the index: the channels and schemas come from the chunks.
#[test]
fn indexed_reader_finds_channels_only_the_chunks_define() {
    let (count, failures) = indexed_cases(|has| {
        let summarised = has("sum") || has("st") || has("mx") || has("rch") || has("rsh");
        summarised && !(has("rch") && has("rsh"))
    });
    assert!(
        count >= 10,
        "only {count} cases without repeated channels or schemas"
    );
    assert!(
        failures.is_empty(),
        "{} of {count} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
