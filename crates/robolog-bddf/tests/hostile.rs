//! The hostile files of `testdata/bad/bddf/`: what every reader must make of each (exact error
//! variant and offset), and that no reader allocates more than [`HOSTILE_PEAK_BOUND`] on any of
//! them. The generator is `tests/it/bad_files/mod.rs`; `tests/it/hostile_generated.rs` checks the
//! committed files against it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// The generator, shared with `it/hostile_generated.rs`.
#[path = "it/bad_files/mod.rs"]
mod bad_files;

use robolog_bddf::{
    BddfReader, Error, IndexSource, ReadOptions, StreamOptions, StreamReader, recover,
    recover_stream,
};
use robolog_framing::Bytes;
use robolog_testkit::alloc::{CountingAllocator, Peak, counting_allocator};
use robolog_testkit::hostile::{HOSTILE_CHUNK_LIMIT, HOSTILE_PEAK_BOUND, run_corpus};

// A test binary of its own rather than a module of `it/`: this allocator counts every
// allocation of the process, so the bound holds only if no other test runs beside this one.
#[global_allocator]
static ALLOCATOR: CountingAllocator = counting_allocator();

/// The error's variant (for POD errors, the POD error's too) and its offset.
fn describe(e: &Error) -> String {
    let debug = format!("{e:?}");
    let variant = debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_owned();
    let detail = match e {
        Error::Pod { source, .. } => {
            let pod = format!("{source:?}");
            format!(
                "({})",
                pod.split(|c: char| !c.is_alphanumeric())
                    .next()
                    .unwrap_or_default()
            )
        }
        Error::Truncated { what, .. } => format!("({what})"),
        Error::Framing(e) => {
            let kind = format!("{:?}", e.kind);
            format!(
                "({})",
                kind.split(|c: char| !c.is_alphanumeric())
                    .next()
                    .unwrap_or_default()
            )
        }
        _ => String::new(),
    };
    match e.offset() {
        Some(offset) => format!("{variant}{detail}@{offset}"),
        None => format!("{variant}{detail}"),
    }
}

/// Opens (with or without the walk fallback), reads every block in file order and decodes the
/// POD ones: where the index came from, how many blocks read, and the error that ended it.
fn indexed(bytes: &[u8], scan_fallback: bool) -> String {
    let options = ReadOptions::new()
        .verify_checksum(true)
        .strict(!scan_fallback);
    let reader = match BddfReader::open_with(Bytes::copy_from_slice(bytes), options) {
        Ok(reader) => reader,
        Err(e) => return format!("Err {}", describe(&e)),
    };
    let source = match reader.index_source() {
        IndexSource::File => "index".to_owned(),
        IndexSource::Scan { reason, .. } => format!("scan({})", describe(reason)),
    };
    let mut count = 0;
    for block in reader.blocks() {
        let block = match block {
            Ok(block) => block,
            Err(e) => return format!("{source}, {count} blocks, then Err {}", describe(&e)),
        };
        let series = reader.series_by_index(block.series_index).unwrap();
        if series.sample_shape().is_some()
            && let Err(e) = series.decode_pod(&block)
        {
            return format!("{source}, {count} blocks, then Err {}", describe(&e));
        }
        count += 1;
    }
    format!("{source}, {count} blocks")
}

fn streamed(bytes: &[u8]) -> String {
    let options = StreamOptions::new()
        .max_block_size(HOSTILE_CHUNK_LIMIT as u64)
        .verify_checksum(true);
    let mut reader = match StreamReader::with_options(bytes, options) {
        Ok(reader) => reader,
        Err(e) => return format!("Err {}", describe(&e)),
    };
    let mut count = 0;
    loop {
        match reader.next_block() {
            Ok(Some(block)) => {
                let series = reader.series_by_index(block.series_index).unwrap();
                if series.sample_shape().is_some()
                    && let Err(e) = series.decode_pod(&block)
                {
                    return format!("{count} blocks, then Err {}", describe(&e));
                }
                count += 1;
            }
            Ok(None) => return format!("{count} blocks"),
            Err(e) => return format!("{count} blocks, then Err {}", describe(&e)),
        }
    }
}

/// What recovery gives, which must be the same recovered in memory and streamed from a pipe
/// (both write the same file).
fn recovered(bytes: &[u8]) -> String {
    let in_memory = recover(bytes, Vec::new());
    let mut streamed_out = Vec::new();
    let streamed = recover_stream(bytes, &mut streamed_out);
    assert_eq!(format!("{streamed:?}"), format!("{in_memory:?}"));
    let mut memory_out = Vec::new();
    let _ = recover(bytes, &mut memory_out);
    assert!(streamed_out == memory_out);
    match in_memory {
        Ok(report) => {
            let checksum = match report.input_checksum_ok {
                Some(false) => ", input checksum wrong",
                _ => "",
            };
            match &report.stopped {
                Some(e) => format!(
                    "{} blocks{checksum}, stopped by {}",
                    report.data_blocks_recovered,
                    describe(e)
                ),
                None => format!("{} blocks{checksum}", report.data_blocks_recovered),
            }
        }
        Err(e) => format!("Err {}", describe(&e)),
    }
}

/// What each file must give: open with the walk fallback, open without, stream, recover.
/// Offsets follow from how `bad_files` builds each file (spec §2–§5).
fn expected(name: &str, len: usize) -> [String; 4] {
    let plain = bad_files::plain();
    let first = plain.block_offsets[0][0];
    let second = plain.block_offsets[0][1];
    let s = |x: &str| x.to_owned();
    let same = |x: String| [x.clone(), x.clone(), x.clone(), x];
    // The index is refused; the walk (and the stream, and recovery) find both blocks.
    let bad_index = |e: String| {
        [
            format!("scan({e}), 2 blocks"),
            format!("Err {e}"),
            s("2 blocks"),
            s("2 blocks"),
        ]
    };
    match name {
        "empty.bddf" => [
            s("Err NotBddf@0"),
            s("Err NotBddf@0"),
            s("Err Truncated(file magic)@0"),
            s("Err NotBddf@0"),
        ],
        "magic-only.bddf" => [
            s("Err Truncated(block header)@4"),
            s("Err NoTrailer"),
            s("Err Truncated(block header)@4"),
            s("0 blocks, stopped by Truncated(block header)@4"),
        ],
        // The stream cannot know the file is short: its block limit refuses the size, at the
        // body that would follow the header.
        "block-size-huge.bddf" => [
            s("Err Truncated(descriptor block)@4"),
            s("Err NoTrailer"),
            s("Err Framing(LengthOverLimit)@12"),
            s("0 blocks, stopped by Truncated(descriptor block)@4"),
        ],
        "reserved-block-type.bddf" => {
            let e = format!("ReservedBlockType@{first}");
            [
                format!("index, 0 blocks, then Err {e}"),
                format!("index, 0 blocks, then Err {e}"),
                format!("0 blocks, then Err {e}"),
                format!("0 blocks, stopped by {e}"),
            ]
        }
        "desc-len-over-block-size.bddf" => {
            let e = format!("DescriptorTooLong@{first}");
            [
                format!("index, 0 blocks, then Err {e}"),
                format!("index, 0 blocks, then Err {e}"),
                format!("0 blocks, then Err {e}"),
                format!("0 blocks, stopped by {e}"),
            ]
        }
        "index-offset-past-eof.bddf" => bad_index(format!("BadIndexOffset@{}", 1u64 << 50)),
        "index-offset-zero.bddf" => bad_index(s("BadIndexOffset@0")),
        // The block there starts 3 bytes into a data block: not a descriptor block.
        "index-offset-mid-block.bddf" => bad_index(format!("BadIndex@{}", first + 3)),
        // Caught at open: the series' block index points outside the file.
        "entry-offset-past-eof.bddf" => {
            bad_index(format!("BadIndex@{}", plain.block_index_offsets[0]))
        }
        // Inside the file, so only reading it shows that its "header" is 5 bytes into the first
        // data block (whose byte 7 there is not a known block type).
        "entry-offset-mid-block.bddf" => {
            let e = format!("ReservedBlockType@{}", first + 5);
            [
                format!("index, 1 blocks, then Err {e}"),
                format!("index, 1 blocks, then Err {e}"),
                s("2 blocks"),
                s("2 blocks"),
            ]
        }
        "descriptor-offset-at-data-block.bddf" => bad_index(format!("UnexpectedBlock@{first}")),
        "sha1-mismatch.bddf" => [
            s("index, 2 blocks, then Err ChecksumMismatch"),
            s("index, 2 blocks, then Err ChecksumMismatch"),
            s("2 blocks, then Err ChecksumMismatch"),
            s("2 blocks, input checksum wrong"),
        ],
        "unsupported-version.bddf" => same(s("Err UnsupportedVersion@4")),
        "unsupported-checksum.bddf" => same(s("Err UnsupportedChecksum@4")),
        // Only decoding the samples needs the sample size; recovery copies blocks as they are.
        "pod-dimensions-overflow.bddf" | "pod-partial-sample.bddf" => {
            let pod = if name == "pod-partial-sample.bddf" {
                "PartialSample"
            } else {
                "SampleTooLarge"
            };
            let series = if name == "pod-partial-sample.bddf" {
                bad_files::pod_partial_series()
            } else {
                bad_files::pod_overflow_series()
            };
            let block = bad_files::model(&[series], Default::default()).block_offsets[0][0];
            let e = format!("Pod({pod})@{block}");
            [
                format!("index, 0 blocks, then Err {e}"),
                format!("index, 0 blocks, then Err {e}"),
                format!("0 blocks, then Err {e}"),
                s("1 blocks"),
            ]
        }
        // The 0-byte index block is the reference writer's empty index: it declares no series,
        // and the indexed reader believes it. Read in order, the file has one empty block.
        "zero-lengths.bddf" => [
            s("index, 0 blocks"),
            s("index, 0 blocks"),
            s("1 blocks"),
            s("1 blocks"),
        ],
        // The block of undeclared series 5 is an error when streamed, and is skipped (reported
        // as lost) by recovery; the empty index declares nothing.
        "undeclared-series.bddf" => [
            s("index, 0 blocks"),
            s("index, 0 blocks"),
            s("0 blocks, then Err UnknownSeries@22"),
            s("0 blocks"),
        ],
        "series-index-huge.bddf" | "cut-mid-block.bddf" => {
            let e = if name == "cut-mid-block.bddf" {
                format!("Truncated(data block)@{second}")
            } else {
                // The file ends where the next block header would be.
                format!("Truncated(block header)@{len}")
            };
            [
                format!("scan(NoTrailer), 1 blocks, then Err {e}"),
                s("Err NoTrailer"),
                format!("1 blocks, then Err {e}"),
                format!("1 blocks, stopped by {e}"),
            ]
        }
        "protobuf-length-huge.bddf" => same(s("Err Decode@4")),
        _ => same(format!("no expectation for {name}")),
    }
}

#[test]
fn every_hostile_file_fails_exactly_as_expected_within_the_memory_bound() {
    let peak = Peak::new(&ALLOCATOR, HOSTILE_PEAK_BOUND);
    let checked = run_corpus("bddf", peak, |name, bytes| {
        let got = [
            indexed(bytes, true),
            indexed(bytes, false),
            streamed(bytes),
            recovered(bytes),
        ];
        let want = expected(name, bytes.len());
        if got == want {
            Ok(())
        } else {
            Err(format!("got {got:?}, expected {want:?}"))
        }
    });
    assert!(checked >= 20);
}
