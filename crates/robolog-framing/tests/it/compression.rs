//! Codecs: round trips, real frames from other writers, size checks, bombs, salvage.

#![cfg(all(feature = "lz4", feature = "zstd", feature = "bz2"))]

use robolog_framing::{
    ByteReader, CodecError, Compression, Compressor, Decompressor, Lz4Frame, compress, decompress,
};
use robolog_testkit::sample_bytes::{compressible, incompressible};
use robolog_testkit::testdata;

use crate::support::lz4_frames;
use lz4_frames::every_frame_layout;

const CAP: usize = 64 << 20;

#[test]
fn every_codec_round_trips_at_several_sizes() {
    for codec in Compression::ALL {
        for len in [0, 1, 100, 65_536, 65_537, 1 << 20, (1 << 20) + 3, 3 << 20] {
            let data = compressible(len);
            let mut compressed = Vec::new();
            compress(codec, &data, &mut compressed).unwrap();
            let mut out = Vec::new();
            decompress(codec, &compressed, len, CAP, &mut out)
                .unwrap_or_else(|e| panic!("{codec} {len}: {e}"));
            assert!(out == data, "{codec} {len}: round trip differs");
        }
    }
}

#[test]
fn compress_appends_to_existing_output() {
    for codec in Compression::ALL {
        let data = compressible(1000);
        let mut out = b"header".to_vec();
        compress(codec, &data, &mut out).unwrap();
        assert_eq!(&out[..6], b"header");
        let mut back = Vec::new();
        decompress(codec, &out[6..], data.len(), CAP, &mut back).unwrap();
        assert_eq!(back, data);
    }
}

#[test]
fn a_reused_zstd_compressor_appends_the_frames_zstd_writes_in_one_shot() {
    let mut compressor = Compressor::new(Compression::Zstd);
    let mut out = b"prefix".to_vec();
    for len in [700_000, 10, 0, 300_000] {
        let data = compressible(len);
        let at = out.len();
        compressor.compress(&data, &mut out).unwrap();
        assert_eq!(&out[..6], b"prefix");
        assert_eq!(
            out[at..],
            zstd::bulk::compress(&data, 3).unwrap(),
            "{len} bytes"
        );
    }
}

#[test]
fn levels_change_the_output_but_not_the_content() {
    let data = compressible(200_000);
    for (codec, levels) in [(Compression::Zstd, [1, 19]), (Compression::Bz2, [1, 9])] {
        let mut sizes = Vec::new();
        for level in levels {
            let mut c = Vec::new();
            Compressor::new(codec)
                .with_level(level)
                .compress(&data, &mut c)
                .unwrap();
            let mut back = Vec::new();
            decompress(codec, &c, data.len(), CAP, &mut back).unwrap();
            assert_eq!(back, data);
            sizes.push(c.len());
        }
        assert_ne!(sizes[0], sizes[1], "{codec}: levels had no effect");
    }
}

#[test]
fn ros_lz4_profile_has_the_roslz4_header() {
    for data in [compressible(10), incompressible(3 << 20), Vec::new()] {
        let mut frame = Vec::new();
        Compressor::new(Compression::Lz4)
            .with_lz4_frame(Lz4Frame::RosCompatible)
            .compress(&data, &mut frame)
            .unwrap();
        // magic, FLG 0x64 (independent blocks, content checksum, no size), BD 0x60 (1 MiB), HC.
        assert_eq!(&frame[..7], &[0x04, 0x22, 0x4D, 0x18, 0x64, 0x60, 0x85]);
        let mut out = Vec::new();
        decompress(Compression::Lz4, &frame, data.len(), CAP, &mut out).unwrap();
        assert_eq!(out, data);
    }
}

#[test]
fn incompressible_ros_lz4_blocks_are_stored() {
    let data = incompressible(100_000);
    let mut frame = Vec::new();
    Compressor::new(Compression::Lz4)
        .with_lz4_frame(Lz4Frame::RosCompatible)
        .compress(&data, &mut frame)
        .unwrap();
    let block_size = u32::from_le_bytes(frame[7..11].try_into().unwrap());
    assert_eq!(block_size, 0x8000_0000 | 100_000, "stored block flag");
}

/// The first chunk of a ROS bag: (compression, declared size, chunk data).
fn first_bag_chunk(bag: &[u8]) -> (String, usize, &[u8]) {
    let mut r = ByteReader::new(bag);
    r.skip(13, "version line").unwrap();
    loop {
        let header = r.read_bytes_u32("header").unwrap();
        let data = r.read_bytes_u32("data").unwrap();
        let mut fields = ByteReader::new(header);
        let (mut op, mut compression, mut size) = (0, String::new(), 0);
        while !fields.is_empty() {
            let field = fields.read_bytes_u32("field").unwrap();
            let eq = field.iter().position(|&b| b == b'=').unwrap();
            match &field[..eq] {
                b"op" => op = field[eq + 1],
                b"compression" => {
                    compression = String::from_utf8(field[eq + 1..].to_vec()).unwrap()
                }
                b"size" => size = u32::from_le_bytes(field[eq + 1..].try_into().unwrap()) as usize,
                _ => {}
            }
        }
        if op == 0x05 {
            return (compression, size, data);
        }
    }
}

#[test]
fn reads_real_lz4_frames_from_ros_and_rosbags() {
    for (file, flg) in [
        ("bags/generated/ros_comm/ref_lz4.bag", 0x64),
        ("bags/generated/rosbags/rosbags_lz4.bag", 0x68),
        ("bags/upstream/swri-bag-reader-java/PointCloud2.bag", 0x64),
    ] {
        let bag = testdata::read(file);
        let (compression, size, data) = first_bag_chunk(&bag);
        assert_eq!(compression, "lz4");
        assert_eq!(data[4], flg, "{file}: FLG");
        let mut out = Vec::new();
        decompress(Compression::Lz4, data, size, CAP, &mut out)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(out.len(), size);
        // Decompressed chunk data is a sequence of bag records; the first is a connection (op 7).
        assert!(
            out.windows(4).any(|w| w == b"op=\x07"),
            "{file}: no connection record"
        );
    }
}

#[test]
fn reads_real_bz2_chunks() {
    for file in [
        "bags/generated/ros_comm/ref_bz2.bag",
        "bags/upstream/rosbag.js/example-bz2.bag",
    ] {
        let bag = testdata::read(file);
        let (compression, size, data) = first_bag_chunk(&bag);
        assert_eq!(compression, "bz2");
        let mut out = Vec::new();
        decompress(Compression::Bz2, data, size, CAP, &mut out)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(out.windows(4).any(|w| w == b"op=\x07"));
    }
}

/// Frames written with every lz4_flex option: linked blocks, block checksums, content size.
#[test]
fn accepts_every_standard_lz4_frame_variant() {
    let data = compressible(700_000);
    for (layout, frame) in every_frame_layout(&data) {
        let mut out = Vec::new();
        decompress(Compression::Lz4, &frame, data.len(), CAP, &mut out)
            .unwrap_or_else(|e| panic!("{layout}: {e}"));
        assert!(out == data, "{layout}");
    }
}

#[test]
fn concatenated_skippable_and_padded_lz4_frames() {
    let a = compressible(1000);
    let b = compressible(3000);
    let mut input = Vec::new();
    compress(Compression::Lz4, &a, &mut input).unwrap();
    // A skippable frame between the two data frames.
    input.extend_from_slice(&[0x5A, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 1, 2, 3]);
    compress(Compression::Lz4, &b, &mut input).unwrap();
    input.extend_from_slice(&[0; 16]);
    let mut out = Vec::new();
    decompress(Compression::Lz4, &input, 4000, CAP, &mut out).unwrap();
    assert_eq!(out, [a, b].concat());
}

#[test]
fn zstd_multiple_frames_and_trailing_padding() {
    let a = compressible(5000);
    let b = compressible(7000);
    let mut input = Vec::new();
    compress(Compression::Zstd, &a, &mut input).unwrap();
    compress(Compression::Zstd, &b, &mut input).unwrap();
    input.extend_from_slice(&[0; 32]);
    let mut out = Vec::new();
    decompress(Compression::Zstd, &input, 12_000, CAP, &mut out).unwrap();
    assert_eq!(out, [a, b].concat());
}

#[test]
fn declared_size_must_match_exactly() {
    for codec in Compression::ALL {
        let data = compressible(10_000);
        let mut c = Vec::new();
        compress(codec, &data, &mut c).unwrap();
        let mut out = Vec::new();
        let short = decompress(codec, &c, 10_001, CAP, &mut out).unwrap_err();
        assert!(
            matches!(
                short,
                CodecError::SizeMismatch {
                    expected: 10_001,
                    ..
                } | CodecError::Corrupt { .. }
            ),
            "{codec}: {short}"
        );
        if codec != Compression::None {
            let long = decompress(codec, &c, 9_999, CAP, &mut out).unwrap_err();
            assert!(
                matches!(
                    long,
                    CodecError::Overflow {
                        expected: 9_999,
                        ..
                    }
                ),
                "{codec}: {long}"
            );
        }
    }
}

#[test]
fn decompression_bombs_stop_at_the_declared_size() {
    // 256 MiB of zeros compresses to a few KiB; a container claiming 1 KiB must not inflate it.
    let zeros = vec![0u8; 256 << 20];
    for codec in [Compression::Lz4, Compression::Zstd, Compression::Bz2] {
        let mut c = Vec::new();
        compress(codec, &zeros, &mut c).unwrap();
        assert!(c.len() < 2 << 20, "{codec}: {} bytes", c.len());
        let mut out = Vec::new();
        let err = decompress(codec, &c, 1024, CAP, &mut out).unwrap_err();
        assert!(matches!(err, CodecError::Overflow { .. }), "{codec}: {err}");
        assert!(
            out.capacity() < 1 << 20,
            "{codec}: buffer grew to {}",
            out.capacity()
        );
    }
}

#[test]
fn declared_size_above_the_cap_is_refused_before_allocating() {
    let mut out = Vec::new();
    let err = decompress(Compression::Zstd, b"whatever", 1 << 40, 1 << 30, &mut out).unwrap_err();
    assert_eq!(
        err,
        CodecError::TooLarge {
            expected: 1 << 40,
            cap: 1 << 30
        }
    );
    assert_eq!(out.capacity(), 0);
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    let garbage = incompressible(5000);
    for codec in [Compression::Lz4, Compression::Zstd, Compression::Bz2] {
        let mut out = Vec::new();
        assert!(
            decompress(codec, &garbage, 5000, CAP, &mut out).is_err(),
            "{codec}"
        );
        // Every truncation of a valid frame too.
        let mut c = Vec::new();
        compress(codec, &compressible(3000), &mut c).unwrap();
        for cut in 0..c.len() {
            assert!(
                decompress(codec, &c[..cut], 3000, CAP, &mut out).is_err(),
                "{codec} cut {cut}"
            );
        }
    }
}

#[test]
fn output_buffer_is_reused() {
    let data = compressible(100_000);
    let mut c = Vec::new();
    compress(Compression::Lz4, &data, &mut c).unwrap();
    let mut d = Decompressor::new();
    let mut out = Vec::with_capacity(200_000);
    let ptr = out.as_ptr();
    for _ in 0..3 {
        d.decompress(Compression::Lz4, &c, data.len(), CAP, &mut out)
            .unwrap();
        assert_eq!(out, data);
    }
    assert_eq!(out.as_ptr(), ptr, "no reallocation");
    // A smaller chunk afterwards is exact too.
    let small = compressible(10);
    let mut c = Vec::new();
    compress(Compression::Zstd, &small, &mut c).unwrap();
    d.decompress(Compression::Zstd, &c, 10, CAP, &mut out)
        .unwrap();
    assert_eq!(out, small);
}

#[test]
fn a_buffer_from_an_lz4_chunk_fits_a_slightly_larger_one() {
    // Chunks of one file differ by the message that closes each: a buffer allocated for one
    // must take the next without being replaced.
    let mut d = Decompressor::new();
    let mut out = Vec::new();
    let mut decode_into_out = |data: &[u8], out: &mut Vec<u8>| {
        let mut c = Vec::new();
        compress(Compression::Lz4, data, &mut c).unwrap();
        d.decompress(Compression::Lz4, &c, data.len(), CAP, out)
            .unwrap();
        assert_eq!(*out, data);
    };
    decode_into_out(&compressible(100_000), &mut out);
    let ptr = out.as_ptr();
    decode_into_out(&compressible(110_000), &mut out);
    assert_eq!(out.as_ptr(), ptr, "the first buffer was replaced");
}

#[test]
fn salvage_keeps_complete_lz4_blocks() {
    let data = compressible(300_000);
    let mut frame = Vec::new();
    Compressor::new(Compression::Lz4)
        .with_lz4_frame(Lz4Frame::Standard)
        .compress(&data, &mut frame)
        .unwrap();
    let cut = frame.len() * 3 / 4;
    let mut out = Vec::new();
    let salvage =
        Decompressor::new().decompress_partial(Compression::Lz4, &frame[..cut], CAP, &mut out);
    assert!(salvage.error.is_some());
    assert_eq!(salvage.recovered % 65_536, 0, "whole 64 KiB blocks");
    assert!(
        salvage.recovered >= 3 * 65_536,
        "recovered {}",
        salvage.recovered
    );
    assert_eq!(out, data[..salvage.recovered]);
    // A complete frame salvages completely.
    let salvage = Decompressor::new().decompress_partial(Compression::Lz4, &frame, CAP, &mut out);
    assert_eq!((salvage.recovered, salvage.error), (data.len(), None));
}

#[test]
fn salvage_truncated_zstd_and_bz2() {
    let data = incompressible(350_000);
    for (codec, level, min_fraction) in [(Compression::Zstd, 3, 0.5), (Compression::Bz2, 1, 0.5)] {
        let mut c = Vec::new();
        Compressor::new(codec)
            .with_level(level)
            .compress(&data, &mut c)
            .unwrap();
        let cut = c.len() * 9 / 10;
        let mut out = Vec::new();
        let salvage = Decompressor::new().decompress_partial(codec, &c[..cut], CAP, &mut out);
        assert!(salvage.error.is_some(), "{codec}");
        assert!(
            salvage.recovered as f64 >= data.len() as f64 * min_fraction,
            "{codec}: recovered only {}",
            salvage.recovered
        );
        assert_eq!(
            out,
            data[..salvage.recovered],
            "{codec}: salvaged bytes are a prefix"
        );
        let salvage = Decompressor::new().decompress_partial(codec, &c, CAP, &mut out);
        assert_eq!(
            (salvage.recovered, salvage.error),
            (data.len(), None),
            "{codec}"
        );
    }
}

#[test]
fn salvage_respects_the_cap() {
    let zeros = vec![0u8; 8 << 20];
    for codec in [Compression::Lz4, Compression::Zstd, Compression::Bz2] {
        let mut c = Vec::new();
        compress(codec, &zeros, &mut c).unwrap();
        let mut out = Vec::new();
        let salvage = Decompressor::new().decompress_partial(codec, &c, 1 << 20, &mut out);
        assert!(salvage.error.is_some(), "{codec}");
        assert!(
            out.len() <= 1 << 20 && out.capacity() <= 2 << 20,
            "{codec}: {}",
            out.capacity()
        );
    }
}

#[test]
fn a_salvage_does_not_depend_on_the_buffer_it_is_given() {
    // A recycled buffer with room to spare must not let a salvage decode past its cap: the
    // recovery of a chunk whose declared size lies small once kept messages or not depending
    // on which pooled buffer it was handed.
    let data = incompressible(300_000);
    for codec in [
        Compression::None,
        Compression::Lz4,
        Compression::Zstd,
        Compression::Bz2,
    ] {
        let mut c = Vec::new();
        compress(codec, &data, &mut c).unwrap();
        for (input, cap) in [
            (&c[..], 10),
            (&c[..], 100_000),
            (&c[..], data.len()),
            (&c[..], data.len() + 1),
            (&c[..c.len() * 9 / 10], 50_000),
            (&c[..c.len() * 9 / 10], CAP),
        ] {
            let mut fresh = Vec::new();
            let expected = Decompressor::new().decompress_partial(codec, input, cap, &mut fresh);
            assert!(fresh.len() <= cap, "{codec}, cap {cap}: {}", fresh.len());
            assert!(fresh == data[..fresh.len()], "{codec}, cap {cap}: a prefix");
            for room in [cap + 1, 1 << 20, 4 << 20] {
                let mut recycled = Vec::with_capacity(room);
                recycled.extend_from_slice(b"stale");
                let salvage =
                    Decompressor::new().decompress_partial(codec, input, cap, &mut recycled);
                assert_eq!(salvage, expected, "{codec}, cap {cap}, room {room}");
                assert!(recycled == fresh, "{codec}, cap {cap}, room {room}");
            }
        }
    }
}

#[test]
fn a_lying_declared_size_allocates_only_what_the_data_backs() {
    // bzip2 and zstd can expand by a million to one, so no ratio check can refuse a chunk that
    // declares 1 GiB; the output buffer must follow the data instead of the declaration. LZ4
    // expands at most 255:1, so its buffer is bounded by that times the input.
    let data = compressible(100_000);
    for codec in [Compression::Lz4, Compression::Zstd, Compression::Bz2] {
        let mut c = Vec::new();
        compress(codec, &data, &mut c).unwrap();
        let bound = match codec {
            Compression::Lz4 => c.len() * 255 + 64,
            _ => 4 << 20,
        };
        let mut out = Vec::new();
        let err = decompress(codec, &c, 1 << 30, 1 << 31, &mut out).unwrap_err();
        assert_eq!(
            err,
            CodecError::SizeMismatch {
                codec,
                expected: 1 << 30,
                actual: 100_000
            },
            "{codec}"
        );
        assert!(
            out.capacity() <= bound,
            "{codec}: buffer grew to {}",
            out.capacity()
        );
        assert_eq!(out, data, "{codec}: the decoded prefix is kept");
    }
}

#[test]
fn a_reused_buffer_larger_than_the_declared_size_still_detects_overflow() {
    let data = compressible(50_000);
    for codec in [Compression::Lz4, Compression::Zstd, Compression::Bz2] {
        let mut c = Vec::new();
        compress(codec, &data, &mut c).unwrap();
        let mut out = Vec::with_capacity(1 << 20);
        let err = decompress(codec, &c, 40_000, CAP, &mut out).unwrap_err();
        assert!(
            matches!(
                err,
                CodecError::Overflow {
                    expected: 40_000,
                    ..
                }
            ),
            "{codec}: {err}"
        );
        decompress(codec, &c, 50_000, CAP, &mut out).unwrap();
        assert_eq!(out, data, "{codec}");
    }
}
