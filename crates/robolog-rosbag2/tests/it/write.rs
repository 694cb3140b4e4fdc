//! The writer: both storages, every compression, split files, metadata versions; read back by
//! our reader (the interop tests read them with rosbags).

use robolog_rosbag2::{Bag, CompressionMode, MetadataSource, Order, StorageId, WriteOptions};

use crate::support::{all_layouts, read_all, sample_messages, write_bag};

#[test]
fn every_layout_reads_back_equal_to_what_was_written() {
    let messages = sample_messages(300);
    let mut expected: Vec<(String, u64, Vec<u8>)> = messages
        .iter()
        .map(|(t, time, d)| (["/chatter", "/other"][*t].to_owned(), *time, d.clone()))
        .collect();
    // Time order, equal times in write order.
    expected.sort_by_key(|m| m.1);
    for (name, options) in all_layouts() {
        for split in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("bag");
            // An empty sqlite file has 28 KiB of tables already.
            // MESSAGE-compressed payloads are a fraction of their size.
            let max = match (name.starts_with("sqlite3"), name.ends_with("-message")) {
                (true, false) => 50_000,
                (true, true) => 31_000,
                (false, false) => 20_000,
                (false, true) => 4_000,
            };
            let options = if split {
                options.clone().max_file_size(max)
            } else {
                options.clone()
            };
            let metadata = write_bag(&path, options, &messages);
            let bag = Bag::open(&path).unwrap();
            let what = format!("{name}, split {split}");
            assert_eq!(
                *bag.metadata_source(),
                MetadataSource::File,
                "{what}: {:?}",
                bag.problems()
            );
            assert!(bag.problems().is_empty(), "{what}: {:?}", bag.problems());
            assert_eq!(read_all(&bag), expected, "{what}");
            assert_eq!(bag.message_count(), 300);
            assert_eq!(metadata.message_count, 300);
            assert_eq!(
                metadata
                    .topics
                    .iter()
                    .map(|t| t.message_count)
                    .collect::<Vec<_>>(),
                [200, 100]
            );
            let files = bag.files();
            if split {
                assert!(
                    (3..10).contains(&files.len()),
                    "{what}: {} files",
                    files.len()
                );
            } else {
                assert_eq!(files.len(), 1, "{what}");
            }
            let file_mode = name.ends_with("-file");
            for (i, f) in files.iter().enumerate() {
                let ext = if name.starts_with("sqlite3") {
                    "db3"
                } else {
                    "mcap"
                };
                let want = format!("bag_{i}.{ext}{}", if file_mode { ".zstd" } else { "" });
                assert_eq!(
                    f.path.file_name().unwrap().to_str().unwrap(),
                    want,
                    "{what}"
                );
                assert_eq!(f.compressed, file_mode);
                assert_eq!(metadata.files[i].path, format!("bag_{i}.{ext}"));
                assert_eq!(metadata.files[i].message_count, f.message_count);
            }
            // Every split file is complete on its own: all topics registered again.
            for f in &files {
                let alone = Bag::open(&f.path).unwrap();
                assert_eq!(alone.topics().len(), 2, "{what}");
                assert_eq!(alone.message_count(), f.message_count);
            }
            // A one-topic, time-ranged query across the splits.
            let from = 1_700_000_000_000_000_000 + 40 * 1_000_000;
            let to = 1_700_000_000_000_000_000 + 90 * 1_000_000;
            let got: Vec<u64> = bag
                .messages()
                .topics(["/other"])
                .time_range(from..to)
                .iter()
                .unwrap()
                .map(|m| m.unwrap().log_time)
                .collect();
            let want: Vec<u64> = expected
                .iter()
                .filter(|m| m.0 == "/other" && (from..to).contains(&m.1))
                .map(|m| m.1)
                .collect();
            assert_eq!(got, want, "{what}");
            assert_eq!(
                bag.compression(),
                Some(match name.rsplit('-').next() {
                    Some("file") => CompressionMode::File,
                    Some("message") => CompressionMode::Message,
                    _ => CompressionMode::None,
                })
            );
        }
    }
}

#[test]
fn split_by_duration_puts_the_triggering_message_in_the_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bag");
    let messages = sample_messages(40);
    // Messages two per millisecond: a file spans 5 ms, from its first message.
    write_bag(
        &path,
        WriteOptions::new()
            .storage(StorageId::Sqlite3)
            .max_file_duration(5_000_000),
        &messages,
    );
    let bag = Bag::open(&path).unwrap();
    let counts: Vec<u64> = bag.files().iter().map(|f| f.message_count).collect();
    assert_eq!(counts, [10, 10, 10, 10]);
    for f in bag.files() {
        assert_eq!(f.end_ns.unwrap() - f.start_ns.unwrap(), 4_000_000);
    }
}

#[test]
fn metadata_yaml_in_every_writable_version_reads_back() {
    let messages = sample_messages(10);
    for version in 5..=9 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bag");
        let written = write_bag(
            &path,
            WriteOptions::new()
                .metadata_version(version)
                .ros_distro("jazzy"),
            &messages,
        );
        let text = std::fs::read_to_string(path.join("metadata.yaml")).unwrap();
        assert!(
            text.starts_with(&format!(
                "rosbag2_bagfile_information:\n  version: {version}\n  storage_identifier: mcap\n"
            )),
            "{text}"
        );
        let bag = Bag::open(&path).unwrap();
        let read = bag.metadata().unwrap();
        // What the version has no key for reads as its default.
        let mut expected = written.clone();
        if version < 8 {
            expected.ros_distro.clear();
        }
        if version < 7 {
            for t in &mut expected.topics {
                t.topic.type_description_hash.clear();
            }
        }
        assert_eq!(read, &expected, "version {version}:\n{text}");
        assert_eq!(bag.ros_distro(), (version >= 8).then_some("jazzy"));
        // The QoS spelling of each version.
        if version == 9 {
            assert!(text.contains("\n        offered_qos_profiles:\n          - history: unknown\n            depth: 0\n            reliability: reliable\n            durability: transient_local\n"), "{text}");
        } else {
            assert!(text.contains("offered_qos_profiles: \"- history: 3\\n  depth: 0\\n  reliability: 1\\n  durability: 1\\n"), "{text}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    assert!(
        robolog_rosbag2::Writer::create(
            dir.path().join("x"),
            WriteOptions::new().metadata_version(4)
        )
        .is_err()
    );
}

#[test]
fn an_existing_destination_is_refused_and_a_dropped_writer_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file"), b"x").unwrap();
    let err =
        robolog_rosbag2::Writer::create(dir.path().join("file"), WriteOptions::new()).unwrap_err();
    assert!(err.to_string().contains("exists and is a file"), "{err}");
    let writer =
        robolog_rosbag2::Writer::create(dir.path().join("bag"), WriteOptions::new()).unwrap();
    let temp = writer.temp_path().to_path_buf();
    assert!(temp.is_dir());
    drop(writer);
    assert!(!temp.exists());
    assert!(!dir.path().join("bag").exists());
}

#[test]
fn an_empty_bag_has_one_empty_storage_file() {
    for storage in [StorageId::Sqlite3, StorageId::Mcap] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty");
        let metadata = write_bag(&path, WriteOptions::new().storage(storage), &[]);
        assert_eq!(metadata.starting_time_ns, 9_223_372_036_854_775_807);
        let bag = Bag::open(&path).unwrap();
        assert_eq!(bag.message_count(), 0);
        assert_eq!(bag.topics().len(), 2);
        assert_eq!(bag.messages().order(Order::File).iter().unwrap().count(), 0);
    }
}
