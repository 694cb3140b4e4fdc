//! Decoded messages as Python values, with robolog's decoded-value rules: a message is a dict
//! of its fields in definition order; ROS 1 `time`/`duration` are `{"sec", "nsec"}` dicts and
//! ROS 2 times the messages they are; 64-bit integers exact (Python ints); floats as floats
//! (NaN and infinities included, unlike JSON's strings); strings as `str` (bytes that are not
//! UTF-8 become U+FFFD); arrays of `uint8` (and `char`) as `bytes`; other arrays of numbers
//! (and `bool`) as numpy arrays when numpy is installed, lists otherwise; arrays of strings,
//! times and messages as lists. `json` messages are parsed with Python's `json`.
//!
//! A numpy array of a message shares the message's memory (read-only, it keeps the bytes
//! alive) when its first element sits at an address aligned for its type; otherwise, and for
//! big-endian CDR, it is a copy in native order.

use std::collections::HashMap;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyList, PyString};
use robolog::{Bytes, Decoded, Decoder};

use crate::arrays::{Element, numpy};
use crate::buffer::new_bytes;
use crate::errors::decode_error;

/// What decoding keeps from message to message: robolog's decoder (its compiled plans), the
/// field names of each message type as Python strings (created once, hashed once), and the
/// Python functions it calls.
#[derive(Debug, Default)]
pub(crate) struct DecodeContext {
    decoder: Decoder,
    /// Field names by message type (the address of the type's name in its compiled plan,
    /// which the decoder keeps for as long as this context lives).
    names: HashMap<usize, Arc<[Py<PyString>]>>,
}

impl DecodeContext {
    /// Decodes `message` into a Python value (see the module rules).
    pub(crate) fn decode<'py>(
        &mut self,
        py: Python<'py>,
        message: &robolog::Message,
    ) -> PyResult<Bound<'py, PyAny>> {
        let decoded = self.decoder.decode(message).map_err(|e| decode_error(&e))?;
        let mut convert = Converter {
            py,
            names: &mut self.names,
            data: &message.data,
            exporter: None,
        };
        match &decoded {
            Decoded::Ros1(m) => convert.message::<Ros1>(m.root()).map(Bound::into_any),
            Decoded::Cdr(m) => convert.message::<Cdr>(m.root()).map(Bound::into_any),
            Decoded::Json(text) => json_loads(py)?.call1((*text,)),
            _ => Err(crate::errors::DecodeError::new_err(format!(
                "{}: this build of robolog decodes the message, but the Python package cannot \
                 convert its values",
                message.channel.topic
            ))),
        }
    }
}

fn json_loads(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    LOADS.import(py, "json", "loads")
}

/// A value that becomes one Python object of its own (not a container).
#[derive(Debug, Clone, Copy)]
enum Leaf<'a> {
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    /// A string's bytes (UTF-8 by convention).
    Text(&'a [u8]),
    /// A ROS 2 `wstring`.
    Wide(robolog::cdr::WideString<'a>),
    /// A ROS 1 `time` or `duration`.
    SecNsec(i64, i64),
    /// What a tree that matches its plan never holds in a field (a bare span).
    None,
}

/// What a field holds, as the converter sees it: the ROS 1 and ROS 2 trees name these
/// differently but hold the same shapes.
enum Shape<'a, M, Ms, Ls> {
    /// A nested message (`None` only for a tree that does not match its plan).
    Message(Option<M>),
    /// An array of messages.
    Messages(Ms),
    /// An array of strings (or of ROS 1 times): a list.
    List(Ls),
    /// An array of octets: `bytes`.
    Octets(&'a [u8]),
    /// An array of numbers (or bools): a numpy array.
    Numbers {
        /// The elements as on the wire.
        bytes: &'a [u8],
        element: Element,
        /// Whether the wire order is big-endian (CDR written on a big-endian machine).
        big_endian: bool,
    },
    /// A scalar.
    Leaf(Leaf<'a>),
}

/// What the converter needs from a value tree (robolog-ros1's or robolog-cdr's).
trait Tree {
    type Message<'t, 'a>: Copy
    where
        'a: 't;
    type Field<'t, 'a>
    where
        'a: 't;

    /// What identifies the message's type within the decoder's plans.
    fn type_key(message: Self::Message<'_, '_>) -> usize;

    /// The message's fields in definition order.
    fn fields<'t, 'a>(
        message: Self::Message<'t, 'a>,
    ) -> impl ExactSizeIterator<Item = Self::Field<'t, 'a>>;

    /// The field's name.
    fn name<'t>(field: &Self::Field<'t, '_>) -> &'t str;

    /// What the field holds.
    #[allow(clippy::type_complexity)]
    fn shape<'t, 'a>(
        field: &Self::Field<'t, 'a>,
    ) -> Shape<
        'a,
        Self::Message<'t, 'a>,
        impl Iterator<Item = Self::Message<'t, 'a>>,
        impl Iterator<Item = Leaf<'a>>,
    >;
}

/// ROS 1 messages (robolog-ros1's tree).
enum Ros1 {}

impl Tree for Ros1 {
    type Message<'t, 'a>
        = robolog::ros1::MessageRef<'t, 'a>
    where
        'a: 't;
    type Field<'t, 'a>
        = robolog::ros1::FieldRef<'t, 'a>
    where
        'a: 't;

    fn type_key(message: Self::Message<'_, '_>) -> usize {
        std::ptr::from_ref(message.type_name()) as usize
    }

    fn fields<'t, 'a>(
        message: Self::Message<'t, 'a>,
    ) -> impl ExactSizeIterator<Item = Self::Field<'t, 'a>> {
        message.fields()
    }

    fn name<'t>(field: &Self::Field<'t, '_>) -> &'t str {
        field.name()
    }

    fn shape<'t, 'a>(
        field: &Self::Field<'t, 'a>,
    ) -> Shape<
        'a,
        Self::Message<'t, 'a>,
        impl Iterator<Item = Self::Message<'t, 'a>>,
        impl Iterator<Item = Leaf<'a>>,
    > {
        use robolog::ros1::{PrimitiveKind as K, Value};
        let value = field.value();
        let element = match value {
            Value::Message(_) => return Shape::Message(field.as_message()),
            Value::Messages(_) => return Shape::Messages(field.messages().into_iter().flatten()),
            Value::Array(array) => match array.kind() {
                K::UInt8 => return Shape::Octets(array.as_bytes()),
                // Times are dicts: a list, as for strings.
                K::Time | K::Duration => None,
                K::Bool => Some(Element::Bool),
                K::Int8 => Some(Element::Int8),
                K::Int16 => Some(Element::Int16),
                K::UInt16 => Some(Element::UInt16),
                K::Int32 => Some(Element::Int32),
                K::UInt32 => Some(Element::UInt32),
                K::Int64 => Some(Element::Int64),
                K::UInt64 => Some(Element::UInt64),
                K::Float32 => Some(Element::Float32),
                K::Float64 => Some(Element::Float64),
            },
            Value::Strings(_) => None,
            other => return Shape::Leaf(ros1_leaf(other)),
        };
        match (value, element) {
            (Value::Array(array), Some(element)) => Shape::Numbers {
                bytes: array.as_bytes(),
                element,
                big_endian: false,
            },
            _ => {
                let times = match value {
                    Value::Array(array) => Some((array.as_bytes(), array.kind() == K::Duration)),
                    _ => None,
                };
                let strings = field.strings().into_iter().flatten().map(Leaf::Text);
                let times = times.into_iter().flat_map(|(bytes, signed)| {
                    bytes
                        .chunks_exact(8)
                        .map(move |time| ros1_time(time, signed))
                });
                Shape::List(strings.chain(times))
            }
        }
    }
}

/// An element of a ROS 1 `time[]` (`u32` seconds and nanoseconds) or `duration[]` (`i32`).
fn ros1_time(bytes: &[u8], signed: bool) -> Leaf<'static> {
    let word = |at: usize| -> [u8; 4] {
        let mut word = [0; 4];
        if let Some(b) = bytes.get(at..at + 4) {
            word.copy_from_slice(b);
        }
        word
    };
    let (sec, nsec) = (word(0), word(4));
    if signed {
        Leaf::SecNsec(
            i32::from_le_bytes(sec).into(),
            i32::from_le_bytes(nsec).into(),
        )
    } else {
        Leaf::SecNsec(
            u32::from_le_bytes(sec).into(),
            u32::from_le_bytes(nsec).into(),
        )
    }
}

/// A ROS 1 scalar.
fn ros1_leaf(value: robolog::ros1::Value<'_>) -> Leaf<'_> {
    use robolog::ros1::Value;
    match value {
        Value::Bool(v) => Leaf::Bool(v),
        Value::Int8(v) => Leaf::Int(v.into()),
        Value::UInt8(v) => Leaf::Int(v.into()),
        Value::Int16(v) => Leaf::Int(v.into()),
        Value::UInt16(v) => Leaf::Int(v.into()),
        Value::Int32(v) => Leaf::Int(v.into()),
        Value::UInt32(v) => Leaf::Int(v.into()),
        Value::Int64(v) => Leaf::Int(v),
        Value::UInt64(v) => Leaf::UInt(v),
        Value::Float32(v) => Leaf::Float(v.into()),
        Value::Float64(v) => Leaf::Float(v),
        Value::Time(t) => Leaf::SecNsec(t.secs.into(), t.nsecs.into()),
        Value::Duration(d) => Leaf::SecNsec(d.secs.into(), d.nsecs.into()),
        Value::String(bytes) => Leaf::Text(bytes),
        Value::Array(_) | Value::Strings(_) | Value::Message(_) | Value::Messages(_) => Leaf::None,
    }
}

/// ROS 2 messages (robolog-cdr's tree).
enum Cdr {}

impl Tree for Cdr {
    type Message<'t, 'a>
        = robolog::cdr::MessageRef<'t, 'a>
    where
        'a: 't;
    type Field<'t, 'a>
        = robolog::cdr::FieldRef<'t, 'a>
    where
        'a: 't;

    fn type_key(message: Self::Message<'_, '_>) -> usize {
        std::ptr::from_ref(message.type_name()) as usize
    }

    fn fields<'t, 'a>(
        message: Self::Message<'t, 'a>,
    ) -> impl ExactSizeIterator<Item = Self::Field<'t, 'a>> {
        message.fields()
    }

    fn name<'t>(field: &Self::Field<'t, '_>) -> &'t str {
        field.name()
    }

    fn shape<'t, 'a>(
        field: &Self::Field<'t, 'a>,
    ) -> Shape<
        'a,
        Self::Message<'t, 'a>,
        impl Iterator<Item = Self::Message<'t, 'a>>,
        impl Iterator<Item = Leaf<'a>>,
    > {
        use robolog::cdr::{ByteOrder, PrimitiveKind as K, Value};
        let array = match field.value() {
            Value::Message(_) => return Shape::Message(field.as_message()),
            Value::Messages(_) => return Shape::Messages(field.messages().into_iter().flatten()),
            Value::Strings(_) => {
                let strings = field.strings().into_iter().flatten().map(Leaf::Text);
                let wide = field.wstrings().into_iter().flatten().map(Leaf::Wide);
                return Shape::List(strings.chain(wide));
            }
            Value::Array(array) => array,
            other => return Shape::Leaf(cdr_leaf(other)),
        };
        let element = match array.kind() {
            // `uint8`, `byte` and `char` are all octets in ROS 2.
            K::UInt8 => return Shape::Octets(array.as_bytes()),
            K::Bool => Element::Bool,
            K::Int8 => Element::Int8,
            K::Int16 => Element::Int16,
            K::UInt16 => Element::UInt16,
            K::Int32 => Element::Int32,
            K::UInt32 => Element::UInt32,
            K::Int64 => Element::Int64,
            K::UInt64 => Element::UInt64,
            K::Float32 => Element::Float32,
            K::Float64 => Element::Float64,
        };
        Shape::Numbers {
            bytes: array.as_bytes(),
            element,
            big_endian: array.byte_order() == ByteOrder::BigEndian,
        }
    }
}

/// A ROS 2 scalar.
fn cdr_leaf(value: robolog::cdr::Value<'_>) -> Leaf<'_> {
    use robolog::cdr::Value;
    match value {
        Value::Bool(v) => Leaf::Bool(v),
        Value::Int8(v) => Leaf::Int(v.into()),
        Value::UInt8(v) => Leaf::Int(v.into()),
        Value::Int16(v) => Leaf::Int(v.into()),
        Value::UInt16(v) => Leaf::Int(v.into()),
        Value::Int32(v) => Leaf::Int(v.into()),
        Value::UInt32(v) => Leaf::Int(v.into()),
        Value::Int64(v) => Leaf::Int(v),
        Value::UInt64(v) => Leaf::UInt(v),
        Value::Float32(v) => Leaf::Float(v.into()),
        Value::Float64(v) => Leaf::Float(v),
        Value::String(bytes) => Leaf::Text(bytes),
        Value::WString(wide) => Leaf::Wide(wide),
        Value::Array(_) | Value::Strings(_) | Value::Message(_) | Value::Messages(_) => Leaf::None,
    }
}

/// One message's conversion.
struct Converter<'py, 'c> {
    py: Python<'py>,
    names: &'c mut HashMap<usize, Arc<[Py<PyString>]>>,
    /// The message's bytes, which arrays are slices of.
    data: &'c Bytes,
    /// `robolog.Bytes` over `data`, made for the first array shared with numpy.
    exporter: Option<Bound<'py, PyAny>>,
}

impl<'py> Converter<'py, '_> {
    /// A message as a dict of its fields.
    fn message<T: Tree>(&mut self, message: T::Message<'_, '_>) -> PyResult<Bound<'py, PyDict>> {
        let py = self.py;
        let names = Arc::clone(self.names.entry(T::type_key(message)).or_insert_with(|| {
            T::fields(message)
                .map(|field| PyString::intern(py, T::name(&field)).unbind())
                .collect()
        }));
        let dict = PyDict::new(py);
        for (field, name) in T::fields(message).zip(names.iter()) {
            let value = match T::shape(&field) {
                Shape::Message(Some(m)) => self.message::<T>(m)?.into_any(),
                Shape::Message(None) => py.None().into_bound(py),
                Shape::Messages(messages) => {
                    let list = PyList::empty(py);
                    for m in messages {
                        list.append(self.message::<T>(m)?)?;
                    }
                    list.into_any()
                }
                Shape::List(leaves) => {
                    let list = PyList::empty(py);
                    for leaf in leaves {
                        list.append(self.leaf(leaf)?)?;
                    }
                    list.into_any()
                }
                Shape::Octets(bytes) => PyBytes::new(py, bytes).into_any(),
                Shape::Numbers {
                    bytes,
                    element,
                    big_endian,
                } => self.numbers(bytes, element, big_endian)?,
                Shape::Leaf(leaf) => self.leaf(leaf)?,
            };
            dict.set_item(name.bind(py), value)?;
        }
        Ok(dict)
    }

    /// A scalar (see the module rules).
    fn leaf(&self, leaf: Leaf<'_>) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        Ok(match leaf {
            Leaf::Bool(v) => v.into_pyobject(py)?.to_owned().into_any(),
            Leaf::Int(v) => v.into_pyobject(py)?.into_any(),
            Leaf::UInt(v) => v.into_pyobject(py)?.into_any(),
            Leaf::Float(v) => PyFloat::new(py, v).into_any(),
            Leaf::Text(bytes) => string(py, bytes).into_any(),
            Leaf::Wide(wide) => PyString::new(py, &wide.to_string_lossy()).into_any(),
            Leaf::SecNsec(sec, nsec) => {
                let dict = PyDict::new(py);
                dict.set_item(pyo3::intern!(py, "sec"), sec)?;
                dict.set_item(pyo3::intern!(py, "nsec"), nsec)?;
                dict.into_any()
            }
            Leaf::None => py.None().into_bound(py),
        })
    }

    /// An array of numbers: a numpy array sharing the message's memory where it can (see
    /// [`crate::arrays`]), a list of Python numbers without numpy.
    fn numbers(
        &mut self,
        bytes: &[u8],
        element: Element,
        big_endian: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let swapped = big_endian != cfg!(target_endian = "big");
        let Some(numpy) = numpy(py) else {
            let list = PyList::empty(py);
            for chunk in bytes.chunks_exact(element.size()) {
                list.append(self.leaf(number(chunk, element, big_endian))?)?;
            }
            return Ok(list.into_any());
        };
        // Only a slice of the message can share its memory (a decoder that copied could hand
        // out other bytes).
        let offset = (bytes.as_ptr() as usize).wrapping_sub(self.data.as_ptr() as usize);
        let within = offset
            .checked_add(bytes.len())
            .is_some_and(|end| end <= self.data.len());
        if !within {
            return numpy.copy(py, bytes, element, swapped);
        }
        let (data, exporter) = (self.data, &mut self.exporter);
        numpy.array(
            py,
            || match exporter {
                Some(e) => Ok(e.clone()),
                None => {
                    let e = new_bytes(py, data.clone())?;
                    *exporter = Some(e.clone());
                    Ok(e)
                }
            },
            bytes,
            element,
            swapped,
        )
    }
}

/// One element of an array of numbers, from its bytes.
fn number(chunk: &[u8], element: Element, big_endian: bool) -> Leaf<'static> {
    let mut raw = [0u8; 8];
    let raw = &mut raw[..chunk.len().min(8)];
    raw.copy_from_slice(&chunk[..raw.len()]);
    if big_endian {
        raw.reverse();
    }
    let mut le = [0u8; 8];
    le[..raw.len()].copy_from_slice(raw);
    let sign = |bits: u32| -> i64 {
        let shift = 64 - bits;
        (i64::from_le_bytes(le) << shift) >> shift
    };
    match element {
        Element::Bool => Leaf::Bool(le[0] != 0),
        Element::Int8 => Leaf::Int(sign(8)),
        Element::Int16 => Leaf::Int(sign(16)),
        Element::Int32 => Leaf::Int(sign(32)),
        Element::Int64 => Leaf::Int(i64::from_le_bytes(le)),
        Element::UInt16 | Element::UInt32 | Element::UInt64 => Leaf::UInt(u64::from_le_bytes(le)),
        Element::Float32 => Leaf::Float(f32::from_le_bytes([le[0], le[1], le[2], le[3]]).into()),
        Element::Float64 => Leaf::Float(f64::from_le_bytes(le)),
    }
}

/// A string field: UTF-8, with U+FFFD for bytes that are not.
fn string<'py>(py: Python<'py>, bytes: &[u8]) -> Bound<'py, PyString> {
    match std::str::from_utf8(bytes) {
        Ok(text) => PyString::new(py, text),
        Err(_) => PyString::new(py, &String::from_utf8_lossy(bytes)),
    }
}
