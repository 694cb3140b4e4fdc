//! Shared helpers: the sample logs, reading exported files back, rows as JSON.

use std::path::{Path, PathBuf};

use arrow::array::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use robolog_testkit::testdata;

/// Every sample log the export must handle: ROS 1 bags (1.2 and 2.0), the MCAP samples (ROS 1,
/// JSON and raw channels), the BDDF samples and the rosbag2 recordings (ROS 2). Damaged files (cut, bit-flipped) are left out:
/// their messages end in a read error.
pub(crate) fn samples() -> Vec<PathBuf> {
    let mut out = testdata::files_with_extension("bags", ".bag");
    out.retain(|p| {
        let name = p.file_name().unwrap().to_string_lossy();
        ![
            "empty-file.bag",
            "v20_killed.bag",
            "v20_unindexed.bag",
            "v12_unindexed.bag",
            "v12_noheader.bag",
        ]
        .contains(&name.as_ref())
    });
    out.extend(
        testdata::files_with_extension("samples", ".mcap")
            .into_iter()
            .filter(|p| !p.to_string_lossy().contains("truncated")),
    );
    out.push(testdata::path("bddf/sample.bddf"));
    out.push(testdata::path("bddf/golden_one_msg.bddf"));
    out.extend(ros2_samples());
    out
}

/// The rosbag2 recordings (ROS 2, CDR): bag directories and lone storage files.
pub(crate) fn ros2_samples() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = [
        "mcap-talker",
        "sqlite3-talker",
        "mcap-convert_a",
        "sqlite3-convert_b",
        "mcap-service_events",
        "empty_bag",
    ]
    .iter()
    .map(|d| testdata::path(format!("rosbag2/{d}")))
    .collect();
    for name in [
        "only_topics.mcap",
        "only_services.mcap",
        "topics_and_services.mcap",
        "topics_and_services.db3",
    ] {
        out.push(testdata::path(format!("rosbag2/files/{name}")));
    }
    out
}

/// Every batch of a Parquet file.
pub(crate) fn read_parquet(path: &Path) -> Vec<RecordBatch> {
    let file = std::fs::File::open(path).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Each row as a JSON object (robolog's rules, see `write_json_lines`).
pub(crate) fn rows(batches: &[RecordBatch]) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    robolog_arrow::write_json_lines(batches, &mut out).unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
