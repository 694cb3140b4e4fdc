//! What a new user hits on real recordings (issue 31): each test shows one problem on a small
//! file in testdata/ and what the command does about it now.

use crate::support::robolog;

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
