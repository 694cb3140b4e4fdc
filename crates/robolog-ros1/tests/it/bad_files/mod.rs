//! The generator of `testdata/bad/ros1/`: a definition and message bytes per file, as
//! `<type>\n<definition bundle>\0<message bytes>` (the input format of the `ros1_decode` fuzz
//! target, so the files double as seeds).

#![allow(dead_code)]

use robolog_testkit::hostile::HostileFile;

const SEPARATOR: &str =
    "================================================================================\n";

pub(crate) fn section(name: &str, text: &str) -> String {
    format!("{SEPARATOR}MSG: {name}\n{text}")
}

pub(crate) fn file(ty: &str, definition: &str, message: &[u8]) -> Vec<u8> {
    [ty.as_bytes(), b"\n", definition.as_bytes(), b"\0", message].concat()
}

/// Splits a file into (type, definition, message).
pub(crate) fn split(bytes: &[u8]) -> (String, String, &[u8]) {
    let nul = bytes.iter().position(|&b| b == 0).expect("a NUL separator");
    let text = std::str::from_utf8(&bytes[..nul]).expect("UTF-8 definition");
    let (ty, definition) = text.split_once('\n').expect("a type line");
    (ty.to_owned(), definition.to_owned(), &bytes[nul + 1..])
}

/// `Top` holds `L1[8]`, `L1` holds `L2[8]`, … `L{depth}` is empty: 8^depth values in 0 bytes.
pub(crate) fn empty_fanout(depth: usize) -> String {
    let mut out = String::from("L1[8] a\n");
    for level in 1..=depth {
        let text = if level == depth {
            String::new()
        } else {
            format!("L{}[8] a\n", level + 1)
        };
        out.push_str(&section(&format!("bad_pkg/L{level}"), &text));
    }
    out
}

/// A chain of `depth` nested messages, the last holding one uint8.
pub(crate) fn chain(depth: usize) -> String {
    let mut out = String::from("L1 next\n");
    for level in 1..=depth {
        let text = if level == depth {
            "uint8 leaf\n".to_owned()
        } else {
            format!("L{} next\n", level + 1)
        };
        out.push_str(&section(&format!("bad_pkg/L{level}"), &text));
    }
    out
}

pub(crate) fn generate() -> Vec<HostileFile> {
    let top = "bad_pkg/Top";
    let point = section("bad_pkg/Point", "float64 x\nfloat64 y\nfloat64 z\n");
    let mut files = Vec::new();
    let mut add = |name: &str, bytes: Vec<u8>| files.push(HostileFile::new(name, bytes));
    add("zero-length.ros1", file(top, "", b""));
    // A string claiming 4 GiB − 1 bytes, with 3 bytes after it.
    add(
        "string-length-past-end.ros1",
        file(
            top,
            "string s\n",
            &[0xff, 0xff, 0xff, 0xff, b'a', b'b', b'c'],
        ),
    );
    // 2^29 float64 values (4 GiB) announced, 8 bytes present.
    add(
        "array-count-huge.ros1",
        file(
            top,
            "float64[] v\n",
            &[0, 0, 0, 0x20, 1, 2, 3, 4, 5, 6, 7, 8],
        ),
    );
    // 2^32 − 1 points of 24 bytes.
    add(
        "message-array-count-huge.ros1",
        file(
            top,
            &format!("Point[] pts\n{point}"),
            &[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0],
        ),
    );
    // 2^32 − 1 elements of a message without fields: they take no bytes at all.
    add(
        "empty-message-array.ros1",
        file(
            top,
            &format!("Empty[] e\n{}", section("bad_pkg/Empty", "")),
            &[0xff, 0xff, 0xff, 0xff],
        ),
    );
    // 8^12 values in 0 bytes.
    add(
        "empty-message-fanout.ros1",
        file(top, &empty_fanout(12), b""),
    );
    // A fixed array of 2^64 − 1 bytes, 4 present.
    add(
        "fixed-array-huge.ros1",
        file(top, "uint8[18446744073709551615] x\n", &[1, 2, 3, 4]),
    );
    // 150 levels of nesting (the limit is 100).
    add("nesting-too-deep.ros1", file(top, &chain(150), &[7]));
    add("trailing-bytes.ros1", file(top, "uint8 a\n", &[1, 2, 3]));
    add(
        "recursive.ros1",
        file(
            top,
            &format!("A a\n{}", section("bad_pkg/A", "Top t\n")),
            b"",
        ),
    );
    add("missing-type.ros1", file(top, "Missing m\n", b""));
    files
}
