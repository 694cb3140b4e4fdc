//! `ros2idl` schemas: the IDL rosidl generates (ros2-cdr.md §10.4, §14 item 16), read into the
//! same model as `.msg` texts, and what is outside the subset rejected with its position.

use robolog_msg::{
    ArrayKind, Dialect, ElementType, Error, PrimitiveType, Registry, SECTION_SEPARATOR,
    SyntaxError, TypeName, Value,
};

fn name(text: &str) -> TypeName {
    text.parse().unwrap()
}

/// What rosidl_adapter generates for a `.msg` with every feature the template has (spec
/// §10.4), plus the `#include` forms and a dependency section.
fn sample_schema() -> String {
    let sep = SECTION_SEPARATOR;
    format!(
        r#"{sep}
IDL: my_pkg/msg/Sample
// generated from rosidl_adapter/resource/msg.idl.em
// with input from my_pkg/msg/Sample.msg
// generated code does not contain a copyright notice

#include "geometry_msgs/msg/Point.idl"
#include <std_msgs/msg/Header.idl>
#ifndef SAMPLE_IDL
#define SAMPLE_IDL
#pragma once

module my_pkg {{
  module msg {{
    typedef double double__9[9];
    typedef geometry_msgs::msg::Point geometry_msgs__msg__Point;
    typedef geometry_msgs__msg__Point geometry_msgs__msg__Point__2[2];
    module Sample_Constants {{
      @verbatim (language="comment", text=
        "A mode." "\n"
        "With a \"quoted\" (parenthesised) word.")
      const uint8 MODE_A = 1 << 3;
      const int16 NEGATIVE = -5;
      const string NAME = "x" "y";
      const double HALF = 1.0 / 2;
      const boolean FLAG = TRUE;
    }};
    @verbatim (language="comment", text=
      "Sample message")
    struct Sample {{
      @verbatim (language="comment", text=
        "Row major")
      @unit (value="m")
      double__9 cov;

      geometry_msgs__msg__Point__2 pts;

      @default (value="abc")
      string<8> tag;

      sequence<int32, 4> vals;

      sequence<std_msgs::msg::Header> hdrs;

      /* block
         comment */ wstring w;
      wstring<5> bounded_w;
      @default (value=TRUE)
      boolean on;
      @default (value="(1.5, -2.0)")
      sequence<float, 3> gains;
      octet raw;
      unsigned long long big, bigger;
      short pair[2];
      long l;
      unsigned short us;
      char c;
      sequence<string<3>, Sample_Constants::MODE_A> names;
    }};
  }};
}};
#endif
{sep}
IDL: std_msgs/msg/Header
module std_msgs {{
  module msg {{
    struct Header {{
      builtin_interfaces::msg::Time stamp;
      string frame_id;
    }};
  }};
}};
"#
    )
}

#[test]
fn every_feature_of_the_generated_idl() {
    let registry = Registry::from_ros2idl("my_pkg/msg/Sample", &sample_schema()).unwrap();
    let sample = registry.require(&name("my_pkg/Sample")).unwrap();
    assert_eq!(sample.dialect, Dialect::Ros2);
    let fields: Vec<String> = sample
        .fields
        .iter()
        .map(|f| format!("{} {}", f.ty, f.name))
        .collect();
    assert_eq!(
        fields,
        [
            "float64[9] cov",
            "geometry_msgs/Point[2] pts",
            "string<=8 tag",
            "int32[<=4] vals",
            "std_msgs/Header[] hdrs",
            "wstring w",
            "wstring<=5 bounded_w",
            "bool on",
            "float32[<=3] gains",
            "byte raw",
            "uint64 big",
            "uint64 bigger",
            "int16[2] pair",
            "int32 l",
            "uint16 us",
            "char c",
            "string<=3[<=8] names",
        ]
    );
    let constants: Vec<(String, Value)> = sample
        .constants
        .iter()
        .map(|c| {
            (
                format!("{} {}={}", c.ty, c.name, c.value_text),
                c.value.clone(),
            )
        })
        .collect();
    assert_eq!(
        constants,
        [
            ("uint8 MODE_A=8".to_owned(), Value::UInt(8)),
            ("int16 NEGATIVE=-5".to_owned(), Value::Int(-5)),
            ("string NAME=\"xy\"".to_owned(), Value::String("xy".into())),
            ("float64 HALF=0.5".to_owned(), Value::Float(0.5)),
            ("bool FLAG=true".to_owned(), Value::Bool(true)),
        ]
    );
    let default = |field: &str| {
        sample
            .field(field)
            .unwrap()
            .default
            .as_ref()
            .map(|d| (d.value.clone(), d.text.clone()))
    };
    assert_eq!(
        default("tag"),
        Some((Value::String("abc".into()), "\"abc\"".into()))
    );
    assert_eq!(default("on"), Some((Value::Bool(true), "true".into())));
    assert_eq!(
        default("gains"),
        Some((
            Value::Array(vec![Value::Float(1.5), Value::Float(-2.0)]),
            "[1.5, -2.0]".into()
        ))
    );
    // The source is an equivalent .msg text: parsing it gives the same definition.
    let reparsed = robolog_msg::parse_message(&sample.name, &sample.source, Dialect::Ros2).unwrap();
    assert_eq!(reparsed.fields, sample.fields);
    assert_eq!(reparsed.constants, sample.constants);

    // The second section, and what neither section defines, reported by name.
    assert_eq!(
        registry
            .require(&name("std_msgs/Header"))
            .unwrap()
            .fields
            .len(),
        2
    );
    assert!(matches!(
        registry.dependencies(&name("my_pkg/Sample")),
        Err(Error::MissingType { missing, .. }) if missing == name("geometry_msgs/Point")
    ));
}

/// The IDL rosidl_adapter generates for `.msg` files, and the `.msg` itself: the same model.
#[test]
fn generated_idl_and_msg_give_the_same_definition() {
    let msg = "# doc\nuint8 MODE=1\nstring NAME='hi'\nfloat64[3] xyz\nint32[<=4] vals [1, 2]\n\
               string<=10 tag \"ab\"\nstd_msgs/Header[] headers\nbyte b\nbool flag true\n";
    let idl = r#"
module my_pkg {
  module msg {
    typedef double double__3[3];
    module Gen_Constants {
      const uint8 MODE = 1;
      const string NAME = "hi";
    };
    @verbatim (language="comment", text=
      "doc")
    struct Gen {
      double__3 xyz;

      @default (value="(1, 2)")
      sequence<int32, 4> vals;

      @default (value="ab")
      string<10> tag;

      sequence<std_msgs::msg::Header> headers;

      octet b;

      @default (value=TRUE)
      boolean flag;
    };
  };
};
"#;
    let from_msg = robolog_msg::parse_message(&name("my_pkg/Gen"), msg, Dialect::Ros2).unwrap();
    let registry = Registry::from_ros2idl("my_pkg/msg/Gen", idl).unwrap();
    let from_idl = registry.require(&name("my_pkg/Gen")).unwrap();
    assert_eq!(from_idl.fields.len(), from_msg.fields.len());
    for (a, b) in from_idl.fields.iter().zip(&from_msg.fields) {
        assert_eq!((&a.name, &a.ty), (&b.name, &b.ty));
        assert_eq!(
            a.default.as_ref().map(|d| &d.value),
            b.default.as_ref().map(|d| &d.value),
            "{}",
            a.name
        );
    }
    let values = |d: &robolog_msg::MessageDefinition| -> Vec<(String, Value)> {
        d.constants
            .iter()
            .map(|c| (c.name.clone(), c.value.clone()))
            .collect()
    };
    assert_eq!(values(from_idl), values(&from_msg));
    let mut reference = Registry::new();
    reference.insert_message(from_msg);
    reference
        .add_message_text(
            &name("std_msgs/Header"),
            "builtin_interfaces/Time stamp\nstring frame_id\n",
            Dialect::Ros2,
        )
        .unwrap();
    let mut with_header = registry.clone();
    with_header
        .add_message_text(
            &name("std_msgs/Header"),
            "builtin_interfaces/Time stamp\nstring frame_id\n",
            Dialect::Ros2,
        )
        .unwrap();
    assert_eq!(
        with_header.type_hash(&name("my_pkg/Gen")).unwrap(),
        reference.type_hash(&name("my_pkg/Gen")).unwrap()
    );
}

#[test]
fn the_empty_struct_member_is_an_empty_message() {
    let idl = "module std_msgs { module msg { struct Empty {\n\
               uint8 structure_needs_at_least_one_member;\n}; }; };\n";
    let registry = Registry::from_ros2idl("std_msgs/msg/Empty", idl).unwrap();
    assert!(
        registry
            .require(&name("std_msgs/Empty"))
            .unwrap()
            .fields
            .is_empty()
    );
    // The hash puts the member back, as rosidl does.
    assert_eq!(
        registry.type_hash(&name("std_msgs/Empty")).unwrap(),
        "RIHS01_20b625256f32d5dbc0d04fee44f43c41e51c70d3502f84b4a08e7a9c26a96312"
    );
}

#[test]
fn services_and_actions_in_idl_get_their_derived_types() {
    let srv = "module example_interfaces { module srv {\n\
               struct AddTwoInts_Request { int64 a; int64 b; };\n\
               struct AddTwoInts_Response { int64 sum; };\n}; };\n";
    let registry = Registry::from_ros2idl("example_interfaces/srv/AddTwoInts_Event", srv).unwrap();
    assert_eq!(
        registry
            .type_hash(&name("example_interfaces/srv/AddTwoInts_Event"))
            .unwrap(),
        "RIHS01_32c1d140259c71e5c355115942bcb31df98b4330e4d906b1b75ccb1c9b3ce6c8"
    );
    assert_eq!(
        registry
            .service_type_hash(&name("example_interfaces/srv/AddTwoInts"))
            .unwrap(),
        "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a"
    );

    let action = "module my_pkg { module action {\n\
                  struct Fib_Goal { int32 order; };\n\
                  struct Fib_Result { sequence<int32> sequence; };\n\
                  struct Fib_Feedback { sequence<int32> partial; };\n}; };\n";
    let registry = Registry::from_ros2idl("my_pkg/action/Fib_FeedbackMessage", action).unwrap();
    assert!(registry.contains(&name("my_pkg/Fib_SendGoal_Event")));
    assert!(registry.action(&name("my_pkg/Fib")).is_some());
}

#[test]
fn a_missing_root_struct_is_reported_by_name() {
    let idl = "module my_pkg { module msg { struct Other { int8 x; }; }; };";
    assert!(matches!(
        Registry::from_ros2idl("my_pkg/msg/Wanted", idl),
        Err(Error::MissingType { missing, .. }) if missing == name("my_pkg/Wanted")
    ));
}

/// The error for a one-struct file whose member line is `member`, at line 3.
fn member_error(member: &str) -> SyntaxError {
    let idl = format!("module my_pkg {{ module msg {{\nstruct T {{\n{member}\n}}; }}; }};\n");
    match Registry::from_ros2idl("my_pkg/msg/T", &idl) {
        Err(Error::Syntax(error)) => *error,
        other => panic!("{member}: expected a syntax error, got {other:?}"),
    }
}

#[test]
fn what_ros2_messages_cannot_carry_is_rejected_where_it_is() {
    for (member, column, found, says) in [
        ("  @key int32 id;", 3, "@", "@key"),
        ("  @optional int32 id;", 3, "@", "@optional"),
        ("  wchar w;", 3, "wchar", "wchar"),
        ("  long double x;", 3, "long", "long double"),
        ("  map<int32, int32> m;", 3, "map", "map"),
        ("  int32 grid[2][3];", 9, "grid", "arrays of arrays"),
        (
            "  sequence<sequence<int32>> s;",
            29,
            "s",
            "sequences of sequences",
        ),
        ("  string<0> s;", 13, "s", "size"),
        ("  int32 a; int32 a;", 18, "a", "not already used"),
        ("  int32 x", 1, "}", "`;`"),
        ("  ::top_level x;", 3, "::", "ROS 2 type"),
    ] {
        let error = member_error(member);
        assert_eq!(
            (error.line, error.column, error.found.as_str()),
            (if found == "}" { 4 } else { 3 }, column, found),
            "{member}: {error}"
        );
        assert!(error.expected.contains(says), "{member}: {error}");
        assert_eq!(error.type_name, "my_pkg/T");
    }
    for (text, found, says) in [
        ("module a { enum Color { RED }; };", "enum", "enum"),
        (
            "module a { union U switch (long) { case 1: long x; }; };",
            "union",
            "union",
        ),
        (
            "module a { module msg { struct D : B { long x; }; }; };",
            ":",
            "inheritance",
        ),
        ("module a { /* never closed", "/*", "*/"),
        ("module a { const string S = \"open; };", "\"", "closing"),
        ("struct T { long x; };", "T", "ROS 2 module"),
        (
            "module a { module msg { const uint8 X = 256; }; };",
            "X",
            "fits",
        ),
        (
            "module a { module msg { const uint8 X = 1 / 0; }; };",
            "X",
            "in range",
        ),
        (
            "module a { module msg { const uint8 X = Y; }; };",
            "X",
            "known constant",
        ),
        ("$", "$", "IDL token"),
    ] {
        let error = match Registry::from_ros2idl("a/msg/T", text) {
            Err(Error::Syntax(error)) => error,
            other => panic!("{text}: expected a syntax error, got {other:?}"),
        };
        assert_eq!(error.line, 1, "{text}");
        assert_eq!(error.found, found, "{text}: {error}");
        assert!(error.expected.contains(says), "{text}: {error}");
        let column = text.find(found).unwrap() + 1;
        assert_eq!(error.column, column, "{text}: {error}");
    }
}

#[test]
fn errors_in_later_sections_count_lines_from_the_start_of_the_schema() {
    let text = format!(
        "{SECTION_SEPARATOR}\nIDL: my_pkg/msg/Top\nmodule my_pkg {{ module msg {{ struct Top {{ Other o; }}; }}; }};\n\
         {SECTION_SEPARATOR}\nIDL: my_pkg/msg/Other\nmodule my_pkg {{ module msg {{\nstruct Other {{ enum x; }}; }}; }};\n"
    );
    let registry = Registry::from_ros2idl("my_pkg/msg/Top", &text).unwrap();
    match registry.dependencies(&name("my_pkg/Top")) {
        Err(Error::UnparsableType {
            name: broken,
            error,
        }) => {
            assert_eq!(broken, name("my_pkg/Other"));
            assert_eq!(
                (error.line, error.column, error.found.as_str()),
                (7, 16, "enum")
            );
        }
        other => panic!("{other:?}"),
    }
    let warning = registry.warnings()[0].to_string();
    assert!(warning.contains("my_pkg/Other line 7"), "{warning}");
}

#[test]
fn idl_sections_inside_ros2msg_schemas() {
    // rosbag2: a dependency with only an .idl gives an empty MSG: section, then IDL:.
    let text = format!(
        "my_pkg/Point p\n{SECTION_SEPARATOR}\nMSG: my_pkg/Point\n\n{SECTION_SEPARATOR}\n\
         IDL: my_pkg/msg/Point\nmodule my_pkg {{ module msg {{ struct Point {{ float x; float y; }}; }}; }};\n"
    );
    let registry = Registry::from_ros2msg("my_pkg/msg/Top", &text).unwrap();
    let point = registry.require(&name("my_pkg/Point")).unwrap();
    assert_eq!(point.fields.len(), 2);
    assert_eq!(
        point.fields[0].ty.element,
        ElementType::Primitive(PrimitiveType::Float32)
    );
    assert!(registry.warnings().is_empty(), "{:?}", registry.warnings());
}

#[test]
fn hostile_idl_is_an_error_not_a_crash() {
    let deep_modules = "module a { ".repeat(10_000);
    let deep_sequence = format!(
        "module a {{ module msg {{ struct T {{ {}int32{} x; }}; }}; }};",
        "sequence<".repeat(10_000),
        ">".repeat(10_000)
    );
    let deep_expression = format!(
        "module a {{ module msg {{ const int32 X = {}1{}; }}; }};",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    let unary_chain = format!(
        "module a {{ module msg {{ const int32 X = {}1; }}; }};",
        "-".repeat(10_000)
    );
    let typedef_loop = "module a { module msg { typedef B A; typedef A B; struct T { A x; }; }; };";
    let constant_loop = "module a { module msg { const int32 X = Y; const int32 Y = X; struct T { string<X> s; }; }; };";
    let huge_array =
        "module a { module msg { struct T { int8 x[99999999999999999999999999]; }; }; };";
    for text in [
        deep_modules.as_str(),
        &deep_sequence,
        &deep_expression,
        &unary_chain,
        typedef_loop,
        constant_loop,
        huge_array,
    ] {
        assert!(
            matches!(
                Registry::from_ros2idl("a/msg/T", text),
                Err(Error::Syntax(_))
            ),
            "{}",
            text.get(..60).unwrap_or(text)
        );
    }
    // Every prefix of a valid schema: an error or a registry, never a panic.
    let schema = sample_schema();
    for end in (0..schema.len()).filter(|&i| schema.is_char_boundary(i)) {
        let _ = Registry::from_ros2idl("my_pkg/msg/Sample", &schema[..end]);
    }
}

#[test]
fn array_kinds_map_to_the_model() {
    let idl = "module p { module msg { struct T { int8 f[3]; sequence<int8> v; sequence<int8, 2> b; }; }; };";
    let registry = Registry::from_ros2idl("p/msg/T", idl).unwrap();
    let kinds: Vec<ArrayKind> = registry
        .require(&name("p/T"))
        .unwrap()
        .fields
        .iter()
        .map(|f| f.ty.array)
        .collect();
    assert_eq!(
        kinds,
        [
            ArrayKind::Fixed(3),
            ArrayKind::Variable,
            ArrayKind::Bounded(2)
        ]
    );
}

#[test]
fn the_demo_fixture_in_both_encodings_gives_the_same_types_and_hashes() {
    let read = |file: &str| String::from_utf8(robolog_testkit::testdata::read(file)).unwrap();
    let from_msg =
        Registry::from_ros2msg("ros2_demo/msg/Demo", &read("msg/ros2_demo.ros2msg")).unwrap();
    let from_idl =
        Registry::from_ros2idl("ros2_demo/msg/Demo", &read("msg/ros2_demo.ros2idl")).unwrap();
    for type_name in ["ros2_demo/Demo", "std_msgs/Header"] {
        let a = from_msg.require(&name(type_name)).unwrap();
        let b = from_idl.require(&name(type_name)).unwrap();
        assert_eq!(a.fields, b.fields, "{type_name}");
        assert_eq!(a.constants.len(), b.constants.len(), "{type_name}");
        assert_eq!(
            from_msg.type_hash(&name(type_name)).unwrap(),
            from_idl.type_hash(&name(type_name)).unwrap()
        );
    }
}
