//! Interop: every file exported from every sample is read by pyarrow, value for value, and the
//! Parquet ones are counted by DuckDB (tests/it/interop/read_exports.py; venv from
//! scripts/interop-venv.sh). DuckDB queries on nested fields check that structs read as
//! structs, for ROS 1 and ROS 2 messages.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use arrow::array::RecordBatch;
use arrow::ipc::reader::FileReader;
use robolog_arrow::{ExportFormat, ExportOptions};
use robolog_testkit::{interop, testdata};
use serde_json::Value;

use crate::support::{read_parquet, rows, samples};

fn read_ipc(path: &Path) -> Vec<RecordBatch> {
    let reader = FileReader::try_new(std::fs::File::open(path).unwrap(), None).unwrap();
    reader.map(Result::unwrap).collect()
}

/// Equal JSON values, where a float32 column's values may come back widened to float64
/// (pyarrow converts to Python floats; our JSON writes the shortest float32 text).
fn same(theirs: &Value, ours: &Value) -> bool {
    match (theirs, ours) {
        (Value::Number(a), Value::Number(b)) => {
            if a == b {
                return true;
            }
            match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => {
                    x == y || (!a.is_u64() && !a.is_i64() && x as f32 == y as f32)
                }
                _ => false,
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
        }
        _ => theirs == ours,
    }
}

#[test]
fn pyarrow_reads_every_exported_file_value_for_value_and_duckdb_counts_the_rows() {
    let Some(python) = interop::python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Expected per file: our own rows, read back with arrow-rs.
    let mut expected = Vec::new();
    let mut args: Vec<OsString> = Vec::new();
    for (i, path) in samples().iter().enumerate() {
        let log = robolog::open(path).unwrap();
        for format in [ExportFormat::Parquet, ExportFormat::ArrowIpc] {
            let out = dir.path().join(format!("{i}-{}", format.extension()));
            let report = robolog_arrow::export(
                &[&log],
                &out,
                ExportOptions::new().format(format).raw_undecodable(true),
            )
            .unwrap();
            for file in report.files {
                let ours = match format {
                    ExportFormat::Parquet => rows(&read_parquet(&file.path)),
                    _ => rows(&read_ipc(&file.path)),
                };
                assert_eq!(ours.len() as u64, file.rows);
                args.push(file.path.clone().into());
                expected.push((file.path, ours));
            }
        }
    }
    assert!(expected.len() > 100, "{}", expected.len());
    let script =
        testdata::workspace_root().join("crates/robolog-arrow/tests/it/interop/read_exports.py");
    let refs: Vec<&std::ffi::OsStr> = args.iter().map(OsString::as_os_str).collect();
    let output = interop::run(&python, &script, &refs).unwrap();
    let seen: Vec<Value> = output
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(seen.len(), expected.len());
    let mut compared = 0;
    for (got, (path, ours)) in seen.iter().zip(&expected) {
        let name = path.display().to_string();
        assert_eq!(got["file"], name);
        assert_eq!(got["pyarrow_rows"], ours.len(), "{name}");
        if path.extension().is_some_and(|e| e == "parquet") {
            assert_eq!(got["duckdb_rows"], ours.len(), "{name}");
        }
        let theirs = got["rows"].as_array().unwrap();
        assert_eq!(theirs.len(), ours.len(), "{name}");
        for (k, (a, b)) in theirs.iter().zip(ours).enumerate() {
            assert!(same(a, b), "{name} row {k}:\npyarrow: {a}\nrobolog: {b}");
            compared += 1;
        }
    }
    // Every row of every sample, twice (Parquet and Arrow IPC).
    assert!(compared > 22_000, "{compared}");
}

/// Runs one DuckDB query on `file` (bound as `?`) and returns its one row as Python prints it.
fn duckdb_row(python: &Path, query: &str, file: &Path) -> String {
    let output = Command::new(python)
        .arg("-c")
        .arg("import duckdb, sys; print(duckdb.execute(sys.argv[1], [sys.argv[2]]).fetchone())")
        .arg(query)
        .arg(file)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

#[test]
fn duckdb_reads_nested_columns_as_structs() {
    let Some(python) = interop::python() else {
        return;
    };
    let log = robolog::open(testdata::path("bags/generated/ros_comm/ref_lz4.bag")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    robolog_arrow::export(&[&log], dir.path(), ExportOptions::new()).unwrap();
    let row = duckdb_row(
        &python,
        "SELECT count(*), avg(linear_acceleration.z), max(header.stamp.sec), min(header.frame_id) FROM read_parquet(?)",
        &dir.path().join("imu.parquet"),
    );
    assert_eq!(row, "(50, 9.81, 1600000000, 'imu_link')");
}

/// ROS 2 messages exported and queried by DuckDB: the stamp struct and the strings, against
/// the decoder's values.
#[test]
fn duckdb_reads_ros2_exports() {
    let Some(python) = interop::python() else {
        return;
    };
    let log = robolog::open(testdata::path("rosbag2/mcap-talker")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    robolog_arrow::export(&[&log], dir.path(), ExportOptions::new()).unwrap();
    let mut decoder = robolog::Decoder::new();
    let (mut n, mut sec, mut ns, mut name) = (0u64, 0i64, 0u64, String::new());
    for message in log.messages().topics(["/rosout"]).iter().unwrap() {
        let message = message.unwrap();
        let robolog::Decoded::Cdr(m) = decoder.decode(&message).unwrap() else {
            panic!()
        };
        n += 1;
        sec = sec.max(m.get("stamp.sec").unwrap().as_i64().unwrap());
        ns += m.get("stamp.nanosec").unwrap().as_u64().unwrap();
        name = m.get("name").unwrap().as_str().unwrap().to_owned();
    }
    let row = duckdb_row(
        &python,
        "SELECT count(*), max(stamp.sec), sum(stamp.nanosec), min(name) FROM read_parquet(?)",
        &dir.path().join("rosout.parquet"),
    );
    assert_eq!(row, format!("({n}, {sec}, {ns}, '{name}')"));
}
