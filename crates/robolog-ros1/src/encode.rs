//! Encoding a [`Tree`] to ROS 1 bytes, checked against the plan's types.

use crate::decode::{Fail, field_step, within};
use crate::error::{Error, FieldPath, PathStep};
use crate::plan::{Count, Elem, FieldPlan, Plan};
use crate::value::{PrimitiveKind, Span, Tree, Value};

impl Plan {
    /// Encodes a tree (decoded, or built with [`Tree::push_message`] and friends) as a ROS 1
    /// message.
    ///
    /// Every value must have its field's type (`byte` is [`Value::Int8`], `char` is
    /// [`Value::UInt8`]), fixed arrays their exact length, and variable arrays and strings at
    /// most `u32::MAX` elements. Encoding a decoded tree gives back the decoded bytes exactly,
    /// with one exception that ROS itself makes: a scalar `bool` is written as 0 or 1 (a `bool`
    /// byte of 2 decodes as true and encodes as 1; bools inside arrays keep their bytes).
    pub fn encode(&self, tree: &Tree<'_>) -> Result<Vec<u8>, Error> {
        let mut out =
            Vec::with_capacity(usize::try_from(self.min_size()).unwrap_or(0).min(1 << 16));
        self.encode_into(tree, &mut out)?;
        Ok(out)
    }

    /// Appends the encoding of `tree` to `out` (see [`Plan::encode`]). On error, `out` keeps
    /// what was written before the call and may hold part of the message.
    pub fn encode_into(&self, tree: &Tree<'_>, out: &mut Vec<u8>) -> Result<(), Error> {
        Encoder {
            plan: self,
            tree,
            out,
        }
        .message(0, tree.root())
        .map_err(|e| *e)
    }
}

struct Encoder<'p, 't, 'a, 'o> {
    plan: &'p Plan,
    tree: &'t Tree<'a>,
    out: &'o mut Vec<u8>,
}

fn mismatch(expected: String, found: &Value<'_>) -> Fail {
    Box::new(Error::TypeMismatch {
        path: FieldPath::root(),
        expected,
        found: found.kind_name().to_owned(),
    })
}

fn wrong_length(expected: u64, found: usize) -> Fail {
    Box::new(Error::WrongLength {
        path: FieldPath::root(),
        expected,
        found: found as u64,
    })
}

fn describe(field: &FieldPlan) -> String {
    field.type_text.to_string()
}

fn element_name(elem: Elem) -> String {
    match elem {
        Elem::Prim(kind) => kind.as_str().to_owned(),
        Elem::String => "string".to_owned(),
        Elem::Message(_) => "message".to_owned(),
    }
}

impl Encoder<'_, '_, '_, '_> {
    fn message(&mut self, id: usize, span: Span) -> Result<(), Fail> {
        let plan = self.plan;
        let message = plan.message(id);
        let tree = self.tree;
        let values = tree
            .nodes
            .get(span.range())
            .ok_or_else(|| wrong_length(message.fields.len() as u64, 0))?;
        if values.len() != message.fields.len() {
            return Err(wrong_length(message.fields.len() as u64, values.len()));
        }
        for (field, value) in message.fields.iter().zip(values) {
            self.field(field, value)
                .map_err(|e| within(e, field_step(field)))?;
        }
        Ok(())
    }

    fn count(&mut self, count: Count, len: usize) -> Result<(), Fail> {
        match count {
            Count::Fixed(n) if n != len as u64 => Err(wrong_length(n, len)),
            Count::Fixed(_) => Ok(()),
            _ => {
                let len = u32::try_from(len).map_err(|_| {
                    Box::new(Error::TooLong {
                        path: FieldPath::root(),
                        length: len as u64,
                    })
                })?;
                self.out.extend_from_slice(&len.to_le_bytes());
                Ok(())
            }
        }
    }

    fn string(&mut self, bytes: &[u8]) -> Result<(), Fail> {
        self.count(Count::Variable, bytes.len())?;
        self.out.extend_from_slice(bytes);
        Ok(())
    }

    fn field(&mut self, field: &FieldPlan, value: &Value<'_>) -> Result<(), Fail> {
        match (field.elem, field.count, *value) {
            (Elem::Prim(kind), Count::One, value) => self.primitive(kind, &value, field),
            (Elem::Prim(kind), count, Value::Array(array)) if array.kind() == kind => {
                self.count(count, array.len())?;
                self.out.extend_from_slice(array.as_bytes());
                Ok(())
            }
            (Elem::String, Count::One, Value::String(bytes)) => self.string(bytes),
            (Elem::String, count, Value::Strings(span)) if count != Count::One => {
                let tree = self.tree;
                let items = tree
                    .nodes
                    .get(span.range())
                    .ok_or_else(|| wrong_length(span.len as u64, 0))?;
                self.count(count, items.len())?;
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(bytes) => self.string(bytes),
                        other => Err(mismatch("string".to_owned(), other)),
                    }
                    .map_err(|e| within(e, PathStep::Index(i as u64)))?;
                }
                Ok(())
            }
            (Elem::Message(id), Count::One, Value::Message(span)) => self.message(id, span),
            (Elem::Message(id), count, Value::Messages(span)) if count != Count::One => {
                let tree = self.tree;
                let items = tree
                    .nodes
                    .get(span.range())
                    .ok_or_else(|| wrong_length(span.len as u64, 0))?;
                self.count(count, items.len())?;
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::Message(element) => self.message(id, *element),
                        other => Err(mismatch(self.plan.message(id).name.to_string(), other)),
                    }
                    .map_err(|e| within(e, PathStep::Index(i as u64)))?;
                }
                Ok(())
            }
            (elem, _, Value::Array(array)) if matches!(elem, Elem::Prim(_)) => Err(mismatch(
                format!("{}[]", element_name(elem)),
                &Value::Array(array),
            )),
            (_, _, other) => Err(mismatch(describe(field), &other)),
        }
    }

    fn primitive(
        &mut self,
        kind: PrimitiveKind,
        value: &Value<'_>,
        field: &FieldPlan,
    ) -> Result<(), Fail> {
        let out = &mut *self.out;
        match (kind, *value) {
            (PrimitiveKind::Bool, Value::Bool(v)) => out.push(u8::from(v)),
            (PrimitiveKind::Int8, Value::Int8(v)) => out.extend_from_slice(&v.to_le_bytes()),
            (PrimitiveKind::UInt8, Value::UInt8(v)) => out.push(v),
            (PrimitiveKind::Int16, Value::Int16(v)) => out.extend_from_slice(&v.to_le_bytes()),
            (PrimitiveKind::UInt16, Value::UInt16(v)) => out.extend_from_slice(&v.to_le_bytes()),
            (PrimitiveKind::Int32, Value::Int32(v)) => out.extend_from_slice(&v.to_le_bytes()),
            (PrimitiveKind::UInt32, Value::UInt32(v)) => out.extend_from_slice(&v.to_le_bytes()),
            (PrimitiveKind::Int64, Value::Int64(v)) => out.extend_from_slice(&v.to_le_bytes()),
            (PrimitiveKind::UInt64, Value::UInt64(v)) => out.extend_from_slice(&v.to_le_bytes()),
            (PrimitiveKind::Float32, Value::Float32(v)) => out.extend_from_slice(&v.to_le_bytes()),
            (PrimitiveKind::Float64, Value::Float64(v)) => out.extend_from_slice(&v.to_le_bytes()),
            (PrimitiveKind::Time, Value::Time(t)) => {
                out.extend_from_slice(&t.secs.to_le_bytes());
                out.extend_from_slice(&t.nsecs.to_le_bytes());
            }
            (PrimitiveKind::Duration, Value::Duration(d)) => {
                out.extend_from_slice(&d.secs.to_le_bytes());
                out.extend_from_slice(&d.nsecs.to_le_bytes());
            }
            (_, other) => return Err(mismatch(describe(field), &other)),
        }
        Ok(())
    }
}
