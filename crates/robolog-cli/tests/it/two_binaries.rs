//! `robolog` runs `export` and `sql` by running `robolog-columnar` (found beside it, else on
//! `PATH`), and links no Arrow, Parquet or DataFusion itself. What the two commands print is
//! tested in `columnar`, through `robolog`; here: that it is what `robolog-columnar` prints,
//! how the program is found, and what a user without it is told.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Run, command, command_of, finish};

const ROBOLOG: &str = env!("CARGO_BIN_EXE_robolog");
const COLUMNAR: &str = env!("CARGO_BIN_EXE_robolog-columnar");
const BAG_LZ4: &str = "testdata/bags/generated/ros_comm/ref_lz4.bag";
const MCAP: &str = "testdata/samples/demo-zstd.mcap";

fn output_of(mut command: Command) -> Run {
    finish(command.output().unwrap())
}

/// A folder holding a copy of the `robolog` binary and nothing else.
fn robolog_alone() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join(Path::new(ROBOLOG).file_name().unwrap());
    std::fs::copy(ROBOLOG, &copy).unwrap();
    (dir, copy)
}

/// The same run through `robolog` and straight through `robolog-columnar`: same exit code,
/// same standard output and error, byte for byte.
#[track_caller]
fn assert_same<S: AsRef<OsStr>>(args: &[S]) -> Run {
    let through = output_of(command(args));
    let direct = output_of(command_of(Path::new(COLUMNAR), args));
    assert_eq!(through.code, direct.code, "{}", through.stderr);
    assert_eq!(through.stdout, direct.stdout);
    assert_eq!(through.stderr, direct.stderr);
    through
}

#[test]
fn robolog_sql_and_export_print_what_robolog_columnar_prints() {
    let run = assert_same(&[
        "sql",
        r#"SELECT count(*) AS n, max(header.seq) AS last FROM "/imu""#,
        BAG_LZ4,
    ]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout,
        "+----+------+\n| n  | last |\n+----+------+\n| 50 | 49   |\n+----+------+\n"
    );
    // Errors and their exit codes: a failing query (1), a usage error shown with the usage of
    // `robolog sql`, as before (2).
    let run = assert_same(&["sql", r#"SELECT nope FROM "/imu""#, BAG_LZ4]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.starts_with("error: sql: "), "{}", run.stderr);
    let run = assert_same(&["sql", "SELECT 1", BAG_LZ4, "--json", "--csv"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .starts_with("error: --json and --csv cannot be used together\n\nUsage: robolog sql "),
        "{}",
        run.stderr
    );
    // Two exports of the same topic, one run each way: the same report, the same file.
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (name, program) in [("through", ROBOLOG), ("direct", COLUMNAR)] {
        let out = dir.path().join(name);
        let args = [
            "export".as_ref(),
            MCAP.as_ref(),
            out.as_os_str(),
            "--topic".as_ref(),
            "/points".as_ref(),
        ];
        let run = output_of(command_of(Path::new(program), args)).expect(0);
        assert_eq!(
            run.stdout.lines().next().unwrap(),
            format!(
                "wrote 1 file to {} (Parquet, {}): 100 messages on 1 topic",
                out.display(),
                human_size(&out.join("points.parquet"))
            )
        );
        files.push(std::fs::read(out.join("points.parquet")).unwrap());
    }
    assert_eq!(files[0], files[1]);
}

/// The size as `robolog export` reports it (KiB with one decimal above 1 KiB).
fn human_size(path: &Path) -> String {
    let bytes = std::fs::metadata(path).unwrap().len();
    assert!((1024..1024 * 1024).contains(&bytes), "{bytes}");
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}

#[test]
fn robolog_finds_robolog_columnar_on_path_when_it_is_not_beside_it() {
    let (_dir, robolog) = robolog_alone();
    let mut command = command_of(
        &robolog,
        ["sql", r#"SELECT count(*) AS n FROM "/imu""#, BAG_LZ4],
    );
    command.env("PATH", Path::new(COLUMNAR).parent().unwrap());
    let run = output_of(command).expect(0);
    assert_eq!(run.stdout, "+----+\n| n  |\n+----+\n| 50 |\n+----+\n");
}

#[test]
fn robolog_without_robolog_columnar_says_where_it_looked_and_how_to_get_it() {
    let (dir, robolog) = robolog_alone();
    let empty = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for (args, usage) in [
        (
            vec![
                "export".as_ref(),
                MCAP.as_ref(),
                out.as_os_str(),
                "--raw".as_ref(),
            ],
            "robolog export [OPTIONS] <IN... OUT_DIR> <IN... OUT_DIR>...",
        ),
        (
            vec!["sql".as_ref(), "SELECT 1".as_ref(), MCAP.as_ref()],
            "robolog sql [OPTIONS] <QUERY> <INPUTS>...",
        ),
    ] {
        let name = args[0].to_str().unwrap();
        let mut command = command_of(&robolog, &args);
        command.env("PATH", empty.path());
        let run = output_of(command).expect(2);
        assert_eq!(run.stdout, "");
        assert_eq!(
            run.stderr,
            format!(
                "error: `robolog {name}` is run by the program robolog-columnar, which is neither \
                 beside robolog (in {}) nor on PATH: `cargo install robolog-cli` installs the two \
                 together\n\nUsage: {usage}\n\nFor more information, try '--help'.\n",
                dir.path().display()
            )
        );
    }
    assert!(!out.exists());
    // Every other command is robolog's own, and help needs no second program either.
    let mut command = command_of(&robolog, ["info", "--json", MCAP]);
    command.env("PATH", empty.path());
    assert_eq!(output_of(command).expect(0).json()["message_count"], 300);
    let mut command = command_of(&robolog, ["export", "--help"]);
    command.env("PATH", empty.path());
    let help = output_of(command).expect(0).stdout;
    assert_eq!(
        help,
        output_of(command_of(Path::new(COLUMNAR), ["export", "--help"]))
            .expect(0)
            .stdout
    );
}

/// Cargo's build of a crate leaves the crate's source paths in the binary (panic locations):
/// none of Arrow's, Parquet's or DataFusion's is in `robolog`, all are in `robolog-columnar`.
#[test]
fn robolog_links_no_arrow_parquet_or_datafusion() {
    let crates = ["/arrow-array-", "/parquet-", "/datafusion-"];
    let holds = |binary: &str, needle: &str| {
        let bytes = std::fs::read(binary).unwrap();
        bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
    };
    for needle in crates {
        assert!(!holds(ROBOLOG, needle), "robolog holds {needle}");
        assert!(holds(COLUMNAR, needle), "robolog-columnar lacks {needle}");
    }
}

/// On Unix `robolog` becomes `robolog-columnar` (same process): a signal reaches the command
/// itself, which ends the way it always did (128 + the signal).
#[cfg(target_os = "linux")]
#[test]
fn robolog_sql_is_replaced_by_robolog_columnar_and_a_signal_ends_it_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("input.mcap");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    // Opening the pipe waits for a writer, which never comes.
    let mut child = command(["sql".as_ref(), "SELECT 1".as_ref(), fifo.as_os_str()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let proc = PathBuf::from(format!("/proc/{}", child.id()));
    let started = std::time::Instant::now();
    // The same process runs robolog-columnar (names are cut to 15 bytes), and its thread that
    // waits for signals has started.
    loop {
        let comm = std::fs::read_to_string(proc.join("comm")).unwrap_or_default();
        let threads = std::fs::read_to_string(proc.join("status"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("Threads:").map(|n| n.trim().to_owned()));
        if comm == "robolog-columna\n" && threads.as_deref() == Some("2") {
            break;
        }
        assert!(started.elapsed().as_secs() < 30, "{comm:?} {threads:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .arg("-INT")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(kill.success());
    assert_eq!(child.wait().unwrap().code(), Some(130));
}
