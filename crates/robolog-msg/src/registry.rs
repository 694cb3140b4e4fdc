//! The type registry: every known message (and service) by full name, the dependency walk that
//! the md5sum, bundles and decoders share, and bundle reading and writing.

use std::collections::{BTreeMap, HashMap};

use crate::bundle::{Bundle, write_bundle};
use crate::dialect;
use crate::error::{Error, SyntaxError, Warning};
use crate::model::{ActionDefinition, Dialect, MessageDefinition, ParseDialect, ServiceDefinition};
use crate::name::TypeName;
use crate::parse::{parse_action, parse_message_at, parse_service};

/// Message and service definitions by full name.
///
/// Field types refer to other messages by [`TypeName`]; [`Registry::get`] resolves them, so a
/// decoder walks a type recursively through the registry. A missing dependency is reported by
/// name ([`Error::MissingType`]) when something needs it, not when the registry is built, so a
/// bundle with a missing section still gives access to everything else.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    messages: BTreeMap<TypeName, MessageDefinition>,
    services: BTreeMap<TypeName, ServiceDefinition>,
    actions: BTreeMap<TypeName, ActionDefinition>,
    /// Types whose definition was present but rejected (bundle sections).
    unparsable: BTreeMap<TypeName, SyntaxError>,
    warnings: Vec<Warning>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Reads a definition bundle (see [`Bundle::parse`]): the top-level text becomes `top`, each
    /// section the type its `MSG:` line names, with package-relative names resolved against
    /// that section's package. With [`ParseDialect::Auto`] one dialect is chosen for the whole
    /// bundle.
    ///
    /// Fails only when the top-level text cannot be parsed. A dependency section that cannot be
    /// parsed is reported in [`Registry::warnings`], and asking for that type later returns
    /// [`Error::UnparsableType`].
    pub fn from_bundle(
        top: &TypeName,
        text: &str,
        dialect: impl Into<ParseDialect>,
    ) -> Result<Registry, Error> {
        let bundle = Bundle::parse(text);
        let dialect = match dialect.into() {
            ParseDialect::Ros1 => Dialect::Ros1,
            ParseDialect::Ros2 => Dialect::Ros2,
            ParseDialect::Auto if bundle.ros2_section_names => Dialect::Ros2,
            ParseDialect::Auto => {
                if bundle
                    .texts()
                    .any(|t| dialect::detect_dialect(t) == Dialect::Ros2)
                {
                    Dialect::Ros2
                } else {
                    Dialect::Ros1
                }
            }
        };
        let mut registry = Registry::new();
        registry.warnings.extend(bundle.warnings.iter().cloned());
        let top_definition = parse_message_at(top, &bundle.top, dialect, 1)?;
        registry.insert_message(top_definition);
        for section in &bundle.dependencies {
            if section.name == *top {
                registry.warnings.push(Warning::DuplicateSection {
                    name: section.name.clone(),
                    line: section.first_line.saturating_sub(1),
                });
                continue;
            }
            match parse_message_at(&section.name, &section.text, dialect, section.first_line) {
                Ok(definition) => {
                    registry.insert_message(definition);
                }
                Err(Error::Syntax(error)) => {
                    registry.warnings.push(Warning::UnparsableSection {
                        name: section.name.clone(),
                        error: error.clone(),
                    });
                    registry.unparsable.insert(section.name.clone(), *error);
                }
                Err(other) => return Err(other),
            }
        }
        Ok(registry)
    }

    /// Adds a message, replacing (and returning) any previous definition of the same name.
    pub fn insert_message(&mut self, definition: MessageDefinition) -> Option<MessageDefinition> {
        self.warnings.extend(definition.warnings.iter().cloned());
        self.unparsable.remove(&definition.name);
        self.messages.insert(definition.name.clone(), definition)
    }

    /// Adds a service and its request and response messages, replacing any previous ones.
    pub fn insert_service(&mut self, definition: ServiceDefinition) -> Option<ServiceDefinition> {
        self.insert_message(definition.request.clone());
        self.insert_message(definition.response.clone());
        self.services.insert(definition.name.clone(), definition)
    }

    /// Adds every message and service an action defines (see [`ActionDefinition`]), and the
    /// action itself ([`Registry::action`]).
    pub fn insert_action(&mut self, definition: ActionDefinition) {
        for message in [&definition.goal, &definition.result, &definition.feedback]
            .into_iter()
            .chain(&definition.derived_messages)
        {
            self.insert_message(message.clone());
        }
        for service in &definition.derived_services {
            self.insert_service(service.clone());
        }
        self.actions.insert(definition.name.clone(), definition);
    }

    /// Parses a `.msg` text as `name` and adds it.
    pub fn add_message_text(
        &mut self,
        name: &TypeName,
        text: &str,
        dialect: impl Into<ParseDialect>,
    ) -> Result<&MessageDefinition, Error> {
        let definition = crate::parse::parse_message(name, text, dialect)?;
        self.insert_message(definition);
        self.require(name)
    }

    /// Parses a `.srv` text as `name` and adds it with its request and response.
    pub fn add_service_text(
        &mut self,
        name: &TypeName,
        text: &str,
        dialect: impl Into<ParseDialect>,
    ) -> Result<&ServiceDefinition, Error> {
        let definition = parse_service(name, text, dialect)?;
        self.insert_service(definition);
        self.services
            .get(name)
            .ok_or_else(|| Error::MissingService { name: name.clone() })
    }

    /// Parses an `.action` text as `name` and adds all the types it defines.
    pub fn add_action_text(
        &mut self,
        name: &TypeName,
        text: &str,
        dialect: impl Into<ParseDialect>,
    ) -> Result<(), Error> {
        let definition = parse_action(name, text, dialect)?;
        self.insert_action(definition);
        Ok(())
    }

    /// The message called `name`, if known.
    pub fn get(&self, name: &TypeName) -> Option<&MessageDefinition> {
        self.messages.get(name)
    }

    /// Whether a message called `name` is known.
    pub fn contains(&self, name: &TypeName) -> bool {
        self.messages.contains_key(name)
    }

    /// The message called `name`, or why there is none ([`Error::MissingType`] or
    /// [`Error::UnparsableType`]).
    pub fn require(&self, name: &TypeName) -> Result<&MessageDefinition, Error> {
        self.require_for(name, None)
    }

    fn require_for(
        &self,
        name: &TypeName,
        needed_by: Option<&TypeName>,
    ) -> Result<&MessageDefinition, Error> {
        if let Some(definition) = self.messages.get(name) {
            return Ok(definition);
        }
        if let Some(error) = self.unparsable.get(name) {
            return Err(Error::UnparsableType {
                name: name.clone(),
                error: Box::new(error.clone()),
            });
        }
        Err(Error::MissingType {
            missing: name.clone(),
            needed_by: needed_by.cloned(),
        })
    }

    /// The service called `name`, if known.
    pub fn service(&self, name: &TypeName) -> Option<&ServiceDefinition> {
        self.services.get(name)
    }

    /// The action called `name`, if known.
    pub fn action(&self, name: &TypeName) -> Option<&ActionDefinition> {
        self.actions.get(name)
    }

    /// Every action, ordered by name.
    pub fn actions(&self) -> impl Iterator<Item = &ActionDefinition> {
        self.actions.values()
    }

    /// Copies from `source` every type that `name` needs, directly or not, and that this
    /// registry lacks (`name` itself included), so that a schema with missing sections can be
    /// completed from another registry, such as the bundled standard interfaces. Definitions
    /// this registry has are kept, and their dependencies are followed in this registry.
    /// Returns how many messages were copied; what neither registry has is reported later, by
    /// name, by whatever needs it.
    pub fn fill_missing_from(&mut self, source: &Registry, name: &TypeName) -> usize {
        let mut copied = 0;
        let mut pending = vec![name.clone()];
        let mut seen = std::collections::HashSet::new();
        while let Some(next) = pending.pop() {
            if !seen.insert(next.clone()) {
                continue;
            }
            let dependencies = |definition: &MessageDefinition| -> Vec<TypeName> {
                definition
                    .direct_dependencies()
                    .into_iter()
                    .cloned()
                    .collect()
            };
            if let Some(definition) = self.messages.get(&next) {
                pending.extend(dependencies(definition));
            } else if let Some(definition) = source.messages.get(&next) {
                pending.extend(dependencies(definition));
                self.insert_message(definition.clone());
                copied += 1;
            }
        }
        copied
    }

    /// Every message, ordered by name.
    pub fn messages(&self) -> impl Iterator<Item = &MessageDefinition> {
        self.messages.values()
    }

    /// Every service, ordered by name.
    pub fn services(&self) -> impl Iterator<Item = &ServiceDefinition> {
        self.services.values()
    }

    /// How many messages are known.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether no message is known.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// Everything accepted with a note while filling the registry.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Records that `name` had a definition that could not be parsed.
    pub(crate) fn mark_unparsable(&mut self, name: TypeName, error: SyntaxError) {
        if !self.messages.contains_key(&name) {
            self.unparsable.insert(name, error);
        }
    }

    pub(crate) fn push_warning(&mut self, warning: Warning) {
        self.warnings.push(warning);
    }

    /// All message types `name` depends on, directly or not, in genmsg's order (depth-first,
    /// fields in declaration order, each type at its first occurrence): the order of the
    /// sections in a bundle.
    ///
    /// Fails when a dependency is missing or unparsable, or when a type contains itself.
    pub fn dependencies(&self, name: &TypeName) -> Result<Vec<TypeName>, Error> {
        Ok(self.walk(name)?.preorder)
    }

    /// The definition bundle of `name` in genmsg's layout (see [`write_bundle`]), as ROS 1
    /// tools write it into bags.
    pub fn bundle_text(&self, name: &TypeName) -> Result<String, Error> {
        let walk = self.walk(name)?;
        let top = self.require(name)?;
        let dependencies = walk
            .preorder
            .iter()
            .map(|dependency| self.require(dependency))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(write_bundle(top, dependencies))
    }

    /// Walks the types reachable from `top` without recursion (definitions come from untrusted
    /// files, and a deep chain must not overflow the stack).
    pub(crate) fn walk(&self, top: &TypeName) -> Result<Walk, Error> {
        #[derive(Clone, Copy, PartialEq)]
        enum Visit {
            InProgress,
            Done,
        }
        let root = self.require(top)?;
        let mut visits: HashMap<&TypeName, Visit> = HashMap::new();
        let mut walk = Walk::default();
        let mut stack: Vec<(&MessageDefinition, Vec<&TypeName>, usize)> =
            vec![(root, root.direct_dependencies(), 0)];
        visits.insert(&root.name, Visit::InProgress);
        while let Some(frame) = stack.last_mut() {
            let definition: &MessageDefinition = frame.0;
            let next = frame.1.get(frame.2).copied();
            frame.2 += 1;
            let Some(dependency) = next else {
                visits.insert(&definition.name, Visit::Done);
                walk.postorder.push(definition.name.clone());
                stack.pop();
                continue;
            };
            let parent = &definition.name;
            match visits.get(dependency) {
                Some(Visit::Done) => {}
                Some(Visit::InProgress) => {
                    let start = stack
                        .iter()
                        .position(|(d, _, _)| d.name == *dependency)
                        .unwrap_or(0);
                    let mut cycle: Vec<TypeName> = stack
                        .get(start..)
                        .unwrap_or(&[])
                        .iter()
                        .map(|(d, _, _)| d.name.clone())
                        .collect();
                    cycle.push(dependency.clone());
                    return Err(Error::RecursiveType { cycle });
                }
                None => {
                    let child = self.require_for(dependency, Some(parent))?;
                    walk.preorder.push(dependency.clone());
                    visits.insert(dependency, Visit::InProgress);
                    stack.push((child, child.direct_dependencies(), 0));
                }
            }
        }
        Ok(walk)
    }
}

/// The types reachable from one type.
#[derive(Debug, Default)]
pub(crate) struct Walk {
    /// Dependencies in genmsg's bundle order (the top type excluded).
    pub(crate) preorder: Vec<TypeName>,
    /// Every type, dependencies before the types that use them (the top type last).
    pub(crate) postorder: Vec<TypeName>,
}
