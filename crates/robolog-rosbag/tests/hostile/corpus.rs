//! The hostile bags of `testdata/bad/rosbag/`: how each is built (the generator below writes
//! them; `ROBOLOG_WRITE_BAD=1` rewrites the committed copies), what every reader must make of it
//! (exact error variant and offset), and that no reader allocates more than
//! [`HOSTILE_PEAK_BOUND`] on any of them.
//!
//! The generator is `tests/it/bad_files/mod.rs`; `tests/it/hostile_generated.rs` checks the
//! committed files against it (in the other test binary, so that building the bombs does not
//! count here).

use std::io::Cursor;

use crate::bad_files::{self, FIRST_CHUNK, Spec, model};
use robolog_framing::{Bytes, CodecError, ErrorKind};
use robolog_rosbag::{Bag, Error, IndexStatus, OpenOptions, Order, StreamOptions, StreamReader};
use robolog_testkit::alloc::Peak;
use robolog_testkit::hostile::{HOSTILE_CHUNK_LIMIT, HOSTILE_PEAK_BOUND, run_corpus};

use crate::{ALLOCATOR, one_at_a_time};

// ---------------------------------------------------------------------------------------------
// What the readers make of a file, in a form the expectations below can state exactly.

fn describe(e: &Error) -> String {
    match e {
        Error::EmptyFile => "EmptyFile".into(),
        Error::NotABag { .. } => "NotABag".into(),
        Error::Framing { kind, source } => {
            format!(
                "Framing({kind:?}, {} @{})",
                framing_kind(&source.kind),
                source.offset
            )
        }
        Error::Malformed { kind, offset, .. } => format!("Malformed({kind:?} @{offset})"),
        Error::IndexDamaged { offset, .. } => format!("IndexDamaged(@{offset})"),
        Error::Unindexed => "Unindexed".into(),
        Error::UnsupportedCompression { offset, name } => {
            format!("UnsupportedCompression({name} @{offset})")
        }
        Error::Codec { offset, source } => format!("Codec({} @{offset})", codec_kind(source)),
        other => format!("{other:?}"),
    }
}

fn framing_kind(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::UnexpectedEnd { .. } => "UnexpectedEnd",
        ErrorKind::LengthPastEnd { .. } => "LengthPastEnd",
        ErrorKind::LengthOverLimit { .. } => "LengthOverLimit",
        ErrorKind::InvalidUtf8 { .. } => "InvalidUtf8",
        _ => "other",
    }
}

fn codec_kind(e: &CodecError) -> String {
    match e {
        CodecError::TooLarge { expected, cap } => format!("TooLarge {expected}>{cap}"),
        CodecError::SizeMismatch {
            expected, actual, ..
        } => format!("SizeMismatch {actual}!={expected}"),
        CodecError::Overflow { expected, .. } => format!("Overflow >{expected}"),
        CodecError::Corrupt { .. } => "Corrupt".into(),
        other => format!("{other:?}"),
    }
}

/// Opens with the hostile chunk limit, reads every message in time order: `index` status, the
/// number of messages read, and the error that stopped the read, if any.
fn indexed(bytes: &[u8], strict: bool, verify_chunks: bool) -> String {
    let options = OpenOptions::new()
        .max_chunk_size(HOSTILE_CHUNK_LIMIT)
        .strict(strict)
        .verify_chunks(verify_chunks);
    let bag = match Bag::open_with(Bytes::copy_from_slice(bytes), options) {
        Ok(bag) => bag,
        Err(e) => return format!("Err {}", describe(&e)),
    };
    let status = match bag.index_status() {
        IndexStatus::Used => "index".to_owned(),
        IndexStatus::Missing => "scan(missing)".to_owned(),
        IndexStatus::Damaged { offset, .. } => format!("scan(damaged @{offset})"),
    };
    let mut count = 0;
    for message in bag.messages().order(Order::LogTime).threads(0) {
        match message {
            Ok(_) => count += 1,
            Err(e) => return format!("{status}, {count} messages, then Err {}", describe(&e)),
        }
    }
    format!("{status}, {count} messages")
}

/// Streams with recovery on (damage ends the stream and is reported) or off (damage is an error).
fn streamed(bytes: &[u8], recover: bool) -> String {
    let options = StreamOptions::new()
        .max_record_size(HOSTILE_CHUNK_LIMIT as u64)
        .recover(recover);
    let mut reader = match StreamReader::with_options(Cursor::new(bytes), options) {
        Ok(reader) => reader,
        Err(e) => return format!("Err {}", describe(&e)),
    };
    let mut count = 0;
    loop {
        match reader.next_message() {
            Ok(Some(_)) => count += 1,
            Ok(None) => break,
            Err(e) => return format!("{count} messages, then Err {}", describe(&e)),
        }
    }
    let report = reader.report();
    let problems: Vec<String> = report
        .problems
        .iter()
        .map(|p| {
            let at = p.offset.map_or_else(String::new, |o| o.to_string());
            format!("{:?}@{at}", p.severity)
        })
        .collect();
    let end = if report.clean_end { "clean" } else { "unclean" };
    format!(
        "{count} messages, {end} {problems:?}, {} lost",
        report.dropped_messages
    )
}

/// What the default open, which reads chunk headers only when a query needs them, must give:
/// the same as the lenient open that checks every chunk header, except where a chunk header is
/// what is wrong. Then the index is used and the query reports the chunk.
fn expected_lazy(name: &str, verified: &str) -> String {
    let chunk = model(Spec::default()).chunk_pos;
    match name {
        "chunk-info-pos-mid-record.bag" => {
            format!("index, 0 messages, then Err IndexDamaged(@{})", chunk + 1)
        }
        "unsupported-compression.bag" => {
            format!("index, 0 messages, then Err UnsupportedCompression(zstd @{chunk})")
        }
        _ => verified.to_owned(),
    }
}

/// What each file must give: lenient open, strict open (both checking every chunk header at
/// open), stream with recovery, stream without. Offsets follow from how `bad_files` builds
/// each file (spec §2–§3).
fn expected(name: &str) -> [String; 4] {
    let plain = model(Spec::default());
    let chunk = plain.chunk_pos;
    // What the LZ4 chunk of the model bag may honestly decode to: 255 × its compressed bytes +
    // 1 KiB (robolog-rosbag's plausibility rule for LZ4).
    let lz4 = model(Spec {
        compression: "lz4",
        ..Spec::default()
    });
    let lz4_plausible = (lz4.index_data_pos - lz4.chunk_data_pos) * 255 + 1024;
    let limit = HOSTILE_CHUNK_LIMIT;
    let s = |x: &str| x.to_owned();
    let same = |x: String| [x.clone(), x.clone(), x.clone(), x];
    let clean3 = s("3 messages, clean [], 0 lost");
    // The stream reader salvages what it can of a chunk it cannot decode as declared, reports
    // the chunk, and goes on; the indexed reader refuses the chunk.
    let bad_chunk = |e: String, salvaged: usize| {
        [
            format!("index, 0 messages, then Err {e}"),
            format!("index, 0 messages, then Err {e}"),
            format!("{salvaged} messages, clean [\"Error@{chunk}\"], 0 lost"),
            format!("0 messages, then Err {e}"),
        ]
    };
    match name {
        "empty.bag" => same(s("Err EmptyFile")),
        "version-line-only.bag" => [
            s("Err Framing(FileHeader, UnexpectedEnd @13)"),
            s("Err Framing(FileHeader, UnexpectedEnd @13)"),
            s("Err Framing(Record, UnexpectedEnd @13)"),
            s("Err Framing(Record, UnexpectedEnd @13)"),
        ],
        // The stream has no end to check against: its record limit refuses the length instead,
        // at the header that would follow the length field.
        "header-len-huge.bag" => [
            s("Err Framing(FileHeader, LengthPastEnd @13)"),
            s("Err Framing(FileHeader, LengthPastEnd @13)"),
            s("Err Framing(Record, LengthOverLimit @17)"),
            s("Err Framing(Record, LengthOverLimit @17)"),
        ],
        // 13 + 4 + 69 + 4: the data that would follow data_len.
        "file-header-data-len-past-eof.bag" => [
            s("Err Framing(FileHeader, LengthPastEnd @90)"),
            s("Err Framing(FileHeader, LengthPastEnd @90)"),
            s("Err Framing(Record, UnexpectedEnd @90)"),
            s("Err Framing(Record, UnexpectedEnd @90)"),
        ],
        // The first field, right after header_len.
        "field-len-past-header.bag" => same(s("Err Malformed(Record @17)")),
        // The record at 4117 has header_len 0, so its (empty) header at 4121 has no op.
        "zero-length-record.bag" => [
            s("scan(missing), 0 messages"),
            s("Err Unindexed"),
            format!("0 messages, clean [\"Warning@{FIRST_CHUNK}\"], 0 lost"),
            format!(
                "0 messages, then Err Malformed(Record @{})",
                FIRST_CHUNK + 4
            ),
        ],
        // A chunk of size 0 is what a killed recorder leaves (spec §8): the stream reader stops
        // there; the index says the chunk is empty and the indexed reader follows it.
        "zero-lengths.bag" => [
            s("index, 1 messages"),
            s("index, 1 messages"),
            format!("0 messages, unclean [\"Error@{FIRST_CHUNK}\"], 0 lost"),
            format!("0 messages, then Err Malformed(Chunk @{FIRST_CHUNK})"),
        ],
        // A lying index is reported at the position it claims; the scan finds every message.
        "index-pos-past-eof.bag" => [
            format!("scan(damaged @{}), 3 messages", 1u64 << 40),
            format!("Err IndexDamaged(@{})", 1u64 << 40),
            clean3.clone(),
            clean3,
        ],
        "index-pos-mid-record.bag" => [
            format!("scan(damaged @{}), 3 messages", chunk + 3),
            format!("Err IndexDamaged(@{})", chunk + 3),
            clean3.clone(),
            clean3,
        ],
        // One connection record, then CHUNK_INFO where the 2nd connection should be.
        "counts-overflow.bag" => [
            format!("scan(damaged @{}), 3 messages", plain.index_pos),
            format!("Err IndexDamaged(@{})", plain.index_pos),
            clean3.clone(),
            clean3,
        ],
        "chunk-info-pos-past-eof.bag" => [
            format!("scan(damaged @{}), 3 messages", 1u64 << 33),
            format!("Err IndexDamaged(@{})", 1u64 << 33),
            clean3.clone(),
            clean3,
        ],
        "chunk-info-pos-mid-record.bag" => [
            format!("scan(damaged @{}), 3 messages", chunk + 1),
            format!("Err IndexDamaged(@{})", chunk + 1),
            clean3.clone(),
            clean3,
        ],
        // Chunk indexes that lie are not trusted: the chunk is walked instead. The stream checks
        // the counts of the index records after each chunk (not their offsets), as the scan
        // does: when recovering, it warns where the chunk's index records start.
        "index-offset-mid-record.bag" | "index-offset-past-chunk.bag" => [
            s("index, 3 messages"),
            s("index, 3 messages"),
            clean3.clone(),
            clean3,
        ],
        "index-count-huge.bag" => [
            s("index, 3 messages"),
            s("index, 3 messages"),
            format!(
                "3 messages, clean [\"Warning@{}\"], 0 lost",
                plain.index_data_pos
            ),
            clean3,
        ],
        "lz4-size-lies-huge.bag" => bad_chunk(
            format!("Codec(TooLarge {}>{lz4_plausible} @{chunk})", 0x3fff_ffff),
            3,
        ),
        "lz4-size-lies-small.bag" => bad_chunk(format!("Codec(Overflow >100 @{chunk})"), 3),
        "bz2-size-lies-huge.bag" => {
            bad_chunk(format!("Codec(TooLarge {}>{limit} @{chunk})", u32::MAX), 3)
        }
        "none-size-past-data.bag" => bad_chunk(
            format!(
                "Codec(SizeMismatch {}!={} @{chunk})",
                plain.index_data_pos - plain.chunk_data_pos,
                1 << 20
            ),
            3,
        ),
        // Its one message is 64 MiB of zeros: connection record + message record headers make
        // the chunk 213 bytes larger.
        "bz2-bomb.bag" => {
            let size = bomb_chunk_size(64 << 20);
            bad_chunk(format!("Codec(TooLarge {size}>{limit} @{chunk})"), 0)
        }
        "lz4-bomb.bag" => [
            s("index, 1 messages"),
            s("index, 1 messages"),
            s("1 messages, clean [], 0 lost"),
            s("1 messages, clean [], 0 lost"),
        ],
        "unsupported-compression.bag" => [
            format!("Err UnsupportedCompression(zstd @{chunk})"),
            format!("Err UnsupportedCompression(zstd @{chunk})"),
            format!("0 messages, clean [\"Error@{chunk}\"], 0 lost"),
            format!("0 messages, then Err UnsupportedCompression(zstd @{chunk})"),
        ],
        // The index section's copy of the connection is complete, so the indexed reader reads
        // the message; the stream only has the chunk's copy, whose missing `type` field is at
        // byte 47 of the chunk.
        "connection-without-type.bag" => [
            s("index, 1 messages"),
            s("index, 1 messages"),
            format!("0 messages, clean [\"Error@{chunk}\"], 0 lost"),
            s("0 messages, then Err Malformed(Connection @47)"),
        ],
        // Nothing says what a message on connection 7 is: every reader drops it. Its index
        // record (where the chunk's index records start, at 4386) counts it on connection 1,
        // which the recovering stream reports.
        "message-on-undeclared-connection.bag" => [
            s("index, 0 messages"),
            s("index, 0 messages"),
            format!("0 messages, clean [\"Error@{chunk}\", \"Warning@4386\"], 1 lost"),
            format!("0 messages, clean [\"Error@{chunk}\"], 1 lost"),
        ],
        _ => same(format!("no expectation for {name}")),
    }
}

/// The declared size of a bomb chunk whose one message holds `len` bytes: the connection
/// record plus the message record.
fn bomb_chunk_size(len: usize) -> u64 {
    (bad_files::chatter_connection().len() + bad_files::message(0, 0, b"").len() + len) as u64
}

#[test]
fn every_hostile_bag_fails_exactly_as_expected_within_the_memory_bound() {
    let _alone = one_at_a_time();
    let peak = Peak::new(&ALLOCATOR, HOSTILE_PEAK_BOUND);
    let checked = run_corpus("rosbag", peak, |name, bytes| {
        let got = [
            indexed(bytes, false, true),
            indexed(bytes, true, true),
            streamed(bytes, true),
            streamed(bytes, false),
        ];
        let want = expected(name);
        let got_lazy = indexed(bytes, false, false);
        let want_lazy = expected_lazy(name, &want[0]);
        if got != want {
            Err(format!("got {got:?}, expected {want:?}"))
        } else if got_lazy != want_lazy {
            Err(format!(
                "default open: got {got_lazy:?}, expected {want_lazy:?}"
            ))
        } else {
            Ok(())
        }
    });
    assert!(checked >= 24);
}
