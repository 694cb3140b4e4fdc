//! What a new user hits on real recordings (issue 31): each test shows one problem on a small
//! file in testdata/ and what the command does about it now.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

use crate::support::{command, piped, robolog, robolog_stdin};

/// turtlesim, 8647 messages from 1396293887.844783943 s to 1396293909.544870199 s.
const TURTLES: &str = "testdata/bags/upstream/rosbag.js/example-bz2.bag";

fn count_lines(args: &[&str]) -> usize {
    robolog(args).expect(0).stdout.lines().count()
}

// ------------------------------------------------------------------------ times in seconds

#[test]
fn times_in_seconds_fractions_and_rfc3339_select_the_same_messages() {
    let by_ns = count_lines(&["cat", TURTLES, "--end", "1396293900000000000"]);
    // Seconds are what users type, and what `rosbag` and `mcap --start-secs` take.
    let by_seconds = count_lines(&["cat", TURTLES, "--end", "1396293900"]);
    assert!(by_ns > 1000 && by_ns < 8647, "{by_ns}");
    assert_eq!(by_seconds, by_ns);
    assert_eq!(
        count_lines(&["cat", TURTLES, "--end-secs", "1396293900"]),
        by_ns
    );
    let half = count_lines(&["cat", TURTLES, "--end", "1396293900.5"]);
    assert_eq!(
        half,
        count_lines(&["cat", TURTLES, "--end", "2014-03-31T19:25:00.5Z"])
    );
    assert_eq!(
        half,
        count_lines(&["cat", TURTLES, "--end", "1396293900500ms"])
    );
    assert!(half > by_ns, "{half} {by_ns}");
    // A window in seconds on both sides.
    let window = count_lines(&[
        "cat",
        TURTLES,
        "--start",
        "1396293900",
        "--end",
        "1396293900.5",
    ]);
    assert_eq!(window, half - by_ns);
    let help = robolog(["cat", "--help"]).expect(0).stdout;
    assert!(help.contains("10^12"), "{help}");
}

// ------------------------------------------------------------------------------ topic patterns

#[test]
fn topic_globs_cross_slashes_and_regexes_match_whole_names() {
    // /turtle1/{color_sensor,pose,cmd_vel} and /turtle2/…: 1351 + 1344 + 357 + 1344 + 1344 + 208.
    assert_eq!(count_lines(&["cat", TURTLES, "--topic", "/turtle*"]), 5948);
    assert_eq!(
        count_lines(&["cat", TURTLES, "--topic-regex", "/turtle[12]/pose"]),
        2688
    );
    // A regex must match the whole topic: `pose` alone matches nothing.
    let run = robolog(["cat", TURTLES, "--topic-regex", "pose"]).expect(0);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains("topic pattern pose matches no topic"),
        "{}",
        run.stderr
    );
    // Excludes: everything but /tf and /tf_static (2688 + 1).
    assert_eq!(
        count_lines(&["cat", TURTLES, "--exclude-topic", "/tf*"]),
        5958
    );
    assert_eq!(
        count_lines(&[
            "cat",
            TURTLES,
            "--topic",
            "/turtle1/*",
            "--exclude-topic-regex",
            ".*/(pose|cmd_vel)",
        ]),
        1351
    );
    let bad = robolog(["cat", TURTLES, "--topic-regex", "(unclosed"]).expect(2);
    assert!(
        bad.stderr.contains("invalid topic regular expression"),
        "{}",
        bad.stderr
    );
}

// ----------------------------------------------------------------------- check's severities

#[test]
fn channels_listed_only_in_the_summary_are_notes_not_errors() {
    // rosbag2 writes the topics it subscribed to without messages into the summary alone.
    let file = "testdata/rosbag2/files/topics_and_services.mcap";
    let run = robolog(["check", file]).expect(0);
    assert!(
        run.stdout.ends_with(
            "topics_and_services.mcap: MCAP, 13 messages read, 0 errors, 0 warnings, 5 notes: ok\n"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "note at byte 15794: Channel 1 (\"/rosout\") appears only in the summary, not in the data section: it has no messages\n"
        ),
        "{}",
        run.stdout
    );
    // The schema such a channel refers to is in the summary too: no complaint about that.
    assert!(
        !run.stdout.contains("not defined before it"),
        "{}",
        run.stdout
    );
    // --strict fails on warnings, never on notes.
    robolog(["check", "--strict", file]).expect(0);
    let json = robolog(["check", "--json", file]).expect(0).json();
    assert_eq!(json["valid"], true);
    assert_eq!(json["problems"][0]["severity"], "info");
    // Damage is still an error.
    robolog(["check", "testdata/samples/demo-zstd-truncated.mcap"]).expect(1);
}

// ------------------------------------------------------------ the MCAP header profile kept

fn profile_of(file: &Path) -> String {
    let info = robolog(["info".as_ref(), "--json".as_ref(), file.as_os_str()])
        .expect(0)
        .json();
    info["properties"]["profile"].as_str().unwrap().to_owned()
}

#[test]
fn convert_and_merge_keep_the_profile_every_input_names() {
    let dir = tempfile::tempdir().unwrap();
    let talker = "testdata/rosbag2/mcap-talker/talker.mcap";
    let other = "testdata/rosbag2/mcap-convert_a/rewriter_a_0.mcap";
    let converted = dir.path().join("talker.mcap");
    robolog(["convert".as_ref(), talker.as_ref(), converted.as_os_str()]).expect(0);
    assert_eq!(profile_of(&converted), "ros2");
    let merged = dir.path().join("merged.mcap");
    robolog([
        "merge".as_ref(),
        talker.as_ref(),
        other.as_ref(),
        "-o".as_ref(),
        merged.as_os_str(),
    ])
    .expect(0);
    assert_eq!(profile_of(&merged), "ros2");
    // Through a pipe too: the header is read before anything is written.
    let bytes = std::fs::read(robolog_testkit::testdata::workspace_root().join(talker)).unwrap();
    let streamed = dir.path().join("streamed.mcap");
    let (code, _, err) = piped(&["convert", "-", streamed.to_str().unwrap()], &bytes);
    assert_eq!(code, 0, "{err}");
    assert_eq!(profile_of(&streamed), "ros2");
    // Inputs that disagree (a ROS 1 bag and a ROS 2 recording): no profile.
    let mixed = dir.path().join("mixed.mcap");
    robolog([
        "merge".as_ref(),
        talker.as_ref(),
        BAG.as_ref(),
        "-o".as_ref(),
        mixed.as_os_str(),
    ])
    .expect(0);
    assert_eq!(profile_of(&mixed), "");
}

// ------------------------------------------------------------- reading past damage, exit 1

/// A ROS 2 recording cut inside its only chunk: 5 of its 7 messages are complete.
const CUT_IN_CHUNK: &str = "testdata/cli/only_topics-cut.mcap";

#[test]
fn a_file_cut_inside_its_only_chunk_is_read_up_to_the_cut_by_every_command() {
    let cat = robolog(["cat", CUT_IN_CHUNK]).expect(1);
    assert_eq!(cat.stdout.lines().count(), 5, "{}", cat.stdout);
    assert!(
        cat.stdout
            .lines()
            .all(|l| l.contains("/parameter_events  rcl_interfaces/msg/ParameterEvent")),
        "{}",
        cat.stdout
    );
    let damage = "error: the file ends inside this chunk: 5 complete messages read from the first 4316 of its 4615 uncompressed bytes; the rest of it is lost (testdata/cli/only_topics-cut.mcap at byte 535)";
    assert!(cat.stderr.contains(damage), "{}", cat.stderr);

    let info = robolog(["info", "--json", CUT_IN_CHUNK]).expect(1).json();
    assert_eq!(info["message_count"], 5);
    assert_eq!(info["channels"][0]["topic"], "/parameter_events");
    assert_eq!(info["channels"][0]["message_count"], 5);

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("copy.mcap");
    let run = robolog(["convert".as_ref(), CUT_IN_CHUNK.as_ref(), out.as_os_str()]).expect(1);
    assert!(run.stderr.contains(damage), "{}", run.stderr);
    let copy = robolog(["info".as_ref(), "--json".as_ref(), out.as_os_str()])
        .expect(0)
        .json();
    assert_eq!(copy["message_count"], 5);
    // What recover saves is what the readers read.
    let recovered = dir.path().join("recovered.mcap");
    let run = robolog([
        "recover".as_ref(),
        CUT_IN_CHUNK.as_ref(),
        recovered.as_os_str(),
    ])
    .expect(3);
    assert!(
        run.stdout.contains(": 5 messages recovered"),
        "{}",
        run.stdout
    );
}

#[test]
fn complete_chunks_before_a_cut_are_read_in_order_and_the_cut_reported() {
    let file = "testdata/cli/lz4-cut.mcap";
    let run = robolog(["cat", file, "--json"]).expect(1);
    let times: Vec<u64> = run
        .json_lines()
        .iter()
        .map(|l| l["log_time"].as_u64().unwrap())
        .collect();
    assert!(times.len() > 20 && times.len() < 100, "{}", times.len());
    // Message i is at t0 + i * 10 ms: none is missing before the cut.
    for (i, t) in times.iter().enumerate() {
        assert_eq!(*t, 1_600_000_000_000_000_000 + i as u64 * 10_000_000);
    }
    assert!(
        run.stderr.contains("error: the file ends inside"),
        "{}",
        run.stderr
    );
}

// ---------------------------------------------------------------- recover: what is unknown

#[test]
fn recover_says_unknown_when_it_cannot_count_what_was_lost() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rescued.mcap");
    let run = robolog([
        "recover".as_ref(),
        "testdata/samples/demo-zstd-truncated.mcap".as_ref(),
        out.as_os_str(),
    ])
    .expect(3);
    assert!(
        run.stdout
            .contains("187 messages recovered, an unknown number lost, 547 B of the input dropped"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("0 lost"), "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "DATA LOST: 547 B of the input could not be read; how many messages they held is unknown"
        ),
        "{}",
        run.stdout
    );
    let json = robolog([
        "recover".as_ref(),
        "--json".as_ref(),
        "testdata/samples/demo-zstd-truncated.mcap".as_ref(),
        out.as_os_str(),
    ])
    .expect(3)
    .json();
    assert_eq!(json["messages_lost_known"], false);
    assert_eq!(json["bytes_dropped"], 547);
}

// ---------------------------------------------------------- the output format follows OUT

#[test]
fn recover_writes_the_format_its_output_names() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rescued.mcap");
    let run = robolog([
        "recover".as_ref(),
        "testdata/bags/generated/ros_comm/v20_killed.bag".as_ref(),
        out.as_os_str(),
    ])
    .expect(3);
    assert!(run.stdout.contains("(MCAP, "), "{}", run.stdout);
    let info = robolog(["info".as_ref(), "--json".as_ref(), out.as_os_str()])
        .expect(0)
        .json();
    assert_eq!(info["format"], "mcap");
    assert_eq!(info["message_count"], 76);
    // --format wins over the extension, and the input's format is the default.
    let log = dir.path().join("rescued.log");
    robolog([
        "recover".as_ref(),
        "testdata/bags/generated/ros_comm/v20_killed.bag".as_ref(),
        log.as_os_str(),
        "--format".as_ref(),
        "mcap".as_ref(),
    ])
    .expect(3);
    let info = robolog(["info".as_ref(), "--json".as_ref(), log.as_os_str()])
        .expect(0)
        .json();
    assert_eq!(
        (info["format"].as_str(), info["message_count"].as_u64()),
        (Some("mcap"), Some(76))
    );
    let same = dir.path().join("same");
    robolog([
        "recover".as_ref(),
        "testdata/samples/demo-zstd-truncated.mcap".as_ref(),
        same.as_os_str(),
    ])
    .expect(3);
    assert_eq!(&std::fs::read(&same).unwrap()[..5], b"\x89MCAP");
    // No temporary file of the two-step recovery is left behind.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["rescued.log", "rescued.mcap", "same"]);
}

// ------------------------------------------------------------------------ standard streams

const BAG: &str = "testdata/bags/generated/ros_comm/ref_lz4.bag";

fn stdin_of(args: &[&str], file: &str) -> crate::support::Run {
    robolog_stdin(
        args,
        &robolog_testkit::testdata::workspace_root().join(file),
    )
}

#[test]
fn a_dash_is_standard_input_for_every_reading_command() {
    let bag = robolog_testkit::testdata::read("bags/generated/ros_comm/ref_lz4.bag");
    // Through a pipe: read as a stream.
    let (code, out, err) = piped(&["info", "--json", "-"], &bag);
    assert_eq!(code, 0, "{err}");
    let info: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(info["message_count"], 150);
    assert_eq!(info["file"], "standard input");
    let (code, out, err) = piped(&["check", "-"], &bag);
    assert_eq!(code, 0, "{err}");
    assert!(
        String::from_utf8(out)
            .unwrap()
            .contains("150 messages read")
    );
    let (code, out, _) = piped(&["cat", "-", "--topic", "/imu"], &bag);
    assert_eq!(
        (code, String::from_utf8(out).unwrap().lines().count()),
        (0, 50)
    );
    // Redirected from a file: read with its index.
    let info = stdin_of(&["info", "--json", "-"], BAG).expect(0).json();
    assert_eq!(info["index"]["source"], "index");
    stdin_of(&["check", "-"], BAG).expect(0);
    // /dev/stdin is a path like any other, pipe or file.
    let (code, out, err) = piped(&["info", "--json", "/dev/stdin"], &bag);
    assert_eq!(code, 0, "{err}");
    let info: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(info["message_count"], 150);
    // recover reads a pipe whole.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.mcap");
    let cut = robolog_testkit::testdata::read("samples/demo-zstd-truncated.mcap");
    let out_arg = out.to_str().unwrap();
    let (code, stdout, _) = piped(&["recover", "-", out_arg], &cut);
    assert_eq!(code, 3);
    assert!(
        String::from_utf8(stdout)
            .unwrap()
            .contains("187 messages recovered")
    );
}

#[test]
fn a_dash_is_standard_output_for_every_writing_command() {
    // MCAP streams out; the report goes to standard error, the log alone to standard output.
    let run = command(["convert", BAG, "-", "--format", "mcap"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0));
    assert!(run.stdout.starts_with(b"\x89MCAP0\r\n"));
    let stderr = String::from_utf8(run.stderr).unwrap();
    assert!(
        stderr.starts_with("wrote standard output (MCAP, "),
        "{stderr}"
    );
    let (code, out, err) = piped(&["info", "--json", "-"], &run.stdout);
    assert_eq!(code, 0, "{err}");
    let info: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(info["message_count"], 150);
    // A bag must seek back to complete its header: written aside, then copied out whole.
    let run = command([
        "convert",
        "testdata/samples/demo-zstd.mcap",
        "-",
        "--format",
        "bag",
        "--topic",
        "/chatter",
    ])
    .output()
    .unwrap();
    assert_eq!(run.status.code(), Some(0));
    let (code, out, err) = piped(&["info", "--json", "-"], &run.stdout);
    assert_eq!(code, 0, "{err}");
    let info: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        (info["format"].as_str(), info["message_count"].as_u64()),
        (Some("bag"), Some(100))
    );
    // No file named `-` appears.
    assert!(
        !robolog_testkit::testdata::workspace_root()
            .join("-")
            .exists()
    );
    // Without a format to write, `-` is a usage error.
    let run = robolog(["convert", BAG, "-"]).expect(2);
    assert!(run.stderr.contains("--format"), "{}", run.stderr);
    // recover too.
    let run = command(["recover", "testdata/samples/demo-zstd-truncated.mcap", "-"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(3));
    assert!(run.stdout.starts_with(b"\x89MCAP0\r\n"));
}

// ------------------------------------------------------------------ cat --decode goes on

#[test]
fn an_undecodable_message_is_reported_and_cat_goes_on() {
    let run = robolog([
        "cat",
        "testdata/cli/one-bad-message.bag",
        "--decode",
        "--json",
    ])
    .expect(1);
    let texts: Vec<String> = run
        .json_lines()
        .iter()
        .map(|l| l["message"]["data"].as_str().unwrap().to_owned())
        .collect();
    let expected: Vec<String> = [0, 1, 2, 3, 5, 6, 7, 8, 9]
        .iter()
        .map(|i| format!("hello {i}"))
        .collect();
    assert_eq!(texts, expected);
    // Topic, time, field and offset of the one that failed.
    assert_eq!(
        run.stderr,
        "error: /chatter: the message at log time 1600000000040000000 is not a valid std_msgs/String: data: length 100 at offset 0 needs 100 bytes, only 3 left (testdata/cli/one-bad-message.bag)\n"
    );
}

/// Decoded lines are rendered on worker threads in batches; they come out in order, each the
/// library's own rendering of its message, and `--limit` stops inside a batch.
#[test]
fn decoded_lines_come_in_order_and_stop_at_the_limit() {
    let log = robolog::open(robolog_testkit::testdata::path(
        "bags/upstream/rosbag.js/example-bz2.bag",
    ))
    .unwrap();
    let mut decoder = robolog::Decoder::new();
    let expected: Vec<(String, u64, Value)> = log
        .messages()
        .iter()
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            let json = decoder.decode(&m).unwrap().to_json();
            (
                m.channel.topic.clone(),
                m.log_time_ns,
                serde_json::from_str(&json).unwrap(),
            )
        })
        .collect();
    assert_eq!(expected.len(), 8647);
    let lines = robolog(["cat", TURTLES, "--decode", "--json"])
        .expect(0)
        .json_lines();
    let got: Vec<(String, u64, Value)> = lines
        .iter()
        .map(|l| {
            (
                l["topic"].as_str().unwrap().to_owned(),
                l["log_time"].as_u64().unwrap(),
                l["message"].clone(),
            )
        })
        .collect();
    assert!(
        got == expected,
        "cat --decode --json differs from the library's decoding"
    );

    let limited = robolog(["cat", TURTLES, "--decode", "--json", "--limit", "1000"])
        .expect(0)
        .json_lines();
    assert_eq!(limited.len(), 1000);
    assert_eq!(limited[..], lines[..1000]);
    // Text lines too: the same messages, the decoded JSON after the columns.
    let text = robolog(["cat", TURTLES, "--decode", "--limit", "700"])
        .expect(0)
        .stdout;
    let text: Vec<&str> = text.lines().collect();
    assert_eq!(text.len(), 700);
    for (line, (topic, _, message)) in text.iter().zip(&expected) {
        assert!(line.contains(topic.as_str()), "{line}");
        let json = &line[line.find(" B  {").unwrap() + 4..];
        assert_eq!(&serde_json::from_str::<Value>(json).unwrap(), message);
    }
}

// ---------------------------------------------------------------- a closed pipe ends quietly

#[test]
fn a_reader_that_stops_early_ends_cat_quietly() {
    for args in [
        ["cat", "testdata/cli/large-strings.bag", "--decode"],
        ["cat", "testdata/cli/large-strings.bag", "--json"],
    ] {
        let mut child = command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        assert!(first.len() > 65536, "{}", &first[..100.min(first.len())]);
        drop(stdout);
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!((status.code(), stderr.as_str()), (Some(0), ""), "{args:?}");
    }
}

// ------------------------------------------------------- outputs: checked first, cleaned up

#[test]
fn an_output_that_cannot_be_written_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("odir");
    std::fs::create_dir(&folder).unwrap();
    let run = robolog([
        "convert".as_ref(),
        BAG.as_ref(),
        folder.as_os_str(),
        "--format".as_ref(),
        "mcap".as_ref(),
    ])
    .expect(1);
    assert!(
        run.stderr.contains("the output is a folder"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let missing = dir.path().join("no/such/folder/out.mcap");
    let run = robolog(["convert".as_ref(), BAG.as_ref(), missing.as_os_str()]).expect(1);
    assert!(run.stderr.contains("there is no folder"), "{}", run.stderr);
    // Nothing was left anywhere.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0);
}

#[cfg(unix)]
#[test]
fn a_signal_removes_the_temporary_output() {
    for (signal, code) in [("TERM", 143), ("INT", 130)] {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("input");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let out = dir.path().join("out.bag");
        let mut child = command(["convert".as_ref(), fifo.as_os_str(), out.as_os_str()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Half a bag arrives, then the writer waits: the conversion is under way.
        let bag = robolog_testkit::testdata::read("bags/upstream/rosbag.js/example-bz2.bag");
        let mut pipe = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        pipe.write_all(&bag[..bag.len() / 2]).unwrap();
        let temporary = |dir: &Path| {
            std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".tmp"))
                .count()
        };
        let started = std::time::Instant::now();
        while temporary(dir.path()) == 0 {
            assert!(
                started.elapsed().as_secs() < 30,
                "no temporary output appeared"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let kill = std::process::Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(kill.success());
        let status = child.wait().unwrap();
        drop(pipe);
        assert_eq!(status.code(), Some(code), "SIG{signal}");
        assert_eq!(temporary(dir.path()), 0, "SIG{signal}");
        assert!(!out.exists());
    }
}

// ------------------------------------------------------------------------ lesser (item 12)

#[test]
fn an_empty_bag_shows_no_chunk_list_and_long_keys_keep_their_space() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.bag");
    robolog([
        "filter".as_ref(),
        TURTLES.as_ref(),
        empty.as_os_str(),
        "--topic".as_ref(),
        "/nothing".as_ref(),
    ])
    .expect(0);
    let info = robolog(["info".as_ref(), empty.as_os_str()])
        .expect(0)
        .stdout;
    assert!(info.contains("\nchunks:   0\n"), "{info}");
    assert!(!info.contains("()"), "{info}");
    let bag2 = robolog(["info", "testdata/rosbag2/empty_bag"])
        .expect(0)
        .stdout;
    // The values of a ROS 2 bag's long keys line up with the others.
    assert!(bag2.contains("\ncompression:           none\n"), "{bag2}");
    assert!(bag2.contains("\nsqlite_schema_version: 2\n"), "{bag2}");
    assert!(bag2.contains("\nmessages:              0\n"), "{bag2}");
}

#[test]
fn a_merge_error_names_the_inputs_it_is_about() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.bag");
    // Only the MCAP input holds channels a bag cannot: it alone is named, each channel once.
    let one = robolog([
        "merge".as_ref(),
        BAG.as_ref(),
        "testdata/samples/demo-lz4.mcap".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ])
    .expect(1);
    assert!(
        one.stderr
            .trim_end()
            .ends_with("output format (testdata/samples/demo-lz4.mcap)"),
        "{}",
        one.stderr
    );
    assert_eq!(
        one.stderr.matches("/points (json").count(),
        1,
        "{}",
        one.stderr
    );
    // Both inputs hold them: both are named.
    let both = robolog([
        "merge".as_ref(),
        "testdata/samples/demo-zstd.mcap".as_ref(),
        "testdata/samples/demo-lz4.mcap".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ])
    .expect(1);
    assert!(
        both.stderr
            .contains("(testdata/samples/demo-zstd.mcap, testdata/samples/demo-lz4.mcap)"),
        "{}",
        both.stderr
    );
    assert!(!both.stderr.contains("one of the inputs"));
    assert!(!out.exists());
}

#[test]
fn a_conversion_through_bddf_keeps_quiet_channels_and_warns_about_empty_messages() {
    let dir = tempfile::tempdir().unwrap();
    let bddf = dir.path().join("q.bddf");
    let run = robolog([
        "convert".as_ref(),
        "testdata/cli/quiet-channel.mcap".as_ref(),
        bddf.as_os_str(),
    ])
    .expect(0);
    assert!(
        run.stderr
            .contains("/points: 1 message of zero bytes: the Boston Dynamics reader cannot read"),
        "{}",
        run.stderr
    );
    let back = dir.path().join("q.mcap");
    robolog(["convert".as_ref(), bddf.as_os_str(), back.as_os_str()]).expect(0);
    for file in [&bddf, &back] {
        let channels = robolog([
            "list".as_ref(),
            "channels".as_ref(),
            file.as_os_str(),
            "--json".as_ref(),
        ])
        .expect(0)
        .json();
        let quiet = channels
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["topic"] == "/quiet")
            .unwrap_or_else(|| panic!("/quiet lost in {}", file.display()));
        assert_eq!(quiet["message_count"], 0);
        assert_eq!(quiet["metadata"]["why"], "never published");
    }
    // Several metadata records become one set of file annotations, and the report says so.
    let log = dir.path().join("m.mcap");
    std::fs::copy(
        robolog_testkit::testdata::workspace_root().join("testdata/samples/demo-zstd.mcap"),
        &log,
    )
    .unwrap();
    robolog([
        "add".as_ref(),
        "metadata".as_ref(),
        log.as_os_str(),
        "-n".as_ref(),
        "more".as_ref(),
        "-k".as_ref(),
        "a=1".as_ref(),
    ])
    .expect(0);
    let converted = robolog([
        "convert".as_ref(),
        log.as_os_str(),
        dir.path().join("m.bddf").as_os_str(),
        "--topic".as_ref(),
        "/points".as_ref(),
    ])
    .expect(0);
    assert!(
        converted
            .stdout
            .contains("metadata records: 2 written, as the file's annotations"),
        "{}",
        converted.stdout
    );
}
