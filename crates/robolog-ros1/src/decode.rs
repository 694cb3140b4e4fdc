//! Decoding message bytes into a [`Tree`] by walking a compiled [`Plan`].

use robolog_framing::{LengthBound, check_len};

use crate::decoded::Decoded;
use crate::error::{Error, FieldPath, PathStep};
use crate::plan::{Count, Elem, FieldPlan, Group, MessagePlan, Op, Plan, Segment, Template};
use crate::value::{PrimitiveArray, Span, Tree, Value};

/// Arrays of zero-size elements (empty messages) take no bytes, so the data cannot bound their
/// counts; one message may produce at most this many nodes for such elements.
pub const MAX_EMPTY_NODES: usize = 1 << 20;

/// A message decodes to at most this many values per byte, plus [`MAX_EMPTY_NODES`]. Real
/// messages stay far below (an array of one-byte messages is 2 per byte); the bound stops a
/// hostile definition (messages nesting many empty messages) from turning a few bytes into
/// gigabytes of tree.
pub const MAX_VALUES_PER_BYTE: usize = 8;

/// Errors travel boxed inside the decoder so that the success path moves small results.
pub(crate) type Fail = Box<Error>;

impl Plan {
    /// Decodes one message. Strings and primitive arrays borrow from `data`.
    ///
    /// Bytes after the end of the message are not an error here; the result reports them
    /// ([`Decoded::trailing_bytes`]). Use [`Plan::decode_strict`] to reject them.
    pub fn decode<'p, 'a>(&'p self, data: &'a [u8]) -> Result<Decoded<'p, 'a>, Error> {
        // A capacity hint only: never more than the values the data can produce.
        let hint = self.top().min_nodes.min(
            data.len()
                .saturating_mul(MAX_VALUES_PER_BYTE)
                .saturating_add(64),
        );
        let mut tree = Tree {
            nodes: Vec::with_capacity(hint),
            root: Span::default(),
        };
        let used = self.decode_into(data, &mut tree)?;
        Ok(Decoded::new(self, tree, data.len() - used))
    }

    /// Like [`Plan::decode`], but bytes after the end of the message are an error
    /// ([`Error::TrailingBytes`]).
    pub fn decode_strict<'p, 'a>(&'p self, data: &'a [u8]) -> Result<Decoded<'p, 'a>, Error> {
        let decoded = self.decode(data)?;
        match decoded.trailing_bytes() {
            0 => Ok(decoded),
            count => Err(Error::TrailingBytes {
                offset: data.len() - count,
                count,
            }),
        }
    }

    /// Decodes one message into `tree`, reusing its allocation (the fastest way to decode many
    /// messages). Returns the number of bytes the message took; any bytes after that are left
    /// alone.
    pub fn decode_into<'a>(&self, data: &'a [u8], tree: &mut Tree<'a>) -> Result<usize, Error> {
        tree.clear();
        let top = self.top();
        let mut decoder = Decoder {
            plan: self,
            data,
            pos: 0,
            nodes: &mut tree.nodes,
            empty_budget: MAX_EMPTY_NODES,
            node_limit: data
                .len()
                .saturating_mul(MAX_VALUES_PER_BYTE)
                .saturating_add(MAX_EMPTY_NODES),
        };
        let len = top.fields.len();
        decoder.nodes.resize(len, PLACEHOLDER);
        let result = decoder.message_fields(0, 0);
        let used = decoder.pos;
        match result {
            Ok(()) => {
                tree.root = Span { start: 0, len };
                Ok(used)
            }
            Err(error) => {
                tree.clear();
                Err(*error)
            }
        }
    }
}

/// What reserved slots hold until the decoder fills them.
const PLACEHOLDER: Value<'static> = Value::Bool(false);

struct Decoder<'p, 'a, 'n> {
    plan: &'p Plan,
    data: &'a [u8],
    pos: usize,
    nodes: &'n mut Vec<Value<'a>>,
    empty_budget: usize,
    /// The most nodes this message may produce (see [`MAX_VALUES_PER_BYTE`]).
    node_limit: usize,
}

#[inline(always)]
fn array_at<const N: usize>(bytes: &[u8], offset: usize) -> [u8; N] {
    match bytes.get(offset..offset + N) {
        Some(slice) => slice.try_into().unwrap_or([0; N]),
        None => [0; N],
    }
}

/// The `N`-byte elements of a group of `count` primitives at `offset`.
#[inline(always)]
fn elements<const N: usize>(bytes: &[u8], offset: u32, count: usize) -> Result<&[[u8; N]], ()> {
    let start = offset as usize;
    let source = bytes.get(start..start + count * N).ok_or(())?;
    Ok(source.as_chunks::<N>().0)
}

/// Runs `$sink` on an iterator over the values of `$group`: one dispatch per group, then a
/// loop specialised for the group's type.
macro_rules! with_group_values {
    ($group:expr, $bytes:expr, $append_base:expr, |$values:ident| $sink:expr) => {{
        let group: &Group = $group;
        let bytes: &[u8] = $bytes;
        let count = group.count as usize;
        match group.op {
            Op::Float64(o) => {
                let $values = elements::<8>(bytes, o, count)?
                    .iter()
                    .map(|b| Value::Float64(f64::from_le_bytes(*b)));
                $sink
            }
            Op::Float32(o) => {
                let $values = elements::<4>(bytes, o, count)?
                    .iter()
                    .map(|b| Value::Float32(f32::from_le_bytes(*b)));
                $sink
            }
            Op::UInt32(o) => {
                let $values = elements::<4>(bytes, o, count)?
                    .iter()
                    .map(|b| Value::UInt32(u32::from_le_bytes(*b)));
                $sink
            }
            Op::Int32(o) => {
                let $values = elements::<4>(bytes, o, count)?
                    .iter()
                    .map(|b| Value::Int32(i32::from_le_bytes(*b)));
                $sink
            }
            Op::Time(o) => {
                let $values = elements::<8>(bytes, o, count)?.iter().map(|b| {
                    let raw = u64::from_le_bytes(*b);
                    Value::Time(crate::value::Time {
                        secs: raw as u32,
                        nsecs: (raw >> 32) as u32,
                    })
                });
                $sink
            }
            Op::Duration(o) => {
                let $values = elements::<8>(bytes, o, count)?.iter().map(|b| {
                    let raw = u64::from_le_bytes(*b);
                    Value::Duration(crate::value::Duration {
                        secs: raw as u32 as i32,
                        nsecs: (raw >> 32) as u32 as i32,
                    })
                });
                $sink
            }
            Op::Bool(o) => {
                let $values = elements::<1>(bytes, o, count)?
                    .iter()
                    .map(|b| Value::Bool(b[0] != 0));
                $sink
            }
            Op::Int8(o) => {
                let $values = elements::<1>(bytes, o, count)?
                    .iter()
                    .map(|b| Value::Int8(i8::from_le_bytes(*b)));
                $sink
            }
            Op::UInt8(o) => {
                let $values = elements::<1>(bytes, o, count)?
                    .iter()
                    .map(|b| Value::UInt8(b[0]));
                $sink
            }
            Op::Int16(o) => {
                let $values = elements::<2>(bytes, o, count)?
                    .iter()
                    .map(|b| Value::Int16(i16::from_le_bytes(*b)));
                $sink
            }
            Op::UInt16(o) => {
                let $values = elements::<2>(bytes, o, count)?
                    .iter()
                    .map(|b| Value::UInt16(u16::from_le_bytes(*b)));
                $sink
            }
            Op::Int64(o) => {
                let $values = elements::<8>(bytes, o, count)?
                    .iter()
                    .map(|b| Value::Int64(i64::from_le_bytes(*b)));
                $sink
            }
            Op::UInt64(o) => {
                let $values = elements::<8>(bytes, o, count)?
                    .iter()
                    .map(|b| Value::UInt64(u64::from_le_bytes(*b)));
                $sink
            }
            Op::Array { kind, offset, len } => {
                let (offset, len) = (offset as usize, len as usize);
                let array = bytes.get(offset..offset + len).ok_or(())?;
                let $values =
                    std::iter::once(Value::Array(PrimitiveArray::new_unchecked_len(kind, array)));
                $sink
            }
            Op::Message { rel, len } => {
                let $values = std::iter::once(Value::Message(Span {
                    start: $append_base + rel as usize,
                    len: len as usize,
                }));
                $sink
            }
            Op::Messages { rel, len } => {
                let $values = std::iter::once(Value::Messages(Span {
                    start: $append_base + rel as usize,
                    len: len as usize,
                }));
                $sink
            }
        }
    }};
}

/// Writes a group's values into slots reserved earlier.
#[inline(always)]
fn fill<'a>(
    slots: &mut [Value<'a>],
    group: &Group,
    bytes: &'a [u8],
    append_base: usize,
) -> Result<(), ()> {
    with_group_values!(group, bytes, append_base, |values| {
        for (slot, value) in slots.iter_mut().zip(values) {
            *slot = value;
        }
    });
    Ok(())
}

/// Appends a group's values.
#[inline(always)]
fn push<'a>(
    nodes: &mut Vec<Value<'a>>,
    group: &Group,
    bytes: &'a [u8],
    append_base: usize,
) -> Result<(), ()> {
    with_group_values!(group, bytes, append_base, |values| nodes.extend(values));
    Ok(())
}

/// Adds an outer path step to a boxed error without moving it out of its box.
pub(crate) fn within(mut error: Fail, step: PathStep) -> Fail {
    let inner = std::mem::replace(
        &mut *error,
        Error::TrailingBytes {
            offset: 0,
            count: 0,
        },
    );
    *error = inner.within(step);
    error
}

pub(crate) fn field_step(field: &FieldPlan) -> PathStep {
    PathStep::Field(field.name.to_string())
}

impl<'a> Decoder<'_, 'a, '_> {
    fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    fn truncated(&self, needed: u64) -> Fail {
        Box::new(Error::Truncated {
            path: FieldPath::root(),
            offset: self.pos,
            needed,
            available: self.remaining(),
        })
    }

    /// Fills the reserved slots `base..base + fields` with the fields of message `id`.
    fn message_fields(&mut self, id: usize, base: usize) -> Result<(), Fail> {
        let plan = self.plan;
        let message = plan.message(id);
        if let Some(template) = &message.template {
            return self
                .run(template, base)
                .map_err(|_| self.locate(message, 0, self.pos));
        }
        for segment in &message.segments {
            match segment {
                Segment::Run { first, template } => {
                    self.may_grow(template.ops.len())?;
                    let start = self.pos;
                    self.run(template, base + first)
                        .map_err(|_| self.locate(message, *first, start))?;
                }
                Segment::Field(index) => {
                    let field = &message.fields[*index];
                    let value = self
                        .field(field)
                        .map_err(|e| within(e, field_step(field)))?;
                    if let Some(slot) = self.nodes.get_mut(base + index) {
                        *slot = value;
                    }
                }
            }
        }
        Ok(())
    }

    /// Decodes a run of fixed-size fields into the slots from `slot`; nested nodes are
    /// appended. The only failure is too few bytes (the caller locates the field).
    #[inline]
    fn run(&mut self, template: &Template, slot: usize) -> Result<(), ()> {
        let end = self.pos.checked_add(template.size).ok_or(())?;
        let bytes = self.data.get(self.pos..end).ok_or(())?;
        let append_base = self.nodes.len();
        self.nodes
            .reserve(template.ops.len().saturating_sub(template.own));
        // Groups are in node order: the fields' own slots first, then the appended nodes.
        let (own, appended) = template
            .groups
            .split_at(template.own_groups.min(template.groups.len()));
        for group in own {
            let target = slot + group.node as usize;
            let slots = self
                .nodes
                .get_mut(target..target + group.count as usize)
                .ok_or(())?;
            fill(slots, group, bytes, append_base)?;
        }
        for group in appended {
            push(self.nodes, group, bytes, append_base)?;
        }
        self.pos = end;
        Ok(())
    }

    /// Appends a whole fixed-size message from its template and returns its span.
    #[inline]
    fn push_template(&mut self, template: &Template) -> Result<Span, ()> {
        let end = self.pos.checked_add(template.size).ok_or(())?;
        let bytes = self.data.get(self.pos..end).ok_or(())?;
        let start = self.nodes.len();
        let append_base = start + template.own;
        self.nodes.reserve(template.ops.len());
        for group in &template.groups {
            push(self.nodes, group, bytes, append_base)?;
        }
        self.pos = end;
        Ok(Span {
            start,
            len: template.own,
        })
    }

    /// Builds the error for a run of fixed-size fields of `message`, starting with field
    /// `first` at byte `start`, that does not fit: names the innermost field that is cut.
    fn locate(&self, message: &MessagePlan, first: usize, start: usize) -> Fail {
        let available = self.data.len().saturating_sub(start) as u64;
        let mut steps = Vec::new();
        let mut offset = start as u64;
        let mut avail = available;
        let mut current = message;
        let mut first = first;
        let needed = 'outer: loop {
            let mut consumed = 0u64;
            for field in current.fields.iter().skip(first) {
                let size = field.fixed_size.unwrap_or(u64::MAX);
                if consumed.saturating_add(size) <= avail {
                    consumed += size;
                    continue;
                }
                steps.push(field_step(field));
                let inner = avail - consumed;
                offset += consumed;
                match (field.elem, field.count) {
                    (Elem::Message(id), Count::One) => {
                        current = self.plan.message(id);
                        avail = inner;
                        first = 0;
                        continue 'outer;
                    }
                    (Elem::Message(id), Count::Fixed(_)) => {
                        let child = self.plan.message(id);
                        let element = child.fixed_size.unwrap_or(u64::MAX).max(1);
                        let index = inner / element;
                        steps.push(PathStep::Index(index));
                        offset += index * element;
                        current = child;
                        avail = inner - index * element;
                        first = 0;
                        continue 'outer;
                    }
                    (Elem::Prim(kind), Count::Fixed(_)) => {
                        let element = kind.size() as u64;
                        let index = inner / element;
                        steps.push(PathStep::Index(index));
                        offset += index * element;
                        avail = inner - index * element;
                        break 'outer element;
                    }
                    _ => {
                        avail = inner;
                        break 'outer size;
                    }
                }
            }
            // Every field fits: cannot happen for a run that failed its bounds check, but
            // report the run as a whole rather than panic.
            break size_of_run(current, first);
        };
        Box::new(Error::Truncated {
            path: FieldPath::from_steps(steps),
            offset: usize::try_from(offset).unwrap_or(usize::MAX),
            needed,
            available: usize::try_from(avail).unwrap_or(usize::MAX),
        })
    }

    /// Reads a `u32` count or length.
    #[inline]
    fn read_u32(&mut self) -> Result<u32, Fail> {
        let end = self.pos + 4;
        match self.data.get(self.pos..end) {
            Some(bytes) => {
                self.pos = end;
                Ok(u32::from_le_bytes(array_at(bytes, 0)))
            }
            None => Err(self.truncated(4)),
        }
    }

    /// Reads a count and checks that `count` elements of at least `element_min` bytes fit in
    /// what is left, before anything is sized from it.
    #[inline]
    fn read_count(&mut self, count: Count, element_min: u64) -> Result<usize, Fail> {
        let at = self.pos;
        let declared = match count {
            Count::Fixed(n) => n,
            _ => u64::from(self.read_u32()?),
        };
        let needed = declared.saturating_mul(element_min);
        check_len(
            needed,
            LengthBound::Remaining(self.remaining() as u64),
            at as u64,
            "array",
        )
        .map_err(|_| {
            Box::new(Error::LengthPastEnd {
                path: FieldPath::root(),
                offset: at,
                length: declared,
                needed,
                available: self.remaining(),
            })
        })?;
        usize::try_from(declared).map_err(|_| self.truncated(needed))
    }

    #[inline]
    fn take(&mut self, len: usize) -> Result<&'a [u8], Fail> {
        let end = self
            .pos
            .checked_add(len)
            .ok_or_else(|| self.truncated(len as u64))?;
        let data: &'a [u8] = self.data;
        match data.get(self.pos..end) {
            Some(bytes) => {
                self.pos = end;
                Ok(bytes)
            }
            None => Err(self.truncated(len as u64)),
        }
    }

    #[inline]
    fn string(&mut self) -> Result<&'a [u8], Fail> {
        let len = self.read_count(Count::Variable, 1)?;
        self.take(len)
    }

    /// Checks that `count` more nodes stay within the message's limit.
    #[inline]
    fn may_grow(&self, count: usize) -> Result<(), Fail> {
        if self.nodes.len().saturating_add(count) > self.node_limit {
            return Err(Box::new(Error::TooManyValues {
                path: FieldPath::root(),
                offset: self.pos,
                limit: self.node_limit,
            }));
        }
        Ok(())
    }

    /// Reserves `count` slots at the end of the arena.
    fn reserve(&mut self, count: usize) -> Result<Span, Fail> {
        self.may_grow(count)?;
        let start = self.nodes.len();
        self.nodes.resize(start + count, PLACEHOLDER);
        Ok(Span { start, len: count })
    }

    /// Decodes a field that is not part of a run.
    fn field(&mut self, field: &FieldPlan) -> Result<Value<'a>, Fail> {
        match (field.elem, field.count) {
            (Elem::Prim(kind), Count::One) => {
                let bytes = self.take(kind.size())?;
                Ok(kind.read(bytes).unwrap_or(PLACEHOLDER))
            }
            (Elem::Prim(kind), count) => {
                let len = self.read_count(count, kind.size() as u64)?;
                let bytes = self.take(len * kind.size())?;
                Ok(Value::Array(PrimitiveArray::new_unchecked_len(kind, bytes)))
            }
            (Elem::String, Count::One) => Ok(Value::String(self.string()?)),
            (Elem::String, count) => {
                let len = self.read_count(count, 4)?;
                let span = self.reserve(len)?;
                for i in 0..len {
                    let value = self
                        .string()
                        .map_err(|e| within(e, PathStep::Index(i as u64)))?;
                    if let Some(slot) = self.nodes.get_mut(span.start + i) {
                        *slot = Value::String(value);
                    }
                }
                Ok(Value::Strings(span))
            }
            (Elem::Message(id), Count::One) => Ok(Value::Message(self.message(id)?)),
            (Elem::Message(id), count) => {
                let plan = self.plan;
                let child = plan.message(id);
                let at = self.pos;
                let len = self.read_count(count, child.min_size)?;
                if child.min_size == 0 {
                    let per_element = child.template.as_ref().map_or(1, |t| t.ops.len() + 1);
                    let nodes = len.saturating_mul(per_element);
                    if nodes > self.empty_budget {
                        return Err(Box::new(Error::TooManyEmptyElements {
                            path: FieldPath::root(),
                            offset: at,
                            count: len as u64,
                        }));
                    }
                    self.empty_budget -= nodes;
                }
                let span = self.reserve(len)?;
                for i in 0..len {
                    let element = self
                        .message(id)
                        .map_err(|e| within(e, PathStep::Index(i as u64)))?;
                    if let Some(slot) = self.nodes.get_mut(span.start + i) {
                        *slot = Value::Message(element);
                    }
                }
                Ok(Value::Messages(span))
            }
        }
    }

    /// Decodes a nested message into new nodes and returns its span.
    fn message(&mut self, id: usize) -> Result<Span, Fail> {
        let plan = self.plan;
        let child = plan.message(id);
        if let Some(template) = &child.template {
            self.may_grow(template.ops.len())?;
            let start = self.pos;
            return self
                .push_template(template)
                .map_err(|_| self.locate(child, 0, start));
        }
        let span = self.reserve(child.fields.len())?;
        self.message_fields(id, span.start)?;
        Ok(span)
    }
}

/// The size of the fixed-size fields of `message` from `first` on.
fn size_of_run(message: &MessagePlan, first: usize) -> u64 {
    message
        .fields
        .iter()
        .skip(first)
        .map(|f| f.fixed_size.unwrap_or(0))
        .fold(0u64, u64::saturating_add)
}
