//! Reading a `.db3`'s messages: what the reader returns equals SQLite's own answer to the same
//! question, in every order and with a topic filter, on a file with interior pages, overflow
//! pages and, after an update, rows whose row-id order is not their time order; read and
//! memory-mapped alike.

use std::path::Path;

use robolog_rosbag2::{Bag, OpenOptions, Order, StorageId, WriteOptions};

use crate::support::{cdr_string, rows, write_bag};

type Row = (String, u64, Vec<u8>);

/// SQLite's answer: (topic, time, data) of the messages `filter` selects, in `order`.
fn sqlite_rows(db3: &Path, filter: &str, order: &str) -> Vec<Row> {
    let conn = rusqlite::Connection::open(db3).unwrap();
    let sql = format!(
        "SELECT topics.name, timestamp, data FROM messages JOIN topics ON topics.id = topic_id \
         {filter} ORDER BY {order}"
    );
    let mut stmt = conn.prepare(&sql).unwrap();
    stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)? as u64,
            r.get::<_, Vec<u8>>(2)?,
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Ours: the same through the reader.
fn our_rows(bag: &Bag, topics: Option<&[&str]>, order: Order) -> Vec<Row> {
    let mut query = bag.messages().order(order);
    if let Some(topics) = topics {
        query = query.topics(topics.iter().copied());
    }
    rows(bag, query)
}

/// How many pages of each kind SQLite's `dbstat` counts in the messages table.
fn page_kinds(db3: &Path) -> (usize, usize) {
    let conn = rusqlite::Connection::open(db3).unwrap();
    let count = |kind: &str| -> usize {
        conn.query_row(
            "SELECT count(*) FROM dbstat WHERE name = 'messages' AND pagetype = ?1",
            [kind],
            |r| r.get::<_, i64>(0),
        )
        .unwrap() as usize
    };
    (count("internal"), count("overflow"))
}

/// The bag at `dir` read, and memory-mapped.
#[allow(unsafe_code)]
fn both_ways(dir: &Path) -> [(Bag, &'static str); 2] {
    // SAFETY: the test's files are not written while the mapped bag is open.
    let mapped = unsafe { OpenOptions::new().memory_map() };
    [
        (Bag::open(dir).unwrap(), "read"),
        (mapped.open(dir).unwrap(), "mapped"),
    ]
}

fn assert_reads_like_sqlite(dir: &Path, db3: &Path, what: &str) {
    for (bag, how) in both_ways(dir) {
        assert_bag_reads_like_sqlite(&bag, db3, &format!("{what}, {how}"));
    }
}

fn assert_bag_reads_like_sqlite(bag: &Bag, db3: &Path, what: &str) {
    let cases: [(Option<&[&str]>, Order, &str, &str); 5] = [
        (None, Order::LogTime, "", "timestamp, messages.id"),
        (None, Order::File, "", "messages.id"),
        (
            None,
            Order::ReverseLogTime,
            "",
            "timestamp DESC, messages.id DESC",
        ),
        (
            Some(&["/other"]),
            Order::LogTime,
            "WHERE topics.name = '/other'",
            "timestamp, messages.id",
        ),
        (
            Some(&["/chatter"]),
            Order::File,
            "WHERE topics.name = '/chatter'",
            "messages.id",
        ),
    ];
    for (topics, order, filter, sql_order) in cases {
        let want = sqlite_rows(db3, filter, sql_order);
        assert!(!want.is_empty());
        let got = our_rows(bag, topics, order);
        assert_eq!(got.len(), want.len(), "{what}: {order:?} {topics:?}");
        assert!(got == want, "{what}: {order:?} {topics:?}: other rows");
    }
}

#[test]
fn messages_are_what_sqlite_answers_in_every_order() {
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("bag");
    // Sizes up to 30 kB: many cells continue on chains of overflow pages.
    let messages: Vec<(usize, u64, Vec<u8>)> = (0..8000)
        .map(|i| {
            let time = 1_700_000_000_000_000_000 + (i as u64 / 3) * 1_000_000;
            let len = if i % 10 == 0 {
                i * 97 % 30_000
            } else {
                i % 900
            };
            (i % 3 % 2, time, cdr_string(&"y".repeat(len)))
        })
        .collect();
    write_bag(
        &bag,
        WriteOptions::new().storage(StorageId::Sqlite3),
        &messages,
    );
    let db3 = bag.join("bag_0.db3");
    let (internal, overflow) = page_kinds(&db3);
    assert!(internal > 1 && overflow > 100, "{internal} {overflow}");
    assert_reads_like_sqlite(&bag, &db3, "written in time order");

    // Every seventh row later in time: row-id order is no longer time order.
    let conn = rusqlite::Connection::open(&db3).unwrap();
    conn.execute(
        "UPDATE messages SET timestamp = timestamp + 500000000 WHERE id % 7 = 0",
        [],
    )
    .unwrap();
    drop(conn);
    assert!(!Path::new(&format!("{}-wal", db3.display())).exists());
    assert_reads_like_sqlite(&bag, &db3, "updated out of time order");
}

/// A byte changed anywhere in the file: the reader returns rows, or an error, and ends; it
/// never panics or loops, read or memory-mapped.
#[test]
fn damaged_pages_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let bag = dir.path().join("bag");
    let messages: Vec<(usize, u64, Vec<u8>)> = (0..400)
        .map(|i| {
            let len = if i % 25 == 0 { 9000 } else { i % 200 };
            (i % 2, 1_000 + i as u64, cdr_string(&"z".repeat(len)))
        })
        .collect();
    write_bag(
        &bag,
        WriteOptions::new().storage(StorageId::Sqlite3),
        &messages,
    );
    let db3 = bag.join("bag_0.db3");
    let original = std::fs::read(&db3).unwrap();
    let mut errors = 0;
    for at in (100..original.len()).step_by(401) {
        for flip in [0xff, 0x01] {
            let mut bytes = original.clone();
            bytes[at] ^= flip;
            std::fs::write(&db3, &bytes).unwrap();
            // SAFETY: the file is rewritten only after both bags are dropped.
            #[allow(unsafe_code)]
            let mapped = unsafe { OpenOptions::new().memory_map() };
            for options in [OpenOptions::new(), mapped] {
                let Ok(opened) = options.open(&bag) else {
                    errors += 1;
                    continue;
                };
                for order in [Order::LogTime, Order::File] {
                    match opened.messages().order(order).iter() {
                        Ok(iter) => errors += iter.filter(Result::is_err).count(),
                        Err(_) => errors += 1,
                    }
                }
            }
        }
    }
    assert!(errors > 0);
}
