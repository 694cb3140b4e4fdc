//! Loading a directory tree of ROS packages (`<pkg>/msg/*.msg`, `<pkg>/srv/*.srv`,
//! `<pkg>/action/*.action`).

use std::fs;
use std::path::{Path, PathBuf};

use robolog_msg::{Bundle, Dialect, Error, ParseDialect, Registry, TypeName, Warning};
use robolog_testkit::testdata;

fn name(text: &str) -> TypeName {
    text.parse().unwrap()
}

/// A scratch folder under the system temp folder, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let path = std::env::temp_dir().join(format!("robolog-msg-{}-{test}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).unwrap();
        Scratch(path)
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.0.join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn fixture(stem: &str) -> String {
    String::from_utf8(testdata::read(format!("msg/{stem}"))).unwrap()
}

/// Writes every type of the given fixture bundles as `<folder>/<pkg>/msg/<Type>.msg`.
fn write_sections(scratch: &Scratch, folder: &str, stems: &[(&str, &str)]) {
    for (stem, top) in stems {
        let bundle = Bundle::parse(&fixture(&format!("{stem}.msgdef")));
        let top = name(top);
        let mut sections = vec![(top, bundle.top.clone())];
        sections.extend(bundle.dependencies.into_iter().map(|s| (s.name, s.text)));
        for (type_name, text) in sections {
            scratch.write(
                &format!(
                    "{folder}/{}/msg/{}.msg",
                    type_name.package(),
                    type_name.name()
                ),
                &text,
            );
        }
    }
}

const FIXTURES: [(&str, &str); 8] = [
    ("std_msgs_String", "std_msgs/String"),
    ("std_msgs_Header", "std_msgs/Header"),
    ("geometry_msgs_PoseStamped", "geometry_msgs/PoseStamped"),
    (
        "geometry_msgs_TwistWithCovarianceStamped",
        "geometry_msgs/TwistWithCovarianceStamped",
    ),
    ("sensor_msgs_Imu", "sensor_msgs/Imu"),
    ("sensor_msgs_PointCloud2", "sensor_msgs/PointCloud2"),
    ("sensor_msgs_CameraInfo", "sensor_msgs/CameraInfo"),
    ("rosgraph_msgs_Log", "rosgraph_msgs/Log"),
];

#[test]
fn loads_messages_services_and_actions_and_writes_fixture_bundles() {
    let scratch = Scratch::new("tree");
    write_sections(&scratch, "src/common_msgs", &FIXTURES);
    scratch.write("src/my_pkg/msg/Custom.msg", &fixture("my_pkg_Custom.msg"));
    scratch.write("src/my_pkg/msg/Point2.msg", &fixture("my_pkg_Point2.msg"));
    scratch.write("src/my_pkg/msg/README.txt", "not a definition");
    scratch.write(
        "src/my_pkg/srv/AddTwoInts.srv",
        "int64 a\nint64 b\n---\nint64 sum\n",
    );
    scratch.write(
        "src/actionlib_tutorials/action/Fibonacci.action",
        "#goal definition\nint32 order\n---\n#result definition\nint32[] sequence\n---\n\
         #feedback\nint32[] sequence\n",
    );
    scratch.write(
        "src/actionlib_msgs/msg/GoalID.msg",
        "time stamp\nstring id\n",
    );
    scratch.write(
        "src/actionlib_msgs/msg/GoalStatus.msg",
        "GoalID goal_id\nuint8 status\nuint8 PENDING=0\nuint8 ACTIVE=1\nuint8 PREEMPTED=2\n\
         uint8 SUCCEEDED=3\nuint8 ABORTED=4\nuint8 REJECTED=5\nuint8 PREEMPTING=6\n\
         uint8 RECALLING=7\nuint8 RECALLED=8\nuint8 LOST=9\nstring text\n",
    );
    // Hidden folders are skipped, even when they hold broken files.
    scratch.write(".git/broken/msg/Bad.msg", "int32\tbad\n");

    let registry = Registry::load_package_tree(&scratch.0, Dialect::Ros1).unwrap();
    assert!(registry.warnings().is_empty(), "{:?}", registry.warnings());
    for (stem, top) in FIXTURES.iter().chain(&[("my_pkg_Custom", "my_pkg/Custom")]) {
        let expected = fixture(&format!("{stem}.msgdef"));
        assert_eq!(
            registry.bundle_text(&name(top)).unwrap(),
            expected,
            "{stem}"
        );
        let md5 = fixture(&format!("{stem}.md5"));
        assert_eq!(registry.md5(&name(top)).unwrap(), md5.trim_end(), "{stem}");
    }
    assert_eq!(
        registry.service_md5(&name("my_pkg/AddTwoInts")).unwrap(),
        "6a2e34150c00229791cc89ff309fff21"
    );
    assert_eq!(
        registry
            .md5(&name("actionlib_tutorials/FibonacciAction"))
            .unwrap(),
        "f59df5767bf7634684781c92598b2406"
    );
    assert!(!registry.contains(&name("broken/Bad")));
}

#[test]
fn a_package_folder_itself_can_be_the_root() {
    let scratch = Scratch::new("single");
    let package = scratch.0.join("my_pkg");
    scratch.write("my_pkg/msg/Point2.msg", "float32 x\nfloat32 y\n");
    let registry = Registry::load_package_tree(&package, Dialect::Ros1).unwrap();
    assert_eq!(
        registry.md5(&name("my_pkg/Point2")).unwrap(),
        "ff8d7d66dd3e4b731ef14a45d38888b6"
    );
}

#[test]
fn the_first_definition_of_a_type_wins() {
    let scratch = Scratch::new("duplicate");
    scratch.write("a_src/pkg/msg/T.msg", "int8 first\n");
    scratch.write("b_install/share/pkg/msg/T.msg", "int8 second\n");
    let registry = Registry::load_package_tree(&scratch.0, Dialect::Ros1).unwrap();
    assert_eq!(
        registry.require(&name("pkg/T")).unwrap().fields[0].name,
        "first"
    );
    assert_eq!(
        registry.warnings(),
        [Warning::DuplicateType {
            name: name("pkg/T")
        }]
    );
}

#[test]
fn a_broken_file_is_reported_with_its_path_line_and_column() {
    let scratch = Scratch::new("broken");
    scratch.write("pkg/msg/Good.msg", "int8 a\n");
    let bad = scratch.write("pkg/msg/Bad.msg", "int8 a\nint8[3 b\n");
    match Registry::load_package_tree(&scratch.0, Dialect::Ros1) {
        Err(Error::InFile { path, source }) => {
            assert_eq!(
                fs::canonicalize(path).unwrap(),
                fs::canonicalize(bad).unwrap()
            );
            match *source {
                Error::Syntax(error) => {
                    assert_eq!(
                        (error.line, error.column, error.found.as_str()),
                        (2, 5, "[3")
                    );
                }
                other => panic!("{other:?}"),
            }
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        Registry::load_package_tree(scratch.0.join("missing"), Dialect::Ros1),
        Err(Error::Io { .. })
    ));
}

#[test]
fn auto_dialect_is_chosen_per_file() {
    let scratch = Scratch::new("auto");
    scratch.write("ros2_pkg/msg/Bounded.msg", "string<=5 name\nbyte b\n");
    scratch.write("ros1_pkg/msg/Plain.msg", "Header header\nbyte b\n");
    let registry = Registry::load_package_tree(&scratch.0, ParseDialect::Auto).unwrap();
    assert_eq!(
        registry.require(&name("ros2_pkg/Bounded")).unwrap().dialect,
        Dialect::Ros2
    );
    assert_eq!(
        registry.require(&name("ros1_pkg/Plain")).unwrap().dialect,
        Dialect::Ros1
    );
}

#[cfg(unix)]
#[test]
fn symbolic_link_loops_do_not_hang() {
    let scratch = Scratch::new("loop");
    scratch.write("ws/pkg/msg/T.msg", "int8 a\n");
    std::os::unix::fs::symlink(scratch.0.join("ws"), scratch.0.join("ws/pkg/again")).unwrap();
    let registry = Registry::load_package_tree(Path::new(&scratch.0), Dialect::Ros1).unwrap();
    assert_eq!(registry.len(), 1);
    assert!(registry.warnings().is_empty());
}
