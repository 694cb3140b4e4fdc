//! One test per numbered edge case of `specs/ros-msg.md` §9 (`edge_NN_…`).
//!
//! Cases 1–32 concern definition text, md5sums and bundles and are tested here. Cases 33–38
//! are wire-format rules (ROS 1 padding and counts, CDR alignment, CDR strings, CDR trailing
//! bytes, bounds checks on wire counts): they belong to robolog-ros1 (33, 38) and to a CDR codec
//! (34–37), not to this crate. So do the wire halves of 12 (`byte` decodes as i8), 15 (0 bytes),
//! 26 (bounded types encode like unbounded ones), 31 (ROS 2 `byte` is a u8) and 32 (an empty
//! ROS 2 message is 1 byte); here we test the type-model facts those rules rely on.
//!
//! Expected md5sums are the spec's vectors (produced by genmsg and re-derived independently),
//! or MD5s of the spec's md5-text rules computed with Python's hashlib.

use robolog_msg::{
    ArrayKind, Bundle, Dialect, ElementType, Error, MessageDefinition, ParseDialect, PrimitiveType,
    Registry, SECTION_SEPARATOR, SyntaxError, TypeName, Value, Warning, parse_message,
    parse_service,
};

fn name(text: &str) -> TypeName {
    text.parse().unwrap()
}

fn ros1(text: &str) -> MessageDefinition {
    parse_message(&name("test_pkg/Test"), text, Dialect::Ros1).unwrap()
}

fn ros2(text: &str) -> MessageDefinition {
    parse_message(&name("test_pkg/Test"), text, Dialect::Ros2).unwrap()
}

fn ros1_error(text: &str) -> SyntaxError {
    syntax(parse_message(&name("test_pkg/Test"), text, Dialect::Ros1))
}

fn ros2_error(text: &str) -> SyntaxError {
    syntax(parse_message(&name("test_pkg/Test"), text, Dialect::Ros2))
}

fn syntax<T: std::fmt::Debug>(result: Result<T, Error>) -> SyntaxError {
    match result {
        Err(Error::Syntax(error)) => *error,
        other => panic!("expected a syntax error, got {other:?}"),
    }
}

/// md5sum of a ROS 1 message with no nested types.
fn md5(text: &str) -> String {
    let mut registry = Registry::new();
    registry
        .add_message_text(&name("test_pkg/Test"), text, Dialect::Ros1)
        .unwrap();
    registry.md5(&name("test_pkg/Test")).unwrap()
}

/// md5sum of `text` as `test_pkg/Test`, with `test_pkg/Foo` = `int32 x` available.
fn md5_with_foo(text: &str) -> String {
    let mut registry = Registry::new();
    registry
        .add_message_text(&name("test_pkg/Foo"), "int32 x\n", Dialect::Ros1)
        .unwrap();
    registry
        .add_message_text(&name("test_pkg/Test"), text, Dialect::Ros1)
        .unwrap();
    registry.md5(&name("test_pkg/Test")).unwrap()
}

// ---- ROS 1 text and md5 ----------------------------------------------------------------------

#[test]
fn edge_01_hash_in_string_constant_is_part_of_the_value() {
    let message = ros1("string G= hello # world\nint32 X=5 # not part of the value\nint32 x # c\n");
    assert_eq!(
        message.constants[0].value,
        Value::String("hello # world".into())
    );
    assert_eq!(message.constants[0].value_text, "hello # world");
    assert_eq!(message.constants[1].value, Value::Int(5));
    assert_eq!(message.constants[1].value_text, "5");
    assert_eq!(message.fields[0].name, "x");
}

#[test]
fn edge_02_constant_iff_equals_before_the_comment() {
    let message = ros1("string FOO # a=b\n");
    assert!(message.constants.is_empty());
    assert_eq!(message.fields[0].name, "FOO");
    assert_eq!(
        message.fields[0].ty.element,
        ElementType::Primitive(PrimitiveType::String)
    );

    let message = ros1("string S=#x\n");
    assert!(message.fields.is_empty());
    assert_eq!(message.constants[0].value_text, "#x");
    assert_eq!(
        md5("string S=#notacomment"),
        "62a50086702b28220e5bd7c5a92c50f6"
    );
}

#[test]
fn edge_03_string_constant_value_is_everything_after_the_first_equals() {
    let message = ros1("string S=a=b\nstring EMPTY=\nstring Q=\"quoted\"\n");
    let values: Vec<&str> = message
        .constants
        .iter()
        .map(|c| c.value_text.as_str())
        .collect();
    assert_eq!(values, ["a=b", "", "\"quoted\""]);
    assert_eq!(md5("string S=a=b"), "b38d8e232c0a4a304a651dca3a584039");
    assert_eq!(md5("string EMPTY="), "5b7088741a823c49ded1a6749d9607b8");
    assert_eq!(
        md5("string S=\"quoted\""),
        "cb27852e248ccdfdac7f427589f015a1"
    );
}

#[test]
fn edge_04_indented_string_constant_takes_its_name_from_the_first_space() {
    let message = ros1("  string S=x");
    assert_eq!(message.constants[0].name, "string S");
    assert_eq!(message.constants[0].value_text, "x");
    assert_eq!(
        message.warnings,
        [Warning::OddConstantName {
            type_name: name("test_pkg/Test"),
            line: 1,
            name: "string S".into()
        }]
    );
    assert_eq!(md5("  string S=x"), "5a5d8842e2daebeddd9a48b6f175ac0b");
}

#[test]
fn edge_05_numeric_constants_keep_their_original_spelling() {
    assert_eq!(md5("float64 X=1e3"), "94f415d5071c85d675a357beb3a97a42");
    assert_eq!(md5("int32 X=007"), "c83ce4a29257d7d47f56459ab5ebedea");
    let message = ros1("float64 PI = 3.14159   # comment\nint32 X=007\n");
    assert_eq!(message.constants[0].name, "PI");
    assert_eq!(message.constants[0].value_text, "3.14159");
    assert_eq!(message.constants[1].value, Value::Int(7));
    assert_eq!(message.constants[1].value_text, "007");
    let mut registry = Registry::new();
    registry.insert_message(message);
    assert_eq!(
        registry.md5_text(&name("test_pkg/Test")).unwrap(),
        "float64 PI=3.14159\nint32 X=007"
    );
}

#[test]
fn edge_06_integer_constants_are_decimal_and_range_checked() {
    let error = ros1_error("int32 X=0x10");
    assert_eq!(
        (error.line, error.column, error.found.as_str()),
        (1, 9, "0x10")
    );
    assert!(
        error.expected.contains("decimal integer"),
        "{}",
        error.expected
    );

    let error = ros1_error("# comment\nuint8 X=-1");
    assert_eq!(
        (error.line, error.column, error.found.as_str()),
        (2, 9, "-1")
    );
    assert!(
        error.expected.contains("from 0 to 255"),
        "{}",
        error.expected
    );

    assert_eq!(ros1("byte X=-128").constants[0].value, Value::Int(-128));
    assert!(
        ros1_error("byte X=128")
            .expected
            .contains("from -128 to 127")
    );
    assert_eq!(ros1("char X=255").constants[0].value, Value::UInt(255));
    assert!(ros1_error("char X=-1").expected.contains("from 0 to 255"));
    assert_eq!(
        ros1("uint64 X=18446744073709551615").constants[0].value,
        Value::UInt(u64::MAX)
    );
    assert_eq!(
        ros1("int64 X=-9223372036854775808").constants[0].value,
        Value::Int(i64::MIN)
    );
}

#[test]
fn edge_07_bool_constants_accept_python_truth_values() {
    let message = ros1("bool A=True\nbool B=False\nbool C=1\nbool D=0\n");
    let values: Vec<&Value> = message.constants.iter().map(|c| &c.value).collect();
    assert_eq!(
        values,
        [
            &Value::Bool(true),
            &Value::Bool(false),
            &Value::Bool(true),
            &Value::Bool(false)
        ]
    );
    assert_eq!(md5("bool B=True"), "0dc816de291e1cd2165c85424d3ce16b");
    // genmsg evaluates the text as Python: lower-case `true` is an unknown name there.
    assert!(ros1_error("bool B=true").expected.contains("True, False"));
}

#[test]
fn edge_08_tab_between_type_and_name_is_invalid_spaces_are_fine() {
    let error = ros1_error("int32 a\nint32\tx\n");
    assert_eq!((error.line, error.column), (2, 1));
    assert_eq!(error.found, "int32\tx");
    assert!(error.expected.contains("TAB"), "{}", error.expected);
    assert_eq!(ros1("int32     x   \n").fields[0].name, "x");
    assert_eq!(md5("int32     x"), md5("int32 x"));
}

#[test]
fn edge_09_crlf_line_ends_hash_like_lf() {
    assert_eq!(md5("string S=x\r\n"), "ea092269e57b17aa17465b6b5d468dda");
    assert_eq!(md5("string S=x"), "ea092269e57b17aa17465b6b5d468dda");
    assert_eq!(
        md5("# c\r\nint32 a\r\nfloat64[3] b\r\n"),
        md5("# c\nint32 a\nfloat64[3] b\n")
    );
    let bundle = "Header header\r\n\r\n".to_owned()
        + SECTION_SEPARATOR
        + "\r\nMSG: std_msgs/Header\r\nuint32 seq\r\ntime stamp\r\nstring frame_id\r\n";
    let registry = Registry::from_bundle(&name("a/B"), &bundle, Dialect::Ros1).unwrap();
    assert_eq!(
        registry.md5_text(&name("a/B")).unwrap(),
        "2176decaecbce78abc3b96ef049fabed header"
    );
}

#[test]
fn edge_10_bare_header_is_std_msgs_header_even_if_the_package_has_one() {
    let mut registry = Registry::new();
    registry
        .add_message_text(&name("test_pkg/Header"), "int8 own\n", Dialect::Ros1)
        .unwrap();
    let message = registry
        .add_message_text(&name("test_pkg/Stamped"), "Header header\n", Dialect::Ros1)
        .unwrap();
    assert_eq!(
        message.fields[0].ty.message_type(),
        Some(&TypeName::std_msgs_header())
    );
    assert_eq!(message.fields[0].type_text, "std_msgs/Header");

    // genmsg maps only the exact word `Header`: an array of it is the package's own type.
    let message = ros1("Header[] headers\n");
    assert_eq!(
        message.fields[0].ty.message_type(),
        Some(&name("test_pkg/Header"))
    );
    assert_eq!(
        message.warnings,
        [Warning::PackageHeaderArray {
            type_name: name("test_pkg/Test"),
            line: 1
        }]
    );
    // ROS 2 has no special case.
    assert_eq!(
        ros2("Header header\n").fields[0].ty.message_type(),
        Some(&name("test_pkg/Header"))
    );
}

#[test]
fn edge_11_relative_names_resolve_against_their_own_section() {
    let bundle = format!(
        "other_pkg/Outer outer\n\n{SECTION_SEPARATOR}\nMSG: other_pkg/Outer\nInner inner\n\n\
         {SECTION_SEPARATOR}\nMSG: other_pkg/Inner\nint32 x\n"
    );
    let registry = Registry::from_bundle(&name("top_pkg/Top"), &bundle, Dialect::Ros1).unwrap();
    let outer = registry.require(&name("other_pkg/Outer")).unwrap();
    assert_eq!(
        outer.fields[0].ty.message_type(),
        Some(&name("other_pkg/Inner"))
    );
    assert_eq!(
        registry.dependencies(&name("top_pkg/Top")).unwrap(),
        [name("other_pkg/Outer"), name("other_pkg/Inner")]
    );
}

#[test]
fn edge_12_byte_and_char_are_kept_as_written() {
    assert_eq!(md5("byte a"), "76f766bccfe42a80945f3dc195763f20");
    assert_eq!(md5("int8 a"), "4eec2979cc688371cc0e7f01aea37ad1");
    let message = ros1("byte a\nchar b\n");
    assert_eq!(
        message.fields[0].ty.element,
        ElementType::Primitive(PrimitiveType::Byte)
    );
    assert_eq!(
        message.fields[1].ty.element,
        ElementType::Primitive(PrimitiveType::Char)
    );
    assert_eq!(PrimitiveType::Byte.ros1_wire_type(), PrimitiveType::Int8);
    assert_eq!(PrimitiveType::Char.ros1_wire_type(), PrimitiveType::UInt8);
}

#[test]
fn edge_13_complex_arrays_hash_like_scalars_primitive_arrays_keep_their_suffix() {
    let scalar = md5_with_foo("Foo f");
    assert_eq!(md5_with_foo("Foo[] f"), scalar);
    assert_eq!(md5_with_foo("Foo[3] f"), scalar);
    assert_eq!(md5_with_foo("test_pkg/Foo[3] f"), scalar);
    // MD5("<md5 of `int32 x`> f"), hashlib.
    assert_eq!(scalar, "468a4e9cd8b4917ea22eee06d5b45418");
    assert_ne!(md5("float64[9] x"), md5("float64 x"));
    assert_eq!(md5("float64[9] x"), "82e79e31b01d47f82a29128372d64c8c");
}

#[test]
fn edge_14_constants_come_first_in_the_md5_text() {
    let mut registry = Registry::new();
    registry
        .add_message_text(
            &name("test_pkg/Test"),
            "int32 a\nint32 C=1\nint32 b\n",
            Dialect::Ros1,
        )
        .unwrap();
    assert_eq!(
        registry.md5_text(&name("test_pkg/Test")).unwrap(),
        "int32 C=1\nint32 a\nint32 b"
    );
    assert_eq!(
        md5("int32 a\nint32 C=1\nint32 b\n"),
        md5("int32 C=1\nint32 a\nint32 b\n")
    );
}

#[test]
fn edge_15_empty_or_comment_only_message() {
    assert_eq!(md5(""), "d41d8cd98f00b204e9800998ecf8427e");
    assert_eq!(
        md5("# only\n\n   # comments\n"),
        "d41d8cd98f00b204e9800998ecf8427e"
    );
    let message = ros1("# only a comment\n");
    assert!(message.fields.is_empty() && message.constants.is_empty());
}

#[test]
fn edge_16_services_split_at_the_first_line_starting_with_dashes() {
    let mut registry = Registry::new();
    let service = registry
        .add_service_text(
            &name("test/AddTwoInts"),
            "int64 a\nint64 b\n---\nint64 sum\n",
            Dialect::Ros1,
        )
        .unwrap();
    assert_eq!(service.request.name, name("test/AddTwoIntsRequest"));
    assert_eq!(service.response.name, name("test/AddTwoIntsResponse"));
    assert_eq!(service.request.source, "int64 a\nint64 b\n");
    assert_eq!(service.response.source, "int64 sum\n\n");
    assert_eq!(
        registry.service_md5(&name("test/AddTwoInts")).unwrap(),
        "6a2e34150c00229791cc89ff309fff21"
    );

    let service = parse_service(
        &name("test/Dashes"),
        "int8 a\n---x\nint8 b\n",
        Dialect::Ros1,
    )
    .unwrap();
    assert_eq!(service.request.fields.len(), 1);
    assert_eq!(service.response.fields[0].name, "b");

    registry
        .add_service_text(&name("test/Empty"), "---\n", Dialect::Ros1)
        .unwrap();
    assert_eq!(
        registry.service_md5(&name("test/Empty")).unwrap(),
        "d41d8cd98f00b204e9800998ecf8427e"
    );

    // Since genmsg 0.5.16 a `#` in a service's string constant is kept, as in messages.
    let service = parse_service(&name("test/S"), "string A=x # y\n---\n", Dialect::Ros1).unwrap();
    assert_eq!(service.request.constants[0].value_text, "x # y");
}

#[test]
fn edge_17_one_array_dimension_and_no_ros2_names() {
    let error = ros1_error("int32[ 3] a\n");
    assert_eq!((error.line, error.column), (1, 1));
    let error = ros1_error("int32[3][4] a\n");
    assert_eq!((error.column, error.found.as_str()), (6, "[3][4]"));
    assert!(error.expected.contains("single array dimension"));
    let error = ros1_error("pkg/msg/Type a\n");
    assert_eq!((error.column, error.found.as_str()), (1, "pkg/msg/Type"));
    assert!(error.expected.contains("ROS 2 only"));
    let error = ros1_error("int32[x] a\n");
    assert_eq!((error.column, error.found.as_str()), (6, "[x]"));
}

// ---- Definition text (bundles) ---------------------------------------------------------------

fn point_bundle(separator: &str, header: &str) -> String {
    format!("Point p\n{separator}\n{header}\nfloat64 x\n")
}

#[test]
fn edge_18_separator_is_80_equals_when_writing_any_equals_line_when_reading() {
    assert_eq!(SECTION_SEPARATOR.len(), 80);
    assert!(SECTION_SEPARATOR.bytes().all(|b| b == b'='));
    for separator in [
        "===",
        "=====  \r",
        &"=".repeat(120),
        &format!("\n{SECTION_SEPARATOR}\n\n"),
    ] {
        let bundle = Bundle::parse(&point_bundle(separator, "MSG: geo/Point"));
        assert_eq!(bundle.dependencies.len(), 1, "{separator:?}");
        assert_eq!(bundle.dependencies[0].name, name("geo/Point"));
        assert_eq!(bundle.dependencies[0].text, "float64 x\n");
    }
    // An `=` line not followed by `MSG:` is text.
    let bundle = Bundle::parse("int32 a\n=====\nint32 b\n");
    assert!(bundle.dependencies.is_empty());
    assert_eq!(bundle.top, "int32 a\n=====\nint32 b\n");

    let registry = Registry::from_bundle(
        &name("geo/Top"),
        &point_bundle("===", "MSG: geo/Point"),
        Dialect::Ros1,
    )
    .unwrap();
    assert_eq!(
        registry.bundle_text(&name("geo/Top")).unwrap(),
        format!("Point p\n{SECTION_SEPARATOR}\nMSG: geo/Point\nfloat64 x\n")
    );
}

#[test]
fn edge_19_msg_names_in_both_forms_are_the_same_type() {
    for header in ["MSG: geo/Point", "MSG: geo/msg/Point", "MSG:  geo/Point  "] {
        let registry = Registry::from_bundle(
            &name("geo/Top"),
            &point_bundle(SECTION_SEPARATOR, header),
            Dialect::Ros1,
        )
        .unwrap();
        assert!(registry.contains(&name("geo/Point")), "{header}");
        assert_eq!(
            registry.dependencies(&name("geo/Top")).unwrap(),
            [name("geo/Point")]
        );
    }
    let bundle = Bundle::parse(&format!(
        "Header h\n{SECTION_SEPARATOR}\nMSG: roslib/Header\nuint32 seq\n"
    ));
    assert_eq!(bundle.dependencies[0].name, TypeName::std_msgs_header());
}

#[test]
fn edge_20_final_newline_present_or_absent() {
    let with = "int32 a\nint32 b\n";
    let without = "int32 a\nint32 b";
    assert_eq!(md5(with), md5(without));
    for text in [with, without] {
        let registry = Registry::from_bundle(&name("a/B"), text, Dialect::Ros1).unwrap();
        assert_eq!(registry.bundle_text(&name("a/B")).unwrap(), text);
    }
}

#[test]
fn edge_21_missing_empty_bogus_or_escaped_definitions_are_not_fatal_for_raw_reading() {
    // Empty: an empty message.
    let registry = Registry::from_bundle(&name("a/B"), "", Dialect::Ros1).unwrap();
    assert_eq!(
        registry.md5(&name("a/B")).unwrap(),
        "d41d8cd98f00b204e9800998ecf8427e"
    );
    // Bogus: splitting never fails; parsing reports where and why.
    let bundle = Bundle::parse("Definition of a/B");
    assert_eq!(bundle.top, "Definition of a/B");
    let error = syntax(Registry::from_bundle(
        &name("a/B"),
        "Definition of a/B",
        Dialect::Ros1,
    ));
    assert_eq!((error.line, error.column), (1, 1));
    // Escaped line breaks (a publisher bug) are read as line breaks.
    let escaped = format!("Point p\\n{SECTION_SEPARATOR}\\nMSG: geo/Point\\nfloat64 x\\n");
    let registry = Registry::from_bundle(&name("geo/Top"), &escaped, Dialect::Ros1).unwrap();
    assert!(registry.warnings().contains(&Warning::EscapedNewlines));
    assert_eq!(
        registry.md5(&name("geo/Top")).unwrap(),
        md5_from_bundle(
            "geo/Top",
            &point_bundle(SECTION_SEPARATOR, "MSG: geo/Point")
        )
    );
    // Missing dependency: reported by name when needed.
    let registry = Registry::from_bundle(&name("geo/Top"), "Point p\n", Dialect::Ros1).unwrap();
    match registry.md5(&name("geo/Top")) {
        Err(Error::MissingType { missing, needed_by }) => {
            assert_eq!(missing, name("geo/Point"));
            assert_eq!(needed_by, Some(name("geo/Top")));
        }
        other => panic!("{other:?}"),
    }
    // An unparsable dependency section leaves the rest usable.
    let bundle = format!("int32 a\n{SECTION_SEPARATOR}\nMSG: geo/Bad\nint32\tx\n");
    let registry = Registry::from_bundle(&name("geo/Top"), &bundle, Dialect::Ros1).unwrap();
    assert_eq!(registry.md5(&name("geo/Top")).unwrap(), md5("int32 a"));
    assert!(matches!(
        registry.require(&name("geo/Bad")),
        Err(Error::UnparsableType { .. })
    ));
    assert!(matches!(
        registry.warnings(),
        [Warning::UnparsableSection { .. }]
    ));
}

fn md5_from_bundle(top: &str, text: &str) -> String {
    Registry::from_bundle(&name(top), text, Dialect::Ros1)
        .unwrap()
        .md5(&name(top))
        .unwrap()
}

#[test]
fn edge_22_duplicate_sections_first_wins() {
    let bundle = format!(
        "Point p\n{SECTION_SEPARATOR}\nMSG: geo/Point\nfloat64 x\n{SECTION_SEPARATOR}\nMSG: \
         geo/Point\nint8 other\n"
    );
    let registry = Registry::from_bundle(&name("geo/Top"), &bundle, Dialect::Ros1).unwrap();
    assert_eq!(
        registry.require(&name("geo/Point")).unwrap().fields[0].name,
        "x"
    );
    assert_eq!(
        registry.warnings(),
        [Warning::DuplicateSection {
            name: name("geo/Point"),
            line: 6
        }]
    );
}

#[test]
fn edge_23_md5_ignores_producer_differences_so_mismatches_can_be_detected() {
    // genmsg (rospy) layout, roscpp (always a final newline), rosbags (no comments, qualified).
    let genmsg = format!(
        "# top\nHeader header\n\n{SECTION_SEPARATOR}\nMSG: std_msgs/Header\n# c\nuint32 seq\n\
         time stamp\nstring frame_id"
    );
    let roscpp = format!("{genmsg}\n");
    let rosbags = format!(
        "std_msgs/Header header\n{SECTION_SEPARATOR}\nMSG: std_msgs/Header\nuint32 seq\ntime \
         stamp\nstring frame_id\n"
    );
    let sums: Vec<String> = [genmsg, roscpp, rosbags]
        .iter()
        .map(|text| md5_from_bundle("a/Stamped", text))
        .collect();
    // MD5("2176decaecbce78abc3b96ef049fabed header"), hashlib.
    assert_eq!(sums, vec!["d7be0bb39af8fb9129d5a76e6b63a290".to_owned(); 3]);
}

// ---- ROS 2 text ------------------------------------------------------------------------------

#[test]
fn edge_24_ros2_comment_starts_at_the_first_hash_even_inside_quotes() {
    let message = ros2("string s \"a#b\"\n");
    assert_eq!(message.fields[0].default.as_ref().unwrap().text, "\"a");
    assert_eq!(
        message.fields[0].default.as_ref().unwrap().value,
        Value::String("\"a".into())
    );
}

#[test]
fn edge_25_equals_in_a_ros2_string_default_makes_a_constant_and_is_reported() {
    let error = ros2_error("int32 x\nstring url \"a=b\"\n");
    assert_eq!(
        (error.line, error.column, error.found.as_str()),
        (2, 8, "url \"a")
    );
    assert!(
        error.expected.contains("cannot contain `=`"),
        "{}",
        error.expected
    );
}

#[test]
fn edge_26_bounded_strings_and_sequences() {
    let message = ros2("string<=5 s\nint32[<=3] v [1, 2, 3]\nwstring<=2 w\n");
    assert_eq!(
        message.fields[0].ty.element,
        ElementType::BoundedString {
            wide: false,
            max_len: 5
        }
    );
    assert_eq!(message.fields[1].ty.array, ArrayKind::Bounded(3));
    assert_eq!(
        message.fields[2].ty.element,
        ElementType::BoundedString {
            wide: true,
            max_len: 2
        }
    );
    // Bounds are validated on defaults.
    assert!(
        ros2_error("int32[<=2] v [1, 2, 3]\n")
            .expected
            .contains("at most 2")
    );
    assert!(
        ros2_error("string<=2 s \"abc\"\n")
            .expected
            .contains("at most 2")
    );
    assert!(ros2_error("string<=0 s\n").expected.contains("> 0"));
}

#[test]
fn edge_27_bounded_string_array_splits_at_the_last_bracket() {
    let message = ros2("string<=5[<=10] names\nstring<=5[3] fixed\n");
    assert_eq!(message.fields[0].ty.to_string(), "string<=5[<=10]");
    assert_eq!(message.fields[0].ty.array, ArrayKind::Bounded(10));
    assert_eq!(
        message.fields[0].ty.element,
        ElementType::BoundedString {
            wide: false,
            max_len: 5
        }
    );
    assert_eq!(message.fields[1].ty.array, ArrayKind::Fixed(3));
}

#[test]
fn edge_28_ros2_string_constants_lose_one_level_of_quotes() {
    assert_eq!(
        ros2("string S=\"a\"").constants[0].value,
        Value::String("a".into())
    );
    assert_eq!(
        ros2("string S='it\\'s'").constants[0].value,
        Value::String("it's".into())
    );
    assert_eq!(
        ros1("string S=\"a\"").constants[0].value,
        Value::String("\"a\"".into())
    );
    assert!(ros2_error("string S=\"a\"b\"").expected.contains("escaped"));
}

#[test]
fn edge_29_ros2_integers_accept_base_prefixes_ros1_does_not() {
    let message = ros2("int32 HEX=0x1F\nint32 OCT=-0o17\nuint8 BIN=0b101\nint32 DEC=007\n");
    let values: Vec<&Value> = message.constants.iter().map(|c| &c.value).collect();
    assert_eq!(
        values,
        [
            &Value::Int(31),
            &Value::Int(-15),
            &Value::UInt(5),
            &Value::Int(7)
        ]
    );
    assert_eq!(message.constants[0].value_text, "0x1F");
    ros1_error("int32 HEX=0x1F");
    assert_eq!(robolog_msg::detect_dialect("int32 HEX=0x1F"), Dialect::Ros2);
}

#[test]
fn edge_30_ros2_naming_rules_apply_only_to_ros2() {
    let text = "int32 MyField\nint32 lower=1\nint32 a__b\nint32 trailing_\n";
    let message = ros1(text);
    assert_eq!(message.fields.len(), 3);
    assert_eq!(message.constants[0].name, "lower");
    let error = ros2_error(text);
    assert_eq!(
        (error.line, error.column, error.found.as_str()),
        (1, 7, "MyField")
    );
    assert!(
        ros2_error("int32 X=1\nint32 lower=1\n")
            .expected
            .contains("constant name")
    );
    assert!(ros2_error("int32 a__b\n").expected.contains("field name"));
    assert!(ros2_error("Bad_Name x\n").expected.contains("message name"));
}

#[test]
fn edge_31_ros2_byte_is_unsigned() {
    assert_eq!(ros2("byte B=255").constants[0].value, Value::UInt(255));
    assert!(ros2_error("byte B=-1").expected.contains("from 0 to 255"));
    assert!(
        ros1_error("byte B=255")
            .expected
            .contains("from -128 to 127")
    );
    assert_eq!(PrimitiveType::Byte.ros2_wire_type(), PrimitiveType::UInt8);
}

#[test]
fn edge_32_empty_ros2_message_has_no_members_in_the_model() {
    let message = ros2("# nothing\n");
    assert!(message.fields.is_empty() && message.constants.is_empty());
    assert_eq!(message.dialect, Dialect::Ros2);
}

#[test]
fn auto_dialect_applies_to_a_whole_bundle() {
    let bundle = format!("Inner inner\n{SECTION_SEPARATOR}\nMSG: pkg/Inner\nstring<=3 s\nbyte b\n");
    let registry = Registry::from_bundle(&name("pkg/Top"), &bundle, ParseDialect::Auto).unwrap();
    assert_eq!(
        registry.require(&name("pkg/Top")).unwrap().dialect,
        Dialect::Ros2
    );
}
