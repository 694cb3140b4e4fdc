//! The hostile definitions of `testdata/bad/msg/`: the exact error each gives (type names,
//! lines and columns), within the allocation bound of the hostile corpus.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use robolog_msg::{Error, ParseDialect, Registry, TypeName};
use robolog_testkit::alloc::{CountingAllocator, Peak, counting_allocator};
use robolog_testkit::hostile::{HOSTILE_PEAK_BOUND, run_corpus};

// A test binary of its own rather than a module of `it/`: this allocator counts every
// allocation of the process, so the bound holds only if no other test runs beside this one.
#[global_allocator]
static ALLOCATOR: CountingAllocator = counting_allocator();

fn name(text: &str) -> TypeName {
    text.parse().unwrap()
}

/// Reads the bundle as the definition of `bad_pkg/Top` and asks for its md5: the md5, or the
/// error in a form the expectations can state exactly.
fn outcome(text: &str) -> String {
    let top = name("bad_pkg/Top");
    let registry = match Registry::from_bundle(&top, text, ParseDialect::Auto) {
        Ok(registry) => registry,
        Err(e) => return describe(&e),
    };
    match registry.md5(&top) {
        Ok(md5) => format!("md5 {md5}"),
        Err(e) => describe(&e),
    }
}

fn describe(e: &Error) -> String {
    match e {
        Error::Syntax(s) => format!(
            "Syntax({} line {} column {})",
            s.type_name, s.line, s.column
        ),
        Error::MissingType { missing, needed_by } => format!(
            "MissingType({missing} needed by {})",
            needed_by
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default()
        ),
        Error::UnparsableType { name, error } => {
            format!("UnparsableType({name} line {})", error.line)
        }
        Error::RecursiveType { cycle } => {
            let cycle: Vec<String> = cycle.iter().map(ToString::to_string).collect();
            format!("RecursiveType({})", cycle.join(" -> "))
        }
        other => format!("{other:?}"),
    }
}

fn expected(name: &str) -> String {
    match name {
        // The md5 text of a message without fields is empty: md5("").
        "empty.msgdef" => "md5 d41d8cd98f00b204e9800998ecf8427e".into(),
        "self-recursive.msgdef" => "RecursiveType(bad_pkg/Top -> bad_pkg/Top)".into(),
        "recursive-pair.msgdef" => "RecursiveType(bad_pkg/Top -> bad_pkg/B -> bad_pkg/Top)".into(),
        "recursive-through-array.msgdef" => {
            "RecursiveType(bad_pkg/Top -> bad_pkg/A -> bad_pkg/Top)".into()
        }
        "missing-type.msgdef" => "MissingType(bad_pkg/Missing needed by bad_pkg/Top)".into(),
        "missing-nested-type.msgdef" => "MissingType(other_pkg/Gone needed by bad_pkg/A)".into(),
        // The broken line is line 4 of the bundle (top text, separator, MSG: line, then it).
        "unparsable-dependency.msgdef" => "UnparsableType(bad_pkg/A line 4)".into(),
        // Column 13: after the field name `bad`, the parser finds `name` where the line must end.
        "syntax-error.msgdef" => "Syntax(bad_pkg/Top line 2 column 13)".into(),
        "array-bound-overflow.msgdef" => "Syntax(bad_pkg/Top line 1 column 7)".into(),
        "deep-chain.msgdef" => format!("md5 {}", chain_md5(5000)),
        other => format!("no expectation for {other}"),
    }
}

/// The md5 of the chain `Top` → `L1` → … → `L{depth}` by genmsg's rule (ros-msg spec §3): an
/// empty message hashes the empty text, and a field of message type contributes
/// `<md5 of its type> <name>`.
fn chain_md5(depth: usize) -> String {
    use md5::{Digest, Md5};
    let hex = |text: &str| -> String {
        Md5::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let mut md5 = hex("");
    for _ in 0..depth {
        md5 = hex(&format!("{md5} next"));
    }
    md5
}

#[test]
fn every_hostile_definition_fails_exactly_as_expected_within_the_memory_bound() {
    let peak = Peak::new(&ALLOCATOR, HOSTILE_PEAK_BOUND);
    let checked = run_corpus("msg", peak, |name, bytes| {
        let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
        let got = outcome(text);
        let want = expected(name);
        if got == want {
            Ok(())
        } else {
            Err(format!("got {got:?}, expected {want:?}"))
        }
    });
    assert_eq!(checked, 10);
}
