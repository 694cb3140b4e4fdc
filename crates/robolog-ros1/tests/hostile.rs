//! The hostile definitions and messages of `testdata/bad/ros1/`: the exact error each gives
//! (variant, field path, offset), within the allocation bound of the hostile corpus.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// The generator, shared with `it/hostile_generated.rs`.
#[path = "it/bad_files/mod.rs"]
mod bad_files;

use robolog_ros1::{Error, Plan};
use robolog_testkit::alloc::{CountingAllocator, Peak, counting_allocator};
use robolog_testkit::hostile::{HOSTILE_PEAK_BOUND, run_corpus};

// A test binary of its own rather than a module of `it/`: this allocator counts every
// allocation of the process, so the bound holds only if no other test runs beside this one.
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
        Error::Truncated { path, offset, .. } => format!("Truncated({path} @{offset})"),
        Error::LengthPastEnd {
            path,
            offset,
            length,
            ..
        } => format!("LengthPastEnd({path} = {length} @{offset})"),
        Error::TooManyEmptyElements {
            path,
            offset,
            count,
        } => format!("TooManyEmptyElements({path} = {count} @{offset})"),
        Error::TooManyValues { path, offset, .. } => format!("TooManyValues({path} @{offset})"),
        Error::TrailingBytes { offset, count } => format!("TrailingBytes({count} @{offset})"),
        other => format!("{other:?}"),
    }
}

/// Compiles the plan, decodes strictly and projects every top-level field.
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
    match plan.decode_strict(message) {
        Ok(decoded) => format!("{} fields", decoded.root().fields().len()),
        Err(e) => match projected {
            Some(p) if p != describe(&e) => format!("decode: {}; projection: {p}", describe(&e)),
            _ => format!("decode: {}", describe(&e)),
        },
    }
}

/// What each file gives. Decoding and projecting report a cut array differently: decoding
/// checks the count against the bytes left before reading any element (`LengthPastEnd` at the
/// count), projecting skips the elements and finds the end of the data (`Truncated` after the
/// count).
fn expected(name: &str) -> String {
    match name {
        "zero-length.ros1" => "0 fields".into(),
        "string-length-past-end.ros1" => format!(
            "decode: LengthPastEnd(s = {} @0); projection: Truncated(s @4)",
            u32::MAX
        ),
        "array-count-huge.ros1" => format!(
            "decode: LengthPastEnd(v = {} @0); projection: Truncated(v @4)",
            1u64 << 29
        ),
        "message-array-count-huge.ros1" => {
            format!("decode: LengthPastEnd(pts = {} @0)", u32::MAX)
        }
        "empty-message-array.ros1" => {
            format!("decode: TooManyEmptyElements(e = {} @0)", u32::MAX)
        }
        "fixed-array-huge.ros1" => format!(
            "decode: LengthPastEnd(x = {} @0); projection: Truncated(x @0)",
            u64::MAX
        ),
        // The plan compiler stops at the first level past the limit.
        "nesting-too-deep.ros1" => "plan: TooDeep(101 > 100)".into(),
        "trailing-bytes.ros1" => "decode: TrailingBytes(2 @1)".into(),
        "recursive.ros1" => "plan: Definition(RecursiveType)".into(),
        "missing-type.ros1" => "plan: Definition(MissingType)".into(),
        other => format!("no expectation for {other}"),
    }
}

/// 8^12 empty values in 0 bytes: decoding stops with `TooManyEmptyElements` on an innermost
/// `a` (8 elements, offset 0) once the budget of empty elements is spent; which element that
/// is depends on the budget, so only the shape of the path is checked.
fn fanout_ok(got: &str) -> bool {
    got.starts_with("decode: TooManyEmptyElements(a[0].")
        && got.ends_with(".a = 8 @0)")
        && got.matches(".a").count() >= 7
}

#[test]
fn every_hostile_message_fails_exactly_as_expected_within_the_memory_bound() {
    let peak = Peak::new(&ALLOCATOR, HOSTILE_PEAK_BOUND);
    let checked = run_corpus("ros1", peak, |name, bytes| {
        let got = outcome(bytes);
        let want = expected(name);
        if got == want || (name == "empty-message-fanout.ros1" && fanout_ok(&got)) {
            Ok(())
        } else {
            Err(format!("got {got:?}, expected {want:?}"))
        }
    });
    assert_eq!(checked, 11);
}
