"""Log.arrow_batches: a topic as a pyarrow.RecordBatchReader whose batches are decoded as they are
pulled (to_arrow is that reader read whole): batch sizes, equality with to_arrow, a reader
dropped half-way or outliving its log, an error in the middle raised by the pull that meets it,
the GIL released and Ctrl-C between batches, DuckDB scanning the reader."""

import gc
import os
import signal
import struct
import threading

import pyarrow
import pytest

import robolog
from conftest import TESTDATA, big_mcap, largest_gap_while

REF_LZ4 = TESTDATA / "bags/generated/ros_comm/ref_lz4.bag"
COUNT = 20_000


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """20,000 messages `n` = 0, 1, ... on /n, in zstd chunks of 64 KiB (about ten of them)."""
    return big_mcap(tmp_path_factory.mktemp("many") / "many.mcap", COUNT, chunk_size=64 << 10)


def test_a_big_topic_is_read_batch_by_batch(many):
    with robolog.open(many) as log:
        reader = log.arrow_batches("/n", batch_size=3_000)
        assert isinstance(reader, pyarrow.RecordBatchReader)
        assert reader.schema.metadata[b"robolog:topic"] == b"/n"
        batches = list(reader)
        whole = log.to_arrow("/n")
    assert [b.num_rows for b in batches] == [3_000] * 6 + [2_000]
    table = pyarrow.Table.from_batches(batches, reader.schema)
    assert table.equals(whole)
    assert table.schema.equals(whole.schema, check_metadata=True)
    assert table.column("n").to_pylist() == list(range(COUNT))
    # to_arrow is the same reader read whole, in batches of the default size.
    assert whole.column("n").num_chunks == 1


def test_batches_take_the_arguments_of_to_arrow():
    with robolog.open(REF_LZ4) as log:
        stamps = log.to_arrow("/imu", columns="log_time").column(0).cast(pyarrow.int64())
        start, end = stamps[3].as_py(), stamps[48].as_py()
        args = dict(columns=["linear_acceleration", "log_time"], start=start, end=end)
        batches = list(log.arrow_batches("/imu", batch_size=7, **args))
        assert [b.num_rows for b in batches] == [7] * 6 + [3]
        for batch in batches:
            assert batch.schema.names == ["linear_acceleration", "log_time"]
        table = pyarrow.Table.from_batches(batches)
        assert table.equals(log.to_arrow("/imu", **args))
        # One batch of everything by default.
        assert [b.num_rows for b in log.arrow_batches("/imu")] == [50]
        with pytest.raises(ValueError, match="batch_size must be at least 1"):
            log.arrow_batches("/imu", batch_size=0)
        # Errors in what is asked for are raised by the call, not by the first pull.
        with pytest.raises(ValueError, match=r"no topic \"/nope\""):
            log.arrow_batches("/nope")
        with pytest.raises(ValueError, match=r"/imu: no column \"nope\""):
            log.arrow_batches("/imu", columns=["nope"])
        empty = log.arrow_batches("/imu", start=log.end_time + 1)
        assert empty.read_all().num_rows == 0
        assert empty.schema.names == log.to_arrow("/imu").schema.names


def test_a_reader_can_be_dropped_half_way_or_outlive_its_log(many):
    log = robolog.open(many)
    reader = log.arrow_batches("/n", batch_size=1_000)
    assert reader.read_next_batch().column("n").to_pylist() == list(range(1_000))
    del reader
    gc.collect()
    # Another reader starts from the beginning.
    reader = log.arrow_batches("/n", batch_size=1_000)
    assert reader.read_next_batch().column("n").to_pylist() == list(range(1_000))
    # A reader keeps what it reads: closing the log does not end it.
    log.close()
    with pytest.raises(ValueError, match="closed"):
        log.arrow_batches("/n")
    rest = reader.read_all()
    assert rest.column("n").to_pylist() == list(range(1_000, COUNT))


def chunks(data):
    """(offset, length) of each Chunk record of an MCAP file, in file order."""
    out, at = [], 8
    while at + 9 <= len(data):
        opcode, length = data[at], struct.unpack_from("<Q", data, at + 1)[0]
        if opcode == 0x0F:  # DataEnd
            break
        if opcode == 0x06:
            out.append((at, 9 + length))
        at += 9 + length
    return out


def test_an_error_in_the_middle_is_raised_by_the_pull_that_meets_it(many, tmp_path):
    data = bytearray(many.read_bytes())
    found = chunks(data)
    assert len(found) >= 6
    offset, length = found[len(found) // 2]
    # Garbage over the middle of the chunk's compressed records.
    middle = offset + length // 2
    data[middle : middle + 64] = b"\xa5" * 64
    damaged = tmp_path / "damaged.mcap"
    damaged.write_bytes(bytes(data))
    with robolog.open(damaged) as log:
        # Only the chunk indexes are read at open: the damage is not met yet.
        reader = log.arrow_batches("/n", batch_size=100)
        rows = []
        with pytest.raises(robolog.DataError) as caught:
            for batch in reader:
                rows += batch.column("n").to_pylist()
        assert caught.value.offset is not None
        assert offset <= caught.value.offset < offset + length, (offset, caught.value)
        assert caught.value.path == str(damaged)
        # The batches before the damaged chunk were handed out, in order, before the error.
        assert len(rows) >= 100 and rows == list(range(len(rows)))
        # The error ends the batches.
        with pytest.raises(StopIteration):
            reader.read_next_batch()
        # to_arrow, the same reader read whole, raises the same exception.
        with pytest.raises(robolog.DataError):
            log.to_arrow("/n")


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    return big_mcap(tmp_path_factory.mktemp("big") / "big.mcap", 200_000)


def test_the_gil_is_released_while_batches_are_decoded(big):
    with robolog.open(big) as log:
        gap, elapsed = largest_gap_while(lambda: log.arrow_batches("/n", batch_size=5_000).read_all())
    assert elapsed > 0.05, "the work is too short to tell"
    assert gap < elapsed / 2, (gap, elapsed)


def test_ctrl_c_between_batches_stops_the_reading(big):
    # Python's own Ctrl-C handler, installed again (Ray's core, loaded by an earlier test, may
    # have put its own under Python's).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.05, lambda: os.kill(os.getpid(), signal.SIGINT))
    inside = []
    try:
        with robolog.open(big) as log, pytest.raises(KeyboardInterrupt):
            timer.start()
            for _ in range(100):  # longer than the timer, however fast the machine
                try:
                    # One call into pyarrow, which pulls every batch from Rust: no Python code
                    # runs between the batches to notice the signal.
                    log.arrow_batches("/n", batch_size=1_000).read_all()
                except KeyboardInterrupt:
                    inside.append(True)
                    raise
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert inside == [True]


def test_duckdb_scans_the_reader_as_it_streams(many):
    duckdb = pytest.importorskip("duckdb")
    with robolog.open(many) as log:
        reader = log.arrow_batches("/n", columns=["log_time", "n"], batch_size=1_000)
        rows = duckdb.from_arrow(reader).aggregate(
            "count(*), sum(n), min(epoch_ns(log_time))"
        ).fetchall()
    assert rows == [(COUNT, sum(range(COUNT)), 1_000_000)]
