//! Compiling a message definition into a decode plan, once per type.
//!
//! A [`Plan`] holds one [`MessagePlan`] per message type reachable from the top type. Besides
//! the fields, each message plan keeps what makes little-endian XCDR1 (every ROS 2 recording)
//! fast: its fields cut into segments, each a *run* of consecutive fixed-layout fields (no
//! string, no sequence, nested fixed-layout messages flattened into it) or a single other
//! field. Where a run's values sit depends on the alignment phase it starts at (CDR aligns
//! every primitive to its size, counted from the start of the payload), so a run has one
//! [`Template`] per phase: values at precomputed offsets, read with one bounds check. Strings,
//! short runs and the nested messages made of them are merged into [`Linear`] steps instead,
//! read value after value with the alignment computed as they go (a string makes the phase of
//! what follows unknown until the message is read). Big-endian and XCDR2 payloads, and strict
//! decoding, walk the fields one by one instead.

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

/// A run template is kept below these sizes; bigger fixed-layout fields are decoded as segments
/// of their own (as fast, and it keeps plans small for `uint8[1000000]` fields).
const MAX_TEMPLATE_BYTES: u64 = 1 << 20;
const MAX_TEMPLATE_NODES: usize = 4096;

/// Alignment phases are payload offsets modulo this (the largest XCDR1 alignment).
pub(crate) const PHASES: usize = 8;

/// What one element of a field is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Elem {
    Prim(PrimitiveKind),
    String,
    WString,
    Message(usize),
}

/// How many elements a field has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Count {
    One,
    Fixed(u64),
    /// A sequence, bounded (`T[<=N]`) or not (`T[]`): a `u32` count on the wire.
    Sequence,
}

/// One field of a message type, with what decoding needs to know about its size.
#[derive(Debug, Clone)]
pub(crate) struct FieldPlan {
    pub(crate) name: Box<str>,
    /// The field's JSON key after a comma (`,"name":`), made once for every message rendered.
    #[cfg(feature = "serde")]
    pub(crate) json_key: Box<[u8]>,
    pub(crate) elem: Elem,
    pub(crate) count: Count,
    /// The type as written in the definition.
    pub(crate) type_text: Box<str>,
    /// The bound of a bounded sequence (`T[<=N]`).
    pub(crate) sequence_bound: Option<u64>,
    /// The bound of bounded string elements (`string<=N`, `wstring<=N`).
    pub(crate) string_bound: Option<u64>,
    /// The fewest bytes an element takes, padding not counted (saturated at `u64::MAX`).
    pub(crate) element_min: u64,
    /// The fewest bytes the field takes, padding not counted (saturated).
    pub(crate) min_size: u64,
    /// The field's size for each alignment phase, when it has no string or sequence inside.
    pub(crate) layout: Option<Layout>,
}

/// A fixed layout's size in bytes (padding included, saturated at `u64::MAX`) for each start
/// phase: `xcdr1[p]` when the field starts at a payload offset `≡ p (mod 8)`, `xcdr2[p]` the
/// same with XCDR2's 4-byte alignment of 8-byte values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) xcdr1: [u64; PHASES],
    pub(crate) xcdr2: [u64; PHASES],
}

impl Layout {
    /// Nothing: 0 bytes from every phase.
    pub(crate) const EMPTY: Layout = Layout {
        xcdr1: [0; PHASES],
        xcdr2: [0; PHASES],
    };

    pub(crate) fn size(&self, phase: usize, xcdr2: bool) -> u64 {
        let sizes = if xcdr2 { &self.xcdr2 } else { &self.xcdr1 };
        sizes[phase % PHASES]
    }

    /// `self`, then `next` right after it.
    pub(crate) fn then(&self, next: &Layout) -> Layout {
        let chain = |first: &[u64; PHASES], second: &[u64; PHASES]| {
            std::array::from_fn(|start| {
                let at = first[start];
                at.saturating_add(second[(start as u64).wrapping_add(at) as usize % PHASES])
            })
        };
        Layout {
            xcdr1: chain(&self.xcdr1, &next.xcdr1),
            xcdr2: chain(&self.xcdr2, &next.xcdr2),
        }
    }
}

/// The padding before a value of alignment `align` (1, 2, 4 or 8) at payload offset `offset`.
#[inline]
pub(crate) fn padding(offset: u64, align: u64) -> u64 {
    // Alignments are powers of two: a mask instead of a division.
    debug_assert!(align.is_power_of_two());
    offset.wrapping_neg() & (align - 1)
}

/// The alignment of a primitive: its size, at most `max_align` (8 in XCDR1, 4 in XCDR2).
#[inline]
pub(crate) fn alignment(kind: PrimitiveKind, max_align: usize) -> usize {
    kind.size().min(max_align)
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
    Array {
        kind: PrimitiveKind,
        offset: u32,
        len: u32,
    },
    /// A nested message whose `len` fields are the appended nodes from `rel` on.
    Message {
        rel: u32,
        len: u32,
    },
    /// A fixed array of `len` messages, whose elements are the appended nodes from `rel` on.
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
        }
    }
}

/// The flattened layout of fixed-layout fields for one start phase: `own` nodes (the fields
/// themselves) followed by the nodes of nested messages, whose spans are relative to the end of
/// the own nodes. Offsets are relative to where the run starts.
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
    /// No nested nodes and no two values merged into a group: one op per field, read one by
    /// one (the common shape of short runs between strings).
    pub(crate) flat: bool,
}

/// One template per start phase that gives a different layout: `templates[p % len]`, where
/// `len` (1, 2, 4 or 8) is the largest alignment inside.
#[derive(Debug, Clone)]
pub(crate) struct Templates(pub(crate) Box<[Template]>);

impl Templates {
    #[inline]
    pub(crate) fn at(&self, offset: usize) -> &Template {
        // `len` is a power of two and never 0 (see `RunBuilder::finish`).
        let index = offset & (self.0.len() - 1);
        &self.0[index]
    }
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

/// One step of a message's little-endian XCDR1 decode program; `slot` is the field's index
/// (the first field's, for a run).
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// Fields `slot..slot + own`, all of fixed layout.
    Run { slot: usize, templates: Templates },
    /// An unbounded `string`.
    String { slot: usize },
    /// An unbounded sequence of a primitive.
    Primitives { slot: usize, kind: PrimitiveKind },
    /// A nested message with a variable part.
    Message { slot: usize, id: usize },
    /// An unbounded sequence of messages.
    Messages { slot: usize, id: usize },
    /// Fields `slot..slot + fields`, read one after the other with the alignment computed as
    /// it goes (see [`Linear`]).
    Linear { slot: usize, linear: Linear },
    /// Anything else (bounds to check, wide strings, string arrays, fixed arrays of variable
    /// messages): decoded field by field.
    Field { slot: usize },
}

impl Step {
    /// The step for field `slot` when it is not part of a run.
    fn of(slot: usize, field: &FieldPlan) -> Step {
        match (
            field.elem,
            field.count,
            field.sequence_bound,
            field.string_bound,
        ) {
            (Elem::String, Count::One, _, None) => Step::String { slot },
            (Elem::Prim(kind), Count::Sequence, None, _) => Step::Primitives { slot, kind },
            (Elem::Message(id), Count::One, _, _) => Step::Message { slot, id },
            (Elem::Message(id), Count::Sequence, None, _) => Step::Messages { slot, id },
            _ => Step::Field { slot },
        }
    }
}

/// Fields read in one pass, one [`Piece`] after the other, with the alignment computed as it
/// goes: strings, sequences of primitives, short runs of primitives and nested messages made
/// of nothing else (a `std_msgs/Header`, a `PointField`). A message of this kind in a sequence
/// is decoded element after element by one loop over its pieces, without choosing among the
/// per-phase templates that a string before a run makes necessary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Linear {
    /// The pieces in wire order, each with the node it fills: a field's slot (`0..fields`), or
    /// with [`NESTED`] set, a value of a nested message (`0..nested`, in preorder: the order the
    /// field-by-field walk appends them in).
    pub(crate) pieces: Box<[(Piece, u32)]>,
    /// The fields themselves (the slots the step fills).
    pub(crate) fields: usize,
    /// The values of nested messages, appended after the arena's nodes.
    pub(crate) nested: usize,
}

/// The flag of a [`Linear`] target that is a nested message's value.
pub(crate) const NESTED: u32 = 1 << 31;

/// One value of a [`Linear`] step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece {
    Bool,
    Int8,
    UInt8,
    Int16,
    UInt16,
    Int32,
    UInt32,
    Int64,
    UInt64,
    Float32,
    Float64,
    /// An unbounded `string`.
    String,
    /// An unbounded sequence of a primitive.
    Sequence(PrimitiveKind),
    /// A fixed array of `len` primitives.
    Array {
        kind: PrimitiveKind,
        len: u32,
    },
    /// A nested message whose `fields` fields are the nested values from `first` on (its
    /// pieces follow).
    Nested {
        fields: u32,
        first: u32,
    },
}

/// Runs of fixed-layout fields with at most this many pieces join a linear step; longer runs
/// keep their templates, whose groups read many values of one type in one loop.
const MAX_LINEAR_RUN: usize = 8;

/// A message type with more pieces than this is not inlined into linear steps.
const MAX_LINEAR_PIECES: usize = 32;

impl Piece {
    /// The piece of a primitive, a fixed array of primitives, an unbounded string or an
    /// unbounded sequence of primitives.
    fn of(field: &FieldPlan) -> Option<Piece> {
        Some(match (field.elem, field.count) {
            (Elem::Prim(kind), Count::One) => match kind {
                PrimitiveKind::Bool => Piece::Bool,
                PrimitiveKind::Int8 => Piece::Int8,
                PrimitiveKind::UInt8 => Piece::UInt8,
                PrimitiveKind::Int16 => Piece::Int16,
                PrimitiveKind::UInt16 => Piece::UInt16,
                PrimitiveKind::Int32 => Piece::Int32,
                PrimitiveKind::UInt32 => Piece::UInt32,
                PrimitiveKind::Int64 => Piece::Int64,
                PrimitiveKind::UInt64 => Piece::UInt64,
                PrimitiveKind::Float32 => Piece::Float32,
                PrimitiveKind::Float64 => Piece::Float64,
            },
            (Elem::Prim(kind), Count::Fixed(n)) => Piece::Array {
                kind,
                len: u32::try_from(n)
                    .ok()
                    .filter(|n| u64::from(*n) * kind.size() as u64 <= MAX_TEMPLATE_BYTES)?,
            },
            (Elem::Prim(kind), Count::Sequence) if field.sequence_bound.is_none() => {
                Piece::Sequence(kind)
            }
            (Elem::String, Count::One) if field.string_bound.is_none() => Piece::String,
            _ => return None,
        })
    }
}

impl Linear {
    fn new() -> Linear {
        Linear {
            pieces: Box::default(),
            fields: 0,
            nested: 0,
        }
    }

    /// `next`'s pieces after `self`'s.
    fn then(&self, next: &Linear) -> Option<Linear> {
        let fields = u32::try_from(self.fields).ok()?;
        let nested = u32::try_from(self.nested).ok()?;
        let mut pieces = self.pieces.to_vec();
        for &(piece, to) in &next.pieces {
            let piece = match piece {
                Piece::Nested { fields, first } => Piece::Nested {
                    fields,
                    first: first.checked_add(nested)?,
                },
                other => other,
            };
            let to = if to & NESTED == 0 {
                to.checked_add(fields)?
            } else {
                to.checked_add(nested)?
            };
            pieces.push((piece, to));
        }
        let linear = Linear {
            pieces: pieces.into(),
            fields: self.fields.checked_add(next.fields)?,
            nested: self.nested.checked_add(next.nested)?,
        };
        // Targets keep clear of the flag.
        (linear.fields < NESTED as usize && linear.nested < NESTED as usize).then_some(linear)
    }

    /// The linear form of one field.
    fn field(field: &FieldPlan, plans: &[Option<MessagePlan>]) -> Option<Linear> {
        if let (Elem::Message(id), Count::One) = (field.elem, field.count) {
            // The child's fields become the first nested values, its nested values follow.
            let child = plans.get(id)?.as_ref()?.linear.as_ref()?;
            let own = u32::try_from(child.fields).ok()?;
            let mut pieces = Vec::with_capacity(child.pieces.len() + 1);
            pieces.push((
                Piece::Nested {
                    fields: own,
                    first: 0,
                },
                0,
            ));
            for &(piece, to) in &child.pieces {
                let piece = match piece {
                    Piece::Nested { fields, first } => Piece::Nested {
                        fields,
                        first: first.checked_add(own)?,
                    },
                    other => other,
                };
                let to = if to & NESTED == 0 {
                    to | NESTED
                } else {
                    to.checked_add(own)?
                };
                pieces.push((piece, to));
            }
            return Some(Linear {
                pieces: pieces.into(),
                fields: 1,
                nested: child.fields.checked_add(child.nested)?,
            });
        }
        Some(Linear {
            pieces: Box::new([(Piece::of(field)?, 0)]),
            fields: 1,
            nested: 0,
        })
    }

    /// The linear form of consecutive fields.
    fn fields(fields: &[FieldPlan], plans: &[Option<MessagePlan>]) -> Option<Linear> {
        fields.iter().try_fold(Linear::new(), |linear, field| {
            linear.then(&Linear::field(field, plans)?)
        })
    }

    /// The linear form of a whole message: every field has pieces, and not too many.
    fn of_message(fields: &[FieldPlan], plans: &[Option<MessagePlan>]) -> Option<Linear> {
        if fields.is_empty() {
            // An empty message still takes its byte.
            return None;
        }
        Linear::fields(fields, plans).filter(|l| l.pieces.len() <= MAX_LINEAR_PIECES)
    }
}

/// Merges consecutive strings, sequences of primitives, short runs of fixed-layout fields and
/// nested messages that have a linear form into linear steps.
fn linearize(steps: Vec<Step>, fields: &[FieldPlan], plans: &[Option<MessagePlan>]) -> Vec<Step> {
    let linear_of = |step: &Step| -> Option<(usize, Linear)> {
        let (slot, count, limit) = match *step {
            Step::String { slot } | Step::Primitives { slot, .. } | Step::Message { slot, .. } => {
                (slot, 1, MAX_LINEAR_PIECES)
            }
            Step::Run {
                slot,
                ref templates,
            } => (slot, templates.0.first()?.own, MAX_LINEAR_RUN),
            _ => return None,
        };
        let linear = Linear::fields(fields.get(slot..slot.checked_add(count)?)?, plans)?;
        (linear.pieces.len() <= limit).then_some((slot, linear))
    };
    let mut out: Vec<Step> = Vec::with_capacity(steps.len());
    let mut open: Option<(usize, Linear)> = None;
    let close = |open: &mut Option<(usize, Linear)>, out: &mut Vec<Step>| {
        if let Some((slot, linear)) = open.take() {
            out.push(Step::Linear { slot, linear });
        }
    };
    for step in steps {
        match linear_of(&step) {
            Some((slot, next)) => match open.as_mut() {
                Some((_, linear)) => match linear.then(&next) {
                    Some(joined) => *linear = joined,
                    None => {
                        close(&mut open, &mut out);
                        open = Some((slot, next));
                    }
                },
                None => open = Some((slot, next)),
            },
            None => {
                close(&mut open, &mut out);
                out.push(step);
            }
        }
    }
    close(&mut open, &mut out);
    out
}

/// The compiled layout of one message type.
#[derive(Debug, Clone)]
pub(crate) struct MessagePlan {
    pub(crate) name: TypeName,
    pub(crate) fields: Vec<FieldPlan>,
    /// A message without fields still takes one byte on the wire (rosidl gives the IDL struct a
    /// `uint8 structure_needs_at_least_one_member`); it has no node.
    pub(crate) empty: bool,
    /// The fewest bytes a message takes, padding not counted (saturated).
    pub(crate) min_size: u64,
    /// The message's size per phase, when it has no string or sequence inside.
    pub(crate) layout: Option<Layout>,
    /// The whole message as templates, when it has a fixed layout small enough.
    pub(crate) templates: Option<Templates>,
    pub(crate) steps: Vec<Step>,
    /// How many nodes the smallest message produces (capacity hint).
    pub(crate) min_nodes: usize,
    /// The largest XCDR1 alignment of a value inside (1 to 8).
    pub(crate) align: usize,
    /// Every step fills its own fields in order and adds no other node (strings, sequences of
    /// primitives, runs of scalars and primitive arrays): the fast walk appends the values one
    /// after the other instead of reserving the slots first.
    pub(crate) sequential: bool,
    /// The whole message as one linear step, when every field has pieces (see [`Linear`]).
    pub(crate) linear: Option<Linear>,
}

impl MessagePlan {
    pub(crate) fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| &*f.name == name)
    }
}

/// A message type compiled for decoding and encoding CDR messages.
///
/// Compile once per type (the facade keeps a cache keyed by type name and definition), then
/// call [`Plan::decode`], [`Plan::encode`] or [`Plan::projection`] for every message.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Index 0 is the top-level type.
    pub(crate) messages: Vec<MessagePlan>,
}

/// The message type a field's element refers to.
fn referenced_type(element: &ElementType) -> Option<TypeName> {
    match element {
        ElementType::Message(name) => Some(name.clone()),
        _ => None,
    }
}

fn is_builtin(name: &TypeName) -> bool {
    matches!(
        (name.package(), name.name()),
        ("builtin_interfaces", "Time" | "Duration") | ("service_msgs", "ServiceEventInfo")
    )
}

impl Plan {
    /// Compiles `type_name` and everything it uses from `registry`.
    ///
    /// `builtin_interfaces/Time` and `Duration` and `service_msgs/ServiceEventInfo` need no
    /// definition in the registry ([`Registry::add_ros2_builtins`]). Fails when a type is
    /// missing, unparsable or recursive, when a definition is ROS 1, or when messages nest more
    /// than [`MAX_NESTING`] levels deep.
    pub fn compile(registry: &Registry, type_name: &TypeName) -> Result<Plan, Error> {
        let dependencies = match registry.dependencies(type_name) {
            Ok(dependencies) => dependencies,
            Err(robolog_msg::Error::MissingType { missing, .. }) if is_builtin(&missing) => {
                let mut completed = registry.clone();
                completed.add_ros2_builtins();
                return Plan::compile(&completed, type_name);
            }
            Err(e) => return Err(e.into()),
        };
        let mut names: Vec<TypeName> = Vec::with_capacity(dependencies.len() + 1);
        names.push(type_name.clone());
        names.extend(dependencies);
        let definitions = names
            .iter()
            .map(|name| registry.require(name))
            .collect::<Result<Vec<&MessageDefinition>, _>>()?;
        let ids: HashMap<&TypeName, usize> =
            names.iter().enumerate().map(|(i, n)| (n, i)).collect();

        let order = postorder(&definitions, &ids);
        let mut plans: Vec<Option<MessagePlan>> = vec![None; definitions.len()];
        let mut depths = vec![0usize; definitions.len()];
        for id in order {
            let definition = definitions[id];
            if definition.dialect != Dialect::Ros2 {
                return Err(Error::NotRos2 {
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

    /// Parses a `ros2msg` schema (an MCAP schema, a rosbag2 `message_definitions` row: see
    /// [`Registry::from_ros2msg`], service events included) and compiles its top-level type
    /// `type_name` (`pkg/msg/Type`, `pkg/srv/Type_Event`, or `pkg/Type`).
    ///
    /// ```
    /// let plan = robolog_cdr::Plan::from_bundle("my_pkg/msg/Pair", "int32 a\nstring b\n")?;
    /// assert_eq!(plan.type_name().to_string(), "my_pkg/Pair");
    ///
    /// // A service event channel stores the `.srv`; the event type is built from it.
    /// let event = robolog_cdr::Plan::from_bundle(
    ///     "example_interfaces/srv/AddTwoInts_Event",
    ///     "int64 a\nint64 b\n---\nint64 sum\n",
    /// )?;
    /// assert_eq!(event.field_names().collect::<Vec<_>>(), ["info", "request", "response"]);
    /// # Ok::<(), robolog_cdr::Error>(())
    /// ```
    pub fn from_bundle(type_name: &str, bundle: &str) -> Result<Plan, Error> {
        let name = TypeName::parse(type_name)?;
        let registry = Registry::from_ros2msg(type_name, bundle)?;
        Plan::compile(&registry, &name)
    }

    /// Compiles the type of a schema as MCAP and rosbag2 store it: `encoding` `ros2msg` or
    /// `ros2idl` (see [`Registry::from_ros2_schema`]).
    pub fn from_schema(type_name: &str, encoding: &str, text: &str) -> Result<Plan, Error> {
        let name = TypeName::parse(type_name)?;
        let registry = Registry::from_ros2_schema(type_name, encoding, text)?;
        Plan::compile(&registry, &name)
    }

    /// The top-level type.
    pub fn type_name(&self) -> &TypeName {
        &self.top().name
    }

    /// The smallest possible message payload, in bytes (header and padding not counted).
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
            .fields
            .iter()
            .filter_map(|f| referenced_type(&f.ty.element))
            .filter_map(|name| ids.get(&name).copied())
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
    // Types no field reaches (a builtin only a `time` field uses is reached; this is for
    // safety) still get a plan.
    for (id, seen) in done.iter().enumerate() {
        if !seen {
            order.insert(0, id);
        }
    }
    order
}

fn primitive_kind(primitive: PrimitiveType) -> Option<PrimitiveKind> {
    Some(match primitive.ros2_wire_type() {
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
        _ => return None,
    })
}

/// The layout of `n` consecutive elements whose one-element layout is `element`, for every
/// start phase. Phases repeat with a period of at most 8 elements, so this never loops `n`
/// times.
fn repeated(element: &[u64; PHASES], n: u64) -> [u64; PHASES] {
    let mut out = [0u64; PHASES];
    for (start, size) in out.iter_mut().enumerate() {
        // Offsets after 0, 1, 2, … elements, until a phase repeats.
        let mut first_seen = [None::<(u64, u64)>; PHASES];
        let mut offset = 0u64;
        let mut done = 0u64;
        *size = loop {
            if done == n {
                break offset;
            }
            let phase = (start as u64 + offset) % PHASES as u64;
            if let Some((seen_done, seen_offset)) = first_seen[phase as usize] {
                let period = done - seen_done;
                let bytes = offset - seen_offset;
                let cycles = (n - done) / period;
                offset = offset.saturating_add(bytes.saturating_mul(cycles));
                done += cycles * period;
                // The rest (fewer than one period) element by element.
                while done < n {
                    let phase = (start as u64 + offset) % PHASES as u64;
                    offset = offset.saturating_add(element[phase as usize]);
                    done += 1;
                }
                break offset;
            }
            first_seen[phase as usize] = Some((done, offset));
            offset = offset.saturating_add(element[phase as usize]);
            done += 1;
        };
    }
    out
}

/// The layout of one primitive element, or of `n` of them in a row (padding before the first
/// only).
fn primitive_layout(kind: PrimitiveKind, n: u64) -> Layout {
    let bytes = (kind.size() as u64).saturating_mul(n);
    let table = |max_align: usize| {
        let align = alignment(kind, max_align) as u64;
        std::array::from_fn(|phase| {
            if n == 0 {
                0
            } else {
                padding(phase as u64, align).saturating_add(bytes)
            }
        })
    };
    Layout {
        xcdr1: table(8),
        xcdr2: table(4),
    }
}

fn field_layout(elem: Elem, count: Count, plans: &[Option<MessagePlan>]) -> Option<Layout> {
    let n = match count {
        Count::One => 1,
        Count::Fixed(n) => n,
        Count::Sequence => return None,
    };
    match elem {
        Elem::Prim(kind) => Some(primitive_layout(kind, n)),
        Elem::Message(id) => {
            let child = plans.get(id)?.as_ref()?.layout?;
            Some(Layout {
                xcdr1: repeated(&child.xcdr1, n),
                xcdr2: repeated(&child.xcdr2, n),
            })
        }
        Elem::String | Elem::WString => None,
    }
}

/// The layout of consecutive fields, when all have one.
fn fields_layout(fields: &[FieldPlan], empty: bool) -> Option<Layout> {
    let start = if empty {
        Layout {
            xcdr1: [1; PHASES],
            xcdr2: [1; PHASES],
        }
    } else {
        Layout::EMPTY
    };
    fields
        .iter()
        .try_fold(start, |layout, field| Some(layout.then(&field.layout?)))
}

fn compile_message(
    definition: &MessageDefinition,
    ids: &HashMap<&TypeName, usize>,
    plans: &[Option<MessagePlan>],
) -> Result<MessagePlan, Error> {
    let mut fields = Vec::with_capacity(definition.fields.len());
    for field in &definition.fields {
        let (elem, string_bound) = match &field.ty.element {
            ElementType::Primitive(PrimitiveType::String) => (Elem::String, None),
            ElementType::Primitive(PrimitiveType::WString) => (Elem::WString, None),
            ElementType::BoundedString { wide, max_len } => (
                if *wide { Elem::WString } else { Elem::String },
                Some(*max_len),
            ),
            element => match (referenced_type(element), element) {
                (Some(name), _) => {
                    let id =
                        ids.get(&name)
                            .copied()
                            .ok_or_else(|| robolog_msg::Error::MissingType {
                                missing: name.clone(),
                                needed_by: Some(definition.name.clone()),
                            })?;
                    (Elem::Message(id), None)
                }
                // Every other ROS 2 primitive has a kind.
                (None, ElementType::Primitive(p)) => (
                    Elem::Prim(primitive_kind(*p).unwrap_or(PrimitiveKind::UInt8)),
                    None,
                ),
                (None, _) => (Elem::Prim(PrimitiveKind::UInt8), None),
            },
        };
        let (count, sequence_bound) = match field.ty.array {
            ArrayKind::Scalar => (Count::One, None),
            ArrayKind::Fixed(n) => (Count::Fixed(n), None),
            ArrayKind::Variable => (Count::Sequence, None),
            ArrayKind::Bounded(n) => (Count::Sequence, Some(n)),
        };
        let element_min = match elem {
            Elem::Prim(kind) => kind.size() as u64,
            Elem::String | Elem::WString => 4,
            Elem::Message(id) => plans
                .get(id)
                .and_then(Option::as_ref)
                .map_or(1, |c| c.min_size),
        };
        let min_size = match count {
            Count::One => element_min,
            Count::Fixed(n) => element_min.saturating_mul(n),
            Count::Sequence => 4,
        };
        fields.push(FieldPlan {
            name: field.name.as_str().into(),
            #[cfg(feature = "serde")]
            json_key: robolog_msg::json::key_text(&field.name),
            elem,
            count,
            type_text: field.type_text.as_str().into(),
            sequence_bound,
            string_bound,
            element_min,
            min_size,
            layout: field_layout(elem, count, plans),
        });
    }
    let empty = fields.is_empty();
    let min_size = if empty {
        1
    } else {
        fields
            .iter()
            .fold(0u64, |total, f| total.saturating_add(f.min_size))
    };
    let layout = fields_layout(&fields, empty);
    // Saturating: a hostile definition can nest messages into astronomical counts; the decoder
    // caps the values of a message anyway (see `MAX_VALUES_PER_BYTE`).
    let min_nodes = fields
        .iter()
        .filter_map(|f| match (f.elem, f.count) {
            (Elem::Message(id), Count::One) => {
                plans.get(id).and_then(Option::as_ref).map(|c| c.min_nodes)
            }
            _ => None,
        })
        .fold(fields.len(), usize::saturating_add);

    let align = fields
        .iter()
        .map(|f| element_alignment(f.elem, plans))
        .max()
        .unwrap_or(1);

    let small = layout.is_some_and(|l| l.xcdr1.iter().all(|&s| s <= MAX_TEMPLATE_BYTES));
    let templates = if small {
        let mut run = RunBuilder::new(empty);
        fields
            .iter()
            .all(|f| run.add(f, plans))
            .then(|| run.finish())
    } else {
        None
    };

    let mut steps = Vec::new();
    let mut run: Option<(usize, RunBuilder)> = None;
    for (index, field) in fields.iter().enumerate() {
        if let Some((_, builder)) = run.as_mut()
            && builder.add(field, plans)
        {
            continue;
        }
        if let Some((slot, builder)) = run.take() {
            steps.push(Step::Run {
                slot,
                templates: builder.finish(),
            });
        }
        let mut builder = RunBuilder::new(false);
        if builder.add(field, plans) {
            run = Some((index, builder));
        } else {
            steps.push(Step::of(index, field));
        }
    }
    if let Some((slot, builder)) = run {
        steps.push(Step::Run {
            slot,
            templates: builder.finish(),
        });
    }

    let steps = linearize(steps, &fields, plans);
    let linear = Linear::of_message(&fields, plans);
    Ok(MessagePlan {
        name: definition.name.clone(),
        fields,
        empty,
        min_size,
        layout,
        sequential: templates.is_none()
            && steps.iter().all(|step| match step {
                Step::String { .. } | Step::Primitives { .. } => true,
                // Nested values would land between the message's own values.
                Step::Linear { linear, .. } => linear.nested == 0,
                Step::Run { templates, .. } => templates.0.iter().all(|t| t.flat),
                _ => false,
            }),
        linear,
        templates,
        steps,
        min_nodes,
        align,
    })
}

/// The largest XCDR1 alignment of any value inside an element type.
fn element_alignment(elem: Elem, plans: &[Option<MessagePlan>]) -> usize {
    match elem {
        Elem::Prim(kind) => kind.size(),
        Elem::String | Elem::WString => 4,
        Elem::Message(id) => plans
            .get(id)
            .and_then(Option::as_ref)
            .map_or(1, |child| child.align),
    }
}

/// Builds the templates of a run of fixed-layout fields for every start phase at once, field by
/// field, refusing fields that would make them too large.
#[derive(Debug)]
struct RunBuilder {
    phases: Vec<TemplateBuilder>,
    /// The largest alignment so far: the templates of phases `p` and `p + widest` are equal.
    widest: usize,
}

impl RunBuilder {
    /// A run; `empty` starts it with the one byte of an empty message.
    fn new(empty: bool) -> Self {
        RunBuilder {
            phases: (0..PHASES as u64)
                .map(|phase| TemplateBuilder {
                    phase,
                    cursor: u64::from(empty),
                    ..TemplateBuilder::default()
                })
                .collect(),
            widest: 1,
        }
    }

    /// Adds `field` when it has a fixed layout and fits; returns false (and changes nothing)
    /// otherwise.
    fn add(&mut self, field: &FieldPlan, plans: &[Option<MessagePlan>]) -> bool {
        if field.layout.is_none() {
            return false;
        }
        let saved: Vec<(u64, usize, usize)> = self
            .phases
            .iter()
            .map(|b| (b.cursor, b.own.len(), b.appended.len()))
            .collect();
        let added = self
            .phases
            .iter_mut()
            .all(|builder| match builder.field(field, plans) {
                Some(op) => {
                    builder.own.push(op);
                    true
                }
                None => false,
            });
        if !added {
            for (builder, (cursor, own, appended)) in self.phases.iter_mut().zip(saved) {
                builder.cursor = cursor;
                builder.own.truncate(own);
                builder.appended.truncate(appended);
            }
            return false;
        }
        self.widest = self.widest.max(element_alignment(field.elem, plans));
        true
    }

    fn finish(self) -> Templates {
        let widest = self.widest;
        Templates(
            self.phases
                .into_iter()
                .take(widest)
                .map(TemplateBuilder::finish)
                .collect(),
        )
    }
}

/// Lays out fixed-layout fields from a start phase, flattening nested messages.
#[derive(Debug, Default)]
struct TemplateBuilder {
    /// The payload offset of the run's start, modulo 8.
    phase: u64,
    /// Bytes from the run's start to the next value.
    cursor: u64,
    own: Vec<Op>,
    appended: Vec<Op>,
}

impl TemplateBuilder {
    fn nodes(&self) -> usize {
        self.own.len() + self.appended.len()
    }

    /// The op of one fixed-layout field at the cursor (nested nodes appended); `None` when the
    /// field has no fixed layout or the template would grow too large.
    fn field(&mut self, field: &FieldPlan, plans: &[Option<MessagePlan>]) -> Option<Op> {
        match (field.elem, field.count) {
            (Elem::Prim(kind), Count::One) => {
                let offset = self.place(kind, 1)?;
                Some(Op::primitive(kind, offset))
            }
            (Elem::Prim(kind), Count::Fixed(n)) => {
                let offset = self.place(kind, n)?;
                let len = u32::try_from((kind.size() as u64).checked_mul(n)?).ok()?;
                Some(Op::Array { kind, offset, len })
            }
            (Elem::Message(id), Count::One) => self.message(id, plans),
            (Elem::Message(id), Count::Fixed(n)) => {
                let count = usize::try_from(n).ok()?;
                if self.nodes().checked_add(count)? > MAX_TEMPLATE_NODES {
                    return None;
                }
                let rel = self.appended.len();
                self.appended
                    .extend(std::iter::repeat_n(Op::Message { rel: 0, len: 0 }, count));
                for i in 0..count {
                    let op = self.message(id, plans)?;
                    self.appended[rel + i] = op;
                }
                Some(Op::Messages {
                    rel: rel as u32,
                    len: count as u32,
                })
            }
            _ => None,
        }
    }

    /// A nested message at the cursor: its fields become appended nodes.
    fn message(&mut self, id: usize, plans: &[Option<MessagePlan>]) -> Option<Op> {
        let child = plans.get(id)?.as_ref()?;
        let count = child.fields.len();
        if self.nodes() + count > MAX_TEMPLATE_NODES {
            return None;
        }
        let rel = self.appended.len();
        if child.empty {
            self.advance(1)?;
        }
        self.appended
            .extend(std::iter::repeat_n(Op::Message { rel: 0, len: 0 }, count));
        for (i, field) in child.fields.iter().enumerate() {
            let op = self.field(field, plans)?;
            self.appended[rel + i] = op;
        }
        Some(Op::Message {
            rel: rel as u32,
            len: count as u32,
        })
    }

    /// Aligns the cursor for `n` elements of `kind` (no padding when `n` is 0), moves it past
    /// them, and returns their offset.
    fn place(&mut self, kind: PrimitiveKind, n: u64) -> Option<u32> {
        if n > 0 {
            let pad = padding(self.phase + self.cursor, kind.size() as u64);
            self.advance(pad)?;
        }
        let offset = u32::try_from(self.cursor).ok()?;
        self.advance((kind.size() as u64).checked_mul(n)?)?;
        Some(offset)
    }

    fn advance(&mut self, bytes: u64) -> Option<()> {
        self.cursor = self
            .cursor
            .checked_add(bytes)
            .filter(|c| *c <= MAX_TEMPLATE_BYTES)?;
        Some(())
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
        let flat = ops.len() == own && groups.len() == own;
        Template {
            size: self.cursor as usize,
            own,
            groups,
            own_groups,
            ops,
            flat,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_layouts_follow_the_phase() {
        // A message {uint8 a; float64 b}: 16 bytes from phase 0, 15 from phase 1.
        let element: [u64; PHASES] = std::array::from_fn(|p| padding(p as u64 + 1, 8) + 9);
        assert_eq!(element[0], 16);
        assert_eq!(element[1], 15);
        let three = repeated(&element, 3);
        assert_eq!(three[0], 48);
        assert_eq!(three[1], 47);
        // Huge counts take no time and saturate instead of wrapping.
        assert_eq!(repeated(&element, u64::MAX)[0], u64::MAX);
        assert_eq!(repeated(&element, 1 << 40)[0], 16 << 40);
    }

    #[test]
    fn runs_have_one_template_per_phase_that_matters() {
        let plan = Plan::from_bundle(
            "p/M",
            // Fixed arrays of messages keep the runs out of linear steps.
            "string s\nuint8 a\nF b\nstring t\nfloat64 c\nF d\n===\nMSG: p/F\nG[1] g\n===\nMSG: p/G\nfloat64 v\n",
        )
        .unwrap();
        let top = plan.top();
        let sizes: Vec<Vec<usize>> = top
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Run { templates, .. } => Some(templates.0.iter().map(|t| t.size).collect()),
                _ => None,
            })
            .collect();
        assert_eq!(
            sizes,
            [
                vec![16, 15, 14, 13, 12, 11, 10, 9],
                vec![16, 23, 22, 21, 20, 19, 18, 17]
            ]
        );
    }

    #[test]
    fn strings_numbers_and_their_messages_become_linear_steps() {
        let plan = Plan::from_bundle(
            "p/Cloud",
            "std_msgs/Header header\nuint32 height\nF[] fields\nbool b\nuint8[] data\n\
             Q q1\nQ q2\n\
             ===\nMSG: p/Q\nfloat64 x\nfloat64 y\nfloat64 z\nfloat64 w\n\
             ===\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n\
             ===\nMSG: p/F\nstring name\nuint32 offset\nuint8 datatype\nuint32 count\n",
        )
        .unwrap();
        let top = plan.top();
        let shape: Vec<String> = top
            .steps
            .iter()
            .map(|step| match step {
                Step::Linear { slot, linear } => {
                    format!("linear {slot} {}+{}", linear.fields, linear.nested)
                }
                Step::Messages { slot, .. } => format!("messages {slot}"),
                Step::Run { slot, .. } => format!("run {slot}"),
                other => format!("{other:?}"),
            })
            .collect();
        // The header (with its stamp) and `height` are read in one pass; `b` and `data` too;
        // a run of fixed-layout fields with more pieces than a short run stays a run.
        assert_eq!(
            shape,
            ["linear 0 2+4", "messages 2", "linear 3 2+0", "run 5"]
        );
        let Step::Linear { linear, .. } = &top.steps[0] else {
            unreachable!()
        };
        // Preorder: the header (its fields are nested values 0 and 1), its stamp (2 and 3).
        assert_eq!(
            linear.pieces.to_vec(),
            [
                (
                    Piece::Nested {
                        fields: 2,
                        first: 0
                    },
                    0
                ),
                (
                    Piece::Nested {
                        fields: 2,
                        first: 2
                    },
                    NESTED
                ),
                (Piece::Int32, NESTED | 2),
                (Piece::UInt32, NESTED | 3),
                (Piece::String, NESTED | 1),
                (Piece::UInt32, 1),
            ]
        );
        let Some(Elem::Message(id)) = top.fields.get(2).map(|f| f.elem) else {
            unreachable!()
        };
        let element = plan.message(id).linear.as_ref().unwrap();
        assert_eq!(
            element.pieces.iter().map(|p| p.0).collect::<Vec<_>>(),
            [Piece::String, Piece::UInt32, Piece::UInt8, Piece::UInt32]
        );
        assert_eq!((element.fields, element.nested), (4, 0));
    }
}
