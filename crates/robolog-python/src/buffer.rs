//! Message bytes handed to Python without a copy: `robolog.Bytes`, a read-only object that
//! exports a `bytes::Bytes` (a slice of the memory-mapped file or of a decompressed chunk)
//! through the buffer protocol, so that `memoryview(...)`, `numpy.frombuffer(...)` and
//! `bytes(...)` read the log's own memory and keep it alive for as long as they need it.
//!
//! PyO3 implements the buffer protocol for its classes only when built for the limited API
//! of Python 3.11 or later; our one abi3 wheel serves Python 3.9 on. The two slots it takes
//! (`bf_getbuffer`, and the type's `dealloc`) have been settable through `PyType_FromSpec`
//! since Python 3.9, and `Py_buffer`'s layout has never changed, so the type is built here by
//! hand (unsafe code, as in `arrays`).
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void};
use std::ptr;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use robolog::Bytes;

/// CPython's `Py_buffer` (`Include/pybuffer.h`, unchanged since Python 3.3), which the
/// limited API of Python 3.9 and 3.10 does not declare.
#[repr(C)]
struct PyBuffer {
    buf: *mut c_void,
    obj: *mut ffi::PyObject,
    len: ffi::Py_ssize_t,
    itemsize: ffi::Py_ssize_t,
    readonly: c_int,
    ndim: c_int,
    format: *mut std::ffi::c_char,
    shape: *mut ffi::Py_ssize_t,
    strides: *mut ffi::Py_ssize_t,
    suboffsets: *mut ffi::Py_ssize_t,
    internal: *mut c_void,
}

/// The request flags of `Include/pybuffer.h` this exporter looks at.
const PYBUF_WRITABLE: c_int = 0x0001;
const PYBUF_FORMAT: c_int = 0x0004;
const PYBUF_ND: c_int = 0x0008;
const PYBUF_STRIDES: c_int = 0x0010 | PYBUF_ND;

/// The object's memory: Python's object header, then the bytes it exports.
#[repr(C)]
struct RawBytes {
    header: ffi::PyObject,
    bytes: Bytes,
}

static TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

const DOC: &std::ffi::CStr = c"Read-only bytes of a log, shared without a copy (the buffer protocol: memoryview(b), bytes(b), numpy.frombuffer(b)).";

/// The `robolog.Bytes` type, created on first use.
pub(crate) fn bytes_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    TYPE.get_or_try_init(py, || {
        let mut slots = [
            ffi::PyType_Slot {
                slot: ffi::Py_tp_dealloc,
                pfunc: dealloc as *mut c_void,
            },
            ffi::PyType_Slot {
                slot: ffi::Py_tp_new,
                pfunc: refuse_new as *mut c_void,
            },
            ffi::PyType_Slot {
                slot: ffi::Py_bf_getbuffer,
                pfunc: get_buffer as *mut c_void,
            },
            ffi::PyType_Slot {
                slot: ffi::Py_tp_doc,
                pfunc: DOC.as_ptr() as *mut c_void,
            },
            ffi::PyType_Slot {
                slot: 0,
                pfunc: ptr::null_mut(),
            },
        ];
        let mut spec = ffi::PyType_Spec {
            // CPython keeps pointing at the name: it must live as long as the process.
            name: c"robolog.Bytes".as_ptr(),
            basicsize: size_of::<RawBytes>() as c_int,
            itemsize: 0,
            flags: ffi::Py_TPFLAGS_DEFAULT as _,
            slots: slots.as_mut_ptr(),
        };
        // SAFETY: the spec and its slots are valid for the call (CPython copies what it
        // keeps, except the static name); the functions have the slots' signatures.
        let raw = unsafe { ffi::PyType_FromSpec(&mut spec) };
        // SAFETY: PyType_FromSpec returns a new reference to a type, or null with an error.
        let object = unsafe { Bound::from_owned_ptr_or_err(py, raw)? };
        Ok(object.cast_into::<PyType>()?.unbind())
    })
    .map(|t| t.bind(py))
}

/// A new `robolog.Bytes` exporting `bytes`.
pub(crate) fn new_bytes(py: Python<'_>, bytes: Bytes) -> PyResult<Bound<'_, PyAny>> {
    let ty = bytes_type(py)?;
    // SAFETY: allocating an instance of our own heap type (zeroed memory of its basicsize,
    // with a new reference to the type, which `dealloc` gives back). Until `bytes` is written
    // into it, no Python code runs that could see it: we hold the GIL and call nothing.
    unsafe {
        let object = ffi::PyType_GenericAlloc(ty.as_type_ptr(), 0);
        if object.is_null() {
            return Err(PyErr::fetch(py));
        }
        ptr::write(ptr::addr_of_mut!((*object.cast::<RawBytes>()).bytes), bytes);
        Ok(Bound::from_owned_ptr(py, object))
    }
}

/// `robolog.Bytes()` from Python would leave `bytes` uninitialized: refused.
unsafe extern "C" fn refuse_new(
    _subtype: *mut ffi::PyTypeObject,
    _args: *mut ffi::PyObject,
    _kwds: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: called by CPython with the GIL held; the message is a static C string.
    unsafe {
        ffi::PyErr_SetString(
            ffi::PyExc_TypeError,
            c"robolog.Bytes objects come from logs (Message.data); they cannot be created".as_ptr(),
        );
    }
    ptr::null_mut()
}

/// Drops the bytes, frees the object and releases the type.
unsafe extern "C" fn dealloc(object: *mut ffi::PyObject) {
    // SAFETY: CPython calls this once, with the GIL held, for an object of our type whose
    // `bytes` were written by `new_bytes` (the only way to create one). The free function is
    // the type's own (`PyObject_Free` for a type made by PyType_FromSpec).
    unsafe {
        ptr::drop_in_place(ptr::addr_of_mut!((*object.cast::<RawBytes>()).bytes));
        let ty = ffi::Py_TYPE(object);
        let free = ffi::PyType_GetSlot(ty, ffi::Py_tp_free);
        if free.is_null() {
            ffi::PyObject_Free(object.cast());
        } else {
            let free: ffi::freefunc = std::mem::transmute(free);
            free(object.cast());
        }
        ffi::Py_DECREF(ty.cast());
    }
}

/// Fills a read-only, one-dimensional byte view, as `PyBuffer_FillInfo` does (which the
/// limited API of Python 3.9 and 3.10 does not export).
unsafe extern "C" fn get_buffer(
    object: *mut ffi::PyObject,
    view: *mut PyBuffer,
    flags: c_int,
) -> c_int {
    // SAFETY: CPython calls this with the GIL held, an object of our type (fully initialized,
    // see `dealloc`) and, per the protocol, a view to fill. The view refers to the object
    // (a new reference), so the bytes outlive every view of them.
    unsafe {
        if view.is_null() {
            ffi::PyErr_SetString(ffi::PyExc_BufferError, c"no view to fill".as_ptr());
            return -1;
        }
        if flags & PYBUF_WRITABLE == PYBUF_WRITABLE {
            ffi::PyErr_SetString(
                ffi::PyExc_BufferError,
                c"robolog.Bytes are read-only (copy them with bytes(...) to change them)".as_ptr(),
            );
            return -1;
        }
        let bytes = &(*object.cast::<RawBytes>()).bytes;
        let view = &mut *view;
        ffi::Py_INCREF(object);
        view.obj = object;
        view.buf = bytes.as_ptr() as *mut c_void;
        view.len = bytes.len() as ffi::Py_ssize_t;
        view.readonly = 1;
        view.itemsize = 1;
        view.format = if flags & PYBUF_FORMAT == PYBUF_FORMAT {
            c"B".as_ptr() as *mut _
        } else {
            ptr::null_mut()
        };
        view.ndim = 1;
        view.shape = if flags & PYBUF_ND == PYBUF_ND {
            &mut view.len
        } else {
            ptr::null_mut()
        };
        view.strides = if flags & PYBUF_STRIDES == PYBUF_STRIDES {
            &mut view.itemsize
        } else {
            ptr::null_mut()
        };
        view.suboffsets = ptr::null_mut();
        view.internal = ptr::null_mut();
        0
    }
}
