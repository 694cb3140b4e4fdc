//! Builds the seed corpus of every fuzz target under `fuzz/corpus/<target>/` from the files in
//! `testdata/` (and `testdata/bad/`), plus a few small files written by our own writers so that
//! every codec appears in a seed short enough for `-max_len`.
//!
//! Usage: `cargo run --manifest-path fuzz/Cargo.toml -p robolog-fuzz-seeds [-- <corpus dir>]`.
//! Deterministic: seeds are named after their source, so running it twice changes nothing.

use std::collections::BTreeSet;
use std::error::Error;
use std::fs;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use robolog_bddf::proto::{MessageTypeDescriptor, PodType};
use robolog_bddf::{BddfWriter, series_identifier};
use robolog_framing::Bytes;
use robolog_rosbag::{Bag, ChunkCompression, WriteOptions, Writer};

/// Seeds longer than this are left out: libFuzzer would cut them to `-max_len` anyway.
const MAX_SEED: u64 = 256 * 1024;

fn main() -> Result<(), Box<dyn Error>> {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let testdata = fuzz.join("../testdata");
    let corpus = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| fuzz.join("corpus"));

    let msg: Vec<PathBuf> = files(&testdata.join("msg"), &["msgdef", "msg", "ros2msg"])?;
    let bags: Vec<PathBuf> = files(&testdata.join("bags"), &["bag"])?
        .into_iter()
        .chain(files(&testdata.join("bad/rosbag"), &["bag"])?)
        .collect();
    let bddf: Vec<PathBuf> = files(&testdata.join("bddf"), &["bddf"])?
        .into_iter()
        .chain(files(&testdata.join("bad/bddf"), &["bddf"])?)
        .collect();
    let mcap: Vec<PathBuf> = files(&testdata.join("mcap-conformance"), &["mcap"])?
        .into_iter()
        .chain(files(&testdata.join("samples"), &["mcap"])?)
        .chain(files(&testdata.join("bad/mcap"), &["mcap"])?)
        .collect();
    let msg_bad: Vec<PathBuf> = files(&testdata.join("bad/msg"), &["msgdef", "msg"])?;

    copy_all(&corpus.join("msg_parse"), msg.iter().chain(&msg_bad))?;
    let ros2_schemas: Vec<PathBuf> = files(&testdata.join("msg"), &["ros2msg", "ros2idl"])?;
    copy_all(&corpus.join("ros2_schema"), &ros2_schemas)?;
    // bz2 chunks that decode to hundreds of kilobytes cost milliseconds per execution (the
    // decoder is instrumented too); the small bz2 bags written below cover that codec.
    let fast_bags: Vec<PathBuf> = bags
        .iter()
        .filter(|p| !p.to_string_lossy().contains("bz2"))
        .cloned()
        .collect();
    for target in ["rosbag_indexed", "rosbag_stream"] {
        copy_all(&corpus.join(target), &fast_bags)?;
        small_bz2_blocks(&corpus.join(target))?;
        for (name, bytes) in small_bags()? {
            write_seed(&corpus.join(target), &name, &bytes)?;
        }
    }
    for target in ["bddf_indexed", "bddf_stream", "bddf_recover"] {
        copy_all(&corpus.join(target), &bddf)?;
        write_seed(&corpus.join(target), "small.bddf", &small_bddf()?)?;
    }
    for target in [
        "mcap_records",
        "mcap_linear",
        "mcap_stream",
        "mcap_indexed",
        "mcap_recover",
    ] {
        copy_all(&corpus.join(target), &mcap)?;
    }
    ros1_seeds(&corpus.join("ros1_decode"), &bags, &msg)?;
    copy_all(
        &corpus.join("cdr_decode"),
        &files(&testdata.join("bad/cdr"), &["cdr"])?,
    )?;
    cdr_seeds(&corpus.join("cdr_decode"))?;
    Ok(())
}

/// Files below `dir` with one of `extensions`, sorted; a missing folder gives none.
fn files(dir: &Path, extensions: &[&str]) -> Result<Vec<PathBuf>, Box<dyn Error>> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path
                .extension()
                .is_some_and(|e| extensions.iter().any(|x| e == *x))
                && fs::metadata(&path)?.len() <= MAX_SEED
            {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

fn copy_all<'a>(
    dir: &Path,
    sources: impl IntoIterator<Item = &'a PathBuf>,
) -> Result<(), Box<dyn Error>> {
    for source in sources {
        let name = source
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        write_seed(dir, &name, &fs::read(source)?)?;
    }
    Ok(())
}

fn write_seed(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), Box<dyn Error>> {
    fs::create_dir_all(dir)?;
    fs::write(dir.join(name), bytes)?;
    Ok(())
}

/// Rewrites the bzip2 streams of the bag seeds from 900 kB blocks (`BZh9`) to 100 kB blocks
/// (`BZh1`). The chunks are far smaller than 100 kB, so they still decode, and the decoder then
/// sets up 400 kB of tables instead of 3.6 MB per chunk: about 5 times more executions per
/// second on bz2 inputs.
fn small_bz2_blocks(dir: &Path) -> Result<(), Box<dyn Error>> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        let mut bytes = fs::read(&path)?;
        let mut changed = false;
        for at in 0..bytes.len().saturating_sub(4) {
            if &bytes[at..at + 4] == b"BZh9" {
                bytes[at + 3] = b'1';
                changed = true;
            }
        }
        if changed {
            fs::write(&path, bytes)?;
        }
    }
    Ok(())
}

/// Three-message bags, one per chunk compression, with two chunks each.
fn small_bags() -> Result<Vec<(String, Vec<u8>)>, Box<dyn Error>> {
    let mut out = Vec::new();
    for (name, compression) in [
        ("small-none.bag", ChunkCompression::None),
        ("small-lz4.bag", ChunkCompression::Lz4),
        ("small-bz2.bag", ChunkCompression::Bz2),
    ] {
        let options = WriteOptions::new()
            .compression(compression)
            .bz2_level(1)
            .chunk_threshold(64);
        let mut writer = Writer::with_options(Cursor::new(Vec::new()), options)?;
        let chatter = writer.add_connection(
            "/chatter",
            "std_msgs/String",
            "992ce8a1687cec8c8bd883ec73ca41d1",
            "string data\n",
        )?;
        let header = writer.add_connection(
            "/header",
            "std_msgs/Header",
            "2176decaecbce78abc3b96ef049fabed",
            "uint32 seq\ntime stamp\nstring frame_id\n",
        )?;
        writer.write(chatter, 2_000_000_000, b"\x05\0\0\0hello")?;
        writer.write(
            header,
            1_000_000_000,
            b"\x01\0\0\0\x01\0\0\0\x02\0\0\0\x03\0\0\0map",
        )?;
        writer.write(chatter, 3_000_000_000, b"\x05\0\0\0world")?;
        out.push((name.to_owned(), writer.finish()?.into_inner()));
    }
    Ok(out)
}

/// A file with a message series and a POD series.
fn small_bddf() -> Result<Vec<u8>, Box<dyn Error>> {
    let mut writer = BddfWriter::new(Vec::new())?;
    let log = writer.add_message_series(
        series_identifier("bosdyn:channel", [("bosdyn:channel", "log")]),
        MessageTypeDescriptor {
            content_type: "text/plain".into(),
            ..Default::default()
        },
        Default::default(),
    )?;
    let accel = writer.add_pod_series(
        series_identifier("bosdyn:signal", [("example:var", "accel")]),
        PodType::Float32,
        &[3],
        Default::default(),
    )?;
    writer.write_message(log, 1_000, b"started")?;
    writer.write_pod(accel, 1_000, &[0.0f32, 0.5, 9.8])?;
    writer.write_pod(accel, 2_000, &[0.1f32, 0.4, 9.7])?;
    writer.write_message(log, 3_000, b"stopped")?;
    Ok(writer.finish()?)
}

/// `type\ndefinition\0message` seeds: every definition fixture with an empty message, and the
/// first messages of each connection of every bag.
fn ros1_seeds(dir: &Path, bags: &[PathBuf], msg: &[PathBuf]) -> Result<(), Box<dyn Error>> {
    let mut seen = BTreeSet::new();
    let mut n = 0usize;
    let mut emit = |ty: &str, definition: &[u8], data: &[u8]| -> Result<(), Box<dyn Error>> {
        let mut seed = Vec::with_capacity(ty.len() + definition.len() + data.len() + 2);
        seed.extend_from_slice(ty.as_bytes());
        seed.push(b'\n');
        seed.extend_from_slice(definition);
        seed.push(0);
        seed.extend_from_slice(data);
        if seed.len() as u64 <= MAX_SEED && seen.insert(seed.clone()) {
            write_seed(dir, &format!("seed-{n:04}"), &seed)?;
            n += 1;
        }
        Ok(())
    };
    for path in msg {
        let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
            continue;
        };
        // `<pkg>_<Type>`: the type starts after the last underscore.
        let ty = match stem.rsplit_once('_') {
            Some((pkg, ty)) => format!("{pkg}/{ty}"),
            None => stem,
        };
        emit(&ty, &fs::read(path)?, &[])?;
    }
    for path in bags {
        let Ok(bag) = Bag::open(Bytes::from(fs::read(path)?)) else {
            continue;
        };
        let mut per_connection = std::collections::BTreeMap::<u32, usize>::new();
        for message in bag.messages().threads(0) {
            let Ok(message) = message else {
                break;
            };
            let count = per_connection.entry(message.conn).or_default();
            if *count >= 2 {
                continue;
            }
            *count += 1;
            if let Some(conn) = bag.connection(message.conn) {
                emit(
                    &conn.message_type,
                    conn.message_definition.as_bytes(),
                    &message.data,
                )?;
            }
        }
    }
    Ok(())
}

/// `type\ndefinition\0message` seeds for `cdr_decode`: the PoseStamped vectors of the CDR spec
/// in each encapsulation, and a message with every kind of field.
fn cdr_seeds(dir: &Path) -> Result<(), Box<dyn Error>> {
    const POSE: &str = "std_msgs/Header header\nPose pose\n\
        ================================================================================\n\
        MSG: geometry_msgs/Pose\nPoint position\nQuaternion orientation\n\
        ================================================================================\n\
        MSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z\n\
        ================================================================================\n\
        MSG: geometry_msgs/Quaternion\nfloat64 x\nfloat64 y\nfloat64 z\nfloat64 w\n\
        ================================================================================\n\
        MSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n";
    const EVERYTHING: &str = "bool a\nbyte b\nchar c\nint16 d\nfloat64 e\nstring<=8 f\n\
        wstring g\nint32[<=3] h\nfloat32[2] i\nuint8[] j\nstring[] k\nE l\nE[] m\n\
        time n\n===\nMSG: fuzz_pkg/E\n";
    let mut pose = vec![0, 1, 0, 0, 0x00, 0xf1, 0x53, 0x65, 0x15, 0xcd, 0x5b, 0x07, 5, 0, 0, 0];
    pose.extend_from_slice(b"odom\0\0\0\0\0\0\0\0");
    for value in [1.0f64, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0] {
        pose.extend_from_slice(&value.to_le_bytes());
    }
    let everything: Vec<u8> = [
        &[0u8, 1, 0, 0, 1, 0x90, 0x41, 0, 7, 0][..],
        &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f],
        &[3, 0, 0, 0, b'a', b'b', 0, 0, 1, 0, 0, 0, 0x68, 0, 0, 0],
        &[2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0xc0, 0x3f, 0, 0, 0, 0],
        &[2, 0, 0, 0, 9, 8, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
        &[0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0],
    ]
    .concat();
    let seed = |ty: &str, definition: &str, data: &[u8]| {
        [ty.as_bytes(), b"\n", definition.as_bytes(), b"\0", data].concat()
    };
    write_seed(dir, "pose-le", &seed("geometry_msgs/msg/PoseStamped", POSE, &pose))?;
    let mut big = pose.clone();
    big[1] = 0;
    write_seed(dir, "pose-be-header", &seed("geometry_msgs/msg/PoseStamped", POSE, &big))?;
    let mut xcdr2 = pose;
    xcdr2[1] = 7;
    write_seed(dir, "pose-xcdr2", &seed("geometry_msgs/msg/PoseStamped", POSE, &xcdr2))?;
    write_seed(dir, "everything", &seed("fuzz_pkg/msg/All", EVERYTHING, &everything))?;
    Ok(())
}
