//! Loading the `.msg`, `.srv` and `.action` files of a directory tree of ROS packages.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Warning};
use crate::model::ParseDialect;
use crate::name::TypeName;
use crate::parse::{parse_action, parse_message, parse_service};
use crate::registry::Registry;

/// How deep below the root directories are searched (a workspace is rarely deeper than 10).
const MAX_DEPTH: usize = 64;

impl Registry {
    /// Loads every `<pkg>/msg/*.msg`, `<pkg>/srv/*.srv` and `<pkg>/action/*.action` below
    /// `root` (for example a catkin/colcon `src` folder, `/opt/ros/noetic/share`, or one
    /// package's folder). The package is the name of the folder that holds `msg/`, `srv/` or
    /// `action/`. Hidden folders are skipped; symbolic links are followed once.
    ///
    /// With [`ParseDialect::Auto`], each file's dialect is detected on its own. The first
    /// definition of a type wins (a later one is reported in [`Registry::warnings`]). The first
    /// file that cannot be read or parsed fails the load, with its path.
    pub fn load_package_tree(
        root: impl AsRef<Path>,
        dialect: impl Into<ParseDialect>,
    ) -> Result<Registry, Error> {
        let mut registry = Registry::new();
        registry.add_package_tree(root, dialect)?;
        Ok(registry)
    }

    /// [`Registry::load_package_tree`] into an existing registry; returns how many files were
    /// loaded.
    pub fn add_package_tree(
        &mut self,
        root: impl AsRef<Path>,
        dialect: impl Into<ParseDialect>,
    ) -> Result<usize, Error> {
        let dialect = dialect.into();
        let root = root.as_ref();
        let canonical_root = fs::canonicalize(root).map_err(|source| Error::Io {
            path: root.to_owned(),
            source,
        })?;
        let mut visited = HashSet::new();
        let mut pending = vec![(canonical_root, 0usize)];
        let mut loaded = 0;
        while let Some((directory, depth)) = pending.pop() {
            if depth > MAX_DEPTH || !visited.insert(directory.clone()) {
                continue;
            }
            let mut subdirectories = Vec::new();
            for entry in sorted_entries(&directory)? {
                let Some(file_name) = entry.file_name().and_then(|n| n.to_str()) else {
                    continue;
                };
                if file_name.starts_with('.') || !entry.is_dir() {
                    continue;
                }
                let kind = match file_name {
                    "msg" => Some(InterfaceKind::Message),
                    "srv" => Some(InterfaceKind::Service),
                    "action" => Some(InterfaceKind::Action),
                    _ => None,
                };
                match kind {
                    Some(kind) => {
                        let package = directory.file_name().and_then(|n| n.to_str()).unwrap_or("");
                        loaded += self.load_interface_folder(&entry, package, kind, dialect)?;
                    }
                    None => subdirectories.push(entry),
                }
            }
            // Reversed so that the stack visits folders in name order.
            for subdirectory in subdirectories.into_iter().rev() {
                let canonical = fs::canonicalize(&subdirectory).map_err(|source| Error::Io {
                    path: subdirectory.clone(),
                    source,
                })?;
                pending.push((canonical, depth + 1));
            }
        }
        Ok(loaded)
    }

    fn load_interface_folder(
        &mut self,
        folder: &Path,
        package: &str,
        kind: InterfaceKind,
        dialect: ParseDialect,
    ) -> Result<usize, Error> {
        let mut loaded = 0;
        for path in sorted_entries(folder)? {
            if path.extension().and_then(|e| e.to_str()) != Some(kind.extension())
                || !path.is_file()
            {
                continue;
            }
            let in_file = |source: Error| Error::InFile {
                path: path.clone(),
                source: Box::new(source),
            };
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            let name = TypeName::new(package, stem).map_err(in_file)?;
            let text = fs::read_to_string(&path).map_err(|source| Error::Io {
                path: path.clone(),
                source,
            })?;
            let duplicate = match kind {
                InterfaceKind::Message => self.contains(&name),
                InterfaceKind::Service | InterfaceKind::Action => {
                    self.service(&name).is_some() || self.has_action_types(&name)
                }
            };
            if duplicate {
                self.push_warning(Warning::DuplicateType { name });
                continue;
            }
            match kind {
                InterfaceKind::Message => {
                    self.insert_message(parse_message(&name, &text, dialect).map_err(in_file)?);
                }
                InterfaceKind::Service => {
                    self.insert_service(parse_service(&name, &text, dialect).map_err(in_file)?);
                }
                InterfaceKind::Action => {
                    self.insert_action(parse_action(&name, &text, dialect).map_err(in_file)?);
                }
            }
            loaded += 1;
        }
        Ok(loaded)
    }

    /// Whether the goal type of an action called `name` is already known (in either dialect's
    /// naming).
    fn has_action_types(&self, name: &TypeName) -> bool {
        let goal = |suffix: &str| name.sibling(format!("{}{suffix}", name.name()));
        self.contains(&goal("Goal")) || self.contains(&goal("_Goal"))
    }
}

#[derive(Debug, Clone, Copy)]
enum InterfaceKind {
    Message,
    Service,
    Action,
}

impl InterfaceKind {
    fn extension(self) -> &'static str {
        match self {
            InterfaceKind::Message => "msg",
            InterfaceKind::Service => "srv",
            InterfaceKind::Action => "action",
        }
    }
}

/// The entries of a directory, sorted by path so that loading is deterministic.
fn sorted_entries(directory: &Path) -> Result<Vec<PathBuf>, Error> {
    let io_error = |source| Error::Io {
        path: directory.to_owned(),
        source,
    };
    let mut entries = Vec::new();
    for entry in fs::read_dir(directory).map_err(io_error)? {
        entries.push(entry.map_err(io_error)?.path());
    }
    entries.sort();
    Ok(entries)
}
