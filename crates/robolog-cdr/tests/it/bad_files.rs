//! The generator of `testdata/bad/cdr/`: a definition and message bytes per file, as
//! `<type>\n<definition bundle>\0<message bytes>` (the input format of the `cdr_decode` fuzz
//! target, so the files double as seeds). `tests/hostile` holds the expected outcomes.

#![allow(dead_code)]

use robolog_testkit::hostile::HostileFile;

const SEPARATOR: &str =
    "================================================================================\n";

/// Little-endian XCDR1.
const LE: [u8; 4] = [0, 1, 0, 0];

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

/// A chain of `depth` nested messages, the last holding one uint8.
pub(crate) fn chain(top: &str, depth: usize) -> String {
    let mut out = format!("{top}\n");
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

fn le(payload: &[u8]) -> Vec<u8> {
    [&LE[..], payload].concat()
}

pub(crate) fn generate() -> Vec<HostileFile> {
    let top = "bad_pkg/msg/Top";
    let point = section("bad_pkg/Point", "float64 x\nfloat64 y\nfloat64 z\n");
    let mut files = Vec::new();
    let mut add = |name: &str, bytes: Vec<u8>| files.push(HostileFile::new(name, bytes));
    add("zero-length.cdr", file(top, "uint8 a\n", b""));
    add("header-only.cdr", file(top, "uint8 a\n", &LE));
    // Encapsulations that frame members in ways a .msg type never asks for.
    add("pl-cdr-le.cdr", file(top, "uint8 a\n", &[0, 3, 0, 0, 7]));
    add(
        "delimited-cdr2-le.cdr",
        file(top, "uint8 a\n", &[0, 9, 0, 0, 7]),
    );
    add("not-cdr.cdr", file(top, "uint8 a\n", b"{\"a\":7}"));
    // A string claiming 4 GiB − 1 bytes, with 3 bytes after it.
    add(
        "string-length-past-end.cdr",
        file(
            top,
            "string s\n",
            &le(&[0xff, 0xff, 0xff, 0xff, b'a', b'b', b'c']),
        ),
    );
    // 2^29 float64 values (4 GiB) announced, 8 bytes present (after 4 of padding).
    add(
        "sequence-count-huge.cdr",
        file(
            top,
            "float64[] v\n",
            &le(&[0, 0, 0, 0x20, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]),
        ),
    );
    // 2^32 − 1 points of 24 bytes.
    add(
        "message-sequence-count-huge.cdr",
        file(
            top,
            &format!("Point[] pts\n{point}"),
            &le(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]),
        ),
    );
    // 2^32 − 1 messages without fields: one byte each on the wire, so still checked.
    add(
        "empty-message-sequence.cdr",
        file(
            top,
            &format!("Empty[] e\n{}", section("bad_pkg/Empty", "")),
            &le(&[0xff, 0xff, 0xff, 0xff, 0]),
        ),
    );
    // 2^30 wide characters of 4 bytes announced, 2 present.
    add(
        "wstring-count-huge.cdr",
        file(top, "wstring w\n", &le(&[0, 0, 0, 0x40, 0x68, 0, 0, 0])),
    );
    // A fixed array of 2^64 − 1 bytes, 4 present.
    add(
        "fixed-array-huge.cdr",
        file(top, "uint8[18446744073709551615] x\n", &le(&[1, 2, 3, 4])),
    );
    // 150 levels of nesting (the limit is 100).
    add(
        "nesting-too-deep.cdr",
        file(top, &chain("L1 next", 150), &le(&[7])),
    );
    // 20000 one-byte messages, each 99 levels deep: about 2 million values from 20 kB.
    let mut many = vec![0x20, 0x4e, 0, 0];
    many.resize(4 + 20_000, 1);
    add(
        "tiny-message-fanout.cdr",
        file(top, &chain("L1[] items", 99), &le(&many)),
    );
    // What strict decoding refuses and lenient decoding keeps.
    add(
        "trailing-bytes.cdr",
        file(top, "uint8 a\n", &le(&[1, 0, 0, 0, 0, 9])),
    );
    add("bool-two.cdr", file(top, "uint8 a\nbool b\n", &le(&[1, 2])));
    add(
        "string-without-nul.cdr",
        file(top, "string s\n", &le(&[3, 0, 0, 0, b'a', b'b', b'c'])),
    );
    add(
        "bound-exceeded.cdr",
        file(top, "int16[<=1] v\n", &le(&[2, 0, 0, 0, 1, 0, 2, 0])),
    );
    // Big endian, cut in the middle of a float64.
    add(
        "big-endian-truncated.cdr",
        file(
            top,
            &format!("Point p\n{point}"),
            &[0, 0, 0, 0, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0],
        ),
    );
    add(
        "recursive.cdr",
        file(
            top,
            &format!("A a\n{}", section("bad_pkg/A", "Top t\n")),
            &LE,
        ),
    );
    add("missing-type.cdr", file(top, "Missing m\n", &LE));
    files
}
