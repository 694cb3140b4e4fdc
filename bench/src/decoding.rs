//! `cargo xtask bench --decoding`: message decoding and rendering, the rows of issue 29.
//!
//! - **decode**: `sensor_msgs/Imu` and `sensor_msgs/PointCloud2` (64 KiB and 16 MiB of points)
//!   decoded to values by robolog-cdr (`Plan::decode_into`, a reused tree), by a hand-written,
//!   statically typed decoder of the same structs (robolog-cdr's `benches/support/fixed.rs`,
//!   the limit for a dynamic decoder) and by rosbags' `deserialize_cdr` (a Python child in the
//!   interop venv, same bytes). Times are CPU time per message in this process.
//! - **cat**: `robolog cat --json --decode` on an MCAP file of ROS 1 `sensor_msgs/Imu` messages
//!   and on the same messages as ROS 2 CDR, against the official `mcap` CLI's
//!   `cat --format ndjson` on the ROS 1 file (it cannot decode CDR). Wall time, CPU time and
//!   peak RSS of the whole process, output to /dev/null, the commands alternating round after
//!   round, the median round by wall time. The `mcap` CLI
//!   is not built here: give its path in `ROBOLOG_BENCH_MCAP_CLI` (BENCHMARKS.md says how it
//!   was built); without it those rows say so.

use std::collections::BTreeMap;
use std::fs;
use std::hint::black_box;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use robolog_framing::AtomicFile;
use robolog_mcap::{Compression, Message, WriteOptions, Writer};

use super::process::{Run, time_commands};

#[path = "../../crates/robolog-cdr/benches/support/fixed.rs"]
mod fixed;
// The benchmark messages are built from constants that fit their definitions: a failure there
// is a bug of the benchmark, not input to report.
#[allow(clippy::unwrap_used)]
#[path = "../../crates/robolog-cdr/benches/support/messages.rs"]
mod messages;

/// `sensor_msgs/Imu` as ROS 1 bags and `ros1msg` schemas store it.
const IMU_ROS1: &str = include_str!("../../testdata/msg/sensor_msgs_Imu.msgdef");

/// How many Imu messages the cat files hold.
pub(super) fn imu_count(quick: bool) -> usize {
    if quick { 20_000 } else { 200_000 }
}

/// The CPU time of this process, in seconds.
fn cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// CPU seconds per call of `f`, the median of `rounds` rounds of `calls` calls.
fn per_call(rounds: usize, calls: usize, mut f: impl FnMut() -> usize) -> f64 {
    let mut sink = 0usize;
    let mut times: Vec<f64> = (0..rounds)
        .map(|_| {
            let start = cpu_seconds();
            for _ in 0..calls {
                sink = sink.wrapping_add(f());
            }
            (cpu_seconds() - start) / calls as f64
        })
        .collect();
    black_box(sink);
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// One decode row.
struct DecodeRow {
    message: String,
    bytes: usize,
    robolog: f64,
    fixed: f64,
    rosbags: Option<f64>,
}

/// rosbags' seconds per `deserialize_cdr` call for each file, from the interop venv.
fn rosbags_times(root: &Path, files: &[(String, PathBuf, &str)]) -> Result<Vec<f64>, String> {
    let python = root.join("target/interop-venv/bin/python");
    if !python.exists() {
        return Err("no interop venv (scripts/interop-venv.sh)".to_owned());
    }
    let script = "
import statistics, sys, time
from rosbags.typesys import Stores, get_typestore
store = get_typestore(Stores.ROS2_JAZZY)
for path, typename in zip(sys.argv[1::2], sys.argv[2::2]):
    data = open(path, 'rb').read()
    store.deserialize_cdr(data, typename)
    start = time.process_time(); store.deserialize_cdr(data, typename)
    calls = max(1, int(0.2 / max(time.process_time() - start, 1e-7)))
    rounds = []
    for _ in range(9):
        start = time.process_time()
        for _ in range(calls):
            store.deserialize_cdr(data, typename)
        rounds.append((time.process_time() - start) / calls)
    print(statistics.median(rounds))
";
    let mut command = Command::new(python);
    command.arg("-c").arg(script);
    for (_, path, typename) in files {
        command.arg(path).arg(typename);
    }
    let output = command.output().map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| line.trim().parse::<f64>().map_err(|e| e.to_string()))
        .collect()
}

fn decode_rows(root: &Path, quick: bool) -> Result<Vec<DecodeRow>, String> {
    let rounds = if quick { 5 } else { 15 };
    let dir = root.join("target/bench-data/decoding");
    fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    let mut saved = Vec::new();

    let imu_plan =
        robolog_cdr::Plan::from_bundle("sensor_msgs/msg/Imu", &messages::imu_definition())
            .map_err(|e| e.to_string())?;
    let imu = messages::imu_message(&imu_plan);
    let mut tree = robolog_cdr::Tree::new();
    let calls = if quick { 20_000 } else { 200_000 };
    let robolog = per_call(rounds, calls, || {
        imu_plan
            .decode_into(black_box(&imu), &mut tree)
            .map_or(0, |d| d.end())
    });
    let fixed = per_call(rounds, calls, || {
        fixed::Reader::new(black_box(&imu))
            .and_then(|mut r| r.imu())
            .map_or(0, |m| m.header.frame_id.len())
    });
    let path = dir.join("imu.cdr");
    fs::write(&path, &imu).map_err(|e| e.to_string())?;
    saved.push(("sensor_msgs/Imu".to_owned(), path, "sensor_msgs/msg/Imu"));
    rows.push(DecodeRow {
        message: "sensor_msgs/Imu".into(),
        bytes: imu.len(),
        robolog,
        fixed,
        rosbags: None,
    });

    let cloud_plan = robolog_cdr::Plan::from_bundle(
        "sensor_msgs/msg/PointCloud2",
        &messages::cloud_definition(),
    )
    .map_err(|e| e.to_string())?;
    for size in [64usize << 10, 16 << 20] {
        let data: Vec<u8> = (0..size).map(|i| i as u8).collect();
        let cloud = messages::cloud_message(&cloud_plan, &data);
        let calls = if quick { 10_000 } else { 100_000 };
        let mut tree = robolog_cdr::Tree::new();
        let robolog = per_call(rounds, calls, || {
            cloud_plan
                .decode_into(black_box(&cloud), &mut tree)
                .map_or(0, |d| d.end())
        });
        let fixed = per_call(rounds, calls, || {
            fixed::Reader::new(black_box(&cloud))
                .and_then(|mut r| r.point_cloud2())
                .map_or(0, |m| m.fields.len())
        });
        let name = format!("sensor_msgs/PointCloud2 ({} KiB)", size >> 10);
        let path = dir.join(format!("cloud{}k.cdr", size >> 10));
        fs::write(&path, &cloud).map_err(|e| e.to_string())?;
        saved.push((name.clone(), path, "sensor_msgs/msg/PointCloud2"));
        rows.push(DecodeRow {
            message: name,
            bytes: cloud.len(),
            robolog,
            fixed,
            rosbags: None,
        });
    }
    match rosbags_times(root, &saved) {
        Ok(times) => {
            for (row, time) in rows.iter_mut().zip(times) {
                row.rosbags = Some(time);
            }
        }
        Err(e) => eprintln!("bench: rosbags not measured: {e}"),
    }
    Ok(rows)
}

/// Writes the payload of message `i` into the buffer.
type Encode<'a> = &'a dyn Fn(usize, &mut Vec<u8>) -> Result<(), String>;

/// Writes the two cat files (ROS 1 and CDR, the same Imu messages) unless they exist.
fn cat_files(root: &Path, quick: bool) -> Result<(PathBuf, PathBuf), String> {
    let count = imu_count(quick);
    let dir = root.join("target/bench-data/decoding");
    Ok((
        imu_file(&dir, count, ImuEncoding::Ros1, Compression::None)?,
        imu_file(&dir, count, ImuEncoding::Cdr, Compression::None)?,
    ))
}

/// How the messages of an Imu file are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ImuEncoding {
    /// ROS 1 (`ros1`, `ros1msg` schema).
    Ros1,
    /// ROS 2 (`cdr`, `ros2msg` schema).
    Cdr,
}

/// The first message's log time; one message every 5 ms (200 Hz) after it.
pub(super) const IMU_START_NS: u64 = 1_700_000_000_000_000_000;
/// The time between two Imu messages.
pub(super) const IMU_PERIOD_NS: u64 = 5_000_000;

/// Writes, unless it exists, an MCAP file in `dir` of `count` `sensor_msgs/Imu` messages on
/// `/imu` at 200 Hz from [`IMU_START_NS`], with chunks compressed by `compression`; returns its
/// path. The values change from message to message, as a real IMU's do.
pub(super) fn imu_file(
    dir: &Path,
    count: usize,
    encoding: ImuEncoding,
    compression: Compression,
) -> Result<PathBuf, String> {
    fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let kind = match encoding {
        ImuEncoding::Ros1 => "ros1",
        ImuEncoding::Cdr => "cdr",
    };
    let codec = match compression {
        Compression::None => String::new(),
        other => format!("{}-", other.name()),
    };
    let path = dir.join(format!("imu-{kind}-{codec}{count}.mcap"));
    if path.exists() {
        return Ok(path);
    }
    let write = |encoding: &str,
                 schema_encoding: &str,
                 name: &str,
                 definition: &str,
                 encode: Encode<'_>|
     -> Result<(), String> {
        let err = |e: &dyn std::fmt::Display| format!("writing {}: {e}", path.display());
        let file = AtomicFile::create(&path).map_err(|e| err(&e))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let options = WriteOptions::new().compression(compression);
        let mut writer = Writer::new(&mut out, options).map_err(|e| err(&e))?;
        let schema = writer
            .register_schema(name, schema_encoding, definition.as_bytes())
            .map_err(|e| err(&e))?;
        let channel = writer
            .register_channel("/imu", encoding, schema, BTreeMap::new())
            .map_err(|e| err(&e))?;
        let mut buf = Vec::new();
        for i in 0..count {
            buf.clear();
            encode(i, &mut buf)?;
            let time = IMU_START_NS + i as u64 * IMU_PERIOD_NS;
            writer
                .write_message(&Message {
                    channel_id: channel,
                    sequence: i as u32,
                    log_time: time,
                    publish_time: time,
                    data: &buf,
                })
                .map_err(|e| err(&e))?;
        }
        writer.finish().map_err(|e| err(&e))?;
        out.flush().map_err(|e| err(&e))?;
        let file = out.into_inner().map_err(|e| err(&e.error()))?;
        file.commit().map_err(|e| err(&e))
    };
    let value = |i: usize, k: usize| ((i * 7 + k * 13) % 1000) as f64 * 0.001 - 0.5;
    match encoding {
        ImuEncoding::Ros1 => {
            let plan = robolog_ros1::Plan::from_bundle("sensor_msgs/Imu", IMU_ROS1)
                .map_err(|e| e.to_string())?;
            write("ros1", "ros1msg", "sensor_msgs/Imu", IMU_ROS1, &|i, buf| {
                use robolog_ros1::{PrimitiveArray, Time, Tree, Value};
                let covariance = robolog_ros1::le_bytes(&[0.01f64; 9]);
                let mut tree = Tree::new();
                let header = tree.push_message([
                    Value::UInt32(i as u32),
                    Value::Time(Time {
                        secs: 1_700_000_000 + (i / 200) as u32,
                        nsecs: (i % 200) as u32 * 5_000_000,
                    }),
                    Value::String(b"imu_link"),
                ]);
                let orientation =
                    tree.push_message([0.0, 0.0, value(i, 1), 1.0].map(Value::Float64));
                let angular =
                    tree.push_message([value(i, 2), value(i, 3), value(i, 4)].map(Value::Float64));
                let linear =
                    tree.push_message([value(i, 5), value(i, 6), 9.81].map(Value::Float64));
                let covariance =
                    Value::Array(PrimitiveArray::of::<f64>(&covariance).ok_or("array")?);
                tree.set_root_fields([
                    header,
                    orientation,
                    covariance,
                    angular,
                    covariance,
                    linear,
                    covariance,
                ]);
                plan.encode_into(&tree, buf).map_err(|e| e.to_string())
            })?;
        }
        ImuEncoding::Cdr => {
            let definition = messages::imu_definition();
            let plan = robolog_cdr::Plan::from_bundle("sensor_msgs/msg/Imu", &definition)
                .map_err(|e| e.to_string())?;
            write(
                "cdr",
                "ros2msg",
                "sensor_msgs/msg/Imu",
                &definition,
                &|i, buf| {
                    use robolog_cdr::{Encapsulation, PrimitiveArray, Tree, Value};
                    let covariance = robolog_cdr::le_bytes(&[0.01f64; 9]);
                    let mut tree = Tree::new();
                    let stamp = tree.push_message([
                        Value::Int32(1_700_000_000 + (i / 200) as i32),
                        Value::UInt32((i % 200) as u32 * 5_000_000),
                    ]);
                    let header = tree.push_message([stamp, Value::String(b"imu_link")]);
                    let orientation =
                        tree.push_message([0.0, 0.0, value(i, 1), 1.0].map(Value::Float64));
                    let angular = tree
                        .push_message([value(i, 2), value(i, 3), value(i, 4)].map(Value::Float64));
                    let linear =
                        tree.push_message([value(i, 5), value(i, 6), 9.81].map(Value::Float64));
                    let covariance =
                        Value::Array(PrimitiveArray::of::<f64>(&covariance).ok_or("array")?);
                    tree.set_root_fields([
                        header,
                        orientation,
                        covariance,
                        angular,
                        covariance,
                        linear,
                        covariance,
                    ]);
                    plan.encode_into(&tree, Encapsulation::CdrLe, buf)
                        .map_err(|e| e.to_string())
                },
            )?;
        }
    }
    Ok(path)
}

fn micros(seconds: f64) -> String {
    if seconds < 1e-6 {
        format!("{:.0} ns", seconds * 1e9)
    } else {
        format!("{:.2} µs", seconds * 1e6)
    }
}

fn check(met: bool) -> &'static str {
    if met { "✓" } else { "✗" }
}

/// Runs both parts and returns the report (markdown).
pub(crate) fn run(root: &Path, quick: bool) -> Result<String, String> {
    let mut s = String::new();
    eprintln!("bench: decoding (robolog-cdr, the hand-written decoder, rosbags)");
    let rows = decode_rows(root, quick)?;
    s.push_str("\n## Decoding ROS 2 messages\n\n");
    s.push_str("| message | bytes | robolog-cdr | hand-written | rosbags | vs hand-written | vs rosbags | targets |\n");
    s.push_str("|---|---|---|---|---|---|---|---|\n");
    for row in &rows {
        let vs_fixed = row.fixed / row.robolog;
        let vs_rosbags = row.rosbags.map(|r| r / row.robolog);
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.0}% | {} | {} ≥50% hand-written, {} |\n",
            row.message,
            row.bytes,
            micros(row.robolog),
            micros(row.fixed),
            row.rosbags.map_or("—".to_owned(), micros),
            vs_fixed * 100.0,
            vs_rosbags.map_or("—".to_owned(), |r| format!("{r:.0}×")),
            check(vs_fixed >= 0.5),
            vs_rosbags.map_or("rosbags not measured".to_owned(), |r| format!(
                "{} ≥30× rosbags",
                check(r >= 30.0)
            )),
        ));
    }
    if let [_, small, large] = rows.as_slice() {
        s.push_str(&format!(
            "\nPointCloud2 with 16 MiB of points takes {:.2}× the time of 64 KiB (the payload is \
             borrowed, never copied).\n",
            large.robolog / small.robolog
        ));
    }

    eprintln!("bench: cat --json --decode (robolog, the mcap CLI)");
    let (ros1, cdr) = cat_files(root, quick)?;
    let robolog = crate::release_robolog(root)?;
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let mut commands = vec![
        vec![
            path(&robolog),
            "cat".into(),
            "--json".into(),
            "--decode".into(),
            path(&ros1),
        ],
        vec![
            path(&robolog),
            "cat".into(),
            "--json".into(),
            "--decode".into(),
            path(&cdr),
        ],
    ];
    let mcap_cli = std::env::var_os("ROBOLOG_BENCH_MCAP_CLI").map(PathBuf::from);
    if let Some(cli) = &mcap_cli {
        commands.push(vec![
            path(cli),
            "cat".into(),
            "--format".into(),
            "ndjson".into(),
            path(&ros1),
        ]);
    }
    let times = time_commands(&commands, if quick { 3 } else { 7 });
    let count = imu_count(quick);
    s.push_str(&format!(
        "\n## `cat --json --decode`, {count} `sensor_msgs/Imu` messages\n\n"
    ));
    s.push_str(
        "| command | file | wall (median) | CPU | peak RSS | wall ratio to `mcap cat` | CPU ratio | target (wall) |\n",
    );
    s.push_str("|---|---|---|---|---|---|---|---|\n");
    let peer = times.get(2).copied().flatten();
    let figures = |run: Option<Run>| match run {
        Some(r) => format!(
            "{:.1} ms | {:.1} ms | {:.1} MB",
            r.wall * 1e3,
            r.cpu * 1e3,
            r.peak_mb
        ),
        None => "failed | — | —".to_owned(),
    };
    for (label, file, run) in [
        ("robolog cat --json --decode", "ROS 1", times[0]),
        ("robolog cat --json --decode", "ROS 2 (CDR)", times[1]),
    ] {
        let ratios = run.zip(peer).map(|(ours, theirs)| {
            (
                theirs.wall / ours.wall,
                (ours.cpu > 0.0).then(|| theirs.cpu / ours.cpu),
            )
        });
        s.push_str(&format!(
            "| `{label}` | {file} | {} | {} | {} | {} |\n",
            figures(run),
            ratios.map_or("—".to_owned(), |(r, _)| format!("{r:.2}×")),
            ratios
                .and_then(|(_, c)| c)
                .map_or("—".to_owned(), |c| format!("{c:.2}×")),
            ratios.map_or("mcap CLI not measured".to_owned(), |(r, _)| format!(
                "{} ≥2×",
                check(r >= 2.0)
            )),
        ));
    }
    s.push_str(&format!(
        "| `mcap cat --format ndjson` | ROS 1 | {} | 1.00× | 1.00× | |\n",
        match (&mcap_cli, peer) {
            (None, _) => "not measured (ROBOLOG_BENCH_MCAP_CLI unset) | — | —".to_owned(),
            (Some(_), run) => figures(run),
        }
    ));
    Ok(s)
}
