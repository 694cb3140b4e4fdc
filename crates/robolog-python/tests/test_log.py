"""The Log object: summary() against the CLI's `info --json` golden files, message filters,
closing, exceptions with byte offsets, the GIL released while Rust works, interruption."""

import json
import os
import shutil
import signal
import struct
import threading

import pytest

import robolog
from conftest import REPO, TESTDATA, big_mcap, largest_gap_while

GOLDEN = REPO / "crates/robolog-cli/tests/it/golden"
REF_LZ4 = TESTDATA / "bags/generated/ros_comm/ref_lz4.bag"


@pytest.mark.parametrize(
    "golden, path",
    [
        ("info-ref_lz4.bag.json", "testdata/bags/generated/ros_comm/ref_lz4.bag"),
        ("info-v12_indexed.bag.json", "testdata/bags/generated/ros_comm/v12_indexed.bag"),
        ("info-demo-zstd.mcap.json", "testdata/samples/demo-zstd.mcap"),
        ("info-demo-zstd-truncated.mcap.json", "testdata/samples/demo-zstd-truncated.mcap"),
        ("info-sample.bddf.json", "testdata/bddf/sample.bddf"),
    ],
)
def test_summary_is_what_info_json_prints(at_repo, golden, path):
    expected = json.loads((GOLDEN / golden).read_text())
    with robolog.open(path) as log:
        summary = log.summary()
        assert summary == expected
        assert log.message_count == expected["message_count"]
        assert log.start_time == expected["start_time"]
        assert log.end_time == expected["end_time"]
        assert [c.topic for c in log.channels] == [c["topic"] for c in expected["channels"]]


def test_summary_gives_ros2_channels_the_type_hash_rosbag2_recorded():
    # rosbag2 stores each topic's RIHS01 hash in the MCAP channel metadata; the summary's is
    # computed from the definition and must be the same.
    with robolog.open(TESTDATA / "rosbag2/files/only_topics.mcap") as log:
        channels = log.summary()["channels"]
    hashed = [c for c in channels if c["metadata"].get("topic_type_hash")]
    assert hashed
    for channel in hashed:
        assert channel["type_hash"] == channel["metadata"]["topic_type_hash"]
        assert channel["type_hash"].startswith("RIHS01_")
    with robolog.open(REF_LZ4) as log:
        assert all("type_hash" not in c for c in log.summary()["channels"])


def test_messages_select_topics_and_times():
    with robolog.open(REF_LZ4) as log:
        every = [(m.topic, m.log_time) for m in log.messages()]
        start, end = log.start_time, log.end_time
        assert len(every) == log.message_count == 150
        imu = [(m.topic, m.log_time) for m in log.messages(topics="/imu")]
        assert imu == [m for m in every if m[0] == "/imu"] and imu
        two = [m for m in log.messages(topics=["/imu", "/chatter"])]
        assert {m.topic for m in two} == {"/imu", "/chatter"}
        assert len(two) == sum(1 for m in every if m[0] in ("/imu", "/chatter"))
        middle = start + (end - start) // 2
        window = [(m.topic, m.log_time) for m in log.messages(start=start + 1, end=middle)]
        assert window == [m for m in every if start + 1 <= m[1] < middle] and window
        assert list(log) and len(list(log)) == 150
        with pytest.warns(UserWarning, match="/nothing"):
            assert list(log.messages(topics="/nothing")) == []


def test_a_closed_log_refuses_work_but_its_messages_live_on():
    with robolog.open(REF_LZ4) as log:
        message = next(iter(log.messages(topics="/imu")))
        iterator = log.messages()
    with pytest.raises(ValueError, match="closed"):
        log.message_count
    assert message.decode()["header"]["frame_id"] == "imu_link"
    assert sum(1 for _ in iterator) == 150


def test_open_errors_are_python_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        robolog.open(tmp_path / "missing.bag")
    text = tmp_path / "notes.txt"
    text.write_bytes(b"not a robot log at all")
    with pytest.raises(robolog.FormatError) as raised:
        robolog.open(text)
    assert raised.value.path == str(text)
    assert issubclass(robolog.FormatError, robolog.RobologError)


def test_damaged_chunks_raise_with_their_byte_offset():
    # The chunk's CRC does not match (robolog-mcap's hostile corpus): reading its messages
    # fails at the chunk record, which starts right after the 8-byte magic and the header.
    path = TESTDATA / "bad/mcap/chunk-crc-mismatch.mcap"
    data = path.read_bytes()
    # Records are an opcode, a u64 length and the content: the header's, then the chunk's.
    header_len = struct.unpack_from("<Q", data, 9)[0]
    chunk = 8 + 9 + header_len
    assert data[chunk] == 0x06
    with robolog.open(path) as log:
        with pytest.raises(robolog.DataError) as raised:
            list(log.messages())
    assert raised.value.offset == chunk
    assert raised.value.path == str(path)
    assert "crc" in str(raised.value).lower()


def test_cut_files_raise_truncated_errors():
    # Only the version line of a bag: the file header record should start after it.
    path = TESTDATA / "bad/rosbag/version-line-only.bag"
    with pytest.raises(robolog.TruncatedError) as raised:
        robolog.open(path)
    assert raised.value.offset == len(b"#ROSBAG V2.0\n") == path.stat().st_size
    assert isinstance(raised.value, robolog.DataError)


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    return big_mcap(tmp_path_factory.mktemp("big") / "big.mcap", 200_000)


@pytest.mark.parametrize("work", ["check", "convert"])
def test_the_gil_is_released_while_rust_works(big, tmp_path, work):
    calls = {
        "check": lambda: robolog.check(big),
        "convert": lambda: robolog.convert(big, tmp_path / "out.bag"),
    }
    gap, elapsed = largest_gap_while(calls[work])
    # Python threads keep running: the loop above never waits for the whole call.
    assert elapsed > 0.05, "the work is too short to tell"
    assert gap < elapsed / 2, (gap, elapsed)


def test_a_conversion_is_interruptible_and_leaves_nothing(big, tmp_path):
    out = tmp_path / "out.bag"
    # Python's own Ctrl-C handler, installed again: a library loaded by an earlier test in this
    # process (Ray's core, say) may have put its own handler under Python's.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.05, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            for _ in range(50):  # longer than the timer, however fast the machine
                robolog.convert(big, out, compression="bz2")
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert not out.exists() or out.stat().st_size > 0
    leftovers = [p for p in tmp_path.iterdir() if p.name != "out.bag"]
    assert leftovers == []


def test_check_and_recover_report_what_they_found(tmp_path):
    cut = tmp_path / "cut.bag"
    data = REF_LZ4.read_bytes()
    cut.write_bytes(data[: len(data) * 2 // 3])
    report = robolog.check(cut)
    assert not report.valid
    assert report.format == "bag"
    assert any(
        p.severity == "error" and p.kind == "truncated" and p.offset is not None
        for p in report.problems
    ), report.problems
    fixed = tmp_path / "fixed.bag"
    recovered = robolog.recover(cut, fixed)
    assert recovered.format == "bag"
    assert 0 < recovered.messages_recovered < 150
    assert not recovered.lossless
    assert robolog.check(fixed).valid
    with robolog.open(fixed) as log:
        assert log.message_count == recovered.messages_recovered
    assert robolog.check(REF_LZ4).valid


def test_convert_and_merge_copy_every_message(tmp_path):
    out = tmp_path / "ref.mcap"
    report = robolog.convert(REF_LZ4, out, topics="/imu", compression="lz4")
    assert (report.format, report.messages) == ("mcap", 50)
    assert report.output_bytes == out.stat().st_size
    with robolog.open(REF_LZ4) as a, robolog.open(out) as b:
        assert [(m.log_time, bytes(m.data)) for m in a.messages(topics="/imu")] == [
            (m.log_time, bytes(m.data)) for m in b.messages()
        ]
    merged = robolog.merge([REF_LZ4, out], tmp_path / "merged.bag")
    assert merged.messages == 200
    with pytest.raises(ValueError, match="bz2"):
        robolog.convert(REF_LZ4, tmp_path / "x.mcap", compression="bz2")
    assert not (tmp_path / "x.mcap").exists()
    bag2 = tmp_path / "ros2"
    robolog.convert(TESTDATA / "rosbag2/mcap-talker", bag2, format="rosbag2", storage="sqlite3")
    with robolog.open(bag2) as log:
        assert log.format == "rosbag2"
        assert [m.decode()["data"] for m in log.messages(topics="/topic")] == [
            f"Hello, world! {i}" for i in range(10)
        ]


def test_mcap_chunks_a_filter_keeps_whole_are_copied(tmp_path):
    demo = TESTDATA / "samples/demo-zstd.mcap"
    with robolog.open(demo) as log:
        start, end = log.start_time, log.end_time
        chunks = log.summary()["chunks"]["count"]
        every = [(m.topic, m.log_time, bytes(m.data)) for m in log]
    assert chunks == 10
    # A time range holding every message, the input's compression: each chunk copied as it is.
    out = tmp_path / "whole.mcap"
    report = robolog.convert(demo, out, compression="zstd", start=start, end=end + 1)
    assert (report.messages, report.chunks_copied) == (300, 10)
    with robolog.open(out) as copy:
        assert [(m.topic, m.log_time, bytes(m.data)) for m in copy] == every
    merged = robolog.merge([demo], tmp_path / "merged.mcap", compression="zstd")
    assert (merged.messages, merged.chunks_copied) == (300, 10)
    # Every chunk holds all three topics: selecting two keeps none whole; another compression
    # cannot copy any.
    some = robolog.convert(demo, tmp_path / "some.mcap", compression="zstd", topics=["/points", "/chatter"])
    assert (some.messages, some.chunks_copied) == (200, 0)
    lz4 = robolog.convert(demo, tmp_path / "lz4.mcap", compression="lz4")
    assert (lz4.messages, lz4.chunks_copied) == (300, 0)
