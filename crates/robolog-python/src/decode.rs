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
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use robolog::{Bytes, Decoded, Decoder};

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
            Decoded::Ros1(m) => convert.ros1_message(m.root()).map(Bound::into_any),
            Decoded::Cdr(m) => convert.cdr_message(m.root()).map(Bound::into_any),
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

/// numpy's `frombuffer` and the dtypes of the ROS element types, when numpy is installed.
struct Numpy {
    frombuffer: Py<PyAny>,
    /// Little-endian dtypes, by [`Element`].
    little: Vec<Py<PyAny>>,
    /// Big-endian dtypes (CDR written on a big-endian machine).
    big: Vec<Py<PyAny>>,
    /// Native-order dtypes, for copies.
    native: Vec<Py<PyAny>>,
}

/// The element types numbers arrays are made of, in the order of [`Numpy::little`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
enum Element {
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
}

impl Element {
    const ALL: [Element; 11] = [
        Element::Bool,
        Element::Int8,
        Element::UInt8,
        Element::Int16,
        Element::UInt16,
        Element::Int32,
        Element::UInt32,
        Element::Int64,
        Element::UInt64,
        Element::Float32,
        Element::Float64,
    ];

    fn code(self) -> &'static str {
        match self {
            Element::Bool => "?",
            Element::Int8 => "i1",
            Element::UInt8 => "u1",
            Element::Int16 => "i2",
            Element::UInt16 => "u2",
            Element::Int32 => "i4",
            Element::UInt32 => "u4",
            Element::Int64 => "i8",
            Element::UInt64 => "u8",
            Element::Float32 => "f4",
            Element::Float64 => "f8",
        }
    }

    fn size(self) -> usize {
        match self {
            Element::Bool | Element::Int8 | Element::UInt8 => 1,
            Element::Int16 | Element::UInt16 => 2,
            Element::Int32 | Element::UInt32 | Element::Float32 => 4,
            Element::Int64 | Element::UInt64 | Element::Float64 => 8,
        }
    }
}

/// numpy, imported on first use (`None` when it is not installed).
fn numpy(py: Python<'_>) -> Option<&Numpy> {
    static NUMPY: PyOnceLock<Option<Numpy>> = PyOnceLock::new();
    NUMPY
        .get_or_init(py, || {
            let module = py.import("numpy").ok()?;
            let frombuffer = module.getattr("frombuffer").ok()?.unbind();
            let dtype = module.getattr("dtype").ok()?;
            let make = |order: &str| -> Option<Vec<Py<PyAny>>> {
                Element::ALL
                    .iter()
                    .map(|e| {
                        dtype
                            .call1((format!("{order}{}", e.code()),))
                            .ok()
                            .map(Bound::unbind)
                    })
                    .collect()
            };
            Some(Numpy {
                frombuffer,
                little: make("<")?,
                big: make(">")?,
                native: make("=")?,
            })
        })
        .as_ref()
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
    /// The field names of a message type, as Python strings.
    fn names<'n>(
        &mut self,
        key: usize,
        names: impl Iterator<Item = &'n str>,
    ) -> Arc<[Py<PyString>]> {
        let py = self.py;
        Arc::clone(self.names.entry(key).or_insert_with(|| {
            names
                .map(|name| PyString::intern(py, name).unbind())
                .collect()
        }))
    }

    fn ros1_message(
        &mut self,
        message: robolog::ros1::MessageRef<'_, '_>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let key = std::ptr::from_ref(message.type_name()) as usize;
        let names = self.names(key, message.fields().map(|f| f.name()));
        let dict = PyDict::new(self.py);
        for (field, name) in message.fields().zip(names.iter()) {
            dict.set_item(name.bind(self.py), self.ros1_field(&field)?)?;
        }
        Ok(dict)
    }

    fn ros1_field(
        &mut self,
        field: &robolog::ros1::FieldRef<'_, '_>,
    ) -> PyResult<Bound<'py, PyAny>> {
        use robolog::ros1::Value;
        let py = self.py;
        Ok(match field.value() {
            Value::Message(_) => match field.as_message() {
                Some(m) => self.ros1_message(m)?.into_any(),
                None => py.None().into_bound(py),
            },
            Value::Messages(_) => {
                let list = PyList::empty(py);
                if let Some(messages) = field.messages() {
                    for m in messages {
                        list.append(self.ros1_message(m)?)?;
                    }
                }
                list.into_any()
            }
            Value::Strings(_) => {
                let list = PyList::empty(py);
                if let Some(strings) = field.strings() {
                    for s in strings {
                        list.append(string(py, s))?;
                    }
                }
                list.into_any()
            }
            Value::Array(array) => self.ros1_array(array)?,
            other => ros1_scalar(py, other)?,
        })
    }

    fn ros1_array(
        &mut self,
        array: robolog::ros1::PrimitiveArray<'_>,
    ) -> PyResult<Bound<'py, PyAny>> {
        use robolog::ros1::PrimitiveKind as K;
        let py = self.py;
        let element = match array.kind() {
            K::UInt8 => return Ok(PyBytes::new(py, array.as_bytes()).into_any()),
            K::Time | K::Duration => {
                let list = PyList::empty(py);
                for value in array.iter() {
                    list.append(ros1_scalar(py, value)?)?;
                }
                return Ok(list.into_any());
            }
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
        match self.numpy_array(array.as_bytes(), element, false)? {
            Some(numpy) => Ok(numpy),
            None => {
                let list = PyList::empty(py);
                for value in array.iter() {
                    list.append(ros1_scalar(py, value)?)?;
                }
                Ok(list.into_any())
            }
        }
    }

    fn cdr_message(
        &mut self,
        message: robolog::cdr::MessageRef<'_, '_>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let key = std::ptr::from_ref(message.type_name()) as usize;
        let names = self.names(key, message.fields().map(|f| f.name()));
        let dict = PyDict::new(self.py);
        for (field, name) in message.fields().zip(names.iter()) {
            dict.set_item(name.bind(self.py), self.cdr_field(&field)?)?;
        }
        Ok(dict)
    }

    fn cdr_field(&mut self, field: &robolog::cdr::FieldRef<'_, '_>) -> PyResult<Bound<'py, PyAny>> {
        use robolog::cdr::Value;
        let py = self.py;
        Ok(match field.value() {
            Value::Message(_) => match field.as_message() {
                Some(m) => self.cdr_message(m)?.into_any(),
                None => py.None().into_bound(py),
            },
            Value::Messages(_) => {
                let list = PyList::empty(py);
                if let Some(messages) = field.messages() {
                    for m in messages {
                        list.append(self.cdr_message(m)?)?;
                    }
                }
                list.into_any()
            }
            Value::Strings(_) => {
                let list = PyList::empty(py);
                if let Some(strings) = field.strings() {
                    for s in strings {
                        list.append(string(py, s))?;
                    }
                } else if let Some(strings) = field.wstrings() {
                    for s in strings {
                        list.append(PyString::new(py, &s.to_string_lossy()))?;
                    }
                }
                list.into_any()
            }
            Value::Array(array) => self.cdr_array(array)?,
            other => cdr_scalar(py, other)?,
        })
    }

    fn cdr_array(
        &mut self,
        array: robolog::cdr::PrimitiveArray<'_>,
    ) -> PyResult<Bound<'py, PyAny>> {
        use robolog::cdr::PrimitiveKind as K;
        let py = self.py;
        let element = match array.kind() {
            // `uint8`, `byte` and `char` are all octets in ROS 2.
            K::UInt8 => return Ok(PyBytes::new(py, array.as_bytes()).into_any()),
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
        let big_endian = array.byte_order() == robolog::cdr::ByteOrder::BigEndian;
        match self.numpy_array(array.as_bytes(), element, big_endian)? {
            Some(numpy) => Ok(numpy),
            None => {
                let list = PyList::empty(py);
                for value in array.iter() {
                    list.append(cdr_scalar(py, value)?)?;
                }
                Ok(list.into_any())
            }
        }
    }

    /// `bytes` (a slice of the message) as a numpy array of `element`s, or `None` without
    /// numpy.
    fn numpy_array(
        &mut self,
        bytes: &[u8],
        element: Element,
        big_endian: bool,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = self.py;
        let Some(numpy) = numpy(py) else {
            return Ok(None);
        };
        let dtypes = if big_endian {
            &numpy.big
        } else {
            &numpy.little
        };
        let dtype = dtypes[element as usize].bind(py);
        let count = bytes.len() / element.size();
        // A bool array whose bytes are not all 0 or 1 would read as numpy bools that are
        // neither: normalised into a copy instead.
        if element == Element::Bool && bytes.iter().any(|b| *b > 1) {
            let normalised: Vec<u8> = bytes.iter().map(|b| u8::from(*b != 0)).collect();
            let copy = PyBytes::new(py, &normalised);
            return numpy.frombuffer.bind(py).call1((copy, dtype)).map(Some);
        }
        let offset = (bytes.as_ptr() as usize).wrapping_sub(self.data.as_ptr() as usize);
        let within = offset
            .checked_add(bytes.len())
            .is_some_and(|end| end <= self.data.len());
        let array = if within {
            let exporter = match &self.exporter {
                Some(e) => e.clone(),
                None => {
                    let e = new_bytes(py, self.data.clone())?;
                    self.exporter = Some(e.clone());
                    e
                }
            };
            numpy
                .frombuffer
                .bind(py)
                .call1((exporter, dtype, count, offset))?
        } else {
            // Not a slice of the message (a decoder that copied): numpy gets its own bytes.
            numpy
                .frombuffer
                .bind(py)
                .call1((PyBytes::new(py, bytes), dtype))?
        };
        let aligned = (bytes.as_ptr() as usize).is_multiple_of(element.size());
        if !aligned || (big_endian && element.size() > 1) {
            // `astype` copies into aligned memory in native order.
            let native = numpy.native[element as usize].bind(py);
            return array.call_method1("astype", (native,)).map(Some);
        }
        Ok(Some(array))
    }
}

/// A ROS 1 value that needs no tree.
fn ros1_scalar<'py>(
    py: Python<'py>,
    value: robolog::ros1::Value<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    use robolog::ros1::Value;
    Ok(match value {
        Value::Bool(v) => v.into_pyobject(py)?.to_owned().into_any(),
        Value::Int8(v) => v.into_pyobject(py)?.into_any(),
        Value::UInt8(v) => v.into_pyobject(py)?.into_any(),
        Value::Int16(v) => v.into_pyobject(py)?.into_any(),
        Value::UInt16(v) => v.into_pyobject(py)?.into_any(),
        Value::Int32(v) => v.into_pyobject(py)?.into_any(),
        Value::UInt32(v) => v.into_pyobject(py)?.into_any(),
        Value::Int64(v) => v.into_pyobject(py)?.into_any(),
        Value::UInt64(v) => v.into_pyobject(py)?.into_any(),
        Value::Float32(v) => f64::from(v).into_pyobject(py)?.into_any(),
        Value::Float64(v) => v.into_pyobject(py)?.into_any(),
        Value::Time(t) => sec_nsec(py, i64::from(t.secs), i64::from(t.nsecs))?.into_any(),
        Value::Duration(d) => sec_nsec(py, i64::from(d.secs), i64::from(d.nsecs))?.into_any(),
        Value::String(bytes) => string(py, bytes).into_any(),
        // Arrays and spans are handled with their field; a bare one converts to None.
        _ => py.None().into_bound(py),
    })
}

/// A ROS 2 value that needs no tree.
fn cdr_scalar<'py>(py: Python<'py>, value: robolog::cdr::Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    use robolog::cdr::Value;
    Ok(match value {
        Value::Bool(v) => v.into_pyobject(py)?.to_owned().into_any(),
        Value::Int8(v) => v.into_pyobject(py)?.into_any(),
        Value::UInt8(v) => v.into_pyobject(py)?.into_any(),
        Value::Int16(v) => v.into_pyobject(py)?.into_any(),
        Value::UInt16(v) => v.into_pyobject(py)?.into_any(),
        Value::Int32(v) => v.into_pyobject(py)?.into_any(),
        Value::UInt32(v) => v.into_pyobject(py)?.into_any(),
        Value::Int64(v) => v.into_pyobject(py)?.into_any(),
        Value::UInt64(v) => v.into_pyobject(py)?.into_any(),
        Value::Float32(v) => f64::from(v).into_pyobject(py)?.into_any(),
        Value::Float64(v) => v.into_pyobject(py)?.into_any(),
        Value::String(bytes) => string(py, bytes).into_any(),
        Value::WString(wide) => PyString::new(py, &wide.to_string_lossy()).into_any(),
        // Arrays and spans are handled with their field; a bare one converts to None.
        _ => py.None().into_bound(py),
    })
}

/// A ROS 1 `time` or `duration`: `{"sec": …, "nsec": …}`.
fn sec_nsec(py: Python<'_>, sec: i64, nsec: i64) -> PyResult<Bound<'_, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item(pyo3::intern!(py, "sec"), sec)?;
    dict.set_item(pyo3::intern!(py, "nsec"), nsec)?;
    Ok(dict)
}

/// A string field: UTF-8, with U+FFFD for bytes that are not.
fn string<'py>(py: Python<'py>, bytes: &[u8]) -> Bound<'py, PyString> {
    match std::str::from_utf8(bytes) {
        Ok(text) => PyString::new(py, text),
        Err(_) => PyString::new(py, &String::from_utf8_lossy(bytes)),
    }
}
