//! Running the built `robolog` binary from the workspace root, as a user would.

#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// What one run of `robolog` gave.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// stdout parsed as one JSON document.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", self.stdout))
    }

    /// stdout parsed as JSON Lines.
    pub(crate) fn json_lines(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
            })
            .collect()
    }

    /// Asserts the exit code, showing both streams when it differs.
    #[track_caller]
    pub(crate) fn expect(self, code: i32) -> Self {
        assert_eq!(
            self.code, code,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// What a finished process gave.
pub(crate) fn finish(output: Output) -> Run {
    Run {
        code: output.status.code().expect("killed by a signal"),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

/// `robolog ARGS…` run in the workspace root, so that `testdata/…` paths work and show in
/// messages exactly as given.
pub(crate) fn robolog<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> Run {
    finish(command(args).output().expect("run robolog"))
}

/// `robolog ARGS… < stdin_file`.
pub(crate) fn robolog_stdin<S: AsRef<std::ffi::OsStr>>(
    args: impl IntoIterator<Item = S>,
    stdin_file: &Path,
) -> Run {
    let input = std::fs::File::open(stdin_file).expect("open stdin file");
    finish(command(args).stdin(input).output().expect("run robolog"))
}

/// `robolog ARGS…` reading `input` from a pipe (not a file: a redirected file is mapped).
pub(crate) fn robolog_piped<S: AsRef<std::ffi::OsStr>>(
    args: impl IntoIterator<Item = S>,
    input: &[u8],
) -> Run {
    finish(output_piped(args, input))
}

/// What `robolog ARGS…` gave with `input` written into its standard input through a pipe.
fn output_piped<S: AsRef<std::ffi::OsStr>>(
    args: impl IntoIterator<Item = S>,
    input: &[u8],
) -> Output {
    let mut child = command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run robolog");
    let mut stdin = child.stdin.take().expect("a pipe to robolog");
    let input = input.to_vec();
    // Written from another thread, so that robolog's output cannot fill its pipe meanwhile.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().expect("run robolog");
    writer.join().expect("the writing thread");
    output
}

/// `robolog ARGS…` run by python3, which reports the peak resident memory of the process (the
/// `ru_maxrss` of its only child), in bytes, besides the exit code. `None` when python3 is
/// missing and `ROBOLOG_INTEROP` does not require the tools the tests use.
// A skipped measure says why on stderr, as skipped tests do.
#[allow(clippy::print_stderr)]
pub(crate) fn robolog_peak_memory<S: AsRef<std::ffi::OsStr>>(
    args: impl IntoIterator<Item = S>,
) -> Option<(i32, u64)> {
    const SCRIPT: &str = "import resource, subprocess, sys\n\
        code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n\
        print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n";
    let mut python = Command::new("python3");
    python
        .arg("-c")
        .arg(SCRIPT)
        .arg(env!("CARGO_BIN_EXE_robolog"))
        .args(args)
        .current_dir(robolog_testkit::testdata::workspace_root());
    let output = match python.output() {
        Ok(output) => output,
        Err(e) if std::env::var("ROBOLOG_INTEROP").as_deref() != Ok("required") => {
            eprintln!("skipping the memory measure: cannot run python3: {e}");
            return None;
        }
        Err(e) => panic!("ROBOLOG_INTEROP=required but python3 does not run: {e}"),
    };
    let text = String::from_utf8(output.stdout).expect("python3's output is UTF-8");
    let mut fields = text.split_whitespace().map(|f| f.parse::<i64>());
    match (fields.next(), fields.next()) {
        (Some(Ok(code)), Some(Ok(peak))) => Some((code as i32, peak as u64)),
        _ => panic!(
            "python3 said {text:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

pub(crate) fn command<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> Command {
    command_of(Path::new(env!("CARGO_BIN_EXE_robolog")), args)
}

/// `program ARGS…` in the workspace root, as [`command`] runs `robolog`.
pub(crate) fn command_of<S: AsRef<std::ffi::OsStr>>(
    program: &Path,
    args: impl IntoIterator<Item = S>,
) -> Command {
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(robolog_testkit::testdata::workspace_root());
    command
}

/// The error line's shape: `error: <what> (<file> at byte <offset>)`, alone on stderr.
#[track_caller]
pub(crate) fn assert_error_line(stderr: &str, file: &str, offset: Option<u64>) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert_eq!(lines.len(), 1, "one error line expected:\n{stderr}");
    let line = lines[0];
    let tail = match offset {
        Some(offset) => format!(" ({file} at byte {offset})"),
        None => format!(" ({file})"),
    };
    assert!(line.ends_with(&tail), "{line:?} should end with {tail:?}");
    line.to_owned()
}

/// `robolog ARGS` with `input` written into its standard input through a pipe.
pub(crate) fn piped(args: &[&str], input: &[u8]) -> (i32, Vec<u8>, String) {
    let output = output_piped(args, input);
    (
        output.status.code().expect("run robolog"),
        output.stdout,
        String::from_utf8(output.stderr).expect("run robolog"),
    )
}
