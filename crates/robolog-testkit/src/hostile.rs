//! The hostile-input corpus under `testdata/bad/<format>/`: hand-made files, each written by a
//! generator in the format crate's `tests/it/bad_files/`, each with an exact expected error.
//!
//! Each format crate's hostile test does two things with these helpers:
//! - [`check_generated`]: the committed files are exactly what the generator writes today, and
//!   every committed file has a generator entry (`ROBOLOG_WRITE_BAD=1` rewrites them);
//! - [`run_corpus`]: every committed file goes through the crate's readers, its result is
//!   compared with the expectation, and the process's allocation peak is checked after each
//!   file against the bound (see [`crate::alloc`]).

use std::fs;
use std::path::PathBuf;

use crate::alloc::Peak;
use crate::testdata;

/// The allocation bound every hostile-input test checks: 64 MiB.
///
/// Every file is under 1 MiB, and readers are opened with a chunk (record, block) limit of
/// [`HOSTILE_CHUNK_LIMIT`] where they take one. A reader then holds at most the input, the
/// chunk it is decoding and the next one, and bookkeeping proportional to the input:
/// 2 × 16 MiB + 32 MiB of room. Anything sized from a lying length field (gigabytes) is far
/// over it.
pub const HOSTILE_PEAK_BOUND: usize = 64 << 20;

/// The chunk / record / block size limit the hostile tests open readers with: 16 MiB.
pub const HOSTILE_CHUNK_LIMIT: usize = 16 << 20;

/// One generated file: its name under `testdata/bad/<format>/` and its bytes.
#[derive(Debug, Clone)]
pub struct HostileFile {
    /// File name (no directories).
    pub name: String,
    /// Content.
    pub bytes: Vec<u8>,
}

impl HostileFile {
    /// A file named `name` holding `bytes`.
    pub fn new(name: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        Self {
            name: name.into(),
            bytes: bytes.into(),
        }
    }
}

/// `testdata/bad/<format>/`.
pub fn dir(format: &str) -> PathBuf {
    testdata::path("bad").join(format)
}

/// The names of the committed files of `format` (everything but `README.md`), sorted.
pub fn committed(format: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir(format))
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != "README.md")
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Checks that the committed files of `format` are exactly `generated` (same names, same
/// bytes). With `ROBOLOG_WRITE_BAD=1` it writes them instead (and removes none: delete stale
/// files by hand).
pub fn check_generated(format: &str, generated: &[HostileFile]) {
    let dir = dir(format);
    if std::env::var("ROBOLOG_WRITE_BAD").as_deref() == Ok("1") {
        fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        for file in generated {
            let path = dir.join(&file.name);
            fs::write(&path, &file.bytes)
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        }
    }
    let mut problems = Vec::new();
    let mut names: Vec<&str> = generated.iter().map(|f| f.name.as_str()).collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        problems.push("the generator makes two files with the same name".to_owned());
    }
    for file in generated {
        let path = dir.join(&file.name);
        match fs::read(&path) {
            Ok(bytes) if bytes == file.bytes => {}
            Ok(_) => problems.push(format!(
                "{} differs from what the generator writes",
                file.name
            )),
            Err(_) => problems.push(format!("{} is missing", file.name)),
        }
    }
    for name in committed(format) {
        if !names.contains(&name.as_str()) {
            problems.push(format!("{name} is committed but no generator writes it"));
        }
    }
    assert!(
        problems.is_empty(),
        "testdata/bad/{format} is out of date (run the test with ROBOLOG_WRITE_BAD=1 to rewrite it, \
         then check the expectations):\n  {}",
        problems.join("\n  ")
    );
}

/// Runs `check(name, bytes)` on every committed file of `format`, then checks the allocation
/// peak against `peak`'s bound. All expectation failures are collected and reported together;
/// the first file that takes the peak over the bound stops the run (the peak never comes down,
/// so the files after it could not be judged). Returns the number of files checked.
pub fn run_corpus(
    format: &str,
    peak: Peak,
    mut check: impl FnMut(&str, &[u8]) -> Result<(), String>,
) -> usize {
    let names = committed(format);
    assert!(!names.is_empty(), "testdata/bad/{format} has no files");
    let mut failures = Vec::new();
    for name in &names {
        let bytes = fs::read(dir(format).join(name))
            .unwrap_or_else(|e| panic!("cannot read testdata/bad/{format}/{name}: {e}"));
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(name, &bytes)));
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(message)) => failures.push(format!("{name}: {message}")),
            Err(_) => failures.push(format!("{name}: the reader panicked")),
        }
        drop(bytes);
        if let Err(message) = peak.check(name) {
            failures.push(message);
            break;
        }
    }
    eprintln!(
        "testdata/bad/{format}: {} files, process allocation peak {} bytes (bound {})",
        names.len(),
        peak.peak(),
        peak.bound()
    );
    assert!(
        failures.is_empty(),
        "{} of {} hostile {format} files failed:\n  {}",
        failures.len(),
        names.len(),
        failures.join("\n  ")
    );
    names.len()
}
