//! The hostile files of `testdata/bad/mcap/`: what every reader must make of each (exact error
//! variant and offset), and that none allocates more than [`HOSTILE_PEAK_BOUND`] on any of them.
//! The generator is `tests/it/bad_files/mod.rs`; `tests/it/hostile_generated.rs` checks the committed
//! files against it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// The generator, shared with `it/hostile_generated.rs`.
#[path = "it/bad_files/mod.rs"]
mod bad_files;

use bad_files::{Spec, model};

use robolog_mcap::{
    Bytes, LinearReader, McapError, McapReader, Order, ReadOptions, RecoverOptions, StreamReader,
    SummarySource, WriteOptions, recover_with,
};
use robolog_testkit::alloc::{CountingAllocator, Peak, counting_allocator};
use robolog_testkit::hostile::{HOSTILE_CHUNK_LIMIT, HOSTILE_PEAK_BOUND, run_corpus};

// A test binary of its own rather than a module of `it/`: this allocator counts every
// allocation of the process, so the bound holds only if no other test runs beside this one.
#[global_allocator]
static ALLOCATOR: CountingAllocator = counting_allocator();

fn options() -> ReadOptions {
    ReadOptions::default()
        .max_record_size(HOSTILE_CHUNK_LIMIT as u64)
        .threads(0)
}

fn describe(e: &McapError) -> String {
    let debug = format!("{e:?}");
    let variant = debug
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_owned();
    let detail = match e {
        McapError::Truncated { record, .. }
        | McapError::Malformed { record, .. }
        | McapError::Invalid { record, .. }
        | McapError::TooLarge { record, .. } => format!("({record})"),
        McapError::CrcMismatch { what, .. } => format!("({what})"),
        McapError::Codec { source, .. } => {
            let debug = format!("{source:?}");
            format!(
                "({})",
                debug
                    .split(|c: char| !c.is_alphanumeric())
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

fn indexed(bytes: &[u8]) -> String {
    let reader = match McapReader::open_with(Bytes::copy_from_slice(bytes), options()) {
        Ok(reader) => reader,
        Err(e) => return format!("Err {}", describe(&e)),
    };
    let source = match reader.summary().source {
        SummarySource::SummarySection => "summary",
        SummarySource::Scan => "scan",
    };
    let messages = match reader.messages().order(Order::LogTime).iter() {
        Ok(messages) => messages,
        Err(e) => return format!("{source}, Err {}", describe(&e)),
    };
    let mut count = 0;
    for message in messages {
        match message {
            Ok(_) => count += 1,
            Err(e) => return format!("{source}, {count} messages, then Err {}", describe(&e)),
        }
    }
    format!("{source}, {count} messages")
}

fn linear(bytes: &[u8]) -> String {
    let mut count = 0;
    for message in
        LinearReader::with_options(Bytes::copy_from_slice(bytes), options()).into_messages()
    {
        match message {
            Ok(_) => count += 1,
            Err(e) => return format!("{count} messages, then Err {}", describe(&e)),
        }
    }
    format!("{count} messages")
}

fn streamed(bytes: &[u8]) -> String {
    let mut reader = StreamReader::with_options(bytes, options());
    let mut count = 0;
    while let Some(record) = reader.next_record() {
        match record {
            Ok(_) => count += 1,
            Err(e) => return format!("{count} records, then Err {}", describe(&e)),
        }
    }
    format!("{count} records")
}

fn recovered(bytes: &[u8]) -> String {
    let limits = RecoverOptions::new().max_chunk_size(HOSTILE_CHUNK_LIMIT as u64);
    match recover_with(
        Bytes::copy_from_slice(bytes),
        Vec::new(),
        WriteOptions::default(),
        limits,
    ) {
        Ok((_, report)) => format!(
            "{} recovered, {} lost, {} unverified{}",
            report.messages_recovered,
            report.messages_lost,
            report.messages_unverified,
            if report.truncated { ", truncated" } else { "" }
        ),
        Err(e) => format!("Err {}", describe(&e)),
    }
}

/// What each file gives: indexed reader (log-time order), linear reader (messages), streaming
/// reader (records), recovery. Offsets follow from how `bad_files` builds each file (spec §3).
fn expected(name: &str) -> [String; 4] {
    let plain = model(Spec::default());
    let chunk = plain.chunk_start;
    let s = |x: &str| x.to_owned();
    // A chunk the readers refuse as declared; recovery salvages its records.
    let bad_chunk = |e: String| {
        [
            format!("summary, 0 messages, then Err {e}"),
            format!("0 messages, then Err {e}"),
            format!("1 records, then Err {e}"),
            s("3 recovered, 0 lost, 0 unverified"),
        ]
    };
    match name {
        "empty.mcap" => [
            s("Err Truncated(magic)@0"),
            s("0 messages, then Err Truncated(magic)@0"),
            s("0 records, then Err Truncated(magic)@0"),
            s("Err BadMagic@0"),
        ],
        // No footer: the indexed reader scans (and finds nothing); the linear readers expect
        // the Footer that a complete file ends with.
        "magic-only.mcap" => [
            s("scan, 0 messages"),
            s("0 messages, then Err Truncated(Footer)@8"),
            s("0 records, then Err Truncated(Footer)@8"),
            s("0 recovered, 0 lost, 0 unverified, truncated"),
        ],
        // The stream cannot see the end: its record limit refuses the length.
        "record-length-huge.mcap" => [
            s("scan, 0 messages"),
            s("0 messages, then Err Truncated(Header)@8"),
            s("0 records, then Err TooLarge(Header)@8"),
            s("0 recovered, 0 lost, 0 unverified, truncated"),
        ],
        // The header's profile string runs past its 8-byte record: malformed. The linear
        // reader reports the malformed header as a truncated file instead, since no Footer
        // follows it either (25 = 8 + the 17-byte header record).
        "string-length-huge.mcap" => [
            s("scan, 0 messages"),
            s("0 messages, then Err Truncated(Footer)@25"),
            s("0 records, then Err Malformed(Header)@8"),
            s("0 recovered, 0 lost, 0 unverified, truncated"),
        ],
        "zstd-size-lies-huge.mcap" | "lz4-size-lies-huge.mcap" | "none-size-lies-huge.mcap" => {
            bad_chunk(format!("TooLarge(Chunk)@{chunk}"))
        }
        // Recovery decodes at most the declared 10 bytes, less than any record: the chunk's
        // message index says what was lost.
        "zstd-size-lies-small.mcap" => {
            let mut e = bad_chunk(format!("Codec(Overflow)@{chunk}"));
            e[3] = s("0 recovered, 3 lost, 0 unverified");
            e
        }
        // Over the 16 MiB limit for the readers; recovery keeps the message.
        "zstd-bomb.mcap" => {
            // Recovery under the chunk limit cannot keep the honest 64 MiB message; the loss
            // is counted from the message index, which the model fills with its three entries.
            let mut e = bad_chunk(format!("TooLarge(Chunk)@{chunk}"));
            e[3] = s("0 recovered, 3 lost, 0 unverified");
            e
        }
        "lz4-bomb.mcap" => [
            s("summary, 1 messages"),
            s("1 messages"),
            s("10 records"),
            s("1 recovered, 0 lost, 0 unverified"),
        ],
        // Indexed reads leave uncompressed chunks unchecked by default
        // (`ReadOptions::verify_uncompressed_chunks`; tests/it/query_chunks.rs).
        "chunk-crc-mismatch.mcap" => [
            s("summary, 3 messages"),
            format!("0 messages, then Err CrcMismatch(chunk)@{chunk}"),
            format!("1 records, then Err CrcMismatch(chunk)@{chunk}"),
            s("3 recovered, 0 lost, 3 unverified"),
        ],
        "data-crc-mismatch.mcap" => [
            s("summary, 3 messages"),
            format!(
                "3 messages, then Err CrcMismatch(data section)@{}",
                plain.data_end_start
            ),
            format!(
                "7 records, then Err CrcMismatch(data section)@{}",
                plain.data_end_start
            ),
            s("3 recovered, 0 lost, 0 unverified"),
        ],
        // The summary cannot be found: the indexed reader scans; the others never use it.
        "summary-start-past-eof.mcap" | "message-index-offset-past-chunk.mcap" => [
            if name == "summary-start-past-eof.mcap" {
                s("scan, 3 messages")
            } else {
                s("summary, 3 messages")
            },
            s("3 messages"),
            s("12 records"),
            s("3 recovered, 0 lost, 0 unverified"),
        ],
        "chunk-index-mid-record.mcap" => [
            format!(
                "summary, 0 messages, then Err Invalid(ChunkIndex)@{}",
                chunk + 5
            ),
            s("3 messages"),
            s("12 records"),
            s("3 recovered, 0 lost, 0 unverified"),
        ],
        // The readers hand the message out with its channel id (9), for which the summary has
        // no channel; recovery cannot write it without a channel and counts it lost.
        "message-on-undeclared-channel.mcap" => [
            s("summary, 1 messages"),
            s("1 messages"),
            s("10 records"),
            s("0 recovered, 1 lost, 0 unverified"),
        ],
        "cut-mid-chunk.mcap" => [
            s("scan, 0 messages"),
            format!("0 messages, then Err Truncated(Chunk)@{chunk}"),
            format!("1 records, then Err Truncated(Chunk)@{chunk}"),
            s("0 recovered, 0 lost, 0 unverified, truncated"),
        ],
        _ => std::array::from_fn(|_| format!("no expectation for {name}")),
    }
}

#[test]
fn every_hostile_file_fails_exactly_as_expected_within_the_memory_bound() {
    let peak = Peak::new(&ALLOCATOR, HOSTILE_PEAK_BOUND);
    let checked = run_corpus("mcap", peak, |name, bytes| {
        let got = [
            indexed(bytes),
            linear(bytes),
            streamed(bytes),
            recovered(bytes),
        ];
        let want = expected(name);
        if got == want {
            Ok(())
        } else {
            Err(format!("got {got:?}, expected {want:?}"))
        }
    });
    assert_eq!(checked, 17);
}
