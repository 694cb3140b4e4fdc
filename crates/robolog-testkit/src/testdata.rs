//! Paths into the workspace's `testdata/` folder.

use std::path::{Path, PathBuf};

/// The workspace root (two levels above this crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `testdata/<relative>` in the workspace.
pub fn path(relative: impl AsRef<Path>) -> PathBuf {
    workspace_root().join("testdata").join(relative)
}

/// Reads `testdata/<relative>`, panicking with the path when it is missing.
pub fn read(relative: impl AsRef<Path>) -> Vec<u8> {
    let path = path(relative);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read test file {}: {e}", path.display()))
}

/// Every file below `testdata/<relative>` whose name ends with `extension`, sorted.
pub fn files_with_extension(relative: impl AsRef<Path>, extension: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, extension: &str, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, extension, out);
            } else if path.to_string_lossy().ends_with(extension) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&path(relative), extension, &mut out);
    out.sort();
    out
}
