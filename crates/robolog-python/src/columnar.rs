//! `Log.arrow_batches`, `Log.to_arrow` and `Log.to_polars`, and `robolog.export`: one topic
//! with the layout of `robolog export` (robolog-arrow's batches), handed to pyarrow through the
//! Arrow PyCapsule interface, so that pyarrow takes the Rust arrays without a copy and the
//! package needs no pyarrow to build.
//!
//! One code path reads a topic: `arrow_batches` is a `pyarrow.RecordBatchReader` over an
//! iterator ([`PyArrowBatches`]) that decodes the next batch when the reader is pulled, with
//! the GIL released and a check for signals before it; `to_arrow` reads that reader whole
//! (a table made of the batches as they are, no concatenation) and `to_polars` converts the
//! table. The reader is built by pyarrow from a Python iterator rather than imported from a C
//! stream (`FFI_ArrowArrayStream`) because a C stream can only report an error as a message:
//! through the iterator, an error in the middle of a topic reaches the caller as robolog's
//! exception (`DataError` with its byte offset, `DecodeError`, …), and Ctrl-C as
//! `KeyboardInterrupt`. Consumers that take Arrow streams (DuckDB, polars, Daft, Ray) take the
//! reader through its own `__arrow_c_stream__`.

use std::ops::Bound as RangeBound;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arrow::array::{Array, RecordBatch, StructArray};
use arrow::datatypes::SchemaRef;
use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use pyo3::exceptions::{PyImportError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyCapsule, PyModule, PyTuple};
use robolog_arrow::{ExportFormat, ExportOptions, TopicBatches, TopicOptions};

use crate::errors::arrow_to_py;
use crate::log::Opened;
use crate::model::path_text;

/// What `arrow_batches`, `to_arrow` and `to_polars` read of a topic.
pub(crate) struct TableRequest {
    pub(crate) columns: Option<Vec<String>>,
    pub(crate) start: Option<u64>,
    pub(crate) end: Option<u64>,
    pub(crate) raw_undecodable: bool,
    /// Rows per batch at most (robolog-arrow's default when None).
    pub(crate) batch_size: Option<usize>,
}

/// The topic's batches as a `pyarrow.RecordBatchReader`, each decoded when it is pulled.
pub(crate) fn arrow_batches<'py>(
    py: Python<'py>,
    opened: &Arc<Opened>,
    topic: &str,
    request: TableRequest,
) -> PyResult<Bound<'py, PyAny>> {
    batch_reader(py, "Log.arrow_batches", opened, topic, request)
}

/// The topic's batches as a `pyarrow.Table`: `arrow_batches` read whole.
pub(crate) fn to_arrow<'py>(
    py: Python<'py>,
    opened: &Arc<Opened>,
    topic: &str,
    request: TableRequest,
) -> PyResult<Bound<'py, PyAny>> {
    batch_reader(py, "Log.to_arrow", opened, topic, request)?.call_method0("read_all")
}

/// The `pyarrow.RecordBatchReader` of `arrow_batches`; `what` names the caller in the
/// `ImportError` raised without pyarrow.
fn batch_reader<'py>(
    py: Python<'py>,
    what: &str,
    opened: &Arc<Opened>,
    topic: &str,
    request: TableRequest,
) -> PyResult<Bound<'py, PyAny>> {
    let pyarrow = import_optional(py, "pyarrow", what, "arrow")?;
    let batches = PyArrowBatches::new(py, &pyarrow, opened, topic, request)?;
    let schema = pyarrow.call_method1("schema", (SchemaCapsule(batches.schema.clone()),))?;
    pyarrow
        .getattr("RecordBatchReader")?
        .call_method1("from_batches", (schema, batches))
}

/// The topic's batches as a `polars.DataFrame` (through pyarrow, which shares the arrays).
pub(crate) fn to_polars<'py>(
    py: Python<'py>,
    opened: &Arc<Opened>,
    topic: &str,
    request: TableRequest,
) -> PyResult<Bound<'py, PyAny>> {
    let polars = import_optional(py, "polars", "Log.to_polars", "polars")?;
    let table = to_arrow(py, opened, topic, request)?;
    polars.call_method1("from_arrow", (table,))
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

/// The batches of one topic as a Python iterator of `pyarrow.RecordBatch`, what
/// `pyarrow.RecordBatchReader.from_batches` pulls: each `next` decodes one batch.
#[pyclass(module = "robolog", name = "_ArrowBatches", frozen)]
struct PyArrowBatches {
    opened: Arc<Opened>,
    schema: SchemaRef,
    /// `pyarrow.record_batch`, which imports a batch offered through `__arrow_c_array__`.
    record_batch: Py<PyAny>,
    /// None once the batches are read, or an error ended them.
    reader: Mutex<Option<TopicBatches>>,
}

impl PyArrowBatches {
    fn new(
        py: Python<'_>,
        pyarrow: &Bound<'_, PyModule>,
        opened: &Arc<Opened>,
        topic: &str,
        request: TableRequest,
    ) -> PyResult<Self> {
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
        if let Some(rows) = request.batch_size {
            options = options.batch_rows(rows);
        }
        let reader = py
            .detach(|| TopicBatches::new(&opened.log, topic, options))
            .map_err(|e| arrow_to_py(e, Some(&opened.path)))?;
        Ok(PyArrowBatches {
            opened: Arc::clone(opened),
            schema: reader.schema().clone(),
            record_batch: pyarrow.getattr("record_batch")?.unbind(),
            reader: Mutex::new(Some(reader)),
        })
    }
}

#[pymethods]
impl PyArrowBatches {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// The next batch as a `pyarrow.RecordBatch`, decoded now with the GIL released; None (the
    /// end) after the last. The first error ends the batches; Ctrl-C raises
    /// `KeyboardInterrupt` before decoding one.
    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let mut reader = self
            .reader
            .lock_py_attached(py)
            .map_err(|_| PyValueError::new_err("the batches were poisoned by a panic"))?;
        let Some(batches) = reader.as_mut() else {
            return Ok(None);
        };
        // Before the batch, not during it: nothing read is lost, and a caller that catches the
        // KeyboardInterrupt may go on pulling.
        py.check_signals()?;
        let batch = match py.detach(|| batches.next_batch()) {
            Ok(Some(batch)) => batch,
            Ok(None) => {
                *reader = None;
                return Ok(None);
            }
            Err(error) => {
                *reader = None;
                return Err(arrow_to_py(error, Some(&self.opened.path)));
            }
        };
        drop(reader);
        let batch = BatchCapsules {
            schema: self.schema.clone(),
            batch: Mutex::new(Some(batch)),
        };
        self.record_batch.bind(py).call1((batch,)).map(Some)
    }

    fn __repr__(&self) -> String {
        format!(
            "<robolog._ArrowBatches of {:?}>",
            self.schema
                .metadata()
                .get("robolog:topic")
                .map_or("?", String::as_str)
        )
    }
}

/// A schema offered through `__arrow_c_schema__` (for `pyarrow.schema`).
#[pyclass(module = "robolog", name = "_ArrowSchema", frozen)]
struct SchemaCapsule(SchemaRef);

#[pymethods]
impl SchemaCapsule {
    /// The Arrow PyCapsule interface: a capsule holding an `ArrowSchema` (a struct of the
    /// columns, with the topic's metadata).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.0)
    }
}

/// One record batch offered once through `__arrow_c_array__` (for `pyarrow.record_batch`).
#[pyclass(module = "robolog", name = "_ArrowBatch", frozen)]
struct BatchCapsules {
    schema: SchemaRef,
    batch: Mutex<Option<RecordBatch>>,
}

#[pymethods]
impl BatchCapsules {
    /// The Arrow PyCapsule interface: capsules holding the `ArrowSchema` and the `ArrowArray`
    /// (a struct array of the columns) of the batch, whose buffers pyarrow takes without a
    /// copy. `requested_schema` is not followed (the protocol allows that): the columns are
    /// the export's.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema;
        let batch = self
            .batch
            .lock_py_attached(py)
            .map_err(|_| PyValueError::new_err("the batch was poisoned by a panic"))?
            .take()
            .ok_or_else(|| PyValueError::new_err("the Arrow batch was taken already"))?;
        let array = FFI_ArrowArray::new(&StructArray::from(batch).into_data());
        let schema = schema_capsule(py, &self.schema)?;
        // The consumer moves the array out of the capsule (leaving it released); the capsule's
        // destructor then drops an empty array, or releases one nobody took.
        let array = PyCapsule::new_with_value(py, array, c"arrow_array")?;
        PyTuple::new(py, [schema.into_any(), array.into_any()])
    }
}

/// A capsule holding the `ArrowSchema` of `schema` (a struct with its fields and metadata).
fn schema_capsule<'py>(py: Python<'py>, schema: &SchemaRef) -> PyResult<Bound<'py, PyCapsule>> {
    let ffi = FFI_ArrowSchema::try_from(schema.as_ref())
        .map_err(|e| PyValueError::new_err(format!("the Arrow schema cannot be exported: {e}")))?;
    PyCapsule::new_with_value(py, ffi, c"arrow_schema")
}

/// One file written by `export`.
#[pyclass(module = "robolog", name = "ExportedFile", frozen, get_all)]
#[derive(Debug, Clone)]
pub(crate) struct PyExportedFile {
    /// The topic.
    topic: String,
    /// Where the file is.
    path: String,
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
            self.topic, self.path, self.rows, self.bytes
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
                path: path_text(&f.path),
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
