//! Our codecs against the reference C libraries (through Python's lz4, zstandard and bz2).

#![cfg(all(feature = "lz4", feature = "zstd", feature = "bz2"))]

use std::ffi::OsStr;
use std::path::Path;

use robolog_framing::{Compression, Compressor, Lz4Frame, decompress};
use robolog_testkit::interop;

fn data() -> Vec<u8> {
    // Three MiB of semi-compressible text so that LZ4 frames span several blocks.
    (0..3_000_000u32)
        .map(|i| b"imu lidar camera tf "[(i as usize * 7 + (i as usize >> 9)) % 20])
        .collect()
}

fn python_codec(python: &Path, action: &str, codec: &str, input: &[u8]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let (src, dst) = (dir.path().join("in"), dir.path().join("out"));
    std::fs::write(&src, input).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/interop/codec.py");
    interop::run(
        python,
        &script,
        &[
            OsStr::new(action),
            OsStr::new(codec),
            src.as_os_str(),
            dst.as_os_str(),
        ],
    )
    .unwrap();
    std::fs::read(dst).unwrap()
}

#[test]
fn reference_libraries_read_what_we_write() {
    let Some(python) = interop::python() else {
        return;
    };
    let data = data();
    for (codec, frame, name) in [
        (Compression::Lz4, Lz4Frame::RosCompatible, "lz4"),
        (Compression::Lz4, Lz4Frame::Standard, "lz4"),
        (Compression::Zstd, Lz4Frame::Standard, "zstd"),
        (Compression::Bz2, Lz4Frame::Standard, "bz2"),
    ] {
        let mut compressed = Vec::new();
        Compressor::new(codec)
            .with_lz4_frame(frame)
            .compress(&data, &mut compressed)
            .unwrap();
        let back = python_codec(&python, "decompress", name, &compressed);
        assert!(
            back == data,
            "{name} {frame:?}: reference decoder disagrees"
        );
    }
}

#[test]
fn we_read_what_reference_libraries_write() {
    let Some(python) = interop::python() else {
        return;
    };
    let data = data();
    for (codec, name) in [
        (Compression::Lz4, "lz4"),
        (Compression::Lz4, "lz4-linked"),
        (Compression::Zstd, "zstd"),
        (Compression::Bz2, "bz2"),
    ] {
        let compressed = python_codec(&python, "compress", name, &data);
        let mut out = Vec::new();
        decompress(codec, &compressed, data.len(), 1 << 30, &mut out)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(out == data, "{name}: decoded bytes differ");
    }
}
