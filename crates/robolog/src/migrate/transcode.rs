//! Message bytes translated between the ROS 1 wire format and CDR without building values: a
//! pair of message types (the source's and the destination's definitions) is compiled once
//! into a [`Transcoder`], a program of byte moves, which then runs over every message.
//!
//! Fields are paired as `rosbags-convert` pairs them when it migrates a message: by name; a
//! destination field without a source field of its name takes a source field that the
//! destination lacks and that has the same type (so ROS 1 `CameraInfo.D` becomes ROS 2 `d`);
//! what is still unpaired is dropped (source) or written as its zero value (destination).
//! Paired fields of different shapes follow the same rules: numbers are converted, arrays are
//! cut to a fixed or bounded destination length or padded with zero values, and fields whose
//! kinds do not fit (a string for a number, a message for an array) are written as zero values.
//!
//! The ROS 1 `time` and `duration` primitives are messages of `int32 sec, uint32 nanosec` here
//! (the registries the compiler sees have them rewritten so, see the parent module), which is
//! what makes them pair with `builtin_interfaces/Time` and `Duration`: the eight bytes are
//! copied as they are, as rosbags does.
//!
//! The program keeps, for each CDR side, what is known at compile time about the alignment of
//! the position (a modulus and a residue), so that padding known in advance is a constant and
//! consecutive fixed-size fields become one copy (a `Pose` is one 56-byte copy, an `Imu` after
//! its header one of 296 bytes); only what follows strings and sequences aligns at run time.

use std::collections::HashMap;
use std::sync::Arc;

use robolog_msg::{
    ArrayKind, ElementType, Field, MessageDefinition, PrimitiveType, Registry, TypeName,
};

/// Which serialization one side of a transcoder speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Wire {
    /// ROS 1: little-endian, packed, `u32` lengths.
    Ros1,
    /// ROS 2 CDR (XCDR1, little-endian): a 4-byte encapsulation header, every primitive aligned
    /// to its size from the end of the header, strings NUL-terminated.
    Cdr,
}

/// The deepest nesting of message types compiled (as the decoders allow).
const MAX_NESTING: usize = 100;
/// Fragments up to this many ops are copied into the message that contains them; larger ones
/// are called.
const INLINE_OPS: usize = 48;
/// The most bytes a message's fixed part may take in the destination.
const MAX_FIXED_SIZE: u64 = 1 << 28;
/// Element iterations per message beyond 8 per input byte (arrays of empty messages take no
/// input bytes; this bounds them).
const WORK_ALLOWANCE: usize = 1 << 20;

/// Why a pair of types cannot be compiled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum CompileError {
    /// A type the pair needs is missing, unparsable or recursive.
    #[error(transparent)]
    Definition(#[from] robolog_msg::Error),
    /// Types nest deeper than the decoders accept.
    #[error("{type_name}: message types nest more than {MAX_NESTING} levels deep")]
    TooDeep {
        /// The outermost type.
        type_name: TypeName,
    },
    /// A fixed-size part too large to be a real message.
    #[error("{type_name}: a fixed-size part of {bytes} bytes is more than a message can hold")]
    TooLarge {
        /// The type.
        type_name: TypeName,
        /// Its size (saturated).
        bytes: u64,
    },
}

/// Why a message could not be translated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum TranscodeError {
    /// The message ends before its definition says it does.
    #[error("the message ends at byte {len}, but {needed} more bytes are needed at byte {offset}")]
    Truncated {
        /// Where the missing bytes start.
        offset: usize,
        /// How many are missing.
        needed: usize,
        /// The message's length.
        len: usize,
    },
    /// A count or length larger than the bytes left.
    #[error("a count of {count} at byte {offset} needs more bytes than the {remaining} left")]
    LengthPastEnd {
        /// The count read.
        count: u64,
        /// Where it was read.
        offset: usize,
        /// Bytes left after it.
        remaining: usize,
    },
    /// The CDR message does not start with the little-endian XCDR1 header (`00 01 00 00`).
    #[error(
        "the CDR encapsulation {kind:#06x} is not supported here (only little-endian XCDR1, `00 01`)"
    )]
    Encapsulation {
        /// The header's kind field.
        kind: u16,
    },
    /// Arrays of empty messages, or destination defaults, would make the output too large.
    #[error("the message would translate to more than {limit} bytes or elements")]
    TooLarge {
        /// The limit.
        limit: usize,
    },
}

impl TranscodeError {
    /// True when the message simply ends too early.
    pub(crate) fn is_truncation(&self) -> bool {
        matches!(self, TranscodeError::Truncated { .. })
    }

    /// Where in the message the failing read began.
    pub(crate) fn offset(&self) -> Option<usize> {
        match self {
            TranscodeError::Truncated { offset, .. }
            | TranscodeError::LengthPastEnd { offset, .. } => Some(*offset),
            TranscodeError::Encapsulation { .. } => Some(0),
            TranscodeError::TooLarge { .. } => None,
        }
    }
}

/// A primitive as the transcoder moves it (`byte`, `char`, `time` and `duration` resolved).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Prim {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl Prim {
    fn of(p: PrimitiveType, wire: Wire) -> Option<Prim> {
        let wire_type = match wire {
            Wire::Ros1 => p.ros1_wire_type(),
            Wire::Cdr => p.ros2_wire_type(),
        };
        Some(match wire_type {
            PrimitiveType::Bool => Prim::Bool,
            PrimitiveType::Int8 => Prim::I8,
            PrimitiveType::UInt8 => Prim::U8,
            PrimitiveType::Int16 => Prim::I16,
            PrimitiveType::UInt16 => Prim::U16,
            PrimitiveType::Int32 => Prim::I32,
            PrimitiveType::UInt32 => Prim::U32,
            PrimitiveType::Int64 => Prim::I64,
            PrimitiveType::UInt64 => Prim::U64,
            PrimitiveType::Float32 => Prim::F32,
            PrimitiveType::Float64 => Prim::F64,
            _ => return None,
        })
    }

    fn size(self) -> usize {
        match self {
            Prim::Bool | Prim::I8 | Prim::U8 => 1,
            Prim::I16 | Prim::U16 => 2,
            Prim::I32 | Prim::U32 | Prim::F32 => 4,
            Prim::I64 | Prim::U64 | Prim::F64 => 8,
        }
    }

    fn is_integer(self) -> bool {
        !matches!(self, Prim::Bool | Prim::F32 | Prim::F64)
    }

    /// True when a value of `self` becomes a value of `to` by copying its bytes (the same
    /// type, or integers of one size: a wrapping conversion, as numpy's `astype`).
    fn copies_to(self, to: Prim) -> bool {
        self == to || (self.is_integer() && to.is_integer() && self.size() == to.size())
    }

    fn read(self, b: &[u8]) -> Number {
        let mut raw = [0u8; 8];
        raw[..b.len()].copy_from_slice(b);
        let u = u64::from_le_bytes(raw);
        match self {
            Prim::Bool => Number::Int(i128::from(u != 0)),
            Prim::I8 => Number::Int(i128::from(u as u8 as i8)),
            Prim::I16 => Number::Int(i128::from(u as u16 as i16)),
            Prim::I32 => Number::Int(i128::from(u as u32 as i32)),
            Prim::I64 => Number::Int(i128::from(u as i64)),
            Prim::U8 | Prim::U16 | Prim::U32 | Prim::U64 => Number::Int(i128::from(u)),
            Prim::F32 => Number::Float(f64::from(f32::from_bits(u as u32))),
            Prim::F64 => Number::Float(f64::from_bits(u)),
        }
    }

    fn write(self, n: Number, out: &mut Vec<u8>) {
        // `as` wraps integers and saturates floats, which is what a conversion between two
        // numeric field types can do without failing.
        let int = match n {
            Number::Int(i) => i,
            Number::Float(f) => f as i128,
        };
        let float = match n {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        };
        match self {
            Prim::Bool => out.push(u8::from(match n {
                Number::Int(i) => i != 0,
                Number::Float(f) => f != 0.0,
            })),
            Prim::I8 | Prim::U8 => out.push(int as u8),
            Prim::I16 | Prim::U16 => out.extend_from_slice(&(int as u16).to_le_bytes()),
            Prim::I32 | Prim::U32 => out.extend_from_slice(&(int as u32).to_le_bytes()),
            Prim::I64 | Prim::U64 => out.extend_from_slice(&(int as u64).to_le_bytes()),
            Prim::F32 => out.extend_from_slice(&(float as f32).to_le_bytes()),
            Prim::F64 => out.extend_from_slice(&float.to_le_bytes()),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Number {
    Int(i128),
    Float(f64),
}

/// What one element of a field is, as far as pairing and moving it go.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Elem {
    Prim(PrimitiveType),
    String { bound: Option<u64> },
    WString { bound: Option<u64> },
    Message(TypeName),
}

/// Whether a field is an array, and how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    One,
    Fixed(u64),
    Seq(Option<u64>),
}

/// A field as the compiler sees it: name, element, shape (the definition's `time` already a
/// message, and the byte CDR gives an empty message made a field of its own).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Slot {
    name: String,
    elem: Elem,
    shape: Shape,
}

impl Slot {
    fn of(field: &Field) -> Slot {
        let elem = match &field.ty.element {
            ElementType::Primitive(PrimitiveType::String) => Elem::String { bound: None },
            ElementType::Primitive(PrimitiveType::WString) => Elem::WString { bound: None },
            ElementType::Primitive(p) => Elem::Prim(*p),
            ElementType::BoundedString {
                wide: false,
                max_len,
            } => Elem::String {
                bound: Some(*max_len),
            },
            ElementType::BoundedString {
                wide: true,
                max_len,
            } => Elem::WString {
                bound: Some(*max_len),
            },
            ElementType::Message(name) => Elem::Message(name.clone()),
        };
        let shape = match field.ty.array {
            ArrayKind::Scalar => Shape::One,
            ArrayKind::Fixed(n) => Shape::Fixed(n),
            ArrayKind::Variable => Shape::Seq(None),
            ArrayKind::Bounded(n) => Shape::Seq(Some(n)),
        };
        Slot {
            name: field.name.clone(),
            elem,
            shape,
        }
    }

    /// Scalars of a primitive or a string (what rosbags calls a base type).
    fn is_base(&self) -> bool {
        !matches!(self.elem, Elem::Message(_))
    }

    fn is_stringy(&self) -> bool {
        matches!(self.elem, Elem::String { .. } | Elem::WString { .. })
    }
}

/// The slots of a message on a wire: CDR gives a message without fields one byte
/// (`structure_needs_at_least_one_member`, as rosidl generates it).
fn slots(definition: &MessageDefinition, wire: Wire) -> Vec<Slot> {
    if definition.fields.is_empty() && wire == Wire::Cdr {
        return vec![Slot {
            name: "structure_needs_at_least_one_member".to_owned(),
            elem: Elem::Prim(PrimitiveType::UInt8),
            shape: Shape::One,
        }];
    }
    definition.fields.iter().map(Slot::of).collect()
}

/// The source field each destination field is read from, as rosbags' migration pairs them:
/// by name, then a destination field without a namesake takes the first source field without
/// one whose type is equal.
fn pair(src: &[Slot], dst: &[Slot]) -> Vec<Option<usize>> {
    let mut paired: Vec<Option<usize>> = dst
        .iter()
        .map(|d| src.iter().position(|s| s.name == d.name))
        .collect();
    let mut removed: Vec<usize> = (0..src.len())
        .filter(|&i| !dst.iter().any(|d| d.name == src[i].name))
        .collect();
    for (d, slot) in dst.iter().enumerate() {
        if paired[d].is_some() {
            continue;
        }
        if let Some(k) = removed
            .iter()
            .position(|&s| src[s].elem == slot.elem && src[s].shape == slot.shape)
        {
            paired[d] = Some(removed.remove(k));
        }
    }
    paired
}

/// What is known at compile time about a CDR position: `offset ≡ residue (mod modulus)`,
/// counted from the end of the encapsulation header. A ROS 1 side never aligns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Known {
    modulus: u8,
    residue: u8,
}

impl Known {
    const START: Known = Known {
        modulus: 8,
        residue: 0,
    };
    const NOTHING: Known = Known {
        modulus: 1,
        residue: 0,
    };

    fn advance(self, bytes: u64) -> Known {
        let m = u64::from(self.modulus);
        Known {
            modulus: self.modulus,
            residue: ((u64::from(self.residue) + bytes % m) % m) as u8,
        }
    }

    /// Known to be aligned to `align` (1, 2, 4 or 8).
    fn aligned(align: usize) -> Known {
        Known {
            modulus: align as u8,
            residue: 0,
        }
    }
}

/// A length of an array on one side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Len {
    Fixed(u32),
    /// A `u32` count on the wire, at most `bound` elements written.
    Seq {
        bound: u32,
    },
}

/// What the elements of an array are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elements {
    /// Primitives, read as `from` and written as `to` (one of them unused for arrays that are
    /// only skipped or only written).
    Prims { from: Prim, to: Prim },
    /// Strings (`wide`: CDR `wstring`, only ever skipped or written empty).
    Strings { wide: bool },
    /// Messages: the blocks that translate, skip and default one element, and the fewest bytes
    /// an element takes in the source and in the destination.
    Messages {
        map: u32,
        skip: u32,
        default: u32,
        src_min: u32,
        dst_min: u32,
    },
}

/// One step of a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// Aligns the source (CDR) position at run time.
    AlignSrc(u8),
    /// Aligns the destination (CDR) with zero padding at run time.
    AlignDst(u8),
    /// Copies bytes unchanged.
    Copy(u32),
    /// Skips source bytes.
    Skip(u32),
    /// Writes zero bytes.
    Zero(u32),
    /// One primitive read as one type and written as another (both sides aligned before).
    Cast { from: Prim, to: Prim },
    /// One string.
    String,
    /// Skips one string (`wide`: a CDR `wstring`).
    SkipString { wide: bool },
    /// Writes the empty string.
    EmptyString,
    /// An array: `src` elements read (none when absent), `dst` written (none when absent).
    Array {
        src: Option<Len>,
        dst: Option<Len>,
        elements: Elements,
    },
    /// Runs another block once.
    Call(u32),
    /// Remembers the source position in a slot of this block's frame.
    Mark(u16),
    /// Moves the source position back to a remembered one.
    Goto(u16),
}

#[derive(Debug, Clone, Default)]
struct Block {
    ops: Vec<Op>,
    marks: u16,
}

/// A program translating messages of one type between two wire formats.
///
/// Compiled by [`Transcoder::compile`] from the source's and the destination's definitions;
/// [`Transcoder::transcode`] then translates each message without building values.
#[derive(Debug, Clone)]
pub(crate) struct Transcoder {
    src_wire: Wire,
    dst_wire: Wire,
    blocks: Arc<[Block]>,
    /// The destination's fixed part of the top-level message (a capacity hint).
    dst_min: usize,
}

/// Compiled code before it becomes a block: ops, and what is known after them.
#[derive(Debug, Clone)]
struct Fragment {
    ops: Vec<Op>,
    src_after: Known,
    dst_after: Known,
    marks: u16,
}

/// Which pair a block serves: a source type, a destination type, or both.
type PairKey = (Option<TypeName>, Option<TypeName>);

struct Compiler<'r> {
    src: &'r Registry,
    dst: &'r Registry,
    src_wire: Wire,
    dst_wire: Wire,
    blocks: Vec<Block>,
    standalone: HashMap<PairKey, (u32, Known, Known)>,
    fragments: HashMap<(PairKey, Known, Known), Fragment>,
    sizes: HashMap<(TypeName, bool), u64>,
    depth: usize,
}

/// Builds a fragment op by op, merging what can be merged and tracking alignment.
struct Emit {
    ops: Vec<Op>,
    src: Known,
    dst: Known,
    marks: u16,
}

impl Emit {
    fn new(src: Known, dst: Known) -> Emit {
        Emit {
            ops: Vec::new(),
            src,
            dst,
            marks: 0,
        }
    }

    fn push(&mut self, op: Op) {
        match (self.ops.last_mut(), op) {
            (Some(Op::Copy(a)), Op::Copy(b)) => *a = a.saturating_add(b),
            (Some(Op::Skip(a)), Op::Skip(b)) => *a = a.saturating_add(b),
            (Some(Op::Zero(a)), Op::Zero(b)) => *a = a.saturating_add(b),
            (_, Op::Copy(0) | Op::Skip(0) | Op::Zero(0)) => {}
            _ => self.ops.push(op),
        }
    }

    fn align_src(&mut self, wire: Wire, align: usize) {
        if wire != Wire::Cdr || align <= 1 {
            return;
        }
        if usize::from(self.src.modulus) >= align {
            let pad = (align - usize::from(self.src.residue) % align) % align;
            self.push(Op::Skip(pad as u32));
            self.src = self.src.advance(pad as u64);
        } else {
            self.push(Op::AlignSrc(align as u8));
            self.src = Known::aligned(align);
        }
    }

    fn align_dst(&mut self, wire: Wire, align: usize) {
        if wire != Wire::Cdr || align <= 1 {
            return;
        }
        if usize::from(self.dst.modulus) >= align {
            let pad = (align - usize::from(self.dst.residue) % align) % align;
            self.push(Op::Zero(pad as u32));
            self.dst = self.dst.advance(pad as u64);
        } else {
            self.push(Op::AlignDst(align as u8));
            self.dst = Known::aligned(align);
        }
    }

    fn copy(&mut self, bytes: u64) {
        self.push(Op::Copy(bytes as u32));
        self.src = self.src.advance(bytes);
        self.dst = self.dst.advance(bytes);
    }

    fn skip(&mut self, bytes: u64) {
        self.push(Op::Skip(bytes as u32));
        self.src = self.src.advance(bytes);
    }

    fn zero(&mut self, bytes: u64) {
        self.push(Op::Zero(bytes as u32));
        self.dst = self.dst.advance(bytes);
    }

    fn fragment(self) -> Fragment {
        Fragment {
            ops: self.ops,
            src_after: self.src,
            dst_after: self.dst,
            marks: self.marks,
        }
    }
}

/// The alignment of a primitive on a wire.
fn align_of(prim: Prim, wire: Wire) -> usize {
    match wire {
        Wire::Ros1 => 1,
        Wire::Cdr => prim.size(),
    }
}

impl<'r> Compiler<'r> {
    fn registry(&self, source: bool) -> &'r Registry {
        if source { self.src } else { self.dst }
    }

    fn wire(&self, source: bool) -> Wire {
        if source { self.src_wire } else { self.dst_wire }
    }

    fn prim(&self, p: PrimitiveType, source: bool) -> Prim {
        // Only time, duration and the strings have no Prim; the first two are messages here
        // and the others are not Elem::Prim.
        Prim::of(p, self.wire(source)).unwrap_or(Prim::U8)
    }

    /// The fewest bytes a message of `name` takes on one side (padding not counted,
    /// saturated).
    fn min_size(&mut self, name: &TypeName, source: bool) -> Result<u64, CompileError> {
        if let Some(&size) = self.sizes.get(&(name.clone(), source)) {
            return Ok(size);
        }
        self.enter(name)?;
        let definition = self.registry(source).require(name)?;
        let wire = self.wire(source);
        let mut total = 0u64;
        for slot in slots(definition, wire) {
            let element = match &slot.elem {
                Elem::Prim(p) => self.prim(*p, source).size() as u64,
                Elem::String { .. } | Elem::WString { .. } => 4,
                Elem::Message(inner) => self.min_size(inner, source)?,
            };
            let size = match slot.shape {
                Shape::One => element,
                Shape::Fixed(n) => element.saturating_mul(n),
                Shape::Seq(_) => 4,
            };
            total = total.saturating_add(size);
        }
        self.depth -= 1;
        self.sizes.insert((name.clone(), source), total);
        Ok(total)
    }

    fn enter(&mut self, name: &TypeName) -> Result<(), CompileError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(CompileError::TooDeep {
                type_name: name.clone(),
            });
        }
        Ok(())
    }

    /// The block of a pair compiled from an unknown alignment, for calls and array elements.
    fn standalone(&mut self, key: &PairKey) -> Result<(u32, Known, Known), CompileError> {
        if let Some(&found) = self.standalone.get(key) {
            return Ok(found);
        }
        let fragment = self.message(key, Known::NOTHING, Known::NOTHING)?;
        let id = self.blocks.len() as u32;
        self.blocks.push(Block {
            ops: fragment.ops,
            marks: fragment.marks,
        });
        let entry = (id, fragment.src_after, fragment.dst_after);
        self.standalone.insert(key.clone(), entry);
        Ok(entry)
    }

    /// The code of one message (a pair, a source message to skip or a destination message to
    /// write as zero values), from the given alignment knowledge.
    fn message(&mut self, key: &PairKey, src: Known, dst: Known) -> Result<Fragment, CompileError> {
        let cache_key = (key.clone(), src, dst);
        if let Some(found) = self.fragments.get(&cache_key) {
            return Ok(found.clone());
        }
        let Some(name) = key.1.as_ref().or(key.0.as_ref()).cloned() else {
            return Ok(Emit::new(src, dst).fragment());
        };
        self.enter(&name)?;
        let src_slots = match &key.0 {
            Some(n) => slots(self.src.require(n)?, self.src_wire),
            None => Vec::new(),
        };
        let dst_slots = match &key.1 {
            Some(n) => slots(self.dst.require(n)?, self.dst_wire),
            None => Vec::new(),
        };
        let mut emit = Emit::new(src, dst);
        match (&key.0, &key.1) {
            (Some(_), None) => {
                for s in &src_slots {
                    self.field(&mut emit, Some(s), None)?;
                }
            }
            (None, _) => {
                for d in &dst_slots {
                    self.field(&mut emit, None, Some(d))?;
                }
            }
            (Some(_), Some(_)) => {
                let paired = pair(&src_slots, &dst_slots);
                let used: Vec<usize> = paired.iter().flatten().copied().collect();
                let in_order = used.windows(2).all(|w| w[0] < w[1]);
                if in_order {
                    // One pass: source fields between paired ones are skipped.
                    let mut next = 0;
                    for (d, from) in dst_slots.iter().zip(&paired) {
                        match from {
                            Some(s) => {
                                for skipped in &src_slots[next..*s] {
                                    self.field(&mut emit, Some(skipped), None)?;
                                }
                                self.field(&mut emit, Some(&src_slots[*s]), Some(d))?;
                                next = s + 1;
                            }
                            None => self.field(&mut emit, None, Some(d))?,
                        }
                    }
                    for skipped in &src_slots[next..] {
                        self.field(&mut emit, Some(skipped), None)?;
                    }
                } else {
                    // Reordered fields: find where each source field starts, then read them in
                    // the destination's order.
                    let end = src_slots.len() as u16;
                    for (i, s) in src_slots.iter().enumerate() {
                        emit.push(Op::Mark(i as u16));
                        self.field(&mut emit, Some(s), None)?;
                    }
                    emit.push(Op::Mark(end));
                    emit.marks = end + 1;
                    for (d, from) in dst_slots.iter().zip(&paired) {
                        match from {
                            Some(s) => {
                                emit.push(Op::Goto(*s as u16));
                                emit.src = Known::NOTHING;
                                self.field(&mut emit, Some(&src_slots[*s]), Some(d))?;
                            }
                            None => self.field(&mut emit, None, Some(d))?,
                        }
                    }
                    emit.push(Op::Goto(end));
                    emit.src = Known::NOTHING;
                }
            }
        }
        self.depth -= 1;
        let fragment = emit.fragment();
        self.fragments.insert(cache_key, fragment.clone());
        Ok(fragment)
    }

    /// A nested message, inline when its code is small, called otherwise.
    fn nested(&mut self, emit: &mut Emit, key: PairKey) -> Result<(), CompileError> {
        let fragment = self.message(&key, emit.src, emit.dst)?;
        if fragment.ops.len() <= INLINE_OPS && fragment.marks == 0 {
            for op in fragment.ops {
                emit.push(op);
            }
            emit.src = fragment.src_after;
            emit.dst = fragment.dst_after;
        } else {
            let (id, src_after, dst_after) = self.standalone(&key)?;
            emit.push(Op::Call(id));
            emit.src = src_after;
            emit.dst = dst_after;
        }
        Ok(())
    }

    /// The code of one field: paired (both), skipped (source only) or written as its zero
    /// value (destination only).
    fn field(
        &mut self,
        emit: &mut Emit,
        s: Option<&Slot>,
        d: Option<&Slot>,
    ) -> Result<(), CompileError> {
        match (s, d) {
            (Some(s), Some(d)) if compatible(s, d) => self.paired(emit, s, d),
            (Some(s), Some(d)) => {
                // Kinds that do not fit: the source is dropped, the destination zero.
                self.field(emit, Some(s), None)?;
                self.field(emit, None, Some(d))
            }
            (Some(s), None) => self.one_side(emit, s, true),
            (None, Some(d)) => self.one_side(emit, d, false),
            (None, None) => Ok(()),
        }
    }

    fn paired(&mut self, emit: &mut Emit, s: &Slot, d: &Slot) -> Result<(), CompileError> {
        let (sw, dw) = (self.src_wire, self.dst_wire);
        match (&s.shape, &d.shape) {
            (Shape::One, Shape::One) => match (&s.elem, &d.elem) {
                (Elem::Prim(a), Elem::Prim(b)) => {
                    let (from, to) = (self.prim(*a, true), self.prim(*b, false));
                    emit.align_src(sw, align_of(from, sw));
                    emit.align_dst(dw, align_of(to, dw));
                    if from.copies_to(to) {
                        emit.copy(from.size() as u64);
                    } else {
                        emit.push(Op::Cast { from, to });
                        emit.src = emit.src.advance(from.size() as u64);
                        emit.dst = emit.dst.advance(to.size() as u64);
                    }
                    Ok(())
                }
                (Elem::String { .. }, Elem::String { .. }) => {
                    emit.push(Op::String);
                    after_string(emit, true, true);
                    Ok(())
                }
                (Elem::Message(a), Elem::Message(b)) => {
                    self.nested(emit, (Some(a.clone()), Some(b.clone())))
                }
                _ => Ok(()),
            },
            _ => {
                let elements = self.elements(Some(&s.elem), Some(&d.elem))?;
                let (src_len, dst_len) = (length(s.shape), length(d.shape));
                // The common case, a fixed array copied as it is: one copy.
                if let (Some(Len::Fixed(n)), Some(Len::Fixed(m)), Elements::Prims { from, to }) =
                    (src_len, dst_len, elements)
                    && from.copies_to(to)
                {
                    emit.align_src(sw, align_of(from, sw));
                    emit.align_dst(dw, align_of(to, dw));
                    let size = from.size() as u64;
                    let common = u64::from(n.min(m));
                    emit.copy(common * size);
                    emit.skip(u64::from(n - n.min(m)) * size);
                    emit.zero(u64::from(m - n.min(m)) * size);
                    return Ok(());
                }
                emit.push(Op::Array {
                    src: src_len,
                    dst: dst_len,
                    elements,
                });
                after_array(emit, sw, src_len, dw, dst_len, elements);
                Ok(())
            }
        }
    }

    fn one_side(&mut self, emit: &mut Emit, slot: &Slot, source: bool) -> Result<(), CompileError> {
        let wire = self.wire(source);
        match slot.shape {
            Shape::One => match &slot.elem {
                Elem::Prim(p) => {
                    let prim = self.prim(*p, source);
                    let size = prim.size() as u64;
                    if source {
                        emit.align_src(wire, align_of(prim, wire));
                        emit.skip(size);
                    } else {
                        emit.align_dst(wire, align_of(prim, wire));
                        emit.zero(size);
                    }
                    Ok(())
                }
                Elem::String { .. } | Elem::WString { .. } => {
                    let wide = matches!(slot.elem, Elem::WString { .. });
                    if source {
                        emit.push(Op::SkipString { wide });
                        after_string(emit, true, false);
                    } else if wide {
                        // An empty wstring is its count.
                        emit.align_dst(wire, 4);
                        emit.zero(4);
                    } else {
                        emit.push(Op::EmptyString);
                        after_string(emit, false, true);
                    }
                    Ok(())
                }
                Elem::Message(name) => {
                    let key = if source {
                        (Some(name.clone()), None)
                    } else {
                        (None, Some(name.clone()))
                    };
                    self.nested(emit, key)
                }
            },
            shape => {
                let elements = if source {
                    self.elements(Some(&slot.elem), None)?
                } else {
                    self.elements(None, Some(&slot.elem))?
                };
                let len = length(shape);
                // Fixed arrays of primitives, and empty sequences, are constants.
                match (len, elements) {
                    (Some(Len::Fixed(n)), Elements::Prims { from, to }) => {
                        let prim = if source { from } else { to };
                        let bytes = u64::from(n) * prim.size() as u64;
                        if source {
                            emit.align_src(wire, align_of(prim, wire));
                            emit.skip(bytes);
                        } else {
                            emit.align_dst(wire, align_of(prim, wire));
                            emit.zero(bytes);
                        }
                        return Ok(());
                    }
                    (Some(Len::Seq { .. }), _) if !source => {
                        emit.align_dst(wire, 4);
                        emit.zero(4);
                        return Ok(());
                    }
                    _ => {}
                }
                let (src, dst) = if source { (len, None) } else { (None, len) };
                emit.push(Op::Array { src, dst, elements });
                after_array(emit, self.src_wire, src, self.dst_wire, dst, elements);
                Ok(())
            }
        }
    }

    /// The elements of an array on either or both sides.
    fn elements(&mut self, s: Option<&Elem>, d: Option<&Elem>) -> Result<Elements, CompileError> {
        let any = d.or(s);
        Ok(match any {
            Some(Elem::Prim(_)) => {
                let from = match s {
                    Some(Elem::Prim(p)) => self.prim(*p, true),
                    _ => Prim::U8,
                };
                let to = match d {
                    Some(Elem::Prim(p)) => self.prim(*p, false),
                    _ => from,
                };
                let from = if s.is_some() { from } else { to };
                Elements::Prims { from, to }
            }
            Some(Elem::String { .. } | Elem::WString { .. }) => Elements::Strings {
                wide: matches!(any, Some(Elem::WString { .. })),
            },
            Some(Elem::Message(_)) | None => {
                let src_name = match s {
                    Some(Elem::Message(n)) => Some(n.clone()),
                    _ => None,
                };
                let dst_name = match d {
                    Some(Elem::Message(n)) => Some(n.clone()),
                    _ => None,
                };
                let none = u32::MAX;
                let map = if src_name.is_some() && dst_name.is_some() {
                    self.standalone(&(src_name.clone(), dst_name.clone()))?.0
                } else {
                    none
                };
                let skip = match &src_name {
                    Some(n) => self.standalone(&(Some(n.clone()), None))?.0,
                    None => none,
                };
                let default = match &dst_name {
                    Some(n) => self.standalone(&(None, Some(n.clone())))?.0,
                    None => none,
                };
                let src_min = match &src_name {
                    Some(n) => self.min_size(n, true)?,
                    None => 0,
                };
                let dst_min = match &dst_name {
                    Some(n) => self.min_size(n, false)?,
                    None => 0,
                };
                for (name, bytes) in [(&src_name, src_min), (&dst_name, dst_min)] {
                    if let Some(name) = name
                        && bytes > MAX_FIXED_SIZE
                    {
                        return Err(CompileError::TooLarge {
                            type_name: name.clone(),
                            bytes,
                        });
                    }
                }
                Elements::Messages {
                    map,
                    skip,
                    default,
                    src_min: u32::try_from(src_min).unwrap_or(u32::MAX),
                    dst_min: u32::try_from(dst_min).unwrap_or(u32::MAX),
                }
            }
        })
    }
}

/// Whether two paired fields can be moved one into the other (rosbags' rules): scalars of a
/// base type with the same string-ness, scalar messages, or arrays whose elements are both
/// messages or both base types of the same string-ness.
fn compatible(s: &Slot, d: &Slot) -> bool {
    let scalar = |x: &Slot| x.shape == Shape::One;
    if scalar(s) != scalar(d) || s.is_base() != d.is_base() {
        return false;
    }
    if s.is_base() {
        // A wide string pairs with nothing but itself, which never meets a ROS 1 side.
        let wide = |x: &Slot| matches!(x.elem, Elem::WString { .. });
        return s.is_stringy() == d.is_stringy() && !wide(s) && !wide(d);
    }
    true
}

fn length(shape: Shape) -> Option<Len> {
    match shape {
        Shape::One => None,
        Shape::Fixed(n) => Some(Len::Fixed(u32::try_from(n).unwrap_or(u32::MAX))),
        Shape::Seq(bound) => Some(Len::Seq {
            bound: bound.map_or(u32::MAX, |b| u32::try_from(b).unwrap_or(u32::MAX)),
        }),
    }
}

/// After a string nothing is known about the sides it touched.
fn after_string(emit: &mut Emit, source: bool, dest: bool) {
    if source {
        emit.src = Known::NOTHING;
    }
    if dest {
        emit.dst = Known::NOTHING;
    }
}

/// What is known after an array on each side it touches: a sequence of primitives ends
/// after its count or its last element, so aligned to the smaller of 4 and their size (a
/// fixed array of them after at least one element); anything else leaves nothing known.
fn after_array(
    emit: &mut Emit,
    sw: Wire,
    src: Option<Len>,
    dw: Wire,
    dst: Option<Len>,
    elements: Elements,
) {
    let after = |wire: Wire, len: Len, prim: Prim, before: Known| match (wire, len) {
        (Wire::Ros1, _) => Known::NOTHING,
        (Wire::Cdr, Len::Fixed(0)) => before,
        (Wire::Cdr, _) => Known::aligned(prim.size().min(4)),
    };
    if let Some(len) = src {
        emit.src = match elements {
            Elements::Prims { from, .. } => after(sw, len, from, emit.src),
            _ => Known::NOTHING,
        };
    }
    if let Some(len) = dst {
        emit.dst = match elements {
            Elements::Prims { to, .. } => after(dw, len, to, emit.dst),
            _ => Known::NOTHING,
        };
    }
}

impl Transcoder {
    /// Compiles the translation of `src_type` (in `src`, serialized as `src_wire`) into
    /// `dst_type` (in `dst`, as `dst_wire`).
    ///
    /// The registries must describe each side as its wire sees it, with the ROS 1 `time` and
    /// `duration` primitives rewritten as the messages `builtin_interfaces/Time` and
    /// `Duration` of `int32 sec, uint32 nanosec` (see the parent module).
    pub(crate) fn compile(
        src: &Registry,
        src_wire: Wire,
        src_type: &TypeName,
        dst: &Registry,
        dst_wire: Wire,
        dst_type: &TypeName,
    ) -> Result<Transcoder, CompileError> {
        // Refuses missing and recursive types before anything walks them.
        src.dependencies(src_type)?;
        dst.dependencies(dst_type)?;
        let mut compiler = Compiler {
            src,
            dst,
            src_wire,
            dst_wire,
            blocks: vec![Block::default()],
            standalone: HashMap::new(),
            fragments: HashMap::new(),
            sizes: HashMap::new(),
            depth: 0,
        };
        let dst_min = compiler.min_size(dst_type, false)?;
        let src_min = compiler.min_size(src_type, true)?;
        for (name, bytes) in [(dst_type, dst_min), (src_type, src_min)] {
            // Also keeps every constant byte count of the program within a u32.
            if bytes > MAX_FIXED_SIZE {
                return Err(CompileError::TooLarge {
                    type_name: name.clone(),
                    bytes,
                });
            }
        }
        let top = compiler.message(
            &(Some(src_type.clone()), Some(dst_type.clone())),
            Known::START,
            Known::START,
        )?;
        compiler.blocks[0] = Block {
            ops: top.ops,
            marks: top.marks,
        };
        Ok(Transcoder {
            src_wire,
            dst_wire,
            blocks: compiler.blocks.into(),
            dst_min: dst_min as usize,
        })
    }

    /// Appends the translation of `message` to `out` (a CDR destination gets the
    /// little-endian XCDR1 header). On error `out` may hold part of a message.
    pub(crate) fn transcode(
        &self,
        message: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), TranscodeError> {
        let src_base = match self.src_wire {
            Wire::Ros1 => 0,
            Wire::Cdr => {
                let header = message.get(..4).ok_or_else(|| TranscodeError::Truncated {
                    offset: 0,
                    needed: 4 - message.len(),
                    len: message.len(),
                })?;
                if header[..2] != [0, 1] {
                    return Err(TranscodeError::Encapsulation {
                        kind: u16::from_be_bytes([header[0], header[1]]),
                    });
                }
                4
            }
        };
        out.reserve(self.dst_min + message.len() + message.len() / 4 + 8);
        if self.dst_wire == Wire::Cdr {
            out.extend_from_slice(&[0, 1, 0, 0]);
        }
        let limit = out.len() + MAX_FIXED_SIZE as usize + message.len().saturating_mul(64);
        let mut run = Run {
            blocks: &self.blocks,
            src: message,
            sp: src_base,
            src_base,
            src_cdr: self.src_wire == Wire::Cdr,
            dst_base: out.len(),
            dst_cdr: self.dst_wire == Wire::Cdr,
            out,
            limit,
            work: WORK_ALLOWANCE.saturating_add(message.len().saturating_mul(8)),
        };
        run.block(0)
    }
}

/// One translation in progress.
struct Run<'t, 's, 'o> {
    blocks: &'t [Block],
    src: &'s [u8],
    sp: usize,
    src_base: usize,
    src_cdr: bool,
    out: &'o mut Vec<u8>,
    dst_base: usize,
    dst_cdr: bool,
    limit: usize,
    work: usize,
}

impl Run<'_, '_, '_> {
    #[inline]
    fn take(&mut self, n: usize) -> Result<&[u8], TranscodeError> {
        let end = self
            .sp
            .checked_add(n)
            .filter(|&e| e <= self.src.len())
            .ok_or(TranscodeError::Truncated {
                offset: self.sp,
                needed: (self.sp + n).saturating_sub(self.src.len()),
                len: self.src.len(),
            })?;
        let bytes = &self.src[self.sp..end];
        self.sp = end;
        Ok(bytes)
    }

    #[inline]
    fn align_src(&mut self, align: usize) {
        if self.src_cdr {
            let offset = self.sp - self.src_base;
            self.sp += offset.wrapping_neg() & (align - 1);
        }
    }

    #[inline]
    fn align_dst(&mut self, align: usize) {
        if self.dst_cdr {
            let offset = self.out.len() - self.dst_base;
            let pad = offset.wrapping_neg() & (align - 1);
            self.out.resize(self.out.len() + pad, 0);
        }
    }

    fn spend(&mut self, elements: usize) -> Result<(), TranscodeError> {
        self.work = self
            .work
            .checked_sub(elements)
            .ok_or(TranscodeError::TooLarge {
                limit: WORK_ALLOWANCE,
            })?;
        Ok(())
    }

    fn grow(&self, bytes: u64) -> Result<(), TranscodeError> {
        let room = (self.limit.saturating_sub(self.out.len())) as u64;
        if bytes > room {
            return Err(TranscodeError::TooLarge { limit: self.limit });
        }
        Ok(())
    }

    fn read_count(&mut self) -> Result<u32, TranscodeError> {
        self.align_src(4);
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn write_count(&mut self, count: u32) {
        self.align_dst(4);
        self.out.extend_from_slice(&count.to_le_bytes());
    }

    /// Reads a string's bytes (without a CDR NUL).
    fn read_string(&mut self) -> Result<(usize, usize), TranscodeError> {
        let at = self.sp;
        let len = self.read_count()? as usize;
        let start = self.sp;
        let remaining = self.src.len().saturating_sub(start);
        self.take(len).map_err(|_| TranscodeError::LengthPastEnd {
            count: len as u64,
            offset: at,
            remaining,
        })?;
        let mut end = start + len;
        if self.src_cdr && len > 0 && self.src[end - 1] == 0 {
            end -= 1;
        }
        Ok((start, end))
    }

    fn string(&mut self) -> Result<(), TranscodeError> {
        let (start, end) = self.read_string()?;
        let len = end - start;
        if self.dst_cdr {
            // The source held `len` bytes, so `len` fits a u32 count (it was one, or the
            // message is CDR whose count included the NUL).
            self.write_count((len as u32).saturating_add(1));
            self.out.extend_from_slice(&self.src[start..end]);
            self.out.push(0);
        } else {
            self.write_count(len as u32);
            self.out.extend_from_slice(&self.src[start..end]);
        }
        Ok(())
    }

    fn skip_string(&mut self, wide: bool) -> Result<(), TranscodeError> {
        let at = self.sp;
        let count = self.read_count()? as usize;
        let bytes = if wide { count.saturating_mul(4) } else { count };
        let remaining = self.src.len().saturating_sub(self.sp);
        self.take(bytes)
            .map_err(|_| TranscodeError::LengthPastEnd {
                count: count as u64,
                offset: at,
                remaining,
            })?;
        Ok(())
    }

    fn empty_string(&mut self) {
        if self.dst_cdr {
            self.write_count(1);
            self.out.push(0);
        } else {
            self.write_count(0);
        }
    }

    fn block(&mut self, id: u32) -> Result<(), TranscodeError> {
        let blocks = self.blocks;
        let block = &blocks[id as usize];
        let mut marks = vec![0usize; usize::from(block.marks)];
        for op in &block.ops {
            match *op {
                Op::AlignSrc(a) => self.align_src(usize::from(a)),
                Op::AlignDst(a) => self.align_dst(usize::from(a)),
                Op::Copy(n) => {
                    let n = n as usize;
                    let start = self.sp;
                    self.take(n)?;
                    self.out.extend_from_slice(&self.src[start..start + n]);
                }
                Op::Skip(n) => {
                    self.take(n as usize)?;
                }
                Op::Zero(n) => self.out.resize(self.out.len() + n as usize, 0),
                Op::Cast { from, to } => {
                    let start = self.sp;
                    self.take(from.size())?;
                    let value = from.read(&self.src[start..start + from.size()]);
                    to.write(value, self.out);
                }
                Op::String => self.string()?,
                Op::SkipString { wide } => self.skip_string(wide)?,
                Op::EmptyString => self.empty_string(),
                Op::Array { src, dst, elements } => self.array(src, dst, elements)?,
                Op::Call(b) => self.block(b)?,
                Op::Mark(slot) => {
                    if let Some(m) = marks.get_mut(usize::from(slot)) {
                        *m = self.sp;
                    }
                }
                Op::Goto(slot) => {
                    if let Some(&m) = marks.get(usize::from(slot)) {
                        self.sp = m;
                    }
                }
            }
        }
        Ok(())
    }

    fn array(
        &mut self,
        src: Option<Len>,
        dst: Option<Len>,
        elements: Elements,
    ) -> Result<(), TranscodeError> {
        let count_at = self.sp;
        let n_src = match src {
            None => 0,
            Some(Len::Fixed(n)) => n,
            Some(Len::Seq { .. }) => self.read_count()?,
        };
        // A count must fit the bytes left (at a byte per element for messages that may be
        // empty, whose number is bounded by the work allowance instead).
        let src_min = match elements {
            Elements::Prims { from, .. } => from.size() as u64,
            Elements::Strings { .. } => 4,
            Elements::Messages { src_min, .. } => u64::from(src_min),
        };
        let remaining = self.src.len().saturating_sub(self.sp);
        if src.is_some() && u64::from(n_src).saturating_mul(src_min) > remaining as u64 {
            return Err(TranscodeError::LengthPastEnd {
                count: u64::from(n_src),
                offset: count_at,
                remaining,
            });
        }
        let (mapped, n_dst) = match dst {
            None => (0, 0),
            Some(Len::Fixed(n)) => (if src.is_some() { n_src.min(n) } else { 0 }, n),
            Some(Len::Seq { bound }) => {
                let m = if src.is_some() { n_src.min(bound) } else { 0 };
                self.write_count(m);
                (m, m)
            }
        };
        let dst_min = match elements {
            Elements::Prims { to, .. } => to.size() as u64,
            Elements::Strings { .. } => 4,
            Elements::Messages { dst_min, .. } => u64::from(dst_min).max(1),
        };
        self.grow(u64::from(n_dst).saturating_mul(dst_min))?;
        let (mapped, n_src, n_dst) = (mapped as usize, n_src as usize, n_dst as usize);
        match elements {
            Elements::Prims { from, to } => {
                if n_src > 0 {
                    self.align_src(from.size());
                }
                if n_dst > 0 {
                    self.align_dst(to.size());
                }
                if from.copies_to(to) {
                    let bytes = mapped * from.size();
                    let start = self.sp;
                    self.take(bytes)?;
                    self.out.extend_from_slice(&self.src[start..start + bytes]);
                } else {
                    for _ in 0..mapped {
                        let start = self.sp;
                        self.take(from.size())?;
                        let value = from.read(&self.src[start..start + from.size()]);
                        to.write(value, self.out);
                    }
                }
                self.take((n_src - mapped) * from.size())?;
                self.out
                    .resize(self.out.len() + (n_dst - mapped) * to.size(), 0);
            }
            Elements::Strings { wide } => {
                self.spend(n_src.max(n_dst))?;
                for _ in 0..mapped {
                    self.string()?;
                }
                for _ in mapped..n_src {
                    self.skip_string(wide)?;
                }
                for _ in mapped..n_dst {
                    if wide {
                        self.write_count(0);
                    } else {
                        self.empty_string();
                    }
                }
            }
            Elements::Messages {
                map, skip, default, ..
            } => {
                self.spend(n_src.max(n_dst))?;
                for _ in 0..mapped {
                    self.block(map)?;
                }
                for _ in mapped..n_src {
                    self.block(skip)?;
                }
                for _ in mapped..n_dst {
                    self.block(default)?;
                }
            }
        }
        Ok(())
    }
}
