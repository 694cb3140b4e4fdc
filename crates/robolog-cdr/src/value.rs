//! The dynamic value tree: every decoded value, stored flat in one arena that borrows from the
//! message bytes.
//!
//! A message is a run of consecutive nodes (one per field, in definition order) addressed by a
//! [`Span`]. Nested messages, string arrays and message arrays are spans into the same arena, so
//! decoding a message costs one allocation (none when a [`Tree`] is reused), and strings and
//! primitive arrays are slices of the input, never copies. Multi-byte values inside arrays keep
//! the byte order of the message they came from ([`ByteOrder`]).

use std::fmt;

/// The byte order of a CDR payload, from its encapsulation header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ByteOrder {
    /// Little endian (`CDR_LE`): what every ROS 2 middleware writes on x86 and ARM.
    #[default]
    LittleEndian,
    /// Big endian (`CDR_BE`).
    BigEndian,
}

/// The fixed-size types of ROS 2 messages, the elements of a zero-copy [`PrimitiveArray`].
///
/// `byte` (an IDL octet) and `char` are [`PrimitiveKind::UInt8`], as on the CDR wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrimitiveKind {
    /// `bool` (one byte; 0 or 1, see [`crate::Plan::decode_strict`]).
    Bool,
    /// `int8`.
    Int8,
    /// `uint8`, `byte` and `char`.
    UInt8,
    /// `int16`.
    Int16,
    /// `uint16`.
    UInt16,
    /// `int32`.
    Int32,
    /// `uint32`.
    UInt32,
    /// `int64`.
    Int64,
    /// `uint64`.
    UInt64,
    /// `float32`.
    Float32,
    /// `float64`.
    Float64,
}

impl PrimitiveKind {
    /// Size of one element on the wire (also its alignment in XCDR1).
    pub const fn size(self) -> usize {
        match self {
            PrimitiveKind::Bool | PrimitiveKind::Int8 | PrimitiveKind::UInt8 => 1,
            PrimitiveKind::Int16 | PrimitiveKind::UInt16 => 2,
            PrimitiveKind::Int32 | PrimitiveKind::UInt32 | PrimitiveKind::Float32 => 4,
            PrimitiveKind::Int64 | PrimitiveKind::UInt64 | PrimitiveKind::Float64 => 8,
        }
    }

    /// The ROS name of the type (`byte` and `char` show as `uint8`).
    pub const fn as_str(self) -> &'static str {
        match self {
            PrimitiveKind::Bool => "bool",
            PrimitiveKind::Int8 => "int8",
            PrimitiveKind::UInt8 => "uint8",
            PrimitiveKind::Int16 => "int16",
            PrimitiveKind::UInt16 => "uint16",
            PrimitiveKind::Int32 => "int32",
            PrimitiveKind::UInt32 => "uint32",
            PrimitiveKind::Int64 => "int64",
            PrimitiveKind::UInt64 => "uint64",
            PrimitiveKind::Float32 => "float32",
            PrimitiveKind::Float64 => "float64",
        }
    }

    /// Decodes one element from exactly [`PrimitiveKind::size`] bytes in `order` (`None` for
    /// another length).
    #[inline]
    pub fn read(self, bytes: &[u8], order: ByteOrder) -> Option<Value<'static>> {
        macro_rules! number {
            ($ty:ty) => {{
                let raw: [u8; std::mem::size_of::<$ty>()] = bytes.try_into().ok()?;
                match order {
                    ByteOrder::LittleEndian => <$ty>::from_le_bytes(raw),
                    ByteOrder::BigEndian => <$ty>::from_be_bytes(raw),
                }
            }};
        }
        Some(match self {
            PrimitiveKind::Bool => match bytes {
                [b] => Value::Bool(*b != 0),
                _ => return None,
            },
            PrimitiveKind::Int8 => Value::Int8(number!(i8)),
            PrimitiveKind::UInt8 => Value::UInt8(number!(u8)),
            PrimitiveKind::Int16 => Value::Int16(number!(i16)),
            PrimitiveKind::UInt16 => Value::UInt16(number!(u16)),
            PrimitiveKind::Int32 => Value::Int32(number!(i32)),
            PrimitiveKind::UInt32 => Value::UInt32(number!(u32)),
            PrimitiveKind::Int64 => Value::Int64(number!(i64)),
            PrimitiveKind::UInt64 => Value::UInt64(number!(u64)),
            PrimitiveKind::Float32 => Value::Float32(number!(f32)),
            PrimitiveKind::Float64 => Value::Float64(number!(f64)),
        })
    }
}

impl fmt::Display for PrimitiveKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An array (fixed array or sequence) of fixed-size elements, kept as the message's bytes
/// (zero-copy) together with their byte order.
///
/// Multi-byte elements may come in either byte order, so the array is a byte slice with typed
/// accessors ([`PrimitiveArray::iter_as`], [`PrimitiveArray::get`]) rather than a `&[T]`. Two
/// arrays are equal when they hold the same elements bit for bit, whatever their byte orders.
#[derive(Clone, Copy)]
pub struct PrimitiveArray<'a> {
    kind: PrimitiveKind,
    order: ByteOrder,
    bytes: &'a [u8],
}

impl<'a> PrimitiveArray<'a> {
    /// An array of `kind` elements over `bytes` in `order`, or `None` when the length is not a
    /// whole number of elements.
    pub fn new(kind: PrimitiveKind, bytes: &'a [u8], order: ByteOrder) -> Option<Self> {
        bytes
            .len()
            .is_multiple_of(kind.size())
            .then_some(PrimitiveArray { kind, order, bytes })
    }

    /// An array of `T` elements over their little-endian `bytes` (see [`le_bytes`]).
    pub fn of<T: Element>(bytes: &'a [u8]) -> Option<Self> {
        PrimitiveArray::new(T::KIND, bytes, ByteOrder::LittleEndian)
    }

    /// Built by the decoder, which has already sized `bytes` from a count.
    #[inline]
    pub(crate) fn new_unchecked_len(
        kind: PrimitiveKind,
        bytes: &'a [u8],
        order: ByteOrder,
    ) -> Self {
        PrimitiveArray { kind, order, bytes }
    }

    /// The element type.
    pub fn kind(&self) -> PrimitiveKind {
        self.kind
    }

    /// The byte order of the elements in [`PrimitiveArray::as_bytes`].
    pub fn byte_order(&self) -> ByteOrder {
        self.order
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.kind.size()
    }

    /// Whether the array has no element.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The raw bytes, exactly as on the wire (for `uint8[]` this is the data).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Element `index` as a [`Value`].
    pub fn get(&self, index: usize) -> Option<Value<'a>> {
        let size = self.kind.size();
        let start = index.checked_mul(size)?;
        self.kind
            .read(self.bytes.get(start..start.checked_add(size)?)?, self.order)
    }

    /// Every element as a [`Value`].
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Value<'a>> + 'a {
        let (kind, order) = (self.kind, self.order);
        self.bytes
            .chunks_exact(kind.size())
            .map(move |chunk| kind.read(chunk, order).unwrap_or(Value::Bool(false)))
    }

    /// The elements as `T`, or `None` when `T` is not the element type (`bool` reads any
    /// non-zero byte as true).
    ///
    /// ```
    /// use robolog_cdr::{ByteOrder, PrimitiveArray, PrimitiveKind};
    /// let bytes = [0x3f, 0xc0, 0, 0, 0xc0, 0, 0, 0];
    /// let array = PrimitiveArray::new(PrimitiveKind::Float32, &bytes, ByteOrder::BigEndian).unwrap();
    /// assert_eq!(array.iter_as::<f32>().unwrap().collect::<Vec<_>>(), [1.5, -2.0]);
    /// assert!(array.iter_as::<f64>().is_none());
    /// ```
    pub fn iter_as<T: Element>(&self) -> Option<impl ExactSizeIterator<Item = T> + 'a> {
        let order = self.order;
        (self.kind == T::KIND).then(|| {
            self.bytes
                .chunks_exact(T::KIND.size())
                .map(move |chunk| T::from_bytes(chunk, order))
        })
    }

    /// The elements copied into a `Vec<T>`, or `None` when `T` is not the element type.
    pub fn to_vec<T: Element>(&self) -> Option<Vec<T>> {
        self.iter_as::<T>().map(Iterator::collect)
    }
}

/// Whether `a` and `b` hold the same `size`-byte elements, `a` in `a_order` and `b` in
/// `b_order`.
fn same_elements(a: &[u8], a_order: ByteOrder, b: &[u8], b_order: ByteOrder, size: usize) -> bool {
    if a_order == b_order || size == 1 {
        return a == b;
    }
    a.len() == b.len()
        && a.chunks_exact(size)
            .zip(b.chunks_exact(size))
            .all(|(x, y)| x.iter().eq(y.iter().rev()))
}

impl PartialEq for PrimitiveArray<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
            && same_elements(
                self.bytes,
                self.order,
                other.bytes,
                other.order,
                self.kind.size(),
            )
    }
}

impl Eq for PrimitiveArray<'_> {}

impl fmt::Debug for PrimitiveArray<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.kind, self.len())
    }
}

/// A Rust type that is the element type of a [`PrimitiveArray`] (sealed: the fixed-size ROS 2
/// primitives).
pub trait Element: Copy + sealed::Sealed {
    /// The element type it reads.
    const KIND: PrimitiveKind;
    /// Decodes one element from its bytes (exactly `KIND.size()` of them) in `order`.
    fn from_bytes(bytes: &[u8], order: ByteOrder) -> Self;
    /// Appends the little-endian bytes of `self`.
    fn write_le(self, out: &mut Vec<u8>);
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! numeric_element {
    ($($ty:ty => $kind:ident),* $(,)?) => {$(
        impl sealed::Sealed for $ty {}
        impl Element for $ty {
            const KIND: PrimitiveKind = PrimitiveKind::$kind;
            #[inline]
            fn from_bytes(bytes: &[u8], order: ByteOrder) -> Self {
                let mut raw = [0u8; std::mem::size_of::<$ty>()];
                if let Some(source) = bytes.get(..raw.len()) {
                    raw.copy_from_slice(source);
                }
                match order {
                    ByteOrder::LittleEndian => <$ty>::from_le_bytes(raw),
                    ByteOrder::BigEndian => <$ty>::from_be_bytes(raw),
                }
            }
            #[inline]
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

numeric_element! {
    i8 => Int8, u8 => UInt8, i16 => Int16, u16 => UInt16, i32 => Int32, u32 => UInt32,
    i64 => Int64, u64 => UInt64, f32 => Float32, f64 => Float64,
}

impl sealed::Sealed for bool {}
impl Element for bool {
    const KIND: PrimitiveKind = PrimitiveKind::Bool;
    fn from_bytes(bytes: &[u8], _: ByteOrder) -> Self {
        bytes.first().is_some_and(|b| *b != 0)
    }
    fn write_le(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
}

/// The little-endian wire bytes of `values`, to build a [`PrimitiveArray`] for encoding.
///
/// ```
/// use robolog_cdr::{PrimitiveArray, le_bytes};
/// let bytes = le_bytes(&[-1i16, 256]);
/// assert_eq!(bytes, [0xff, 0xff, 0x00, 0x01]);
/// assert_eq!(PrimitiveArray::of::<i16>(&bytes).unwrap().len(), 2);
/// ```
pub fn le_bytes<T: Element>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * T::KIND.size());
    for value in values {
        value.write_le(&mut out);
    }
    out
}

/// A `wstring` as on the wire: 4 bytes per UTF-16 code unit, in the message's byte order
/// (zero-copy; see the crate documentation for the layout).
///
/// Fast-CDR 1.x (ROS 2 Humble) copies Linux's 32-bit `wchar_t`, so a unit above `0xFFFF` is
/// read as the character it names; surrogate pairs (the layout of newer releases) are joined.
/// Two wide strings are equal when they hold the same code units, whatever their byte orders.
#[derive(Clone, Copy)]
pub struct WideString<'a> {
    units: &'a [u8],
    order: ByteOrder,
}

impl<'a> WideString<'a> {
    /// A wide string over `units` (4 bytes per code unit in `order`), or `None` when the length
    /// is not a multiple of 4.
    pub fn new(units: &'a [u8], order: ByteOrder) -> Option<Self> {
        units
            .len()
            .is_multiple_of(4)
            .then_some(WideString { units, order })
    }

    #[inline]
    pub(crate) fn new_unchecked_len(units: &'a [u8], order: ByteOrder) -> Self {
        WideString { units, order }
    }

    /// The number of code units (what the wire count says).
    pub fn len(&self) -> usize {
        self.units.len() / 4
    }

    /// Whether the string is empty.
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// The raw bytes, exactly as on the wire (without the count).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.units
    }

    /// The byte order of [`WideString::as_bytes`].
    pub fn byte_order(&self) -> ByteOrder {
        self.order
    }

    /// The code units as the wire holds them (one `u32` each).
    pub fn units(&self) -> impl ExactSizeIterator<Item = u32> + 'a {
        let order = self.order;
        self.units
            .chunks_exact(4)
            .map(move |unit| <u32 as Element>::from_bytes(unit, order))
    }

    /// The characters; units that name no character (unpaired surrogates, values past
    /// U+10FFFF) become U+FFFD.
    pub fn chars(&self) -> impl Iterator<Item = char> + 'a {
        let mut units = self.units().peekable();
        std::iter::from_fn(move || {
            let unit = units.next()?;
            Some(match unit {
                0xD800..=0xDBFF => match units.peek() {
                    Some(&low @ 0xDC00..=0xDFFF) => {
                        units.next();
                        let value = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                        char::from_u32(value).unwrap_or(char::REPLACEMENT_CHARACTER)
                    }
                    _ => char::REPLACEMENT_CHARACTER,
                },
                other => char::from_u32(other).unwrap_or(char::REPLACEMENT_CHARACTER),
            })
        })
    }

    /// The text, with U+FFFD for units that name no character.
    pub fn to_string_lossy(&self) -> String {
        self.chars().collect()
    }
}

impl PartialEq for WideString<'_> {
    fn eq(&self, other: &Self) -> bool {
        same_elements(self.units, self.order, other.units, other.order, 4)
    }
}

impl Eq for WideString<'_> {}

impl fmt::Debug for WideString<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "w{:?}", self.to_string_lossy())
    }
}

/// The little-endian wire bytes of `text` as a `wstring`: one 4-byte UTF-16 code unit per
/// unit, the layout ROS 2 middlewares write (see [`WideString`]).
///
/// ```
/// use robolog_cdr::{ByteOrder, WideString, wstring_bytes};
/// let bytes = wstring_bytes("hé");
/// assert_eq!(bytes, [0x68, 0, 0, 0, 0xe9, 0, 0, 0]);
/// let wide = WideString::new(&bytes, ByteOrder::LittleEndian).unwrap();
/// assert_eq!(wide.to_string_lossy(), "hé");
/// ```
pub fn wstring_bytes(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 4);
    for unit in text.encode_utf16() {
        out.extend_from_slice(&u32::from(unit).to_le_bytes());
    }
    out
}

/// A run of consecutive nodes in a [`Tree`]: the fields of a message, or the elements of a
/// string or message array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// Index of the first node.
    pub start: usize,
    /// Number of nodes.
    pub len: usize,
}

impl Span {
    pub(crate) fn range(self) -> std::ops::Range<usize> {
        self.start..self.start.saturating_add(self.len)
    }
}

/// One decoded value. `Copy`: strings and primitive arrays borrow the message bytes, and
/// nested messages and arrays of strings or messages are [`Span`]s into the [`Tree`].
///
/// ROS 2 `builtin_interfaces/Time` and `Duration` are ordinary messages (`sec`, `nanosec`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// `bool`.
    Bool(bool),
    /// `int8`.
    Int8(i8),
    /// `uint8`, `byte` and `char`.
    UInt8(u8),
    /// `int16`.
    Int16(i16),
    /// `uint16`.
    UInt16(u16),
    /// `int32`.
    Int32(i32),
    /// `uint32`.
    UInt32(u32),
    /// `int64`.
    Int64(i64),
    /// `uint64`.
    UInt64(u64),
    /// `float32`.
    Float32(f32),
    /// `float64`.
    Float64(f64),
    /// `string` and `string<=N`: the bytes without the terminating NUL (UTF-8 by convention
    /// only; see [`Value::as_str`]).
    String(&'a [u8]),
    /// `wstring` and `wstring<=N`.
    WString(WideString<'a>),
    /// A fixed array or sequence of a fixed-size primitive, zero-copy.
    Array(PrimitiveArray<'a>),
    /// An array of strings: each node of the span is a [`Value::String`] (or a
    /// [`Value::WString`] for wide strings).
    Strings(Span),
    /// A nested message: one node per field, in definition order.
    Message(Span),
    /// An array of messages: each node of the span is a [`Value::Message`].
    Messages(Span),
}

impl<'a> Value<'a> {
    /// A short name of the variant, for messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Bool(_) => "bool",
            Value::Int8(_) => "int8",
            Value::UInt8(_) => "uint8",
            Value::Int16(_) => "int16",
            Value::UInt16(_) => "uint16",
            Value::Int32(_) => "int32",
            Value::UInt32(_) => "uint32",
            Value::Int64(_) => "int64",
            Value::UInt64(_) => "uint64",
            Value::Float32(_) => "float32",
            Value::Float64(_) => "float64",
            Value::String(_) => "string",
            Value::WString(_) => "wstring",
            Value::Array(_) => "primitive array",
            Value::Strings(_) => "string array",
            Value::Message(_) => "message",
            Value::Messages(_) => "message array",
        }
    }

    /// The value as `f64` for any number (64-bit integers may round), `None` otherwise.
    pub fn as_f64(&self) -> Option<f64> {
        Some(match *self {
            Value::Int8(v) => f64::from(v),
            Value::UInt8(v) => f64::from(v),
            Value::Int16(v) => f64::from(v),
            Value::UInt16(v) => f64::from(v),
            Value::Int32(v) => f64::from(v),
            Value::UInt32(v) => f64::from(v),
            Value::Int64(v) => v as f64,
            Value::UInt64(v) => v as f64,
            Value::Float32(v) => f64::from(v),
            Value::Float64(v) => v,
            _ => return None,
        })
    }

    /// The value as `i64` for any integer that fits, `None` otherwise.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int8(v) => Some(i64::from(v)),
            Value::UInt8(v) => Some(i64::from(v)),
            Value::Int16(v) => Some(i64::from(v)),
            Value::UInt16(v) => Some(i64::from(v)),
            Value::Int32(v) => Some(i64::from(v)),
            Value::UInt32(v) => Some(i64::from(v)),
            Value::Int64(v) => Some(v),
            Value::UInt64(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as `u64` for any non-negative integer, `None` otherwise.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::UInt8(v) => Some(u64::from(v)),
            Value::UInt16(v) => Some(u64::from(v)),
            Value::UInt32(v) => Some(u64::from(v)),
            Value::UInt64(v) => Some(v),
            other => other.as_i64().and_then(|v| u64::try_from(v).ok()),
        }
    }

    /// A `string` value as `&str` when it is valid UTF-8 (`None` for invalid UTF-8 and for other
    /// values; [`Value::as_bytes`] gives the raw bytes, [`Value::as_wstring`] wide strings).
    pub fn as_str(&self) -> Option<&'a str> {
        match *self {
            Value::String(bytes) => std::str::from_utf8(bytes).ok(),
            _ => None,
        }
    }

    /// The raw bytes of a `string` or of a primitive array.
    pub fn as_bytes(&self) -> Option<&'a [u8]> {
        match *self {
            Value::String(bytes) => Some(bytes),
            Value::Array(array) => Some(array.as_bytes()),
            _ => None,
        }
    }

    /// The wide string, if this is a `wstring`.
    pub fn as_wstring(&self) -> Option<WideString<'a>> {
        match *self {
            Value::WString(wide) => Some(wide),
            _ => None,
        }
    }

    /// The primitive array, if this is one.
    pub fn as_array(&self) -> Option<PrimitiveArray<'a>> {
        match *self {
            Value::Array(array) => Some(array),
            _ => None,
        }
    }
}

/// The arena a message decodes into (see the module documentation): a root [`Span`] plus the
/// nodes it refers to.
///
/// Trees can also be built by hand, bottom-up, for encoding: push nested messages first and use
/// the [`Value`] each push returns as a field of the enclosing message.
///
/// ```
/// use robolog_cdr::{Tree, Value};
/// let mut tree = Tree::new();
/// let point = tree.push_message([Value::Float32(1.5), Value::Float32(-2.0)]);
/// let points = tree.push_messages([point]);
/// tree.set_root_fields([Value::String(b"map"), points]);
/// assert_eq!(tree.root_fields()[0].as_str(), Some("map"));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tree<'a> {
    pub(crate) nodes: Vec<Value<'a>>,
    pub(crate) root: Span,
}

impl<'a> Tree<'a> {
    /// An empty tree (its root is the empty message).
    pub fn new() -> Self {
        Tree::default()
    }

    /// Removes every node, keeping the allocation for the next decode.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.root = Span::default();
    }

    /// Empties the tree and hands its allocation over to a tree that may borrow from other
    /// bytes: decoding message after message into one tree ([`crate::Plan::decode_into`]) is
    /// otherwise limited to messages that all outlive it.
    ///
    /// ```
    /// let plan = robolog_cdr::Plan::from_bundle("p/msg/M", "string s\n")?;
    /// let mut spare = robolog_cdr::Tree::new();
    /// for text in ["a", "bc"] {
    ///     let mut message = vec![0, 1, 0, 0];
    ///     message.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
    ///     message.extend_from_slice(text.as_bytes());
    ///     message.push(0);
    ///     let mut tree = spare.recycle();
    ///     plan.decode_into(&message, &mut tree)?;
    ///     assert_eq!(tree.root_fields()[0].as_str(), Some(text));
    ///     spare = tree.recycle();
    /// }
    /// # Ok::<(), robolog_cdr::Error>(())
    /// ```
    pub fn recycle<'b>(self) -> Tree<'b> {
        let mut nodes = self.nodes;
        nodes.clear();
        // Collecting a vector's iterator into a vector of a type with the same layout reuses
        // the allocation; the vector is empty, so no borrow outlives its bytes. (A `map` could
        // not name a value to turn a `Value<'a>` into; `filter_map` needs none.)
        #[expect(
            clippy::unnecessary_filter_map,
            reason = "the only way to change the borrow's lifetime and keep the allocation"
        )]
        let nodes: Vec<Value<'b>> = nodes.into_iter().filter_map(|_| None).collect();
        Tree {
            nodes,
            root: Span::default(),
        }
    }

    /// The span of the root message's fields.
    pub fn root(&self) -> Span {
        self.root
    }

    /// The root message's fields, in definition order.
    pub fn root_fields(&self) -> &[Value<'a>] {
        self.span(self.root)
    }

    /// The nodes of `span` (empty when the span is not in this tree).
    pub fn span(&self, span: Span) -> &[Value<'a>] {
        self.nodes.get(span.range()).unwrap_or(&[])
    }

    /// Mutable access to the nodes of `span`, e.g. to change a field before encoding.
    pub fn span_mut(&mut self, span: Span) -> &mut [Value<'a>] {
        self.nodes.get_mut(span.range()).unwrap_or(&mut [])
    }

    /// Every node (the arena itself).
    pub fn nodes(&self) -> &[Value<'a>] {
        &self.nodes
    }

    fn push_span(&mut self, values: impl IntoIterator<Item = Value<'a>>) -> Span {
        let start = self.nodes.len();
        self.nodes.extend(values);
        Span {
            start,
            len: self.nodes.len() - start,
        }
    }

    /// Adds a message with these field values and returns the [`Value::Message`] to use as a
    /// field or array element.
    pub fn push_message(&mut self, fields: impl IntoIterator<Item = Value<'a>>) -> Value<'a> {
        Value::Message(self.push_span(fields))
    }

    /// Adds an array of messages (each a [`Value::Message`] from [`Tree::push_message`]) and
    /// returns the [`Value::Messages`].
    pub fn push_messages(&mut self, messages: impl IntoIterator<Item = Value<'a>>) -> Value<'a> {
        Value::Messages(self.push_span(messages))
    }

    /// Adds an array of strings and returns the [`Value::Strings`].
    pub fn push_strings(&mut self, strings: impl IntoIterator<Item = &'a [u8]>) -> Value<'a> {
        Value::Strings(self.push_span(strings.into_iter().map(Value::String)))
    }

    /// Adds an array of wide strings and returns the [`Value::Strings`].
    pub fn push_wstrings(
        &mut self,
        strings: impl IntoIterator<Item = WideString<'a>>,
    ) -> Value<'a> {
        Value::Strings(self.push_span(strings.into_iter().map(Value::WString)))
    }

    /// Adds the root message's fields.
    pub fn set_root_fields(&mut self, fields: impl IntoIterator<Item = Value<'a>>) {
        self.root = self.push_span(fields);
    }

    /// Makes an already pushed message (a [`Value::Message`]) the root; other values are
    /// ignored and return `false`.
    pub fn set_root(&mut self, message: Value<'a>) -> bool {
        match message {
            Value::Message(span) => {
                self.root = span;
                true
            }
            _ => false,
        }
    }
}
