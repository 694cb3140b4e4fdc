//! `Log.to_arrow` and `Log.to_polars`, and `robolog.export`: one topic as a table with the layout of `robolog export`
//! (robolog-arrow's batches), handed to pyarrow through the Arrow PyCapsule interface (the C
//! stream interface), so that pyarrow takes the Rust arrays without a copy and the package
//! needs no pyarrow to build.
//!
//! The batches are decoded with the GIL released, one at a time, checking for signals between
//! them; the table is made of them as they are (no concatenation), so building it takes no
//! more memory than the table itself and one batch.

use std::ops::Bound as RangeBound;
use std::path::PathBuf;
use std::sync::Mutex;

use arrow::array::{RecordBatch, RecordBatchIterator};
use arrow::datatypes::SchemaRef;
use arrow::ffi_stream::FFI_ArrowArrayStream;
use pyo3::exceptions::{PyImportError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyCapsule, PyModule};
use robolog_arrow::{ExportFormat, ExportOptions, TopicBatches, TopicOptions};

use crate::errors::arrow_to_py;
use crate::log::Opened;

/// What `to_arrow` and `to_polars` read of a topic.
pub(crate) struct TableRequest {
    pub(crate) columns: Option<Vec<String>>,
    pub(crate) start: Option<u64>,
    pub(crate) end: Option<u64>,
    pub(crate) raw_undecodable: bool,
}

/// The topic's batches as a `pyarrow.Table`.
pub(crate) fn to_arrow<'py>(
    py: Python<'py>,
    opened: &Opened,
    topic: &str,
    request: TableRequest,
) -> PyResult<Bound<'py, PyAny>> {
    let pyarrow = import_optional(py, "pyarrow", "Log.to_arrow", "arrow")?;
    let (schema, batches) = read_batches(py, opened, topic, request)?;
    let stream = PyArrowStream {
        batches: Mutex::new(Some((schema, batches))),
    };
    pyarrow.call_method1("table", (stream,))
}

/// The topic's batches as a `polars.DataFrame` (through pyarrow, which shares the arrays).
pub(crate) fn to_polars<'py>(
    py: Python<'py>,
    opened: &Opened,
    topic: &str,
    request: TableRequest,
) -> PyResult<Bound<'py, PyAny>> {
    let polars = import_optional(py, "polars", "Log.to_polars", "polars")?;
    let table = to_arrow(py, opened, topic, request)?;
    polars.call_method1("from_arrow", (table,))
}

/// Every batch of the topic, decoded with the GIL released.
fn read_batches(
    py: Python<'_>,
    opened: &Opened,
    topic: &str,
    request: TableRequest,
) -> PyResult<(SchemaRef, Vec<RecordBatch>)> {
    let range = (
        request
            .start
            .map_or(RangeBound::Unbounded, RangeBound::Included),
        request
            .end
            .map_or(RangeBound::Unbounded, RangeBound::Excluded),
    );
    let mut options = TopicOptions::new()
        .time_range(range)
        .raw_undecodable(request.raw_undecodable);
    if let Some(columns) = request.columns {
        options = options.columns(columns);
    }
    let error = |e| arrow_to_py(e, Some(&opened.path));
    let mut reader = py
        .detach(|| TopicBatches::new(&opened.log, topic, options))
        .map_err(error)?;
    let schema = reader.schema().clone();
    let mut batches = Vec::new();
    loop {
        py.check_signals()?;
        match py.detach(|| reader.next_batch()).map_err(error)? {
            Some(batch) => batches.push(batch),
            None => break,
        }
    }
    Ok((schema, batches))
}

/// `module`, or an `ImportError` saying which package `what` needs.
fn import_optional<'py>(
    py: Python<'py>,
    module: &str,
    what: &str,
    extra: &str,
) -> PyResult<Bound<'py, PyModule>> {
    py.import(module).map_err(|e| {
        if !e.is_instance_of::<PyImportError>(py) {
            return e;
        }
        let err = PyImportError::new_err(format!(
            "{what} needs the {module} package, which is not installed: \
             pip install {module} (or pip install 'robolog[{extra}]')"
        ));
        err.set_cause(py, Some(e));
        err
    })
}

/// Record batches offered to Arrow consumers once, through `__arrow_c_stream__`.
#[pyclass(module = "robolog", name = "_ArrowStream", frozen)]
struct PyArrowStream {
    batches: Mutex<Option<(SchemaRef, Vec<RecordBatch>)>>,
}

#[pymethods]
impl PyArrowStream {
    /// The Arrow PyCapsule interface: a capsule holding an `ArrowArrayStream` of the batches.
    /// `requested_schema` is not followed (the protocol allows that): the columns are the
    /// export's.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let (schema, batches) = self
            .batches
            .lock_py_attached(py)
            .map_err(|_| PyValueError::new_err("the stream was poisoned by a panic"))?
            .take()
            .ok_or_else(|| PyValueError::new_err("the Arrow stream was consumed already"))?;
        let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        // The consumer moves the stream out of the capsule (leaving it released); the capsule's
        // destructor then drops an empty stream, or releases one nobody took.
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }
}

/// One file written by `export`.
#[pyclass(module = "robolog", name = "ExportedFile", frozen, get_all)]
#[derive(Debug, Clone)]
pub(crate) struct PyExportedFile {
    /// The topic.
    topic: String,
    /// Where the file is.
    path: PathBuf,
    /// Rows (messages) in it.
    rows: u64,
    /// Its size.
    bytes: u64,
}

#[pymethods]
impl PyExportedFile {
    fn __repr__(&self) -> String {
        format!(
            "ExportedFile(topic={:?}, path={:?}, rows={}, bytes={})",
            self.topic,
            self.path.display().to_string(),
            self.rows,
            self.bytes
        )
    }
}

/// What `export` wrote.
#[pyclass(module = "robolog", name = "ExportReport", frozen, get_all)]
#[derive(Debug)]
pub(crate) struct PyExportReport {
    /// The files, by topic, parts in order.
    files: Vec<PyExportedFile>,
    /// Messages exported.
    messages: u64,
    /// Topics exported as raw bytes (`raw_undecodable=True`).
    raw_topics: Vec<String>,
    /// Selected topics without a message in the time range (no file is written for them).
    empty_topics: Vec<String>,
    /// Topic patterns that matched no topic of any input.
    unmatched_topics: Vec<String>,
}

#[pymethods]
impl PyExportReport {
    fn __repr__(&self) -> String {
        format!(
            "ExportReport(files={}, messages={})",
            self.files.len(),
            self.messages
        )
    }
}

/// Exports logs to one file per topic in `out_dir` (the CLI's `robolog export`): Parquet
/// (`format="parquet"`, the default) or Arrow IPC (`"arrow"`), each topic's rows in log-time
/// order across the inputs, with the columns of `Log.to_arrow`. `inputs` is a path or a list of
/// paths. Files are renamed into place only when the whole export succeeds.
#[pyfunction]
#[pyo3(signature = (inputs, out_dir, *, format=None, topics=None, start=None, end=None, raw_undecodable=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn export(
    py: Python<'_>,
    inputs: Bound<'_, PyAny>,
    out_dir: PathBuf,
    format: Option<&str>,
    topics: Option<Bound<'_, PyAny>>,
    start: Option<u64>,
    end: Option<u64>,
    raw_undecodable: bool,
) -> PyResult<PyExportReport> {
    let inputs: Vec<PathBuf> = match inputs.extract::<PathBuf>() {
        Ok(one) => vec![one],
        Err(_) => inputs.extract()?,
    };
    let format = match format {
        None | Some("parquet") => ExportFormat::Parquet,
        Some("arrow") => ExportFormat::ArrowIpc,
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "unknown export format {other:?} (parquet or arrow)"
            )));
        }
    };
    let filter = crate::tools::filter(topics.as_ref(), start, end)?;
    let logs = inputs
        .iter()
        .map(|path| {
            py.detach(|| crate::tools::open_checked(path))
                .map_err(|e| crate::errors::to_py(e, Some(path)))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let report = py
        .detach(|| {
            let logs: Vec<&robolog::Log> = logs.iter().collect();
            let options = ExportOptions::new()
                .format(format)
                .filter(filter)
                .raw_undecodable(raw_undecodable);
            robolog_arrow::export(&logs, &out_dir, options)
        })
        .map_err(|e| match inputs.as_slice() {
            [one] => arrow_to_py(e, Some(one)),
            _ => arrow_to_py(e, None),
        })?;
    Ok(PyExportReport {
        files: report
            .files
            .into_iter()
            .map(|f| PyExportedFile {
                topic: f.topic,
                path: f.path,
                rows: f.rows,
                bytes: f.bytes,
            })
            .collect(),
        messages: report.messages,
        raw_topics: report.raw_topics,
        empty_topics: report.empty_topics,
        unmatched_topics: report.unmatched_topics,
    })
}
