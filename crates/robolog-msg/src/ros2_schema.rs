//! ROS 2 schemas as MCAP and rosbag2 store them: a schema name (`pkg/msg/Type`) and a text in
//! the `ros2msg` or `ros2idl` encoding, read into a [`Registry`].
//!
//! `ros2msg` (rosbag2's `local_message_definition_source.cpp`, MCAP's registry): the root
//! type's text, then sections, each a line of `=` and a header `MSG: name`, `SRV: name` or
//! `IDL: name`. Producers differ in order, in `pkg/Type` versus `pkg/msg/Type` names, in
//! comments and blank lines, and in whether the root has a header of its own, so reading is
//! lenient and never depends on the order. A service event channel (`pkg/srv/Foo_Event`)
//! stores the `.srv` text of `pkg/srv/Foo`, from which the event type is built as rosidl
//! builds it.

use std::collections::HashSet;

use crate::error::{Error, Warning};
use crate::idl;
use crate::model::{Dialect, ParseDialect};
use crate::name::{InterfaceKind, TypeName};
use crate::parse::{parse_action, parse_message_at, parse_service};
use crate::registry::Registry;
use crate::sections::{self, RawSection};

/// The section headers of a `ros2msg` schema, in the order of [`SectionKind`].
const ROS2MSG_HEADERS: [&str; 3] = ["MSG:", "SRV:", "IDL:"];

/// What a schema section holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SectionKind {
    /// A `.msg` text.
    Message,
    /// A `.srv` text.
    Service,
    /// An IDL file.
    Idl,
    /// An `.action` text (only in the bundled standard interfaces).
    Action,
}

impl SectionKind {
    fn from_index(index: usize) -> SectionKind {
        match index {
            0 => SectionKind::Message,
            1 => SectionKind::Service,
            2 => SectionKind::Idl,
            _ => SectionKind::Action,
        }
    }
}

/// One section with its name understood.
#[derive(Debug)]
pub(crate) struct Section {
    pub(crate) kind: SectionKind,
    pub(crate) name: TypeName,
    pub(crate) text: String,
    pub(crate) first_line: usize,
}

impl Registry {
    /// Reads a `ros2msg` schema: `schema_name` as MCAP stores it (`pkg/msg/Type`,
    /// `pkg/srv/Type_Event`, …) and the schema text.
    ///
    /// - Sections start at a line of at least 3 `=` followed by `MSG:`, `SRV:` or `IDL:` and a
    ///   name (any whitespace after the colon); `pkg/Type` and `pkg/msg/Type` name the same
    ///   type; package-relative names resolve against their own section's package; the first
    ///   of duplicate sections is kept; CRLF line ends are read as LF.
    /// - The root is the text before the first section; when that is empty (the text starts
    ///   with a separator), the section named like the schema, else the first section.
    /// - A schema named `pkg/srv/Foo_Event` holds the `.srv` text of `pkg/srv/Foo` (with or
    ///   without an `SRV:` header): the service, its request and response, and the event
    ///   message rosidl derives ([`crate::ServiceDefinition::event_message`]) are added.
    ///   A `pkg/action/…` schema whose text is an `.action` adds the action with every type
    ///   rosidl derives from it.
    /// - `IDL:` sections are read with the IDL parser; an empty `MSG:` section followed by an
    ///   `IDL:` section of the same type (what rosbag2 writes when only the `.idl` exists) is
    ///   replaced by it.
    /// - `builtin_interfaces/msg/Time`, `Duration` and `service_msgs/msg/ServiceEventInfo` are
    ///   added when the schema has no section for them ([`Registry::add_ros2_builtins`]).
    ///
    /// Fails when the schema name is not a type name or the root cannot be parsed; a broken
    /// dependency section is reported in [`Registry::warnings`] and by whatever needs it.
    ///
    /// ```
    /// use robolog_msg::{Registry, TypeName};
    ///
    /// let text = "int64 a\nint64 b\n---\nint64 sum\n";
    /// let registry = Registry::from_ros2msg("example_interfaces/srv/AddTwoInts_Event", text)?;
    /// let event: TypeName = "example_interfaces/srv/AddTwoInts_Event".parse()?;
    /// let fields: Vec<String> = registry
    ///     .require(&event)?
    ///     .fields
    ///     .iter()
    ///     .map(|f| format!("{} {}", f.ty, f.name))
    ///     .collect();
    /// assert_eq!(
    ///     fields,
    ///     [
    ///         "service_msgs/ServiceEventInfo info",
    ///         "example_interfaces/AddTwoInts_Request[<=1] request",
    ///         "example_interfaces/AddTwoInts_Response[<=1] response",
    ///     ]
    /// );
    /// assert_eq!(
    ///     registry.type_hash(&event)?,
    ///     "RIHS01_32c1d140259c71e5c355115942bcb31df98b4330e4d906b1b75ccb1c9b3ce6c8"
    /// );
    /// # Ok::<(), robolog_msg::Error>(())
    /// ```
    pub fn from_ros2msg(schema_name: &str, text: &str) -> Result<Registry, Error> {
        let root = TypeName::parse(schema_name)?;
        let split = sections::split(text, &ROS2MSG_HEADERS);
        let mut registry = Registry::new();
        if split.escaped_newlines {
            registry.push_warning(Warning::EscapedNewlines);
        }
        let mut sections = named_sections(&mut registry, split.sections);
        let root_section = if split.top.trim().is_empty() && !sections.is_empty() {
            let index = root_section_index(&sections, &root);
            let mut section = sections.remove(index);
            section.name = root.clone();
            section
        } else {
            Section {
                kind: SectionKind::Message,
                name: root.clone(),
                text: split.top,
                first_line: 1,
            }
        };
        registry.add_root(&root, root_section)?;
        registry.add_sections(sections, &[&root])?;
        registry.add_ros2_builtins();
        Ok(registry)
    }

    /// Reads a schema of the given MCAP schema encoding: `ros2msg`
    /// ([`Registry::from_ros2msg`]). Other encodings
    /// (`""` and `unknown` among them: rosbag2's marks for a missing definition) are
    /// [`Error::UnsupportedSchemaEncoding`]; resolve those from the bundled standard
    /// interfaces instead.
    pub fn from_ros2_schema(
        schema_name: &str,
        encoding: &str,
        text: &str,
    ) -> Result<Registry, Error> {
        match encoding {
            "ros2msg" => Registry::from_ros2msg(schema_name, text),
            other => Err(Error::UnsupportedSchemaEncoding {
                encoding: other.to_owned(),
            }),
        }
    }

    /// Adds the root definition: a message, or for service events and actions the whole
    /// interface their schema text holds.
    fn add_root(&mut self, root: &TypeName, section: Section) -> Result<(), Error> {
        let separators = dash_lines(&section.text);
        match (root.ros2_interface_kind(), section.kind) {
            (_, SectionKind::Idl) => {
                self.add_idl_section(&section, true)?;
            }
            (InterfaceKind::Service, SectionKind::Message | SectionKind::Service)
                if separators == 1 =>
            {
                // `pkg/srv/Foo_Event` (or any type of the service) stores the `.srv` of Foo.
                let service = service_of(root);
                self.add_service_section(&service, &section)?;
            }
            (_, SectionKind::Service) => {
                self.add_service_section(&section.name, &section)?;
            }
            (InterfaceKind::Action, _) if separators == 2 => {
                let action = action_of(root);
                self.add_action_section(&action, &section)?;
            }
            _ => {
                let definition =
                    parse_message_at(root, &section.text, Dialect::Ros2, section.first_line)?;
                self.insert_message(definition);
            }
        }
        Ok(())
    }

    /// Adds dependency sections; a section that fails is reported and the rest still added.
    /// Types in `keep` (the root) are never replaced by a section.
    pub(crate) fn add_sections(
        &mut self,
        sections: Vec<Section>,
        keep: &[&TypeName],
    ) -> Result<(), Error> {
        let sections = drop_superseded(sections);
        let mut seen: HashSet<TypeName> = keep.iter().map(|name| (*name).clone()).collect();
        for section in sections {
            if section.kind != SectionKind::Idl && !seen.insert(section.name.clone()) {
                self.push_warning(Warning::DuplicateSection {
                    name: section.name.clone(),
                    line: section.first_line.saturating_sub(1),
                });
                continue;
            }
            let result = match section.kind {
                SectionKind::Message => parse_message_at(
                    &section.name,
                    &section.text,
                    Dialect::Ros2,
                    section.first_line,
                )
                .map(|definition| {
                    self.insert_message(definition);
                }),
                SectionKind::Service => self.add_service_section(&section.name, &section),
                SectionKind::Action => self.add_action_section(&section.name, &section),
                SectionKind::Idl => self.add_idl_section(&section, false),
            };
            match result {
                Ok(()) => {}
                Err(Error::Syntax(error)) => {
                    self.push_warning(Warning::UnparsableSection {
                        name: section.name.clone(),
                        error: error.clone(),
                    });
                    self.mark_unparsable(section.name, *error);
                }
                Err(other) => return Err(other),
            }
        }
        Ok(())
    }

    /// Adds a service with its request, response and event messages.
    fn add_service_section(&mut self, name: &TypeName, section: &Section) -> Result<(), Error> {
        let service = parse_service(name, &section.text, ParseDialect::Ros2)
            .map_err(|error| shift_lines(error, section.first_line))?;
        self.insert_message(service.event_message());
        self.insert_service(service);
        Ok(())
    }

    /// Adds an action, every type rosidl derives from it, and the events of its services.
    fn add_action_section(&mut self, name: &TypeName, section: &Section) -> Result<(), Error> {
        let action = parse_action(name, &section.text, ParseDialect::Ros2)
            .map_err(|error| shift_lines(error, section.first_line))?;
        for service in &action.derived_services {
            self.insert_message(service.event_message());
        }
        self.insert_action(action);
        Ok(())
    }

    /// Adds every struct of an IDL file. Inside a multi-file schema, a struct already defined
    /// by an earlier section is left alone (the first definition wins), except for the root.
    fn add_idl_section(&mut self, section: &Section, is_root: bool) -> Result<(), Error> {
        let definitions = idl::parse_idl(&section.name, &section.text, section.first_line)?;
        for definition in definitions {
            if is_root || !self.contains(&definition.name) {
                self.insert_message(definition);
            }
        }
        Ok(())
    }
}

/// Parses the section names; sections whose name is not a type name are reported and dropped.
fn named_sections(registry: &mut Registry, raw: Vec<RawSection>) -> Vec<Section> {
    let mut out = Vec::with_capacity(raw.len());
    for section in raw {
        let name = section
            .name
            .strip_suffix(".idl")
            .unwrap_or(&section.name)
            .to_owned();
        match TypeName::parse(&name) {
            Ok(name) => out.push(Section {
                kind: SectionKind::from_index(section.kind),
                name,
                text: section.text,
                first_line: section.first_line,
            }),
            Err(_) => registry.push_warning(Warning::InvalidSectionName {
                line: section.header_line,
                text: section.name,
            }),
        }
    }
    out
}

/// The section holding the root when the text starts with a separator: the one named like the
/// schema (for a service event, like its service), else the first.
fn root_section_index(sections: &[Section], root: &TypeName) -> usize {
    let service = service_of(root);
    sections
        .iter()
        .position(|s| s.name == *root)
        .or_else(|| {
            sections
                .iter()
                .position(|s| s.kind == SectionKind::Service && s.name == service)
        })
        .unwrap_or(0)
}

/// An empty `MSG:` section followed by an `IDL:` section for the same type is what rosbag2
/// writes when the `.msg` is missing but the `.idl` exists: the IDL section is the definition.
fn drop_superseded(sections: Vec<Section>) -> Vec<Section> {
    let idl_names: HashSet<TypeName> = sections
        .iter()
        .filter(|s| s.kind == SectionKind::Idl)
        .map(|s| s.name.clone())
        .collect();
    sections
        .into_iter()
        .filter(|s| {
            !(s.kind == SectionKind::Message
                && s.text.trim().is_empty()
                && idl_names.contains(&s.name))
        })
        .collect()
}

/// The service a service's type belongs to: `Foo` for `Foo_Event`, `Foo_Request`,
/// `Foo_Response` (a service name itself is kept).
fn service_of(name: &TypeName) -> TypeName {
    let short = name.name();
    for suffix in ["_Event", "_Request", "_Response"] {
        if let Some(service) = short.strip_suffix(suffix) {
            return name.sibling(service.to_owned());
        }
    }
    name.clone()
}

/// The action a derived action type belongs to (`Foo` for `Foo_FeedbackMessage`,
/// `Foo_SendGoal_Request`, …).
fn action_of(name: &TypeName) -> TypeName {
    let short = name.name();
    for marker in [
        "_SendGoal",
        "_GetResult",
        "_FeedbackMessage",
        "_Feedback",
        "_Goal",
        "_Result",
    ] {
        if let Some(index) = short.rfind(marker) {
            return name.sibling(short.get(..index).unwrap_or(short).to_owned());
        }
    }
    name.clone()
}

/// How many lines of a `.srv`/`.action` text are exactly `---`.
fn dash_lines(text: &str) -> usize {
    text.lines()
        .filter(|line| line.trim_end_matches('\r') == "---")
        .count()
}

/// Service and action texts are parsed on their own, so their error lines count from 1;
/// inside a schema they count from the section's first line.
fn shift_lines(error: Error, first_line: usize) -> Error {
    match error {
        Error::Syntax(mut syntax) => {
            syntax.line += first_line.saturating_sub(1);
            Error::Syntax(syntax)
        }
        other => other,
    }
}
