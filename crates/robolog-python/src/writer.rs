//! `robolog.Writer`: writing a log from Python, in any format robolog writes.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::PyBytes;
use robolog::{Bytes, LogWriter};

use crate::errors::to_py;
use crate::messages::PyMessage;
use crate::model::{PyChannel, format_name, path_text};
use crate::tools::{create_writer, output_settings};

/// What an open writer holds.
#[derive(Debug)]
struct Open {
    writer: Box<dyn LogWriter + Send>,
    /// The channels declared, by the id `add_channel` returned.
    channels: HashMap<u32, Arc<robolog::Channel>>,
    /// Channels of read logs copied by `write_message`, by their address, with their id here.
    copied: HashMap<usize, (Arc<robolog::Channel>, u32)>,
    /// Schemas declared by `add_channel`, by content, so that channels of one type share one.
    schemas: HashMap<(String, String, Vec<u8>), Arc<robolog::Schema>>,
}

/// Writes a log: MCAP, ROS bag, BDDF or a ROS 2 bag directory, chosen by `format` or the
/// path's extension, with the settings `robolog.convert` takes. The file is written under a
/// temporary name and renamed into place by `finish()`; used as a context manager, the writer
/// finishes when the block ends normally and leaves nothing behind when it raises.
#[pyclass(module = "robolog", name = "Writer", frozen)]
#[derive(Debug)]
pub(crate) struct PyWriter {
    path: PathBuf,
    format: &'static str,
    /// None once finished or closed.
    state: Mutex<Option<Open>>,
}

impl PyWriter {
    fn with_open<T>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Open) -> PyResult<T>,
    ) -> PyResult<T> {
        let mut state = self
            .state
            .lock_py_attached(py)
            .map_err(|_| PyValueError::new_err("the writer was poisoned by a panic"))?;
        match state.as_mut() {
            Some(open) => f(open),
            None => Err(PyValueError::new_err("the writer is finished or closed")),
        }
    }
}

#[pymethods]
impl PyWriter {
    #[new]
    #[pyo3(signature = (path, format=None, *, compression=None, chunk_size=None, storage=None, compression_mode=None))]
    fn new(
        path: PathBuf,
        format: Option<&str>,
        compression: Option<&str>,
        chunk_size: Option<u64>,
        storage: Option<&str>,
        compression_mode: Option<&str>,
    ) -> PyResult<Self> {
        let settings = output_settings(format, compression, chunk_size, storage, compression_mode)?;
        let writer = create_writer(&settings, &path)?;
        Ok(PyWriter {
            format: format_name(writer.format()),
            path,
            state: Mutex::new(Some(Open {
                writer,
                channels: HashMap::new(),
                copied: HashMap::new(),
                schemas: HashMap::new(),
            })),
        })
    }

    /// The output's path.
    #[getter]
    fn path(&self) -> String {
        path_text(&self.path)
    }

    /// The format written: `"mcap"`, `"bag"`, `"bddf"` or `"rosbag2"`.
    #[getter]
    fn format(&self) -> &'static str {
        self.format
    }

    /// Declares a channel and returns the id to write its messages with. The schema (message
    /// type, how its definition is written, and the definition) is optional: a ROS bag needs
    /// `ros1` messages with a `ros1msg` definition.
    #[pyo3(signature = (topic, message_encoding, *, schema_name="", schema_encoding="", schema_data=None, metadata=None))]
    #[allow(clippy::too_many_arguments)]
    fn add_channel(
        &self,
        py: Python<'_>,
        topic: String,
        message_encoding: String,
        schema_name: &str,
        schema_encoding: &str,
        schema_data: Option<Bound<'_, PyAny>>,
        metadata: Option<std::collections::BTreeMap<String, String>>,
    ) -> PyResult<u32> {
        let data = schema_data
            .map(|d| bytes_of(&d))
            .transpose()?
            .unwrap_or_default();
        let path = self.path.clone();
        self.with_open(py, |open| {
            let schema = if schema_name.is_empty() && schema_encoding.is_empty() && data.is_empty()
            {
                None
            } else {
                let next_id = u32::try_from(open.schemas.len() + 1)
                    .map_err(|_| PyValueError::new_err("too many schemas"))?;
                let key = (
                    schema_name.to_owned(),
                    schema_encoding.to_owned(),
                    data.to_vec(),
                );
                Some(Arc::clone(open.schemas.entry(key).or_insert_with(|| {
                    Arc::new(robolog::Schema {
                        id: next_id,
                        name: schema_name.to_owned(),
                        encoding: schema_encoding.to_owned(),
                        data: Bytes::copy_from_slice(&data),
                    })
                })))
            };
            let id = u32::try_from(open.channels.len())
                .map_err(|_| PyValueError::new_err("too many channels"))?;
            let channel = Arc::new(robolog::Channel {
                id,
                topic,
                message_encoding,
                schema,
                metadata: metadata.unwrap_or_default(),
            });
            if let Err(why) = open.writer.check_channel(&channel) {
                return Err(crate::errors::UnsupportedError::new_err(format!(
                    "{}: {why}",
                    channel.topic
                )));
            }
            let out = open
                .writer
                .add_channel(&channel)
                .map_err(|e| to_py(e, Some(&path)))?;
            open.channels.insert(out, channel);
            Ok(out)
        })
    }

    /// Writes a message on a channel declared with `add_channel`: its log time (and publish
    /// time) in nanoseconds since 1970, and its serialized bytes (any bytes-like object).
    #[pyo3(signature = (channel, log_time, data, *, publish_time=None, sequence=None))]
    fn write(
        &self,
        py: Python<'_>,
        channel: u32,
        log_time: u64,
        data: Bound<'_, PyAny>,
        publish_time: Option<u64>,
        sequence: Option<u32>,
    ) -> PyResult<()> {
        let data = bytes_of(&data)?;
        let path = self.path.clone();
        self.with_open(py, |open| {
            let Some(declared) = open.channels.get(&channel) else {
                return Err(PyValueError::new_err(format!(
                    "channel {channel} was not declared with add_channel"
                )));
            };
            let message = robolog::Message {
                channel: Arc::clone(declared),
                log_time_ns: log_time,
                publish_time_ns: publish_time,
                sequence,
                data,
            };
            let writer = &mut open.writer;
            py.detach(|| writer.write_message(channel, &message))
                .map_err(|e| to_py(e, Some(&path)))
        })
    }

    /// Copies a message read from a log (its channel is declared here the first time one of
    /// its messages is written).
    fn write_message(&self, py: Python<'_>, message: PyRef<'_, PyMessage>) -> PyResult<()> {
        let message = message.message().clone();
        let path = self.path.clone();
        self.with_open(py, |open| {
            let key = Arc::as_ptr(&message.channel) as usize;
            let id = match open.copied.get(&key) {
                Some((_, id)) => *id,
                None => {
                    if let Err(why) = open.writer.check_channel(&message.channel) {
                        return Err(crate::errors::UnsupportedError::new_err(format!(
                            "{}: {why}",
                            message.channel.topic
                        )));
                    }
                    let id = open
                        .writer
                        .add_channel(&message.channel)
                        .map_err(|e| to_py(e, Some(&path)))?;
                    open.channels.insert(id, Arc::clone(&message.channel));
                    open.copied.insert(key, (Arc::clone(&message.channel), id));
                    id
                }
            };
            let writer = &mut open.writer;
            py.detach(|| writer.write_message(id, &message))
                .map_err(|e| to_py(e, Some(&path)))
        })
    }

    /// Declares a channel like one of a read log (`Log.channels`, `Message.channel`) and
    /// returns its id here.
    fn copy_channel(&self, py: Python<'_>, channel: PyRef<'_, PyChannel>) -> PyResult<u32> {
        let channel = Arc::clone(&channel.inner);
        let path = self.path.clone();
        self.with_open(py, |open| {
            if let Err(why) = open.writer.check_channel(&channel) {
                return Err(crate::errors::UnsupportedError::new_err(format!(
                    "{}: {why}",
                    channel.topic
                )));
            }
            let id = open
                .writer
                .add_channel(&channel)
                .map_err(|e| to_py(e, Some(&path)))?;
            open.channels.insert(id, Arc::clone(&channel));
            open.copied
                .insert(Arc::as_ptr(&channel) as usize, (channel, id));
            Ok(id)
        })
    }

    /// Stores a file in the log (MCAP); returns False when the format cannot hold attachments.
    #[pyo3(signature = (name, data, *, media_type="application/octet-stream", log_time=0, create_time=0))]
    fn add_attachment(
        &self,
        py: Python<'_>,
        name: String,
        data: Bound<'_, PyAny>,
        media_type: &str,
        log_time: u64,
        create_time: u64,
    ) -> PyResult<bool> {
        let attachment = robolog::Attachment {
            name,
            media_type: media_type.to_owned(),
            log_time_ns: log_time,
            create_time_ns: create_time,
            data: bytes_of(&data)?,
        };
        let path = self.path.clone();
        self.with_open(py, |open| {
            open.writer
                .write_attachment(&attachment)
                .map_err(|e| to_py(e, Some(&path)))
        })
    }

    /// Stores a named set of key-value pairs about the whole log (MCAP metadata, BDDF file
    /// annotations before the first message); returns False when the format cannot hold it.
    fn add_metadata(
        &self,
        py: Python<'_>,
        name: String,
        entries: std::collections::BTreeMap<String, String>,
    ) -> PyResult<bool> {
        let metadata = robolog::Metadata { name, entries };
        let path = self.path.clone();
        self.with_open(py, |open| {
            open.writer
                .write_metadata(&metadata)
                .map_err(|e| to_py(e, Some(&path)))
        })
    }

    /// Completes the log (indexes, summary) and renames it into place; returns its size in
    /// bytes. The writer cannot be used afterwards.
    fn finish(&self, py: Python<'_>) -> PyResult<u64> {
        let mut state = self
            .state
            .lock_py_attached(py)
            .map_err(|_| PyValueError::new_err("the writer was poisoned by a panic"))?;
        let Some(mut open) = state.take() else {
            return Err(PyValueError::new_err("the writer is finished or closed"));
        };
        let finished = py
            .detach(|| open.writer.finish())
            .map_err(|e| to_py(e, Some(&self.path)))?;
        Ok(finished.bytes)
    }

    /// Abandons the log: nothing is left at its path (a finished log stays).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let mut state = self
            .state
            .lock_py_attached(py)
            .map_err(|_| PyValueError::new_err("the writer was poisoned by a panic"))?;
        state.take();
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (exc_type, _exc_value, _traceback))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<Bound<'_, PyAny>>,
        _exc_value: Option<Bound<'_, PyAny>>,
        _traceback: Option<Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let open = self
            .state
            .lock_py_attached(py)
            .map(|s| s.is_some())
            .unwrap_or(false);
        if exc_type.is_none() && open {
            self.finish(py)?;
        } else {
            self.close(py)?;
        }
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!("<robolog.Writer {} ({})>", self.path.display(), self.format)
    }
}

/// The bytes of any bytes-like object (bytes, bytearray, memoryview, numpy arrays, ...).
fn bytes_of(data: &Bound<'_, PyAny>) -> PyResult<Bytes> {
    if let Ok(bytes) = data.cast::<PyBytes>() {
        return Ok(Bytes::copy_from_slice(bytes.as_bytes()));
    }
    let py = data.py();
    let copy = py.get_type::<PyBytes>().call1((data,))?;
    Ok(Bytes::copy_from_slice(copy.cast::<PyBytes>()?.as_bytes()))
}
