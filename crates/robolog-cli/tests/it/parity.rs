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
