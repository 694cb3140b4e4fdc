//! Decoding message bytes into a [`Tree`] by walking a compiled [`Plan`].
//!
//! Two walks share this file. The fast one, for little-endian XCDR1 (what ROS 2 records),
//! reads runs of fixed-layout fields through the plan's templates, and strings, short runs and
//! the messages made of them through the plan's linear steps, one piece after the other. The field-by-field one
//! handles every encapsulation, strict checks and error reports: when the fast walk fails, the
//! message is walked again field by field, which names the failing field and offset exactly.

use crate::decoded::Decoded;
use crate::error::{Error, FieldPath, PathStep};
use crate::header::{Encapsulation, HEADER_LEN};
use crate::plan::{
    Count, Elem, FieldPlan, Group, Linear, NESTED, Op, PHASES, Piece, Plan, Step, Template,
    alignment, padding,
};
use crate::value::{ByteOrder, PrimitiveArray, PrimitiveKind, Span, Tree, Value, WideString};

/// A message decodes to at most this many values per byte, plus [`VALUE_ALLOWANCE`]. Real
/// messages stay far below (an array of one-byte messages is 2 per byte); the bound stops a
/// hostile definition (messages nesting many tiny messages) from turning a few bytes into
/// gigabytes of tree.
pub const MAX_VALUES_PER_BYTE: usize = 8;

/// The values every message may have beyond [`MAX_VALUES_PER_BYTE`] per byte.
pub const VALUE_ALLOWANCE: usize = 1 << 16;

/// Errors travel boxed inside the decoder so that the success path moves small results.
pub(crate) type Fail = Box<Error>;

/// What decoding one message found besides its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoding {
    encapsulation: Encapsulation,
    end: usize,
    trailing: usize,
    irregular: bool,
}

impl Decoding {
    /// The message's encapsulation (byte order, XCDR version).
    pub fn encapsulation(&self) -> Encapsulation {
        self.encapsulation
    }

    /// The offset just after the last field (the header included).
    pub fn end(&self) -> usize {
        self.end
    }

    /// How many bytes follow the last field when they are more than the 0 to 3 bytes of padding
    /// some writers add; 0 for a well-formed message.
    pub fn trailing_bytes(&self) -> usize {
        if self.trailing > 3 { self.trailing } else { 0 }
    }

    /// Whether strict decoding ([`Plan::decode_strict`]) accepts the message: no more than 3
    /// trailing bytes, every `bool` 0 or 1, every string NUL-terminated, every bounded string or
    /// sequence within its bound.
    pub fn is_regular(&self) -> bool {
        !self.irregular && self.trailing <= 3
    }
}

impl Plan {
    /// Decodes one message (the 4-byte encapsulation header, then the payload). Strings and
    /// primitive arrays borrow from `data`.
    ///
    /// Decoding is lenient where real writers differ and nothing is lost: up to 3 bytes after
    /// the message (padding) and a `bool` byte above 1 (true) are accepted, a string without
    /// its NUL keeps all its bytes, and a bounded string or sequence over its bound is kept
    /// whole; [`Decoded::warning`] says what strict decoding would have refused. More trailing
    /// bytes are reported by [`Decoded::trailing_bytes`].
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
        let decoding = self.decode_into(data, &mut tree)?;
        Ok(Decoded::new(self, tree, data, decoding))
    }

    /// Like [`Plan::decode`], but anything a conforming writer does not produce is an error:
    /// more than 3 bytes after the message ([`Error::TrailingBytes`]), a `bool` byte other
    /// than 0 or 1 ([`Error::InvalidBool`]), a string without its NUL ([`Error::MissingNul`]),
    /// a bounded string or sequence over its bound ([`Error::BoundExceeded`]), an empty
    /// message without its byte ([`Error::Truncated`]).
    pub fn decode_strict<'p, 'a>(&'p self, data: &'a [u8]) -> Result<Decoded<'p, 'a>, Error> {
        let decoded = self.decode(data)?;
        if decoded.decoding().is_regular() {
            Ok(decoded)
        } else {
            Err(self.strict_error(data))
        }
    }

    /// Decodes one message into `tree`, reusing its allocation (the fastest way to decode many
    /// messages).
    pub fn decode_into<'a>(&self, data: &'a [u8], tree: &mut Tree<'a>) -> Result<Decoding, Error> {
        let encapsulation = Encapsulation::from_header(data)?;
        let fast = encapsulation == Encapsulation::CdrLe;
        match self.walk(data, tree, encapsulation, fast, false) {
            Ok(decoding) => Ok(decoding),
            // The fast walk does not locate errors; walking field by field does.
            Err(_) if fast => self
                .walk(data, tree, encapsulation, false, false)
                .map_err(|e| *e),
            Err(error) => Err(*error),
        }
    }

    /// The error strict decoding gives for a message that lenient decoding accepted with a
    /// remark (see [`Decoding::is_regular`]).
    pub(crate) fn strict_error(&self, data: &[u8]) -> Error {
        let mut tree = Tree::new();
        let walked = Encapsulation::from_header(data)
            .map_err(Box::new)
            .and_then(|encapsulation| self.walk(data, &mut tree, encapsulation, false, true));
        match walked {
            Err(error) => *error,
            Ok(decoding) => Error::TrailingBytes {
                offset: decoding.end,
                count: decoding.trailing,
            },
        }
    }

    // Inlined: its result is read right back, and a result returned through memory stalled
    // that read (a store-to-load forwarding failure on the small fields of `Decoding`).
    #[inline(always)]
    fn walk<'a>(
        &self,
        data: &'a [u8],
        tree: &mut Tree<'a>,
        encapsulation: Encapsulation,
        fast: bool,
        strict: bool,
    ) -> Result<Decoding, Fail> {
        tree.clear();
        let top = self.top();
        let mut decoder = Decoder {
            plan: self,
            data,
            pos: HEADER_LEN,
            nodes: &mut tree.nodes,
            node_limit: data
                .len()
                .saturating_mul(MAX_VALUES_PER_BYTE)
                .saturating_add(VALUE_ALLOWANCE),
            order: encapsulation.byte_order(),
            max_align: encapsulation.max_align(),
            fast,
            strict,
            irregular: false,
        };
        let len = top.fields.len();
        decoder.nodes.resize(len, PLACEHOLDER);
        let result = if top.empty && decoder.remaining() == 0 {
            // Some writers leave out the byte of an empty top-level message.
            decoder.irregular(|| Error::Truncated {
                path: FieldPath::root(),
                offset: HEADER_LEN,
                needed: 1,
                available: 0,
            })
        } else {
            decoder.message_fields(0, 0)
        };
        let end = decoder.pos;
        let irregular = decoder.irregular;
        match result {
            Ok(()) => {
                tree.root = Span { start: 0, len };
                Ok(Decoding {
                    encapsulation,
                    end,
                    trailing: data.len().saturating_sub(end),
                    irregular,
                })
            }
            Err(error) => {
                tree.clear();
                Err(error)
            }
        }
    }
}

/// What reserved slots hold until the decoder fills them.
const PLACEHOLDER: Value<'static> = Value::Bool(false);

struct Decoder<'p, 'a, 'n> {
    plan: &'p Plan,
    /// The whole message, header included; `pos` counts from its first byte.
    data: &'a [u8],
    pos: usize,
    nodes: &'n mut Vec<Value<'a>>,
    /// The most nodes this message may produce (see [`MAX_VALUES_PER_BYTE`]).
    node_limit: usize,
    order: ByteOrder,
    max_align: usize,
    /// Little-endian XCDR1: runs of fixed-layout fields through the templates.
    fast: bool,
    /// Irregularities are errors rather than remarks.
    strict: bool,
    irregular: bool,
}

/// The `N`-byte elements of a group of `count` primitives at `offset`.
#[inline(always)]
fn elements<const N: usize>(bytes: &[u8], offset: u32, count: usize) -> Result<&[[u8; N]], ()> {
    let start = offset as usize;
    let source = bytes.get(start..start + count * N).ok_or(())?;
    Ok(source.as_chunks::<N>().0)
}

/// Runs `$sink` on an iterator over the values of `$group` (little endian): one dispatch per
/// group, then a loop specialised for the group's type. `$odd` is set when a `bool` byte is
/// neither 0 nor 1.
macro_rules! with_group_values {
    ($group:expr, $bytes:expr, $append_base:expr, $odd:expr, |$values:ident| $sink:expr) => {{
        let group: &Group = $group;
        let bytes: &[u8] = $bytes;
        let odd: &mut bool = $odd;
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
            Op::Bool(o) => {
                let source = elements::<1>(bytes, o, count)?;
                *odd |= source.iter().any(|b| b[0] > 1);
                let $values = source.iter().map(|b| Value::Bool(b[0] != 0));
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
                if kind == PrimitiveKind::Bool {
                    *odd |= array.iter().any(|b| *b > 1);
                }
                let $values = std::iter::once(Value::Array(PrimitiveArray::new_unchecked_len(
                    kind,
                    array,
                    ByteOrder::LittleEndian,
                )));
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

/// The value of a one-value group (the common case in small runs: fields of different types
/// side by side), without the loop machinery of [`fill`] and [`push`].
#[inline(always)]
fn read_one<'a>(op: Op, bytes: &'a [u8], append_base: usize, odd: &mut bool) -> Option<Value<'a>> {
    macro_rules! at {
        ($o:expr, $n:literal) => {{
            let start = $o as usize;
            <[u8; $n]>::try_from(bytes.get(start..start + $n)?).ok()?
        }};
    }
    Some(match op {
        Op::Float64(o) => Value::Float64(f64::from_le_bytes(at!(o, 8))),
        Op::Float32(o) => Value::Float32(f32::from_le_bytes(at!(o, 4))),
        Op::UInt32(o) => Value::UInt32(u32::from_le_bytes(at!(o, 4))),
        Op::Int32(o) => Value::Int32(i32::from_le_bytes(at!(o, 4))),
        Op::Bool(o) => {
            let byte = *bytes.get(o as usize)?;
            *odd |= byte > 1;
            Value::Bool(byte != 0)
        }
        Op::Int8(o) => Value::Int8(i8::from_le_bytes(at!(o, 1))),
        Op::UInt8(o) => Value::UInt8(*bytes.get(o as usize)?),
        Op::Int16(o) => Value::Int16(i16::from_le_bytes(at!(o, 2))),
        Op::UInt16(o) => Value::UInt16(u16::from_le_bytes(at!(o, 2))),
        Op::Int64(o) => Value::Int64(i64::from_le_bytes(at!(o, 8))),
        Op::UInt64(o) => Value::UInt64(u64::from_le_bytes(at!(o, 8))),
        Op::Array { kind, offset, len } => {
            let (offset, len) = (offset as usize, len as usize);
            let array = bytes.get(offset..offset + len)?;
            if kind == PrimitiveKind::Bool {
                *odd |= array.iter().any(|b| *b > 1);
            }
            Value::Array(PrimitiveArray::new_unchecked_len(
                kind,
                array,
                ByteOrder::LittleEndian,
            ))
        }
        Op::Message { rel, len } => Value::Message(Span {
            start: append_base + rel as usize,
            len: len as usize,
        }),
        Op::Messages { rel, len } => Value::Messages(Span {
            start: append_base + rel as usize,
            len: len as usize,
        }),
    })
}

/// Writes a group's values into slots reserved earlier.
#[inline(always)]
fn fill<'a>(
    slots: &mut [Value<'a>],
    group: &Group,
    bytes: &'a [u8],
    append_base: usize,
    odd: &mut bool,
) -> Result<(), ()> {
    with_group_values!(group, bytes, append_base, odd, |values| {
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
    odd: &mut bool,
) -> Result<(), ()> {
    with_group_values!(group, bytes, append_base, odd, |values| nodes
        .extend(values));
    Ok(())
}

/// Reads the values of a linear step without nested messages (see [`Linear`]) into `slots`
/// from payload offset `pos` of `payload` (the message without its header, so that offsets
/// are the ones CDR aligns); returns the offset after them. `odd` is set when a `bool` byte is
/// neither 0 nor 1 or a string lacks its NUL (the remarks of lenient decoding).
#[inline(always)]
fn fill_flat<'a>(
    pieces: &[(Piece, u32)],
    payload: &'a [u8],
    mut pos: usize,
    slots: &mut [Value<'a>],
    odd: &mut bool,
) -> Option<usize> {
    for (slot, &(piece, _)) in slots.iter_mut().zip(pieces) {
        pos = read_piece(piece, payload, pos, |value| *slot = value, odd)?;
    }
    Some(pos)
}

/// Appends `len` elements of a message type whose linear form has no nested message: the
/// elements, then each element's values in turn (the layout of the field-by-field walk).
/// Values are appended rather than stored into reserved slots (no placeholder is written
/// first), in a function of its own (inlined into a large caller, the loop's state no longer
/// fits in registers).
#[inline(never)]
fn push_linear_elements<'a>(
    nodes: &mut Vec<Value<'a>>,
    pieces: &[(Piece, u32)],
    payload: &'a [u8],
    mut pos: usize,
    len: usize,
    odd: &mut bool,
) -> Option<usize> {
    let fields = pieces.len();
    let first = nodes.len().checked_add(len)?;
    nodes.extend((0..len).map(|i| {
        Value::Message(Span {
            start: first + i * fields,
            len: fields,
        })
    }));
    nodes.reserve(len.checked_mul(fields)?);
    for _ in 0..len {
        for &(piece, _) in pieces {
            pos = read_piece(piece, payload, pos, |value| nodes.push(value), odd)?;
        }
    }
    Some(pos)
}

/// [`fill_flat`] for a linear step with nested messages, whose values go to `nested`, the
/// slots from arena index `nested_start` on.
fn fill_linear<'a>(
    pieces: &[(Piece, u32)],
    payload: &'a [u8],
    mut pos: usize,
    slots: &mut [Value<'a>],
    nested: &mut [Value<'a>],
    nested_start: usize,
    odd: &mut bool,
) -> Option<usize> {
    for &(piece, to) in pieces {
        let slot = if to & NESTED == 0 {
            slots.get_mut(to as usize)?
        } else {
            nested.get_mut((to & !NESTED) as usize)?
        };
        match piece {
            Piece::Nested { fields, first } => {
                *slot = Value::Message(Span {
                    start: nested_start + first as usize,
                    len: fields as usize,
                });
            }
            piece => pos = read_piece(piece, payload, pos, |value| *slot = value, odd)?,
        }
    }
    Some(pos)
}

/// Reads one value that is not a nested message and gives it to `put` (which stores it in a
/// slot or appends it); returns the offset after it.
#[inline(always)]
fn read_piece<'a>(
    piece: Piece,
    payload: &'a [u8],
    mut pos: usize,
    mut put: impl FnMut(Value<'a>),
    odd: &mut bool,
) -> Option<usize> {
    // Offsets never exceed the payload's length, so the additions below cannot overflow. Each
    // arm hands over its own variant: a value returned by the match would be stored with the
    // fields of every variant.
    macro_rules! number {
        ($ty:ty, $variant:ident) => {{
            const N: usize = std::mem::size_of::<$ty>();
            let at = (pos + (N - 1)) & !(N - 1);
            let raw: [u8; N] = payload.get(at..at + N)?.try_into().ok()?;
            put(Value::$variant(<$ty>::from_le_bytes(raw)));
            at + N
        }};
    }
    Some(match piece {
        Piece::Float64 => number!(f64, Float64),
        Piece::UInt32 => number!(u32, UInt32),
        Piece::Float32 => number!(f32, Float32),
        Piece::Int32 => number!(i32, Int32),
        Piece::UInt8 => number!(u8, UInt8),
        Piece::Bool => {
            let byte = *payload.get(pos)?;
            *odd |= byte > 1;
            put(Value::Bool(byte != 0));
            pos + 1
        }
        Piece::Int8 => number!(i8, Int8),
        Piece::Int16 => number!(i16, Int16),
        Piece::UInt16 => number!(u16, UInt16),
        Piece::Int64 => number!(i64, Int64),
        Piece::UInt64 => number!(u64, UInt64),
        Piece::String => {
            let at = (pos + 3) & !3;
            let len = u32::from_le_bytes(payload.get(at..at + 4)?.try_into().ok()?) as usize;
            let start = at + 4;
            let bytes = payload.get(start..start.checked_add(len)?)?;
            put(Value::String(match bytes.split_last() {
                Some((0, text)) => text,
                None => bytes,
                Some(_) => {
                    *odd = true;
                    bytes
                }
            }));
            start + len
        }
        Piece::Sequence(kind) => {
            let at = (pos + 3) & !3;
            let len = u32::from_le_bytes(payload.get(at..at + 4)?.try_into().ok()?) as usize;
            pos = at + 4;
            let size = kind.size();
            if len > 0 {
                pos = (pos + (size - 1)) & !(size - 1);
            }
            let bytes = payload.get(pos..pos.checked_add(len.checked_mul(size)?)?)?;
            if kind == PrimitiveKind::Bool {
                *odd |= bytes.iter().any(|b| *b > 1);
            }
            put(Value::Array(PrimitiveArray::new_unchecked_len(
                kind,
                bytes,
                ByteOrder::LittleEndian,
            )));
            pos + bytes.len()
        }
        Piece::Array { kind, len } => {
            let size = kind.size();
            if len > 0 {
                pos = (pos + (size - 1)) & !(size - 1);
            }
            let bytes = payload.get(pos..pos + len as usize * size)?;
            if kind == PrimitiveKind::Bool {
                *odd |= bytes.iter().any(|b| *b > 1);
            }
            put(Value::Array(PrimitiveArray::new_unchecked_len(
                kind,
                bytes,
                ByteOrder::LittleEndian,
            )));
            pos + bytes.len()
        }
        // Handled by the caller, which knows where nested values go.
        Piece::Nested { .. } => return None,
    })
}

/// Adds an outer path step to a boxed error without moving it out of its box.
pub(crate) fn within(mut error: Fail, step: PathStep) -> Fail {
    let inner = std::mem::replace(&mut *error, Error::NoHeader { len: 0 });
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

    /// The payload offset of `pos` (alignment counts from the byte after the header).
    #[inline]
    fn offset(&self) -> usize {
        self.pos - HEADER_LEN
    }

    /// What the fast walk returns when a run does not fit: the caller walks the message again
    /// field by field to say where.
    fn fast_failure(&self) -> Fail {
        Box::new(Error::Truncated {
            path: FieldPath::root(),
            offset: self.pos,
            needed: 0,
            available: self.remaining(),
        })
    }

    /// A remark in lenient decoding, an error in strict decoding.
    fn irregular(&mut self, error: impl FnOnce() -> Error) -> Result<(), Fail> {
        if self.strict {
            return Err(Box::new(error()));
        }
        self.irregular = true;
        Ok(())
    }

    /// Takes `len` bytes after the padding that aligns them to `align`.
    #[inline]
    fn take_aligned(&mut self, align: usize, len: usize) -> Result<&'a [u8], Fail> {
        let start = self.pos;
        let pad = padding(self.offset() as u64, align as u64) as usize;
        let data: &'a [u8] = self.data;
        let bytes = start
            .checked_add(pad)
            .and_then(|at| Some((at, at.checked_add(len)?)))
            .and_then(|(at, end)| Some((data.get(at..end)?, end)));
        match bytes {
            Some((bytes, end)) => {
                self.pos = end;
                Ok(bytes)
            }
            None => Err(Box::new(Error::Truncated {
                path: FieldPath::root(),
                offset: start,
                needed: (pad as u64).saturating_add(len as u64),
                available: self.remaining(),
            })),
        }
    }

    #[inline]
    fn read_u32(&mut self) -> Result<u32, Fail> {
        let order = self.order;
        let bytes = self.take_aligned(4, 4)?;
        let raw: [u8; 4] = bytes.try_into().unwrap_or([0; 4]);
        Ok(match order {
            ByteOrder::LittleEndian => u32::from_le_bytes(raw),
            ByteOrder::BigEndian => u32::from_be_bytes(raw),
        })
    }

    /// Checks that `count` elements of at least `element_min` bytes each can follow the length
    /// field at `at`, before anything is sized from `count`.
    fn check_count(&self, at: usize, count: u64, element_min: u64) -> Result<usize, Fail> {
        let needed = count.saturating_mul(element_min);
        let available = self.remaining();
        if needed > available as u64 {
            return Err(Box::new(Error::LengthPastEnd {
                path: FieldPath::root(),
                offset: at,
                length: count,
                needed,
                available,
            }));
        }
        // Fits the remaining bytes, so it fits usize.
        Ok(count as usize)
    }

    /// The number of elements of an array field: its fixed length, or a sequence's count (whose
    /// bound is checked).
    #[inline]
    fn count(&mut self, field: &FieldPlan) -> Result<usize, Fail> {
        match field.count {
            Count::One => Ok(1),
            Count::Fixed(n) => self.check_count(self.pos, n, field.element_min),
            Count::Sequence => {
                let at = self.pos + padding(self.offset() as u64, 4) as usize;
                let count = u64::from(self.read_u32()?);
                if let Some(bound) = field.sequence_bound
                    && count > bound
                {
                    self.irregular(|| Error::BoundExceeded {
                        path: FieldPath::root(),
                        offset: Some(at),
                        length: count,
                        bound,
                    })?;
                }
                self.check_count(at, count, field.element_min)
            }
        }
    }

    /// A `string`: the bytes without the NUL.
    fn string(&mut self, bound: Option<u64>) -> Result<&'a [u8], Fail> {
        let at = self.pos + padding(self.offset() as u64, 4) as usize;
        let length = u64::from(self.read_u32()?);
        let len = self.check_count(at, length, 1)?;
        let bytes = self.take_aligned(1, len)?;
        let text = match bytes.split_last() {
            // Length 0 (no NUL either) is the empty string, as Fast-CDR reads it.
            None => bytes,
            Some((0, text)) => text,
            Some(_) => {
                self.irregular(|| Error::MissingNul {
                    path: FieldPath::root(),
                    offset: at,
                    length,
                })?;
                bytes
            }
        };
        if let Some(bound) = bound
            && text.len() as u64 > bound
        {
            self.irregular(|| Error::BoundExceeded {
                path: FieldPath::root(),
                offset: Some(at),
                length: text.len() as u64,
                bound,
            })?;
        }
        Ok(text)
    }

    /// A `wstring`: a count of code units, then 4 bytes per unit.
    fn wstring(&mut self, bound: Option<u64>) -> Result<WideString<'a>, Fail> {
        let at = self.pos + padding(self.offset() as u64, 4) as usize;
        let count = u64::from(self.read_u32()?);
        let len = self.check_count(at, count, 4)?;
        if let Some(bound) = bound
            && count > bound
        {
            self.irregular(|| Error::BoundExceeded {
                path: FieldPath::root(),
                offset: Some(at),
                length: count,
                bound,
            })?;
        }
        let order = self.order;
        let units = self.take_aligned(1, len * 4)?;
        Ok(WideString::new_unchecked_len(units, order))
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

    /// Fills the reserved slots `base..base + fields` with the fields of message `id`.
    fn message_fields(&mut self, id: usize, base: usize) -> Result<(), Fail> {
        let plan = self.plan;
        let message = plan.message(id);
        if self.fast && !message.empty {
            return self.fast_fields(id, base).map_err(|()| self.fast_failure());
        }
        if message.empty {
            self.take_aligned(1, 1)?;
            return Ok(());
        }
        for (index, field) in message.fields.iter().enumerate() {
            let value = self
                .field(field)
                .map_err(|e| within(e, field_step(field)))?;
            if let Some(slot) = self.nodes.get_mut(base + index) {
                *slot = value;
            }
        }
        Ok(())
    }

    /// The fast walk over the fields of message `id` (little-endian XCDR1, lenient), into the
    /// reserved slots from `base`. Errors carry no detail: the caller walks the message again
    /// field by field to say what went wrong.
    fn fast_fields(&mut self, id: usize, base: usize) -> Result<(), ()> {
        let plan = self.plan;
        let message = plan.message(id);
        if let Some(templates) = &message.templates {
            let template = templates.at(self.offset());
            return self.run(template, base);
        }
        for step in &message.steps {
            // Each arm stores its own variant: a value returned by the match would be stored
            // with the fields of every variant.
            match *step {
                Step::Run {
                    slot,
                    ref templates,
                } => {
                    let template = templates.at(self.offset());
                    self.may_grow(template.ops.len()).map_err(drop)?;
                    self.run(template, base + slot)?;
                }
                Step::Linear { slot, ref linear } => {
                    self.fast_linear(linear, base + slot)?;
                }
                Step::String { slot } => {
                    let value = Value::String(self.fast_string()?);
                    *self.nodes.get_mut(base + slot).ok_or(())? = value;
                }
                Step::Primitives { slot, kind } => {
                    let value = Value::Array(self.fast_primitives(kind)?);
                    *self.nodes.get_mut(base + slot).ok_or(())? = value;
                }
                Step::Message { slot, id } => {
                    let start = self.fast_message(id)?;
                    let len = plan.message(id).fields.len();
                    *self.nodes.get_mut(base + slot).ok_or(())? =
                        Value::Message(Span { start, len });
                }
                Step::Messages { slot, id } => {
                    let len = self.fast_u32()? as usize;
                    let child = plan.message(id);
                    if (len as u64).saturating_mul(child.min_size) > self.remaining() as u64 {
                        return Err(());
                    }
                    let fields = child.fields.len();
                    let start = if child.templates.is_some() {
                        let start = self.fast_reserve(len)?;
                        for i in 0..len {
                            let element = Span {
                                start: self.fast_message(id)?,
                                len: fields,
                            };
                            *self.nodes.get_mut(start + i).ok_or(())? = Value::Message(element);
                        }
                        start
                    } else if let Some(linear) = child.linear.as_ref().filter(|l| l.nested == 0) {
                        self.fast_linear_elements(&linear.pieces, len)?
                    } else if child.sequential {
                        // Elements first, then each element's values appended in turn: the
                        // layout the slow walk's one reservation gives.
                        let start = self.fast_reserve(len)?;
                        if self.nodes.len().saturating_add(len.saturating_mul(fields))
                            > self.node_limit
                        {
                            return Err(());
                        }
                        for i in 0..len {
                            let element = Span {
                                start: self.nodes.len(),
                                len: fields,
                            };
                            self.fast_push_fields(id)?;
                            *self.nodes.get_mut(start + i).ok_or(())? = Value::Message(element);
                        }
                        start
                    } else {
                        // Every element's fields at once, after the elements (see `elements`).
                        let start = self.fast_reserve(len.saturating_mul(fields + 1))?;
                        for i in 0..len {
                            let element = Span {
                                start: start + len + i * fields,
                                len: fields,
                            };
                            *self.nodes.get_mut(start + i).ok_or(())? = Value::Message(element);
                            self.fast_fields(id, element.start)?;
                        }
                        start
                    };
                    *self.nodes.get_mut(base + slot).ok_or(())? =
                        Value::Messages(Span { start, len });
                }
                Step::Field { slot } => {
                    let field = message.fields.get(slot).ok_or(())?;
                    let value = self.field(field).map_err(drop)?;
                    *self.nodes.get_mut(base + slot).ok_or(())? = value;
                }
            }
        }
        Ok(())
    }

    /// A nested message in the fast walk: its fields become new nodes, from the returned
    /// index on (one per field: a plain `usize` keeps the result in registers, where a span
    /// would go through memory and stall the load that reads it back).
    #[inline]
    fn fast_message(&mut self, id: usize) -> Result<usize, ()> {
        let plan = self.plan;
        let child = plan.message(id);
        if let Some(templates) = &child.templates {
            let template = templates.at(self.offset());
            self.may_grow(template.ops.len()).map_err(drop)?;
            return self.push_template(template);
        }
        if child.sequential {
            let start = self.nodes.len();
            if start.saturating_add(child.fields.len()) > self.node_limit {
                return Err(());
            }
            self.fast_push_fields(id)?;
            return Ok(start);
        }
        let start = self.fast_reserve(child.fields.len())?;
        self.fast_fields(id, start)?;
        Ok(start)
    }

    /// The fast walk over a [`MessagePlan::sequential`](crate::plan::MessagePlan) message: its
    /// values are appended in field order.
    fn fast_push_fields(&mut self, id: usize) -> Result<(), ()> {
        let plan = self.plan;
        for step in &plan.message(id).steps {
            match *step {
                Step::Run { ref templates, .. } => {
                    let template = templates.at(self.offset());
                    let end = self.pos.checked_add(template.size).ok_or(())?;
                    let bytes = self.data.get(self.pos..end).ok_or(())?;
                    let mut odd = false;
                    for op in &template.ops {
                        let value = read_one(*op, bytes, 0, &mut odd).ok_or(())?;
                        self.nodes.push(value);
                    }
                    if odd {
                        self.irregular = true;
                    }
                    self.pos = end;
                }
                Step::String { .. } => {
                    let text = self.fast_string()?;
                    self.nodes.push(Value::String(text));
                }
                Step::Primitives { kind, .. } => {
                    let array = self.fast_primitives(kind)?;
                    self.nodes.push(Value::Array(array));
                }
                Step::Linear { ref linear, .. } => {
                    let start = self.fast_reserve(linear.fields)?;
                    self.fast_linear(linear, start)?;
                }
                _ => return Err(()),
            }
        }
        Ok(())
    }

    /// The fast walk over a linear step whose fields' slots start at `slot`; the values of
    /// nested messages are appended.
    #[inline]
    fn fast_linear(&mut self, linear: &Linear, slot: usize) -> Result<(), ()> {
        let payload = self.data.get(HEADER_LEN..).ok_or(())?;
        let pos = self.offset();
        let mut odd = false;
        let end = if linear.nested == 0 {
            let slots = self
                .nodes
                .get_mut(slot..slot.saturating_add(linear.fields))
                .ok_or(())?;
            fill_flat(&linear.pieces, payload, pos, slots, &mut odd)
        } else {
            let append = self.fast_reserve(linear.nested)?;
            let (nodes, nested) = self.nodes.split_at_mut_checked(append).ok_or(())?;
            let slots = nodes
                .get_mut(slot..slot.saturating_add(linear.fields))
                .ok_or(())?;
            fill_linear(
                &linear.pieces,
                payload,
                pos,
                slots,
                nested,
                append,
                &mut odd,
            )
        }
        .ok_or(())?;
        if odd {
            self.irregular = true;
        }
        self.pos = end + HEADER_LEN;
        Ok(())
    }

    /// `len` elements of a sequence of a message type whose linear form has no nested value
    /// (see [`MessagePlan::linear`](crate::plan::MessagePlan)), appended by
    /// [`push_linear_elements`]. Returns the index of the first element.
    fn fast_linear_elements(&mut self, pieces: &[(Piece, u32)], len: usize) -> Result<usize, ()> {
        let fields = pieces.len();
        let start = self.nodes.len();
        if start.saturating_add(len.saturating_mul(fields + 1)) > self.node_limit {
            return Err(());
        }
        let payload = self.data.get(HEADER_LEN..).ok_or(())?;
        let mut odd = false;
        let end = push_linear_elements(self.nodes, pieces, payload, self.offset(), len, &mut odd)
            .ok_or(())?;
        if odd {
            self.irregular = true;
        }
        self.pos = end + HEADER_LEN;
        Ok(start)
    }

    /// [`Decoder::reserve`] for the fast walk: returns the first slot (a plain `usize` keeps the
    /// result in a register; a returned span went through memory).
    #[inline(always)]
    fn fast_reserve(&mut self, count: usize) -> Result<usize, ()> {
        let start = self.nodes.len();
        let end = start.saturating_add(count);
        if end > self.node_limit {
            return Err(());
        }
        self.nodes.resize(end, PLACEHOLDER);
        Ok(start)
    }

    /// An unbounded sequence of primitives in the fast walk.
    #[inline(always)]
    fn fast_primitives(&mut self, kind: PrimitiveKind) -> Result<PrimitiveArray<'a>, ()> {
        let len = self.fast_u32()? as usize;
        let size = kind.size();
        let start = if len == 0 {
            self.pos
        } else {
            self.pos + padding(self.offset() as u64, size as u64) as usize
        };
        let end = len
            .checked_mul(size)
            .and_then(|bytes| start.checked_add(bytes))
            .ok_or(())?;
        let data: &'a [u8] = self.data;
        let bytes = data.get(start..end).ok_or(())?;
        if kind == PrimitiveKind::Bool && bytes.iter().any(|b| *b > 1) {
            self.irregular = true;
        }
        self.pos = end;
        Ok(PrimitiveArray::new_unchecked_len(
            kind,
            bytes,
            ByteOrder::LittleEndian,
        ))
    }

    /// A `u32` count or length in the fast walk.
    #[inline(always)]
    fn fast_u32(&mut self) -> Result<u32, ()> {
        let at = self.pos + padding(self.offset() as u64, 4) as usize;
        let bytes = self.data.get(at..at + 4).ok_or(())?;
        self.pos = at + 4;
        Ok(u32::from_le_bytes(bytes.try_into().map_err(drop)?))
    }

    /// An unbounded `string` in the fast walk.
    #[inline(always)]
    fn fast_string(&mut self) -> Result<&'a [u8], ()> {
        let len = self.fast_u32()? as usize;
        let data: &'a [u8] = self.data;
        let end = self.pos.checked_add(len).ok_or(())?;
        let bytes = data.get(self.pos..end).ok_or(())?;
        self.pos = end;
        Ok(match bytes.split_last() {
            Some((0, text)) => text,
            None => bytes,
            Some(_) => {
                self.irregular = true;
                bytes
            }
        })
    }

    /// Decodes a run of fixed-layout fields into the slots from `slot`; nested nodes are
    /// appended. The only failure is too few bytes.
    #[inline]
    fn run(&mut self, template: &Template, slot: usize) -> Result<(), ()> {
        let end = self.pos.checked_add(template.size).ok_or(())?;
        let bytes = self.data.get(self.pos..end).ok_or(())?;
        if template.flat {
            // Only empty nested messages (spans of no node) can refer to appended nodes here.
            let append_base = self.nodes.len();
            let slots = self.nodes.get_mut(slot..slot + template.own).ok_or(())?;
            let mut odd = false;
            for (target, op) in slots.iter_mut().zip(&template.ops) {
                *target = read_one(*op, bytes, append_base, &mut odd).ok_or(())?;
            }
            if odd {
                self.irregular = true;
            }
            self.pos = end;
            return Ok(());
        }
        let append_base = self.nodes.len();
        self.nodes
            .reserve(template.ops.len().saturating_sub(template.own));
        let mut odd = false;
        // Groups are in node order: the fields' own slots first, then the appended nodes.
        let (own, appended) = template
            .groups
            .split_at(template.own_groups.min(template.groups.len()));
        for group in own {
            let target = slot + group.node as usize;
            if group.count == 1 {
                let value = read_one(group.op, bytes, append_base, &mut odd).ok_or(())?;
                *self.nodes.get_mut(target).ok_or(())? = value;
                continue;
            }
            let slots = self
                .nodes
                .get_mut(target..target + group.count as usize)
                .ok_or(())?;
            fill(slots, group, bytes, append_base, &mut odd)?;
        }
        for group in appended {
            if group.count == 1 {
                let value = read_one(group.op, bytes, append_base, &mut odd).ok_or(())?;
                self.nodes.push(value);
                continue;
            }
            push(self.nodes, group, bytes, append_base, &mut odd)?;
        }
        if odd {
            self.irregular = true;
        }
        self.pos = end;
        Ok(())
    }

    /// Appends a whole fixed-layout message from its template and returns the index of its
    /// first node (it has `template.own`).
    #[inline]
    fn push_template(&mut self, template: &Template) -> Result<usize, ()> {
        let end = self.pos.checked_add(template.size).ok_or(())?;
        let bytes = self.data.get(self.pos..end).ok_or(())?;
        let start = self.nodes.len();
        let append_base = start + template.own;
        self.nodes.reserve(template.ops.len());
        let mut odd = false;
        for group in &template.groups {
            if group.count == 1 {
                let value = read_one(group.op, bytes, append_base, &mut odd).ok_or(())?;
                self.nodes.push(value);
                continue;
            }
            push(self.nodes, group, bytes, append_base, &mut odd)?;
        }
        if odd {
            self.irregular = true;
        }
        self.pos = end;
        Ok(start)
    }

    /// One primitive value.
    #[inline]
    fn primitive(&mut self, kind: PrimitiveKind) -> Result<Value<'a>, Fail> {
        let at = self.pos
            + padding(self.offset() as u64, alignment(kind, self.max_align) as u64) as usize;
        let order = self.order;
        let bytes = self.take_aligned(alignment(kind, self.max_align), kind.size())?;
        if kind == PrimitiveKind::Bool
            && let Some(&value) = bytes.first()
            && value > 1
        {
            self.irregular(|| Error::InvalidBool {
                path: FieldPath::root(),
                offset: at,
                value,
            })?;
        }
        Ok(kind.read(bytes, order).unwrap_or(PLACEHOLDER))
    }

    /// Decodes one field, whatever its type.
    fn field(&mut self, field: &FieldPlan) -> Result<Value<'a>, Fail> {
        match (field.elem, field.count) {
            (Elem::Prim(kind), Count::One) => self.primitive(kind),
            (Elem::Prim(kind), _) => {
                let len = self.count(field)?;
                let align = if len == 0 {
                    1
                } else {
                    alignment(kind, self.max_align)
                };
                let at = self.pos + padding(self.offset() as u64, align as u64) as usize;
                let order = self.order;
                let bytes = self.take_aligned(align, len * kind.size())?;
                if kind == PrimitiveKind::Bool
                    && let Some(index) = bytes.iter().position(|b| *b > 1)
                {
                    let value = bytes[index];
                    self.irregular(|| {
                        Error::InvalidBool {
                            path: FieldPath::root(),
                            offset: at + index,
                            value,
                        }
                        .within(PathStep::Index(index as u64))
                    })?;
                }
                Ok(Value::Array(PrimitiveArray::new_unchecked_len(
                    kind, bytes, order,
                )))
            }
            (Elem::String, Count::One) => Ok(Value::String(self.string(field.string_bound)?)),
            (Elem::WString, Count::One) => Ok(Value::WString(self.wstring(field.string_bound)?)),
            (Elem::String | Elem::WString, _) => {
                let len = self.count(field)?;
                let span = self.reserve(len)?;
                for i in 0..len {
                    let value = match field.elem {
                        Elem::WString => self.wstring(field.string_bound).map(Value::WString),
                        _ => self.string(field.string_bound).map(Value::String),
                    }
                    .map_err(|e| within(e, PathStep::Index(i as u64)))?;
                    if let Some(slot) = self.nodes.get_mut(span.start + i) {
                        *slot = value;
                    }
                }
                Ok(Value::Strings(span))
            }
            (Elem::Message(id), Count::One) => Ok(Value::Message(self.message(id)?)),
            (Elem::Message(id), _) => {
                let len = self.count(field)?;
                let plan = self.plan;
                let child = plan.message(id);
                let fields = child.fields.len();
                if child.templates.is_some() {
                    let span = self.reserve(len)?;
                    for i in 0..len {
                        let element = self
                            .message(id)
                            .map_err(|e| within(e, PathStep::Index(i as u64)))?;
                        if let Some(slot) = self.nodes.get_mut(span.start + i) {
                            *slot = Value::Message(element);
                        }
                    }
                    return Ok(Value::Messages(span));
                }
                // An array of messages with a variable part: the elements, then every element's
                // fields at once (one reservation instead of one per element); nested nodes
                // follow. The fast walk lays them out the same way.
                let span = self.reserve(len.saturating_mul(fields + 1))?;
                for i in 0..len {
                    let element = Span {
                        start: span.start + len + i * fields,
                        len: fields,
                    };
                    if let Some(slot) = self.nodes.get_mut(span.start + i) {
                        *slot = Value::Message(element);
                    }
                    self.message_fields(id, element.start)
                        .map_err(|e| within(e, PathStep::Index(i as u64)))?;
                }
                Ok(Value::Messages(Span {
                    start: span.start,
                    len,
                }))
            }
        }
    }

    /// Decodes a nested message into new nodes and returns its span.
    fn message(&mut self, id: usize) -> Result<Span, Fail> {
        let plan = self.plan;
        let child = plan.message(id);
        if self.fast {
            return self
                .fast_message(id)
                .map(|start| Span {
                    start,
                    len: child.fields.len(),
                })
                .map_err(|()| self.fast_failure());
        }
        let span = self.reserve(child.fields.len())?;
        self.message_fields(id, span.start)?;
        Ok(span)
    }
}

// The phase table of templates has one entry per payload offset modulo 8.
const _: () = assert!(PHASES == 8);

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast walk and the field-by-field walk agree on every input: the same values, the
    /// same end and remarks, or both an error.
    #[test]
    fn both_walks_agree_on_random_bytes() {
        let definitions = [
            "uint8 a\nfloat64 b\nbool c\nint16[3] d\n",
            "string s\nuint8 a\nfloat64 b\nbool[2] c\nP p\nP[2] q\nE e\nint64 z\n===\nMSG: p/P\nbool x\nfloat64 y\n===\nMSG: p/E\n",
            "P[] ps\nstring[<=2] names\nwstring w\nint32[<=3] v\n===\nMSG: p/P\nuint16 a\nfloat64 b\nstring c\n",
            "std_msgs/Header header\nfloat64[9] cov\nuint8[] data\nbool dense\n===\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n",
            // Linear steps: sequences of a message of strings and numbers (a `PointField`), a
            // nested message with its own nested message before and after the sequence.
            "std_msgs/Header header\nF[] fields\nbool b\nuint32 step\nuint8[] data\nstd_msgs/Header h2\n===\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n===\nMSG: p/F\nstring name\nuint32 offset\nuint8 datatype\nuint32 count\n",
            // Every kind of piece after a string, in a sequence element: alignment to 2, 4 and 8
            // from every phase, fixed arrays, sequences of bools.
            "E[] items\nstring tail\n===\nMSG: p/E\nstring s\nfloat64 f\nbool b\nint16 i\nuint64[2] a\nint8 c\nbool[] flags\nint32[1] one\nfloat32 g\nint64 l\nuint16 u\n",
            // Linear messages nested three deep, and a sequence of messages whose linear form
            // has nested values (decoded element by element).
            "A a\nH[] hs\nuint8 z\n===\nMSG: p/A\nB b\nstring s\n===\nMSG: p/B\nC c\nuint16 u\n===\nMSG: p/C\nstring t\nfloat64 f\n===\nMSG: p/H\nC c\nstring s\n",
            "",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        for definition in definitions {
            let plan = Plan::from_bundle("p/M", definition).unwrap();
            let mut decoded = 0;
            for _ in 0..6000 {
                let len = 8 + (next() % 200) as usize;
                // Mostly small bytes, so that counts and lengths are often plausible.
                let mut data: Vec<u8> = (0..len)
                    .map(|_| {
                        let r = next();
                        match r % 8 {
                            0 => (r >> 8) as u8,
                            1 => 1 + (r >> 8) as u8 % 2,
                            _ => 0,
                        }
                    })
                    .collect();
                data.splice(0..0, [0, 1, 0, 0]);
                let (mut fast, mut slow) = (Tree::new(), Tree::new());
                let a = plan.walk(&data, &mut fast, Encapsulation::CdrLe, true, false);
                let b = plan.walk(&data, &mut slow, Encapsulation::CdrLe, false, false);
                match (a, b) {
                    (Ok(a), Ok(b)) => {
                        assert_eq!(a, b, "{definition} {data:?}");
                        assert_eq!(fast, slow, "{definition} {data:?}");
                        decoded += 1;
                    }
                    (Err(_), Err(_)) => {}
                    (a, b) => panic!("{definition} {data:?}: {a:?} vs {b:?}"),
                }
            }
            // Enough inputs decode for the comparison to mean something.
            assert!(decoded > 50, "{definition}: {decoded}");
        }
    }
}
