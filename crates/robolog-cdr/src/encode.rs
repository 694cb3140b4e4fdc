//! Encoding a [`Tree`] to CDR bytes, checked against the plan's types and bounds.

use crate::decode::{Fail, field_step, within};
use crate::error::{Error, FieldPath, PathStep};
use crate::header::{Encapsulation, HEADER_LEN};
use crate::plan::{Count, Elem, FieldPlan, Plan, alignment, padding};
use crate::value::{ByteOrder, PrimitiveArray, PrimitiveKind, Span, Tree, Value, WideString};

impl Plan {
    /// Encodes a tree (decoded, or built with [`Tree::push_message`] and friends) as a
    /// little-endian XCDR1 message (`CDR_LE`, what ROS 2 middlewares write), header included.
    ///
    /// Every value must have its field's type (`byte` and `char` are [`Value::UInt8`]), fixed
    /// arrays their exact length, bounded strings and sequences at most their bound, and
    /// sequences and strings at most `u32::MAX` elements. Encoding a decoded tree gives back the
    /// decoded bytes exactly, except where decoding was lenient: a `bool` is written as 0 or 1,
    /// a string is always NUL-terminated, the byte of an empty message is 0, padding is zeros
    /// and no trailing padding is written.
    pub fn encode(&self, tree: &Tree<'_>) -> Result<Vec<u8>, Error> {
        self.encode_as(tree, Encapsulation::CdrLe)
    }

    /// Like [`Plan::encode`], with the given encapsulation (byte order, XCDR version).
    pub fn encode_as(
        &self,
        tree: &Tree<'_>,
        encapsulation: Encapsulation,
    ) -> Result<Vec<u8>, Error> {
        let hint = usize::try_from(self.min_size()).unwrap_or(0).min(1 << 16);
        let mut out = Vec::with_capacity(HEADER_LEN + hint);
        self.encode_into(tree, encapsulation, &mut out)?;
        Ok(out)
    }

    /// Appends the encoding of `tree` (header included) to `out` (see [`Plan::encode`]). On
    /// error, `out` keeps what was written before the call and may hold part of the message.
    pub fn encode_into(
        &self,
        tree: &Tree<'_>,
        encapsulation: Encapsulation,
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        out.extend_from_slice(&encapsulation.header());
        Encoder {
            plan: self,
            tree,
            origin: out.len(),
            out,
            order: encapsulation.byte_order(),
            max_align: encapsulation.max_align(),
        }
        .message(0, tree.root())
        .map_err(|e| *e)
    }
}

struct Encoder<'p, 't, 'a, 'o> {
    plan: &'p Plan,
    tree: &'t Tree<'a>,
    out: &'o mut Vec<u8>,
    /// Where the payload starts in `out`: alignment counts from here.
    origin: usize,
    order: ByteOrder,
    max_align: usize,
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

fn over_bound(length: usize, bound: u64) -> Fail {
    Box::new(Error::BoundExceeded {
        path: FieldPath::root(),
        offset: None,
        length: length as u64,
        bound,
    })
}

fn element_name(elem: Elem) -> String {
    match elem {
        Elem::Prim(kind) => kind.as_str().to_owned(),
        Elem::String => "string".to_owned(),
        Elem::WString => "wstring".to_owned(),
        Elem::Message(_) => "message".to_owned(),
    }
}

macro_rules! put {
    ($self:ident, $value:expr) => {{
        let value = $value;
        match $self.order {
            ByteOrder::LittleEndian => $self.out.extend_from_slice(&value.to_le_bytes()),
            ByteOrder::BigEndian => $self.out.extend_from_slice(&value.to_be_bytes()),
        }
    }};
}

impl Encoder<'_, '_, '_, '_> {
    fn align(&mut self, align: usize) {
        let pad = padding((self.out.len() - self.origin) as u64, align as u64) as usize;
        self.out.resize(self.out.len() + pad, 0);
    }

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
        if message.empty {
            self.out.push(0);
        }
        for (field, value) in message.fields.iter().zip(values) {
            self.field(field, value)
                .map_err(|e| within(e, field_step(field)))?;
        }
        Ok(())
    }

    /// Writes a sequence's count (checking its bound) or checks a fixed array's length.
    fn count(&mut self, field: &FieldPlan, len: usize) -> Result<(), Fail> {
        match field.count {
            Count::Fixed(n) if n != len as u64 => Err(wrong_length(n, len)),
            Count::Fixed(_) | Count::One => Ok(()),
            Count::Sequence => {
                if let Some(bound) = field.sequence_bound
                    && len as u64 > bound
                {
                    return Err(over_bound(len, bound));
                }
                self.length(len)
            }
        }
    }

    fn length(&mut self, len: usize) -> Result<(), Fail> {
        let len = u32::try_from(len).map_err(|_| {
            Box::new(Error::TooLong {
                path: FieldPath::root(),
                length: len as u64,
            })
        })?;
        self.align(4);
        put!(self, len);
        Ok(())
    }

    fn string(&mut self, bytes: &[u8], bound: Option<u64>) -> Result<(), Fail> {
        if let Some(bound) = bound
            && bytes.len() as u64 > bound
        {
            return Err(over_bound(bytes.len(), bound));
        }
        self.length(bytes.len().saturating_add(1))?;
        self.out.extend_from_slice(bytes);
        self.out.push(0);
        Ok(())
    }

    fn wstring(&mut self, wide: WideString<'_>, bound: Option<u64>) -> Result<(), Fail> {
        if let Some(bound) = bound
            && wide.len() as u64 > bound
        {
            return Err(over_bound(wide.len(), bound));
        }
        self.length(wide.len())?;
        if wide.byte_order() == self.order {
            self.out.extend_from_slice(wide.as_bytes());
        } else {
            for unit in wide.units() {
                put!(self, unit);
            }
        }
        Ok(())
    }

    /// Writes a primitive array's elements (after aligning for the first one).
    fn array(&mut self, array: PrimitiveArray<'_>) {
        let kind = array.kind();
        if array.is_empty() {
            return;
        }
        self.align(alignment(kind, self.max_align));
        if kind == PrimitiveKind::Bool {
            self.out
                .extend(array.as_bytes().iter().map(|b| u8::from(*b != 0)));
        } else if array.byte_order() == self.order || kind.size() == 1 {
            self.out.extend_from_slice(array.as_bytes());
        } else {
            for chunk in array.as_bytes().chunks_exact(kind.size()) {
                self.out.extend(chunk.iter().rev());
            }
        }
    }

    fn field(&mut self, field: &FieldPlan, value: &Value<'_>) -> Result<(), Fail> {
        match (field.elem, field.count, *value) {
            (Elem::Prim(kind), Count::One, value) => self.primitive(kind, &value, field),
            (Elem::Prim(kind), _, Value::Array(array)) if array.kind() == kind => {
                self.count(field, array.len())?;
                self.array(array);
                Ok(())
            }
            (Elem::String, Count::One, Value::String(bytes)) => {
                self.string(bytes, field.string_bound)
            }
            (Elem::WString, Count::One, Value::WString(wide)) => {
                self.wstring(wide, field.string_bound)
            }
            (Elem::String | Elem::WString, count, Value::Strings(span)) if count != Count::One => {
                let tree = self.tree;
                let items = tree
                    .nodes
                    .get(span.range())
                    .ok_or_else(|| wrong_length(span.len as u64, 0))?;
                self.count(field, items.len())?;
                for (i, item) in items.iter().enumerate() {
                    match (field.elem, item) {
                        (Elem::String, Value::String(bytes)) => {
                            self.string(bytes, field.string_bound)
                        }
                        (Elem::WString, Value::WString(wide)) => {
                            self.wstring(*wide, field.string_bound)
                        }
                        (elem, other) => Err(mismatch(element_name(elem), other)),
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
                self.count(field, items.len())?;
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
            (_, _, other) => Err(mismatch(field.type_text.to_string(), &other)),
        }
    }

    fn primitive(
        &mut self,
        kind: PrimitiveKind,
        value: &Value<'_>,
        field: &FieldPlan,
    ) -> Result<(), Fail> {
        self.align(alignment(kind, self.max_align));
        match (kind, *value) {
            (PrimitiveKind::Bool, Value::Bool(v)) => self.out.push(u8::from(v)),
            (PrimitiveKind::Int8, Value::Int8(v)) => put!(self, v),
            (PrimitiveKind::UInt8, Value::UInt8(v)) => self.out.push(v),
            (PrimitiveKind::Int16, Value::Int16(v)) => put!(self, v),
            (PrimitiveKind::UInt16, Value::UInt16(v)) => put!(self, v),
            (PrimitiveKind::Int32, Value::Int32(v)) => put!(self, v),
            (PrimitiveKind::UInt32, Value::UInt32(v)) => put!(self, v),
            (PrimitiveKind::Int64, Value::Int64(v)) => put!(self, v),
            (PrimitiveKind::UInt64, Value::UInt64(v)) => put!(self, v),
            (PrimitiveKind::Float32, Value::Float32(v)) => put!(self, v),
            (PrimitiveKind::Float64, Value::Float64(v)) => put!(self, v),
            (_, other) => return Err(mismatch(field.type_text.to_string(), &other)),
        }
        Ok(())
    }
}
