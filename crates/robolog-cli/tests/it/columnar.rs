//! `robolog export` and `robolog sql` through the built binary. Expected values come from the
//! testdata READMEs and generator scripts.

use crate::support::{robolog, robolog_piped};

const BAG_LZ4: &str = "testdata/bags/generated/ros_comm/ref_lz4.bag";
const MCAP: &str = "testdata/samples/demo-zstd.mcap";
const BDDF: &str = "testdata/bddf/sample.bddf";

#[test]
fn export_writes_one_file_per_topic_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = robolog([
        "export".as_ref(),
        BAG_LZ4.as_ref(),
        MCAP.as_ref(),
        out.as_os_str(),
        "--raw".as_ref(),
    ])
    .expect(0);
    let first = run.stdout.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("wrote 5 files to {} (Parquet, ", out.display())),
        "{first}"
    );
    assert!(first.ends_with("): 450 messages on 5 topics"), "{first}");
    assert!(
        run.stdout
            .contains("exported as raw bytes (cannot be decoded): /blob"),
        "{}",
        run.stdout
    );
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "blob.parquet",
            "chatter.parquet",
            "custom.parquet",
            "imu.parquet",
            "points.parquet"
        ]
    );
    // The chatter topic of both inputs is one file: 50 + 100 rows.
    assert!(
        run.stdout.lines().any(|l| l.contains("/chatter")
            && l.contains("chatter.parquet")
            && l.contains(" 150 ")),
        "{}",
        run.stdout
    );
}

/// An input read from a pipe (`-`) exports the files its path exports, byte for byte: export
/// opens its inputs as the other commands do.
#[test]
fn export_of_a_pipe_writes_what_export_of_the_file_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (from_path, from_pipe) = (dir.path().join("path"), dir.path().join("pipe"));
    robolog([
        "export".as_ref(),
        MCAP.as_ref(),
        from_path.as_os_str(),
        "--raw".as_ref(),
    ])
    .expect(0);
    let bytes = std::fs::read(robolog_testkit::testdata::workspace_root().join(MCAP)).unwrap();
    robolog_piped(
        [
            "export".as_ref(),
            "-".as_ref(),
            from_pipe.as_os_str(),
            "--raw".as_ref(),
        ],
        &bytes,
    )
    .expect(0);
    let files = |dir: &std::path::Path| {
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    e.file_name().to_string_lossy().into_owned(),
                    std::fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    };
    let want = files(&from_path);
    assert!(!want.is_empty());
    assert!(files(&from_pipe) == want, "the pipe's export differs");
}

#[test]
fn export_refuses_undecodable_topics_with_a_hint_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = robolog(["export".as_ref(), MCAP.as_ref(), out.as_os_str()]).expect(1);
    assert_eq!(
        run.stderr.trim(),
        "error: /blob: messages encoded as \"application/octet-stream\" cannot become columns: \
         robolog has no decoder for this encoding; --raw exports such topics as bytes, --topic picks the others"
    );
    assert!(!out.exists());
    let run = robolog([
        "export".as_ref(),
        MCAP.as_ref(),
        out.as_os_str(),
        "--topic".as_ref(),
        "/points".as_ref(),
        "--format".as_ref(),
        "arrow".as_ref(),
        "--start".as_ref(),
        "2023-11-14T22:13:21Z".as_ref(),
    ])
    .expect(0);
    assert!(run.stdout.contains("points.arrow"), "{}", run.stdout);
    assert!(
        run.stdout
            .lines()
            .next()
            .unwrap()
            .ends_with(": 66 messages on 1 topic"),
        "{}",
        run.stdout
    );
}

#[test]
fn sql_prints_tables_json_and_csv() {
    let run = robolog([
        "sql",
        r#"SELECT count(*) AS n, avg(linear_acceleration.z) AS z FROM "/imu""#,
        BAG_LZ4,
    ])
    .expect(0);
    assert_eq!(
        run.stdout,
        "+----+------+\n| n  | z    |\n+----+------+\n| 50 | 9.81 |\n+----+------+\n"
    );
    let run = robolog([
        "sql",
        "SELECT topic, count(*) AS n FROM messages GROUP BY topic ORDER BY topic",
        BAG_LZ4,
        BDDF,
        "--json",
    ])
    .expect(0);
    let rows = run.json_lines();
    assert_eq!(rows.len(), 3 + 7);
    assert_eq!(rows[0], serde_json::json!({"topic": "/chatter", "n": 50}));
    let run = robolog([
        "sql",
        r#"SELECT header.seq AS seq, orientation_covariance[2] AS c FROM "/imu" ORDER BY log_time LIMIT 2"#,
        BAG_LZ4,
        "--csv",
    ])
    .expect(0);
    assert_eq!(run.stdout, "seq,c\n0,1.0\n1,1.0\n");
}

#[test]
fn sql_errors_are_one_line() {
    let run = robolog(["sql", "SELECT nope FROM \"/imu\"", BAG_LZ4]).expect(1);
    assert!(run.stderr.starts_with("error: sql: "), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

/// An MCAP file with `/a` (5000 float64 samples at 100 Hz) and then `/b` (the same times) in
/// small zstd chunks, each chunk of one topic; the compressed records of every chunk for which
/// `ruin(channel, start, end)` holds are overwritten, so that decompressing any of them fails.
/// Returns the file's bytes, the first log time, and how many chunks were spared.
fn two_topics_with_ruined_chunks(ruin: impl Fn(&str, u64, u64) -> bool) -> (Vec<u8>, u64, usize) {
    use robolog::mcap::{Compression, McapReader, Message, WriteOptions, Writer};

    let start = 1_700_000_000_000_000_000u64;
    let options = WriteOptions::new()
        .compression(Compression::Zstd)
        .chunk_size(Some(4096));
    let mut writer = Writer::new(Vec::new(), options).unwrap();
    let schema = writer
        .register_schema("p/Sample", "ros1msg", b"float64 x\nuint32 i\n")
        .unwrap();
    let a = writer
        .register_channel("/a", "ros1", schema, Default::default())
        .unwrap();
    let b = writer
        .register_channel("/b", "ros1", schema, Default::default())
        .unwrap();
    for channel in [a, b] {
        for i in 0..5000u64 {
            let mut data = (i as f64 * 0.5).to_le_bytes().to_vec();
            data.extend_from_slice(&(i as u32).to_le_bytes());
            let time = start + i * 10_000_000;
            writer
                .write_message(&Message {
                    channel_id: channel,
                    sequence: i as u32,
                    log_time: time,
                    publish_time: time,
                    data: &data,
                })
                .unwrap();
        }
        // The next topic starts a chunk of its own.
        writer.flush_chunk().unwrap();
    }
    let mut data = writer.finish().unwrap();
    let reader = McapReader::open(data.clone()).unwrap();
    let chunks = reader.summary().chunk_indexes.clone();
    assert!(chunks.len() > 50, "{}", chunks.len());
    let mut spared = 0;
    for chunk in &chunks {
        let ids: Vec<u16> = chunk.message_index_offsets.keys().copied().collect();
        assert_eq!(ids.len(), 1, "one topic per chunk");
        let topic = if ids[0] == a { "/a" } else { "/b" };
        if !ruin(topic, chunk.message_start_time, chunk.message_end_time) {
            spared += 1;
            continue;
        }
        // Opcode, length, start, end, uncompressed size and CRC, "zstd", records length.
        let records = (chunk.chunk_start_offset + 1 + 8 + 8 + 8 + 8 + 4 + 4 + 4 + 8) as usize;
        data[records..records + 8].copy_from_slice(b"RUINED!!");
    }
    (data, start, spared)
}

/// `robolog sql` hands filters on `log_time` and `topic` to the log's index: the chunks outside
/// them are never decompressed (they are ruined here, and reading any fails the query).
#[test]
fn sql_never_decompresses_chunks_outside_the_time_range_and_topic() {
    const MS: u64 = 1_000_000;
    // 1% of /a: samples 2500..2550, 500 ms from 1700000025 s.
    let (data, start, spared) = two_topics_with_ruined_chunks(|topic, first, last| {
        let (lo, hi) = (
            1_700_000_000_000_000_000 + 25_000 * MS,
            1_700_000_000_000_000_000 + 25_500 * MS,
        );
        topic == "/b" || last < lo || first >= hi
    });
    assert!(spared <= 3, "{spared} chunks hold the range");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.mcap");
    std::fs::write(&path, &data).unwrap();
    let file = path.to_str().unwrap();
    let (lo, hi) = (start + 25_000 * MS, start + 25_500 * MS);
    let run = robolog([
        "sql",
        &format!(
            r#"SELECT count(*) AS n, sum(i) AS s, avg(x) AS x FROM "/a"
               WHERE log_time >= to_timestamp_nanos({lo}) AND log_time < to_timestamp_nanos({hi})"#
        ),
        file,
        "--json",
    ])
    .expect(0);
    let (n, s) = (50u64, (2500..2550u64).sum::<u64>());
    assert_eq!(
        run.json_lines(),
        [serde_json::json!({"n": n, "s": s, "x": s as f64 * 0.5 / n as f64})]
    );
    // The same range as RFC 3339 text, on `messages` with a topic filter.
    let run = robolog([
        "sql",
        "SELECT count(*) AS n, min(size) AS size FROM messages WHERE topic = '/a' \
         AND log_time >= '2023-11-14T22:13:45Z' AND log_time < '2023-11-14T22:13:45.5Z'",
        file,
        "--csv",
    ])
    .expect(0);
    assert_eq!(run.stdout, "n,size\n50,12\n");
    // Without the filters the ruined chunks are read, and the query fails.
    let run = robolog([
        "sql",
        r#"SELECT count(*) FROM messages WHERE topic = '/b'"#,
        file,
    ])
    .expect(1);
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    let run = robolog(["sql", r#"SELECT avg(x) FROM "/a""#, file]).expect(1);
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);

    // A topic filter alone: every /b chunk ruined, every /a chunk intact.
    let (data, _, _) = two_topics_with_ruined_chunks(|topic, _, _| topic == "/b");
    std::fs::write(&path, &data).unwrap();
    let run = robolog([
        "sql",
        "SELECT topic, count(*) AS n FROM messages WHERE topic IN ('/a', '/nope') GROUP BY topic",
        file,
        "--csv",
    ])
    .expect(0);
    assert_eq!(run.stdout, "topic,n\n/a,5000\n");
    let run = robolog([
        "sql",
        r#"SELECT count(*) AS n, max(i) AS i FROM "/a""#,
        file,
        "--csv",
    ])
    .expect(0);
    assert_eq!(run.stdout, "n,i\n5000,4999\n");
    robolog(["sql", "SELECT count(*) FROM messages", file]).expect(1);
}
