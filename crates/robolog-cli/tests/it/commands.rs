//! Every command on every format, through the built binary. Expected values come from the
//! testdata READMEs (and the generator scripts they describe), not from our own output.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use crate::support::{assert_error_line, command, robolog, robolog_stdin};
use serde_json::{Value, json};

const BAG_LZ4: &str = "testdata/bags/generated/ros_comm/ref_lz4.bag";
const BAG_BZ2_EXAMPLE: &str = "testdata/bags/upstream/rosbag.js/example-bz2.bag";
const BAG_V12: &str = "testdata/bags/generated/ros_comm/v12_indexed.bag";
const BAG_V12_UNINDEXED: &str = "testdata/bags/generated/ros_comm/v12_unindexed.bag";
const BAG_KILLED: &str = "testdata/bags/generated/ros_comm/v20_killed.bag";
const MCAP: &str = "testdata/samples/demo-zstd.mcap";
const MCAP_CUT: &str = "testdata/samples/demo-zstd-truncated.mcap";
const BDDF: &str = "testdata/bddf/sample.bddf";
const BDDF_CUT: &str = "testdata/bddf/sample-truncated.bddf";
const BDDF_BITFLIP: &str = "testdata/bddf/sample-bitflip.bddf";

/// make_bags.py: 100 Hz from t = 1600000000 s; /imu at +1 ns, /custom at +2 ns.
const BAG_T0: u64 = 1_600_000_000_000_000_000;
/// generate_samples.py: 100 Hz from 1700000000 s, round robin /points, /chatter, /blob.
const MCAP_T0: u64 = 1_700_000_000_000_000_000;

fn run_stdout_first_line(file: &str) -> String {
    let run = robolog(["cat", file, "--json", "--limit", "1"]).expect(0);
    run.stdout.lines().next().unwrap().to_owned()
}

fn channel_counts(info: &Value) -> Vec<(String, u64)> {
    info["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["topic"].as_str().unwrap().to_owned(),
                c["message_count"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, u64)]) -> Vec<(String, u64)> {
    list.iter().map(|(t, n)| ((*t).to_owned(), *n)).collect()
}

// ---------------------------------------------------------------------------------------- info

#[test]
fn info_bag_2_0() {
    let info = robolog(["info", "--json", BAG_LZ4]).expect(0).json();
    assert_eq!(info["format"], "bag");
    assert_eq!(info["version"], "2.0");
    assert_eq!(info["file_size"], 21875);
    assert_eq!(info["message_count"], 150);
    assert_eq!(info["start_time"], BAG_T0);
    // The last /custom message: i = 49, + 2 ns.
    assert_eq!(info["end_time"], BAG_T0 + 490_000_002);
    assert_eq!(info["start_utc"], "2020-09-13T12:26:40.000000000Z");
    assert_eq!(info["chunks"]["count"], 9);
    assert_eq!(info["chunks"]["by_compression"][0]["compression"], "lz4");
    assert_eq!(
        channel_counts(&info),
        pairs(&[("/chatter", 50), ("/imu", 50), ("/custom", 50)])
    );
    assert_eq!(info["channels"][1]["schema_name"], "sensor_msgs/Imu");
    assert_eq!(
        info["channels"][0]["metadata"]["md5sum"],
        "992ce8a1687cec8c8bd883ec73ca41d1"
    );
    assert_eq!(info["index"], json!({"source": "index"}));

    let text = robolog(["info", BAG_LZ4]).expect(0).stdout;
    assert!(text.contains("format:   ROS bag 2.0\n"), "{text}");
    assert!(text.contains("messages: 150\n"), "{text}");
    assert!(
        text.contains("2020-09-13T12:26:40.490000002Z (1600000000490000002 ns)"),
        "{text}"
    );
    assert!(text.contains("chunks:   9 (9 lz4)"), "{text}");
    assert!(text.contains("/imu      sensor_msgs/Imu"), "{text}");
}

#[test]
fn info_bag_upstream_bz2() {
    let info = robolog(["info", "--json", BAG_BZ2_EXAMPLE])
        .expect(0)
        .json();
    assert_eq!(info["message_count"], 8647);
    assert_eq!(info["chunks"]["count"], 1);
    assert_eq!(info["chunks"]["by_compression"][0]["compression"], "bz2");
    let mut counts = channel_counts(&info);
    counts.sort();
    assert_eq!(
        counts,
        pairs(&[
            ("/rosout", 10),
            ("/tf", 2688),
            ("/tf_static", 1),
            ("/turtle1/cmd_vel", 357),
            ("/turtle1/color_sensor", 1351),
            ("/turtle1/pose", 1344),
            ("/turtle2/cmd_vel", 208),
            ("/turtle2/color_sensor", 1344),
            ("/turtle2/pose", 1344),
        ])
    );
}

#[test]
fn info_bag_1_2() {
    let info = robolog(["info", "--json", BAG_V12]).expect(0).json();
    assert_eq!(info["format"], "bag");
    assert_eq!(info["version"], "1.2");
    assert_eq!(info["message_count"], 150);
    assert_eq!(info["start_time"], BAG_T0);
    assert_eq!(info["end_time"], BAG_T0 + 490_000_002);
    assert_eq!(
        channel_counts(&info),
        pairs(&[("/chatter", 50), ("/imu", 50), ("/custom", 50)])
    );
}

#[test]
fn info_mcap() {
    let info = robolog(["info", "--json", MCAP]).expect(0).json();
    assert_eq!(info["format"], "mcap");
    assert_eq!(info["file_size"], 39724);
    assert_eq!(info["message_count"], 300);
    assert_eq!(info["start_time"], MCAP_T0);
    assert_eq!(info["end_time"], MCAP_T0 + 2_990_000_000);
    assert_eq!(info["duration"], 2_990_000_000u64);
    assert_eq!(info["properties"]["library"], "mcap-samples-generator");
    assert_eq!(info["chunks"]["count"], 10);
    assert_eq!(info["chunks"]["by_compression"][0]["compression"], "zstd");
    assert_eq!(
        channel_counts(&info),
        pairs(&[("/points", 100), ("/chatter", 100), ("/blob", 100)])
    );
    let chatter = &info["channels"][1];
    assert_eq!(chatter["id"], 2);
    assert_eq!(chatter["schema_name"], "std_msgs/String");
    assert_eq!(chatter["schema_encoding"], "ros1msg");
    assert_eq!(chatter["message_encoding"], "ros1");
    // 100 messages over 2.99 s.
    assert_eq!(chatter["rate_hz"], 33.445);
    assert_eq!(info["channels"][2]["schema_name"], Value::Null);
    assert_eq!(info["attachments"][0]["name"], "calibration.json");
    assert_eq!(info["attachments"][0]["media_type"], "application/json");
    assert_eq!(info["metadata"][0]["name"], "run_info");
    assert_eq!(
        info["metadata"][0]["entries"],
        json!({"robot_id": "r2", "git_sha": "0123abcd", "site": "lab"})
    );

    let text = robolog(["info", MCAP]).expect(0).stdout;
    assert!(text.contains("chunks:   10 (10 zstd)"), "{text}");
    assert!(
        text.contains("calibration.json  application/json"),
        "{text}"
    );
    assert!(text.contains("    robot_id = r2\n"), "{text}");
}

#[test]
fn info_mcap_cut_is_read_by_a_scan() {
    // Described from what is intact; the damage makes the exit status 1.
    let run = robolog(["info", "--json", MCAP_CUT]).expect(1);
    let info = run.json();
    // testdata/samples/README.md: 187 messages before the cut.
    assert_eq!(info["message_count"], 187);
    assert_eq!(info["index"]["source"], "scan");
    assert!(!info["problems"].as_array().unwrap().is_empty());
}

#[test]
fn info_bddf() {
    let info = robolog(["info", "--json", BDDF]).expect(0).json();
    assert_eq!(info["format"], "bddf");
    assert_eq!(info["version"], "1.0.0");
    assert_eq!(info["file_size"], 2561);
    // sample.txt: 3 + 1 + 2 + 3 + 3 + 1 + 1 blocks.
    assert_eq!(info["message_count"], 14);
    assert_eq!(info["start_time"], MCAP_T0);
    assert_eq!(info["end_time"], MCAP_T0 + 200_000_002);
    assert_eq!(
        channel_counts(&info),
        pairs(&[
            ("bosdyn:channel:bosdyn:channel=robot-id-requests", 3),
            ("bosdyn:channel:example:var=battery.voltage", 1),
            ("bosdyn:channel:example:var=motor.count", 2),
            ("example:raw:example:name=text-log", 3),
            ("bosdyn:signal:example:var=accel.xyz", 3),
            (
                "bosdyn:grpc:requests:bosdyn:grpc:service=robot-id,bosdyn:message-type=bosdyn.api.RobotIdRequest",
                1
            ),
            (
                "bosdyn:grpc:responses:bosdyn:grpc:service=robot-id,bosdyn:message-type=bosdyn.api.RobotIdResponse",
                1
            ),
        ])
    );
    assert_eq!(
        info["channels"][0]["schema_name"],
        "bosdyn.api.RobotIdRequest"
    );
    assert_eq!(info["channels"][4]["schema_name"], "float32[3]");
    assert_eq!(
        info["metadata"][0]["entries"]["bosdyn:robot-serial-number"],
        "spot-BD-0001"
    );
}

// ----------------------------------------------------------------------------------------- cat

/// ROS 2 recordings decode like ROS 1 ones; service events from the `.srv` rosbag2 stores.
#[test]
fn cat_ros2_decoded() {
    let run = robolog([
        "cat",
        "testdata/rosbag2/mcap-service_events/bag_with_topics_and_service_events.mcap",
        "--json",
        "--decode",
    ])
    .expect(0);
    let lines = run.json_lines();
    assert_eq!(lines.len(), 10);
    let events: Vec<&Value> = lines
        .iter()
        .filter(|l| l["schema_name"] == "test_msgs/srv/BasicTypes_Event")
        .collect();
    assert_eq!(events.len(), 8);
    assert_eq!(events[0]["message_encoding"], "cdr");
    assert_eq!(events[0]["message"]["info"]["event_type"], 0);
    assert_eq!(events[0]["message"]["request"][0]["string_value"], "");
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

/// A stored definition that does not match the data (this rosbag2 test bag stores
/// `uint8 level` for `rcl_interfaces/msg/Log`): the messages still print, and one warning per
/// topic says what decoding tolerated.
#[test]
fn cat_warns_once_per_topic_about_a_definition_that_does_not_fit() {
    let run = robolog([
        "cat",
        "--decode",
        "testdata/rosbag2/sqlite3-talker",
        "--limit",
        "6",
    ])
    .expect(0);
    assert_eq!(run.stdout.lines().count(), 6);
    assert!(
        run.stdout
            .lines()
            .next()
            .unwrap()
            .ends_with(r#"{"level":251}"#)
    );
    assert_eq!(
        run.stderr,
        "warning: testdata/rosbag2/sqlite3-talker: /rosout: the message at log time \
         1585866235112411371 decoded, but 171 trailing bytes after the message, from offset 5; \
         the definition may not match the data (the topic's other messages are not reported)\n"
    );
}

#[test]
fn cat_bag_decoded_with_topic_and_rfc3339_window() {
    // [t0 + 100 ms, t0 + 200 ms): /chatter messages 10..19.
    let run = robolog([
        "cat",
        BAG_LZ4,
        "--topic",
        "/chatter",
        "--start",
        "2020-09-13T12:26:40.1Z",
        "--end",
        "1600000000200000000",
        "--json",
        "--decode",
    ])
    .expect(0);
    let lines = run.json_lines();
    assert_eq!(lines.len(), 10);
    for (k, line) in lines.iter().enumerate() {
        let i = 10 + k as u64;
        assert_eq!(line["topic"], "/chatter");
        assert_eq!(line["log_time"], BAG_T0 + i * 10_000_000);
        assert_eq!(line["publish_time"], Value::Null);
        assert_eq!(line["sequence"], Value::Null);
        assert_eq!(line["schema_name"], "std_msgs/String");
        assert_eq!(line["message_encoding"], "ros1");
        assert_eq!(line["message"], json!({ "data": format!("hello {i}") }));
        // A uint32 length and the characters.
        assert_eq!(line["size"], 4 + format!("hello {i}").len());
        assert!(line.get("data_base64").is_none());
    }
}

#[test]
fn cat_bag_imu_decoded_values() {
    let lines = robolog([
        "cat", BAG_LZ4, "-t", "/imu", "--json", "--decode", "--limit", "2",
    ])
    .expect(0)
    .json_lines();
    assert_eq!(lines.len(), 2);
    let imu = &lines[1]["message"];
    assert_eq!(lines[1]["log_time"], BAG_T0 + 10_000_001);
    assert_eq!(imu["header"]["seq"], 1);
    assert_eq!(imu["header"]["frame_id"], "imu_link");
    assert_eq!(imu["linear_acceleration"]["z"], 9.81);
    assert_eq!(imu["angular_velocity"]["x"], 0.1);
    assert_eq!(
        imu["orientation_covariance"],
        json!([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    );
}

#[test]
fn cat_bag_1_2_text_lines() {
    let run = robolog(["cat", BAG_V12, "--limit", "3"]).expect(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines[0],
        "2020-09-13T12:26:40.000000000Z  /chatter  std_msgs/String   11 B"
    );
    assert_eq!(
        lines[1],
        "2020-09-13T12:26:40.000000001Z  /imu      sensor_msgs/Imu   320 B"
    );
    assert!(lines[2].starts_with("2020-09-13T12:26:40.000000002Z  /custom   test_msgs/Custom  "));
    assert_eq!(
        robolog(["cat", BAG_V12]).expect(0).stdout.lines().count(),
        150
    );
}

#[test]
fn cat_mcap_json_fields() {
    let lines = robolog(["cat", MCAP, "--json", "--limit", "3"])
        .expect(0)
        .json_lines();
    assert_eq!(lines.len(), 3);
    let topics: Vec<&str> = lines.iter().map(|l| l["topic"].as_str().unwrap()).collect();
    assert_eq!(topics, ["/points", "/chatter", "/blob"]);
    for (i, line) in lines.iter().enumerate() {
        let t = MCAP_T0 + i as u64 * 10_000_000;
        assert_eq!(line["log_time"], t);
        assert_eq!(line["publish_time"], t - 1000);
        assert_eq!(line["sequence"], 0);
    }
    // The keys, in the documented order.
    let first = run_stdout_first_line(MCAP);
    let keys = [
        "topic",
        "log_time",
        "publish_time",
        "sequence",
        "schema_name",
        "message_encoding",
        "size",
        "data_base64",
    ];
    let positions: Vec<usize> = keys
        .iter()
        .map(|k| {
            first
                .find(&format!("\"{k}\":"))
                .unwrap_or_else(|| panic!("{k} in {first}"))
        })
        .collect();
    assert!(positions.is_sorted(), "{first}");
    assert_eq!(lines[0].as_object().unwrap().len(), keys.len());
    // ros1_string("hello world 1"): a uint32 length 13, then the text.
    assert_eq!(lines[1]["data_base64"], "DQAAAGhlbGxvIHdvcmxkIDE=");
    assert_eq!(lines[1]["size"], 17);
    assert_eq!(lines[2]["schema_name"], Value::Null);
    assert_eq!(lines[2]["message_encoding"], "application/octet-stream");

    let decoded = robolog(["cat", MCAP, "--topic", "/chatter", "--json", "--decode"])
        .expect(0)
        .json_lines();
    assert_eq!(decoded.len(), 100);
    for (k, line) in decoded.iter().enumerate() {
        let i = 3 * k as u64 + 1;
        assert_eq!(
            line["message"],
            json!({ "data": format!("hello world {i}") })
        );
        assert_eq!(line["sequence"], k as u64);
        assert_eq!(line["log_time"], MCAP_T0 + i * 10_000_000);
    }
    // JSON messages pass through as they are.
    let points = robolog([
        "cat", MCAP, "-t", "/points", "--json", "--decode", "--limit", "1",
    ])
    .expect(0)
    .json_lines();
    assert_eq!(points[0]["message"]["seq"], 0);
    assert_eq!(points[0]["message"]["label"], "p0");
}

#[test]
fn cat_mcap_from_stdin() {
    let input = robolog_testkit::testdata::workspace_root().join(MCAP);
    let run = robolog_stdin(["cat", "-", "--topic", "/chatter", "--json"], &input);
    let run = run.expect(0);
    let lines = run.json_lines();
    assert_eq!(lines.len(), 100);
    assert_eq!(lines[0]["log_time"], MCAP_T0 + 10_000_000);
    let text = robolog_stdin(["cat", "-", "--limit", "4"], &input).expect(0);
    let lines: Vec<&str> = text.stdout.lines().collect();
    assert_eq!(
        lines[3],
        "2023-11-14T22:13:20.030000000Z  /points   demo.Point       38 B"
    );
}

#[test]
fn cat_bddf() {
    let lines = robolog([
        "cat",
        BDDF,
        "--topic",
        "bosdyn:channel:bosdyn:channel=robot-id-requests",
        "--json",
    ])
    .expect(0)
    .json_lines();
    let times: Vec<u64> = lines
        .iter()
        .map(|l| l["log_time"].as_u64().unwrap())
        .collect();
    // sample.txt, series 0.
    assert_eq!(
        times,
        [MCAP_T0, MCAP_T0 + 100_000_000, MCAP_T0 + 200_000_000]
    );
    let sizes: Vec<u64> = lines.iter().map(|l| l["size"].as_u64().unwrap()).collect();
    assert_eq!(sizes, [20, 25, 25]);
    assert_eq!(lines[0]["message_encoding"], "protobuf");
    assert_eq!(lines[0]["schema_name"], "bosdyn.api.RobotIdRequest");

    // The text-log series by glob, and its bytes.
    let text = robolog(["cat", BDDF, "--topic", "example:raw:*", "--json"])
        .expect(0)
        .json_lines();
    assert_eq!(text.len(), 3);
    // base64 of "log line 0".
    assert_eq!(text[0]["data_base64"], "bG9nIGxpbmUgMA==");
    assert_eq!(text[0]["log_time"], MCAP_T0 + 1);
    assert_eq!(robolog(["cat", BDDF]).expect(0).stdout.lines().count(), 14);
}

#[test]
fn cat_decode_refuses_undecodable_topics_up_front() {
    let run = robolog(["cat", MCAP, "--decode"]).expect(1);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let line = assert_error_line(&run.stderr, MCAP, None);
    assert!(line.contains("/blob"), "{line}");
    assert!(line.contains("--topic"), "{line}");
}

#[test]
fn cat_closed_pipe_exits_quietly() {
    // 8647 lines are far more than a pipe buffer holds: robolog is still writing when the
    // reader goes away.
    let mut child = command(["cat", BAG_BZ2_EXAMPLE])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    assert!(first.contains("/"), "{first}");
    drop(reader);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn cat_unmatched_topic_warns() {
    let run = robolog(["cat", BAG_LZ4, "--topic", "/nope"]).expect(0);
    assert!(run.stdout.is_empty());
    assert!(
        run.stderr
            .contains("warning: topic pattern /nope matches no topic in testdata/"),
        "{}",
        run.stderr
    );
}

// ------------------------------------------------------------------------------------- convert

fn info_of(path: &std::path::Path) -> Value {
    robolog(["info".as_ref(), "--json".as_ref(), path.as_os_str()])
        .expect(0)
        .json()
}

fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn convert_bag_to_mcap_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let mcap = dir.path().join("out.mcap");
    let run = robolog(["convert".as_ref(), BAG_LZ4.as_ref(), mcap.as_os_str()]).expect(0);
    assert!(run.stdout.contains("150 messages"), "{}", run.stdout);
    // No progress bar when standard error is not a terminal, and nothing to warn about.
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    let info = info_of(&mcap);
    assert_eq!(info["format"], "mcap");
    assert_eq!(info["message_count"], 150);
    assert_eq!(info["properties"]["profile"], "ros1");
    assert_eq!(info["start_time"], BAG_T0);
    assert_eq!(info["end_time"], BAG_T0 + 490_000_002);
    assert_eq!(
        channel_counts(&info),
        pairs(&[("/chatter", 50), ("/imu", 50), ("/custom", 50)])
    );
    // MCAP's default chunk compression.
    assert_eq!(info["chunks"]["by_compression"][0]["compression"], "zstd");

    let bag = dir.path().join("back.bag");
    robolog([
        "convert".as_ref(),
        mcap.as_os_str(),
        bag.as_os_str(),
        "--compression".as_ref(),
        "bz2".as_ref(),
        "--chunk-size".as_ref(),
        "8K".as_ref(),
    ])
    .expect(0);
    let info = info_of(&bag);
    assert_eq!(info["format"], "bag");
    assert_eq!(info["version"], "2.0");
    assert_eq!(info["message_count"], 150);
    assert_eq!(info["chunks"]["by_compression"][0]["compression"], "bz2");
    // Same decoded content as the source.
    let a = robolog(["cat", BAG_LZ4, "--json", "--decode"])
        .expect(0)
        .stdout;
    let b = robolog([
        "cat".as_ref(),
        bag.as_os_str(),
        "--json".as_ref(),
        "--decode".as_ref(),
    ])
    .expect(0)
    .stdout;
    assert_eq!(a, b);
    assert_eq!(names_in(dir.path()), ["back.bag", "out.mcap"]);
}

#[test]
fn convert_mcap_to_bag_with_selection_and_format_flag() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("chatter.log");
    robolog([
        "convert".as_ref(),
        MCAP.as_ref(),
        out.as_os_str(),
        "--format".as_ref(),
        "bag".as_ref(),
        "--topic".as_ref(),
        "/chatter".as_ref(),
        "--start".as_ref(),
        "2023-11-14T22:13:21Z".as_ref(),
    ])
    .expect(0);
    let info = info_of(&out);
    assert_eq!(info["format"], "bag");
    // /chatter is i = 3k + 1; from 1 s on: i = 100, 103, …, 298 → 67 messages.
    assert_eq!(channel_counts(&info), pairs(&[("/chatter", 67)]));
    assert_eq!(info["start_time"], MCAP_T0 + 1_000_000_000);
}

#[test]
fn convert_bddf_to_mcap_to_bddf() {
    let dir = tempfile::tempdir().unwrap();
    let mcap = dir.path().join("s.mcap");
    robolog([
        "convert".as_ref(),
        BDDF.as_ref(),
        mcap.as_os_str(),
        "--compression".as_ref(),
        "lz4".as_ref(),
    ])
    .expect(0);
    let info = info_of(&mcap);
    assert_eq!(info["message_count"], 14);
    assert_eq!(info["chunks"]["by_compression"][0]["compression"], "lz4");
    let bddf = dir.path().join("s.bddf");
    robolog(["convert".as_ref(), mcap.as_os_str(), bddf.as_os_str()]).expect(0);
    let original = robolog(["cat", BDDF, "--json"]).expect(0).stdout;
    let back = robolog(["cat".as_ref(), bddf.as_os_str(), "--json".as_ref()])
        .expect(0)
        .stdout;
    assert_eq!(original, back);
    robolog(["check".as_ref(), bddf.as_os_str()]).expect(0);
}

#[test]
fn convert_mcap_and_bag_to_bddf() {
    let dir = tempfile::tempdir().unwrap();
    for (input, count) in [(MCAP, 300), (BAG_V12, 150)] {
        let out = dir.path().join("x.bddf");
        robolog(["convert".as_ref(), input.as_ref(), out.as_os_str()]).expect(0);
        let info = info_of(&out);
        assert_eq!(info["format"], "bddf");
        assert_eq!(info["message_count"], count);
        // robolog's annotations bring the topics back.
        let mcap_again = robolog(["cat".as_ref(), out.as_os_str(), "--json".as_ref()])
            .expect(0)
            .json_lines();
        assert_eq!(mcap_again.len(), count);
    }
}

#[test]
fn convert_failures_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("all.bag");
    // A bag cannot hold the JSON and blob channels.
    let run = robolog(["convert".as_ref(), MCAP.as_ref(), out.as_os_str()]).expect(1);
    let line = assert_error_line(&run.stderr, MCAP, None);
    assert!(line.contains("/points (json"), "{line}");
    assert!(
        names_in(dir.path()).is_empty(),
        "{:?}",
        names_in(dir.path())
    );
    // A missing input.
    robolog([
        "convert".as_ref(),
        "testdata/nope.bag".as_ref(),
        out.as_os_str(),
    ])
    .expect(1);
    assert!(names_in(dir.path()).is_empty());
    // Usage errors: no format, a codec the format lacks.
    let txt = dir.path().join("x.txt");
    let run = robolog(["convert".as_ref(), MCAP.as_ref(), txt.as_os_str()]).expect(2);
    assert!(run.stderr.contains("--format"), "{}", run.stderr);
    let mcap = dir.path().join("x.mcap");
    robolog([
        "convert".as_ref(),
        MCAP.as_ref(),
        mcap.as_os_str(),
        "--compression".as_ref(),
        "bz2".as_ref(),
    ])
    .expect(2);
    let bddf = dir.path().join("x.bddf");
    robolog([
        "convert".as_ref(),
        MCAP.as_ref(),
        bddf.as_os_str(),
        "--chunk-size".as_ref(),
        "1M".as_ref(),
    ])
    .expect(2);
    assert!(names_in(dir.path()).is_empty());
}

// --------------------------------------------------------------------------------------- check

#[test]
fn check_clean_files() {
    for (file, messages) in [
        (BAG_LZ4, 150),
        (BAG_V12, 150),
        (BAG_BZ2_EXAMPLE, 8647),
        (MCAP, 300),
        (BDDF, 14),
    ] {
        let run = robolog(["check", "--json", file]).expect(0);
        let report = run.json();
        assert_eq!(report["valid"], true, "{file}");
        assert_eq!(report["messages"], messages, "{file}");
        assert_eq!(report["file"], file);
        let text = robolog(["check", file]).expect(0).stdout;
        assert!(text.ends_with(": ok\n"), "{text}");
    }
}

#[test]
fn check_damaged_files() {
    // A killed recorder: the 5th chunk is unterminated at byte 22805 (bags README).
    let report = robolog(["check", "--json", BAG_KILLED]).expect(1).json();
    assert_eq!(report["valid"], false);
    let errors: Vec<&Value> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["severity"] == "error")
        .collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["offset"], 22805);
    assert_eq!(errors[0]["kind"], "truncated");

    // The cut MCAP: chunk 7 starts at byte 23287 (samples README).
    let report = robolog(["check", "--json", MCAP_CUT]).expect(1).json();
    assert!(
        report["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["severity"] == "error" && p["offset"] == 23287 && p["kind"] == "truncated"),
        "{report}"
    );
    let text = robolog(["check", MCAP_CUT]).expect(1).stdout;
    assert!(text.contains("error at byte 23287"), "{text}");
    assert!(text.ends_with("PROBLEMS FOUND\n"), "{text}");

    // A flipped bit: the SHA-1 no longer matches.
    let report = robolog(["check", "--json", BDDF_BITFLIP]).expect(1).json();
    assert_eq!(report["valid"], false);
    robolog(["check", BDDF_CUT]).expect(1);
}

// ------------------------------------------------------------------------------------- recover

#[test]
fn recover_cut_mcap_loses_data() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.mcap");
    let run = robolog(["recover".as_ref(), MCAP_CUT.as_ref(), out.as_os_str()]).expect(3);
    assert!(
        run.stdout.contains("187 messages recovered"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("DATA LOST"), "{}", run.stdout);
    let info = info_of(&out);
    assert_eq!(info["message_count"], 187);
    assert_eq!(info["index"], json!({"source": "index"}));
    assert_eq!(info["attachments"][0]["name"], "calibration.json");
    assert_eq!(info["metadata"][0]["name"], "run_info");
    robolog(["check".as_ref(), out.as_os_str()]).expect(0);
}

#[test]
fn recover_bags() {
    let dir = tempfile::tempdir().unwrap();
    // ros_comm's reindex keeps the 65 messages of 4 complete chunks; the 11 complete
    // messages of the cut 5th chunk are saved as well.
    let out = dir.path().join("killed.bag");
    let report = robolog([
        "recover".as_ref(),
        BAG_KILLED.as_ref(),
        out.as_os_str(),
        "--json".as_ref(),
    ])
    .expect(3)
    .json();
    assert_eq!(report["messages_recovered"], 65 + 11);
    assert_eq!(report["lossless"], false);
    assert_eq!(info_of(&out)["message_count"], 76);

    // An unindexed 1.2 bag becomes an indexed 2.0 bag with all 150 messages.
    let out = dir.path().join("v12.bag");
    let run = robolog([
        "recover".as_ref(),
        BAG_V12_UNINDEXED.as_ref(),
        out.as_os_str(),
    ])
    .expect(0);
    assert!(
        run.stdout.contains("150 messages recovered, 0 lost"),
        "{}",
        run.stdout
    );
    let info = info_of(&out);
    assert_eq!(info["version"], "2.0");
    assert_eq!(info["message_count"], 150);
    assert_eq!(info["index"], json!({"source": "index"}));
}

#[test]
fn recover_bddf() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.bddf");
    let report = robolog([
        "recover".as_ref(),
        BDDF_CUT.as_ref(),
        out.as_os_str(),
        "--json".as_ref(),
    ])
    .expect(3)
    .json();
    // The cut at byte 1518 is inside battery.voltage's only block (sample.txt).
    assert_eq!(report["messages_recovered"], 12);
    assert_eq!(report["messages_lost"], 1);
    assert_eq!(report["problems"][0]["offset"], 1518);
    assert_eq!(info_of(&out)["message_count"], 12);
    robolog(["check".as_ref(), out.as_os_str()]).expect(0);

    // An intact file is copied without loss: exit 0.
    let out = dir.path().join("ok.bddf");
    let run = robolog(["recover".as_ref(), BDDF.as_ref(), out.as_os_str()]).expect(0);
    assert!(
        run.stdout.contains("14 messages recovered, 0 lost"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("nothing was lost"), "{}", run.stdout);
}

// --------------------------------------------------------------------------------------- merge

#[test]
fn merge_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.mcap");
    let mut args: Vec<std::ffi::OsString> = vec![
        "merge".into(),
        BAG_LZ4.into(),
        MCAP.into(),
        BDDF.into(),
        "-o".into(),
    ];
    args.push(out.clone().into());
    let run = robolog(args).expect(0);
    assert!(run.stdout.contains("464 messages"), "{}", run.stdout);
    let info = info_of(&out);
    assert_eq!(info["message_count"], 150 + 300 + 14);
    assert_eq!(info["channels"].as_array().unwrap().len(), 3 + 3 + 7);
    assert_eq!(info["start_time"], BAG_T0);
    assert_eq!(info["end_time"], MCAP_T0 + 2_990_000_000);
    let times: Vec<u64> = robolog(["cat".as_ref(), out.as_os_str(), "--json".as_ref()])
        .expect(0)
        .json_lines()
        .iter()
        .map(|l| l["log_time"].as_u64().unwrap())
        .collect();
    assert!(times.is_sorted());

    // Two windows of one bag merge back into the whole.
    let a = dir.path().join("a.bag");
    let b = dir.path().join("b.bag");
    robolog([
        "convert".as_ref(),
        BAG_LZ4.as_ref(),
        a.as_os_str(),
        "--end".as_ref(),
        "1600000000250000000".as_ref(),
    ])
    .expect(0);
    robolog([
        "convert".as_ref(),
        BAG_LZ4.as_ref(),
        b.as_os_str(),
        "--start".as_ref(),
        "1600000000250000000".as_ref(),
    ])
    .expect(0);
    let whole = dir.path().join("whole.bag");
    robolog([
        "merge".as_ref(),
        a.as_os_str(),
        b.as_os_str(),
        "-o".as_ref(),
        whole.as_os_str(),
    ])
    .expect(0);
    let original = robolog(["cat", BAG_LZ4, "--json"]).expect(0).stdout;
    let merged = robolog(["cat".as_ref(), whole.as_os_str(), "--json".as_ref()])
        .expect(0)
        .stdout;
    assert_eq!(original, merged);
}

// ----------------------------------------------------------------------------------------- msg

/// The `.msgdef` fixtures as package trees: the first section is the type itself, each
/// `MSG: pkg/Type` section one dependency.
fn write_tree(root: &std::path::Path, type_name: &str, bundle: &str) {
    // genmsg ends each section's text with a newline of its own before the separator line.
    let separator = format!("\n{}\n", "=".repeat(80));
    for (i, section) in bundle.split(&separator).enumerate() {
        let (name, text) = if i == 0 {
            (type_name, section)
        } else {
            let (header, text) = section.split_once('\n').unwrap();
            (header.strip_prefix("MSG: ").unwrap(), text)
        };
        let (package, short) = name.split_once('/').unwrap();
        let dir = root.join(package).join("msg");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{short}.msg")), text).unwrap();
    }
}

const MSGDEFS: [(&str, &str); 6] = [
    ("std_msgs_String", "std_msgs/String"),
    ("std_msgs_Header", "std_msgs/Header"),
    ("geometry_msgs_PoseStamped", "geometry_msgs/PoseStamped"),
    ("sensor_msgs_Imu", "sensor_msgs/Imu"),
    ("sensor_msgs_PointCloud2", "sensor_msgs/PointCloud2"),
    ("my_pkg_Custom", "my_pkg/Custom"),
];

#[test]
fn msg_md5_and_show_of_bundles() {
    for (stem, type_name) in MSGDEFS {
        let bundle_path = format!("testdata/msg/{stem}.msgdef");
        let expected_md5 = robolog_testkit::testdata::read(format!("msg/{stem}.md5"));
        let expected_md5 = String::from_utf8(expected_md5).unwrap();
        let run = robolog(["msg", "md5", &bundle_path, "--type", type_name]).expect(0);
        assert_eq!(
            run.stdout,
            format!("{}  {type_name}\n", expected_md5.trim())
        );
        let bundle = String::from_utf8(robolog_testkit::testdata::read(format!(
            "msg/{stem}.msgdef"
        )))
        .unwrap();
        let shown = robolog(["msg", "show", &bundle_path, "--type", type_name])
            .expect(0)
            .stdout;
        assert_eq!(
            shown.trim_end_matches('\n'),
            bundle.trim_end_matches('\n'),
            "{stem}"
        );
        robolog(["msg", "check", &bundle_path, "--type", type_name]).expect(0);
    }
}

#[test]
fn msg_package_trees() {
    let dir = tempfile::tempdir().unwrap();
    for (stem, type_name) in MSGDEFS {
        let bundle = String::from_utf8(robolog_testkit::testdata::read(format!(
            "msg/{stem}.msgdef"
        )))
        .unwrap();
        write_tree(dir.path(), type_name, &bundle);
    }
    let tree = dir.path().as_os_str();
    let run = robolog(["msg".as_ref(), "md5".as_ref(), tree]).expect(0);
    for (stem, type_name) in MSGDEFS {
        let md5 =
            String::from_utf8(robolog_testkit::testdata::read(format!("msg/{stem}.md5"))).unwrap();
        let line = format!("{}  {type_name}\n", md5.trim());
        assert!(run.stdout.contains(&line), "{line} in\n{}", run.stdout);
    }
    let run = robolog(["msg".as_ref(), "check".as_ref(), tree]).expect(0);
    assert!(run.stdout.ends_with(": ok\n"), "{}", run.stdout);
    // The tree gives the same bundle as the publisher stored.
    let shown = robolog([
        "msg".as_ref(),
        "show".as_ref(),
        tree,
        "--type".as_ref(),
        "my_pkg/Custom".as_ref(),
    ])
    .expect(0)
    .stdout;
    let bundle =
        String::from_utf8(robolog_testkit::testdata::read("msg/my_pkg_Custom.msgdef")).unwrap();
    assert_eq!(shown, bundle);

    // Take a dependency away: check names what is missing.
    std::fs::remove_file(dir.path().join("geometry_msgs/msg/Point.msg")).unwrap();
    let run = robolog(["msg".as_ref(), "check".as_ref(), tree]).expect(1);
    assert!(run.stdout.contains("geometry_msgs/Point"), "{}", run.stdout);
    assert!(run.stdout.ends_with("PROBLEMS FOUND\n"), "{}", run.stdout);
}

#[test]
fn msg_bad_definitions() {
    let run = robolog([
        "msg",
        "check",
        "testdata/bad/msg/missing-type.msgdef",
        "--type",
        "bad/Msg",
    ])
    .expect(1);
    assert!(run.stdout.contains("is not defined"), "{}", run.stdout);
    robolog([
        "msg",
        "md5",
        "testdata/bad/msg/syntax-error.msgdef",
        "--type",
        "bad/Msg",
    ])
    .expect(1);
    // A file outside a package tree needs --type.
    robolog(["msg", "md5", "testdata/msg/std_msgs_String.msgdef"]).expect(2);
}

#[test]
fn msg_ros2_hashes_of_a_package_tree_and_of_schemas() {
    // A ROS 2 package tree: a message using `time` (builtin_interfaces/Time, built in), a
    // service and an action whose UUID comes from the bundled interfaces.
    let dir = tempfile::tempdir().unwrap();
    let write = |relative: &str, text: &str| {
        let path = dir.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "example_interfaces/srv/AddTwoInts.srv",
        "int64 a\nint64 b\n---\nint64 sum\n",
    );
    write(
        "example_interfaces/action/Fibonacci.action",
        "int32 order\n---\nint32[] sequence\n---\nint32[] sequence\n",
    );
    write("std_msgs/msg/String.msg", "string data\n");
    let tree = dir.path().to_str().unwrap();
    let run = robolog(["msg", "hash", "--ros2", "--distro", "jazzy", tree]).expect(0);
    for line in [
        "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18  std_msgs/msg/String",
        "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a  example_interfaces/srv/AddTwoInts",
        "RIHS01_9508051da1ea4658de144b09bd0690ff3de52104683d847aed764d2915906f51  example_interfaces/action/Fibonacci",
        "RIHS01_d1a57fb2a4afe8c21e34fb10db206f16ce6729b28531141472df92277c55b557  example_interfaces/action/Fibonacci_SendGoal",
        "RIHS01_c1de71afd52e49a89c53d8262366884185bc0a02f78ce051c4e46b0a7fe59bb2  example_interfaces/action/Fibonacci_FeedbackMessage",
    ] {
        assert!(
            run.stdout.contains(&format!("{line}\n")),
            "{line} in\n{}",
            run.stdout
        );
    }
    // Without --distro the action's unique_identifier_msgs/UUID is missing: named, exit 1.
    let run = robolog(["msg", "hash", "--ros2", tree]).expect(1);
    assert!(
        run.stderr.contains("unique_identifier_msgs/UUID"),
        "{}",
        run.stderr
    );

    // A service event schema as rosbag2 recorded it, and the hash it recorded.
    let schema = dir.path().join("event.ros2msg");
    std::fs::write(&schema, "int64 a\nint64 b\n---\nint64 sum\n").unwrap();
    let run = robolog([
        "msg",
        "hash",
        "--ros2",
        schema.to_str().unwrap(),
        "--type",
        "example_interfaces/srv/AddTwoInts_Event",
    ])
    .expect(0);
    assert_eq!(
        run.stdout,
        "RIHS01_32c1d140259c71e5c355115942bcb31df98b4330e4d906b1b75ccb1c9b3ce6c8  \
         example_interfaces/srv/AddTwoInts_Event\n"
    );
    robolog([
        "msg",
        "check",
        "--ros2",
        schema.to_str().unwrap(),
        "--type",
        "example_interfaces/srv/AddTwoInts_Event",
    ])
    .expect(0);
    // ROS 1 has md5sums, not type hashes; an unknown distro is a usage error too.
    robolog([
        "msg",
        "hash",
        "testdata/msg/std_msgs_String.msgdef",
        "--type",
        "std_msgs/String",
    ])
    .expect(2);
    robolog([
        "msg",
        "hash",
        "--ros2",
        "--distro",
        "rolling",
        "--type",
        "std_msgs/msg/String",
    ])
    .expect(2);
}

// ------------------------------------------------------------------------------ errors, usage

#[test]
fn error_lines_carry_file_and_offset() {
    let run = robolog(["cat", "testdata/bad/mcap/chunk-crc-mismatch.mcap"]).expect(1);
    let line = assert_error_line(
        &run.stderr,
        "testdata/bad/mcap/chunk-crc-mismatch.mcap",
        Some(44),
    );
    assert!(line.starts_with("error: chunk CRC mismatch"), "{line}");
    let run = robolog(["info", "testdata/bad/rosbag/header-len-huge.bag"]).expect(1);
    assert_error_line(
        &run.stderr,
        "testdata/bad/rosbag/header-len-huge.bag",
        Some(13),
    );
    // The damage opening the file noticed, then the read error where reading stopped.
    let run = robolog(["cat", "testdata/bad/bddf/reserved-block-type.bddf"]).expect(1);
    assert!(
        run.stderr
            .lines()
            .any(|line| line.starts_with("error: reserved block type 0x07")
                && line.ends_with("(testdata/bad/bddf/reserved-block-type.bddf at byte 98)")),
        "{}",
        run.stderr
    );

    let run = robolog(["info", "testdata/README.md"]).expect(1);
    let line = assert_error_line(&run.stderr, "testdata/README.md", None);
    assert!(line.starts_with("error: unknown format"), "{line}");
    for command in ["info", "cat", "check"] {
        let run = robolog([command, "testdata/no-such-file.bag"]).expect(1);
        let line = assert_error_line(&run.stderr, "testdata/no-such-file.bag", None);
        assert!(line.starts_with("error: cannot open: "), "{line}");
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("missing-folder/out.mcap");
    let run = robolog(["convert".as_ref(), MCAP.as_ref(), out.as_os_str()]).expect(1);
    let line = assert_error_line(&run.stderr, &out.display().to_string(), None);
    assert!(
        line.starts_with("error: cannot write the output: "),
        "{line}"
    );
    let run = robolog(["info", "testdata/bags/upstream/rosbag.js/empty-file.bag"]).expect(1);
    let line = assert_error_line(
        &run.stderr,
        "testdata/bags/upstream/rosbag.js/empty-file.bag",
        None,
    );
    assert!(line.contains("empty"), "{line}");
}

/// Every hostile file through every reading command: an exit code a script can trust and,
/// on failure, exactly one error line naming the file; never a panic.
#[test]
fn hostile_files_never_panic() {
    let root = robolog_testkit::testdata::workspace_root();
    let mut files = Vec::new();
    for format in ["rosbag", "mcap", "bddf"] {
        for entry in std::fs::read_dir(root.join("testdata/bad").join(format)).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            files.push(format!("testdata/bad/{format}/{name}"));
        }
    }
    assert!(files.len() > 50, "{}", files.len());
    for file in &files {
        for args in [
            vec!["info", file.as_str()],
            vec!["cat", "--json", file.as_str()],
            vec!["check", file.as_str()],
        ] {
            let run = robolog(&args);
            assert!(
                [0, 1].contains(&run.code),
                "robolog {}: exit {}\n{}",
                args.join(" "),
                run.code,
                run.stderr
            );
            assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
            if run.code == 1 && args[0] != "check" {
                let errors: Vec<&str> = run
                    .stderr
                    .lines()
                    .filter(|l| l.starts_with("error: "))
                    .collect();
                // Damage read past is one line each; every line names the file.
                assert!(
                    !errors.is_empty(),
                    "robolog {}:\n{}",
                    args.join(" "),
                    run.stderr
                );
                for error in errors {
                    assert!(error.contains(&format!("({file}")), "{error}");
                }
            }
        }
    }
}

#[test]
fn usage_errors_exit_2() {
    robolog(Vec::<&str>::new()).expect(2);
    robolog(["info"]).expect(2);
    robolog(["frobnicate"]).expect(2);
    let run = robolog(["cat", MCAP, "--start", "yesterday"]).expect(2);
    assert!(run.stderr.contains("RFC 3339"), "{}", run.stderr);
    let run = robolog([
        "cat",
        MCAP,
        "--start",
        "1700000001000000000",
        "--end",
        "1700000000000000000",
    ])
    .expect(2);
    assert!(run.stderr.contains("must be before"), "{}", run.stderr);
    robolog(["cat", MCAP, "--topic", "/a[b"]).expect(2);
    robolog(["convert", MCAP, "x.mcap", "--chunk-size", "4X"]).expect(2);
    robolog(["merge", MCAP]).expect(2);
    assert_eq!(
        robolog(["--version"])
            .expect(0)
            .stdout
            .split_whitespace()
            .next(),
        Some("robolog")
    );
}

#[test]
fn convert_from_stdin_and_recover_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let root = robolog_testkit::testdata::workspace_root();
    let out = dir.path().join("from-stdin.mcap");
    let run = robolog_stdin(
        ["convert".as_ref(), "-".as_ref(), out.as_os_str()],
        &root.join(BAG_LZ4),
    )
    .expect(0);
    assert!(run.stdout.contains("150 messages"), "{}", run.stdout);
    let info = info_of(&out);
    assert_eq!(info["message_count"], 150);
    assert_eq!(
        channel_counts(&info),
        pairs(&[("/chatter", 50), ("/imu", 50), ("/custom", 50)])
    );

    // Recovering a file onto itself: the cut BDDF becomes valid where it lies.
    let copy = dir.path().join("cut.bddf");
    std::fs::copy(root.join(BDDF_CUT), &copy).unwrap();
    robolog(["recover".as_ref(), copy.as_os_str(), copy.as_os_str()]).expect(3);
    robolog(["check".as_ref(), copy.as_os_str()]).expect(0);
    assert_eq!(info_of(&copy)["message_count"], 12);
    assert_eq!(names_in(dir.path()), ["cut.bddf", "from-stdin.mcap"]);
}

// ------------------------------------------------------------------------------------- rosbag2

const ROS2_SQLITE: &str = "testdata/rosbag2/sqlite3-talker";
const ROS2_DB3: &str = "testdata/rosbag2/files/topics_and_services.db3";

/// `info --json` gives ROS 2 channels their RIHS01 type hash (the hashes rosbag2 recorded in
/// metadata.yaml), ROS 1 channels none.
#[test]
fn info_json_gives_ros2_channels_their_type_hash() {
    let info = robolog(["info", "--json", "testdata/rosbag2/mcap-service_events"])
        .expect(0)
        .json();
    let hashes: Vec<(&str, &str)> = info["channels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["topic"].as_str().unwrap(),
                c["type_hash"].as_str().unwrap(),
            )
        })
        .collect();
    let basic = "RIHS01_5b9988a4805a06ae22dff12903a774ccda710e9514926b826ffc884e3a9a982e";
    let strings = "RIHS01_eee55533636293ac7c94c62432eedb5777eb849847d2a17b4dcead8c4a20ab32";
    assert_eq!(
        hashes,
        [
            (
                "/events/write_split",
                "RIHS01_5ef58f7106a5cff8f5a794028c18117ee21015850ddcc567df449f41932960f8"
            ),
            ("/test_service1/_service_event", basic),
            ("/test_service2/_service_event", basic),
            ("/test_topic1", strings),
            ("/test_topic2", strings),
        ]
    );
    let info = robolog(["info", "--json", BAG_LZ4]).expect(0).json();
    assert!(info["channels"][0].get("type_hash").is_none());
}

#[test]
fn rosbag2_directory_and_db3_through_every_command() {
    let info = robolog(["info", "--json", ROS2_SQLITE]).expect(0).json();
    assert_eq!(info["format"], "rosbag2");
    assert_eq!(info["message_count"], 20);
    assert_eq!(info["start_time"], 1_585_866_235_112_411_371u64);
    assert_eq!(
        channel_counts(&info),
        pairs(&[("/topic", 10), ("/rosout", 10), ("/parameter_events", 0)])
    );
    let lines = robolog([
        "cat",
        "--json",
        ROS2_DB3,
        "--topic",
        "/add_two_ints/_service_event",
    ])
    .expect(0);
    assert_eq!(lines.stdout.lines().count(), 6);
    robolog(["check", ROS2_SQLITE]).expect(0);

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bag");
    let run = robolog([
        "convert".as_ref(),
        ROS2_DB3.as_ref(),
        out.as_os_str(),
        "--format".as_ref(),
        "rosbag2".as_ref(),
        "--storage".as_ref(),
        "sqlite3".as_ref(),
        "--compression-mode".as_ref(),
        "message".as_ref(),
    ])
    .expect(0);
    assert!(run.stdout.contains("13 messages"), "{}", run.stdout);
    assert_eq!(names_in(&out), ["bag_0.db3", "metadata.yaml"]);
    let info = info_of(&out);
    assert_eq!(info["format"], "rosbag2");
    assert_eq!(info["properties"]["compression"], "message");
    assert_eq!(info["message_count"], 13);
    // The same payloads come back out, decompressed.
    let a = robolog(["cat", "--json", ROS2_DB3]).expect(0).stdout;
    let b = robolog(["cat".as_ref(), "--json".as_ref(), out.as_os_str()])
        .expect(0)
        .stdout;
    assert_eq!(a, b);

    let fixed = dir.path().join("fixed");
    std::fs::remove_file(out.join("metadata.yaml")).unwrap();
    let run = robolog(["recover".as_ref(), out.as_os_str(), fixed.as_os_str()]).expect(0);
    assert!(
        run.stdout.contains("13 messages recovered, 0 lost"),
        "{}",
        run.stdout
    );
    assert_eq!(info_of(&fixed)["message_count"], 13);
}

#[test]
fn ros1_bags_migrate_to_ros2_bags_and_ros2_mcap() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ros2");
    let run = robolog([
        "convert".as_ref(),
        "testdata/bags/generated/ros_comm/ref_none.bag".as_ref(),
        out.as_os_str(),
        "--format".as_ref(),
        "rosbag2".as_ref(),
        "--storage".as_ref(),
        "sqlite3".as_ref(),
    ])
    .expect(0);
    assert!(run.stdout.contains("150 messages"), "{}", run.stdout);
    let info = info_of(&out);
    assert_eq!(info["format"], "rosbag2");
    assert_eq!(info["properties"]["ros_distro"], "jazzy");
    let lines = robolog([
        "cat".as_ref(),
        "--decode".as_ref(),
        "--json".as_ref(),
        out.as_os_str(),
        "--topic".as_ref(),
        "/imu".as_ref(),
        "--limit".as_ref(),
        "1".as_ref(),
    ])
    .expect(0)
    .json_lines();
    assert_eq!(lines[0]["schema_name"], "sensor_msgs/msg/Imu");
    assert_eq!(
        lines[0]["message"]["header"],
        serde_json::json!({"stamp": {"sec": 1_600_000_000, "nanosec": 0}, "frame_id": "imu_link"})
    );

    // A ROS 2 MCAP file straight from the bag, with Humble's definitions.
    let mcap = dir.path().join("ros2.mcap");
    robolog([
        "convert".as_ref(),
        "testdata/bags/generated/ros_comm/ref_lz4.bag".as_ref(),
        mcap.as_os_str(),
        "--migrate".as_ref(),
        "ros2".as_ref(),
        "--distro".as_ref(),
        "humble".as_ref(),
    ])
    .expect(0);
    let info = info_of(&mcap);
    assert_eq!(info["properties"]["profile"], "ros2", "{info}");

    // A type ROS 2 lacks is refused by name, and nothing is written; carried over on request.
    let refused = dir.path().join("refused");
    let run = robolog([
        "convert".as_ref(),
        "testdata/bags/upstream/rosbag.js/example-bz2.bag".as_ref(),
        refused.as_os_str(),
        "--format".as_ref(),
        "rosbag2".as_ref(),
    ])
    .expect(1);
    assert!(
        run.stderr
            .contains("/rosout: rosgraph_msgs/Log (ROS 2 jazzy has no rosgraph_msgs/msg/Log)"),
        "{}",
        run.stderr
    );
    assert!(!refused.exists());
    robolog([
        "convert".as_ref(),
        "testdata/bags/upstream/rosbag.js/example-bz2.bag".as_ref(),
        refused.as_os_str(),
        "--format".as_ref(),
        "rosbag2".as_ref(),
        "--copy-unmatched-types".as_ref(),
    ])
    .expect(0);
    assert_eq!(info_of(&refused)["message_count"], 8647);
}

#[test]
fn distro_gives_definitions_to_a_bag_without_them() {
    let bag = "testdata/rosbag2/sqlite3-convert_b";
    let args = ["cat", "--decode", "--json", bag, "--topic", "c_strings"];
    let plain = robolog(args).expect(0).json_lines();
    assert_eq!(plain.len(), 50);
    let with = robolog(args.iter().chain(&["--distro", "humble"]))
        .expect(0)
        .json_lines();
    assert_eq!(with.len(), 50);
    assert!(
        with.iter()
            .all(|l| l["message"]["string_value"].is_string())
    );
    assert_eq!(with[0]["message"], plain[0]["message"]);
    let run = robolog(["info", bag, "--distro", "nope"]).expect(2);
    assert!(run.stderr.contains("nope"), "{}", run.stderr);
}

#[test]
fn settings_the_output_format_lacks_are_usage_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("out.bag");
    let mcap = dir.path().join("out.mcap");
    let bddf = dir.path().join("out.bddf");
    for (output, setting, value, says) in [
        (&bag, "--compression", "zstd", "not zstd"),
        (&mcap, "--compression", "bz2", "none, lz4 or zstd"),
        (&mcap, "--storage", "sqlite3", "settings of ROS 2 bags"),
        (&bddf, "--chunk-size", "1M", "BDDF files have no chunks"),
    ] {
        let run = robolog([
            "convert".as_ref(),
            BAG_LZ4.as_ref(),
            output.as_os_str(),
            setting.as_ref(),
            value.as_ref(),
        ])
        .expect(2);
        assert!(
            run.stderr.contains(says),
            "{setting} {value}: {}",
            run.stderr
        );
        assert!(!output.exists());
    }
}
