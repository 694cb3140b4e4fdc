//! Numeric arrays of decoded messages as numpy arrays, made through numpy's C API (the
//! `numpy` crate's bindings): a message holds a few small arrays, and creating each through
//! Python calls (`numpy.frombuffer`, then `astype` for a copy) would cost more than decoding
//! the whole message.
//!
//! An array whose first element is aligned for its type and whose bytes are in the machine's
//! order is a read-only view of the message's bytes, kept alive by its base (a
//! `robolog.Bytes`); any other is a writable copy, aligned and in the machine's order. numpy
//! is optional: without it (or with one whose C API does not match) [`numpy`] is `None`.
#![allow(unsafe_code)]

use std::ffi::c_int;
use std::ptr;

use numpy::npyffi::{
    _PyArray_GET_ITEM_DATA, NPY_ARRAY_ALIGNED, NPY_ARRAY_C_CONTIGUOUS, NpyTypes, PY_ARRAY_API,
    PyArrayObject, get_type_object, npy_intp,
};
use numpy::{PyArrayDescr, PyArrayDescrMethods};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// The element types numeric arrays are made of (`uint8` arrays are `bytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub(crate) enum Element {
    Bool,
    Int8,
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
    /// Bytes per element.
    pub(crate) fn size(self) -> usize {
        match self {
            Element::Bool | Element::Int8 => 1,
            Element::Int16 | Element::UInt16 => 2,
            Element::Int32 | Element::UInt32 | Element::Float32 => 4,
            Element::Int64 | Element::UInt64 | Element::Float64 => 8,
        }
    }
}

/// numpy's dtypes of the [`Element`]s (in the machine's order), in the order of the enum.
#[derive(Debug)]
pub(crate) struct Numpy {
    dtypes: [Py<PyArrayDescr>; 10],
}

/// numpy, loaded on first use; `None` when it is not installed or its C API cannot be used.
pub(crate) fn numpy(py: Python<'_>) -> Option<&Numpy> {
    static NUMPY: PyOnceLock<Option<Numpy>> = PyOnceLock::new();
    NUMPY
        .get_or_init(py, || {
            py.import("numpy").ok()?;
            // The bindings panic when numpy's C API is older than they need: such a numpy
            // counts as absent (lists, as without numpy).
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Numpy {
                dtypes: [
                    numpy::dtype::<bool>(py).unbind(),
                    numpy::dtype::<i8>(py).unbind(),
                    numpy::dtype::<i16>(py).unbind(),
                    numpy::dtype::<u16>(py).unbind(),
                    numpy::dtype::<i32>(py).unbind(),
                    numpy::dtype::<u32>(py).unbind(),
                    numpy::dtype::<i64>(py).unbind(),
                    numpy::dtype::<u64>(py).unbind(),
                    numpy::dtype::<f32>(py).unbind(),
                    numpy::dtype::<f64>(py).unbind(),
                ],
            }))
            .ok()
        })
        .as_ref()
}

impl Numpy {
    /// A one-dimensional array of `element`s over `bytes` (`bytes.len()` a multiple of the
    /// element size), which `owner` exports: a read-only view when the bytes are aligned and
    /// `swapped` is false, else a copy in the machine's order. `bool` bytes other than 0 and 1
    /// are copied as `True`, as numpy bools must be 0 or 1.
    pub(crate) fn array<'py>(
        &self,
        py: Python<'py>,
        owner: impl FnOnce() -> PyResult<Bound<'py, PyAny>>,
        bytes: &[u8],
        element: Element,
        swapped: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let size = element.size();
        let aligned = (bytes.as_ptr() as usize).is_multiple_of(size);
        let normalise = element == Element::Bool && bytes.iter().any(|b| *b > 1);
        if aligned && !(swapped && size > 1) && !normalise {
            let count = bytes.len() / size;
            self.view(py, owner()?, &bytes[..count * size], element, count)
        } else {
            self.copy(py, bytes, element, swapped)
        }
    }

    /// A read-only view of `bytes` (aligned, in the machine's order), with `owner` as its base.
    fn view<'py>(
        &self,
        py: Python<'py>,
        owner: Bound<'py, PyAny>,
        bytes: &[u8],
        element: Element,
        count: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let array = self.new_array(
            py,
            element,
            count,
            bytes.as_ptr().cast_mut(),
            NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED,
        )?;
        // SAFETY: `array` is a new ndarray (checked non-null by `new_array`) without a base;
        // PyArray_SetBaseObject steals the reference to `owner`, which exports the bytes the
        // array points into and so keeps them alive (`robolog.Bytes` never moves them).
        let status = unsafe {
            PY_ARRAY_API.PyArray_SetBaseObject(
                py,
                array.as_ptr().cast::<PyArrayObject>(),
                owner.into_ptr(),
            )
        };
        if status < 0 {
            return Err(PyErr::fetch(py));
        }
        Ok(array)
    }

    /// A new array holding a copy of `bytes`, byte-swapped per element when `swapped` (see
    /// [`Numpy::array`]).
    pub(crate) fn copy<'py>(
        &self,
        py: Python<'py>,
        bytes: &[u8],
        element: Element,
        swapped: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let count = bytes.len() / element.size();
        let bytes = &bytes[..count * element.size()];
        let array = self.new_array(py, element, count, ptr::null_mut(), 0)?;
        // SAFETY: numpy allocated the data of the new array (null data passed): `count`
        // contiguous elements, `bytes.len()` bytes, aligned and writable, that nothing else
        // refers to yet.
        let target = unsafe {
            let data = (*_PyArray_GET_ITEM_DATA(array.as_ptr().cast::<PyArrayObject>())).data;
            std::slice::from_raw_parts_mut(data.cast::<u8>(), bytes.len())
        };
        target.copy_from_slice(bytes);
        if swapped && element.size() > 1 {
            for value in target.chunks_exact_mut(element.size()) {
                value.reverse();
            }
        }
        if element == Element::Bool {
            for value in target.iter_mut() {
                *value = u8::from(*value != 0);
            }
        }
        Ok(array)
    }

    /// `PyArray_NewFromDescr` of a one-dimensional array (numpy allocates when `data` is null).
    fn new_array<'py>(
        &self,
        py: Python<'py>,
        element: Element,
        count: usize,
        data: *mut u8,
        flags: c_int,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut dims = [npy_intp::try_from(count)
            .map_err(|_| pyo3::exceptions::PyOverflowError::new_err("array too long"))?];
        let descr = self.dtypes[element as usize].bind(py).clone();
        // SAFETY: the API table was loaded when `self` was made; the descriptor reference is
        // stolen by PyArray_NewFromDescr (a new one from `clone`); `dims` outlives the call;
        // null strides mean C order; `data` is null (numpy allocates; `flags` is 0, as a
        // non-zero one would ask for Fortran order) or points at `count` elements that the caller keeps
        // alive through the array's base.
        let raw = unsafe {
            PY_ARRAY_API.PyArray_NewFromDescr(
                py,
                get_type_object(py, NpyTypes::PyArray_Type),
                descr.into_dtype_ptr(),
                1,
                dims.as_mut_ptr(),
                ptr::null_mut(),
                data.cast(),
                flags,
                ptr::null_mut(),
            )
        };
        // SAFETY: a new reference to an array, or null with an exception set.
        unsafe { Bound::from_owned_ptr_or_err(py, raw) }
    }
}
