//! Protobuf channels: the schema is a `FileDescriptorSet` (MCAP schema encoding `protobuf`)
//! and the schema name the full message name.
//!
//! Columns follow the fields in declaration order: integer and float kinds as the Arrow type
//! of the same width and sign (`sint32`/`sfixed32` as int32, `fixed64` as uint64, …), `bool`,
//! `string` as UTF-8, `bytes` as binary, enums as their int32 number, messages as structs,
//! `repeated` fields as lists and `map` fields as maps (keys sorted). Fields with presence
//! (messages, `optional`, proto2) are null when absent; other absent fields hold their
//! default, as protobuf defines. Recursive message types have no column layout and are refused.

use prost_reflect::{
    DescriptorPool, DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor,
    ReflectMessage, Value as Pb,
};

use crate::column::{Columns, Member, Prim, Shape, Values};

/// Message types nested deeper than this are taken for a recursion.
const MAX_DEPTH: usize = 64;

/// A protobuf channel's decoder.
#[derive(Debug)]
pub(crate) struct ProtobufCodec {
    descriptor: MessageDescriptor,
    fields: Vec<FieldDescriptor>,
}

impl ProtobufCodec {
    pub(crate) fn new(name: &str, descriptor_set: &[u8]) -> Result<(Self, Vec<Member>), String> {
        let pool = DescriptorPool::decode(descriptor_set)
            .map_err(|e| format!("the descriptor set cannot be read: {e}"))?;
        let descriptor = pool
            .get_message_by_name(name)
            .ok_or_else(|| format!("the descriptor set does not define {name}"))?;
        let members = message_members(&descriptor, 0)?;
        let fields = descriptor.fields().collect();
        Ok((ProtobufCodec { descriptor, fields }, members))
    }

    pub(crate) fn append(&self, data: &[u8], columns: &mut Columns) -> Result<(), String> {
        let message =
            DynamicMessage::decode(self.descriptor.clone(), data).map_err(|e| e.to_string())?;
        for k in 0..columns.top.len() {
            let node = columns.top[k];
            let member = &columns.members()[k];
            let field = self
                .fields
                .get(member.source)
                .cloned()
                .ok_or_else(|| "a column without its field".to_owned())?;
            let shape = member.shape.clone();
            append_field(columns, node, &shape, &message, &field)?;
        }
        Ok(())
    }
}

fn message_members(descriptor: &MessageDescriptor, depth: usize) -> Result<Vec<Member>, String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "{} nests more than {MAX_DEPTH} levels (a recursive type has no column layout)",
            descriptor.full_name()
        ));
    }
    descriptor
        .fields()
        .enumerate()
        .map(|(index, field)| {
            let shape = field_shape(&field, depth)?;
            Ok(Member::new(field.name(), shape, nullable(&field), index))
        })
        .collect()
}

fn nullable(field: &FieldDescriptor) -> bool {
    !field.is_list() && !field.is_map() && field.supports_presence()
}

fn field_shape(field: &FieldDescriptor, depth: usize) -> Result<Shape, String> {
    if field.is_map() {
        let Kind::Message(entry) = field.kind() else {
            return Err(format!("map field {} without an entry type", field.name()));
        };
        let key = kind_shape(&entry.map_entry_key_field().kind(), depth)?;
        let value_field = entry.map_entry_value_field();
        let value = kind_shape(&value_field.kind(), depth)?;
        let value_nullable = matches!(value_field.kind(), Kind::Message(_));
        return Ok(Shape::Map(Box::new(key), Box::new(value), value_nullable));
    }
    let element = kind_shape(&field.kind(), depth)?;
    Ok(if field.is_list() {
        Shape::List(Box::new(element), false)
    } else {
        element
    })
}

fn kind_shape(kind: &Kind, depth: usize) -> Result<Shape, String> {
    Ok(match kind {
        Kind::Double => Shape::Prim(Prim::Float64),
        Kind::Float => Shape::Prim(Prim::Float32),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Shape::Prim(Prim::Int32),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Shape::Prim(Prim::Int64),
        Kind::Uint32 | Kind::Fixed32 => Shape::Prim(Prim::UInt32),
        Kind::Uint64 | Kind::Fixed64 => Shape::Prim(Prim::UInt64),
        Kind::Bool => Shape::Prim(Prim::Bool),
        Kind::String => Shape::Utf8,
        Kind::Bytes => Shape::Binary,
        Kind::Enum(_) => Shape::Prim(Prim::Int32),
        Kind::Message(message) => {
            let members = message_members(message, depth + 1)?;
            if members.is_empty() {
                // Parquet has no empty groups: an empty message is kept as its presence.
                Shape::Prim(Prim::Bool)
            } else {
                Shape::Struct(members)
            }
        }
    })
}

fn append_field(
    columns: &mut Columns,
    node: usize,
    shape: &Shape,
    message: &DynamicMessage,
    field: &FieldDescriptor,
) -> Result<(), String> {
    if nullable(field) && !message.has_field(field) {
        columns.append_null(node);
        return Ok(());
    }
    let value = message.get_field(field);
    append_value(columns, node, shape, &value)
}

fn append_value(
    columns: &mut Columns,
    node: usize,
    shape: &Shape,
    value: &Pb,
) -> Result<(), String> {
    match (shape, value) {
        (Shape::Struct(members), Pb::Message(message)) => {
            columns.open(node);
            let descriptor = message.descriptor();
            for (k, member) in members.iter().enumerate() {
                let (Some(child), Some(field)) = (
                    columns.child(node, k),
                    descriptor.fields().nth(member.source),
                ) else {
                    return Err("a struct column lost a child".to_owned());
                };
                append_field(columns, child.node, &member.shape, message, &field)?;
            }
            Ok(())
        }
        (Shape::List(item_shape, _), Pb::List(items)) => {
            let item = columns.item(node).ok_or("a list column lost its items")?;
            for v in items {
                append_value(columns, item, item_shape, v)?;
            }
            columns.close_list(node).map_err(|e| e.to_string())
        }
        (Shape::Map(key_shape, value_shape, _), Pb::Map(map)) => {
            let entries = columns.item(node).ok_or("a map column lost its entries")?;
            let (Some(key), Some(val)) = (columns.child(entries, 0), columns.child(entries, 1))
            else {
                return Err("a map column lost its keys or values".to_owned());
            };
            let mut pairs: Vec<(&MapKey, &Pb)> = map.iter().collect();
            pairs.sort_by(|a, b| map_key_order(a.0, b.0));
            for (k, v) in pairs {
                columns.open(entries);
                append_value(columns, key.node, key_shape, &map_key_value(k))?;
                append_value(columns, val.node, value_shape, v)?;
            }
            columns.close_list(node).map_err(|e| e.to_string())
        }
        (Shape::Prim(Prim::Bool), Pb::Message(_)) => {
            columns.valid(node);
            if let Values::Bool(b) = &mut columns.nodes[node].values {
                b.append(true);
            }
            Ok(())
        }
        _ => {
            columns.valid(node);
            match (&mut columns.nodes[node].values, value) {
                (Values::Float64(c), Pb::F64(v)) => c.values.push(*v),
                (Values::Float32(c), Pb::F32(v)) => c.values.push(*v),
                (Values::Int32(c), Pb::I32(v) | Pb::EnumNumber(v)) => c.values.push(*v),
                (Values::Int64(c), Pb::I64(v)) => c.values.push(*v),
                (Values::UInt32(c), Pb::U32(v)) => c.values.push(*v),
                (Values::UInt64(c), Pb::U64(v)) => c.values.push(*v),
                (Values::Bool(b), Pb::Bool(v)) => b.append(*v),
                (Values::Utf8(b), Pb::String(v)) => b.append_value(v),
                (Values::Binary(b), Pb::Bytes(v)) => b.append_value(v),
                _ => {
                    return Err(format!(
                        "a protobuf value {value:?} does not fit its column"
                    ));
                }
            }
            Ok(())
        }
    }
}

fn map_key_value(key: &MapKey) -> Pb {
    match key {
        MapKey::Bool(v) => Pb::Bool(*v),
        MapKey::I32(v) => Pb::I32(*v),
        MapKey::I64(v) => Pb::I64(*v),
        MapKey::U32(v) => Pb::U32(*v),
        MapKey::U64(v) => Pb::U64(*v),
        MapKey::String(v) => Pb::String(v.clone()),
    }
}

fn map_key_order(a: &MapKey, b: &MapKey) -> std::cmp::Ordering {
    match (a, b) {
        (MapKey::Bool(a), MapKey::Bool(b)) => a.cmp(b),
        (MapKey::I32(a), MapKey::I32(b)) => a.cmp(b),
        (MapKey::I64(a), MapKey::I64(b)) => a.cmp(b),
        (MapKey::U32(a), MapKey::U32(b)) => a.cmp(b),
        (MapKey::U64(a), MapKey::U64(b)) => a.cmp(b),
        (MapKey::String(a), MapKey::String(b)) => a.cmp(b),
        _ => std::cmp::Ordering::Equal,
    }
}
