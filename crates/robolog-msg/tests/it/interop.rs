//! Differential test against the PyPI `rosbags` package (pinned in
//! `scripts/interop-requirements.txt`): the md5sums of the fixtures and of a few hundred
//! generated message families must agree.
//!
//! rosbags re-prints constant values (`1e3` becomes `1000.0`, quotes are removed), which
//! genmsg does not, so the generated constants use spellings both print identically; the
//! genmsg-only spellings are covered by the spec vectors in `edge_cases.rs`.

use std::ffi::OsStr;
use std::fmt::Write as _;

use robolog_msg::{Dialect, Registry, TypeName};
use robolog_testkit::{interop, testdata};

/// A small deterministic generator (xorshift64*), so that failures reproduce.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[usize::try_from(self.below(items.len() as u64)).unwrap()]
    }
}

const PRIMITIVES: [&str; 16] = [
    "bool", "byte", "char", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
    "uint64", "float32", "float64", "string", "time", "duration",
];

fn constant_line(random: &mut Random, index: usize) -> String {
    let equals = random.pick(&["=", " = ", "= ", " ="]);
    let (ty, value) = match random.below(7) {
        0 => ("int8", (random.below(256) as i64 - 128).to_string()),
        1 => ("uint8", random.below(256).to_string()),
        2 => ("byte", (random.below(256) as i64 - 128).to_string()),
        3 => ("char", random.below(256).to_string()),
        4 => ("uint64", random.next().to_string()),
        5 => (
            "float64",
            format!(
                "{}{}.{}",
                random.pick(&["", "-"]),
                random.below(1000),
                random.below(9) + 1
            ),
        ),
        _ => ("string", format!("value {} a=b", random.below(100))),
    };
    let comment = if ty == "string" {
        ""
    } else {
        random.pick(&["", "  # note"])
    };
    format!("{ty} C{index}{equals}{value}{comment}")
}

/// A family of types `fam<k>/T0..Tn`; `T0` is the top type, `Ti` may use `Tj` for `j > i`.
fn family(random: &mut Random, family: usize) -> Registry {
    let package = format!("fam{family}");
    let count = 1 + random.below(5) as usize;
    let mut registry = Registry::new();
    registry
        .add_message_text(
            &TypeName::std_msgs_header(),
            "# Standard metadata\nuint32 seq\ntime stamp\nstring frame_id\n",
            Dialect::Ros1,
        )
        .unwrap();
    for index in 0..count {
        let mut text = String::new();
        for c in 0..random.below(3) {
            writeln!(
                text,
                "{}",
                constant_line(random, usize::try_from(c).unwrap())
            )
            .unwrap();
        }
        for f in 0..1 + random.below(6) {
            let ty = match random.below(4) {
                0 if index + 1 < count => {
                    let target = index + 1 + random.below((count - index - 1) as u64) as usize;
                    if random.below(2) == 0 {
                        format!("T{target}")
                    } else {
                        format!("{package}/T{target}")
                    }
                }
                1 if random.below(3) == 0 => "Header".to_owned(),
                _ => random.pick(&PRIMITIVES).to_owned(),
            };
            let suffix = match random.below(4) {
                0 => "[]".to_owned(),
                1 => format!("[{}]", 1 + random.below(9)),
                _ => String::new(),
            };
            let suffix = if ty == "Header" {
                String::new()
            } else {
                suffix
            };
            let comment = random.pick(&["", " # comment", "  #"]);
            writeln!(text, "{ty}{suffix} f{f}{comment}").unwrap();
        }
        if random.below(2) == 0 {
            text.pop();
        }
        let name = TypeName::new(&package, &format!("T{index}")).unwrap();
        registry
            .add_message_text(&name, &text, Dialect::Ros1)
            .unwrap();
    }
    registry
}

fn rosbags_md5s(python: &std::path::Path, cases: &[(String, String)]) -> Vec<String> {
    let input =
        std::env::temp_dir().join(format!("robolog-msg-interop-{}.txt", std::process::id()));
    let mut text = String::new();
    for (top, bundle) in cases {
        text.push_str(top);
        text.push('\n');
        text.push_str(bundle);
        text.push_str("\n\x1e\n");
    }
    std::fs::write(&input, text).unwrap();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/interop/rosbags_md5.py");
    let output = interop::run(python, &script, &[OsStr::new(&input)]);
    let _ = std::fs::remove_file(&input);
    output.unwrap().lines().map(str::to_owned).collect()
}

#[test]
fn md5sums_agree_with_rosbags() {
    let Some(python) = interop::python() else {
        return;
    };
    let mut cases = Vec::new();
    let mut expected = Vec::new();

    for path in testdata::files_with_extension("msg", ".msgdef") {
        let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
        let split = stem
            .char_indices()
            .find(|&(i, c)| c == '_' && stem[i + 1..].starts_with(|u: char| u.is_uppercase()))
            .unwrap()
            .0;
        let top = TypeName::new(&stem[..split], &stem[split + 1..]).unwrap();
        let bundle = std::fs::read_to_string(&path).unwrap();
        let registry = Registry::from_bundle(&top, &bundle, Dialect::Ros1).unwrap();
        expected.push(registry.md5(&top).unwrap());
        cases.push((top.to_string(), bundle));
    }
    assert_eq!(cases.len(), 10);

    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    for index in 0..300 {
        let registry = family(&mut random, index);
        let top = TypeName::new(&format!("fam{index}"), "T0").unwrap();
        expected.push(registry.md5(&top).unwrap());
        cases.push((top.to_string(), registry.bundle_text(&top).unwrap()));
    }

    let theirs = rosbags_md5s(&python, &cases);
    assert_eq!(theirs.len(), cases.len());
    for ((case, ours), theirs) in cases.iter().zip(&expected).zip(&theirs) {
        assert_eq!(
            ours, theirs,
            "md5 of {} differs for bundle:\n{}",
            case.0, case.1
        );
    }
}
