//! `robolog.convert`, `merge`, `check` and `recover`: the CLI's commands with its options, as
//! functions that return report objects.

use std::collections::BTreeMap;
use std::ops::Bound as RangeBound;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use robolog::{ConvertOptions, Filter, LogWriter, OutputSettings};

use crate::errors::to_py;
use crate::log::topic_patterns;
use crate::model::{PyProblem, format_name, path_text, problems};

/// What `convert` or `merge` wrote, and what it left out.
#[pyclass(module = "robolog", name = "ConvertReport", frozen, get_all)]
#[derive(Debug)]
pub(crate) struct PyConvertReport {
    /// The output's path.
    output: String,
    /// The output format.
    format: &'static str,
    /// Bytes written.
    output_bytes: u64,
    /// Messages written.
    messages: u64,
    /// Their payload bytes.
    bytes: u64,
    /// Channels written.
    channels: u64,
    /// Attachments written.
    attachments: u64,
    /// Attachments the output format cannot hold.
    attachments_dropped: u64,
    /// Metadata records written.
    metadata: u64,
    /// Metadata records the output format cannot hold.
    metadata_dropped: u64,
    /// MCAP chunks copied whole, without decoding them (MCAP to MCAP, every message of the
    /// chunk selected). Their messages are counted in `messages`, their payload bytes not in
    /// `bytes`.
    chunks_copied: u64,
    /// Channels without messages left out because the output format cannot hold them.
    skipped_channels: Vec<String>,
    /// Topic patterns that matched no channel.
    unmatched_topics: Vec<String>,
    /// What opening the inputs noticed (damage, missing indexes).
    input_problems: Vec<PyProblem>,
}

#[pymethods]
impl PyConvertReport {
    fn __repr__(&self) -> String {
        format!(
            "ConvertReport(output={:?}, format={:?}, messages={}, channels={}, output_bytes={})",
            self.output, self.format, self.messages, self.channels, self.output_bytes
        )
    }
}

/// What `check` found.
#[pyclass(module = "robolog", name = "CheckReport", frozen, get_all)]
#[derive(Debug)]
pub(crate) struct PyCheckReport {
    /// The file or URL checked, as given.
    path: String,
    /// Its format.
    format: &'static str,
    /// Messages that could be read.
    messages: u64,
    /// Everything found, with byte offsets.
    problems: Vec<PyProblem>,
    /// False when a problem is an error (with `strict=True`, a warning too).
    valid: bool,
}

#[pymethods]
impl PyCheckReport {
    fn __repr__(&self) -> String {
        format!(
            "CheckReport(path={:?}, format={:?}, messages={}, problems={}, valid={})",
            self.path,
            self.format,
            self.messages,
            self.problems.len(),
            if self.valid { "True" } else { "False" }
        )
    }
}

/// What `recover` kept and lost.
#[pyclass(module = "robolog", name = "RecoverReport", frozen, get_all)]
#[derive(Debug)]
pub(crate) struct PyRecoverReport {
    /// The recovered log's path.
    output: String,
    /// The format (recovery keeps it; a bag 1.2 becomes 2.0).
    format: &'static str,
    /// Messages in the output.
    messages_recovered: u64,
    /// Messages known to be lost (a lower bound).
    messages_lost: u64,
    /// Input bytes that ended up in no kept record.
    bytes_dropped: u64,
    /// True when nothing of the input was lost.
    lossless: bool,
    /// Other counts, by format (`chunks_recovered`, `series_recovered`, ...).
    details: BTreeMap<String, u64>,
    /// What was damaged, and where.
    problems: Vec<PyProblem>,
    /// Size of the output.
    output_bytes: u64,
}

#[pymethods]
impl PyRecoverReport {
    fn __repr__(&self) -> String {
        format!(
            "RecoverReport(output={:?}, format={:?}, messages_recovered={}, messages_lost={}, bytes_dropped={}, lossless={})",
            self.output,
            self.format,
            self.messages_recovered,
            self.messages_lost,
            self.bytes_dropped,
            if self.lossless { "True" } else { "False" }
        )
    }
}

/// The output settings named as the CLI names them (`format="mcap"`, `compression="lz4"`, ...).
pub(crate) fn output_settings(
    format: Option<&str>,
    compression: Option<&str>,
    chunk_size: Option<u64>,
    storage: Option<&str>,
    compression_mode: Option<&str>,
) -> PyResult<OutputSettings> {
    let bad = |e: robolog::SettingsError| PyValueError::new_err(e.to_string());
    let mut settings = OutputSettings::new();
    if let Some(format) = format {
        settings = settings.format(format.parse().map_err(bad)?);
    }
    if let Some(compression) = compression {
        settings = settings.compression(compression.parse().map_err(bad)?);
    }
    if let Some(size) = chunk_size {
        settings = settings.chunk_size(size);
    }
    if let Some(storage) = storage {
        settings = settings.storage(storage.parse().map_err(bad)?);
    }
    if let Some(mode) = compression_mode {
        settings = settings.compression_mode(mode.parse().map_err(bad)?);
    }
    Ok(settings)
}

/// The writer for `output` with `settings`.
pub(crate) fn create_writer(
    settings: &OutputSettings,
    output: &Path,
) -> PyResult<Box<dyn LogWriter + Send>> {
    let options = settings
        .writer_options(output)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let target = settings
        .output(output)
        .map_err(|e| to_py(e, Some(output)))?;
    robolog::create_writer(target, options).map_err(|e| to_py(e, Some(output)))
}

/// The topic and time selection (`topics=`, `start=`, `end=`; `[start, end)` in nanoseconds).
pub(crate) fn filter(
    topics: Option<&Bound<'_, PyAny>>,
    start: Option<u64>,
    end: Option<u64>,
) -> PyResult<Filter> {
    let mut filter = Filter::new().time_range((
        start.map_or(RangeBound::Unbounded, RangeBound::Included),
        end.map_or(RangeBound::Unbounded, RangeBound::Excluded),
    ));
    if let Some(topics) = topics {
        filter = filter.topics(topic_patterns(topics)?);
    }
    Ok(filter)
}

/// Converts the log at `input` into `output` (the CLI's `robolog convert`). The output format
/// follows `output`'s extension (.mcap, .bag, .bddf; an existing directory: a ROS 2 bag)
/// unless `format` names it (`"mcap"`, `"bag"`, `"bddf"`, `"rosbag2"`). The output is written
/// under a temporary name and renamed into place when complete: a failed or interrupted
/// conversion leaves nothing behind.
#[pyfunction]
#[pyo3(signature = (input, output, *, format=None, compression=None, chunk_size=None, storage=None, compression_mode=None, topics=None, start=None, end=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn convert(
    py: Python<'_>,
    input: PathBuf,
    output: PathBuf,
    format: Option<&str>,
    compression: Option<&str>,
    chunk_size: Option<u64>,
    storage: Option<&str>,
    compression_mode: Option<&str>,
    topics: Option<Bound<'_, PyAny>>,
    start: Option<u64>,
    end: Option<u64>,
) -> PyResult<PyConvertReport> {
    let settings = output_settings(format, compression, chunk_size, storage, compression_mode)?;
    let filter = filter(topics.as_ref(), start, end)?;
    let log = py
        .detach(|| open_checked(&input))
        .map_err(|e| to_py(e, Some(&input)))?;
    let writer = create_writer(&settings, &output)?;
    write_all(py, &settings, &output, writer, filter, |writer, options| {
        robolog::convert(&log, writer, options).map_err(|e| to_py(e, Some(&input)))
    })
}

/// Opens a log as the package does: a damaged uncompressed MCAP chunk is an error, not data
/// copied on unnoticed (`OpenOptions::check_uncompressed_chunks`, as the command line).
/// The URL `path` names (`http(s)://`, `s3://`, `gs://`, `az://`), None for a local path.
fn url(path: &Path) -> Option<&str> {
    path.to_str().filter(|p| robolog::is_url(p))
}

/// The object behind `url`, read by ranged requests.
fn remote_input(url: &str) -> robolog::Result<robolog::Input> {
    let options = robolog::remote::RemoteOptions::new();
    let remote = robolog::remote::Remote::open(url, &options).map_err(std::io::Error::from)?;
    Ok(remote.input())
}

pub(crate) fn open_checked(path: &Path) -> robolog::Result<robolog::Log> {
    robolog::OpenOptions::new()
        .check_uncompressed_chunks(true)
        .open(path)
}

/// Merges logs of any formats into `output`, every message in log-time order (the CLI's
/// `robolog merge`); options as `convert`.
#[pyfunction]
#[pyo3(signature = (inputs, output, *, format=None, compression=None, chunk_size=None, storage=None, compression_mode=None, topics=None, start=None, end=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn merge(
    py: Python<'_>,
    inputs: Vec<PathBuf>,
    output: PathBuf,
    format: Option<&str>,
    compression: Option<&str>,
    chunk_size: Option<u64>,
    storage: Option<&str>,
    compression_mode: Option<&str>,
    topics: Option<Bound<'_, PyAny>>,
    start: Option<u64>,
    end: Option<u64>,
) -> PyResult<PyConvertReport> {
    if inputs.is_empty() {
        return Err(PyValueError::new_err("merge needs at least one input"));
    }
    let settings = output_settings(format, compression, chunk_size, storage, compression_mode)?;
    let filter = filter(topics.as_ref(), start, end)?;
    let logs = inputs
        .iter()
        .map(|path| {
            py.detach(|| open_checked(path))
                .map_err(|e| to_py(e, Some(path)))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let writer = create_writer(&settings, &output)?;
    // The facade's error does not say which input it comes from.
    let only = match &inputs[..] {
        [one] => Some(one.as_path()),
        _ => None,
    };
    write_all(py, &settings, &output, writer, filter, |writer, options| {
        let logs: Vec<&robolog::Log> = logs.iter().collect();
        robolog::merge(&logs, writer, options).map_err(|e| to_py(e, only))
    })
}

/// Runs a conversion into `writer` with the GIL released, interruptible: Ctrl-C (or any
/// signal handler that raises) stops it at the next progress report, and the output is not
/// written.
fn write_all(
    py: Python<'_>,
    settings: &OutputSettings,
    output: &Path,
    writer: Box<dyn LogWriter + Send>,
    filter: Filter,
    run: impl FnOnce(&mut dyn LogWriter, ConvertOptions<'_>) -> PyResult<robolog::ConvertReport> + Send,
) -> PyResult<PyConvertReport> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut writer = Interruptible {
        inner: writer,
        stop: Arc::clone(&stop),
    };
    let interrupted = std::sync::Mutex::new(None::<PyErr>);
    let result: PyResult<(robolog::ConvertReport, robolog::Finished)> = py.detach(|| {
        let options = ConvertOptions::new().filter(filter).progress(|_| {
            // Signals are handled by the main thread's Python; a raised exception (Ctrl-C's
            // KeyboardInterrupt) stops the conversion through the writer.
            if let Err(e) = Python::attach(|py| py.check_signals()) {
                stop.store(true, Ordering::Relaxed);
                if let Ok(mut slot) = interrupted.lock() {
                    slot.get_or_insert(e);
                }
            }
        });
        let report = run(&mut writer, options)?;
        let finished = writer.inner.finish().map_err(|e| to_py(e, Some(output)))?;
        Ok((report, finished))
    });
    if let Some(e) = interrupted.into_inner().ok().flatten() {
        return Err(e);
    }
    // A signal that came after the last progress report is raised now, not at some later line
    // of the caller's code.
    py.check_signals()?;
    let (report, finished) = result?;
    Ok(PyConvertReport {
        output: path_text(output),
        format: settings.output_format(output).map_or("", format_name),
        output_bytes: finished.bytes,
        messages: report.messages,
        bytes: report.bytes,
        channels: report.channels,
        attachments: report.attachments,
        attachments_dropped: report.attachments_dropped,
        metadata: report.metadata,
        metadata_dropped: report.metadata_dropped,
        chunks_copied: report.chunks_copied,
        skipped_channels: report.skipped_channels,
        unmatched_topics: report.unmatched_topics,
        input_problems: problems(&report.input_problems),
    })
}

/// A writer that fails once `stop` is set, which ends a conversion early.
#[derive(Debug)]
struct Interruptible {
    inner: Box<dyn LogWriter + Send>,
    stop: Arc<AtomicBool>,
}

impl Interruptible {
    fn check(&self) -> robolog::Result<()> {
        if self.stop.load(Ordering::Relaxed) {
            Err(robolog::Error::Usage("interrupted".into()))
        } else {
            Ok(())
        }
    }
}

impl LogWriter for Interruptible {
    fn format(&self) -> robolog::Format {
        self.inner.format()
    }

    fn check_channel(&self, channel: &robolog::Channel) -> Result<(), String> {
        self.inner.check_channel(channel)
    }

    fn add_channel(&mut self, channel: &robolog::Channel) -> robolog::Result<u32> {
        self.check()?;
        self.inner.add_channel(channel)
    }

    fn write_message(&mut self, channel: u32, message: &robolog::Message) -> robolog::Result<()> {
        self.check()?;
        self.inner.write_message(channel, message)
    }

    fn write_attachment(&mut self, attachment: &robolog::Attachment) -> robolog::Result<bool> {
        self.check()?;
        self.inner.write_attachment(attachment)
    }

    fn write_metadata(&mut self, metadata: &robolog::Metadata) -> robolog::Result<bool> {
        self.check()?;
        self.inner.write_metadata(metadata)
    }

    fn finish(&mut self) -> robolog::Result<robolog::Finished> {
        self.check()?;
        self.inner.finish()
    }

    // Without it, MCAP to MCAP would decode every chunk instead of copying those kept whole. A
    // Ctrl-C while chunks are copied stops the conversion at the next message or at `finish`.
    fn as_mcap(&mut self) -> Option<&mut robolog::McapWriter> {
        self.inner.as_mcap()
    }
}

/// Checks the structure of the log at `path` (the CLI's `robolog check`): indexes against
/// data, chunk CRCs, counts, md5sums; every problem with its byte offset. `valid` is False
/// when a problem is an error (with `strict=True`, a warning too). A URL's object is read by
/// ranged requests (a bag or BDDF file front to back as it streams in).
#[pyfunction]
#[pyo3(signature = (path, *, strict=false))]
pub(crate) fn check(py: Python<'_>, path: PathBuf, strict: bool) -> PyResult<PyCheckReport> {
    let report = py
        .detach(|| match url(&path) {
            // Read by position: a bag or BDDF object streams in, front to back.
            Some(url) => robolog::check_input(remote_input(url)?),
            None => robolog::check(&path),
        })
        .map_err(|e| to_py(e, Some(&path)))?;
    let failing = if strict {
        robolog::Severity::Warning
    } else {
        robolog::Severity::Error
    };
    Ok(PyCheckReport {
        valid: report.problems.iter().all(|p| p.severity < failing),
        format: format_name(report.format),
        messages: report.messages,
        problems: problems(&report.problems),
        path: path_text(&path),
    })
}

/// Writes a valid, indexed copy of a damaged, cut or unindexed log (the CLI's
/// `robolog recover`), in the same format (a bag 1.2 becomes 2.0; a ROS 2 bag becomes a bag
/// directory at `output`), and says what was recovered and lost. `output` may be `input`. An
/// `input` URL's object streams in while it is recovered when it is an MCAP file (memory holds a
/// window of it, not the object), as the CLI reads it; a bag or BDDF object is fetched whole
/// first.
#[pyfunction]
pub(crate) fn recover(
    py: Python<'_>,
    input: PathBuf,
    output: PathBuf,
) -> PyResult<PyRecoverReport> {
    let report = py
        .detach(|| match url(&input) {
            Some(url) => {
                let remote = remote_input(url)?;
                robolog::recover_input(&remote, robolog::Output::file(&output)?)
                    .map(|(report, _)| report)
            }
            None => robolog::recover_file(&input, &output),
        })
        .map_err(|e| match e {
            // Reading the input is what fails, unless the output cannot be written.
            e @ robolog::Error::Io(_) if input.exists() => to_py(e, Some(&output)),
            e => to_py(e, Some(&input)),
        })?;
    Ok(PyRecoverReport {
        output: path_text(&output),
        format: format_name(report.format),
        messages_recovered: report.messages_recovered,
        messages_lost: report.messages_lost,
        bytes_dropped: report.bytes_dropped,
        lossless: report.lossless,
        details: report.details,
        problems: problems(&report.problems),
        output_bytes: report.output_bytes,
    })
}
