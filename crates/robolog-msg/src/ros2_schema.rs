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
use crate::model::{Dialect, MessageDefinition, ParseDialect, ServiceDefinition};
use crate::name::{InterfaceKind, TypeName};
use crate::parse::{parse_action, parse_message_at, parse_service};
use crate::registry::Registry;
use crate::sections::{self, RawSection};

/// The section headers of a `ros2msg` schema, in the order of [`SectionKind`].
const ROS2MSG_HEADERS: [&str; 3] = ["MSG:", "SRV:", "IDL:"];

/// What a schema section holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    /// - `IDL:` sections are read with the IDL parser (see [`Registry::from_ros2idl`]); an
    ///   empty `MSG:` section followed by an `IDL:` section of the same type (what rosbag2
    ///   writes when only the `.idl` exists) is replaced by it.
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
        let mut idl = parse_idl_sections(std::iter::once(&root_section).chain(&sections));
        if root_section.kind == SectionKind::Idl {
            let definitions = idl.next().unwrap_or_else(|| Ok(Vec::new()))?;
            registry.add_idl_root(&root, definitions)?;
        } else {
            registry.add_root(&root, root_section)?;
        }
        registry.add_sections(sections, &[&root], &mut idl)?;
        registry.add_ros2_builtins();
        Ok(registry)
    }

    /// Reads a `ros2idl` schema: IDL files, each (the first included) after a line of `=` and
    /// a header `IDL: pkg/msg/Type`, in any order. The root is the struct named like the
    /// schema (`pkg/msg/Type` is `pkg::msg::Type`), in the section of that name or else the
    /// first. Files see each other's typedefs and constants (`#include` names a section);
    /// a service or action schema whose IDL has only the request/response (or goal, result and
    /// feedback) structs gets the types rosidl derives from them. The IDL subset is described
    /// in the crate documentation of [`Registry::from_ros2msg`]'s `IDL:` sections.
    ///
    /// ```
    /// use robolog_msg::{Registry, TypeName};
    ///
    /// let text = "\
    /// ================================================================================
    /// IDL: my_pkg/msg/Sample
    /// module my_pkg {
    ///   module msg {
    ///     typedef double double__9[9];
    ///     module Sample_Constants {
    ///       const uint8 MODE_A = 1 << 3;
    ///     };
    ///     @verbatim (language=\"comment\", text=\"A \\\"quoted\\\" (note)\")
    ///     struct Sample {
    ///       double__9 cov;
    ///       sequence<int32, 4> vals;
    ///       string<8> tag;
    ///     };
    ///   };
    /// };
    /// ";
    /// let registry = Registry::from_ros2idl("my_pkg/msg/Sample", text)?;
    /// let sample = registry.require(&"my_pkg/msg/Sample".parse::<TypeName>()?)?;
    /// assert_eq!(sample.canonical_text(), "uint8 MODE_A=8\nfloat64[9] cov\nint32[<=4] vals\nstring<=8 tag\n");
    /// # Ok::<(), robolog_msg::Error>(())
    /// ```
    pub fn from_ros2idl(schema_name: &str, text: &str) -> Result<Registry, Error> {
        let root = TypeName::parse(schema_name)?;
        let split = sections::split(text, &["IDL:"]);
        let mut registry = Registry::new();
        if split.escaped_newlines {
            registry.push_warning(Warning::EscapedNewlines);
        }
        let mut sections = named_sections(&mut registry, split.sections);
        for section in &mut sections {
            section.kind = SectionKind::Idl;
        }
        let root_section = if split.top.trim().is_empty() && !sections.is_empty() {
            let index = root_section_index(&sections, &root);
            sections.remove(index)
        } else {
            Section {
                kind: SectionKind::Idl,
                name: root.clone(),
                text: split.top,
                first_line: 1,
            }
        };
        let mut idl = parse_idl_sections(std::iter::once(&root_section).chain(&sections));
        let definitions = idl.next().unwrap_or_else(|| Ok(Vec::new()))?;
        registry.add_idl_root(&root, definitions)?;
        registry.add_sections(sections, &[&root], &mut idl)?;
        registry.add_ros2_builtins();
        Ok(registry)
    }

    /// Adds the structs of the root IDL file, and what rosidl derives when the schema names a
    /// service or action type that the file does not define itself.
    fn add_idl_root(
        &mut self,
        root: &TypeName,
        definitions: Vec<MessageDefinition>,
    ) -> Result<(), Error> {
        for definition in definitions {
            self.insert_message(definition);
        }
        if self.contains(root) {
            return Ok(());
        }
        match root.ros2_interface_kind() {
            InterfaceKind::Service => {
                let service = service_of(root);
                let part = |suffix: &str| {
                    self.get(&service.sibling(format!("{}{suffix}", service.name())))
                };
                if let (Some(request), Some(response)) = (part("_Request"), part("_Response")) {
                    let service = ServiceDefinition {
                        name: service.clone(),
                        dialect: Dialect::Ros2,
                        request: request.clone(),
                        response: response.clone(),
                        source: format!("{}---\n{}", request.source, response.source),
                    };
                    self.insert_message(service.event_message());
                    self.insert_service(service);
                }
            }
            InterfaceKind::Action => {
                let action = action_of(root);
                let part =
                    |suffix: &str| self.get(&action.sibling(format!("{}{suffix}", action.name())));
                if let (Some(goal), Some(result), Some(feedback)) =
                    (part("_Goal"), part("_Result"), part("_Feedback"))
                {
                    let text = format!(
                        "{}---\n{}---\n{}",
                        goal.source, result.source, feedback.source
                    );
                    let section = Section {
                        kind: SectionKind::Action,
                        name: action.clone(),
                        text,
                        first_line: 1,
                    };
                    self.add_action_section(&action, &section)?;
                }
            }
            _ => {}
        }
        if self.contains(root) {
            Ok(())
        } else {
            Err(Error::MissingType {
                missing: root.clone(),
                needed_by: None,
            })
        }
    }

    /// Reads a schema of the given MCAP schema encoding: `ros2msg`
    /// ([`Registry::from_ros2msg`]) or `ros2idl` ([`Registry::from_ros2idl`]). Other encodings
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
            "ros2idl" => Registry::from_ros2idl(schema_name, text),
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
        idl: &mut dyn Iterator<Item = Result<Vec<MessageDefinition>, Error>>,
    ) -> Result<(), Error> {
        let sections = drop_superseded(sections);
        // Services and actions have names of their own: `pkg/srv/Foo` may exist beside
        // `pkg/msg/Foo`.
        let mut seen: HashSet<(SectionKind, TypeName)> = keep
            .iter()
            .map(|name| (SectionKind::Message, (*name).clone()))
            .collect();
        for section in sections {
            if section.kind != SectionKind::Idl
                && !seen.insert((section.kind, section.name.clone()))
            {
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
                SectionKind::Idl => {
                    idl.next()
                        .unwrap_or_else(|| Ok(Vec::new()))
                        .map(|definitions| {
                            // The first definition of a struct wins.
                            for definition in definitions {
                                if !self.contains(&definition.name) {
                                    self.insert_message(definition);
                                }
                            }
                        })
                }
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
}

/// Parses the section names; sections whose name is not a type name are reported and dropped.
pub(crate) fn named_sections(registry: &mut Registry, raw: Vec<RawSection>) -> Vec<Section> {
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

/// Parses the IDL sections among `sections` together (they see each other's typedefs and
/// constants); the results come in the order of the IDL sections.
pub(crate) fn parse_idl_sections<'a>(
    sections: impl Iterator<Item = &'a Section>,
) -> std::vec::IntoIter<Result<Vec<MessageDefinition>, Error>> {
    let inputs: Vec<idl::IdlInput<'_>> = sections
        .filter(|s| s.kind == SectionKind::Idl)
        .map(|s| idl::IdlInput {
            name: &s.name,
            text: &s.text,
            first_line: s.first_line,
        })
        .collect();
    idl::parse_files(&inputs).into_iter()
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
