//! Against rosbags 0.11.9 (`tests/interop/rosbag2.py`, run in the interop venv): the upstream
//! recordings, bags rosbags writes (both storages, metadata versions 5–9, no/FILE/MESSAGE
//! compression), and bags we write, read by rosbags.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use robolog_rosbag2::{Bag, StorageId};
use robolog_testkit::{interop, testdata};

use crate::support::{all_layouts, sample_messages, write_bag};

/// (topic, time, payload in hex).
type Row = (String, u64, String);

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/rosbag2.py")
}

fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

/// What rosbags reports: (message count, [(topic, type, count)], messages).
fn parse(output: &str) -> (u64, Vec<(String, String, u64)>, Vec<Row>) {
    let mut count = 0;
    let mut topics = Vec::new();
    let mut rows = Vec::new();
    for line in output.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        match v["kind"].as_str().unwrap() {
            "bag" => {
                count = v["message_count"].as_u64().unwrap();
                for t in v["topics"].as_array().unwrap() {
                    topics.push((
                        t[0].as_str().unwrap().to_owned(),
                        t[1].as_str().unwrap().to_owned(),
                        t[2].as_u64().unwrap(),
                    ));
                }
            }
            _ => rows.push((
                v["topic"].as_str().unwrap().to_owned(),
                v["time"].as_u64().unwrap(),
                v["data"].as_str().unwrap().to_owned(),
            )),
        }
    }
    (count, topics, rows)
}

fn ours(bag: &Bag) -> Vec<Row> {
    let rows: Vec<Row> = bag
        .messages()
        .iter()
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (
                bag.topic(m.topic).unwrap().name().to_owned(),
                m.log_time,
                hex(&m.data),
            )
        })
        .collect();
    assert!(rows.windows(2).all(|w| w[0].1 <= w[1].1));
    rows
}

/// Sorted by time, then topic and hash: rosbags orders equal times as SQLite returns them.
fn canonical(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by(|a, b| (a.1, &a.0, &a.2).cmp(&(b.1, &b.0, &b.2)));
    rows
}

#[test]
fn the_upstream_recordings_read_as_rosbags_reads_them() {
    let Some(python) = interop::python() else {
        return;
    };
    for path in [
        "sqlite3-talker",
        "mcap-talker",
        "sqlite3-convert_b",
        "mcap-convert_a",
        "mcap-service_events",
        "empty_bag",
        "files/only_topics.mcap",
        "files/only_services.mcap",
        "files/topics_and_services.db3",
        "files/topics_and_services.mcap",
    ] {
        let full = testdata::path("rosbag2").join(path);
        let out = interop::run(
            &python,
            &script(),
            &[OsStr::new("read"), full.as_os_str(), OsStr::new("--files")],
        )
        .unwrap_or_else(|e| panic!("{path}: {e}"));
        let (count, mut topics, rows) = parse(&out);
        let bag = Bag::open(&full).unwrap();
        assert_eq!(bag.message_count(), count, "{path}");
        let mut mine: Vec<(String, String, u64)> = bag
            .topics()
            .iter()
            .map(|t| {
                (
                    t.name().to_owned(),
                    t.type_name().to_owned(),
                    t.message_count,
                )
            })
            .collect();
        mine.sort();
        topics.sort();
        assert_eq!(mine, topics, "{path}");
        assert_eq!(rows.len() as u64, count, "{path}");
        assert_eq!(canonical(ours(&bag)), canonical(rows), "{path}");
    }
}

#[test]
fn bags_rosbags_writes_read_equal_to_what_it_wrote() {
    let Some(python) = interop::python() else {
        return;
    };
    let mut seed = 0;
    for storage in ["sqlite3", "mcap"] {
        for version in 5..=9 {
            for compression in ["none", "file", "message"] {
                seed += 1;
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("bag");
                let version_arg = version.to_string();
                let seed_arg = seed.to_string();
                let what = format!("{storage} v{version} {compression}");
                let out = interop::run(
                    &python,
                    &script(),
                    &[
                        OsStr::new("write"),
                        path.as_os_str(),
                        OsStr::new(storage),
                        OsStr::new(&version_arg),
                        OsStr::new(compression),
                        OsStr::new(&seed_arg),
                    ],
                )
                .unwrap_or_else(|e| panic!("{what}: {e}"));
                let (_, _, written) = parse(&out);
                let bag = Bag::open(&path).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(bag.problems().is_empty(), "{what}: {:?}", bag.problems());
                assert_eq!(bag.metadata().unwrap().version, version, "{what}");
                assert_eq!(
                    bag.storage(),
                    if storage == "mcap" {
                        StorageId::Mcap
                    } else {
                        StorageId::Sqlite3
                    }
                );
                assert_eq!(bag.message_count(), written.len() as u64, "{what}");
                assert_eq!(bag.topics().len(), 3, "{what}");
                assert_eq!(canonical(ours(&bag)), canonical(written), "{what}");
                if version >= 8 {
                    assert_eq!(bag.ros_distro(), Some("rosbags"), "{what}");
                }
            }
        }
    }
}

#[test]
fn bags_we_write_read_in_rosbags_equal_to_their_source() {
    let Some(python) = interop::python() else {
        return;
    };
    let messages = sample_messages(300);
    let source: Vec<Row> = messages
        .iter()
        .map(|(t, time, d)| (["/chatter", "/other"][*t].to_owned(), *time, hex(d)))
        .collect();
    for (name, options) in all_layouts() {
        for split in [false, true] {
            for version in [5, 9] {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("bag");
                let max = if name.starts_with("sqlite3") {
                    50_000
                } else {
                    20_000
                };
                let mut options = options.clone().metadata_version(version);
                if split {
                    options = options.max_file_size(max);
                }
                write_bag(&path, options, &messages);
                let what = format!("{name}, split {split}, v{version}");
                let out = interop::run(&python, &script(), &[OsStr::new("read"), path.as_os_str()])
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let (count, topics, rows) = parse(&out);
                assert_eq!(count, 300, "{what}");
                assert_eq!(
                    topics,
                    [
                        ("/chatter".to_owned(), "std_msgs/msg/String".to_owned(), 200),
                        ("/other".to_owned(), "std_msgs/msg/String".to_owned(), 100)
                    ],
                    "{what}"
                );
                assert_eq!(canonical(rows), canonical(source.clone()), "{what}");
            }
        }
    }
}
