//! The generator of `testdata/bad/msg/`: hostile message-definition bundles. Each is the
//! `message_definition` of a connection whose type is `bad_pkg/Top`.

#![allow(dead_code)]

use robolog_testkit::hostile::HostileFile;

/// The separator genmsg writes between bundle sections.
const SEPARATOR: &str =
    "================================================================================\n";

fn section(name: &str, text: &str) -> String {
    format!("{SEPARATOR}MSG: {name}\n{text}")
}

/// A chain `bad_pkg/Top` → `bad_pkg/L1` → … → `bad_pkg/L{depth}` (empty).
pub(crate) fn chain(depth: usize) -> String {
    let mut out = String::from("L1 next\n");
    for level in 1..=depth {
        let text = if level == depth {
            String::new()
        } else {
            format!("L{} next\n", level + 1)
        };
        out.push_str(&section(&format!("bad_pkg/L{level}"), &text));
    }
    out
}

pub(crate) fn generate() -> Vec<HostileFile> {
    let mut files = Vec::new();
    let mut add = |name: &str, text: String| files.push(HostileFile::new(name, text));
    add("empty.msgdef", String::new());
    add("self-recursive.msgdef", "uint32 id\nTop child\n".into());
    add(
        "recursive-pair.msgdef",
        format!("B b\n{}", section("bad_pkg/B", "Top back\n")),
    );
    add(
        "recursive-through-array.msgdef",
        format!("A[] list\n{}", section("bad_pkg/A", "Top[] back\n")),
    );
    add("missing-type.msgdef", "uint32 id\nMissing m\n".into());
    add(
        "missing-nested-type.msgdef",
        format!("A a\n{}", section("bad_pkg/A", "other_pkg/Gone g\n")),
    );
    add(
        "unparsable-dependency.msgdef",
        format!("A a\n{}", section("bad_pkg/A", "float64 no good name\n")),
    );
    add(
        "syntax-error.msgdef",
        "uint32 ok\nfloat64 bad name\n".into(),
    );
    add(
        "array-bound-overflow.msgdef",
        "uint8[99999999999999999999999] x\n".into(),
    );
    // 5000 levels: the dependency walk must not recurse once per level.
    add("deep-chain.msgdef", chain(5000));
    files
}
