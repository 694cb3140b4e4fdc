"""Columns: Log.to_arrow (values equal to Message.decode(), the table equal to the Parquet file
robolog.export writes, read by pyarrow), column projection, time ranges, errors, to_polars."""

import math
import sys

import numpy
import pyarrow
import pyarrow.ipc
import pyarrow.parquet
import pytest

import robolog
from conftest import TESTDATA, short

REF_LZ4 = TESTDATA / "bags/generated/ros_comm/ref_lz4.bag"
DEMO = TESTDATA / "samples/demo-zstd.mcap"
ROS2 = TESTDATA / "rosbag2/files/only_topics.mcap"
ROS2_SQLITE = TESTDATA / "rosbag2/sqlite3-talker"
BDDF = TESTDATA / "bddf/sample.bddf"

# ROS 1 bag; MCAP with ros1, json and raw channels; ROS 2 CDR (MCAP and sqlite3 storage); BDDF.
LOGS = [REF_LZ4, DEMO, ROS2, ROS2_SQLITE, BDDF]


def norm(value):
    """A decoded value and a pyarrow row value in one comparable form: numpy arrays as lists,
    floats by their bits (NaN, -0.0), and fields holding an empty message left out (Arrow has
    no empty struct: the export leaves them out)."""
    if isinstance(value, dict):
        return {k: norm(v) for k, v in value.items() if not (isinstance(v, dict) and not v)}
    if isinstance(value, numpy.ndarray):
        return [norm(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [norm(v) for v in value]
    if isinstance(value, float):
        return ("float", value.hex() if not math.isnan(value) else "nan")
    if isinstance(value, bool):
        return int(value)
    return value


def decodable_topics(log):
    """Topics with messages whose channels decode (ros1, cdr, json)."""
    counts = {c["topic"]: c["message_count"] for c in log.summary()["channels"]}
    return sorted(
        {
            c.topic
            for c in log.channels
            if c.message_encoding in ("ros1", "cdr", "json") and counts.get(c.topic)
        }
    )


def times(table, column):
    return table.column(column).cast(pyarrow.int64()).to_pylist()


@pytest.mark.parametrize("path", [REF_LZ4, DEMO, ROS2, ROS2_SQLITE], ids=short)
def test_to_arrow_rows_are_the_decoded_messages(path):
    with robolog.open(path) as log:
        topics = decodable_topics(log)
        assert topics
        for topic in topics:
            table = log.to_arrow(topic)
            messages = list(log.messages(topics=[topic]))
            assert table.num_rows == len(messages) > 0, topic
            assert table.schema.field("log_time").type == pyarrow.timestamp("ns", tz="UTC")
            assert times(table, "log_time") == [m.log_time for m in messages]
            assert times(table, "publish_time") == [m.publish_time for m in messages]
            assert table.schema.metadata[b"robolog:topic"] == topic.encode()
            rows = table.drop_columns(["log_time", "publish_time"]).to_pylist()
            for row, message in zip(rows, messages):
                decoded = message.decode()
                if message.channel.message_encoding == "json":
                    # JSON Schema columns are nullable: a property a message leaves out is null.
                    decoded = {name: decoded.get(name) for name in row}
                assert norm(row) == norm(decoded), (topic, message.log_time)


@pytest.mark.parametrize("path", LOGS, ids=short)
def test_to_arrow_is_the_parquet_export(path, tmp_path):
    report = robolog.export(path, tmp_path / "out", raw_undecodable=True)
    assert report.files
    with robolog.open(path) as log:
        assert report.messages == log.message_count
        assert sum(f.rows for f in report.files) == log.message_count
        for file in report.files:
            written = pyarrow.parquet.read_table(file.path)
            table = log.to_arrow(file.topic, raw_undecodable=True)
            assert table.num_rows == file.rows > 0
            assert table.schema.equals(written.schema, check_metadata=True), file.topic
            assert table.equals(written), file.topic
            # The topic's metadata is both the stored Arrow schema's (what pyarrow reads) and
            # the file's key-value metadata (what DuckDB and Spark read).
            stored = dict(pyarrow.parquet.read_metadata(file.path).metadata)
            del stored[b"ARROW:schema"]
            assert table.schema.metadata == stored, file.topic
            assert written.schema.metadata == stored, file.topic


def test_bddf_pod_series_hold_their_samples():
    with robolog.open(BDDF) as log:
        for channel in log.channels:
            if channel.message_encoding != "bddf-pod":
                continue
            table = log.to_arrow(channel.topic)
            messages = list(log.messages(topics=[channel.topic]))
            assert table.num_rows == len(messages) > 0
            dtype = {"float64": "<f8", "float32": "<f4", "int32": "<i4"}[
                channel.metadata["bddf:pod_type"]
            ]
            for samples, message in zip(table.column("samples").to_pylist(), messages):
                flat = numpy.frombuffer(bytes(message.data), dtype=dtype).tolist()
                as_lists = [x if isinstance(x, list) else [x] for x in samples]
                assert [v for s in as_lists for v in s] == flat


def test_columns_are_projected_in_the_order_asked():
    with robolog.open(REF_LZ4) as log:
        full = log.to_arrow("/imu")
        some = log.to_arrow("/imu", columns=["linear_acceleration", "log_time", "header"])
        assert some.column_names == ["linear_acceleration", "log_time", "header"]
        assert some.equals(full.select(["linear_acceleration", "log_time", "header"]))
        assert some.schema.metadata == full.schema.metadata
        one = log.to_arrow("/imu", columns="header")
        assert one.column_names == ["header"] and one.num_rows == 50
        # No message field: nothing to decode, one row per message all the same.
        assert log.to_arrow("/imu", columns=[]).num_rows == 50
        with pytest.raises(ValueError, match=r"/imu: no column \"nope\".*linear_acceleration"):
            log.to_arrow("/imu", columns=["header", "nope"])


def test_a_time_range_keeps_its_rows():
    with robolog.open(REF_LZ4) as log:
        full = log.to_arrow("/imu")
        stamps = times(full, "log_time")
        start, end = stamps[10], stamps[20]
        window = log.to_arrow("/imu", start=start, end=end)
        assert times(window, "log_time") == stamps[10:20]
        assert window.equals(full.slice(10, 10))


def test_unknown_topics_and_undecodable_channels_are_errors():
    with robolog.open(DEMO) as log:
        with pytest.raises(ValueError, match=r"no topic \"/nope\".*/blob, /chatter, /points"):
            log.to_arrow("/nope")
        # A glob is not a topic name.
        with pytest.raises(ValueError, match="no topic"):
            log.to_arrow("/*")
        with pytest.raises(robolog.DecodeError, match="/blob") as caught:
            log.to_arrow("/blob")
        assert caught.value.topic == "/blob" and caught.value.log_time is None
        raw = log.to_arrow("/blob", raw_undecodable=True)
        assert raw.column_names == ["log_time", "publish_time", "data"]
        assert raw.column("data").to_pylist() == [
            bytes(m.data) for m in log.messages(topics="/blob")
        ]
    with robolog.open(REF_LZ4) as log:
        log.close()
        with pytest.raises(ValueError, match="closed"):
            log.to_arrow("/imu")


def test_to_polars_is_the_arrow_table():
    polars = pytest.importorskip("polars")
    with robolog.open(REF_LZ4) as log:
        frame = log.to_polars("/imu", columns=["log_time", "header", "linear_acceleration"])
        table = log.to_arrow("/imu", columns=["log_time", "header", "linear_acceleration"])
    assert isinstance(frame, polars.DataFrame)
    assert frame.shape == (50, 3)
    assert frame["header"].struct.field("frame_id").to_list() == ["imu_link"] * 50
    assert frame["linear_acceleration"].struct.field("z").to_list() == [9.81] * 50
    assert frame["log_time"].cast(polars.Int64).to_list() == times(table, "log_time")


def test_to_polars_without_polars_says_what_to_install(monkeypatch):
    # A module set to None in sys.modules fails to import, as an uninstalled one.
    monkeypatch.setitem(sys.modules, "polars", None)
    with robolog.open(REF_LZ4) as log:
        with pytest.raises(ImportError, match=r"Log.to_polars needs the polars package.*pip install"):
            log.to_polars("/imu")


def test_export_writes_arrow_ipc_and_selects_topics(tmp_path):
    report = robolog.export(
        [REF_LZ4], tmp_path, format="arrow", topics=["/imu", "/nothing"]
    )
    assert [f.topic for f in report.files] == ["/imu"]
    assert report.unmatched_topics == ["/nothing"]
    assert report.messages == 50
    with pyarrow.ipc.open_file(report.files[0].path) as reader:
        written = reader.read_all()
    with robolog.open(REF_LZ4) as log:
        assert written.equals(log.to_arrow("/imu"))
    with pytest.raises(ValueError, match="unknown export format"):
        robolog.export(REF_LZ4, tmp_path, format="csv")
