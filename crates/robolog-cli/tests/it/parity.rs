//! The commands users of the `mcap` CLI and of `ros2 bag` expect (issue 31): `filter` with its
//! presets `sort`, `compress` and `decompress`, the listings, `du`, `get` and `add`, `cat
//! --format csv` and shell completions.

use std::path::Path;

use serde_json::Value;

use crate::support::{piped, robolog};

/// turtlesim, 8647 messages on 9 topics, one bz2 chunk.
const TURTLES: &str = "testdata/bags/upstream/rosbag.js/example-bz2.bag";
/// 300 messages on 3 topics in 10 zstd chunks whose times overlap; one attachment, one
/// metadata record.
const OUT_OF_ORDER: &str = "testdata/samples/demo-out-of-order-zstd.mcap";

fn info(path: &Path) -> Value {
    robolog(["info".as_ref(), "--json".as_ref(), path.as_os_str()])
        .expect(0)
        .json()
}

/// (topic, count) of each channel with messages.
fn counts(info: &Value) -> Vec<(String, u64)> {
    let mut counts: Vec<(String, u64)> = info["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["topic"].as_str().unwrap().to_owned(),
                c["message_count"].as_u64().unwrap(),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    counts.sort();
    counts
}

/// Topic and log time of each message of `path`, in the order stored (read as a stream).
fn stored_order(path: &Path) -> Vec<(String, u64)> {
    let data = std::fs::read(robolog_testkit::testdata::workspace_root().join(path)).unwrap();
    let (code, stdout, stderr) = piped(&["cat", "-", "--json"], &data);
    assert_eq!(code, 0, "{stderr}");
    String::from_utf8(stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .map(|m| {
            (
                m["topic"].as_str().unwrap().to_owned(),
                m["log_time"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn compressions(info: &Value) -> Vec<String> {
    info["chunks"]["by_compression"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["compression"].as_str().unwrap().to_owned())
        .collect()
}

// ------------------------------------------------------------------------------------ filter

#[test]
fn filter_keeps_the_topics_times_and_extras_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("turtle1.bag");
    // Regexes as the `mcap` CLI spells them, a time in seconds, in the input's format.
    robolog([
        "filter".as_ref(),
        TURTLES.as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
        "-y".as_ref(),
        "/turtle1/.*".as_ref(),
        "-n".as_ref(),
        ".*/cmd_vel".as_ref(),
        "--end".as_ref(),
        "1396293900".as_ref(),
    ])
    .expect(0);
    let selected = info(&out);
    assert_eq!(selected["format"], "bag");
    // The same selection read by cat.
    let expected = |topic: &str| {
        robolog(["cat", TURTLES, "--topic", topic, "--end", "1396293900"])
            .expect(0)
            .stdout
            .lines()
            .count() as u64
    };
    let want = vec![
        (
            "/turtle1/color_sensor".to_owned(),
            expected("/turtle1/color_sensor"),
        ),
        ("/turtle1/pose".to_owned(), expected("/turtle1/pose")),
    ];
    assert!(want.iter().all(|(_, n)| *n > 500 && *n < 1351), "{want:?}");
    assert_eq!(counts(&selected), want);

    // Attachments and metadata kept unless dropped.
    let kept = dir.path().join("kept.mcap");
    robolog([
        "filter".as_ref(),
        OUT_OF_ORDER.as_ref(),
        kept.as_os_str(),
        "--topic".as_ref(),
        "/chatter".as_ref(),
    ])
    .expect(0);
    let kept = info(&kept);
    assert_eq!(counts(&kept), vec![("/chatter".to_owned(), 100)]);
    assert_eq!(kept["attachments"].as_array().unwrap().len(), 1);
    assert_eq!(kept["metadata"].as_array().unwrap().len(), 1);
    let dropped = dir.path().join("dropped.mcap");
    robolog([
        "filter".as_ref(),
        OUT_OF_ORDER.as_ref(),
        dropped.as_os_str(),
        "--drop-attachments".as_ref(),
        "--drop-metadata".as_ref(),
    ])
    .expect(0);
    let dropped = info(&dropped);
    assert_eq!(dropped["message_count"], 300);
    assert_eq!(dropped["attachments"].as_array().unwrap().len(), 0);
    assert_eq!(dropped["metadata"].as_array().unwrap().len(), 0);
}

#[test]
fn filter_writes_in_the_order_asked_and_sort_puts_log_time_order_back() {
    let dir = tempfile::tempdir().unwrap();
    let by_time = |list: &[(String, u64)]| list.windows(2).all(|w| w[0].1 <= w[1].1);

    let by_topic = dir.path().join("topic.mcap");
    robolog([
        "filter".as_ref(),
        OUT_OF_ORDER.as_ref(),
        by_topic.as_os_str(),
        "--order".as_ref(),
        "topic".as_ref(),
    ])
    .expect(0);
    let topics = stored_order(&by_topic);
    let mut runs: Vec<&str> = topics.iter().map(|(t, _)| t.as_str()).collect();
    runs.dedup();
    assert_eq!(runs, ["/blob", "/chatter", "/points"]);
    assert!(topics.chunk_by(|a, b| a.0 == b.0).all(by_time));
    assert!(!by_time(&topics));

    // File order keeps what is stored; sort puts log-time order back.
    let file_order = dir.path().join("file.mcap");
    robolog([
        "filter".as_ref(),
        by_topic.as_os_str(),
        file_order.as_os_str(),
        "--order".as_ref(),
        "file".as_ref(),
    ])
    .expect(0);
    assert_eq!(stored_order(&file_order), topics);
    let sorted = dir.path().join("sorted.mcap");
    robolog(["sort".as_ref(), by_topic.as_os_str(), sorted.as_os_str()]).expect(0);
    let mut sorted_order = stored_order(&sorted);
    assert!(by_time(&sorted_order));
    sorted_order.sort();
    let mut expected = topics.clone();
    expected.sort();
    assert_eq!(sorted_order, expected);
}

#[test]
fn compress_and_decompress_change_only_the_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.mcap");
    robolog([
        "decompress".as_ref(),
        OUT_OF_ORDER.as_ref(),
        plain.as_os_str(),
    ])
    .expect(0);
    let plain_info = info(&plain);
    assert_eq!(compressions(&plain_info), ["none"]);
    let packed = dir.path().join("packed.mcap");
    robolog(["compress".as_ref(), plain.as_os_str(), packed.as_os_str()]).expect(0);
    let packed_info = info(&packed);
    assert_eq!(compressions(&packed_info), ["zstd"]);
    // The same messages in the same order, the extras kept.
    let input = stored_order(Path::new(OUT_OF_ORDER));
    assert_eq!(stored_order(&plain), input);
    assert_eq!(stored_order(&packed), input);
    assert_eq!(packed_info["attachments"].as_array().unwrap().len(), 1);
    assert_eq!(packed_info["metadata"].as_array().unwrap().len(), 1);
    // A bag is compressed with what bags have; an explicit choice is kept.
    let bag = dir.path().join("turtles.bag");
    robolog(["compress".as_ref(), TURTLES.as_ref(), bag.as_os_str()]).expect(0);
    assert_eq!(compressions(&info(&bag)), ["lz4"]);
    let lz4 = dir.path().join("lz4.mcap");
    robolog([
        "compress".as_ref(),
        OUT_OF_ORDER.as_ref(),
        lz4.as_os_str(),
        "--compression".as_ref(),
        "lz4".as_ref(),
    ])
    .expect(0);
    assert_eq!(compressions(&info(&lz4)), ["lz4"]);
    let refused = robolog([
        "decompress".as_ref(),
        OUT_OF_ORDER.as_ref(),
        lz4.as_os_str(),
        "--compression".as_ref(),
        "zstd".as_ref(),
    ])
    .expect(2);
    assert!(refused.stderr.contains("compress"), "{}", refused.stderr);
}

// ------------------------------------------------------------------------------------ listings

const DEMO: &str = "testdata/samples/demo-zstd.mcap";

#[test]
fn list_shows_each_part_of_a_log_from_its_index() {
    let channels = robolog(["list", "channels", DEMO, "--json"])
        .expect(0)
        .json();
    let topics: Vec<(&str, u64, Option<&str>)> = channels
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["topic"].as_str().unwrap(),
                c["message_count"].as_u64().unwrap(),
                c["schema_name"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        topics,
        [
            ("/points", 100, Some("demo.Point")),
            ("/chatter", 100, Some("std_msgs/String")),
            ("/blob", 100, None)
        ]
    );
    let schemas = robolog(["list", "schemas", DEMO]).expect(0).stdout;
    let lines: Vec<&str> = schemas.lines().collect();
    assert_eq!(lines.len(), 3, "{schemas}");
    assert!(lines[2].contains("std_msgs/String") && lines[2].ends_with("/chatter"));

    // Chunks: the same totals as info's.
    let chunks = robolog(["list", "chunks", DEMO, "--json"]).expect(0).json();
    let chunks = chunks.as_array().unwrap();
    let info = robolog(["info", DEMO, "--json"]).expect(0).json();
    assert_eq!(
        chunks.len() as u64,
        info["chunks"]["count"].as_u64().unwrap()
    );
    let stored: u64 = chunks
        .iter()
        .map(|c| c["compressed_bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(stored, info["chunks"]["compressed_bytes"].as_u64().unwrap());
    assert!(
        chunks
            .windows(2)
            .all(|w| w[0]["offset"].as_u64() < w[1]["offset"].as_u64())
    );
    // A bag's chunk knows its message count.
    let bag = robolog(["list", "chunks", TURTLES, "--json"])
        .expect(0)
        .json();
    assert_eq!(bag[0]["message_count"], 8647);
    assert_eq!(bag[0]["compression"], "bz2");

    let attachments = robolog(["list", "attachments", DEMO]).expect(0).stdout;
    assert!(
        attachments.contains("calibration.json  application/json"),
        "{attachments}"
    );
    let metadata = robolog(["list", "metadata", DEMO]).expect(0).stdout;
    assert_eq!(
        metadata,
        "run_info:\n  git_sha = 0123abcd\n  robot_id = r2\n  site = lab\n"
    );

    // Where a format has no such thing, it says so.
    let none = robolog(["list", "attachments", TURTLES]).expect(1);
    assert!(
        none.stderr.contains("a ROS bag holds no attachments"),
        "{}",
        none.stderr
    );
    let none = robolog(["list", "chunks", "testdata/bddf/sample.bddf"]).expect(1);
    assert!(
        none.stderr.contains("a BDDF file has no chunks"),
        "{}",
        none.stderr
    );
}

#[test]
fn info_indents_a_metadata_value_of_several_lines() {
    // rosbag2 stores its metadata.yaml as one metadata value.
    let info = robolog(["info", "testdata/rosbag2/files/topics_and_services.mcap"])
        .expect(0)
        .stdout;
    assert!(
        info.contains(
            "    serialized_metadata =\n        version: 8\n        storage_identifier: mcap\n"
        ),
        "{info}"
    );
}

#[test]
fn du_adds_up_to_the_file_and_to_the_payload() {
    let du = robolog(["du", DEMO, "--json"]).expect(0).json();
    let size = std::fs::metadata(robolog_testkit::testdata::workspace_root().join(DEMO))
        .unwrap()
        .len();
    assert_eq!(du["file_size"], size);
    let records = du["records"].as_array().unwrap();
    let total: u64 = records.iter().map(|r| r["bytes"].as_u64().unwrap()).sum();
    assert_eq!(total, size);
    let kind = |name: &str| {
        records
            .iter()
            .find(|r| r["kind"] == name)
            .map(|r| r["count"].as_u64().unwrap())
    };
    assert_eq!(kind("Chunk"), Some(10));
    assert_eq!(kind("MessageIndex"), Some(30));
    assert_eq!(kind("Footer"), Some(1));
    // Payload by topic: what cat prints.
    let payload = |topic: &str| -> u64 {
        robolog(["cat", DEMO, "--json", "--topic", topic])
            .expect(0)
            .json_lines()
            .iter()
            .map(|m| m["size"].as_u64().unwrap())
            .sum()
    };
    for t in du["topics"].as_array().unwrap() {
        let topic = t["topic"].as_str().unwrap();
        assert_eq!(t["bytes"].as_u64().unwrap(), payload(topic), "{topic}");
        assert_eq!(t["messages"], 100);
    }
    assert_eq!(du["chunks"][0]["compression"], "zstd");
    // A cut file: what is left after the last whole record is counted as such, exit 1.
    let cut = robolog(["du", "testdata/samples/demo-zstd-truncated.mcap", "--json"]).expect(1);
    let cut = cut.json();
    let records = cut["records"].as_array().unwrap();
    let total: u64 = records.iter().map(|r| r["bytes"].as_u64().unwrap()).sum();
    assert_eq!(total, 23834);
    assert!(records.iter().any(|r| r["kind"] == "cut or unreadable"));
    // Other formats: topics and chunks.
    let bag = robolog(["du", TURTLES]).expect(0).stdout;
    assert!(bag.contains("bz2"), "{bag}");
    assert!(bag.contains("/tf "), "{bag}");
}

// ---------------------------------------------------------------------------------- get, add

#[test]
fn add_then_get_round_trips_attachments_and_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.mcap");
    std::fs::copy(robolog_testkit::testdata::workspace_root().join(DEMO), &log).unwrap();
    let note = dir.path().join("notes.txt");
    std::fs::write(&note, b"calibrated on site\n").unwrap();
    let added = robolog([
        "add".as_ref(),
        "attachment".as_ref(),
        log.as_os_str(),
        "--file".as_ref(),
        note.as_os_str(),
        "--media-type".as_ref(),
        "text/plain".as_ref(),
        "--log-time".as_ref(),
        "1700000001.5".as_ref(),
    ])
    .expect(0);
    assert!(
        added.stdout.contains("added attachment \"notes.txt\""),
        "{}",
        added.stdout
    );
    robolog([
        "add".as_ref(),
        "metadata".as_ref(),
        log.as_os_str(),
        "-n".as_ref(),
        "site".as_ref(),
        "-k".as_ref(),
        "city=Zürich".as_ref(),
        "-k".as_ref(),
        "expr=a=b".as_ref(),
    ])
    .expect(0);
    // Nothing else changed, nothing left behind.
    let info = info(&log);
    assert_eq!(info["message_count"], 300);
    assert_eq!(info["attachments"].as_array().unwrap().len(), 2);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    robolog(["check".as_ref(), log.as_os_str()]).expect(0);

    let got = robolog([
        "get".as_ref(),
        "attachment".as_ref(),
        log.as_os_str(),
        "--name".as_ref(),
        "notes.txt".as_ref(),
    ])
    .expect(0);
    assert_eq!(got.stdout, "calibrated on site\n");
    let listed = robolog([
        "list".as_ref(),
        "attachments".as_ref(),
        log.as_os_str(),
        "--json".as_ref(),
    ])
    .expect(0)
    .json();
    assert_eq!(listed[1]["name"], "notes.txt");
    assert_eq!(listed[1]["log_time_ns"], 1_700_000_001_500_000_000_u64);
    let copy = dir.path().join("copy.json");
    robolog([
        "get".as_ref(),
        "attachment".as_ref(),
        log.as_os_str(),
        "-n".as_ref(),
        "calibration.json".as_ref(),
        "-o".as_ref(),
        copy.as_os_str(),
    ])
    .expect(0);
    assert_eq!(
        std::fs::read_to_string(&copy).unwrap(),
        r#"{"fx": 500.0, "fy": 500.0, "cx": 320, "cy": 240}"#
    );
    let site = robolog([
        "get".as_ref(),
        "metadata".as_ref(),
        log.as_os_str(),
        "-n".as_ref(),
        "site".as_ref(),
    ])
    .expect(0);
    assert_eq!(site.stdout, "{\"city\":\"Zürich\",\"expr\":\"a=b\"}\n");
    let missing = robolog([
        "get".as_ref(),
        "metadata".as_ref(),
        log.as_os_str(),
        "-n".as_ref(),
        "nope".as_ref(),
    ])
    .expect(1);
    assert!(missing.stderr.contains("no metadata record named \"nope\""));

    // A bag holds no attachments: refused, the bag untouched.
    let bag = dir.path().join("t.bag");
    std::fs::copy(
        robolog_testkit::testdata::workspace_root().join(TURTLES),
        &bag,
    )
    .unwrap();
    let before = std::fs::read(&bag).unwrap();
    let refused = robolog([
        "add".as_ref(),
        "attachment".as_ref(),
        bag.as_os_str(),
        "-f".as_ref(),
        note.as_os_str(),
    ])
    .expect(1);
    assert!(
        refused.stderr.contains("holds no attachments"),
        "{}",
        refused.stderr
    );
    assert_eq!(std::fs::read(&bag).unwrap(), before);
}

#[test]
fn add_metadata_to_a_bddf_file_becomes_annotations() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.bddf");
    std::fs::copy(
        robolog_testkit::testdata::workspace_root().join("testdata/bddf/sample.bddf"),
        &log,
    )
    .unwrap();
    robolog([
        "add".as_ref(),
        "metadata".as_ref(),
        log.as_os_str(),
        "-n".as_ref(),
        "run".as_ref(),
        "-k".as_ref(),
        "id=7".as_ref(),
    ])
    .expect(0);
    let listed = robolog(["list".as_ref(), "metadata".as_ref(), log.as_os_str()])
        .expect(0)
        .stdout;
    assert!(listed.contains("  run:id = 7\n"), "{listed}");
    assert!(
        listed.contains("  bosdyn:robot-serial-number = spot-BD-0001\n"),
        "{listed}"
    );
}

// ------------------------------------------------------------------------------- completions

#[test]
fn completions_know_every_command() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = robolog(["completions", shell]).expect(0).stdout;
        for command in ["filter", "decompress", "attachments", "completions"] {
            assert!(script.contains(command), "{shell} lacks {command}");
        }
    }
    let bash = robolog(["completions", "bash"]).expect(0).stdout;
    assert!(bash.contains("complete -F _robolog"), "{bash}");
    robolog(["completions", "tcsh"]).expect(2);
}

// ------------------------------------------------------------------------------------- csv

#[test]
fn cat_csv_prints_one_topic_with_flattened_fields_in_definition_order() {
    let csv = robolog([
        "cat",
        TURTLES,
        "--format",
        "csv",
        "--topic",
        "/turtle1/pose",
    ])
    .expect(0)
    .stdout;
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("log_time,publish_time,x,y,theta,linear_velocity,angular_velocity")
    );
    // The same values as the decoded JSON.
    let json = robolog([
        "cat",
        TURTLES,
        "--json",
        "--decode",
        "--topic",
        "/turtle1/pose",
    ])
    .expect(0)
    .json_lines();
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 1344);
    assert_eq!(rows.len(), json.len());
    for (row, message) in rows.iter().zip(&json).step_by(97) {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells[0], message["log_time"].to_string());
        assert_eq!(cells[1], "");
        for (cell, field) in cells[2..].iter().zip(["x", "y", "theta"]) {
            let value: f64 = cell.parse().unwrap();
            assert_eq!(
                value,
                message["message"][field].as_f64().unwrap(),
                "{field}"
            );
        }
    }
    // Nested messages and arrays become dotted names.
    let tf = robolog([
        "cat", TURTLES, "--format", "csv", "-t", "/tf", "--limit", "1",
    ])
    .expect(0)
    .stdout;
    let header = tf.lines().next().unwrap();
    assert!(
        header.starts_with(
            "log_time,publish_time,transforms.0.header.seq,transforms.0.header.stamp.sec,"
        ),
        "{header}"
    );
    assert!(
        header.ends_with(",transforms.0.transform.rotation.w"),
        "{header}"
    );
    // A text cell with a comma is quoted.
    let talker = robolog([
        "cat",
        "testdata/rosbag2/mcap-talker",
        "--format",
        "csv",
        "-t",
        "/rosout",
        "--limit",
        "1",
    ])
    .expect(0)
    .stdout;
    assert!(
        talker.contains(",\"Publishing: 'Hello, world! 0'\","),
        "{talker}"
    );
}

#[test]
fn cat_csv_of_several_topics_is_a_usage_error_of_cat() {
    let refused = robolog(["cat", TURTLES, "--format", "csv", "--topic", "/turtle1/*"]).expect(2);
    assert!(
        refused
            .stderr
            .contains("/turtle1/cmd_vel, /turtle1/color_sensor, /turtle1/pose"),
        "{}",
        refused.stderr
    );
    // The usage shown is the command's, not the top level's.
    assert!(
        refused.stderr.contains("Usage: robolog cat "),
        "{}",
        refused.stderr
    );
    assert!(refused.stdout.is_empty());
}
