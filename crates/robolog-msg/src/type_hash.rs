//! RIHS01 type hashes (REP-2011), exactly as rosidl's `rosidl_generator_type_description`
//! computes them.
//!
//! Each struct is described as `{"type_name": "pkg/msg/Type", "fields": [...]}` from the IDL
//! rosidl generates (so `.msg` `char` is `uint8`, `byte` is `octet`, and an empty message has
//! its `structure_needs_at_least_one_member`), each field as
//! `{"name", "type": {"type_id", "capacity", "string_capacity", "nested_type_name"}}`. The
//! hashed document is the root struct plus every struct it reaches, sorted by name, serialized
//! like Python's `json.dumps(..., separators=(", ", ": "))` with non-ASCII escaped; the hash is
//! `RIHS01_` and the lowercase hex SHA-256 of that text. Defaults and constants are not hashed.
//!
//! Services are described as a struct `pkg/srv/Foo` with the fields `request_message`,
//! `response_message` and `event_message`; actions as `pkg/action/Foo` with `goal`, `result`,
//! `feedback`, `send_goal_service`, `get_result_service` and `feedback_message`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::model::{
    ArrayKind, Dialect, ElementType, MessageDefinition, PrimitiveType, ServiceDefinition,
};
use crate::name::{InterfaceKind, TypeName};
use crate::registry::Registry;
use crate::ros2_builtins;

/// The prefix of every RIHS01 hash.
const RIHS01_PREFIX: &str = "RIHS01_";

/// `type_description_interfaces/msg/FieldType`: the nested-type id; the others are below.
const NESTED_TYPE: u8 = 1;

/// One field of a hashed struct.
#[derive(Debug, Clone)]
struct HashedField {
    name: String,
    type_id: u8,
    capacity: u64,
    string_capacity: u64,
    nested_type_name: String,
}

/// One struct: `type_description_interfaces/msg/IndividualTypeDescription` without defaults.
#[derive(Debug, Clone)]
struct Individual {
    type_name: String,
    fields: Vec<HashedField>,
}

impl Registry {
    /// The RIHS01 type hash of the message `name` (`RIHS01_` and 64 lowercase hex digits), as
    /// rosidl computes it and rosbag2 records it (`type_description_hash`, MCAP channel
    /// metadata `topic_type_hash`).
    ///
    /// Every type involved must be a ROS 2 definition ([`Error::NotRos2`] otherwise) and
    /// known, except `builtin_interfaces/msg/Time`, `Duration` and
    /// `service_msgs/msg/ServiceEventInfo`, which are built in.
    ///
    /// ```
    /// use robolog_msg::{Dialect, Registry, TypeName};
    ///
    /// let name: TypeName = "std_msgs/msg/String".parse()?;
    /// let mut registry = Registry::new();
    /// registry.add_message_text(&name, "string data\n", Dialect::Ros2)?;
    /// assert_eq!(
    ///     registry.type_hash(&name)?,
    ///     "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
    /// );
    /// # Ok::<(), robolog_msg::Error>(())
    /// ```
    pub fn type_hash(&self, name: &TypeName) -> Result<String, Error> {
        Ok(rihs01(&self.type_description_json(name)?))
    }

    /// The exact text whose SHA-256 is [`Registry::type_hash`] (useful to see why two hashes
    /// differ).
    pub fn type_description_json(&self, name: &TypeName) -> Result<String, Error> {
        let root = describe_message(self.hash_definition(name, None)?)?;
        self.document(root, &BTreeMap::new())
    }

    /// The RIHS01 type hash of the service `name` (`pkg/srv/Foo`), whose description has the
    /// request, response and event messages as fields.
    pub fn service_type_hash(&self, name: &TypeName) -> Result<String, Error> {
        Ok(rihs01(&self.service_type_description_json(name)?))
    }

    /// The text whose SHA-256 is [`Registry::service_type_hash`].
    pub fn service_type_description_json(&self, name: &TypeName) -> Result<String, Error> {
        let service = self
            .service(name)
            .ok_or_else(|| Error::MissingService { name: name.clone() })?;
        let mut extra = BTreeMap::new();
        let root = service_individual(service, &mut extra)?;
        self.document(root, &extra)
    }

    /// The RIHS01 type hash of the action `name` (`pkg/action/Foo`), whose description has the
    /// goal, result and feedback messages, the two services and the feedback message as fields.
    pub fn action_type_hash(&self, name: &TypeName) -> Result<String, Error> {
        Ok(rihs01(&self.action_type_description_json(name)?))
    }

    /// The text whose SHA-256 is [`Registry::action_type_hash`].
    pub fn action_type_description_json(&self, name: &TypeName) -> Result<String, Error> {
        let action = self
            .action(name)
            .ok_or_else(|| Error::MissingAction { name: name.clone() })?;
        let mut extra = BTreeMap::new();
        let mut fields = Vec::new();
        for (field, message) in [
            ("goal", &action.goal),
            ("result", &action.result),
            ("feedback", &action.feedback),
        ] {
            fields.push(nested_field(field, message.name.ros2_name()));
        }
        for (field, suffix) in [
            ("send_goal_service", "_SendGoal"),
            ("get_result_service", "_GetResult"),
        ] {
            let service_name = name.sibling(format!("{}{suffix}", name.name()));
            let service = action
                .derived_services
                .iter()
                .find(|s| s.name == service_name)
                .ok_or_else(|| Error::MissingService {
                    name: service_name.clone(),
                })?;
            let individual = service_individual(service, &mut extra)?;
            fields.push(nested_field(field, individual.type_name.clone()));
            extra.insert(individual.type_name.clone(), individual);
        }
        let feedback_message = name.sibling(format!("{}_FeedbackMessage", name.name()));
        fields.push(nested_field(
            "feedback_message",
            feedback_message.ros2_name(),
        ));
        let root = Individual {
            type_name: name.ros2_name_in(InterfaceKind::Action),
            fields,
        };
        self.document(root, &extra)
    }

    /// A message definition for hashing: from the registry, else one of the built-in types.
    fn hash_definition(
        &self,
        name: &TypeName,
        needed_by: Option<&TypeName>,
    ) -> Result<&MessageDefinition, Error> {
        match self.get(name) {
            Some(definition) => Ok(definition),
            None => match ros2_builtins::builtin(name) {
                Some(definition) => Ok(definition),
                None => Err(match needed_by {
                    None => match self.require(name) {
                        Err(error) => error,
                        Ok(_) => Error::MissingType {
                            missing: name.clone(),
                            needed_by: None,
                        },
                    },
                    Some(parent) => Error::MissingType {
                        missing: name.clone(),
                        needed_by: Some(parent.clone()),
                    },
                }),
            },
        }
    }

    /// The hashed document: `root` and every struct it reaches (found in `extra`, else among
    /// the messages), sorted by name.
    fn document(
        &self,
        root: Individual,
        extra: &BTreeMap<String, Individual>,
    ) -> Result<String, Error> {
        let mut referenced: BTreeMap<String, Individual> = BTreeMap::new();
        let mut pending: Vec<(String, String)> = nested_names(&root)
            .map(|nested| (nested, root.type_name.clone()))
            .collect();
        let mut seen = BTreeSet::new();
        while let Some((type_name, needed_by)) = pending.pop() {
            if !seen.insert(type_name.clone()) {
                continue;
            }
            let individual = match extra.get(&type_name) {
                Some(individual) => individual.clone(),
                None => {
                    let name = TypeName::parse(&type_name)?;
                    let parent = TypeName::parse(&needed_by).ok();
                    describe_message(self.hash_definition(&name, parent.as_ref())?)?
                }
            };
            pending.extend(nested_names(&individual).map(|n| (n, type_name.clone())));
            referenced.insert(type_name, individual);
        }
        if referenced.contains_key(&root.type_name) {
            return Err(Error::RecursiveType {
                cycle: vec![TypeName::parse(&root.type_name)?],
            });
        }
        let mut out = String::with_capacity(256 * (referenced.len() + 1));
        out.push_str("{\"type_description\": ");
        write_individual(&mut out, &root);
        out.push_str(", \"referenced_type_descriptions\": [");
        for (index, individual) in referenced.values().enumerate() {
            if index > 0 {
                out.push_str(", ");
            }
            write_individual(&mut out, individual);
        }
        out.push_str("]}");
        Ok(out)
    }
}

/// `RIHS01_` + lowercase hex SHA-256.
fn rihs01(json: &str) -> String {
    let digest = Sha256::digest(json.as_bytes());
    let mut out = String::with_capacity(RIHS01_PREFIX.len() + 64);
    out.push_str(RIHS01_PREFIX);
    for byte in digest.iter() {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

fn nested_names(individual: &Individual) -> impl Iterator<Item = String> + '_ {
    individual
        .fields
        .iter()
        .filter(|f| !f.nested_type_name.is_empty())
        .map(|f| f.nested_type_name.clone())
}

fn nested_field(name: &str, nested_type_name: String) -> HashedField {
    HashedField {
        name: name.to_owned(),
        type_id: NESTED_TYPE,
        capacity: 0,
        string_capacity: 0,
        nested_type_name,
    }
}

/// The pseudo-struct of a service (`request_message`, `response_message`, `event_message`);
/// the event message is put into `extra`, built from the service when needed.
fn service_individual(
    service: &ServiceDefinition,
    extra: &mut BTreeMap<String, Individual>,
) -> Result<Individual, Error> {
    if service.dialect != Dialect::Ros2 {
        return Err(Error::NotRos2 {
            name: service.name.clone(),
        });
    }
    let event = describe_message(&service.event_message())?;
    let kind = match service.name.ros2_interface_kind() {
        InterfaceKind::Action => InterfaceKind::Action,
        _ => InterfaceKind::Service,
    };
    let individual = Individual {
        type_name: service.name.ros2_name_in(kind),
        fields: vec![
            nested_field("request_message", service.request.name.ros2_name()),
            nested_field("response_message", service.response.name.ros2_name()),
            nested_field("event_message", event.type_name.clone()),
        ],
    };
    extra.insert(event.type_name.clone(), event);
    Ok(individual)
}

/// A message as rosidl describes it.
fn describe_message(definition: &MessageDefinition) -> Result<Individual, Error> {
    if definition.dialect != Dialect::Ros2 {
        return Err(Error::NotRos2 {
            name: definition.name.clone(),
        });
    }
    let mut fields = Vec::with_capacity(definition.fields.len().max(1));
    for field in &definition.fields {
        let (base, string_capacity, nested_type_name) = match &field.ty.element {
            ElementType::Primitive(primitive) => match primitive_type_id(*primitive) {
                Some(id) => (id, 0, String::new()),
                None => {
                    return Err(Error::NotRos2 {
                        name: definition.name.clone(),
                    });
                }
            },
            ElementType::BoundedString { wide, max_len } => {
                (if *wide { 22 } else { 21 }, *max_len, String::new())
            }
            ElementType::Message(name) => (NESTED_TYPE, 0, name.ros2_name()),
        };
        let (offset, capacity) = match field.ty.array {
            ArrayKind::Scalar => (0, 0),
            ArrayKind::Fixed(n) => (48, n),
            ArrayKind::Bounded(n) => (96, n),
            ArrayKind::Variable => (144, 0),
        };
        fields.push(HashedField {
            name: field.name.clone(),
            type_id: base + offset,
            capacity,
            string_capacity,
            nested_type_name,
        });
    }
    if fields.is_empty() {
        // rosidl_adapter gives every empty struct this member, and the hash sees it.
        fields.push(HashedField {
            name: "structure_needs_at_least_one_member".to_owned(),
            type_id: 3,
            capacity: 0,
            string_capacity: 0,
            nested_type_name: String::new(),
        });
    }
    Ok(Individual {
        type_name: definition.name.ros2_name(),
        fields,
    })
}

/// `type_description_interfaces/msg/FieldType` ids of the scalar types, after rosidl_adapter's
/// `.msg` to IDL mapping (`char` is `uint8`, `byte` is `octet`). `time` and `duration` exist
/// only in ROS 1 definitions.
fn primitive_type_id(primitive: PrimitiveType) -> Option<u8> {
    Some(match primitive {
        PrimitiveType::Int8 => 2,
        PrimitiveType::UInt8 | PrimitiveType::Char => 3,
        PrimitiveType::Int16 => 4,
        PrimitiveType::UInt16 => 5,
        PrimitiveType::Int32 => 6,
        PrimitiveType::UInt32 => 7,
        PrimitiveType::Int64 => 8,
        PrimitiveType::UInt64 => 9,
        PrimitiveType::Float32 => 10,
        PrimitiveType::Float64 => 11,
        PrimitiveType::Bool => 15,
        PrimitiveType::Byte => 16,
        PrimitiveType::String => 17,
        PrimitiveType::WString => 18,
        PrimitiveType::Time | PrimitiveType::Duration => return None,
    })
}

fn write_individual(out: &mut String, individual: &Individual) {
    out.push_str("{\"type_name\": ");
    write_json_string(out, &individual.type_name);
    out.push_str(", \"fields\": [");
    for (index, field) in individual.fields.iter().enumerate() {
        if index > 0 {
            out.push_str(", ");
        }
        out.push_str("{\"name\": ");
        write_json_string(out, &field.name);
        let _ = write!(
            out,
            ", \"type\": {{\"type_id\": {}, \"capacity\": {}, \"string_capacity\": {}, \
             \"nested_type_name\": ",
            field.type_id, field.capacity, field.string_capacity
        );
        write_json_string(out, &field.nested_type_name);
        out.push_str("}}");
    }
    out.push_str("]}");
}

/// A JSON string as Python's `json.dumps(..., ensure_ascii=True)` writes it.
fn write_json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped_like_python_ensure_ascii() {
        let mut out = String::new();
        write_json_string(&mut out, "a\"b\\c\n\u{1}é😀");
        assert_eq!(out, r#""a\"b\\c\n\u0001\u00e9\ud83d\ude00""#);
    }
}
