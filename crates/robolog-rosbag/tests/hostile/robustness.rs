//! Hostile input as property tests, the in-suite counterpart of the `rosbag_indexed` and
//! `rosbag_stream` fuzz targets (`fuzz/`): damaged bags never panic or hang in the indexed
//! reader (lenient and strict), the streaming reader (recovering or not) or reindexing, and
//! lying lengths never make them allocate more than the bound of the hostile corpus.

use std::io::Cursor;

use proptest::prelude::*;
use robolog_rosbag::{
    Bag, Bytes, OpenOptions, Order, ReindexMode, ReindexOptions, StreamOptions, StreamReader,
    reindex, reindex_stream,
};
use robolog_testkit::alloc::Peak;
use robolog_testkit::hostile::{HOSTILE_CHUNK_LIMIT, HOSTILE_PEAK_BOUND};

use crate::{ALLOCATOR, one_at_a_time};

/// Small bags of every kind: 2.0 uncompressed and LZ4, 1.2 indexed, unsorted chunks.
const BAGS: [&str; 4] = [
    "bags/generated/ros_comm/ref_lz4.bag",
    "bags/upstream/swri-bag-reader-java/Float64.bag",
    "bags/upstream/rosbag.js/example-unsorted-chunks.bag",
    "bags/upstream/embag/test_2.bag",
];

/// Every entry point over `data`; any may fail, none may panic or loop, and the process's
/// allocation peak stays under the bound of the hostile corpus (checked while the cases are
/// still one at a time, so the case that crosses it is the one reported).
fn exercise(data: &[u8]) -> Result<(), TestCaseError> {
    let _alone = one_at_a_time();
    for strict in [false, true] {
        let options = OpenOptions::new()
            .max_chunk_size(HOSTILE_CHUNK_LIMIT)
            .strict(strict);
        if let Ok(bag) = Bag::open_with(Bytes::copy_from_slice(data), options.clone()) {
            for order in [Order::LogTime, Order::File] {
                let mut n = 0;
                for message in bag.messages().order(order).threads(0) {
                    n += 1;
                    assert!(n < 100_000, "the indexed reader does not terminate");
                    if message.is_err() {
                        break;
                    }
                }
            }
        }
    }
    for recover in [true, false] {
        let options = StreamOptions::new()
            .max_record_size(HOSTILE_CHUNK_LIMIT as u64)
            .recover(recover);
        if let Ok(mut reader) = StreamReader::with_options(data, options) {
            let mut n = 0;
            while let Ok(Some(_)) = reader.next_message() {
                n += 1;
                assert!(n < 100_000, "the streaming reader does not terminate");
            }
        }
    }
    let options = ReindexOptions::new()
        .mode(ReindexMode::Salvage)
        .max_chunk_size(HOSTILE_CHUNK_LIMIT);
    let _ = reindex(
        &Bytes::copy_from_slice(data),
        Cursor::new(Vec::new()),
        &options,
    );
    let _ = reindex_stream(data, Cursor::new(Vec::new()), &options);
    // 64 MiB: every bag here is under 64 KiB and chunks are limited to 16 MiB.
    Peak::new(&ALLOCATOR, HOSTILE_PEAK_BOUND)
        .check("after hostile input")
        .map_err(TestCaseError::fail)
}

fn bag(index: usize) -> Vec<u8> {
    robolog_testkit::testdata::read(BAGS[index % BAGS.len()])
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Random bytes after a valid version line.
    #[test]
    fn random_bytes_never_panic(version in 0usize..2, body in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let mut data = [&b"#ROSBAG V2.0\n"[..], b"#ROSRECORD V1.2\n"][version].to_vec();
        data.extend(body);
        exercise(&data)?;
    }

    /// Bytes of a real bag overwritten at random places.
    #[test]
    fn flipped_bytes_never_panic(
        which in 0usize..BAGS.len(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let mut data = bag(which);
        for (at, byte) in flips {
            let at = at.index(data.len());
            data[at] = byte;
        }
        exercise(&data)?;
    }

    /// Length and count fields replaced with huge values: a u32 written anywhere, cut anywhere.
    #[test]
    fn lying_lengths_never_panic_or_allocate_from_the_lie(
        which in 0usize..BAGS.len(),
        at in any::<prop::sample::Index>(),
        value in prop_oneof![Just(u32::MAX), Just(0x7fff_ffff), Just(0x0100_0000), any::<u32>()],
        cut in any::<prop::sample::Index>(),
    ) {
        let mut data = bag(which);
        let at = at.index(data.len() - 4);
        data[at..at + 4].copy_from_slice(&value.to_le_bytes());
        let cut = cut.index(data.len() + 1);
        exercise(&data[..cut.max(at + 4).min(data.len())])?;
    }
}

/// Found by `flipped_bytes_never_panic`: the last byte of Float64.bag's chunk info makes it
/// announce about four billion messages; the whole-chunk walk sized its message list from that
/// count (64 MiB) before finding that the chunk could never hold them.
#[test]
fn a_chunk_info_announcing_billions_of_messages_sizes_nothing_from_it() {
    let mut data = bag(1);
    let last = data.len() - 2;
    data[last] = 0xff;
    exercise(&data).unwrap();
}
