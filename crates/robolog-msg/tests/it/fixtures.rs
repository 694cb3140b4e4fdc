//! The definition fixtures of `testdata/msg/` (genmsg output, see its README): md5sums,
//! dependency order and byte-exact bundles.

use std::collections::BTreeMap;

use robolog_msg::{
    ArrayKind, Bundle, Dialect, ElementType, Error, ParseDialect, PrimitiveType, Registry,
    TypeName, Value,
};
use robolog_testkit::testdata;

struct Fixture {
    stem: String,
    name: TypeName,
    bundle: String,
    md5: String,
}

/// Every `<pkg>_<Type>.msgdef` with its `.md5`; the type name comes from the stem (the package
/// is everything before the first `_` followed by an upper-case letter).
fn fixtures() -> Vec<Fixture> {
    let files = testdata::files_with_extension("msg", ".msgdef");
    let fixtures: Vec<Fixture> = files
        .iter()
        .map(|path| {
            let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
            let split = stem
                .char_indices()
                .find(|&(i, c)| c == '_' && stem[i + 1..].starts_with(|u: char| u.is_uppercase()))
                .map(|(i, _)| i)
                .unwrap();
            let name = TypeName::new(&stem[..split], &stem[split + 1..]).unwrap();
            let bundle = String::from_utf8(std::fs::read(path).unwrap()).unwrap();
            let md5 = String::from_utf8(testdata::read(format!("msg/{stem}.md5"))).unwrap();
            Fixture {
                stem,
                name,
                bundle,
                md5: md5.trim_end().to_owned(),
            }
        })
        .collect();
    assert_eq!(
        fixtures.len(),
        10,
        "testdata/msg should hold 10 .msgdef fixtures"
    );
    fixtures
}

fn name(text: &str) -> TypeName {
    text.parse().unwrap()
}

#[test]
fn every_fixture_reproduces_its_md5() {
    for fixture in fixtures() {
        for dialect in [ParseDialect::Ros1, ParseDialect::Auto] {
            let registry = Registry::from_bundle(&fixture.name, &fixture.bundle, dialect).unwrap();
            assert_eq!(
                registry.md5(&fixture.name).unwrap(),
                fixture.md5,
                "{} ({dialect:?})",
                fixture.stem
            );
            assert!(
                registry.warnings().is_empty(),
                "{}: {:?}",
                fixture.stem,
                registry.warnings()
            );
        }
    }
}

#[test]
fn every_fixture_bundle_is_written_back_byte_identical() {
    for fixture in fixtures() {
        let registry =
            Registry::from_bundle(&fixture.name, &fixture.bundle, Dialect::Ros1).unwrap();
        assert_eq!(
            registry.bundle_text(&fixture.name).unwrap(),
            fixture.bundle,
            "{}",
            fixture.stem
        );
    }
}

/// Builds one registry from the individual `.msg` texts (taken from the fixtures' sections and
/// the raw `.msg` files), so that each bundle's dependency order is computed, not copied.
#[test]
fn bundles_generated_from_individual_definitions_have_the_fixture_layout() {
    let mut library: BTreeMap<TypeName, String> = BTreeMap::new();
    library.insert(
        name("my_pkg/Custom"),
        String::from_utf8(testdata::read("msg/my_pkg_Custom.msg")).unwrap(),
    );
    library.insert(
        name("my_pkg/Point2"),
        String::from_utf8(testdata::read("msg/my_pkg_Point2.msg")).unwrap(),
    );
    let fixtures = fixtures();
    for fixture in &fixtures {
        let bundle = Bundle::parse(&fixture.bundle);
        let mut texts = vec![(fixture.name.clone(), bundle.top.clone())];
        texts.extend(bundle.dependencies.into_iter().map(|s| (s.name, s.text)));
        for (type_name, text) in texts {
            // The same type must have the same text in every fixture it appears in.
            let known = library
                .entry(type_name.clone())
                .or_insert_with(|| text.clone());
            assert_eq!(*known, text, "{type_name} differs in {}", fixture.stem);
        }
    }
    let mut registry = Registry::new();
    for (type_name, text) in &library {
        registry
            .add_message_text(type_name, text, Dialect::Ros1)
            .unwrap();
    }
    assert_eq!(registry.len(), 19);
    for fixture in &fixtures {
        assert_eq!(
            registry.bundle_text(&fixture.name).unwrap(),
            fixture.bundle,
            "{}",
            fixture.stem
        );
        assert_eq!(
            registry.md5(&fixture.name).unwrap(),
            fixture.md5,
            "{}",
            fixture.stem
        );
    }
}

#[test]
fn dependency_order_is_genmsg_depth_first() {
    let by_stem = |stem: &str| fixtures().into_iter().find(|f| f.stem == stem).unwrap();
    let imu = by_stem("sensor_msgs_Imu");
    let registry = Registry::from_bundle(&imu.name, &imu.bundle, Dialect::Ros1).unwrap();
    assert_eq!(
        registry.dependencies(&imu.name).unwrap(),
        [
            name("std_msgs/Header"),
            name("geometry_msgs/Quaternion"),
            name("geometry_msgs/Vector3")
        ]
    );
    let pose = by_stem("geometry_msgs_PoseStamped");
    let registry = Registry::from_bundle(&pose.name, &pose.bundle, Dialect::Ros1).unwrap();
    assert_eq!(
        registry.dependencies(&pose.name).unwrap(),
        [
            name("std_msgs/Header"),
            name("geometry_msgs/Pose"),
            name("geometry_msgs/Point"),
            name("geometry_msgs/Quaternion")
        ]
    );
}

#[test]
fn md5_texts_match_the_spec_examples() {
    let by_stem = |stem: &str| fixtures().into_iter().find(|f| f.stem == stem).unwrap();
    let imu = by_stem("sensor_msgs_Imu");
    let registry = Registry::from_bundle(&imu.name, &imu.bundle, Dialect::Ros1).unwrap();
    assert_eq!(
        registry.md5_text(&imu.name).unwrap(),
        "2176decaecbce78abc3b96ef049fabed header\n\
         a779879fadf0160734f906b8c19c7004 orientation\n\
         float64[9] orientation_covariance\n\
         4a842b65f413084dc2b10fb484ea7f17 angular_velocity\n\
         float64[9] angular_velocity_covariance\n\
         4a842b65f413084dc2b10fb484ea7f17 linear_acceleration\n\
         float64[9] linear_acceleration_covariance"
    );
    let pose = by_stem("geometry_msgs_PoseStamped");
    let registry = Registry::from_bundle(&pose.name, &pose.bundle, Dialect::Ros1).unwrap();
    assert_eq!(
        registry.md5_text(&name("geometry_msgs/Pose")).unwrap(),
        "4a842b65f413084dc2b10fb484ea7f17 position\na779879fadf0160734f906b8c19c7004 orientation"
    );
    assert_eq!(
        registry.md5(&name("geometry_msgs/Pose")).unwrap(),
        "e45d45a5a1ce597b249e23fb30fc871f"
    );
    assert_eq!(
        registry.md5_text(&name("std_msgs/Header")).unwrap(),
        "uint32 seq\ntime stamp\nstring frame_id"
    );

    let custom = by_stem("my_pkg_Custom");
    let registry = Registry::from_bundle(&custom.name, &custom.bundle, Dialect::Ros1).unwrap();
    assert_eq!(
        registry.md5_text(&custom.name).unwrap(),
        "int32 ANSWER=42\n\
         float64 PI=3.14159\n\
         string GREETING=hello # world, this is NOT a comment\n\
         uint8 MAX_U8=255\n\
         byte SIGNED=-5\n\
         char LETTER=65\n\
         bool FLAG=1\n\
         2176decaecbce78abc3b96ef049fabed header\n\
         uint8[16] fixed_bytes\n\
         uint8[] var_bytes\n\
         string[3] names\n\
         float32[] values\n\
         4a842b65f413084dc2b10fb484ea7f17 points\n\
         4a842b65f413084dc2b10fb484ea7f17 corners\n\
         ff8d7d66dd3e4b731ef14a45d38888b6 local_point\n\
         time t\n\
         duration d\n\
         bool[] flags\n\
         int64 big"
    );
    assert_eq!(
        registry.md5(&name("my_pkg/Point2")).unwrap(),
        "ff8d7d66dd3e4b731ef14a45d38888b6"
    );
}

#[test]
#[allow(clippy::approx_constant)] // 3.14159 is the fixture's constant, not an attempt at PI
fn custom_fixture_parses_into_the_expected_model() {
    let text = String::from_utf8(testdata::read("msg/my_pkg_Custom.msg")).unwrap();
    let custom = robolog_msg::parse_message(&name("my_pkg/Custom"), &text, Dialect::Ros1).unwrap();
    let constants: Vec<(PrimitiveType, &str, &Value, &str)> = custom
        .constants
        .iter()
        .map(|c| (c.ty, c.name.as_str(), &c.value, c.value_text.as_str()))
        .collect();
    assert_eq!(
        constants,
        [
            (PrimitiveType::Int32, "ANSWER", &Value::Int(42), "42"),
            (
                PrimitiveType::Float64,
                "PI",
                &Value::Float(3.14159),
                "3.14159"
            ),
            (
                PrimitiveType::String,
                "GREETING",
                &Value::String("hello # world, this is NOT a comment".into()),
                "hello # world, this is NOT a comment"
            ),
            (PrimitiveType::UInt8, "MAX_U8", &Value::UInt(255), "255"),
            (PrimitiveType::Byte, "SIGNED", &Value::Int(-5), "-5"),
            (PrimitiveType::Char, "LETTER", &Value::UInt(65), "65"),
            (PrimitiveType::Bool, "FLAG", &Value::Bool(true), "1"),
        ]
    );
    let fields: Vec<(&str, String)> = custom
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.ty.to_string()))
        .collect();
    assert_eq!(
        fields,
        [
            ("header", "std_msgs/Header".to_owned()),
            ("fixed_bytes", "uint8[16]".to_owned()),
            ("var_bytes", "uint8[]".to_owned()),
            ("names", "string[3]".to_owned()),
            ("values", "float32[]".to_owned()),
            ("points", "geometry_msgs/Point[]".to_owned()),
            ("corners", "geometry_msgs/Point[2]".to_owned()),
            ("local_point", "my_pkg/Point2".to_owned()),
            ("t", "time".to_owned()),
            ("d", "duration".to_owned()),
            ("flags", "bool[]".to_owned()),
            ("big", "int64".to_owned()),
        ]
    );
    assert_eq!(
        custom.field("corners").unwrap().ty.array,
        ArrayKind::Fixed(2)
    );
    assert_eq!(custom.source, text);
}

#[test]
fn ros2_demo_parses_and_reports_its_missing_dependency_by_name() {
    let text = String::from_utf8(testdata::read("msg/ros2_demo.ros2msg")).unwrap();
    let top = name("ros2_demo/msg/Demo");
    let registry = Registry::from_bundle(&top, &text, ParseDialect::Auto).unwrap();
    let demo = registry.require(&top).unwrap();
    assert_eq!(demo.dialect, Dialect::Ros2);
    assert_eq!(demo.constants.len(), 1);
    assert_eq!(demo.constants[0].name, "ANSWER");
    assert_eq!(demo.constants[0].value, Value::Int(42));

    let field = demo.field("name").unwrap();
    assert_eq!(
        field.ty.element,
        ElementType::BoundedString {
            wide: false,
            max_len: 10
        }
    );
    assert_eq!(field.ty.array, ArrayKind::Scalar);
    let default = field.default.as_ref().unwrap();
    assert_eq!(default.value, Value::String("abc".into()));
    assert_eq!(default.text, "\"abc\"");

    let field = demo.field("up_to_five").unwrap();
    assert_eq!(
        field.ty.element,
        ElementType::Primitive(PrimitiveType::Int32)
    );
    assert_eq!(field.ty.array, ArrayKind::Bounded(5));
    assert_eq!(
        field.default.as_ref().unwrap().value,
        Value::Array(vec![Value::Int(1), Value::Int(2)])
    );

    let field = demo.field("triple").unwrap();
    assert_eq!(field.ty.to_string(), "float64[3]");
    assert!(field.default.is_none());

    let field = demo.field("header").unwrap();
    assert_eq!(field.ty.message_type(), Some(&name("std_msgs/Header")));

    let header = registry.require(&name("std_msgs/Header")).unwrap();
    let fields: Vec<String> = header.fields.iter().map(|f| f.ty.to_string()).collect();
    assert_eq!(fields, ["builtin_interfaces/Time", "string"]);

    match registry.dependencies(&top) {
        Err(Error::MissingType { missing, needed_by }) => {
            assert_eq!(missing, name("builtin_interfaces/Time"));
            assert_eq!(needed_by, Some(name("std_msgs/Header")));
        }
        other => panic!("expected a missing dependency, got {other:?}"),
    }
    assert!(matches!(registry.md5(&top), Err(Error::MissingType { .. })));

    // Once complete, the type walks fine, but has no md5sum: that is ROS 1 only.
    let mut registry = registry;
    registry
        .add_message_text(
            &name("builtin_interfaces/Time"),
            "int32 sec\nuint32 nanosec\n",
            Dialect::Ros2,
        )
        .unwrap();
    assert_eq!(
        registry.dependencies(&top).unwrap(),
        [name("std_msgs/Header"), name("builtin_interfaces/Time")]
    );
    assert!(matches!(registry.md5(&top), Err(Error::NotRos1 { .. })));
}

#[test]
fn truncated_fixtures_never_panic_and_errors_point_inside_the_text() {
    for fixture in fixtures() {
        robolog_testkit::truncation::sweep(fixture.bundle.as_bytes(), 512, 7, |_, prefix| {
            let text = String::from_utf8_lossy(prefix);
            let lines = text.split('\n').count();
            match Registry::from_bundle(&fixture.name, &text, Dialect::Ros1) {
                Ok(registry) => {
                    // Whatever is missing is reported by name, never a panic.
                    match registry.md5(&fixture.name) {
                        Ok(sum) if sum.len() == 32 => Ok(()),
                        Ok(sum) => Err(format!("md5 `{sum}`")),
                        Err(Error::MissingType { .. } | Error::UnparsableType { .. }) => Ok(()),
                        Err(other) => Err(other.to_string()),
                    }
                }
                Err(Error::Syntax(error)) if error.line >= 1 && error.line <= lines => Ok(()),
                Err(other) => Err(format!("unexpected error {other}")),
            }
        });
    }
}
