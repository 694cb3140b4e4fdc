//! The hostile definitions and messages of `testdata/bad/cdr/`: the exact error each gives
//! (variant, field path, offset), within the allocation bound of the hostile corpus.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../it/bad_files.rs"]
mod bad_files;

use robolog_cdr::{Error, Plan};
use robolog_testkit::alloc::{CountingAllocator, Peak, counting_allocator};
use robolog_testkit::hostile::{HOSTILE_PEAK_BOUND, run_corpus};

#[global_allocator]
static ALLOCATOR: CountingAllocator = counting_allocator();

fn describe(e: &Error) -> String {
    match e {
        Error::Definition(e) => {
            let debug = format!("{e:?}");
            format!(
                "Definition({})",
                debug
                    .split(|c: char| !c.is_alphanumeric())
                    .next()
                    .unwrap_or_default()
            )
        }
        Error::TooDeep { depth, limit, .. } => format!("TooDeep({depth} > {limit})"),
        Error::NoHeader { len } => format!("NoHeader({len})"),
        Error::UnsupportedEncapsulation { name, .. } => format!("Unsupported({name})"),
        Error::Truncated { path, offset, .. } => format!("Truncated({path} @{offset})"),
        Error::LengthPastEnd {
            path,
            offset,
            length,
            ..
        } => format!("LengthPastEnd({path} = {length} @{offset})"),
        Error::TooManyValues { path, offset, .. } => format!("TooManyValues({path} @{offset})"),
        Error::TrailingBytes { offset, count } => format!("TrailingBytes({count} @{offset})"),
        Error::InvalidBool {
            path,
            offset,
            value,
        } => format!("InvalidBool({path} = {value} @{offset})"),
        Error::MissingNul { path, offset, .. } => format!("MissingNul({path} @{offset})"),
        Error::BoundExceeded {
            path,
            offset: Some(offset),
            length,
            bound,
        } => format!("BoundExceeded({path} = {length} > {bound} @{offset})"),
        other => format!("{other:?}"),
    }
}

/// Compiles the plan, decodes (lenient and strict) and projects every top-level field.
fn outcome(bytes: &[u8]) -> String {
    let (ty, definition, message) = bad_files::split(bytes);
    let plan = match Plan::from_bundle(&ty, &definition) {
        Ok(plan) => plan,
        Err(e) => return format!("plan: {}", describe(&e)),
    };
    let names: Vec<&str> = plan.field_names().collect();
    let projected = match plan.projection(&names) {
        Ok(projection) => projection.extract(message).err().map(|e| describe(&e)),
        Err(_) => None,
    };
    let lenient = match plan.decode(message) {
        Ok(decoded) => format!("{} fields", decoded.root().fields().len()),
        Err(e) => format!("decode: {}", describe(&e)),
    };
    let strict = match plan.decode_strict(message) {
        Ok(_) => None,
        Err(e) => Some(format!("strict: {}", describe(&e))),
    };
    let mut parts = vec![lenient];
    if let Some(strict) = strict
        && !parts[0].starts_with("decode:")
    {
        parts.push(strict);
    }
    if let Some(p) = projected
        && !parts[0].ends_with(&p)
    {
        parts.push(format!("projection: {p}"));
    }
    parts.join("; ")
}

/// What each file gives. Decoding and projecting report a cut sequence differently: decoding
/// checks the count against the bytes left before reading any element (`LengthPastEnd` at the
/// count), projecting skips the elements and finds the end of the data (`Truncated` after the
/// count).
fn expected(name: &str) -> String {
    match name {
        "zero-length.cdr" => "decode: NoHeader(0)".into(),
        "header-only.cdr" => "decode: Truncated(a @4)".into(),
        "pl-cdr-le.cdr" => "decode: Unsupported(PL_CDR_LE)".into(),
        "delimited-cdr2-le.cdr" => "decode: Unsupported(DELIMITED_CDR2_LE)".into(),
        "not-cdr.cdr" => {
            "decode: Unsupported(not a CDR encapsulation (the first byte is not 0))".into()
        }
        "string-length-past-end.cdr" => format!(
            "decode: LengthPastEnd(s = {} @4); projection: Truncated(s @8)",
            u32::MAX
        ),
        "sequence-count-huge.cdr" => format!(
            "decode: LengthPastEnd(v = {} @4); projection: Truncated(v @12)",
            1u64 << 29
        ),
        "message-sequence-count-huge.cdr" => {
            format!("decode: LengthPastEnd(pts = {} @4)", u32::MAX)
        }
        "empty-message-sequence.cdr" => {
            format!("decode: LengthPastEnd(e = {} @4)", u32::MAX)
        }
        "wstring-count-huge.cdr" => format!(
            "decode: LengthPastEnd(w = {} @4); projection: Truncated(w @8)",
            1u64 << 30
        ),
        "fixed-array-huge.cdr" => format!(
            "decode: LengthPastEnd(x = {} @4); projection: Truncated(x @4)",
            u64::MAX
        ),
        // The plan compiler stops at the first level past the limit.
        "nesting-too-deep.cdr" => "plan: TooDeep(101 > 100)".into(),
        "trailing-bytes.cdr" => "1 fields; strict: TrailingBytes(5 @5)".into(),
        "bool-two.cdr" => "2 fields; strict: InvalidBool(b = 2 @5)".into(),
        "string-without-nul.cdr" => "1 fields; strict: MissingNul(s @4)".into(),
        "bound-exceeded.cdr" => "1 fields; strict: BoundExceeded(v = 2 > 1 @4)".into(),
        "big-endian-truncated.cdr" => "decode: Truncated(p.y @12)".into(),
        "recursive.cdr" => "plan: Definition(RecursiveType)".into(),
        "missing-type.cdr" => "plan: Definition(MissingType)".into(),
        other => format!("no expectation for {other}"),
    }
}

/// 2 million values from 20 kB: decoding stops with `TooManyValues` somewhere inside `items`
/// once the message's value budget is spent; which element that is depends on the budget, so
/// only the shape of the path is checked.
fn fanout_ok(got: &str) -> bool {
    got.starts_with("decode: TooManyValues(items[") && got.contains("].next.next")
}

#[test]
fn every_hostile_message_fails_exactly_as_expected_within_the_memory_bound() {
    let peak = Peak::new(&ALLOCATOR, HOSTILE_PEAK_BOUND);
    let checked = run_corpus("cdr", peak, |name, bytes| {
        let got = outcome(bytes);
        let want = expected(name);
        if got == want || (name == "tiny-message-fanout.cdr" && fanout_ok(&got)) {
            Ok(())
        } else {
            Err(format!("got {got:?}, expected {want:?}"))
        }
    });
    assert_eq!(checked, 20);
}
