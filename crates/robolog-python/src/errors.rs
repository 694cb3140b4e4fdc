//! robolog's errors as Python exceptions: a small hierarchy under `robolog.RobologError`, each
//! with the byte offset (`offset`, `None` when unknown) and the file (`path`) it is about.
//! Failures to reach a file stay Python's own `OSError`s (`FileNotFoundError`, …).

use std::path::Path;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyOSError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    robolog,
    RobologError,
    PyException,
    "Base class of robolog's errors. `offset` is the byte offset in the file the error is about (None when unknown), `path` the file (None when not known)."
);
create_exception!(
    robolog,
    FormatError,
    RobologError,
    "The input is not a log robolog reads (unknown first bytes, empty input), or its format was compiled out."
);
create_exception!(
    robolog,
    DataError,
    RobologError,
    "The log is damaged or contradicts its format; `offset` says where."
);
create_exception!(
    robolog,
    TruncatedError,
    DataError,
    "The log ends too early (a cut file); `offset` is where the missing bytes begin."
);
create_exception!(
    robolog,
    DecodeError,
    RobologError,
    "A message cannot be decoded: its encoding or definition is not one robolog decodes, or its bytes do not match its definition. `topic` and `log_time` name the message (None when the error is about the channel); `offset` is the byte offset in the message's data (`Message.data`) where decoding failed, None when unknown."
);
create_exception!(
    robolog,
    UnsupportedError,
    RobologError,
    "The output format cannot hold what was asked (a ROS bag holds only ROS 1 messages, a time beyond the format's range, …)."
);

/// Registers the exception classes in the module, with `offset` and `path` defaulting to None.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let base = py.get_type::<RobologError>();
    base.setattr("offset", py.None())?;
    base.setattr("path", py.None())?;
    m.add("RobologError", base)?;
    m.add("FormatError", py.get_type::<FormatError>())?;
    m.add("DataError", py.get_type::<DataError>())?;
    m.add("TruncatedError", py.get_type::<TruncatedError>())?;
    let decode = py.get_type::<DecodeError>();
    decode.setattr("topic", py.None())?;
    decode.setattr("log_time", py.None())?;
    m.add("DecodeError", decode)?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    Ok(())
}

/// The Python exception for a facade error about the file at `path` (when known).
pub(crate) fn to_py(error: robolog::Error, path: Option<&Path>) -> PyErr {
    use robolog::Error as E;
    let offset = error.offset();
    let err = match error {
        E::Io(io) => return os_error(&io, path),
        E::EmptyInput
        | E::UnknownFormat { .. }
        | E::TruncatedMagic { .. }
        | E::FormatDisabled { .. } => FormatError::new_err(error.to_string()),
        E::Decode(ref decode) => return with_location(decode_error(decode), None, path),
        E::TopicPattern { .. } | E::TopicRegex { .. } => {
            return PyValueError::new_err(error.to_string());
        }
        E::TimeOutOfRange { .. } | E::UnsupportedChannels { .. } | E::Output(_) => {
            UnsupportedError::new_err(error.to_string())
        }
        E::Usage(_) => RobologError::new_err(error.to_string()),
        ref e if e.is_truncation() => TruncatedError::new_err(error.to_string()),
        _ => {
            if let Some(io) = io_source(&error) {
                return os_error(io, path);
            }
            DataError::new_err(error.to_string())
        }
    };
    with_location(err, offset, path)
}

/// A decoding failure, with the topic, the log time and the offset in the message when known.
pub(crate) fn decode_error(error: &robolog::DecodeError) -> PyErr {
    use robolog::DecodeError as D;
    let (topic, log_time, offset) = match error {
        D::NotDecodable { topic, .. } | D::Schema { topic, .. } => (topic, None, None),
        D::Message {
            topic,
            log_time_ns,
            offset,
            ..
        } => (topic, Some(*log_time_ns), *offset),
        D::Json {
            topic, log_time_ns, ..
        } => (topic, Some(*log_time_ns), None),
        _ => return DecodeError::new_err(error.to_string()),
    };
    decode_exception(error.to_string(), topic, log_time, offset)
}

/// The Python exception for an error of robolog-arrow (`Log.to_arrow`, `export`) about the log
/// at `path` (when known).
pub(crate) fn arrow_to_py(error: robolog_arrow::Error, path: Option<&Path>) -> PyErr {
    use robolog_arrow::Error as E;
    let text = error.to_string();
    match error {
        E::Log(error) => to_py(error, path),
        E::NotDecodable { topic, .. } | E::Schema { topic, .. } => {
            decode_exception(text, &topic, None, None)
        }
        E::Message {
            topic, log_time_ns, ..
        } => decode_exception(text, &topic, Some(log_time_ns), None),
        E::UnknownTopic { .. } | E::UnknownColumn { .. } => PyValueError::new_err(text),
        E::TimeOutOfRange { .. } | E::BatchTooLarge | E::TopicConflict { .. } => {
            with_location(UnsupportedError::new_err(text), None, path)
        }
        E::Io { source, path, .. } => os_error(&source, Some(Path::new(&path))),
        _ => with_location(RobologError::new_err(text), None, path),
    }
}

/// A `DecodeError` about a message of `topic` (at `log_time`, when about one message).
fn decode_exception(
    text: String,
    topic: &str,
    log_time: Option<u64>,
    offset: Option<u64>,
) -> PyErr {
    let err = DecodeError::new_err(text);
    Python::attach(|py| {
        let value = err.value(py);
        // As in `with_location`: the exception without its attributes is still the best report.
        let _ = value.setattr("topic", topic);
        let _ = value.setattr("log_time", log_time);
        let _ = value.setattr("offset", offset);
    });
    err
}

/// Sets `offset` and `path` on a robolog exception.
fn with_location(err: PyErr, offset: Option<u64>, path: Option<&Path>) -> PyErr {
    Python::attach(|py| {
        let value = err.value(py);
        // Setting attributes on a fresh exception instance cannot fail short of memory
        // exhaustion, where the exception without them is still the best report.
        if let Some(offset) = offset {
            let _ = value.setattr("offset", offset);
        }
        if let Some(path) = path {
            let _ = value.setattr("path", path.to_string_lossy().into_owned());
        }
    });
    err
}

/// The I/O error a format crate's error wraps, if it is one (a missing storage file of a ROS 2
/// bag, a permission problem): Python users expect `OSError`s for those.
fn io_source(error: &robolog::Error) -> Option<&std::io::Error> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(error);
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return Some(io);
        }
        source = e.source();
    }
    None
}

/// `OSError(errno, strerror, filename)`, which Python turns into the matching subclass
/// (`FileNotFoundError`, `PermissionError`, …).
pub(crate) fn os_error(error: &std::io::Error, path: Option<&Path>) -> PyErr {
    let message = error.to_string();
    let filename = path.map(|p| p.to_string_lossy().into_owned());
    match error.raw_os_error() {
        Some(errno) => PyOSError::new_err((errno, message, filename)),
        None => {
            let errno = match error.kind() {
                std::io::ErrorKind::NotFound => Some(2),
                std::io::ErrorKind::PermissionDenied => Some(13),
                std::io::ErrorKind::AlreadyExists => Some(17),
                _ => None,
            };
            match errno {
                Some(errno) => PyOSError::new_err((errno, message, filename)),
                None => PyOSError::new_err(match filename {
                    Some(f) => format!("{message}: {f}"),
                    None => message,
                }),
            }
        }
    }
}
