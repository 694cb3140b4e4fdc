"""robolog: read, decode, convert, check and repair robot logs.

ROS 1 bags (2.0 and 1.2), MCAP, Boston Dynamics BDDF and ROS 2 bags (rosbag2 directories with
sqlite3 or MCAP storage), recognised from their first bytes, through one model::

    import robolog

    with robolog.open("recording.bag") as log:
        for message in log.messages(topics="/imu"):
            imu = message.decode()
        table = log.to_arrow("/imu")  # a pyarrow.Table, the columns of `robolog export`

See ``help(robolog.Log)`` and the repository's README for the guide.
"""

from ._robolog import (
    Bytes,
    Channel,
    CheckReport,
    ConvertReport,
    DataError,
    DecodeError,
    ExportedFile,
    ExportReport,
    FormatError,
    Log,
    Message,
    Messages,
    Problem,
    RecoverReport,
    RobologError,
    Schema,
    TruncatedError,
    UnsupportedError,
    Writer,
    __version__,
    check,
    convert,
    export,
    merge,
    open,
    recover,
)

__all__ = [
    "Bytes",
    "Channel",
    "CheckReport",
    "ConvertReport",
    "DataError",
    "DecodeError",
    "ExportedFile",
    "ExportReport",
    "FormatError",
    "Log",
    "Message",
    "Messages",
    "Problem",
    "RecoverReport",
    "RobologError",
    "Schema",
    "TruncatedError",
    "UnsupportedError",
    "Writer",
    "__version__",
    "check",
    "convert",
    "export",
    "merge",
    "open",
    "recover",
]
