//! `Decompressor::decompress_in_halves` gives exactly what `decompress` gives, output and errors,
//! for every LZ4 frame: the ones it splits, the ones it cannot, and damaged ones.

#![cfg(feature = "lz4")]

use lz4_flex::frame::{BlockMode, BlockSize, FrameInfo};
use proptest::prelude::*;
use robolog_framing::{Bytes, Compression, Decompressor, ParallelMap};
use robolog_testkit::sample_bytes::{compressible, incompressible};

use crate::support::lz4_frames;
use lz4_frames::{every_frame_layout, frame};

const CAP: usize = 64 << 20;

/// Both ways of decoding `input`, each into a buffer that starts as `reused`, with the errors
/// as text.
fn both(input: &[u8], expected: usize, reused: &[u8]) -> [Result<Vec<u8>, String>; 2] {
    let mut one = reused.to_vec();
    let mut halves = reused.to_vec();
    let mut d = Decompressor::new();
    let one_result = d.decompress(Compression::Lz4, input, expected, CAP, &mut one);
    let halves_result = d.decompress_in_halves(
        Compression::Lz4,
        &Bytes::copy_from_slice(input),
        expected,
        CAP,
        &mut halves,
    );
    [
        one_result.map(|()| one).map_err(|e| e.to_string()),
        halves_result.map(|()| halves).map_err(|e| e.to_string()),
    ]
}

/// Keeps the pool's threads started, so that the second halves can go to them.
fn start_the_pool() {
    assert_eq!(ParallelMap::new(0..4, 2, 2, |x| x).count(), 4);
}

#[test]
fn every_frame_variant_decodes_as_on_one_thread() {
    start_the_pool();
    for data in [
        compressible(700_000),
        incompressible(600_000),
        compressible(300_000),
        compressible(200_000),
    ] {
        for (layout, input) in every_frame_layout(&data) {
            for reused in [Vec::new(), vec![7; 50_000], vec![9; 900_000]] {
                let [one, halves] = both(&input, data.len(), &reused);
                assert!(one.as_ref().is_ok_and(|out| *out == data));
                assert!(halves == one, "{} bytes, {layout}", data.len());
            }
        }
    }
}

#[test]
fn frames_it_cannot_split_decode_as_on_one_thread() {
    start_the_pool();
    let data = compressible(800_000);
    let independent = || {
        FrameInfo::new()
            .block_mode(BlockMode::Independent)
            .block_size(BlockSize::Max64KB)
    };
    let mut padded = frame(&data, independent());
    padded.extend_from_slice(&[0; 16]);
    let mut two_frames = frame(&data[..500_000], independent());
    two_frames.extend_from_slice(&frame(&data[500_000..], independent()));
    for input in [padded, two_frames] {
        let [one, halves] = both(&input, data.len(), &[]);
        assert!(one.as_ref().is_ok_and(|out| *out == data));
        assert_eq!(halves, one);
    }
}

#[test]
fn damage_in_either_half_is_the_same_error() {
    start_the_pool();
    let data = compressible(700_000);
    let info = FrameInfo::new()
        .block_mode(BlockMode::Independent)
        .block_size(BlockSize::Max64KB)
        .content_checksum(true);
    let input = frame(&data, info);
    let mut errors = 0;
    // Bytes in the first block, the middle and the last block, and the content checksum.
    for at in [40, input.len() / 2, input.len() - 40, input.len() - 2] {
        let mut damaged = input.clone();
        damaged[at] ^= 0x55;
        let [one, halves] = both(&damaged, data.len(), &[]);
        errors += usize::from(one.is_err());
        assert_eq!(halves, one, "byte {at} damaged");
    }
    assert!(
        errors >= 3,
        "only {errors} of the damaged frames failed to decode"
    );
    // Declared sizes that do not match.
    for expected in [data.len() - 1, data.len() + 1, 300_000] {
        let [one, halves] = both(&input, expected, &[]);
        assert!(one.is_err());
        assert_eq!(halves, one, "{expected} bytes declared");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any frame of independent 64 KiB blocks, with one byte changed or not, decodes to the same
    /// result both ways.
    #[test]
    fn halves_agree_with_one_thread(
        len in 200_000usize..900_000,
        noisy in any::<bool>(),
        block_checksums in any::<bool>(),
        content_checksum in any::<bool>(),
        flip in proptest::option::of((any::<prop::sample::Index>(), 1u8..=255)),
        declared_off in -2i64..=2,
    ) {
        start_the_pool();
        let data = if noisy { incompressible(len) } else { compressible(len) };
        let info = FrameInfo::new()
            .block_mode(BlockMode::Independent)
            .block_size(BlockSize::Max64KB)
            .block_checksums(block_checksums)
            .content_checksum(content_checksum);
        let mut input = frame(&data, info);
        if let Some((at, xor)) = flip {
            let at = at.index(input.len());
            input[at] ^= xor;
        }
        let expected = (len as i64 + declared_off) as usize;
        let [one, halves] = both(&input, expected, &[]);
        prop_assert_eq!(halves, one);
    }
}
