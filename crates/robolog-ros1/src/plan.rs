//! Compiling a message definition into a decode plan, once per type.
//!
//! A [`Plan`] holds one [`MessagePlan`] per message type reachable from the top type. Each
//! message plan is a list of segments: a *run* of consecutive fixed-size fields (nested
//! fixed-size messages flattened into it) that decodes with one bounds check and reads at
//! precomputed offsets, or a single variable-size field (string, variable array, message with a
//! variable part). Decoding walks the segments; the definition text is never looked at again.

use std::collections::HashMap;

use robolog_msg::{
    ArrayKind, Dialect, ElementType, MessageDefinition, PrimitiveType, Registry, TypeName,
};

use crate::error::Error;
use crate::value::PrimitiveKind;

/// The deepest message nesting a plan accepts. Decoding recurses once per level, so this bounds
/// the stack a hostile definition can make the decoder use; real ROS types nest less than 10
/// levels.
pub const MAX_NESTING: usize = 100;

/// A run template is kept below these sizes; bigger fixed-size fields are decoded as segments
/// of their own (as fast, and it keeps plans small for `uint8[1000000]` fields).
const MAX_TEMPLATE_BYTES: u64 = 1 << 20;
const MAX_TEMPLATE_NODES: usize = 4096;

/// What one element of a field is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Elem {
    Prim(PrimitiveKind),
    String,
    Message(usize),
}

/// How many elements a field has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Count {
    One,
    Fixed(u64),
    Variable,
}

/// One field of a message type, with its wire sizes.
#[derive(Debug, Clone)]
pub(crate) struct FieldPlan {
    pub(crate) name: Box<str>,
    /// The field's JSON key after a comma (`,"name":`), made once for every message rendered.
    #[cfg(feature = "serde")]
    pub(crate) json_key: Box<[u8]>,
    pub(crate) elem: Elem,
    pub(crate) count: Count,
    /// The type as written in the definition (for messages).
    pub(crate) type_text: Box<str>,
    /// The field's size when every message has the same one.
    pub(crate) fixed_size: Option<u64>,
    /// The fewest bytes the field can take (saturated at `u64::MAX` for impossible sizes).
    pub(crate) min_size: u64,
}

/// One node that a template produces: a value read at a fixed byte offset, or a span of
/// nodes that the same template produces. Primitives have one variant each, so evaluating an
/// op is a single dispatch (this loop is the hot path of decoding small messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Bool(u32),
    Int8(u32),
    UInt8(u32),
    Int16(u32),
    UInt16(u32),
    Int32(u32),
    UInt32(u32),
    Int64(u32),
    UInt64(u32),
    Float32(u32),
    Float64(u32),
    Time(u32),
    Duration(u32),
    Array {
        kind: PrimitiveKind,
        offset: u32,
        len: u32,
    },
    Message {
        rel: u32,
        len: u32,
    },
    Messages {
        rel: u32,
        len: u32,
    },
}

impl Op {
    /// The primitive type and offset of a primitive op.
    pub(crate) fn primitive_at(self) -> Option<(PrimitiveKind, u32)> {
        Some(match self {
            Op::Bool(o) => (PrimitiveKind::Bool, o),
            Op::Int8(o) => (PrimitiveKind::Int8, o),
            Op::UInt8(o) => (PrimitiveKind::UInt8, o),
            Op::Int16(o) => (PrimitiveKind::Int16, o),
            Op::UInt16(o) => (PrimitiveKind::UInt16, o),
            Op::Int32(o) => (PrimitiveKind::Int32, o),
            Op::UInt32(o) => (PrimitiveKind::UInt32, o),
            Op::Int64(o) => (PrimitiveKind::Int64, o),
            Op::UInt64(o) => (PrimitiveKind::UInt64, o),
            Op::Float32(o) => (PrimitiveKind::Float32, o),
            Op::Float64(o) => (PrimitiveKind::Float64, o),
            Op::Time(o) => (PrimitiveKind::Time, o),
            Op::Duration(o) => (PrimitiveKind::Duration, o),
            _ => return None,
        })
    }

    fn primitive(kind: PrimitiveKind, offset: u32) -> Op {
        match kind {
            PrimitiveKind::Bool => Op::Bool(offset),
            PrimitiveKind::Int8 => Op::Int8(offset),
            PrimitiveKind::UInt8 => Op::UInt8(offset),
            PrimitiveKind::Int16 => Op::Int16(offset),
            PrimitiveKind::UInt16 => Op::UInt16(offset),
            PrimitiveKind::Int32 => Op::Int32(offset),
            PrimitiveKind::UInt32 => Op::UInt32(offset),
            PrimitiveKind::Int64 => Op::Int64(offset),
            PrimitiveKind::UInt64 => Op::UInt64(offset),
            PrimitiveKind::Float32 => Op::Float32(offset),
            PrimitiveKind::Float64 => Op::Float64(offset),
            PrimitiveKind::Time => Op::Time(offset),
            PrimitiveKind::Duration => Op::Duration(offset),
        }
    }

    /// The op of a nested message placed `bytes` further into the data and `nodes` further
    /// into the arena.
    fn moved(self, bytes: u32, nodes: u32) -> Op {
        match self {
            Op::Bool(o) => Op::Bool(o + bytes),
            Op::Int8(o) => Op::Int8(o + bytes),
            Op::UInt8(o) => Op::UInt8(o + bytes),
            Op::Int16(o) => Op::Int16(o + bytes),
            Op::UInt16(o) => Op::UInt16(o + bytes),
            Op::Int32(o) => Op::Int32(o + bytes),
            Op::UInt32(o) => Op::UInt32(o + bytes),
            Op::Int64(o) => Op::Int64(o + bytes),
            Op::UInt64(o) => Op::UInt64(o + bytes),
            Op::Float32(o) => Op::Float32(o + bytes),
            Op::Float64(o) => Op::Float64(o + bytes),
            Op::Time(o) => Op::Time(o + bytes),
            Op::Duration(o) => Op::Duration(o + bytes),
            Op::Array { kind, offset, len } => Op::Array {
                kind,
                offset: offset + bytes,
                len,
            },
            Op::Message { rel, len } => Op::Message {
                rel: rel + nodes,
                len,
            },
            Op::Messages { rel, len } => Op::Messages {
                rel: rel + nodes,
                len,
            },
        }
    }
}

/// The flattened layout of fixed-size fields: `own` nodes (the fields themselves) followed by
/// the nodes of nested messages, whose spans are relative to the end of the own nodes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Template {
    pub(crate) size: usize,
    pub(crate) own: usize,
    /// One op per node.
    pub(crate) ops: Vec<Op>,
    /// The ops again, with consecutive primitives of one type at consecutive offsets merged
    /// (`x, y, z, w` of a quaternion is one group): decoding dispatches once per group and
    /// fills the group's nodes in a loop specialised for the type.
    pub(crate) groups: Vec<Group>,
    /// How many groups fill the own nodes (they come first).
    pub(crate) own_groups: usize,
}

/// `count` nodes from node `node` of a template: `op` for the first, the same primitive at the
/// following offsets for the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Group {
    pub(crate) op: Op,
    pub(crate) node: u32,
    pub(crate) count: u32,
}

/// Merges runs of same-type primitives that sit back to back in the data and in the arena,
/// never across the boundary between own and appended nodes (they land in different places).
fn group_ops(ops: &[Op], own: usize) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for (node, op) in ops.iter().enumerate() {
        if let Some(last) = groups.last_mut()
            && node != own
            && let (Some((kind, offset)), Some((last_kind, last_offset))) =
                (op.primitive_at(), last.op.primitive_at())
            && kind == last_kind
            && offset as usize == last_offset as usize + last.count as usize * kind.size()
        {
            last.count += 1;
            continue;
        }
        groups.push(Group {
            op: *op,
            node: node as u32,
            count: 1,
        });
    }
    groups
}

/// One step of a message's decode program.
#[derive(Debug, Clone)]
pub(crate) enum Segment {
    /// Fields `first..first + template.own`, all fixed-size.
    Run { first: usize, template: Template },
    /// One field decoded on its own.
    Field(usize),
}

/// The compiled layout of one message type.
#[derive(Debug, Clone)]
pub(crate) struct MessagePlan {
    pub(crate) name: TypeName,
    pub(crate) fields: Vec<FieldPlan>,
    pub(crate) fixed_size: Option<u64>,
    pub(crate) min_size: u64,
    /// The whole message as one template, when it is fixed-size and small enough.
    pub(crate) template: Option<Template>,
    pub(crate) segments: Vec<Segment>,
    /// How many nodes the smallest message produces (capacity hint).
    pub(crate) min_nodes: usize,
}

impl MessagePlan {
    pub(crate) fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| &*f.name == name)
    }
}

/// A message type compiled for decoding and encoding ROS 1 messages.
///
/// Compile once per type (the facade keeps a cache keyed by type name and definition), then
/// call [`Plan::decode`], [`Plan::encode`] or [`Plan::projection`] for every message.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Index 0 is the top-level type.
    pub(crate) messages: Vec<MessagePlan>,
}

impl Plan {
    /// Compiles `type_name` and everything it uses from `registry`.
    ///
    /// Fails when a type is missing, unparsable or recursive, when a definition is ROS 2, or
    /// when messages nest more than [`MAX_NESTING`] levels deep.
    pub fn compile(registry: &Registry, type_name: &TypeName) -> Result<Plan, Error> {
        let dependencies = registry.dependencies(type_name)?;
        let mut names: Vec<&TypeName> = Vec::with_capacity(dependencies.len() + 1);
        names.push(type_name);
        names.extend(dependencies.iter());
        let ids: HashMap<&TypeName, usize> =
            names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let definitions = names
            .iter()
            .map(|name| registry.require(name))
            .collect::<Result<Vec<&MessageDefinition>, _>>()?;

        let order = postorder(&definitions, &ids);
        let mut plans: Vec<Option<MessagePlan>> = vec![None; definitions.len()];
        let mut depths = vec![0usize; definitions.len()];
        for id in order {
            let definition = definitions[id];
            if definition.dialect != Dialect::Ros1 {
                return Err(Error::NotRos1 {
                    type_name: definition.name.clone(),
                });
            }
            let plan = compile_message(definition, &ids, &plans)?;
            depths[id] = 1 + plan
                .fields
                .iter()
                .filter_map(|f| match f.elem {
                    Elem::Message(child) => Some(depths[child]),
                    _ => None,
                })
                .max()
                .unwrap_or(0);
            if depths[id] > MAX_NESTING {
                return Err(Error::TooDeep {
                    type_name: type_name.clone(),
                    depth: depths[id],
                    limit: MAX_NESTING,
                });
            }
            plans[id] = Some(plan);
        }
        Ok(Plan {
            messages: plans.into_iter().flatten().collect(),
        })
    }

    /// Parses a ROS 1 definition bundle (the `message_definition` of a bag connection, or a
    /// `ros1msg` MCAP schema) and compiles its top-level type `type_name`.
    ///
    /// ```
    /// let plan = robolog_ros1::Plan::from_bundle("my_pkg/Pair", "int32 a\nstring b\n")?;
    /// assert_eq!(plan.type_name().to_string(), "my_pkg/Pair");
    /// # Ok::<(), robolog_ros1::Error>(())
    /// ```
    pub fn from_bundle(type_name: &str, bundle: &str) -> Result<Plan, Error> {
        let name = TypeName::parse(type_name)?;
        let registry = Registry::from_bundle(&name, bundle, Dialect::Ros1)?;
        Plan::compile(&registry, &name)
    }

    /// The top-level type.
    pub fn type_name(&self) -> &TypeName {
        &self.top().name
    }

    /// The size of every message when the type has no variable part (no string, no variable
    /// array), e.g. 24 for `geometry_msgs/Vector3`.
    pub fn fixed_size(&self) -> Option<u64> {
        self.top().fixed_size
    }

    /// The smallest possible message, in bytes.
    pub fn min_size(&self) -> u64 {
        self.top().min_size
    }

    /// The top-level field names, in definition order.
    pub fn field_names(&self) -> impl Iterator<Item = &str> {
        self.top().fields.iter().map(|f| &*f.name)
    }

    pub(crate) fn top(&self) -> &MessagePlan {
        // `compile` always produces the top type at index 0.
        &self.messages[0]
    }

    pub(crate) fn message(&self, id: usize) -> &MessagePlan {
        &self.messages[id]
    }
}

/// Type ids ordered so that every type comes after the types its fields use. The registry has
/// already rejected cycles; the walk is iterative because definitions are untrusted.
fn postorder(definitions: &[&MessageDefinition], ids: &HashMap<&TypeName, usize>) -> Vec<usize> {
    let children = |id: usize| -> Vec<usize> {
        definitions[id]
            .direct_dependencies()
            .into_iter()
            .filter_map(|name| ids.get(name).copied())
            .collect()
    };
    let mut done = vec![false; definitions.len()];
    let mut order = Vec::with_capacity(definitions.len());
    let mut stack: Vec<(usize, Vec<usize>, usize)> = vec![(0, children(0), 0)];
    done[0] = true;
    while let Some((id, kids, next)) = stack.last_mut() {
        if let Some(&child) = kids.get(*next) {
            *next += 1;
            if !done[child] {
                done[child] = true;
                let grandchildren = children(child);
                stack.push((child, grandchildren, 0));
            }
        } else {
            order.push(*id);
            stack.pop();
        }
    }
    order
}

fn primitive_kind(primitive: PrimitiveType) -> Option<PrimitiveKind> {
    Some(match primitive.ros1_wire_type() {
        PrimitiveType::Bool => PrimitiveKind::Bool,
        PrimitiveType::Int8 => PrimitiveKind::Int8,
        PrimitiveType::UInt8 => PrimitiveKind::UInt8,
        PrimitiveType::Int16 => PrimitiveKind::Int16,
        PrimitiveType::UInt16 => PrimitiveKind::UInt16,
        PrimitiveType::Int32 => PrimitiveKind::Int32,
        PrimitiveType::UInt32 => PrimitiveKind::UInt32,
        PrimitiveType::Int64 => PrimitiveKind::Int64,
        PrimitiveType::UInt64 => PrimitiveKind::UInt64,
        PrimitiveType::Float32 => PrimitiveKind::Float32,
        PrimitiveType::Float64 => PrimitiveKind::Float64,
        PrimitiveType::Time => PrimitiveKind::Time,
        PrimitiveType::Duration => PrimitiveKind::Duration,
        _ => return None,
    })
}

fn compile_message(
    definition: &MessageDefinition,
    ids: &HashMap<&TypeName, usize>,
    plans: &[Option<MessagePlan>],
) -> Result<MessagePlan, Error> {
    let unsupported = |field: &robolog_msg::Field| Error::UnsupportedType {
        type_name: definition.name.clone(),
        field: field.name.clone(),
        ty: field.ty.to_string(),
    };
    let mut fields = Vec::with_capacity(definition.fields.len());
    for field in &definition.fields {
        let elem = match &field.ty.element {
            ElementType::Primitive(PrimitiveType::String) => Elem::String,
            ElementType::Primitive(p) => {
                Elem::Prim(primitive_kind(*p).ok_or_else(|| unsupported(field))?)
            }
            ElementType::BoundedString { .. } => return Err(unsupported(field)),
            ElementType::Message(name) => {
                Elem::Message(ids.get(name).copied().ok_or_else(|| {
                    robolog_msg::Error::MissingType {
                        missing: name.clone(),
                        needed_by: Some(definition.name.clone()),
                    }
                })?)
            }
        };
        let count = match field.ty.array {
            ArrayKind::Scalar => Count::One,
            ArrayKind::Fixed(n) => Count::Fixed(n),
            ArrayKind::Variable => Count::Variable,
            ArrayKind::Bounded(_) => return Err(unsupported(field)),
        };
        let (element_fixed, element_min) = match elem {
            Elem::Prim(kind) => (Some(kind.size() as u64), kind.size() as u64),
            Elem::String => (None, 4),
            Elem::Message(id) => {
                let child = plans.get(id).and_then(Option::as_ref);
                (
                    child.and_then(|c| c.fixed_size),
                    child.map_or(0, |c| c.min_size),
                )
            }
        };
        let (fixed_size, min_size) = match count {
            Count::One => (element_fixed, element_min),
            Count::Fixed(n) => (
                element_fixed.and_then(|size| size.checked_mul(n)),
                element_min.saturating_mul(n),
            ),
            Count::Variable => (None, 4),
        };
        // A fixed size that overflows u64 is left "variable" with a saturated (impossible)
        // minimum, so decoding reports a truncation instead of wrapping around.
        fields.push(FieldPlan {
            name: field.name.as_str().into(),
            #[cfg(feature = "serde")]
            json_key: robolog_msg::json::key_text(&field.name),
            elem,
            count,
            type_text: field.type_text.as_str().into(),
            fixed_size,
            min_size,
        });
    }
    let fixed_size = fields.iter().try_fold(0u64, |total, f| {
        f.fixed_size.and_then(|s| total.checked_add(s))
    });
    let min_size = fields
        .iter()
        .fold(0u64, |total, f| total.saturating_add(f.min_size));
    // Saturating: a hostile definition can nest empty messages into astronomical counts; the
    // decoder caps the values of a message anyway (see `MAX_VALUES_PER_BYTE`).
    let min_nodes = fields
        .iter()
        .filter_map(|f| match (f.elem, f.count) {
            (Elem::Message(id), Count::One) => {
                plans.get(id).and_then(Option::as_ref).map(|c| c.min_nodes)
            }
            _ => None,
        })
        .fold(fields.len(), usize::saturating_add);

    let template = match fixed_size {
        Some(size) if size <= MAX_TEMPLATE_BYTES => {
            let mut builder = TemplateBuilder::default();
            fields
                .iter()
                .all(|f| builder.add(f, plans))
                .then(|| builder.finish())
        }
        _ => None,
    };

    let mut segments = Vec::new();
    let mut run: Option<(usize, TemplateBuilder)> = None;
    for (index, field) in fields.iter().enumerate() {
        if let Some((_, builder)) = run.as_mut()
            && builder.add(field, plans)
        {
            continue;
        }
        if let Some((first, builder)) = run.take() {
            segments.push(Segment::Run {
                first,
                template: builder.finish(),
            });
        }
        let mut builder = TemplateBuilder::default();
        if builder.add(field, plans) {
            run = Some((index, builder));
        } else {
            segments.push(Segment::Field(index));
        }
    }
    if let Some((first, builder)) = run {
        segments.push(Segment::Run {
            first,
            template: builder.finish(),
        });
    }

    Ok(MessagePlan {
        name: definition.name.clone(),
        fields,
        fixed_size,
        min_size,
        template,
        segments,
        min_nodes,
    })
}

/// Builds a [`Template`] field by field, refusing fields that would make it too large.
#[derive(Debug, Default)]
struct TemplateBuilder {
    size: u64,
    own: Vec<Op>,
    appended: Vec<Op>,
}

impl TemplateBuilder {
    /// Adds `field` when it is fixed-size and fits; returns false (and changes nothing)
    /// otherwise.
    fn add(&mut self, field: &FieldPlan, plans: &[Option<MessagePlan>]) -> bool {
        let Some(size) = field.fixed_size else {
            return false;
        };
        let Some(end) = self
            .size
            .checked_add(size)
            .filter(|e| *e <= MAX_TEMPLATE_BYTES)
        else {
            return false;
        };
        if self.nodes() + 1 > MAX_TEMPLATE_NODES {
            return false;
        }
        // Offsets and lengths below fit u32 because the template stays under 1 MiB.
        let offset = self.size as u32;
        let child_template = |id: usize| {
            plans
                .get(id)
                .and_then(Option::as_ref)
                .and_then(|c| c.template.as_ref())
        };
        let op = match (field.elem, field.count) {
            (Elem::Prim(kind), Count::One) => Op::primitive(kind, offset),
            (Elem::Prim(kind), Count::Fixed(_)) => Op::Array {
                kind,
                offset,
                len: size as u32,
            },
            (Elem::Message(id), Count::One) => {
                let Some(child) = child_template(id) else {
                    return false;
                };
                if self.nodes() + child.ops.len() + 1 > MAX_TEMPLATE_NODES {
                    return false;
                }
                let rel = self.appended.len() as u32;
                embed(child, offset, &mut self.appended);
                Op::Message {
                    rel,
                    len: child.own as u32,
                }
            }
            (Elem::Message(id), Count::Fixed(n)) => {
                let Some(child) = child_template(id) else {
                    return false;
                };
                let Some(element_nodes) = child.ops.len().checked_add(1) else {
                    return false;
                };
                let fits = usize::try_from(n)
                    .ok()
                    .and_then(|n| n.checked_mul(element_nodes))
                    .is_some_and(|nodes| self.nodes() + nodes < MAX_TEMPLATE_NODES);
                if !fits {
                    return false;
                }
                let count = n as usize;
                let rel = self.appended.len();
                self.appended
                    .extend(std::iter::repeat_n(Op::Message { rel: 0, len: 0 }, count));
                for i in 0..count {
                    let child_rel = self.appended.len() as u32;
                    self.appended[rel + i] = Op::Message {
                        rel: child_rel,
                        len: child.own as u32,
                    };
                    embed(child, offset + (i * child.size) as u32, &mut self.appended);
                }
                Op::Messages {
                    rel: rel as u32,
                    len: count as u32,
                }
            }
            _ => return false,
        };
        self.own.push(op);
        self.size = end;
        true
    }

    fn nodes(&self) -> usize {
        self.own.len() + self.appended.len()
    }

    fn finish(self) -> Template {
        let own = self.own.len();
        let mut ops = self.own;
        ops.extend(self.appended);
        let groups = group_ops(&ops, own);
        let own_groups = groups
            .iter()
            .take_while(|g| (g.node as usize) < own)
            .count();
        Template {
            size: self.size as usize,
            own,
            groups,
            own_groups,
            ops,
        }
    }
}

/// Appends a nested message's template, moving its byte offsets to where the message sits and
/// its spans to where its nodes land.
fn embed(child: &Template, byte_offset: u32, appended: &mut Vec<Op>) {
    let base = (appended.len() + child.own) as u32;
    appended.extend(child.ops.iter().map(|op| op.moved(byte_offset, base)));
}
