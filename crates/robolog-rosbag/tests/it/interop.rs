//! Our reader and writer against PyPI rosbags (the reference Python reader), through
//! tests/it/interop/read_bag.py in the interop venv.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use robolog_rosbag::{Bag, ChunkCompression, Order, WriteOptions, Writer};
use robolog_testkit::{interop, testdata};
use serde_json::Value;
use sha1::{Digest, Sha1};

/// (conn, time, sha1 of data), sorted: rosbags and we may order equal times differently.
type Messages = Vec<(u64, u64, String)>;

fn rosbags(python: &Path, bags: &[PathBuf]) -> BTreeMap<PathBuf, Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/interop/read_bag.py");
    let args: Vec<&OsStr> = bags.iter().map(|p| p.as_os_str()).collect();
    let out = interop::run(python, &script, &args).unwrap();
    let parsed: BTreeMap<String, Value> = serde_json::from_str(&out).unwrap();
    parsed
        .into_iter()
        .map(|(k, v)| (PathBuf::from(k), v))
        .collect()
}

fn theirs(result: &Value) -> Messages {
    let mut messages: Messages = result["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m[0].as_u64().unwrap(),
                m[1].as_u64().unwrap(),
                m[2].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    messages.sort();
    messages
}

fn ours(bag: &Bag) -> Messages {
    let mut messages: Messages = bag
        .messages()
        .order(Order::LogTime)
        .into_iter()
        .map(|m| {
            let m = m.unwrap();
            let sha: String = Sha1::digest(&m.data)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            (u64::from(m.conn), m.time_ns, sha)
        })
        .collect();
    messages.sort();
    messages
}

#[test]
fn we_read_every_bag_rosbags_reads_identically() {
    let Some(python) = interop::python() else {
        return;
    };
    let files = testdata::files_with_extension("bags", ".bag");
    let results = rosbags(&python, &files);
    let mut compared = 0;
    for path in &files {
        let result = &results[path];
        if let Some(error) = result.get("error") {
            // rosbags refuses unindexed bags, 1.2 bags and the error fixtures; we read the
            // unindexed and 1.2 ones (checked against the README in testdata_manifest.rs).
            let name = path.file_name().unwrap().to_string_lossy();
            assert!(
                name.starts_with("v12_")
                    || [
                        "v20_killed.bag",
                        "v20_unindexed.bag",
                        "dummy.bag",
                        "empty-file.bag"
                    ]
                    .contains(&name.as_ref()),
                "rosbags refused {}: {error}",
                path.display()
            );
            continue;
        }
        let bag = Bag::from_file(path).unwrap();
        assert_eq!(ours(&bag), theirs(result), "{}", path.display());
        for c in result["connections"].as_array().unwrap() {
            let id = c["id"].as_u64().unwrap() as u32;
            let mine = bag.connection(id).unwrap();
            assert_eq!(
                mine.topic,
                c["topic"].as_str().unwrap(),
                "{}",
                path.display()
            );
            assert_eq!(
                mine.md5sum,
                c["md5sum"].as_str().unwrap(),
                "{}",
                path.display()
            );
            assert_eq!(
                mine.message_definition,
                c["msgdef"].as_str().unwrap(),
                "{}",
                path.display()
            );
            if let Some(callerid) = c["callerid"].as_str() {
                assert_eq!(
                    mine.callerid.as_deref(),
                    Some(callerid),
                    "{}",
                    path.display()
                );
            }
        }
        compared += 1;
    }
    assert!(compared >= 35, "only {compared} bags compared");
}

#[test]
fn rosbags_reads_what_we_write() {
    let Some(python) = interop::python() else {
        return;
    };
    let source = Bag::from_file(testdata::path("bags/generated/ros_comm/ref_none.bag")).unwrap();
    let expected = ours(&source);
    let dir = tempfile::tempdir().unwrap();
    let mut written = Vec::new();
    for compression in [
        ChunkCompression::None,
        ChunkCompression::Bz2,
        ChunkCompression::Lz4,
    ] {
        for threshold in [4096, 768 * 1024] {
            let options = WriteOptions::new()
                .compression(compression)
                .chunk_threshold(threshold);
            let mut writer = Writer::with_options(Cursor::new(Vec::new()), options).unwrap();
            for c in source.connections() {
                writer
                    .insert_connection(
                        c.clone()
                            .with_field("callerid", "/robolog")
                            .with_field("latching", "1"),
                    )
                    .unwrap();
            }
            for m in source.messages().order(Order::File) {
                let m = m.unwrap();
                writer.write(m.conn, m.time_ns, &m.data).unwrap();
            }
            let bytes = writer.finish().unwrap().into_inner();
            let bag = Bag::open(bytes.clone()).unwrap();
            if compression == ChunkCompression::Lz4 {
                for chunk in bag.chunks() {
                    let frame = chunk.position as usize + 4 + 40 + 4;
                    // roslz4 profile: magic, FLG 0x64, BD 0x60.
                    assert_eq!(
                        &bytes[frame..frame + 6],
                        &[0x04, 0x22, 0x4D, 0x18, 0x64, 0x60]
                    );
                }
            }
            let path = dir.path().join(format!("{compression}-{threshold}.bag"));
            std::fs::write(&path, bytes).unwrap();
            written.push(path);
        }
    }
    let results = rosbags(&python, &written);
    for path in &written {
        let result = &results[path];
        assert!(
            result.get("error").is_none(),
            "{}: {}",
            path.display(),
            result["error"]
        );
        assert_eq!(theirs(result), expected, "{}", path.display());
        for c in result["connections"].as_array().unwrap() {
            assert_eq!(c["callerid"].as_str(), Some("/robolog"));
            assert_eq!(c["latching"].as_u64(), Some(1));
        }
    }
}
