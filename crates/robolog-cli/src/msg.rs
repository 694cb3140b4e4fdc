//! `robolog msg`: the ROS message definition parser on its own (robolog-msg): md5sums, ROS 2
//! type hashes, definition bundles, validation of package trees and bundle files.
//!
//! With `--ros2`, a file other than `.srv`/`.action` is read as a ROS 2 schema (`ros2msg`, or
//! `ros2idl` for `.idl`/`.ros2idl`), the built-in types (`builtin_interfaces/Time`, `Duration`,
//! `service_msgs/ServiceEventInfo`) are known, and `--distro` completes what the paths do not
//! define from the bundled standard interfaces. `hash` is ROS 2 only: ROS 1 has md5sums, and
//! `hash` without `--ros2` is a usage error that says so.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::error::ErrorKind;
use robolog::msg::{Dialect, Distro, InterfaceKind, Registry, TypeName};

use crate::cli::{MsgArgs, MsgCommand};
use crate::failure::{Failure, Outcome};
use crate::report::warn;

pub(crate) fn run(command: &MsgCommand, out: &mut dyn Write) -> Result<Outcome, Failure> {
    match command {
        MsgCommand::Md5(args) => md5(args, out),
        MsgCommand::Hash(args) => hash(args, out),
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
    /// Actions, from folders and `.action` files.
    actions: Vec<TypeName>,
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

/// `--distro`, parsed.
fn distro_arg(args: &MsgArgs) -> Result<Option<Distro>, Failure> {
    args.distro
        .as_deref()
        .map(|text| {
            text.parse::<Distro>()
                .map_err(|e| Failure::usage(ErrorKind::InvalidValue, e))
        })
        .transpose()
}

/// What `--type` names: a message, or with `pkg/srv/Type` / `pkg/action/Type` (or a `pkg/Type`
/// that only a service or action has) a service or action.
fn type_kind(args: &MsgArgs, loaded: &Loaded, name: &TypeName) -> InterfaceKind {
    let text = args.type_name.as_deref().unwrap_or("");
    if text.contains("/srv/") && loaded.registry.service(name).is_some() {
        return InterfaceKind::Service;
    }
    if text.contains("/action/") && loaded.registry.action(name).is_some() {
        return InterfaceKind::Action;
    }
    if !loaded.registry.contains(name) {
        if loaded.registry.service(name).is_some() {
            return InterfaceKind::Service;
        }
        if loaded.registry.action(name).is_some() {
            return InterfaceKind::Action;
        }
    }
    InterfaceKind::Message
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
    let extension = path.extension()?.to_str()?;
    let folder = path.parent()?;
    let folder_name = folder.file_name()?.to_str()?;
    let in_its_folder = match extension {
        "msg" | "srv" | "action" => folder_name == extension,
        "idl" => matches!(folder_name, "msg" | "srv" | "action"),
        _ => false,
    };
    if !in_its_folder {
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
        actions: Vec::new(),
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
    loaded.actions = loaded.registry.actions().map(|a| a.name.clone()).collect();
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
                loaded.actions.push(name);
            }
            extension if dialect == Dialect::Ros2 => {
                // A ROS 2 schema as MCAP and rosbag2 store it, or one .msg/.idl file.
                let schema_name = args.type_name.clone().unwrap_or_else(|| name.ros2_name());
                let schema = if matches!(extension, Some("idl" | "ros2idl")) {
                    Registry::from_ros2idl(&schema_name, &text)
                } else {
                    Registry::from_ros2msg(&schema_name, &text)
                }
                .map_err(in_file)?;
                loaded.warnings.extend(
                    schema
                        .warnings()
                        .iter()
                        .map(|w| format!("{}: {w}", path.display())),
                );
                for definition in schema.messages() {
                    loaded.registry.insert_message(definition.clone());
                }
                for service in schema.services() {
                    loaded.registry.insert_service(service.clone());
                }
                for action in schema.actions() {
                    loaded.registry.insert_action(action.clone());
                }
                loaded.file_types.push(name);
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
    if let Some(distro) = distro_arg(args)? {
        complete_from_distro(args, &mut loaded, distro)?;
    }
    if dialect == Dialect::Ros2 {
        loaded.registry.add_ros2_builtins();
    }
    Ok(loaded)
}

/// Fills in, from the distro's bundled interfaces, what the types asked about need and the
/// paths do not define; `--type` alone takes the type itself from there.
fn complete_from_distro(
    args: &MsgArgs,
    loaded: &mut Loaded,
    distro: Distro,
) -> Result<(), Failure> {
    let standard = Registry::standard(distro);
    if let Some(name) = type_arg(args)? {
        let text = args.type_name.as_deref().unwrap_or("");
        let wants = |kind: &str| text.contains(kind);
        if !loaded.registry.contains(&name) || wants("/srv/") || wants("/action/") {
            let service = standard.service(&name).filter(|_| !wants("/msg/"));
            let action = standard.action(&name).filter(|_| !wants("/msg/"));
            if let Some(service) = service {
                if loaded.registry.service(&name).is_none() {
                    loaded.registry.insert_service(service.clone());
                    loaded.services.push(name.clone());
                }
            } else if let Some(action) = action
                && loaded.registry.action(&name).is_none()
            {
                loaded.registry.insert_action(action.clone());
                loaded.actions.push(name.clone());
            }
        }
    }
    let mut roots: Vec<TypeName> = targets(args, loaded)?;
    for service in &loaded.services {
        if let Some(definition) = loaded.registry.service(service) {
            roots.push(definition.request.name.clone());
            roots.push(definition.response.name.clone());
            roots.push(definition.event_message().name);
        }
    }
    for action in &loaded.actions {
        if let Some(definition) = loaded.registry.action(action) {
            roots.extend(
                definition
                    .all_messages()
                    .into_iter()
                    .map(|m| m.name.clone()),
            );
        }
    }
    if loaded.any_folder {
        roots.extend(loaded.registry.messages().map(|m| m.name.clone()));
    }
    for root in roots {
        loaded.registry.fill_missing_from(standard, &root);
    }
    Ok(())
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

fn hash(args: &MsgArgs, out: &mut dyn Write) -> Result<Outcome, Failure> {
    if !args.ros2 {
        return Err(Failure::usage(
            ErrorKind::MissingRequiredArgument,
            "type hashes (RIHS01) are ROS 2's: pass --ros2 (ROS 1 types have md5sums: `robolog \
             msg md5`)",
        ));
    }
    let loaded = load(args)?;
    let mut lines = Vec::new();
    let mut failed = None;
    let mut record = |name: String, result: Result<String, robolog::msg::Error>| match result {
        Ok(hash) => lines.push(format!("{hash}  {name}")),
        Err(e) => {
            warn(&format!("{name}: {e}"));
            failed.get_or_insert_with(|| format!("{name}: {e}"));
        }
    };
    let registry = &loaded.registry;
    if let Some(name) = type_arg(args)? {
        match type_kind(args, &loaded, &name) {
            InterfaceKind::Service => record(
                name.ros2_name_in(service_namespace(&name)),
                registry.service_type_hash(&name),
            ),
            InterfaceKind::Action => record(
                name.ros2_name_in(InterfaceKind::Action),
                registry.action_type_hash(&name),
            ),
            _ => record(name.ros2_name(), registry.type_hash(&name)),
        }
    } else {
        for name in targets(args, &loaded)? {
            record(name.ros2_name(), registry.type_hash(&name));
        }
        for name in &loaded.services {
            record(
                name.ros2_name_in(service_namespace(name)),
                registry.service_type_hash(name),
            );
        }
        for name in &loaded.actions {
            record(
                name.ros2_name_in(InterfaceKind::Action),
                registry.action_type_hash(name),
            );
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

/// A service lives in `srv`, except the ones rosidl derives from an action (`Foo_SendGoal`,
/// `Foo_GetResult`), which live in `action`.
fn service_namespace(name: &TypeName) -> InterfaceKind {
    match name.ros2_interface_kind() {
        InterfaceKind::Action => InterfaceKind::Action,
        _ => InterfaceKind::Service,
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
            Dialect::Ros2 => loaded
                .registry
                .dependencies(name)
                .and_then(|_| loaded.registry.type_hash(name))
                .map(drop),
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
