//! JSON text of message values, the pieces the ROS 1 and ROS 2 renderers share (cargo feature
//! `json`): each function appends one JSON token to a byte buffer.
//!
//! The rules are those both wire-format crates document: floats in the shortest form that reads
//! back to the same value (a `float32` in the shortest `f32` form), NaN and ±infinity as the
//! strings `"NaN"`, `"Infinity"` and `"-Infinity"`; integers exact; octet arrays as one base64
//! string (standard alphabet, padded); strings escaped as `serde_json` escapes them, with bytes
//! that are not UTF-8 replaced by U+FFFD. The output is byte for byte what `serde_json` writes
//! for the same values.
//!
//! ```
//! use robolog_msg::json;
//!
//! let mut out = Vec::new();
//! out.push(b'{');
//! json::push_key(&mut out, "x");
//! json::push_f64(&mut out, 0.1);
//! out.push(b',');
//! json::push_key(&mut out, "y");
//! json::push_f32(&mut out, f32::NAN);
//! out.push(b',');
//! json::push_key(&mut out, "name");
//! json::push_lossy(&mut out, b"a\"b\xff");
//! out.push(b',');
//! json::push_key(&mut out, "data");
//! json::push_base64(&mut out, &[1, 2, 3]);
//! out.push(b'}');
//! assert_eq!(
//!     String::from_utf8(out)?,
//!     "{\"x\":0.1,\"y\":\"NaN\",\"name\":\"a\\\"b\u{fffd}\",\"data\":\"AQID\"}"
//! );
//! # Ok::<(), std::string::FromUtf8Error>(())
//! ```

use base64::Engine as _;

/// The text [`push_key`] appends for `name`, after a comma: a renderer keeps one per field and
/// appends it with [`push_key_text`], all of it before any field but the first, without the
/// comma before the first.
pub fn key_text(name: &str) -> Box<[u8]> {
    let mut out = vec![b','];
    push_key(&mut out, name);
    out.into()
}

/// Appends a key made by [`key_text`]: `first` leaves out its comma.
#[inline]
pub fn push_key_text(out: &mut Vec<u8>, key: &[u8], first: bool) {
    out.extend_from_slice(if first {
        key.get(1..).unwrap_or(key)
    } else {
        key
    });
}

/// Appends a `float64` value: a number, or one of the strings for NaN and the infinities.
#[inline]
pub fn push_f64(out: &mut Vec<u8>, value: f64) {
    if value.is_finite() {
        out.extend_from_slice(zmij::Buffer::new().format_finite(value).as_bytes());
    } else {
        push_non_finite(out, value.is_nan(), value.is_sign_negative());
    }
}

/// Appends a `float32` value in its shortest `f32` form (`0.1f32` is `0.1`), or one of the
/// strings for NaN and the infinities.
#[inline]
pub fn push_f32(out: &mut Vec<u8>, value: f32) {
    if value.is_finite() {
        out.extend_from_slice(zmij::Buffer::new().format_finite(value).as_bytes());
    } else {
        push_non_finite(out, value.is_nan(), value.is_sign_negative());
    }
}

#[cold]
fn push_non_finite(out: &mut Vec<u8>, nan: bool, negative: bool) {
    out.extend_from_slice(match (nan, negative) {
        (true, _) => b"\"NaN\"",
        (false, false) => b"\"Infinity\"",
        (false, true) => b"\"-Infinity\"",
    });
}

/// Appends an unsigned integer.
#[inline]
pub fn push_u64(out: &mut Vec<u8>, value: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// Appends a signed integer.
#[inline]
pub fn push_i64(out: &mut Vec<u8>, value: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// Appends a `bool`.
#[inline]
pub fn push_bool(out: &mut Vec<u8>, value: bool) {
    out.extend_from_slice(if value { b"true" } else { b"false" });
}

/// Appends an object key and its colon: `"name":`.
#[inline]
pub fn push_key(out: &mut Vec<u8>, name: &str) {
    push_str(out, name);
    out.push(b':');
}

/// Appends bytes as a JSON string, UTF-8 or not: a byte sequence that is not UTF-8 becomes
/// U+FFFD, as [`String::from_utf8_lossy`] replaces it.
pub fn push_lossy(out: &mut Vec<u8>, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => push_str(out, text),
        Err(_) => push_str(out, &String::from_utf8_lossy(bytes)),
    }
}

/// Whether a byte must be escaped in a JSON string.
#[inline]
fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// Appends a JSON string: quoted, with `"`, `\` and the control characters escaped (`\n`, `\t`,
/// `\r`, `\b`, `\f`, else `\u00XX`), everything else as it is.
#[inline]
pub fn push_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    // Field names and most values need no escape: one copy.
    if !bytes.iter().fold(false, |any, &b| any | needs_escape(b)) {
        out.reserve(bytes.len() + 2);
        out.push(b'"');
        out.extend_from_slice(bytes);
        out.push(b'"');
    } else {
        push_escaped(out, bytes);
    }
}

#[cold]
fn push_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    let mut start = 0;
    for (i, &byte) in bytes.iter().enumerate() {
        if !needs_escape(byte) {
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        start = i + 1;
        let short: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\t' => b"\\t",
            b'\r' => b"\\r",
            0x08 => b"\\b",
            0x0c => b"\\f",
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(byte >> 4)],
                    HEX[usize::from(byte & 0xf)],
                ]);
                continue;
            }
        };
        out.extend_from_slice(short);
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Appends octets as one base64 string (standard alphabet, with padding).
pub fn push_base64(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    let start = out.len();
    // Four characters per three bytes, rounded up; the length of a slice that exists cannot
    // overflow this.
    out.resize(start + bytes.len().div_ceil(3) * 4, 0);
    let written = base64::engine::general_purpose::STANDARD
        .encode_slice(bytes, &mut out[start..])
        .unwrap_or(0);
    out.truncate(start + written);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        f(&mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn floats_are_shortest_and_non_finite_ones_strings() {
        assert_eq!(text(|o| push_f64(o, 0.1)), "0.1");
        assert_eq!(text(|o| push_f64(o, -0.0)), "-0.0");
        assert_eq!(text(|o| push_f64(o, 1e300)), "1e+300");
        for value in [
            5e-324,
            1e-7,
            0.3,
            123.456,
            1e21,
            f64::MAX,
            -f64::MIN_POSITIVE,
        ] {
            let expected = serde_json::to_string(&value).unwrap_or_default();
            assert_eq!(text(|o| push_f64(o, value)), expected);
            // f64::MAX is no f32: it rounds to infinity, tested above.
            let single = value as f32;
            if single.is_infinite() {
                continue;
            }
            let expected = serde_json::to_string(&single).unwrap_or_default();
            assert_eq!(text(|o| push_f32(o, single)), expected, "{single}");
        }
        assert_eq!(text(|o| push_f64(o, 9.81)), "9.81");
        assert_eq!(text(|o| push_f32(o, 0.1)), "0.1");
        assert_eq!(text(|o| push_f32(o, 16_777_216.0)), "16777216.0");
        assert_eq!(text(|o| push_f64(o, f64::NAN)), "\"NaN\"");
        assert_eq!(text(|o| push_f64(o, -f64::NAN)), "\"NaN\"");
        assert_eq!(text(|o| push_f32(o, f32::INFINITY)), "\"Infinity\"");
        assert_eq!(text(|o| push_f64(o, f64::NEG_INFINITY)), "\"-Infinity\"");
    }

    #[test]
    fn key_texts_are_keys_after_a_comma() {
        let key = key_text("frame_id");
        assert_eq!(&key[..], b",\"frame_id\":");
        assert_eq!(
            text(|o| push_key_text(o, &key, true)),
            text(|o| push_key(o, "frame_id"))
        );
        assert_eq!(text(|o| push_key_text(o, &key, false)), ",\"frame_id\":");
        assert_eq!(&key_text("a\"b")[..], b",\"a\\\"b\":");
    }

    #[test]
    fn integers_are_exact() {
        assert_eq!(text(|o| push_u64(o, u64::MAX)), "18446744073709551615");
        assert_eq!(text(|o| push_i64(o, i64::MIN)), "-9223372036854775808");
        assert_eq!(text(|o| push_bool(o, false)), "false");
    }

    #[test]
    fn strings_escape_as_serde_json_does() {
        let all: String = (0u8..0x80)
            .map(char::from)
            .chain("é😀\u{2028}".chars())
            .collect();
        assert_eq!(
            text(|o| push_str(o, &all)),
            serde_json::to_string(&all).unwrap_or_default()
        );
        assert_eq!(text(|o| push_key(o, "frame_id")), "\"frame_id\":");
        assert_eq!(text(|o| push_lossy(o, b"a\xffb")), "\"a\u{fffd}b\"");
    }

    #[test]
    fn octets_are_padded_base64() {
        assert_eq!(text(|o| push_base64(o, b"")), "\"\"");
        assert_eq!(text(|o| push_base64(o, b"\x01")), "\"AQ==\"");
        assert_eq!(
            text(|o| push_base64(o, b"\x01\x02\x03\x04")),
            "\"AQIDBA==\""
        );
    }
}
