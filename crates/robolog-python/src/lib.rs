//! The robolog Python package (`import robolog`): a PyO3 extension over the facade crate,
//! built by maturin into one abi3 wheel for every CPython from 3.9 on
//! (`pip install crates/robolog-python`).
//!
//! ```python
//! import robolog
//!
//! with robolog.open("testdata/bags/generated/ros_comm/ref_lz4.bag") as log:
//!     assert log.message_count == 150
//!     for message in log.messages(topics="/imu", end=log.start_time + 20_000_000):
//!         imu = message.decode()
//!         assert imu["header"]["frame_id"] == "imu_link"
//!         assert imu["linear_acceleration"]["z"] == 9.81
//! ```
//!
//! The example runs in the package's pytest suite (`tests/test_docs.py`), with the README's.
//!
//! # Layout
//!
//! - `log`: `robolog.open` and `Log` (channels, summary, queries);
//! - `messages`: the message iterator and `Message`;
//! - `columnar`: `Log.arrow_batches`, `Log.to_arrow`, `Log.to_polars` and `export`
//!   (robolog-arrow's batches, decoded as they are pulled and handed over through the Arrow
//!   PyCapsule interface);
//! - `decode`: decoded values as Python objects (the package's value rules);
//! - `arrays`: their numeric arrays as numpy arrays, through numpy's C API (unsafe code);
//! - `buffer`: message bytes shared with Python without a copy (unsafe code too);
//! - `tools`: `convert`, `merge`, `check`, `recover` and their reports;
//! - `writer`: `robolog.Writer`;
//! - `model`: channels, schemas, problems; `errors`: the exception classes.
//!
//! Rust work runs with the GIL released (`Python::detach`); iteration reads messages in
//! batches and checks for signals between them.

#![deny(unsafe_code)]

mod arrays;
mod buffer;
mod columnar;
mod decode;
mod errors;
mod log;
mod messages;
mod model;
mod tools;
mod writer;

use pyo3::prelude::*;

#[pymodule]
#[pyo3(name = "_robolog")]
fn robolog_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    m.add("Bytes", buffer::bytes_type(m.py())?)?;
    m.add_class::<log::PyLog>()?;
    m.add_class::<messages::PyMessages>()?;
    m.add_class::<messages::PyMessage>()?;
    m.add_class::<model::PyChannel>()?;
    m.add_class::<model::PySchema>()?;
    m.add_class::<model::PyProblem>()?;
    m.add_class::<tools::PyConvertReport>()?;
    m.add_class::<tools::PyCheckReport>()?;
    m.add_class::<tools::PyRecoverReport>()?;
    m.add_class::<writer::PyWriter>()?;
    m.add_class::<columnar::PyExportReport>()?;
    m.add_class::<columnar::PyExportedFile>()?;
    m.add_function(wrap_pyfunction!(log::open, m)?)?;
    m.add_function(wrap_pyfunction!(tools::convert, m)?)?;
    m.add_function(wrap_pyfunction!(tools::merge, m)?)?;
    m.add_function(wrap_pyfunction!(tools::check, m)?)?;
    m.add_function(wrap_pyfunction!(tools::recover, m)?)?;
    m.add_function(wrap_pyfunction!(columnar::export, m)?)?;
    Ok(())
}
