//! JSON channels whose schema is a JSON Schema (MCAP schema encoding `jsonschema`).
//!
//! The schema's top level must be an object with `properties`; each property becomes a
//! nullable column, in the order the schema lists them: `integer` as int64, `number` as
//! float64, `boolean`, `string` (bytes when `contentEncoding` is `base64`), `object` with
//! `properties` as a struct, `array` with `items` as a list; a type list with `"null"` is the
//! other type. Anything else (no `type`, `oneOf`, tuples, open objects) is kept as its JSON
//! text in a string column. Local `$ref`s (`#/$defs/...`, `#/definitions/...`) are followed.

use base64::Engine as _;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value as Json;

use crate::column::{Columns, Member, Prim, Shape, Values};

/// A JSON value that keeps the order of object keys (serde_json's own map sorts them).
#[derive(Debug, Clone)]
enum Ordered {
    Object(Vec<(String, Ordered)>),
    Array(Vec<Ordered>),
    Other(Json),
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Ordered, E> {
                Ok(Ordered::Other(Json::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Ordered, E> {
                Ok(Ordered::Other(Json::from(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Ordered, E> {
                Ok(Ordered::Other(Json::from(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Ordered, E> {
                Ok(Ordered::Other(Json::from(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Ordered, E> {
                Ok(Ordered::Other(Json::from(v)))
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Other(Json::Null))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Ordered::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut entries = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Ordered>()? {
                    entries.push((key, value));
                }
                Ok(Ordered::Object(entries))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl Ordered {
    fn get(&self, key: &str) -> Option<&Ordered> {
        match self {
            Ordered::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            Ordered::Other(Json::String(s)) => Some(s),
            _ => None,
        }
    }
}

/// How deep `$ref`s and nested objects are followed before a value is kept as JSON text.
const MAX_DEPTH: usize = 32;

/// The columns of a JSON Schema whose top level is an object with properties.
pub(crate) fn schema_members(text: &[u8]) -> Result<Vec<Member>, String> {
    let root: Ordered =
        serde_json::from_slice(text).map_err(|e| format!("the JSON Schema is not JSON: {e}"))?;
    let schema = resolve(&root, &root, 0);
    match object_members(&root, schema, 0) {
        Some(members) if !members.is_empty() => Ok(members),
        _ => Err("the JSON Schema's top level is not an object with properties".to_owned()),
    }
}

fn resolve<'a>(root: &'a Ordered, schema: &'a Ordered, depth: usize) -> &'a Ordered {
    let Some(reference) = schema.get("$ref").and_then(Ordered::as_str) else {
        return schema;
    };
    if depth > MAX_DEPTH {
        return schema;
    }
    let Some(pointer) = reference.strip_prefix('#') else {
        return schema;
    };
    let mut node = root;
    for token in pointer.split('/').filter(|t| !t.is_empty()) {
        let token = token.replace("~1", "/").replace("~0", "~");
        match node.get(&token) {
            Some(next) => node = next,
            None => return schema,
        }
    }
    resolve(root, node, depth + 1)
}

fn object_members(root: &Ordered, schema: &Ordered, depth: usize) -> Option<Vec<Member>> {
    let Some(Ordered::Object(properties)) = schema.get("properties") else {
        return None;
    };
    Some(
        properties
            .iter()
            .enumerate()
            .map(|(index, (name, property))| {
                Member::new(name, shape(root, property, depth + 1), true, index)
            })
            .collect(),
    )
}

fn shape(root: &Ordered, schema: &Ordered, depth: usize) -> Shape {
    if depth > MAX_DEPTH {
        return Shape::Utf8;
    }
    let schema = resolve(root, schema, depth);
    let ty = match schema.get("type") {
        Some(Ordered::Other(Json::String(t))) => t.as_str(),
        Some(Ordered::Array(types)) => {
            let mut named = types
                .iter()
                .filter_map(Ordered::as_str)
                .filter(|t| *t != "null");
            match (named.next(), named.next()) {
                (Some(one), None) => one,
                _ => return Shape::Utf8,
            }
        }
        _ => return Shape::Utf8,
    };
    match ty {
        "integer" => Shape::Prim(Prim::Int64),
        "number" => Shape::Prim(Prim::Float64),
        "boolean" => Shape::Prim(Prim::Bool),
        "string" if schema.get("contentEncoding").and_then(Ordered::as_str) == Some("base64") => {
            Shape::Binary
        }
        "object" => match object_members(root, schema, depth) {
            Some(members) if !members.is_empty() => Shape::Struct(members),
            _ => Shape::Utf8,
        },
        "array" => match schema.get("items") {
            Some(items @ Ordered::Object(_)) => {
                Shape::List(Box::new(shape(root, items, depth + 1)), true)
            }
            _ => Shape::Utf8,
        },
        // "string", "null" and unknown types: the text (JSON text for non-strings).
        _ => Shape::Utf8,
    }
}

/// Appends one JSON message to the columns.
pub(crate) fn append(data: &[u8], columns: &mut Columns) -> Result<(), String> {
    let value: Json = serde_json::from_slice(data).map_err(|e| format!("not valid JSON: {e}"))?;
    let Json::Object(object) = &value else {
        return Err("the message is not a JSON object".to_owned());
    };
    // Check the whole message before appending anything, so a bad message leaves no trace.
    for (k, member) in columns.members().iter().enumerate() {
        if let Some(v) = object.get(&member.name) {
            check(&member.shape, v).map_err(|e| format!("{}: {e}", member.name))?;
        }
        let _ = k;
    }
    for k in 0..columns.top.len() {
        let node = columns.top[k];
        let name = columns.members()[k].name.clone();
        let shape = columns.members()[k].shape.clone();
        append_value(columns, node, &shape, object.get(&name))?;
    }
    Ok(())
}

/// Whether `value` fits `shape` (null always does: every JSON column is nullable).
fn check(shape: &Shape, value: &Json) -> Result<(), String> {
    let ok = match (shape, value) {
        (_, Json::Null) => true,
        (Shape::Prim(Prim::Int64), Json::Number(n)) => n.as_i64().is_some() || is_integral(n),
        (Shape::Prim(Prim::Float64), Json::Number(_)) => true,
        (Shape::Prim(Prim::Bool), Json::Bool(_)) => true,
        (Shape::Binary, Json::String(s)) => {
            base64::engine::general_purpose::STANDARD.decode(s).is_ok()
        }
        (Shape::Utf8, _) => true,
        (Shape::Struct(members), Json::Object(map)) => {
            for member in members {
                if let Some(v) = map.get(&member.name) {
                    check(&member.shape, v).map_err(|e| format!("{}.{e}", member.name))?;
                }
            }
            true
        }
        (Shape::List(item, _), Json::Array(items)) => {
            for (i, v) in items.iter().enumerate() {
                check(item, v).map_err(|e| format!("[{i}]: {e}"))?;
            }
            true
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{value} does not match the schema ({})",
            shape_name(shape)
        ))
    }
}

fn is_integral(n: &serde_json::Number) -> bool {
    n.as_f64()
        .is_some_and(|f| f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64)
}

fn shape_name(shape: &Shape) -> &'static str {
    match shape {
        Shape::Prim(Prim::Int64) => "integer",
        Shape::Prim(Prim::Float64) => "number",
        Shape::Prim(Prim::Bool) => "boolean",
        Shape::Binary => "base64 string",
        Shape::Struct(_) => "object",
        Shape::List(..) => "array",
        _ => "string",
    }
}

fn append_value(
    columns: &mut Columns,
    node: usize,
    shape: &Shape,
    value: Option<&Json>,
) -> Result<(), String> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        columns.append_null(node);
        return Ok(());
    };
    match (shape, value) {
        (Shape::Struct(members), Json::Object(map)) => {
            columns.open(node);
            for (k, member) in members.iter().enumerate() {
                let Some(child) = columns.child(node, k) else {
                    return Err("a struct column lost a child".to_owned());
                };
                append_value(columns, child.node, &member.shape, map.get(&member.name))?;
            }
            return Ok(());
        }
        (Shape::List(item_shape, _), Json::Array(items)) => {
            let Some(item) = columns.item(node) else {
                return Err("a list column lost its items".to_owned());
            };
            for v in items {
                append_value(columns, item, item_shape, Some(v))?;
            }
            return columns.close_list(node).map_err(|e| e.to_string());
        }
        _ => {}
    }
    columns.valid(node);
    match (&mut columns.nodes[node].values, value) {
        (Values::Int64(c), Json::Number(n)) => {
            let v = n
                .as_i64()
                .or_else(|| n.as_f64().filter(|_| is_integral(n)).map(|f| f as i64))
                .ok_or_else(|| format!("{n} is not a 64-bit integer"))?;
            c.values.push(v);
        }
        (Values::Float64(c), Json::Number(n)) => c.values.push(n.as_f64().unwrap_or(f64::NAN)),
        (Values::Bool(b), Json::Bool(v)) => b.append(*v),
        (Values::Binary(b), Json::String(s)) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|e| format!("not base64: {e}"))?;
            b.append_value(bytes);
        }
        (Values::Utf8(b), Json::String(s)) => b.append_value(s),
        (Values::Utf8(b), other) => b.append_value(other.to_string()),
        (_, other) => {
            return Err(format!(
                "{other} does not match the schema ({})",
                shape_name(shape)
            ));
        }
    }
    Ok(())
}
