//! Telling ROS 1 and ROS 2 definitions apart.

use crate::model::{Dialect, ParseDialect, PrimitiveType};
use crate::python_literal;

/// Guesses the dialect of a `.msg`/`.srv`/`.action` text or a bundle: ROS 2 when any line uses
/// syntax that only ROS 2 has, otherwise ROS 1.
///
/// ROS 2-only syntax: a bounded type (`string<=N`, `T[<=N]`), `wstring`, a field default (a
/// third word on a field line), an integer constant written `0x`/`0o`/`0b`, and a bundle
/// section header `MSG: pkg/msg/Type`. Everything else is valid in both, and ROS 1 is the
/// answer then, because only ROS 1 needs exact parsing for its md5sum; a ROS 2 text that uses
/// none of these parses to the same types under the ROS 1 rules except for `Header`, `byte`
/// signedness and string-constant quotes.
pub fn detect_dialect(text: &str) -> Dialect {
    if text.lines().any(line_is_ros2_only) {
        Dialect::Ros2
    } else {
        Dialect::Ros1
    }
}

pub(crate) fn resolve(dialect: ParseDialect, text: &str) -> Dialect {
    match dialect {
        ParseDialect::Ros1 => Dialect::Ros1,
        ParseDialect::Ros2 => Dialect::Ros2,
        ParseDialect::Auto => detect_dialect(text),
    }
}

fn line_is_ros2_only(line: &str) -> bool {
    if let Some(name) = line.strip_prefix("MSG:") {
        return name.trim().split('/').count() == 3;
    }
    let clean = line.split('#').next().unwrap_or("").trim();
    let (type_word, rest) = clean.split_once(char::is_whitespace).unwrap_or((clean, ""));
    let base = type_word.split('[').next().unwrap_or("");
    if type_word.contains("<=") || base == "wstring" {
        return true;
    }
    // `=` after the type makes a constant in both dialects (the `<=` of a bound is in the type).
    if let Some((_, value)) = rest.split_once('=') {
        let value = value.trim();
        return PrimitiveType::from_name(type_word).is_some_and(PrimitiveType::is_integer)
            && python_literal::int_decimal(value).is_err()
            && python_literal::int_any_base(value).is_ok();
    }
    rest.split_whitespace().count() >= 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ros1_unless_ros2_only_syntax() {
        assert_eq!(detect_dialect("int32 x\nstring S=a<=b # c"), Dialect::Ros1);
        assert_eq!(detect_dialect("string S=\"quoted\""), Dialect::Ros1);
        assert_eq!(detect_dialect("int32 X=007"), Dialect::Ros1);
        assert_eq!(detect_dialect("string<=5 s"), Dialect::Ros2);
        assert_eq!(detect_dialect("int32[<=5] v"), Dialect::Ros2);
        assert_eq!(detect_dialect("wstring w"), Dialect::Ros2);
        assert_eq!(detect_dialect("int32 x 5"), Dialect::Ros2);
        assert_eq!(detect_dialect("uint8 X=0x10"), Dialect::Ros2);
        assert_eq!(
            detect_dialect("x\nMSG: std_msgs/msg/Header\n"),
            Dialect::Ros2
        );
        assert_eq!(detect_dialect("x\nMSG: std_msgs/Header\n"), Dialect::Ros1);
    }
}
