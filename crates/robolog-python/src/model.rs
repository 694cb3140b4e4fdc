//! The message model's channels and schemas, and the problems robolog reports, as Python
//! classes.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

/// How a message's bytes are laid out: the definition a channel's messages follow.
#[pyclass(module = "robolog", name = "Schema", frozen)]
#[derive(Debug)]
pub(crate) struct PySchema {
    inner: Arc<robolog::Schema>,
}

#[pymethods]
impl PySchema {
    /// The schema's id in the file (0 where the format has none).
    #[getter]
    fn id(&self) -> u32 {
        self.inner.id
    }

    /// The message type (`sensor_msgs/Imu`, `sensor_msgs/msg/Imu`).
    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }

    /// How the definition is written: `ros1msg`, `ros2msg`, `ros2idl`, `protobuf`,
    /// `jsonschema`, ...
    #[getter]
    fn encoding(&self) -> &str {
        &self.inner.encoding
    }

    /// The definition itself.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.data)
    }

    fn __repr__(&self) -> String {
        format!(
            "Schema(id={}, name={:?}, encoding={:?}, {} bytes)",
            self.inner.id,
            self.inner.name,
            self.inner.encoding,
            self.inner.data.len()
        )
    }
}

/// One stream of messages: a topic with its encoding and schema.
#[pyclass(module = "robolog", name = "Channel", frozen)]
#[derive(Debug)]
pub(crate) struct PyChannel {
    pub(crate) inner: Arc<robolog::Channel>,
    /// The topic as a Python string, made once: every message hands it out.
    pub(crate) topic: Py<PyString>,
}

impl PyChannel {
    pub(crate) fn new(py: Python<'_>, channel: &Arc<robolog::Channel>) -> Self {
        PyChannel {
            inner: Arc::clone(channel),
            topic: PyString::new(py, &channel.topic).unbind(),
        }
    }
}

#[pymethods]
impl PyChannel {
    /// The channel's id in the file.
    #[getter]
    fn id(&self) -> u32 {
        self.inner.id
    }

    /// The topic.
    #[getter]
    fn topic(&self, py: Python<'_>) -> Py<PyString> {
        self.topic.clone_ref(py)
    }

    /// How messages are encoded: `ros1`, `cdr`, `json`, `protobuf`, ...
    #[getter]
    fn message_encoding(&self) -> &str {
        &self.inner.message_encoding
    }

    /// The schema, None for channels without one.
    #[getter]
    fn schema(&self) -> Option<PySchema> {
        self.inner.schema.as_ref().map(|s| PySchema {
            inner: Arc::clone(s),
        })
    }

    /// The message type (the schema's name; "" without a schema).
    #[getter]
    fn type_name(&self) -> &str {
        self.inner.type_name()
    }

    /// The channel's metadata (bag connection headers, MCAP channel metadata, ROS 2 QoS).
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (key, value) in &self.inner.metadata {
            dict.set_item(key, value)?;
        }
        Ok(dict)
    }

    fn __repr__(&self) -> String {
        format!(
            "Channel(id={}, topic={:?}, type={:?}, encoding={:?})",
            self.inner.id,
            self.inner.topic,
            self.inner.type_name(),
            self.inner.message_encoding
        )
    }
}

/// A finding about a log's structure, and where in the file it is.
#[pyclass(module = "robolog", name = "Problem", frozen)]
#[derive(Debug, Clone)]
pub(crate) struct PyProblem {
    /// `"error"` (data lost or unreadable), `"warning"` (inconsistent, nothing lost) or
    /// `"note"`.
    #[pyo3(get)]
    severity: &'static str,
    /// What it is about, for filtering: `"truncated"`, `"checksum"`, `"malformed"`, `"index"`,
    /// `"time"`, `"schema"`, `"metadata"`, `"unsupported"`, `"empty"` or `"other"`.
    #[pyo3(get)]
    kind: &'static str,
    /// Byte offset in the file, None when the finding is about no one place.
    #[pyo3(get)]
    offset: Option<u64>,
    /// The file concerned inside a log directory (a ROS 2 bag's metadata.yaml or a storage
    /// file), None for a single-file log.
    #[pyo3(get)]
    path: Option<String>,
    /// What was found.
    #[pyo3(get)]
    message: String,
    /// The text of `str(problem)`, as the command-line tool prints it.
    text: String,
}

impl From<&robolog::Problem> for PyProblem {
    fn from(p: &robolog::Problem) -> Self {
        PyProblem {
            severity: match p.severity {
                robolog::Severity::Error => "error",
                robolog::Severity::Warning => "warning",
                robolog::Severity::Info => "note",
            },
            kind: p.kind.as_str(),
            offset: p.offset,
            path: p.path.as_ref().map(|p| p.display().to_string()),
            message: p.message.clone(),
            text: p.to_string(),
        }
    }
}

pub(crate) fn problems(problems: &[robolog::Problem]) -> Vec<PyProblem> {
    problems.iter().map(PyProblem::from).collect()
}

#[pymethods]
impl PyProblem {
    fn __repr__(&self) -> String {
        format!(
            "Problem(severity={:?}, kind={:?}, offset={}, message={:?})",
            self.severity,
            self.kind,
            self.offset
                .map_or_else(|| "None".to_owned(), |o| o.to_string()),
            self.message
        )
    }

    fn __str__(&self) -> String {
        self.text.clone()
    }
}

/// The format's name as the Python package spells it.
pub(crate) fn format_name(format: robolog::Format) -> &'static str {
    match format {
        robolog::Format::Bag => "bag",
        robolog::Format::Mcap => "mcap",
        robolog::Format::Bddf => "bddf",
        robolog::Format::Rosbag2 => "rosbag2",
    }
}

/// A path or URL as Python sees it in robolog's objects: the text given (a URL stays a URL;
/// `pathlib.Path` would fold its `//`), as the exceptions' `path` is.
pub(crate) fn path_text(path: &std::path::Path) -> String {
    path.to_string_lossy().into_owned()
}
