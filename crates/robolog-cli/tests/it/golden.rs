//! Golden files of the `info --json` and `cat --json` documents on real testdata: their
//! keys, key order and values are what scripts rely on, so any change must be deliberate.
//!
//! `ROBOLOG_BLESS=1 cargo test -p robolog-cli --test it golden` rewrites the files under
//! `tests/it/golden/`; review the diff before committing it. Without it, any drift fails.

use std::path::PathBuf;

use crate::support::robolog;

/// (golden file, arguments).
const CASES: &[(&str, &[&str])] = &[
    (
        "info-ref_lz4.bag.json",
        &[
            "info",
            "--json",
            "testdata/bags/generated/ros_comm/ref_lz4.bag",
        ],
    ),
    (
        "info-v12_indexed.bag.json",
        &[
            "info",
            "--json",
            "testdata/bags/generated/ros_comm/v12_indexed.bag",
        ],
    ),
    (
        "info-demo-zstd.mcap.json",
        &["info", "--json", "testdata/samples/demo-zstd.mcap"],
    ),
    (
        "info-demo-zstd-truncated.mcap.json",
        &[
            "info",
            "--json",
            "testdata/samples/demo-zstd-truncated.mcap",
        ],
    ),
    (
        "info-sample.bddf.json",
        &["info", "--json", "testdata/bddf/sample.bddf"],
    ),
    (
        "cat-ref_lz4.bag.jsonl",
        &[
            "cat",
            "--json",
            "--limit",
            "6",
            "testdata/bags/generated/ros_comm/ref_lz4.bag",
        ],
    ),
    (
        "cat-decode-ref_lz4.bag.jsonl",
        &[
            "cat",
            "--json",
            "--decode",
            "--limit",
            "3",
            "testdata/bags/generated/ros_comm/ref_lz4.bag",
        ],
    ),
    (
        "cat-v12_indexed.bag.jsonl",
        &[
            "cat",
            "--json",
            "--limit",
            "3",
            "testdata/bags/generated/ros_comm/v12_indexed.bag",
        ],
    ),
    (
        "cat-demo-zstd.mcap.jsonl",
        &[
            "cat",
            "--json",
            "--limit",
            "6",
            "testdata/samples/demo-zstd.mcap",
        ],
    ),
    (
        "cat-decode-demo-zstd.mcap.jsonl",
        &[
            "cat",
            "--json",
            "--decode",
            "--limit",
            "4",
            "-t",
            "/chatter",
            "-t",
            "/points",
            "testdata/samples/demo-zstd.mcap",
        ],
    ),
    (
        "cat-sample.bddf.jsonl",
        &["cat", "--json", "testdata/bddf/sample.bddf"],
    ),
];

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/golden")
        .join(name)
}

#[test]
fn json_documents_match_their_golden_files() {
    let bless = std::env::var_os("ROBOLOG_BLESS").is_some_and(|v| v == "1");
    let mut drifted = Vec::new();
    for (name, args) in CASES {
        // A damaged input is described all the same, and exits 1.
        let code = if name.contains("truncated") { 1 } else { 0 };
        let actual = robolog(args.iter().copied()).expect(code).stdout;
        // Every line (or the whole document) is valid JSON.
        if name.ends_with(".jsonl") {
            for line in actual.lines() {
                serde_json::from_str::<serde_json::Value>(line).unwrap();
            }
        } else {
            serde_json::from_str::<serde_json::Value>(&actual).unwrap();
        }
        let path = golden_path(name);
        if bless {
            std::fs::write(&path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (ROBOLOG_BLESS=1 writes it)", path.display()));
        if actual != expected {
            drifted.push(format!(
                "{name}: `robolog {}` drifted\n--- expected\n{expected}\n--- actual\n{actual}",
                args.join(" ")
            ));
        }
    }
    assert!(
        drifted.is_empty(),
        "{}\n(ROBOLOG_BLESS=1 rewrites the golden files)",
        drifted.join("\n")
    );
}

/// The golden files themselves hold what the READMEs say, so that blessing cannot pin a
/// wrong value unnoticed.
#[test]
fn golden_files_hold_the_documented_values() {
    if std::env::var_os("ROBOLOG_BLESS").is_some_and(|v| v == "1") {
        // The other test is rewriting them right now; the next plain run checks them.
        return;
    }
    let read = |name: &str| std::fs::read_to_string(golden_path(name)).unwrap();
    let info: serde_json::Value = serde_json::from_str(&read("info-demo-zstd.mcap.json")).unwrap();
    let keys: Vec<&String> = info.as_object().unwrap().keys().collect();
    let mut expected = vec![
        "attachments",
        "channels",
        "chunks",
        "duration",
        "end_time",
        "end_utc",
        "file",
        "file_size",
        "format",
        "index",
        "message_count",
        "metadata",
        "problems",
        "properties",
        "start_time",
        "start_utc",
        "version",
    ];
    expected.sort_unstable();
    assert_eq!(keys, expected);
    assert_eq!(info["message_count"], 300);
    assert_eq!(info["file_size"], 39724);
    let channel_keys: Vec<&String> = info["channels"][0].as_object().unwrap().keys().collect();
    assert_eq!(
        channel_keys,
        [
            "id",
            "message_count",
            "message_encoding",
            "metadata",
            "rate_hz",
            "schema_encoding",
            "schema_name",
            "topic"
        ]
    );
    let info: serde_json::Value = serde_json::from_str(&read("info-ref_lz4.bag.json")).unwrap();
    assert_eq!(info["message_count"], 150);
    assert_eq!(info["end_time"], 1_600_000_000_490_000_002u64);
    let info: serde_json::Value = serde_json::from_str(&read("info-sample.bddf.json")).unwrap();
    assert_eq!(info["message_count"], 14);
    let info: serde_json::Value =
        serde_json::from_str(&read("info-demo-zstd-truncated.mcap.json")).unwrap();
    assert_eq!(info["message_count"], 187);

    let decoded = read("cat-decode-demo-zstd.mcap.jsonl");
    let first: serde_json::Value = serde_json::from_str(decoded.lines().next().unwrap()).unwrap();
    assert_eq!(first["topic"], "/points");
    assert_eq!(first["message"]["label"], "p0");
    let bddf = read("cat-sample.bddf.jsonl");
    assert_eq!(bddf.lines().count(), 14);
}
