//! Properties: no input makes the crate panic; parse → canonical text → parse gives the same
//! tree; bundles written by the registry read back to the same bundle and md5sums.

use proptest::prelude::*;
use robolog_msg::{
    Bundle, Dialect, MessageDefinition, ParseDialect, Registry, TypeName, detect_dialect,
    parse_action, parse_message, parse_service,
};

fn name(text: &str) -> TypeName {
    text.parse().unwrap()
}

/// Exercises every entry point on `text`; any panic fails the property.
fn exercise(text: &str) {
    let top = name("fuzz_pkg/Top");
    for dialect in [ParseDialect::Ros1, ParseDialect::Ros2, ParseDialect::Auto] {
        let _ = parse_message(&top, text, dialect);
        let _ = parse_service(&top, text, dialect);
        let _ = parse_action(&top, text, dialect);
        if let Ok(registry) = Registry::from_bundle(&top, text, dialect) {
            let _ = registry.md5(&top);
            let _ = registry.md5_text(&top);
            let _ = registry.bundle_text(&top);
            let _ = registry.dependencies(&top);
            for warning in registry.warnings() {
                let _ = warning.to_string();
            }
        }
        if let Err(error) = parse_message(&top, text, dialect) {
            let _ = error.to_string();
        }
    }
    let _ = Bundle::parse(text);
    let _ = detect_dialect(text);
    let _ = TypeName::parse(text);
}

/// Text made of the pieces the grammars care about, so that deep paths are reached.
fn definition_like_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("int32".to_owned()),
        Just("string".to_owned()),
        Just("byte".to_owned()),
        Just("Header".to_owned()),
        Just("Point".to_owned()),
        Just("pkg/Type".to_owned()),
        Just("pkg/msg/Type".to_owned()),
        Just("string<=".to_owned()),
        Just("[<=".to_owned()),
        Just("[".to_owned()),
        Just("]".to_owned()),
        Just("=".to_owned()),
        Just("#".to_owned()),
        Just(" ".to_owned()),
        Just("\t".to_owned()),
        Just("\n".to_owned()),
        Just("\r\n".to_owned()),
        Just("\r".to_owned()),
        Just("---".to_owned()),
        Just("MSG: ".to_owned()),
        Just("=====".to_owned()),
        Just("\\n".to_owned()),
        Just("\"".to_owned()),
        Just("'".to_owned()),
        Just(",".to_owned()),
        Just("0x".to_owned()),
        Just("é".to_owned()),
        Just("\u{2028}".to_owned()),
        "[a-zA-Z_]{1,6}",
        "[0-9]{1,25}",
        "-?[0-9]{0,3}\\.?[0-9]{0,3}([eE]-?[0-9]{1,3})?",
    ];
    prop::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        exercise(&text);
    }

    #[test]
    fn definition_like_text_never_panics(text in definition_like_text()) {
        exercise(&text);
    }

    /// Valid definitions with noise spliced in reach the deeper paths of the parsers.
    #[test]
    fn valid_text_with_noise_never_panics(
        valid in prop_oneof![ros1_message_text(), ros2_message_text()],
        noise in definition_like_text(),
        at in any::<prop::sample::Index>(),
    ) {
        let boundaries: Vec<usize> =
            valid.char_indices().map(|(i, _)| i).chain([valid.len()]).collect();
        let at = boundaries[at.index(boundaries.len())];
        exercise(&format!("{}{noise}{}", &valid[..at], &valid[at..]));
    }
}

// ---- Round trips -----------------------------------------------------------------------------

fn ros1_type() -> impl Strategy<Value = String> {
    let base = prop_oneof![
        Just("bool"),
        Just("byte"),
        Just("char"),
        Just("int8"),
        Just("uint8"),
        Just("int16"),
        Just("uint16"),
        Just("int32"),
        Just("uint32"),
        Just("int64"),
        Just("uint64"),
        Just("float32"),
        Just("float64"),
        Just("string"),
        Just("time"),
        Just("duration"),
        Just("Header"),
        Just("Point2"),
        Just("other_pkg/Thing"),
    ];
    let suffix = prop_oneof![
        Just(String::new()),
        Just("[]".to_owned()),
        "\\[0{0,2}[0-9]{1,3}\\]"
    ];
    (base, suffix).prop_map(|(base, suffix)| format!("{base}{suffix}"))
}

/// A ROS 1 constant line: (type, value spellings genmsg accepts).
fn ros1_constant() -> impl Strategy<Value = String> {
    let integer = prop_oneof![
        (Just("int8"), -128i64..=127).prop_map(|(t, v)| (t, v.to_string())),
        (Just("uint8"), 0i64..=255).prop_map(|(t, v)| (t, format!("{v:03}"))),
        (Just("byte"), -128i64..=127).prop_map(|(t, v)| (t, v.to_string())),
        (Just("char"), 0i64..=255).prop_map(|(t, v)| (t, v.to_string())),
        (Just("int64"), any::<i64>()).prop_map(|(t, v)| (t, v.to_string())),
        (Just("uint64"), any::<u64>()).prop_map(|(t, v)| (t, format!("+{v}"))),
        (Just("uint32"), 0u32..100_000).prop_map(|(t, v)| (t, format!("1_{v}"))),
    ];
    let float = (
        prop_oneof![Just("float32"), Just("float64")],
        prop_oneof![
            Just("1e3".to_owned()),
            Just("inf".to_owned()),
            Just("-.5".to_owned()),
            (-1e6f64..1e6).prop_map(|f| f.to_string()),
        ],
    );
    let boolean = (
        Just("bool"),
        prop_oneof![Just("True"), Just("False"), Just("1"), Just("0")].prop_map(str::to_owned),
    );
    let string = (Just("string"), "[ -~]{0,20}");
    let typed_value = prop_oneof![integer, float, boolean, string];
    (
        typed_value,
        "[A-Z][A-Z0-9_]{0,8}",
        prop_oneof![Just("="), Just(" = "), Just("= ")],
        prop_oneof![Just(""), Just("  # trailing comment")],
    )
        .prop_map(|((ty, value), name, equals, comment)| {
            // A string constant's comment would be part of its value: add none.
            let comment = if ty == "string" { "" } else { comment };
            format!("{ty} {name}{equals}{value}{comment}")
        })
}

fn ros1_message_text() -> impl Strategy<Value = String> {
    let field = (
        ros1_type(),
        "[A-Za-z][A-Za-z0-9_]{0,8}",
        prop_oneof![Just(" "), Just("   "), Just(" \t")],
        prop_oneof![Just(""), Just(" # note"), Just("\t# a=b")],
    )
        .prop_map(|(ty, name, gap, comment)| (format!("{ty}{gap}"), name, comment));
    let line = prop_oneof![
        3 => field.prop_map(|(ty, name, comment)| Line::Field(ty, name, comment.to_owned())),
        2 => ros1_constant().prop_map(Line::Other),
        1 => Just(Line::Other(String::new())),
        1 => Just(Line::Other("# a comment with = and [] and #".to_owned())),
    ];
    (prop::collection::vec(line, 0..25), any::<bool>())
        .prop_map(|(lines, crlf)| render_lines(lines, if crlf { "\r\n" } else { "\n" }))
}

fn ros2_type() -> impl Strategy<Value = (String, Option<String>)> {
    // (type, a default valid for it)
    prop_oneof![
        Just(("bool".to_owned(), Some("true".to_owned()))),
        Just(("byte".to_owned(), Some("0xff".to_owned()))),
        Just(("int32".to_owned(), Some("-0b101".to_owned()))),
        Just(("uint64".to_owned(), Some("18446744073709551615".to_owned()))),
        Just(("float64".to_owned(), Some("1.5e-3".to_owned()))),
        Just(("string".to_owned(), Some("'it\\'s'".to_owned()))),
        Just(("string<=5".to_owned(), Some("\"abc\"".to_owned()))),
        Just(("wstring<=5".to_owned(), None)),
        Just(("int32[<=3]".to_owned(), Some("[1, 2]".to_owned()))),
        Just(("float32[2]".to_owned(), Some("[1.0, -2]".to_owned()))),
        Just((
            "string<=3[<=2]".to_owned(),
            Some("[\"a, b\"]".to_owned()).filter(|_| false)
        )),
        Just(("string[]".to_owned(), Some("[\"x, y\", z]".to_owned()))),
        Just(("Other".to_owned(), None)),
        Just(("geometry_msgs/Point[]".to_owned(), None)),
        Just(("time".to_owned(), None)),
    ]
}

fn ros2_message_text() -> impl Strategy<Value = String> {
    let field = (
        ros2_type(),
        "[a-z][a-z0-9]{0,6}",
        any::<bool>(),
        prop_oneof![Just(""), Just(" # note")],
    )
        .prop_map(|((ty, default), name, with_default, comment)| {
            let default = match default {
                Some(d) if with_default => format!(" {d}"),
                _ => String::new(),
            };
            Line::Field(format!("{ty} "), name, format!("{default}{comment}"))
        });
    let constant = (
        prop_oneof![
            Just(("int16", "-0x10")),
            Just(("uint8", "255")),
            Just(("bool", "False")),
            Just(("float32", "2.5")),
            Just(("string", "\"quoted value\"")),
            Just(("string", "bare")),
        ],
        "[A-Z][A-Z0-9]{0,6}",
    )
        .prop_map(|((ty, value), name)| Line::Other(format!("{ty} {name}={value}")));
    let line = prop_oneof![
        3 => field,
        1 => constant,
        1 => Just(Line::Other(String::new())),
        1 => Just(Line::Other("# comment".to_owned())),
    ];
    prop::collection::vec(line, 0..20).prop_map(|lines| render_lines(lines, "\n"))
}

#[derive(Debug, Clone)]
enum Line {
    /// (type with its trailing gap, name, rest of line)
    Field(String, String, String),
    Other(String),
}

/// Joins lines, numbering field and constant names so that they are unique (duplicates are
/// errors).
fn render_lines(lines: Vec<Line>, newline: &str) -> String {
    lines
        .into_iter()
        .enumerate()
        .map(|(index, line)| match line {
            Line::Field(ty, name, rest) => format!("{ty}{name}{index}{rest}"),
            Line::Other(text) if text.contains('=') && !text.starts_with('#') => {
                text.replacen(' ', &format!(" C{index}"), 1)
            }
            Line::Other(text) => text,
        })
        .collect::<Vec<_>>()
        .join(newline)
}

fn same_tree(a: &MessageDefinition, b: &MessageDefinition) -> bool {
    a.name == b.name && a.dialect == b.dialect && a.constants == b.constants && a.fields == b.fields
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn ros1_parse_render_parse_gives_the_same_tree(text in ros1_message_text()) {
        let type_name = name("my_pkg/Generated");
        let parsed = parse_message(&type_name, &text, Dialect::Ros1).unwrap();
        let canonical = parsed.canonical_text();
        let reparsed = parse_message(&type_name, &canonical, Dialect::Ros1).unwrap();
        prop_assert!(same_tree(&parsed, &reparsed), "{text:?}\n->\n{canonical:?}");
        prop_assert_eq!(reparsed.canonical_text(), canonical);
    }

    #[test]
    fn ros1_md5_is_the_same_for_the_canonical_text(text in ros1_message_text()) {
        let type_name = name("my_pkg/Generated");
        let md5_of = |text: &str| {
            let mut registry = Registry::new();
            for (dependency, body) in [
                ("std_msgs/Header", "uint32 seq\ntime stamp\nstring frame_id"),
                ("my_pkg/Header", "int8 own"),
                ("my_pkg/Point2", "float32 x\nfloat32 y"),
                ("other_pkg/Thing", "Header header\nint8 x"),
            ] {
                registry.add_message_text(&name(dependency), body, Dialect::Ros1).unwrap();
            }
            registry.add_message_text(&type_name, text, Dialect::Ros1).unwrap();
            registry.md5(&type_name).unwrap()
        };
        let canonical = parse_message(&type_name, &text, Dialect::Ros1).unwrap().canonical_text();
        prop_assert_eq!(md5_of(&text), md5_of(&canonical));
    }

    #[test]
    fn ros2_parse_render_parse_gives_the_same_tree(text in ros2_message_text()) {
        let type_name = name("my_pkg/Generated");
        let parsed = parse_message(&type_name, &text, Dialect::Ros2).unwrap();
        let canonical = parsed.canonical_text();
        let reparsed = parse_message(&type_name, &canonical, Dialect::Ros2).unwrap();
        prop_assert!(same_tree(&parsed, &reparsed), "{text:?}\n->\n{canonical:?}");
    }

    /// A random family of types (a DAG: type i may use types j > i) with random texts.
    #[test]
    fn bundles_read_back_to_the_same_bundle_and_md5(
        uses in prop::collection::vec(prop::collection::vec((0usize..8, 0u8..3), 0..4), 1..8),
        trailing_newline in prop::collection::vec(any::<bool>(), 8),
    ) {
        let count = uses.len();
        let type_name = |i: usize| name(&format!("pkg{}/T{i}", i % 2));
        let mut registry = Registry::new();
        for (i, used) in uses.iter().enumerate() {
            let mut text = format!("# type {i}\nint32 own{i}\n");
            for (k, &(target, array)) in used.iter().enumerate() {
                let target = i + 1 + target % count.saturating_sub(i + 1).max(1);
                if target >= count {
                    continue;
                }
                let suffix = ["", "[]", "[2]"][usize::from(array)];
                text.push_str(&format!("{}{suffix} f{k}\n", type_name(target)));
            }
            if !trailing_newline[i] {
                text.pop();
            }
            registry.add_message_text(&type_name(i), &text, Dialect::Ros1).unwrap();
        }
        let top = type_name(0);
        let bundle = registry.bundle_text(&top).unwrap();
        let reread = Registry::from_bundle(&top, &bundle, Dialect::Ros1).unwrap();
        prop_assert_eq!(reread.bundle_text(&top).unwrap(), bundle.clone());
        prop_assert_eq!(reread.md5(&top).unwrap(), registry.md5(&top).unwrap());
        prop_assert_eq!(reread.dependencies(&top).unwrap(), registry.dependencies(&top).unwrap());
        // CRLF line ends and the 80-character separators change nothing once read.
        let crlf = Registry::from_bundle(&top, &bundle.replace('\n', "\r\n"), Dialect::Ros1).unwrap();
        prop_assert_eq!(crlf.md5(&top).unwrap(), registry.md5(&top).unwrap());
    }
}
