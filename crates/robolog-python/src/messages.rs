//! Iterating over a log's messages from Python.
//!
//! Messages are read in batches with the GIL released (other Python threads run meanwhile),
//! then handed out one by one; between batches the iterator checks for signals, so Ctrl-C
//! raises `KeyboardInterrupt` promptly however long the log.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyMemoryView, PyString};

use crate::buffer::new_bytes;
use crate::decode::DecodeContext;
use crate::errors::to_py;
use crate::log::Opened;
use crate::model::PyChannel;

/// Messages read at once with the GIL released.
const BATCH_MESSAGES: usize = 512;
/// Or fewer, when their bytes add up to this: a batch of large messages is as long to read.
const BATCH_BYTES: usize = 8 << 20;

/// An iterator over messages, from `Log.messages()`.
#[pyclass(module = "robolog", name = "Messages", frozen)]
#[derive(Debug)]
pub(crate) struct PyMessages {
    opened: Arc<Opened>,
    state: Mutex<Reading>,
}

/// Where an iteration is.
#[derive(Debug)]
pub(crate) struct Reading {
    /// None once the log's messages are exhausted.
    source: Option<robolog::Messages>,
    batch: VecDeque<robolog::Message>,
    /// An error met after the messages of the batch, raised once they are handed out.
    error: Option<robolog::Error>,
}

impl Reading {
    /// The next message as Rust sees it, reading a new batch when the last one is used up.
    pub(crate) fn next_message(
        &mut self,
        py: Python<'_>,
        opened: &Opened,
    ) -> PyResult<Option<robolog::Message>> {
        if let Some(message) = self.batch.pop_front() {
            return Ok(Some(message));
        }
        if let Some(error) = self.error.take() {
            return Err(to_py(error, Some(&opened.path)));
        }
        let Some(source) = self.source.as_mut() else {
            return Ok(None);
        };
        py.check_signals()?;
        let batch = &mut self.batch;
        let (error, exhausted) = py.detach(|| {
            let mut bytes = 0;
            while batch.len() < BATCH_MESSAGES && bytes < BATCH_BYTES {
                match source.next() {
                    Some(Ok(message)) => {
                        bytes += message.data.len();
                        batch.push_back(message);
                    }
                    Some(Err(error)) => return (Some(error), false),
                    None => return (None, true),
                }
            }
            (None, false)
        });
        if exhausted {
            self.source = None;
        }
        self.error = error;
        if let Some(message) = self.batch.pop_front() {
            return Ok(Some(message));
        }
        match self.error.take() {
            Some(error) => Err(to_py(error, Some(&opened.path))),
            None => Ok(None),
        }
    }
}

impl PyMessages {
    pub(crate) fn new(opened: Arc<Opened>, messages: robolog::Messages) -> Self {
        PyMessages {
            opened,
            state: Mutex::new(Reading {
                source: Some(messages),
                batch: VecDeque::with_capacity(BATCH_MESSAGES),
                error: None,
            }),
        }
    }

    /// The next message as Rust sees it.
    pub(crate) fn next_message(&self, py: Python<'_>) -> PyResult<Option<robolog::Message>> {
        let mut state = self
            .state
            .lock_py_attached(py)
            .map_err(|_| PyValueError::new_err("the iterator was poisoned by a panic"))?;
        state.next_message(py, &self.opened)
    }

    /// The Python message of `message`.
    pub(crate) fn wrap(&self, py: Python<'_>, message: robolog::Message) -> PyResult<PyMessage> {
        let channel = match self.opened.channel(message.channel.id) {
            Some(channel) => channel.clone_ref(py),
            // A channel met only in the data (not declared when the log was opened).
            None => Py::new(py, PyChannel::new(py, &message.channel))?,
        };
        Ok(PyMessage {
            inner: message,
            channel,
            decode: Arc::clone(&self.opened.decode),
        })
    }
}

#[pymethods]
impl PyMessages {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<PyMessage>> {
        match self.next_message(py)? {
            Some(message) => self.wrap(py, message).map(Some),
            None => Ok(None),
        }
    }

    fn __repr__(&self) -> String {
        format!("<robolog.Messages of {}>", self.opened.path.display())
    }
}

/// One message: its channel, times, bytes, and `decode()`.
#[pyclass(module = "robolog", name = "Message", frozen)]
#[derive(Debug)]
pub(crate) struct PyMessage {
    inner: robolog::Message,
    channel: Py<PyChannel>,
    decode: Arc<Mutex<DecodeContext>>,
}

impl PyMessage {
    /// The message as the facade has it.
    pub(crate) fn message(&self) -> &robolog::Message {
        &self.inner
    }
}

#[pymethods]
impl PyMessage {
    /// The channel's topic.
    #[getter]
    fn topic(&self, py: Python<'_>) -> Py<PyString> {
        self.channel.get().topic.clone_ref(py)
    }

    /// When it was logged, in nanoseconds since 1970.
    #[getter]
    fn log_time(&self) -> u64 {
        self.inner.log_time_ns
    }

    /// When it was published, in nanoseconds (MCAP and ROS 2 bags with MCAP storage; None
    /// for the formats without it).
    #[getter]
    fn publish_time(&self) -> Option<u64> {
        self.inner.publish_time_ns
    }

    /// Its sequence number (MCAP; None for the formats without one).
    #[getter]
    fn sequence(&self) -> Option<u32> {
        self.inner.sequence
    }

    /// The channel it belongs to.
    #[getter]
    fn channel(&self, py: Python<'_>) -> Py<PyChannel> {
        self.channel.clone_ref(py)
    }

    /// The serialized message, as a read-only memoryview of the log's own memory (no copy;
    /// `bytes(message.data)` copies).
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyMemoryView>> {
        let bytes = new_bytes(py, self.inner.data.clone())?;
        PyMemoryView::from(&bytes)
    }

    /// The message decoded into Python values: a dict of its fields (see the package's
    /// decoding rules). Raises `robolog.DecodeError` when the channel's encoding or definition
    /// is not one robolog decodes, or the bytes do not match the definition.
    fn decode<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut context = self
            .decode
            .lock_py_attached(py)
            .map_err(|_| PyValueError::new_err("the decoder was poisoned by a panic"))?;
        context.decode(py, &self.inner)
    }

    fn __len__(&self) -> usize {
        self.inner.data.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "Message(topic={:?}, log_time={}, {} bytes)",
            self.inner.channel.topic,
            self.inner.log_time_ns,
            self.inner.data.len()
        )
    }
}
