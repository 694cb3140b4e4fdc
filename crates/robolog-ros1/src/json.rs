//! JSON rendering of decoded messages (the `serde` feature).
//!
//! The rules, chosen so that every value survives the trip and any JSON reader can take it:
//!
//! - a message is an object whose keys are the field names **in definition order**;
//! - `time` and `duration` are `{"sec": …, "nsec": …}` (the numbers as on the wire: unsigned
//!   for `time`, signed for `duration`);
//! - `uint8[]`, `uint8[N]`, `char[]` and `char[N]` are one base64 string (standard alphabet,
//!   with padding), because they are images and point clouds, not lists of numbers; `byte[]`
//!   (signed `int8` in ROS 1) stays a list of numbers;
//! - integers, 64-bit ones included, are JSON numbers, exact (serde_json writes `u64`/`i64`
//!   digits, it never goes through `f64`); a reader that parses numbers as doubles loses
//!   precision above 2⁵³, which is the reader's choice to make;
//! - floats are numbers in the shortest form that reads back to the same value (`float32`
//!   values in the shortest `f32` form, so `0.1f32` is `0.1`); NaN and ±infinity, which JSON
//!   has no numbers for, are the strings `"NaN"`, `"Infinity"` and `"-Infinity"`;
//! - strings are JSON strings; bytes that are not UTF-8 become U+FFFD;
//! - `bool` is `true`/`false`.

use base64::Engine as _;
use robolog_msg::json;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use crate::decoded::{Decoded, MessageRef};
use crate::error::Error;
use crate::plan::{Elem, Plan};
use crate::value::{Element, PrimitiveArray, PrimitiveKind, Span, Tree, Value};

impl Decoded<'_, '_> {
    /// The message as JSON text (see the module rules).
    ///
    /// ```
    /// let plan = robolog_ros1::Plan::from_bundle("p/M", "time t\nuint8[] data\nfloat32 x\n")?;
    /// let bytes = [1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 1, 2, 3, 0, 0, 0xc0, 0x7f];
    /// assert_eq!(
    ///     plan.decode(&bytes)?.to_json(),
    ///     r#"{"t":{"sec":1,"nsec":2},"data":"AQID","x":"NaN"}"#
    /// );
    /// # Ok::<(), robolog_ros1::Error>(())
    /// ```
    pub fn to_json(&self) -> String {
        self.root().to_json()
    }

    /// Writes the message as JSON to `writer`.
    pub fn write_json(&self, writer: impl std::io::Write) -> std::io::Result<()> {
        self.root().write_json(writer)
    }
}

impl MessageRef<'_, '_> {
    /// The message as JSON text (see the [`json` rules](crate#json)).
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        self.append_json(&mut out);
        // UTF-8 by construction: every piece is ASCII or comes from a `str`.
        String::from_utf8(out).unwrap_or_default()
    }

    /// Writes the message as JSON to `writer`.
    pub fn write_json(&self, mut writer: impl std::io::Write) -> std::io::Result<()> {
        let mut out = Vec::new();
        self.append_json(&mut out);
        writer.write_all(&out)
    }

    /// Appends the message as JSON to `out`: the same text as [`MessageRef::to_json`], for a
    /// caller that renders many messages into one reused buffer.
    pub fn append_json(&self, out: &mut Vec<u8>) {
        Render {
            plan: self.plan(),
            tree: self.tree(),
            out,
        }
        .fields(self.id(), self.values());
    }
}

/// Renders values straight into a byte buffer. The [`Serialize`] implementations below write
/// the same text through serde; this is the path for bulk output, which spends most of its
/// time formatting numbers and would otherwise spend as much again in the serializer's calls.
struct Render<'t, 'a, 'o> {
    plan: &'t Plan,
    tree: &'t Tree<'a>,
    out: &'o mut Vec<u8>,
}

impl Render<'_, '_, '_> {
    /// The fields of a message of type `id` as an object.
    fn fields(&mut self, id: usize, values: &[Value<'_>]) {
        let message = self.plan.message(id);
        self.out.push(b'{');
        for (i, (field, value)) in message.fields.iter().zip(values).enumerate() {
            json::push_key_text(self.out, &field.json_key, i == 0);
            self.value(field.elem, *value);
        }
        self.out.push(b'}');
    }

    /// One value; `elem` is its element type (for nested messages).
    fn value(&mut self, elem: Elem, value: Value<'_>) {
        let out = &mut *self.out;
        match value {
            Value::Bool(v) => json::push_bool(out, v),
            Value::Int8(v) => json::push_i64(out, i64::from(v)),
            Value::UInt8(v) => json::push_u64(out, u64::from(v)),
            Value::Int16(v) => json::push_i64(out, i64::from(v)),
            Value::UInt16(v) => json::push_u64(out, u64::from(v)),
            Value::Int32(v) => json::push_i64(out, i64::from(v)),
            Value::UInt32(v) => json::push_u64(out, u64::from(v)),
            Value::Int64(v) => json::push_i64(out, v),
            Value::UInt64(v) => json::push_u64(out, v),
            Value::Float32(v) => json::push_f32(out, v),
            Value::Float64(v) => json::push_f64(out, v),
            Value::Time(t) => push_sec_nsec(out, i64::from(t.secs), i64::from(t.nsecs)),
            Value::Duration(d) => push_sec_nsec(out, i64::from(d.secs), i64::from(d.nsecs)),
            Value::String(bytes) => json::push_lossy(out, bytes),
            Value::Array(array) => push_array(out, array),
            Value::Message(span) => {
                if let Elem::Message(id) = elem {
                    self.fields(id, self.tree.span(span));
                } else {
                    out.extend_from_slice(b"null");
                }
            }
            Value::Strings(span) | Value::Messages(span) => {
                out.push(b'[');
                for (i, item) in self.tree.span(span).iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.value(elem, *item);
                }
                self.out.push(b']');
            }
        }
    }
}

/// A `time` or `duration`: `{"sec":…,"nsec":…}`.
fn push_sec_nsec(out: &mut Vec<u8>, sec: i64, nsec: i64) {
    out.extend_from_slice(b"{\"sec\":");
    json::push_i64(out, sec);
    out.extend_from_slice(b",\"nsec\":");
    json::push_i64(out, nsec);
    out.push(b'}');
}

/// A primitive array: `uint8`/`char` as base64, anything else as a list (the element type is
/// matched once, not per element).
fn push_array(out: &mut Vec<u8>, array: PrimitiveArray<'_>) {
    fn list<T: Element>(
        out: &mut Vec<u8>,
        array: PrimitiveArray<'_>,
        mut push: impl FnMut(&mut Vec<u8>, T),
    ) {
        out.push(b'[');
        for (i, value) in array.iter_as::<T>().into_iter().flatten().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            push(out, value);
        }
        out.push(b']');
    }
    match array.kind() {
        PrimitiveKind::UInt8 => json::push_base64(out, array.as_bytes()),
        PrimitiveKind::Bool => list(out, array, json::push_bool),
        PrimitiveKind::Int8 => list(out, array, |o, v: i8| json::push_i64(o, v.into())),
        PrimitiveKind::Int16 => list(out, array, |o, v: i16| json::push_i64(o, v.into())),
        PrimitiveKind::UInt16 => list(out, array, |o, v: u16| json::push_u64(o, v.into())),
        PrimitiveKind::Int32 => list(out, array, |o, v: i32| json::push_i64(o, v.into())),
        PrimitiveKind::UInt32 => list(out, array, |o, v: u32| json::push_u64(o, v.into())),
        PrimitiveKind::Int64 => list(out, array, json::push_i64),
        PrimitiveKind::UInt64 => list(out, array, json::push_u64),
        PrimitiveKind::Float32 => list(out, array, json::push_f32),
        PrimitiveKind::Float64 => list(out, array, json::push_f64),
        PrimitiveKind::Time => list(out, array, |o, t: crate::Time| {
            push_sec_nsec(o, i64::from(t.secs), i64::from(t.nsecs))
        }),
        PrimitiveKind::Duration => list(out, array, |o, d: crate::Duration| {
            push_sec_nsec(o, i64::from(d.secs), i64::from(d.nsecs))
        }),
    }
}

impl Plan {
    /// Renders a tree decoded (or built) for this plan as JSON; fails when the tree does not
    /// have the plan's shape.
    pub fn tree_to_json(&self, tree: &Tree<'_>) -> Result<String, Error> {
        let mut probe = Vec::new();
        self.encode_into(tree, &mut probe)?;
        Ok(self.view(tree).to_json())
    }
}

impl Serialize for Decoded<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.root().serialize(serializer)
    }
}

impl Serialize for MessageRef<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let message = self.plan().message(self.id());
        let values = self.values();
        let mut map = serializer.serialize_map(Some(values.len()))?;
        for (field, value) in message.fields.iter().zip(values) {
            map.serialize_entry(
                &*field.name,
                &Json {
                    plan: self.plan(),
                    tree: self.tree(),
                    elem: field.elem,
                    value: *value,
                },
            )?;
        }
        map.end()
    }
}

/// One value with what it needs to render: the element type (for nested messages) and the
/// tree (for spans).
struct Json<'t, 'a> {
    plan: &'t Plan,
    tree: &'t Tree<'a>,
    elem: Elem,
    value: Value<'a>,
}

struct Float(f64, bool);

impl Serialize for Float {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Float(value, single) = *self;
        if value.is_nan() {
            serializer.serialize_str("NaN")
        } else if value == f64::INFINITY {
            serializer.serialize_str("Infinity")
        } else if value == f64::NEG_INFINITY {
            serializer.serialize_str("-Infinity")
        } else if single {
            serializer.serialize_f32(value as f32)
        } else {
            serializer.serialize_f64(value)
        }
    }
}

struct SecNsec(i64, i64);

impl Serialize for SecNsec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("sec", &self.0)?;
        map.serialize_entry("nsec", &self.1)?;
        map.end()
    }
}

struct Elements<'a>(PrimitiveArray<'a>);

impl Serialize for Elements<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let array = self.0;
        if array.kind() == PrimitiveKind::UInt8 {
            let text = base64::engine::general_purpose::STANDARD.encode(array.as_bytes());
            return serializer.serialize_str(&text);
        }
        let mut seq = serializer.serialize_seq(Some(array.len()))?;
        for value in array.iter() {
            seq.serialize_element(&Scalar(value))?;
        }
        seq.end()
    }
}

/// A value that needs no tree (primitives, strings, primitive arrays).
struct Scalar<'a>(Value<'a>);

impl Serialize for Scalar<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Bool(v) => serializer.serialize_bool(v),
            Value::Int8(v) => serializer.serialize_i8(v),
            Value::UInt8(v) => serializer.serialize_u8(v),
            Value::Int16(v) => serializer.serialize_i16(v),
            Value::UInt16(v) => serializer.serialize_u16(v),
            Value::Int32(v) => serializer.serialize_i32(v),
            Value::UInt32(v) => serializer.serialize_u32(v),
            Value::Int64(v) => serializer.serialize_i64(v),
            Value::UInt64(v) => serializer.serialize_u64(v),
            Value::Float32(v) => Float(f64::from(v), true).serialize(serializer),
            Value::Float64(v) => Float(v, false).serialize(serializer),
            Value::Time(t) => SecNsec(i64::from(t.secs), i64::from(t.nsecs)).serialize(serializer),
            Value::Duration(d) => {
                SecNsec(i64::from(d.secs), i64::from(d.nsecs)).serialize(serializer)
            }
            Value::String(bytes) => serializer.serialize_str(&String::from_utf8_lossy(bytes)),
            Value::Array(array) => Elements(array).serialize(serializer),
            // Spans need the tree; `Json` handles them.
            Value::Strings(_) | Value::Message(_) | Value::Messages(_) => {
                serializer.serialize_unit()
            }
        }
    }
}

impl Json<'_, '_> {
    fn nested(&self, span: Span) -> Nested<'_, '_> {
        Nested {
            plan: self.plan,
            tree: self.tree,
            elem: self.elem,
            span,
        }
    }
}

/// A message, or the elements of a string or message array.
struct Nested<'t, 'a> {
    plan: &'t Plan,
    tree: &'t Tree<'a>,
    elem: Elem,
    span: Span,
}

impl Serialize for Json<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.value {
            Value::Message(span) => self.nested(span).serialize_message(serializer),
            Value::Strings(span) | Value::Messages(span) => {
                let nested = self.nested(span);
                let items = self.tree.span(span);
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    match *item {
                        Value::Message(element) => seq.serialize_element(&Message(Nested {
                            span: element,
                            ..nested.copy()
                        }))?,
                        other => seq.serialize_element(&Scalar(other))?,
                    }
                }
                seq.end()
            }
            other => Scalar(other).serialize(serializer),
        }
    }
}

struct Message<'t, 'a>(Nested<'t, 'a>);

impl Serialize for Message<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.copy().serialize_message(serializer)
    }
}

impl<'t, 'a> Nested<'t, 'a> {
    fn copy(&self) -> Nested<'t, 'a> {
        Nested {
            plan: self.plan,
            tree: self.tree,
            elem: self.elem,
            span: self.span,
        }
    }

    fn serialize_message<S: Serializer>(self, serializer: S) -> Result<S::Ok, S::Error> {
        let Elem::Message(id) = self.elem else {
            return serializer.serialize_unit();
        };
        let message = self.plan.message(id);
        let values = self.tree.span(self.span);
        let mut map = serializer.serialize_map(Some(values.len()))?;
        for (field, value) in message.fields.iter().zip(values) {
            map.serialize_entry(
                &*field.name,
                &Json {
                    plan: self.plan,
                    tree: self.tree,
                    elem: field.elem,
                    value: *value,
                },
            )?;
        }
        map.end()
    }
}
