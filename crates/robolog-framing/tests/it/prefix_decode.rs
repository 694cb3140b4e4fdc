//! Decoding only the start of a chunk: what `PrefixDecoder` hands out, how far each codec goes,
//! resuming, finishing with every check, and bad input.

#![cfg(all(feature = "lz4", feature = "zstd", feature = "bz2"))]

use robolog_framing::{CodecError, Compression, Compressor, Decompressor, Lz4Frame, compress};
use robolog_testkit::sample_bytes::compressible;

const CAP: usize = 64 << 20;
const LEN: usize = 1_000_000;

fn compressed(codec: Compression, data: &[u8]) -> Vec<u8> {
    let mut c = Vec::new();
    compress(codec, data, &mut c).unwrap();
    c
}

/// How far a codec decodes when asked for `want` bytes of our own frames: LZ4 whole 64 KiB
/// blocks, bzip2 and zstd exactly.
fn reach(codec: Compression, want: usize) -> usize {
    match codec {
        Compression::Lz4 => want.div_ceil(64 << 10).max(1) * (64 << 10),
        _ => want,
    }
    .min(LEN)
}

#[test]
fn prefixes_are_the_data_start_and_resume_to_the_whole() {
    let data = compressible(LEN);
    for codec in Compression::ALL {
        let input = compressed(codec, &data);
        let mut d = Decompressor::new();
        let mut out = Vec::new();
        let mut p = d.prefix(codec, &input, LEN, CAP, &mut out).unwrap();
        assert!(p.decoded().is_empty());
        let mut seen = 0;
        for want in [1, 10, 65_535, 65_536, 65_537, 300_000, 299_999, 999_999] {
            p.fill_to(want)
                .unwrap_or_else(|e| panic!("{codec} {want}: {e}"));
            let expect = reach(codec, want).max(seen);
            seen = expect;
            assert_eq!(p.decoded().len(), expect, "{codec}: fill_to({want})");
            assert!(
                p.decoded() == &data[..expect],
                "{codec}: fill_to({want}) differs"
            );
        }
        p.fill_to(2 * LEN).unwrap();
        assert!(p.decoded() == &data[..], "{codec}: past the end");
        drop(p);
        assert!(out == data, "{codec}: the output after the decoder");
    }
}

#[test]
fn a_dropped_decoder_leaves_exactly_the_prefix_in_a_reused_buffer() {
    let data = compressible(LEN);
    for codec in Compression::ALL {
        let input = compressed(codec, &data);
        // A buffer from an earlier, larger chunk, full of other bytes.
        let mut out = vec![0xEE; 3 * LEN];
        let mut d = Decompressor::new();
        let mut p = d.prefix(codec, &input, LEN, CAP, &mut out).unwrap();
        p.fill_to(100_000).unwrap();
        drop(p);
        assert_eq!(out.len(), reach(codec, 100_000), "{codec}");
        assert!(out == data[..out.len()], "{codec}");
        assert!(out.capacity() >= 3 * LEN, "{codec}: allocation kept");
    }
}

#[test]
fn finish_decodes_the_rest_with_the_exact_checks() {
    let data = compressible(LEN);
    for codec in Compression::ALL {
        let input = compressed(codec, &data);
        for first in [0, 1, 200_000, LEN] {
            let mut d = Decompressor::new();
            let mut out = vec![7; 10];
            let mut p = d.prefix(codec, &input, LEN, CAP, &mut out).unwrap();
            p.fill_to(first).unwrap();
            p.finish()
                .unwrap_or_else(|e| panic!("{codec} after {first}: {e}"));
            assert!(out == data, "{codec} after {first}");
        }
        if codec != Compression::None {
            // Declared one byte short: the rest decodes to more than declared.
            let mut d = Decompressor::new();
            let mut out = Vec::new();
            let mut p = d.prefix(codec, &input, LEN - 1, CAP, &mut out).unwrap();
            p.fill_to(500_000).unwrap();
            let err = p.finish().unwrap_err();
            assert!(
                matches!(err, CodecError::Overflow { .. }),
                "{codec} declared short: {err}"
            );
        }
        // Declared one byte long: the data ends first, on fill_to and on finish.
        let mut d = Decompressor::new();
        let mut out = Vec::new();
        let mut p = d.prefix(codec, &input, LEN + 1, CAP, &mut out).unwrap();
        p.fill_to(LEN).unwrap();
        let err = p.fill_to(LEN + 1).unwrap_err();
        assert!(
            matches!(
                err,
                CodecError::SizeMismatch { .. } | CodecError::Corrupt { .. }
            ),
            "{codec} declared long: {err}"
        );
        drop(p);
        let p = d.prefix(codec, &input, LEN + 1, CAP, &mut out).unwrap();
        assert!(p.finish().is_err(), "{codec} declared long, finish");
    }
}

#[test]
fn decode_to_stops_short_or_finishes_with_the_checks() {
    let data = compressible(LEN);
    for codec in Compression::ALL {
        let input = compressed(codec, &data);
        let mut d = Decompressor::new();
        let mut out = Vec::new();
        let p = d.prefix(codec, &input, LEN, CAP, &mut out).unwrap();
        assert!(!p.decode_to(300_000).unwrap(), "{codec}: a prefix");
        assert_eq!(out.len(), reach(codec, 300_000), "{codec}");
        assert!(out == data[..out.len()], "{codec}");
        for end in [LEN, LEN + 1] {
            let p = d.prefix(codec, &input, LEN, CAP, &mut out).unwrap();
            assert!(p.decode_to(end).unwrap(), "{codec}: everything");
            assert!(out == data, "{codec}");
        }
        if codec != Compression::None {
            let p = d.prefix(codec, &input, LEN - 1, CAP, &mut out).unwrap();
            let err = p.decode_to(LEN - 1).unwrap_err();
            assert!(matches!(err, CodecError::Overflow { .. }), "{codec}: {err}");
        }
    }
}

#[test]
fn every_lz4_frame_layout_gives_its_prefix() {
    use lz4_flex::frame::{BlockMode, BlockSize, FrameEncoder, FrameInfo};
    use std::io::Write;
    let data = compressible(LEN);
    let mut frames = Vec::new();
    for mode in [BlockMode::Independent, BlockMode::Linked] {
        for size in [BlockSize::Max64KB, BlockSize::Max256KB, BlockSize::Max4MB] {
            for checksums in [false, true] {
                let info = FrameInfo::new()
                    .block_mode(mode)
                    .block_size(size)
                    .block_checksums(checksums)
                    .content_checksum(checksums);
                let mut enc = FrameEncoder::with_frame_info(info, Vec::new());
                enc.write_all(&data).unwrap();
                frames.push((
                    format!("{mode:?} {size:?} {checksums}"),
                    enc.finish().unwrap(),
                ));
            }
        }
    }
    let mut ros = Vec::new();
    Compressor::new(Compression::Lz4)
        .with_lz4_frame(Lz4Frame::RosCompatible)
        .compress(&data, &mut ros)
        .unwrap();
    frames.push(("roslz4".into(), ros));
    for (name, frame) in &frames {
        let mut d = Decompressor::new();
        let mut out = Vec::new();
        let mut p = d
            .prefix(Compression::Lz4, frame, LEN, CAP, &mut out)
            .unwrap();
        p.fill_to(70_000).unwrap();
        let n = p.decoded().len();
        assert!(n >= 70_000, "{name}: {n}");
        assert!(p.decoded() == &data[..n], "{name}");
        p.fill_to(700_000).unwrap();
        assert!(p.decoded() == &data[..p.decoded().len()], "{name}");
        p.finish().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(out == data, "{name}");
    }
}

#[test]
fn concatenated_frames_and_padding() {
    let (a, b) = (compressible(100_000), compressible(150_000));
    for codec in [Compression::Lz4, Compression::Zstd] {
        let mut input = compressed(codec, &a);
        input.extend_from_slice(&compressed(codec, &b));
        input.extend_from_slice(&[0; 16]);
        let whole = [a.clone(), b.clone()].concat();
        let mut d = Decompressor::new();
        let mut out = Vec::new();
        let mut p = d.prefix(codec, &input, whole.len(), CAP, &mut out).unwrap();
        p.fill_to(120_000).unwrap();
        assert!(p.decoded() == &whole[..p.decoded().len()], "{codec}");
        p.finish().unwrap_or_else(|e| panic!("{codec}: {e}"));
        assert!(out == whole, "{codec}");
    }
}

#[test]
fn a_lying_declared_size_allocates_only_what_the_prefix_needs() {
    let data = compressible(200_000);
    for codec in [Compression::Lz4, Compression::Zstd, Compression::Bz2] {
        let input = compressed(codec, &data);
        let mut d = Decompressor::new();
        let mut out = Vec::new();
        // Claims 60 MiB (under the cap); the caller wants 1,000 bytes.
        let mut p = d.prefix(codec, &input, 60 << 20, CAP, &mut out).unwrap();
        p.fill_to(1000).unwrap();
        drop(p);
        assert!(
            out.capacity() < 2 << 20,
            "{codec}: {} bytes",
            out.capacity()
        );
        assert!(out == data[..out.len()], "{codec}");
    }
    let mut out = Vec::new();
    let err = Decompressor::new()
        .prefix(Compression::Zstd, &[], CAP + 1, CAP, &mut out)
        .unwrap_err();
    assert!(matches!(err, CodecError::TooLarge { .. }), "{err}");
}

#[test]
fn damage_after_the_prefix_is_not_seen_and_damage_inside_is_an_error() {
    let data = compressible(LEN);
    for codec in [Compression::Lz4, Compression::Zstd, Compression::Bz2] {
        let input = compressed(codec, &data);
        // Cut inside the last part (bzip2: inside its second block, after the first 900k
        // block's 900,000 bytes): the first tenth still decodes, the whole does not.
        let keep = if codec == Compression::Bz2 { 97 } else { 67 };
        let cut = &input[..input.len() * keep / 100];
        let mut d = Decompressor::new();
        let mut out = Vec::new();
        let mut p = d.prefix(codec, cut, LEN, CAP, &mut out).unwrap();
        p.fill_to(LEN / 10)
            .unwrap_or_else(|e| panic!("{codec}: {e}"));
        assert!(p.decoded() == &data[..p.decoded().len()], "{codec}");
        assert!(p.fill_to(LEN).is_err(), "{codec}: past the cut");
        drop(p);
        // Garbage from the start: an error, never a panic.
        let garbage: Vec<u8> = input.iter().map(|b| b ^ 0x5A).collect();
        let mut p = d.prefix(codec, &garbage, LEN, CAP, &mut out).unwrap();
        assert!(p.fill_to(1000).is_err(), "{codec}: garbage");
    }
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    /// Data with runs that compress well and runs that do not, so that blocks differ.
    fn data() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec((0usize..40_000, any::<bool>(), any::<u8>()), 0..8).prop_map(
            |runs| {
                let mut data = Vec::new();
                for (len, plain, byte) in runs {
                    if plain {
                        data.extend(std::iter::repeat_n(byte, len));
                    } else {
                        data.extend(compressible(len + usize::from(byte)));
                    }
                }
                data
            },
        )
    }

    fn codec() -> impl Strategy<Value = Compression> {
        proptest::sample::select(Compression::ALL.to_vec())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Whatever is asked for, in whatever order, the decoded bytes are the data's start,
        /// at least as long as asked (and all of it at the end).
        #[test]
        fn every_prefix_is_the_data_start(
            codec in codec(),
            data in data(),
            wants in proptest::collection::vec(0usize..400_000, 1..5),
        ) {
            let input = compressed(codec, &data);
            let mut d = Decompressor::new();
            let mut out = Vec::new();
            let mut p = d.prefix(codec, &input, data.len(), CAP, &mut out).unwrap();
            for want in wants {
                p.fill_to(want).unwrap();
                let n = p.decoded().len();
                prop_assert!(n >= want.min(data.len()));
                prop_assert!(p.decoded() == &data[..n]);
            }
            p.finish().unwrap();
            prop_assert!(out == data);
        }

        /// A damaged byte anywhere gives an error or bytes, never a panic or a hang.
        #[test]
        fn damaged_input_never_panics(
            codec in codec(),
            data in data(),
            at in any::<prop::sample::Index>(),
            flip in 1u8..,
            want in 0usize..400_000,
        ) {
            let mut input = compressed(codec, &data);
            if !input.is_empty() {
                let i = at.index(input.len());
                input[i] ^= flip;
            }
            let mut d = Decompressor::new();
            let mut out = Vec::new();
            let mut p = d.prefix(codec, &input, data.len(), CAP, &mut out).unwrap();
            if p.fill_to(want).is_ok() {
                prop_assert!(p.decoded().len() <= data.len());
                let _ = p.finish();
            } else {
                drop(p);
            }
            prop_assert!(out.len() <= data.len());
        }
    }
}
