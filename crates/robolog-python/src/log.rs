//! `robolog.open` and the `Log` it returns: channels, summary, and queries over the messages.

use std::ops::Bound as RangeBound;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyList, PyString};

use crate::decode::DecodeContext;
use crate::errors::to_py;
use crate::messages::PyMessages;
use crate::model::{PyChannel, PyProblem, format_name, path_text, problems};

/// An open log and what the Python side keeps of it.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) path: PathBuf,
    pub(crate) log: robolog::Log,
    /// The channels as Python objects, in `log.channels()` order (by id).
    pub(crate) channels: Vec<Py<PyChannel>>,
    summary: OnceLock<robolog::Summary>,
    /// Shared by every message of the log, so that each definition is compiled once.
    pub(crate) decode: Arc<Mutex<DecodeContext>>,
}

impl Opened {
    /// The summary, read from the index the first time it is asked for.
    pub(crate) fn summary(&self, py: Python<'_>) -> PyResult<&robolog::Summary> {
        if let Some(summary) = self.summary.get() {
            return Ok(summary);
        }
        let summary = py
            .detach(|| self.log.summary())
            .map_err(|e| to_py(e, Some(&self.path)))?;
        Ok(self.summary.get_or_init(|| summary))
    }

    /// The Python channel object of the channel with this id.
    pub(crate) fn channel(&self, id: u32) -> Option<&Py<PyChannel>> {
        let index = self
            .log
            .channels()
            .binary_search_by_key(&id, |c| c.id)
            .ok()?;
        self.channels.get(index)
    }
}

/// Opens a log: a ROS bag (2.0 or 1.2), an MCAP or BDDF file (recognised from their first
/// bytes, whatever their names), or a ROS 2 bag (a directory with metadata.yaml, or a lone
/// .db3 file). `path` may be a URL (a str: `http(s)://`, `s3://`, `gs://`, `az://`), read by
/// ranged requests of what is needed, as the CLI reads it (S3, GCS and Azure credentials
/// from the environment). Use it as a context manager to release the file when done.
#[pyfunction]
pub(crate) fn open(py: Python<'_>, path: PathBuf) -> PyResult<PyLog> {
    let log = py
        .detach(|| crate::tools::open_checked(&path))
        .map_err(|e| to_py(e, Some(&path)))?;
    let channels = log
        .channels()
        .iter()
        .map(|c| Py::new(py, PyChannel::new(py, c)))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyLog {
        state: Mutex::new(Some(Arc::new(Opened {
            path,
            log,
            channels,
            summary: OnceLock::new(),
            decode: Arc::new(Mutex::new(DecodeContext::default())),
        }))),
    })
}

/// An open log, whatever its format: its channels, summary and messages.
#[pyclass(module = "robolog", name = "Log", frozen)]
#[derive(Debug)]
pub(crate) struct PyLog {
    /// None once closed.
    state: Mutex<Option<Arc<Opened>>>,
}

impl PyLog {
    pub(crate) fn opened(&self, py: Python<'_>) -> PyResult<Arc<Opened>> {
        let state = self
            .state
            .lock_py_attached(py)
            .map_err(|_| PyValueError::new_err("the log's state was poisoned by a panic"))?;
        state
            .clone()
            .ok_or_else(|| PyValueError::new_err("the log is closed"))
    }
}

#[pymethods]
impl PyLog {
    /// The path or URL the log was opened from, as given.
    #[getter]
    fn path(&self, py: Python<'_>) -> PyResult<String> {
        Ok(path_text(&self.opened(py)?.path))
    }

    /// The format: `"bag"`, `"mcap"`, `"bddf"` or `"rosbag2"`.
    #[getter]
    fn format(&self, py: Python<'_>) -> PyResult<&'static str> {
        Ok(format_name(self.opened(py)?.log.format()))
    }

    /// Every channel, by id (those without messages too).
    #[getter]
    fn channels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let opened = self.opened(py)?;
        PyList::new(py, opened.channels.iter().map(|c| c.clone_ref(py)))
    }

    /// Messages in the log.
    #[getter]
    fn message_count(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.opened(py)?.summary(py)?.message_count)
    }

    /// The earliest log time, in nanoseconds since 1970 (None without messages).
    #[getter]
    fn start_time(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        Ok(self.opened(py)?.summary(py)?.start_ns)
    }

    /// The latest log time, in nanoseconds since 1970 (None without messages).
    #[getter]
    fn end_time(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        Ok(self.opened(py)?.summary(py)?.end_ns)
    }

    /// What opening the log noticed: a missing or damaged index (read by a scan instead), a
    /// cut file. Empty for a healthy file; `robolog.check` checks everything.
    #[getter]
    fn problems(&self, py: Python<'_>) -> PyResult<Vec<PyProblem>> {
        Ok(problems(self.opened(py)?.log.problems()))
    }

    /// What `robolog info --json` prints, as a dict: format, version, size, counts, times (ns
    /// and UTC), chunks, channels with their message counts and rates, attachments, metadata,
    /// index use and problems.
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let opened = self.opened(py)?;
        let summary = opened.summary(py)?;
        let file = opened.path.to_string_lossy();
        let document = robolog::SummaryDocument::new(&file, summary, opened.log.problems());
        let text = serde_json::to_string(&document)
            .map_err(|e| PyValueError::new_err(format!("the summary cannot be written: {e}")))?;
        py.import("json")?.call_method1("loads", (text,))
    }

    /// The messages in log-time order (ties in file order), optionally only those of some
    /// topics (exact names or globs; `*` matches any characters, `/` included) and of a time
    /// range `[start, end)` in nanoseconds.
    #[pyo3(signature = (topics=None, start=None, end=None))]
    fn messages(
        &self,
        py: Python<'_>,
        topics: Option<Bound<'_, PyAny>>,
        start: Option<u64>,
        end: Option<u64>,
    ) -> PyResult<PyMessages> {
        let opened = self.opened(py)?;
        let patterns = topics.map(|t| topic_patterns(&t)).transpose()?;
        let range = (
            start.map_or(RangeBound::Unbounded, RangeBound::Included),
            end.map_or(RangeBound::Unbounded, RangeBound::Excluded),
        );
        let mut query = opened.log.messages().time_range(range);
        if let Some(patterns) = &patterns {
            query = query.topics(patterns.iter().cloned());
        }
        let selection = query
            .selection()
            .map_err(|e| to_py(e, Some(&opened.path)))?;
        for pattern in &selection.unmatched {
            warn(
                py,
                &format!(
                    "topic {pattern:?} matches no channel of {}",
                    opened.path.display()
                ),
            )?;
        }
        let messages = py
            .detach(|| query.iter())
            .map_err(|e| to_py(e, Some(&opened.path)))?;
        Ok(PyMessages::new(opened, messages))
    }

    /// The messages of `topic` as a `pyarrow.RecordBatchReader` of the batches of `to_arrow`
    /// (same columns and arguments), each decoded when the reader is pulled (with the GIL
    /// released), so that memory holds one batch however long the topic: for streaming a big
    /// topic to Ray Data, Daft, DuckDB or polars, which take the reader as it is, or to a file
    /// (`pyarrow.parquet.ParquetWriter`). A batch has at most `batch_size` rows (default
    /// 65,536), fewer when its messages add up to 32 MiB.
    ///
    /// Errors in the topic's name, columns or type are raised here; one met in the middle of
    /// the topic (a damaged chunk, a message that does not match its definition) is raised by
    /// the pull that meets it, as robolog's exception (`DataError` with the byte offset,
    /// `DecodeError`, …), and ends the batches. Ctrl-C between two batches raises
    /// `KeyboardInterrupt`. The reader can be dropped before its end.
    #[pyo3(signature = (topic, columns=None, *, start=None, end=None, raw_undecodable=false, batch_size=None))]
    #[allow(clippy::too_many_arguments)]
    fn arrow_batches<'py>(
        &self,
        py: Python<'py>,
        topic: &str,
        columns: Option<Bound<'_, PyAny>>,
        start: Option<u64>,
        end: Option<u64>,
        raw_undecodable: bool,
        batch_size: Option<usize>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let opened = self.opened(py)?;
        let request = table_request(columns, start, end, raw_undecodable, batch_size)?;
        crate::columnar::arrow_batches(py, &opened, topic, request)
    }

    /// The messages of `topic` (its exact name) as a `pyarrow.Table` with the layout of
    /// `robolog export`: `log_time` and `publish_time` (timestamps, ns, UTC; `publish_time`
    /// null where the format has none), then one column per top-level field of the message
    /// (nested messages as structs, arrays as lists, `uint8[]` as binary), in log-time order,
    /// the schema carrying the topic's metadata (`robolog:topic`, `robolog:schema`, …).
    ///
    /// `columns` (names, in the order wanted) reads only those columns: fields not asked for
    /// are not decoded. `start` and `end` keep log times in `[start, end)` (ns).
    /// `raw_undecodable=True` gives a topic robolog cannot decode as raw bytes (a `data`
    /// column) instead of raising `DecodeError`. Raises `ValueError` for a topic the log does
    /// not have or a column the topic does not have, and `ImportError` without pyarrow. The
    /// arrays are handed to pyarrow without a copy (the Arrow PyCapsule interface). The table
    /// is `arrow_batches(...).read_all()`: its chunks are those batches, not concatenated.
    #[pyo3(signature = (topic, columns=None, *, start=None, end=None, raw_undecodable=false))]
    fn to_arrow<'py>(
        &self,
        py: Python<'py>,
        topic: &str,
        columns: Option<Bound<'_, PyAny>>,
        start: Option<u64>,
        end: Option<u64>,
        raw_undecodable: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let opened = self.opened(py)?;
        let request = table_request(columns, start, end, raw_undecodable, None)?;
        crate::columnar::to_arrow(py, &opened, topic, request)
    }

    /// `to_arrow` as a `polars.DataFrame` (polars shares pyarrow's arrays). Raises
    /// `ImportError` when polars (or pyarrow) is not installed.
    #[pyo3(signature = (topic, columns=None, *, start=None, end=None, raw_undecodable=false))]
    fn to_polars<'py>(
        &self,
        py: Python<'py>,
        topic: &str,
        columns: Option<Bound<'_, PyAny>>,
        start: Option<u64>,
        end: Option<u64>,
        raw_undecodable: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let opened = self.opened(py)?;
        let request = table_request(columns, start, end, raw_undecodable, None)?;
        crate::columnar::to_polars(py, &opened, topic, request)
    }

    /// Every message in log-time order: `for message in log` is `log.messages()`.
    fn __iter__(&self, py: Python<'_>) -> PyResult<PyMessages> {
        self.messages(py, None, None, None)
    }

    /// Releases the log. Messages and iterators already handed out keep what they need.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let mut state = self
            .state
            .lock_py_attached(py)
            .map_err(|_| PyValueError::new_err("the log's state was poisoned by a panic"))?;
        *state = None;
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        match self.opened(py) {
            Ok(opened) => format!(
                "<robolog.Log {} ({}, {} channels)>",
                opened.path.display(),
                format_name(opened.log.format()),
                opened.channels.len()
            ),
            Err(_) => "<robolog.Log (closed)>".to_owned(),
        }
    }
}

/// The arguments of `arrow_batches`, `to_arrow` and `to_polars`.
fn table_request(
    columns: Option<Bound<'_, PyAny>>,
    start: Option<u64>,
    end: Option<u64>,
    raw_undecodable: bool,
    batch_size: Option<usize>,
) -> PyResult<crate::columnar::TableRequest> {
    if batch_size == Some(0) {
        return Err(PyValueError::new_err("batch_size must be at least 1"));
    }
    Ok(crate::columnar::TableRequest {
        columns: columns.map(|c| topic_patterns(&c)).transpose()?,
        start,
        end,
        raw_undecodable,
        batch_size,
    })
}

/// `topics=` (and `columns=`): one name or pattern, or an iterable of them.
pub(crate) fn topic_patterns(topics: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if let Ok(one) = topics.cast::<PyString>() {
        return Ok(vec![one.to_cow()?.into_owned()]);
    }
    topics
        .try_iter()?
        .map(|item| item?.extract::<String>())
        .collect()
}

/// A `UserWarning` pointing at the caller's line.
pub(crate) fn warn(py: Python<'_>, message: &str) -> PyResult<()> {
    let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
    py.import("warnings")?
        .call_method1("warn", (message, category, 2))
        .map(drop)
}
