"""Type stubs of robolog's Rust extension (re-exported by the ``robolog`` package)."""

import os
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import Any, Literal, Optional, Union

import polars
import pyarrow

__version__: str

PathLike = Union[str, "os.PathLike[str]"]
Format = Literal["bag", "mcap", "bddf", "rosbag2"]
Topics = Union[str, Iterable[str], None]

class RobologError(Exception):
    """Base class of robolog's errors."""

    offset: Optional[int]
    """Byte offset in the file the error is about, None when unknown."""
    path: Optional[str]
    """The file the error is about, None when not known."""

class FormatError(RobologError):
    """The input is not a log robolog reads, or its format was compiled out."""

class DataError(RobologError):
    """The log is damaged or contradicts its format; ``offset`` says where."""

class TruncatedError(DataError):
    """The log ends too early (a cut file)."""

class DecodeError(RobologError):
    """A message cannot be decoded (encoding or definition not supported, or bytes that do not
    match the definition). Here ``offset`` is the byte offset in the message's data
    (``Message.data``) where decoding failed, None when unknown."""

    topic: Optional[str]
    """The channel's topic."""
    log_time: Optional[int]
    """The message's log time (ns); None when the channel cannot be decoded at all."""

class UnsupportedError(RobologError):
    """The output format cannot hold what was asked."""

class Bytes:
    """Read-only bytes of a log, shared without a copy through the buffer protocol
    (``memoryview(b)``, ``bytes(b)``, ``numpy.frombuffer(b)``)."""

    def __buffer__(self, flags: int, /) -> memoryview: ...

class Schema:
    """How a channel's message bytes are laid out: the message type and its definition."""

    @property
    def id(self) -> int: ...
    @property
    def name(self) -> str:
        """The message type (``sensor_msgs/Imu``, ``sensor_msgs/msg/Imu``)."""
    @property
    def encoding(self) -> str:
        """How the definition is written: ``ros1msg``, ``ros2msg``, ``ros2idl``, ``protobuf``,
        ``jsonschema``, ..."""
    @property
    def data(self) -> bytes:
        """The definition itself."""

class Channel:
    """One stream of messages: a topic with its encoding and schema."""

    @property
    def id(self) -> int: ...
    @property
    def topic(self) -> str: ...
    @property
    def message_encoding(self) -> str:
        """``ros1``, ``cdr``, ``json``, ``protobuf``, ..."""
    @property
    def schema(self) -> Optional[Schema]: ...
    @property
    def type_name(self) -> str:
        """The message type (the schema's name; ``""`` without a schema)."""
    @property
    def metadata(self) -> dict[str, str]: ...

class Problem:
    """A finding about a log's structure, and where in the file it is."""

    @property
    def severity(self) -> Literal["error", "warning", "note"]: ...
    @property
    def kind(
        self,
    ) -> Literal[
        "truncated",
        "checksum",
        "malformed",
        "index",
        "time",
        "schema",
        "metadata",
        "unsupported",
        "empty",
        "other",
    ]: ...
    @property
    def offset(self) -> Optional[int]: ...
    @property
    def path(self) -> Optional[str]: ...
    @property
    def message(self) -> str: ...

class Message:
    """One message of a log."""

    @property
    def topic(self) -> str: ...
    @property
    def log_time(self) -> int:
        """When it was logged, in nanoseconds since 1970."""
    @property
    def publish_time(self) -> Optional[int]:
        """When it was published, in nanoseconds (None for formats without it)."""
    @property
    def sequence(self) -> Optional[int]: ...
    @property
    def channel(self) -> Channel: ...
    @property
    def data(self) -> memoryview:
        """The serialized message: a read-only view of the log's memory (no copy)."""
    def decode(self) -> Any:
        """The message decoded into a dict of its fields (``json`` messages: what
        ``json.loads`` gives). Raises DecodeError when it cannot be decoded."""
    def __len__(self) -> int: ...

class Messages(Iterator[Message]):
    """An iterator over a log's messages in log-time order."""

    def __iter__(self) -> "Messages": ...
    def __next__(self) -> Message: ...

class Log:
    """An open log, whatever its format."""

    @property
    def path(self) -> str: ...
    @property
    def format(self) -> Format: ...
    @property
    def channels(self) -> list[Channel]:
        """Every channel, by id (those without messages too)."""
    @property
    def message_count(self) -> int: ...
    @property
    def start_time(self) -> Optional[int]:
        """The earliest log time in nanoseconds since 1970 (None without messages)."""
    @property
    def end_time(self) -> Optional[int]:
        """The latest log time in nanoseconds since 1970 (None without messages)."""
    @property
    def problems(self) -> list[Problem]:
        """What opening the log noticed (a missing index, a cut file)."""
    def summary(self) -> dict[str, Any]:
        """What ``robolog info --json`` prints, as a dict."""
    def messages(
        self,
        topics: Topics = None,
        start: Optional[int] = None,
        end: Optional[int] = None,
    ) -> Messages:
        """The messages in log-time order, of the topics given (names or globs) and in
        ``[start, end)`` (nanoseconds)."""
    def arrow_batches(
        self,
        topic: str,
        columns: Union[str, Iterable[str], None] = None,
        *,
        start: Optional[int] = None,
        end: Optional[int] = None,
        raw_undecodable: bool = False,
        batch_size: Optional[int] = None,
    ) -> pyarrow.RecordBatchReader:
        """The batches of ``to_arrow`` (same columns and arguments) as a reader that decodes
        each batch when it is pulled (with the GIL released): memory holds one batch however
        long the topic. Ray Data, Daft, DuckDB and polars take the reader as it is. A batch has
        at most ``batch_size`` rows (default 65,536), fewer when its messages add up to 32 MiB.

        Unknown topics or columns and undecodable types raise here; an error in the middle of
        the topic (a damaged chunk, a message that does not match its definition) is raised by
        the pull that meets it as robolog's exception (DataError with the byte offset,
        DecodeError, ...) and ends the batches. Ctrl-C between batches raises
        KeyboardInterrupt. The reader may be dropped before its end."""
    def to_arrow(
        self,
        topic: str,
        columns: Union[str, Iterable[str], None] = None,
        *,
        start: Optional[int] = None,
        end: Optional[int] = None,
        raw_undecodable: bool = False,
    ) -> pyarrow.Table:
        """The messages of ``topic`` (its exact name) as a table with the columns of
        ``robolog export``: ``log_time``, ``publish_time`` (timestamps, ns, UTC), then one
        column per top-level field (nested messages as structs, arrays as lists, ``uint8[]``
        as binary), in log-time order; the schema carries the topic's metadata.

        ``columns`` reads only those columns (fields not asked for are not decoded);
        ``start``/``end`` keep log times in ``[start, end)``; ``raw_undecodable=True`` gives a
        topic robolog cannot decode as raw bytes (a ``data`` column) instead of raising
        DecodeError. Raises ValueError for an unknown topic or column, ImportError without
        pyarrow. The arrays are handed over without a copy (Arrow PyCapsule interface). It is
        ``arrow_batches(...).read_all()``: the table's chunks are those batches."""
    def to_polars(
        self,
        topic: str,
        columns: Union[str, Iterable[str], None] = None,
        *,
        start: Optional[int] = None,
        end: Optional[int] = None,
        raw_undecodable: bool = False,
    ) -> polars.DataFrame:
        """``to_arrow`` as a polars DataFrame. Raises ImportError without polars (or
        pyarrow)."""
    def __iter__(self) -> Messages: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Log": ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool: ...

def open(path: PathLike) -> Log:
    """Opens a ROS bag, MCAP or BDDF file (recognised from its first bytes) or a ROS 2 bag
    (a directory, or a .db3 file). ``path`` may be a URL (a str: ``http(s)://``, ``s3://``,
    ``gs://``, ``az://``), read by ranged requests of what is needed; so may the inputs of
    ``check``, ``convert``, ``merge``, ``recover`` and ``export``."""

class ConvertReport:
    """What ``convert`` or ``merge`` wrote, and what it left out."""

    @property
    def output(self) -> str: ...
    @property
    def format(self) -> Format: ...
    @property
    def output_bytes(self) -> int: ...
    @property
    def messages(self) -> int: ...
    @property
    def bytes(self) -> int: ...
    @property
    def channels(self) -> int: ...
    @property
    def attachments(self) -> int: ...
    @property
    def attachments_dropped(self) -> int: ...
    @property
    def metadata(self) -> int: ...
    @property
    def metadata_dropped(self) -> int: ...
    @property
    def chunks_copied(self) -> int:
        """MCAP chunks copied whole, without decoding them (MCAP to MCAP, every message of
        the chunk selected); their payload bytes are not counted in ``bytes``."""
    @property
    def skipped_channels(self) -> list[str]: ...
    @property
    def unmatched_topics(self) -> list[str]: ...
    @property
    def input_problems(self) -> list[Problem]: ...

class CheckReport:
    """What ``check`` found."""

    @property
    def path(self) -> str: ...
    @property
    def format(self) -> Format: ...
    @property
    def messages(self) -> int: ...
    @property
    def problems(self) -> list[Problem]: ...
    @property
    def valid(self) -> bool:
        """False when a problem is an error (``strict=True``: a warning too)."""

class RecoverReport:
    """What ``recover`` kept and lost."""

    @property
    def output(self) -> str: ...
    @property
    def format(self) -> Format: ...
    @property
    def messages_recovered(self) -> int: ...
    @property
    def messages_lost(self) -> int: ...
    @property
    def bytes_dropped(self) -> int: ...
    @property
    def lossless(self) -> bool: ...
    @property
    def details(self) -> dict[str, int]: ...
    @property
    def problems(self) -> list[Problem]: ...
    @property
    def output_bytes(self) -> int: ...

Compression = Literal["none", "lz4", "zstd", "bz2"]
Storage = Literal["sqlite3", "mcap"]
CompressionMode = Literal["file", "message"]

def convert(
    input: PathLike,
    output: PathLike,
    *,
    format: Optional[Format] = None,
    compression: Optional[Compression] = None,
    chunk_size: Optional[int] = None,
    storage: Optional[Storage] = None,
    compression_mode: Optional[CompressionMode] = None,
    topics: Topics = None,
    start: Optional[int] = None,
    end: Optional[int] = None,
) -> ConvertReport:
    """Converts a log into another (``robolog convert``)."""

def merge(
    inputs: Iterable[PathLike],
    output: PathLike,
    *,
    format: Optional[Format] = None,
    compression: Optional[Compression] = None,
    chunk_size: Optional[int] = None,
    storage: Optional[Storage] = None,
    compression_mode: Optional[CompressionMode] = None,
    topics: Topics = None,
    start: Optional[int] = None,
    end: Optional[int] = None,
) -> ConvertReport:
    """Merges logs into one, in log-time order (``robolog merge``)."""

def check(path: PathLike, *, strict: bool = False) -> CheckReport:
    """Checks a log's structure (``robolog check``)."""

def recover(input: PathLike, output: PathLike) -> RecoverReport:
    """Writes a valid copy of a damaged log (``robolog recover``)."""

class ExportedFile:
    """One file written by ``export``."""

    @property
    def topic(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def rows(self) -> int: ...
    @property
    def bytes(self) -> int: ...

class ExportReport:
    """What ``export`` wrote."""

    @property
    def files(self) -> list[ExportedFile]:
        """By topic, parts in order."""
    @property
    def messages(self) -> int: ...
    @property
    def raw_topics(self) -> list[str]:
        """Topics exported as raw bytes (``raw_undecodable=True``)."""
    @property
    def empty_topics(self) -> list[str]:
        """Selected topics without a message in the time range (no file written)."""
    @property
    def unmatched_topics(self) -> list[str]: ...

def export(
    inputs: Union[PathLike, Iterable[PathLike]],
    out_dir: PathLike,
    *,
    format: Optional[Literal["parquet", "arrow"]] = None,
    topics: Topics = None,
    start: Optional[int] = None,
    end: Optional[int] = None,
    raw_undecodable: bool = False,
) -> ExportReport:
    """Exports logs to one Parquet (or Arrow IPC) file per topic in ``out_dir``
    (``robolog export``), with the columns of ``Log.to_arrow``."""

class Writer:
    """Writes a log (MCAP, ROS bag, BDDF, ROS 2 bag directory)."""

    def __init__(
        self,
        path: PathLike,
        format: Optional[Format] = None,
        *,
        compression: Optional[Compression] = None,
        chunk_size: Optional[int] = None,
        storage: Optional[Storage] = None,
        compression_mode: Optional[CompressionMode] = None,
    ) -> None: ...
    @property
    def path(self) -> str: ...
    @property
    def format(self) -> Format: ...
    def add_channel(
        self,
        topic: str,
        message_encoding: str,
        *,
        schema_name: str = "",
        schema_encoding: str = "",
        schema_data: Optional[bytes] = None,
        metadata: Optional[dict[str, str]] = None,
    ) -> int:
        """Declares a channel; returns the id to write its messages with."""
    def copy_channel(self, channel: Channel) -> int:
        """Declares a channel like one of a read log."""
    def write(
        self,
        channel: int,
        log_time: int,
        data: bytes,
        *,
        publish_time: Optional[int] = None,
        sequence: Optional[int] = None,
    ) -> None:
        """Writes one message (its serialized bytes) on a declared channel."""
    def write_message(self, message: Message) -> None:
        """Copies a message read from a log."""
    def add_attachment(
        self,
        name: str,
        data: bytes,
        *,
        media_type: str = "application/octet-stream",
        log_time: int = 0,
        create_time: int = 0,
    ) -> bool: ...
    def add_metadata(self, name: str, entries: dict[str, str]) -> bool: ...
    def finish(self) -> int:
        """Completes the log and renames it into place; returns its size."""
    def close(self) -> None:
        """Abandons the log (nothing is left at its path)."""
    def __enter__(self) -> "Writer": ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> bool: ...
