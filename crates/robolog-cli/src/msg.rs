//! `robolog msg`: the ROS message definition parser on its own (robolog-msg): md5sums,
//! definition bundles, validation of package trees and bundle files.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::error::ErrorKind;
use robolog::msg::{Dialect, Registry, TypeName};

use crate::cli::{MsgArgs, MsgCommand};
use crate::failure::{Failure, Outcome};
use crate::selection::warn;

pub(crate) fn run(command: &MsgCommand, out: &mut dyn Write) -> Result<Outcome, Failure> {
    match command {
        MsgCommand::Md5(args) => md5(args, out),
        MsgCommand::Show(args) => show(args, out),
        MsgCommand::Check(args) => check(args, out),
    }
}

/// Everything the paths define.
struct Loaded {
    registry: Registry,
    /// The type of each file given, in order.
    file_types: Vec<TypeName>,
    /// Services, from folders and `.srv` files.
    services: Vec<TypeName>,
    /// What parsing accepted with a note.
    warnings: Vec<String>,
    any_folder: bool,
}

fn dialect(args: &MsgArgs) -> Dialect {
    if args.ros2 {
        Dialect::Ros2
    } else {
        Dialect::Ros1
    }
}

fn type_arg(args: &MsgArgs) -> Result<Option<TypeName>, Failure> {
    args.type_name
        .as_deref()
        .map(|text| {
            TypeName::parse(text).map_err(|e| Failure::usage(ErrorKind::ValueValidation, e))
        })
        .transpose()
}

/// `<pkg>/msg/<Type>.msg` (or `srv/<Type>.srv`, `action/<Type>.action`) names its type.
fn type_from_path(path: &Path) -> Option<TypeName> {
    let stem = path.file_stem()?.to_str()?;
    let kind = path.extension()?.to_str()?;
    let folder = path.parent()?;
    if !matches!(kind, "msg" | "srv" | "action") || folder.file_name()?.to_str()? != kind {
        return None;
    }
    let package = folder.parent()?.file_name()?.to_str()?;
    TypeName::new(package, stem).ok()
}

fn load(args: &MsgArgs) -> Result<Loaded, Failure> {
    let dialect = dialect(args);
    let given = type_arg(args)?;
    let files: Vec<&PathBuf> = args.paths.iter().filter(|p| !p.is_dir()).collect();
    if files.len() > 1 && given.is_some() {
        return Err(Failure::usage(
            ErrorKind::ArgumentConflict,
            "--type names the type of one file; give the files one at a time",
        ));
    }
    let mut loaded = Loaded {
        registry: Registry::new(),
        file_types: Vec::new(),
        services: Vec::new(),
        warnings: Vec::new(),
        any_folder: false,
    };
    for path in args.paths.iter().filter(|p| p.is_dir()) {
        loaded
            .registry
            .add_package_tree(path, dialect)
            .map_err(Failure::msg)?;
        loaded.any_folder = true;
    }
    loaded.services = loaded.registry.services().map(|s| s.name.clone()).collect();
    loaded
        .warnings
        .extend(loaded.registry.warnings().iter().map(ToString::to_string));
    for path in files {
        let name = match given.clone().or_else(|| type_from_path(path)) {
            Some(name) => name,
            None => {
                return Err(Failure::usage(
                    ErrorKind::MissingRequiredArgument,
                    format!(
                        "cannot tell the type defined in {}: pass --type pkg/Type",
                        path.display()
                    ),
                ));
            }
        };
        let text = std::fs::read_to_string(path).map_err(|e| Failure::io(e, path))?;
        let in_file = |e| Failure::about(e, path, None);
        match path.extension().and_then(|e| e.to_str()) {
            Some("srv") => {
                loaded
                    .registry
                    .add_service_text(&name, &text, dialect)
                    .map_err(in_file)?;
                loaded.services.push(name);
            }
            Some("action") => {
                loaded
                    .registry
                    .add_action_text(&name, &text, dialect)
                    .map_err(in_file)?;
            }
            _ => {
                // A .msg file is a bundle without sections. Its own sections win over the
                // folders' definitions, the folders fill in the rest.
                let bundle = Registry::from_bundle(&name, &text, dialect).map_err(in_file)?;
                loaded.warnings.extend(
                    bundle
                        .warnings()
                        .iter()
                        .map(|w| format!("{}: {w}", path.display())),
                );
                for definition in bundle.messages() {
                    loaded.registry.insert_message(definition.clone());
                }
                loaded.file_types.push(name);
            }
        }
    }
    Ok(loaded)
}

/// The message types a command is about: `--type`, else the files' types, else everything in
/// the folders.
fn targets(args: &MsgArgs, loaded: &Loaded) -> Result<Vec<TypeName>, Failure> {
    if let Some(name) = type_arg(args)? {
        return Ok(vec![name]);
    }
    let mut names: Vec<TypeName> = loaded.file_types.clone();
    if loaded.any_folder {
        names.extend(loaded.registry.messages().map(|m| m.name.clone()));
    }
    let mut seen = BTreeSet::new();
    names.retain(|n| seen.insert(n.clone()));
    Ok(names)
}

fn md5(args: &MsgArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let loaded = load(args)?;
    let mut failed = None;
    let mut lines = Vec::new();
    for name in targets(args, &loaded)? {
        let sum = if loaded.services.contains(&name) {
            loaded.registry.service_md5(&name)
        } else {
            loaded.registry.md5(&name)
        };
        match sum {
            Ok(sum) => lines.push(format!("{sum}  {name}")),
            Err(e) => {
                warn(&format!("{name}: {e}"));
                failed.get_or_insert_with(|| format!("{name}: {e}"));
            }
        }
    }
    if args.type_name.is_none() {
        for name in &loaded.services {
            match loaded.registry.service_md5(name) {
                Ok(sum) => lines.push(format!("{sum}  {name}")),
                Err(e) => {
                    failed.get_or_insert_with(|| format!("{name}: {e}"));
                }
            }
        }
    }
    for line in lines {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    match failed {
        Some(what) => Err(Failure::msg(what)),
        None => Ok(Outcome::Ok),
    }
}

fn show(args: &MsgArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let loaded = load(args)?;
    let name = match (type_arg(args)?, &loaded.file_types[..]) {
        (Some(name), _) => name,
        (None, [only]) if !loaded.any_folder => only.clone(),
        _ => {
            return Err(Failure::usage(
                ErrorKind::MissingRequiredArgument,
                "which type? pass --type pkg/Type",
            ));
        }
    };
    let text = loaded.registry.bundle_text(&name).map_err(Failure::msg)?;
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        writeln!(out)?;
    }
    out.flush()?;
    Ok(Outcome::Ok)
}

fn check(args: &MsgArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let loaded = load(args)?;
    let names = targets(args, &loaded)?;
    let mut errors = 0usize;
    for warning in &loaded.warnings {
        writeln!(out, "warning: {warning}")?;
    }
    for name in &names {
        let result = match dialect(args) {
            Dialect::Ros1 => loaded.registry.md5(name).map(drop),
            Dialect::Ros2 => loaded.registry.dependencies(name).map(drop),
        };
        if let Err(e) = result {
            errors += 1;
            writeln!(out, "error: {name}: {e}")?;
        }
    }
    writeln!(
        out,
        "{} message types checked, {} services, {} errors, {} warnings: {}",
        names.len(),
        loaded.services.len(),
        errors,
        loaded.warnings.len(),
        if errors == 0 { "ok" } else { "PROBLEMS FOUND" }
    )?;
    out.flush()?;
    Ok(if errors == 0 {
        Outcome::Ok
    } else {
        Outcome::Problems
    })
}
