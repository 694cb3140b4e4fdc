//! Where a bag's storage files are: metadata.yaml's path rules, and the directory scan that
//! stands in for a missing or stale metadata.yaml (as `ros2 bag reindex` lists files).

use std::path::{Path, PathBuf};

/// The name of a bag directory's metadata file.
pub const METADATA_FILE: &str = "metadata.yaml";

/// The places an entry of `relative_file_paths` may be, in the order they are tried: the bag
/// directory + entry, the bag directory + the entry's file name (rosbags), the parent of the
/// bag directory + entry (rosbag2 for metadata v2/v3, whose paths start with the directory
/// name), and an absolute entry as is.
pub(crate) fn candidates(bag: &Path, entry: &str) -> Vec<PathBuf> {
    let entry_path = Path::new(entry);
    let mut out = vec![bag.join(entry_path)];
    if let Some(name) = entry_path.file_name() {
        out.push(bag.join(name));
    }
    if let Some(parent) = bag.parent() {
        out.push(parent.join(entry_path));
    }
    if entry_path.is_absolute() {
        out.push(entry_path.to_path_buf());
    }
    out.dedup();
    out
}

/// The first candidate that is a file.
pub(crate) fn resolve(bag: &Path, entry: &str) -> Result<PathBuf, Vec<PathBuf>> {
    let tried = candidates(bag, entry);
    tried.iter().find(|p| p.is_file()).cloned().ok_or(tried)
}

/// The storage files of a directory without (usable) metadata: names `<anything>_<n>.<ext>`
/// with `ext` `db3` or `mcap` (optionally `.zstd`), sorted by `n` numerically (`x_10` after
/// `x_9`); failing that, any single-extension `.db3`/`.mcap` files (rosbags names its one file
/// `<dir>.db3`), by name.
pub(crate) fn scan_directory(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut numbered: Vec<(u64, String, PathBuf)> = Vec::new();
    let mut others: Vec<PathBuf> = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if !path.is_file() {
            continue;
        }
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let base = name.strip_suffix(".zstd").unwrap_or(name);
        let Some(stem) = base
            .strip_suffix(".db3")
            .or_else(|| base.strip_suffix(".mcap"))
        else {
            continue;
        };
        match stem.rsplit_once('_').and_then(|(_, n)| {
            (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                .then(|| n.parse::<u64>().ok())
                .flatten()
        }) {
            Some(n) => numbered.push((n, name.to_owned(), path)),
            None => others.push(path),
        }
    }
    if !numbered.is_empty() {
        numbered.sort();
        return Ok(numbered.into_iter().map(|(_, _, p)| p).collect());
    }
    others.sort();
    Ok(others)
}

/// The storage file name rosbag2 gives the `index`th file of bag directory `dir`:
/// `<dir name>_<index>.<ext>`.
pub(crate) fn storage_file_name(dir: &Path, index: usize, extension: &str) -> String {
    let base = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "rosbag2".to_owned());
    format!("{base}_{index}.{extension}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn numbered_files_sort_numerically_and_others_are_a_fallback() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b_10.db3", "b_9.db3", "b_0.db3.zstd", "notes.txt", "b.db3"] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        let names: Vec<String> = scan_directory(dir.path())
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["b_0.db3.zstd", "b_9.db3", "b_10.db3"]);
        for name in ["b_10.db3", "b_9.db3", "b_0.db3.zstd"] {
            std::fs::remove_file(dir.path().join(name)).unwrap();
        }
        assert_eq!(
            scan_directory(dir.path()).unwrap(),
            [dir.path().join("b.db3")]
        );
    }

    #[test]
    fn path_rules_in_order() {
        let c = candidates(Path::new("/data/my_bag"), "my_bag/my_bag_0.db3");
        assert_eq!(
            c,
            [
                PathBuf::from("/data/my_bag/my_bag/my_bag_0.db3"),
                PathBuf::from("/data/my_bag/my_bag_0.db3"),
            ]
        );
        let c = candidates(Path::new("/data/my_bag"), "/abs/x_0.mcap");
        assert_eq!(c.last().unwrap(), Path::new("/abs/x_0.mcap"));
    }
}
