//! Recovery: `.db3` files SQLite refuses, read page by page; killed recordings; missing or
//! wrong metadata.yaml.

use std::collections::BTreeSet;
use std::path::Path;

use robolog_rosbag2::{Bag, Method, Order, StorageId, WriteOptions, recover};
use robolog_testkit::truncation;

use crate::support::{read_all, sample_messages, write_bag};

/// A small `.db3` of `n` messages written by our writer, and (time, payload) of its rows by
/// row id.
fn small_db3(dir: &Path, n: usize) -> (std::path::PathBuf, Vec<(u64, Vec<u8>)>) {
    let bag = dir.join("bag");
    let messages = sample_messages(n);
    write_bag(
        &bag,
        WriteOptions::new().storage(StorageId::Sqlite3),
        &messages,
    );
    let db3 = bag.join("bag_0.db3");
    let rows = messages.iter().map(|(_, t, d)| (*t, d.clone())).collect();
    (db3, rows)
}

/// The leaf pages of the messages table in key order with their cell counts, from SQLite's
/// own `dbstat` table: row ids run 1..=n in that order.
fn leaf_pages(db3: &Path) -> Vec<(u32, usize)> {
    let conn = rusqlite::Connection::open(db3).unwrap();
    let mut stmt = conn
        .prepare("SELECT pageno, ncell FROM dbstat WHERE name = 'messages' AND pagetype = 'leaf' ORDER BY path")
        .unwrap();
    stmt.query_map([], |r| {
        Ok((r.get::<_, u32>(0)?, r.get::<_, i64>(1)? as usize))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn a_readable_db3_is_copied_through_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let (db3, _) = small_db3(dir.path(), 100);
    let out = dir.path().join("out");
    let report = recover(&db3, &out).unwrap();
    assert_eq!(report.files[0].method, Method::Sqlite);
    assert_eq!((report.messages_recovered, report.messages_lost), (100, 0));
    assert!(report.is_lossless());
    assert_eq!(
        read_all(&Bag::open(&out).unwrap()),
        read_all(&Bag::open(&db3).unwrap())
    );
}

#[test]
fn truncation_at_every_page_boundary_keeps_every_row_whose_leaf_page_is_intact() {
    let dir = tempfile::tempdir().unwrap();
    // Payloads stay below a page, so that no row has overflow pages.
    let (db3, rows) = small_db3(dir.path(), 400);
    let data = std::fs::read(&db3).unwrap();
    let leaves = leaf_pages(&db3);
    assert!(leaves.len() > 5, "{leaves:?}");
    let page = 4096;
    assert_eq!(data.len() % page, 0);
    let cut_dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    truncation::sweep(&data, 0, page, |cut, prefix| {
        if cut % page != 0 {
            return Ok(());
        }
        n += 1;
        let input = cut_dir.path().join(format!("cut_{cut}.db3"));
        std::fs::write(&input, prefix).map_err(|e| e.to_string())?;
        let out = cut_dir.path().join(format!("out_{cut}"));
        let pages_present = (cut / page) as u32;
        // Rows on leaf pages within the prefix, by row id.
        let mut expected = BTreeSet::new();
        let mut rowid = 1;
        for &(leaf, cells) in &leaves {
            if leaf <= pages_present {
                expected.extend(rowid..rowid + cells);
            }
            rowid += cells;
        }
        let report = match recover(&input, &out) {
            Ok(r) => r,
            // Too little of the file to hold anything: nothing to keep, and nothing kept.
            Err(_) if expected.is_empty() => return Ok(()),
            Err(e) => return Err(format!("{e}")),
        };
        let bag = Bag::open(&out).map_err(|e| e.to_string())?;
        let got: Vec<(u64, Vec<u8>)> = bag
            .messages()
            .order(Order::LogTime)
            .iter()
            .map_err(|e| e.to_string())?
            .map(|m| m.map(|m| (m.log_time, m.data.to_vec())))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        let mut want: Vec<(u64, Vec<u8>)> = expected.iter().map(|&r| rows[r - 1].clone()).collect();
        want.sort_by_key(|r| r.0);
        if got != want {
            return Err(format!("kept {} rows, expected {}", got.len(), want.len()));
        }
        if report.messages_recovered != want.len() as u64 {
            return Err(format!(
                "report says {} recovered",
                report.messages_recovered
            ));
        }
        // What is lost after the last row id anything still names cannot be counted: the
        // report gives a lower bound, and says that data was lost.
        let lost = (rows.len() - want.len()) as u64;
        if report.messages_lost > lost || (lost > 0 && report.is_lossless()) {
            return Err(format!(
                "report says {} lost, {lost} are",
                report.messages_lost
            ));
        }
        Ok(())
    });
    assert!(n > 5);
}

#[test]
fn a_corrupt_interior_page_loses_nothing_the_leaves_hold() {
    let dir = tempfile::tempdir().unwrap();
    let (db3, rows) = small_db3(dir.path(), 400);
    let mut data = std::fs::read(&db3).unwrap();
    // The messages table's root page: wipe it (the tree above every leaf).
    let conn = rusqlite::Connection::open(&db3).unwrap();
    let root: u32 = conn
        .query_row(
            "SELECT rootpage FROM sqlite_master WHERE name = 'messages'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    drop(conn);
    let at = (root as usize - 1) * 4096;
    data[at..at + 4096].fill(0xee);
    let bad = dir.path().join("bad.db3");
    std::fs::write(&bad, &data).unwrap();
    let sqlite = rusqlite::Connection::open(&bad).unwrap();
    let err = sqlite
        .query_row("SELECT sum(length(data)) FROM messages", [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap_err();
    assert!(err.to_string().contains("malformed"), "{err}");
    let out = dir.path().join("out");
    let report = recover(&bad, &out).unwrap();
    assert_eq!(report.files[0].method, Method::Pages);
    assert_eq!(report.messages_recovered, 400);
    assert_eq!(report.messages_lost, 0);
    let got: Vec<(u64, Vec<u8>)> = read_all(&Bag::open(&out).unwrap())
        .into_iter()
        .map(|(_, t, d)| (t, d))
        .collect();
    let mut want = rows.clone();
    want.sort_by_key(|r| r.0);
    assert_eq!(got, want);
}

#[test]
fn a_killed_recording_is_read_and_recovered_with_its_wal() {
    let dir = tempfile::tempdir().unwrap();
    let bag_path = dir.path().join("bag");
    let messages = sample_messages(9000);
    let mut writer =
        robolog_rosbag2::Writer::create(&bag_path, WriteOptions::new().storage(StorageId::Sqlite3))
            .unwrap();
    let id = writer
        .add_topic(
            crate::support::string_topic("/chatter"),
            crate::support::string_definition(),
        )
        .unwrap();
    for (_, t, d) in &messages {
        writer.write(id, *t, d).unwrap();
    }
    // A kill now: the recorder's directory as it is (two batches of 4096 committed, in the -wal).
    let killed = dir.path().join("killed");
    std::fs::create_dir(&killed).unwrap();
    for entry in std::fs::read_dir(writer.temp_path()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), killed.join(entry.file_name())).unwrap();
    }
    drop(writer);
    assert!(killed.join("bag_0.db3-wal").exists());
    assert!(!killed.join("metadata.yaml").exists());

    let bag = Bag::open(&killed).unwrap();
    assert_eq!(bag.message_count(), 8192);
    assert!(
        bag.problems()[0].message.starts_with("no metadata.yaml"),
        "{:?}",
        bag.problems()
    );

    let out = dir.path().join("out");
    let report = recover(&killed, &out).unwrap();
    assert!(report.metadata_rebuilt);
    assert_eq!(report.messages_recovered, 8192);
    let recovered = Bag::open(&out).unwrap();
    assert!(recovered.problems().is_empty());
    assert_eq!(recovered.message_count(), 8192);

    // Without SQLite's help: the -wal frames laid over a main file that has none of them.
    let db3 = killed.join("bag_0.db3");
    let mut main = std::fs::read(&db3).unwrap();
    main[..16].copy_from_slice(b"not an sqlite db");
    std::fs::write(&db3, &main).unwrap();
    let out2 = dir.path().join("out2");
    let report = recover(&killed, &out2).unwrap();
    assert_eq!(report.files[0].method, Method::Pages);
    assert_eq!(report.messages_recovered, 8192);
    assert_eq!(read_all(&Bag::open(&out2).unwrap()), read_all(&recovered));
}

#[test]
fn a_directory_with_a_wrong_metadata_yaml_is_reindexed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bag");
    write_bag(
        &path,
        WriteOptions::new()
            .storage(StorageId::Mcap)
            .max_file_size(20_000),
        &sample_messages(300),
    );
    let yaml = path.join("metadata.yaml");
    let text = std::fs::read_to_string(&yaml).unwrap();
    std::fs::write(
        &yaml,
        text.replace("message_count: 300", "message_count: 299"),
    )
    .unwrap();
    let bag = Bag::open(&path).unwrap();
    assert_eq!(bag.message_count(), 300);
    assert!(
        bag.problems()
            .iter()
            .any(|p| p.kind == robolog_rosbag2::ProblemKind::Metadata
                && p.path.as_deref() == Some(yaml.as_path())
                && p.message.starts_with("metadata.yaml is stale")),
        "{:?}",
        bag.problems()
    );
    let out = dir.path().join("out");
    let report = recover(&path, &out).unwrap();
    assert!(report.metadata_rebuilt);
    assert_eq!(report.files.len(), bag.files().len());
    assert!(report.files.iter().all(|f| f.method == Method::Mcap));
    let fixed = Bag::open(&out).unwrap();
    assert!(fixed.problems().is_empty());
    assert_eq!(read_all(&fixed), read_all(&bag));
}
